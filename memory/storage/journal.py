"""What encoding writes beside memories (diary pages, profiles) and the prune's records, read
(memory.storage.JournalStore), in either store: encoding writes them in commit_encoding's
transaction, the prune in its own."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from memory.records import DiaryEntry, Member, Profile, PrunedMemory
from memory.storage.rows import (
    PROFILE_COLUMNS,
    diary_row,
    member_row,
    moment,
    profile_row,
    timestamp,
)
from memory.storage.statements import Statements, placeholders

__all__ = ["Journal"]


class Journal(Statements):
    """The diary, profiles and prune reports, read."""

    async def diary_entry(self, scope: str, day: date) -> DiaryEntry | None:
        row = await self._one(
            "SELECT scope, day, text, conversations, updated_at FROM diary"
            " WHERE scope = ? AND day = ?",
            (scope, day.isoformat()),
        )
        return None if row is None else diary_row(row)

    async def diary_entries(
        self, scope: str, *, before: date | None = None, limit: int = 10
    ) -> list[DiaryEntry]:
        rows = await self._all(
            "SELECT scope, day, text, conversations, updated_at FROM diary"
            " WHERE scope = ? AND day < ? ORDER BY day DESC LIMIT ?",
            (scope, (before or date.max).isoformat(), limit),
        )
        return [diary_row(r) for r in rows]

    async def profiles(self, scope: str, user_ids: Sequence[str] | None = None) -> list[Profile]:
        query = f"SELECT {PROFILE_COLUMNS} FROM profiles WHERE scope = ?"
        params: list[Any] = [scope]
        if user_ids is not None:
            if not user_ids:
                return []
            query += f" AND user_id IN ({placeholders(len(user_ids))})"
            params.extend(user_ids)
        rows = await self._all(query + " ORDER BY updated_at DESC", params)
        return [profile_row(r) for r in rows]

    async def members(self, scope: str) -> list[Member]:
        query = (
            "SELECT user_id, name, aliases FROM profiles WHERE scope = ? ORDER BY updated_at DESC"
        )
        return [member_row(r) for r in await self._all(query, (scope,))]

    async def members_and_profile(
        self, scope: str, user_id: str
    ) -> tuple[list[Member], Profile | None]:
        # One trip, not two: every turn asks. Only the asker's profile text is read.
        query = (
            "SELECT user_id, name, aliases, CASE WHEN user_id = ? THEN text END, updated_at"
            " FROM profiles WHERE scope = ? ORDER BY updated_at DESC"
        )
        rows = await self._all(query, (user_id, scope))
        mine = next((r for r in rows if r[0] == user_id), None)
        known = None
        if mine is not None:
            known = profile_row((scope, mine[0], mine[1], mine[3], mine[4], mine[2]))
        return [member_row(r) for r in rows], known

    async def last_prune(self, scope: str) -> date | None:
        row = await self._one("SELECT day FROM prune_days WHERE scope = ?", (scope,))
        return None if row is None else date.fromisoformat(row[0])

    async def pruned_scopes(self, since: date) -> set[str]:
        rows = await self._all("SELECT scope FROM prune_days WHERE day >= ?", (since.isoformat(),))
        return {row[0] for row in rows}

    async def trim_pruned(self, before: datetime) -> int:
        rows = await self._write(
            "DELETE FROM pruned WHERE pruned_at < ? RETURNING 1", (timestamp(before),)
        )
        return len(rows)

    async def pruned_since(
        self, since: datetime, *, scope: str | None = None, limit: int = 1000
    ) -> list[PrunedMemory]:
        query = (
            "SELECT scope, memory_id, category, importance, policy, reason, pruned_at"
            " FROM pruned WHERE pruned_at >= ?"
        )
        params: list[Any] = [timestamp(since)]
        if scope is not None:
            query += " AND scope = ?"
            params.append(scope)
        rows = await self._all(query + " ORDER BY pruned_at, id LIMIT ?", (*params, limit))
        return [PrunedMemory(r[0], r[1], r[2], r[3], r[4], r[5], moment(r[6])) for r in rows]
