"""The engine: a ChatEvent in, a Reply out; emotions, failures, idle closing, concurrency, the
prompt budget, state slots, and the user's commands about their conversation."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import pytest

from bot.catalogue import say
from bot.chat_model import Completion, Message, ModelError
from bot.config import EngineConfig
from bot.conversation.sessions import Turn
from bot.events import Attachment
from bot.llm.tokens import estimate_messages, estimate_tokens
from bot.persona.file import Persona, StateSlot
from bot.prompts import RECAP_HEADING, STATE_TOOL
from bot.turn.settle import MAX_MESSAGE_CHARS
from tests.fakes.factories import PLATFORMS, Bot, make_event, make_persona, open_bot
from tests.fakes.models import ModelCall, ScriptedChatModel, calling

OpenBot = Callable[..., Awaitable[Bot]]


@pytest.fixture
async def bots(tmp_path: Path) -> AsyncIterator[OpenBot]:
    """Open bots on fresh databases in tmp_path; all are closed after the test."""
    opened: list[Bot] = []

    async def open_(*personas: Persona, **kwargs: Any) -> Bot:
        bot = await open_bot(tmp_path / f"bot{len(opened)}.sqlite3", personas, **kwargs)
        opened.append(bot)
        return bot

    yield open_
    for bot in opened:
        await bot.close()


@pytest.fixture
async def bot(bots: OpenBot) -> Bot:
    return await bots()


def chat_calls(bot: Bot) -> list[ModelCall]:
    return [c for c in bot.model.calls if not c.json_mode and c not in state_calls(bot)]


def state_calls(bot: Bot) -> list[ModelCall]:
    return [c for c in bot.model.calls if any(t.name == STATE_TOOL for t in c.tools)]


def texts(turns: Sequence[Turn]) -> list[str]:
    return [t.text for t in turns]


# --- answering -------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
async def test_an_empty_message_gets_no_model_call_and_no_reply(bot: Bot, text: str) -> None:
    reply = await bot.engine.handle(make_event(text))
    assert reply.text == "" and reply.chunks == () and not reply.failed
    assert bot.model.calls == []
    assert (await bot.desk.info(make_event())).turns == ()


@pytest.mark.parametrize("is_dm", [True, False])
async def test_a_bots_message_is_neither_answered_nor_kept(bot: Bot, is_dm: bool) -> None:
    event = make_event("Pip?", is_dm=is_dm)  # (in a group: a mention)
    reply = await bot.engine.handle(replace(event, from_bot=True))
    assert reply.text == "" and bot.model.calls == []
    assert (await bot.desk.info(event)).turns == ()


async def test_an_attachment_alone_is_a_message(bot: Bot) -> None:
    event = make_event("", attachments=(Attachment("cat.png", "https://x/cat.png"),))
    await bot.engine.handle(event)
    [call] = chat_calls(bot)
    assert "[attachment: cat.png]" in call.messages[-1].content


async def test_a_reply_goes_into_the_conversation(bot: Bot) -> None:
    bot.model.push("[HAPPY] Hi Alice!")
    reply = await bot.engine.handle(make_event("hello there"))

    assert (reply.text, reply.emotion, reply.chunks) == ("Hi Alice!", "HAPPY", ("Hi Alice!",))
    [call] = chat_calls(bot)
    assert call.messages[0].role == "system"
    assert call.messages[-1] == Message("user", "hello there")
    turns = (await bot.desk.info(make_event())).turns
    assert [(t.role, t.text, t.emotion) for t in turns] == [
        ("user", "hello there", ""),
        ("assistant", "Hi Alice!", "HAPPY"),
    ]


@pytest.mark.parametrize(
    ("completion", "emotion", "text"),
    [
        ("[HAPPY] yay", "HAPPY", "yay"),
        ("**[sad]** oh no", "SAD", "oh no"),
        ("[FURIOUS] hmph", "CALM", "hmph"),  # not one of the persona's emotions
        ("no tag at all", "CALM", "no tag at all"),
        ("[] empty tag", "CALM", "[] empty tag"),
    ],
)
async def test_the_emotion_tag_is_parsed_off_and_mapped(
    bots: OpenBot, completion: str, emotion: str, text: str
) -> None:
    persona = make_persona(emotions=["CALM", "HAPPY", "SAD"], neutral="CALM")
    bot = await bots(persona, model=ScriptedChatModel([completion]))

    reply = await bot.engine.handle(make_event("hi"))

    assert (reply.emotion, reply.text, reply.failed) == (emotion, text, False)
    last = (await bot.desk.info(make_event())).turns[-1]
    assert (last.text, last.emotion) == (text, emotion)


@pytest.mark.parametrize("platform", ["discord", "telegram"])
async def test_a_long_reply_is_split_for_the_platform(bot: Bot, platform: Any) -> None:
    sentences = [f"This is sentence number {n}, which says a little more." for n in range(250)]
    long_text = " ".join(sentences)
    assert len(long_text) > 2 * PLATFORMS[platform].limit
    bot.model.push("[NEUTRAL] " + long_text)

    reply = await bot.engine.handle(make_event("tell me a story", platform=platform))

    assert reply.text == long_text
    assert len(reply.chunks) >= 2
    assert all(len(c) <= PLATFORMS[platform].limit for c in reply.chunks)
    assert all(c.endswith(".") for c in reply.chunks)  # cut between sentences
    assert " ".join(reply.chunks) == long_text


# --- failures --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "apology", "expected"),
    [
        ("en", "Mrrp... my head is foggy, try again?", "Mrrp... my head is foggy, try again?"),
        ("en", "", say("en", "apology")),
        ("zh", "", say("zh", "apology")),
        ("fr", "", say("en", "apology")),  # no default in that language: English
    ],
)
async def test_a_model_failure_becomes_an_apology_and_keeps_the_message(
    bots: OpenBot, language: str, apology: str, expected: str
) -> None:
    persona = make_persona(language=language, apology=apology)
    bot = await bots(persona, model=ScriptedChatModel([ModelError("timed out", retryable=True)]))

    reply = await bot.engine.handle(make_event("are you there?"))

    assert reply.failed
    assert reply.text == expected and reply.chunks == (expected,)
    assert reply.emotion == "SAD"
    turns = (await bot.desk.info(make_event())).turns
    assert [(t.role, t.text) for t in turns] == [("user", "are you there?")]


@pytest.mark.parametrize("answer", ["", "   ", "[HAPPY]", "**[HAPPY]**  "])
async def test_an_empty_answer_is_a_failure_too(bots: OpenBot, answer: str) -> None:
    bot = await bots(model=ScriptedChatModel([answer]))
    reply = await bot.engine.handle(make_event("hello?"))
    assert reply.failed and reply.text == say("en", "apology")
    turns = (await bot.desk.info(make_event())).turns
    assert [(t.role, t.text) for t in turns] == [("user", "hello?")]


async def test_a_huge_message_is_cut_and_says_so(bot: Bot) -> None:
    await bot.engine.handle(make_event("x" * (MAX_MESSAGE_CHARS + 500)))
    [said, _] = (await bot.desk.info(make_event())).turns
    assert said.text.startswith("x" * MAX_MESSAGE_CHARS)
    assert said.text.endswith("[…cut: 500 more characters]")


async def test_the_next_message_after_a_failure_sees_the_earlier_one(bot: Bot) -> None:
    bot.model.push(ModelError("down"), "[HAPPY] Sorry, I'm back! Pizza sounds great.")
    failed = await bot.engine.handle(make_event("I want pizza tonight"))
    reply = await bot.engine.handle(make_event("hello?"))

    assert failed.failed and not reply.failed
    _, second = chat_calls(bot)
    assert [(m.role, m.content) for m in second.turns] == [
        ("user", "I want pizza tonight"),
        ("user", "hello?"),
    ]
    assert texts((await bot.desk.info(make_event())).turns) == [
        "I want pizza tonight",
        "hello?",
        "Sorry, I'm back! Pizza sounds great.",
    ]


async def test_a_failure_without_a_sad_emotion_is_neutral(bots: OpenBot) -> None:
    persona = make_persona(emotions=["CALM", "HAPPY"], neutral="CALM")
    bot = await bots(persona, model=ScriptedChatModel([ModelError("down")]))
    reply = await bot.engine.handle(make_event("hi"))
    assert reply.failed and reply.emotion == "CALM"


# --- idle conversations ----------------------------------------------------------------------


async def test_a_message_after_the_idle_time_closes_the_old_conversation_first(
    bots: OpenBot,
) -> None:
    bot = await bots(make_persona(idle_minutes=10))
    bot.model.push("[NEUTRAL] one", "[NEUTRAL] two", "[NEUTRAL] three")
    await bot.engine.handle(make_event("first"))
    bot.clock.advance(minutes=9)
    await bot.engine.handle(make_event("second"))  # within the idle time: same conversation
    assert await bot.store.count_conversations("pip", "discord:dm:u1") == 0

    bot.clock.advance(minutes=10)
    await bot.engine.handle(make_event("third"))

    [archived] = await bot.store.conversations("pip", "discord:dm:u1")
    assert [t["text"] for t in archived.turns] == ["first", "one", "second", "two"]
    assert archived.reason == "idle"
    assert texts((await bot.desk.info(make_event())).turns) == ["third", "three"]
    # The old conversation is no longer in the turns; a recap of where it left off (its last
    # exchange, until it is encoded) is.
    last_prompt = chat_calls(bot)[-1].text
    assert "first" not in last_prompt
    assert f'{RECAP_HEADING}\n"Alice: second / Pip: two"' in last_prompt


async def test_a_failing_archive_keeps_the_conversation_and_still_answers(
    bots: OpenBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    bot = await bots(make_persona(idle_minutes=10))
    await bot.engine.handle(make_event("first"))
    bot.clock.advance(minutes=11)

    async def broken(*args: Any, **kwargs: Any) -> int:
        raise OSError("disk full")

    monkeypatch.setattr(bot.store, "archive_conversation", broken)
    reply = await bot.engine.handle(make_event("second"))

    assert not reply.failed and reply.text
    turns = texts((await bot.desk.info(make_event())).turns)
    assert turns[0] == "first" and "second" in turns  # nothing lost; closed on a later round
    monkeypatch.undo()
    bot.clock.advance(minutes=11)
    assert await bot.sessions.close_idle(bot.engine.idle_time) == 1
    [archived] = await bot.store.conversations("pip", "discord:dm:u1")
    assert "second" in [t["text"] for t in archived.turns]


# --- concurrency -----------------------------------------------------------------------------


async def _let_others_run() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def test_one_sessions_turns_stay_in_order_under_concurrency(bot: Bot) -> None:
    entered, release = asyncio.Event(), asyncio.Event()

    async def slow(messages: Sequence[Message]) -> str:
        entered.set()
        await release.wait()
        return "[NEUTRAL] answer one"

    bot.model.push(slow, "[NEUTRAL] answer two")
    first = asyncio.create_task(bot.engine.handle(make_event("question one")))
    await entered.wait()
    second = asyncio.create_task(bot.engine.handle(make_event("question two")))
    await _let_others_run()
    assert len(bot.model.calls) == 1  # the second message waits for the first to be answered

    release.set()
    replies = await asyncio.gather(first, second)

    assert [r.text for r in replies] == ["answer one", "answer two"]
    assert texts((await bot.desk.info(make_event())).turns) == [
        "question one",
        "answer one",
        "question two",
        "answer two",
    ]
    second_prompt = [m.content for m in chat_calls(bot)[1].turns]
    assert second_prompt == ["question one", "[NEUTRAL] answer one", "question two"]


async def test_different_sessions_run_concurrently(bot: Bot) -> None:
    both_inside = asyncio.Barrier(2)

    async def meet(messages: Sequence[Message]) -> str:
        # Only returns once both users' calls are in flight at the same time.
        async with asyncio.timeout(5):
            await both_inside.wait()
        return f"[NEUTRAL] re: {messages[-1].content}"

    bot.model.push(meet, meet)
    alice = make_event("from alice", user_id="alice")
    bob = make_event("from bob", user_id="bob")

    replies = await asyncio.gather(bot.engine.handle(alice), bot.engine.handle(bob))

    assert [r.text for r in replies] == ["re: from alice", "re: from bob"]
    assert texts((await bot.desk.info(alice)).turns) == ["from alice", "re: from alice"]
    assert texts((await bot.desk.info(bob)).turns) == ["from bob", "re: from bob"]


async def test_a_channel_scoped_persona_shares_the_table_and_names_speakers(
    bots: OpenBot,
) -> None:
    bot = await bots(make_persona(scope="channel"))
    bot.model.push("[NEUTRAL] Welcome, Alice.", "[NEUTRAL] Welcome, Bob.")
    await bot.engine.handle(make_event("I sit down", is_dm=False, user_name="Alice"))
    await bot.engine.handle(make_event("Me too", is_dm=False, user_id="u2", user_name="Bob"))

    bob_prompt = [(m.role, m.content) for m in chat_calls(bot)[-1].turns]
    assert bob_prompt == [
        ("user", '"Alice": "I sit down"'),
        ("assistant", "[NEUTRAL] Welcome, Alice."),
        ("user", '"Bob": "Me too"'),
    ]


# --- the prompt budget -----------------------------------------------------------------------


async def test_the_prompt_stays_within_budget_and_keeps_the_newest_turns(bots: OpenBot) -> None:
    settings = EngineConfig(context_tokens=1000, reply_tokens=200)
    bot = await bots(settings=settings)
    event = make_event()
    session = await bot.engine.session(event)
    for n in range(60):
        role: Literal["user", "assistant"] = "user" if n % 2 == 0 else "assistant"
        session.add(Turn(role, "x", f"turn {n:02d} " + "blah " * 80, bot.clock.now()))

    await bot.engine.handle(make_event("the newest question?"))

    [call] = chat_calls(bot)
    budget = settings.context_tokens - settings.reply_tokens
    assert estimate_messages(call.messages) <= budget
    assert call.messages[-1] == Message("user", "the newest question?")
    kept = [m.content[:7] for m in call.turns[:-1]]
    assert 0 < len(kept) < 60
    # The most recent turns, in order, with none skipped in between.
    assert kept == [f"turn {n:02d}" for n in range(60 - len(kept), 60)]


async def test_a_newest_message_over_budget_on_its_own_is_cut_not_dropped(
    bots: OpenBot,
) -> None:
    settings = EngineConfig(context_tokens=600, reply_tokens=100)
    bot = await bots(settings=settings)
    huge = "word " * 3000 + "THE END"

    await bot.engine.handle(make_event(huge))

    [call] = chat_calls(bot)
    assert estimate_messages(call.messages) <= settings.context_tokens - settings.reply_tokens
    assert call.messages[-1].role == "user"
    assert call.messages[-1].content.endswith("THE END")


# --- state slots -----------------------------------------------------------------------------

DM = make_persona(
    "dm",
    name="Dungeon Master",
    state=[
        StateSlot("party", "The player characters.", update="once"),
        StateSlot("game", "Where the party is and what is going on.", update="every_turn"),
    ],
)


def slot_names(call: ModelCall) -> set[str]:
    [tool] = call.tools
    return set(tool.parameters["properties"])


async def test_state_slots_are_filled_in_through_the_update_state_tool(bots: OpenBot) -> None:
    bot = await bots(DM)
    event = make_event("I'm Ann, a bard.", persona="dm")
    bot.model.push(
        "[NEUTRAL] Welcome to the tavern, Ann.",
        calling(STATE_TOOL, {"party": "Ann, a bard", "game": "in the tavern"}),
    )

    reply = await bot.engine.handle(event)
    await bot.engine.drain()

    assert reply.text == "Welcome to the tavern, Ann."
    [call] = state_calls(bot)
    assert slot_names(call) == {"party", "game"}
    assert "I'm Ann, a bard." in call.text and "Welcome to the tavern, Ann." in call.text
    assert (await bot.desk.info(event)).state == {"party": "Ann, a bard", "game": "in the tavern"}
    assert bot.router.purposes["state"].calls == 1


async def test_a_once_slot_is_not_asked_again_and_every_turn_slots_are(bots: OpenBot) -> None:
    bot = await bots(DM)
    event = make_event("hi", persona="dm")
    bot.model.push(
        "[NEUTRAL] Welcome.",
        calling(STATE_TOOL, {"party": "Ann, a bard", "game": "in the tavern"}),
        "[NEUTRAL] You walk north.",
        calling(STATE_TOOL, {"game": "on the north road", "party": "a new party?"}),
    )
    await bot.engine.handle(event)
    await bot.engine.handle(make_event("I go north", persona="dm"))
    await bot.engine.drain()

    _, second = state_calls(bot)
    assert slot_names(second) == {"game"}
    # The party the model offered anyway is not taken: `once` means once.
    assert (await bot.desk.info(event)).state == {
        "party": "Ann, a bard",
        "game": "on the north road",
    }
    # The chat model sees the state it keeps.
    assert "Ann, a bard" in chat_calls(bot)[-1].system


async def test_the_reply_does_not_wait_for_the_state_but_the_next_turn_does(
    bots: OpenBot,
) -> None:
    bot = await bots(DM)
    release = asyncio.Event()

    async def slow_state(messages: Sequence[Message]) -> Completion:
        await release.wait()
        return calling(STATE_TOOL, {"party": "Ann, a bard", "game": "in the tavern"})

    bot.model.push("[NEUTRAL] Welcome.", slow_state, "[NEUTRAL] You look around.")
    reply = await bot.engine.handle(make_event("I'm Ann, a bard.", persona="dm"))
    assert reply.text == "Welcome."  # returned while the state call is still out

    second = asyncio.create_task(bot.engine.handle(make_event("I look around", persona="dm")))
    await _let_others_run()
    assert not second.done()  # the next turn waits for the state to be written
    release.set()
    await second
    assert "in the tavern" in chat_calls(bot)[-1].system
    await bot.engine.drain()


async def test_a_slot_keeps_to_its_bound_whatever_the_model_writes(bots: OpenBot) -> None:
    bounded = make_persona(
        "dm", name="Dungeon Master", state=[StateSlot("game", "Six short lines.", tokens=40)]
    )
    bot = await bots(bounded)
    event = make_event("we go on", persona="dm")
    rambling = "Location: the road north\nThreads: " + "the mill, " * 200
    bot.model.push("[NEUTRAL] On you go.", calling(STATE_TOOL, {"game": rambling}))
    await bot.engine.handle(event)
    await bot.engine.drain()

    kept = (await bot.desk.info(event)).state["game"]
    assert kept.startswith("Location: the road north\nThreads: the mill,")
    assert estimate_tokens(kept) <= 40


async def test_structured_state_values_are_stored_as_json_text(bots: OpenBot) -> None:
    bot = await bots(DM)
    event = make_event("hi", persona="dm")
    bot.model.push(
        "[NEUTRAL] ok", calling(STATE_TOOL, {"party": ["Ann", "Bo"], "game": {"room": "tavern"}})
    )
    await bot.engine.handle(event)
    await bot.engine.drain()
    assert (await bot.desk.info(event)).state == {
        "party": '["Ann", "Bo"]',
        "game": '{"room": "tavern"}',
    }


@pytest.mark.parametrize(
    "answer",
    [
        "no change",  # declined: no call
        calling(STATE_TOOL, "game: the road"),  # arguments not JSON
        calling(STATE_TOOL, {"game": ""}),  # an empty value is not a change
        calling(STATE_TOOL, {"weather": "rain"}),  # not one of the slots
        calling("something_else", {"game": "the road"}),
    ],
    ids=["declined", "unreadable", "empty", "unknown-slot", "other-tool"],
)
async def test_a_declined_or_unusable_state_call_rewrites_nothing(
    bots: OpenBot, answer: str | Completion
) -> None:
    bot = await bots(DM)
    event = make_event("hi", persona="dm")
    bot.model.push(
        "[NEUTRAL] Welcome.",
        calling(STATE_TOOL, {"party": "Ann", "game": "tavern"}),
        "[NEUTRAL] Onward.",
        answer,
    )
    await bot.engine.handle(event)
    await bot.engine.drain()
    session = await bot.engine.session(event)
    saved = session.changes
    reply = await bot.engine.handle(make_event("onward", persona="dm"))
    await bot.engine.drain()

    assert reply.text == "Onward." and not reply.failed
    assert len(state_calls(bot)) == 2  # one call a turn, never a retry
    assert (await bot.desk.info(event)).state == {"party": "Ann", "game": "tavern"}
    # The message waits and joins (its turn), the reply joins; no state rewrite.
    assert session.changes == saved + 4


async def test_a_failing_tools_model_keeps_the_state_and_the_reply(bots: OpenBot) -> None:
    bot = await bots(DM)
    event = make_event("hi", persona="dm")
    bot.model.push(
        "[NEUTRAL] Welcome.",
        calling(STATE_TOOL, {"party": "Ann", "game": "tavern"}),
        "[NEUTRAL] Onward.",
        ModelError("tools tier down"),
    )
    await bot.engine.handle(event)
    reply = await bot.engine.handle(make_event("onward", persona="dm"))
    assert reply.text == "Onward." and not reply.failed
    assert (await bot.desk.info(event)).state == {"party": "Ann", "game": "tavern"}


async def test_a_persona_without_state_makes_no_state_call(bot: Bot) -> None:
    await bot.engine.handle(make_event("hi"))
    assert state_calls(bot) == [] and len(bot.model.calls) == 1


# --- the user's commands ---------------------------------------------------------------------


async def test_end_archives_the_conversation(bot: Bot) -> None:
    event = make_event("hi")
    assert not await bot.desk.end(event)  # nothing open yet
    await bot.engine.handle(event)
    await bot.engine.handle(make_event("how are you?"))

    assert await bot.desk.end(event)

    info = await bot.desk.info(event)
    assert info.turns == () and info.archived == 1
    [archived] = await bot.store.conversations(info.persona, info.scope)
    assert archived.reason == "end" and len(archived.turns) == 4
    assert not await bot.desk.end(event)


async def test_info_counts_archived_conversations_of_this_scope_only(bot: Bot) -> None:
    alice, bob = make_event("hi", user_id="alice"), make_event("hi", user_id="bob")
    for _ in range(3):
        await bot.engine.handle(alice)
        await bot.desk.end(alice)
    await bot.engine.handle(alice)
    await bot.engine.handle(bob)

    alice_info = await bot.desk.info(alice)
    assert (alice_info.persona, alice_info.scope) == ("pip", "discord:dm:alice")
    assert alice_info.archived == 3 and texts(alice_info.turns) == ["hi", "ok"]
    assert (await bot.desk.info(bob)).archived == 0


async def test_wipe_forgets_conversation_state_and_archive(bots: OpenBot) -> None:
    bot = await bots(DM)
    event = make_event("hi", persona="dm")
    other = make_event("hi", persona="dm", user_id="someone-else")
    bot.model.push("[NEUTRAL] Welcome.", '{"party": "Ann", "game": "tavern"}')
    await bot.engine.handle(event)
    await bot.desk.end(event)
    await bot.engine.handle(event)
    await bot.engine.handle(other)

    await bot.desk.wipe(event)

    info = await bot.desk.info(event)
    assert (info.turns, info.state, info.archived) == ((), {}, 0)
    assert await bot.store.load_session("dm", info.scope) is None
    assert len((await bot.desk.info(other)).turns) == 2


async def test_save_snapshots_now_and_exports_the_session(bot: Bot) -> None:
    event = make_event("remember this")
    bot.model.push("[HAPPY] I will.")
    await bot.engine.handle(event)

    export = await bot.desk.save(event)

    assert export["persona"] == "pip" and export["scope"] == "discord:dm:u1"
    assert export["saved_at"] == bot.clock.now().isoformat()
    assert [t["text"] for t in export["turns"]] == ["remember this", "I will."]
    assert "first" not in export and "rows" not in export  # how the store keeps them
    row = await bot.store.load_session("pip", "discord:dm:u1")
    assert row is not None and row.snapshot["turns"] == export["turns"]
    assert not (await bot.engine.session(event)).dirty


async def test_a_saved_conversation_survives_a_restart(bots: OpenBot, tmp_path: Path) -> None:
    path = tmp_path / "restart.sqlite3"
    first = await open_bot(path)
    try:
        await first.engine.handle(make_event("my cat is called Mochi"))
        await first.sessions.save_dirty()
    finally:
        await first.close()

    again = await open_bot(path)
    try:
        await again.engine.handle(make_event("what is my cat called?"))
        [call] = chat_calls(again)
        assert "my cat is called Mochi" in call.text
    finally:
        await again.close()


async def test_the_exchange_is_saved_before_the_reply_is_returned(bot: Bot) -> None:
    """A crash right after the user saw the reply loses neither their message nor it."""
    bot.model.push("[HAPPY] Hi Alice!")
    await bot.engine.handle(make_event("hello there"))

    [row] = await bot.store.load_sessions(["pip"])  # no save_dirty: handle saved it
    assert [t["text"] for t in row.snapshot["turns"]] == ["hello there", "Hi Alice!"]


async def test_a_message_delivered_again_is_not_answered_twice(
    bots: OpenBot, tmp_path: Path
) -> None:
    """Telegram delivers again what a crashed bot had not confirmed: the message id saved
    with the exchange tells it was answered, even after a restart and the conversation's end."""
    path = tmp_path / "again.sqlite3"
    first = await open_bot(path)
    try:
        first.model.push("[HAPPY] Hi!")
        assert (await first.engine.handle(make_event("hello", message_id="7"))).text == "Hi!"
        assert await first.desk.end(make_event())
    finally:
        await first.close()  # (closing saves nothing more: the exchange is saved already)

    again = await open_bot(path)
    try:
        repeated = await again.engine.handle(make_event("hello", message_id="7"))
        assert (repeated.text, repeated.chunks) == ("", ())
        assert again.model.calls == []
        assert (await again.desk.info(make_event())).turns == ()
        again.model.push("[HAPPY] Yes?")
        assert (await again.engine.handle(make_event("hello", message_id="8"))).text == "Yes?"
    finally:
        await again.close()


async def test_a_message_waiting_for_the_turn_before_it_survives_a_crash(
    bots: OpenBot, tmp_path: Path
) -> None:
    """Telegram gives a message once the bot has confirmed it: one waiting for its chat's
    previous turn when the process dies is kept (said, unanswered), not lost."""
    path = tmp_path / "wait.sqlite3"
    first = await open_bot(path)
    entered = asyncio.Event()

    async def stuck(messages: Sequence[Message]) -> str:
        entered.set()
        await asyncio.Event().wait()  # the process dies before this answers
        return "never"

    first.model.push(stuck)
    one = asyncio.create_task(first.engine.handle(make_event("question one", message_id="1")))
    await entered.wait()
    two = asyncio.create_task(first.engine.handle(make_event("question two", message_id="2")))
    session = await first.engine.session(make_event())
    async with asyncio.timeout(10):  # (a guard, not a timing: it takes milliseconds)
        while True:  # until the waiting message is saved (in aiosqlite's thread)
            if session.waiting and not session.dirty:
                break
            await asyncio.sleep(0)
    # The crash: nothing more is saved (no close, no autosave); the store is as it was.
    one.cancel()
    two.cancel()
    await asyncio.gather(one, two, return_exceptions=True)
    await first.store.close()

    again = await open_bot(path)
    try:
        turns = (await again.desk.info(make_event())).turns
        assert [(t.role, t.text) for t in turns] == [
            ("user", "question one"),
            ("user", "question two"),
        ]
        repeated = await again.engine.handle(make_event("question two", message_id="2"))
        assert repeated.text == "" and again.model.calls == []
    finally:
        await again.close()


async def test_drain_with_a_grace_cancels_a_stuck_state_update(bots: OpenBot) -> None:
    bot = await bots(DM)
    never = asyncio.Event()

    async def stuck(messages: Sequence[Message]) -> str:
        await never.wait()
        return "{}"

    bot.model.push("[NEUTRAL] Welcome.", stuck)
    event = make_event("hi", persona="dm")
    await bot.engine.handle(event)

    await bot.engine.drain(grace=0.01)

    session = await bot.engine.session(event)
    assert not session.lock.locked()  # the cancelled update let go of the session
    assert [t.text for t in (await bot.desk.info(event)).turns] == ["hi", "Welcome."]
