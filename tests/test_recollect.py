"""Memories in the turn: subconscious recall into the prompt, reinforcement after a reply, the
recall_memory tool, deep recall for questions about the past, flashbacks, and the walls
between users, channels and DMs."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from bot.chat_model import Completion, ModelError, ToolCall
from bot.commands import memory as memory_commands
from bot.config import MemoryConfig
from bot.conversation.recollect import (
    DIARY_PAGE_TOKENS,
    Recollection,
    about_the_past,
    memory_section,
    under_names,
)
from bot.llm.tokens import estimate_tokens
from bot.prompts import FLASHBACK_HEADING, MEMORY_HEADING, NOTHING_FOUND, describe_age
from bot.turn.compose import RESHOWN
from memory.clock import FakeClock
from memory.encoding.diary import MAX_PAGES
from memory.recall.ranking import Recalled
from memory.records import DiaryEntry, Member, MemoryNotice
from tests.fakes.factories import Bot, make_event, make_persona, open_bot, write_page


async def remember(bot: Bot, text: str, **event: object) -> int:
    scope = bot.desk.event_scope(make_event(**event))  # type: ignore[arg-type]
    return await bot.bank.remember(scope, text, speaker="Alice")


def system_of(bot: Bot, call: int = -1) -> str:
    return bot.model.calls[call].system


async def test_recalled_memories_enter_the_prompt_and_are_reinforced(tmp_path: Path) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3")
    mid = await remember(bot, "my cat Mochi is afraid of the vacuum cleaner")
    bot.clock.advance(days=3)
    reply = await bot.engine.handle(make_event("Mochi hid under the bed again"))
    assert not reply.failed
    system = system_of(bot)
    assert MEMORY_HEADING in system
    assert '- [3 days ago, strength 0.43] "Alice": "my cat Mochi is afraid' in system
    [row] = await bot.bank.store.get_memories(bot.desk.event_scope(make_event()), [mid])
    assert row.recall_count == 1 and row.last_recalled_at == bot.clock.now()
    await bot.close()


async def test_the_days_a_message_names_bring_their_memories_newest_first(
    tmp_path: Path,
) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3")  # Thursday 1 January 2026
    scope = bot.desk.event_scope(make_event())
    theirs = bot.desk.event_scope(make_event(user_id="u2", user_name="Bob"))

    async def on(day: int, text: str, where: str = scope) -> int:
        when = datetime(2025, 12, day, 15, 0, tzinfo=UTC)
        return await bot.bank.remember(where, text, speaker="Alice", when=when)

    baked = await on(27, "we baked gingerbread together")
    fireworks = await on(28, "we watched the fireworks rehearsal")
    await on(24, "a quiet evening with tea")
    await on(28, "Bob's surprise plan", where=theirs)

    await bot.engine.handle(make_event("what did we do last weekend?"))
    system = system_of(bot)
    assert MEMORY_HEADING in system
    assert system.index("fireworks rehearsal") < system.index("gingerbread")  # newest first
    assert "quiet evening" not in system and "surprise plan" not in system
    shown = await bot.bank.store.get_memories(scope, [baked, fireworks])
    assert [m.recall_count for m in shown] == [1, 1]  # shown, so recalled

    await bot.engine.handle(make_event("上周三我们做了什么？"))  # 24 December
    note = bot.model.calls[-1].note  # (the memories of the turn before stay before it)
    assert "quiet evening" in note and "gingerbread" not in note
    await bot.close()


async def test_nothing_relevant_means_no_memory_text(tmp_path: Path) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3")
    await remember(bot, "my cat Mochi is afraid of the vacuum cleaner")
    await bot.engine.handle(make_event("what a lovely sunny afternoon"))
    assert MEMORY_HEADING not in system_of(bot)
    await bot.close()


async def test_a_failed_reply_reinforces_nothing(tmp_path: Path) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3")
    mid = await remember(bot, "my cat Mochi is afraid of the vacuum cleaner")
    bot.model.push(ModelError("down"))
    assert (await bot.engine.handle(make_event("Mochi again"))).failed
    [row] = await bot.bank.store.get_memories(bot.desk.event_scope(make_event()), [mid])
    assert row.recall_count == 0
    await bot.close()


async def test_memories_stay_behind_their_walls(tmp_path: Path) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3")
    await remember(bot, "my secret password hint is the blue giraffe")  # Alice, in a DM
    for event in (
        make_event("blue giraffe password", user_id="u2", user_name="Bob"),  # another user
        make_event("blue giraffe password", is_dm=False),  # Alice herself, in a server channel
        make_event("blue giraffe password", platform="telegram"),  # Alice on another platform
    ):
        await bot.engine.handle(event)
        assert "giraffe" not in system_of(bot).split("It is now")[1]
    await bot.engine.handle(make_event("blue giraffe password"))  # back in her DM
    assert "blue giraffe" in system_of(bot)
    await bot.close()


async def test_a_broken_memory_costs_the_turn_nothing(tmp_path: Path) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3")
    await remember(bot, "my cat Mochi")

    async def broken(*args: object, **kwargs: object) -> list[Recalled]:
        raise RuntimeError("disk on fire")

    assert bot.engine.memory is not None
    bot.engine.memory.bank.recall = broken  # type: ignore[method-assign]
    reply = await bot.engine.handle(make_event("Mochi?"))
    assert not reply.failed and reply.text == "ok"
    await bot.close()


async def test_the_model_can_call_recall_memory(tmp_path: Path) -> None:
    persona = make_persona(tools=["recall_memory"])
    bot = await open_bot(tmp_path / "k.sqlite3", [persona])
    mid = await remember(bot, "Alice's sister Jun lives in Osaka")
    call = ToolCall("call_1", "recall_memory", json.dumps({"query": "sister Osaka"}))
    bot.model.push(Completion("", tool_calls=(call,)), "[HAPPY] Say hi to Jun in Osaka!")
    reply = await bot.engine.handle(make_event("guess who I'm visiting next week"))
    assert reply.text == "Say hi to Jun in Osaka!"
    first, second = bot.model.calls[-2:]
    assert [t.name for t in first.tools] == ["recall_memory"]
    tool_message = second.messages[-1]
    assert tool_message.role == "tool" and tool_message.tool_call_id == "call_1"
    assert "Jun lives in Osaka" in tool_message.content
    assert second.messages[-2].tool_calls == (call,)
    [row] = await bot.bank.store.get_memories(bot.desk.event_scope(make_event()), [mid])
    assert row.recall_count == 1  # shown through the tool: reinforced too
    await bot.close()


async def test_tool_rounds_are_bounded_and_bad_calls_answered(tmp_path: Path) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3", [make_persona(tools=["recall_memory"])])
    looping = Completion("", tool_calls=(ToolCall("c", "recall_memory", "{not json"),))
    bot.model.push(looping, looping, looping, "[NEUTRAL] fine, I give up")
    reply = await bot.engine.handle(make_event("hmm"))
    assert reply.text == "fine, I give up"
    calls = bot.model.calls
    assert [bool(c.tools) for c in calls] == [True, True, True, False]
    assert "needs" in calls[1].messages[-1].content  # the malformed call was told why
    await bot.close()


async def test_tool_calls_in_one_round_are_capped(tmp_path: Path) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3", [make_persona(tools=["recall_memory"])])
    calls = tuple(ToolCall(f"c{i}", "recall_memory", '{"query": "x"}') for i in range(5))
    bot.model.push(Completion("", tool_calls=calls), "[NEUTRAL] done")
    await bot.engine.handle(make_event("hmm"))
    answers = [m for m in bot.model.calls[-1].messages if m.role == "tool"]
    assert [m.tool_call_id for m in answers] == [f"c{i}" for i in range(5)]  # each answered
    assert [m.content.startswith("Not run") for m in answers] == [False] * 3 + [True] * 2
    await bot.close()


async def test_no_tool_unless_the_persona_has_it(tmp_path: Path) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3")
    await bot.engine.handle(make_event("hello"))
    assert bot.model.calls[-1].tools == ()
    await bot.close()


async def test_recall_memory_with_nothing_found(tmp_path: Path) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3", [make_persona(tools=["recall_memory"])])
    call = ToolCall("c", "recall_memory", json.dumps({"query": "the moon landing"}))
    bot.model.push(Completion("", tool_calls=(call,)), "[NEUTRAL] I don't recall.")
    await bot.engine.handle(make_event("what about the moon landing"))
    assert bot.model.calls[-1].messages[-1].content == NOTHING_FOUND
    await bot.close()


async def test_deep_recall_splits_a_question_about_the_past(tmp_path: Path) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3")
    ski = await remember(bot, "we went skiing in Hokkaido in February")
    cake = await remember(bot, "Alice baked a lemon cake for her mother")
    await remember(bot, "the weather was grey all week")
    bot.model.push('{"queries": ["skiing trip", "lemon cake"]}', "[HAPPY] Of course!")
    # Nothing comes to mind by itself: worth one intent call to try harder.
    await bot.engine.handle(make_event("do you remember that holiday and the dessert?"))
    intent, chat = bot.model.calls[-2:]
    assert intent.json_mode and "search queries" in intent.messages[0].content
    assert bot.router.purposes["intent"].calls == 1
    system = chat.system
    assert "skiing in Hokkaido" in system and "lemon cake" in system
    assert "grey all week" not in system
    scope = bot.desk.event_scope(make_event())
    rows = await bot.bank.store.get_memories(scope, [ski, cake])
    assert [r.recall_count for r in rows] == [1, 1]
    await bot.close()


async def test_a_question_that_brings_something_to_mind_costs_no_intent_call(
    tmp_path: Path,
) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3")
    await remember(bot, "Alice baked a lemon cake for her mother")
    await bot.engine.handle(make_event("do you remember the lemon cake I baked?"))
    assert len(bot.model.calls) == 1 and "lemon cake for her mother" in system_of(bot)
    await bot.close()


async def test_deep_recall_follows_links_and_survives_a_bad_intent(tmp_path: Path) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3")
    scope = bot.desk.event_scope(make_event())
    linked = await bot.bank.remember(scope, "the hotel had a hot spring on the roof")
    await bot.bank.remember(scope, "our Hokkaido ski trip", related=[linked])
    bot.model.push('{"queries": ["Hokkaido ski trip"]}', "[HAPPY] yes")
    await bot.engine.handle(make_event("do you remember that holiday?"))
    assert "hot spring" in system_of(bot)
    bot.model.push("not json at all", "[HAPPY] yes")  # nothing more to go on: no memories
    reply = await bot.engine.handle(make_event("do you remember that holiday?"))
    assert reply.text == "yes" and MEMORY_HEADING not in bot.model.calls[-1].note
    await bot.close()


async def test_flashback_at_the_personas_rate(tmp_path: Path) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3", [make_persona(flashback_rate=1.0)])
    await remember(bot, "the smell of rain on the old wooden porch")
    await remember(bot, "Alice's favourite tea is genmaicha")
    await bot.engine.handle(make_event("I'm making tea"))
    system = system_of(bot)
    assert FLASHBACK_HEADING in system
    assert "wooden porch" in system.split(FLASHBACK_HEADING)[1]
    await bot.close()


async def test_memory_budget_is_kept(tmp_path: Path) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3", memory=MemoryConfig(memory_tokens=170))
    for i in range(5):
        await remember(bot, f"garden note {i}: " + "tomatoes and basil grow well together " * 6)
    await bot.engine.handle(make_event("how is the garden, tomatoes and basil?"))
    assert system_of(bot).count("garden note") == 1
    await bot.close()


def test_memory_section_and_ages() -> None:
    now = datetime(2026, 5, 1, tzinfo=UTC)

    def memory(i: int, days: float) -> Recalled:
        when = now - timedelta(days=days)
        return Recalled(i, f"thing {i}", when, None, 1.0, 1.0, 0.5, 2)

    recollection = Recollection([memory(1, 3), memory(2, 40)], [memory(1, 3), memory(3, 400)])
    text, ids = memory_section(recollection, now, 500)
    assert ids == [1, 2, 3]
    assert '- [3 days ago, strength 0.50] "thing 1"' in text
    assert '- [5 weeks ago, strength 0.50] "thing 2"' in text
    assert text.count("thing 1") == 1  # a memory shown once, not again as a flashback
    assert memory_section(Recollection(), now, 500) == ("", [])
    assert describe_age(now - timedelta(seconds=30), now) == "just now"
    assert describe_age(now - timedelta(hours=5), now) == "5 hours ago"
    assert describe_age(now - timedelta(hours=30), now) == "yesterday"
    assert describe_age(now - timedelta(days=800), now) == "2 years ago"


def test_diary_pages_share_half_the_budget_in_order() -> None:
    now = datetime(2026, 5, 1, tzinfo=UTC)

    def page(day: int, words: int) -> DiaryEntry:
        text = " ".join(f"word{day}" for _ in range(words))
        return DiaryEntry("s", date(2026, 4, day), text, 1, now)

    def pages_shown(text: str) -> list[str]:
        return re.findall(r"Your diary for \w+ (\S+):", text)

    budget = 1500
    # A short page leaves its room to the next; each stays within the half.
    short_then_long = Recollection(diary=[page(30, 10), page(29, 2000)])
    text, _ = memory_section(short_then_long, now, budget)
    assert pages_shown(text) == ["2026-04-30", "2026-04-29"]
    assert estimate_tokens(text) <= budget // 2
    # The long page took what the short one left: more than an even split's half of the room.
    assert estimate_tokens(text) > budget // 4 + 100
    # Many long pages: the newest first, as many as fit with at least DIARY_PAGE_TOKENS each.
    many = Recollection(diary=[page(day, 2000) for day in range(30, 20, -1)])
    text, _ = memory_section(many, now, budget)
    shown = pages_shown(text)
    assert shown == [f"2026-04-{day}" for day in range(30, 30 - len(shown), -1)]
    assert 2 <= len(shown) < 10  # not ten slivers
    assert all(estimate_tokens(part) >= DIARY_PAGE_TOKENS * 3 // 4 for part in text.split("\n\n"))
    assert estimate_tokens(text) <= budget // 2
    # Memories still get the rest.
    memory = Recalled(1, "thing 1", now, None, 1.0, 1.0, 0.5, 2)
    text, ids = memory_section(Recollection([memory], diary=many.diary), now, budget)
    assert ids == [1] and '"thing 1"' in text


def test_questions_about_the_past() -> None:
    assert about_the_past("Do you remember my sister's name?")
    assert about_the_past("what did I say about the trip last week?")
    assert about_the_past("你还记得我上次说的那家店吗？")
    assert about_the_past("what did we do last weekend?")
    assert about_the_past("what was that film the other day?")
    assert about_the_past("前几天我们聊了什么？")
    assert about_the_past("前阵子你推荐的书叫什么？")
    assert not about_the_past("I remember it now.")  # not a question
    assert not about_the_past("What are you doing today?")
    assert not about_the_past("what did you eat for lunch?")  # the past, but not ours


async def test_chinese_memories_come_to_mind(tmp_path: Path) -> None:
    persona = make_persona("miao", name="喵", language="zh")
    bot = await open_bot(tmp_path / "k.sqlite3", [persona])
    event = make_event("年糕今天又躲到床底下了", persona="miao", user_name="小明")
    scope = bot.desk.event_scope(event)
    await bot.bank.remember(scope, "我的猫叫年糕，它很怕吸尘器", speaker="小明")
    await bot.engine.handle(event)
    assert '"小明": "我的猫叫年糕' in system_of(bot)
    await bot.close()


async def test_private_memories_reach_groups_only_by_the_users_choice(tmp_path: Path) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3")
    dm = make_event("hi")
    await bot.bank.remember(bot.desk.event_scope(dm), "Alice is secretly learning the cello")
    group = make_event("any news about the cello?", is_dm=False)

    await bot.engine.handle(group)
    assert "secretly learning the cello" not in system_of(bot)

    assert "may bring up" in await memory_commands.dm_memories(bot.services, group, "on")
    await bot.engine.handle(group)
    assert "secretly learning the cello" in system_of(bot)
    # Only Alice's own conversations: Bo asking in the same group never gets it.
    await bot.engine.handle(make_event("cello?", is_dm=False, user_id="u2", user_name="Bo"))
    assert "secretly learning the cello" not in system_of(bot)

    assert "stays private" in await memory_commands.dm_memories(bot.services, group, "off")
    await bot.engine.handle(group)
    assert "secretly learning the cello" not in system_of(bot)
    await bot.close()


# --- recall by the days a message names: what memory/dates.py adds ----------------------------


async def test_days_still_to_come_bring_nothing_by_date(tmp_path: Path) -> None:
    """A message about next Tuesday (or next week, or 下周三) is not about last Tuesday: no
    page and no memory by date, while "last Tuesday" brings both."""
    clock = FakeClock(datetime(2026, 11, 26, 12, 0, tzinfo=UTC))  # a Thursday
    bot = await open_bot(tmp_path / "k.sqlite3", clock=clock)
    assert bot.engine.memory is not None
    scope = bot.desk.event_scope(make_event())
    for day in (18, 24, 25):  # Wednesday 18, Tuesday 24, Wednesday 25 November
        await write_page(bot.store, scope, date(2026, 11, day), f"Page of the {day}th.", [])
        when = datetime(2026, 11, day, 15, 0, tzinfo=UTC)
        await bot.bank.remember(scope, f"gingerbread on the {day}th", speaker="Alice", when=when)

    async def by_date(text: str) -> tuple[list[str], list[str]]:
        assert bot.engine.memory is not None
        found = await bot.engine.memory.gather(scope, text, clock.now(), flashback_rate=0.0, tz=UTC)
        return [e.text for e in found.diary], [m.text for m in found.dated]

    assert await by_date("my exam is next Tuesday") == ([], [])
    assert await by_date("what shall we do next week?") == ([], [])
    assert await by_date("下周三考试") == ([], [])
    assert await by_date("in three days I fly home") == ([], [])
    assert await by_date("what did we do last Tuesday?") == (
        ["Page of the 24th."],
        ["gingerbread on the 24th"],
    )
    # "this week" reads its days up to today, none after.
    assert await by_date("this week") == (
        ["Page of the 25th.", "Page of the 24th."],
        ["gingerbread on the 25th", "gingerbread on the 24th"],
    )
    await bot.close()


async def test_a_long_span_stays_within_the_budget_newest_first(tmp_path: Path) -> None:
    """ "since 2020" names six years: it brings the newest MAX_PAGES pages and at most recall_k
    memories of them, newest first, and the memory block keeps its budget."""
    clock = FakeClock(datetime(2026, 1, 1, 12, 0, tzinfo=UTC))
    bot = await open_bot(tmp_path / "k.sqlite3", clock=clock)
    assert bot.engine.memory is not None
    scope = bot.desk.event_scope(make_event())
    days = [date(2020, 1, 5) + timedelta(days=11 * n) for n in range(199)]
    assert days[-1] < clock.now().date()
    for n, day in enumerate(days):
        await write_page(bot.store, scope, day, f"Page {n}: " + "we talked a while. " * 30, [])
        when = datetime.combine(day, datetime.min.time(), UTC) + timedelta(hours=15)
        await bot.bank.remember(scope, f"plan number {n}", speaker="Alice", when=when)
    for text in ("what have we done since 2020?", "2020年以来我们做了什么？", "recently"):
        found = await bot.engine.memory.gather(scope, text, clock.now(), flashback_rate=0.0, tz=UTC)
        if text == "recently":  # the last two weeks: the one page and memory of 27 December
            assert [e.day for e in found.diary] == [days[-1]]
            continue
        assert [e.day for e in found.diary] == days[::-1][:MAX_PAGES]
        k = bot.engine.memory.settings.recall_k
        assert [m.text for m in found.dated] == [
            f"plan number {n}" for n in range(198, 198 - k, -1)
        ]
        budget = bot.engine.memory.settings.memory_tokens
        section, _ = memory_section(found, clock.now(), budget)
        assert estimate_tokens(section) <= budget
    await bot.close()


async def test_seasons_years_and_since_bring_their_pages(tmp_path: Path) -> None:
    clock = FakeClock(datetime(2026, 11, 29, 12, 0, tzinfo=UTC))  # a Sunday
    bot = await open_bot(tmp_path / "k.sqlite3", clock=clock)
    assert bot.engine.memory is not None
    scope = bot.desk.event_scope(make_event())
    pages = {
        date(2025, 7, 14): "Swimming, summer 2025.",
        date(2025, 12, 20): "Snow, last winter.",
        date(2026, 2, 10): "Skating, last winter.",
        date(2026, 7, 2): "Picnic, this summer.",
        date(2026, 11, 20): "Tea, lately.",
    }
    for day, text in pages.items():
        await write_page(bot.store, scope, day, text, [])

    async def texts(message: str) -> list[str]:
        assert bot.engine.memory is not None
        found = await bot.engine.memory.gather(
            scope, message, clock.now(), flashback_rate=0.0, tz=UTC
        )
        return [e.text for e in found.diary]

    assert await texts("what did we do last summer?") == ["Picnic, this summer."]
    assert await texts("去年夏天我们做了什么？") == ["Swimming, summer 2025."]
    assert await texts("in the winter") == ["Skating, last winter.", "Snow, last winter."]
    assert await texts("冬天的时候") == ["Skating, last winter.", "Snow, last winter."]
    assert await texts("what happened last year?") == [
        "Snow, last winter.",
        "Swimming, summer 2025.",
    ]
    assert await texts("最近怎么样") == ["Tea, lately."]
    assert await texts("since the summer") == ["Tea, lately.", "Picnic, this summer."]
    assert await texts("自从七月") == ["Tea, lately.", "Picnic, this summer."]
    # A season with no page this year is looked for in the years before (said without one).
    assert await texts("in the spring") == []
    await bot.close()


def test_memories_are_shown_under_their_speakers_names_now() -> None:
    """By the stable id, never the name at the time: Bob's line said while he went by
    "Alice" is Bob's, "Alice" one of his names; someone no profile knows goes by the name of
    their newest memory at hand; a memory of no one's words stays as it is."""
    now = datetime(2026, 1, 1, tzinfo=UTC)

    def said(i: int, speaker: str | None, speaker_id: str | None, days: int = 0) -> Recalled:
        when = now - timedelta(days=days)
        return Recalled(i, f"thing {i}", when, speaker, 1.0, 1.0, 0.5, 2, speaker_id=speaker_id)

    memories = [
        said(1, "Alice", "43"),
        said(2, "Cleo", "44", days=9),
        said(3, "Cleopatra", "44", days=1),
        said(4, None, None),
        said(5, "Alice", "42"),
    ]
    members = [Member("43", "Bob"), Member("42", "Alice")]
    shown, known = under_names(memories, members)
    assert [m.speaker for m in shown] == ["Bob", "Cleopatra", "Cleopatra", None, "Alice"]
    assert [m.id for m in shown] == [1, 2, 3, 4, 5]
    assert {m.user_id: m.aliases for m in known} == {
        "43": ("Alice",),
        "42": (),
        "44": ("Cleo",),
    }


async def test_recall_memory_shows_the_speakers_profile_name(tmp_path: Path) -> None:
    persona = make_persona(tools=["recall_memory"])
    bot = await open_bot(tmp_path / "k.sqlite3", [persona])
    scope = bot.desk.event_scope(make_event())
    await bot.bank.remember(scope, "my sister Jun lives in Osaka", speaker="Al", speaker_id="u1")
    await write_page(bot.store, scope, date(2025, 12, 30), "a quiet day", [("u1", "Alice", "")])
    call = ToolCall("call_1", "recall_memory", json.dumps({"query": "sister Osaka"}))
    bot.model.push(Completion("", tool_calls=(call,)), "[HAPPY] Say hi to Jun!")
    await bot.engine.handle(make_event("guess who I'm visiting next week", user_name="Alice"))
    tool_message = bot.model.calls[-1].messages[-1]
    assert '"Alice": "my sister Jun lives in Osaka"' in tool_message.content
    await bot.close()


async def test_what_came_to_mind_stays_before_its_turn_and_is_not_shown_twice(
    tmp_path: Path,
) -> None:
    """A turn's memories stay in the prompts after it, before it, as they were shown (a
    prompt cache reuses them); of the memories coming to mind again, only the best few are
    shown again, and a memory forgotten leaves the notes."""
    bot = await open_bot(tmp_path / "k.sqlite3")
    facts = ["is afraid of the vacuum", "sleeps on the piano", "hates rain", "eats olives"]
    ids = [await remember(bot, f"my cat Mochi {fact}") for fact in facts]
    ids.append(await remember(bot, "Mochi the cat was a stray kitten"))
    bot.clock.advance(days=3)
    await bot.engine.handle(make_event("my cat Mochi hid under the bed again"))
    bot.clock.advance(minutes=1)
    await bot.engine.handle(make_event("my cat Mochi is still under the bed"))
    first, second = bot.model.calls
    # Everything of the first prompt up to its note's time is where the second begins.
    cut = first.note.index("It is now")
    assert second.messages[: len(first.messages) - 2] == first.messages[:-2]
    assert second.messages[len(first.messages) - 2].content == first.note[:cut].strip()
    before = [line.split("] ", 1)[1] for line in first.note.splitlines() if line.startswith("- ")]
    again = [line.split("] ", 1)[1] for line in second.note.splitlines() if line.startswith("- ")]
    # All five came to mind again: the best RESHOWN shown again, the others not.
    assert len(before) == 5 and again == [line for line in before if line in again]
    assert len(again) == RESHOWN
    assert [second.system.count(line) for line in before] == [
        2 if line in again else 1 for line in before
    ]
    assert await memory_commands.forget(bot.services, make_event(), ids[0]) is not None
    await bot.engine.handle(make_event("what should I do?"))
    assert "vacuum" not in bot.model.calls[-1].text
    await bot.close()


async def test_another_processes_change_of_a_scope_clears_its_notes(tmp_path: Path) -> None:
    """What came to mind stays in a conversation's notes only while none of its scope's
    memories may be gone: another process's forget (a /forget there) clears them here too,
    what it adds does not."""
    bot = await open_bot(tmp_path / "k.sqlite3")
    await remember(bot, "my cat Mochi is afraid of the vacuum")
    bot.clock.advance(days=3)
    await bot.engine.handle(make_event("my cat Mochi hid under the bed again"))
    [session] = bot.engine.sessions.loaded("pip")
    assert any("vacuum" in t.note for t in session.turns)
    bot.bank.heard(MemoryNotice(bot.desk.event_scope(make_event(user_id="u9")), "changed"))
    assert any("vacuum" in t.note for t in session.turns)  # another scope's change: kept
    scope = bot.desk.event_scope(make_event())
    bot.bank.heard(MemoryNotice(scope, "added", (10_000,)))
    assert any("vacuum" in t.note for t in session.turns)  # nothing gone
    bot.bank.heard(MemoryNotice(scope, "deleted", (10_000,)))
    assert [t.note for t in session.turns] == ["" for _ in session.turns]
    await bot.close()
