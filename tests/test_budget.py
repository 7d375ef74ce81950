"""One byte budget for the copies a process keeps of its scopes, whichever cache holds them."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path

import pytest

import memory.recall.retrieval
from memory.bank import Capacity, MemoryBank
from memory.clock import FakeClock
from memory.recall.budget import Budget
from memory.recall.index import index_path
from memory.recall.retrieval import LARGE_SCOPE
from tests.test_links import CUES, SPEAKERS, START, WORDS

SCOPES = [f"pip/discord:dm:u{i}" for i in range(5)]
NOW = START + timedelta(days=60)


def test_the_least_recently_used_copies_go_past_the_bound_whichever_cache_holds_them() -> None:
    dropped: list[tuple[str, str]] = []
    budget = Budget(1_000)
    budget.register("rows", lambda scope: dropped.append(("rows", scope)))
    budget.register("links", lambda scope: dropped.append(("links", scope)))
    budget.keep("rows", "a", 400)
    budget.keep("links", "b", 400)
    budget.touch("rows", "a")  # a was used after b
    budget.keep("links", "c", 400)
    assert dropped == [("links", "b")] and budget.total == 800
    budget.keep("rows", "a", 900)  # a grew: the others go, a stays
    assert dropped == [("links", "b"), ("links", "c")] and budget.total == 900
    budget.keep("rows", "d", 2_000)  # one copy past the bound is kept alone
    assert dropped[-1] == ("rows", "a") and budget.total == 2_000
    budget.release("rows", "d")
    assert budget.total == 0


async def test_a_banks_copies_of_many_scopes_stay_within_its_bytes(tmp_path: Path) -> None:
    """Many small scopes' links (no count of scopes bounds them) fit in the bank's budget."""
    bank = await MemoryBank.open(
        tmp_path, "hash", FakeClock(), True, capacity=Capacity(cache_bytes=500)
    )
    scopes = [f"pip/discord:dm:u{i}" for i in range(20)]
    for scope in scopes:
        await bank.remember(scope, "Alice adopted a kitten called Mochi")
        await bank.remember(scope, "Alice works as a nurse")
        await bank.recall(scope, "how is Mochi?")
    kept = [s for s in scopes if s in bank.derived.links]
    assert 0 < len(kept) < len(scopes) and bank.derived.budget.total <= 500
    assert kept == scopes[-len(kept) :]  # the most recently used
    assert [h.text for h in await bank.recall(scopes[0], "Mochi", k=1)] == [
        "Alice adopted a kitten called Mochi"
    ]  # one let go is read again from the store
    assert LARGE_SCOPE > 2  # (these scopes are small: only their links are copied)
    await bank.close()


async def fill_scopes(bank: MemoryBank) -> None:
    """40 memories of a few words in each of SCOPES, minutes apart, by a few speakers."""
    rng = random.Random(1)
    when = START
    for _ in range(40):
        for scope in SCOPES:
            when += timedelta(minutes=rng.randint(1, 9))
            text = " ".join(rng.sample(WORDS, 4))
            await bank.remember(scope, text, when=when, speaker=rng.choice(SPEAKERS))


async def recall_in(bank: MemoryBank, scope: str) -> list[list[tuple[int, str, float, float]]]:
    """What each cue recalls in the scope, once its word index and its rows' copy are made (so
    every cache holds it)."""
    await bank.recall(scope, CUES[0], now=NOW)
    await bank.derived.lexicon.get(scope)
    await bank.derived.rows.filled(scope)
    out = []
    for cue in CUES:
        hits = await bank.recall(scope, cue, k=8, now=NOW)
        out.append([(h.id, h.text, round(h.score, 9), round(h.retention, 9)) for h in hits])
    return out


def kept(bank: MemoryBank, scope: str) -> dict[str, bool]:
    derived = bank.derived
    return {
        "index": (scope, bank.embedder.name) in derived.indexes,
        "lexicon": scope in derived.lexicon,
        "rows": scope in derived.rows,
        "links": scope in derived.links,
    }


async def test_every_cache_counts_against_one_budget_and_recalls_the_same_once_let_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scopes' FAISS indexes, word indexes, rows and links within one bound for the process,
    the least recently used scope let go whole; read again from the store and the index
    files, it recalls what it recalled with room for all."""
    monkeypatch.setattr(memory.recall.retrieval, "LARGE_SCOPE", 1)  # every cache holds a scope
    roomy = await MemoryBank.open(tmp_path, "hash", FakeClock(NOW), deterministic=True)
    await fill_scopes(roomy)
    expected = {scope: await recall_in(roomy, scope) for scope in SCOPES}
    assert all(all(kept(roomy, scope).values()) for scope in SCOPES)
    one_scope = roomy.derived.budget.total // len(SCOPES)
    await roomy.close()

    bound = 5 * one_scope // 2
    bank = await MemoryBank.open(
        tmp_path, "hash", FakeClock(NOW), True, capacity=Capacity(cache_bytes=bound)
    )
    for _ in range(2):  # the second time round, each scope comes back after it was let go
        for scope in SCOPES:
            assert await recall_in(bank, scope) == expected[scope]
            assert all(kept(bank, scope).values())
            assert bank.derived.budget.total <= bound
    await bank.derived.flush()  # (an index let go is saved in the background)
    assert not any(kept(bank, SCOPES[0]).values())  # the least recently used, in every cache
    assert all(kept(bank, SCOPES[-1]).values())
    assert index_path(tmp_path / "index", SCOPES[0], bank.embedder.name).exists()
    rebuilt = bank.derived.indexes.rebuilds
    assert await recall_in(bank, SCOPES[0]) == expected[SCOPES[0]]
    assert bank.derived.indexes.rebuilds == rebuilt  # its index was saved as it went
    await bank.close()


async def test_a_memory_forgotten_as_its_index_is_let_go_stays_gone(tmp_path: Path) -> None:
    """An index closed by the budget is saved in the background: a deletion meanwhile reaches
    it and its file, and it never comes back, in this process or from the file."""
    bank = await MemoryBank.open(
        tmp_path, "hash", FakeClock(NOW), True, capacity=Capacity(cache_bytes=1)
    )
    kept = await bank.remember(SCOPES[0], "Alice adopted a kitten called Mochi")
    gone = await bank.remember(SCOPES[0], "Alice's kitten Mochi is grey")
    assert {h.id for h in await bank.recall(SCOPES[0], "Mochi", k=5)} == {kept, gone}
    await bank.remember(SCOPES[1], "Ben plays the cello")
    await bank.recall(SCOPES[1], "cello")  # one byte: the first scope's index is let go
    assert (SCOPES[0], bank.embedder.name) not in bank.derived.indexes
    await bank.forget(SCOPES[0], gone)
    await bank.derived.flush()
    assert (SCOPES[0], bank.embedder.name) not in bank.derived.indexes
    assert {h.id for h in await bank.recall(SCOPES[0], "Mochi", k=5)} == {kept}
    await bank.close()
    again = await MemoryBank.open(tmp_path, "hash", FakeClock(NOW), True)
    assert {h.id for h in await again.recall(SCOPES[0], "Mochi", k=5)} == {kept}
    assert again.derived.indexes.rebuilds == 0  # from the file the deletion reached
    await again.close()
