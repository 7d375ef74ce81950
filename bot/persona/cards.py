"""SillyTavern character cards: the data model (`Card`, its `Lorebook` of `LoreEntry`), reading
V1/V2/V3 cards from JSON and PNG files and V3's CHARX (a zip holding card.json), writing a
Character Card V2 JSON back, the `{{char}}` / `{{user}}` placeholders, and which lorebook
entries a conversation activates.

Specs: github.com/malfoyslastname/character-card-spec-v2 and
github.com/kwaroran/character-card-spec-v3. Both say a reader must never destroy what it does
not understand, so unknown fields are kept in `extra` and written back on export.
"""

from __future__ import annotations

import base64
import io
import json
import re
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from memory.errors import KizunaError

__all__ = [
    "MAX_CHUNK_TEXT",
    "Card",
    "CardError",
    "LoreEntry",
    "Lorebook",
    "active_entries",
    "card_picture",
    "card_to_v2_json",
    "parse_card",
    "read_card",
    "resolve_placeholders",
    "to_v2_dict",
]

Position = Literal["before_char", "after_char"]
Spec = Literal["chara_card_v2", "chara_card_v3"]

# Where a V2 export keeps the V3-only fields, so reading the export back restores them.
_V3_KEY = "kizuna_v3"
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_ZIP_SIGNATURE = b"PK\x03\x04"
_CHARX_CARD = "card.json"
_CARD_KEYWORDS = ("ccv3", "chara")  # in order of preference (the V3 spec: ccv3 wins)
MAX_CHUNK_TEXT = 64 * 2**20  # bytes a compressed text chunk may inflate to


@dataclass(slots=True, kw_only=True)
class LoreEntry:
    """One piece of keyword-triggered knowledge in a character book."""

    keys: list[str]
    content: str
    extensions: dict[str, Any] = field(default_factory=dict)
    enabled: bool = True
    insertion_order: int = 100  # lower = earlier in the prompt
    case_sensitive: bool | None = None
    name: str = ""
    priority: int | None = None  # over the token budget, lower priority is dropped first
    id: int | str | None = None
    comment: str = ""
    selective: bool = False  # also needs one of `secondary_keys`
    secondary_keys: list[str] = field(default_factory=list)
    constant: bool = False  # always active
    position: Position | None = None
    use_regex: bool = False  # V3: `keys` are regular expressions
    extra: dict[str, Any] = field(default_factory=dict)  # unknown fields, written back


@dataclass(slots=True, kw_only=True)
class Lorebook:
    """A card's `character_book`."""

    name: str = ""
    description: str = ""
    scan_depth: int | None = None  # how many recent messages are searched for keys
    token_budget: int | None = None
    recursive_scanning: bool | None = None  # activated content can activate more entries
    extensions: dict[str, Any] = field(default_factory=dict)
    entries: list[LoreEntry] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class Card:
    """A character card, whatever version it was read from."""

    spec: Spec = "chara_card_v2"
    spec_version: str = "2.0"
    name: str
    description: str = ""
    personality: str = ""
    scenario: str = ""
    first_mes: str = ""
    mes_example: str = ""
    creator_notes: str = ""
    system_prompt: str = ""
    post_history_instructions: str = ""
    alternate_greetings: list[str] = field(default_factory=list)
    character_book: Lorebook | None = None
    tags: list[str] = field(default_factory=list)
    creator: str = ""
    character_version: str = ""
    extensions: dict[str, Any] = field(default_factory=dict)
    # V3 only; empty (or None) when the card does not have them.
    nickname: str = ""
    creator_notes_multilingual: dict[str, str] = field(default_factory=dict)
    source: list[str] = field(default_factory=list)
    group_only_greetings: list[str] = field(default_factory=list)
    creation_date: int | None = None
    modification_date: int | None = None
    assets: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # unknown `data` fields, written back


class CardError(KizunaError):
    """A file that is not a readable card: `str(error)` is the one line a user sees."""

    def __init__(self, source: str, message: str) -> None:
        self.source, self.message = source, message
        super().__init__(f"{source}: {message}")


class _Invalid(Exception):
    """What is wrong, without the file name (`parse_card` adds it)."""


# --- reading ---------------------------------------------------------------------------------


def read_card(path: Path) -> Card:
    """Read a card from a `.json` or `.png` file, or raise `CardError`."""
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise CardError(str(path), f"cannot read ({e.strerror or e})") from None
    return parse_card(raw, str(path))


def parse_card(raw: bytes, source: str) -> Card:
    """Read a card from a file's bytes (PNG when it has the PNG signature or a `.png` name,
    CHARX when it is a zip or named `.charx`, otherwise JSON); `source` names the file in a
    `CardError`."""
    try:
        if raw.startswith(_PNG_SIGNATURE) or source.lower().endswith(".png"):
            obj = _png_card_json(raw)
        elif _is_charx(raw, source):
            obj = _charx_card_json(raw)
        else:
            obj = _parse_json(raw)
        if not isinstance(obj, dict):
            raise _Invalid(f"not a character card (the JSON is {_json_type(obj)}, not an object)")
        return _card(obj)
    except _Invalid as e:
        raise CardError(source, str(e)) from None


def card_picture(raw: bytes, source: str) -> bytes | None:
    """The PNG picture of a card's file: a PNG card is its own; a CHARX card's is its main
    icon when that is a PNG in the archive. None for anything else."""
    if raw.startswith(_PNG_SIGNATURE):
        return raw
    if not _is_charx(raw, source):
        return None
    try:
        card = _charx_card_json(raw)
        assets = card.get("data", {}).get("assets") if isinstance(card, dict) else None
        icons = [
            a
            for a in (assets if isinstance(assets, list) else [])
            if isinstance(a, dict) and a.get("type") == "icon" and isinstance(a.get("uri"), str)
        ]
        icons.sort(key=lambda a: a.get("name") != "main")
        for icon in icons:
            scheme, _, path = icon["uri"].partition("://")
            if scheme in ("embeded", "embedded"):  # the V3 spec spells it "embeded"
                picture = _charx_member(raw, path)
                if picture.startswith(_PNG_SIGNATURE):
                    return picture
    except (_Invalid, AttributeError):
        return None
    return None


def _charx_card_json(raw: bytes) -> Any:
    text = _charx_member(raw, _CHARX_CARD)
    try:
        return _parse_json(text)
    except _Invalid as e:
        raise _Invalid(f"its {_CHARX_CARD} is {e}") from None


def _is_charx(raw: bytes, source: str) -> bool:
    return raw.startswith(_ZIP_SIGNATURE) or source.lower().endswith(".charx")


def _charx_member(raw: bytes, name: str) -> bytes:
    """One file of a CHARX archive, refused past MAX_CHUNK_TEXT whatever size the archive
    declares (a zip bomb declares a small one)."""
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            try:
                member = archive.getinfo(name)
            except KeyError:
                raise _Invalid(f"a CHARX archive without {name}") from None
            with archive.open(member) as file:
                data = file.read(MAX_CHUNK_TEXT + 1)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, OSError):
        raise _Invalid("not a readable CHARX archive (a damaged or unsupported zip)") from None
    if len(data) > MAX_CHUNK_TEXT:
        raise _Invalid(f"{name} in the archive is too big (over {MAX_CHUNK_TEXT // 2**20} MB)")
    return data


def _parse_json(raw: bytes) -> Any:
    try:
        text = raw.decode("utf-8-sig")  # tolerates the BOM some Windows editors write
    except UnicodeDecodeError:
        raise _Invalid("not UTF-8 text") from None
    try:
        return _valid_unicode(json.loads(text))
    except json.JSONDecodeError as e:
        raise _Invalid(f"not valid JSON (line {e.lineno}, column {e.colno}: {e.msg})") from None
    except ValueError:  # a number past Python's 4300-digit limit for int()
        raise _Invalid("not valid JSON (a number too long to read)") from None
    except RecursionError:
        raise _Invalid("not valid JSON (nested too deeply)") from None


_SURROGATE = re.compile("[\ud800-\udfff]")


def _valid_unicode(value: Any) -> Any:
    """`value` with lone surrogates (a JSON "\\ud800" escape with no pair) as U+FFFD: they
    are not text, and no file or database can store them."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_valid_unicode(item) for item in value]
    if isinstance(value, dict):
        return {_valid_unicode(k): _valid_unicode(v) for k, v in value.items()}
    return value


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    return "null" if value is None else "a number"


# PNG: the card is base64 JSON in a text chunk. The chunks are walked with struct and zlib
# rather than an image library: only the text chunks are needed, never the pixels.


def _png_card_json(raw: bytes) -> Any:
    found: dict[str, str] = {}
    for ctype, body in _png_chunks(raw):
        if ctype not in (b"tEXt", b"zTXt", b"iTXt"):
            continue
        keyword, _, rest = body.partition(b"\0")
        key = keyword.decode("latin-1").lower()
        if key in _CARD_KEYWORDS and key not in found:
            found[key] = _chunk_text(ctype, rest, key)
    chosen = next((k for k in _CARD_KEYWORDS if k in found), None)
    if chosen is None:
        raise _Invalid("no character card in it (no chara or ccv3 text chunk)")
    text = "".join(found[chosen].split())
    try:
        # Some writers drop the base64 padding; restoring it costs nothing.
        decoded = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except ValueError:
        raise _Invalid(f"the {chosen} chunk is not valid base64") from None
    try:
        return _parse_json(decoded)
    except _Invalid as e:
        raise _Invalid(f"the {chosen} chunk is {e}") from None


def _png_chunks(raw: bytes) -> Iterator[tuple[bytes, bytes]]:
    """Each chunk's type and data up to IEND, every CRC checked."""
    if not raw.startswith(_PNG_SIGNATURE):
        raise _Invalid("not a PNG file (bad signature)")
    pos = len(_PNG_SIGNATURE)
    while True:
        if pos + 8 > len(raw):
            raise _Invalid(f"truncated PNG (it ends at byte {len(raw)}, before the IEND chunk)")
        length, ctype = struct.unpack_from(">I4s", raw, pos)
        name = ctype.decode("ascii") if ctype.isalpha() else repr(ctype)
        end = pos + 8 + length
        if end + 4 > len(raw):
            raise _Invalid(f"truncated PNG (the {name} chunk at byte {pos} is cut short)")
        body = raw[pos + 8 : end]
        (crc,) = struct.unpack_from(">I", raw, end)
        if zlib.crc32(ctype + body) != crc:
            raise _Invalid(f"damaged PNG (bad CRC in the {name} chunk at byte {pos})")
        if ctype == b"IEND":
            return
        yield ctype, body
        pos = end + 4


def _chunk_text(ctype: bytes, rest: bytes, key: str) -> str:
    """The text of a tEXt, zTXt or iTXt chunk, after its keyword and NUL."""
    try:
        if ctype == b"tEXt":
            return rest.decode("latin-1")
        if ctype == b"zTXt":  # a compression method byte (0: zlib), then latin-1 text
            return _inflate(rest[1:], key).decode("latin-1")
        # iTXt: compression flag, method, language tag NUL, translated keyword NUL, UTF-8 text
        parts = rest[2:].split(b"\0", 2)
        if len(parts) < 3:
            raise _Invalid(f"the {key} iTXt chunk is malformed")
        text = _inflate(parts[2], key) if rest[0] == 1 else parts[2]
        return text.decode("utf-8")
    except zlib.error:
        raise _Invalid(f"the {key} chunk is damaged (its text does not decompress)") from None
    except UnicodeDecodeError:
        raise _Invalid(f"the {key} chunk is not UTF-8 text") from None


def _inflate(data: bytes, key: str) -> bytes:
    """A compressed chunk's text, refused past MAX_CHUNK_TEXT: a few kilobytes of zlib can
    inflate to gigabytes (a decompression bomb)."""
    inflater = zlib.decompressobj()
    text = inflater.decompress(data, MAX_CHUNK_TEXT)
    if inflater.unconsumed_tail:
        raise _Invalid(f"the {key} chunk is too big (over {MAX_CHUNK_TEXT // 2**20} MB of text)")
    return text


class _Fields:
    """One JSON object being read: typed getters that name the field's path on a mistake, and
    `rest()`, the fields nobody asked for, which are kept rather than dropped."""

    def __init__(self, obj: dict[str, Any], path: str) -> None:
        self._obj, self._path = obj, path
        self._seen: set[str] = set()

    def where(self, key: str) -> str:
        return f"{self._path}.{key}" if self._path else key

    def has(self, key: str) -> bool:
        """Whether `key` holds a value: the specs allow optional fields to be null."""
        self._seen.add(key)
        return self._obj.get(key) is not None

    def _get(self, key: str) -> Any:
        self._seen.add(key)
        return self._obj.get(key)

    def text(self, key: str) -> str:
        value = self._get(key)
        if value is None:
            return ""
        if not isinstance(value, str):
            raise _Invalid(f"{self.where(key)} must be text")
        return value

    def version(self, key: str, default: str) -> str:
        """Text, or a number made text: early V2 cards wrote versions as numbers."""
        value = self._get(key)
        if value is None:
            return default
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        if not isinstance(value, str):
            raise _Invalid(f"{self.where(key)} must be text")
        return value

    def texts(self, key: str) -> list[str]:
        return self._list(key, str, "a list of strings", "text")

    def text_map(self, key: str) -> dict[str, str]:
        mapping = self.mapping(key)
        for name, item in mapping.items():
            if not isinstance(item, str):
                raise _Invalid(f"{self.where(key)}.{name} must be text")
        return mapping

    def flag(self, key: str) -> bool | None:
        value = self._get(key)
        if value is not None and not isinstance(value, bool):
            raise _Invalid(f"{self.where(key)} must be true or false")
        return value

    def number(self, key: str) -> int | None:
        value = self._get(key)
        if value is None or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise _Invalid(f"{self.where(key)} must be a whole number")

    def ident(self, key: str) -> int | str | None:
        value = self._get(key)
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise _Invalid(f"{self.where(key)} must be a number or text")

    def position(self, key: str) -> Position | None:
        value = self._get(key)
        if value is None:
            return None
        if value == "before_char":
            return "before_char"
        if value == "after_char":
            return "after_char"
        raise _Invalid(f"{self.where(key)} must be before_char or after_char")

    def mapping(self, key: str) -> dict[str, Any]:
        value = self._get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise _Invalid(f"{self.where(key)} must be an object")
        return dict(value)

    def objects(self, key: str) -> list[dict[str, Any]]:
        return self._list(key, dict, "a list of objects", "an object")

    def _list(self, key: str, kind: type, whole: str, each: str) -> list[Any]:
        """The list at `key` ([] when absent), each item a `kind`: else what it must be,
        `whole` for the list and `each` for an item."""
        value = self._get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise _Invalid(f"{self.where(key)} must be {whole}")
        for i, item in enumerate(value):
            if not isinstance(item, kind):
                raise _Invalid(f"{self.where(key)}[{i}] must be {each}")
        return list(value)

    def child(self, key: str) -> _Fields | None:
        if not self.has(key):
            return None
        return _Fields(self.mapping(key), self.where(key))

    def rest(self) -> dict[str, Any]:
        return {k: v for k, v in self._obj.items() if k not in self._seen}


def _card(obj: dict[str, Any]) -> Card:
    spec = obj.get("spec")
    if spec is None:
        # V1: the six fields at the top level; anything else there is a frontend's own state.
        return _v1_card(_Fields(obj, ""))
    if spec not in ("chara_card_v2", "chara_card_v3"):
        raise _Invalid(f"unsupported spec {spec!r} (expected chara_card_v2 or chara_card_v3)")
    if not isinstance(obj.get("data"), dict):
        raise _Invalid("data is missing or not an object")
    v3 = spec == "chara_card_v3"
    f = _Fields(obj["data"], "data")
    card = _v1_card(f)
    extensions = f.mapping("extensions")
    later = _v3_fields(f)
    stash = extensions.get(_V3_KEY)
    if isinstance(stash, dict):  # written by `to_v2_dict`
        del extensions[_V3_KEY]
        later = _v3_fields(_Fields(stash, f"data.extensions.{_V3_KEY}")) | later
    book = f.child("character_book")
    # Arguments are evaluated in order, so `rest()` comes last and sees every field read.
    return replace(
        card,
        spec="chara_card_v3" if v3 else "chara_card_v2",
        spec_version=_Fields(obj, "").version("spec_version", "3.0" if v3 else "2.0"),
        creator_notes=f.text("creator_notes"),
        system_prompt=f.text("system_prompt"),
        post_history_instructions=f.text("post_history_instructions"),
        alternate_greetings=f.texts("alternate_greetings"),
        character_book=None if book is None else _lorebook(book),
        tags=f.texts("tags"),
        creator=f.text("creator"),
        character_version=f.version("character_version", ""),
        extensions=extensions,
        **later,
        extra=f.rest(),
    )


def _v1_card(f: _Fields) -> Card:
    name = f.text("name")
    if not name.strip():
        raise _Invalid(f"{f.where('name')} is missing or empty")
    return Card(
        name=name,
        description=f.text("description"),
        personality=f.text("personality"),
        scenario=f.text("scenario"),
        first_mes=f.text("first_mes"),
        mes_example=f.text("mes_example"),
    )


def _v3_fields(f: _Fields) -> dict[str, Any]:
    """The V3-only fields `f` has, checked."""
    readers: dict[str, Callable[[str], Any]] = {
        "nickname": f.text,
        "creator_notes_multilingual": f.text_map,
        "source": f.texts,
        "group_only_greetings": f.texts,
        "creation_date": f.number,
        "modification_date": f.number,
        "assets": f.objects,
    }
    return {key: read(key) for key, read in readers.items() if f.has(key)}


def _lorebook(f: _Fields) -> Lorebook:
    where = f.where("entries")
    return Lorebook(
        name=f.text("name"),
        description=f.text("description"),
        scan_depth=f.number("scan_depth"),
        token_budget=f.number("token_budget"),
        recursive_scanning=f.flag("recursive_scanning"),
        extensions=f.mapping("extensions"),
        entries=[_entry(_Fields(e, f"{where}[{i}]")) for i, e in enumerate(f.objects("entries"))],
        extra=f.rest(),
    )


def _entry(f: _Fields) -> LoreEntry:
    return LoreEntry(
        keys=f.texts("keys"),
        content=f.text("content"),
        extensions=f.mapping("extensions"),
        enabled=f.flag("enabled") is not False,  # absent means enabled
        insertion_order=_default(f.number("insertion_order"), 100),
        case_sensitive=f.flag("case_sensitive"),
        name=f.text("name"),
        priority=f.number("priority"),
        id=f.ident("id"),
        comment=f.text("comment"),
        selective=bool(f.flag("selective")),
        secondary_keys=f.texts("secondary_keys"),
        constant=bool(f.flag("constant")),
        position=f.position("position"),
        use_regex=bool(f.flag("use_regex")),
        extra=f.rest(),
    )


def _default(value: int | None, default: int) -> int:
    return default if value is None else value


# --- writing ---------------------------------------------------------------------------------


def card_to_v2_json(card: Card) -> str:
    """The card as Character Card V2 JSON text (placeholders left as they are)."""
    return json.dumps(to_v2_dict(card), ensure_ascii=False, indent=2)


def to_v2_dict(card: Card) -> dict[str, Any]:
    """The card as a Character Card V2 object: every V2 field, the unknown fields merged back,
    and the V3-only fields under `data.extensions["kizuna_v3"]` (`parse_card` restores them)."""
    extensions = dict(card.extensions)
    v3 = _without_none(
        {
            "nickname": card.nickname or None,
            "creator_notes_multilingual": card.creator_notes_multilingual or None,
            "source": card.source or None,
            "group_only_greetings": card.group_only_greetings or None,
            "creation_date": card.creation_date,
            "modification_date": card.modification_date,
            "assets": card.assets or None,
        }
    )
    if v3:
        extensions[_V3_KEY] = v3
    book = card.character_book
    data = {
        "name": card.name,
        "description": card.description,
        "personality": card.personality,
        "scenario": card.scenario,
        "first_mes": card.first_mes,
        "mes_example": card.mes_example,
        "creator_notes": card.creator_notes,
        "system_prompt": card.system_prompt,
        "post_history_instructions": card.post_history_instructions,
        "alternate_greetings": list(card.alternate_greetings),
        "character_book": None if book is None else _lorebook_dict(book),
        "tags": list(card.tags),
        "creator": card.creator,
        "character_version": card.character_version,
        "extensions": extensions,
    }
    return {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": _with_extra(_without_none(data), card.extra),
    }


def _lorebook_dict(book: Lorebook) -> dict[str, Any]:
    out = {
        "name": book.name,
        "description": book.description,
        "scan_depth": book.scan_depth,
        "token_budget": book.token_budget,
        "recursive_scanning": book.recursive_scanning,
        "extensions": dict(book.extensions),
        "entries": [_entry_dict(entry) for entry in book.entries],
    }
    return _with_extra(_without_none(out), book.extra)


def _entry_dict(entry: LoreEntry) -> dict[str, Any]:
    out = {
        "keys": list(entry.keys),
        "content": entry.content,
        "extensions": dict(entry.extensions),
        "enabled": entry.enabled,
        "insertion_order": entry.insertion_order,
        "case_sensitive": entry.case_sensitive,
        "name": entry.name,
        "priority": entry.priority,
        "id": entry.id,
        "comment": entry.comment,
        "selective": entry.selective,
        "secondary_keys": list(entry.secondary_keys),
        "constant": entry.constant,
        "position": entry.position,
        "use_regex": entry.use_regex or None,  # V3's: written only when set
    }
    return _with_extra(_without_none(out), entry.extra)


def _without_none(fields: dict[str, Any]) -> dict[str, Any]:
    """Optional fields left out rather than written as null."""
    return {k: v for k, v in fields.items() if v is not None}


def _with_extra(known: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    return known | {k: v for k, v in extra.items() if k not in known}


# --- using -----------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{\{(char|user)\}\}|<(bot|char|user)>", re.IGNORECASE)


def resolve_placeholders(text: str, char: str, user: str) -> str:
    """Replace `{{char}}` / `{{user}}` and the older `<BOT>` / `<USER>` (any case, as
    SillyTavern does; V3's `<char>` too) with the character's and the user's names."""
    return _PLACEHOLDER.sub(lambda m: user if "user" in m[0].lower() else char, text)


def active_entries(
    book: Lorebook,
    recent: Sequence[str],
    *,
    budget_tokens: int | None,
    count_tokens: Callable[[str], int],
) -> list[LoreEntry]:
    """The entries of `book` that `recent` (the conversation's texts, oldest first) activates,
    in prompt order. The V2/V3 spec rules:

    - disabled entries never activate; `constant` ones always do;
    - otherwise one of `keys` must appear in the last `scan_depth` texts (all when unset): a
      substring, ignoring case unless `case_sensitive`; with `use_regex` the keys are regular
      expressions (`pattern` or `/pattern/flags`), and an invalid one never matches;
    - a `selective` entry with `secondary_keys` also needs one of those to appear;
    - with `recursive_scanning`, the content of activated entries is searched too, until no
      new entry activates;
    - the result is ordered by `insertion_order` (ties keep the book's order), then trimmed to
      `budget_tokens` (else the book's `token_budget`, else no limit) by dropping whole
      entries: the lowest `priority` first (none counts as lowest), then the lowest
      `insertion_order`, constant entries last.
    """
    entries = [entry for entry in book.entries if entry.enabled]
    depth = len(recent) if book.scan_depth is None else max(book.scan_depth, 0)
    texts = list(recent[max(len(recent) - depth, 0) :])
    active = {i for i, entry in enumerate(entries) if entry.constant or _triggered(entry, texts)}
    if book.recursive_scanning:
        # Each pass activates at least one more entry or ends the loop: at most len(entries).
        while True:
            scanned = texts + [entries[i].content for i in sorted(active)]
            more = {
                i
                for i, entry in enumerate(entries)
                if i not in active and _triggered(entry, scanned)
            }
            if not more:
                break
            active |= more
    chosen = sorted(active, key=lambda i: (entries[i].insertion_order, i))
    limit = budget_tokens if budget_tokens is not None else book.token_budget
    if limit is not None:
        cost = {i: count_tokens(entries[i].content) for i in chosen}
        total = sum(cost.values())

        def drop_order(i: int) -> tuple[bool, float, int, int]:
            entry = entries[i]
            priority = float("-inf") if entry.priority is None else entry.priority
            return entry.constant, priority, entry.insertion_order, i

        for i in sorted(chosen, key=drop_order):
            if total <= limit:
                break
            total -= cost.pop(i)
        chosen = [i for i in chosen if i in cost]
    return [entries[i] for i in chosen]


def _triggered(entry: LoreEntry, texts: Sequence[str]) -> bool:
    if not _any_key(entry, entry.keys, texts):
        return False
    if entry.selective and entry.secondary_keys:
        return _any_key(entry, entry.secondary_keys, texts)
    return True


def _any_key(entry: LoreEntry, keys: Sequence[str], texts: Sequence[str]) -> bool:
    for key in keys:
        if not key.strip():  # an empty key would match every message
            continue
        if entry.use_regex:
            pattern = _regex(key, bool(entry.case_sensitive))
            if pattern is not None and any(pattern.search(text) for text in texts):
                return True
        elif entry.case_sensitive:
            if any(key in text for text in texts):
                return True
        elif any(key.casefold() in text.casefold() for text in texts):
            return True
    return False


_REGEX_LITERAL = re.compile(r"/(.*)/([a-z]*)", re.DOTALL)
_REGEX_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}


@lru_cache(maxsize=1024)
def _regex(key: str, case_sensitive: bool) -> re.Pattern[str] | None:
    """A regex key: `/pattern/flags` (JavaScript style, as the V3 spec writes them) follows
    its flags; a bare pattern follows `case_sensitive`. None when it does not compile."""
    literal = _REGEX_LITERAL.fullmatch(key)
    if literal:
        pattern, flags = literal[1], 0
        for letter in literal[2]:
            flags |= _REGEX_FLAGS.get(letter, 0)  # g, u, y mean nothing here
    else:
        pattern, flags = key, 0 if case_sensitive else re.IGNORECASE
    try:
        return re.compile(pattern, flags)
    except (re.error, OverflowError, RecursionError):
        return None
