"""The store behind memory and sessions, whichever it is: SQLite in the data folder (embedded,
the default) or PostgreSQL (one database shared by several processes). Both offer the same
methods; `AnyStore` names either for the type checker without importing asyncpg, which only
the `postgres` extra installs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from memory.bank import DATABASE
from memory.store import Store, StoreError

if TYPE_CHECKING:
    from memory.pgstore import PgStore

    AnyStore: TypeAlias = Store | PgStore

__all__ = ["open_store"]  # and AnyStore, for annotations only


async def open_store(data_dir: Path, dsn: str | None = None) -> AnyStore:
    """PostgreSQL at `dsn` when one is given, else SQLite in `data_dir`; StoreError says why
    one cannot be opened."""
    if dsn is None:
        return await Store.open(data_dir / DATABASE)
    try:
        from memory.pgstore import PgStore  # the `postgres` extra
    except ImportError:
        raise StoreError(
            "storage = \"postgres\" needs the postgres extra: pip install 'kizuna[postgres]'"
        ) from None
    return await PgStore.open(dsn)
