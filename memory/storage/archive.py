"""Closed conversations waiting to be encoded into long-term memory
(memory.storage.ArchiveStore), in either store: sessions archive them, encoding marks them
encoded in commit_encoding's transaction."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from memory.records import ArchivedConversation
from memory.storage.rows import CONVERSATION_COLUMNS, conversation_row, timestamp
from memory.storage.statements import Statements, placeholders

__all__ = ["Archive"]


class Archive(Statements):
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
        names = list(personas)
        skipped = " AND (persona, scope) NOT IN (VALUES {})".format(
            ", ".join(["(?, ?)"] * len(skip))
        )
        rows = await self._all(
            f"SELECT {CONVERSATION_COLUMNS} FROM conversations"
            f" WHERE encoded_at IS NULL AND persona IN ({placeholders(len(names))})"
            f" AND (retry_at IS NULL OR retry_at <= ?){skipped if skip else ''}"
            " ORDER BY ended_at, id LIMIT ?",
            (*names, timestamp(now), *(v for pair in skip for v in pair), limit),
        )
        return [conversation_row(r) for r in rows]

    async def conversation(self, conversation_id: int) -> ArchivedConversation | None:
        row = await self._one(
            f"SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE id = ?",
            (conversation_id,),
        )
        return None if row is None else conversation_row(row)

    async def encoding_failed(self, conversation_id: int, retry_at: datetime) -> None:
        await self._write(
            "UPDATE conversations SET attempts = attempts + 1, retry_at = ?"
            " WHERE id = ? AND encoded_at IS NULL",
            (timestamp(retry_at), conversation_id),
        )
