"""A memory's retention curve (memory/forgetting/curve.py) and the recall history it is drawn
from."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from memory.bank import MemoryBank
from memory.clock import FakeClock
from memory.embeddings import HashEmbedder

SCOPE, OTHER = "pip/console:dm:ann", "pip/console:dm:bob"


@pytest.fixture
async def bank(tmp_path: Path) -> AsyncIterator[tuple[MemoryBank, FakeClock]]:
    clock = FakeClock()
    opened = await MemoryBank.open(tmp_path, HashEmbedder(), clock, deterministic=True)
    try:
        yield opened, clock
    finally:
        await opened.close()


async def test_an_unrecalled_memory_only_fades(bank: tuple[MemoryBank, FakeClock]) -> None:
    memories, clock = bank
    memory_id = await memories.remember(SCOPE, "Ann's cat is called Mochi", importance=2)
    clock.advance(days=3)
    curve = await memories.curve(SCOPE, memory_id)
    assert curve is not None and curve.recalls == ()
    values = [r for _, r in curve.points]
    [(memory, now_retention)] = await memories.inspect(SCOPE)
    # It starts at the policy's retention of a new memory (actr, the default: below 1).
    start = memories.policy(SCOPE).retention(memory, memory.created_at)
    assert values[0] == pytest.approx(start, abs=1e-4) and 0.5 < start < 1.0
    assert values == sorted(values, reverse=True)  # time alone never raises it
    assert curve.now == clock.now() and curve.points[-1][0] == clock.now() + timedelta(days=30)
    assert dict(curve.points)[curve.now] == pytest.approx(now_retention, abs=1e-4)


async def test_recalls_are_kept_and_show_as_jumps(bank: tuple[MemoryBank, FakeClock]) -> None:
    memories, clock = bank
    memory_id = await memories.remember(SCOPE, "Ann is learning the cello")
    recalled = []
    for _ in range(2):
        clock.advance(days=4)
        recalled.append(clock.now())
        await memories.reinforce(SCOPE, [memory_id])
    clock.advance(days=1)
    history = await memories.store.recall_history(SCOPE, memory_id)
    assert [at for at, _ in history] == recalled
    assert history[1][1] >= history[0][1]  # each recall left it at least as strong

    curve = await memories.curve(SCOPE, memory_id)
    assert curve is not None and list(curve.recalls) == recalled
    by_time = dict(curve.points)
    for at in recalled:
        before = max(t for t in by_time if t < at)
        assert by_time[at] > by_time[before]  # the recall lifted it
    [(_, now_retention)] = await memories.inspect(SCOPE)
    assert by_time[curve.now] == pytest.approx(now_retention, abs=1e-4)
    assert max(t for t in by_time) > curve.now  # and it is projected ahead


async def test_history_stays_behind_the_scope_wall_and_goes_with_the_memory(
    bank: tuple[MemoryBank, FakeClock],
) -> None:
    memories, clock = bank
    memory_id = await memories.remember(SCOPE, "Ann plays chess on Sundays")
    clock.advance(days=2)
    await memories.reinforce(SCOPE, [memory_id])
    assert await memories.store.recall_history(OTHER, memory_id) == []
    assert await memories.curve(OTHER, memory_id) is None
    await memories.forget(SCOPE, memory_id)
    assert await memories.store.recall_history(SCOPE, memory_id) == []


async def test_inspect_finds_by_query_and_lists_whole_memories(
    bank: tuple[MemoryBank, FakeClock],
) -> None:
    memories, _ = bank
    await memories.remember(SCOPE, "Ann's sister lives in Lisbon", category="social_emotional")
    await memories.remember(SCOPE, "Ann hates olives", category="personal_daily")
    await memories.remember(OTHER, "Bob hates olives too")
    found = await memories.inspect(SCOPE, "olives")
    assert [m.text for m, _ in found] == ["Ann hates olives"]
    assert found[0][0].category == "personal_daily"
    assert len(await memories.inspect(SCOPE)) == 2
