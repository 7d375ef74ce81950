"""Character cards as personas (bot/persona/card_file.py, `kizuna persona import/export`): the file
an import writes, what of the card reaches the prompt (placeholders, scenario, examples,
lorebook by keyword, post-history instructions), and the export round trip. Cards are made in
the tests (tests/fakes/cards.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from adapters.command.cli import main
from bot.conversation.sessions import Turn
from bot.persona import cards
from bot.persona.card_file import guess_language, persona_card, persona_key, persona_toml
from bot.persona.file import load_persona
from bot.prompts import GREETING_HEADING, LORE_HEADING
from bot.turn.compose import build_chat_prompt
from tests.fakes.cards import b64, charx, encode, png, text_chunk, v2

NOW = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)


def lorebook() -> dict[str, Any]:
    return {
        "name": "Glade lore",
        "scan_depth": 2,
        "token_budget": 300,
        "recursive_scanning": False,
        "extensions": {"world": "glade"},
        "entries": [
            {
                "keys": ["glade"],
                "content": "The glade hides from all but the wounded.",
                "extensions": {"position": 0, "probability": 100},
                "enabled": True,
                "insertion_order": 20,
                "id": 7,
                "comment": "the place",
            },
            {
                "keys": ["Eldoria"],
                "content": "Eldoria lies in ruins to the north.",
                "extensions": {},
                "enabled": True,
                "insertion_order": 10,
                "constant": True,
            },
            {
                "keys": ["wolf"],
                "secondary_keys": ["night"],
                "selective": True,
                "content": "{{char}} fears the wolves that hunt at night.",
                "extensions": {},
                "enabled": True,
                "insertion_order": 30,
                "case_sensitive": True,
            },
        ],
    }


def seraphina(**extra: Any) -> dict[str, Any]:
    card = v2(
        name="Seraphina",
        description="{{char}} is a guardian of the forest who heals travellers.",
        personality="gentle, protective",
        scenario="{{user}} wakes up in {{char}}'s glade, hurt.",
        first_mes="*{{char}} kneels beside you.* Easy now, {{user}}.",
        mes_example="<START>\n{{user}}: Where am I?\n{{char}}: Somewhere safe, <USER>.",
        creator_notes="Works best with a warm model.\nSay hi to <BOT>.",
        system_prompt="Write {{char}}'s next reply in a slow, kind voice.",
        post_history_instructions="Stay in character as {{char}}.",
        alternate_greetings=["*She hums to herself.*"],
        tags=["fantasy", "healer"],
        creator="ivy",
        character_version="1.2",
        extensions={"talkativeness": "0.5", "depth_prompt": {"prompt": "x", "depth": 4}},
        character_book=lorebook(),
        made_up_field={"kept": None},
        **extra,
    )
    return card


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KIZUNA_CONFIG", raising=False)


def test_a_charx_card_becomes_a_persona_with_its_icon(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card = seraphina()
    card["spec"], card["spec_version"] = "chara_card_v3", "3.0"
    icon = png()
    card["data"]["assets"] = [
        {"type": "background", "uri": "embeded://assets/other/bg.png", "name": "bg", "ext": "png"},
        {
            "type": "icon",
            "uri": "embeded://assets/icon/images/main.png",
            "name": "main",
            "ext": "png",
        },
    ]
    files = {"card.json": encode(card), "assets/icon/images/main.png": icon}
    (tmp_path / "sera.charx").write_bytes(charx(files | {"assets/other/bg.png": b"not a png"}))
    assert main(["persona", "import", "sera.charx"]) == 0
    persona = load_persona(tmp_path / "personas" / "seraphina.toml")
    assert persona.identity.name == "Seraphina"
    assert (tmp_path / "personas" / "assets" / "seraphina" / "NEUTRAL.png").read_bytes() == icon
    capsys.readouterr()
    for name, raw, said in (
        ("bare.charx", charx({"notes.txt": b"hi"}), "a CHARX archive without card.json"),
        (
            "broken.charx",
            b"PK\x03\x04 and nothing else",
            "not a readable CHARX archive (a damaged or unsupported zip)",
        ),
        (
            "latin.charx",
            charx({"card.json": "café".encode("latin-1")}),
            "its card.json is not UTF-8 text",
        ),
    ):
        (tmp_path / name).write_bytes(raw)
        assert main(["persona", "import", name]) == 2
        assert capsys.readouterr().err == f"{name}: {said}\n"


def test_a_png_card_becomes_a_persona_with_its_picture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = png(text_chunk("chara", b64(seraphina())))
    (tmp_path / "sera.png").write_bytes(raw)
    assert main(["persona", "import", "sera.png"]) == 0
    written = tmp_path / "personas" / "seraphina.toml"
    assert capsys.readouterr().out.startswith(f"{Path('personas') / 'seraphina.toml'}")
    persona = load_persona(written)
    assert persona.identity.name == "Seraphina" and persona.identity.language == "en"
    assert persona.identity.personality == "gentle, protective"
    assert persona.card.scenario == "{{user}} wakes up in {{char}}'s glade, hurt."
    assert [e.keys for e in persona.lorebook.entries] == [["glade"], ["Eldoria"], ["wolf"]]
    assert (tmp_path / "personas" / "assets" / "seraphina" / "NEUTRAL.png").read_bytes() == raw
    text = written.read_text(encoding="utf-8")
    assert "# Creator's notes:\n#   Works best with a warm model.\n#   Say hi to <BOT>." in text
    # Usable by name from ./personas: the library finds it.
    assert main(["persona", "list"]) == 0
    assert "seraphina\t" in capsys.readouterr().out


def test_the_prompt_fills_placeholders_and_brings_lore_by_keyword(tmp_path: Path) -> None:
    path = tmp_path / "seraphina.toml"
    path.write_text(persona_toml(cards.parse_card(json.dumps(seraphina()).encode(), "s")))
    persona = load_persona(path)

    def prompt(*said: str, recap: str = "") -> list[str]:
        turns = [Turn("user", "Tom", text, NOW) for text in said]
        built = build_chat_prompt(
            persona, turns, {}, user_name="Tom", group=False, now=NOW, budget=8000, recap=recap
        )
        return [m.content for m in built.messages]

    system, note, *rest = prompt("hello")
    assert note.startswith("It is now")  # the turn's own note, before the newest turn
    assert system.startswith("Write Seraphina's next reply in a slow, kind voice.\n")
    assert "Scenario: Tom wakes up in Seraphina's glade, hurt." in system
    assert "Tom: Where am I?\nSeraphina: Somewhere safe, Tom." in system
    assert "{{" not in system and "<USER>" not in system
    assert f"{GREETING_HEADING}\n*Seraphina kneels beside you.* Easy now, Tom." in system
    assert rest == ["hello", "Stay in character as Seraphina."]  # post-history comes last
    # Lore: the constant entry always; "glade" only while it is among the last 2 messages.
    assert f"{LORE_HEADING}\n- Eldoria lies in ruins to the north." in system
    assert "hides from all but the wounded" not in system
    # (brought up by the turns: in the note before the newest turn)
    assert "hides from all but the wounded" in prompt("is this the glade?")[1]
    assert "hides from all but the wounded" not in "\n".join(prompt("the glade?", "hm", "ok"))
    # Selective and case-sensitive: "wolf" needs "night" too.
    assert "fears the wolves" not in "\n".join(prompt("a wolf!"))
    assert "Seraphina fears the wolves" in "\n".join(prompt("a wolf at night!"))
    assert "fears the wolves" not in "\n".join(prompt("a WOLF at night!"))
    # After the first conversation the greeting is history, not news.
    assert GREETING_HEADING not in "\n".join(prompt("hi again", recap="They met in the glade."))


def test_export_gives_back_everything_the_card_had(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    v3 = seraphina()
    v3["spec"], v3["spec_version"] = "chara_card_v3", "3.0"
    v3["data"] |= {
        "nickname": "Sera",
        "source": ["https://example.org/sera"],
        "group_only_greetings": ["*She waves at everyone.*"],
        "creation_date": 1700000000,
        "creator_notes_multilingual": {"fr": "Bonjour"},
    }
    (tmp_path / "sera.json").write_text(json.dumps(v3), encoding="utf-8")
    assert main(["persona", "import", "sera.json"]) == 0
    assert main(["persona", "export", "seraphina", "--out", "back.json"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "back.json"
    exported = json.loads((tmp_path / "back.json").read_text(encoding="utf-8"))
    assert exported["spec"] == "chara_card_v2"
    back = cards.read_card(tmp_path / "back.json")
    original = cards.parse_card(json.dumps(v3).encode(), "v3")
    for name in (
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
        "extra",
        "nickname",
        "source",
        "group_only_greetings",
        "creation_date",
        "creator_notes_multilingual",
    ):
        assert getattr(back, name) == getattr(original, name), name
    assert back.character_book is not None and original.character_book is not None
    assert back.character_book.extensions == {"world": "glade"}
    for mine, theirs in zip(
        back.character_book.entries, original.character_book.entries, strict=True
    ):
        assert (mine.keys, mine.content, mine.extensions, mine.id, mine.comment) == (
            theirs.keys,
            theirs.content,
            theirs.extensions,
            theirs.id,
            theirs.comment,
        )
        assert (mine.selective, mine.constant, mine.case_sensitive, mine.insertion_order) == (
            theirs.selective,
            theirs.constant,
            theirs.case_sensitive,
            theirs.insertion_order,
        )


def test_a_persona_of_ours_exports_as_a_card(tmp_path: Path) -> None:
    assert main(["persona", "export", "miao"]) == 0
    card = cards.read_card(tmp_path / "miao.card.json")
    miao = load_persona(Path(__file__).resolve().parent.parent / "personas" / "miao.toml")
    assert card.name == "喵" and card.nickname == "Miao"
    assert miao.identity.personality.strip() in (card.personality, card.description)


@pytest.mark.parametrize(
    ("name", "raw", "problem"),
    [
        ("bad.png", b"\x89PNG\r\n\x1a\nnonsense", "truncated"),
        ("plain.png", png(), "no character card"),
        ("bad64.png", png(text_chunk("chara", b"!!not base64!!")), "base64"),
        ("nojson.json", b"{not json", "not valid JSON"),
        ("noname.json", json.dumps(v2(name="")).encode(), "data.name"),
    ],
)
def test_a_malformed_card_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, raw: bytes, problem: str
) -> None:
    (tmp_path / name).write_bytes(raw)
    assert main(["persona", "import", name]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(name) and problem in line
    assert not (tmp_path / "personas").exists()


def test_an_existing_persona_is_replaced_only_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "sera.json").write_text(json.dumps(seraphina()), encoding="utf-8")
    assert main(["persona", "import", "sera.json", "--out", "mine"]) == 0
    assert main(["persona", "import", "sera.json", "--out", "mine"]) == 2
    assert "--force" in capsys.readouterr().err
    assert main(["persona", "import", "sera.json", "--out", "mine", "--force"]) == 0
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["seraphina.toml"]


def test_names_and_languages() -> None:
    assert persona_key("Dr. Ada Vale") == "dr_ada_vale"
    assert persona_key("雪菜") == ""
    assert guess_language("雪菜是一个安静的女孩") == "zh"
    assert guess_language("雪菜はしずかな女の子です") == "ja"
    assert guess_language("설아는 조용한 소녀입니다") == "ko"
    assert guess_language("A quiet girl.") == "en"
    chinese = cards.Card(name="雪菜", description="雪菜是一个安静的女孩，喜欢下雨天。")
    path = Path("card.toml")
    path.write_text(persona_toml(chinese), encoding="utf-8")
    persona = load_persona(path)
    assert persona.identity.language == "zh" and persona.identity.name == "雪菜"
    assert persona_card(persona).description == "雪菜是一个安静的女孩，喜欢下雨天。"
