"""Intentions (memory.storage.IntentionStore) on PostgreSQL, and what the other parts write
of them inside their own transactions: encoding (`insert_intention`), a wipe of the scope
(`wipe_intentions`) and forgetting (`forget_intentions`). A unique index and row locks settle
two processes adding or closing one intention at once."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import asyncpg

from memory.records import Intention, IntentionState, NewIntention
from memory.storage.intentions import Intentions
from memory.storage.postgres.base import PgBase, clean_text
from memory.storage.rows import (
    INTENTION_COLUMNS,
    intention_row,
    intention_values,
    timestamp,
    year_on,
)

__all__ = ["PgIntentions", "forget_intentions", "insert_intention", "wipe_intentions"]

_INSERT = (
    "INSERT INTO intentions (scope, persona, user_id, kind, what, ask, due_at, until,"
    " created_at, conversation_id, yearly, said_by)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
    " ON CONFLICT (scope, user_id, kind, what, due_at) WHERE state = 'pending' DO NOTHING"
    " RETURNING id"
)
_PENDING_TWIN = (
    "SELECT id FROM intentions WHERE scope = $1 AND user_id = $2 AND kind = $3 AND what = $4"
    " AND due_at = $5 AND state = 'pending'"
)


async def insert_intention(conn: asyncpg.Connection, intention: NewIntention) -> int:
    """Add it in the caller's transaction; a pending one with the same user, kind, event and
    due time is kept instead (its id is returned). Two adding the same at once: the unique
    index makes the second wait for the first, then find it."""
    values = list(intention_values(intention))
    values[4], values[5] = clean_text(values[4]), clean_text(values[5])  # NUL too
    new_id = await conn.fetchval(_INSERT, *values)
    if new_id is None:
        scope, _, user_id, kind, what, _, due_at, *_ = values
        new_id = await conn.fetchval(_PENDING_TWIN, scope, user_id, kind, what, due_at)
    return int(new_id)


async def wipe_intentions(conn: asyncpg.Connection, scope: str) -> None:
    """Delete the scope's intentions, in the caller's transaction."""
    await conn.execute("DELETE FROM intentions WHERE scope = $1", scope)


async def forget_intentions(
    conn: asyncpg.Connection, scope: str, conversations: Sequence[int]
) -> None:
    """Delete the scope's intentions made from `conversations` (a forgotten memory's), in
    the caller's transaction, whatever their state: those the encoder found in them, and the
    reminders the tool set while they went on (given the conversation when it was archived;
    kept before that with none, found by their time)."""
    if conversations:
        await conn.execute(
            "DELETE FROM intentions WHERE scope = $1 AND (conversation_id = ANY($2::bigint[])"
            " OR (conversation_id IS NULL AND EXISTS (SELECT 1 FROM conversations AS c"
            " WHERE c.id = ANY($2::bigint[])"
            " AND intentions.created_at BETWEEN c.started_at AND c.ended_at)))",
            scope,
            list(conversations),
        )


class PgIntentions(PgBase, Intentions):
    """Intentions by scope, and the scheduler's view of a persona's due ones."""

    async def add_intention(self, intention: NewIntention) -> int:
        async with self._pool.acquire() as conn, conn.transaction():
            return await insert_intention(conn, intention)

    async def intentions(
        self, scope: str, user_id: str | None = None, *, open_only: bool = True
    ) -> list[Intention]:
        rows = await self._pool.fetch(
            f"SELECT {INTENTION_COLUMNS} FROM intentions WHERE scope = $1"
            " AND ($2::text IS NULL OR user_id = $2) AND (NOT $3 OR state = 'pending')"
            " ORDER BY due_at, id",
            scope,
            user_id,
            open_only,
        )
        return [intention_row(r) for r in rows]

    async def close_intention(
        self, scope: str, intention_id: int, state: IntentionState, at: datetime
    ) -> bool:
        """See IntentionStore.close_intention. Under the row's lock, so that of two processes
        closing it at once the second finds it closed (or rolled on, not due)."""
        if state == "pending":
            return False
        async with self._pool.acquire() as conn, conn.transaction():
            row = await conn.fetchrow(
                f"SELECT {INTENTION_COLUMNS} FROM intentions"
                " WHERE scope = $1 AND id = $2 AND state = 'pending' FOR UPDATE",
                scope,
                intention_id,
            )
            if row is None:
                return False
            intention = intention_row(row)
            if intention.yearly and state != "cancelled":
                if intention.due_at > at:
                    return False
                due, until, done = year_on(intention, state, at)
                twin = await conn.fetchval(
                    _PENDING_TWIN, scope, intention.user_id, intention.kind, intention.what, due
                )
                if twin is None:
                    await conn.execute(
                        "UPDATE intentions SET due_at = $1, until = $2, done_at = $3 WHERE id = $4",
                        due,
                        until,
                        done,
                        intention_id,
                    )
                    return True
            await conn.execute(
                "UPDATE intentions SET state = $1, done_at = $2 WHERE id = $3",
                state,
                timestamp(at),
                intention_id,
            )
        return True
