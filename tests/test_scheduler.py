"""The scheduler: autosave of dirty sessions, closing of idle ones and, once a minute, the
personas' messages written first, one round at a time."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import pytest

import memory.recall.catchup
from bot.outreach import Outreach
from bot.outreach.courier import Delivery
from bot.persona.file import OutreachPolicy
from bot.runtime.scheduler import Scheduler
from bot.spoken import Spoken
from memory.clock import FakeClock
from memory.embeddings import HashEmbedder
from memory.records import NewIntention
from memory.storage import StoreError
from tests.fakes.courier import RecordingCourier
from tests.fakes.factories import Bot, make_event, make_persona, open_bot, outreach_of

SCOPE = "discord:dm:u1"
WAIT = 30.0  # seconds a tick may take at most: it never waits for an outreach round
NOON = datetime(2026, 12, 9, 12, 0, tzinfo=UTC)


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[Bot]:
    bot = await open_bot(tmp_path / "kizuna.sqlite3", [make_persona(idle_minutes=10)])
    yield bot
    await bot.close()


@pytest.fixture
def scheduler(bot: Bot) -> Scheduler:
    return Scheduler(bot.sessions, bot.engine.idle_time, interval=3600)


async def test_tick_saves_dirty_sessions(bot: Bot, scheduler: Scheduler) -> None:
    await bot.engine.handle(make_event("save me"))  # (a turn is saved before its reply)
    await bot.desk.set_state(make_event(), "mood", "sleepy")  # a change no one saved
    row = await bot.store.load_session("pip", SCOPE)
    assert row is not None and row.snapshot["state"] == {}

    await scheduler.tick()

    row = await bot.store.load_session("pip", SCOPE)
    assert row is not None
    assert [t["text"] for t in row.snapshot["turns"]] == ["save me", "ok"]
    assert row.snapshot["state"] == {"mood": "sleepy"}
    assert not any(s.dirty for s in bot.sessions.all())


async def test_tick_closes_sessions_idle_past_the_personas_idle_time(
    bot: Bot, scheduler: Scheduler
) -> None:
    await bot.engine.handle(make_event("hi"))
    bot.clock.advance(minutes=9)
    await scheduler.tick()
    assert await bot.store.count_conversations("pip", SCOPE) == 0

    bot.clock.advance(minutes=1)
    await scheduler.tick()

    [archived] = await bot.store.conversations("pip", SCOPE)
    assert [t["text"] for t in archived.turns] == ["hi", "ok"]
    assert archived.reason == "idle"
    assert (await bot.desk.info(make_event())).turns == ()


async def test_a_failing_store_is_logged_not_raised(
    bot: Bot,
    scheduler: Scheduler,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await bot.engine.handle(make_event("keep me"))
    await bot.desk.set_state(make_event(), "mood", "sleepy")  # not saved yet

    async def broken(*args: object, **kwargs: object) -> None:
        raise StoreError("database is locked")

    monkeypatch.setattr(bot.store, "save_sessions", broken)
    with caplog.at_level(logging.ERROR, logger="bot.runtime.scheduler"):
        await scheduler.tick()  # does not raise

    assert any("database is locked" in (r.exc_text or "") for r in caplog.records)
    session = await bot.engine.session(make_event())
    assert session.dirty  # still to be saved...

    monkeypatch.undo()
    await scheduler.tick()  # ...and saved on the next round
    assert not session.dirty
    row = await bot.store.load_session("pip", SCOPE)
    assert row is not None and row.snapshot["state"] == {"mood": "sleepy"}


async def test_a_failing_archive_keeps_the_conversation_for_the_next_round(
    bot: Bot, scheduler: Scheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    await bot.engine.handle(make_event("hi"))
    bot.clock.advance(minutes=30)

    async def broken(*args: object, **kwargs: object) -> int:
        raise StoreError("disk full")

    monkeypatch.setattr(bot.store, "archive_conversation", broken)
    await scheduler.tick()
    assert len((await bot.desk.info(make_event())).turns) == 2

    monkeypatch.undo()
    await scheduler.tick()
    assert (await bot.desk.info(make_event())).archived == 1


async def test_stop_saves_what_is_dirty(bot: Bot, scheduler: Scheduler) -> None:
    scheduler.start()
    await bot.engine.handle(make_event("last words"))  # after the first round ran or not

    await scheduler.stop()

    row = await bot.store.load_session("pip", SCOPE)
    assert row is not None
    assert [t["text"] for t in row.snapshot["turns"]] == ["last words", "ok"]
    assert not any(s.dirty for s in bot.sessions.all())


async def test_a_stop_lets_an_idle_conversation_s_archive_land_before_the_store_closes(
    bot: Bot, scheduler: Scheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped while its round archives an idle conversation: the round is cancelled but
    the archive, shielded from it, goes on, and the stop waits for it, so that the store is
    not closed under it (it failed on a closed database, its error never retrieved)."""
    await bot.engine.handle(make_event("hi"))
    bot.clock.advance(minutes=30)
    archive = bot.store.archive_conversation
    writing, written = asyncio.Event(), asyncio.Event()

    async def slow(*args: Any, **kwargs: Any) -> int:
        writing.set()
        await written.wait()
        return await archive(*args, **kwargs)

    monkeypatch.setattr(bot.store, "archive_conversation", slow)
    scheduler.start()  # its first round finds the conversation idle
    await writing.wait()
    stopping = asyncio.create_task(scheduler.stop())
    for _ in range(20):  # the round's cancel and anything after it run
        await asyncio.sleep(0)
    assert not stopping.done()
    written.set()
    await stopping
    assert (await bot.desk.info(make_event())).archived == 1
    assert (await bot.desk.info(make_event())).turns == ()


async def test_stop_without_start_still_saves(bot: Bot, scheduler: Scheduler) -> None:
    await bot.engine.handle(make_event("hi"))
    await scheduler.stop()
    assert await bot.store.load_session("pip", SCOPE) is not None


async def test_idle_time_follows_the_persona_and_the_room(bot: Bot) -> None:
    assert bot.engine.idle_time("pip", "discord:dm:1") == timedelta(minutes=10)
    # A group's talk comes in spurts: its conversations stay open longer (group.idle_minutes).
    assert bot.engine.idle_time("pip", "discord:g1:user:1") == timedelta(minutes=30)
    assert bot.engine.idle_time("pip", "telegram:-100:channel:-100") == timedelta(minutes=30)


async def test_started_it_re_embeds_a_changed_bank_in_the_background_with_progress(
    tmp_path: Path,
) -> None:
    """After a change of embedder the scheduler's own task embeds the bank again, reporting
    its progress, and its scopes recall by meaning once done."""
    folder = tmp_path / "kizuna.sqlite3"
    old = await open_bot(folder, [make_persona()], embedder=HashEmbedder(64))
    many = memory.recall.catchup.INLINE_EMBED + 5
    for i in range(many):
        await old.bank.remember(SCOPE, f"the weather on day {i}")
    await old.close()

    bot = await open_bot(folder, [make_persona()], embedder=HashEmbedder(128))
    try:
        scheduler = Scheduler(
            bot.sessions, bot.engine.idle_time, interval=3600, lifecycle=bot.lifecycle
        )
        seen: list[tuple[int, int]] = []
        await scheduler.catch_up(lambda done, total: seen.append((done, total)))
        assert seen[0] == (0, many) and seen[-1] == (many, many)
        assert await bot.bank.store.unembedded(SCOPE, bot.bank.embedder.name) == []
        seen.clear()
        await scheduler.catch_up(lambda done, total: seen.append((done, total)))
        assert seen == []  # nothing to do: no bar
    finally:
        await bot.close()


async def test_the_personas_write_first_once_a_minute(tmp_path: Path) -> None:
    persona = make_persona()
    persona.outreach = OutreachPolicy(enabled=True)
    bot = await open_bot(tmp_path / "k.sqlite3", [persona], clock=FakeClock(NOON))
    courier = RecordingCourier()
    outreach = outreach_of(bot, courier)
    scheduler = Scheduler(bot.sessions, bot.engine.idle_time, interval=5, outreach=outreach)
    try:
        for user in ("1", "2"):
            await contact(bot, user)
        await bot.store.add_intention(intention("1"))
        await scheduler.tick()  # the first round looks
        first = scheduler.writing
        assert first is not None
        await first
        assert [u for u, _ in courier.sent] == ["1"]
        await bot.store.add_intention(intention("2"))
        for _ in range(11):  # 55 s of 5 s rounds: not yet
            await scheduler.tick()
        assert scheduler.writing is first and len(courier.sent) == 1
        await scheduler.tick()  # a minute on
        assert scheduler.writing is not None and scheduler.writing is not first
        await scheduler.writing
        assert [u for u, _ in courier.sent] == ["1", "2"]
    finally:
        await bot.close()


async def test_a_stop_lets_a_message_being_written_first_be_recorded(tmp_path: Path) -> None:
    """Stopped while the platform holds a message written first: the round finishes, so the
    message is recorded as sent and its intention done, not left half-way."""
    persona = make_persona()
    persona.outreach = OutreachPolicy(enabled=True)
    bot = await open_bot(tmp_path / "k.sqlite3", [persona], clock=FakeClock(NOON))
    courier = HeldCourier()
    outreach = outreach_of(bot, courier)
    scheduler = Scheduler(bot.sessions, bot.engine.idle_time, interval=5, outreach=outreach)
    try:
        await contact(bot, "1")
        await bot.store.add_intention(intention("1"))
        scheduler.start()
        await courier.holding.wait()
        stopping = asyncio.create_task(scheduler.stop())
        await asyncio.sleep(0)  # the stop has begun: the loop is cancelled
        courier.release.set()
        await stopping
        assert [u for u, _ in courier.sent] == ["1"]
        assert await bot.store.intentions("pip/telegram:dm:1", "1") == []  # done
    finally:
        await bot.close()


async def test_a_slow_outreach_round_holds_up_none_of_the_other_rounds_work(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A round still writing (a platform slow to take a message) is not waited for: the
    rounds go on closing idle conversations, and the next minute's outreach round is skipped
    while it lasts; it is recorded once it ends."""
    persona = make_persona(idle_minutes=10)
    persona.outreach = OutreachPolicy(enabled=True)
    clock = FakeClock(NOON)
    bot = await open_bot(tmp_path / "k.sqlite3", [persona], clock=clock)
    courier = HeldCourier()
    outreach = outreach_of(bot, courier)
    scheduler = Scheduler(bot.sessions, bot.engine.idle_time, interval=5, outreach=outreach)
    try:
        await contact(bot, "1")
        await bot.store.add_intention(intention("1"))
        await bot.engine.handle(make_event("hi"))
        await asyncio.wait_for(scheduler.tick(), WAIT)  # returns with the round under way
        await courier.holding.wait()
        writing = scheduler.writing
        assert writing is not None and not writing.done()

        clock.advance(minutes=10)
        with caplog.at_level(logging.INFO, logger="bot.runtime.scheduler"):
            for _ in range(12):  # a minute of rounds: the next outreach round is due
                await asyncio.wait_for(scheduler.tick(), WAIT)
        assert await bot.store.count_conversations("pip", SCOPE) == 1  # closed meanwhile
        assert scheduler.writing is writing and not writing.done()
        assert courier.writes == 1 and courier.sent == []
        assert any("still under way" in r.getMessage() for r in caplog.records)

        courier.release.set()
        assert await writing == 1
        assert [u for u, _ in courier.sent] == ["1"]
        assert await bot.store.intentions("pip/telegram:dm:1", "1") == []  # done
        await scheduler.stop()
    finally:
        await bot.close()


async def test_a_failed_outreach_round_is_logged_and_the_next_minutes_starts(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    class Failing:
        rounds = 0

        async def tick(self) -> int:
            self.rounds += 1
            raise StoreError("database is locked")

    failing = Failing()
    scheduler = Scheduler(
        bot.sessions, bot.engine.idle_time, interval=5, outreach=cast(Outreach, failing)
    )
    with caplog.at_level(logging.ERROR, logger="bot.runtime.scheduler"):
        await scheduler.tick()
        assert scheduler.writing is not None
        await asyncio.wait({scheduler.writing})
    [record] = caplog.records
    assert record.getMessage() == "writing first failed; retrying next minute"
    assert record.exc_info is not None and isinstance(record.exc_info[1], StoreError)
    for _ in range(12):
        await scheduler.tick()
    assert scheduler.writing is not None
    await asyncio.wait({scheduler.writing})
    assert failing.rounds == 2
    await scheduler.stop()


class HeldCourier(RecordingCourier):
    """Holds each message until released, as a slow platform does."""

    def __init__(self) -> None:
        super().__init__()
        self.holding = asyncio.Event()
        self.release = asyncio.Event()
        self.writes = 0

    async def write_first(self, user_id: str, spoken: Spoken) -> Delivery:
        self.writes += 1
        self.holding.set()
        await self.release.wait()
        return await super().write_first(user_id, spoken)


async def contact(bot: Bot, user: str) -> None:
    """Pip's Telegram contact `user`, heard and answered in private yesterday, in UTC."""
    await bot.store.heard("pip", "telegram", user, NOON - timedelta(days=1), private=True)
    await bot.store.answered("pip", "telegram", user, NOON - timedelta(days=1))
    await bot.store.set_contact("pip", "telegram", user, timezone="UTC", at=NOON)


def intention(user: str) -> NewIntention:
    return NewIntention(
        scope=f"pip/telegram:dm:{user}",
        user_id=user,
        kind="follow_up",
        what="the exam",
        ask="ask how it went",
        due_at=NOON - timedelta(hours=1),
        until=NOON + timedelta(days=1),
        created_at=NOON - timedelta(days=1),
    )
