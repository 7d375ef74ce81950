"""Sessions and the archive of closed conversations (memory.storage.sessions) on SQLite: its
upsert of a session's head, saving many at once, and a wipe."""

from __future__ import annotations

from collections.abc import Sequence

from memory.records import SessionSave
from memory.scopes import Scope
from memory.storage.rows import encode_sessions
from memory.storage.sessions import UPSERT_TURN, Sessions
from memory.storage.sqlite.base import SqliteBase, serialised
from memory.storage.sqlite.contacts import wipe_contact
from memory.storage.sqlite.intentions import wipe_intentions

__all__ = ["SqliteSessions"]


class SqliteSessions(SqliteBase, Sessions):
    """Session snapshots and archived conversations, in one process."""

    _UPSERT_SESSION = (
        "INSERT INTO sessions (persona, scope, snapshot, updated_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (persona, scope) DO UPDATE"
        " SET snapshot = excluded.snapshot, updated_at = excluded.updated_at"
    )

    @serialised
    async def save_sessions(self, saves: Sequence[SessionSave]) -> None:
        """Several sessions' heads and new turns in one transaction (autosave), their JSON
        written off the event loop."""
        values = await encode_sessions(saves)
        turns = [
            (persona, scope, seq, text)
            for persona, scope, _, _, seqs, texts in values
            for seq, text in zip(seqs, texts, strict=True)
        ]
        async with self._transaction():
            await self._db.executemany(self._UPSERT_SESSION, [v[:4] for v in values])
            if turns:
                await self._db.executemany(UPSERT_TURN, turns)

    @serialised
    async def wipe(self, persona: str, scope: str) -> None:
        async with self._transaction():
            for table in ("sessions", "session_turns"):
                await self._db.execute(
                    f"DELETE FROM {table} WHERE persona = ? AND scope = ?", (persona, scope)
                )
            await self._db.execute(
                "DELETE FROM conversations WHERE persona = ? AND scope = ?", (persona, scope)
            )
            await wipe_intentions(self._db, str(Scope(persona, scope)))
            await wipe_contact(self._db, str(Scope(persona, scope)))
        await self._scrub(words=False)
