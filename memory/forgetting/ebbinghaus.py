"""The `ebbinghaus` policy (MemoryBank's intent): retention = exp(-dt / S), with
S = strength_days[importance] * (1 + |sentiment|). A recall restarts dt and sets
S <- S * (1.2 + min(dt / S, 1)): always stronger, more so after a longer gap (the spacing
effect). MemoryBank computed exp(-t * S / 5), so the stronger a memory grew the faster it faded;
here S divides. Pruned after the grace once retention is below `floor`, unless importance is 3
(those are only ever merged).

`OnEbbinghaus` is the base of the policies whose strengths follow this curve but which forget
otherwise (`stochastic`, `never`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from memory.forgetting.base import (
    GRACE,
    TINY,
    FloorPolicy,
    Policy,
    aged,
    check_by_importance,
    check_floor,
    check_grace,
    days_between,
    doc,
    initial_days,
    unrecalled,
)
from memory.records import Memory

__all__ = [
    "STRENGTH_DAYS",
    "Ebbinghaus",
    "EbbinghausParams",
    "OnEbbinghaus",
    "default_strengths",
]


# The `strength_days` of every policy whose strengths follow this curve: their default, and
# the sentence the reference gives the key.
def default_strengths() -> list[float]:
    return [2.0, 6.0, 20.0]


STRENGTH_DAYS = doc(
    "Days for an unrecalled memory's retention to fall to 37%, for importance 1, 2 and 3 "
    "(never fewer for a higher importance)."
)


@dataclass(slots=True)
class EbbinghausParams:
    strength_days: list[float] = field(default_factory=default_strengths, metadata=STRENGTH_DAYS)
    floor: float = field(
        default=0.05,
        metadata=doc(
            "A memory is forgotten once its retention is below this (one of importance 3 never is)."
        ),
    )
    grace_days: float = field(default=7.0, metadata=GRACE)

    def __post_init__(self) -> None:
        check_by_importance("strength_days", self.strength_days)
        check_floor(self.floor)
        check_grace(self.grace_days)


class Ebbinghaus(FloorPolicy):
    """retention = exp(-dt / S), S from strength_days by importance, times 1 + |sentiment|.

    A recall multiplies S by 1.2 + min(gap / S, 1): recalling what was just recalled helps a
    little, recalling what was nearly gone helps most. Pruned after the grace when retention
    falls below `floor`, except importance 3.
    """

    __slots__ = ("floor", "grace", "params")

    def __init__(self, params: EbbinghausParams | None = None) -> None:
        self.params = params or EbbinghausParams()
        self.floor = self.params.floor
        self.grace = timedelta(days=self.params.grace_days)

    name = "ebbinghaus"

    def initial_strength(self, importance: int, sentiment: float) -> float:
        return initial_days(self.params.strength_days, importance, sentiment)

    def retention(self, memory: Memory, now: datetime) -> float:
        return math.exp(-days_between(now, memory.last_touched) / max(memory.strength, TINY))

    def reinforced(self, memory: Memory, now: datetime) -> float:
        gap = days_between(now, memory.last_touched)
        strength = max(memory.strength, TINY)
        return strength * (1.2 + min(gap / strength, 1.0))

    def prunable(self, memories: Sequence[Memory], now: datetime) -> Iterable[Memory]:
        return (m for m in aged(memories, now, self.grace) if m.importance < 3)

    def reason(self, memory: Memory, retention: float, now: datetime) -> str:
        return f"faded: retention {retention:.2f} after {unrecalled(memory, now)} ({self.name})"


class OnEbbinghaus(Policy):
    """A policy whose strengths, and unless it says otherwise its retention, follow an
    Ebbinghaus curve (`curve`)."""

    __slots__ = ("curve",)

    def __init__(self, curve: Ebbinghaus) -> None:
        self.curve = curve

    def initial_strength(self, importance: int, sentiment: float) -> float:
        return self.curve.initial_strength(importance, sentiment)

    def retention(self, memory: Memory, now: datetime) -> float:
        return self.curve.retention(memory, now)

    def reinforced(self, memory: Memory, now: datetime) -> float:
        return self.curve.reinforced(memory, now)
