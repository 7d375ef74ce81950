"""Bursts (bot.bursts through Engine.handle): messages coming within a few seconds in one
conversation are answered once, by one turn that sees them all; each is kept as it comes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.config import EngineConfig
from bot.events import ChatEvent, Reply
from tests.fakes.factories import Bot, make_event, make_persona, open_bot
from tests.fakes.timer import FakeTimer

WINDOW = EngineConfig(timezone="UTC", burst_seconds=2.0, burst_longest_seconds=8.0)


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[Bot]:
    opened = await open_bot(tmp_path / "k.sqlite3", settings=WINDOW)
    try:
        yield opened
    finally:
        await opened.close()


def timer(bot: Bot) -> FakeTimer:
    assert bot.timer is not None
    return bot.timer


async def said(bot: Bot, event: ChatEvent) -> asyncio.Task[Reply]:
    """Hand a message to the engine as a chat platform does, and let it start waiting."""
    started = timer(bot).started
    task = asyncio.create_task(bot.engine.handle(event, settle=True))
    async with asyncio.timeout(10):  # (a guard: its save runs in aiosqlite's thread)
        while True:  # until it sleeps in its window (or is done)
            if task.done() or timer(bot).started > started:
                break
            await asyncio.sleep(0)
    return task


async def test_a_message_typed_in_pieces_is_answered_once_seeing_them_all(bot: Bot) -> None:
    pieces = []
    for text in ("so", "I was thinking", "about tea?"):
        pieces.append(await said(bot, make_event(text)))
        await timer(bot).advance(1.0)  # under the window: the burst goes on
    assert bot.model.calls == [] and not any(p.done() and p.result().text for p in pieces)
    await timer(bot).advance(2.0)
    replies = [await p for p in pieces]

    assert [r.text for r in replies] == ["", "", "ok"]
    [call] = bot.model.calls
    assert [m.content for m in call.turns] == ["so", "I was thinking", "about tea?"]
    turns = (await bot.engine.info(make_event())).turns
    assert [t.text for t in turns] == ["so", "I was thinking", "about tea?", "ok"]


async def test_a_burst_that_goes_on_is_answered_at_its_longest(bot: Bot) -> None:
    pieces = []
    for n in range(6):  # one every 1.5 s: never 2 s of quiet
        if n:
            await timer(bot).advance(1.5)
        pieces.append(await said(bot, make_event(f"piece {n}")))
    await timer(bot).advance(0.5)  # 8 s since the first: no longer, however many follow
    async with asyncio.timeout(10):
        replies = await asyncio.gather(*pieces)

    assert [r.text for r in replies] == ["", "", "", "", "", "ok"]
    [call] = bot.model.calls
    assert [m.content for m in call.turns] == [f"piece {n}" for n in range(6)]


async def test_each_message_is_saved_as_it_comes_and_survives_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "crash.sqlite3"
    first = await open_bot(path, settings=WINDOW)
    pieces = [await said(first, make_event(t, message_id=str(n))) for n, t in enumerate("ab")]
    session = await first.engine.session(make_event())
    async with asyncio.timeout(10):  # (a guard, not a timing: aiosqlite's thread)
        while True:  # until both are saved
            if not session.dirty:
                break
            await asyncio.sleep(0)
    for piece in pieces:  # the crash: nothing more is saved
        piece.cancel()
    await asyncio.gather(*pieces, return_exceptions=True)
    await first.store.close()

    again = await open_bot(path, settings=WINDOW)
    try:
        turns = (await again.engine.info(make_event())).turns
        assert [(t.role, t.text) for t in turns] == [("user", "a"), ("user", "b")]
        assert again.model.calls == []
    finally:
        await again.close()


async def test_without_settling_a_message_is_answered_at_once(bot: Bot) -> None:
    """The console and the web page: no window, whatever the engine's."""
    reply = await bot.engine.handle(make_event("hello"))
    assert reply.text == "ok" and timer(bot).sleeping == 0


async def test_in_a_group_the_burst_is_answered_if_any_of_it_calls_on_the_persona(
    tmp_path: Path,
) -> None:
    pip = make_persona(scope="channel")
    bot = await open_bot(tmp_path / "g.sqlite3", [pip], settings=WINDOW)
    try:
        among = await said(bot, make_event("lunch?", is_dm=False, addressed=(), user_id="u2"))
        await timer(bot).advance(0.5)
        to_pip = await said(bot, make_event("Pip, you coming", is_dm=False, addressed=()))
        await timer(bot).advance(2.0)
        assert [(await among).text, (await to_pip).text] == ["", "ok"]
        [call] = bot.model.calls
        assert '"lunch?"' in call.messages[1].content  # said among others, seen all the same

        quiet = await said(bot, make_event("anyway", is_dm=False, addressed=()))
        await timer(bot).advance(2.0)
        assert (await quiet).text == "" and len(bot.model.calls) == 1
        event = make_event(is_dm=False)
        turns = (await bot.engine.info(event)).turns
        assert [t.text for t in turns] == ["lunch?", "Pip, you coming", "ok", "anyway"]
        assert not (await bot.engine.session(event)).dirty  # kept: saved as it joined
    finally:
        await bot.close()


async def test_two_conversations_burst_apart(bot: Bot) -> None:
    """One person's pieces never hold up, nor merge with, another's."""
    alice = await said(bot, make_event("hi from alice"))
    await timer(bot).advance(1.5)
    bob = await said(bot, make_event("hi from bob", user_id="u2", user_name="Bob"))
    await timer(bot).advance(0.5)  # Alice's window ends; Bob's goes on
    async with asyncio.timeout(10):
        assert (await alice).text == "ok"
    assert not bob.done()
    await timer(bot).advance(1.5)
    async with asyncio.timeout(10):
        assert (await bob).text == "ok"
    assert [c.messages[-1].content for c in bot.model.calls] == ["hi from alice", "hi from bob"]
