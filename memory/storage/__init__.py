"""The store behind memory and sessions, whichever it is: SQLite in the data folder (embedded,
the default: memory.storage.sqlite) or PostgreSQL (one database shared by several processes:
memory.storage.postgres, the `postgres` extra).

Each part of Kizuna sees the store through the narrow protocol of what it keeps
(memory.storage.protocols). `Storage` is all of them, what `open_store` returns; both
`Store` and `PgStore` implement it (mypy holds them to it: `open_store` returns either as
one)."""

from __future__ import annotations

from pathlib import Path

from memory.storage.errors import StoreError
from memory.storage.protocols import (
    ArchiveStore,
    BankStore,
    ContactStore,
    Coordination,
    IntentionStore,
    JournalStore,
    LeaseStore,
    MemoryStore,
    RoomStore,
    SessionStore,
    Storage,
)
from memory.storage.sqlite import DATABASE, Store

__all__ = [
    "DATABASE",
    "ArchiveStore",
    "BankStore",
    "ContactStore",
    "Coordination",
    "IntentionStore",
    "JournalStore",
    "LeaseStore",
    "MemoryStore",
    "RoomStore",
    "SessionStore",
    "Storage",
    "StoreError",
    "open_store",
]


async def open_store(data_dir: Path, dsn: str | None = None) -> Storage:
    """PostgreSQL at `dsn` when one is given, else SQLite in `data_dir`; StoreError says why
    one cannot be opened."""
    if dsn is None:
        return await Store.open(data_dir / DATABASE)
    try:
        from memory.storage.postgres import PgStore  # the `postgres` extra
    except ImportError:
        raise StoreError(
            "storage = \"postgres\" needs the postgres extra: pip install 'kizuna[postgres]'"
        ) from None
    return await PgStore.open(dsn)
