"""Reading the tools tier's update_state call back into slot values."""

from __future__ import annotations

from bot.chat_model import ToolCall
from bot.conversation.slots import parse_state_call
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
