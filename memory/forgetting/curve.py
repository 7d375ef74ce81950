"""A memory's retention over time, past and projected, drawn from its forgetting policy.

The past is rebuilt from the memory's recall history: before the first recall the memory had its
initial strength; after each recall, the strength that recall left, with the forgetting clock
restarted and the recalls so far as its recent ones. The history holds a memory's last
RECENT_RECALLS recalls (the daily prune lets older ones go: the count keeps them), so the curve
before them is drawn from the count alone; a memory recalled before its history was kept shows
only its last recall.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from memory.forgetting.base import ForgettingPolicy
from memory.records import RECENT_RECALLS, Memory

__all__ = ["RetentionCurve", "retention_curve"]


@dataclass(slots=True, frozen=True)
class RetentionCurve:
    points: tuple[tuple[datetime, float], ...]  # (when, retention), in time order
    recalls: tuple[datetime, ...]  # when it was recalled (the curve jumps there)
    now: datetime  # points after this are projected


def _states(
    policy: ForgettingPolicy, memory: Memory, history: Sequence[tuple[datetime, float]]
) -> list[tuple[datetime, Memory]]:
    """(from when, the memory as it stood from then), oldest first."""
    if not history and memory.last_recalled_at is not None:
        history = [(memory.last_recalled_at, memory.strength)]  # older recalls were not kept
    first = (
        replace(memory, last_recalled_at=None, recall_count=0)
        if not history
        else replace(
            memory,
            last_recalled_at=None,
            recall_count=max(0, memory.recall_count - len(history)),
            strength=policy.initial_strength(memory.importance, memory.sentiment),
        )
    )
    states = [(memory.created_at, replace(first, recent_recalls=()))]
    for n, (at, strength) in enumerate(history, start=1):
        count = memory.recall_count - len(history) + n
        recent = tuple(when for when, _ in history[:n])[-RECENT_RECALLS:]
        states.append(
            (
                at,
                replace(
                    memory,
                    last_recalled_at=at,
                    strength=strength,
                    recall_count=count,
                    recent_recalls=recent,
                ),
            )
        )
    return states


def retention_curve(
    policy: ForgettingPolicy,
    memory: Memory,
    history: Sequence[tuple[datetime, float]],
    now: datetime,
    *,
    ahead: timedelta = timedelta(days=30),
    samples: int = 120,
) -> RetentionCurve:
    """The retention from the memory's creation to `ahead` past `now`: `samples` evenly
    spaced points, plus the moment before and at each recall, so its jumps show."""
    states = _states(policy, memory, sorted(history))
    end = now + ahead
    span = (end - memory.created_at) / max(1, samples - 1)
    times = {memory.created_at + span * i for i in range(samples - 1)} | {now, end}
    for at, _ in states[1:]:
        times |= {at - timedelta(microseconds=1), at}
    points: list[tuple[datetime, float]] = []
    for when in sorted(t for t in times if memory.created_at <= t <= end):
        state = next(s for since, s in reversed(states) if since <= when)
        points.append((when, round(policy.retention(state, when), 4)))
    return RetentionCurve(tuple(points), tuple(at for at, _ in states[1:]), now)
