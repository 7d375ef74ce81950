"""The `half_life` policy (llm-memory's): retention = 0.5 ** (dt / H), a true half-life: H days
after its last recall a memory weighs exactly half. H = days * importance * (1 + |sentiment|).
A recall restarts dt and multiplies H by 1.1 + (1 - retention at the recall): the more had
faded, the more the recall teaches (spacing). Pruned below `floor` (0 turns pruning off) after
the grace. llm-memory wrote exp(-t / days), which is not a half-life of `days`, ranked by
sentiment alone and never pruned.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from memory.forgetting.base import (
    GRACE,
    TINY,
    FloorPolicy,
    check_floor,
    check_grace,
    days_between,
    doc,
    emotion,
    unrecalled,
)
from memory.records import Memory

__all__ = ["HalfLife", "HalfLifeParams"]


@dataclass(slots=True)
class HalfLifeParams:
    days: float = field(
        default=90.0,
        metadata=doc(
            "An importance-1 memory weighs half this many days after its last recall; "
            "importance multiplies it."
        ),
    )
    floor: float = field(
        default=0.05,
        metadata=doc("A memory is forgotten once its weight is below this; 0 forgets nothing."),
    )
    grace_days: float = field(default=7.0, metadata=GRACE)

    def __post_init__(self) -> None:
        if not 0 < self.days <= 36_500:
            raise ValueError("days must be more than 0 and at most 36500")
        check_floor(self.floor)
        check_grace(self.grace_days)


class HalfLife(FloorPolicy):
    """retention = 0.5 ** (dt / H), H = days * importance * (1 + |sentiment|).

    A true half-life: H days after its last recall (or its making) a memory weighs exactly half.
    A recall restarts dt and multiplies H by 1.1 + (1 - retention at the recall). Memories
    weighing less than `floor` are pruned after the grace (none with floor 0: no weight is
    below it).
    """

    __slots__ = ("days", "floor", "grace", "params")

    def __init__(self, params: HalfLifeParams | None = None) -> None:
        self.params = params or HalfLifeParams()
        self.days = self.params.days
        self.floor = self.params.floor
        self.grace = timedelta(days=self.params.grace_days)

    name = "half_life"

    def initial_strength(self, importance: int, sentiment: float) -> float:
        return self.days * max(importance, 1) * emotion(sentiment)

    def retention(self, memory: Memory, now: datetime) -> float:
        return math.pow(0.5, days_between(now, memory.last_touched) / max(memory.strength, TINY))

    def reinforced(self, memory: Memory, now: datetime) -> float:
        return max(memory.strength, TINY) * (1.1 + 1.0 - self.retention(memory, now))

    def reason(self, memory: Memory, retention: float, now: datetime) -> str:
        return (
            f"below floor: weight {retention:.3f} < {self.floor:g} after "
            f"{unrecalled(memory, now)}, {memory.strength:.0f}-day half-life ({self.name})"
        )
