"""The PostgreSQL store: the same operations as the SQLite store (session snapshots, the
archive, long-term memories with their embeddings and full-text index, the diary, profiles,
prune reports, intentions, contacts and the outreach ledger), on a server several bot processes
can share, which adds leases.

Times are unix seconds in double precision and JSON is text, as in SQLite, so both stores
return identical objects (the row decoders are memory.storage.rows'). Every write that is one
transaction in SQLite is one here; the server's row locks take the place of Store's write lock.

`PgStore` is made of one part per thing kept (each a module here, on `PgBase`'s connections,
or memory.storage's where both stores run the same SQL: see memory.storage.statements);
together they implement memory.storage.Storage and memory.storage.LeaseStore.
"""

from __future__ import annotations

import uuid

import asyncpg

from memory.storage.archive import Archive
from memory.storage.errors import StoreError
from memory.storage.journal import Journal
from memory.storage.postgres.base import server_name, settings
from memory.storage.postgres.contacts import PgContacts
from memory.storage.postgres.coordination import PgCoordination
from memory.storage.postgres.embeddings import PgEmbeddings
from memory.storage.postgres.intentions import PgIntentions
from memory.storage.postgres.leases import PgLeases
from memory.storage.postgres.memories import PgMemories
from memory.storage.postgres.rooms import PgRooms
from memory.storage.postgres.sessions import PgSessions

__all__ = ["PgStore"]


async def _kept_as_is(connection: asyncpg.Connection) -> None:
    """What the pool does to a connection given back, after asyncpg has rolled back a
    transaction left open: nothing more. Its default reset (RESET ALL, advisory locks, cursors
    and LISTEN cleared) is a round trip on every release, as many as the store's statements,
    to clear what its connections never keep: the store sets nothing for the session that a
    later statement relies on being unset (a vector search sets the `hnsw.` settings it
    uses itself before every search), and its session locks and listeners are on its own connection
    outside the pool."""


class PgStore(
    PgSessions,
    Archive,
    PgMemories,
    PgEmbeddings,
    Journal,
    PgRooms,
    PgIntentions,
    PgContacts,
    PgCoordination,
    PgLeases,
):
    """Open with `await PgStore.open(dsn)`; close with `await store.close()`.

    Several processes may share one database: each write is a transaction of its own, and
    encoding marks a conversation under its row lock, so it is encoded once whoever gets there
    first.
    """

    @classmethod
    async def open(cls, dsn: str, *, min_size: int = 1, max_size: int = 10) -> PgStore:
        """Connect (creating or migrating the schema); StoreError says why not."""
        where = server_name(dsn)
        # The connections' name is the writer in change notifications (a name set at connect
        # survives the pool's reset of each connection it takes back).
        instance = f"kizuna-{uuid.uuid4().hex[:12]}"
        try:
            pool = await asyncpg.create_pool(
                dsn,
                min_size=min_size,
                max_size=max_size,
                server_settings=settings(instance),
                reset=_kept_as_is,
            )
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, ValueError) as e:
            # ValueError: a malformed connection string (a port that is not a number...).
            raise StoreError(f"{where}: cannot open the database: {e}") from None
        store = cls(pool, dsn, instance)
        try:
            await store._migrate()
            await store.fill_search()
            await store._vectors()
        except BaseException as e:
            await pool.close()
            if isinstance(e, asyncpg.PostgresError):
                raise StoreError(f"{where}: cannot open the database: {e}") from None
            raise
        return store
