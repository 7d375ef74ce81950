"""Typed TOML files: read a file with tomllib into dataclasses, and on any mistake raise one
`TomlError` that names the file, the key and the line.

tomllib reports no positions for keys, and the conversion libraries (cattrs, msgspec) report
paths but not lines, so the converter is ours: it knows the key path of every value it checks,
and `locate` finds that path's line in the source text.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import tomllib
import types
import unicodedata
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

from memory.errors import KizunaError

__all__ = [
    "TomlError",
    "dotted",
    "key_at",
    "keys_of",
    "load",
    "loads",
    "locate",
    "one_line",
    "required",
]

T = TypeVar("T")
KeyPath = tuple[str | int, ...]


class TomlError(KizunaError):
    """A malformed file: `str(error)` is the one line a user sees."""

    def __init__(self, file: str, key: str, line: int | None, message: str) -> None:
        self.file, self.key, self.line, self.message = file, key, line, message
        where = f"{file}:{line}" if line else file
        text = f"{where}: {key}: {message}" if key else f"{where}: {message}"
        super().__init__(one_line(text))


def one_line(text: str) -> str:
    """`text` with line breaks, control characters and lone surrogates escaped ("\\n",
    "\\x00", "\\ud800"): a key or value quoted in a message must not break it in two."""
    return "".join(ascii(c)[1:-1] if unicodedata.category(c) in _ESCAPED else c for c in text)


_ESCAPED = frozenset({"Cc", "Zl", "Zp", "Cs"})


class _Invalid(Exception):
    def __init__(self, path: KeyPath, message: str) -> None:
        super().__init__(message)
        self.path, self.message = path, message


def load(path: Path, cls: type[T]) -> T:
    """Read `path` into an instance of the dataclass `cls`, or raise `TomlError`."""
    try:
        text = path.read_text(encoding="utf-8-sig")  # the BOM Windows Notepad may write
    except OSError as e:
        raise TomlError(str(path), "", None, f"cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise TomlError(str(path), "", None, "not UTF-8 text") from None
    return loads(text, cls, str(path))


def loads(text: str, cls: type[T], file: str) -> T:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        # Python 3.11 carries the position only in the message: "... (at line 7, column 3)".
        msg = str(e)
        m = re.search(r"\(at line (\d+), column \d+\)$", msg)
        line = int(m.group(1)) if m else None
        reason = msg[: m.start()].strip() if m else msg
        key = key_at(text, line) if line else ""
        raise TomlError(file, key, line, f"TOML syntax error: {reason}") from None
    except RecursionError:  # tomllib recurses per nested array or inline table
        raise TomlError(file, "", None, "TOML syntax error: nested too deeply") from None
    try:
        value: T = _convert(data, cls, ())
        return value
    except _Invalid as e:
        key = dotted(e.path)
        raise TomlError(file, key, locate(text, e.path), e.message) from None


def dotted(path: Sequence[str | int]) -> str:
    """A key path as a person would write it: "bots[1].name"; a key that is not bare is
    quoted as in TOML ("providers.\"my provider\"", "\"\"" for the empty key)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
            continue
        name = part if _BARE.fullmatch(part) else json.dumps(part, ensure_ascii=False)
        out += f".{name}" if out else name
    return out


_BARE = re.compile(r"[A-Za-z0-9_-]+")


def _describe(value: Any) -> str:
    names = {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "a table",
    }
    return names.get(type(value), type(value).__name__)


def _convert(value: Any, tp: Any, path: KeyPath) -> Any:
    origin = get_origin(tp)
    if tp is Any or tp is object:
        return value
    if origin in (Union, types.UnionType):
        options = get_args(tp)
        if value is None and type(None) in options:
            return None
        errors: list[_Invalid] = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _convert(value, option, path)
            except _Invalid as e:
                errors.append(e)
        # Report the deepest failure: it names the most precise key.
        raise max(errors, key=lambda e: len(e.path))
    if origin is Literal:
        allowed = get_args(tp)
        if value not in allowed:
            choices = ", ".join(repr(a) for a in allowed)
            raise _Invalid(path, f"expected one of {choices}, got {value!r}")
        return value
    if origin is list or tp is list:
        (item_tp,) = get_args(tp) or (Any,)
        if not isinstance(value, list):
            raise _Invalid(path, f"expected an array, got {_describe(value)}")
        return [_convert(v, item_tp, (*path, i)) for i, v in enumerate(value)]
    if origin is dict or tp is dict:
        _, item_tp = get_args(tp) or (str, Any)
        if not isinstance(value, dict):
            raise _Invalid(path, f"expected a table, got {_describe(value)}")
        return {k: _convert(v, item_tp, (*path, k)) for k, v in value.items()}
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _convert_dataclass(value, tp, path)
    if tp is bool:
        if not isinstance(value, bool):
            raise _Invalid(path, f"expected true or false, got {_describe(value)}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _Invalid(path, f"expected an integer, got {_describe(value)}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _Invalid(path, f"expected a number, got {_describe(value)}")
        if not math.isfinite(value):  # TOML allows inf and nan; no setting wants them
            raise _Invalid(path, f"expected a finite number, got {value}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise _Invalid(path, f"expected a string, got {_describe(value)}")
        return value
    raise TypeError(f"unsupported type in a TOML schema: {tp!r}")


def keys_of(cls: type) -> dict[str, tuple[dataclasses.Field[Any], Any]]:
    """The keys a table read into the dataclass `cls` may have: each field `__init__` takes,
    but those marked `metadata={"toml": False}`, with its resolved type hint. A field marked
    `metadata={"ids": True}` (a list of strings) also takes numbers, as strings. A field marked
    `metadata={"spread": True}` (a dataclass) has no key: its keys are this table's own."""
    hints = get_type_hints(cls)
    out: dict[str, tuple[dataclasses.Field[Any], Any]] = {}
    for f in dataclasses.fields(cls):
        if f.metadata.get("spread"):
            out.update(keys_of(hints[f.name]))
        elif f.init and f.metadata.get("toml", True):
            out[f.name] = (f, hints[f.name])
    return out


def _spread(cls: type) -> dict[str, Any]:
    """The fields of `cls` marked `metadata={"spread": True}`, with their dataclasses."""
    hints = get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls) if f.metadata.get("spread")}


def required(f: dataclasses.Field[Any]) -> bool:
    """Whether a file must give this field's key: it has no default."""
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


def _ids(value: Any, f: dataclasses.Field[Any]) -> Any:
    """A field marked `metadata={"ids": True}` holds platform ids as strings; a file may
    write them as numbers too (Discord's and Telegram's ids are numbers)."""
    if not f.metadata.get("ids") or not isinstance(value, list):
        return value
    return [str(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in value]


def _convert_dataclass(value: Any, cls: type, path: KeyPath) -> Any:
    if not isinstance(value, dict):
        raise _Invalid(path, f"expected a table, got {_describe(value)}")
    keys = keys_of(cls)
    for key in value:
        if key not in keys:
            known = ", ".join(sorted(keys)) or "none"
            raise _Invalid((*path, key), f"unknown key (known keys: {known})")
    kwargs = {}
    spread = _spread(cls)
    theirs = {k for inner in spread.values() for k in keys_of(inner)}
    for name, (f, tp) in keys.items():
        if name in theirs:
            continue
        if name in value:
            kwargs[name] = _convert(_ids(value[name], f), tp, (*path, name))
        elif required(f):
            raise _Invalid((*path, name), "missing required key")
    for name, inner in spread.items():  # read from this same table
        part = {k: v for k, v in value.items() if k in keys_of(inner)}
        kwargs[name] = _convert_dataclass(part, inner, path)
    try:
        return cls(**kwargs)
    except ValueError as e:  # a __post_init__ check; its message starts with the key it is about
        message = str(e)
        named = _key_path(message.split(" ", 1)[0])
        # "memory.flashback_rate" raised inside [memory] names the key from the top: skip
        # the parts that lead down to this table ("voice.voice" inside [voice] too, whose
        # key has the table's name).
        lead = next((n for n in range(len(named) - 1, 0, -1) if path[-n:] == named[:n]), 0)
        named = named[lead:]
        while named and named[0] not in keys:
            named = named[1:]
        raise _Invalid((*path, *named), message) from None


def _key_path(text: str) -> KeyPath:
    """("state", 1, "name") from "state[1].name"; () if `text` is not a key."""
    if not re.fullmatch(r"[A-Za-z_]\w*(\[\d+\])*(\.[A-Za-z_]\w*(\[\d+\])*)*", text):
        return ()
    return tuple(int(p) if p.isdigit() else p for p in re.findall(r"\d+|[A-Za-z_]\w*", text))


_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_PART = r"(?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')"
_KEY = re.compile(rf"^\s*({_PART}(?:\s*\.\s*{_PART})*)\s*=")


def _split_key(key: str) -> list[str]:
    parts = re.findall(r"\"[^\"]*\"|'[^']*'|[A-Za-z0-9_-]+", key)
    return [p[1:-1] if p[:1] in "\"'" else p for p in parts]


def _defined(text: str) -> Iterator[tuple[int, list[str | int], bool]]:
    """(line, key path, is a header) for every [table], [[array]] header and key = value line
    of `text`.

    Follows headers, array indices and dotted keys, and skips multi-line strings; good enough
    to point a person at the right line, which is all it is for.
    """
    table: list[str | int] = []
    counts: dict[tuple[str | int, ...], int] = {}
    in_multiline = False
    for number, line in enumerate(text.splitlines(), start=1):
        if in_multiline:
            if line.count('"""') % 2 == 1 or line.count("'''") % 2 == 1:
                in_multiline = False
            continue
        header = _HEADER.match(line)
        if header:
            keys: list[str | int] = list(_split_key(header.group(2)))
            if header.group(1) == "[[":
                base = tuple(keys)
                counts[base] = counts.get(base, -1) + 1
                keys.append(counts[base])
            table = keys
            yield number, table, True
            continue
        key = _KEY.match(line)
        if key:
            rest = line[key.end() :]
            if rest.count('"""') % 2 == 1 or rest.count("'''") % 2 == 1:
                in_multiline = True
            yield number, [*table, *_split_key(key.group(1))], False


def locate(text: str, path: Sequence[str | int]) -> int | None:
    """The 1-based line that defines `path`, or its nearest defined parent, in TOML `text`."""
    target = list(path)
    best_line, best_len = None, 0
    for number, found, _ in _defined(text):
        n = _common_prefix(found, target)
        if n == len(found) and n > best_len:
            best_line, best_len = number, n
    return best_line


def key_at(text: str, line: int) -> str:
    """The dotted key defined on `line`, else the table it is in, for naming a syntax error."""
    table: list[str | int] = []
    for number, found, is_header in _defined(text):
        if number == line:
            return dotted(tuple(found))
        if number > line:
            break
        if is_header:
            table = found
    return dotted(tuple(table))


def _common_prefix(a: Sequence[str | int], b: Sequence[str | int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
