"""What the bank derives, scope by scope (memory/recall/derived.py): here the counts full-text
search chooses a cue's words by, read again after enough writes to their own scope (the bank's,
or another process's as its notices name them), a bounded number of words kept a scope."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import timedelta
from pathlib import Path

import pytest

import memory.recall.derived
from memory.bank import MemoryBank
from memory.clock import FakeClock
from memory.records import MemoryNotice
from tests.test_links import START

CATS = "pip/discord:dm:u1"
DOGS = "pip/discord:dm:u2"


@pytest.fixture
async def bank(tmp_path: Path) -> AsyncIterator[MemoryBank]:
    opened = await MemoryBank.open(
        tmp_path, "hash", FakeClock(START + timedelta(days=1)), deterministic=True
    )
    yield opened
    await opened.close()


def counted(bank: MemoryBank, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The words whose counts the bank asks the store for, from here on."""
    asked: list[list[str]] = []
    read = bank.store.document_frequencies

    async def counting(scope: str, words: Sequence[str]) -> dict[str, int]:
        asked.append(list(words))
        return await read(scope, words)

    monkeypatch.setattr(bank.store, "document_frequencies", counting)
    return asked


async def write(bank: MemoryBank, scope: str, n: int) -> list[int]:
    return [await bank.remember(scope, f"my cat Mochi sat on mat {i}") for i in range(n)]


async def test_a_scope_s_counts_are_read_again_after_its_own_writes_only(
    bank: MemoryBank, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = bank.derived.counts
    await write(bank, CATS, 5)
    asked = counted(bank, monkeypatch)
    assert await counts.frequencies(CATS, ["mochi"]) == {"mochi": 5}
    await write(bank, DOGS, memory.recall.derived.STALE_AFTER + 20)  # another scope's
    assert await counts.frequencies(CATS, ["mochi"]) == {"mochi": 5}
    assert asked == [["mochi"]]
    await write(bank, CATS, memory.recall.derived.STALE_AFTER + 1)
    assert await counts.frequencies(CATS, ["mochi"]) == {"mochi": 106}
    assert asked == [["mochi"], ["mochi"]]


async def test_a_larger_scope_s_counts_last_for_a_share_of_it(
    bank: MemoryBank, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory.recall.derived, "STALE_AFTER", 2)
    monkeypatch.setattr(memory.recall.derived, "STALE_SHARE", 0.25)
    counts = bank.derived.counts
    await write(bank, CATS, 40)
    asked = counted(bank, monkeypatch)
    assert await counts.sizes(CATS) == (40, 40)
    await counts.frequencies(CATS, ["mochi"])
    await write(bank, CATS, 10)  # a quarter of 40: still good
    assert await counts.sizes(CATS) == (40, 40)
    await counts.frequencies(CATS, ["mochi"])
    assert asked == [["mochi"]]
    await write(bank, CATS, 1)
    assert await counts.sizes(CATS) == (51, 51)
    assert await counts.frequencies(CATS, ["mochi"]) == {"mochi": 51}
    assert asked == [["mochi"], ["mochi"]]


async def test_another_process_s_writes_age_the_counts_as_the_bank_s_own(
    bank: MemoryBank, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = bank.derived.counts
    ids = await write(bank, CATS, 5)
    asked = counted(bank, monkeypatch)
    await counts.frequencies(CATS, ["mochi"])
    bank.heard(MemoryNotice(CATS, "added", (ids[-1],)))  # a few: the counts still hold
    await bank.derived.settled(CATS)
    await counts.frequencies(CATS, ["mochi"])
    assert asked == [["mochi"]]
    many = tuple(range(10_000, 10_000 + memory.recall.derived.STALE_AFTER + 1))
    bank.heard(MemoryNotice(CATS, "deleted", many))
    await bank.derived.settled(CATS)
    await counts.frequencies(CATS, ["mochi"])
    assert asked == [["mochi"], ["mochi"]]


async def test_a_bounded_number_of_words_is_kept_a_scope(
    bank: MemoryBank, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory.recall.derived, "WORDS_KEPT", 3)
    counts = bank.derived.counts
    await write(bank, CATS, 5)
    asked = counted(bank, monkeypatch)
    await counts.frequencies(CATS, ["cat", "mochi", "sat", "mat"])
    await counts.frequencies(CATS, ["mochi", "sat", "mat"])  # the last three asked for: kept
    assert asked == [["cat", "mochi", "sat", "mat"]]
    assert await counts.frequencies(CATS, ["cat"]) == {"cat": 5}
    assert asked[-1] == ["cat"]
