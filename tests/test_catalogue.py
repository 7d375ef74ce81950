"""The catalogue of what the bot itself says: every sentence in English and Chinese with the
same blanks to fill, English for a language it lacks, and the persona's language chosen where
commands speak."""

from __future__ import annotations

import string
from pathlib import Path

import pytest

from bot import commands
from bot.access import NotAllowed
from bot.catalogue import MESSAGES, say
from tests.fakes.factories import make_event, make_persona, open_bot


def blanks(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


@pytest.mark.parametrize("key", sorted(MESSAGES))
def test_every_sentence_is_in_english_and_chinese_with_the_same_blanks(key: str) -> None:
    forms = MESSAGES[key]
    assert {"en", "zh"} <= set(forms)
    assert blanks(forms["zh"]) == blanks(forms["en"])


def test_a_language_without_the_sentence_gets_english() -> None:
    assert say("fr", "wiped_you", name="Pip") == "Wiped: Pip remembers nothing of you now."
    assert say("zh", "wiped_you", name="喵") == "已清除：喵已经忘了关于你的一切。"


async def test_a_chinese_persona_refuses_and_asks_in_chinese(tmp_path: Path) -> None:
    bot = await open_bot(
        tmp_path / "k.sqlite3", [make_persona("miao", name="喵", language="zh", scope="channel")]
    )
    try:
        member = make_event("", persona="miao", is_dm=False)
        with pytest.raises(NotAllowed, match="只有管理员可以修改"):
            await commands.wipe(bot.engine, member)
        admin = make_event("", persona="miao", is_dm=False, admin=True)
        assert "喵记得的关于这个频道的一切" in commands.wipe_question(bot.engine, admin)
        assert await commands.wipe(bot.engine, admin) == "已清除：喵已经忘了关于这个频道的一切。"
    finally:
        await bot.close()


def test_every_sentence_is_said_somewhere() -> None:
    """No dead sentences: each key is named in the code (those of commands, their options and
    buttons are made from the command table's names, checked in tests/test_commands.py)."""
    root = Path(__file__).parents[1]
    sources = "".join(
        path.read_text(encoding="utf-8")
        for part in ("adapters", "bot", "memory")
        for path in (root / part).rglob("*.py")
        if path.name != "catalogue.py"
    )
    made = ("help_", "option_", "button_")
    unsaid = [k for k in MESSAGES if not k.startswith(made) and f'"{k}"' not in sources]
    assert unsaid == []
