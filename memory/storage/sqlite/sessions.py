"""Sessions (one snapshot per open conversation) and the archive of closed conversations,
per persona and scope (memory.storage.SessionStore)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from memory.records import ArchivedConversation, SessionRow, SessionSave
from memory.scopes import Scope
from memory.storage.rows import (
    CONVERSATION_COLUMNS,
    conversation_row,
    encode_sessions,
    json_text,
    session_row,
    timestamp,
)
from memory.storage.sqlite.base import SqliteBase, serialised
from memory.storage.sqlite.contacts import wipe_contact
from memory.storage.sqlite.intentions import wipe_intentions

__all__ = ["SqliteSessions"]


_UPSERT_SESSION = (
    "INSERT INTO sessions (persona, scope, snapshot, updated_at) VALUES (?, ?, ?, ?)"
    " ON CONFLICT (persona, scope) DO UPDATE"
    " SET snapshot = excluded.snapshot, updated_at = excluded.updated_at"
)


class SqliteSessions(SqliteBase):
    """Session snapshots are opaque JSON here: their shape belongs to the bot."""

    @serialised
    async def save_session(
        self, persona: str, scope: str, snapshot: dict[str, Any], updated_at: datetime
    ) -> None:
        await self._db.execute(
            _UPSERT_SESSION,
            (persona, scope, json_text(snapshot), timestamp(updated_at)),
        )
        await self._db.commit()

    @serialised
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
        names = sorted(set(personas))
        marks = ", ".join("?" * len(names))
        rows = await self._all(
            "SELECT persona, scope, snapshot, updated_at FROM sessions"
            f" WHERE persona IN ({marks}) ORDER BY updated_at",
            names,
        )
        return [session_row(r) for r in rows]

    @serialised
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
        # sqlite3 opens one implicit transaction for both statements; commit ends it.
        async with self._transaction():
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
        assert conversation_id is not None
        return conversation_id

    async def conversations(
        self, persona: str, scope: str, *, limit: int = 20
    ) -> list[ArchivedConversation]:
        rows = await self._all(
            f"SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE persona = ? AND scope = ?"
            " ORDER BY ended_at DESC, id DESC LIMIT ?",
            (persona, scope, limit),
        )
        return [conversation_row(r) for r in rows]

    async def count_conversations(self, persona: str, scope: str) -> int:
        row = await self._one(
            "SELECT count(*) FROM conversations WHERE persona = ? AND scope = ?",
            (persona, scope),
        )
        return int(row[0]) if row else 0

    @serialised
    async def wipe(self, persona: str, scope: str) -> None:
        async with self._transaction():
            await self._db.execute(
                "DELETE FROM sessions WHERE persona = ? AND scope = ?", (persona, scope)
            )
            await self._db.execute(
                "DELETE FROM conversations WHERE persona = ? AND scope = ?", (persona, scope)
            )
            await wipe_intentions(self._db, str(Scope(persona, scope)))
            await wipe_contact(self._db, str(Scope(persona, scope)))
        await self._scrub(words=False)
