"""A large scope's memories copied in memory (memory/recall/rowcache.py) against the store they come
from: once copied, a recall reads no row and answers as one through the store, kept in step
through writes, reinforcement, an encoding's merges and deletions; a forgotten or wiped memory
never comes back from the copy, also when another process forgot it or changed it in place.
On SQLite and on PostgreSQL (tests/fakes/postgres.py), told to copy large scopes
(`Capacity.copy_large`: by default PostgreSQL serves them, tests/test_notices.py)."""

from __future__ import annotations

import asyncio
import random
import types
from datetime import timedelta
from pathlib import Path
from typing import cast, get_args

import pytest

import memory.bank.bank
import memory.recall.retrieval
from memory.bank import Capacity, MemoryBank
from memory.clock import FakeClock
from memory.records import ArchiveWrite, EncodingWrite, Merge, NewMemory, NoticeKind
from memory.storage import Storage
from memory.storage.postgres import PgStore
from memory.text import fts_document
from tests.fakes.postgres import StoreOpener
from tests.test_links import CUES, SCOPE, START, copying_large, fill, recalled

NOW = START + timedelta(days=60)


@pytest.fixture(autouse=True)
def large(open_store: StoreOpener, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both stores; every scope counts as large (copied, searched by words in memory)."""
    monkeypatch.setattr(memory.bank.bank, "Store", types.SimpleNamespace(open=open_store))
    monkeypatch.setattr(memory.recall.retrieval, "LARGE_SCOPE", 1)
    copying_large(monkeypatch)


async def copied(bank: MemoryBank) -> None:
    """Recall once (which starts the copy and the word index), and wait for both."""
    await bank.recall(SCOPE, CUES[0], now=NOW)
    await bank.derived.rows.filled(SCOPE)
    await bank.derived.lexicon.get(SCOPE)


async def through_the_store(
    bank: MemoryBank, folder: Path
) -> list[list[tuple[int, str, float, float]]]:
    """What `bank`'s store recalls to a bank of its own that copies no rows."""
    no_rows = Capacity(row_scopes=0, copy_large=True)
    fresh = await MemoryBank.open(
        folder, "hash", bank.clock, deterministic=True, store=bank.store, capacity=no_rows
    )
    try:
        await fresh.derived.lexicon.get(SCOPE)
        return await recalled(fresh)
    finally:
        await fresh.close()


def counting_reads(bank: MemoryBank, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The ids of each get_memories the bank's store is asked from here on."""
    reads: list[int] = []
    get_memories = bank.store.get_memories

    async def counted(scope: str, ids: list[int]) -> object:
        reads.extend(ids)
        return await get_memories(scope, ids)

    monkeypatch.setattr(bank.store, "get_memories", counted)
    return reads


async def test_recall_from_the_copy_reads_no_row_and_answers_as_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bank = await MemoryBank.open(tmp_path, "hash", FakeClock(NOW), deterministic=True)
    try:
        ids = await fill(bank, 150, seed=1)
        await copied(bank)
        assert bank.derived.rows.held(SCOPE) == len(ids)
        reads = counting_reads(bank, monkeypatch)
        first = await recalled(bank)
        assert any(first) and reads == []
        assert first == await through_the_store(bank, tmp_path / "a")

        # Reinforced in place: read again from the store, and the ranking follows.
        hits = await bank.recall(SCOPE, "the cat", k=20, now=NOW)
        await bank.reinforce(SCOPE, [h.id for h in hits], NOW)
        ids += await fill(bank, 50, seed=2)
        rng = random.Random(3)
        for memory_id in rng.sample(ids, 30):
            await bank.forget(SCOPE, memory_id)
        texts = [f"Ana adopted a kitten named Mochi {n}" for n in range(2)]
        store = cast(Storage, bank.store)
        conversation = await store.archive_conversation(
            ArchiveWrite(
                "pip", SCOPE, started_at=NOW, ended_at=NOW, reason="test", turns=[], snapshot={}
            )
        )
        merged = hits[0].id
        write = EncodingWrite(
            conversation_id=conversation,
            scope=SCOPE,
            at=NOW,
            memories=[
                NewMemory(
                    scope=SCOPE,
                    text=text,
                    speaker="Ana",
                    kind="fact",
                    category=None,
                    importance=3,
                    sentiment=0.5,
                    created_at=NOW,
                    strength=3.0,
                    search_text=fts_document(text),
                )
                for text in texts
            ],
            sibling_links=[(), (0,)],
            merges=[Merge(merged, strength=9.0, importance=3)],
            diary=None,
            profiles=(),
            recap="",
        )
        vectors = await bank.embed_memories(texts, "Ana", NOW)
        assert await bank.commit_encoding(write, vectors)
        await bank.derived.rows.filled(SCOPE)
        reads.clear()
        after = await recalled(bank)
        # What the bank changed in place was read back when it changed it.
        assert reads == []
        assert after == await through_the_store(bank, tmp_path / "b")
        assert after != first
        [copy] = await bank.derived.rows.get(SCOPE, [merged])
        assert copy == (await bank.store.get_memories(SCOPE, [merged]))[0]
        assert copy.strength == 9.0
    finally:
        await bank.close()


async def test_a_forgotten_memory_never_comes_back_from_the_copy(tmp_path: Path) -> None:
    bank = await MemoryBank.open(tmp_path, "hash", FakeClock(NOW), deterministic=True)
    try:
        ids = await fill(bank, 120, seed=4)
        await copied(bank)
        for cue in CUES:
            for hit in await bank.recall(SCOPE, cue, k=3, now=NOW):
                [gone] = await bank.forget(SCOPE, hit.id)
                again = await bank.recall(SCOPE, gone.text, k=50, now=NOW)
                assert gone.id not in {r.id for r in again}
                assert await bank.derived.rows.get(SCOPE, [gone.id]) == []
        [gone] = await bank.forget(SCOPE, "violin concert")
        assert gone.id not in {r.id for r in await bank.recall(SCOPE, gone.text, k=50, now=NOW)}
        assert await bank.recall(SCOPE, "tomato garden", now=NOW)
        assert await bank.wipe(SCOPE)
        assert SCOPE not in bank.derived.rows
        for cue in CUES:
            assert await bank.recall(SCOPE, cue, now=NOW) == []
        assert await bank.derived.rows.get(SCOPE, ids) == []
    finally:
        await bank.close()


@pytest.mark.parametrize("open_store", ["postgres"], indirect=True)
async def test_another_process_s_changes_reach_the_copy(
    tmp_path: Path, open_store: StoreOpener, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes on one database: what the other forgets is gone from this one's copy,
    and what it reinforces is read again (the notifications of migration 020), the copy kept;
    its wipe drops the copy."""
    dsn = await open_store.dsn(tmp_path / "db")
    stores = [await PgStore.open(dsn) for _ in range(2)]
    banks = [
        await MemoryBank.open(
            tmp_path / str(i), "hash", FakeClock(NOW), deterministic=True, store=s
        )
        for i, s in enumerate(stores)
    ]
    try:
        mine, theirs = banks
        await fill(theirs, 120, seed=6)
        await copied(mine)
        heard = {kind: asyncio.Event() for kind in get_args(NoticeKind)}
        await stores[0].listen(lambda notice: heard[notice.kind].set(), lambda: None)

        hits = await mine.recall(SCOPE, "the nurse job", k=5, now=NOW)
        assert hits and SCOPE in mine.derived.rows
        held = mine.derived.rows.held(SCOPE)
        await theirs.reinforce(SCOPE, [h.id for h in hits], NOW)
        await asyncio.wait_for(heard["touched"].wait(), 30)
        await mine.derived.settled(SCOPE)
        assert not heard["changed"].is_set()  # its indexes are kept, and the copy
        assert mine.derived.rows.held(SCOPE) == held
        assert (SCOPE, mine.embedder.name) in mine.derived.dense
        reads = counting_reads(mine, monkeypatch)
        again = await mine.recall(SCOPE, "the nurse job", k=5, now=NOW)
        assert reads == []
        fresh = {m.id: m for m in await stores[0].get_memories(SCOPE, [h.id for h in hits])}
        assert {r.id: r.retention for r in again} == {
            i: mine.policy(SCOPE).retention(fresh[i], NOW) for i in {r.id for r in again}
        }
        assert all(fresh[h.id].recall_count == 1 for h in hits)

        gone = again[0]
        await theirs.forget(SCOPE, gone.id)
        await asyncio.wait_for(heard["deleted"].wait(), 30)
        assert await mine.derived.rows.get(SCOPE, [gone.id]) == []
        assert gone.id not in {r.id for r in await mine.recall(SCOPE, gone.text, k=50, now=NOW)}
        await mine.derived.settled(SCOPE)
        assert mine.derived.rows.held(SCOPE) == held - 1 and not heard["changed"].is_set()
        await theirs.wipe(SCOPE)
        await asyncio.wait_for(heard["changed"].wait(), 30)
        assert SCOPE not in mine.derived.rows
        for cue in CUES:
            assert await mine.recall(SCOPE, cue, now=NOW) == []
    finally:
        for bank in banks:
            await bank.close()
        for store in stores:
            await store.close()


@pytest.mark.parametrize("open_store", ["postgres"], indirect=True)
async def test_a_scope_another_process_filled_is_counted_again(
    tmp_path: Path, open_store: StoreOpener
) -> None:
    """A process that only reads a scope (a Discord shard's, recalling a user's private
    memories that another shard's process writes) counts its memories again when the other
    changes them: the scope it saw empty, filled there, is large here too (copied)."""
    dsn = await open_store.dsn(tmp_path / "db")
    stores = [await PgStore.open(dsn) for _ in range(2)]
    banks = [
        await MemoryBank.open(
            tmp_path / str(i), "hash", FakeClock(NOW), deterministic=True, store=s
        )
        for i, s in enumerate(stores)
    ]
    try:
        mine, theirs = banks
        assert await mine.recall(SCOPE, CUES[0], now=NOW) == []  # empty here: not large
        changed = asyncio.Event()
        await stores[0].listen(lambda _: changed.set(), lambda: None)
        await fill(theirs, 120, seed=6)
        await asyncio.wait_for(changed.wait(), 30)
        assert await mine.recall(SCOPE, CUES[0], now=NOW)
        assert SCOPE in mine.derived.rows
    finally:
        for bank in banks:
            await bank.close()
        for store in stores:
            await store.close()
