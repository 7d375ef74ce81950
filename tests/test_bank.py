"""The memory bank: remember, recall (hybrid, floored, weighted), reinforce, forget, scopes as
walls, and indexes derived from the store (rebuilt when missing, stale or damaged). Every test
runs on SQLite and on PostgreSQL (tests/fakes/postgres.py)."""

from __future__ import annotations

import asyncio
import math
import re
import threading
import types
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta, tzinfo
from pathlib import Path
from typing import BinaryIO, cast
from zoneinfo import ZoneInfo

import numpy as np
import numpy.typing as npt
import openai
import pytest

import memory.bank.bank
import memory.bank.upkeep
import memory.recall.catchup
import memory.recall.index
import memory.recall.retrieval
import memory.storage.embeddings
from memory.bank import BankError, Capacity, MemoryBank
from memory.clock import FakeClock
from memory.embeddings import HashEmbedder, OpenAIEmbedder
from memory.recall.index import index_path
from memory.recall.ranking import failure_probability
from memory.records import (
    RECENT_RECALLS,
    ArchiveWrite,
    EncodingWrite,
    IdDigest,
    Memory,
    Merge,
    PruneWrite,
)
from memory.storage import Storage
from tests.fakes.embedders import FacingE5
from tests.fakes.openai_server import FakeOpenAI, Hang, HttpError, Truncated
from tests.fakes.postgres import StoreOpener

SCOPE = "pip/discord:dm:u1"
OTHER = "pip/discord:dm:u2"
WAIT = 30.0  # seconds a test thread waits for its cue at most

# A tiny meaning for the fake embedding server: words of one concept share a dimension, so a
# paraphrase with no word in common is still close.
CONCEPTS = [
    {"cat", "kitten", "pet", "mochi", "adopted", "animal"},
    {"job", "work", "works", "nurse", "hospital", "career"},
    {"ski", "skiing", "snow", "alps", "mountains", "winter"},
    {"birthday", "party", "cake", "celebrate"},
    {"sister", "family", "brother", "mother"},
]


def concept_vector(text: str, dim: int) -> list[float]:
    vector = [0.0] * dim
    for word in re.findall(r"[a-z]+", text.lower()):
        hits = [i for i, group in enumerate(CONCEPTS) if word in group]
        for i in hits:
            vector[i] += 1.0
    vector[dim - 1] += 0.2  # every text has a little in common
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector]


@pytest.fixture(autouse=True)
def backend(open_store: StoreOpener, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store under every test, on each of both (the `open_store` fixture): the bank's own
    `Store.open(path)` opens that kind (on PostgreSQL, the same database when a test reopens
    the folder, so what persists is tested too)."""
    monkeypatch.setattr(memory.bank.bank, "Store", types.SimpleNamespace(open=open_store))


@pytest.fixture
async def fake() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI(embedding_dim=8) as server:
        server.embed_fn = concept_vector
        yield server


def remote(fake: FakeOpenAI) -> OpenAIEmbedder:
    client = openai.AsyncOpenAI(base_url=fake.base_url, api_key="sk-test", max_retries=0)
    return OpenAIEmbedder(client, "fake-embedding", dimension=8)


async def open_bank(
    folder: Path, embedder: object = "hash", clock: FakeClock | None = None, **kwargs: object
) -> MemoryBank:
    return await MemoryBank.open(
        folder,
        embedder,  # type: ignore[arg-type]
        clock or FakeClock(),
        deterministic=kwargs.pop("deterministic", True),  # type: ignore[arg-type]
        **kwargs,  # type: ignore[arg-type]
    )


async def test_a_memory_keeps_who_said_it_by_id_beside_their_name(tmp_path: Path) -> None:
    """Two people named Alice: each memory says which one, by id; the name is as it was."""
    bank = await open_bank(tmp_path)
    hers = await bank.remember(SCOPE, "I run the bakery", speaker="Alice", speaker_id="u1")
    his = await bank.remember(SCOPE, "I owe the tavern", speaker="Alice", speaker_id="u3")
    nobodys = await bank.remember(SCOPE, "The tavern was busy")
    found = {m.id: m for m in await bank.store.get_memories(SCOPE, [hers, his, nobodys])}
    assert [(found[i].speaker, found[i].speaker_id) for i in (hers, his, nobodys)] == [
        ("Alice", "u1"),
        ("Alice", "u3"),
        (None, None),
    ]
    [hit] = await bank.recall(SCOPE, "tavern owe", k=1)
    assert (hit.id, hit.speaker_id) == (his, "u3")
    await bank.close()


async def test_paraphrase_scope_wall_and_rebuild(tmp_path: Path, fake: FakeOpenAI) -> None:
    """A paraphrase is recalled, scopes stay apart and a lost index is rebuilt, with a remote
    embedder: fake clock, the fake server's embeddings."""
    clock = FakeClock()
    bank = await open_bank(tmp_path, remote(fake), clock)
    kitten = await bank.remember(SCOPE, "Alice adopted a kitten", speaker="Alice")
    await bank.remember(SCOPE, "Alice works as a nurse", speaker="Alice")
    await bank.remember(OTHER, "Bob adopted a kitten too", speaker="Bob")
    clock.advance(days=2)

    hits = await bank.recall(SCOPE, "tell me about her new pet")  # no word in common
    assert [h.id for h in hits] == [kitten]
    assert hits[0].text == "Alice adopted a kitten" and hits[0].speaker == "Alice"
    assert 0 < hits[0].retention < 1 and hits[0].relevance > 0

    assert await bank.recall("pip/discord:dm:nobody", "tell me about her new pet") == []
    other = await bank.recall(OTHER, "tell me about her new pet")
    assert [h.text for h in other] == ["Bob adopted a kitten too"]
    await bank.close()

    path = index_path(tmp_path / "index", SCOPE, bank.embedder.name)
    assert path.exists()
    path.unlink()
    bank = await open_bank(tmp_path, remote(fake), clock)
    again = await bank.recall(SCOPE, "tell me about her new pet")
    assert [(h.id, h.score) for h in again] == [(h.id, h.score) for h in hits]
    assert bank.derived.indexes.rebuilds == 1
    await bank.close()


async def test_unrelated_cue_recalls_nothing(tmp_path: Path, fake: FakeOpenAI) -> None:
    bank = await open_bank(tmp_path, remote(fake))
    await bank.remember(SCOPE, "Alice went skiing in the Alps", speaker="Alice")
    assert await bank.recall(SCOPE, "quantum chromodynamics lecture") == []
    assert await bank.recall(SCOPE, "   ") == []
    assert await bank.recall(SCOPE, "the of and") == []  # stop words only: nothing to match
    await bank.close()


class ShapedE5:
    """An embedder of e5's family (its floors, 0.84 / 0.78, and companion floors 0.82 / 0.76)
    whose cosine to every cue a memory states itself: "..., at 0.90"."""

    name = "e5:shaped"
    dimension = 2

    async def start(self) -> None:
        return None

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows = []
        for text in texts:
            found = re.search(r"at (0\.\d+)", text)
            cosine = float(found.group(1)) if found else 0.0
            rows.append([cosine, math.sqrt(1.0 - cosine * cosine)])
        return np.asarray(rows, dtype=np.float32)

    async def embed_query(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.asarray([[1.0, 0.0]] * len(texts), dtype=np.float32)


async def shaped_bank(tmp_path: Path, texts: Sequence[str]) -> tuple[MemoryBank, list[int]]:
    clock = FakeClock()
    bank = await open_bank(tmp_path, ShapedE5(), clock)
    ids = []
    for text in texts:
        ids.append(await bank.remember(SCOPE, text))
        clock.advance(days=1)  # not neighbours: no contiguity
    return bank, ids


async def test_once_a_cue_passes_the_floor_a_turn_recalls_by_the_companion_floors(
    tmp_path: Path,
) -> None:
    bank, (lake, kitten, _) = await shaped_bank(
        tmp_path, ["the lake trip, at 0.90", "the grey kitten, at 0.83", "the tax form, at 0.70"]
    )
    cue = "what comes to mind?"  # no word in common: the vectors decide
    assert [h.id for h in await bank.recall(SCOPE, cue)] == [lake, kitten]
    # A look-up on purpose judges each memory by the floor itself.
    assert [h.id for h in await bank.recall(SCOPE, cue, fail=False)] == [lake]
    await bank.close()


async def test_no_memory_over_the_floor_opens_no_companion_floors(tmp_path: Path) -> None:
    bank, _ = await shaped_bank(tmp_path, ["the grey kitten, at 0.83", "the tax form, at 0.70"])
    assert await bank.recall(SCOPE, "what comes to mind?") == []
    await bank.close()


async def test_a_turn_recalls_other_moments_before_a_twin_of_one_recalled(tmp_path: Path) -> None:
    """Past the first five, a memory that says nearly what one already recalled says gives way
    to one about something else (e5's diversity, 0.25 / 0.88); a look-up on purpose (the
    encoder's search for repeats) keeps the plain ranking."""
    clock = FakeClock()
    bank = await open_bank(tmp_path, FacingE5(), clock)
    texts = [f"moment {n}, at 0.{90 - n} facing {n}" for n in range(6)]  # 0.90 .. 0.85
    texts.insert(5, "the same lake again, at 0.855 facing 0")  # nearly moment 0
    texts.append("the low end, at 0.70 facing 8")
    ids: list[int] = []
    for text in reversed(texts):  # the better, the newer: retention keeps the order
        ids.insert(0, await bank.remember(SCOPE, text))
        clock.advance(days=1)  # not neighbours: no contiguity
    *first, twin, sixth, _ = ids
    cue = "what comes to mind?"
    plain = [h.id for h in await bank.recall(SCOPE, cue, k=7, fail=False)]
    assert plain == [*first, twin, sixth]
    assert [h.id for h in await bank.recall(SCOPE, cue, k=7)] == [*first, sixth, twin]
    assert [h.id for h in await bank.recall(SCOPE, cue, k=5)] == first
    await bank.close()


async def test_a_statement_outranks_a_question_as_close_to_the_cue(tmp_path: Path) -> None:
    bank, (question, statement, _) = await shaped_bank(
        tmp_path,
        ["shall we go to the lake, at 0.92?", "we went to the lake, at 0.91", "the tax, at 0.75"],
    )
    hits = await bank.recall(SCOPE, "what comes to mind?")
    assert [h.id for h in hits][:2] == [statement, question]
    assert hits[1].relevance > hits[0].relevance  # the question matched better, and asks
    await bank.close()


async def test_lexical_half_finds_words_and_chinese(tmp_path: Path) -> None:
    bank = await open_bank(tmp_path)
    cat = await bank.remember(SCOPE, "My cat Mochi hates the vacuum cleaner", speaker="Alice")
    park = await bank.remember(SCOPE, "我今天去公园散步，看到很多猫咪", speaker="小明")
    await bank.remember(SCOPE, "We talked about the weather", speaker="Alice")
    assert (await bank.recall(SCOPE, "how is Mochi?"))[0].id == cat
    assert (await bank.recall(SCOPE, "公园里有猫咪吗"))[0].id == park
    await bank.close()


async def test_retention_and_importance_break_ties(tmp_path: Path) -> None:
    clock = FakeClock()
    bank = await open_bank(tmp_path, clock=clock)
    old = await bank.remember(SCOPE, "we watched the comet together", importance=2)
    clock.advance(days=20)
    new = await bank.remember(SCOPE, "we watched the comet together", importance=2)
    hits = await bank.recall(SCOPE, "the comet")
    assert [h.id for h in hits] == [new, old]
    assert hits[0].retention > hits[1].retention
    # An important memory fades slower: made at the same time, it keeps more.
    vital = await bank.remember(
        SCOPE, "grandma's comet story", importance=3, when=clock.now() - timedelta(days=20)
    )
    trivial = await bank.remember(
        SCOPE, "grandma's comet story", importance=1, when=clock.now() - timedelta(days=20)
    )
    by_id = {h.id: h for h in await bank.recall(SCOPE, "grandma comet story", k=10)}
    assert by_id[vital].retention > by_id[trivial].retention
    assert by_id[vital].score > by_id[trivial].score
    await bank.close()


async def test_reinforce_strengthens_and_recall_changes_nothing(tmp_path: Path) -> None:
    clock = FakeClock()
    bank = await open_bank(tmp_path, clock=clock)
    mid = await bank.remember(SCOPE, "Alice's sister is called Jun")
    clock.advance(days=5)
    [before] = await bank.recall(SCOPE, "sister Jun")
    [still] = await bank.recall(SCOPE, "sister Jun")
    assert still.retention == before.retention
    [fresh] = await bank.store.get_memories(SCOPE, [mid])
    assert fresh.recall_count == 0 and fresh.last_recalled_at is None

    await bank.reinforce(SCOPE, [mid])
    [row] = await bank.store.get_memories(SCOPE, [mid])
    assert row.recall_count == 1 and row.last_recalled_at == clock.now()
    assert row.strength >= fresh.strength
    [after] = await bank.recall(SCOPE, "sister Jun")
    assert after.retention > max(0.85, before.retention)  # a recall brings it back
    clock.advance(days=5)
    [later] = await bank.recall(SCOPE, "sister Jun")
    assert later.retention > before.retention  # same 5 days, fades slower now

    await bank.reinforce(OTHER, [mid])  # another scope cannot touch it
    [row] = await bank.store.get_memories(SCOPE, [mid])
    assert row.recall_count == 1
    await bank.close()


async def test_a_memory_keeps_its_latest_recall_times_and_counts_older_ones(
    tmp_path: Path,
) -> None:
    """The store keeps the last RECENT_RECALLS recall times on the memory (what actr sums
    exactly, with no recall log read when ranking) and counts every recall; a recall that
    pushes one out leaves the memory no weaker, the older recalls still counted."""
    clock = FakeClock()
    bank = await open_bank(tmp_path, clock=clock)
    mid = await bank.remember(SCOPE, "Alice's sister is called Jun", importance=1)
    policy = bank.policy(SCOPE)
    times = []
    for _ in range(RECENT_RECALLS + 2):
        clock.advance(days=1)
        times.append(clock.now())
        [before] = await bank.store.get_memories(SCOPE, [mid])
        await bank.reinforce(SCOPE, [mid])
        [row] = await bank.store.get_memories(SCOPE, [mid])
        assert row.recent_recalls == tuple(times[-RECENT_RECALLS:])
        assert row.strength >= before.strength
        month = clock.now() + timedelta(days=30)
        assert policy.retention(row, month) >= policy.retention(before, month)
    assert row.recall_count == RECENT_RECALLS + 2
    month = clock.now() + timedelta(days=30)
    forgotten = replace(row, recall_count=RECENT_RECALLS)  # as if the two older were not
    assert policy.retention(row, month) > policy.retention(forgotten, month)
    assert len(await bank.store.recall_history(SCOPE, mid)) == RECENT_RECALLS + 2
    await bank.close()


async def test_a_recall_on_a_clock_set_back_never_weakens_a_memory(tmp_path: Path) -> None:
    """Reinforced by a clock set before the memory was made, the recall is dated when the
    memory was made: once the clock is right, it retains at least what a never-recalled copy
    does (it used to restart the forgetting clock in the past, and be weaker)."""
    clock = FakeClock()
    made = clock.now()
    bank = await open_bank(tmp_path, clock=clock)
    used = await bank.remember(SCOPE, "Alice's sister is called Jun", importance=1)
    untouched = await bank.remember(SCOPE, "Alice's brother is called Kai", importance=1)
    clock.advance(days=-10)
    await bank.reinforce(SCOPE, [used])
    [row] = await bank.store.get_memories(SCOPE, [used])
    assert row.recall_count == 1 and row.last_recalled_at == made
    [(at, strength)] = await bank.store.recall_history(SCOPE, used)
    assert at == made and strength == row.strength
    for later in (0.5, 1, 3, 10):
        clock.advance(days=later)
        found = {r.id: r.retention for r in await bank.get(SCOPE, [used, untouched])}
        assert found[used] >= found[untouched]
    await bank.close()


async def test_an_old_conversation_encoded_late_never_dates_a_recall_back(tmp_path: Path) -> None:
    """A conversation from before a memory's last recall (or its making), encoded only now,
    repeats it: the repetition counts, but the memory's last recall stays where it was."""
    clock = FakeClock(datetime(2026, 3, 10, 12, 0, tzinfo=UTC))
    bank = await open_bank(tmp_path, clock=clock)
    made = clock.now()
    fresh = await bank.remember(SCOPE, "Alice's sister is called Jun")
    recalled = await bank.remember(SCOPE, "Alice's brother is called Kai")
    clock.advance(days=2)
    await bank.reinforce(SCOPE, [recalled])
    [before] = await bank.store.get_memories(SCOPE, [recalled])
    assert before.last_recalled_at == clock.now()
    ended = made - timedelta(days=5)
    store = cast(Storage, bank.store)  # the whole store the bank opened, archive and all
    conversation = await store.archive_conversation(
        ArchiveWrite(
            "pip",
            SCOPE,
            started_at=ended - timedelta(minutes=10),
            ended_at=ended,
            reason="idle",
            turns=[{"role": "user", "text": "my siblings are Jun and Kai"}],
            snapshot={},
        )
    )
    write = EncodingWrite(
        conversation_id=conversation,
        scope=SCOPE,
        at=ended,
        memories=[],
        sibling_links=[],
        merges=[Merge(fresh, 0.9, 2), Merge(recalled, 0.9, 2)],
        diary=None,
        profiles=[],
        recap="",
    )
    assert await bank.store.commit_encoding(write) == []
    rows = {m.id: m for m in await bank.store.get_memories(SCOPE, [fresh, recalled])}
    assert rows[fresh].last_recalled_at == made and rows[fresh].recall_count == 1
    assert rows[recalled].last_recalled_at == before.last_recalled_at
    assert rows[recalled].recall_count == 2
    assert [at for at, _ in await bank.store.recall_history(SCOPE, fresh)] == [made]
    await bank.close()


async def test_a_prune_merges_a_near_duplicate_into_the_one_it_keeps(tmp_path: Path) -> None:
    """Of two memories saying nearly the same, both faded, the prune deletes one (reported
    like any forgotten memory) and the other carries its recalls and strength, restarted by
    the repetition: it is not the next day's to forget."""
    clock = FakeClock()
    bank = await open_bank(tmp_path, clock=clock)
    text = (
        "ann had toast with strawberry jam and a cup of black coffee for breakfast at the "
        "kitchen table this morning before work"
    )
    first = await bank.remember(SCOPE, text, importance=1)
    second = await bank.remember(SCOPE, text + " again", importance=1)
    clock.advance(days=2)
    recalled_at = clock.now()
    await bank.reinforce(SCOPE, [second])
    assert (first, second) in await bank.twins(SCOPE)
    clock.advance(days=30)
    now = clock.now()
    before = {m.id: m for m in await bank.store.get_memories(SCOPE, [first, second])}

    kept, [(gone, reason)] = await bank.prune(SCOPE, now, day=now.date(), seed=1)

    assert kept == 1
    survivor = first if gone == second else second
    assert reason.startswith(f"merged into near-duplicate {survivor}; ")
    [report] = await bank.store.pruned_since(now, scope=SCOPE)
    assert (report.memory_id, report.reason) == (gone, reason)
    assert await bank.store.get_memories(SCOPE, [gone]) == []
    [row] = await bank.store.get_memories(SCOPE, [survivor])
    assert row.recall_count == before[first].recall_count + before[second].recall_count + 1
    assert row.last_recalled_at == now
    history = await bank.store.recall_history(SCOPE, survivor)
    assert [at for at, _ in history] == [recalled_at, now]
    assert row.recent_recalls == (recalled_at, now)  # the traces the policy sums
    assert row.strength >= max(m.strength for m in before.values())
    policy = bank.policy(SCOPE)
    month = now + timedelta(days=30)
    assert all(policy.retention(row, month) > policy.retention(m, month) for m in before.values())
    clock.advance(days=1)
    tomorrow = clock.now()
    assert await bank.prune(SCOPE, tomorrow, day=tomorrow.date(), seed=1) == (1, [])
    await bank.close()


async def test_a_prune_moves_recalls_only_between_memories_of_its_scope(tmp_path: Path) -> None:
    """A merge naming another scope's memory, as twin or as survivor, moves nothing: the twin
    is deleted with its recalls, and the other scope's memory keeps its own."""
    clock = FakeClock()
    bank = await open_bank(tmp_path, clock=clock)
    mine = await bank.remember(SCOPE, "Alice's sister is called Jun")
    twin = await bank.remember(SCOPE, "Alice's sister Jun")
    theirs = await bank.remember(OTHER, "Bob's sister is called Mei")
    clock.advance(days=1)
    await bank.reinforce(SCOPE, [mine, twin])
    await bank.reinforce(OTHER, [theirs])
    now = clock.now()
    rows = {m.id: m for m in await bank.store.get_memories(SCOPE, [mine, twin])}
    [their_row] = await bank.store.get_memories(OTHER, [theirs])
    store = bank.store

    # Into another scope's memory: the twin goes, its recall with it.
    gone = await store.prune(
        PruneWrite(SCOPE, now.date(), [(rows[twin], "faded")], "curve", now, {twin: theirs})
    )
    assert gone == [twin]
    [after] = await store.get_memories(OTHER, [theirs])
    assert after.recall_count == their_row.recall_count == 1
    assert [at for at, _ in await store.recall_history(OTHER, theirs)] == [now]
    # Another scope's memory as the twin: nothing is deleted or moved.
    gone = await store.prune(
        PruneWrite(SCOPE, now.date(), [(their_row, "x")], "curve", now, {theirs: mine})
    )
    assert gone == []
    [kept] = await store.get_memories(SCOPE, [mine])
    assert kept.recall_count == 1
    assert len(await store.recall_history(SCOPE, mine)) == 1
    assert len(await store.recall_history(OTHER, theirs)) == 1
    # Within the scope, the survivor takes the twin's recalls, at their own times.
    other_twin = await bank.remember(SCOPE, "Jun is Alice's sister")
    clock.advance(days=1)
    await bank.reinforce(SCOPE, [other_twin])
    later = clock.now()
    [row] = await store.get_memories(SCOPE, [other_twin])
    gone = await store.prune(
        PruneWrite(SCOPE, later.date(), [(row, "merged")], "curve", later, {other_twin: mine})
    )
    assert gone == [other_twin]
    [kept] = await store.get_memories(SCOPE, [mine])
    assert kept.recall_count == 2
    assert [at for at, _ in await store.recall_history(SCOPE, mine)] == [now, later]
    await bank.close()


async def test_the_daily_prune_keeps_each_memorys_last_recalls_in_the_log(tmp_path: Path) -> None:
    """The recall log is cut to each memory's last RECENT_RECALLS recalls, the times the
    memory itself keeps: its count, its retention and other scopes' logs are untouched."""
    clock = FakeClock()
    bank = await open_bank(tmp_path, clock=clock)
    often = await bank.remember(SCOPE, "Alice's sister is called Jun", importance=3)
    seldom = await bank.remember(SCOPE, "Alice works at the hospital", importance=3)
    theirs = await bank.remember(OTHER, "Bob's sister is called Mei", importance=3)
    for n in range(RECENT_RECALLS + 3):
        clock.advance(days=1)
        await bank.reinforce(SCOPE, [often, seldom] if n < 2 else [often])
        await bank.reinforce(OTHER, [theirs])
    now = clock.now()
    before = {m.id: m for m in await bank.store.get_memories(SCOPE, [often, seldom])}
    seldom_log = await bank.store.recall_history(SCOPE, seldom)
    policy = bank.policy(SCOPE)

    assert await bank.prune(SCOPE, now, day=now.date(), seed=1) == (2, [])

    after = {m.id: m for m in await bank.store.get_memories(SCOPE, [often, seldom])}
    assert after == before
    assert policy.retention(after[often], now) == policy.retention(before[often], now)
    log = await bank.store.recall_history(SCOPE, often)
    assert tuple(at for at, _ in log) == after[often].recent_recalls
    assert len(log) == RECENT_RECALLS and after[often].recall_count == RECENT_RECALLS + 3
    assert log[-1][1] == after[often].strength
    assert await bank.store.recall_history(SCOPE, seldom) == seldom_log  # under the cut
    assert len(await bank.store.recall_history(OTHER, theirs)) == RECENT_RECALLS + 3
    await bank.close()


class OneMeaning:
    """An embedder to which every text means the same: only words can tell them apart."""

    name = "one-meaning"
    dimension = 4

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.tile(np.array([1, 0, 0, 0], dtype=np.float32), (len(texts), 1))

    async def embed_query(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return await self.embed(texts)

    async def start(self) -> None:
        return None


async def test_twins_say_nothing_the_other_does_not(tmp_path: Path) -> None:
    """However close their vectors, two memories that each say something the other does not
    are no near-duplicates: a prune would merge one fact away."""
    bank = await open_bank(tmp_path, OneMeaning())
    mochi = await bank.remember(SCOPE, "Ann's cat is called Mochi")
    await bank.remember(SCOPE, "Ann's cat is called Luna")
    await bank.remember(SCOPE, "小明的猫叫咪咪")
    await bank.remember(SCOPE, "小明的猫叫花花")
    again = await bank.remember(SCOPE, "2026-03-02: Ann's cat is called Mochi, again")
    assert await bank.twins(SCOPE) == [(mochi, again)]
    await bank.close()


async def test_twins_among_some_memories_are_the_pairs_they_are_in(tmp_path: Path) -> None:
    """The prune compares only what its policy would take with the rest: those pairs are the
    ones the whole scope's scan finds with one of them in it, in the same order."""
    bank = await open_bank(tmp_path, OneMeaning())
    for text in (
        "Ann's cat is called Mochi",
        "Ann's cat is called Luna",
        "2026-03-02: Ann's cat is called Mochi, again",
        "Ann's cat is called Luna, again",
        "Ann's cat is called Mochi",
        "小明的猫叫咪咪",
    ):
        await bank.remember(SCOPE, text)
    every = await bank.twins(SCOPE)
    assert len(every) == 4
    ids = [m.id for m in await bank.store.list_memories(SCOPE, newest_first=False)]
    for among in ([], ids[:1], ids[1:2], ids[::2], ids[2:], ids):
        wanted = [p for p in every if set(p) & set(among)]
        assert await bank.upkeep.twins(SCOPE, among=set(among)) == wanted
    await bank.close()


async def test_the_prune_reads_a_scopes_vectors_a_slice_at_a_time_and_not_past_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The prune compares what its policy picked with the scope's vectors a slice at a time,
    never reading them whole; past TWIN_SCAN_LIMIT it looks for no near-duplicates, so it
    reads none of them: it knows the scope's size first."""
    monkeypatch.setattr(memory.storage.embeddings, "VECTOR_SLICE", 2)
    bank = await open_bank(tmp_path, OneMeaning())
    old = bank.clock.now() - timedelta(days=60)
    for text in ("Ann's cat is called Mochi", "小明的猫叫咪咪", "Ann's cat is called Mochi"):
        await bank.remember(SCOPE, text, when=old, importance=1)
    read: list[str] = []
    for name in ("embeddings", "embedding_slices", "stored_vectors"):
        monkeypatch.setattr(bank.store, name, counted(read, name, getattr(bank.store, name)))
    try:
        now = bank.clock.now()
        assert await bank.upkeep.twins(SCOPE, among={1}, size=3) == [(1, 3)]
        assert read == ["stored_vectors", "embedding_slices"]
        read.clear()
        monkeypatch.setattr(memory.bank.upkeep, "TWIN_SCAN_LIMIT", 2)
        assert await bank.twins(SCOPE) == []
        _, forgotten = await bank.prune(SCOPE, now, day=now.date(), seed=1)
        assert forgotten and read == []  # (the twins asked for among what it forgot)
    finally:
        await bank.close()


def counted(read: list[str], name: str, method: Callable[..., object]) -> Callable[..., object]:
    """`method` of a store, its calls noted in `read` by `name`."""

    def call(*args: object) -> object:
        read.append(name)
        return method(*args)

    return call


async def test_retrieval_failure_is_seeded_and_grows_as_retention_falls(tmp_path: Path) -> None:
    assert failure_probability(1.0) == 0.0
    assert failure_probability(0.9) < failure_probability(0.5) < failure_probability(0.05)
    clock = FakeClock()

    runs = iter(range(10))

    async def surfaced(seed: int) -> tuple[int, int]:
        folder = tmp_path / f"run{next(runs)}"
        bank = await open_bank(folder, clock=clock, deterministic=False, seed=seed)
        faded = await bank.remember(
            SCOPE, "the red kite festival", importance=1, when=clock.now() - timedelta(days=6)
        )
        fresh = await bank.remember(SCOPE, "the blue kite festival", importance=1)
        counts = {faded: 0, fresh: 0}
        for _ in range(60):
            for hit in await bank.recall(SCOPE, "kite festival"):
                counts[hit.id] += 1
        await bank.close()
        return counts[faded], counts[fresh]

    faded, fresh = await surfaced(7)
    # A fresh memory nearly always comes to mind (under actr, the default, even a new memory's
    # retrieval probability is below 1: about 0.77, so it fails about one time in 23); a faded
    # one often does not.
    assert fresh >= 54
    assert 0 < faded < fresh - 10
    assert await surfaced(7) == (faded, fresh)  # the same seed, the same mind

    bank = await open_bank(tmp_path / "det", clock=clock)  # deterministic: never fails
    await bank.remember(
        SCOPE, "the red kite festival", importance=1, when=clock.now() - timedelta(days=60)
    )
    for _ in range(20):
        assert len(await bank.recall(SCOPE, "kite festival")) == 1
    await bank.close()


async def test_memories_of_days_newest_first_in_the_days_of_a_timezone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FakeClock(datetime(2026, 3, 10, 12, 0, tzinfo=UTC))
    bank = await open_bank(tmp_path, clock=clock)
    at = datetime(2026, 3, 7, 20, 0, tzinfo=UTC)  # Saturday 20:00 UTC: Sunday 04:00 in Shanghai
    saturday = await bank.remember(SCOPE, "kites on Saturday evening", when=at)
    earlier = await bank.remember(SCOPE, "kites on Saturday morning", when=at - timedelta(hours=10))
    friday = await bank.remember(SCOPE, "a Friday thing", when=at - timedelta(days=1))
    await bank.remember(OTHER, "another scope's Saturday", when=at)
    weekend = (date(2026, 3, 7), date(2026, 3, 8))

    async def ids(first: date, last: date, tz: tzinfo, k: int = 5) -> list[int]:
        return [m.id for m in await bank.dated(SCOPE, first, last, tz, k=k)]

    assert await ids(*weekend, UTC) == [saturday, earlier]
    assert await ids(*weekend, UTC, k=1) == [saturday]
    assert await ids(date(2026, 3, 6), date(2026, 3, 6), UTC) == [friday]
    shanghai = ZoneInfo("Asia/Shanghai")
    # In Shanghai, Friday 20:00 UTC is already Saturday, and Saturday 20:00 Sunday.
    assert await ids(date(2026, 3, 7), date(2026, 3, 7), shanghai) == [earlier, friday]
    assert await ids(date(2026, 3, 8), date(2026, 3, 8), shanghai) == [saturday]
    assert await ids(date(2026, 3, 9), date(2026, 3, 10), UTC) == []
    [recalled] = await bank.dated(SCOPE, *weekend, UTC, k=1)
    assert recalled.score == recalled.retention > 0
    # At most DATED_READ of the days' memories are read, the newest.
    monkeypatch.setattr(memory.recall.retrieval, "DATED_READ", 2)
    assert await ids(date(2026, 3, 6), date(2026, 3, 8), UTC) == [saturday, earlier]
    await bank.close()


async def test_an_old_day_brings_its_memories_however_many_came_after(tmp_path: Path) -> None:
    """A day older than 500 newer memories still brings its own (they are read by date, not
    among the newest), and another scope's memories of that day never come."""
    clock = FakeClock(datetime(2025, 6, 3, 12, 0, tzinfo=UTC))
    bank = await open_bank(tmp_path, clock=clock)
    old_day = datetime(2025, 6, 1, 9, 0, tzinfo=UTC)
    old = await bank.remember(SCOPE, "the picnic by the river", when=old_day, importance=3)
    await bank.remember(OTHER, "another scope's picnic", when=old_day)
    later = datetime(2025, 6, 2, 9, 0, tzinfo=UTC)
    for i in range(501):
        await bank.remember(SCOPE, f"a later note {i}", when=later + timedelta(minutes=i))
    picked = await bank.dated(SCOPE, date(2025, 6, 1), date(2025, 6, 1), UTC, k=5)
    assert [m.id for m in picked] == [old]
    # The store's read: [start, end), newest first, at most limit, the scope's only.
    start, end = old_day.replace(hour=0), later + timedelta(minutes=2)
    between = await bank.store.memories_between(SCOPE, start, end, limit=10)
    assert [m.text for m in between] == [
        "a later note 1",
        "a later note 0",
        "the picnic by the river",
    ]
    assert len(await bank.store.memories_between(SCOPE, start, end, limit=2)) == 2
    assert await bank.store.memories_between(SCOPE, end, end, limit=10) == []
    [theirs] = await bank.store.memories_between(OTHER, start, end, limit=10)
    assert theirs.text == "another scope's picnic"
    await bank.close()


async def test_forget_by_id_and_by_query(tmp_path: Path) -> None:
    bank = await open_bank(tmp_path)
    cat = await bank.remember(SCOPE, "Alice's cat is called Mochi")
    job = await bank.remember(SCOPE, "Alice works at the bakery")
    theirs = await bank.remember(OTHER, "Bob's cat is called Tofu")
    await bank.recall(SCOPE, "cat")  # the index is open: deletion must reach it too

    assert await bank.forget(SCOPE, theirs) == []  # another scope's id: nothing happens
    assert [m.text for m in await bank.recall(OTHER, "Tofu")] == ["Bob's cat is called Tofu"]

    [gone] = await bank.forget(SCOPE, cat)
    assert gone.id == cat and gone.text == "Alice's cat is called Mochi"
    assert await bank.recall(SCOPE, "Mochi cat") == []
    assert await bank.forget(SCOPE, cat) == []

    [gone] = await bank.forget(SCOPE, "the bakery job")
    assert gone.id == job
    assert await bank.count(SCOPE) == 0
    assert await bank.forget(SCOPE, "anything at all") == []
    await bank.close()

    bank = await open_bank(tmp_path)  # the saved index agrees with SQLite: no rebuild
    assert await bank.recall(SCOPE, "Mochi cat") == []
    assert bank.derived.indexes.rebuilds == 0
    await bank.close()


async def test_wipe_empties_one_scope(tmp_path: Path) -> None:
    bank = await open_bank(tmp_path)
    await bank.remember(SCOPE, "one thing")
    await bank.remember(SCOPE, "another thing")
    await bank.remember(OTHER, "their thing")
    assert await bank.wipe(SCOPE) == 2
    assert await bank.recall(SCOPE, "thing") == []
    assert len(await bank.recall(OTHER, "thing")) == 1
    await bank.close()


async def test_a_first_sight_with_no_index_file_reads_no_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store's digest of a scope's vectors checks an index file: with none (a new data
    folder, as every process on PostgreSQL starts), the scope's first recall reads its vectors
    and nothing else; with one, the digest is read once and the file used."""
    bank = await open_bank(tmp_path)
    kept = await bank.remember(SCOPE, "the lighthouse at dawn")
    store = bank.derived.indexes.store
    digests: list[str] = []
    digest = store.embedding_digest

    async def counted(scope: str, embedder: str) -> IdDigest:
        digests.append(scope)
        return await digest(scope, embedder)

    monkeypatch.setattr(store, "embedding_digest", counted)
    assert [h.id for h in await bank.recall(SCOPE, "lighthouse")] == [kept]
    assert digests == [] and bank.derived.indexes.rebuilds == 1
    await bank.close()

    bank = await open_bank(tmp_path)  # the index saved at close
    store = bank.derived.indexes.store
    digest = store.embedding_digest
    monkeypatch.setattr(store, "embedding_digest", counted)
    assert [h.id for h in await bank.recall(SCOPE, "lighthouse")] == [kept]
    assert digests == [SCOPE] and bank.derived.indexes.rebuilds == 0
    await bank.close()


async def test_stale_and_damaged_index_files_are_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bank = await open_bank(tmp_path)
    first = await bank.remember(SCOPE, "the lighthouse at dawn")
    await bank.recall(SCOPE, "lighthouse")
    await bank.close()  # the index is saved with one memory

    bank = await open_bank(tmp_path)
    second = await bank.remember(SCOPE, "the lighthouse keeper's dog")  # index not open
    hits = await bank.recall(SCOPE, "lighthouse")
    assert {h.id for h in hits} == {first, second}
    assert bank.derived.indexes.rebuilds == 1  # the file was stale
    await bank.close()

    path = index_path(tmp_path / "index", SCOPE, bank.embedder.name)
    path.write_bytes(b"KZIDX1\n garbage")
    bank = await open_bank(tmp_path)
    with caplog.at_level("INFO", logger="memory.recall.index"):
        assert {h.id for h in await bank.recall(SCOPE, "lighthouse")} == {first, second}
    assert bank.derived.indexes.rebuilds == 1
    assert "rebuilt" in caplog.text and "damaged" in caplog.text
    await bank.close()


async def test_an_index_write_cut_short_leaves_the_old_file_and_no_temporary(
    tmp_path: Path,
) -> None:
    """A process killed while saving an index leaves its temporary file half written: the
    next start removes it and loads the whole file the last save renamed into place."""
    bank = await open_bank(tmp_path)
    kept = await bank.remember(SCOPE, "the lighthouse at dawn")
    await bank.recall(SCOPE, "lighthouse")
    await bank.close()
    path = index_path(tmp_path / "index", SCOPE, bank.embedder.name)
    whole = path.read_bytes()
    half = path.with_name(path.name + ".tmp")
    half.write_bytes(whole[: len(whole) // 2])

    bank = await open_bank(tmp_path)
    assert not half.exists()
    assert [h.id for h in await bank.recall(SCOPE, "lighthouse")] == [kept]
    assert bank.derived.indexes.rebuilds == 0  # the old file was whole and up to date
    await bank.close()


async def test_a_save_cut_short_by_a_stop_holds_its_index_until_the_write_is_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stop cancels the scheduler's save while its thread writes the file; the close that
    follows saves again. The thread can't be stopped, so the second write must wait for it:
    two writers of one temporary file lose the rename (FileNotFoundError at the close)."""
    entered, go = threading.Event(), threading.Event()
    writing, most = 0, 0
    write = memory.recall.index._write_atomically

    def slow_write(path: Path, data: Callable[[BinaryIO], object]) -> None:
        nonlocal writing, most
        writing += 1
        most = max(most, writing)
        entered.set()
        go.wait(WAIT)
        try:
            write(path, data)
        finally:
            writing -= 1

    monkeypatch.setattr(memory.recall.index, "_write_atomically", slow_write)
    bank = await open_bank(tmp_path)
    kept = await bank.remember(SCOPE, "the lighthouse at dawn")
    await bank.recall(SCOPE, "lighthouse")
    save = asyncio.create_task(bank.flush())
    assert await asyncio.to_thread(entered.wait, WAIT)
    save.cancel()
    for _ in range(20):
        await asyncio.sleep(0)
    assert not save.done()  # cancelled, it still holds the lock while its thread writes
    close = asyncio.create_task(bank.close())
    for _ in range(20):  # the close comes to the index's lock while the first write runs
        await asyncio.sleep(0)
    go.set()
    with pytest.raises(asyncio.CancelledError):
        await save
    await close
    assert most == 1

    bank = await open_bank(tmp_path)
    assert [h.id for h in await bank.recall(SCOPE, "lighthouse")] == [kept]
    assert bank.derived.indexes.rebuilds == 0  # the file is whole and up to date
    await bank.close()


async def test_an_explicit_memory_asked_for_twice_is_kept_once(tmp_path: Path) -> None:
    """`/remember` of the same words again, or delivered again after a crash: one memory."""
    bank = await open_bank(tmp_path)
    first = await bank.remember(SCOPE, "my birthday is May 3", kind="explicit")
    assert await bank.remember(SCOPE, " my birthday is May 3 ", kind="explicit") == first
    other = await bank.remember(OTHER, "my birthday is May 3", kind="explicit")  # a wall
    assert other != first
    assert await bank.count(SCOPE) == 1
    await bank.close()


async def test_lru_of_open_indexes_saves_what_it_evicts(tmp_path: Path) -> None:
    bank = await open_bank(tmp_path, capacity=Capacity(index_capacity=1))
    scopes = [f"pip/s{i}" for i in range(3)]
    for scope in scopes:
        await bank.remember(scope, f"a memory of {scope}")
        assert len(await bank.recall(scope, "memory")) == 1
    await bank.derived.flush()  # (an index let go is saved in the background)
    assert (scopes[-1], bank.embedder.name) in bank.derived.indexes
    assert (scopes[0], bank.embedder.name) not in bank.derived.indexes
    assert index_path(tmp_path / "index", scopes[0], bank.embedder.name).exists()
    rebuilt = bank.derived.indexes.rebuilds
    assert len(await bank.recall(scopes[0], "memory")) == 1
    assert bank.derived.indexes.rebuilds == rebuilt  # loaded from its file, not rebuilt
    await bank.close()


async def test_open_indexes_are_bounded_by_memory_too(tmp_path: Path) -> None:
    probe = await open_bank(tmp_path / "probe")
    await probe.remember("pip/probe", "a memory to measure")
    await probe.recall("pip/probe", "memory")
    one = probe.derived.budget.total  # a scope of one memory: its index and its links
    await probe.close()

    bank = await open_bank(tmp_path / "bank", capacity=Capacity(cache_bytes=2 * one))
    scopes = [f"pip/s{i}" for i in range(4)]
    for scope in scopes:
        await bank.remember(scope, f"a memory of {scope}")
        assert len(await bank.recall(scope, "memory")) == 1
        assert bank.derived.budget.total <= 2 * one
    await bank.derived.flush()  # (an index let go is saved in the background)
    open_now = [s for s in scopes if (s, bank.embedder.name) in bank.derived.indexes]
    assert open_now == scopes[-2:]  # the least recently used went, saved to disk
    assert index_path(tmp_path / "bank" / "index", scopes[0], bank.embedder.name).exists()
    await bank.close()


async def test_hnsw_index_deletes_by_tombstone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory.recall.index, "HNSW_FROM", 5)
    bank = await open_bank(tmp_path)
    ids = [await bank.remember(SCOPE, f"note {i} about gardening tulips") for i in range(8)]
    hits = await bank.recall(SCOPE, "gardening tulips", k=10)
    assert {h.id for h in hits} == set(ids)
    await bank.close()  # saved as HNSW

    bank = await open_bank(tmp_path)
    await bank.recall(SCOPE, "gardening")
    index = await bank.derived.indexes.get(SCOPE, bank.embedder.name, bank.embedder.dimension)
    assert index.hnsw and bank.derived.indexes.rebuilds == 0
    await bank.forget(SCOPE, ids[0])
    assert ids[0] in index.tombstones
    assert ids[0] not in {h.id for h in await bank.recall(SCOPE, "gardening tulips", k=10)}
    await bank.close()

    bank = await open_bank(tmp_path)  # the tombstone survives a save and load
    assert ids[0] not in {h.id for h in await bank.recall(SCOPE, "gardening tulips", k=10)}
    assert bank.derived.indexes.rebuilds == 0
    await bank.close()


async def test_embedding_outage_loses_nothing(tmp_path: Path, fake: FakeOpenAI) -> None:
    bank = await open_bank(tmp_path, remote(fake))
    fake.embedding_replies.append(HttpError(503, "overloaded"))
    mid = await bank.remember(SCOPE, "Alice adopted a kitten")  # stored without a vector
    assert [h.id for h in await bank.recall(SCOPE, "kitten")] == [mid]  # by its words
    # The index is built after the outage: the memory is embedded then, and found by meaning.
    assert [h.id for h in await bank.recall(SCOPE, "her new pet")] == [mid]
    await bank.close()


async def test_reindex_after_changing_embedder(tmp_path: Path, fake: FakeOpenAI) -> None:
    bank = await open_bank(tmp_path, HashEmbedder(64))
    ids = [await bank.remember(SCOPE, f"memory number {i} of a kitten") for i in range(5)]
    await bank.remember(OTHER, "someone else's kitten")
    await bank.close()

    bank = await open_bank(tmp_path, remote(fake))
    seen: list[tuple[int, int]] = []
    assert await bank.reindex(lambda done, total: seen.append((done, total))) == 6
    assert seen[0] == (0, 6) and seen[-1] == (6, 6)
    index = await bank.derived.indexes.get(SCOPE, bank.embedder.name, 8)
    assert index.size == 5 and index.dimension == 8  # one embedder per index, never mixed
    assert {h.id for h in await bank.recall(SCOPE, "pet", k=10)} == set(ids)
    assert await bank.reindex() == 0  # nothing left to do
    await bank.close()


async def test_a_change_of_embedder_is_caught_up_in_steps_recalling_by_words_meanwhile(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    many = memory.recall.catchup.INLINE_EMBED + 8
    bank = await open_bank(tmp_path, HashEmbedder(64))
    kitten = await bank.remember(SCOPE, "Alice adopted a kitten called Mochi")
    for i in range(many - 1):
        await bank.remember(SCOPE, f"note {i} about the weather")
    await bank.remember(OTHER, "Bob skis in the Alps")
    await bank.close()

    bank = await open_bank(tmp_path, remote(fake))
    name = bank.embedder.name

    def never_mixed() -> None:
        # No index of the new embedder exists until its scope is complete: none holding a
        # part of the scope, none mixing the two embedders' vectors.
        assert bank.derived.indexes.open_index(SCOPE, name) is None
        assert not index_path(tmp_path / "index", SCOPE, name).exists()

    # Too many to embed before answering: recall goes by words, at once.
    assert [h.id for h in await bank.recall(SCOPE, "Mochi", k=1)] == [kitten]
    assert bank.waiting(SCOPE)
    assert await bank.recall(SCOPE, "her new pet") == []  # no word in common, no meaning yet
    never_mixed()

    steps = bank.catch_up(batch=16)
    assert await anext(steps) == (0, many + 1)
    assert await anext(steps) == (16, many + 1)
    assert bank.waiting(SCOPE)
    assert [h.id for h in await bank.recall(SCOPE, "Mochi", k=1)] == [kitten]
    never_mixed()
    seen = [step async for step in steps]
    assert seen[-1] == (many + 1, many + 1)
    assert not bank.waiting(SCOPE) and not bank.waiting(OTHER)
    # Done: the index is built from the new embedder's vectors alone, and meaning works.
    assert [h.id for h in await bank.recall(SCOPE, "her new pet", k=1)] == [kitten]
    index = await bank.derived.indexes.get(SCOPE, name, 8)
    assert index.size == many and index.dimension == 8
    assert [s async for s in bank.catch_up()] == [(0, 0)]  # nothing left
    await bank.close()


async def test_the_catch_up_asks_only_the_scopes_waiting_for_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At each start the catch-up finds what the embedder has not embedded: the scopes that
    wait are named by one statement over the bank, and only they are read, not every scope
    (at 10,000 scopes, 10,000 statements at each start). Then a scope it did not name is
    searched at its first recall without asking the store what waits in it."""
    bank = await open_bank(tmp_path, HashEmbedder(64))
    old = await bank.remember(SCOPE, "Alice adopted a kitten called Mochi")
    await bank.close()
    bank = await open_bank(tmp_path, HashEmbedder(32))  # another embedder: SCOPE waits
    bob = await bank.remember(OTHER, "Bob skis in the Alps")  # embedded as it is stored
    asked: list[str] = []
    unembedded = bank.store.unembedded

    async def counted(scope: str, embedder: str) -> list[Memory]:
        asked.append(scope)
        return await unembedded(scope, embedder)

    monkeypatch.setattr(bank.store, "unembedded", counted)
    assert [step async for step in bank.catch_up()] == [(0, 1), (1, 1)]
    assert asked == [SCOPE]
    asked.clear()
    assert [step async for step in bank.catch_up()] == [(0, 0)]  # nothing waits
    assert asked == []
    assert [h.id for h in await bank.recall(SCOPE, "Mochi", k=1)] == [old]
    assert [h.id for h in await bank.recall(OTHER, "Alps", k=1)] == [bob]
    assert asked == []
    await bank.close()


async def test_a_few_memories_without_a_vector_are_embedded_before_recall(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    bank = await open_bank(tmp_path, HashEmbedder(64))
    kitten = await bank.remember(SCOPE, "Alice adopted a kitten")
    await bank.close()
    bank = await open_bank(tmp_path, remote(fake))
    assert [h.id for h in await bank.recall(SCOPE, "her new pet")] == [kitten]
    assert not bank.waiting(SCOPE)
    await bank.close()


async def test_the_scheduler_round_also_catches_up_a_waiting_scope(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    many = memory.recall.catchup.INLINE_EMBED + 1
    bank = await open_bank(tmp_path, HashEmbedder(64))
    ids = [await bank.remember(SCOPE, f"the kitten's toy number {i}") for i in range(many)]
    await bank.close()
    bank = await open_bank(tmp_path, remote(fake))
    await bank.recall(SCOPE, "kitten")
    assert bank.waiting(SCOPE)
    assert await bank.embed_pending(limit=many) == many
    assert not bank.waiting(SCOPE)
    assert {h.id for h in await bank.recall(SCOPE, "pet", k=many)} == set(ids)
    await bank.close()


async def test_query_embeddings_are_reused(tmp_path: Path, fake: FakeOpenAI) -> None:
    bank = await open_bank(tmp_path, remote(fake))
    await bank.remember(SCOPE, "Alice adopted a kitten")
    await bank.remember(SCOPE, "Alice adopted a kitten")  # the same text: from the cache
    assert len(fake.embedding_requests) == 1
    await bank.recall(SCOPE, "her pet")
    await bank.recall(SCOPE, "her pet")
    assert len(fake.embedding_requests) == 2
    await bank.close()


async def test_a_memory_of_emoji_alone_is_recalled_by_them(tmp_path: Path) -> None:
    bank = await open_bank(tmp_path)
    sushi = await bank.remember(SCOPE, "🍣🍣")
    await bank.remember(SCOPE, "Alice adopted a kitten")
    # The kitten comes too, after it: it was said right after the sushi (its context).
    assert (await bank.recall(SCOPE, "🍣?", fail=False))[0].id == sushi
    await bank.close()


async def test_control_characters_are_not_kept(tmp_path: Path) -> None:
    bank = await open_bank(tmp_path)
    memory_id = await bank.remember(SCOPE, "\u200bMo\x00chi\u200b")
    [got] = await bank.get(SCOPE, [memory_id])
    assert got.text == "Mochi"
    await bank.close()


async def test_bad_requests_are_refused_plainly(tmp_path: Path) -> None:
    bank = await open_bank(tmp_path)
    for invisible in ("   ", "\u200b\u200d", "\x00", "\ufeff\x00 \u2060"):
        with pytest.raises(BankError, match="needs some text"):
            await bank.remember(SCOPE, invisible)
    with pytest.raises(BankError, match="importance"):
        await bank.remember(SCOPE, "x", importance=5)
    with pytest.raises(BankError, match="category"):
        await bank.remember(SCOPE, "x", category="gossip")
    with pytest.raises(BankError, match="kind"):
        await bank.remember(SCOPE, "x", kind="dream")
    with pytest.raises(BankError, match="scope"):
        await bank.recall("", "x")
    assert await bank.count(SCOPE) == 0
    await bank.close()


@pytest.mark.parametrize(
    "scope", ["a'b; DROP TABLE memories; --", "../../etc/passwd", 'x" OR 1=1', "日本/🐱"]
)
async def test_scope_strings_are_opaque(tmp_path: Path, scope: str) -> None:
    bank = await open_bank(tmp_path)
    mid = await bank.remember(scope, "a secret about the garden")
    await bank.remember(SCOPE, "a secret about the garden")
    assert [h.id for h in await bank.recall(scope, "garden secret")] == [mid]
    await bank.close()
    assert {p.parent for p in (tmp_path / "index").iterdir()} == {tmp_path / "index"}


async def test_flashback_brings_the_nearest_and_the_farthest(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    bank = await open_bank(tmp_path, remote(fake))
    near = await bank.remember(SCOPE, "Alice adopted a kitten")
    await bank.remember(SCOPE, "Alice works as a nurse and her sister too")
    far = await bank.remember(SCOPE, "skiing in the Alps in winter")
    picked = await bank.flashback(SCOPE, "my pet cat")
    assert [m.id for m in picked] == [near, far]
    assert await bank.flashback(OTHER, "my pet cat") == []
    await bank.close()


def test_index_search_matches_brute_force() -> None:
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((300, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = np.arange(1000, 1300, dtype=np.int64)
    index = memory.recall.index.ScopeIndex.build(16, ids, vectors)
    query = vectors[17]
    expected = ids[np.argsort(-(vectors @ query))[:5]].tolist()
    assert [i for i, _ in index.search(query, 5)] == expected
    index.remove([int(ids[17])])
    assert int(ids[17]) not in [i for i, _ in index.search(query, 5)]
    restored = memory.recall.index.ScopeIndex.deserialize(index.serialize())
    assert restored.digest() == index.digest()
    for damaged in (b"", b"not an index", index.serialize()[:-40]):
        with pytest.raises(memory.recall.index.IndexFileError):
            memory.recall.index.ScopeIndex.deserialize(damaged)


async def test_full_text_search_keeps_the_rarest_words_in_a_large_bank(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory.recall.retrieval, "DF_FROM", 10)
    monkeypatch.setattr(memory.recall.retrieval, "POSTINGS", 5)
    bank = await open_bank(tmp_path)
    for i in range(20):
        await bank.remember(SCOPE, f"garden note {i} about apples and pears")
    zucchini = await bank.remember(SCOPE, "garden note about a giant zucchini")
    await bank.remember(OTHER, "someone else's zucchini")
    # "garden" is in nearly every memory: too common to tell them apart, so not searched.
    assert await bank.retrieval.distinctive(SCOPE, ["garden", "zucchini"]) == ["zucchini"]
    # The rarest always stays.
    assert await bank.retrieval.distinctive(SCOPE, ["garden"]) == ["garden"]
    # Counted per scope: another scope full of a word does not make it common here.
    for i in range(30):
        await bank.remember(OTHER, f"mochi note {i}")
    mochi = await bank.remember(SCOPE, "Mochi the cat")
    assert await bank.retrieval.distinctive(SCOPE, ["mochi"]) == ["mochi"]
    assert [h.id for h in await bank.recall(SCOPE, "how is Mochi doing")][:1] == [mochi]
    hits = await bank.recall(SCOPE, "the garden zucchini")
    assert hits[0].id == zucchini
    await bank.close()


async def test_recall_by_words_while_the_embedder_is_down(tmp_path: Path, fake: FakeOpenAI) -> None:
    clock = FakeClock()
    bank = await open_bank(tmp_path, remote(fake), clock)
    kitten = await bank.remember(SCOPE, "Alice adopted a kitten called Mochi")
    await bank.recall(SCOPE, "her pet")  # the index is open
    fake.embedding_replies.extend([HttpError(503, "down")] * 2)
    fresh = await bank.remember(SCOPE, "Mochi learned to open doors")  # no vector for now
    hits = await bank.recall(SCOPE, "Mochi")  # the cue cannot be embedded either
    assert {h.id for h in hits} == {kitten, fresh}
    requests = len(fake.embedding_requests)
    await bank.recall(SCOPE, "kitten Mochi")  # within the pause: no new embedding attempt
    assert len(fake.embedding_requests) == requests
    clock.advance(minutes=2)  # the service is back; the open index was dropped, so the
    hits = await bank.recall(SCOPE, "her pet animal")  # reloaded one embeds the newcomer
    assert fresh in {h.id for h in hits} or kitten in {h.id for h in hits}
    index = await bank.derived.indexes.get(SCOPE, bank.embedder.name, 8)
    assert index.live == {kitten, fresh}
    await bank.close()


async def test_memories_stored_in_an_outage_are_embedded_once_it_ends(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """embed_pending (each scheduler round) embeds what was stored without a vector, backing
    off while the embedder stays out, and adds it to the open index: no recall needed."""
    clock = FakeClock()
    bank = await open_bank(tmp_path, remote(fake), clock)
    kitten = await bank.remember(SCOPE, "Alice adopted a kitten called Mochi")
    assert await bank.embed_pending() == 0  # nothing waits: not even a query to the store
    fake.outage(HttpError(503), Truncated())
    job = await bank.remember(SCOPE, "Alice works as a nurse at the hospital")
    ski = await bank.remember(OTHER, "Bob went skiing in the Alps")
    index = await bank.derived.indexes.get(SCOPE, bank.embedder.name, 8)
    assert index.live == {kitten}

    asked = len(fake.embedding_requests)
    assert await bank.embed_pending() == 0  # tried at once, in vain
    for wait in (1, 2, 4, 8):  # minutes: each failure doubles the wait
        assert len(fake.embedding_requests) == asked + 1
        clock.advance(seconds=wait * 60 - 1)
        assert await bank.embed_pending() == 0  # not yet: no request
        assert len(fake.embedding_requests) == asked + 1
        clock.advance(seconds=1)
        asked = len(fake.embedding_requests)
        assert await bank.embed_pending() == 0  # tried again, in vain
    fake.recover()
    clock.advance(minutes=16)
    assert await bank.embed_pending(limit=1) == 1  # a bounded batch a round
    assert await bank.embed_pending() == 1
    assert await bank.embed_pending() == 0
    assert index.live == {kitten, job}  # joined the open index
    assert not await bank.store.unembedded(SCOPE, bank.embedder.name)
    assert not await bank.store.unembedded(OTHER, bank.embedder.name)
    assert [h.id for h in await bank.recall(SCOPE, "her career", k=1)] == [job]
    assert [h.id for h in await bank.recall(OTHER, "winter snow", k=1)] == [ski]
    await bank.close()


async def test_an_index_built_while_the_embedder_is_out_gets_the_missing_memories_later(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """A cue embedded before (cached) opens the index while the embedder is out: the memories
    it could not embed then join it once the embedder is back, not at some later rebuild."""
    clock = FakeClock()
    bank = await open_bank(tmp_path, remote(fake), clock)
    kitten = await bank.remember(SCOPE, "Alice adopted a kitten called Mochi")
    await bank.recall(SCOPE, "her hospital job")  # the cue's vector is cached
    fake.outage()
    job = await bank.remember(SCOPE, "Alice works as a nurse at the hospital")
    await bank.recall(SCOPE, "her hospital job")  # reopens the index without the newcomer
    index = await bank.derived.indexes.get(SCOPE, bank.embedder.name, 8)
    assert index.live == {kitten}
    fake.recover()
    clock.advance(minutes=1)
    assert await bank.embed_pending() == 1
    assert index.live == {kitten, job}
    assert [h.id for h in await bank.recall(SCOPE, "her career", k=1)] == [job]
    await bank.close()


async def test_a_hung_embedder_does_not_hold_up_recall(tmp_path: Path, fake: FakeOpenAI) -> None:
    """A cue whose embedding does not come within cue_deadline is recalled by its words (the
    embedder's own timeout and retries could take minutes of the user's turn)."""
    clock = FakeClock()
    client = openai.AsyncOpenAI(base_url=fake.base_url, api_key="sk-test", max_retries=3)
    bank = await open_bank(tmp_path, OpenAIEmbedder(client, "fake-embedding", dimension=8), clock)
    kitten = await bank.remember(SCOPE, "Alice adopted a kitten called Mochi")
    bank.retrieval.cue_deadline = 0.2
    fake.embedding_replies.append(Hang(30.0))
    assert [h.id for h in await bank.recall(SCOPE, "how is Mochi?")] == [kitten]
    asked = len(fake.embedding_requests)
    assert [h.id for h in await bank.recall(SCOPE, "Mochi the kitten")] == [kitten]
    assert len(fake.embedding_requests) == asked  # the embedder counts as down for a while
    fake.release_hangs()
    clock.advance(minutes=2)
    bank.retrieval.cue_deadline = 60.0  # (however busy the machine running the tests is)
    assert [h.id for h in await bank.recall(SCOPE, "her pet", k=1)] == [kitten]  # by meaning
    await bank.close()


async def test_forgetting_leaves_no_trace_in_the_next_memory(tmp_path: Path) -> None:
    bank = await open_bank(tmp_path)
    secret = await bank.remember(SCOPE, "my bank pin is zebraquokka")
    after = await bank.remember(SCOPE, "anyway, how was your day")
    [row] = await bank.store.get_memories(SCOPE, [after])
    assert row.previous_id == secret
    await bank.forget(SCOPE, secret)
    assert await bank.store.lexical_search(SCOPE, '"zebraquokka"', 10) == []
    [row] = await bank.store.get_memories(SCOPE, [after])
    assert row.previous_id is None
    again = await bank.remember(SCOPE, "a new thought")
    assert again > after  # ids are never reused
    await bank.close()


async def test_a_memory_stored_while_its_index_loads_joins_it(tmp_path: Path) -> None:
    bank = await open_bank(tmp_path)
    first = await bank.remember(SCOPE, "the lighthouse at dawn")
    await bank.recall(SCOPE, "lighthouse")
    await bank.close()
    bank = await open_bank(tmp_path)
    loading = asyncio.ensure_future(bank.recall(SCOPE, "lighthouse keeper"))
    await asyncio.sleep(0)  # the load has begun
    second = await bank.remember(SCOPE, "the lighthouse keeper's dog")
    await loading
    index = await bank.derived.indexes.get(SCOPE, bank.embedder.name, bank.embedder.dimension)
    assert index.live == {first, second}
    await bank.close()


async def test_one_chinese_character_recalls_under_the_hash_embedder(tmp_path: Path) -> None:
    bank = await MemoryBank.open(tmp_path, HashEmbedder(), FakeClock(), deterministic=True)
    try:
        await bank.remember(SCOPE, "我的猫叫年糕")
        await bank.remember(SCOPE, "我明天要去北京出差")
        for fail in (False, True):
            assert [r.text for r in await bank.recall(SCOPE, "猫", fail=fail)] == ["我的猫叫年糕"]
    finally:
        await bank.close()
