"""Host tools (bot/tools): schemas from signatures, loading by module path and entry
point, the gates every call passes (eco mode, admins, rate, arguments, timeout, size), the
log line, and the tools Kizuna ships (dice, reminder)."""

from __future__ import annotations

import logging
import random
import sys
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from adapters.command.cli import _validate
from bot.persona.file import Persona, load_persona
from bot.persona.toolspec import CustomTool
from bot.prompts.tools import (
    TOOL_ADMINS_ONLY,
    TOOL_FAILED,
    TOOL_FOR_ONE,
    TOOL_NOT_IN_ECO,
    TOOL_TIMED_OUT,
)
from bot.tomlfile import TomlError
from bot.tools import PythonTool, Sender, Toolbox, ToolContext, ToolLoadError, load_tool
from bot.tools.dice import Dice, dice, parse, roll
from bot.tools.reminder import StoredReminders, reminder
from memory.clock import FakeClock
from tests.fakes.factories import make_event, make_persona, open_bot
from tests.fakes.models import ScriptedChatModel, calling

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = {"dice": "bot.tools.dice:dice", "reminder": "bot.tools.reminder:reminder"}
ALICE = Sender.of("u1")


def persona_with(*tools: CustomTool, names: tuple[str, ...] = ()) -> Persona:
    return replace(make_persona(), custom_tools=list(tools), tools=["recall_memory", *names])


def box(
    persona: Persona,
    clock: FakeClock | None = None,
    *,
    eco: bool = False,
    installed: dict[str, str] = SHIPPED,
) -> Toolbox:
    return Toolbox(
        {persona.key: persona},
        clock=clock or FakeClock(),
        tz=UTC,
        rng=random.Random(7),
        environ={},
        eco_mode=eco,
        installed=installed,
    )


def context(clock: FakeClock | None = None, **changes: object) -> ToolContext:
    base = ToolContext(
        scope="pip/discord:u1",
        persona="pip",
        language="en",
        user_id="u1",
        admin=False,
        clock=clock or FakeClock(),
        tz=UTC,
        rng=random.Random(1),
    )
    return replace(base, **changes)  # type: ignore[arg-type]


# --- a tool's schema and arguments -----------------------------------------------------------


def test_the_schema_comes_from_the_signature_and_the_description_from_the_docstring() -> None:
    tool = PythonTool.of("dice", dice).tool
    assert tool.name == "dice"
    assert tool.description.startswith("Roll dice fairly")
    schema = tool.parameters
    assert set(schema["properties"]) == {"notation", "mode"}  # not the context
    assert schema["required"] == ["notation"]
    assert schema["properties"]["mode"]["enum"] == ["normal", "advantage", "disadvantage"]
    assert "2d6+3" in schema["properties"]["notation"]["description"]


def test_arguments_are_checked_by_the_same_model() -> None:
    tool = PythonTool.of("dice", dice)
    assert tool.validate('{"notation": "2d6", "mode": "advantage"}') == {
        "notation": "2d6",
        "mode": "advantage",
    }
    for wrong in ('{"notation": 3}', '{"mode": "lucky", "notation": "d6"}', "{", '{"x": 1}'):
        answer = tool.validate(wrong)
        assert isinstance(answer, str)
        assert answer.startswith("The call was not made")


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("tests.fakes.tools:not_async", "not an async function"),
        ("tests.fakes.tools:untyped", "parameter 'value' needs a type"),
        ("tests.fakes.tools:missing", "has no 'missing'"),
        ("tests.fakes.nowhere:tool", "cannot import"),
        ("bot.tools.python:load_tool", "not an async function"),
    ],
)
def test_a_tool_that_cannot_be_used_says_why(target: str, why: str) -> None:
    with pytest.raises(ToolLoadError, match=why):
        load_tool("t", target)


def test_a_persona_file_naming_a_broken_tool_fails_at_start_on_its_line(tmp_path: Path) -> None:
    path = tmp_path / "pip.toml"
    path.write_text(
        '[identity]\nname = "Pip"\npersonality = "x"\n\n'
        '[[custom_tools]]\nname = "plain"\nmodule = "tests.fakes.tools:not_async"\n'
    )
    persona = load_persona(path)
    with pytest.raises(TomlError) as info:
        box(persona)
    assert info.value.key == "custom_tools[0].module"
    assert info.value.line == 7
    assert str(info.value).startswith(f"{path}:7: custom_tools[0].module: ")


def test_a_tool_module_beside_the_persona_file_needs_no_pythonpath(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))  # what the load adds goes with the test
    (tmp_path / "kz_beside_tools.py").write_text(
        "from bot.tools import ToolContext\n\n\n"
        "async def shout(ctx: ToolContext, text: str) -> str:\n"
        '    """Say it louder."""\n'
        "    return text.upper()\n",
        encoding="utf-8",
    )
    path = tmp_path / "pip.toml"
    path.write_text(
        'tools = ["shout"]\n\n[identity]\nname = "Pip"\npersonality = "x"\n\n'
        '[[custom_tools]]\nname = "shout"\nmodule = "kz_beside_tools:shout"\n',
        encoding="utf-8",
    )
    persona = load_persona(path)
    [(tool, _)] = box(persona).python_tools(persona)
    assert tool.name == "shout" and tool.source == "kz_beside_tools:shout"


# --- the gates -------------------------------------------------------------------------------


async def test_a_tool_by_module_path_runs_in_the_conversations_scope() -> None:
    persona = persona_with(CustomTool("where", module="tests.fakes.tools:where"))
    tools = box(persona)
    assert [t.name for t in tools.tools(persona, ALICE)] == ["where"]
    outcome = await tools.run(persona, "pip/discord:u1", ALICE, "where", '{"note": "hi"}')
    assert outcome is not None
    assert (outcome.status, outcome.text) == (  # quoted: outside text is data
        "ok",
        '"scope=pip/discord:u1 user=u1 admin=False note=hi"',
    )
    assert await tools.run(persona, "pip/discord:u1", ALICE, "other", "{}") is None


async def test_invalid_arguments_are_a_sentence_not_a_call() -> None:
    persona = persona_with(CustomTool("where", module="tests.fakes.tools:where"))
    outcome = await box(persona).run(persona, "s", ALICE, "where", '{"note": "' + "x" * 60 + '"}')
    assert outcome is not None
    assert outcome.status == "invalid"
    assert "note" in outcome.text


async def test_a_slow_tool_is_stopped_at_its_timeout() -> None:
    persona = persona_with(CustomTool("slow", module="tests.fakes.tools:slow", timeout=0.05))
    outcome = await box(persona).run(persona, "s", ALICE, "slow", '{"seconds": 5}')
    assert outcome is not None
    assert (outcome.status, outcome.text) == ("timeout", TOOL_TIMED_OUT)


async def test_an_answer_is_cut_to_its_size() -> None:
    persona = persona_with(
        CustomTool("long", module="tests.fakes.tools:long", max_output_chars=100)
    )
    outcome = await box(persona).run(persona, "s", ALICE, "long", '{"size": 5000}')
    assert outcome is not None
    assert outcome.text.startswith('"' + "x" * 100 + '"\n')
    assert "x" * 101 not in outcome.text
    assert outcome.text.endswith("\n[cut: only the first 100 characters are shown]")


async def test_a_failing_tool_is_a_sentence_and_its_arguments_stay_out_of_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    persona = persona_with(CustomTool("boom", module="tests.fakes.tools:boom"))
    with caplog.at_level(logging.INFO):
        outcome = await box(persona).run(persona, "s", ALICE, "boom", '{"secret": "hunter2"}')
    assert outcome is not None
    assert (outcome.status, outcome.text) == ("error", TOOL_FAILED)
    assert "hunter2" not in caplog.text
    [line] = [
        r.getMessage() for r in caplog.records if r.getMessage().startswith("tool boom for pip:")
    ]
    assert line.startswith("tool boom for pip: error in ")
    assert line.endswith(" ms, cost no model call")


async def test_admin_only_tools_are_for_admins() -> None:
    persona = persona_with(
        CustomTool("vault", module="tests.fakes.tools:secretive", admin_only=True)
    )
    tools = box(persona)
    assert tools.tools(persona, ALICE) == []
    refused = await tools.run(persona, "s", ALICE, "vault", "{}")
    assert refused is not None
    assert (refused.status, refused.text) == ("refused", TOOL_ADMINS_ONLY)
    admin = Sender.of("u2", admin=True)
    assert [t.name for t in tools.tools(persona, admin)] == ["vault"]
    allowed = await tools.run(persona, "s", admin, "vault", "{}")
    assert allowed is not None
    assert allowed.text == '"the vault is open"'


async def test_eco_mode_keeps_only_cheap_tools() -> None:
    persona = persona_with(
        CustomTool("where", module="tests.fakes.tools:where"),
        CustomTool("dice", cheap=True),
    )
    tools = box(persona, eco=True)
    assert [t.name for t in tools.tools(persona, ALICE)] == ["dice"]
    refused = await tools.run(persona, "s", ALICE, "where", "{}")
    assert refused is not None
    assert (refused.status, refused.text) == ("refused", TOOL_NOT_IN_ECO)
    rolled = await tools.run(persona, "s", ALICE, "dice", '{"notation": "d6"}')
    assert rolled is not None
    assert rolled.status == "ok"


async def test_each_user_has_a_rate_by_the_clock() -> None:
    clock = FakeClock(datetime(2026, 12, 4, 9, 0, tzinfo=UTC))
    persona = persona_with(CustomTool("where", module="tests.fakes.tools:where", rate_per_minute=2))
    tools = box(persona, clock)

    async def status(sender: Sender) -> str:
        outcome = await tools.run(persona, "s", sender, "where", "{}")
        assert outcome is not None
        return outcome.status

    assert [await status(ALICE) for _ in range(3)] == ["ok", "ok", "refused"]
    assert await status(Sender.of("u2")) == "ok"  # another user has their own
    clock.advance(seconds=61)
    assert await status(ALICE) == "ok"


async def test_a_turn_of_several_people_runs_no_tool_acting_for_a_person() -> None:
    """A tool taking a ToolContext acts for one person: refused for a turn of several (or
    of no one in particular), never run for one of them; one taking a CommonContext runs."""
    persona = persona_with(CustomTool("where", module="tests.fakes.tools:where"), names=("dice",))
    tools = box(persona)
    several = Sender(("u1", "u2"))
    assert [t.name for t in tools.tools(persona, several)] == ["dice"]
    refused = await tools.run(persona, "s", several, "where", "{}")
    assert refused is not None and (refused.status, refused.text) == ("refused", TOOL_FOR_ONE)
    persona_only = Sender(("persona:mo",))
    assert [t.name for t in tools.tools(persona, persona_only)] == ["dice"]
    rolled = await tools.run(persona, "s", several, "dice", '{"notation": "d6"}')
    assert rolled is not None and rolled.status == "ok"
    alone = await tools.run(persona, "s", Sender.of("u2"), "where", "{}")
    assert alone is not None and alone.text == '"scope=s user=u2 admin=False note="'


async def test_a_call_for_several_people_counts_against_each_ones_rate() -> None:
    persona = persona_with(CustomTool("dice", cheap=True, rate_per_minute=1))
    tools = box(persona)

    async def status(sender: Sender) -> str:
        outcome = await tools.run(persona, "s", sender, "dice", '{"notation": "d6"}')
        assert outcome is not None
        return outcome.status

    assert await status(Sender(("u1", "u2"))) == "ok"
    assert await status(Sender.of("u2")) == "refused"  # counted for Bob too
    assert await status(Sender(("u3", "u1"))) == "refused"  # Alice is at hers
    assert await status(Sender.of("u3")) == "ok"  # (nothing was counted for Carol then)


async def test_many_senders_later_the_rates_of_a_refused_call_are_forgotten_too() -> None:
    """A call refused for several people counted nothing for the others: forgetting old
    rates, once many senders have called, takes what it left as well."""
    clock = FakeClock(datetime(2026, 12, 4, 9, 0, tzinfo=UTC))
    persona = persona_with(CustomTool("dice", cheap=True, rate_per_minute=1))
    tools = box(persona, clock)
    d6 = '{"notation": "d6"}'
    await tools.run(persona, "s", ALICE, "dice", d6)
    refused = await tools.run(persona, "s", Sender(("u1", "u2")), "dice", d6)
    assert refused is not None and refused.status == "refused"
    clock.advance(seconds=61)
    for n in range(4100):
        outcome = await tools.run(persona, "s", Sender.of(f"x{n}"), "dice", d6)
        assert outcome is not None and outcome.status == "ok"


async def test_an_installed_tool_named_in_tools_needs_no_table() -> None:
    persona = persona_with(names=("dice",))
    tools = box(persona)
    assert [t.name for t in tools.tools(persona, ALICE)] == ["dice"]
    with pytest.raises(TomlError, match="no installed tool named 'dice'") as info:
        box(persona, installed={})  # uninstalled since the persona was read
    assert info.value.key == "tools[1]"


# --- through the engine ----------------------------------------------------------------------


async def test_the_chat_model_calls_a_host_tool_for_the_sender(tmp_path: Path) -> None:
    persona = persona_with(CustomTool("where", module="tests.fakes.tools:where"))
    model = ScriptedChatModel()
    bot = await open_bot(tmp_path / "kizuna.db", [persona], model=model)
    try:
        bot.engine.calls.toolbox = box(persona, bot.clock)
        answers = {}
        for user in ("u7", "u8"):  # two people in one group, each with their own memory
            model.push(calling("where", {"note": "n"}), "[NEUTRAL] there")
            event = make_event("where am I?", user_id=user, is_dm=False)
            reply = await bot.engine.handle(event)
            assert reply.text == "there"
            answer = model.calls[-1].messages[-1]
            assert answer.role == "tool"
            scope = bot.engine.memory_scope(persona, await bot.engine.session(event))
            assert answer.content == f'"scope={scope} user={user} admin=False note=n"'
            answers[user] = scope
        assert answers["u7"] != answers["u8"]
    finally:
        await bot.close()


async def test_an_admin_only_tool_is_offered_to_a_groups_admin_never_in_a_dm(
    tmp_path: Path,
) -> None:
    vault = CustomTool("vault", module="tests.fakes.tools:secretive", admin_only=True)
    persona = persona_with(vault)
    model = ScriptedChatModel()
    bot = await open_bot(tmp_path / "kizuna.db", [persona], model=model)
    try:
        bot.engine.calls.toolbox = box(persona, bot.clock)
        offered = {}
        for where, event in {
            "group admin": make_event("hi", is_dm=False, admin=True),
            "group member": make_event("hi", is_dm=False, admin=False),
            "dm": make_event("hi", is_dm=True, admin=True),  # everyone is a DM's admin
        }.items():
            await bot.engine.handle(event)
            chat = [c for c in model.calls if not c.json_mode and c.tools]
            offered[where] = "vault" in {t.name for t in chat[-1].tools}
        assert offered == {"group admin": True, "group member": False, "dm": False}
    finally:
        await bot.close()


# --- dice --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("notation", "expected"),
    [
        ("2d6+3", Dice(2, 6, 2, 3)),
        ("d20", Dice(1, 20, 1, 0)),
        ("D20 - 1", Dice(1, 20, 1, -1)),
        ("4d6kh3", Dice(4, 6, 3, 0)),
        ("2d20kl1", Dice(2, 20, -1, 0)),
        ("2d6x", None),
        ("0d6", None),
        ("1d1", None),
        ("101d6", None),
        ("2d6kh3", None),
        ("d20+1001", None),
        ("roll a d20", None),
    ],
)
def test_dice_notation(notation: str, expected: Dice | None) -> None:
    assert parse(notation) == expected


def test_a_seed_replays_the_rolls() -> None:
    two_d6 = Dice(2, 6, 2, 3)
    first = [roll(random.Random(5), two_d6) for _ in range(3)]
    again = [roll(random.Random(5), two_d6) for _ in range(3)]
    assert first == again
    result = first[0]
    assert result.total == sum(result.rolls[0]) + 3
    assert all(1 <= r <= 6 for r in result.rolls[0])


def test_advantage_keeps_the_better_set_and_disadvantage_the_worse() -> None:
    d20 = Dice(1, 20, 1, 2)
    for seed in range(20):
        best = roll(random.Random(seed), d20, "advantage")
        worst = roll(random.Random(seed), d20, "disadvantage")
        assert best.rolls == worst.rolls  # the same two rolls
        assert best.total == max(r[0] for r in best.rolls) + 2
        assert worst.total == min(r[0] for r in worst.rolls) + 2


def test_keep_highest_drops_the_lowest() -> None:
    result = roll(random.Random(3), Dice(4, 6, 3, 0))
    assert sorted(result.kept) == sorted(result.rolls[0])[1:]
    assert result.total == sum(result.kept)


async def test_the_dice_tool_shows_the_rolls_and_the_total(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO):
        text = await dice(context(rng=random.Random(2)), "2d6+3")
    expected = roll(random.Random(2), Dice(2, 6, 2, 3))
    a, b = expected.rolls[0]
    assert text == f"2d6+3: rolled [{a}, {b}]; total {a + b} + 3 = {expected.total}"
    assert text in caplog.text
    assert (await dice(context(), "lots")).startswith("Not rolled: 'lots' is not dice notation")


# --- reminder ------------------------------------------------------------------------------


class Kept:
    def __init__(self, zone: tzinfo | None = None) -> None:
        self.added: list[tuple[datetime, str]] = []
        self.set = zone

    async def add(self, due: datetime, what: str) -> None:
        self.added.append((due, what))

    async def zone(self) -> tzinfo | None:
        return self.set


async def test_a_reminder_on_friday_is_due_on_friday() -> None:
    kept = Kept()
    clock = FakeClock(datetime(2026, 12, 2, 10, 0, tzinfo=UTC))  # a Wednesday
    text = await reminder(context(clock, reminders=kept), "call my sister", "on Friday")
    [(due, what)] = kept.added
    assert due.date() == date(2026, 12, 4)
    assert what == "call my sister"
    assert text == "Reminder set for Friday 04 December 2026, 09:00: call my sister"


@pytest.mark.parametrize(
    ("when", "due"),
    [
        ("tomorrow at 3pm", datetime(2026, 12, 3, 15, 0, tzinfo=UTC)),
        ("明天下午", datetime(2026, 12, 3, 12, 0, tzinfo=UTC)),
        ("Friday", datetime(2026, 12, 4, 9, 0, tzinfo=UTC)),
        ("2026-12-24", datetime(2026, 12, 24, 9, 0, tzinfo=UTC)),
        ("明晚8点", datetime(2026, 12, 3, 20, 0, tzinfo=UTC)),
        ("tomorrow evening at 8", datetime(2026, 12, 3, 20, 0, tzinfo=UTC)),
        ("half past 7 tomorrow morning", datetime(2026, 12, 3, 7, 30, tzinfo=UTC)),
    ],
)
async def test_a_reminder_is_due_when_they_said_else_in_the_morning(
    when: str, due: datetime
) -> None:
    kept = Kept()
    clock = FakeClock(datetime(2026, 12, 2, 10, 0, tzinfo=UTC))  # a Wednesday
    await reminder(context(clock, reminders=kept), "call my sister", when)
    assert [d for d, _ in kept.added] == [due]


async def test_a_reminder_is_due_at_the_hour_where_the_user_lives(tmp_path: Path) -> None:
    clock = FakeClock(datetime(2026, 12, 2, 10, 0, tzinfo=UTC))  # a Wednesday
    bot = await open_bot(tmp_path / "k.sqlite3", clock=clock)
    try:
        await bot.store.set_contact("pip", "discord", "u1", timezone="Asia/Tokyo", at=clock.now())
        kept = StoredReminders(bot.store, clock, "pip/discord:dm:u1", "u1")
        text = await reminder(context(clock, reminders=kept), "take the pills", "tomorrow at 8am")
        [kept_one] = await bot.store.intentions("pip/discord:dm:u1", "u1")
        tokyo = ZoneInfo("Asia/Tokyo")
        assert kept_one.due_at == datetime(2026, 12, 3, 8, 0, tzinfo=tokyo)
        assert text == "Reminder set for Thursday 03 December 2026, 08:00: take the pills"
        # Someone who set no zone has the bot's.
        other = StoredReminders(bot.store, clock, "pip/discord:dm:u2", "u2")
        await reminder(context(clock, reminders=other), "the bins", "tomorrow at 8am")
        [bins] = await bot.store.intentions("pip/discord:dm:u2", "u2")
        assert bins.due_at == datetime(2026, 12, 3, 8, 0, tzinfo=UTC)
    finally:
        await bot.close()


async def test_a_reminder_for_today_evening_is_not_in_the_past() -> None:
    kept = Kept()
    clock = FakeClock(datetime(2026, 12, 2, 10, 0, tzinfo=UTC))
    await reminder(context(clock, reminders=kept), "the bins", "this evening")
    [(due, _)] = kept.added
    assert due >= clock.now()
    assert due - clock.now() < timedelta(hours=14)


async def test_the_box_hands_a_tool_the_reminders_of_its_conversation_and_sender() -> None:
    kept: dict[tuple[str, str], Kept] = {}

    def reminders(scope: str, user_id: str) -> Kept:
        return kept.setdefault((scope, user_id), Kept())

    persona = persona_with(names=("reminder",))
    tools = Toolbox(
        {persona.key: persona},
        clock=FakeClock(datetime(2026, 12, 2, 10, 0, tzinfo=UTC)),
        tz=UTC,
        rng=random.Random(0),
        environ={},
        installed=SHIPPED,
        reminders=reminders,
    )
    arguments = '{"what": "call my sister", "when": "on Friday"}'
    outcome = await tools.run(persona, "pip/discord:dm:u1", ALICE, "reminder", arguments)
    assert outcome is not None
    assert outcome.text.startswith('"Reminder set for Friday 04 December 2026')
    assert list(kept) == [("pip/discord:dm:u1", "u1")]
    assert [what for _, what in kept["pip/discord:dm:u1", "u1"].added] == ["call my sister"]


async def test_a_stored_reminder_is_an_intention_of_its_scope_and_sender(tmp_path: Path) -> None:
    clock = FakeClock(datetime(2026, 12, 2, 10, 0, tzinfo=UTC))  # a Wednesday
    bot = await open_bot(tmp_path / "k.sqlite3", clock=clock)
    try:
        kept = StoredReminders(bot.store, clock, "pip/discord:dm:u1", "u1")
        text = await reminder(context(clock, reminders=kept), "call my sister", "on Friday evening")
        [kept_one] = await bot.store.intentions("pip/discord:dm:u1", "u1")
        assert (kept_one.kind, kept_one.what, kept_one.state) == (
            "reminder",
            "call my sister",
            "pending",
        )
        assert kept_one.due_at == datetime(2026, 12, 4, 18, 0, tzinfo=UTC)  # "evening"
        assert kept_one.until == kept_one.due_at + timedelta(days=1)
        assert kept_one.created_at == clock.now()
        assert text == "Reminder set for Friday 04 December 2026, 18:00: call my sister"
        assert await bot.store.intentions("pip/discord:dm:u2", "u1") == []
    finally:
        await bot.close()


async def test_a_reminder_needs_a_day_and_a_host_that_keeps_them() -> None:
    kept = Kept()
    asked = await reminder(context(reminders=kept), "call", "sometime")
    assert asked.startswith("Not set: ask them which day")
    assert kept.added == []
    none = await reminder(context(), "call", "on Friday")
    assert none.startswith("Reminders are not kept here")


def test_the_dungeon_master_rolls_dice() -> None:
    master = load_persona(ROOT / "personas" / "dungeon_master.toml")
    assert "dice" in master.tools
    assert [t.name for t in master.custom_tools if t.cheap] == ["dice"]


def test_persona_validate_loads_the_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pip.toml"
    path.write_text(
        '[identity]\nname = "Pip"\npersonality = "x"\n\n'
        '[[custom_tools]]\nname = "plain"\nmodule = "tests.fakes.tools:untyped"\n'
    )
    assert _validate([path]) == 2
    assert capsys.readouterr().err.startswith(f"{path}:7: custom_tools[0].module: ")
    path.write_text(path.read_text().replace("untyped", "where"))
    assert _validate([path]) == 0
