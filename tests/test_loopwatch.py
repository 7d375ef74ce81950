"""LoopWatch: how late the event loop wakes a task that asked to sleep, measured on a fake
monotonic clock that a "blocking" call moves forward, with sleeps that only yield (so nothing
here depends on real time)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from bot.runtime.loopwatch import LoopWatch


class Monotonic:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_a_blocking_call_shows_as_a_stall_of_its_length(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Monotonic()

    async def step(seconds: float) -> None:
        await asyncio.sleep(0)  # one turn of the loop stands for `seconds`

    async with LoopWatch(0.001, warn_over=1.0, clock=clock, sleep=step) as watch:
        for _ in range(3):
            await asyncio.sleep(0)  # wake-ups on time (the fake clock stands still)
        clock.now += 2.5  # the loop is held for 2.5 s of the watch's clock
        for _ in range(3):
            await asyncio.sleep(0)
    assert watch.worst == pytest.approx(2.5 - 0.001)
    assert len(watch.lags) >= 5 and watch.lags.count(0.0) == len(watch.lags) - 1
    assert watch.percentile(50) == 0.0 and watch.percentile(100) == watch.worst
    assert "the event loop stalled for 2.499s" in caplog.text
    assert [r.levelno for r in caplog.records] == [logging.WARNING]


def test_no_wake_ups_no_stall_and_bad_arguments() -> None:
    watch = LoopWatch()
    assert watch.worst == 0.0 and watch.percentile(99) == 0.0
    with pytest.raises(ValueError):
        LoopWatch(0)
    with pytest.raises(ValueError):
        watch.percentile(101)
