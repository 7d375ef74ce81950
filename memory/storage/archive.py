"""Closed conversations waiting to be encoded into long-term memory
(memory.storage.ArchiveStore), in either store: sessions archive them, encoding marks them
encoded in commit_encoding's transaction, and the daily upkeep deletes the encoded ones once
they are old (`trim_archive`)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from memory.records import ArchivedConversation
from memory.storage.rows import CONVERSATION_COLUMNS, conversation_row, timestamp
from memory.storage.statements import Statements, placeholders

__all__ = ["TRIM_BATCH", "Archive"]

TRIM_BATCH = 1_000  # archived conversations looked at, and deleted, in one transaction


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

    async def trim_archive(self, before: datetime) -> int:
        gone = 0
        after: tuple[float, int] = (-1.0, 0)  # (ended_at, id) of the last row looked at
        while True:
            rows = await self._all(
                "SELECT ended_at, id FROM conversations WHERE encoded_at IS NOT NULL"
                " AND ended_at < ? AND (ended_at, id) > (?, ?) ORDER BY ended_at, id LIMIT ?",
                (timestamp(before), *after, TRIM_BATCH),
            )
            if not rows:
                return gone
            after = (float(rows[-1][0]), int(rows[-1][1]))
            deleted = await self._write(
                f"DELETE FROM conversations WHERE id IN ({placeholders(len(rows))})"
                # Each scope's newest stays: where it left off (/log, a recap, a first
                # greeting given once).
                " AND EXISTS (SELECT 1 FROM conversations AS newer"
                " WHERE newer.persona = conversations.persona"
                " AND newer.scope = conversations.scope"
                " AND newer.ended_at > conversations.ended_at)"
                # A reminder kept from before reminders were given their conversation is
                # found by its time: forgetting a memory made then must still find it.
                " AND NOT EXISTS (SELECT 1 FROM intentions AS i"
                " WHERE i.conversation_id IS NULL"
                " AND i.created_at BETWEEN conversations.started_at AND conversations.ended_at)"
                " RETURNING 1",
                [int(r[1]) for r in rows],
            )
            gone += len(deleted)

    async def encoding_failed(self, conversation_id: int, retry_at: datetime) -> None:
        await self._write(
            "UPDATE conversations SET attempts = attempts + 1, retry_at = ?"
            " WHERE id = ? AND encoded_at IS NULL",
            (timestamp(retry_at), conversation_id),
        )
