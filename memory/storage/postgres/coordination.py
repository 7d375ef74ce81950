"""The work several processes share (memory.storage.Coordination): jobs one process leads,
and scopes one process encodes or prunes at a time, under advisory locks held on this
process's own connection (they go with it if the process dies)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncIterator

import asyncpg

from memory.storage.postgres.base import PgBase

__all__ = ["PgCoordination"]


def _lock_key(name: str) -> int:
    """The advisory lock named `name`: a signed 64-bit hash of it."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "big") - 2**63


class PgCoordination(PgBase):
    """Leads and scope locks."""

    async def leads(self, job: str) -> bool:
        """Whether this process leads `job` (say "daily": the daily prune), taking the lead
        when no live process holds it: a session advisory lock, released when the holder's
        connection ends."""
        async with self._session_busy:
            if job in self._led:  # a lead lasts as long as the connection holding it
                await self._on_session("SELECT 1")
            if job not in self._led:
                _, taken = await self._on_session("SELECT pg_try_advisory_lock($1)", _lock_key(job))
                if taken:
                    self._led.add(job)
            return job in self._led

    @contextlib.asynccontextmanager
    async def scope_lock(self, scope: str) -> AsyncIterator[bool]:
        """Hold a scope's lock for its encoding or prune, if no other process (nor another
        task of this one) holds it: yields whether it is held; a scope held elsewhere is left
        to its holder, not waited for. A session advisory lock on this process's own
        connection, so the pool's connections stay free for the work done under it, and a
        dead process's locks go with its connection. (Should that connection drop meanwhile,
        the lock is lost early: commit_encoding's mark still writes a conversation once.)"""
        if scope in self._scopes_held:  # session locks nest: this process already holds it
            yield False
            return
        key = _lock_key("scope " + scope)
        async with self._session_busy:
            session, held = await self._on_session("SELECT pg_try_advisory_lock($1)", key)
        if not held:
            yield False
            return
        try:
            with self._scopes_held.hold(scope) as ours:
                yield ours
        finally:
            # Shielded: a cancelled task still lets go, or the scope stays locked for good.
            await asyncio.shield(self._unlock(session, key))

    async def _unlock(self, session: asyncpg.Connection, key: int) -> None:
        async with self._session_busy:
            current = self._session  # a new connection never held the lock
            if current is not None and current is session and not current.is_closed():
                await current.fetchval("SELECT pg_advisory_unlock($1)", key)
