"""User text in prompts as quoted content, and the people of a conversation as labels.

What a user wrote (a message, a /remember, a document, and what the models wrote from it:
memories, profiles, diary pages, recaps) reaches a prompt only through `quote`: one JSON
string on one line, so a newline and "SYSTEM:" or "Alice:" inside it stays inside the quotes
of the line it belongs to and cannot open a section or become another speaker's line.

Display names change and collide, so a transcript never names its speakers by them:
`Speakers` gives each stable user id an opaque label (U1, U2, ... in order of first words),
shows the names only as quoted information about a label, and maps the labels a model
answers with back to ids. A label it does not know maps to nothing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

__all__ = ["NAME_CHARS", "Speakers", "flat", "quote"]

NAME_CHARS = 64  # of a display name shown in a prompt

# Line breaks json.dumps leaves as they are (it escapes only C0 controls, '"' and '\\'), but
# str.splitlines and some tokenizers break on: NEL, LINE and PARAGRAPH SEPARATOR.
_UNESCAPED_BREAKS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_BREAKS = re.compile("[\x85\u2028\u2029]")
_LABEL = re.compile(r"U([1-9][0-9]{0,5})")
# Controls, line breaks and bidirectional overrides, which a one-line name must not hold.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def quote(text: str) -> str:
    """`text` as one JSON string: quoted, on one line whatever it holds."""
    quoted = json.dumps(text, ensure_ascii=False)
    return _BREAKS.sub(lambda m: _UNESCAPED_BREAKS[m.group()], quoted)


def flat(name: str, limit: int = NAME_CHARS) -> str:
    """A display name fit to stand in prose: controls and line breaks gone, whitespace
    collapsed, at most `limit` characters."""
    tidy = " ".join(_CONTROLS.sub(" ", name).split())
    return tidy if len(tidy) <= limit else tidy[: limit - 1] + "…"


@dataclass(slots=True)
class Speakers:
    """The people of one conversation, each by an opaque label given by stable user id."""

    _labels: dict[str, str] = field(default_factory=dict)  # user id -> label
    _ids: dict[str, str] = field(default_factory=dict)  # label -> user id
    _names: dict[str, list[str]] = field(default_factory=dict)  # user id -> names, in order

    def add(self, user_id: str, name: str) -> str:
        """The label of `user_id` (given at their first words), noting the name they used."""
        label = self._labels.get(user_id)
        if label is None:
            label = f"U{len(self._labels) + 1}"
            self._labels[user_id] = label
            self._ids[label] = user_id
            self._names[user_id] = []
        names = self._names[user_id]
        shown = flat(name)
        if shown and shown not in names:
            names.append(shown)
        return label

    def label(self, user_id: str) -> str | None:
        return self._labels.get(user_id)

    def user_id(self, label: object) -> str | None:
        """Whose label `label` is: None for anything but a label of this conversation (a
        name, however it matches, is not one)."""
        if not isinstance(label, str):
            return None
        match = _LABEL.fullmatch(label.strip())
        return self._ids.get(match.group()) if match else None

    @property
    def ids(self) -> list[str]:
        """The user ids, in label order."""
        return list(self._labels)

    def names(self, user_id: str) -> list[str]:
        """The names `user_id` went by here, first to last."""
        return list(self._names.get(user_id, ()))

    def roster(self) -> str:
        """One line per label with the names it went by, quoted: `U1 "Alice"`,
        `U2 "Alice", then "Mallory"`."""
        lines = []
        for user_id, label in self._labels.items():
            names = ", then ".join(quote(n) for n in self._names[user_id]) or '""'
            lines.append(f"{label} {names}")
        return "\n".join(lines)
