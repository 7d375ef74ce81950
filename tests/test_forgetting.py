"""Forgetting policies: properties every policy keeps (hypothesis), and the seed projects' bugs
kept out (MemoryBank's inverted strength, MonikaiV2's inverted prune, llm-memory's false
half-life, Project Miao's immortal recalls and lost twin pairs)."""

from __future__ import annotations

from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.forgetting import POLICIES, ForgettingPolicy, Forgotten, make_policy, recalled
from memory.forgetting.base import draw, spare_twins
from memory.forgetting.ebbinghaus import Ebbinghaus
from memory.forgetting.half_life import HalfLife, HalfLifeParams
from memory.forgetting.never import Never
from memory.forgetting.registry import DEFAULT_POLICY, ForgettingParams, PolicyName
from memory.forgetting.stochastic import Stochastic
from memory.forgetting.trace_decay import TraceDecay
from memory.records import CATEGORIES, Category, Memory

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
NAMES = sorted(POLICIES)
PROPS = settings(max_examples=40, deadline=None)
XKEY = 0.5157347296770182  # draw(7, 42, 2026-01-01)


def mem(
    id: int = 1,
    *,
    policy: ForgettingPolicy | None = None,
    importance: int = 1,
    category: Category | None = "personal_daily",
    sentiment: float = 0.0,
    created: datetime = T0,
    recalled: datetime | None = None,
    count: int | None = None,
    strength: float | None = None,
) -> Memory:
    """A memory; its strength is `policy`'s initial one unless given."""
    if strength is None:
        strength = (policy or Ebbinghaus()).initial_strength(importance, sentiment)
    if count is None:
        count = 0 if recalled is None else 1
    return Memory(
        id=id,
        scope="test",
        text=f"memory {id}",
        speaker=None,
        kind="episodic",
        category=category,
        importance=importance,
        sentiment=sentiment,
        created_at=created,
        last_recalled_at=recalled,
        recall_count=count,
        strength=strength,
        related=(),
        conversation_id=None,
    )


def recall(policy: ForgettingPolicy, memory: Memory, at: datetime) -> Memory:
    """What the store makes of `memory` after a recall at `at` (as the bank asks it)."""
    return recalled(policy, memory, at)


def days(d: float) -> timedelta:
    return timedelta(days=d)


# Strategies: a memory made at T0, perhaps recalled since, perhaps reinforced before.
importances = st.integers(1, 3)
sentiments = st.floats(-1.0, 1.0)
categories: st.SearchStrategy[Category | None] = st.sampled_from([*CATEGORIES, None])
offsets = st.floats(0.0, 400.0)  # days


@st.composite
def memories(draw_: st.DrawFn, policy: ForgettingPolicy, id: int = 1) -> Memory:
    importance = draw_(importances)
    sentiment = draw_(sentiments)
    recalled_after = draw_(st.none() | offsets)
    count = 0 if recalled_after is None else draw_(st.integers(1, 8))
    boost = draw_(st.floats(1.0, 10.0)) if count else 1.0
    return mem(
        id,
        importance=importance,
        category=draw_(categories),
        sentiment=sentiment,
        recalled=None if recalled_after is None else T0 + days(recalled_after),
        count=count,
        strength=policy.initial_strength(importance, sentiment) * boost,
    )


# --- properties of every policy -------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@PROPS
@given(data=st.data(), later=offsets, more=offsets)
def test_retention_is_in_unit_range_and_never_rises_with_time(
    name: str, data: st.DataObject, later: float, more: float
) -> None:
    policy = make_policy(name)
    m = data.draw(memories(policy))
    t1 = m.last_touched + days(later)
    t2 = t1 + days(more)
    r1, r2 = policy.retention(m, t1), policy.retention(m, t2)
    assert 0.0 <= r2 <= r1 <= 1.0
    assert 0.0 <= policy.retention(m, m.created_at) <= 1.0


@pytest.mark.parametrize("name", NAMES)
@PROPS
@given(data=st.data(), gap=offsets, after=offsets)
def test_a_recall_never_makes_a_memory_fade_faster(
    name: str, data: st.DataObject, gap: float, after: float
) -> None:
    policy = make_policy(name)
    m = data.draw(memories(policy))
    at = m.last_touched + days(gap)
    recalled = recall(policy, m, at)
    assert recalled.strength >= m.strength
    for t in (at, at + days(after), at + days(after * 3)):
        assert policy.retention(recalled, t) >= policy.retention(m, t)


@pytest.mark.parametrize("name", NAMES)
@PROPS
@given(
    low=importances,
    high=importances,
    sentiment=sentiments,
    since=st.none() | offsets,
    count=st.integers(0, 5),
    later=offsets,
)
def test_higher_importance_never_lowers_retention(
    name: str,
    low: int,
    high: int,
    sentiment: float,
    since: float | None,
    count: int,
    later: float,
) -> None:
    low, high = min(low, high), max(low, high)
    policy = make_policy(name)
    recalled = None if since is None else T0 + days(since)
    count = 0 if recalled is None else max(count, 1)
    a, b = (
        mem(policy=policy, importance=i, sentiment=sentiment, recalled=recalled, count=count)
        for i in (low, high)
    )
    now = a.last_touched + days(later)
    assert policy.retention(b, now) >= policy.retention(a, now)


@pytest.mark.parametrize("name", NAMES)
@PROPS
@given(data=st.data(), seed=st.integers(0, 2**32))
def test_nothing_inside_the_grace_period_is_pruned(
    name: str, data: st.DataObject, seed: int
) -> None:
    policy = make_policy(name)
    grace_us = policy.grace // timedelta(microseconds=1)
    group = data.draw(st.lists(memories(policy), min_size=1, max_size=30))
    now = T0 + days(500)
    young: set[int] = set()
    pool = []
    for i, m in enumerate(group):
        if data.draw(st.booleans()) and grace_us > 0:
            age = timedelta(microseconds=data.draw(st.integers(0, grace_us - 1)))
            # made `age` ago, nearly faded already: only the grace can save it
            m = replace(
                m, created_at=now - age, last_recalled_at=None, recall_count=0, strength=1e-3
            )
            young.add(i + 1)
        pool.append(replace(m, id=i + 1))
    gone = {f.id for f in policy.prune(pool, now, seed=seed)}
    assert not gone & young


@pytest.mark.parametrize("name", NAMES)
@PROPS
@given(data=st.data(), seed=st.integers(0, 2**32), when=st.floats(0.0, 600.0))
def test_prune_is_deterministic_and_twins_lose_at_most_one(
    name: str, data: st.DataObject, seed: int, when: float
) -> None:
    policy = make_policy(name)
    group = data.draw(st.lists(memories(policy), min_size=2, max_size=40))
    pool = [replace(m, id=i + 1) for i, m in enumerate(group)]
    n = len(pool)
    twins = data.draw(
        st.lists(st.tuples(st.integers(1, n), st.integers(1, n)), max_size=n).map(
            lambda pairs: [(a, b) for a, b in pairs if a != b]
        )
    )
    now = T0 + days(when)
    first = policy.prune(pool, now, seed=seed, twins=twins)
    shuffled = policy.prune(list(reversed(pool)), now, seed=seed, twins=twins)
    assert sorted(f.id for f in first) == sorted(f.id for f in shuffled)  # order-free
    assert first == policy.prune(pool, now, seed=seed, twins=twins)
    gone = [f.id for f in first]
    assert len(gone) == len(set(gone))
    assert set(gone) <= {m.id for m in pool}
    assert all(f.reason and policy.name in f.reason for f in first)
    for a, b in twins:
        assert not (a in gone and b in gone)


# --- the shared helpers ---------------------------------------------------------------------


def test_draw_is_a_stable_keyed_number() -> None:
    day = T0.date()
    x = draw(7, 42, day)
    assert 0.0 <= x < 1.0
    assert draw(7, 42, day) == x
    others = {draw(8, 42, day), draw(7, 43, day), draw(7, 42, day + timedelta(days=1))}
    assert x not in others and len(others) == 3
    assert x == XKEY  # blake2b, not hash(): the same value in every process, forever


def test_draw_does_not_depend_on_the_process() -> None:
    import subprocess
    import sys

    code = (
        "from datetime import date; from memory.forgetting.base import draw; "
        "print(repr(draw(3, 9, date(2026, 5, 1))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    ).stdout
    assert float(out) == draw(3, 9, datetime(2026, 5, 1, tzinfo=UTC).date())


def test_spare_twins_keeps_the_stronger_or_the_older() -> None:
    doomed = [Forgotten(i, "x") for i in (1, 2, 3, 4, 5)]
    kept = spare_twins(doomed, [(2, 1), (3, 4), (4, 5)], {1: 0.1, 2: 0.1, 3: 0.2, 4: 0.5, 5: 0.5})
    ids = [f.id for f in kept]
    assert 1 not in ids and 2 in ids  # tie: the lower id stays
    assert 4 not in ids and 3 in ids  # the higher retention stays
    assert 5 in ids  # its twin 4 is already kept
    assert spare_twins(doomed, [], {}) == doomed


def test_policies_and_make_policy() -> None:
    assert set(POLICIES) == {
        "ebbinghaus",
        "trace_decay",
        "half_life",
        "stochastic",
        "never",
        "actr",
    }
    for name in POLICIES:
        assert make_policy(name).name == name
    with pytest.raises(ValueError, match=r"ebbinghaus.*trace_decay.*half_life.*stochastic.*never"):
        make_policy("lethe")


def test_the_registry_names_each_policy_alike_everywhere() -> None:
    """A policy in POLICIES is a value of PolicyName, and its parameters a table of
    ForgettingParams of the same type (none for a policy without)."""
    assert set(get_args(PolicyName)) == set(POLICIES)
    assert DEFAULT_POLICY in POLICIES
    tables = {f.name for f in fields(ForgettingParams)}
    with_params = {name: e.params for name, e in POLICIES.items() if e.params is not None}
    assert set(tables) == set(with_params)
    for name, params in with_params.items():
        assert isinstance(getattr(ForgettingParams(), name), params)
        assert ForgettingParams().policy(name).name == name


# --- ebbinghaus -----------------------------------------------------------------------------


def test_memorybank_bug_is_absent_a_recalled_memory_retains_more() -> None:
    policy = Ebbinghaus()
    m = mem(importance=2)
    recalled = recall(policy, m, T0 + days(5))
    assert recalled.strength > m.strength
    for later in (5, 6, 10, 30):
        assert policy.retention(recalled, T0 + days(later)) > policy.retention(m, T0 + days(later))


def test_spacing_a_later_recall_strengthens_more() -> None:
    policy = Ebbinghaus()
    m = mem(importance=2)
    soon = policy.reinforced(m, T0 + days(0.1))
    late = policy.reinforced(m, T0 + days(5))
    assert m.strength < soon < late


def test_emotion_of_either_sign_protects() -> None:
    for policy in (Ebbinghaus(), TraceDecay(), HalfLife(), Stochastic()):
        sad, glad, flat = (mem(policy=policy, sentiment=s) for s in (-0.9, 0.9, 0.0))
        now = T0 + days(4)
        assert policy.retention(sad, now) == policy.retention(glad, now)
        assert policy.retention(sad, now) > policy.retention(flat, now)
    assert Ebbinghaus().retention(mem(sentiment=-0.9), T0 + days(4)) > 0.0


def test_ebbinghaus_prunes_the_faded_but_never_the_important() -> None:
    policy = Ebbinghaus()
    now = T0 + days(21)
    trivial, vital = mem(1, importance=1), mem(2, importance=3, strength=0.5)
    young = mem(3, importance=1, created=now - days(6.9), strength=0.01)
    [gone] = policy.prune([trivial, vital, young], now, seed=0)
    assert gone.id == 1
    assert gone.reason == "faded: retention 0.00 after 21 days unrecalled (ebbinghaus)"
    assert policy.retention(vital, now) < policy.floor  # faded, yet kept: merged, not pruned
    fresh = mem(4, importance=1, recalled=now - days(1), count=3, strength=30.0)
    assert policy.prune([fresh], now, seed=0) == []


# --- trace_decay ----------------------------------------------------------------------------


def test_trace_decay_keeps_a_three_day_old_unread_memory() -> None:
    policy = TraceDecay()
    m = mem(policy=policy, importance=1)
    now = T0 + days(3)
    assert policy.retention(m, now) > 0.5
    assert policy.prune([m], now, seed=0) == []  # MonikaiV2 killed it here


def test_trace_decay_forgets_an_old_never_recalled_trivial_memory() -> None:
    policy = TraceDecay()
    now = T0 + days(60)
    trivial = mem(1, policy=policy, importance=1)
    read = mem(2, policy=policy, importance=1)
    for day in (10, 20, 30):  # each recall restarts the trace and lengthens it
        read = recall(policy, read, T0 + days(day))
    assert read.strength > 2.5 * trivial.strength
    vital = mem(3, policy=policy, importance=3)
    [gone] = policy.prune([trivial, read, vital], now, seed=0)
    assert gone.id == 1
    assert gone.reason == (
        "trace spent: 60 days unrecalled on a 14-day trace, recalled 0 times (trace_decay)"
    )
    assert policy.retention(trivial, now) == 0.0
    assert 0.0 < policy.retention(read, now) < policy.retention(vital, now)


# --- half_life ------------------------------------------------------------------------------


@pytest.mark.parametrize("importance", [1, 2, 3])
@pytest.mark.parametrize("sentiment", [0.0, 0.5, -1.0])
def test_half_life_is_a_true_half_life(importance: int, sentiment: float) -> None:
    policy = HalfLife()
    m = mem(policy=policy, importance=importance, sentiment=sentiment)
    h = m.strength
    assert policy.retention(m, T0 + days(h)) == pytest.approx(0.5)
    assert policy.retention(m, T0 + days(2 * h)) == pytest.approx(0.25)
    again = recall(policy, m, T0 + days(h))  # a recall restarts the clock, and lengthens H
    assert again.strength == pytest.approx(h * 1.6)  # 1.1 + (1 - 0.5): recalled at half
    assert policy.retention(again, T0 + days(h + again.strength)) == pytest.approx(0.5)


def test_half_life_defaults_to_90_days_and_importance_slows_it() -> None:
    policy = HalfLife()
    assert policy.retention(mem(policy=policy), T0 + days(90)) == pytest.approx(0.5)
    strengths = [policy.initial_strength(i, 0.0) for i in (1, 2, 3)]
    assert strengths == sorted(strengths) and strengths[0] == 90.0
    month = HalfLife(HalfLifeParams(days=30))
    assert month.retention(mem(policy=month), T0 + days(30)) == 0.5


def test_half_life_prunes_below_its_floor_unless_the_floor_is_zero() -> None:
    now = T0 + days(400)
    old = [mem(1, policy=HalfLife()), mem(2, policy=HalfLife(), importance=3)]
    gone = HalfLife().prune(old, now, seed=0)  # 400 days: 0.046 and 0.36
    assert [f.id for f in gone] == [1] and "below floor: weight 0.046 < 0.05" in gone[0].reason
    assert HalfLife(HalfLifeParams(floor=0.0)).prune(old, now + days(5000), seed=0) == []


def test_half_life_spacing_a_later_recall_strengthens_more() -> None:
    policy = HalfLife()
    m = mem(policy=policy, importance=2)
    soon, late = (policy.reinforced(m, T0 + days(d)) for d in (0.1, 180))
    assert m.strength * 1.1 < soon < late <= m.strength * 2.1


# --- stochastic -----------------------------------------------------------------------------


def group(
    n: int, *, importance: int = 1, category: Category | None = "personal_daily", start: int = 1
) -> list[Memory]:
    return [mem(i, importance=importance, category=category) for i in range(start, start + n)]


def test_stochastic_never_forgets_special_or_important() -> None:
    policy = Stochastic()
    pool = group(40, category="special") + group(40, importance=3, start=100)
    now = T0 + days(30)
    assert all(policy.prune(pool, now + days(d), seed=s) == [] for s in range(20) for d in (0, 7))


@pytest.mark.parametrize(
    ("importance", "category", "divisor"),
    [
        (1, "personal_daily", 2),
        (1, "work_study", 2),
        (1, "social_emotional", 2),
        (2, "personal_daily", 3),
        (2, None, 3),
        (2, "work_study", 4),
        (2, "social_emotional", 5),
    ],
)
def test_stochastic_keeps_miaos_category_weights(
    importance: int, category: Category | None, divisor: int
) -> None:
    """A faded memory's daily chance is 1 / d, d Miao's weight of its group: about 40 / d of
    40 faded memories go a day."""
    policy = Stochastic()
    pool = group(40, importance=importance, category=category)
    now = T0 + days(200)  # every one faded to retention 0
    assert policy.chance(pool[0], now) == pytest.approx(1 / divisor)
    counts = [len(policy.prune(pool, now + days(d), seed=s)) for s in range(30) for d in (0, 1)]
    mean = sum(counts) / len(counts)
    assert 0.8 * 40 / divisor < mean < 1.2 * 40 / divisor


def test_stochastic_replays_and_depends_on_the_seed() -> None:
    policy = Stochastic()
    pool = group(40)
    now = T0 + days(10)
    runs = [tuple(f.id for f in policy.prune(pool, now, seed=s)) for s in range(8)]
    assert runs == [tuple(f.id for f in policy.prune(pool, now, seed=s)) for s in range(8)]
    assert len(set(runs)) > 1
    assert policy.prune(pool, now, seed=1) != policy.prune(pool, now + days(1), seed=1)


def test_stochastic_protects_a_recent_recall_but_not_forever() -> None:
    policy = Stochastic()
    now = T0 + days(100)
    yesterday = [replace(m, last_recalled_at=now - days(1), recall_count=1) for m in group(40)]
    assert all(policy.prune(yesterday, now, seed=s) == [] for s in range(30))
    assert policy.protected(yesterday[0], now)
    # 8 recalls protect 30 days (capped), not 56: recalled 40 days ago, it is fair game
    long_ago = [replace(m, last_recalled_at=now - days(40), recall_count=8) for m in group(40)]
    assert not policy.protected(long_ago[0], now)
    never = group(40)
    for s in range(10):
        assert [f.id for f in policy.prune(long_ago, now, seed=s)] == [
            f.id for f in policy.prune(never, now, seed=s)
        ]
    assert any(policy.prune(long_ago, now, seed=s) for s in range(10))


def test_stochastic_a_lone_memory_can_be_forgotten() -> None:
    """Miao's cap of n // d a day kept a group smaller than d for ever."""
    policy = Stochastic()
    lone = group(1)
    gone_on = [
        next(d for d in range(3, 200) if policy.prune(lone, T0 + days(d), seed=s))
        for s in range(20)
    ]
    assert max(gone_on) < 30


def test_stochastic_takes_the_faded_before_the_fresh() -> None:
    policy = Stochastic()
    now = T0 + days(10)
    fresh = mem(1, importance=2, created=now - days(5), sentiment=0.1)  # retention about 0.46
    faded = [mem(i, importance=2, created=now - days(9)) for i in range(2, 6)]
    assert policy.retention(fresh, now) == pytest.approx(0.47, abs=0.01)
    for s in range(300):
        gone = {f.id for f in policy.prune([fresh, *faded], now, seed=s)}
        if 1 in gone:  # the fresh one goes only once every more faded one has gone
            assert gone == {1, 2, 3, 4, 5}
    # and its own chance, were it alone, is small beside theirs
    assert policy.chance(fresh, now) < policy.chance(faded[0], now) / 2


def test_stochastic_grace_is_three_days() -> None:
    policy = Stochastic()
    assert policy.grace == days(3)
    now = T0 + days(2.9)
    assert all(policy.prune(group(40), now, seed=s) == [] for s in range(20))
    assert any(policy.prune(group(40), T0 + days(3), seed=s) for s in range(20))


def test_stochastic_twins_lose_at_most_one() -> None:
    policy = Stochastic()
    pool = group(40)
    now = T0 + days(10)
    for s in range(30):
        plain = {f.id for f in policy.prune(pool, now, seed=s)}
        pairs = [(a, b) for a in plain for b in plain if a < b]
        gone = {f.id for f in policy.prune(pool, now, seed=s, twins=pairs)}
        assert len(gone) <= 1 and gone <= plain


# --- never ----------------------------------------------------------------------------------


def test_never_forgets_nothing() -> None:
    policy = Never()
    m = mem(importance=1, strength=0.001)
    assert policy.retention(m, T0 + days(10_000)) == 1.0
    assert policy.prune([m], T0 + days(10_000), seed=0) == []
    assert policy.initial_strength(1, 0.0) > 0
