"""The `trace_decay` policy (MonikaiV2's intent): a trace of lifetime L days,
retention = 1 - min(dt / L, 1), forgotten once spent (dt >= L), never within the grace.
L starts at lifetime_days[importance] * (1 + |sentiment|); a recall restarts the trace and adds
to L a part of that first lifetime, all of it when the trace was spent at the recall and a
fifth when it was fresh (spacing). MonikaiV2's test was inverted (anything read fewer than a
set number of times died within days); here recalls only ever lengthen the trace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from memory.forgetting.base import (
    GRACE,
    TINY,
    Forgotten,
    Policy,
    aged,
    check_by_importance,
    check_grace,
    days_between,
    doc,
    initial_days,
    unrecalled,
)
from memory.records import Memory

__all__ = ["TraceDecay", "TraceDecayParams"]


@dataclass(slots=True)
class TraceDecayParams:
    lifetime_days: list[float] = field(
        default_factory=lambda: [14.0, 45.0, 180.0],
        metadata=doc(
            "An unrecalled memory's lifetime in days, for importance 1, 2 and 3; recalls "
            "lengthen it."
        ),
    )
    grace_days: float = field(default=7.0, metadata=GRACE)

    def __post_init__(self) -> None:
        check_by_importance("lifetime_days", self.lifetime_days)
        check_grace(self.grace_days)


class TraceDecay(Policy):
    """A trace of L days: retention = 1 - min(dt / L, 1), forgotten once spent.

    L starts at lifetime_days[importance] * (1 + |sentiment|). A recall restarts the trace and
    lengthens it by that first lifetime times 0.2 + 0.8 * (the part of the trace spent at the
    recall): a recall just before the trace ran out adds a whole lifetime, one right after the
    last adds a fifth (spacing).
    """

    __slots__ = ("grace", "params")

    def __init__(self, params: TraceDecayParams | None = None) -> None:
        self.params = params or TraceDecayParams()
        self.grace = timedelta(days=self.params.grace_days)

    name = "trace_decay"

    def initial_strength(self, importance: int, sentiment: float) -> float:
        return initial_days(self.params.lifetime_days, importance, sentiment)

    def score(self, memory: Memory, now: datetime) -> float:
        """The part of the trace spent by now: 1 or more, and it is gone."""
        return days_between(now, memory.last_touched) / max(memory.strength, TINY)

    def retention(self, memory: Memory, now: datetime) -> float:
        return 1.0 - min(self.score(memory, now), 1.0)

    def reinforced(self, memory: Memory, now: datetime) -> float:
        spent = min(self.score(memory, now), 1.0)
        first = self.initial_strength(memory.importance, memory.sentiment)
        return max(memory.strength, TINY) + first * (0.2 + 0.8 * spent)

    def forgotten(
        self, memories: Sequence[Memory], now: datetime, retention: Mapping[int, float], seed: int
    ) -> list[Forgotten]:
        return [
            Forgotten(
                m.id,
                f"trace spent: {unrecalled(m, now)} on a {m.strength:.0f}-day trace, recalled "
                f"{m.recall_count} times ({self.name})",
            )
            for m in aged(memories, now, self.grace)
            if self.score(m, now) >= 1.0
        ]
