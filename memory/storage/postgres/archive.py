"""Closed conversations waiting to be encoded into long-term memory
(memory.storage.ArchiveStore)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from memory.records import ArchivedConversation
from memory.storage.postgres.base import PgBase
from memory.storage.rows import CONVERSATION_COLUMNS, conversation_row, timestamp

__all__ = ["PgArchive"]


class PgArchive(PgBase):
    """The encoder's queue: conversations archived and not yet encoded."""

    async def unencoded(
        self,
        personas: Collection[str],
        now: datetime,
        *,
        limit: int = 20,
        skip: Collection[tuple[str, str]] = (),
    ) -> list[ArchivedConversation]:
        if not personas:
            return []
        rows = await self._pool.fetch(
            f"SELECT {CONVERSATION_COLUMNS} FROM conversations"
            " WHERE encoded_at IS NULL AND persona = ANY($1::text[])"
            " AND (retry_at IS NULL OR retry_at <= $2)"
            " AND (persona, scope) NOT IN (SELECT * FROM unnest($4::text[], $5::text[]))"
            " ORDER BY ended_at, id LIMIT $3",
            list(personas),
            timestamp(now),
            limit,
            [persona for persona, _ in skip],
            [scope for _, scope in skip],
        )
        return [conversation_row(r) for r in rows]

    async def conversation(self, conversation_id: int) -> ArchivedConversation | None:
        row = await self._pool.fetchrow(
            f"SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE id = $1", conversation_id
        )
        return None if row is None else conversation_row(row)

    async def encoding_failed(self, conversation_id: int, retry_at: datetime) -> None:
        await self._pool.execute(
            "UPDATE conversations SET attempts = attempts + 1, retry_at = $1"
            " WHERE id = $2 AND encoded_at IS NULL",
            timestamp(retry_at),
            conversation_id,
        )
