"""Leases (memory.storage.LeaseStore): one process at a time takes a conversation's turns (see
bot.conversation.sessions.TurnLock), and the messages a process keeps while it waits outlive it."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from typing import Any

from memory.records import Lease
from memory.storage.postgres.base import PgBase, clean_json, json_object
from memory.storage.rows import session_row

__all__ = ["PgLeases"]


# Take a conversation's lease when it is free, ours already, or its holder's connections are
# all gone (the process died); and, in the same trip, the session's snapshot and turns when
# another process wrote it last (`missing` when it has none: wiped, or never saved).
_TAKE_CONVERSATION = """
WITH taken AS (
    INSERT INTO conversation_leases AS lease (persona, scope, holder) VALUES ($1, $2, $3)
    ON CONFLICT (persona, scope) DO UPDATE SET holder = excluded.holder
    WHERE lease.holder = excluded.holder
        OR NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE application_name = lease.holder)
    RETURNING 1
),
orphans AS (  -- messages a process that died was keeping for this conversation
    DELETE FROM conversation_inbox AS kept
    WHERE kept.persona = $1 AND kept.scope = $2 AND kept.holder <> $3
        AND EXISTS (SELECT 1 FROM taken)
        AND NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE application_name = kept.holder)
    RETURNING kept.message_id, kept.turn, kept.seq
)
SELECT held, s.persona IS NULL AS missing,
    CASE WHEN held AND s.writer <> $3 THEN s.snapshot END AS snapshot, s.updated_at,
    turns.seqs, turns.texts,
    (SELECT array_agg(message_id ORDER BY seq) FROM orphans) AS orphan_ids,
    (SELECT array_agg(turn ORDER BY seq) FROM orphans) AS orphan_turns
FROM (SELECT EXISTS (SELECT 1 FROM taken) AS held) AS asked
LEFT JOIN sessions AS s ON s.persona = $1 AND s.scope = $2
LEFT JOIN LATERAL (
    SELECT array_agg(t.seq ORDER BY t.seq) AS seqs, array_agg(t.turn ORDER BY t.seq) AS texts
    FROM session_turns AS t
    WHERE held AND s.writer <> $3 AND t.persona = $1 AND t.scope = $2
) AS turns ON true
"""

_KEEP_WAITING = (
    "INSERT INTO conversation_inbox (persona, scope, holder, message_id, turn)"
    " SELECT $1, $2, $3, m, t FROM unnest($4::text[], $5::text[]) WITH ORDINALITY AS w(m, t, n)"
    " ORDER BY n ON CONFLICT DO NOTHING"
)

_RELEASE_CONVERSATION = """
WITH gone AS (
    DELETE FROM conversation_leases WHERE persona = $1 AND scope = $2 AND holder = $3
    RETURNING 1
)
SELECT pg_notify('kizuna_leases', $4) FROM gone
"""


def _lease_key(persona: str, scope: str) -> str:
    """A conversation's name in lease notifications: short, and free of what a payload
    cannot hold (NUL), whatever the scope string."""
    return hashlib.blake2b(f"{persona}\x1f{scope}".encode(), digest_size=16).hexdigest()


class PgLeases(PgBase):
    """The lease of each conversation, held by a live process."""

    async def take_conversation(self, persona: str, scope: str) -> Lease:
        """Take the conversation's lease unless another live process holds it; with it, the
        session's snapshot if another process has written it since this one last did."""
        if self._session is None or self._session.is_closed():
            async with self._session_busy:  # it keeps the lease alive, hears it given back
                await self._own_connection()
        row = await self._pool.fetchrow(_TAKE_CONVERSATION, persona, scope, self.instance)
        assert row is not None  # (one row, always)
        if not row["held"]:
            return Lease(held=False)
        orphans = tuple(
            (str(m), turn)
            for m, text in zip(row["orphan_ids"] or (), row["orphan_turns"] or (), strict=True)
            if isinstance(turn := json_object(text), dict)
        )
        if row["missing"]:
            return Lease(held=True, gone=True, orphans=orphans)
        if row["snapshot"] is None:
            return Lease(held=True, orphans=orphans)
        turns = list(zip(row["seqs"] or (), row["texts"] or (), strict=True))
        newer = session_row((persona, scope, row["snapshot"], row["updated_at"]), turns)
        return Lease(held=True, newer=newer, orphans=orphans)

    async def keep_waiting(
        self, persona: str, scope: str, waiting: Sequence[tuple[str, dict[str, Any]]]
    ) -> None:
        """Keep messages (message id, turn) waiting for the conversation, in the order
        given, until `drop_waiting`; found by the next process to take it if this one dies."""
        await self._pool.execute(
            _KEEP_WAITING,
            persona,
            scope,
            self.instance,
            [m for m, _ in waiting],
            [clean_json(turn) for _, turn in waiting],
        )

    async def drop_waiting(self, persona: str, scope: str, message_ids: Sequence[str]) -> None:
        """The messages have joined the conversation's saved snapshot: kept no more."""
        await self._pool.execute(
            "DELETE FROM conversation_inbox WHERE persona = $1 AND scope = $2 AND holder = $3"
            " AND message_id = ANY($4::text[])",
            persona,
            scope,
            self.instance,
            list(message_ids),
        )

    async def give_back_conversation(self, persona: str, scope: str) -> None:
        """Give the conversation's lease back, waking any process waiting for it."""
        await self._pool.execute(
            _RELEASE_CONVERSATION, persona, scope, self.instance, _lease_key(persona, scope)
        )

    async def conversation_returned(self, persona: str, scope: str) -> None:
        """Wait until the conversation's lease is given back (a holder that dies gives
        nothing back: wait with a timeout, and try again)."""
        await self._returned.setdefault(_lease_key(persona, scope), asyncio.Event()).wait()
