"""Full-text search of a large scope in memory (memory/recall/lexicon.py): it ranks as SQLite's FTS5
ranks a scope, and kept in step through writes, deletions and an encoding, a recall through it
ranks as one through an index read fresh from the store. On SQLite and on PostgreSQL
(tests/fakes/postgres.py), where a process copies large scopes only when told to
(`Capacity.copy_large`: by default PostgreSQL serves them)."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path
from typing import cast

import pytest

import memory.recall.derived
import memory.recall.retrieval
from memory.bank import MemoryBank
from memory.clock import FakeClock
from memory.recall.lexicon import ScopeLexicon
from memory.recall.ranking import CONTEXT_WEIGHT
from memory.records import ArchiveWrite, EncodingWrite, NewMemory
from memory.storage import Storage
from memory.storage.sqlite import Store
from memory.text import fts_document, fts_query, terms
from tests.test_links import CUES, SCOPE, START, backend, copying_large, fill, recalled

__all__ = ["backend"]  # autouse: both stores


@pytest.fixture(autouse=True)
def copied_here(monkeypatch: pytest.MonkeyPatch) -> None:
    copying_large(monkeypatch)


async def test_ranks_as_fts5_ranks_a_scope(tmp_path: Path) -> None:
    bank = await MemoryBank.open(tmp_path, "hash", deterministic=True)
    try:
        if not isinstance(bank.store, Store):
            pytest.skip("FTS5's ranking is SQLite's")
        await fill(bank, 200, seed=4)
        # One scope in the database: FTS5's counts over the table are the scope's.
        await bank.wipe("pip/discord:dm:u2")
        lexicon = ScopeLexicon.of(await bank.store.search_documents(SCOPE))
        for cue in [*CUES, "trains", "painted paintings"]:
            words = terms(cue)
            match = fts_query(" ".join(words))
            assert match is not None
            expected = await bank.store.lexical_search(
                SCOPE, match, 100, context_weight=CONTEXT_WEIGHT, narrow=False
            )
            found = dict(lexicon.search(words, 100, context_weight=CONTEXT_WEIGHT))
            assert expected
            assert set(found) == {i for i, _ in expected}
            for memory_id, score in expected:
                assert found[memory_id] == pytest.approx(score, abs=1e-9)
    finally:
        await bank.close()


async def fresh_recall(bank: MemoryBank, folder: Path) -> list[list[tuple[int, str, float, float]]]:
    """What `bank`'s store recalls to a bank of its own (its word index read afresh, where it
    keeps one)."""
    fresh = await MemoryBank.open(folder, "hash", bank.clock, deterministic=True, store=bank.store)
    try:
        if fresh.derived.keeps_large:
            await fresh.derived.lexicon.get(SCOPE)
        return await recalled(fresh)
    finally:
        await fresh.close()


async def test_recall_ranks_the_same_on_a_kept_index_as_on_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory.recall.retrieval, "LARGE_SCOPE", 1)  # every scope searched in memory
    monkeypatch.setattr(memory.recall.derived, "STALE_AFTER", 0)
    monkeypatch.setattr(memory.recall.derived, "STALE_SHARE", 0.0)
    clock = FakeClock(START + timedelta(days=60))
    kept = await MemoryBank.open(tmp_path, "hash", clock, deterministic=True)
    try:
        ids = await fill(kept, 150, seed=1)
        assert any(await recalled(kept))  # through the store: the index is built meanwhile
        await kept.derived.lexicon.get(SCOPE)
        assert SCOPE in kept.derived.lexicon
        assert await recalled(kept) == await fresh_recall(kept, tmp_path / "a")
        ids += await fill(kept, 150, seed=2)
        rng = random.Random(3)
        for memory_id in rng.sample(ids, 40):  # their successors lose their context
            await kept.forget(SCOPE, memory_id)
        await kept.forget(SCOPE, "violin concert")
        texts = [f"Ana adopted a kitten named Mochi {n}" for n in range(3)]
        batch = [
            NewMemory(
                scope=SCOPE,
                text=text,
                speaker="Ana",
                kind="fact",
                category=None,
                importance=3,
                sentiment=0.5,
                created_at=START + timedelta(days=40, minutes=n),
                strength=3.0,
                search_text=fts_document(text),
            )
            for n, text in enumerate(texts)
        ]
        store = cast(Storage, kept.store)
        conversation = await store.archive_conversation(
            ArchiveWrite(
                "pip",
                SCOPE,
                started_at=START + timedelta(days=40),
                ended_at=START + timedelta(days=40),
                reason="test",
                turns=[],
                snapshot={},
            )
        )
        write = EncodingWrite(
            conversation_id=conversation,
            scope=SCOPE,
            at=START + timedelta(days=40),
            memories=batch,
            sibling_links=[(), (0,), (0, 1)],
            merges=(),
            diary=None,
            profiles=(),
            recap="",
        )
        vectors = await kept.embed_memories(texts, "Ana", write.at)
        assert await kept.commit_encoding(write, vectors)
        assert sorted(h.text for h in await kept.recall(SCOPE, "Mochi", k=3)) == texts
        assert await recalled(kept) == await fresh_recall(kept, tmp_path / "b")
        assert any(await recalled(kept))
        lexicon = await kept.derived.lexicon.get(SCOPE)
        assert len(lexicon) == len(await kept.store.search_documents(SCOPE))
        await kept.wipe(SCOPE)
        assert SCOPE not in kept.derived.lexicon
        assert await kept.recall(SCOPE, "the cat") == []
    finally:
        await kept.close()


async def test_changes_during_a_build_are_not_lost(tmp_path: Path) -> None:
    bank = await MemoryBank.open(tmp_path, "hash", deterministic=True)
    try:
        ids = await fill(bank, 120, seed=5)
        assert bank.derived.lexicon.ready(SCOPE) is None  # being built from here
        await bank.forget(SCOPE, ids[10])
        added = await bank.remember(SCOPE, "a violin by the river", when=START)
        await bank.forget(SCOPE, ids[20])
        built = await bank.derived.lexicon.get(SCOPE)
        assert bank.derived.lexicon.ready(SCOPE) is built
        fresh = ScopeLexicon.of(await bank.store.search_documents(SCOPE))
        assert len(built) == len(fresh)
        for cue in [*CUES, "violin river"]:
            words = terms(cue)
            expected = dict(fresh.search(words, 1000, context_weight=CONTEXT_WEIGHT))
            found = dict(built.search(words, 1000, context_weight=CONTEXT_WEIGHT))
            assert expected
            assert found == pytest.approx(expected, abs=1e-9)
        assert added in dict(built.search(["violin"], 50, context_weight=CONTEXT_WEIGHT))
        bank.derived.lexicon.ready("pip/discord:dm:u2")
    finally:
        await bank.close()  # stops the build under way
