"""Intentions (memory.storage.IntentionStore) on SQLite, and what the other parts write of
them inside their own transactions: encoding (`insert_intention`), a wipe of the scope
(`wipe_intentions`) and forgetting (`forget_intentions`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import aiosqlite

from memory.records import Intention, IntentionState, NewIntention
from memory.storage.intentions import Intentions
from memory.storage.rows import (
    INTENTION_COLUMNS,
    intention_row,
    intention_values,
    timestamp,
    year_on,
)
from memory.storage.sqlite.base import CHUNK, SqliteBase, serialised
from memory.storage.statements import placeholders

__all__ = ["SqliteIntentions", "forget_intentions", "insert_intention", "wipe_intentions"]

_INSERT = (
    "INSERT INTO intentions (scope, persona, user_id, kind, what, ask, due_at, until,"
    " created_at, conversation_id, yearly, said_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (scope, user_id, kind, what, due_at) WHERE state = 'pending' DO NOTHING"
    " RETURNING id"
)


async def insert_intention(db: aiosqlite.Connection, intention: NewIntention) -> int:
    """Add it in the caller's transaction; a pending one with the same user, kind, event and
    due time is kept instead (its id is returned)."""
    values = intention_values(intention)
    rows = list(await db.execute_fetchall(_INSERT, values))
    if rows:
        return int(rows[0][0])
    scope, _, user_id, kind, what, _, due_at, *_ = values
    rows = list(
        await db.execute_fetchall(
            "SELECT id FROM intentions WHERE scope = ? AND user_id = ? AND kind = ?"
            " AND what = ? AND due_at = ? AND state = 'pending'",
            (scope, user_id, kind, what, due_at),
        )
    )
    return int(rows[0][0])


async def wipe_intentions(db: aiosqlite.Connection, scope: str) -> None:
    """Delete the scope's intentions, in the caller's transaction."""
    await db.execute("DELETE FROM intentions WHERE scope = ?", (scope,))


async def forget_intentions(
    db: aiosqlite.Connection, scope: str, conversations: Sequence[int]
) -> None:
    """Delete the scope's intentions made from `conversations` (a forgotten memory's), in
    the caller's transaction, whatever their state: those the encoder found in them, and the
    reminders the tool set while they went on (given the conversation when it was archived;
    kept before that with none, found by their time)."""
    for start in range(0, len(conversations), CHUNK):
        chunk = list(conversations[start : start + CHUNK])
        marks = placeholders(len(chunk))
        await db.execute(
            f"DELETE FROM intentions WHERE scope = ? AND (conversation_id IN ({marks})"
            " OR (conversation_id IS NULL AND EXISTS (SELECT 1 FROM conversations AS c"
            f" WHERE c.id IN ({marks})"
            " AND intentions.created_at BETWEEN c.started_at AND c.ended_at)))",
            (scope, *chunk, *chunk),
        )


class SqliteIntentions(SqliteBase, Intentions):
    """Intentions by scope, and the scheduler's view of a persona's due ones."""

    @serialised
    async def add_intention(self, intention: NewIntention) -> int:
        async with self._transaction():
            new_id = await insert_intention(self._db, intention)
        return new_id

    async def intentions(
        self, scope: str, user_id: str | None = None, *, open_only: bool = True
    ) -> list[Intention]:
        rows = await self._all(
            f"SELECT {INTENTION_COLUMNS} FROM intentions WHERE scope = ?"
            " AND (? IS NULL OR user_id = ?) AND (? = 0 OR state = 'pending')"
            " ORDER BY due_at, id",
            (scope, user_id, user_id, int(open_only)),
        )
        return [intention_row(r) for r in rows]

    async def close_intention(
        self, scope: str, intention_id: int, state: IntentionState, at: datetime
    ) -> bool:
        """See IntentionStore.close_intention; a yearly one rolls by its due time read here,
        its twin a year on checked first (the unique index of pending ones would refuse)."""
        row = await self._one(
            f"SELECT {INTENTION_COLUMNS} FROM intentions"
            " WHERE scope = ? AND id = ? AND state = 'pending'",
            (scope, intention_id),
        )
        if row is None or state == "pending":
            return False
        intention = intention_row(row)
        async with self._transaction():
            if intention.yearly and state != "cancelled":
                if intention.due_at > at:
                    return False
                due, until, done = year_on(intention, state, at)
                twin = await self._one(
                    "SELECT 1 FROM intentions WHERE scope = ? AND user_id = ? AND kind = ?"
                    " AND what = ? AND due_at = ? AND state = 'pending'",
                    (scope, intention.user_id, intention.kind, intention.what, due),
                )
                if twin is None:
                    await self._db.execute(
                        "UPDATE intentions SET due_at = ?, until = ?, done_at = ? WHERE id = ?",
                        (due, until, done, intention_id),
                    )
                    return True
            await self._db.execute(
                "UPDATE intentions SET state = ?, done_at = ? WHERE id = ?",
                (state, timestamp(at), intention_id),
            )
        return True
