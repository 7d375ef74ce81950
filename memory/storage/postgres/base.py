"""The PostgreSQL store's connections, schema and shared helpers, which every part of
`PgStore` (memory.storage.postgres) builds on.

An asyncpg pool, and one connection of this process's own outside it (for notifications and
advisory locks); the schema is versioned in the `kizuna_schema` table and migrated forward on
open (migrations/NNN_what.sql), under an advisory lock so that processes starting together
migrate once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import urllib.parse
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import asyncpg

from memory.groupcommit import GroupCommit
from memory.storage.errors import StoreError
from memory.storage.held import HeldScopes
from memory.storage.schema import migrations
from memory.storage.statements import Statement, Statements, numbered, runs

__all__ = [
    "MIGRATIONS",
    "MIGRATION_LOCK",
    "PgBase",
    "clean_json",
    "clean_text",
    "in_lock_order",
    "json_object",
    "server_name",
    "settings",
]

# Entry i moves the schema from version i to i + 1.
MIGRATIONS: Sequence[str] = migrations("memory.storage.postgres")

# Any constant: the lock every process opening the database takes while it migrates (and
# while it sets up the vector index).
MIGRATION_LOCK = 0x6B697A756E61

T = TypeVar("T")

log = logging.getLogger(__name__)

# Seconds between attempts to get back the connection that hears other processes' changes,
# doubling from the first to the last.
RECONNECT_FIRST = 1.0
RECONNECT_LAST = 30.0

# How many of a `_write_soon` statement's first parameters are its row's key (a contact's:
# persona, platform, user id).
KEY = 3


def server_name(dsn: str) -> str:
    """The server and database a DSN names, without its password (nor anything else of a
    DSN that is not a URL, where a password may hide): for messages."""
    try:
        url = urllib.parse.urlsplit(dsn.strip())
    except ValueError:  # a malformed URL ("postgresql://[bad/db")
        return "the PostgreSQL database (a malformed connection string)"
    if not url.scheme or not url.netloc:
        return "the PostgreSQL database (a connection string that is not a URL)"
    return f"{url.scheme}://{url.netloc.rpartition('@')[2]}{url.path}"


def settings(instance: str) -> dict[str, str]:
    """Every connection's settings: named for this process (its leases and change
    notifications), and probed while idle, so that the server ends the connections of a
    machine that died within a minute or so rather than the system's two hours, and its
    leases and locks pass to the others."""
    return {
        "application_name": instance,
        "tcp_keepalives_idle": "30",
        "tcp_keepalives_interval": "10",
        "tcp_keepalives_count": "3",
    }


def clean_text(text: str) -> str:
    """Text PostgreSQL can store: lone surrogates (from undecodable input) and NUL become "?"."""
    if text.isascii():
        return text.replace("\x00", "?")
    return text.encode("utf-8", "replace").decode("utf-8").replace("\x00", "?")


def json_object(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def clean_json(value: Any) -> str:
    # json.dumps writes NUL as \u0000: only surrogates need replacing.
    return clean_text(json.dumps(value, ensure_ascii=False))


def in_lock_order(items: Sequence[tuple[int, T]]) -> list[tuple[int, T]]:
    """Row updates sorted by id (stable: repeats keep their order). Two transactions that lock
    the same rows in the same order wait for each other instead of deadlocking."""
    return sorted(items, key=lambda item: item[0])


class PgBase(Statements):
    """Open with `await PgStore.open(dsn)`; close with `await store.close()`."""

    def __init__(self, pool: asyncpg.Pool, dsn: str, instance: str) -> None:
        self._pool = pool
        self._dsn = dsn  # for the listening connection, which stays out of the pool
        self.where = server_name(dsn)  # the server and database, for messages (no password)
        self.instance = instance  # names this process's writes in change notifications
        # One connection of this process's own, outside the pool: it listens for other
        # processes' changes and holds the advisory locks of the jobs this process leads
        # (they go with it if the process dies).
        self._session: asyncpg.Connection | None = None
        self._session_busy = asyncio.Lock()  # a connection runs one query at a time
        self._led: set[str] = set()
        self._returned: dict[str, asyncio.Event] = {}  # by _lease_key, for those waiting
        self._scopes_held = HeldScopes()  # by a task of this process (see scope_lock)
        self._hearing: list[tuple[str, Callable[[object, int, str, str], None]]] = []
        # Told when notifications may have been missed: the connection hearing them was lost.
        self._missing: list[Callable[[], None]] = []
        self._reconnecting: asyncio.Task[None] | None = None
        # The contact notes of turns under way, written together: one trip for many turns.
        self._soon: GroupCommit[Statement] = GroupCommit(self._write_runs)
        self._closed = False

    async def close(self) -> None:
        self._closed = True
        await self._soon.finish()
        if self._reconnecting is not None:
            self._reconnecting.cancel()
            await asyncio.gather(self._reconnecting, return_exceptions=True)
        async with self._session_busy:
            if self._session is not None:
                await self._session.close()
                self._session = None
        await self._pool.close()

    async def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return list(await self._pool.fetch(numbered(sql), *params))

    async def _one(self, sql: str, params: Sequence[Any] = ()) -> Any | None:
        return await self._pool.fetchrow(numbered(sql), *params)

    async def _write(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return await self._all(sql, params)

    async def _write_soon(self, sql: str, params: Sequence[Any]) -> None:
        await self._soon([(sql, params)])

    async def _write_runs(self, statements: list[Statement]) -> None:
        """Each run of one SQL as one executemany, a transaction of its own, its rows in key
        order (stable): two processes' runs lock the rows they share in one order, so they wait for
        each other instead of deadlocking (as one transaction across runs could)."""
        async with self._pool.acquire() as conn:
            for sql, params in runs(statements):
                rows = sorted((tuple(p) for p in params), key=lambda p: p[:KEY])
                await conn.executemany(numbered(sql), rows)

    async def _write_together(
        self, statements: Sequence[tuple[str, Sequence[Any]]]
    ) -> list[list[Any]]:
        async with self._pool.acquire() as conn, conn.transaction():
            return [list(await conn.fetch(numbered(sql), *p)) for sql, p in statements]

    async def schema_version(self) -> int:
        # An open store has the table: opening created it.
        return int(await self._pool.fetchval("SELECT max(version) FROM kizuna_schema"))

    async def _migrate(self) -> None:
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
            await conn.execute("CREATE TABLE IF NOT EXISTS kizuna_schema (version INTEGER)")
            version = int(
                await conn.fetchval("SELECT coalesce(max(version), 0) FROM kizuna_schema")
            )
            if version > len(MIGRATIONS):
                raise StoreError(
                    f"{self.where} has schema version {version}, newer than this "
                    f"Kizuna knows ({len(MIGRATIONS)}): upgrade Kizuna"
                )
            for number in range(version, len(MIGRATIONS)):
                await conn.execute(MIGRATIONS[number])
            if version < len(MIGRATIONS):
                await conn.execute("DELETE FROM kizuna_schema")
                await conn.execute("INSERT INTO kizuna_schema VALUES ($1)", len(MIGRATIONS))

    async def _on_session(self, query: str, *args: object) -> tuple[asyncpg.Connection, Any]:
        """Run a query on this process's own connection (holding _session_busy), on a new one
        if that connection is found dead (its locks went with it); returns the connection
        used and the query's value."""
        session = await self._own_connection()
        try:
            return session, await session.fetchval(query, *args)
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError):
            if not session.is_closed():
                raise
        session = await self._own_connection()
        return session, await session.fetchval(query, *args)

    async def _own_connection(self) -> asyncpg.Connection:
        """This process's own connection (call holding _session_busy), reconnected if it
        dropped."""
        if self._session is None or self._session.is_closed():
            lost = self._session is not None
            self._led.clear()  # a new connection holds no locks, and hears nothing yet
            # Named like the pool's: while it is open, this process holds its leases.
            self._session = await asyncpg.connect(
                self._dsn, server_settings=settings(self.instance)
            )
            self._session.add_termination_listener(self._lost)
            await self._session.add_listener("kizuna_leases", self._lease_returned)
            for channel, heard in self._hearing:
                await self._session.add_listener(channel, heard)
            if lost:  # what was said while no connection listened is heard by no one
                self._missed()
        return self._session

    def _lost(self, conn: object) -> None:
        """The own connection closed under this process (the server restarted, the network
        dropped): its locks went with it, and its notifications stop. What was followed from
        them may be out of date from now on; the connection is got back at once, and again
        after RECONNECT_FIRST, doubling to RECONNECT_LAST seconds, for as long as it fails."""
        if self._closed or conn is not self._session:
            return  # closed on purpose, or an old connection's
        self._led.clear()  # another process may lead those jobs now
        self._missed()
        if self._hearing and (self._reconnecting is None or self._reconnecting.done()):
            self._reconnecting = asyncio.ensure_future(self._reconnect())

    async def _reconnect(self) -> None:
        delay = RECONNECT_FIRST
        while not self._closed:
            try:
                async with self._session_busy:
                    if not self._closed:
                        await self._own_connection()
                return
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as e:
                log.warning(
                    "could not reconnect to %s to hear other processes' changes (%s): "
                    "trying again in %.0f s",
                    self.where,
                    type(e).__name__,
                    delay,
                )
            await asyncio.sleep(delay)
            delay = min(2 * delay, RECONNECT_LAST)

    def _missed(self) -> None:
        """Notifications may have been missed: those hearing them are told, and those waiting
        for a lease given back look again."""
        for returned in self._returned.values():
            returned.set()
        self._returned.clear()
        for missed in self._missing:
            missed()

    def _lease_returned(self, _conn: object, _pid: int, _channel: str, payload: str) -> None:
        returned = self._returned.pop(payload, None)
        if returned is not None:
            returned.set()
