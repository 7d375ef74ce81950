"""What every forgetting policy is: the `ForgettingPolicy` protocol the bank holds, the `Policy`
base the policies here build on, and the pieces they share.

A policy is pure: no I/O, no clock, no global random generator. What randomness there is comes
from `draw(seed, memory id, day)`, a blake2b hash, so a run replays exactly, across processes.
Times are in days; dt is the time since the memory was last recalled (or made), age the time
since it was made. Emotion protects whatever its sign: every policy uses |sentiment|.

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
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from types import MappingProxyType
from typing import Protocol, TypeAlias

from memory.records import Memory

__all__ = [
    "DAY",
    "GRACE",
    "TINY",
    "FloorPolicy",
    "ForgettingPolicy",
    "Forgotten",
    "Policy",
    "Twins",
    "aged",
    "check_by_importance",
    "check_floor",
    "check_grace",
    "days_between",
    "doc",
    "draw",
    "emotion",
    "initial_days",
    "spare_twins",
    "unrecalled",
]

DAY = 86_400.0
Twins: TypeAlias = Collection[tuple[int, int]]  # pairs of ids of near-duplicate memories
TINY = 1e-6  # the least strength a policy divides by


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
        self, memories: Sequence[Memory], now: datetime, *, seed: int, twins: Twins = ()
    ) -> list[Forgotten]:
        """Which of a scope's memories to forget today, with the reason. Twins only spare:
        what it forgets is what it would forget without them, less one of each pair it would
        lose whole (`spare_twins`), so the bank asks without twins, then spares."""
        ...


class Policy(ABC):
    """The policies here: a prune takes what `forgotten` picks, one of each pair of twins
    spared (`spare_twins`, by the retention of every memory of the scope)."""

    __slots__ = ()
    name: str
    grace: timedelta

    @abstractmethod
    def initial_strength(self, importance: int, sentiment: float) -> float: ...

    @abstractmethod
    def retention(self, memory: Memory, now: datetime) -> float: ...

    @abstractmethod
    def reinforced(self, memory: Memory, now: datetime) -> float: ...

    @abstractmethod
    def forgotten(
        self, memories: Sequence[Memory], now: datetime, retention: Mapping[int, float], seed: int
    ) -> list[Forgotten]:
        """Those of `memories` to forget today, twins not yet spared; `retention` is each
        one's retention now, by id."""

    def prune(
        self, memories: Sequence[Memory], now: datetime, *, seed: int, twins: Twins = ()
    ) -> list[Forgotten]:
        retention = {m.id: self.retention(m, now) for m in memories}
        return spare_twins(self.forgotten(memories, now, retention, seed), twins, retention)


class FloorPolicy(Policy):
    """A policy that forgets what it may prune (`prunable`) once its retention is below
    `floor`."""

    __slots__ = ()
    floor: float

    def prunable(self, memories: Sequence[Memory], now: datetime) -> Iterable[Memory]:
        """Those past the grace."""
        return aged(memories, now, self.grace)

    @abstractmethod
    def reason(self, memory: Memory, retention: float, now: datetime) -> str:
        """Why `memory`, at `retention` now, is forgotten."""

    def forgotten(
        self, memories: Sequence[Memory], now: datetime, retention: Mapping[int, float], seed: int
    ) -> list[Forgotten]:
        return [
            Forgotten(m.id, self.reason(m, retention[m.id], now))
            for m in self.prunable(memories, now)
            if retention[m.id] < self.floor
        ]


def draw(seed: int, memory_id: int, day: date) -> float:
    """A number in [0, 1) fixed by (seed, memory id, day): the same in every process."""
    key = f"{seed}:{memory_id}:{day.isoformat()}".encode()
    digest = hashlib.blake2b(key, digest_size=8, person=b"kizuna-forget").digest()
    return int.from_bytes(digest, "big") / 2.0**64


def spare_twins(
    forgotten: Sequence[Forgotten],
    twins: Twins,
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


def days_between(later: datetime, earlier: datetime) -> float:
    """Days from `earlier` to `later`, 0 if `later` is not later."""
    return max((later - earlier).total_seconds() / DAY, 0.0)


def emotion(sentiment: float) -> float:
    """1 + |sentiment|: feeling protects a memory whatever its sign."""
    return 1.0 + min(abs(sentiment), 1.0)


def aged(memories: Sequence[Memory], now: datetime, grace: timedelta) -> list[Memory]:
    """Those of `memories` at least `grace` old."""
    return [m for m in memories if now - m.created_at >= grace]


def unrecalled(memory: Memory, now: datetime) -> str:
    """How long the memory has gone unrecalled, for a prune's reason."""
    since = "unrecalled" if memory.last_recalled_at is None else "since its last recall"
    return f"{days_between(now, memory.last_touched):.0f} days {since}"


def initial_days(days: Sequence[float], importance: int, sentiment: float) -> float:
    """A new memory's strength in days: the entry of a by-importance list (importance 1, 2, 3)
    for `importance`, lengthened by feeling (`emotion`)."""
    return days[min(max(importance, 1), 3) - 1] * emotion(sentiment)


def doc(sentence: str) -> Mapping[str, str]:
    """The metadata of a field of a policy's parameters: the sentence the persona format's
    reference gives its key."""
    return MappingProxyType({"doc": sentence})


GRACE = doc("Nothing younger than this many days is forgotten.")  # every grace_days field's


def check_by_importance(key: str, values: Sequence[float]) -> None:
    """Days for importance 1, 2 and 3: positive, and never fewer for a higher importance
    (higher importance never lowers retention)."""
    if len(values) != 3 or any(not v > 0 for v in values):
        raise ValueError(f"{key} must be three positive numbers of days, for importance 1, 2, 3")
    if not values[0] <= values[1] <= values[2]:
        raise ValueError(f"{key} must not fall as importance rises")


def check_grace(grace_days: float) -> None:
    if not 0 <= grace_days <= 365:
        raise ValueError("grace_days must be between 0 and 365")


def check_floor(floor: float) -> None:
    if not 0 <= floor < 1:
        raise ValueError("floor must be at least 0 and less than 1")
