"""How memories fade: a forgetting policy gives each memory a retention in [0, 1] from its age,
the time since it was last recalled, its recall count, its importance and its emotion, and
decides once a day which of a scope's memories to forget.

Policies are pure: no I/O, no clock, no global random generator. What randomness there is comes
from `draw(seed, memory id, day)`, a blake2b hash, so a run replays exactly, across processes.
Emotion protects whatever its sign: every policy uses |sentiment|. Times are in days; dt is the
time since the memory was last recalled (or made), age the time since it was made.

- `ebbinghaus` (the default; MemoryBank's intent): retention = exp(-dt / S), with
  S = BASE_DAYS[importance] * (1 + |sentiment|) and BASE_DAYS = {1: 2, 2: 6, 3: 20}. A recall
  restarts dt and sets S <- S * (1.2 + min(dt / S, 1)): always stronger, more so after a longer
  gap (the spacing effect). MemoryBank computed exp(-t * S / 5), so the stronger a memory grew
  the faster it faded; here S divides. Pruned after the 7-day grace when retention < 0.05,
  unless importance is 3 (those are only ever merged).
- `trace_decay` (MonikaiV2's intent): score = age / (L * (1 + recalls)), with the lifetime
  L = LIFETIME_DAYS[importance] * (1 + |sentiment|), LIFETIME_DAYS = {1: 14, 2: 45, 3: 180};
  retention = 1 - min(score, 1), and the memory is forgotten once the score reaches 1, never in
  its first 7 days. MonikaiV2's test was inverted (anything read fewer than 50 times died on
  day 3); here recalls only ever lengthen the trace.
- `half_life` (llm-memory's): retention = 0.5 ** (dt / H), a true half-life: H days after its
  last recall a memory weighs exactly half. H = days * importance * (1 + |sentiment|), days = 90
  by default. llm-memory wrote exp(-t / 90) (a 62-day half-life, mislabelled) and ranked by
  sentiment alone; here importance slows the fade and a recall restarts dt. Pruned only if a
  `floor` is given, below it, after the 7-day grace.
- `stochastic` (Project Miao's daily random forgetting): retention is the Ebbinghaus curve.
  Once a day, among the scope's eligible memories, each (importance, category) group of n
  forgets each member with probability 1 / (2d) but never more than n // d of them, d = 2 for
  importance 1 (about n/4 a day, at most n/2) and, for importance 2, d = 3 for personal_daily
  (and uncategorised), 4 for work_study, 5 for social_emotional; importance 3 and category
  special are never forgotten. When more are drawn than the cap, the lowest draws go. Eligible:
  at least 3 days old (the grace: long enough for a follow-up conversation to recall today's
  small talk and so protect it, short enough to keep Miao's brisk daily forgetting), and not
  protected: a recall protects for min(7 days * recalls, 30 days) after the last recall. Miao
  made any recalled memory immortal; here protection runs out.
- `never`: retention 1, nothing pruned (strengths still follow Ebbinghaus, so a persona can
  turn forgetting back on later).

Every policy, through `spare_twins`: of a near-duplicate pair (twins), at most one is forgotten
in one prune; the one with the higher retention stays (on a tie the lower, older id). Project
Miao could delete both halves of a pair.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from types import MappingProxyType
from typing import ClassVar, Protocol

from memory.records import Memory

__all__ = [
    "POLICIES",
    "Ebbinghaus",
    "ForgettingPolicy",
    "Forgotten",
    "HalfLife",
    "Never",
    "Stochastic",
    "TraceDecay",
    "draw",
    "make_policy",
    "spare_twins",
]

DAY = 86_400.0
_TINY = 1e-6


@dataclass(slots=True, frozen=True)
class Forgotten:
    """A memory a prune decided to forget, and why in one short line."""

    id: int
    reason: str


class ForgettingPolicy(Protocol):
    """Pure functions of memories and the time; randomness only through `draw`."""

    @property
    def name(self) -> str: ...

    @property
    def grace(self) -> timedelta:
        """Nothing younger than this (since created_at) is pruned."""
        ...

    def initial_strength(self, importance: int, sentiment: float) -> float:
        """S of a new memory, in days (positive)."""
        ...

    def retention(self, memory: Memory, now: datetime) -> float:
        """In [0, 1]; never rises with time alone."""
        ...

    def reinforced(self, memory: Memory, now: datetime) -> float:
        """S after the memory is recalled at `now` (never lower than before)."""
        ...

    def prune(
        self,
        memories: Sequence[Memory],
        now: datetime,
        *,
        seed: int,
        twins: Collection[tuple[int, int]] = (),
    ) -> list[Forgotten]:
        """Which of a scope's memories to forget today, with the reason."""
        ...


def draw(seed: int, memory_id: int, day: date) -> float:
    """A number in [0, 1) fixed by (seed, memory id, day): the same in every process."""
    key = f"{seed}:{memory_id}:{day.isoformat()}".encode()
    digest = hashlib.blake2b(key, digest_size=8, person=b"kizuna-forget").digest()
    return int.from_bytes(digest, "big") / 2.0**64


def spare_twins(
    forgotten: Sequence[Forgotten],
    twins: Collection[tuple[int, int]],
    retention: Mapping[int, float],
) -> list[Forgotten]:
    """`forgotten` less one of each near-duplicate pair it would lose whole: the one with the
    higher retention is kept (on a tie the lower id, the older)."""
    doomed = {f.id for f in forgotten}
    for a, b in sorted((min(p), max(p)) for p in twins):
        if a != b and a in doomed and b in doomed:
            keep = b if retention.get(b, 0.0) > retention.get(a, 0.0) else a
            doomed.discard(keep)
    return [f for f in forgotten if f.id in doomed]


def _days(later: datetime, earlier: datetime) -> float:
    return max((later - earlier).total_seconds() / DAY, 0.0)


def _emotion(sentiment: float) -> float:
    """1 + |sentiment|: feeling protects a memory whatever its sign."""
    return 1.0 + min(abs(sentiment), 1.0)


def _aged(memories: Sequence[Memory], now: datetime, grace: timedelta) -> list[Memory]:
    return [m for m in memories if now - m.created_at >= grace]


def _unrecalled(memory: Memory, days: float) -> str:
    since = "unrecalled" if memory.last_recalled_at is None else "since its last recall"
    return f"{days:.0f} days {since}"


class Ebbinghaus:
    """retention = exp(-dt / S).

    S starts at BASE_DAYS[importance] * (1 + |sentiment|): a trivial memory halves in about a
    day and a half, an important one in about two weeks, twice as long when strongly felt.
    A recall multiplies S by 1.2 + min(gap / S, 1): recalling what was just recalled helps a
    little, recalling what was nearly gone helps most. Pruned after the grace when retention
    falls below `floor`, except importance 3.
    """

    __slots__ = ("floor", "grace")
    BASE_DAYS: ClassVar[Mapping[int, float]] = MappingProxyType({1: 2.0, 2: 6.0, 3: 20.0})

    def __init__(self, floor: float = 0.05, grace_days: float = 7.0) -> None:
        self.floor = floor
        self.grace = timedelta(days=grace_days)

    name = "ebbinghaus"

    def initial_strength(self, importance: int, sentiment: float) -> float:
        return self.BASE_DAYS[importance] * _emotion(sentiment)

    def retention(self, memory: Memory, now: datetime) -> float:
        return math.exp(-_days(now, memory.last_touched) / max(memory.strength, _TINY))

    def reinforced(self, memory: Memory, now: datetime) -> float:
        gap = _days(now, memory.last_touched)
        strength = max(memory.strength, _TINY)
        return strength * (1.2 + min(gap / strength, 1.0))

    def prune(
        self,
        memories: Sequence[Memory],
        now: datetime,
        *,
        seed: int,
        twins: Collection[tuple[int, int]] = (),
    ) -> list[Forgotten]:
        kept = {m.id: self.retention(m, now) for m in memories}
        out = [
            Forgotten(
                m.id,
                f"faded: retention {kept[m.id]:.2f} after "
                f"{_unrecalled(m, _days(now, m.last_touched))} ({self.name})",
            )
            for m in _aged(memories, now, self.grace)
            if m.importance < 3 and kept[m.id] < self.floor
        ]
        return spare_twins(out, twins, kept)


class TraceDecay:
    """score = age / (L * (1 + recalls)); retention = 1 - min(score, 1); forgotten at score 1.

    L = LIFETIME_DAYS[importance] * (1 + |sentiment|): an unread trivial memory lasts two
    weeks, each recall adds another lifetime. `reinforced` leaves L alone: the recall count,
    which the store raises, is what lengthens the trace.
    """

    __slots__ = ("grace",)
    LIFETIME_DAYS: ClassVar[Mapping[int, float]] = MappingProxyType({1: 14.0, 2: 45.0, 3: 180.0})

    def __init__(self, grace_days: float = 7.0) -> None:
        self.grace = timedelta(days=grace_days)

    name = "trace_decay"

    def initial_strength(self, importance: int, sentiment: float) -> float:
        return self.LIFETIME_DAYS[importance] * _emotion(sentiment)

    def score(self, memory: Memory, now: datetime) -> float:
        lifetime = max(memory.strength, _TINY) * (1 + max(memory.recall_count, 0))
        return _days(now, memory.created_at) / lifetime

    def retention(self, memory: Memory, now: datetime) -> float:
        return 1.0 - min(self.score(memory, now), 1.0)

    def reinforced(self, memory: Memory, now: datetime) -> float:
        return memory.strength

    def prune(
        self,
        memories: Sequence[Memory],
        now: datetime,
        *,
        seed: int,
        twins: Collection[tuple[int, int]] = (),
    ) -> list[Forgotten]:
        out = []
        for m in _aged(memories, now, self.grace):
            score = self.score(m, now)
            if score >= 1.0:
                age = _days(now, m.created_at)
                out.append(
                    Forgotten(
                        m.id,
                        f"trace spent: score {score:.2f} at {age:.0f} days old, "
                        f"recalled {m.recall_count} times ({self.name})",
                    )
                )
        return spare_twins(out, twins, {m.id: self.retention(m, now) for m in memories})


class HalfLife:
    """retention = 0.5 ** (dt / H), H = days * importance * (1 + |sentiment|).

    A true half-life: H days after its last recall (or its making) a memory weighs exactly half.
    A recall restarts dt and leaves H alone. With a `floor`, memories weighing less are pruned
    after the grace; without one nothing is.
    """

    __slots__ = ("days", "floor", "grace")

    def __init__(
        self, days: float = 90.0, floor: float | None = None, grace_days: float = 7.0
    ) -> None:
        self.days = days
        self.floor = floor
        self.grace = timedelta(days=grace_days)

    name = "half_life"

    def initial_strength(self, importance: int, sentiment: float) -> float:
        return self.days * max(importance, 1) * _emotion(sentiment)

    def retention(self, memory: Memory, now: datetime) -> float:
        return math.pow(0.5, _days(now, memory.last_touched) / max(memory.strength, _TINY))

    def reinforced(self, memory: Memory, now: datetime) -> float:
        return memory.strength

    def prune(
        self,
        memories: Sequence[Memory],
        now: datetime,
        *,
        seed: int,
        twins: Collection[tuple[int, int]] = (),
    ) -> list[Forgotten]:
        floor = self.floor
        if floor is None:
            return []
        weight = {m.id: self.retention(m, now) for m in memories}
        out = [
            Forgotten(
                m.id,
                f"below floor: weight {weight[m.id]:.3f} < {floor:g} after "
                f"{_unrecalled(m, _days(now, m.last_touched))}, "
                f"{m.strength:.0f}-day half-life ({self.name})",
            )
            for m in _aged(memories, now, self.grace)
            if weight[m.id] < floor
        ]
        return spare_twins(out, twins, weight)


class Stochastic:
    """Project Miao's daily random forgetting, by importance and category (see the module).

    Retention (for ranking and twins) is the Ebbinghaus curve. A group of n eligible memories
    with divisor d loses each member with probability 1 / (2d), at most n // d of them.
    """

    __slots__ = ("_curve", "grace", "protect_cap", "protect_per_recall")
    # (importance, category) -> d; category None counts as personal_daily; absent: never.
    DIVISORS: ClassVar[Mapping[tuple[int, str], int]] = MappingProxyType(
        {
            (1, "personal_daily"): 2,
            (1, "work_study"): 2,
            (1, "social_emotional"): 2,
            (2, "personal_daily"): 3,
            (2, "work_study"): 4,
            (2, "social_emotional"): 5,
        }
    )

    def __init__(
        self,
        grace_days: float = 3.0,
        protect_days_per_recall: float = 7.0,
        protect_cap_days: float = 30.0,
    ) -> None:
        self.grace = timedelta(days=grace_days)
        self.protect_per_recall = timedelta(days=protect_days_per_recall)
        self.protect_cap = timedelta(days=protect_cap_days)
        self._curve = Ebbinghaus(grace_days=grace_days)

    name = "stochastic"

    def initial_strength(self, importance: int, sentiment: float) -> float:
        return self._curve.initial_strength(importance, sentiment)

    def retention(self, memory: Memory, now: datetime) -> float:
        return self._curve.retention(memory, now)

    def reinforced(self, memory: Memory, now: datetime) -> float:
        return self._curve.reinforced(memory, now)

    def protected(self, memory: Memory, now: datetime) -> bool:
        """Recalled recently enough: 7 days a recall, at most 30, after the last recall."""
        if memory.last_recalled_at is None or memory.recall_count <= 0:
            return False
        span = min(self.protect_per_recall * memory.recall_count, self.protect_cap)
        return now < memory.last_recalled_at + span

    def prune(
        self,
        memories: Sequence[Memory],
        now: datetime,
        *,
        seed: int,
        twins: Collection[tuple[int, int]] = (),
    ) -> list[Forgotten]:
        day = now.astimezone(UTC).date()
        groups: dict[tuple[int, str], list[Memory]] = {}
        for m in _aged(memories, now, self.grace):
            key = (m.importance, m.category or "personal_daily")
            if key in self.DIVISORS and not self.protected(m, now):
                groups.setdefault(key, []).append(m)
        out: list[Forgotten] = []
        for (importance, category), group in sorted(groups.items()):
            divisor = self.DIVISORS[importance, category]
            chance = 1.0 / (2 * divisor)
            cap = len(group) // divisor
            drawn = sorted((draw(seed, m.id, day), m.id) for m in group)
            out.extend(
                Forgotten(
                    mid,
                    f"daily forgetting: drew {d:.2f} < {chance:.2f} among {len(group)} "
                    f"importance-{importance} {category} memories ({self.name})",
                )
                for d, mid in drawn[:cap]
                if d < chance
            )
        return spare_twins(out, twins, {m.id: self.retention(m, now) for m in memories})


class Never:
    """Forgetting turned off: retention 1, nothing pruned. Strengths still follow Ebbinghaus,
    so turning forgetting back on finds sensible values."""

    __slots__ = ("_curve",)

    def __init__(self) -> None:
        self._curve = Ebbinghaus()

    name = "never"

    @property
    def grace(self) -> timedelta:
        return timedelta(0)

    def initial_strength(self, importance: int, sentiment: float) -> float:
        return self._curve.initial_strength(importance, sentiment)

    def retention(self, memory: Memory, now: datetime) -> float:
        return 1.0

    def reinforced(self, memory: Memory, now: datetime) -> float:
        return self._curve.reinforced(memory, now)

    def prune(
        self,
        memories: Sequence[Memory],
        now: datetime,
        *,
        seed: int,
        twins: Collection[tuple[int, int]] = (),
    ) -> list[Forgotten]:
        return []


def _actr() -> ForgettingPolicy:
    # ACT-R activation lives in memory/activation.py, which builds on this module.
    from memory.activation import ActR

    return ActR()


POLICIES: Mapping[str, Callable[[], ForgettingPolicy]] = MappingProxyType(
    {
        "ebbinghaus": Ebbinghaus,
        "trace_decay": TraceDecay,
        "half_life": HalfLife,
        "stochastic": Stochastic,
        "never": Never,
        "actr": _actr,
    }
)


def make_policy(name: str) -> ForgettingPolicy:
    """The policy called `name` (one of POLICIES), with its default settings."""
    factory = POLICIES.get(name)
    if factory is None:
        raise ValueError(
            f"unknown forgetting policy {name!r}; known policies: {', '.join(POLICIES)}"
        )
    return factory()
