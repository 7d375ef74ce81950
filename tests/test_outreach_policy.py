"""bot.outreach.policy: each gate closes for its reason, and only then."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.outreach.policy import LEARN_AFTER, Clearance, asleep, learned_quiet, may_write, solicited
from bot.persona.file import OutreachPolicy
from memory.records import Contact, Outreach, OutreachState

# A Wednesday, 14:00 UTC: 22:00 in Shanghai, 15:00 in London, 09:00 in New York.
NOW = datetime(2026, 12, 9, 14, 0, tzinfo=UTC)
SHANGHAI = ZoneInfo("Asia/Shanghai")
POLICY = OutreachPolicy(enabled=True, per_week=2, quiet_hours="22-09")
CONTACT = Contact(
    persona="miao",
    platform="telegram",
    user_id="42",
    private=True,
    last_heard=NOW - timedelta(days=1),
    last_answered=NOW - timedelta(days=1),
    timezone="Europe/London",
)


def entry(key: str, state: OutreachState, ago: timedelta) -> Outreach:
    return Outreach("miao", "telegram", "42", key, state, NOW - ago, by="p1")


def verdict(
    contact: Contact | None = CONTACT,
    ledger: list[Outreach] | None = None,
    *,
    policy: OutreachPolicy = POLICY,
    key: str = "intention:1",
    now: datetime = NOW,
) -> Clearance:
    return may_write(
        policy,
        contact,
        ledger or [],
        now,
        key=key,
        fallback=SHANGHAI,
        stale_before=now - timedelta(minutes=10),
    )


def test_an_open_contact_may_be_written_to() -> None:
    assert verdict() == Clearance() and verdict().ok


@pytest.mark.parametrize(
    ("contact", "policy", "reason"),
    [
        (CONTACT, OutreachPolicy(enabled=False), "off"),
        (None, POLICY, "not_private"),
        (replace(CONTACT, private=False), POLICY, "not_private"),
        (replace(CONTACT, refused_at=NOW - timedelta(days=29)), POLICY, "refused"),
        (replace(CONTACT, quiet=True), POLICY, "quiet"),
        (replace(CONTACT, last_answered=NOW - timedelta(days=2)), POLICY, "unanswered"),
        (replace(CONTACT, last_answered=None), POLICY, "unanswered"),
        (replace(CONTACT, timezone="Asia/Shanghai"), POLICY, "asleep"),  # 22:00 there
    ],
)
def test_each_gate_closes_for_its_reason(
    contact: Contact, policy: OutreachPolicy, reason: str
) -> None:
    assert verdict(contact, policy=policy).reason == reason


def test_a_refusal_is_kept_thirty_days() -> None:
    old = replace(CONTACT, refused_at=NOW - timedelta(days=31))
    assert verdict(old).ok


def test_the_week_and_the_spacing() -> None:
    two = [
        entry("intention:7", "sent", timedelta(days=3)),
        entry("checkin:x", "sent", timedelta(days=6)),
    ]
    assert verdict(ledger=two).reason == "week_full"
    one = [entry("intention:7", "sent", timedelta(hours=19))]
    assert verdict(ledger=one).reason == "too_soon"
    assert verdict(ledger=[entry("intention:7", "sent", timedelta(hours=21))]).ok
    # Older than a week, dropped or refused before sending, or a reminder they asked for:
    # none of these counts.
    spent = [
        entry("intention:5", "sent", timedelta(days=8)),
        entry("intention:6", "dropped", timedelta(hours=1)),
        entry("intention:8", "refused", timedelta(hours=1)),
        entry("reminder:9", "sent", timedelta(hours=1)),
    ]
    assert verdict(ledger=spent).ok


def test_a_live_claim_of_another_key_counts_a_stale_one_does_not() -> None:
    # Another process is writing to them now: wait.
    assert verdict(ledger=[entry("intention:7", "claimed", timedelta(minutes=1))]).reason == (
        "too_soon"
    )
    # A claim abandoned long ago (its process died before sending) sent nothing.
    assert verdict(ledger=[entry("intention:7", "claimed", timedelta(hours=2))]).ok
    # Its own claim does not hold the message back.
    assert verdict(ledger=[entry("intention:1", "claimed", timedelta(minutes=1))]).ok


def test_a_reminder_they_asked_for_keeps_their_time_but_not_a_refusal() -> None:
    # Asked for: past the person's gates and the persona's opt-in, not the platform's.
    assert solicited("reminder:3") and not solicited("intention:3")
    night = replace(CONTACT, timezone="Asia/Shanghai", quiet=True)
    full = [entry("intention:7", "sent", timedelta(hours=1))] * 3
    assert verdict(night, full, key="reminder:3").ok
    assert verdict(key="reminder:3", policy=OutreachPolicy(enabled=False)).ok  # they asked
    refused = replace(CONTACT, refused_at=NOW - timedelta(days=1))
    assert verdict(refused, key="reminder:3").reason == "refused"
    assert verdict(replace(CONTACT, private=False), key="reminder:3").reason == "not_private"


def test_quiet_hours_in_the_zone_they_set_else_the_bots() -> None:
    policy = POLICY
    unset = replace(CONTACT, timezone=None)
    assert asleep(unset, policy, NOW, SHANGHAI)  # 22:00 in the bot's zone
    assert not asleep(unset, policy, NOW, ZoneInfo("Europe/London"))
    assert not asleep(CONTACT, policy, NOW, SHANGHAI)  # 15:00 in London, theirs
    # The boundaries: 22:00 is quiet, 09:00 is not.
    london = ZoneInfo("Europe/London")
    at = datetime(2026, 12, 9, 22, 0, tzinfo=london)
    assert asleep(CONTACT, policy, at, SHANGHAI)
    assert asleep(CONTACT, policy, at.replace(hour=8, minute=59), SHANGHAI)
    assert not asleep(CONTACT, policy, at.replace(hour=9), SHANGHAI)
    # A zone this machine does not know is no zone: the bot's.
    assert asleep(replace(CONTACT, timezone="Mars/Olympus"), policy, NOW, SHANGHAI)


def test_quiet_hours_learned_from_when_they_talk() -> None:
    # Someone who talks from 12:00 to 01:00 UTC (a night owl in London): their quiet 11
    # hours start at 01:00 UTC.
    hours = [0] * 24
    for hour in [*range(12, 24), 0]:
        hours[hour] = 3
    assert learned_quiet(hours, 11) == 1
    owl = replace(CONTACT, timezone=None, hours=tuple(hours))
    assert asleep(owl, POLICY, NOW.replace(hour=5), SHANGHAI)  # 13:00 in Shanghai
    assert not asleep(owl, POLICY, NOW.replace(hour=12, minute=30), SHANGHAI)  # 20:30 there
    # What was learned narrows the persona's hours, never widens them: 07:00 in Shanghai.
    assert asleep(owl, POLICY, NOW.replace(hour=23), SHANGHAI)
    # A silent stretch longer than the window: the window in its middle.
    day = [0] * 24
    for hour in range(10, 22):  # 12 hours of talk, 12 of silence (22:00 to 10:00)
        day[hour] = 2
    assert learned_quiet(day, 11) == 22
    # Too little is known to learn, and with nothing known at all: the bot's zone decides.
    few = [0] * 24
    few[2] = LEARN_AFTER - 1  # 10:00 in Shanghai
    assert learned_quiet(few, 11) is None
    assert asleep(replace(owl, hours=(0,) * 24), POLICY, NOW, SHANGHAI)
    # A zone they set wins over what was learned: 10:00 UTC is in the learned night, but
    # not in London's.
    assert asleep(owl, POLICY, NOW.replace(hour=10), SHANGHAI)
    london = replace(owl, timezone="Europe/London")
    assert not asleep(london, POLICY, NOW.replace(hour=10), SHANGHAI)


def test_an_hour_they_once_wrote_in_is_no_waking_hour_inside_the_personas_quiet() -> None:
    # They wrote a few times by day and once at 23:10 in the bot's zone (15:10 UTC): at
    # 23:05 the persona's quiet hours hold all the same.
    hours = [0] * 24
    hours[2] = hours[6] = 2  # 10:00 and 14:00 in Shanghai
    hours[15] = 1
    late = replace(CONTACT, timezone=None, hours=tuple(hours))
    assert asleep(late, POLICY, datetime(2026, 12, 9, 23, 5, tzinfo=SHANGHAI), SHANGHAI)


def test_a_few_messages_at_ten_do_not_keep_them_from_the_evening() -> None:
    # Someone who wrote only at 10:00 (the bot's zone) is reached at 18:00, the hour a
    # follow-up is due, not at 10:00 the next day.
    hours = [0] * 24
    hours[2] = 3
    morning = replace(CONTACT, timezone=None, hours=tuple(hours))
    evening = datetime(2026, 12, 9, 18, 0, tzinfo=SHANGHAI)
    assert not asleep(morning, POLICY, evening, SHANGHAI)
    assert asleep(morning, POLICY, evening.replace(hour=22), SHANGHAI)


def test_few_messages_in_the_bots_night_say_they_live_elsewhere() -> None:
    # Messages from New York's afternoon and evening (20:00 UTC is 04:00 in Shanghai): the
    # bot's daytime is their night, so the hours they never wrote in are quiet too.
    hours = [0] * 24
    hours[20] = 3
    hours[1] = 1
    far = replace(CONTACT, timezone=None, hours=tuple(hours))
    at = datetime(2026, 12, 9, 5, 0, tzinfo=UTC)  # 13:00 in Shanghai, 00:00 in New York
    assert asleep(far, POLICY, at, SHANGHAI)
    assert not asleep(far, POLICY, at.replace(hour=1), SHANGHAI)  # 09:00 / 20:00
