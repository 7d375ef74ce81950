"""The catalogue of what the bot itself says: every sentence in English and Chinese with the
same blanks to fill, English for a language it lacks, and the persona's language chosen where
commands speak."""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import pytest

from bot.access import NotAllowed
from bot.catalogue import MESSAGES, say
from bot.commands import conversation as conversation_commands
from bot.commands import memory as memory_commands
from bot.commands import table as commands
from bot.media.documents import DocumentError
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
            await conversation_commands.wipe(bot.services, member)
        admin = make_event("", persona="miao", is_dm=False, admin=True)
        assert "喵记得的关于这个频道的一切" in conversation_commands.wipe_question(
            bot.services, admin
        )
        assert (
            await conversation_commands.wipe(bot.services, admin)
            == "已清除：喵已经忘了关于这个频道的一切。"
        )
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


# Where what the bot says reaches a user: a literal English sentence handed to one of these
# is a sentence the catalogue does not have (a Chinese persona would say it in English).
USER_FACING = {"Answer", "Reply.build", "self._say", "DocumentError", "NotAllowed", "say"}
SPOKEN_BY_USERS = (
    "bot/commands/table.py",
    "bot/commands/services.py",
    "bot/commands/memory.py",
    "bot/commands/conversation.py",
    "bot/commands/contact.py",
    "bot/commands/groups.py",
    "bot/conversation/desk.py",
    "bot/media/documents.py",
    "bot/media/document_mode.py",
    "bot/front.py",
)
ENGLISH = re.compile(r"[A-Za-z]{2,}[ ,;:]+[A-Za-z]{2,}")


def _called(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return func.id if isinstance(func, ast.Name) else ""


def english_literals(source: str) -> list[str]:
    """Literal English text given to a user-facing call in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and _called(node) in USER_FACING:
            for arg in node.args:
                parts = arg.values if isinstance(arg, ast.JoinedStr) else [arg]
                for part in parts:
                    text = part.value if isinstance(part, ast.Constant) else None
                    if isinstance(text, str) and ENGLISH.search(text):
                        found.append(f"{node.lineno}: {text}")
    return found


def test_the_scan_finds_an_english_sentence_given_to_a_user() -> None:
    assert english_literals('Answer("pick a number from 1 to 0")') == [
        "1: pick a number from 1 to 0"
    ]
    assert english_literals('self._say(f"Saved; exported to {path}")') == ["1: Saved; exported to "]
    assert english_literals('Answer(call.say("intentions_none"))') == []


@pytest.mark.parametrize("module", [*SPOKEN_BY_USERS, "adapters/console.py", "bot/llm/offline.py"])
def test_no_literal_english_reaches_a_user_outside_the_catalogue(module: str) -> None:
    source = (Path(__file__).parents[1] / module).read_text(encoding="utf-8")
    assert english_literals(source) == []
    if module == "bot/llm/offline.py":  # the memories it writes: in the persona's language
        assert "told me" not in source and "talked with" not in source


async def test_a_chinese_persona_says_memory_lines_and_refusals_in_chinese(
    tmp_path: Path,
) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3", [make_persona("miao", name="喵", language="zh")])
    try:
        event = make_event("", persona="miao")
        await memory_commands.remember(bot.services, event, "我养了一只猫")
        listed = await commands.run(bot.services, event, "memories", "")
        assert listed is not None and listed.text.startswith("[刚刚，强度 ")
        cancel = await commands.run(bot.services, event, "intentions", "cancel 9")
        assert cancel is not None and "1 到 0" not in cancel.text
        assert cancel.text == say("zh", "intentions_none", name="喵")
        refusal = DocumentError("a.exe", "document_unsupported", suffix=".exe")
        assert refusal.said("zh").startswith("a.exe: 不支持 .exe 文件")
    finally:
        await bot.close()
