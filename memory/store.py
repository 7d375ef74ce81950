"""The SQLite store, the source of truth: session snapshots and archived conversations.

One aiosqlite connection in WAL mode; the schema is versioned with PRAGMA user_version and
migrated forward on open. Every query that touches a conversation names its persona and scope.
Session snapshots are opaque JSON here: their shape belongs to the bot.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiosqlite
from filelock import FileLock, Timeout

__all__ = ["ArchivedConversation", "SessionRow", "Store", "StoreError"]

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
)


_UPSERT_SESSION = (
    "INSERT INTO sessions (persona, scope, snapshot, updated_at) VALUES (?, ?, ?, ?)"
    " ON CONFLICT (persona, scope) DO UPDATE"
    " SET snapshot = excluded.snapshot, updated_at = excluded.updated_at"
)


class StoreError(Exception):
    pass


@dataclass(slots=True, frozen=True)
class SessionRow:
    persona: str
    scope: str
    snapshot: dict[str, Any]
    updated_at: datetime
    damaged: bool = False  # the stored text was not a JSON object; `snapshot` is then {}


@dataclass(slots=True, frozen=True)
class ArchivedConversation:
    id: int
    persona: str
    scope: str
    started_at: datetime
    ended_at: datetime
    reason: str  # "idle", "end", ...
    turns: list[dict[str, Any]]
    encoded_at: datetime | None


def _json(value: Any) -> str:
    """JSON text SQLite can store: a lone surrogate (from undecodable input) becomes "?"
    instead of failing the whole write."""
    text = json.dumps(value, ensure_ascii=False)
    return text.encode("utf-8", "replace").decode("utf-8") if not text.isascii() else text


def _session_row(row: Any) -> SessionRow:
    try:
        snapshot = json.loads(row[2])
    except ValueError:
        snapshot = None
    if not isinstance(snapshot, dict):
        return SessionRow(row[0], row[1], {}, _dt(row[3]), damaged=True)
    return SessionRow(row[0], row[1], snapshot, _dt(row[3]))


def _ts(at: datetime) -> float:
    return at.timestamp()


def _dt(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC)


class Store:
    """Open with `await Store.open(path)`; close with `await store.close()`.

    One process at a time: snapshots are written from memory, so two processes on one
    database would overwrite each other's turns. A lock file beside the database refuses the
    second one (the OS drops the lock if a process dies).
    """

    def __init__(self, db: aiosqlite.Connection, path: Path, lock: FileLock) -> None:
        self._db = db
        self._lock = lock
        self.path = path

    @classmethod
    async def open(cls, path: Path) -> Store:
        """Open (creating or migrating) the database; StoreError names the path and why not."""
        lock = FileLock(path.with_name(path.name + ".lock"))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            lock.acquire(timeout=0)
        except Timeout:
            raise StoreError(
                f"{path}: in use by another Kizuna process; stop it first, or give this one "
                "another data_dir"
            ) from None
        except OSError as e:
            raise StoreError(f"{path}: cannot open the database: {e}") from None
        try:
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
            store = cls(db, path, lock)
            await store._migrate()
        except BaseException as e:
            await db.close()
            lock.release()
            if isinstance(e, sqlite3.Error):
                raise StoreError(f"{path}: cannot open the database: {e}") from None
            raise
        return store

    async def close(self) -> None:
        try:
            await self._db.close()
        finally:
            self._lock.release()

    async def schema_version(self) -> int:
        async with self._db.execute("PRAGMA user_version") as cur:
            row = await cur.fetchone()
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

    # Sessions: one snapshot per open conversation.

    async def save_session(
        self, persona: str, scope: str, snapshot: dict[str, Any], updated_at: datetime
    ) -> None:
        await self._db.execute(
            _UPSERT_SESSION,
            (persona, scope, _json(snapshot), _ts(updated_at)),
        )
        await self._db.commit()

    async def load_session(self, persona: str, scope: str) -> SessionRow | None:
        async with self._db.execute(
            "SELECT persona, scope, snapshot, updated_at FROM sessions"
            " WHERE persona = ? AND scope = ?",
            (persona, scope),
        ) as cur:
            row = await cur.fetchone()
        return None if row is None else _session_row(row)

    async def load_sessions(self, personas: Collection[str]) -> list[SessionRow]:
        """Every session of the given personas, oldest first."""
        names = sorted(set(personas))
        marks = ", ".join("?" * len(names))
        async with self._db.execute(
            "SELECT persona, scope, snapshot, updated_at FROM sessions"
            f" WHERE persona IN ({marks}) ORDER BY updated_at",
            names,
        ) as cur:
            rows = await cur.fetchall()
        return [_session_row(r) for r in rows]

    # Conversations: closed sessions, kept until long-term memory has encoded them.

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
                    _ts(started_at),
                    _ts(ended_at),
                    reason,
                    _json(turns),
                ),
            )
            conversation_id = cur.lastrowid
            await self._db.execute(
                _UPSERT_SESSION,
                (persona, scope, _json(snapshot), _ts(ended_at)),
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
        async with self._db.execute(
            "SELECT id, persona, scope, started_at, ended_at, reason, turns, encoded_at"
            " FROM conversations WHERE persona = ? AND scope = ?"
            " ORDER BY ended_at DESC, id DESC LIMIT ?",
            (persona, scope, limit),
        ) as cur:
            rows = await cur.fetchall()
        return [
            ArchivedConversation(
                id=r[0],
                persona=r[1],
                scope=r[2],
                started_at=_dt(r[3]),
                ended_at=_dt(r[4]),
                reason=r[5],
                turns=json.loads(r[6]),
                encoded_at=None if r[7] is None else _dt(r[7]),
            )
            for r in rows
        ]

    async def count_conversations(self, persona: str, scope: str) -> int:
        async with self._db.execute(
            "SELECT count(*) FROM conversations WHERE persona = ? AND scope = ?",
            (persona, scope),
        ) as cur:
            row = await cur.fetchone()
        return int(row[0]) if row else 0

    async def wipe(self, persona: str, scope: str) -> None:
        """Forget everything of one persona in one scope: the open session and the archive."""
        await self._db.execute(
            "DELETE FROM sessions WHERE persona = ? AND scope = ?", (persona, scope)
        )
        await self._db.execute(
            "DELETE FROM conversations WHERE persona = ? AND scope = ?", (persona, scope)
        )
        await self._db.commit()
