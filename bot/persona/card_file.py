"""A character card as a persona file, and a persona back as a card.

`persona_toml(card)` writes the TOML `kizuna persona import` saves: the identity from the card's
name, description and personality; its scenario, greetings, example messages, system prompt and
post-history instructions under [card]; its lorebook under [lorebook]; the creator's notes as
comments at the top. Whatever else the card carries (extensions, fields of newer specs, fields
no spec names) is kept as JSON text in `kept` keys, so `persona_card(persona)` gives it all back
on export. Placeholders ({{char}}, {{user}}) are left in place: the prompt fills them in.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from typing import Any

from bot.persona import cards
from bot.persona.file import Lorebook, LoreEntry, Persona
from bot.tomlfile import one_line

__all__ = [
    "CARD_EMOTIONS",
    "guess_language",
    "lore_book",
    "persona_card",
    "persona_key",
    "persona_toml",
]

# A card names no emotions; these give the web page's faces and a reply's tag something to use.
CARD_EMOTIONS = ["NEUTRAL", "HAPPY", "SAD", "ANGRY", "SURPRISED", "SHY"]
_KEY = re.compile(r"[^a-z0-9_]+")


def persona_key(name: str) -> str:
    """A file name for a card's persona: lower-case ASCII words joined by _ ("Dr. Ada Vale"
    -> "dr_ada_vale"); "" for a name with no ASCII letters or digits (雪菜)."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return _KEY.sub("_", ascii_name.lower())[:40].strip("_")


def guess_language(text: str) -> str:
    """The language most of `text` is written in, by script: "zh", "ja", "ko" or "en"."""
    kana = sum(1 for c in text if "\u3040" <= c <= "\u30ff")
    hangul = sum(1 for c in text if "\uac00" <= c <= "\ud7af")
    han = sum(1 for c in text if "\u4e00" <= c <= "\u9fff")
    latin = sum(1 for c in text if c.isascii() and c.isalpha())
    if kana and kana + han > latin:
        return "ja"
    if hangul > latin:
        return "ko"
    if han > latin:
        return "zh"
    return "en"


def _string(text: str) -> str:
    """A TOML string for `text`: multi-line literal when it can be, else a basic string."""
    if (
        "\n" in text
        and "'''" not in text
        and not any(unicodedata.category(c) == "Cc" and c not in "\n\t" for c in text)
    ):
        return f"'''\n{text}'''" if not text.endswith("'") else f"'''\n{text}\n'''"
    plain = not any(unicodedata.category(c) == "Cc" and c != "\t" for c in text)
    if plain and "'" not in text and ('"' in text or "\\" in text):
        return f"'{text}'"  # a literal string: no escapes to read (JSON text, quotes)
    # A JSON string is a TOML basic string, but for DEL, which TOML wants escaped.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return _string(str(value))


def _table(name: str, items: dict[str, Any]) -> list[str]:
    lines = [f"[{name}]"] if name else []
    lines += [
        f"{key} = {_value(value)}"
        for key, value in items.items()
        if value not in ("", []) or key == "keys"  # a lorebook entry's keys are required
    ]
    return lines


def _kept(values: dict[str, Any]) -> str:
    present = {k: v for k, v in values.items() if v not in (None, "", [], {})}
    return json.dumps(present, ensure_ascii=False, sort_keys=True) if present else ""


def persona_toml(card: cards.Card) -> str:
    """The persona file for `card` (loads with `load_persona`)."""
    notes = card.creator_notes.strip()
    # A comment ends at a line break and may hold no control character: those are escaped.
    head = [f"# {one_line(card.name)}: imported from a character card by `kizuna persona import`."]
    if card.creator:
        version = f", version {card.character_version}" if card.character_version else ""
        head.append(one_line(f"# Card by {card.creator}{version}."))
    if notes:
        head.append("# Creator's notes:")
        head += [one_line(f"#   {line}".rstrip()) for line in notes.splitlines()]
    sample = "\n".join([card.description, card.personality, card.first_mes])
    identity = {
        "name": card.name,
        "nickname": card.nickname,
        "language": guess_language(sample),
        "personality": card.personality.strip() or card.description.strip() or card.name,
        "brief": card.description.strip() if card.personality.strip() else "",
    }
    kept = _kept(
        {
            "spec": card.spec,
            "spec_version": card.spec_version,
            "creator_notes": card.creator_notes,
            "creator_notes_multilingual": card.creator_notes_multilingual,
            "source": card.source,
            "group_only_greetings": card.group_only_greetings,
            "creation_date": card.creation_date,
            "modification_date": card.modification_date,
            "assets": card.assets,
            "extensions": card.extensions,
            "extra": card.extra,
        }
    )
    card_table = {
        "scenario": card.scenario,
        "first_message": card.first_mes,
        "example_messages": card.mes_example,
        "system_prompt": card.system_prompt,
        "post_history_instructions": card.post_history_instructions,
        "alternate_greetings": card.alternate_greetings,
        "tags": card.tags,
        "creator": card.creator,
        "character_version": card.character_version,
        "kept": kept,
    }
    lines = [*head, "", *_table("identity", identity), ""]
    lines += [*_table("emotions", {"names": CARD_EMOTIONS, "neutral": "NEUTRAL"}), ""]
    lines += [*_table("card", card_table), ""]
    book = card.character_book
    if book is not None:
        settings: dict[str, Any] = {"name": book.name}
        # Values a persona's lorebook refuses (a scan depth below 1, a negative budget) mean
        # nothing: left out, the defaults apply.
        if book.scan_depth is not None and book.scan_depth >= 1:
            settings["scan_depth"] = book.scan_depth
        if book.token_budget is not None and book.token_budget >= 0:
            settings["token_budget"] = book.token_budget
        if book.recursive_scanning is not None:
            settings["recursive_scanning"] = book.recursive_scanning
        settings["kept"] = _kept(
            {"description": book.description, "extensions": book.extensions, "extra": book.extra}
        )
        lines += [*_table("lorebook", settings), ""]
        for entry in book.entries:
            lines += [*_table("[lorebook.entries]", _entry(entry)), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _entry(entry: cards.LoreEntry) -> dict[str, Any]:
    values: dict[str, Any] = {
        "keys": entry.keys,
        "content": entry.content,
        "secondary_keys": entry.secondary_keys,
        "selective": entry.selective,
        "constant": entry.constant,
        "case_sensitive": bool(entry.case_sensitive),
        "enabled": entry.enabled,
        "insertion_order": entry.insertion_order,
        "priority": entry.priority or 0,
        "use_regex": entry.use_regex,
        "name": entry.name,
    }
    values["kept"] = _kept(
        {
            "id": entry.id,
            "comment": entry.comment,
            "position": entry.position,
            "priority": entry.priority,
            "case_sensitive": entry.case_sensitive,
            "extensions": entry.extensions,
            "extra": entry.extra,
        }
    )
    if not values["content"]:
        values["content"] = " "  # the persona file wants some content; a card may have none
    return values


class _Kept:
    """A `kept` key's JSON, read back with each value checked: the file is the user's to
    edit, and a value of the wrong kind (or text that is not JSON) is left out of the card
    rather than failing the export."""

    def __init__(self, text: str) -> None:
        try:
            value = json.loads(text) if text else {}
        except ValueError:
            value = {}
        self._values: dict[str, Any] = value if isinstance(value, dict) else {}

    def get(self, key: str, default: Any, ok: Callable[[Any], bool]) -> Any:
        value = self._values.get(key, default)
        return value if ok(value) else default

    def text(self, key: str, default: str = "") -> str:
        return str(self.get(key, default, lambda v: isinstance(v, str)))

    def texts(self, key: str) -> list[str]:
        return list(self.get(key, [], lambda v: isinstance(v, list) and all(_is_str(x) for x in v)))

    def table(self, key: str) -> dict[str, Any]:
        return dict(self.get(key, {}, lambda v: isinstance(v, dict)))

    def number(self, key: str) -> int | None:
        value = self.get(key, None, _is_int)
        return None if value is None else int(value)


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def persona_card(persona: Persona) -> cards.Card:
    """`persona` as a character card: what the persona file says now, and what it kept."""
    ident, card = persona.identity, persona.card
    kept = _Kept(card.kept)
    brief = ident.brief.strip()
    book = None
    if persona.lorebook.entries or persona.lorebook.kept:
        book = lore_book(persona.lorebook)
    return cards.Card(
        spec="chara_card_v3" if kept.text("spec") == "chara_card_v3" else "chara_card_v2",
        spec_version=kept.text("spec_version", "2.0"),
        name=ident.name,
        description=brief or ident.personality.strip(),
        personality=ident.personality.strip() if brief else "",
        scenario=card.scenario,
        first_mes=card.first_message,
        mes_example=card.example_messages,
        creator_notes=kept.text("creator_notes"),
        system_prompt=card.system_prompt,
        post_history_instructions=card.post_history_instructions,
        alternate_greetings=list(card.alternate_greetings),
        character_book=book,
        tags=list(card.tags),
        creator=card.creator,
        character_version=card.character_version,
        extensions=kept.table("extensions"),
        nickname=ident.nickname,
        creator_notes_multilingual=kept.get(
            "creator_notes_multilingual",
            {},
            lambda v: isinstance(v, dict) and all(_is_str(x) for x in v.values()),
        ),
        source=kept.texts("source"),
        group_only_greetings=kept.texts("group_only_greetings"),
        creation_date=kept.number("creation_date"),
        modification_date=kept.number("modification_date"),
        assets=kept.get(
            "assets", [], lambda v: isinstance(v, list) and all(isinstance(x, dict) for x in v)
        ),
        extra=kept.table("extra"),
    )


def lore_book(book: Lorebook) -> cards.Lorebook:
    """The persona's lorebook as a card's (for export, and `cards.active_entries`)."""
    kept = _Kept(book.kept)
    return cards.Lorebook(
        name=book.name,
        description=kept.text("description"),
        scan_depth=book.scan_depth,
        token_budget=book.token_budget,
        recursive_scanning=book.recursive_scanning,
        extensions=kept.table("extensions"),
        entries=[_card_entry(e) for e in book.entries],
        extra=kept.table("extra"),
    )


def _card_entry(entry: LoreEntry) -> cards.LoreEntry:
    kept = _Kept(entry.kept)
    return cards.LoreEntry(
        keys=list(entry.keys),
        content=entry.content.strip(),
        extensions=kept.table("extensions"),
        enabled=entry.enabled,
        insertion_order=entry.insertion_order,
        case_sensitive=entry.case_sensitive
        or kept.get("case_sensitive", None, lambda v: v is None or isinstance(v, bool)),
        name=entry.name,
        priority=entry.priority if entry.priority else kept.number("priority"),
        id=kept.get("id", None, lambda v: v is None or _is_str(v) or _is_int(v)),
        comment=kept.text("comment"),
        selective=entry.selective,
        secondary_keys=list(entry.secondary_keys),
        constant=entry.constant,
        position=kept.get("position", None, lambda v: v in (None, "before_char", "after_char")),
        use_regex=entry.use_regex,
        extra=kept.table("extra"),
    )
