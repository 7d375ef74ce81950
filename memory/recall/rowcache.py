"""A large scope's memories copied in memory, so that a recall ranks and answers without a
store round trip: in a large scope, reading the few memories that may come to mind was a hop
to SQLite's thread or a trip to PostgreSQL on every recall (benchmarks/README.md).

The store stays the source of truth; a copy is derived and may hold any part of its scope.
What a recall asks for and the copy lacks is read from the store and kept; a scope of
LARGE_SCOPE memories or more (memory/recall/retrieval.py) is also copied whole in the background, a
slice at a time. Kept true by the bank (through memory/recall/derived.py): its new memories are read
in, its deleted ones leave the copy at once, the ones it changes in place (reinforced, merged
into) leave it and are read again; so for another process's changes as its notifications
name them (a change too large to name drops the copy). A read that overlapped a change to its
scope is used but not kept, so a copy never holds a row older than the bank's last change to
it."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from memory.recall.budget import Budget, ScopeCopies
from memory.records import Memory
from memory.storage import MemoryStore

__all__ = ["FILL_SLICE", "ROW_SCOPES", "RowCache"]

_CACHE = "rows"  # its name in the budget
_ROW = 700  # bytes, about, of a copied memory beside its text (its fields, the dict's entry)
ROW_SCOPES = 8  # scopes copied, least recent out (a copy's size: benchmarks/README.md)
FILL_SLICE = 1_024  # memories read at a time when a scope is copied whole

log = logging.getLogger(__name__)


class RowCache(ScopeCopies[dict[int, Memory]]):
    """Copies of up to `capacity` scopes' memories, by id (0: none kept, every read goes to
    the store), within the process's byte `budget` (memory/recall/budget.py)."""

    def __init__(
        self, store: MemoryStore, capacity: int = ROW_SCOPES, budget: Budget | None = None
    ) -> None:
        super().__init__(_CACHE, store, capacity, budget)
        # Moves with every change to a scope, so that rows read while it changed are not kept.
        self._versions: dict[str, int] = {}
        self._filling: dict[str, asyncio.Task[None]] = {}

    def held(self, scope: str) -> int:
        """How many of the scope's memories the copy holds."""
        return len(self._scopes.get(scope, ()))

    async def get(self, scope: str, ids: Sequence[int]) -> list[Memory]:
        """The scope's memories `ids` that exist, in that order (as the store's get_memories):
        from the copy, and from the store those it lacks."""
        rows = self._rows(scope)
        unique = list(dict.fromkeys(ids))
        while missing := [i for i in unique if i not in rows]:
            version = self._versions.get(scope, 0)
            read = await self._store.get_memories(scope, missing)
            if self._versions.get(scope, 0) != version:
                # The scope changed during the read (a memory forgotten, reinforced): again,
                # from what the copy holds now.
                rows = self._rows(scope)
                continue
            self._charge(scope, rows, _keep(rows, read))  # kept, if `rows` is the scope's copy
            unique = [i for i in unique if i in rows]  # those that exist
        return [rows[i] for i in unique]

    def fill(self, scope: str, ids: npt.NDArray[np.int64]) -> None:
        """Copy the scope's memories `ids` (all of them, by its links) in the background,
        unless the copy holds as many or is being made."""
        if self._capacity <= 0 or scope in self._filling:
            return
        rows = self._rows(scope)
        if len(rows) >= len(ids):
            return
        task = asyncio.ensure_future(self._fill(scope, rows, ids.tolist()))
        self._filling[scope] = task
        task.add_done_callback(lambda done: self._filled(scope, done))

    async def _fill(self, scope: str, rows: dict[int, Memory], ids: list[int]) -> None:
        for start in range(0, len(ids), FILL_SLICE):
            while self._scopes.get(scope) is rows:
                wanted = [i for i in ids[start : start + FILL_SLICE] if i not in rows]
                if not wanted:
                    break
                version = self._versions.get(scope, 0)
                read = await self._store.get_memories(scope, wanted)
                if self._versions.get(scope, 0) == version:
                    self._charge(scope, rows, _keep(rows, read))
                    break
                # The scope changed during the read: read the slice again.
            else:
                return  # the copy was dropped
            await asyncio.sleep(0)  # a slice at a time: recalls go on meanwhile

    async def filled(self, scope: str) -> None:
        """Wait for the scope's copy under way, if one is."""
        task = self._filling.get(scope)
        if task is not None:
            await asyncio.shield(task)

    def _filled(self, scope: str, task: asyncio.Task[None]) -> None:
        if self._filling.get(scope) is task:
            del self._filling[scope]
        if not task.cancelled() and task.exception() is not None:
            # Recall reads what the copy lacks from the store; the next one tries again.
            log.warning("could not copy a scope's memories: %r", task.exception())

    async def added(self, scope: str, ids: Sequence[int]) -> None:
        """The bank wrote the memories `ids` to the scope (a read that overlaps another change
        is not kept: what it lacks, a recall or the next fill reads)."""
        self._moved(scope)
        rows = self._scopes.get(scope)
        if rows is None or not ids:
            return
        version = self._versions[scope]
        read = await self._store.get_memories(scope, ids)
        if self._versions.get(scope) == version and self._scopes.get(scope) is rows:
            self._charge(scope, rows, _keep(rows, read))

    async def changed(self, scope: str, ids: Sequence[int]) -> None:
        """The bank changed the memories `ids` of the scope in place (reinforced them, merged
        into them): read again."""
        self.removed(scope, ids)
        await self.added(scope, ids)

    def removed(self, scope: str, ids: Sequence[int]) -> None:
        """The memories `ids` of the scope were deleted: they leave the copy at once."""
        self._moved(scope)
        rows = self._scopes.get(scope)
        if rows is not None:
            gone = [rows.pop(memory_id, None) for memory_id in ids]
            self._charge(scope, rows, -sum(_size(m) for m in gone if m is not None))

    def _held(self) -> set[str]:
        return super()._held() | set(self._filling)

    def drop(self, scope: str) -> None:
        """The scope changed in a way not followed here (or the budget let it go): its copy
        goes."""
        self._moved(scope)
        self._forget(scope)

    def _forget(self, scope: str) -> None:
        super()._forget(scope)
        filling = self._filling.pop(scope, None)
        if filling is not None:
            filling.cancel()

    async def close(self) -> None:
        """Stop the copies under way."""
        filling = list(self._filling.values())
        for task in filling:
            task.cancel()
        await asyncio.gather(*filling, return_exceptions=True)

    def _rows(self, scope: str) -> dict[int, Memory]:
        rows = self._used(scope)
        if rows is None:
            rows = {}
            self._keep(scope, rows, 0)
        return rows

    def _charge(self, scope: str, rows: dict[int, Memory], nbytes: int) -> None:
        """The scope's copy `rows` grew (or shrank) by about `nbytes`, if it is still kept."""
        if nbytes and self._scopes.get(scope) is rows:
            self._budget.keep(_CACHE, scope, self._budget.held(_CACHE, scope) + nbytes)

    def _moved(self, scope: str) -> None:
        self._versions[scope] = self._versions.get(scope, 0) + 1


def _size(memory: Memory) -> int:
    return _ROW + sys.getsizeof(memory.text)


def _keep(rows: dict[int, Memory], memories: Iterable[Memory]) -> int:
    """Add `memories` to a copy; returns about how many bytes the copy grew by."""
    grown = 0
    for m in memories:
        old = rows.get(m.id)
        grown += _size(m) - (0 if old is None else _size(old))
        rows[m.id] = m
    return grown
