"""The SQLite store's connection, schema and shared helpers, which every part of `Store`
(memory.storage.sqlite) builds on.

One aiosqlite connection in WAL mode; the schema is versioned with PRAGMA user_version and
migrated forward on open (migrations/NNN_what.sql). Every query that touches a conversation or
a memory names its scope.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import urllib.parse
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, Self, TypeVar

import aiosqlite
from filelock import FileLock, Timeout

from memory.groupcommit import GroupCommit
from memory.private import FILE_MODE, private_file, private_folder, tighten
from memory.storage.errors import StoreError
from memory.storage.held import HeldScopes
from memory.storage.schema import migrations
from memory.storage.statements import Statement, Statements, placeholders, runs

__all__ = [
    "CHUNK",
    "DATABASE",
    "MIGRATIONS",
    "SCRUBBED_FROM",
    "SqliteBase",
    "serialised",
]

DATABASE = "kizuna.sqlite3"  # the file in the data folder

log = logging.getLogger(__name__)

# Entry i moves the schema from version i to i + 1.
MIGRATIONS: Sequence[str] = migrations("memory.storage.sqlite")
# The first schema version whose databases are scrubbed: one older is vacuumed on upgrade.
SCRUBBED_FROM = 7

# SQLite allows 32766 parameters; stay well below in IN (...) lists.
CHUNK = 900


B = TypeVar("B", bound="SqliteBase")
P = ParamSpec("P")
T = TypeVar("T")


def serialised(
    method: Callable[Concatenate[B, P], Coroutine[Any, Any, T]],
) -> Callable[Concatenate[B, P], Coroutine[Any, Any, T]]:
    """One write transaction at a time on the shared connection: a rollback must never undo
    another coroutine's writes, nor its commit publish half of ours."""

    async def serialised(self: B, /, *args: P.args, **kwargs: P.kwargs) -> T:
        async with self._writing:
            return await method(self, *args, **kwargs)

    serialised.__doc__ = method.__doc__
    return serialised


def _read_only_uri(path: Path) -> str:
    return "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"


class SqliteBase(Statements):
    """Open with `await Store.open(path)`; close with `await store.close()`.

    One process at a time: snapshots are written from memory, so two processes on one
    database would overwrite each other's turns. A lock file beside the database refuses the
    second one (the OS drops the lock if a process dies).
    """

    def __init__(self, db: aiosqlite.Connection, path: Path, lock: FileLock | None) -> None:
        self._db = db
        self._lock = lock
        self._writing = asyncio.Lock()
        self._scopes_held = HeldScopes()  # see scope_lock
        # The contact notes and reinforcements of turns under way, written together.
        self._soon: GroupCommit[Statement] = GroupCommit(self._write_runs)
        self.path = path
        self.where = str(path)  # for messages, as PgStore's names its server

    @classmethod
    async def open(cls, path: Path, *, read_only: bool = False) -> Self:
        """Open (creating or migrating) the database; StoreError names the path and why not.
        `read_only`: look at an existing database, even one a running process holds (WAL
        lets a reader in beside the writer); nothing is created, migrated or locked."""
        if read_only:
            return await cls._open_reader(path)
        lock = FileLock(path.with_name(path.name + ".lock"), mode=FILE_MODE)
        try:
            private_folder(path.parent)
            lock.acquire(timeout=0)
        except Timeout:
            raise StoreError(
                f"{path}: in use by another Kizuna process; stop it first, or give this one "
                "another data_dir"
            ) from None
        except OSError as e:
            raise StoreError(f"{path}: cannot open the database: {e}") from None
        try:
            private_file(path)
            # What an older Kizuna left readable by all, beside the database.
            companions = [Path(f"{path}{end}") for end in ("-wal", "-shm", ".lock")]
            tighten(*companions, *path.parent.glob(f"{path.name}.before-restore-*"))
            db = await aiosqlite.connect(path)
        except (OSError, sqlite3.Error) as e:
            lock.release()
            raise StoreError(f"{path}: cannot open the database: {e}") from None
        try:
            await db.execute("PRAGMA journal_mode=WAL")
            # In WAL mode NORMAL never corrupts; a power cut may lose the last few seconds,
            # which the next snapshot would have rewritten anyway.
            await db.execute("PRAGMA synchronous=NORMAL")
            await db.execute("PRAGMA foreign_keys=ON")
            await db.execute("PRAGMA busy_timeout=5000")
            # Reads of a large bank's rows from the page cache without a copy each.
            await db.execute("PRAGMA mmap_size=268435456")
            # Deleted rows are overwritten with zeros, not left in free space: see scrub.
            await db.execute("PRAGMA secure_delete=ON")
            store = cls(db, path, lock)
            await store._migrate()
        except BaseException as e:
            await db.close()
            lock.release()
            if isinstance(e, sqlite3.Error):
                raise StoreError(f"{path}: cannot open the database: {e}") from None
            raise
        return store

    @classmethod
    async def _open_reader(cls, path: Path) -> Self:
        try:
            db = await aiosqlite.connect(_read_only_uri(path), uri=True)
        except (OSError, sqlite3.Error) as e:
            raise StoreError(f"{path}: cannot open the database: {e}") from None
        store = cls(db, path, None)
        try:
            await db.execute("PRAGMA busy_timeout=5000")
            version = await store.schema_version()
        except BaseException as e:
            await db.close()
            if isinstance(e, sqlite3.Error):
                raise StoreError(f"{path}: cannot open the database: {e}") from None
            raise
        if version != len(MIGRATIONS):
            await db.close()
            raise StoreError(
                f"{path} has schema version {version}, this Kizuna {len(MIGRATIONS)}: open it "
                "once with `kizuna chat` or `kizuna run` to migrate it"
            )
        return store

    async def close(self) -> None:
        await self._soon.finish()
        try:
            await self._db.close()
        finally:
            if self._lock is not None:
                self._lock.release()

    # Reads take one trip to SQLite's thread (execute, fetch and close together): under load,
    # the trips, not the queries, were most of a turn's time in the store.
    async def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return list(await self._db.execute_fetchall(sql, params))

    async def _all_in(
        self,
        query: Callable[[str], str],
        first: Sequence[Any],
        values: Sequence[Any],
        *,
        lists: int = 1,
    ) -> list[Any]:
        """The rows of `query(marks)` for all of `values`, CHUNK at a time: `marks` are one
        chunk's placeholders, for the query's `lists` IN (...) lists, whose parameters are
        `first` and then the chunk once per list."""
        rows: list[Any] = []
        for start in range(0, len(values), CHUNK):
            chunk = list(values[start : start + CHUNK])
            rows += await self._all(query(placeholders(len(chunk))), (*first, *chunk * lists))
        return rows

    async def _one(self, sql: str, params: Sequence[Any] = ()) -> Any | None:
        rows = await self._db.execute_fetchall(sql, params)
        return next(iter(rows), None)

    # _write and _write_together take the write lock themselves: never from a `serialised`
    # method (the lock is not reentrant).
    async def _write(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        async with self._writing, self._transaction():
            return list(await self._db.execute_fetchall(sql, params))

    async def _write_together(
        self, statements: Sequence[tuple[str, Sequence[Any]]]
    ) -> list[list[Any]]:
        # sqlite3 opens one implicit transaction for them all; the commit ends it.
        async with self._writing, self._transaction():
            return [list(await self._db.execute_fetchall(sql, p)) for sql, p in statements]

    async def _write_soon(self, sql: str, params: Sequence[Any]) -> None:
        await self._soon([(sql, params)])

    async def _write_runs(self, statements: list[Statement]) -> None:
        """`statements` in order, in one transaction; a run of one SQL goes to SQLite's
        thread as one executemany."""
        async with self._writing, self._transaction():
            for sql, params in runs(statements):
                await self._db.executemany(sql, params)

    @contextlib.asynccontextmanager
    async def _transaction(self) -> AsyncIterator[None]:
        """The block's writes, committed together as it ends, or rolled back if it raises
        (held under the write lock: see `serialised`)."""
        try:
            yield
            await self._db.commit()
        except BaseException:
            await self._db.rollback()
            raise

    async def schema_version(self) -> int:
        row = await self._one("PRAGMA user_version")
        return int(row[0]) if row else 0

    async def _migrate(self) -> None:
        version = await self.schema_version()
        if version > len(MIGRATIONS):
            raise StoreError(
                f"{self.path} has schema version {version}, newer than this Kizuna knows "
                f"({len(MIGRATIONS)}): upgrade Kizuna"
            )
        for number in range(version, len(MIGRATIONS)):
            # executescript commits first; the script and the version bump then commit together.
            await self._db.executescript(
                f"BEGIN;\n{MIGRATIONS[number]}\nPRAGMA user_version = {number + 1};\nCOMMIT;"
            )
        if 0 < version < SCRUBBED_FROM:
            # What older versions deleted stayed in free pages: rewrite the file without them.
            await self._db.execute("VACUUM")
            await self._checkpoint()

    async def _scrub(self, *, words: bool = True) -> None:
        """After a commit that deleted what people said: no copy stays in the data folder.
        secure_delete has zeroed the rows in their pages; `words`: FTS5 keeps a deleted row's
        words in its older segments until they are merged, so merge them all now; and the
        WAL still holds the pages as they were before, so copy it into the database and
        empty it."""
        if words:
            await self._db.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
            await self._db.commit()
        await self._checkpoint()

    async def _checkpoint(self) -> None:
        row = await self._one("PRAGMA wal_checkpoint(TRUNCATE)")
        if row is not None and row[0]:
            # A reader (`kizuna memories` beside the bot) holds an older snapshot: the WAL is
            # emptied by the next checkpoint that finds none.
            log.warning("the WAL could not be emptied now: a reader holds it")
