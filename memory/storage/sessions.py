"""Sessions (one snapshot per open conversation) and the archive of closed conversations, per
persona and scope (memory.storage.SessionStore), in either store. A snapshot is kept as its
head (`sessions`: the newest turns in it) and its older turns, a row each (`session_turns`),
so saving a conversation writes about as much whether it is short or long. A head's upsert
is each dialect's own SQL (`_UPSERT_SESSION`: PostgreSQL's names the process that wrote it),
as are saving many at once and a wipe (each store's `save_sessions` and `wipe`)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any, ClassVar

from memory.records import ArchivedConversation, ArchiveWrite, SessionRow
from memory.scopes import Scope
from memory.storage.rows import (
    CONVERSATION_COLUMNS,
    conversation_row,
    json_text,
    session_parts,
    session_row,
    timestamp,
)
from memory.storage.statements import Statement, Statements, placeholders

__all__ = ["UPSERT_TURN", "Sessions"]

# Parameters: persona, scope, the turn's number, its JSON text.
UPSERT_TURN = (
    "INSERT INTO session_turns (persona, scope, seq, turn) VALUES (?, ?, ?, ?)"
    " ON CONFLICT (persona, scope, seq) DO UPDATE SET turn = excluded.turn"
)


class Sessions(Statements):
    """Session snapshots are opaque JSON text here: their shape belongs to the bot."""

    # Parameters: persona, scope, the snapshot's JSON text, the time.
    _UPSERT_SESSION: ClassVar[str]

    async def save_session(
        self, persona: str, scope: str, snapshot: dict[str, Any], updated_at: datetime
    ) -> None:
        """Make the store hold exactly `snapshot` as the session (see `SessionSave`)."""
        await self._write_together(self._replacing(persona, scope, snapshot, updated_at))

    def _replacing(
        self, persona: str, scope: str, snapshot: dict[str, Any], at: datetime
    ) -> list[Statement]:
        """The statements that make the store hold exactly `snapshot` as the session: its
        head, its turns, and none of the turns it no longer has."""
        head, turns = session_parts(snapshot)
        first, end = head["first"], head["first"] + head["rows"]
        return [
            (self._UPSERT_SESSION, (persona, scope, json_text(head), timestamp(at))),
            (
                "DELETE FROM session_turns WHERE persona = ? AND scope = ?"
                " AND (seq < ? OR seq >= ?)",
                (persona, scope, first, end),
            ),
            *((UPSERT_TURN, (persona, scope, seq, json_text(turn))) for seq, turn in turns),
        ]

    async def load_session(self, persona: str, scope: str) -> SessionRow | None:
        row = await self._one(
            "SELECT persona, scope, snapshot, updated_at FROM sessions"
            " WHERE persona = ? AND scope = ?",
            (persona, scope),
        )
        if row is None:
            return None
        turns = await self._all(
            "SELECT seq, turn FROM session_turns WHERE persona = ? AND scope = ? ORDER BY seq",
            (persona, scope),
        )
        return session_row(row, [(int(seq), turn) for seq, turn in turns])

    async def load_sessions(self, personas: Collection[str]) -> list[SessionRow]:
        names = sorted(set(personas))
        if not names:
            return []
        rows = await self._all(
            "SELECT persona, scope, snapshot, updated_at FROM sessions"
            f" WHERE persona IN ({placeholders(len(names))}) ORDER BY updated_at",
            names,
        )
        turns = await self._all(
            "SELECT persona, scope, seq, turn FROM session_turns"
            f" WHERE persona IN ({placeholders(len(names))}) ORDER BY persona, scope, seq",
            names,
        )
        by_session: dict[tuple[str, str], list[tuple[int, str]]] = {}
        for persona, scope, seq, turn in turns:
            by_session.setdefault((persona, scope), []).append((int(seq), turn))
        return [session_row(r, by_session.get((r[0], r[1]), [])) for r in rows]

    async def session_places(self, persona: str) -> list[str]:
        rows = await self._all("SELECT scope FROM sessions WHERE persona = ?", (persona,))
        return [str(scope) for (scope,) in rows]

    async def archive_conversation(self, write: ArchiveWrite) -> int:
        persona, scope, ended_at = write.persona, write.scope, timestamp(write.ended_at)
        started_at = timestamp(write.started_at)
        inserted, *_ = await self._write_together(
            [
                (
                    "INSERT INTO conversations (persona, scope, started_at, ended_at, reason,"
                    " turns) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                    (persona, scope, started_at, ended_at, write.reason, json_text(write.turns)),
                ),
                *self._replacing(persona, scope, write.snapshot, write.ended_at),
                # The reminders set while it went on are its own from now on: forgetting a
                # memory made from it finds them so, once the archive has let it go too.
                (
                    "UPDATE intentions SET conversation_id = (SELECT max(id) FROM conversations"
                    " WHERE persona = ? AND scope = ?) WHERE scope = ?"
                    " AND conversation_id IS NULL AND created_at BETWEEN ? AND ?",
                    (persona, scope, str(Scope(persona, scope)), started_at, ended_at),
                ),
            ]
        )
        return int(inserted[0][0])

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
