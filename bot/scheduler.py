"""The scheduler: one asyncio task that snapshots dirty sessions and closes idle ones."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import timedelta

from bot.sessions import SessionManager

__all__ = ["Scheduler"]

log = logging.getLogger(__name__)


class Scheduler:
    def __init__(
        self,
        sessions: SessionManager,
        idle_time: Callable[[str], timedelta],
        *,
        interval: float = 5.0,
    ) -> None:
        self._sessions = sessions
        self._idle_time = idle_time
        self._interval = interval
        self._task: asyncio.Task[None] | None = None

    async def tick(self) -> None:
        """One round of housekeeping; a failure is logged and tried again next round."""
        try:
            await self._sessions.save_dirty()
            await self._sessions.close_idle(self._idle_time)
        except Exception:
            log.exception("scheduler round failed; retrying next round")

    async def _run(self) -> None:
        while True:
            await self.tick()
            await asyncio.sleep(self._interval)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="kizuna-scheduler")

    async def stop(self) -> None:
        """Stop the loop, then save whatever is still dirty."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self._sessions.save_dirty()
