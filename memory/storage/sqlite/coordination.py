"""The work several processes share (memory.storage.Coordination): on SQLite one process does
it all."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from memory.storage.sqlite.base import SqliteBase

__all__ = ["SqliteCoordination"]


class SqliteCoordination(SqliteBase):
    """One process, one database: every job is this one's."""

    async def leads(self, job: str) -> bool:
        """Always: the one process on an SQLite database does all its work."""
        return True

    @contextlib.asynccontextmanager
    async def scope_lock(self, scope: str) -> AsyncIterator[bool]:
        """Hold a scope's lock for its encoding or prune (see PgStore.scope_lock): yields
        whether it is held, which it is unless another task of this process holds it (the
        one process on an SQLite database has no other to share with)."""
        with self._scopes_held.hold(scope) as held:
            yield held
