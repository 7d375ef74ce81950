"""What both stores read and write of intentions (memory.storage.IntentionStore) the same way:
the outreach round's reads and bulk misses, and the daily upkeep's trim. Adding and closing
one, whose transactions differ, stay in each dialect's module."""

from __future__ import annotations

from datetime import datetime

from memory.records import Intention
from memory.storage.rows import INTENTION_COLUMNS, intention_row, timestamp
from memory.storage.statements import Statements

__all__ = ["Intentions"]

# A persona's pending intentions due by a time, soonest first: all, or (asked only) the
# reminders their user asked for themself (Intention.solicited) and those past their `until`.
# Parameters: the persona, the time, asked only (0 or 1), the time, the limit.
_DUE = (
    f"SELECT {INTENTION_COLUMNS} FROM intentions"
    " WHERE persona = ? AND state = 'pending' AND due_at <= ?"
    " AND (? = 0 OR (kind = 'reminder' AND (said_by IS NULL OR said_by = user_id)) OR until < ?)"
    " ORDER BY due_at, id LIMIT ?"
)
# A persona's pending intentions past their `until`, missed all at once (yearly ones roll on
# a year, each by close_intention). Found through the due index: until is never before
# due_at. Parameters: the time (done_at), the persona, the time, the time.
_MISS = (
    "UPDATE intentions SET state = 'missed', done_at = ? WHERE persona = ?"
    " AND state = 'pending' AND due_at <= ? AND until < ? AND yearly = 0 RETURNING 1"
)
# A person's own pending intention due now in a scope (due_at <= now <= until), soonest first:
# the one a reply brings up. Through the scope's index, whose due times it reads only up to
# now. Parameters: the scope, the user, the time, the time.
_DUE_NOW = (
    f"SELECT {INTENTION_COLUMNS} FROM intentions"
    " WHERE scope = ? AND due_at <= ? AND user_id = ? AND state = 'pending' AND until >= ?"
    " AND (said_by IS NULL OR said_by = user_id) ORDER BY due_at, id LIMIT 1"
)
# The daily upkeep's delete of intentions long closed.
_TRIM = "DELETE FROM intentions WHERE state <> 'pending' AND done_at < ? RETURNING 1"


class Intentions(Statements):
    """The intentions' statements that are the same SQL in either dialect."""

    async def is_pending(self, scope: str, intention_id: int) -> bool:
        row = await self._one(
            "SELECT 1 FROM intentions WHERE scope = ? AND id = ? AND state = 'pending'",
            (scope, intention_id),
        )
        return row is not None

    async def due_intention(self, scope: str, user_id: str, now: datetime) -> Intention | None:
        at = timestamp(now)
        row = await self._one(_DUE_NOW, (scope, at, user_id, at))
        return None if row is None else intention_row(row)

    async def due_intentions(
        self, persona: str, now: datetime, *, limit: int, asked_only: bool = False
    ) -> list[Intention]:
        at = timestamp(now)
        rows = await self._all(_DUE, (persona, at, int(asked_only), at, limit))
        return [intention_row(r) for r in rows]

    async def miss_intentions(self, persona: str, now: datetime) -> int:
        at = timestamp(now)
        return len(await self._write(_MISS, (at, persona, at, at)))

    async def trim_intentions(self, before: datetime) -> int:
        return len(await self._write(_TRIM, (timestamp(before),)))
