"""A group commit: what is asked to be written while a write is under way goes together in the
next one. Under load one transaction then carries many turns' small writes, where one each would
queue every turn behind the others' commits. The store's contact notes (and on SQLite its
reinforcements: memory/storage/sqlite/base.py, memory/storage/postgres/base.py) and the
sessions' snapshots (bot/conversation/sessions.py) are written so."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = ["GroupCommit"]

T = TypeVar("T")


@dataclass(slots=True, eq=False)
class GroupCommit(Generic[T]):
    """`write(items)` writes what was asked for, in order, in one go; a failed write fails
    everyone whose items were in it."""

    write: Callable[[list[T]], Awaitable[None]]
    _queued: list[T] = field(default_factory=list)
    _batch: asyncio.Future[None] | None = None  # what the queued items' callers await
    _writer: asyncio.Task[None] | None = None

    async def __call__(self, items: Sequence[T]) -> None:
        """Returns once the items (in order) are written."""
        self._queued.extend(items)
        if self._batch is None:
            self._batch = asyncio.get_running_loop().create_future()
        batch = self._batch
        if self._writer is None:
            self._writer = asyncio.create_task(self._write_queued(), name="kizuna-group-commit")
        await asyncio.shield(batch)  # a caller giving up does not stop the others' write

    async def finish(self) -> None:
        """Wait for the items asked for so far (their failures are their callers')."""
        if self._writer is not None:
            await asyncio.gather(asyncio.shield(self._writer), return_exceptions=True)

    async def _write_queued(self) -> None:
        try:
            while self._queued and self._batch is not None:
                items, self._queued = self._queued, []
                done, self._batch = self._batch, None
                # Nobody may be left waiting to hear of a failure: it is theirs to log.
                done.add_done_callback(lambda f: f.cancelled() or f.exception())
                try:
                    await self.write(items)
                except Exception as e:
                    done.set_exception(e)
                except BaseException:  # cancelled (shutting down): nobody waits for nothing
                    done.cancel()
                    if self._batch is not None:
                        self._batch.cancel()
                        self._batch, self._queued = None, []
                    raise
                else:
                    done.set_result(None)
        finally:
            self._writer = None
