"""Character cards (bot/persona/cards.py): reading V1/V2/V3 JSON and PNG, the V2 export,
placeholders
and lorebook activation. Every fixture is built here: card dicts, and PNGs assembled chunk by
chunk."""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path
from typing import Any

import pytest

from bot.persona.cards import (
    Card,
    CardError,
    Lorebook,
    LoreEntry,
    active_entries,
    card_to_v2_json,
    parse_card,
    read_card,
    resolve_placeholders,
    to_v2_dict,
)
from tests.fakes.cards import PNG_SIGNATURE, b64, chunk, encode, itxt_chunk, png, text_chunk, v2


def error_of(raw: bytes, source: str) -> str:
    with pytest.raises(CardError) as caught:
        parse_card(raw, source)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{source}: ")
    return message


def book(*entries: LoreEntry, **fields: Any) -> Lorebook:
    return Lorebook(entries=list(entries), **fields)


def entry(content: str, *keys: str, **fields: Any) -> LoreEntry:
    return LoreEntry(keys=list(keys), content=content, **fields)


def words(text: str) -> int:
    return len(text.split())


def active(lore: Lorebook, *recent: str, budget: int | None = None) -> list[str]:
    found = active_entries(lore, recent, budget_tokens=budget, count_tokens=words)
    return [e.content for e in found]


# --- reading JSON ----------------------------------------------------------------------------


def test_v2_json() -> None:
    raw = v2(
        description="A cat girl.",
        personality="curious",
        scenario="A café.",
        first_mes="Nya, {{user}}!",
        mes_example="<START>\n{{char}}: hi",
        creator_notes="Be kind.",
        system_prompt="You are {{char}}.",
        post_history_instructions="Stay in character.",
        alternate_greetings=["Hi!", "Hello!"],
        tags=["cat", "café"],
        creator="ana",
        character_version="1.2",
        extensions={"talkativeness": "0.5"},
        character_book={
            "name": "Café lore",
            "scan_depth": 3,
            "token_budget": 200,
            "recursive_scanning": False,
            "extensions": {},
            "entries": [
                {
                    "keys": ["latte"],
                    "content": "Lattes cost 4 coins.",
                    "extensions": {},
                    "enabled": True,
                    "insertion_order": 10,
                    "priority": 5,
                    "id": 1,
                    "position": "after_char",
                }
            ],
        },
    )
    card = parse_card(encode(raw), "miao.json")
    assert card.spec == "chara_card_v2" and card.spec_version == "2.0"
    assert card.name == "Miao" and card.first_mes == "Nya, {{user}}!"
    assert card.alternate_greetings == ["Hi!", "Hello!"] and card.tags == ["cat", "café"]
    assert card.character_version == "1.2"
    assert card.extensions == {"talkativeness": "0.5"} and card.extra == {}
    assert card.character_book is not None
    assert card.character_book.name == "Café lore" and card.character_book.scan_depth == 3
    (lore,) = card.character_book.entries
    assert lore.keys == ["latte"] and lore.insertion_order == 10 and lore.priority == 5
    assert lore.id == 1 and lore.position == "after_char" and lore.enabled
    assert lore.case_sensitive is None and not lore.use_regex and lore.extra == {}


def test_v3_json() -> None:
    raw = {
        "spec": "chara_card_v3",
        "spec_version": "3.0",
        "data": {
            "name": "Miao",
            "nickname": "Mimi",
            "creator_notes_multilingual": {"en": "Hi", "zh": "你好"},
            "source": ["https://example.org/miao"],
            "group_only_greetings": ["Hi all!"],
            "creation_date": 1700000000,
            "modification_date": 1700000500,
            "assets": [{"type": "icon", "uri": "ccdefault:", "name": "main", "ext": "png"}],
            "character_book": {
                "extensions": {},
                "entries": [{"keys": ["^caf"], "content": "x", "use_regex": True}],
            },
        },
    }
    card = parse_card(encode(raw), "miao.json")
    assert card.spec == "chara_card_v3" and card.spec_version == "3.0"
    assert card.nickname == "Mimi" and card.source == ["https://example.org/miao"]
    assert card.creator_notes_multilingual == {"en": "Hi", "zh": "你好"}
    assert card.group_only_greetings == ["Hi all!"]
    assert (card.creation_date, card.modification_date) == (1700000000, 1700000500)
    assert card.assets[0]["uri"] == "ccdefault:"
    assert card.character_book is not None and card.character_book.entries[0].use_regex
    assert card.extra == {}


def test_v1_flat_json() -> None:
    raw = {
        "name": "Miao",
        "description": "A cat girl.",
        "personality": "curious",
        "scenario": "A café.",
        "first_mes": "Nya!",
        "mes_example": "<START>",
        "avatar": "none",  # a frontend's own state: not part of the card
        "chat": "Miao - 2023-5-1",
    }
    card = parse_card(encode(raw), "miao.json")
    assert card.spec == "chara_card_v2" and card.spec_version == "2.0"
    assert (card.name, card.description, card.personality) == ("Miao", "A cat girl.", "curious")
    assert (card.scenario, card.first_mes, card.mes_example) == ("A café.", "Nya!", "<START>")
    assert card.extra == {} and card.extensions == {} and card.character_book is None


def test_json_with_bom_and_nulls() -> None:
    raw = b"\xef\xbb\xbf" + encode(v2(tags=None, character_book=None, extensions=None))
    card = parse_card(raw, "miao.json")
    assert card.tags == [] and card.character_book is None and card.extensions == {}
    assert card.extra == {}


def test_read_card_from_file(tmp_path: Path) -> None:
    path = tmp_path / "miao.png"
    path.write_bytes(png(text_chunk("chara", b64(v2()))))
    assert read_card(path).name == "Miao"
    with pytest.raises(CardError, match="cannot read"):
        read_card(tmp_path / "missing.json")


# --- reading PNG -----------------------------------------------------------------------------


def test_png_chara_only() -> None:
    raw = png(chunk(b"tEXt", b"Comment\0made by hand"), text_chunk("Chara", b64(v2())))
    assert parse_card(raw, "miao.png").name == "Miao"


def test_png_ccv3_wins_over_chara() -> None:
    v3 = {"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "Miao V3"}}
    raw = png(text_chunk("chara", b64(v2(name="Miao V2"))), text_chunk("ccv3", b64(v3)))
    card = parse_card(raw, "miao.png")
    assert card.name == "Miao V3" and card.spec == "chara_card_v3"


@pytest.mark.parametrize("compressed", [False, True])
def test_png_itxt(compressed: bool) -> None:
    raw = png(itxt_chunk("chara", b64(v2(description="café")), compressed=compressed))
    assert parse_card(raw, "miao.png").description == "café"


def test_png_ztxt() -> None:
    raw = png(chunk(b"zTXt", b"chara\0\0" + zlib.compress(b64(v2()))))
    assert parse_card(raw, "miao.png").name == "Miao"


def test_png_found_by_signature_whatever_the_name() -> None:
    assert parse_card(png(text_chunk("chara", b64(v2()))), "upload.bin").name == "Miao"


# --- malformed files -------------------------------------------------------------------------


def test_not_a_png() -> None:
    message = error_of(b"GIF89a....", "card.png")
    assert "not a PNG file" in message and "signature" in message


def test_png_without_card_chunk() -> None:
    message = error_of(png(), "card.png")
    assert "no character card" in message and "chara" in message and "ccv3" in message


def test_png_with_no_chunks_at_all() -> None:
    assert "truncated PNG" in error_of(PNG_SIGNATURE, "card.png")


def test_png_bad_crc() -> None:
    raw = bytearray(png(text_chunk("chara", b64(v2()))))
    raw[-20] ^= 0xFF  # inside the IDAT chunk's data
    message = error_of(bytes(raw), "card.png")
    assert "bad CRC" in message and "IDAT" in message


def test_png_truncated() -> None:
    raw = png(text_chunk("chara", b64(v2())))
    message = error_of(raw[:60], "card.png")
    assert "truncated PNG" in message and "tEXt" in message and "cut short" in message


def test_png_without_iend() -> None:
    raw = png(text_chunk("chara", b64(v2())))
    assert "truncated PNG" in error_of(raw[:-12], "card.png")


def test_png_bad_base64() -> None:
    message = error_of(png(text_chunk("chara", b"not base64!")), "card.png")
    assert message == "card.png: the chara chunk is not valid base64"


def test_png_base64_of_non_json() -> None:
    message = error_of(png(text_chunk("ccv3", base64.b64encode(b"hello"))), "card.png")
    assert "the ccv3 chunk is not valid JSON" in message and "line 1" in message


def test_png_base64_of_non_utf8() -> None:
    message = error_of(png(text_chunk("chara", base64.b64encode(b"\xff\xfe"))), "card.png")
    assert "the chara chunk is not UTF-8" in message


def test_png_bad_compressed_text() -> None:
    message = error_of(png(chunk(b"zTXt", b"chara\0\0garbage")), "card.png")
    assert "chara chunk is damaged" in message


def test_invalid_json() -> None:
    message = error_of(b'{\n  "name": "Miao"\n  "x": 1\n}', "card.json")
    assert message == "card.json: not valid JSON (line 3, column 3: Expecting ',' delimiter)"


def test_json_not_utf8() -> None:
    assert "not UTF-8" in error_of(b'{"name": "\xff"}', "card.json")


def test_json_not_an_object() -> None:
    message = error_of(b'["Miao"]', "card.json")
    assert "not a character card" in message and "array" in message


def test_unknown_spec() -> None:
    message = error_of(encode({"spec": "chara_card_v9", "data": {}}), "card.json")
    assert "unsupported spec 'chara_card_v9'" in message


def test_v2_without_data() -> None:
    assert "data is missing" in error_of(encode({"spec": "chara_card_v2"}), "card.json")


@pytest.mark.parametrize("name", [None, "", "   "])
def test_missing_or_empty_name(name: str | None) -> None:
    raw = v2()
    raw["data"]["name"] = name
    assert error_of(encode(raw), "card.json") == "card.json: data.name is missing or empty"


def test_v1_missing_name() -> None:
    message = error_of(encode({"description": "nobody"}), "card.json")
    assert message == "card.json: name is missing or empty"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"name": 3}, "data.name must be text"),
        ({"description": ["a"]}, "data.description must be text"),
        ({"tags": "cat"}, "data.tags must be a list of strings"),
        ({"alternate_greetings": ["a", "b", 3]}, "data.alternate_greetings[2] must be text"),
        ({"extensions": []}, "data.extensions must be an object"),
        ({"character_version": True}, "data.character_version must be text"),
        ({"character_book": "lore"}, "data.character_book must be an object"),
        ({"character_book": {"entries": {}}}, "data.character_book.entries must be a list"),
        ({"character_book": {"entries": [1]}}, "data.character_book.entries[0] must be an"),
        (
            {"character_book": {"scan_depth": "3", "entries": []}},
            "data.character_book.scan_depth must be a whole number",
        ),
        (
            {"character_book": {"entries": [{"keys": ["a"], "content": "", "enabled": "yes"}]}},
            "data.character_book.entries[0].enabled must be true or false",
        ),
        (
            {"character_book": {"entries": [{"keys": "a", "content": ""}]}},
            "data.character_book.entries[0].keys must be a list of strings",
        ),
        (
            {"character_book": {"entries": [{"keys": [], "content": "", "position": "top"}]}},
            "data.character_book.entries[0].position must be before_char or after_char",
        ),
        (
            {"character_book": {"entries": [{"keys": [], "content": "", "id": [1]}]}},
            "data.character_book.entries[0].id must be a number or text",
        ),
        ({"creator_notes_multilingual": {"en": 1}}, "data.creator_notes_multilingual.en must"),
        ({"assets": ["icon.png"]}, "data.assets[0] must be an object"),
        ({"creation_date": 1.5}, "data.creation_date must be a whole number"),
    ],
)
def test_wrong_field_types(data: dict[str, Any], expected: str) -> None:
    message = error_of(encode(v2(**data)), "card.json")
    assert message.startswith(f"card.json: {expected}")


# --- writing ---------------------------------------------------------------------------------


def test_v2_export_shape() -> None:
    card = Card(name="Miao", first_mes="Nya, {{user}}! 你好", tags=["cat"])
    text = card_to_v2_json(card)
    assert "你好" in text and "{{user}}" in text  # no \\u escapes, placeholders kept
    out = json.loads(text)
    assert out["spec"] == "chara_card_v2" and out["spec_version"] == "2.0"
    assert list(out["data"]) == [
        "name",
        "description",
        "personality",
        "scenario",
        "first_mes",
        "mes_example",
        "creator_notes",
        "system_prompt",
        "post_history_instructions",
        "alternate_greetings",
        "tags",
        "creator",
        "character_version",
        "extensions",
    ]
    assert out["data"]["extensions"] == {}  # no V3 fields, so no kizuna_v3 key


def test_unknown_fields_survive_round_trip() -> None:
    raw = v2(
        extensions={"depth_prompt": {"depth": 4, "prompt": "purr"}, "fav": True},
        future_field={"kept": [1, 2]},
        character_book={
            "extensions": {"book_ext": 1},
            "book_future": "yes",
            "entries": [
                {
                    "keys": ["latte"],
                    "content": "Lattes.",
                    "extensions": {"weight": 10},
                    "enabled": True,
                    "insertion_order": 100,
                    "entry_future": [True],
                }
            ],
        },
    )
    card = parse_card(encode(raw), "in.json")
    assert card.extra == {"future_field": {"kept": [1, 2]}}
    again = parse_card(card_to_v2_json(card).encode("utf-8"), "out.json")
    assert again == card
    out = to_v2_dict(card)["data"]
    assert out["future_field"] == {"kept": [1, 2]}
    assert out["extensions"]["depth_prompt"] == {"depth": 4, "prompt": "purr"}
    assert out["character_book"]["book_future"] == "yes"
    assert out["character_book"]["extensions"] == {"book_ext": 1}
    written = out["character_book"]["entries"][0]
    assert written["entry_future"] == [True] and written["extensions"] == {"weight": 10}
    assert "use_regex" not in written and "priority" not in written


def test_v3_fields_survive_v2_export() -> None:
    raw = {
        "spec": "chara_card_v3",
        "spec_version": "3.0",
        "data": {
            "name": "Miao",
            "nickname": "Mimi",
            "creator_notes_multilingual": {"zh": "你好"},
            "source": ["id:1"],
            "group_only_greetings": ["Hi all!"],
            "creation_date": 0,
            "assets": [{"type": "icon", "uri": "ccdefault:", "name": "main", "ext": "png"}],
            "extensions": {"other": 1},
            "character_book": {"entries": [{"keys": ["a.c"], "content": "x", "use_regex": True}]},
        },
    }
    card = parse_card(encode(raw), "in.json")
    out = to_v2_dict(card)
    assert out["spec"] == "chara_card_v2"
    assert "nickname" not in out["data"]
    assert out["data"]["extensions"]["kizuna_v3"]["nickname"] == "Mimi"
    assert out["data"]["extensions"]["other"] == 1
    again = parse_card(card_to_v2_json(card).encode("utf-8"), "out.json")
    assert again.spec == "chara_card_v2"
    assert again.nickname == "Mimi" and again.source == ["id:1"]
    assert again.creator_notes_multilingual == {"zh": "你好"}
    assert again.group_only_greetings == ["Hi all!"]
    assert again.creation_date == 0 and again.modification_date is None
    assert again.assets == card.assets
    assert again.extensions == {"other": 1}  # the stash is taken out again
    assert again.character_book is not None and again.character_book.entries[0].use_regex


# --- placeholders ----------------------------------------------------------------------------


def test_resolve_placeholders() -> None:
    text = "{{char}} greets {{USER}}; {{User}} waves. <BOT> and <USER>, <bot> <user> <char>."
    assert resolve_placeholders(text, "Miao", "Ana") == (
        "Miao greets Ana; Ana waves. Miao and Ana, Miao Ana Miao."
    )


def test_resolve_placeholders_takes_names_literally() -> None:
    assert resolve_placeholders("{{char}}", r"A\1 B", "u") == r"A\1 B"


# --- lorebook activation ---------------------------------------------------------------------


def test_keys_match_case_insensitively_by_default() -> None:
    lore = book(entry("latte lore", "Latte"), entry("tea lore", "tea"))
    assert active(lore, "I'd like a LATTE") == ["latte lore"]
    assert active(lore, "nothing here") == []


def test_case_sensitive_entry() -> None:
    lore = book(entry("rose lore", "Rose", case_sensitive=True))
    assert active(lore, "a rose") == []
    assert active(lore, "Rose said") == ["rose lore"]


def test_disabled_entry_never_activates() -> None:
    lore = book(
        entry("off", "latte", enabled=False),
        entry("off constant", enabled=False, constant=True),
    )
    assert active(lore, "latte") == []


def test_constant_entry_always_activates() -> None:
    assert active(book(entry("always", constant=True)), "hello") == ["always"]


def test_selective_needs_a_secondary_key() -> None:
    lore = book(entry("both", "latte", selective=True, secondary_keys=["oat"]))
    assert active(lore, "a latte please") == []
    assert active(lore, "a latte", "with oat milk") == ["both"]
    # Not selective: the secondary keys are ignored.
    lore = book(entry("one", "latte", selective=False, secondary_keys=["oat"]))
    assert active(lore, "a latte please") == ["one"]
    # Selective without secondary keys: the primary key is enough.
    assert active(book(entry("bare", "latte", selective=True)), "latte") == ["bare"]


def test_scan_depth() -> None:
    lore = book(entry("latte lore", "latte"), scan_depth=2)
    assert active(lore, "latte", "hello", "bye") == []
    assert active(lore, "hello", "latte", "bye") == ["latte lore"]
    assert active(book(entry("x", "latte"), scan_depth=0), "latte") == []


def test_insertion_order() -> None:
    lore = book(
        entry("third", "a", insertion_order=30),
        entry("first", "a", insertion_order=10),
        entry("tie later", "a", insertion_order=20),
        entry("tie earlier", "a", insertion_order=20),
    )
    assert active(lore, "a") == ["first", "tie later", "tie earlier", "third"]


def test_token_budget_drops_lowest_priority_first() -> None:
    lore = book(
        entry("const one two", constant=True, insertion_order=1),
        entry("high one two", "a", priority=10, insertion_order=2),
        entry("none one two", "a", insertion_order=3),
        entry("low one two", "a", priority=1, insertion_order=4),
        token_budget=6,
    )
    assert active(lore, "a") == ["const one two", "high one two"]
    # The argument overrides the book's budget; constants are dropped last.
    assert active(lore, "a", budget=3) == ["const one two"]
    assert active(lore, "a", budget=2) == []
    assert len(active(lore, "a", budget=100)) == 4


def test_no_budget_keeps_everything() -> None:
    lore = book(*(entry("word " * 50, "a") for _ in range(3)))
    assert len(active(lore, "a")) == 3


def test_recursive_scanning() -> None:
    entries = (
        entry("Miao drinks latte", "miao"),
        entry("latte comes from the café", "latte"),
        entry("the café is in Kyoto", "café"),
        entry("unrelated", "zebra"),
    )
    assert active(book(*entries, recursive_scanning=True), "hi miao") == [
        "Miao drinks latte",
        "latte comes from the café",
        "the café is in Kyoto",
    ]
    assert active(book(*entries), "hi miao") == ["Miao drinks latte"]


def test_recursive_scanning_ends_on_cycles() -> None:
    lore = book(entry("b here", "a"), entry("a here", "b"), recursive_scanning=True)
    assert active(lore, "a") == ["b here", "a here"]


def test_regex_keys() -> None:
    lore = book(
        entry("bad", "([unclosed", "a{4294967296}", use_regex=True),
        entry("digits", r"\d{3}", use_regex=True),
        entry("slashed", "/^HELLO/i", use_regex=True),
        entry("literal", r"\d{3}"),
    )
    assert active(lore, "hello, room 101") == ["digits", "slashed"]
    assert active(lore, r"say \d{3}") == ["literal"]
