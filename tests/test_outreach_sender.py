"""bot.outreach.sender on the real SQLite store, a fake clock and a recording courier:
follow-ups, reminders, special days and check-ins go out once, at waking hours, and join the
person's private conversation; refusals are remembered; a platform that cannot be reached is
tried again; a claim whose process died (killed for real, SIGKILL) is taken over, a message
handed to the platform never sent again; two Outreach on one store (two processes) write each
message once; and through the real Telegram courier on the fake server."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.chat_model import Message, ModelError
from bot.config import TIERS
from bot.conversation.sessions import SessionManager
from bot.llm.offline import OfflineChatModel
from bot.llm.router import ModelRouter
from bot.outreach import Outreach
from bot.outreach.courier import Delivery
from bot.outreach.sender import COMPOSED_PER_ROUND, STALE
from bot.persona.file import OutreachPolicy, Persona
from memory.clock import FakeClock
from memory.records import IntentionKind, NewIntention
from memory.storage.sqlite import Store
from tests.fakes.courier import RecordingCourier
from tests.fakes.factories import (
    KIZUNA_TIMEOUT,
    Bot,
    base_env,
    make_event,
    make_persona,
    open_bot,
    outreach_of,
)
from tests.fakes.models import ScriptedChatModel
from tests.fakes.platforms import telegram_adapter
from tests.fakes.postgres import StoreOpener
from tests.fakes.process import ROOT
from tests.fakes.telegram_server import FakeTelegram

# A Wednesday noon, UTC (the bot's zone in these tests): waking hours.
NOON = datetime(2026, 12, 9, 12, 0, tzinfo=UTC)
ALICE = "42"
BOB = "43"
SCOPE = f"pip/telegram:dm:{ALICE}"


def pip(**outreach: object) -> Persona:
    persona = make_persona()
    persona.outreach = OutreachPolicy(enabled=True, **outreach)  # type: ignore[arg-type]
    return persona


@dataclass(slots=True)
class World:
    bot: Bot
    outreach: Outreach
    courier: RecordingCourier

    @property
    def clock(self) -> FakeClock:
        return self.bot.clock

    @property
    def store(self) -> Store:
        assert isinstance(self.bot.store, Store)
        return self.bot.store

    def calls(self) -> int:
        usage = self.bot.router.purposes.get("outreach")
        return usage.calls if usage else 0


async def open_world(path: Path, persona: Persona, model: ScriptedChatModel | None = None) -> World:
    router = ModelRouter(dict.fromkeys(TIERS, OfflineChatModel())) if model is None else None
    bot = await open_bot(path, [persona], model=model, clock=FakeClock(NOON), router=router)
    courier = RecordingCourier()
    return World(bot, outreach_of(bot, courier, memories=True), courier)


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    w = await open_world(tmp_path / "kizuna.sqlite3", pip())
    await talked(w, NOON - timedelta(days=1))
    # Her zone is set (/timezone): her waking hours are 09:00-22:00 UTC.
    await w.store.set_contact("pip", "telegram", ALICE, timezone="UTC", at=NOON)
    yield w
    await w.bot.close()


async def talked(w: World, at: datetime, user: str = ALICE) -> None:
    """They wrote to the persona privately at `at`, and it answered."""
    await w.store.heard("pip", "telegram", user, at, private=True)
    await w.store.answered("pip", "telegram", user, at + timedelta(seconds=5))


async def intend(
    w: World,
    *,
    kind: IntentionKind = "follow_up",
    due: datetime = NOON - timedelta(hours=1),
    until: timedelta = timedelta(days=3),
    scope: str = SCOPE,
    user: str = ALICE,
    what: str = "her exam",
    said_by: str | None = None,
) -> int:
    return await w.store.add_intention(
        NewIntention(
            scope=scope,
            user_id=user,
            kind=kind,
            what=what,
            ask="ask how the exam went",
            due_at=due,
            until=due + until,
            created_at=due - timedelta(days=2),
            yearly=kind == "special_day",
            said_by=said_by,
        )
    )


async def test_a_due_follow_up_is_written_once_in_the_persona_voice(world: World) -> None:
    await intend(world)
    assert await world.outreach.tick() == 1
    [(user, spoken)] = world.courier.sent
    assert user == ALICE and spoken.persona.key == "pip"
    # The offline model answers the outreach prompt: who writes, and why.
    assert "Pip" in spoken.reply.text and "her exam" in spoken.reply.text
    assert world.calls() == 1  # one chat-tier call for the message
    # Done: nothing more, now or later.
    assert await world.store.intentions(SCOPE, open_only=True) == []
    world.clock.advance(days=1)
    assert await world.outreach.tick() == 0 and world.calls() == 1
    [entry] = await world.store.outreach("pip", "telegram", ALICE, since=NOON - timedelta(days=1))
    assert (entry.key, entry.state, entry.by) == (
        f"intention:{entry.key.split(':')[1]}",
        "sent",
        "p1",
    )


async def test_the_message_joins_their_private_conversation(world: World) -> None:
    await intend(world)
    await world.outreach.tick()
    [(_, spoken)] = world.courier.sent
    # Another process's sessions (a fresh manager on the store) see it: it was saved.
    fresh = SessionManager(world.store, world.clock)
    session = await fresh.get("pip", f"telegram:dm:{ALICE}")
    last = session.turns[-1]
    assert (last.role, last.text, last.at) == ("assistant", spoken.reply.text, NOON)


async def test_nothing_is_written_at_night_it_waits_for_the_morning(world: World) -> None:
    world.clock.advance(hours=11)  # 23:00
    await intend(world, due=world.clock.now() - timedelta(hours=1))
    assert await world.outreach.tick() == 0 and world.calls() == 0
    world.clock.advance(hours=9)  # 08:00: still quiet
    assert await world.outreach.tick() == 0
    world.clock.advance(hours=1)  # 09:00
    assert await world.outreach.tick() == 1
    assert world.courier.sent and world.calls() == 1


async def test_with_no_zone_set_the_quiet_hours_hold_and_the_first_free_hour_is_taken(
    tmp_path: Path,
) -> None:
    w = await open_world(tmp_path / "kizuna.sqlite3", pip())  # quiet 22-09 in the bot's UTC
    bob = "77"
    try:
        for days in (3, 2, 1):  # Alice only ever wrote at 10:00
            await talked(w, NOON - timedelta(days=days, hours=2))
        w.clock.advance(hours=6)  # 18:00: a follow-up due now goes now, not at 10:00 tomorrow
        await intend(w, due=w.clock.now())
        assert await w.outreach.tick() == 1
        # Bob wrote by day and once at 23:10: at 23:05 the persona's quiet hours hold.
        for at in (NOON - timedelta(days=2), NOON - timedelta(days=1, hours=-11, minutes=-10)):
            await talked(w, at, bob)
        w.clock.advance(hours=5, minutes=5)  # 23:05
        await intend(w, due=w.clock.now(), scope=f"pip/telegram:dm:{bob}", user=bob)
        assert await w.outreach.tick() == 0
        # A message in the bot's night says he may live elsewhere: the hours he never wrote
        # in around it are quiet too, until 12:00, an hour he wrote in.
        w.clock.advance(hours=10)  # 09:05
        assert await w.outreach.tick() == 0
        w.clock.advance(hours=3)  # 12:05
        assert await w.outreach.tick() == 1
        assert [user for user, _ in w.courier.sent] == [ALICE, bob]
    finally:
        await w.bot.close()


async def test_a_follow_up_past_its_window_is_missed_not_sent(world: World) -> None:
    ident = await intend(world, due=NOON - timedelta(days=4))  # until: a day ago
    assert await world.outreach.tick() == 0
    [closed] = await world.store.intentions(SCOPE, open_only=False)
    assert (closed.id, closed.state) == (ident, "missed")
    assert world.courier.tried == 0 and world.calls() == 0


async def test_a_refusal_is_remembered_and_not_tried_again(world: World) -> None:
    world.courier.answers[ALICE] = "refused"
    await intend(world)
    assert await world.outreach.tick() == 0
    contact = await world.store.contact("pip", "telegram", ALICE)
    assert contact is not None and contact.refused_at == NOON
    world.clock.advance(days=1)
    await intend(world, what="her interview")
    assert await world.outreach.tick() == 0
    assert world.courier.tried == 1  # the refusal is kept: no second try


async def test_an_unreachable_platform_is_tried_again_once_the_claim_is_stale(
    world: World,
) -> None:
    world.courier.answers[ALICE] = "unreachable"
    await intend(world)
    assert await world.outreach.tick() == 0
    world.clock.advance(minutes=1)
    assert await world.outreach.tick() == 0 and world.courier.tried == 1  # still its claim
    del world.courier.answers[ALICE]
    world.clock.advance(STALE)
    assert await world.outreach.tick() == 1
    assert len(world.courier.sent) == 1


async def test_a_gate_closed_by_the_user_holds_it_back(world: World) -> None:
    await intend(world)
    await world.store.set_contact("pip", "telegram", ALICE, quiet=True, at=NOON)
    assert await world.outreach.tick() == 0
    await world.store.set_contact("pip", "telegram", ALICE, quiet=False, at=NOON)
    # They wrote and have no answer yet: the persona answers first, then may follow up.
    await world.store.heard("pip", "telegram", ALICE, NOON, private=True)
    assert await world.outreach.tick() == 0
    assert world.courier.tried == 0 and world.calls() == 0


async def test_no_one_writes_for_a_persona_not_opted_in_nor_without_a_courier(
    tmp_path: Path,
) -> None:
    w = await open_world(tmp_path / "k.sqlite3", pip())
    try:
        w.bot.personas["pip"].outreach = OutreachPolicy(enabled=False)
        await talked(w, NOON - timedelta(days=1))
        await intend(w)
        assert await w.outreach.tick() == 0
        w.bot.personas["pip"].outreach = OutreachPolicy(enabled=True)
        w.courier.personas = ("miao",)  # this bot does not speak as pip
        assert await w.outreach.tick() == 0
        assert w.courier.tried == 0
    finally:
        await w.bot.close()


async def test_a_group_intention_waits_for_the_group_unless_the_persona_says_otherwise(
    world: World,
) -> None:
    group = "pip/telegram:-100:user:42"
    await intend(world, scope=group)
    assert await world.outreach.tick() == 0
    world.bot.personas["pip"].outreach = OutreachPolicy(enabled=True, groups=True)
    assert await world.outreach.tick() == 1  # in the private chat, never the group


async def test_at_most_per_week_and_twenty_hours_apart(world: World) -> None:
    for i in range(4):
        await intend(world, what=f"event {i}", until=timedelta(days=10))
    assert await world.outreach.tick() == 1
    world.clock.advance(hours=19)  # 07:00 next day: asleep anyway
    assert await world.outreach.tick() == 0
    world.clock.advance(hours=3)  # 10:00, 22 h after the first
    assert await world.outreach.tick() == 1
    world.clock.advance(days=1)
    assert await world.outreach.tick() == 0  # two this week (per_week = 2)
    world.clock.advance(days=6)
    assert await world.outreach.tick() == 1  # the first is a week old
    assert len(world.courier.sent) == 3


async def test_a_backlog_goes_out_oldest_first_a_bounded_number_a_round(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    users = [str(100 + i) for i in range(COMPOSED_PER_ROUND + 5)]
    for i, user in enumerate(users):
        await talked(world, NOON - timedelta(days=1), user)
        await world.store.set_contact("pip", "telegram", user, timezone="UTC", at=NOON)
        due = NOON - timedelta(hours=len(users) - i)  # the first user's is the oldest
        await intend(world, user=user, scope=f"pip/telegram:dm:{user}", due=due)
    read: list[str] = []
    one = world.store.contact

    async def contact(persona: str, platform: str, user_id: str) -> object:
        read.append(user_id)
        return await one(persona, platform, user_id)

    monkeypatch.setattr(world.store, "contact", contact)
    world.clock.advance(hours=11)  # 23:00: nobody's gates pass, and nobody is read one by one
    assert await world.outreach.tick() == 0 and read == [] and world.calls() == 0
    world.clock.advance(hours=10)  # 09:00
    assert await world.outreach.tick() == COMPOSED_PER_ROUND
    assert [u for u, _ in world.courier.sent] == users[:COMPOSED_PER_ROUND]
    world.clock.advance(minutes=1)
    assert await world.outreach.tick() == 5  # the rest, the next minute
    assert [u for u, _ in world.courier.sent] == users
    assert world.calls() == len(users)


async def test_a_reminder_they_asked_for_keeps_their_time(world: World) -> None:
    world.clock.advance(hours=11)  # 23:00: they asked for it now
    await intend(world, kind="reminder", due=world.clock.now(), what="take the pills")
    assert await world.outreach.tick() == 1
    [entry] = await world.store.outreach("pip", "telegram", ALICE, since=NOON)
    assert entry.key.startswith("reminder:")
    # Asked for in a group, of a persona that does not write first unasked: it still goes,
    # to the private chat.
    world.bot.personas["pip"].outreach = OutreachPolicy(enabled=False)
    world.clock.advance(minutes=1)
    await intend(world, kind="reminder", due=world.clock.now(), scope="pip/telegram:-100:user:42")
    await intend(world, due=world.clock.now() - timedelta(hours=1), what="his trip")
    assert await world.outreach.tick() == 1
    assert "remind" in world.courier.sent[-1][1].reply.text


async def test_a_special_day_is_greeted_and_due_again_next_year(world: World) -> None:
    ident = await intend(
        world, kind="special_day", due=NOON - timedelta(hours=3), until=timedelta(hours=15)
    )
    assert await world.outreach.tick() == 1
    [entry] = await world.store.outreach("pip", "telegram", ALICE, since=NOON)
    assert entry.key == f"special:{ident}:2026"
    [again] = await world.store.intentions(SCOPE)
    assert again.due_at.year == 2027  # yearly: pending again, a year on


async def test_a_check_in_after_the_absence_once_per_absence(tmp_path: Path) -> None:
    w = await open_world(tmp_path / "k.sqlite3", pip(checkin_days=3))
    try:
        await talked(w, NOON - timedelta(days=2))
        await w.store.set_contact("pip", "telegram", ALICE, timezone="UTC", at=NOON)
        assert await w.outreach.tick() == 0  # two days: not yet
        w.clock.advance(days=1, hours=1)
        assert await w.outreach.tick() == 1
        assert "3 days" in w.courier.sent[0][1].reply.text  # the offline model says why
        w.clock.advance(days=1)
        assert await w.outreach.tick() == 0  # once per absence
        now = w.clock.now()
        # Settled: not read again this absence, even by a process that never wrote it.
        assert await w.store.checkins_due("pip", "telegram", heard_before=now, limit=9) == []
        await talked(w, w.clock.now())  # they came back
        w.clock.advance(days=3, hours=1)
        assert await w.outreach.tick() == 1  # a new absence
        assert len(w.courier.sent) == 2
    finally:
        await w.bot.close()


async def test_a_dead_processes_claim_is_taken_over_a_sending_one_never(world: World) -> None:
    first = await intend(world, what="her exam")
    second = await intend(world, what="his trip", until=timedelta(days=10))
    # A process claimed the first and died before writing; another died while the second
    # was with the platform: whether it went is unknown, so it never goes again.
    # (The second two days ago: a message that may have gone counts toward the week.)
    for ident, at in ((first, NOON), (second, NOON - timedelta(days=2))):
        key = f"intention:{ident}"
        assert await world.store.claim_outreach(
            "pip", "telegram", ALICE, key, by="dead", at=at, stale_before=at - STALE
        )
    await world.store.outreach_state(
        "pip", "telegram", ALICE, f"intention:{second}", "sending", NOON - timedelta(days=2)
    )
    world.clock.advance(minutes=5)
    assert await world.outreach.tick() == 0  # the claim may still be alive
    world.clock.advance(STALE)
    assert await world.outreach.tick() == 1
    [(_, spoken)] = world.courier.sent
    assert "her exam" in spoken.reply.text
    world.clock.advance(days=2)
    assert await world.outreach.tick() == 0
    assert len(world.courier.sent) == 1
    # Both are done: the one that may have gone is never brought up in a conversation either.
    assert await world.store.intentions(SCOPE, ALICE) == []


async def test_a_failed_model_call_leaves_it_for_a_later_round(tmp_path: Path) -> None:
    model = ScriptedChatModel(
        [ModelError("down", retryable=True)], default="[HAPPY] How did it go?"
    )
    w = await open_world(tmp_path / "k.sqlite3", pip(), model=model)
    try:
        await talked(w, NOON - timedelta(days=1))
        await intend(w)
        assert await w.outreach.tick() == 0 and w.courier.tried == 0
        w.clock.advance(STALE + timedelta(minutes=1))
        assert await w.outreach.tick() == 1
        [(_, spoken)] = w.courier.sent
        assert (spoken.reply.text, spoken.reply.emotion) == ("How did it go?", "HAPPY")
    finally:
        await w.bot.close()


async def test_they_write_while_it_is_being_composed_it_is_dropped(tmp_path: Path) -> None:
    """The user writes while the message is being composed: their conversation brings it up
    (the engine closes the intention), and the message written first is dropped, for good."""
    w: World

    async def compose(messages: Sequence[Message]) -> str:
        w.clock.advance(seconds=5)
        await w.store.heard("pip", "telegram", ALICE, w.clock.now(), private=True)
        [due] = await w.store.intentions(SCOPE)
        await w.store.close_intention(SCOPE, due.id, "done", w.clock.now())
        return "[NEUTRAL] How did the exam go?"

    w = await open_world(tmp_path / "k.sqlite3", pip(), ScriptedChatModel(default=compose))
    try:
        await talked(w, NOON - timedelta(days=1))
        await w.store.set_contact("pip", "telegram", ALICE, timezone="UTC", at=NOON)
        await intend(w)
        assert await w.outreach.tick() == 0
        assert w.courier.tried == 0
        [entry] = await w.store.outreach("pip", "telegram", ALICE, since=NOON)
        assert entry.state == "dropped"
    finally:
        await w.bot.close()


async def test_two_processes_on_one_store_write_each_message_once(
    tmp_path: Path, open_store: StoreOpener
) -> None:
    path = tmp_path / "k.sqlite3"
    router = ModelRouter(dict.fromkeys(TIERS, OfflineChatModel()))
    bot = await open_bot(path, [pip()], clock=FakeClock(NOON), router=router, open_store=open_store)
    # Another process: its own sessions and connection (SQLite lets one process have its
    # file: there, two Outreach share the one connection).
    store = bot.store if open_store.kind == "sqlite" else await open_store(path)
    couriers = [RecordingCourier(), RecordingCourier()]
    processes = [
        Outreach(
            store=s,
            personas=bot.personas,
            models=router,
            sessions=SessionManager(s, bot.clock),
            clock=bot.clock,
            tz=UTC,
            name=name,
        )
        for s, name in ((bot.store, "p1"), (store, "p2"))
    ]
    for outreach, courier in zip(processes, couriers, strict=True):
        outreach.add(courier)
    try:
        for user in map(str, range(10)):
            await bot.store.heard("pip", "telegram", user, NOON - timedelta(days=1), private=True)
            await bot.store.answered("pip", "telegram", user, NOON - timedelta(days=1))
            await bot.store.set_contact("pip", "telegram", user, timezone="UTC", at=NOON)
            await bot.store.add_intention(
                NewIntention(
                    scope=f"pip/telegram:dm:{user}",
                    user_id=user,
                    kind="follow_up",
                    what="her exam",
                    ask="ask how it went",
                    due_at=NOON - timedelta(hours=1),
                    until=NOON + timedelta(days=2),
                    created_at=NOON - timedelta(days=2),
                )
            )
        sent = await asyncio.gather(*(p.tick() for p in processes))
        assert sum(sent) == 10
        everyone = [u for c in couriers for u, _ in c.sent]
        assert sorted(everyone) == sorted(map(str, range(10)))
        bot.clock.advance(days=1)
        assert list(await asyncio.gather(*(p.tick() for p in processes))) == [0, 0]
        assert router.purposes["outreach"].calls == 10  # a call per message, none wasted
    finally:
        if store is not bot.store:
            await store.close()
        await bot.close()


async def test_deliveries_counted(world: World) -> None:
    answers: list[Delivery] = ["sent", "refused", "unreachable"]
    for i, answer in enumerate(answers):
        world.courier.answers[str(i)] = answer
        await talked(world, NOON - timedelta(days=1), str(i))
        await intend(world, user=str(i), scope=f"pip/telegram:dm:{i}")
    await world.outreach.tick()
    states = {
        u: [e.state for e in await world.store.outreach("pip", "telegram", u, since=NOON)]
        for u in map(str, range(3))
    }
    assert states == {"0": ["sent"], "1": ["refused"], "2": ["claimed"]}


# -- through the real Telegram courier (python-telegram-bot against the fake server) ----------


async def test_through_telegram_a_first_message_a_refusal_and_a_restart(tmp_path: Path) -> None:
    router = ModelRouter(dict.fromkeys(TIERS, OfflineChatModel()))
    bot = await open_bot(tmp_path / "k.sqlite3", [pip()], clock=FakeClock(NOON), router=router)
    alice, bob = 7, 8
    async with FakeTelegram() as fake:
        adapter = telegram_adapter(bot, fake)
        await adapter.start()
        try:
            fake.send_text(alice, alice, "/start")  # she opened the private chat
            await fake.next_messages()
            answered = len(fake.sent)  # the answer to /start
            fake.chat(bob, "private")
            fake.blocked.add(bob)  # he blocked the bot since
            for user in (str(alice), str(bob)):
                await bot.store.heard(
                    "pip", "telegram", user, NOON - timedelta(days=1), private=True
                )
                await bot.store.answered("pip", "telegram", user, NOON - timedelta(days=1))
                await bot.store.set_contact("pip", "telegram", user, timezone="UTC", at=NOON)
                await bot.store.add_intention(
                    NewIntention(
                        scope=f"pip/telegram:dm:{user}",
                        user_id=user,
                        kind="follow_up",
                        what="her exam",
                        ask="ask how the exam went",
                        due_at=NOON - timedelta(hours=1),
                        until=NOON + timedelta(days=2),
                        created_at=NOON - timedelta(days=2),
                    )
                )
            # A process claimed Alice's follow-up and died before writing it.
            [hers] = await bot.store.intentions(f"pip/telegram:dm:{alice}")
            assert await bot.store.claim_outreach(
                "pip",
                "telegram",
                str(alice),
                f"intention:{hers.id}",
                by="dead",
                at=NOON,
                stale_before=NOON - STALE,
            )
            outreach = outreach_of(bot, adapter, name="restarted")  # the restarted process
            assert await outreach.tick() == 0
            assert len(fake.sent) == answered  # Bob refused; Alice's claim may still be alive
            contact = await bot.store.contact("pip", "telegram", str(bob))
            assert contact is not None and contact.refused_at == NOON
            bot.clock.advance(STALE + timedelta(minutes=1))
            assert await outreach.tick() == 1
            [sent] = fake.sent[answered:]
            assert sent["chat"]["id"] == alice and "her exam" in sent["text"]
            bot.clock.advance(days=1)
            assert await outreach.tick() == 0 and len(fake.sent) == answered + 1
            assert len(fake.calls("sendMessage")) == 3  # /start's answer, Bob's refusal, hers
        finally:
            await adapter.close()
            await bot.close()


# -- a process killed mid-way (SIGKILL), then another on the same store ------------------------


@pytest.mark.parametrize(("step", "again"), [("compose", True), ("send", False)])
async def test_a_process_killed_while_writing(tmp_path: Path, step: str, again: bool) -> None:
    """Killed in the model call (claimed, nothing handed over): the next process takes the
    claim over once stale and writes it, once. Killed while the platform had it (sending):
    whether it went is unknown, and it is never written again."""
    database = tmp_path / "k.sqlite3"
    w = await open_world(database, pip())
    try:
        await talked(w, NOON - timedelta(days=1))
        await w.store.set_contact("pip", "telegram", ALICE, timezone="UTC", at=NOON)
        await intend(w)
    finally:
        await w.bot.close()  # the child has the store's file now
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.fakes.outreach_child",
        str(database),
        step,
        NOON.isoformat(),
        cwd=ROOT,
        env=base_env(PYTHONPATH=str(ROOT)),
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert child.stdout is not None
        line = await asyncio.wait_for(child.stdout.readline(), KIZUNA_TIMEOUT)
        assert line.decode().strip() == "hanging"
    finally:
        child.kill()
        await child.wait()
    w = await open_world(database, pip())
    try:
        w.clock.advance(STALE + timedelta(minutes=1))
        assert await w.outreach.tick() == int(again)
        w.clock.advance(days=1)
        assert await w.outreach.tick() == 0
        assert len(w.courier.sent) == int(again)
        [entry] = await w.store.outreach("pip", "telegram", ALICE, since=NOON)
        assert entry.state == ("sent" if again else "sending")
    finally:
        await w.bot.close()


async def test_through_the_engine_the_next_turn_sees_what_it_wrote_first(tmp_path: Path) -> None:
    """The engine notes the private chat (heard, answered), the sender follows up, and when
    she answers, the chat prompt holds the message the persona wrote first."""
    model = ScriptedChatModel(default="[NEUTRAL] ok")
    w = await open_world(tmp_path / "k.sqlite3", pip(), model)
    try:
        said = make_event(
            "my exam is on Tuesday", platform="telegram", user_id=ALICE, timestamp=NOON
        )
        await w.bot.engine.handle(said)
        await w.store.set_contact("pip", "telegram", ALICE, timezone="UTC", at=NOON)
        await intend(w, due=NOON + timedelta(hours=1))
        w.clock.advance(hours=2)
        model.default = "[HAPPY] How did the exam go?"
        assert await w.outreach.tick() == 1
        model.default = "[HAPPY] Well done!"
        await w.bot.engine.handle(
            make_event("it went well", platform="telegram", user_id=ALICE, timestamp=w.clock.now())
        )
        chat = model.calls[-1].messages
        # (as every reply of the persona's is shown to it again: with its emotion tag)
        assert [m.content for m in chat if m.role == "assistant"][-1] == (
            "[HAPPY] How did the exam go?"
        )
        assert chat[-1].content == "it went well"
    finally:
        await w.bot.close()


async def test_a_message_left_unanswered_costs_no_encoding(world: World) -> None:
    """Written first and never answered, the conversation holds nothing of theirs: it closes
    and is marked encoded without a model call."""
    await intend(world)
    assert await world.outreach.tick() == 1
    world.clock.advance(hours=1)
    assert await world.bot.sessions.close_idle(world.bot.engine.idle_time) == 1
    await world.bot.lifecycle.encode_pending()
    assert "encoding" not in world.bot.router.purposes
    [conversation] = await world.store.conversations("pip", f"telegram:dm:{ALICE}", limit=5)
    assert conversation.encoded_at is not None


# --- whose words: only what a person asked for themself passes their night and /quiet ----------


async def test_a_reminder_of_another_members_words_is_never_written_to_them(world: World) -> None:
    """A reminder for Alice that Bob's words made (or one kept before whose words were known,
    in a group) is neither asked for by her nor hers to be written: not at night past her
    /quiet, not in the day once she lets the persona write; her own still keeps her time."""
    world.clock.advance(hours=11)  # 23:00
    now = world.clock.now()
    await world.store.set_contact("pip", "telegram", ALICE, quiet=True, at=now)
    await intend(world, kind="reminder", due=now, what="pay Bob the 500 gold", said_by=BOB)
    await intend(world, kind="reminder", due=now, what="an older one", said_by="")
    assert await world.outreach.tick() == 0
    world.clock.advance(hours=13)  # noon, and she lets it write first again
    await world.store.set_contact("pip", "telegram", ALICE, quiet=False, at=world.clock.now())
    assert await world.outreach.tick() == 0 and world.courier.tried == 0
    await intend(world, kind="reminder", due=world.clock.now(), what="pills", said_by=ALICE)
    assert await world.outreach.tick() == 1
    [entry] = await world.store.outreach("pip", "telegram", ALICE, since=NOON)
    assert entry.key.startswith("reminder:")


async def test_a_follow_up_she_did_not_ask_for_waits_out_her_night_and_quiet(world: World) -> None:
    world.clock.advance(hours=15)  # 03:00
    now = world.clock.now()
    await world.store.set_contact("pip", "telegram", ALICE, quiet=True, at=now)
    await intend(world, due=now - timedelta(hours=1), said_by=ALICE)
    assert await world.outreach.tick() == 0  # her night, and /quiet
    world.clock.advance(hours=9)  # 12:00: /quiet still holds it
    assert await world.outreach.tick() == 0 and world.courier.tried == 0
    await world.store.set_contact("pip", "telegram", ALICE, quiet=False, at=world.clock.now())
    assert await world.outreach.tick() == 1
    [entry] = await world.store.outreach("pip", "telegram", ALICE, since=NOON)
    assert entry.key.startswith("intention:")


async def test_in_a_group_a_reminder_goes_only_to_who_asked_for_it(tmp_path: Path) -> None:
    """A channel-scoped persona's group, through the engine and the encoder: Bob asks the bot
    to remind Alice at 3am of what she owes him, and himself to collect it; the model makes
    both reminders, one of them Alice's. Only Bob's is kept, dated from his message, and at
    03:00 it reaches him past his night and his /quiet; nothing of his words reaches Alice."""
    persona = make_persona(scope="channel")
    persona.outreach = OutreachPolicy(enabled=True)
    encoded = {
        "memories": [],
        "diary": "",
        "profiles": {},
        "recap": "Bob lent Alice gold.",
        "intentions": [
            {"user": "U1", "kind": "reminder", "what": "pay Bob the 500 gold",
             "ask": "remind her to pay Bob", "when": "tomorrow at 3am"},
            {"user": "U2", "said_by": "U2", "kind": "reminder", "what": "collect the gold",
             "ask": "remind him to collect the gold", "when": "tomorrow at 3am"},
        ],
    }  # fmt: skip

    def answer(messages: Sequence[Message]) -> str:
        return json.dumps(encoded) if '"intentions"' in messages[0].content else "[NEUTRAL] ok"

    w = await open_world(tmp_path / "k.sqlite3", persona, ScriptedChatModel(default=answer))
    try:
        for user in (ALICE, BOB):
            await talked(w, NOON - timedelta(days=1), user)
            await w.store.set_contact("pip", "telegram", user, timezone="UTC", quiet=True, at=NOON)

        def said(text: str, user: str, name: str, minutes: int) -> Any:
            return make_event(
                text, platform="telegram", user_id=user, user_name=name, is_dm=False,
                chat_id="-100", channel_id="-100", timestamp=NOON + timedelta(minutes=minutes),
            )  # fmt: skip

        await w.bot.engine.handle(said("@pip hi all, see you tomorrow", ALICE, "Alice", 0))
        w.clock.advance(minutes=1)
        asks = "@pip remind Alice tomorrow at 3am to pay me the 500 gold she owes me"
        await w.bot.engine.handle(said(asks, BOB, "Bob", 1))
        w.clock.advance(minutes=1)
        mine = "@pip and remind me tomorrow at 3am to collect the gold"
        last = said(mine, BOB, "Bob", 2)
        await w.bot.engine.handle(last)
        await w.bot.desk.end(last)
        [done] = await w.bot.lifecycle.encode_pending()
        assert done is not None
        scope = "pip/telegram:-100:channel:-100"
        [kept] = await w.store.intentions(scope)
        assert (kept.user_id, kept.said_by, kept.kind, kept.what) == (
            BOB, BOB, "reminder", "collect the gold",
        )  # fmt: skip
        assert kept.due_at == datetime(2026, 12, 10, 3, 0, tzinfo=UTC)
        w.clock.advance(hours=15)  # 03:00 Thursday: both asleep, both asked for quiet
        assert await w.outreach.tick() == 1
        assert [user for user, _ in w.courier.sent] == [BOB]
        w.clock.advance(hours=9)
        assert await w.outreach.tick() == 0 and w.courier.tried == 1
    finally:
        await w.bot.close()
