"""Bursts: several messages arriving within a few seconds in one conversation (someone typing in
pieces, or several people at once) are answered once, by one turn that sees them all.

Each message of a conversation waits until the conversation has been quiet for `window`
seconds (the wait starts again with each new message), or until `longest` seconds have passed
since the burst's first message; then the newest one's turn answers for all of them, and the
others' get no reply of their own. Their messages wait in the session meanwhile
(`Session.waiting`, saved as they join), so a crash loses none of them; the turn that takes the
conversation's lock takes every message waiting in it (bot.turn.engine).

Time is the injected clock's, and sleeping the injected `sleep`'s, so tests move a fake clock
instead of waiting. A window of 0 answers at once; so does a surface where a person sends whole
messages and waits for each answer (the console, the web page: the engine notes no arrival).

    bursts = Bursts(clock, window=2.0, longest=8.0)
    arrival = bursts.arrive(("pip", scope))   # as the message comes
    ...                                       # (it is saved meanwhile)
    if await bursts.settle(arrival):
        ...   # the newest message of its burst: answer
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from memory.clock import Clock

__all__ = ["Arrival", "Bursts", "Sleep"]

Sleep = Callable[[float], Awaitable[None]]


@dataclass(slots=True)
class _Burst:
    first: datetime  # when its first message came
    newest: int = 0  # the number of its newest message
    arrived: asyncio.Event = field(default_factory=asyncio.Event)  # a newer message came


@dataclass(slots=True, frozen=True)
class Arrival:
    """A message's place in its conversation's burst."""

    conversation: Hashable
    burst: _Burst
    number: int
    at: datetime


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

    def arrive(self, conversation: Hashable) -> Arrival | None:
        """Note a message of `conversation` now (None: no window, it is answered at once)."""
        if self.window <= timedelta(0):
            return None
        now = self.clock.now()
        burst = self._bursts.get(conversation)
        if burst is None:
            burst = self._bursts[conversation] = _Burst(now)
        else:
            burst.arrived.set()
            burst.arrived = asyncio.Event()
        burst.newest += 1
        return Arrival(conversation, burst, burst.newest, now)

    async def settle(self, arrival: Arrival | None) -> bool:
        """Wait for the burst a message arrived in to end: True when it is the burst's newest
        message (its turn answers for all), False when a newer one came (that one answers)."""
        if arrival is None:
            return True
        burst = arrival.burst
        try:
            ends = min(arrival.at + self.window, burst.first + self.longest)
            left = (ends - self.clock.now()).total_seconds()
            if left > 0 and burst.newest == arrival.number:
                await self._until(burst.arrived, left)
            return burst.newest == arrival.number
        finally:
            # The burst ends with its newest message's wait (answered, or given up).
            if burst.newest == arrival.number and self._bursts.get(arrival.conversation) is burst:
                del self._bursts[arrival.conversation]

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
