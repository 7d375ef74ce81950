"""How memories fade: a forgetting policy gives each memory a retention in [0, 1] from its age,
the time since it was last recalled, its recall count, its importance and its emotion, and
decides once a day which of a scope's memories to forget.

Policies are pure: no I/O, no clock, no global random generator. What randomness there is comes
from `draw(seed, memory id, day)`, a blake2b hash, so a run replays exactly, across processes.
Emotion protects whatever its sign: every policy uses |sentiment|. Times are in days; dt is the
time since the memory was last recalled (or made), age the time since it was made. Each policy
takes its parameters as one dataclass (`EbbinghausParams`...), which a persona file can set.

- `ebbinghaus` (the default; MemoryBank's intent): retention = exp(-dt / S), with
  S = strength_days[importance] * (1 + |sentiment|), strength_days = 2, 6, 20. A recall
  restarts dt and sets S <- S * (1.2 + min(dt / S, 1)): always stronger, more so after a longer
  gap (the spacing effect). MemoryBank computed exp(-t * S / 5), so the stronger a memory grew
  the faster it faded; here S divides. Pruned after the 7-day grace when retention < 0.05,
  unless importance is 3 (those are only ever merged).
- `trace_decay` (MonikaiV2's intent): a trace of lifetime L days, retention = 1 - min(dt / L, 1),
  forgotten once spent (dt >= L), never in its first 7 days. L starts at
  lifetime_days[importance] * (1 + |sentiment|), lifetime_days = 14, 45, 180; a recall restarts
  the trace and adds to L a part of that first lifetime, all of it when the trace was spent at
  the recall and a fifth when it was fresh (spacing). MonikaiV2's test was inverted (anything
  read fewer than 50 times died on day 3); here recalls only ever lengthen the trace.
- `half_life` (llm-memory's): retention = 0.5 ** (dt / H), a true half-life: H days after its
  last recall a memory weighs exactly half. H = days * importance * (1 + |sentiment|), days = 90
  by default. A recall restarts dt and multiplies H by 1.1 + (1 - retention at the recall):
  the more had faded, the more the recall teaches (spacing). Pruned below `floor` (0.05; 0 turns
  pruning off) after the 7-day grace. llm-memory wrote exp(-t / 90) (a 62-day half-life,
  mislabelled), ranked by sentiment alone and never pruned.
- `stochastic` (Project Miao's daily random forgetting): retention is the Ebbinghaus curve.
  Once a day each eligible memory of an (importance, category) group with divisor d draws
  under its chance or not, and as many of the group as drew under go, the most faded first.
  The chance is (1 - retention / safe_retention) / d: nothing while the memory keeps at least
  safe_retention (0.5: more remembered than forgotten), 1 / d once it has faded entirely. So
  a fading memory is likelier to go, a group of one can lose it, and a fresher memory never
  goes while a more faded one of its group stays. d (Miao's category
  weights) = 2 for importance 1 and, for importance 2, 3 for personal_daily (and
  uncategorised), 4 for work_study, 5 for social_emotional; importance 3 and category special
  are never forgotten. Eligible: at least 3 days old (the grace: long enough for a follow-up
  conversation to recall today's small talk and so protect it, short enough to keep Miao's
  brisk daily forgetting), and not protected: a recall protects for min(7 days * recalls,
  30 days) after the last recall. Miao made any recalled memory immortal and forgot at a flat
  rate under a daily cap of n // d, so a group smaller than d never lost anything.
- `never`: retention 1, nothing pruned (strengths still follow Ebbinghaus, so a persona can
  turn forgetting back on later).

Every policy keeps one contract (tests/test_forgetting_contract.py): retention never rises with
time alone; a recall never weakens a memory, whatever the clock says (`recalled` counts a
recall dated before the memory's last touch at that touch); higher importance never lowers
retention; nothing younger than the grace is pruned; and of a near-duplicate pair (twins), at
most one is forgotten in one prune (`spare_twins`: the one with the higher retention stays, on
a tie the lower, older id). The bank then merges what a prune takes into its surviving twin
(`absorbed`): the survivor carries the other's recalls and strength, and the repetition counts
as a recall, so it does not fade out the next day in its turn.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from types import MappingProxyType
from typing import Any, Protocol

from memory.records import RECENT_RECALLS, Memory

__all__ = [
    "POLICIES",
    "ActRParams",
    "Ebbinghaus",
    "EbbinghausParams",
    "ForgettingPolicy",
    "Forgotten",
    "HalfLife",
    "HalfLifeParams",
    "Never",
    "Stochastic",
    "StochasticParams",
    "TraceDecay",
    "TraceDecayParams",
    "absorbed",
    "draw",
    "make_policy",
    "merge_targets",
    "recalled",
    "spare_twins",
    "under_floor",
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


def under_floor(
    policy: ForgettingPolicy,
    memories: Sequence[Memory],
    now: datetime,
    candidates: Iterable[Memory],
    floor: float,
    reason: Callable[[Memory, float], str],
    twins: Collection[tuple[int, int]],
) -> list[Forgotten]:
    """The prune of a policy that forgets by a floor: those of `candidates` whose retention now
    is under `floor`, each with `reason(memory, retention)`, one of each pair of twins spared."""
    kept = {m.id: policy.retention(m, now) for m in memories}
    out = [Forgotten(m.id, reason(m, kept[m.id])) for m in candidates if kept[m.id] < floor]
    return spare_twins(out, twins, kept)


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


def recalled(policy: ForgettingPolicy, memory: Memory, at: datetime) -> Memory:
    """The memory as a recall at `at` leaves it (what the store is told to write). A clock
    behind the memory's last touch (set before it was made, or before its last recall) dates
    the recall at that touch: a recall older than the memory would restart its forgetting
    clock in the past and leave it weaker than if it had never been recalled."""
    at = max(at, memory.last_touched)
    strength = max(policy.reinforced(memory, at), memory.strength)
    return replace(
        memory,
        strength=strength,
        last_recalled_at=at,
        recall_count=memory.recall_count + 1,
        recent_recalls=(*memory.recall_times, at)[-RECENT_RECALLS:],
    )


def absorbed(
    policy: ForgettingPolicy, keep: Memory, twins: Sequence[Memory], at: datetime
) -> Memory:
    """`keep` after a prune merged its near-duplicates `twins` into it: the strongest strength
    of them all, their recalls added to its own (the times of all of them, which the policy
    sees before the store keeps the latest RECENT_RECALLS), and the repetition itself one more
    recall."""
    pooled = replace(
        keep,
        strength=max(m.strength for m in (keep, *twins)),
        recall_count=sum(max(m.recall_count, 0) for m in (keep, *twins)),
        recent_recalls=tuple(sorted(t for m in (keep, *twins) for t in m.recall_times)),
    )
    latest = max(m.last_touched for m in (keep, *twins))
    return recalled(policy, pooled, max(at, latest))


def merge_targets(
    forgotten: Collection[int],
    twins: Collection[tuple[int, int]],
    retention: Mapping[int, float],
) -> dict[int, int]:
    """For each forgotten memory with a twin that stays, that twin (the one with the highest
    retention, on a tie the lowest id): what it is merged into, rather than merely lost."""
    targets: dict[int, int] = {}
    for a, b in twins:
        for gone, other in ((a, b), (b, a)):
            if gone == other or gone not in forgotten or other in forgotten:
                continue
            best = targets.get(gone)
            rank = (retention.get(other, 0.0), -other)
            if best is None or rank > (retention.get(best, 0.0), -best):
                targets[gone] = other
    return targets


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


def _by_importance(key: str, values: Sequence[float]) -> None:
    """Days for importance 1, 2 and 3: positive, and never fewer for a higher importance
    (higher importance never lowers retention)."""
    if len(values) != 3 or any(not v > 0 for v in values):
        raise ValueError(f"{key} must be three positive numbers of days, for importance 1, 2, 3")
    if not values[0] <= values[1] <= values[2]:
        raise ValueError(f"{key} must not fall as importance rises")


def _grace(grace_days: float) -> None:
    if not 0 <= grace_days <= 365:
        raise ValueError("grace_days must be between 0 and 365")


def _floor(floor: float) -> None:
    if not 0 <= floor < 1:
        raise ValueError("floor must be at least 0 and less than 1")


# Everyday categories Stochastic forgets from (special never is); a memory with no category
# counts as personal_daily.
_EVERYDAY = ("personal_daily", "work_study", "social_emotional")


@dataclass(slots=True)
class EbbinghausParams:
    strength_days: list[float] = field(default_factory=lambda: [2.0, 6.0, 20.0])  # S by importance
    floor: float = 0.05  # pruned below this retention (importance 3 never)
    grace_days: float = 7.0

    def __post_init__(self) -> None:
        _by_importance("strength_days", self.strength_days)
        _floor(self.floor)
        _grace(self.grace_days)


@dataclass(slots=True)
class TraceDecayParams:
    lifetime_days: list[float] = field(default_factory=lambda: [14.0, 45.0, 180.0])
    grace_days: float = 7.0

    def __post_init__(self) -> None:
        _by_importance("lifetime_days", self.lifetime_days)
        _grace(self.grace_days)


@dataclass(slots=True)
class HalfLifeParams:
    days: float = 90.0  # the half-life of an importance-1 memory; H = days * importance
    floor: float = 0.05  # pruned below this weight; 0: never pruned
    grace_days: float = 7.0

    def __post_init__(self) -> None:
        if not 0 < self.days <= 36_500:
            raise ValueError("days must be more than 0 and at most 36500")
        _floor(self.floor)
        _grace(self.grace_days)


def _divisors(key: str, table: Mapping[str, float]) -> None:
    for category, divisor in table.items():
        if category not in _EVERYDAY:
            raise ValueError(f"{key} names {category!r}; the categories are {', '.join(_EVERYDAY)}")
        if not divisor >= 1:
            raise ValueError(f"{key} divisors must be 1 or more, not {divisor:g} ({category})")


@dataclass(slots=True)
class StochasticParams:
    strength_days: list[float] = field(default_factory=lambda: [2.0, 6.0, 20.0])
    grace_days: float = 3.0
    protect_days_per_recall: float = 7.0
    protect_cap_days: float = 30.0
    # A memory of retention r goes on a given day with chance (1 - r / safe_retention) / d, d
    # Miao's category weights by importance; a category left out is never forgotten at that
    # importance.
    safe_retention: float = 0.5
    importance_1: dict[str, float] = field(
        default_factory=lambda: {"personal_daily": 2.0, "work_study": 2.0, "social_emotional": 2.0}
    )
    importance_2: dict[str, float] = field(
        default_factory=lambda: {"personal_daily": 3.0, "work_study": 4.0, "social_emotional": 5.0}
    )

    def __post_init__(self) -> None:
        _by_importance("strength_days", self.strength_days)
        _grace(self.grace_days)
        if not 0 <= self.protect_days_per_recall <= self.protect_cap_days <= 3650:
            raise ValueError(
                "protect_days_per_recall must be at least 0 and at most protect_cap_days "
                "(at most 3650)"
            )
        _divisors("importance_1", self.importance_1)
        _divisors("importance_2", self.importance_2)
        if not 0 < self.safe_retention <= 1:
            raise ValueError("safe_retention must be more than 0 and at most 1")


class Ebbinghaus:
    """retention = exp(-dt / S).

    S starts at strength_days[importance] * (1 + |sentiment|): a trivial memory halves in about
    a day and a half, an important one in about two weeks, twice as long when strongly felt.
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
        return _of_importance(self.params.strength_days, importance) * _emotion(sentiment)

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
        return under_floor(
            self,
            memories,
            now,
            (m for m in _aged(memories, now, self.grace) if m.importance < 3),
            self.floor,
            lambda m, r: (
                f"faded: retention {r:.2f} after "
                f"{_unrecalled(m, _days(now, m.last_touched))} ({self.name})"
            ),
            twins,
        )


def _of_importance(days: Sequence[float], importance: int) -> float:
    return days[min(max(importance, 1), 3) - 1]


class TraceDecay:
    """A trace of L days: retention = 1 - min(dt / L, 1), forgotten once spent.

    L starts at lifetime_days[importance] * (1 + |sentiment|): an unread trivial memory lasts
    two weeks. A recall restarts the trace and lengthens it by that first lifetime times
    0.2 + 0.8 * (the part of the trace spent at the recall): a recall just before the trace
    ran out adds a whole lifetime, one right after the last adds a fifth (spacing).
    """

    __slots__ = ("grace", "params")

    def __init__(self, params: TraceDecayParams | None = None) -> None:
        self.params = params or TraceDecayParams()
        self.grace = timedelta(days=self.params.grace_days)

    name = "trace_decay"

    def initial_strength(self, importance: int, sentiment: float) -> float:
        return _of_importance(self.params.lifetime_days, importance) * _emotion(sentiment)

    def score(self, memory: Memory, now: datetime) -> float:
        """The part of the trace spent by now: 1 or more, and it is gone."""
        return _days(now, memory.last_touched) / max(memory.strength, _TINY)

    def retention(self, memory: Memory, now: datetime) -> float:
        return 1.0 - min(self.score(memory, now), 1.0)

    def reinforced(self, memory: Memory, now: datetime) -> float:
        spent = min(self.score(memory, now), 1.0)
        first = self.initial_strength(memory.importance, memory.sentiment)
        return max(memory.strength, _TINY) + first * (0.2 + 0.8 * spent)

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
                out.append(
                    Forgotten(
                        m.id,
                        f"trace spent: {_unrecalled(m, _days(now, m.last_touched))} on a "
                        f"{m.strength:.0f}-day trace, recalled {m.recall_count} times "
                        f"({self.name})",
                    )
                )
        return spare_twins(out, twins, {m.id: self.retention(m, now) for m in memories})


class HalfLife:
    """retention = 0.5 ** (dt / H), H = days * importance * (1 + |sentiment|).

    A true half-life: H days after its last recall (or its making) a memory weighs exactly half.
    A recall restarts dt and multiplies H by 1.1 + (1 - retention at the recall). Memories
    weighing less than `floor` are pruned after the grace (none with floor 0).
    """

    __slots__ = ("days", "floor", "grace", "params")

    def __init__(self, params: HalfLifeParams | None = None) -> None:
        self.params = params or HalfLifeParams()
        self.days = self.params.days
        self.floor = self.params.floor
        self.grace = timedelta(days=self.params.grace_days)

    name = "half_life"

    def initial_strength(self, importance: int, sentiment: float) -> float:
        return self.days * max(importance, 1) * _emotion(sentiment)

    def retention(self, memory: Memory, now: datetime) -> float:
        return math.pow(0.5, _days(now, memory.last_touched) / max(memory.strength, _TINY))

    def reinforced(self, memory: Memory, now: datetime) -> float:
        return max(memory.strength, _TINY) * (1.1 + 1.0 - self.retention(memory, now))

    def prune(
        self,
        memories: Sequence[Memory],
        now: datetime,
        *,
        seed: int,
        twins: Collection[tuple[int, int]] = (),
    ) -> list[Forgotten]:
        floor = self.floor
        if floor <= 0:
            return []
        return under_floor(
            self,
            memories,
            now,
            _aged(memories, now, self.grace),
            floor,
            lambda m, r: (
                f"below floor: weight {r:.3f} < {floor:g} after "
                f"{_unrecalled(m, _days(now, m.last_touched))}, "
                f"{m.strength:.0f}-day half-life ({self.name})"
            ),
            twins,
        )


class Stochastic:
    """Project Miao's daily random forgetting, by importance and category (see the module).

    Retention (for the chance, the order and twins) is the Ebbinghaus curve. Of a group of
    eligible memories with divisor d, as many go as drew under their chance
    (1 - r / safe_retention) / d, the most faded first.
    """

    __slots__ = ("_curve", "_divisors", "grace", "params", "protect_cap", "protect_per_recall")

    def __init__(self, params: StochasticParams | None = None) -> None:
        self.params = p = params or StochasticParams()
        self.grace = timedelta(days=p.grace_days)
        self.protect_per_recall = timedelta(days=p.protect_days_per_recall)
        self.protect_cap = timedelta(days=p.protect_cap_days)
        self._curve = Ebbinghaus(
            EbbinghausParams(strength_days=list(p.strength_days), grace_days=p.grace_days)
        )
        # (importance, category) -> d; absent: never forgotten.
        self._divisors: Mapping[tuple[int, str], float] = {
            (importance, category): d
            for importance, table in ((1, p.importance_1), (2, p.importance_2))
            for category, d in table.items()
        }

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

    def chance(self, memory: Memory, now: datetime) -> float:
        """Today's chance of the memory being forgotten, were it alone in its group (0 for
        what is never forgotten; protection and the grace are not counted here)."""
        d = self._divisors.get((memory.importance, memory.category or "personal_daily"))
        if d is None:
            return 0.0
        faded = 1.0 - self.retention(memory, now) / self.params.safe_retention
        return max(faded, 0.0) / d

    def prune(
        self,
        memories: Sequence[Memory],
        now: datetime,
        *,
        seed: int,
        twins: Collection[tuple[int, int]] = (),
    ) -> list[Forgotten]:
        day = now.astimezone(UTC).date()
        kept = {m.id: self.retention(m, now) for m in memories}
        groups: dict[tuple[int, str], list[Memory]] = {}
        for m in _aged(memories, now, self.grace):
            key = (m.importance, m.category or "personal_daily")
            if key in self._divisors and not self.protected(m, now):
                groups.setdefault(key, []).append(m)
        out: list[Forgotten] = []
        for (importance, category), group in sorted(groups.items()):
            hits = sum(1 for m in group if draw(seed, m.id, day) < self.chance(m, now))
            faded = sorted(group, key=lambda m: (kept[m.id], m.id))[:hits]
            out.extend(
                Forgotten(
                    m.id,
                    f"daily forgetting: retention {kept[m.id]:.2f}, among the {hits} most "
                    f"faded of {len(group)} importance-{importance} {category} memories "
                    f"({self.name})",
                )
                for m in faded
            )
        return spare_twins(out, twins, kept)


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


@dataclass(slots=True)
class ActRParams:
    # Pruned below this retrieval probability; the grace period follows from it (how long an
    # unrecalled importance-1 memory stays above it). memory/activation.py says why 0.22.
    floor: float = 0.22

    def __post_init__(self) -> None:
        if not 0 < self.floor < 1:
            raise ValueError("floor must be more than 0 and less than 1")


def _actr(params: ActRParams | None = None) -> ForgettingPolicy:
    # ACT-R activation lives in memory/activation.py, which builds on this module.
    from memory.activation import ActR

    return ActR((params or ActRParams()).floor)


# Each factory takes its policy's parameters (or none, for the defaults).
POLICIES: Mapping[str, Callable[..., ForgettingPolicy]] = MappingProxyType(
    {
        "ebbinghaus": Ebbinghaus,
        "trace_decay": TraceDecay,
        "half_life": HalfLife,
        "stochastic": Stochastic,
        "never": Never,
        "actr": _actr,
    }
)


def make_policy(name: str, params: Any = None) -> ForgettingPolicy:
    """The policy called `name` (one of POLICIES), with `params` (its parameters dataclass,
    as a persona file sets them) or its defaults."""
    factory = POLICIES.get(name)
    if factory is None:
        raise ValueError(
            f"unknown forgetting policy {name!r}; known policies: {', '.join(POLICIES)}"
        )
    return factory() if params is None else factory(params)
