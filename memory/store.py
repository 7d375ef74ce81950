"""The SQLite store, the source of truth: session snapshots, archived conversations and
long-term memories (with their embeddings and a full-text index), the diary, user profiles
and prune reports.

One aiosqlite connection in WAL mode; the schema is versioned with PRAGMA user_version and
migrated forward on open. Every query that touches a conversation or a memory names its scope.
Session snapshots are opaque JSON here: their shape belongs to the bot. The memory operations
implement `memory.records.MemoryStore`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import urllib.parse
from collections.abc import AsyncIterator, Callable, Collection, Coroutine, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import aiosqlite
import numpy as np
import numpy.typing as npt
from filelock import FileLock, Timeout

from memory.errors import KizunaError
from memory.private import FILE_MODE, private_file, private_folder, tighten
from memory.records import (
    ArchivedConversation,
    DiaryEntry,
    EncodingWrite,
    IdDigest,
    Kind,
    Memory,
    NewMemory,
    Profile,
    PrunedMemory,
    SessionRow,
    SessionSave,
    Vectors,
)
from memory.rows import (
    clean_text,
    conversation_row,
    diary_row,
    encode_sessions,
    json_text,
    memory_row,
    memory_values,
    moment,
    session_row,
    timestamp,
    vector_bytes,
)

__all__ = ["DATABASE", "Store", "StoreError"]

DATABASE = "kizuna.sqlite3"  # the file in the data folder

log = logging.getLogger(__name__)


# Each entry moves the schema from version i to i + 1. Append only; never edit a shipped one.
MIGRATIONS: Sequence[str] = (
    """
    CREATE TABLE sessions (
        persona    TEXT NOT NULL,
        scope      TEXT NOT NULL,
        snapshot   TEXT NOT NULL,
        updated_at REAL NOT NULL,
        PRIMARY KEY (persona, scope)
    );
    CREATE TABLE conversations (
        id         INTEGER PRIMARY KEY,
        persona    TEXT NOT NULL,
        scope      TEXT NOT NULL,
        started_at REAL NOT NULL,
        ended_at   REAL NOT NULL,
        reason     TEXT NOT NULL,
        turns      TEXT NOT NULL,
        encoded_at REAL
    );
    CREATE INDEX conversations_by_scope ON conversations (persona, scope, ended_at);
    CREATE INDEX conversations_to_encode ON conversations (encoded_at) WHERE encoded_at IS NULL;
    """,
    """
    CREATE TABLE memories (
        id               INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: ids are shown
        scope            TEXT NOT NULL,
        text             TEXT NOT NULL,
        speaker          TEXT,
        kind             TEXT NOT NULL CHECK (
            kind IN ('episodic', 'fact', 'explicit', 'summary')
        ),
        category         TEXT CHECK (
            category IN ('work_study', 'social_emotional', 'special', 'personal_daily')
        ),
        importance       INTEGER NOT NULL CHECK (importance BETWEEN 1 AND 3),
        sentiment        REAL NOT NULL DEFAULT 0 CHECK (sentiment BETWEEN -1 AND 1),
        created_at       REAL NOT NULL,
        last_recalled_at REAL,
        recall_count     INTEGER NOT NULL DEFAULT 0,
        strength         REAL NOT NULL,
        related          TEXT NOT NULL DEFAULT '[]',
        conversation_id  INTEGER,
        previous_id      INTEGER,
        embedding        BLOB,
        embedder         TEXT
    );
    CREATE INDEX memories_by_scope ON memories (scope, created_at);
    CREATE INDEX memories_by_scope_id ON memories (scope, id);
    CREATE INDEX memories_by_previous ON memories (previous_id) WHERE previous_id IS NOT NULL;
    -- The lexical half of recall; rowid = memories.id. `scope_tag` is one token per scope so
    -- a search intersects with its scope inside FTS5 instead of scoring every scope's rows;
    -- `context` holds the memory just before (what this one answers, often).
    CREATE VIRTUAL TABLE memories_fts USING fts5(
        scope_tag, body, context, tokenize = 'porter unicode61 remove_diacritics 2'
    );
    CREATE TABLE embedding_cache (
        embedder  TEXT NOT NULL,
        text_hash BLOB NOT NULL,
        vector    BLOB NOT NULL,
        PRIMARY KEY (embedder, text_hash)
    ) WITHOUT ROWID;
    """,
    """
    -- Encoding: a closed conversation waits here until it is encoded, once. `attempts` and
    -- `retry_at` space out retries after a model failure; `recap` is what the next
    -- conversation is reminded of.
    ALTER TABLE conversations ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE conversations ADD COLUMN retry_at REAL;
    ALTER TABLE conversations ADD COLUMN recap TEXT;
    CREATE TABLE diary (
        scope         TEXT NOT NULL,
        day           TEXT NOT NULL,  -- YYYY-MM-DD in the persona's timezone
        text          TEXT NOT NULL,
        conversations INTEGER NOT NULL,
        updated_at    REAL NOT NULL,
        PRIMARY KEY (scope, day)
    ) WITHOUT ROWID;
    CREATE TABLE profiles (
        scope      TEXT NOT NULL,
        user_id    TEXT NOT NULL,
        name       TEXT NOT NULL,
        text       TEXT NOT NULL,
        updated_at REAL NOT NULL,
        PRIMARY KEY (scope, user_id)
    ) WITHOUT ROWID;
    CREATE TABLE pruned (
        id         INTEGER PRIMARY KEY,
        scope      TEXT NOT NULL,
        memory_id  INTEGER NOT NULL,
        text       TEXT NOT NULL,
        category   TEXT,
        importance INTEGER NOT NULL,
        policy     TEXT NOT NULL,
        reason     TEXT NOT NULL,
        pruned_at  REAL NOT NULL
    );
    CREATE INDEX pruned_by_time ON pruned (pruned_at);
    CREATE TABLE prune_days (
        scope TEXT PRIMARY KEY,
        day   TEXT NOT NULL  -- the last day the scope was pruned: once a day, across restarts
    ) WITHOUT ROWID;
    """,
    """
    -- Which persona speaks in a channel, when one bot hosts several (set by /persona set).
    CREATE TABLE channel_personas (
        bot_id     TEXT NOT NULL,
        channel_id TEXT NOT NULL,
        persona    TEXT NOT NULL,
        bound_by   TEXT NOT NULL,
        bound_at   REAL NOT NULL,
        PRIMARY KEY (bot_id, channel_id)
    ) WITHOUT ROWID;
    """,
    """
    -- Users who let a persona bring what they said in private into group chats (their own
    -- conversations there only).
    CREATE TABLE dm_sharing (
        persona TEXT NOT NULL,
        user    TEXT NOT NULL,  -- "platform:user id"
        since   REAL NOT NULL,
        PRIMARY KEY (persona, user)
    ) WITHOUT ROWID;
    """,
    """
    -- Every recall (and merge) that strengthened a memory, with the strength it left: the
    -- memory's history, for plotting its retention over time. Goes with the memory.
    CREATE TABLE recalls (
        memory_id INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
        at        REAL NOT NULL,
        strength  REAL NOT NULL
    );
    CREATE INDEX recalls_by_memory ON recalls (memory_id, at);
    """,
    """
    -- Forgotten means gone: a prune's report keeps which memory went, when and why, not
    -- what it said; and the full-text index is merged into one segment, which leaves out the
    -- words of memories deleted before (FTS5 keeps them in old segments until a merge).
    -- Store.open then vacuums once, clearing pages freed before secure_delete was on.
    ALTER TABLE pruned DROP COLUMN text;
    INSERT INTO memories_fts (memories_fts) VALUES ('optimize');
    """,
    """
    -- Who said what a memory records, by the platform's stable id: `speaker` is the display
    -- name they had then, which changes and collides.
    ALTER TABLE memories ADD COLUMN speaker_id TEXT;
    """,
)
# The first schema version whose databases are scrubbed: one older is vacuumed on upgrade.
SCRUBBED_FROM = 7

# Log the recall of a memory of the scope (after its update), with the strength it left.
_LOG_RECALL = (
    "INSERT INTO recalls (memory_id, at, strength)"
    " SELECT id, last_recalled_at, strength FROM memories WHERE scope = ? AND id = ?"
)


_UPSERT_SESSION = (
    "INSERT INTO sessions (persona, scope, snapshot, updated_at) VALUES (?, ?, ?, ?)"
    " ON CONFLICT (persona, scope) DO UPDATE"
    " SET snapshot = excluded.snapshot, updated_at = excluded.updated_at"
)


class StoreError(KizunaError):
    pass


_MEMORY_COLUMNS = (
    "id, scope, text, speaker, kind, category, importance, sentiment, created_at,"
    " last_recalled_at, recall_count, strength, related, conversation_id, previous_id,"
    " speaker_id"
)


_CONVERSATION_COLUMNS = (
    "id, persona, scope, started_at, ended_at, reason, turns, encoded_at, attempts, recap"
)


def scope_tag(scope: str) -> str:
    """The one FTS5 token standing for a scope (letters and digits only, so no tokenizer
    splits or stems it)."""
    return "s" + hashlib.blake2b(scope.encode("utf-8", "replace"), digest_size=10).hexdigest() + "0"


def _marks(n: int) -> str:
    return ", ".join("?" * n)


# SQLite allows 32766 parameters; stay well below in IN (...) lists.
_CHUNK = 900


P = ParamSpec("P")
T = TypeVar("T")


def _serialised(
    method: Callable[Concatenate[Store, P], Coroutine[Any, Any, T]],
) -> Callable[Concatenate[Store, P], Coroutine[Any, Any, T]]:
    """One write transaction at a time on the shared connection: a rollback must never undo
    another coroutine's writes, nor its commit publish half of ours."""

    async def serialised(self: Store, /, *args: P.args, **kwargs: P.kwargs) -> T:
        async with self._writing:
            return await method(self, *args, **kwargs)

    serialised.__doc__ = method.__doc__
    return serialised


def _read_only_uri(path: Path) -> str:
    return "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"


class Store:
    """Open with `await Store.open(path)`; close with `await store.close()`.

    One process at a time: snapshots are written from memory, so two processes on one
    database would overwrite each other's turns. A lock file beside the database refuses the
    second one (the OS drops the lock if a process dies).
    """

    def __init__(self, db: aiosqlite.Connection, path: Path, lock: FileLock | None) -> None:
        self._db = db
        self._lock = lock
        self._writing = asyncio.Lock()
        self._scopes_held: set[str] = set()  # see scope_lock
        self.path = path
        self.where = str(path)  # for messages, as PgStore's names its server

    @classmethod
    async def open(cls, path: Path, *, read_only: bool = False) -> Store:
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
    async def _open_reader(cls, path: Path) -> Store:
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

    async def listen(self, changed: Callable[[str], None]) -> None:
        """Nothing to hear: one process has an SQLite database at a time (PgStore tells of
        other processes' changes)."""

    async def leads(self, job: str) -> bool:
        """Always: the one process on an SQLite database does all its work."""
        return True

    @contextlib.asynccontextmanager
    async def scope_lock(self, scope: str) -> AsyncIterator[bool]:
        """Hold a scope's lock for its encoding or prune (see PgStore.scope_lock): yields
        whether it is held, which it is unless another task of this process holds it (the
        one process on an SQLite database has no other to share with)."""
        if scope in self._scopes_held:
            yield False
            return
        self._scopes_held.add(scope)
        try:
            yield True
        finally:
            self._scopes_held.discard(scope)

    async def close(self) -> None:
        try:
            await self._db.close()
        finally:
            if self._lock is not None:
                self._lock.release()

    # Reads take one trip to SQLite's thread (execute, fetch and close together): under load,
    # the trips, not the queries, were most of a turn's time in the store.
    async def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return list(await self._db.execute_fetchall(sql, params))

    async def _one(self, sql: str, params: Sequence[Any] = ()) -> Any | None:
        rows = await self._db.execute_fetchall(sql, params)
        return next(iter(rows), None)

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

    # Sessions: one snapshot per open conversation.

    @_serialised
    async def save_session(
        self, persona: str, scope: str, snapshot: dict[str, Any], updated_at: datetime
    ) -> None:
        await self._db.execute(
            _UPSERT_SESSION,
            (persona, scope, json_text(snapshot), timestamp(updated_at)),
        )
        await self._db.commit()

    @_serialised
    async def save_sessions(self, snapshots: Sequence[SessionSave]) -> None:
        """Several sessions' snapshots in one transaction (autosave), their JSON written off
        the event loop."""
        rows = await encode_sessions(snapshots)
        await self._db.executemany(_UPSERT_SESSION, rows)
        await self._db.commit()

    async def load_session(self, persona: str, scope: str) -> SessionRow | None:
        row = await self._one(
            "SELECT persona, scope, snapshot, updated_at FROM sessions"
            " WHERE persona = ? AND scope = ?",
            (persona, scope),
        )
        return None if row is None else session_row(row)

    async def load_sessions(self, personas: Collection[str]) -> list[SessionRow]:
        """Every session of the given personas, oldest first."""
        names = sorted(set(personas))
        marks = ", ".join("?" * len(names))
        rows = await self._all(
            "SELECT persona, scope, snapshot, updated_at FROM sessions"
            f" WHERE persona IN ({marks}) ORDER BY updated_at",
            names,
        )
        return [session_row(r) for r in rows]

    # Channel bindings: the persona a channel of a multi-persona bot talks to.

    async def channel_persona(self, bot_id: str, channel_id: str) -> str | None:
        row = await self._one(
            "SELECT persona FROM channel_personas WHERE bot_id = ? AND channel_id = ?",
            (bot_id, channel_id),
        )
        return None if row is None else str(row[0])

    @_serialised
    async def bind_channel(
        self, bot_id: str, channel_id: str, persona: str, bound_by: str, at: datetime
    ) -> None:
        await self._db.execute(
            "INSERT INTO channel_personas (bot_id, channel_id, persona, bound_by, bound_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (bot_id, channel_id) DO UPDATE"
            " SET persona = excluded.persona, bound_by = excluded.bound_by,"
            " bound_at = excluded.bound_at",
            (bot_id, channel_id, persona, bound_by, timestamp(at)),
        )
        await self._db.commit()

    # Sharing of private memories in groups, by the user's choice.

    async def dm_sharing(self, persona: str, user: str) -> bool:
        rows = await self._all(
            "SELECT 1 FROM dm_sharing WHERE persona = ? AND user = ?", (persona, user)
        )
        return bool(rows)

    @_serialised
    async def set_dm_sharing(self, persona: str, user: str, on: bool, at: datetime) -> None:
        if on:
            await self._db.execute(
                "INSERT OR IGNORE INTO dm_sharing (persona, user, since) VALUES (?, ?, ?)",
                (persona, user, timestamp(at)),
            )
        else:
            await self._db.execute(
                "DELETE FROM dm_sharing WHERE persona = ? AND user = ?", (persona, user)
            )
        await self._db.commit()

    # Conversations: closed sessions, kept until long-term memory has encoded them.

    @_serialised
    async def archive_conversation(
        self,
        persona: str,
        scope: str,
        *,
        started_at: datetime,
        ended_at: datetime,
        reason: str,
        turns: list[dict[str, Any]],
        snapshot: dict[str, Any],
    ) -> int:
        """Archive a closed conversation and replace the session's snapshot, atomically: a crash
        leaves either the open conversation or the archived one, never both or neither."""
        # sqlite3 opens one implicit transaction for both statements; commit ends it.
        try:
            cur = await self._db.execute(
                "INSERT INTO conversations (persona, scope, started_at, ended_at, reason, turns)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    persona,
                    scope,
                    timestamp(started_at),
                    timestamp(ended_at),
                    reason,
                    json_text(turns),
                ),
            )
            conversation_id = cur.lastrowid
            await self._db.execute(
                _UPSERT_SESSION,
                (persona, scope, json_text(snapshot), timestamp(ended_at)),
            )
            await self._db.commit()
        except BaseException:
            await self._db.rollback()
            raise
        assert conversation_id is not None
        return conversation_id

    async def conversations(
        self, persona: str, scope: str, *, limit: int = 20
    ) -> list[ArchivedConversation]:
        """The scope's archived conversations, newest first."""
        rows = await self._all(
            f"SELECT {_CONVERSATION_COLUMNS} FROM conversations WHERE persona = ? AND scope = ?"
            " ORDER BY ended_at DESC, id DESC LIMIT ?",
            (persona, scope, limit),
        )
        return [conversation_row(r) for r in rows]

    async def unencoded(
        self,
        personas: Collection[str],
        now: datetime,
        *,
        limit: int = 20,
        skip: Collection[tuple[str, str]] = (),
    ) -> list[ArchivedConversation]:
        """Conversations of these personas waiting to be encoded and due (not waiting out a
        retry delay), oldest first; none of the (persona, scope) pairs in `skip`."""
        if not personas:
            return []
        names = list(personas)
        skipped = " AND (persona, scope) NOT IN (VALUES {})".format(
            ", ".join(["(?, ?)"] * len(skip))
        )
        rows = await self._all(
            f"SELECT {_CONVERSATION_COLUMNS} FROM conversations"
            f" WHERE encoded_at IS NULL AND persona IN ({_marks(len(names))})"
            f" AND (retry_at IS NULL OR retry_at <= ?){skipped if skip else ''}"
            " ORDER BY ended_at, id LIMIT ?",
            (*names, timestamp(now), *(v for pair in skip for v in pair), limit),
        )
        return [conversation_row(r) for r in rows]

    async def conversation(self, conversation_id: int) -> ArchivedConversation | None:
        row = await self._one(
            f"SELECT {_CONVERSATION_COLUMNS} FROM conversations WHERE id = ?",
            (conversation_id,),
        )
        return None if row is None else conversation_row(row)

    @_serialised
    async def encoding_failed(self, conversation_id: int, retry_at: datetime) -> None:
        """Count a failed attempt; the conversation waits until `retry_at`."""
        await self._db.execute(
            "UPDATE conversations SET attempts = attempts + 1, retry_at = ?"
            " WHERE id = ? AND encoded_at IS NULL",
            (timestamp(retry_at), conversation_id),
        )
        await self._db.commit()

    async def count_conversations(self, persona: str, scope: str) -> int:
        row = await self._one(
            "SELECT count(*) FROM conversations WHERE persona = ? AND scope = ?",
            (persona, scope),
        )
        return int(row[0]) if row else 0

    @_serialised
    async def wipe(self, persona: str, scope: str) -> None:
        """Forget everything of one persona in one scope: the open session and the archive."""
        await self._db.execute(
            "DELETE FROM sessions WHERE persona = ? AND scope = ?", (persona, scope)
        )
        await self._db.execute(
            "DELETE FROM conversations WHERE persona = ? AND scope = ?", (persona, scope)
        )
        await self._db.commit()
        await self._scrub(words=False)

    @_serialised
    async def wipe_memories(self, scope: str) -> int:
        """Delete every memory of a scope (and its full-text rows), its diary, profiles and
        prune reports; returns how many memories went."""
        rows = await self._all("SELECT id FROM memories WHERE scope = ?", (scope,))
        ids = [r[0] for r in rows]
        try:
            gone = await self._delete(scope, ids)
            for table in ("diary", "profiles", "pruned", "prune_days"):
                await self._db.execute(f"DELETE FROM {table} WHERE scope = ?", (scope,))
            await self._db.commit()
        except BaseException:
            await self._db.rollback()
            raise
        await self._scrub(words=bool(gone))
        return len(gone)

    # Encoding, the diary, profiles and pruning.

    @_serialised
    async def commit_encoding(self, write: EncodingWrite) -> list[int] | None:
        """Write an encoded conversation (see EncodingWrite) and mark it encoded, in one
        transaction. Returns the new memories' ids, or None if it was already encoded (then
        nothing is written)."""
        at = timestamp(write.at)
        try:
            cur = await self._db.execute(
                "UPDATE conversations SET encoded_at = ?, recap = ?"
                " WHERE id = ? AND encoded_at IS NULL",
                (at, clean_text(write.recap), write.conversation_id),
            )
            if cur.rowcount != 1:
                await self._db.rollback()
                return None
            ids: list[int] = []
            for memory in write.memories:
                ids.append(await self._insert(memory, ids[-1] if ids else None))
            for memory_id, memory, siblings in zip(
                ids, write.memories, write.sibling_links, strict=True
            ):
                if siblings:
                    related = [*memory.related, *(ids[i] for i in siblings)]
                    await self._db.execute(
                        "UPDATE memories SET related = ? WHERE id = ?",
                        (json.dumps(related), memory_id),
                    )
            await self._db.executemany(
                "UPDATE memories SET strength = ?, importance = max(importance, ?),"
                " recall_count = recall_count + 1, last_recalled_at = ?"
                " WHERE scope = ? AND id = ?",
                [(m.strength, m.importance, at, write.scope, m.memory_id) for m in write.merges],
            )
            await self._db.executemany(
                _LOG_RECALL, [(write.scope, m.memory_id) for m in write.merges]
            )
            if write.diary is not None:
                day, text = write.diary
                await self._db.execute(
                    "INSERT INTO diary (scope, day, text, conversations, updated_at)"
                    " VALUES (?, ?, ?, 1, ?) ON CONFLICT (scope, day) DO UPDATE"
                    " SET text = excluded.text, conversations = conversations + 1,"
                    " updated_at = excluded.updated_at",
                    (write.scope, day.isoformat(), clean_text(text), at),
                )
            await self._db.executemany(
                "INSERT INTO profiles (scope, user_id, name, text, updated_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope, user_id) DO UPDATE"
                " SET name = excluded.name, text = excluded.text,"
                " updated_at = excluded.updated_at",
                [
                    (write.scope, user_id, clean_text(name), clean_text(text), at)
                    for user_id, name, text in write.profiles
                ],
            )
            await self._db.commit()
        except BaseException:
            await self._db.rollback()
            raise
        return ids

    async def diary_entry(self, scope: str, day: date) -> DiaryEntry | None:
        row = await self._one(
            "SELECT scope, day, text, conversations, updated_at FROM diary"
            " WHERE scope = ? AND day = ?",
            (scope, day.isoformat()),
        )
        return None if row is None else diary_row(row)

    async def diary_entries(
        self, scope: str, *, before: date | None = None, limit: int = 10
    ) -> list[DiaryEntry]:
        """The scope's diary pages, newest first (only those before `before`, if given)."""
        rows = await self._all(
            "SELECT scope, day, text, conversations, updated_at FROM diary"
            " WHERE scope = ? AND day < ? ORDER BY day DESC LIMIT ?",
            (scope, (before or date.max).isoformat(), limit),
        )
        return [diary_row(r) for r in rows]

    async def profiles(self, scope: str, user_ids: Sequence[str] | None = None) -> list[Profile]:
        """The scope's user profiles (those of `user_ids`, if given)."""
        query = "SELECT scope, user_id, name, text, updated_at FROM profiles WHERE scope = ?"
        params: list[Any] = [scope]
        if user_ids is not None:
            if not user_ids:
                return []
            query += f" AND user_id IN ({_marks(len(user_ids))})"
            params.extend(user_ids)
        rows = await self._all(query + " ORDER BY updated_at DESC", params)
        return [Profile(r[0], r[1], r[2], r[3], moment(r[4])) for r in rows]

    async def last_prune(self, scope: str) -> date | None:
        row = await self._one("SELECT day FROM prune_days WHERE scope = ?", (scope,))
        return None if row is None else date.fromisoformat(row[0])

    @_serialised
    async def prune(
        self,
        scope: str,
        day: date,
        forgotten: Sequence[tuple[Memory, str]],
        policy: str,
        at: datetime,
    ) -> list[int]:
        """Delete the forgotten memories, keep a report of each (which, and why: not what it
        said), and note that the scope was pruned on `day`, in one transaction. Returns the
        ids deleted."""
        try:
            gone = set(await self._delete(scope, [m.id for m, _ in forgotten]))
            await self._db.executemany(
                "INSERT INTO pruned (scope, memory_id, category, importance, policy,"
                " reason, pruned_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (scope, m.id, m.category, m.importance, policy, reason, timestamp(at))
                    for m, reason in forgotten
                    if m.id in gone
                ],
            )
            await self._db.execute(
                "INSERT INTO prune_days (scope, day) VALUES (?, ?)"
                " ON CONFLICT (scope) DO UPDATE SET day = excluded.day",
                (scope, day.isoformat()),
            )
            await self._db.commit()
        except BaseException:
            await self._db.rollback()
            raise
        if gone:
            await self._scrub()
        return sorted(gone)

    async def pruned_since(
        self, since: datetime, *, scope: str | None = None, limit: int = 1000
    ) -> list[PrunedMemory]:
        """Prune reports from `since` on, oldest first (of one scope, or all)."""
        query = (
            "SELECT scope, memory_id, category, importance, policy, reason, pruned_at"
            " FROM pruned WHERE pruned_at >= ?"
        )
        params: list[Any] = [timestamp(since)]
        if scope is not None:
            query += " AND scope = ?"
            params.append(scope)
        rows = await self._all(query + " ORDER BY pruned_at, id LIMIT ?", (*params, limit))
        return [PrunedMemory(r[0], r[1], r[2], r[3], r[4], r[5], moment(r[6])) for r in rows]

    # Memories (memory.records.MemoryStore).

    @_serialised
    async def add_memory(self, memory: NewMemory) -> int:
        try:
            memory_id = await self._insert(memory)
            await self._db.commit()
        except BaseException:
            await self._db.rollback()
            raise
        return memory_id

    async def _insert(self, memory: NewMemory, previous_id: int | None = None) -> int:
        """Insert inside the caller's transaction (`previous_id` overrides the memory's)."""
        cur = await self._db.execute(
            "INSERT INTO memories (scope, text, speaker, kind, category, importance,"
            " sentiment, created_at, strength, related, conversation_id, previous_id,"
            " embedding, embedder, speaker_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            memory_values(memory, previous_id),
        )
        memory_id = cur.lastrowid
        assert memory_id is not None
        await self._db.execute(
            "INSERT INTO memories_fts (rowid, scope_tag, body, context) VALUES (?, ?, ?, ?)",
            (
                memory_id,
                scope_tag(memory.scope),
                clean_text(memory.search_text),
                clean_text(memory.search_context),
            ),
        )
        return memory_id

    async def get_memories(self, scope: str, ids: Sequence[int]) -> list[Memory]:
        found: dict[int, Memory] = {}
        unique = list(dict.fromkeys(int(i) for i in ids))
        for start in range(0, len(unique), _CHUNK):
            chunk = unique[start : start + _CHUNK]
            rows = await self._all(
                f"SELECT {_MEMORY_COLUMNS} FROM memories"
                # `+scope`: find the rows by id, then check the scope (a large scope's own
                # index would make SQLite walk all of it).
                f" WHERE +scope = ? AND id IN ({_marks(len(chunk))})",
                (scope, *chunk),
            )
            for row in rows:
                found[row[0]] = memory_row(row)
        return [found[i] for i in unique if i in found]

    async def list_memories(
        self, scope: str, *, limit: int | None = None, newest_first: bool = True
    ) -> list[Memory]:
        order = "DESC" if newest_first else "ASC"
        rows = await self._all(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE scope = ?"
            f" ORDER BY created_at {order}, id {order} LIMIT ?",
            (scope, -1 if limit is None else limit),
        )
        return [memory_row(r) for r in rows]

    async def find_memory(self, scope: str, text: str, kind: Kind) -> int | None:
        async with self._db.execute(
            "SELECT id FROM memories WHERE scope = ? AND kind = ? AND text = ? ORDER BY id LIMIT 1",
            (scope, kind, clean_text(text)),
        ) as cur:
            row = await cur.fetchone()
        return None if row is None else int(row[0])

    async def count_memories(self, scope: str) -> int:
        row = await self._one("SELECT count(*) FROM memories WHERE scope = ?", (scope,))
        return int(row[0]) if row else 0

    @_serialised
    async def delete_memories(self, scope: str, ids: Sequence[int]) -> list[int]:
        try:
            gone = await self._delete(scope, ids)
            await self._db.commit()
        except BaseException:
            await self._db.rollback()
            raise
        if gone:
            await self._scrub()
        return gone

    async def _delete(self, scope: str, ids: Sequence[int]) -> list[int]:
        """Delete inside the caller's transaction; returns the ids that were there."""
        gone: list[int] = []
        unique = list(dict.fromkeys(int(i) for i in ids))
        for start in range(0, len(unique), _CHUNK):
            chunk = unique[start : start + _CHUNK]
            rows = await self._all(
                f"SELECT id FROM memories WHERE scope = ? AND id IN ({_marks(len(chunk))})",
                (scope, *chunk),
            )
            present = [r[0] for r in rows]
            if not present:
                continue
            marks = _marks(len(present))
            # The transcript and recap it was encoded from said it too.
            await self._db.execute(
                "UPDATE conversations SET turns = '[]', recap = NULL WHERE id IN"
                f" (SELECT conversation_id FROM memories WHERE id IN ({marks}))",
                present,
            )
            await self._db.execute(f"DELETE FROM memories WHERE id IN ({marks})", present)
            await self._db.execute(f"DELETE FROM memories_fts WHERE rowid IN ({marks})", present)
            # What came next no longer carries the forgotten text as its context.
            await self._db.execute(
                f"UPDATE memories_fts SET context = '' WHERE rowid IN"
                f" (SELECT id FROM memories WHERE previous_id IN ({marks}))",
                present,
            )
            await self._db.execute(
                f"UPDATE memories SET previous_id = NULL WHERE previous_id IN ({marks})",
                present,
            )
            gone.extend(present)
        return gone

    async def lexical_search(
        self, scope: str, match: str, k: int, *, context_weight: float = 0.35, narrow: bool = True
    ) -> list[tuple[int, float]]:
        # bm25() is lower-is-better and weighs columns in order: the scope tag counts for
        # nothing, the memory before a little. The join on scope is the wall.
        weights = f"0.0, 1.0, {float(context_weight)!r}"
        # The best inside FTS5 first, then the join: joining first would look up every
        # matching row before ranking. Narrowed by the scope's tag, every row FTS5 ranks is
        # the scope's; unnarrowed (cheaper when the scope is most of the database), the best
        # 4k leave room for other scopes' rows, which the join then drops.
        where = f"scope_tag : {scope_tag(scope)} AND " if narrow else ""
        rows = await self._all(
            "SELECT r.id, r.score FROM ("
            f" SELECT rowid AS id, -bm25(memories_fts, {weights}) AS score FROM memories_fts"
            f" WHERE memories_fts MATCH ? ORDER BY bm25(memories_fts, {weights}) LIMIT ?"
            ") AS r JOIN memories AS m ON m.id = r.id WHERE m.scope = ?"
            " ORDER BY r.score DESC LIMIT ?",
            (f"{where}{{body context}} : ({match})", k if narrow else 4 * k, scope, k),
        )
        return [(r[0], float(r[1])) for r in rows]

    async def document_frequencies(self, scope: str, terms: Sequence[str]) -> dict[str, int]:
        """In how many of the scope's memories each term occurs: recall leaves out words too
        common to tell memories apart (counted per scope, so no other scope has a say)."""
        counts: dict[str, int] = {}
        tag = scope_tag(scope)
        for term in terms:
            quoted = '"' + term.replace('"', '""') + '"'
            row = await self._one(
                "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?",
                (f"scope_tag : {tag} AND body : {quoted}",),
            )
            counts[term] = int(row[0]) if row else 0
        return counts

    async def sizes(self, scope: str) -> tuple[int, int]:
        """(memories in the scope, memories in all scopes)."""
        row = await self._one(
            "SELECT (SELECT count(*) FROM memories WHERE scope = ?),"
            " (SELECT max(rowid) - min(rowid) + 1 FROM memories_fts)",
            (scope,),
        )
        return (int(row[0]), int(row[1] or 0)) if row else (0, 0)

    async def last_memory(self, scope: str) -> Memory | None:
        """The scope's most recently stored memory."""
        row = await self._one(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE scope = ? ORDER BY id DESC LIMIT 1",
            (scope,),
        )
        return None if row is None else memory_row(row)

    async def with_successors(self, scope: str, ids: Sequence[int]) -> list[Memory]:
        """The memories `ids` and those stored right after them (whose previous_id is one of
        them), in one read."""
        found: dict[int, Memory] = {}
        unique = list(dict.fromkeys(int(i) for i in ids))
        for start in range(0, len(unique), _CHUNK):
            chunk = unique[start : start + _CHUNK]
            marks = _marks(len(chunk))
            rows = await self._all(
                f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE +scope = ?"
                f" AND (id IN ({marks}) OR previous_id IN ({marks}))",
                (scope, *chunk, *chunk),
            )
            for row in rows:
                found[row[0]] = memory_row(row)
        return list(found.values())

    @_serialised
    async def reinforce(
        self, scope: str, updates: Sequence[tuple[int, float]], now: datetime
    ) -> None:
        await self._db.executemany(
            "UPDATE memories SET recall_count = recall_count + 1, last_recalled_at = ?,"
            " strength = ? WHERE scope = ? AND id = ?",
            [(timestamp(now), strength, scope, memory_id) for memory_id, strength in updates],
        )
        await self._db.executemany(_LOG_RECALL, [(scope, memory_id) for memory_id, _ in updates])
        await self._db.commit()

    async def recall_history(self, scope: str, memory_id: int) -> list[tuple[datetime, float]]:
        """When the memory was recalled (or merged with a repeat), oldest first, with the
        strength each left; empty for a memory outside the scope."""
        rows = await self._all(
            "SELECT r.at, r.strength FROM recalls r JOIN memories m ON m.id = r.memory_id"
            " WHERE m.scope = ? AND m.id = ? ORDER BY r.at, r.rowid",
            (scope, memory_id),
        )
        return [(moment(r[0]), float(r[1])) for r in rows]

    @_serialised
    async def set_related(self, scope: str, memory_id: int, related: Sequence[int]) -> None:
        await self._db.execute(
            "UPDATE memories SET related = ? WHERE scope = ? AND id = ?",
            (json.dumps([int(r) for r in related]), scope, memory_id),
        )
        await self._db.commit()

    async def scopes(self) -> list[str]:
        rows = await self._all("SELECT DISTINCT scope FROM memories ORDER BY scope")
        return [r[0] for r in rows]

    async def embeddings(
        self, scope: str, embedder: str
    ) -> tuple[npt.NDArray[np.int64], Vectors | None]:
        rows = await self._all(
            "SELECT id, embedding FROM memories"
            " WHERE scope = ? AND embedder = ? AND embedding IS NOT NULL ORDER BY id",
            (scope, embedder),
        )
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        if not rows:
            return ids, None
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        return ids, matrix.reshape(len(rows), -1).copy()

    async def unembedded(self, scope: str, embedder: str) -> list[Memory]:
        rows = await self._all(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE scope = ?"
            " AND (embedder IS NOT ? OR embedding IS NULL) ORDER BY id",
            (scope, embedder),
        )
        return [memory_row(r) for r in rows]

    @_serialised
    async def set_embeddings(
        self, scope: str, embedder: str, items: Sequence[tuple[int, Vectors]]
    ) -> None:
        await self._db.executemany(
            "UPDATE memories SET embedding = ?, embedder = ? WHERE scope = ? AND id = ?",
            [(vector_bytes(vector), embedder, scope, memory_id) for memory_id, vector in items],
        )
        await self._db.commit()

    async def embedding_digest(self, scope: str, embedder: str) -> IdDigest:
        row = await self._one(
            "SELECT count(*), total((id * 2654435761) % 4294967296) FROM memories"
            " WHERE scope = ? AND embedder = ? AND embedding IS NOT NULL",
            (scope, embedder),
        )
        assert row is not None
        return IdDigest(int(row[0]), int(row[1]))

    @_serialised
    async def forget_cached(self, keys: Sequence[bytes]) -> None:
        """Drop cached embeddings of these text hashes (of every embedder): a forgotten
        memory's text leaves no trace."""
        unique = list(dict.fromkeys(keys))
        dropped = 0
        for start in range(0, len(unique), _CHUNK):
            chunk = unique[start : start + _CHUNK]
            cur = await self._db.execute(
                f"DELETE FROM embedding_cache WHERE text_hash IN ({_marks(len(chunk))})", chunk
            )
            dropped += cur.rowcount
        await self._db.commit()
        if dropped:
            await self._scrub(words=False)

    async def cached_embeddings(self, embedder: str, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        found: dict[bytes, bytes] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), _CHUNK):
            chunk = unique[start : start + _CHUNK]
            rows = await self._all(
                "SELECT text_hash, vector FROM embedding_cache"
                f" WHERE embedder = ? AND text_hash IN ({_marks(len(chunk))})",
                (embedder, *chunk),
            )
            found.update((r[0], r[1]) for r in rows)
        return found

    @_serialised
    async def cache_embeddings(self, embedder: str, items: Sequence[tuple[bytes, bytes]]) -> None:
        await self._db.executemany(
            "INSERT OR REPLACE INTO embedding_cache (embedder, text_hash, vector) VALUES (?, ?, ?)",
            [(embedder, key, vector) for key, vector in items],
        )
        await self._db.commit()
