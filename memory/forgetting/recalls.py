"""What a recall and a merge do to a memory, under any policy: the memory the store is told
to write after a recall (`recalled`), after a prune merged its near-duplicates into it
(`absorbed`), and which surviving twin each forgotten memory is merged into (`merge_targets`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from memory.forgetting.base import ForgettingPolicy, Twins
from memory.records import RECENT_RECALLS, Memory

__all__ = ["absorbed", "merge_targets", "recalled"]


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
    twins: Twins,
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
