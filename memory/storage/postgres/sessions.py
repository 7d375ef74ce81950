"""Sessions (one snapshot per open conversation, naming the process that wrote it) and the
archive of closed conversations, per persona and scope (memory.storage.SessionStore)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from memory.records import ArchivedConversation, SessionRow, SessionSave
from memory.scopes import Scope
from memory.storage.postgres.base import PgBase, clean_json
from memory.storage.postgres.contacts import wipe_contact
from memory.storage.postgres.intentions import wipe_intentions
from memory.storage.rows import (
    CONVERSATION_COLUMNS,
    conversation_row,
    encode_sessions,
    session_row,
    timestamp,
)

__all__ = ["PgSessions"]


# The writer is the connection's application_name: this process's name (see PgStore.open).
_UPSERT_SESSION = (
    "INSERT INTO sessions (persona, scope, snapshot, updated_at, writer)"
    " VALUES ($1, $2, $3, $4, current_setting('application_name'))"
    " ON CONFLICT (persona, scope) DO UPDATE SET snapshot = excluded.snapshot,"
    " updated_at = excluded.updated_at, writer = excluded.writer"
)


class PgSessions(PgBase):
    """Session snapshots are opaque JSON text here: their shape belongs to the bot."""

    async def save_session(
        self, persona: str, scope: str, snapshot: dict[str, Any], updated_at: datetime
    ) -> None:
        await self._pool.execute(
            _UPSERT_SESSION, persona, scope, clean_json(snapshot), timestamp(updated_at)
        )

    async def save_sessions(self, snapshots: Sequence[SessionSave]) -> None:
        """Several sessions' snapshots in one transaction (autosave)."""
        rows = await encode_sessions(snapshots)
        await self._pool.executemany(_UPSERT_SESSION, rows)

    async def load_session(self, persona: str, scope: str) -> SessionRow | None:
        row = await self._pool.fetchrow(
            "SELECT persona, scope, snapshot, updated_at FROM sessions"
            " WHERE persona = $1 AND scope = $2",
            persona,
            scope,
        )
        return None if row is None else session_row(row)

    async def load_sessions(self, personas: Collection[str]) -> list[SessionRow]:
        rows = await self._pool.fetch(
            "SELECT persona, scope, snapshot, updated_at FROM sessions"
            " WHERE persona = ANY($1::text[]) ORDER BY updated_at",
            sorted(set(personas)),
        )
        return [session_row(r) for r in rows]

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
        async with self._pool.acquire() as conn, conn.transaction():
            conversation_id = await conn.fetchval(
                "INSERT INTO conversations (persona, scope, started_at, ended_at, reason, turns)"
                " VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
                persona,
                scope,
                timestamp(started_at),
                timestamp(ended_at),
                reason,
                clean_json(turns),
            )
            await conn.execute(
                _UPSERT_SESSION, persona, scope, clean_json(snapshot), timestamp(ended_at)
            )
        return int(conversation_id)

    async def conversations(
        self, persona: str, scope: str, *, limit: int = 20
    ) -> list[ArchivedConversation]:
        rows = await self._pool.fetch(
            f"SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE persona = $1"
            " AND scope = $2 ORDER BY ended_at DESC, id DESC LIMIT $3",
            persona,
            scope,
            limit,
        )
        return [conversation_row(r) for r in rows]

    async def count_conversations(self, persona: str, scope: str) -> int:
        count = await self._pool.fetchval(
            "SELECT count(*) FROM conversations WHERE persona = $1 AND scope = $2",
            persona,
            scope,
        )
        return int(count)

    async def wipe(self, persona: str, scope: str) -> None:
        async with self._pool.acquire() as conn, conn.transaction():
            await wipe_intentions(conn, str(Scope(persona, scope)))
            await wipe_contact(conn, str(Scope(persona, scope)))
            await conn.execute(
                "DELETE FROM sessions WHERE persona = $1 AND scope = $2", persona, scope
            )
            await conn.execute(
                "DELETE FROM conversations WHERE persona = $1 AND scope = $2", persona, scope
            )
            await conn.execute(
                "DELETE FROM conversation_inbox WHERE persona = $1 AND scope = $2", persona, scope
            )
