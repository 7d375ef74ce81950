"""The `stochastic` policy (Project Miao's daily random forgetting): retention is the Ebbinghaus
curve. Once a day each eligible memory of an (importance, category) group with divisor d draws
under its chance or not, and as many of the group as drew under go, the most faded first.

The chance is (1 - retention / safe_retention) / d: nothing while the memory keeps at least
safe_retention (by default more remembered than forgotten), 1 / d once it has faded entirely.
So a fading memory is likelier to go, a group of one can lose it, and a fresher memory never
goes while a more faded one of its group stays. d is Miao's category weight, by importance
(`importance_1`, `importance_2`; a memory with no category counts as personal_daily);
importance 3 and category special are never forgotten. Eligible: past the grace (long enough
for a follow-up conversation to recall today's small talk and so protect it, short enough to
keep Miao's brisk daily forgetting), and not protected: a recall protects for
protect_days_per_recall times the recalls, at most protect_cap_days, after the last recall.
Miao made any recalled memory immortal and forgot at a flat rate under a daily cap of n // d,
so a group smaller than d never lost anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from memory.forgetting.base import (
    GRACE,
    Forgotten,
    aged,
    check_by_importance,
    check_grace,
    doc,
    draw,
)
from memory.forgetting.ebbinghaus import (
    STRENGTH_DAYS,
    Ebbinghaus,
    EbbinghausParams,
    OnEbbinghaus,
    default_strengths,
)
from memory.records import Memory

__all__ = ["Stochastic", "StochasticParams"]

# The everyday categories forgotten from (special never is).
EVERYDAY = ("personal_daily", "work_study", "social_emotional")


def _divisors(key: str, table: Mapping[str, float]) -> None:
    for category, divisor in table.items():
        if category not in EVERYDAY:
            raise ValueError(f"{key} names {category!r}; the categories are {', '.join(EVERYDAY)}")
        if not divisor >= 1:
            raise ValueError(f"{key} divisors must be 1 or more, not {divisor:g} ({category})")


@dataclass(slots=True)
class StochasticParams:
    strength_days: list[float] = field(default_factory=default_strengths, metadata=STRENGTH_DAYS)
    grace_days: float = field(default=3.0, metadata=GRACE)
    protect_days_per_recall: float = field(
        default=7.0,
        metadata=doc(
            "Each recall protects a memory this many days from its last recall, up to "
            "`protect_cap_days`."
        ),
    )
    protect_cap_days: float = field(
        default=30.0, metadata=doc("The most days recalls protect a memory for.")
    )
    # A memory of retention r goes on a given day with chance (1 - r / safe_retention) / d, d
    # Miao's category weights by importance; a category left out is never forgotten at that
    # importance.
    safe_retention: float = field(
        default=0.5,
        metadata=doc(
            "A memory keeping at least this retention never goes; below it, its daily chance of "
            "going is (1 - retention / safe_retention) / d."
        ),
    )
    importance_1: dict[str, float] = field(
        default_factory=lambda: {"personal_daily": 2.0, "work_study": 2.0, "social_emotional": 2.0},
        metadata=doc(
            "The divisor d of each everyday category (personal_daily, work_study, "
            "social_emotional) for importance 1, at least 1; a category left out is never "
            "forgotten."
        ),
    )
    importance_2: dict[str, float] = field(
        default_factory=lambda: {"personal_daily": 3.0, "work_study": 4.0, "social_emotional": 5.0},
        metadata=doc(
            "The divisor d of each everyday category for importance 2, as `importance_1`; "
            "importance 3 is never forgotten."
        ),
    )

    def __post_init__(self) -> None:
        check_by_importance("strength_days", self.strength_days)
        check_grace(self.grace_days)
        if not 0 <= self.protect_days_per_recall <= self.protect_cap_days <= 3650:
            raise ValueError(
                "protect_days_per_recall must be at least 0 and at most protect_cap_days "
                "(at most 3650)"
            )
        _divisors("importance_1", self.importance_1)
        _divisors("importance_2", self.importance_2)
        if not 0 < self.safe_retention <= 1:
            raise ValueError("safe_retention must be more than 0 and at most 1")


class Stochastic(OnEbbinghaus):
    """Project Miao's daily random forgetting, by importance and category (see the module).

    Retention (for the chance, the order and twins) is the Ebbinghaus curve. Of a group of
    eligible memories with divisor d, as many go as drew under their chance
    (1 - r / safe_retention) / d, the most faded first.
    """

    __slots__ = ("_divisors", "grace", "params", "protect_cap", "protect_per_recall")

    def __init__(self, params: StochasticParams | None = None) -> None:
        self.params = p = params or StochasticParams()
        curve = EbbinghausParams(strength_days=list(p.strength_days), grace_days=p.grace_days)
        super().__init__(Ebbinghaus(curve))
        self.grace = timedelta(days=p.grace_days)
        self.protect_per_recall = timedelta(days=p.protect_days_per_recall)
        self.protect_cap = timedelta(days=p.protect_cap_days)
        # (importance, category) -> d; absent: never forgotten.
        self._divisors: Mapping[tuple[int, str], float] = {
            (importance, category): d
            for importance, table in ((1, p.importance_1), (2, p.importance_2))
            for category, d in table.items()
        }

    name = "stochastic"

    def protected(self, memory: Memory, now: datetime) -> bool:
        """Recalled recently enough: protect_days_per_recall a recall, at most
        protect_cap_days, after the last recall."""
        if memory.last_recalled_at is None or memory.recall_count <= 0:
            return False
        span = min(self.protect_per_recall * memory.recall_count, self.protect_cap)
        return now < memory.last_recalled_at + span

    def chance(self, memory: Memory, now: datetime) -> float:
        """Today's chance of the memory being forgotten, were it alone in its group (0 for
        what is never forgotten; protection and the grace are not counted here)."""
        d = self._divisors.get((memory.importance, memory.category or "personal_daily"))
        if d is None:
            return 0.0
        faded = 1.0 - self.retention(memory, now) / self.params.safe_retention
        return max(faded, 0.0) / d

    def forgotten(
        self, memories: Sequence[Memory], now: datetime, retention: Mapping[int, float], seed: int
    ) -> list[Forgotten]:
        day = now.astimezone(UTC).date()
        groups: dict[tuple[int, str], list[Memory]] = {}
        for m in aged(memories, now, self.grace):
            key = (m.importance, m.category or "personal_daily")
            if key in self._divisors and not self.protected(m, now):
                groups.setdefault(key, []).append(m)
        out: list[Forgotten] = []
        for (importance, category), group in sorted(groups.items()):
            hits = sum(1 for m in group if draw(seed, m.id, day) < self.chance(m, now))
            faded = sorted(group, key=lambda m: (retention[m.id], m.id))[:hits]
            out.extend(
                Forgotten(
                    m.id,
                    f"daily forgetting: retention {retention[m.id]:.2f}, among the {hits} most "
                    f"faded of {len(group)} importance-{importance} {category} memories "
                    f"({self.name})",
                )
                for m in faded
            )
        return out
