"""Sessions and the archive of closed conversations (memory.storage.sessions) on PostgreSQL:
its upsert of a session's head, which names the process that wrote it, saving many at once,
and a wipe."""

from __future__ import annotations

from collections.abc import Sequence

from memory.records import SessionSave
from memory.scopes import Scope
from memory.storage.postgres.base import PgBase
from memory.storage.postgres.contacts import wipe_contact
from memory.storage.postgres.intentions import wipe_intentions
from memory.storage.rows import encode_sessions
from memory.storage.sessions import Sessions

__all__ = ["PgSessions"]


class PgSessions(PgBase, Sessions):
    """Session snapshots and archived conversations, shared by the processes on one
    database."""

    # The writer is the connection's application_name: this process's name (see PgStore.open).
    _UPSERT_SESSION = (
        "INSERT INTO sessions (persona, scope, snapshot, updated_at, writer)"
        " VALUES ($1, $2, $3, $4, current_setting('application_name'))"
        " ON CONFLICT (persona, scope) DO UPDATE SET snapshot = excluded.snapshot,"
        " updated_at = excluded.updated_at, writer = excluded.writer"
    )

    # A session's head and its new turns in one statement: one trip to the server a save.
    _SAVE_SESSION = (
        "WITH turns AS (INSERT INTO session_turns (persona, scope, seq, turn)"
        " SELECT $1, $2, seq, turn FROM unnest($5::bigint[], $6::text[]) AS new (seq, turn)"
        " ON CONFLICT (persona, scope, seq) DO UPDATE SET turn = excluded.turn) " + _UPSERT_SESSION
    )

    async def save_sessions(self, saves: Sequence[SessionSave]) -> None:
        """Several sessions' heads and new turns in one transaction (autosave)."""
        await self._pool.executemany(self._SAVE_SESSION, await encode_sessions(saves))

    async def wipe(self, persona: str, scope: str) -> None:
        async with self._pool.acquire() as conn, conn.transaction():
            await wipe_intentions(conn, str(Scope(persona, scope)))
            await wipe_contact(conn, str(Scope(persona, scope)))
            for table in ("sessions", "session_turns"):
                await conn.execute(
                    f"DELETE FROM {table} WHERE persona = $1 AND scope = $2", persona, scope
                )
            await conn.execute(
                "DELETE FROM conversations WHERE persona = $1 AND scope = $2", persona, scope
            )
            await conn.execute(
                "DELETE FROM conversation_inbox WHERE persona = $1 AND scope = $2", persona, scope
            )
