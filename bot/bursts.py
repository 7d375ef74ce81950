"""Bursts: several messages arriving within a few seconds in one conversation (someone typing in
pieces, or several people at once) are answered once, by one turn that sees them all.

Each message of a conversation waits until the conversation has been quiet for `window`
seconds (the wait starts again with each new message), or until `longest` seconds have passed
since the burst's first message; then the newest one's turn answers for all of them, and the
others' get no reply of their own. Their messages wait in the session meanwhile
(`Session.waiting`, saved as they join), so a crash loses none of them; the turn that takes the
conversation's lock takes every message waiting in it (bot.engine).

Time is the injected clock's, and sleeping the injected `sleep`'s, so tests move a fake clock
instead of waiting. A window of 0 answers at once (the console and the web page, where a person
sends whole messages and waits for each answer).

    bursts = Bursts(clock, window=2.0, longest=8.0)
    if await bursts.settle(("pip", scope)):
        ...   # the newest message of its burst: answer
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from memory.clock import Clock

__all__ = ["Bursts", "Sleep"]

Sleep = Callable[[float], Awaitable[None]]


@dataclass(slots=True)
class _Burst:
    first: datetime
    last: datetime
    newest: int = 0  # the number of the newest message's wait
    arrived: asyncio.Event = field(default_factory=asyncio.Event)  # a newer message came


class Bursts:
    def __init__(
        self, clock: Clock, *, window: float, longest: float, sleep: Sleep = asyncio.sleep
    ) -> None:
        """`window`: seconds of quiet that end a burst; `longest`: the most a burst's first
        message waits however many follow."""
        self.clock = clock
        self.window = timedelta(seconds=window)
        self.longest = timedelta(seconds=max(longest, window))
        self._sleep = sleep
        self._bursts: dict[Hashable, _Burst] = {}

    async def settle(self, conversation: Hashable, *, wait: bool = True) -> bool:
        """Wait for the burst this message is part of to end: True when this is its newest
        message (its turn answers for all), False when a newer one came (that one answers).
        `wait=False`: no wait, where the surface wants an answer at once."""
        if not wait or self.window <= timedelta(0):
            return True
        now = self.clock.now()
        burst = self._bursts.get(conversation)
        if burst is None:
            burst = self._bursts[conversation] = _Burst(now, now)
        else:
            burst.last = now
            burst.arrived.set()
            burst.arrived = asyncio.Event()
        burst.newest += 1
        mine = burst.newest
        try:
            ends = min(now + self.window, burst.first + self.longest)
            left = (ends - now).total_seconds()
            if left > 0:
                await self._until(burst.arrived, left)
            return burst.newest == mine
        finally:
            # The burst ends with its newest message's wait (answered, or given up).
            if burst.newest == mine and self._bursts.get(conversation) is burst:
                del self._bursts[conversation]

    async def _until(self, arrived: asyncio.Event, seconds: float) -> None:
        """Sleep `seconds`, or less if a newer message arrives."""
        sleeping = asyncio.ensure_future(self._sleep(seconds))
        waiting = asyncio.ensure_future(arrived.wait())
        try:
            await asyncio.wait({sleeping, waiting}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (sleeping, waiting):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
