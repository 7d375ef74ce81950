"""Each store's schema as the SQL files of its `migrations` folder: `001_what.sql` moves the
schema from version 0 to 1, `002_....sql` from 1 to 2, and so on. Append only; never edit a
shipped one (a database migrated by it would differ from a new one)."""

from __future__ import annotations

import re
from importlib import resources

__all__ = ["migrations"]

_NAME = re.compile(r"(\d{3})_[a-z0-9_]+\.sql")


def migrations(package: str) -> tuple[str, ...]:
    """The SQL of `package`'s migrations, in order. The numbers must run 1, 2, 3... without a
    gap or a repeat: a missing step would leave every database after it wrong."""
    found: dict[int, str] = {}
    for entry in (resources.files(package) / "migrations").iterdir():
        named = _NAME.fullmatch(entry.name)
        if named is None:
            continue
        number = int(named[1])
        if number in found:
            raise RuntimeError(f"{package}: two migrations numbered {number:03d}")
        found[number] = entry.read_text(encoding="utf-8")
    if not found:
        raise RuntimeError(f"{package}: no migrations found (an install without its .sql files?)")
    if sorted(found) != list(range(1, len(found) + 1)):
        raise RuntimeError(
            f"{package}: migrations numbered {sorted(found)}, not 1 to {len(found)} in turn"
        )
    return tuple(found[n] for n in sorted(found))
