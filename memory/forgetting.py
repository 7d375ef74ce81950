"""How memories fade: a forgetting policy gives each memory a retention in [0, 1] from its age,
its recalls, its importance and its emotion.

The default is the Ebbinghaus curve as MemoryBank meant it: retention = exp(-dt / S), with dt
the days since the memory was last recalled (or made) and S its strength in days. Important and
emotional memories start stronger, whatever the emotion's sign; each recall makes S larger, and
more so after a longer gap (the spacing effect), and restarts dt.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import ClassVar, Protocol

from memory.records import Memory

__all__ = ["Ebbinghaus", "ForgettingPolicy"]

DAY = 86_400.0


class ForgettingPolicy(Protocol):
    """Pure functions of a memory and the time; no I/O, no randomness."""

    @property
    def name(self) -> str: ...

    def initial_strength(self, importance: int, sentiment: float) -> float:
        """S of a new memory, in days."""
        ...

    def retention(self, memory: Memory, now: datetime) -> float: ...

    def reinforced(self, memory: Memory, now: datetime) -> float:
        """S after the memory is recalled at `now`."""
        ...


class Ebbinghaus:
    """retention = exp(-dt / S).

    S starts at BASE_DAYS[importance] * (1 + |sentiment|): a trivial memory halves in about a
    day and a half, an important one in about two weeks, twice as long when strongly felt.
    A recall multiplies S by 1.2 + min(gap / S, 1): recalling what was just recalled helps a
    little, recalling what was nearly gone helps most.
    """

    __slots__ = ()
    name = "ebbinghaus"
    BASE_DAYS: ClassVar[dict[int, float]] = {1: 2.0, 2: 6.0, 3: 20.0}

    def initial_strength(self, importance: int, sentiment: float) -> float:
        return self.BASE_DAYS[importance] * (1.0 + min(abs(sentiment), 1.0))

    def retention(self, memory: Memory, now: datetime) -> float:
        elapsed = max((now - memory.last_touched).total_seconds() / DAY, 0.0)
        return math.exp(-elapsed / max(memory.strength, 1e-6))

    def reinforced(self, memory: Memory, now: datetime) -> float:
        gap = max((now - memory.last_touched).total_seconds() / DAY, 0.0)
        strength = max(memory.strength, 1e-6)
        return strength * (1.2 + min(gap / strength, 1.0))
