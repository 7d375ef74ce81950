"""How long the event loop stalls: a watchdog task that asks to be woken every `interval`
seconds and records how late each wake-up comes. Lateness is time the loop spent running
something that did not yield (a long computation, a blocking call), during which no other
conversation moved.

    async with LoopWatch() as watch:
        ...                                   # the load
    print(watch.worst, watch.percentile(99))  # seconds

Benchmarks import it to report the worst stall under load; `warn_over` logs each stall longer
than that many seconds (for a long run).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Awaitable, Callable
from types import TracebackType

__all__ = ["LoopWatch"]

log = logging.getLogger(__name__)


class LoopWatch:
    def __init__(
        self,
        interval: float = 0.005,
        *,
        warn_over: float | None = None,
        clock: Callable[[], float] = time.perf_counter,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if interval <= 0:
            raise ValueError("interval must be positive")
        self.interval = interval
        self.warn_over = warn_over
        self.lags: list[float] = []  # seconds late, one per wake-up
        self._clock = clock
        self._sleep = sleep
        self._task: asyncio.Task[None] | None = None

    @property
    def worst(self) -> float:
        """The longest stall seen, in seconds (0 before any)."""
        return max(self.lags, default=0.0)

    def percentile(self, q: float) -> float:
        """The q-th percentile (0-100) of the lateness of wake-ups, nearest rank."""
        if not 0 <= q <= 100:
            raise ValueError("q must be between 0 and 100")
        if not self.lags:
            return 0.0
        ordered = sorted(self.lags)
        return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._watch(), name="loop-watch")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def __aenter__(self) -> LoopWatch:
        self.start()
        await asyncio.sleep(0)  # the watch is waiting before the work starts
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()

    async def _watch(self) -> None:
        while True:
            before = self._clock()
            await self._sleep(self.interval)
            lag = max(0.0, self._clock() - before - self.interval)
            self.lags.append(lag)
            if self.warn_over is not None and lag > self.warn_over:
                log.warning("the event loop stalled for %.3fs", lag)
