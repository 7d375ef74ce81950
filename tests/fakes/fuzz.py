"""Hypothesis building blocks for the fuzz tests (tests/fuzz/): one settings policy, nasty
text, a model that answers with what it was told, mutations of TOML files and the check of a
TOML error.

Every property runs a bounded, derandomized number of examples so CI is quick and
reproducible. For a longer hunt:

    KIZUNA_FUZZ_EXAMPLES=2000 pytest tests/fuzz        # every property, 2000 examples
    KIZUNA_FUZZ_RANDOM=1 pytest tests/fuzz             # new random examples each run
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from bot import config
from bot.chat_model import Message
from bot.persona import file as persona
from bot.tomlfile import TomlError

__all__ = [
    "NASTY_PIECES",
    "check_toml_error",
    "echo",
    "fuzzed",
    "mutated_toml",
    "nasty_text",
    "toml_value",
]


def fuzzed(examples: int) -> settings:
    """Settings for one property: `examples` by default (KIZUNA_FUZZ_EXAMPLES overrides),
    no deadline (the box is shared and slow), derandomized unless KIZUNA_FUZZ_RANDOM is set."""
    override = os.environ.get("KIZUNA_FUZZ_EXAMPLES", "").strip()
    return settings(
        max_examples=int(override) if override else examples,
        deadline=None,
        derandomize=not os.environ.get("KIZUNA_FUZZ_RANDOM"),
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.function_scoped_fixture,
        ],
        print_blob=True,
    )


# Pieces real users (and broken clients) send: emoji and ZWJ sequences, right-to-left and mixed
# scripts, invisible and control characters, lone surrogates (what undecodable bytes become
# under surrogateescape, or a JSON "\ud800" escape), date words in odd shapes.
NASTY_PIECES = [
    "",
    " ",
    "\t",
    "\n",
    "\r\n",
    "\r",
    "\x00",
    "\x07",
    "\x1b[31m",
    "\x7f",
    "\x85",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\ufffd",
    "\ufffe",
    "\uffff",
    "\ud800",
    "\udcff",
    "\udfff",
    "\U0010ffff",
    "\u200b",
    "\u200c",
    "\u200d",
    "\u2060",
    "\u202e",
    "\u202d",
    "\u2066",
    "\u0301\u0301\u0301",
    "😀",
    "👍🏽",
    "👩‍👩‍👧‍👦",
    "🏳️‍🌈",
    "🇨🇳🇺🇸",
    "❤️",
    "مرحبا بالعالم",
    "שלום עולם",
    "Привет, мир",
    "こんにちは世界",
    "안녕하세요",
    "你好，世界",
    "喵喵喵",
    "İstanbul",
    "ß",
    "ﬁ",
    "Ⅻ",
    "٣",
    "\U0001d7d7",  # a mathematical bold 9
    "²",
    "yesterday",
    "today",
    "last Monday",
    "3 days ago",
    "3000000 days ago",
    "9999 weeks ago",
    "year 99999999",
    "May 4th",
    "Feb 30",
    "February 29, 1900",
    "2024-02-30",
    "9999-12-31",
    "0001-01-01",
    "上周三",
    "上上周日",
    "下下个月31号",
    "公元前221年",
    "二〇二四年九月三日",
    "9月31日",
    "13月1日",
    "三千天前",
    "9999天前",
    "大后天",
    "/remember",
    "/forget %",
    "'; DROP TABLE memories; --",
    '" OR 1=1 --',
    "NEAR(a b)",
    '"unterminated',
    "a* OR b^ AND -c:",
    ".*+?[](){}|\\^$",
    "{{char}}",
    "<user>",
    "[HAPPY]",
    "%s%n%x",
    "${HOME}",
    "\\u0000",
    "ℵ₀",
]


def nasty_text(*, min_size: int = 0, max_size: int = 40) -> st.SearchStrategy[str]:
    """Text made of the nasty pieces, any code points (surrogates included), and repeats."""
    piece = st.one_of(
        st.sampled_from(NASTY_PIECES),
        st.text(st.characters(codec=None, exclude_categories=()), max_size=8),
        st.text(max_size=12),
    )
    joined = st.lists(piece, min_size=min_size, max_size=max_size).map("".join)
    repeated = st.tuples(st.sampled_from(NASTY_PIECES[1:]), st.integers(2, 5000)).map(
        lambda pair: pair[0] * pair[1]
    )
    return st.one_of(joined, repeated)


def echo(messages: Sequence[Message]) -> str:
    """A chat model's answer for the fuzz: the last message said back, with a lone surrogate
    after it, as a model answering a JSON "\\udcff" escape gives."""
    return f"[NEUTRAL] {messages[-1].content[-200:]} \udcff"


# --- TOML --------------------------------------------------------------------------------------


def check_toml_error(error: TomlError, path: Path, text: str) -> None:
    """`error` is the one line a user sees: the file, the line within it, the key."""
    message = str(error)
    assert "\n" not in message and "\r" not in message, message
    assert message.startswith(str(path)), message
    assert error.message and "Traceback" not in message
    lines = text.splitlines()
    if error.line is not None:
        assert 1 <= error.line <= max(len(lines), 1), (error.line, message)
        assert message.startswith(f"{path}:{error.line}: ")
    if not error.message.startswith(("TOML syntax error", "not UTF-8", "cannot read")):
        assert error.key, message  # a wrong value always names its key


def _toml_string(text: str) -> str:
    # A JSON string is a TOML basic string, but for DEL, which TOML wants escaped.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _render(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_render(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml_string(k)} = {_render(v)}" for k, v in value.items()) + "}"
    return str(value)  # raw TOML text (dates, broken values)


_RAW_VALUES = [
    "1979-05-27T07:32:00Z",
    "1979-05-27",
    "07:32:00",
    "0x7fffffff",
    "0o777",
    "0b101",
    "1_000_000",
    "99999999999999999999999999999999",
    "-9223372036854775809",
    "1e400",
    "-0.0",
    "+inf",
    "'literal'",
    "'''multi\nline'''",
    '"""multi\nline"""',
    '"unterminated',
    "[1, 2,",
    "{a = 1",
    "",
    "nope",
    '"\\ud800"',
    '"\\x00"',
    "[" * 50 + "]" * 50,
]


def toml_value() -> st.SearchStrategy[str]:
    """A TOML value as text: right and wrong types, edge numbers, odd strings, broken syntax."""
    scalars = st.one_of(
        st.booleans(),
        st.integers(),
        st.integers(-(2**63), 2**63 - 1),
        st.sampled_from([0, -1, 1, 65535, 65536, 2**31, 2**63 - 1, -(2**63)]),
        st.floats(allow_nan=True, allow_infinity=True),
        nasty_text(max_size=4),
        st.sampled_from(
            [
                "sqlite",
                "postgres",
                "discord",
                "telegram",
                "web",
                "hash",
                "openai",
                "zhipu",
                "offline",
                "local",
                "model",
                "auto",
                "off",
                "user",
                "channel",
                "ebbinghaus",
                "never",
                "Asia/Shanghai",
                "America",
                "Europe",
                "UTC/",
                "../../etc/passwd",
                "x" * 300,
                "~nosuchuser/personas",
                "~",
                "https://example.invalid",
                "127.0.0.1:²",
                "host:" + "9" * 5000,
                "NEUTRAL",
                "once",
                "every_turn",
                "recall_memory",
            ]
        ),
    )
    values = st.recursive(
        scalars.map(_render),
        lambda inner: st.one_of(
            st.lists(inner, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]"),
            st.dictionaries(st.sampled_from(_KEYS), inner, max_size=3).map(
                lambda d: "{" + ", ".join(f"{k} = {v}" for k, v in d.items()) + "}"
            ),
        ),
        max_leaves=8,
    )
    return st.one_of(values, st.sampled_from(_RAW_VALUES))


# Keys of the configuration and persona schemas (every dataclass field), and some that are not.
_KEYS = [
    *sorted(
        {
            f.name
            for module in (config, persona)
            for cls in vars(module).values()
            if isinstance(cls, type) and dataclasses.is_dataclass(cls)
            for f in dataclasses.fields(cls)
        }
    ),
    '"quoted key"',
    "'literal key'",
    '"é"',
    '"line\\nbreak"',
    '"\\u2028"',
    "a.b.c",
    "unknown_key",
    "ключ",
    '""',
]
_TABLES = [
    "[models]",
    "[models.providers.x]",
    "[models.chat]",
    "[engine]",
    "[memory]",
    "[access]",
    "[tools]",
    "[web]",
    "[[bots]]",
    "[identity]",
    "[user]",
    "[emotions]",
    "[card]",
    "[lorebook]",
    "[[lorebook.entries]]",
    "[[state]]",
    "[[tools]]",
    "[identity.name]",
    "[a.b]",
    "[",
    "[[]]",
    "[engine",
]


@st.composite
def mutated_toml(draw: st.DrawFn, seeds: list[str]) -> str:
    """A seed TOML file after a few random edits: a key set to another value, commented lines
    uncommented, lines deleted, duplicated or added, tables inserted, characters inserted or
    cut. Most results are still TOML with wrong types, values or keys; some are broken."""
    lines = draw(st.sampled_from(seeds)).splitlines()
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, max(len(lines) - 1, 0)))
        edit = draw(
            st.sampled_from(
                ["set", "set", "set", "uncomment", "delete", "duplicate", "add", "table", "chars"]
            )
        )
        line = lines[at] if lines else ""
        if edit == "set" and "=" in line and not line.lstrip().startswith("#"):
            key = line.split("=", 1)[0]
            lines[at] = f"{key}= {draw(toml_value())}"
        elif edit == "uncomment" and line.lstrip().startswith("#"):
            lines[at] = line.lstrip().removeprefix("#").removeprefix(" ")
        elif edit == "delete" and lines:
            del lines[at]
        elif edit == "duplicate" and lines:
            lines.insert(at, line)
        elif edit == "add":
            lines.insert(at, f"{draw(st.sampled_from(_KEYS))} = {draw(toml_value())}")
        elif edit == "table":
            lines.insert(at, draw(st.sampled_from(_TABLES)))
        else:
            col = draw(st.integers(0, len(line)))
            cut = draw(st.integers(0, 3))
            lines[at : at + 1] = [line[:col] + draw(nasty_text(max_size=3)) + line[col + cut :]]
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\r\n"]))
