"""What becomes of conversations over days and weeks: encoding when they go quiet (retried,
never twice), the diary brought back by a date, the profile and the recap in the prompt, the
daily prune, compression of a long conversation, and the dungeon master's state over a game;
and several processes sharing a PostgreSQL database (each encodes, a scope at a time; one
leads the daily prune). All with the fake clock, on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.chat_model import Completion, Message, ModelError
from bot.commands import conversation as conversation_commands
from bot.commands import memory as memory_commands
from bot.config import EngineConfig
from bot.conversation.lifecycle import HISTORY
from bot.conversation.recollect import Recollector
from bot.persona.file import load_persona
from bot.prompts import (
    DIARY_HEADING,
    PROFILE_HEADING,
    RECAP_HEADING,
    STATE_TOOL,
    SUMMARY_HEADING,
    SUMMARY_TASK,
)
from bot.runtime.scheduler import Scheduler
from memory.bank.upkeep import HEARSAY
from memory.clock import FakeClock
from memory.encoding.encoder import ENCODING_TASK
from memory.records import ArchivedConversation, ArchiveWrite, NewIntention
from memory.storage import Storage
from memory.storage.postgres import PgStore
from tests.fakes.factories import Bot, make_event, make_persona, open_bot
from tests.fakes.models import ModelCall, ScriptedChatModel, calling, encoding
from tests.fakes.postgres import StoreOpener, kill_lock_holders

SHIPPED = Path(__file__).resolve().parent.parent / "personas"
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # a Monday morning

OpenBot = Callable[..., Awaitable[Bot]]


@pytest.fixture
async def bots(tmp_path: Path, open_store: StoreOpener) -> AsyncIterator[OpenBot]:
    """Bots on each of both stores (every test runs on SQLite and on PostgreSQL)."""
    opened: list[Bot] = []

    async def make(*personas, folder: str = "", **kwargs) -> Bot:
        kwargs.setdefault("open_store", open_store)
        bot = await open_bot(
            tmp_path / folder / "kizuna.sqlite3", list(personas), clock=FakeClock(START), **kwargs
        )
        opened.append(bot)
        return bot

    yield make
    for bot in opened:
        await bot.close()


def is_encoding(call: ModelCall) -> bool:
    return ENCODING_TASK in call.messages[0].content


def chat_calls(bot: Bot) -> list[ModelCall]:
    return [
        c
        for c in bot.model.calls
        if not c.json_mode
        and not c.messages[0].content.startswith(SUMMARY_TASK)
        and not any(t.name == STATE_TOOL for t in c.tools)
    ]


def down(messages: Sequence[Message]) -> str:
    """A model in an outage."""
    raise ModelError("summary tier down", retryable=True)


def quiet(messages: Sequence[Message]) -> str:
    """A model for days of small talk: empty encodings, short replies."""
    if ENCODING_TASK in messages[0].content:
        return encoding()
    return "[NEUTRAL] I see."


async def say(bot: Bot, text: str, persona: str = "pip", **kwargs) -> str:
    bot.clock.advance(seconds=30)
    reply = await bot.engine.handle(make_event(text, persona=persona, **kwargs))
    return reply.text


def scheduler(bot: Bot) -> Scheduler:
    return Scheduler(bot.sessions, bot.engine.idle_time, lifecycle=bot.lifecycle)


# --- a month with the cat ----------------------------------------------------------------------


async def test_a_month_with_the_cat(bots: OpenBot) -> None:
    """A user tells the cat about a job interview and a birthday; six minutes later memories
    exist with categories and importance; the next day "what did I tell you yesterday?" brings
    yesterday's diary; thirty days later unrecalled trivia is gone while the birthday and a
    memory recalled every few days remain."""
    miao = load_persona(SHIPPED / "miao.toml")
    bot = await bots(miao)
    tick = scheduler(bot).tick
    bot.model.push(
        "[HAPPY] 面试一定会顺利的喵！",
        "[HAPPY] 生日快乐要提前准备喵！",
        encoding(
            ("Alice has a job interview at the bakery on Friday.", "work_study", 2),
            ("Alice's birthday is on 14 March.", "special", 3),
            ("Alice had noodles for lunch.", "personal_daily", 1),
            diary="Alice told me about her interview and her birthday. I purred a lot.",
            profile="Alice: bakes, interviewing at a bakery; birthday 14 March.",
        ),
    )
    await say(bot, "I have a job interview at the bakery on Friday!", "miao")
    await say(bot, "Also my birthday is on 14 March. I had noodles for lunch.", "miao")

    bot.clock.advance(minutes=6)
    await tick()
    scope = bot.desk.event_scope(make_event(persona="miao"))
    memories = {m.text: m for m in await bot.bank.store.list_memories(scope)}
    interview = memories["2026-03-02: Alice has a job interview at the bakery on Friday."]
    birthday = memories["2026-03-02: Alice's birthday is on 14 March."]
    trivia = memories["2026-03-02: Alice had noodles for lunch."]
    assert (interview.category, interview.importance) == ("work_study", 2)
    assert (birthday.category, birthday.importance) == ("special", 3)
    assert (trivia.category, trivia.importance) == ("personal_daily", 1)

    bot.model.default = quiet
    bot.clock.advance(days=1)
    await say(bot, "what did I tell you yesterday?", "miao")
    system = chat_calls(bot)[-1].system
    assert DIARY_HEADING.format(day="Monday 2026-03-02") in system
    assert "I purred a lot" in system
    assert bot.router.purposes.get("intent") is None  # the diary answered: no intent call
    assert PROFILE_HEADING.format(name='"Alice"') in system and "bakery" in system

    # A month goes by. Every third day Alice talks about the interview; each morning the
    # scheduler prunes.
    for day in range(2, 32):
        bot.clock.advance(days=1)
        if day % 3 == 0:
            await say(bot, "the bakery job interview went fine", "miao")
            bot.clock.advance(minutes=6)
        await tick()
    left = {m.id for m in await bot.bank.store.list_memories(scope)}
    assert trivia.id not in left
    assert birthday.id in left and interview.id in left
    [report] = [
        r for r in await bot.bank.store.pruned_since(START, scope=scope) if r.memory_id == trivia.id
    ]
    assert report.policy == "ebbinghaus" and "retention" in report.reason
    [kept] = await bot.bank.store.get_memories(scope, [interview.id])
    assert kept.recall_count >= 5


# --- encoding ----------------------------------------------------------------------------------


async def test_a_failed_encoding_waits_and_is_retried_once_the_model_is_back(
    bots: OpenBot,
) -> None:
    bot = await bots(make_persona())
    tick = scheduler(bot).tick
    await say(bot, "I just moved to Lisbon.")
    bot.model.push(ModelError("summary tier down", retryable=True))
    bot.clock.advance(minutes=6)
    await tick()  # closes the conversation; encoding fails
    [conversation] = await bot.store.conversations("pip", "discord:dm:u1")
    assert conversation.encoded_at is None and conversation.attempts == 1

    calls = len(bot.model.calls)
    bot.clock.advance(seconds=30)
    await tick()  # within the retry delay: the model is not asked again
    assert len(bot.model.calls) == calls

    bot.model.push(encoding(("Alice moved to Lisbon.", "personal_daily", 2)))
    bot.clock.advance(minutes=2)
    await tick()
    await tick()
    scope = bot.desk.event_scope(make_event())
    [memory] = await bot.bank.store.list_memories(scope)
    assert memory.text == "2026-03-02: Alice moved to Lisbon."
    assert sum(is_encoding(c) for c in bot.model.calls) == 2  # the failure, then the one
    [conversation] = await bot.store.conversations("pip", "discord:dm:u1")
    assert conversation.encoded_at is not None


async def test_a_long_outage_retries_the_encoding_at_most_hourly_then_once(bots: OpenBot) -> None:
    """1, 2, 4 ... minutes between tries, never more than RETRY_MAX; done once, when it works."""
    bot = await bots(make_persona())
    tick = scheduler(bot).tick
    await say(bot, "I just moved to Lisbon.")
    bot.model.default = down
    bot.clock.advance(minutes=6)
    await tick()  # closes the conversation; the first try fails
    waits = []
    for _ in range(9):
        tries = sum(is_encoding(c) for c in bot.model.calls)
        waited = 0
        while sum(is_encoding(c) for c in bot.model.calls) == tries:
            bot.clock.advance(minutes=1)
            waited += 1
            await tick()
        waits.append(waited)
    assert waits == [1, 2, 4, 8, 16, 32, 60, 60, 60]  # RETRY_FIRST doubling, to RETRY_MAX
    [conversation] = await bot.store.conversations("pip", "discord:dm:u1")
    assert conversation.attempts == 10 and conversation.encoded_at is None

    bot.model.default = quiet
    bot.clock.advance(minutes=60)
    await tick()
    await tick()
    [conversation] = await bot.store.conversations("pip", "discord:dm:u1")
    assert conversation.encoded_at is not None
    assert sum(is_encoding(c) for c in bot.model.calls) == 11  # ten failures, one success


async def test_end_encodes_at_the_next_round_and_the_recap_opens_the_next_conversation(
    bots: OpenBot,
) -> None:
    bot = await bots(make_persona())
    await say(bot, "I'm off to bed, good night.")
    assert await bot.desk.end(make_event())
    bot.model.push(encoding(("Alice went to bed early.", "personal_daily", 1)))
    await scheduler(bot).tick()

    bot.clock.advance(hours=9)
    await say(bot, "good morning!")
    system = chat_calls(bot)[-1].system
    assert f'{RECAP_HEADING}\n"Alice was off to bed."' in system


async def test_a_dm_profile_never_reaches_a_group(bots: OpenBot) -> None:
    bot = await bots(make_persona())
    await say(bot, "Secretly, I'm afraid of the dark.")
    bot.model.push(
        encoding(("Alice is afraid of the dark.", "social_emotional", 2), profile="afraid of dark")
    )
    await bot.desk.end(make_event())
    await scheduler(bot).tick()
    assert "afraid of dark" in await memory_commands.profile(bot.services, make_event())

    await say(bot, "hi all", is_dm=False)
    system = chat_calls(bot)[-1].system
    assert "afraid" not in system
    group = make_event(is_dm=False)
    assert "knows nothing about you yet" in await memory_commands.profile(bot.services, group)


# --- the daily prune ---------------------------------------------------------------------------


async def test_the_prune_runs_once_a_day_from_the_prune_hour(bots: OpenBot) -> None:
    bot = await bots(make_persona())
    scope = bot.desk.event_scope(make_event())
    old = START - timedelta(days=30)
    trivia = await bot.bank.remember(scope, "Alice ate toast", importance=1, when=old)
    important = await bot.bank.remember(scope, "Alice's wedding day", importance=3, when=old)
    lifecycle = bot.lifecycle

    bot.clock.advance(hours=-7)  # 02:00: before the prune hour
    assert await lifecycle.prune_due() == []
    bot.clock.advance(hours=3)  # 05:00
    [report] = await lifecycle.prune_due()
    assert [i for i, _ in report.forgotten] == [trivia] and report.kept == 1
    assert await lifecycle.prune_due() == []  # once a day
    assert await bot.bank.store.last_prune(scope) == report.day
    left = [m.id for m in await bot.bank.store.list_memories(scope)]
    assert left == [important]


async def test_the_daily_upkeep_keeps_a_bounded_history_of_the_prune(bots: OpenBot) -> None:
    bot = await bots(make_persona())
    scope = bot.desk.event_scope(make_event())
    old = START - timedelta(days=30)
    await bot.bank.remember(scope, "Alice ate toast", importance=1, when=old)
    await bot.bank.remember(scope, "Alice ate cereal", importance=1, when=old)
    bot.clock.advance(hours=-4)  # 05:00
    [report] = await bot.lifecycle.prune_due()
    assert len(report.forgotten) == 2
    assert len(await bot.store.pruned_since(START - timedelta(days=1))) == 2
    bot.clock.advance(days=HISTORY.days - 1)
    await bot.lifecycle.prune_due()
    assert len(await bot.store.pruned_since(START - timedelta(days=1))) == 2  # still kept
    bot.clock.advance(days=2)
    await bot.lifecycle.prune_due()
    assert await bot.store.pruned_since(START - timedelta(days=1)) == []


async def test_the_daily_upkeep_lets_old_encoded_conversations_go(bots: OpenBot) -> None:
    """Encoded conversations are kept HISTORY days, and each scope's newest for good: what
    the bot keeps of them is its memories, diary and profiles."""
    bot = await bots(make_persona())
    tick = scheduler(bot).tick
    for text in ("I just moved to Lisbon.", "The flat is tiny."):
        await say(bot, text)
        bot.model.push(encoding((f"Alice said: {text}", "personal_daily", 2)))
        bot.clock.advance(minutes=6)
        await tick()  # closes it and encodes it
    first, second = reversed(await bot.store.conversations("pip", "discord:dm:u1"))
    assert first.encoded_at is not None and second.encoded_at is not None
    bot.clock.advance(days=HISTORY.days - 1)
    await bot.lifecycle.prune_due()
    assert await bot.store.count_conversations("pip", "discord:dm:u1") == 2  # still kept
    bot.clock.advance(days=2)
    await bot.lifecycle.prune_due()
    assert [c.id for c in await bot.store.conversations("pip", "discord:dm:u1")] == [second.id]
    scope = bot.desk.event_scope(make_event())
    assert len(await bot.bank.store.list_memories(scope)) == 2


async def test_the_daily_upkeep_lets_long_closed_intentions_go(bots: OpenBot) -> None:
    bot = await bots(make_persona())
    scope = str(bot.desk.event_scope(make_event()))
    due = START + timedelta(days=1)
    ids = [
        await bot.store.add_intention(
            NewIntention(scope, "u1", "follow_up", what, "ask", due, due, START)
        )
        for what in ("the exam", "the move")
    ]
    assert await bot.store.close_intention(scope, ids[0], "done", START)
    bot.clock.advance(days=HISTORY.days - 1, hours=-4)  # 05:00
    await bot.lifecycle.prune_due()
    assert len(await bot.store.intentions(scope, open_only=False)) == 2  # still kept
    bot.clock.advance(days=2)
    await bot.lifecycle.prune_due()
    assert [i.id for i in await bot.store.intentions(scope, open_only=False)] == [ids[1]]


async def test_the_days_prune_is_spread_over_rounds_and_listed_once(
    bots: OpenBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    bot = await bots(make_persona())
    old = START - timedelta(days=30)
    scopes = [bot.desk.event_scope(make_event(user_id=f"u{i}")) for i in range(5)]
    for scope in scopes:  # (kept: the scopes are due again tomorrow)
        await bot.bank.remember(scope, "Alice's wedding day", importance=3, when=old)
    store = bot.bank.store
    asked: list[str] = []
    last_prune = store.last_prune

    async def counted(scope: str) -> date | None:
        asked.append(scope)
        return await last_prune(scope)

    monkeypatch.setattr(store, "last_prune", counted)
    rounds = [await bot.lifecycle.prune_due(limit=2) for _ in range(4)]
    assert [len(r) for r in rounds] == [2, 2, 1, 0]
    assert sorted(r.scope for done in rounds for r in done) == sorted(scopes)
    asked.clear()
    assert await bot.lifecycle.prune_due(limit=2) == []
    assert asked == []  # done for the day: nothing read again until tomorrow
    bot.clock.advance(days=1)
    assert len(await bot.lifecycle.prune_due(limit=10)) == 5


async def test_the_pace_grows_with_the_community_so_the_days_prune_ends(bots: OpenBot) -> None:
    """Ten scopes a round, or more when the day's would take more than `prune_rounds`."""
    bot = await bots(make_persona())
    old = START - timedelta(days=30)
    for i in range(25):
        scope = bot.desk.event_scope(make_event(user_id=f"u{i}"))
        await bot.bank.remember(scope, "Alice's wedding day", importance=3, when=old)
    assert [len(await bot.lifecycle.prune_due()) for _ in range(4)] == [10, 10, 5, 0]
    bot.clock.advance(days=1)
    bot.lifecycle.prune_rounds = 2
    assert [len(await bot.lifecycle.prune_due()) for _ in range(3)] == [13, 12, 0]


async def test_the_prune_forgets_another_personas_words_a_database_of_before_kept(
    bots: OpenBot,
) -> None:
    """A persona keeps none of another persona's words (bot.groups.relay): encoding no longer writes
    them, and the daily prune forgets those an older version wrote, in a channel's memory and
    in a conversation with another persona (kept per server then), whatever their strength."""
    bot = await bots(make_persona("miao", name="Miao", scope="channel"))
    bank = bot.bank
    channel = bot.desk.event_scope(make_event(persona="miao", is_dm=False))
    heard = await bank.remember(channel, "Pip said Alice's cat is Mochi", speaker_id="persona:pip")
    bobs = await bank.remember(channel, "Bob ordered a cider", speaker_id="u2", importance=3)
    with_pip = Recollector.scope("miao", "discord:g1:user:persona:pip")
    mine = await bank.remember(with_pip, "I told Pip about the cider", importance=3)

    reports = {r.scope: r for r in await bot.lifecycle.prune_due()}

    assert reports[channel].forgotten == [(heard, HEARSAY)] and reports[channel].kept == 1
    assert reports[with_pip].forgotten == [(mine, HEARSAY)]
    assert [m.id for m in await bank.store.list_memories(channel)] == [bobs]
    assert await bank.count(with_pip) == 0


# --- compression -------------------------------------------------------------------------------


async def test_a_long_conversation_folds_into_a_running_summary(bots: OpenBot) -> None:
    settings = EngineConfig(context_tokens=4000, short_term_tokens=300, timezone="UTC")
    bot = await bots(make_persona(), settings=settings)
    summaries: list[Sequence[Message]] = []

    def model(messages: Sequence[Message]) -> str:
        if messages[0].content.startswith(SUMMARY_TASK):
            summaries.append(messages)
            return "Alice told the story of her trip to Kyoto, day by day."
        return "[NEUTRAL] Go on."

    bot.model.default = model
    for day in range(1, 9):
        await say(bot, f"On day {day} of my Kyoto trip I " + "walked and looked around " * 12)
        await bot.engine.drain()
        if summaries:
            break
    [request] = summaries
    assert "On day 1 " in request[1].content and "(none yet)" in request[1].content
    assert bot.router.purposes["compression"].calls == 1

    session = await bot.engine.session(make_event())
    users = [t for t in session.turns if t.role == "user"]
    assert len(users) == 3  # the last three rounds stay word for word
    assert session.summary == "Alice told the story of her trip to Kyoto, day by day."
    [folded] = await bot.store.conversations("pip", "discord:dm:u1")
    assert folded.reason == "compressed" and "On day 1 " in folded.turns[0]["text"]

    await say(bot, "and then I came home")
    system = chat_calls(bot)[-1].system
    assert f'{SUMMARY_HEADING}\n"Alice told the story' in system
    assert "On day 1 " not in chat_calls(bot)[-1].text

    # The folded part goes on to long-term memory like any closed conversation.
    bot.model.push(encoding(("Alice went to Kyoto.", "personal_daily", 2)))
    await bot.lifecycle.encode_pending()
    scope = bot.desk.event_scope(make_event())
    assert [m.text for m in await bot.bank.store.list_memories(scope)] == [
        "2026-03-02: Alice went to Kyoto."
    ]


async def test_a_failing_compression_keeps_every_turn(bots: OpenBot) -> None:
    settings = EngineConfig(context_tokens=4000, short_term_tokens=200, timezone="UTC")
    bot = await bots(make_persona(), settings=settings)
    for i in range(4):
        bot.model.push("[NEUTRAL] Go on.")
        if i == 3:
            bot.model.push(ModelError("summary tier down"))
        await say(bot, f"part {i}: " + "a long story about many things " * 10)
        await bot.engine.drain()
    session = await bot.engine.session(make_event())
    assert [t.text.split(":")[0] for t in session.turns if t.role == "user"] == [
        "part 0",
        "part 1",
        "part 2",
        "part 3",
    ]
    assert session.summary == ""


# --- the dungeon master ------------------------------------------------------------------------


async def test_the_dungeon_master_keeps_the_party_fixed_and_the_game_current(
    bots: OpenBot,
) -> None:
    dm = load_persona(SHIPPED / "dungeon_master.toml")
    bot = await bots(dm)
    party = "Sam: Brannoc Ironfoot, dwarf fighter; gruff, loyal; HP 12"

    def game(turn: int) -> str:
        return (
            f"Location: the old watchtower, floor {turn}\nQuest: reach the lantern room\n"
            f"Party: Brannoc {12 - turn // 3}/12\nInventory: Brannoc: axe, {turn} gold\n"
            "Threads: the stopped mill wheel\nScene: climbing the stairs"
        )

    bot.model.push(
        "[EXCITED] Welcome to the Crooked Lantern! Who are you?",
        calling(STATE_TOOL, {"characters": party, "game": game(1)}),
    )
    await say(bot, "I'm Sam, playing Brannoc, a gruff dwarf fighter.", "dungeon_master")
    await bot.engine.drain()
    for turn in range(2, 11):
        bot.model.push(f"[TENSE] Floor {turn}: the stairs creak. What do you do?")
        if turn == 5:
            # The model tries to rewrite the party: `once` slots are not offered again.
            bot.model.push(calling(STATE_TOOL, {"characters": "Sam: a wizard", "game": game(5)}))
        elif turn == 7:
            bot.model.push("no change")  # it declines: the game stays as it was
        else:
            bot.model.push(calling(STATE_TOOL, {"game": game(turn)}))
        await say(bot, f"I climb to floor {turn}.", "dungeon_master")
        await bot.engine.drain()
        state = (await bot.desk.info(make_event(persona="dungeon_master"))).state
        assert state["characters"] == party
        assert state["game"] == game(6 if turn == 7 else turn)

    state_calls = [c for c in bot.model.calls if any(t.name == STATE_TOOL for t in c.tools)]
    assert len(state_calls) == 10
    offered = [set(c.tools[0].parameters["properties"]) for c in state_calls]
    assert offered[0] == {"characters", "game"} and all(o == {"game"} for o in offered[1:])
    # Every chat prompt shows the state as it was after the turn before.
    last_chat = chat_calls(bot)[-1].system
    assert party in last_chat and game(9) in last_chat

    # The user can change the party themselves.
    event = make_event(persona="dungeon_master")
    answer = await conversation_commands.set_state(
        bot.services, event, "characters Sam: Brannoc, HP 14"
    )
    assert answer.endswith("Sam: Brannoc, HP 14")
    assert "HP 14" in await conversation_commands.show_state(bot.services, event)
    assert "slots are: characters, game" in await conversation_commands.set_state(
        bot.services, event, "hp 3"
    )


# --- commands ----------------------------------------------------------------------------------


async def test_diary_command_by_date(bots: OpenBot) -> None:
    bot = await bots(make_persona())
    event = make_event()
    assert await memory_commands.diary(bot.services, event) == "The diary is empty so far."
    await say(bot, "today I planted tomatoes")
    bot.model.push(encoding(diary="Alice planted tomatoes. I watched from the window."))
    await bot.desk.end(event)
    await bot.lifecycle.encode_pending()
    page = "Diary, Monday 2026-03-02:\nAlice planted tomatoes. I watched from the window."
    assert await memory_commands.diary(bot.services, event) == page
    bot.clock.advance(days=1)
    assert await memory_commands.diary(bot.services, event, "yesterday") == page
    assert await memory_commands.diary(bot.services, event, "2026-03-02") == page
    assert (
        await memory_commands.diary(bot.services, event, "今天")
        == "No diary page for Tuesday 2026-03-03."
    )
    assert "has not happened yet" in await memory_commands.diary(bot.services, event, "tomorrow")
    assert "Which day is 'soon'?" in await memory_commands.diary(bot.services, event, "soon")


async def test_a_day_asked_a_year_later_finds_last_years_page(bots: OpenBot) -> None:
    bot = await bots(make_persona())
    event = make_event()
    await say(bot, "today I planted tomatoes")
    bot.model.push(
        encoding(
            ("Alice planted six tomato seedlings.", "personal_daily", 2),
            diary="Alice planted tomatoes. I watched from the window.",
        )
    )
    await bot.desk.end(event)
    await bot.lifecycle.encode_pending()
    page = "Diary, Monday 2026-03-02:\nAlice planted tomatoes. I watched from the window."

    bot.clock.advance(days=375)  # Thursday 11 March 2027: this year's 2 March has no page
    assert await memory_commands.diary(bot.services, event, "March 2nd") == page
    assert await memory_commands.diary(bot.services, event, "3月2日") == page
    assert (
        await memory_commands.diary(bot.services, event, "2027-03-02")
        == "No diary page for Tuesday 2027-03-02."
    )
    # Nothing in any year: the most recent one is named.
    assert (
        await memory_commands.diary(bot.services, event, "March 3rd")
        == "No diary page for Wednesday 2027-03-03."
    )
    assert await memory_commands.diary(bot.services, event, "in March") == page
    assert await memory_commands.diary(bot.services, event, "last week") == (
        "No diary page for Monday 2027-03-01 to Sunday 2027-03-07."
    )
    assert "has not happened yet" in await memory_commands.diary(
        bot.services, event, "this weekend"
    )

    bot.model.default = quiet
    await say(bot, "what did we do on March 2nd?")
    system = chat_calls(bot)[-1].system
    assert DIARY_HEADING.format(day="Monday 2026-03-02") in system
    assert "I watched from the window" in system
    assert "six tomato seedlings" in system  # that day's memory came with its page


async def test_a_span_brings_the_pages_of_its_days_into_the_prompt(bots: OpenBot) -> None:
    bot = await bots(make_persona())
    event = make_event()
    for text in ("Monday: tomatoes.", "Tuesday: basil.", "Wednesday: rain."):
        await say(bot, f"note {text}")
        bot.model.push(encoding(diary=text))
        await bot.desk.end(event)
        await bot.lifecycle.encode_pending()
        bot.clock.advance(days=1)
    bot.clock.advance(days=3)  # Sunday 8 March 2026

    bot.model.default = quiet
    await say(bot, "what did we talk about a few days ago?")  # 3 to 6 March
    system = chat_calls(bot)[-1].system
    assert "Wednesday: rain." in system and "Tuesday: basil." in system
    assert "Monday: tomatoes." not in system
    await say(bot, "这周我们聊了什么？")
    system = chat_calls(bot)[-1].system
    days = [system.index(text) for text in ("Wednesday: rain.", "Tuesday: basil.", "Monday")]
    assert days == sorted(days)  # newest first
    assert await memory_commands.diary(bot.services, event, "earlier this week") == "\n\n".join(
        f"Diary, {day}:\n{text}"
        for day, text in (
            ("Wednesday 2026-03-04", "Wednesday: rain."),
            ("Tuesday 2026-03-03", "Tuesday: basil."),
            ("Monday 2026-03-02", "Monday: tomatoes."),
        )
    )


async def test_a_model_that_never_gives_json_still_leaves_a_memory(bots: OpenBot) -> None:
    bot = await bots(make_persona())
    await say(bot, "my favourite colour is green")
    bot.model.push("Sure! Here are the memories: ...", Completion("still not JSON"))
    await bot.desk.end(make_event())
    [encoded] = await bot.lifecycle.encode_pending()
    assert encoded.fallback
    scope = bot.desk.event_scope(make_event())
    [memory] = await bot.bank.store.list_memories(scope)
    assert memory.kind == "summary" and "my favourite colour is green" in memory.text


# --- several processes on one PostgreSQL database ------------------------------------------------

POSTGRES_ONLY = pytest.mark.parametrize("open_store", ["postgres"], indirect=True)


async def noting(messages: Sequence[Message]) -> str:
    """A summary model that lets other tasks run while it thinks: a memory and a diary line
    for each conversation."""
    await asyncio.sleep(0)
    if ENCODING_TASK in messages[0].content:
        return encoding(("Alice chatted.", "personal_daily", 2), diary="Alice came by.")
    return "[NEUTRAL] I see."


async def processes(bots: OpenBot, open_store: StoreOpener, tmp_path: Path) -> tuple[Bot, Bot]:
    """Two bots on one database, each with a folder of its own: two processes."""
    dsn = await open_store.dsn(tmp_path / "kizuna.sqlite3")

    async def shared(_path: Path) -> PgStore:
        return await PgStore.open(dsn)

    first = await bots(
        make_persona(), folder="first", open_store=shared, model=ScriptedChatModel(default=noting)
    )
    second = await bots(
        make_persona(), folder="second", open_store=shared, model=ScriptedChatModel(default=noting)
    )
    return first, second


async def archive_chat(store: Storage, user: int, n: int) -> int:
    """Alice's conversation number `n` with Pip, in user `user`'s DM, closed that morning."""
    started = START - timedelta(hours=3) + timedelta(minutes=10 * n + user)
    return await store.archive_conversation(
        ArchiveWrite(
            "pip",
            f"discord:dm:u{user}",
            started_at=started,
            ended_at=started + timedelta(minutes=1),
            reason="idle",
            turns=[
                {
                    "role": "user",
                    "speaker": "Alice",
                    "text": f"Note {n} from user {user}.",
                    "at": started.isoformat(),
                    "user_id": f"u{user}",
                    "emotion": "",
                }
            ],
            snapshot={},
        )
    )


@POSTGRES_ONLY
async def test_a_scope_another_process_holds_is_skipped_and_the_next_one_encoded(
    bots: OpenBot, open_store: StoreOpener, tmp_path: Path
) -> None:
    first, second = await processes(bots, open_store, tmp_path)
    held = [await archive_chat(first.store, 1, n) for n in range(3)]  # the oldest three
    other = await archive_chat(first.store, 2, 5)
    async with first.store.scope_lock("pip/discord:dm:u1") as locked:
        assert locked  # the first process is encoding (or pruning) u1's scope
        done = await second.lifecycle.encode_pending(limit=2)
        assert [e.conversation_id for e in done] == [other]  # not waited for: skipped
    done = await second.lifecycle.encode_pending()  # released: the next round has it
    assert [e.conversation_id for e in done] == held
    assert await first.lifecycle.encode_pending() == []


@POSTGRES_ONLY
async def test_two_processes_encoding_at_once_encode_each_conversation_once(
    bots: OpenBot, open_store: StoreOpener, tmp_path: Path
) -> None:
    first, second = await processes(bots, open_store, tmp_path)
    users, each = range(8), 3
    ids = [await archive_chat(first.store, user, n) for n in range(each) for user in users]
    rounds = 0
    while await first.store.unencoded(["pip"], first.clock.now()):
        rounds += 1
        assert rounds <= len(ids)
        await asyncio.gather(
            first.lifecycle.encode_pending(limit=4), second.lifecycle.encode_pending(limit=4)
        )
    asked = [c for bot in (first, second) for c in bot.model.calls if is_encoding(c)]
    assert len(asked) == len(ids)  # each conversation summarised once, by one process
    for conversation_id in ids:
        conversation = await first.store.conversation(conversation_id)
        assert conversation is not None and conversation.encoded_at is not None
    for user in users:  # each diary page counts each conversation once, none lost
        page = await first.store.diary_entry(f"pip/discord:dm:u{user}", START.date())
        assert page is not None and page.conversations == each


@POSTGRES_ONLY
async def test_a_conversation_encoded_elsewhere_since_the_list_was_read_is_not_encoded_again(
    bots: OpenBot, open_store: StoreOpener, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = await processes(bots, open_store, tmp_path)
    ids = [await archive_chat(first.store, 1, n) for n in range(2)]
    read = second.store.unencoded

    async def then_the_first_encodes(*args: Any, **kwargs: Any) -> list[ArchivedConversation]:
        waiting = await read(*args, **kwargs)
        await first.lifecycle.encode_pending()  # the other process gets there first
        return waiting

    monkeypatch.setattr(second.store, "unencoded", then_the_first_encodes)
    assert await second.lifecycle.encode_pending() == []
    assert not [c for c in second.model.calls if is_encoding(c)]  # the model not asked
    assert len([c for c in first.model.calls if is_encoding(c)]) == len(ids)


@POSTGRES_ONLY
async def test_the_leader_alone_prunes_and_another_takes_over_when_it_dies(
    bots: OpenBot, open_store: StoreOpener, tmp_path: Path
) -> None:
    first, second = await processes(bots, open_store, tmp_path)
    scope = first.desk.event_scope(make_event())
    old = START - timedelta(days=30)
    await first.bank.remember(scope, "Alice's wedding day", importance=3, when=old)
    today = START.date()

    async def next_day() -> None:
        nonlocal today
        for bot in (first, second):
            bot.clock.advance(days=1)
        today += timedelta(days=1)

    await scheduler(first).tick()  # 09:00, past the prune hour: the first leads, and prunes
    await scheduler(second).tick()
    assert await first.store.last_prune(scope) == today
    await next_day()
    await scheduler(second).tick()  # not the leader: no prune
    assert await first.store.last_prune(scope) == today - timedelta(days=1)
    assert await kill_lock_holders(await open_store.dsn(tmp_path / "kizuna.sqlite3")) == 1
    await scheduler(second).tick()  # the leader died: the second takes over
    assert await first.store.last_prune(scope) == today
    await next_day()
    await scheduler(first).tick()  # back on a new connection, but no longer the leader
    assert await first.store.last_prune(scope) == today - timedelta(days=1)
    await scheduler(second).tick()
    assert await first.store.last_prune(scope) == today
