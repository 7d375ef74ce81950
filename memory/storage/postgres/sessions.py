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
from memory.storage.sessions import UPSERT_TURN, Sessions
from memory.storage.statements import numbered

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

    async def save_sessions(self, saves: Sequence[SessionSave]) -> None:
        """Several sessions' heads and new turns in one transaction (autosave)."""
        heads, turns = await encode_sessions(saves)
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.executemany(self._UPSERT_SESSION, heads)
            if turns:
                await conn.executemany(numbered(UPSERT_TURN), turns)

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
