"""Whether a persona may write first to one person now: pure gates over what is known of
them (memory.records.Contact), the persona's [outreach] table and the ledger of what it wrote
first lately, each closed gate with its reason. No I/O: bot.outreach.sender gathers the
facts, and the decision costs no model call."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.persona.file import OutreachPolicy
from memory.records import Contact, Outreach

__all__ = [
    "LEARN_AFTER",
    "REFUSAL_KEPT",
    "SPACING",
    "WEEK",
    "Clearance",
    "Reason",
    "asleep",
    "learned_quiet",
    "may_write",
    "solicited",
    "zone",
]

WEEK = timedelta(days=7)
SPACING = timedelta(hours=20)  # between two messages it writes first to one person
REFUSAL_KEPT = timedelta(days=30)  # a platform's refusal is not tried again sooner
LEARN_AFTER = 20  # messages counted before the hours they talk at say when they sleep

# Why it may not write: the persona is not opted in; they never talked to it privately (a
# platform's condition: Telegram only lets a bot write to who started it); they asked for
# quiet; the platform refused lately; their last message has no reply yet; it is night where
# they are; this week's messages are spent; the last one was too recent.
Reason = Literal[
    "off", "not_private", "quiet", "refused", "unanswered", "asleep", "week_full", "too_soon"
]


@dataclass(slots=True, frozen=True)
class Clearance:
    reason: Reason | None = None  # None: it may write

    @property
    def ok(self) -> bool:
        return self.reason is None


def solicited(key: str) -> bool:
    """Whether the ledger's `key` is a message the person asked for themself (a reminder of
    theirs, memory.records.Intention.solicited: bot.outreach.sender keys no other so): it
    counts toward no week and keeps no hours but theirs."""
    return key.startswith("reminder:")


def zone(name: str | None) -> tzinfo | None:
    """The IANA zone a person set, or None (unset, or no longer known to this machine)."""
    if not name:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _within(hour: int, first: int, length: int) -> bool:
    return (hour - first) % 24 < length


def learned_quiet(hours: Sequence[int], length: int) -> int | None:
    """The UTC hour their quiet stretch of `length` hours starts at, learned from the hours
    they talk at (the window with the fewest of their messages; of several, the middle one,
    so a silent stretch longer than the window keeps a margin at both ends), or None with
    fewer than LEARN_AFTER messages counted."""
    if len(hours) != 24 or sum(hours) < LEARN_AFTER:
        return None
    first, run = _quietest(hours, length)
    return (first + (run - 1) // 2) % 24


def _quietest(hours: Sequence[int], length: int) -> tuple[int, int]:
    """The run of windows of `length` hours with the fewest of their messages: the UTC hour
    the first starts at, and how many start one after another (24: all are alike)."""
    counts = [sum(hours[(start + i) % 24] for i in range(length)) for start in range(24)]
    least = min(counts)
    if all(c == least for c in counts):
        return 0, 24
    # The run of quietest starts, followed from the one after a busier start.
    first = next(s for s in range(24) if counts[s] == least and counts[s - 1] != least)
    run = 1
    while counts[(first + run) % 24] == least:
        run += 1
    return first, run


def asleep(contact: Contact, policy: OutreachPolicy, now: datetime, fallback: tzinfo) -> bool:
    """Whether `now` falls in their quiet hours: the persona's quiet_hours in the zone they
    set, else in the bot's zone (`fallback`), which what is known of them may narrow the
    persona's writing hours with, never widen: once LEARN_AFTER messages are counted, the
    stretch where they talk least (every window of that length as quiet as the quietest)
    is quiet too; before that, the same from the little known, only if some of their
    messages came in the bot zone's quiet hours (they may live far from it). Someone whose
    few messages all came in the bot zone's waking hours is written to in any of those, the
    first one free."""
    first, end = policy.quiet
    length = (end - first) % 24
    own = zone(contact.timezone)
    if own is not None:
        return _within(now.astimezone(own).hour, first, length)
    if _within(now.astimezone(fallback).hour, first, length):
        return True
    hours = contact.hours
    if len(hours) != 24 or not any(hours):
        return False
    if sum(hours) < LEARN_AFTER:
        day = now.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
        elsewhere = any(
            hours[h] and _within(day.replace(hour=h).astimezone(fallback).hour, first, length)
            for h in range(24)
        )
        if not elsewhere:
            return False
    start, run = _quietest(hours, length)
    if run == 24:
        return False  # nothing tells one hour from another
    return _within(now.astimezone(UTC).hour, start, length + run - 1)


def _live(entry: Outreach, stale_before: datetime) -> bool:
    """An entry that is, or may be, a message that went out: sent, being sent, or claimed by
    a process that may yet send it."""
    if entry.state in ("sending", "sent"):
        return True
    return entry.state == "claimed" and entry.at >= stale_before


def may_write(
    policy: OutreachPolicy,
    contact: Contact | None,
    ledger: Sequence[Outreach],
    now: datetime,
    *,
    key: str,
    fallback: tzinfo,
    stale_before: datetime,
) -> Clearance:
    """Whether the persona may write the message `key` to this person now. `ledger`: their
    entries of the last WEEK at least (ContactStore.outreach); an entry of `key` itself is not
    counted against it (the caller's own claim). Only a reminder they asked for themself
    passes the gates of the person's will (quiet, the week, the spacing, the hours: they
    chose the time) and the persona's opt-in (the host gave it the reminder tool), not the
    platform's; `/quiet` and their night stop everything else."""
    if contact is None or not contact.private:
        return Clearance("not_private")
    if contact.refused_at is not None and now - contact.refused_at < REFUSAL_KEPT:
        return Clearance("refused")
    if solicited(key):
        return Clearance()
    if not policy.enabled:
        return Clearance("off")
    if contact.quiet:
        return Clearance("quiet")
    if contact.unanswered:
        return Clearance("unanswered")
    if asleep(contact, policy, now, fallback):
        return Clearance("asleep")
    others = [
        e
        for e in ledger
        if e.key != key and not solicited(e.key) and _live(e, stale_before) and now - e.at < WEEK
    ]
    if len(others) >= policy.per_week:
        return Clearance("week_full")
    if any(now - e.at < SPACING for e in others):
        return Clearance("too_soon")
    return Clearance()
