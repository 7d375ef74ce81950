"""Sleeping on a fake clock: `sleep` waits until a test moves the clock past its end
(`advance`), so timed waits (a burst's window) take no real time."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

from memory.clock import FakeClock

__all__ = ["FakeTimer"]


class FakeTimer:
    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self._sleepers: list[tuple[datetime, asyncio.Future[None]]] = []
        self.started = 0  # sleeps begun, ever

    @property
    def sleeping(self) -> int:
        """How many sleeps are waiting for the clock."""
        return sum(1 for _, f in self._sleepers if not f.done())

    async def sleep(self, seconds: float) -> None:
        self.started += 1
        wake = asyncio.get_running_loop().create_future()
        self._sleepers.append((self.clock.now() + timedelta(seconds=seconds), wake))
        await wake

    async def advance(self, seconds: float) -> None:
        """Move the clock, wake the sleeps that end by then, and let what they wake run."""
        self.clock.advance(seconds=seconds)
        now = self.clock.now()
        due = [f for at, f in self._sleepers if at <= now]
        self._sleepers = [(at, f) for at, f in self._sleepers if at > now and not f.done()]
        for future in due:
            if not future.done():
                future.set_result(None)
        for _ in range(20):  # the woken turns run until they wait on something else
            await asyncio.sleep(0)
