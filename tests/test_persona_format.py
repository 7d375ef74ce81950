"""The persona format's reference: every key the loader accepts is described, the description of
none that it does not, and docs/personas.md is what the code generates."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest

from bot.persona import reference as persona_format
from bot.persona.file import Card, Emotions, MemoryPolicy, Persona, UserAddress
from bot.persona.reference import DOCS, Key, keys, reference, updated
from bot.persona.toolspec import CustomTool, McpServer
from bot.tomlfile import loads

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "personas.md"
SHIPPED = sorted((ROOT / "personas").glob("*.toml"))
KEYS = {key.path: key for key in keys()}


def test_every_key_has_a_description_and_every_description_a_key() -> None:
    assert sorted(set(KEYS) - set(DOCS)) == [], "keys with no description in DOCS"
    assert sorted(set(DOCS) - set(KEYS)) == [], "descriptions of keys that do not exist"


def test_descriptions_are_one_short_sentence() -> None:
    for path, text in DOCS.items():
        assert "\n" not in text and len(text) <= 200, path
        assert text[:1].isupper() or text[:1] == '"', path
        assert text.endswith("."), path


def test_keys_a_description_names_exist() -> None:
    """A key in backticks is a key of the same table or a whole path."""
    for path, text in DOCS.items():
        table = KEYS[path].table if path in KEYS else ""
        for name in re.findall(r"`([a-z_][a-z0-9_.]*)`", text):
            sibling = f"{table}.{name}" if table else name
            assert name in KEYS or sibling in KEYS, f"{path} names `{name}`"


def test_the_walk_finds_what_the_loader_reads() -> None:
    assert KEYS["identity"] == Key("identity", "table", True, "", "", "identity", "table")
    assert KEYS["identity.name"].required and KEYS["identity.name"].type == "string"
    assert KEYS["memory.half_life.days"].default == "90.0"
    assert KEYS["memory.scope"].type == 'one of "user", "channel"'
    assert KEYS["state"].opens == "array" and KEYS["state[].update"].table == "state[]"
    assert KEYS["lorebook.entries[].keys"].type == "array of strings"
    assert KEYS["tools"].type == "array of strings"
    assert KEYS["mcp_servers[].env"].type == "array of strings"
    assert KEYS["memory.stochastic.importance_1"].type == "table of floats"
    assert "key" not in KEYS and "path" not in KEYS  # set by the loader, not keys


@dataclass(slots=True)
class _Inner:
    count: int = 1


@dataclass(slots=True)
class _Outer:
    inner: _Inner | None = None
    limit: int | None = None
    modes: list[Literal["a", "b"]] = field(default_factory=list)
    weights: dict[str, float] = field(default_factory=lambda: {"x": 0.5})


def test_optional_tables_and_no_defaults() -> None:
    assert list(keys(_Outer)) == [
        Key("inner", "table", False, "", "", "inner", "table"),
        Key("inner.count", "integer", False, "1", "inner", "count", ""),
        Key("limit", "integer", False, "", "", "limit", ""),
        Key("modes", 'array of "a", "b"', False, "[]", "", "modes", ""),
        Key("weights", "table of floats", False, "{ x = 0.5 }", "", "weights", ""),
    ]


_SAMPLES = {
    "string": '"x"',
    "array of strings": '["x"]',
    "integer": "1",
    "float": "1.0",
    "boolean": "true",
}


# Keys whose default cannot stand alone in their table: a tool needs a module (or an
# installed tool of its name), a server a command (or a url).
_NOT_ALONE = {"custom_tools[].module": '"pkg.mod:tool"', "mcp_servers[].command": '"mcp-x"'}


def _header(table: str) -> str:
    return f"[[{table[:-2]}]]" if table.endswith("[]") else f"[{table}]"


def test_a_file_of_every_key_at_its_default_loads_as_the_defaults() -> None:
    """Each key written with its default (a required one with a sample) is read by the loader
    as that default: the walk's paths, types and defaults are the loader's."""
    tables: dict[str, list[str]] = {}
    for key in keys():
        tables.setdefault(key.table, [])
        if not key.opens and (key.default or key.required or key.path in _NOT_ALONE):
            value = _NOT_ALONE.get(key.path) or key.default or _SAMPLES[key.type]
            tables[key.table].append(f"{key.name} = {value}")
    text = "\n".join(
        "\n".join(([_header(table)] if table else []) + lines) for table, lines in tables.items()
    )
    persona = loads(text, Persona, "every.toml")
    assert (persona.user, persona.emotions, persona.card) == (UserAddress(), Emotions(), Card())
    assert persona.memory == MemoryPolicy()
    assert len(persona.state) == 1 and persona.state[0].update == "every_turn"
    assert len(persona.lorebook.entries) == 1 and persona.lorebook.entries[0].priority == 0
    assert persona.custom_tools == [CustomTool("x", module="pkg.mod:tool")]
    assert persona.mcp_servers == [McpServer("x", ["x"], command="mcp-x")]


def test_docs_personas_md_is_up_to_date() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    assert text == updated(text), "run: python -m bot.persona.reference docs/personas.md"


def test_the_command_prints_and_rewrites(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert persona_format.main([]) == 0
    assert capsys.readouterr().out == reference()
    guide = tmp_path / "personas.md"
    guide.write_text(f"# Intro\n\n{persona_format.MARKER}\nstale\n", encoding="utf-8")
    assert persona_format.main([str(guide)]) == 0
    assert (
        guide.read_text(encoding="utf-8") == f"# Intro\n\n{persona_format.MARKER}\n\n{reference()}"
    )
    with pytest.raises(ValueError, match="no marker"):
        updated("# Intro\n")


def test_a_key_with_no_description_stops_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(DOCS, "memory.half_life.days")
    with pytest.raises(ValueError, match=r"memory\.half_life\.days"):
        reference()


def _used(data: dict[str, Any], table: str = "") -> list[str]:
    """The key paths of a parsed persona file, down through its tables and arrays of tables."""
    out = []
    for name, value in data.items():
        path = f"{table}.{name}" if table else name
        key = KEYS.get(path)
        if key is not None and key.opens == "table":
            out += _used(value, path)
        elif key is not None and key.opens == "array":
            for item in value:
                out += _used(item, f"{path}[]")
        else:
            out.append(path)
    return out


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_personas_use_only_documented_keys(path: Path) -> None:
    used = _used(tomllib.loads(path.read_text(encoding="utf-8")))
    assert used
    assert [p for p in used if p not in KEYS or p not in DOCS] == []


def test_monikais_commented_forgetting_parameters_are_the_keys_and_defaults() -> None:
    """monikai.toml shows every forgetting parameter with its default, commented out."""
    lines = (ROOT / "personas" / "monikai.toml").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("# [memory."))
    shown = "\n".join(line.removeprefix("# ") for line in lines[start:] if line.startswith("# "))
    memory = tomllib.loads(shown)["memory"]
    policies = {k.name for k in KEYS.values() if k.table == "memory" and k.opens}
    assert set(memory) == policies
    for policy, params in memory.items():
        documented = {k.name: k for k in KEYS.values() if k.table == f"memory.{policy}"}
        assert set(params) == set(documented), policy
        defaults = getattr(MemoryPolicy().params, policy)
        for name, value in params.items():
            assert value == getattr(defaults, name), f"memory.{policy}.{name}"
