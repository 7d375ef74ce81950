"""Reading the tools tier's update_state call back into slot values, and keeping them to
their slot's bound."""

from __future__ import annotations

from bot.chat_model import ToolCall
from bot.conversation.slots import fit, parse_state_call
from bot.llm.tokens import estimate_tokens
from bot.persona.file import StateSlot
from bot.prompts import STATE_TOOL

SLOTS = [StateSlot("party", "The characters."), StateSlot("gold", "Coins.")]


def call(arguments: str, name: str = STATE_TOOL) -> ToolCall:
    return ToolCall("c1", name, arguments)


def test_a_call_gives_the_slots_it_names_with_their_new_values() -> None:
    changed = parse_state_call([call('{"party": " Ann, Bo ", "gold": 12}')], SLOTS)
    assert changed == {"party": "Ann, Bo", "gold": "12"}


def test_structured_values_are_kept_as_json_text() -> None:
    changed = parse_state_call([call('{"party": ["Ann", "秋"]}')], SLOTS)
    assert changed == {"party": '["Ann", "秋"]'}


def test_unknown_slots_empty_values_and_other_types_are_no_change() -> None:
    arguments = '{"weather": "rain", "party": "  ", "gold": true}'
    assert parse_state_call([call(arguments)], SLOTS) == {}
    assert parse_state_call([call('{"gold": null}')], SLOTS) == {}


def test_no_call_another_tool_or_unreadable_arguments_change_nothing() -> None:
    assert parse_state_call([], SLOTS) == {}
    assert parse_state_call([call('{"party": "Ann"}', name="web_search")], SLOTS) == {}
    assert parse_state_call([call("{not json"), call('["party"]')], SLOTS) == {}
    assert parse_state_call([call("")], SLOTS) == {}


GAME = (
    "Location: the Crooked Lantern inn, Millbrook; evening\n"
    "Quest: none yet\n"
    "Threads: " + "; ".join(f"a rumour about the mill number {n}" for n in range(40)) + "\n"
    "Scene: the party meets at a corner table"
)


def test_a_value_within_its_bound_or_unbounded_is_kept_as_it_is() -> None:
    assert fit(GAME, 0) == GAME
    assert fit(GAME, estimate_tokens(GAME) + 20) == GAME


def test_over_its_bound_the_longest_lines_are_cut_and_every_line_keeps_its_start() -> None:
    kept = fit(GAME, 60)
    lines = kept.splitlines()
    assert sum(estimate_tokens(line) for line in lines) <= 60
    assert [line.split(":")[0] for line in lines] == ["Location", "Quest", "Threads", "Scene"]
    # The short lines are whole; the long one keeps its start, ended at a word, marked cut.
    assert lines[1] == "Quest: none yet" and lines[3] == "Scene: the party meets at a corner table"
    assert lines[2].startswith("Threads: a rumour about the mill number 0;")
    assert lines[2].endswith("…") and not lines[2].endswith(" …")


def test_chinese_is_cut_by_characters() -> None:
    value = "地点：磨坊\n线索：" + "磨坊的水车停了" * 20
    kept = fit(value, 30)
    assert kept.splitlines()[0] == "地点：磨坊"
    assert kept.splitlines()[1].startswith("线索：磨坊的水车停了") and kept.endswith("…")
    assert estimate_tokens(kept) <= 31
