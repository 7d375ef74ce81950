"""What encoding writes beside memories (diary pages, profiles) and the prune's records
(memory.storage.JournalStore)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from memory.records import DiaryEntry, Member, Profile, PrunedMemory
from memory.storage.postgres.base import PgBase
from memory.storage.rows import (
    PROFILE_COLUMNS,
    diary_row,
    member_row,
    moment,
    profile_row,
    timestamp,
)

__all__ = ["PgJournal"]


class PgJournal(PgBase):
    """The diary, profiles and prune reports, read."""

    async def diary_entry(self, scope: str, day: date) -> DiaryEntry | None:
        row = await self._pool.fetchrow(
            "SELECT scope, day, text, conversations, updated_at FROM diary"
            " WHERE scope = $1 AND day = $2",
            scope,
            day.isoformat(),
        )
        return None if row is None else diary_row(row)

    async def diary_entries(
        self, scope: str, *, before: date | None = None, limit: int = 10
    ) -> list[DiaryEntry]:
        rows = await self._pool.fetch(
            "SELECT scope, day, text, conversations, updated_at FROM diary"
            " WHERE scope = $1 AND day < $2 ORDER BY day DESC LIMIT $3",
            scope,
            (before or date.max).isoformat(),
            limit,
        )
        return [diary_row(r) for r in rows]

    async def profiles(self, scope: str, user_ids: Sequence[str] | None = None) -> list[Profile]:
        query = f"SELECT {PROFILE_COLUMNS} FROM profiles WHERE scope = $1"
        params: list[Any] = [scope]
        if user_ids is not None:
            if not user_ids:
                return []
            query += " AND user_id = ANY($2::text[])"
            params.append(list(user_ids))
        rows = await self._pool.fetch(query + " ORDER BY updated_at DESC", *params)
        return [profile_row(r) for r in rows]

    async def members(self, scope: str) -> list[Member]:
        query = (
            "SELECT user_id, name, aliases FROM profiles WHERE scope = $1 ORDER BY updated_at DESC"
        )
        return [member_row(r) for r in await self._pool.fetch(query, scope)]

    async def last_prune(self, scope: str) -> date | None:
        day = await self._pool.fetchval("SELECT day FROM prune_days WHERE scope = $1", scope)
        return None if day is None else date.fromisoformat(day)

    async def trim_pruned(self, before: datetime) -> int:
        rows = await self._pool.fetch(
            "DELETE FROM pruned WHERE pruned_at < $1 RETURNING 1", timestamp(before)
        )
        return len(rows)

    async def pruned_since(
        self, since: datetime, *, scope: str | None = None, limit: int = 1000
    ) -> list[PrunedMemory]:
        rows = await self._pool.fetch(
            "SELECT scope, memory_id, category, importance, policy, reason, pruned_at"
            " FROM pruned WHERE pruned_at >= $1 AND ($2::text IS NULL OR scope = $2)"
            " ORDER BY pruned_at, id LIMIT $3",
            timestamp(since),
            scope,
            limit,
        )
        return [PrunedMemory(r[0], r[1], r[2], r[3], r[4], r[5], moment(r[6])) for r in rows]
