"""The platform registry (bot.platforms): each adapter declares its platform, the bot asks the
registry, and neither bot/ (its configuration included) nor the host and the doctor name a
platform themselves."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from adapters.console import PLATFORM as CONSOLE
from adapters.kinds import MODULES, RULES, kind_of
from adapters.web.server import PLATFORM as WEB
from bot.config import BotRules
from bot.platforms import Platform, Platforms
from tests.fakes.factories import PLATFORMS

ROOT = Path(__file__).resolve().parents[1]


def _named(path: Path, names: set[str]) -> list[str]:
    """Each string in `path`'s code (not a docstring) that is a platform's name, or starts a
    room with one ("discord:dm:...")."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in docstrings:
                continue
            word = node.value.split(":", 1)[0]
            if word in names:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    return found


def test_bot_names_no_platform_outside_the_registry() -> None:
    names = {p.name for p in PLATFORMS}
    checked = [*sorted((ROOT / "bot").rglob("*.py")), ROOT / "adapters" / "command" / "host.py"]
    checked.append(ROOT / "adapters" / "command" / "doctor.py")
    found = [line for path in checked for line in _named(path, names)]
    assert found == []


def test_every_kind_declares_its_platform() -> None:
    assert list(RULES) == list(MODULES)  # and what its [[bots]] tables may hold
    with pytest.raises(ValueError, match=r"not keys of \[\[bots\]\]: gild_ids"):
        BotRules(keys=(("gild_ids",),))
    for name in MODULES:
        kind = kind_of(name)
        assert kind.platform.name == name
        assert PLATFORMS[name] is kind.platform


def test_the_registry_finds_a_platform_by_name_and_its_rooms() -> None:
    platforms = Platforms([CONSOLE, WEB])
    assert platforms["web"] is WEB and "telegram" not in platforms
    with pytest.raises(KeyError):
        platforms["telegram"]
    assert platforms.places() == {"console"}  # the page's private chats are the console's
    with pytest.raises(ValueError, match="two descriptions"):
        Platforms([WEB, Platform("web", limit=1)])
    with pytest.raises(ValueError, match="not a platform name"):
        Platform("a:b", limit=1)
