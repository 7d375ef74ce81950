"""Fuzzed persona files: every outcome is a loaded `Persona` or one `TomlError` line naming
the file, the key and the line; no other exception escapes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from bot.persona import cards
from bot.persona.card_file import persona_card, persona_toml
from bot.persona.file import Persona, load_persona
from bot.tomlfile import TomlError
from tests.fakes import cards as fake
from tests.fakes.fuzz import check_toml_error, fuzzed, mutated_toml, nasty_text

SHIPPED = sorted((Path(__file__).resolve().parents[2] / "personas").glob("*.toml"))
SEEDS = [path.read_text(encoding="utf-8") for path in SHIPPED]
MINIMAL = '[identity]\nname = "Pip"\npersonality = "cheerful"\n'
# A persona imported from a card: [card] and [lorebook] with `kept` JSON to mutate.
IMPORTED = persona_toml(
    cards.parse_card(
        fake.encode(
            fake.v2(
                description="A cat.",
                creator_notes="notes",
                extensions={"depth": 4},
                source=["x"],
                character_book={
                    "description": "lore",
                    "entries": [{"keys": ["fish"], "content": "Likes fish.", "id": 3}],
                },
            )
        ),
        "card.json",
    )
)


def load(tmp_path: Path, data: bytes) -> Persona | TomlError:
    path = tmp_path / "pip.toml"
    path.write_bytes(data)
    try:
        persona = load_persona(path)
    except TomlError as e:
        check_toml_error(e, path, data.decode("utf-8", "replace"))
        return e
    assert persona.key == "pip" and persona.path == path
    assert persona.identity.name.strip()
    assert persona.emotions.neutral in persona.emotions.names
    # `kizuna persona export`: whatever the file's `kept` keys hold, a card that reads back.
    exported = cards.card_to_v2_json(persona_card(persona))
    assert cards.parse_card(exported.encode(), "exported.json").name == persona.identity.name
    return persona


@fuzzed(150)
@given(text=mutated_toml([*SEEDS, MINIMAL, IMPORTED]))
@example(text=MINIMAL + '"line\\nbreak" = 1\n')  # a key that would break the message in two
@example(text=MINIMAL + '[emotions]\nnames = []\nneutral = ""\n')
@example(text=MINIMAL + '[emotions]\nnames = ["HAPPY", "\\u0000"]\n')
@example(text=MINIMAL + "[memory]\nidle_minutes = nan\n")
@example(text=MINIMAL + "[memory]\nflashback_rate = inf\n")
@example(text=MINIMAL + '[[state]]\nname = "a"\ninstructions = ""\n[[state]]\nname = "a"\n')
@example(text=MINIMAL + '[card]\nkept = "{not json"\n')  # the export: JSONDecodeError
@example(text=MINIMAL + '[card]\nkept = \'{"extensions": 3, "spec": 5, "source": [1]}\'\n')
@example(text=IMPORTED.replace('"id": 3', '"id": [3], "position": 7, "extensions": []'))
def test_mutated_persona_loads_or_says_where(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    load(tmp_path_factory.mktemp("persona"), text.encode("utf-8", "surrogatepass"))


@fuzzed(60)
@given(raw=st.one_of(st.binary(max_size=200), nasty_text().map(lambda t: MINIMAL + t)))
@example(raw=b"\xef\xbb\xbf" + MINIMAL.encode())  # a BOM
@example(raw=MINIMAL.encode("utf-16"))
def test_arbitrary_persona_bytes(
    tmp_path_factory: pytest.TempPathFactory, raw: bytes | str
) -> None:
    data = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
    load(tmp_path_factory.mktemp("persona"), data)


def test_a_bom_is_fine(tmp_path: Path) -> None:
    persona = load(tmp_path, b"\xef\xbb\xbf" + MINIMAL.encode())
    assert isinstance(persona, Persona) and persona.identity.name == "Pip"
