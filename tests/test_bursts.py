"""Bursts (bot.turn.settle through Engine.handle): messages coming within a few seconds in one
conversation are answered once, by one turn that sees them all; each is kept as it comes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.config import EngineConfig
from bot.events import ChatEvent, Reply
from bot.persona.toolspec import CustomTool
from bot.prompts import QUIET_NOTE_OF
from bot.prompts.tools import TOOL_ADMINS_ONLY, TOOL_FOR_ONE
from memory.records import NewIntention
from tests.fakes.factories import (
    Bot,
    make_event,
    make_persona,
    open_bot,
    tool_persona,
    with_tools,
    write_page,
)
from tests.fakes.models import ModelCall, calling
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
    turns = (await bot.desk.info(make_event())).turns
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
        turns = (await again.desk.info(make_event())).turns
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
        turns = (await bot.desk.info(event)).turns
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


# --- a turn answering several people acts for each of them, never for the newest alone --------


def group(text: str, user: str, name: str, **more: Any) -> ChatEvent:
    return make_event(text, user_id=user, user_name=name, is_dm=False, **more)


async def burst(bot: Bot, *events: ChatEvent) -> list[Reply]:
    """The events said within one burst window; the replies once it ends."""
    pending = []
    for event in events:
        pending.append(await said(bot, event))
        await timer(bot).advance(0.5)
    await timer(bot).advance(2.0)
    async with asyncio.timeout(10):
        return list(await asyncio.gather(*pending))


def offered(call: ModelCall) -> set[str]:
    return {tool.name for tool in call.tools}


async def test_a_burst_of_two_people_offers_no_tool_acting_for_a_person(tmp_path: Path) -> None:
    """Bob asks for a reminder and Alice says hi in one burst: the turn is neither's alone, so
    the tools that act for a person are not offered (dice, for no one, still is); a call to
    one anyway is refused, and nothing is kept for either of them."""
    persona = tool_persona()
    bot = await open_bot(tmp_path / "g.sqlite3", [persona], settings=WINDOW)
    try:
        with_tools(bot)
        arguments = {"what": "call mum", "when": "on Friday"}
        dice = calling("dice", {"notation": "d20"})
        bot.model.push(calling("reminder", arguments), dice, "[NEUTRAL] ok")
        bob = group("Pip, remind me on Friday to call mum", "u2", "Bob")
        replies = await burst(bot, bob, group("hi Pip, roll for us", "u1", "Alice"))

        assert [r.text for r in replies] == ["", "ok"]
        first, answered, rolled = bot.model.calls_with(json_mode=False)
        assert offered(first) == {"recall_memory", "dice"}
        assert answered.messages[-1].role == "tool"
        assert answered.messages[-1].content == TOOL_FOR_ONE
        assert rolled.messages[-1].content.startswith('"1d20: rolled')  # for no one: it rolls
        scope = bot.desk.event_scope(bob)
        assert await bot.store.intentions(scope, "u1") == []
        assert await bot.store.intentions(scope, "u2") == []

        # Bob alone: the turn is his, and the tools act for him.
        bot.model.push(calling("reminder", arguments), calling("where", {}), "[NEUTRAL] set")
        [reply] = await burst(bot, group("Pip, remind me on Friday to call mum", "u2", "Bob"))
        assert reply.text == "set"
        chat = bot.model.calls_with(json_mode=False)
        assert offered(chat[-3]) == {"recall_memory", "dice", "reminder", "where"}
        assert chat[-1].messages[-1].content == f'"scope={scope} user=u2 admin=False note="'
        [kept] = await bot.store.intentions(scope, "u2")
        assert (kept.kind, kept.what) == ("reminder", "call mum")
        assert await bot.store.intentions(scope, "u1") == []
    finally:
        await bot.close()


async def test_an_admin_only_tool_needs_every_speaker_of_the_turn_to_be_an_admin(
    tmp_path: Path,
) -> None:
    bell = CustomTool("bell", module="tests.fakes.tools:bell", admin_only=True)
    persona = tool_persona(bell)
    bot = await open_bot(tmp_path / "g.sqlite3", [persona], settings=WINDOW)
    try:
        with_tools(bot)
        mod = group("Pip, open it", "u2", "Mod", admin=True)
        await burst(bot, mod, group("me too", "u3", "Other mod", admin=True))
        assert "bell" in offered(bot.model.calls[-1])
        # Anyone else's words in the turn, even before an admin's: not an admin's turn.
        bot.model.push(calling("bell", {}), "[NEUTRAL] no")
        await burst(
            bot, group("Pip, ring it", "u1", "Al"), group("ok, Pip", "u2", "Mod", admin=True)
        )
        first, answered = bot.model.calls[-2:]
        assert "bell" not in offered(first)
        assert answered.messages[-1].content == TOOL_ADMINS_ONLY
    finally:
        await bot.close()


async def test_a_request_for_quiet_in_a_burst_is_its_senders_and_no_ones_intention_comes_up(
    tmp_path: Path,
) -> None:
    """Bob asks not to be written to and Alice, whose follow-up is due, says hi: Bob is quiet
    (not Alice), the reply acknowledges it by his name, and Alice's follow-up waits for a turn
    of hers alone."""
    persona = make_persona(scope="channel")
    bot = await open_bot(tmp_path / "g.sqlite3", [persona], settings=WINDOW)
    try:
        scope = bot.desk.event_scope(group("", "u1", "Alice"))
        now = bot.clock.now()
        await bot.store.add_intention(
            NewIntention(
                scope=scope,
                user_id="u1",
                kind="follow_up",
                what="her exam",
                ask="ask how the exam went",
                due_at=now - timedelta(hours=1),
                until=now + timedelta(days=2),
                created_at=now - timedelta(days=2),
            )
        )
        await burst(bot, group("Pip, stop messaging me", "u2", "Bob"), group("hi", "u1", "Alice"))

        bob = await bot.store.contact("pip", "discord", "u2")
        alice = await bot.store.contact("pip", "discord", "u1")
        assert bob is not None and bob.quiet
        assert alice is not None and not alice.quiet
        [call] = bot.model.calls_with(json_mode=False)
        assert QUIET_NOTE_OF.format(names='"Bob"') in call.system
        assert "ask how the exam went" not in call.text
        [pending] = await bot.store.intentions(scope, "u1")
        assert pending.state == "pending"

        await burst(bot, group("Pip, I'm back", "u1", "Alice"))
        assert "ask how the exam went" in bot.model.calls[-1].text
    finally:
        await bot.close()


async def test_a_burst_of_two_people_has_no_one_asker_for_recall(tmp_path: Path) -> None:
    """Bob asks "what is my cat called?" as Alice says hi: "my" is not Alice's, nor is her
    profile the asker's in a reply to them both."""
    persona = make_persona(scope="channel")
    bot = await open_bot(tmp_path / "g.sqlite3", [persona], settings=WINDOW)
    try:
        scope = bot.desk.event_scope(group("", "u1", "Alice"))
        profiles = [("u1", "Alice", "Alice keeps a cat called Mochi.")]
        await write_page(bot.store, scope, date(2025, 12, 30), "We talked.", profiles)
        await burst(
            bot, group("Pip, what is my cat called?", "u2", "Bob"), group("hi", "u1", "Alice")
        )
        [both] = bot.model.calls_with(json_mode=False)
        assert "Mochi" not in both.text

        await burst(bot, group("Pip, what is my cat called?", "u1", "Alice"))
        assert "Mochi" in bot.model.calls[-1].text  # hers, asked alone
    finally:
        await bot.close()


async def test_an_anonymous_sender_in_a_burst_is_no_contact_and_no_one_a_tool_acts_for(
    tmp_path: Path,
) -> None:
    """A Telegram group's anonymous admin (the group's own id) and Alice in one burst: Alice
    is answered, the group is no one to write to; alone, the anonymous admin is still no one
    a tool acts for."""
    persona = tool_persona()
    bot = await open_bot(tmp_path / "g.sqlite3", [persona], settings=WINDOW)
    try:
        with_tools(bot)
        anonymous = replace(group("Pip, stop messaging me", "-100", "Group"), anonymous=True)
        await burst(bot, anonymous, group("Pip, hi", "u1", "Alice"))
        assert await bot.store.contact("pip", "discord", "-100") is None
        alice = await bot.store.contact("pip", "discord", "u1")
        assert alice is not None and alice.last_answered is not None

        await burst(bot, replace(group("Pip, where am I", "-100", "Group"), anonymous=True))
        assert "where" not in offered(bot.model.calls[-1])
    finally:
        await bot.close()
