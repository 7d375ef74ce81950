"""Fuzzed character cards (JSON and PNG, V1/V2/V3): every outcome is a `Card` or one
`CardError` line; a card that reads becomes a persona file that loads, and exports again."""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from bot.persona import cards
from bot.persona.card_file import persona_card, persona_key, persona_toml
from bot.persona.file import Persona
from bot.tomlfile import loads
from tests.fakes import cards as fake
from tests.fakes.fuzz import fuzzed, nasty_text

pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")

CARD_FIELDS = [
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
    "character_book",
    "tags",
    "creator",
    "character_version",
    "extensions",
    "nickname",
    "creator_notes_multilingual",
    "source",
    "group_only_greetings",
    "creation_date",
    "modification_date",
    "assets",
    "unknown_field",
]
BOOK_FIELDS = [
    "name",
    "description",
    "scan_depth",
    "token_budget",
    "recursive_scanning",
    "extensions",
    "entries",
]
ENTRY_FIELDS = [
    "keys",
    "content",
    "extensions",
    "enabled",
    "insertion_order",
    "case_sensitive",
    "name",
    "priority",
    "id",
    "comment",
    "selective",
    "secondary_keys",
    "constant",
    "position",
    "use_regex",
    "extra_thing",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([-(2**63), 2**64, 10**400, -1, 0]),
    st.floats(),
    nasty_text(max_size=6),
    st.sampled_from(["before_char", "after_char", "chara_card_v2", "chara_card_v3", "/a(/i"]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(nasty_text(max_size=2), inner, max_size=3)
    ),
    max_leaves=10,
)


def fields(names: list[str], value: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.sampled_from(names), value, max_size=len(names))


entries = fields(ENTRY_FIELDS, st.one_of(json_values, st.lists(nasty_text(max_size=3))))
books = st.builds(
    lambda book, items: {**book, "entries": items},
    fields(BOOK_FIELDS, json_values),
    st.one_of(st.lists(entries, max_size=3), json_values),
)
card_data = st.builds(
    lambda data, name, book: {**data, "name": name, **({"character_book": book} if book else {})},
    fields(CARD_FIELDS, st.one_of(json_values, st.lists(nasty_text(max_size=3)))),
    st.one_of(nasty_text(max_size=4), json_values),
    st.one_of(st.none(), books),
)
card_objects = st.one_of(
    card_data,  # V1: the fields at the top
    st.builds(lambda d: {"spec": "chara_card_v2", "spec_version": "2.0", "data": d}, card_data),
    st.builds(lambda d: {"spec": "chara_card_v3", "spec_version": 3.0, "data": d}, card_data),
    st.builds(lambda spec, d: {"spec": spec, "data": d}, json_values, json_values),
    json_values,
)


def encode(obj: Any, ascii_only: bool) -> bytes:
    # ensure_ascii writes lone surrogates as "\ud800" escapes; otherwise they are bad UTF-8.
    return json.dumps(obj, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


@st.composite
def card_files(draw: st.DrawFn) -> tuple[str, bytes]:
    """A card file's name and bytes: JSON, or a PNG carrying the card in a text chunk."""
    payload = encode(draw(card_objects), draw(st.booleans()))
    kind = draw(st.sampled_from(["json", "tEXt", "zTXt", "iTXt", "iTXt-z", "raw"]))
    if kind == "json":
        return "card.json", payload
    keyword = draw(st.sampled_from(["chara", "ccv3", "CHARA", "other", ""]))
    b64 = base64.b64encode(payload)
    if draw(st.booleans()):
        b64 = b64.rstrip(b"=")  # some writers drop the padding
    if kind == "tEXt":
        chunk = fake.text_chunk(keyword, b64)
    elif kind == "zTXt":
        chunk = fake.chunk(b"zTXt", keyword.encode() + b"\0\0" + zlib.compress(b64))
    elif kind == "raw":  # JSON where base64 belongs
        chunk = fake.text_chunk(keyword, payload)
    else:
        chunk = fake.itxt_chunk(keyword, b64, compressed=kind == "iTXt-z")
    return "card.png", fake.png(chunk)


@st.composite
def damaged(draw: st.DrawFn, files: st.SearchStrategy[tuple[str, bytes]]) -> tuple[str, bytes]:
    """A card file with a few bytes changed, cut or inserted."""
    name, data = draw(files)
    buffer = bytearray(data)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(buffer)))
        edit = draw(st.sampled_from(["flip", "cut", "insert", "truncate"]))
        if edit == "flip" and at < len(buffer):
            buffer[at] ^= draw(st.integers(1, 255))
        elif edit == "cut":
            del buffer[at : at + draw(st.integers(1, 16))]
        elif edit == "insert":
            buffer[at:at] = draw(st.binary(min_size=1, max_size=8))
        else:
            del buffer[at:]
    return name, bytes(buffer)


def check(name: str, data: bytes) -> cards.Card | cards.CardError:
    try:
        card = cards.parse_card(data, name)
    except cards.CardError as e:
        message = str(e)
        assert message.startswith(f"{name}: ") and e.message, message
        assert "\n" not in message and "\r" not in message, message
        return e
    # What `kizuna persona import` does with it: a persona file that is UTF-8 and loads.
    text = persona_toml(card)
    text.encode("utf-8")
    persona = loads(text, Persona, "imported.toml")
    assert persona.identity.name == card.name
    assert persona_key(card.name) == persona_key(card.name).strip("_")
    # ... and `kizuna persona export`: a V2 card that reads back with the same content.
    again = cards.parse_card(cards.card_to_v2_json(persona_card(persona)).encode(), "out.json")
    assert (again.name, again.first_mes, again.mes_example) == (
        card.name,
        card.first_mes,
        card.mes_example,
    )
    return card


@fuzzed(150)
@given(file=card_files())
@example(file=("card.json", b'{"name": 1' + b"1" * 5000 + b"}"))  # int(): too many digits
@example(file=("card.json", b'{"name": "\\ud800"}'))  # a lone surrogate: not UTF-8 on disk
@example(file=("card.json", b'{"name": "a", "creation_date": 1' + b"0" * 5000 + b"}"))
@example(file=("card.json", fake.encode(fake.v2(character_book={"scan_depth": -3}))))
@example(file=("card.json", fake.encode(fake.v2(character_book={"token_budget": -1}))))
@example(file=("card.json", fake.encode(fake.v2(character_book={"scan_depth": 1e300}))))
@example(file=("card.json", fake.encode(fake.v2(character_book={"entries": [{}]}))))
@example(file=("card.json", b'{"name": "a\\u0000\\n\\u007f\'\'\'"}'))
@example(file=("card.json", b'{"name": "\\ud83d\\ude00", "first_mes": "\\r"}'))
def test_cards_read_or_say_why(file: tuple[str, bytes]) -> None:
    check(*file)


@fuzzed(150)
@given(file=damaged(card_files()))
def test_damaged_cards_read_or_say_why(file: tuple[str, bytes]) -> None:
    check(*file)


@fuzzed(60)
@given(data=st.binary(max_size=400), name=st.sampled_from(["x.json", "x.png", "x", "X.PNG"]))
@example(data=fake.PNG_SIGNATURE + b"\xff\xff\xff\xff", name="x.png")  # a 4 GB chunk length
@example(data=b"\xef\xbb\xbf" + b"[" * 100_000, name="x.json")  # nested too deeply
def test_arbitrary_bytes(data: bytes, name: str) -> None:
    check(name, data)


def test_import_refuses_with_one_line(tmp_path: Path) -> None:
    """Through `kizuna persona import`: a broken card is the CLI's one-line usage error."""
    from adapters.command.cli import UsageError, _import_card

    card = tmp_path / "card.json"
    card.write_bytes(fake.encode(fake.v2(character_book={"scan_depth": -1})))
    try:
        _import_card(card, tmp_path / "personas", force=False)
    except UsageError as e:
        assert "\n" not in str(e)


@pytest.mark.parametrize("kind", ["zTXt", "iTXt"])
def test_a_decompression_bomb_is_refused(monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """A compressed chunk that inflates past the limit is refused, not inflated whole (a few
    kilobytes of zlib can become gigabytes)."""
    monkeypatch.setattr(cards, "MAX_CHUNK_TEXT", 2**20)
    bomb = zlib.compress(b"A" * (2 * 2**20), 9)
    if kind == "zTXt":
        chunk = fake.chunk(b"zTXt", b"chara\0\0" + bomb)
    else:
        chunk = fake.chunk(b"iTXt", b"chara\0\x01\x00en\0\0" + bomb)
    refused = check("bomb.png", fake.png(chunk))
    assert isinstance(refused, cards.CardError)
    assert str(refused) == "bomb.png: the chara chunk is too big (over 1 MB of text)"
