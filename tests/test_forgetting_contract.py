"""The contract every forgetting policy keeps (memory/forgetting/), checked over random
histories of recalls on a fake clock that may be set back, for every entry of POLICIES (a
policy added there is held to it too):

- retention stays in [0, 1] and never rises with time alone;
- a recall never weakens a memory, whatever the clock says;
- higher importance never lowers retention, through the same history;
- nothing younger than the grace is pruned;
- of near-duplicates, a prune takes at most one, and the survivor, carrying the other's recalls
  and strength, retains at least as much as either and is not taken the next day;
- twins only spare: a prune with them takes what it would without them, less one of each pair
  (`spare_twins`), which lets the bank compare only the pairs of what it would take.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.clock import FakeClock
from memory.forgetting import (
    POLICIES,
    ForgettingPolicy,
    absorbed,
    make_policy,
    merge_targets,
    recalled,
)
from memory.forgetting.base import spare_twins
from memory.forgetting.stochastic import Stochastic
from memory.records import CATEGORIES, Category, Memory

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
NAMES = sorted(POLICIES)
PROPS = settings(max_examples=60, deadline=None)


@dataclass(slots=True, frozen=True)
class Traits:
    importance: int
    sentiment: float
    category: Category | None


# A history: steps of the clock (days; negative: set back), each followed by a recall or not.
steps = st.lists(st.tuples(st.floats(-30.0, 60.0), st.booleans()), max_size=12)
traits = st.builds(
    Traits,
    importance=st.integers(1, 3),
    sentiment=st.floats(-1.0, 1.0),
    category=st.sampled_from([*CATEGORIES, None]),
)


def made(
    policy: ForgettingPolicy, t: Traits, at: datetime = T0, id: int = 1, importance: int = 0
) -> Memory:
    importance = importance or t.importance
    return Memory(
        id=id,
        scope="test",
        text=f"memory {id}",
        speaker=None,
        kind="episodic",
        category=t.category,
        importance=importance,
        sentiment=t.sentiment,
        created_at=at,
        last_recalled_at=None,
        recall_count=0,
        strength=policy.initial_strength(importance, t.sentiment),
        related=(),
        conversation_id=None,
    )


def lived(
    policy: ForgettingPolicy, memory: Memory, history: list[tuple[float, bool]]
) -> tuple[Memory, datetime]:
    """The memory after its history, and the clock's time at the end."""
    clock = FakeClock(memory.created_at)
    for step, recall in history:
        clock.advance(days=step)
        if recall:
            memory = recalled(policy, memory, clock.now())
    return memory, clock.now()


def lived_pool(
    policy: ForgettingPolicy, histories: list[tuple[Traits, list[tuple[float, bool]]]]
) -> list[Memory]:
    """A memory for each history, lived through it, ids from 1."""
    return [lived(policy, made(policy, t, id=i), h)[0] for i, (t, h) in enumerate(histories, 1)]


# A pool of up to 16 memories, pairs of them that may be near duplicates, a time and a seed.
GIVEN_TWINS = given(
    histories=st.lists(st.tuples(traits, steps), min_size=2, max_size=16),
    pairs=st.lists(st.tuples(st.integers(1, 16), st.integers(1, 16)), max_size=16),
    when=st.floats(0.0, 600.0),
    seed=st.integers(0, 2**32),
)


def later_times(start: datetime, offsets: list[float]) -> list[datetime]:
    return [start + timedelta(days=d) for d in sorted(offsets)]


offsets = st.lists(st.floats(0.0, 400.0), min_size=2, max_size=8)


@pytest.mark.parametrize("name", NAMES)
@PROPS
@given(t=traits, history=steps, ahead=offsets)
def test_retention_never_rises_with_time_alone(
    name: str, t: Traits, history: list[tuple[float, bool]], ahead: list[float]
) -> None:
    policy = make_policy(name)
    m, _ = lived(policy, made(policy, t), history)
    values = [policy.retention(m, when) for when in later_times(m.created_at, ahead)]
    assert all(0.0 <= v <= 1.0 for v in values)
    assert values == sorted(values, reverse=True)


@pytest.mark.parametrize("name", NAMES)
@PROPS
@given(t=traits, history=steps, back=st.floats(-400.0, 400.0), ahead=offsets)
def test_a_recall_never_weakens_whatever_the_clock_says(
    name: str, t: Traits, history: list[tuple[float, bool]], back: float, ahead: list[float]
) -> None:
    """Recalled at any time, even one before the memory was made (a clock set back), the
    memory retains at least what an unrecalled copy does, at every moment from its making."""
    policy = make_policy(name)
    m, now = lived(policy, made(policy, t), history)
    at = now + timedelta(days=back)
    after = recalled(policy, m, at)
    assert after.strength >= m.strength
    assert after.recall_count == m.recall_count + 1
    assert after.last_recalled_at is not None and after.last_recalled_at >= m.last_touched
    assert after.last_recalled_at >= m.created_at
    for when in [*later_times(m.created_at, ahead), at, m.last_touched]:
        assert policy.retention(after, when) >= policy.retention(m, when)


@pytest.mark.parametrize("name", NAMES)
@PROPS
@given(t=traits, low=st.integers(1, 3), high=st.integers(1, 3), history=steps, ahead=offsets)
def test_higher_importance_never_lowers_retention_through_a_history(
    name: str, t: Traits, low: int, high: int, history: list[tuple[float, bool]], ahead: list[float]
) -> None:
    policy = make_policy(name)
    low, high = min(low, high), max(low, high)
    a, _ = lived(policy, made(policy, t, importance=low), history)
    b, _ = lived(policy, made(policy, t, importance=high), history)
    for when in later_times(T0, ahead):
        assert policy.retention(b, when) >= policy.retention(a, when)


@pytest.mark.parametrize("name", NAMES)
@PROPS
@given(
    data=st.data(),
    histories=st.lists(
        st.tuples(traits, steps, st.floats(0.0, 1.0, exclude_max=True)), min_size=1, max_size=20
    ),
    seed=st.integers(0, 2**32),
)
def test_nothing_inside_the_grace_is_pruned(
    name: str,
    data: st.DataObject,
    histories: list[tuple[Traits, list[tuple[float, bool]], float]],
    seed: int,
) -> None:
    policy = make_policy(name)
    now = T0 + timedelta(days=500)
    pool: list[Memory] = []
    young: set[int] = set()
    for i, (t, history, youth) in enumerate(histories, start=1):
        if data.draw(st.booleans()):  # made inside the grace, its history crammed after
            start = now - policy.grace * youth
            if now - start < policy.grace:  # a youth of 0.9999... rounds to the grace itself
                young.add(i)
        else:
            start = T0
        m, _ = lived(policy, made(policy, t, start, id=i), history)
        pool.append(m)
    gone = {f.id for f in policy.prune(pool, now, seed=seed)}
    assert not gone & young


@pytest.mark.parametrize("name", NAMES)
@PROPS
@GIVEN_TWINS
def test_near_duplicates_merge_and_the_survivor_stays(
    name: str,
    histories: list[tuple[Traits, list[tuple[float, bool]]]],
    pairs: list[tuple[int, int]],
    when: float,
    seed: int,
) -> None:
    policy = make_policy(name)
    pool = lived_pool(policy, histories)
    by_id = {m.id: m for m in pool}
    twins = [(a, b) for a, b in pairs if a != b and a in by_id and b in by_id]
    now = max([T0 + timedelta(days=when), *(m.last_touched for m in pool)])
    gone = {f.id for f in policy.prune(pool, now, seed=seed, twins=twins)}
    for a, b in twins:
        assert not (a in gone and b in gone)
    into = merge_targets(gone, twins, {m.id: policy.retention(m, now) for m in pool})
    assert set(into) <= gone and not set(into.values()) & gone
    for keep in set(into.values()):
        merged = [by_id[g] for g, k in into.items() if k == keep]
        survivor = absorbed(policy, by_id[keep], merged, now)
        carried = sum(m.recall_count for m in (by_id[keep], *merged)) + 1
        assert survivor.recall_count == carried
        assert survivor.strength >= max(m.strength for m in (by_id[keep], *merged))
        for d in (0.0, 1.0, 30.0):
            at = now + timedelta(days=d)
            assert all(
                policy.retention(survivor, at) >= policy.retention(m, at)
                for m in (by_id[keep], *merged)
            )
        # Not the next day in its turn: the merge counts as a recall.
        rest = [survivor if m.id == keep else m for m in pool if m.id not in gone]
        tomorrow = policy.prune(rest, now + timedelta(days=1), seed=seed, twins=twins)
        assert keep not in {f.id for f in tomorrow}


@pytest.mark.parametrize("name", NAMES)
@PROPS
@GIVEN_TWINS
def test_twins_only_spare_what_a_prune_would_take(
    name: str,
    histories: list[tuple[Traits, list[tuple[float, bool]]]],
    pairs: list[tuple[int, int]],
    when: float,
    seed: int,
) -> None:
    policy = make_policy(name)
    pool = lived_pool(policy, histories)
    twins = [(a, b) for a, b in pairs if a != b and a <= len(pool) and b <= len(pool)]
    now = max([T0 + timedelta(days=when), *(m.last_touched for m in pool)])
    alone = policy.prune(pool, now, seed=seed)
    retention = {m.id: policy.retention(m, now) for m in pool}
    assert policy.prune(pool, now, seed=seed, twins=twins) == spare_twins(alone, twins, retention)


# --- stochastic: the chance grows as retention falls ----------------------------------------


@PROPS
@given(histories=st.lists(st.tuples(traits, steps), min_size=1, max_size=30), seed=st.integers())
def test_stochastic_takes_the_most_faded_of_a_group_first(
    histories: list[tuple[Traits, list[tuple[float, bool]]]], seed: int
) -> None:
    policy = Stochastic()
    pool = lived_pool(policy, histories)
    now = max(m.last_touched for m in pool) + timedelta(days=4)
    gone = {f.id for f in policy.prune(pool, now, seed=seed)}
    assert gone == {f.id for f in policy.prune(list(reversed(pool)), now, seed=seed)}
    eligible = [
        m
        for m in pool
        if now - m.created_at >= policy.grace
        and not policy.protected(m, now)
        and policy.chance(m, now) > 0
    ]
    for m in pool:
        if m.id in gone:
            assert m in eligible
            # no fresher one of its group goes while it stays
            for other in eligible:
                same = (other.importance, other.category or "personal_daily") == (
                    m.importance,
                    m.category or "personal_daily",
                )
                if same and other.id not in gone:
                    assert policy.retention(other, now) >= policy.retention(m, now)


@given(t=traits, a=st.floats(0.0, 60.0), b=st.floats(0.0, 60.0))
def test_stochastic_chance_grows_as_retention_falls(t: Traits, a: float, b: float) -> None:
    policy = Stochastic()
    m = made(policy, t)
    early, late = (T0 + timedelta(days=d) for d in sorted((a, b)))
    assert policy.retention(m, early) >= policy.retention(m, late)
    assert policy.chance(m, early) <= policy.chance(m, late)
    assert policy.chance(replace(m, importance=3), late) == 0.0
    assert policy.chance(replace(m, category="special"), late) == 0.0
