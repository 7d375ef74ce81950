"""The links recall keeps in memory (memory/recall/links.py) against the store they come from: kept
in
step through writes and deletions, a recall ranks as it does on links read fresh from the
store, and a forgotten memory leaves neither its link nor its speaker's name. On SQLite and on
PostgreSQL (tests/fakes/postgres.py)."""

from __future__ import annotations

import functools
import random
import types
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import cast

import pytest

import memory.bank.bank
from memory.bank import Capacity, MemoryBank
from memory.clock import FakeClock
from memory.recall.links import Around
from memory.records import (
    ArchiveWrite,
    EncodingWrite,
    MemoryLink,
    MemoryNotice,
    NewMemory,
)
from memory.storage import Storage
from memory.text import fts_document
from tests.fakes.postgres import StoreOpener

SCOPE = "pip/discord:dm:u1"
OTHER = "pip/discord:dm:u2"
START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
WORDS = [
    *("cat", "kitten", "ski", "snow", "alps", "birthday", "cake", "sister", "brother", "job"),
    *("nurse", "hospital", "garden", "tomato", "violin", "concert", "train", "paris", "rain"),
    *("coffee", "novel", "chess", "river", "bread", "painting"),
]
SPEAKERS = ("Ana", "Ben Lee", "Chen", None)
CUES = [
    "what did Ana say about the cat",
    "Ben Lee and the ski trip in the alps",
    "birthday cake for my sister",
    "the nurse job at the hospital",
    "coffee and a novel in the rain",
    "Chen painting by the river",
    "tomato garden",
    "violin concert in paris",
]


@pytest.fixture(autouse=True)
def backend(open_store: StoreOpener, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory.bank.bank, "Store", types.SimpleNamespace(open=open_store))


def copying_large(monkeypatch: pytest.MonkeyPatch) -> None:
    """Banks opened without a capacity copy a large scope's words and rows into the process
    on PostgreSQL too (`Capacity.copy_large`), as SQLite's banks do."""
    monkeypatch.setattr(memory.bank.bank, "Capacity", functools.partial(Capacity, copy_large=True))


async def fill(bank: MemoryBank, count: int, seed: int) -> list[int]:
    """`count` memories of a few words each, by a few speakers, some minutes apart (so most
    have a previous memory) and now and then a day apart; a few in another scope."""
    rng = random.Random(seed)
    ids: list[int] = []
    when = START
    for i in range(count):
        when += timedelta(days=1) if rng.random() < 0.1 else timedelta(minutes=rng.randint(1, 9))
        text = " ".join(rng.sample(WORDS, 4))
        scope = OTHER if i % 25 == 24 else SCOPE
        memory_id = await bank.remember(scope, text, when=when, speaker=rng.choice(SPEAKERS))
        if scope == SCOPE:
            ids.append(memory_id)
    return ids


async def recalled(bank: MemoryBank) -> list[list[tuple[int, str, float, float]]]:
    now = START + timedelta(days=60)
    out = []
    for cue in CUES:
        hits = await bank.recall(SCOPE, cue, k=8, now=now)
        out.append([(h.id, h.text, round(h.score, 9), round(h.retention, 9)) for h in hits])
    return out


async def from_the_store(
    bank: MemoryBank, folder: Path
) -> list[list[tuple[int, str, float, float]]]:
    """What `bank`'s store recalls to a bank of its own, which keeps no links (and makes its
    dense index afresh)."""
    no_links = Capacity(link_scopes=0)
    fresh = await MemoryBank.open(
        folder, "hash", bank.clock, deterministic=True, store=bank.store, capacity=no_links
    )
    try:
        return await recalled(fresh)
    finally:
        await fresh.close()


async def test_recall_ranks_the_same_on_kept_links_as_on_the_store(tmp_path: Path) -> None:
    clock = FakeClock(START + timedelta(days=60))
    kept = await MemoryBank.open(tmp_path, "hash", clock, deterministic=True)
    try:
        ids = await fill(kept, 150, seed=1)
        assert await recalled(kept) == await from_the_store(kept, tmp_path / "a")
        ids += await fill(kept, 150, seed=2)
        rng = random.Random(3)
        for memory_id in rng.sample(ids, 40):
            await kept.forget(SCOPE, memory_id)
        await kept.forget(SCOPE, "violin concert")
        batch = [
            NewMemory(
                scope=SCOPE,
                text=f"Ana adopted a kitten named Mochi {n}",
                speaker="Ana",
                kind="fact",
                category=None,
                importance=3,
                sentiment=0.5,
                created_at=START + timedelta(days=40, minutes=n),
                strength=3.0,
                search_text=fts_document(f"Ana adopted a kitten named Mochi {n}"),
            )
            for n in range(3)
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
        vectors = await kept.embed_memories([m.text for m in batch], "Ana", write.at)
        assert await kept.commit_encoding(write, vectors)
        hits = await kept.recall(SCOPE, "the cat", k=20)
        await kept.reinforce(SCOPE, [h.id for h in hits])
        assert SCOPE in kept.derived.links
        assert await recalled(kept) == await from_the_store(kept, tmp_path / "b")
        assert any(await recalled(kept))

        # The kept links are what the store's rows say, neighbours included.
        links = await kept.derived.links.get(SCOPE)
        left = [i for i in ids if i not in {h.id for h in hits}]
        for _ in range(10):
            asked = rng.sample(left, 30)
            rows = {m.id: m for m in await kept.store.with_successors(SCOPE, asked)}
            before = {m.previous_id for m in rows.values() if m.previous_id} - set(rows)
            rows |= {m.id: m for m in await kept.store.get_memories(SCOPE, sorted(before))}
            expected = {i: MemoryLink(i, m.previous_id, m.speaker) for i, m in rows.items()}
            assert as_links(links.around(asked)) == expected
    finally:
        await kept.close()


async def test_a_scope_s_links_read_whole_are_its_links_by_id(tmp_path: Path) -> None:
    """The store reads a whole scope's links as columns (a large scope's at its first
    recall): the links asked for by id, each once, and none for a scope with no memory."""
    bank = await MemoryBank.open(tmp_path, "hash", FakeClock(), deterministic=True)
    try:
        ids = await fill(bank, 60, seed=3)
        columns = await bank.store.scope_links(SCOPE)
        rows = zip(columns.ids.tolist(), columns.previous.tolist(), columns.speakers, strict=True)
        whole = sorted((MemoryLink(i, p or None, s) for i, p, s in rows), key=lambda m: m.id)
        assert whole == await bank.store.links(SCOPE, ids)
        assert any(link.previous_id for link in whole) and any(link.speaker for link in whole)
        empty = await bank.store.scope_links("pip/discord:dm:nobody")
        assert (len(empty.ids), len(empty.previous), list(empty.speakers)) == (0, 0, [])
    finally:
        await bank.close()


@pytest.mark.parametrize("open_store", ["postgres"], indirect=True)
async def test_what_another_process_stored_comes_to_mind_before_its_notification(
    open_store: StoreOpener, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes on one database, the other's notification that it stored memories held
    back (under load it came after the recall that wanted them): the memories the store finds
    come to mind all the same, ranked as by a process that has heard."""
    here, there = await open_store(tmp_path / "db"), await open_store(tmp_path / "db")
    held: list[Callable[[MemoryNotice], None]] = []

    async def unheard(heard: Callable[[MemoryNotice], None], missed: Callable[[], None]) -> None:
        held.append(heard)

    monkeypatch.setattr(here, "listen", unheard)
    clock = FakeClock(START + timedelta(days=60))
    kept, other = [
        await MemoryBank.open(tmp_path / name, "hash", clock, deterministic=True, store=store)
        for name, store in (("here", here), ("there", there))
    ]
    try:
        await fill(kept, 60, seed=1)
        assert any(await recalled(kept)) and SCOPE in kept.derived.links
        await fill(other, 60, seed=2)
        assert held  # the bank listens: what it would hear is held back
        assert await recalled(kept) == await from_the_store(kept, tmp_path / "fresh")
    finally:
        for bank in (kept, other):
            await bank.close()
        for store in (here, there):
            await store.close()


async def test_a_forgotten_memory_leaves_no_link_nor_name(tmp_path: Path) -> None:
    bank = await MemoryBank.open(tmp_path, "hash", deterministic=True)
    try:
        first = await bank.remember(SCOPE, "I play the violin", when=START, speaker="Zed Quill")
        second = await bank.remember(
            SCOPE, "at the concert", when=START + timedelta(minutes=2), speaker="Ana"
        )
        assert await bank.recall(SCOPE, "violin")
        links = await bank.derived.links.get(SCOPE)
        assert "Zed Quill" in links.names
        await bank.forget(SCOPE, first)
        links = await bank.derived.links.get(SCOPE)
        assert links.names == ["Ana"]
        assert as_links(links.around([first, second])) == {second: MemoryLink(second, None, "Ana")}
        await bank.wipe(SCOPE)
        assert SCOPE not in bank.derived.links
        assert len(await bank.derived.links.get(SCOPE)) == 0
    finally:
        await bank.close()


def as_links(around: Around) -> dict[int, MemoryLink]:
    """The links `around` holds, as the store's MemoryLinks by id."""
    return {
        memory_id: MemoryLink(
            memory_id, previous or None, around.names[code] if code >= 0 else None
        )
        for memory_id, previous, code in zip(
            around.ids.tolist(), around.previous.tolist(), around.speakers.tolist(), strict=True
        )
    }
