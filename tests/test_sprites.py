"""The shipped face sprites: one resting and one SPEAKING SVG per emotion, kept in step with
the script that draws them (personas/assets/make_sprites.py)."""

import importlib.util
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

PERSONAS = Path(__file__).resolve().parent.parent / "personas"
ASSETS = PERSONAS / "assets"
SVG = "{http://www.w3.org/2000/svg}svg"


def emotions(persona: Path) -> list[str]:
    with persona.open("rb") as file:
        return list(tomllib.load(file)["emotions"]["names"])


SPRITES = [
    (persona.stem, emotion)
    for persona in sorted(PERSONAS.glob("*.toml"))
    for emotion in emotions(persona)
]


@pytest.mark.parametrize(("persona", "emotion"), SPRITES)
def test_every_emotion_has_a_resting_and_a_speaking_sprite(persona, emotion):
    resting = ASSETS / persona / f"{emotion}.svg"
    speaking = ASSETS / persona / f"{emotion}SPEAKING.svg"
    for path in (resting, speaking):
        root = ET.parse(path).getroot()
        assert root.tag == SVG
        assert root.get("viewBox")
    assert speaking.read_bytes() != resting.read_bytes()


def test_the_committed_sprites_are_what_the_script_draws(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("make_sprites", ASSETS / "make_sprites.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "make_sprites", script)  # dataclasses look it up there
    spec.loader.exec_module(script)

    written = script.write_sprites(PERSONAS, tmp_path)

    assert len(written) == 2 * len(SPRITES)
    for path in written:
        assert path.read_bytes() == (ASSETS / path.relative_to(tmp_path)).read_bytes(), path
