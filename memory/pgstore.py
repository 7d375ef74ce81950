"""The PostgreSQL store: the same operations as `memory.store.Store` (session snapshots, the
archive, long-term memories with their embeddings and full-text index, the diary, profiles and
prune reports), on a server several bot processes can share.

An asyncpg pool; the schema is versioned in the `kizuna_schema` table and migrated forward on
open, under an advisory lock so that processes starting together migrate once. Times are unix
seconds in double precision and JSON is text, as in SQLite, so both stores return identical
objects (the row decoders are memory.store's). Every write that is one transaction in SQLite
is one here; the server's row locks take the place of Store's write lock.

Dense search runs in the server when the `vector` extension (pgvector 0.5 or later, for HNSW)
can be created: see `_VECTOR_SETUP` and `vector_search`. Otherwise the bank searches per-process
FAISS indexes built from the stored embeddings (memory.index), which `listen` keeps fresh.

Full-text search runs on a stored `tsvector` of the text memory.text prepared (already
lowercased and jieba-segmented), with the `simple` configuration: no stemming and no accent
folding, where SQLite's FTS5 table stems English with Porter and folds accents.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import math
import re
import urllib.parse
import uuid
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from datetime import date, datetime
from typing import Any, TypeVar

import asyncpg
import numpy as np
import numpy.typing as npt

from memory.records import (
    ArchivedConversation,
    DiaryEntry,
    EncodingWrite,
    IdDigest,
    Kind,
    Lease,
    Memory,
    NewMemory,
    Profile,
    PrunedMemory,
    SessionRow,
    SessionSave,
    Vectors,
)
from memory.storage.errors import StoreError
from memory.storage.rows import (
    conversation_row,
    diary_row,
    encode_sessions,
    memory_row,
    memory_values,
    moment,
    session_row,
    timestamp,
    vector_bytes,
)

__all__ = ["MIGRATIONS", "PgStore"]

log = logging.getLogger(__name__)


# Each entry moves the schema from version i to i + 1. Append only; never edit a shipped one.
MIGRATIONS: Sequence[str] = (
    """
    CREATE TABLE sessions (
        persona    TEXT NOT NULL,
        scope      TEXT NOT NULL,
        snapshot   TEXT NOT NULL,  -- text, not JSONB: a damaged snapshot is reported, as in SQLite
        updated_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (persona, scope)
    );
    CREATE TABLE conversations (
        id         BIGSERIAL PRIMARY KEY,
        persona    TEXT NOT NULL,
        scope      TEXT NOT NULL,
        started_at DOUBLE PRECISION NOT NULL,
        ended_at   DOUBLE PRECISION NOT NULL,
        reason     TEXT NOT NULL,
        turns      TEXT NOT NULL,
        encoded_at DOUBLE PRECISION,
        attempts   INTEGER NOT NULL DEFAULT 0,
        retry_at   DOUBLE PRECISION,
        recap      TEXT
    );
    CREATE INDEX conversations_by_scope ON conversations (persona, scope, ended_at);
    CREATE INDEX conversations_to_encode ON conversations (ended_at) WHERE encoded_at IS NULL;
    CREATE TABLE memories (
        id               BIGSERIAL PRIMARY KEY,  -- never reused: ids are shown
        scope            TEXT NOT NULL,
        text             TEXT NOT NULL,
        speaker          TEXT,
        kind             TEXT NOT NULL CHECK (
            kind IN ('episodic', 'fact', 'explicit', 'summary')
        ),
        category         TEXT CHECK (
            category IN ('work_study', 'social_emotional', 'special', 'personal_daily')
        ),
        importance       INTEGER NOT NULL CHECK (importance BETWEEN 1 AND 3),
        sentiment        DOUBLE PRECISION NOT NULL DEFAULT 0 CHECK (sentiment BETWEEN -1 AND 1),
        created_at       DOUBLE PRECISION NOT NULL,
        last_recalled_at DOUBLE PRECISION,
        recall_count     INTEGER NOT NULL DEFAULT 0,
        strength         DOUBLE PRECISION NOT NULL,
        related          TEXT NOT NULL DEFAULT '[]',
        conversation_id  BIGINT,
        previous_id      BIGINT,
        embedding        BYTEA,  -- float32, native byte order, as in SQLite
        embedder         TEXT,
        -- The full-text index: the memory's prepared text (weight A) and the memory's before
        -- it (weight B, what this one answers, often).
        search_body      TEXT NOT NULL DEFAULT '',
        search_context   TEXT NOT NULL DEFAULT '',
        search           TSVECTOR GENERATED ALWAYS AS (
            setweight(to_tsvector('simple', search_body), 'A')
            || setweight(to_tsvector('simple', search_context), 'B')
        ) STORED
    );
    CREATE INDEX memories_by_scope ON memories (scope, created_at);
    CREATE INDEX memories_by_scope_id ON memories (scope, id);
    CREATE INDEX memories_by_previous ON memories (previous_id) WHERE previous_id IS NOT NULL;
    CREATE INDEX memories_search ON memories USING GIN (search);
    CREATE TABLE embedding_cache (
        embedder  TEXT NOT NULL,
        text_hash BYTEA NOT NULL,
        vector    BYTEA NOT NULL,
        PRIMARY KEY (embedder, text_hash)
    );
    CREATE INDEX embedding_cache_by_hash ON embedding_cache (text_hash);
    CREATE TABLE diary (
        scope         TEXT NOT NULL,
        day           TEXT NOT NULL,  -- YYYY-MM-DD in the persona's timezone
        text          TEXT NOT NULL,
        conversations INTEGER NOT NULL,
        updated_at    DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (scope, day)
    );
    CREATE TABLE profiles (
        scope      TEXT NOT NULL,
        user_id    TEXT NOT NULL,
        name       TEXT NOT NULL,
        text       TEXT NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (scope, user_id)
    );
    CREATE TABLE pruned (
        id         BIGSERIAL PRIMARY KEY,
        scope      TEXT NOT NULL,
        memory_id  BIGINT NOT NULL,
        text       TEXT NOT NULL,
        category   TEXT,
        importance INTEGER NOT NULL,
        policy     TEXT NOT NULL,
        reason     TEXT NOT NULL,
        pruned_at  DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX pruned_by_time ON pruned (pruned_at);
    CREATE TABLE prune_days (
        scope TEXT PRIMARY KEY,
        day   TEXT NOT NULL  -- the last day the scope was pruned: once a day, across processes
    );
    CREATE TABLE channel_personas (
        bot_id     TEXT NOT NULL,
        channel_id TEXT NOT NULL,
        persona    TEXT NOT NULL,
        bound_by   TEXT NOT NULL,
        bound_at   DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (bot_id, channel_id)
    );
    CREATE TABLE dm_sharing (
        persona TEXT NOT NULL,
        "user"  TEXT NOT NULL,  -- "platform:user id"
        since   DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (persona, "user")
    );
    CREATE TABLE recalls (
        id        BIGSERIAL PRIMARY KEY,  -- the order of recalls logged at the same time
        memory_id BIGINT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
        at        DOUBLE PRECISION NOT NULL,
        strength  DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX recalls_by_memory ON recalls (memory_id, at);
    """,
    """
    -- Another process's indexes are derived from the memories: tell them when a scope's
    -- change (one notification per scope and transaction; the payload names the writer).
    CREATE FUNCTION kizuna_memories_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        changed TEXT;
    BEGIN
        IF TG_OP = 'DELETE' THEN changed := OLD.scope; ELSE changed := NEW.scope; END IF;
        PERFORM pg_notify(
            'kizuna_memories',
            current_setting('application_name') || '|' || changed
        );
        RETURN NULL;
    END $$;
    CREATE TRIGGER memories_changed AFTER INSERT OR DELETE OR UPDATE OF embedding
        ON memories FOR EACH ROW EXECUTE FUNCTION kizuna_memories_changed();
    """,
    """
    -- Each scope's memory count, kept by trigger: BM25 needs it on every search, and counting
    -- a scope of 100k rows took 7.7 ms of a 24 ms recall.
    CREATE TABLE scope_sizes (
        scope    TEXT PRIMARY KEY,
        memories BIGINT NOT NULL
    );
    INSERT INTO scope_sizes SELECT scope, count(*) FROM memories GROUP BY scope;
    CREATE FUNCTION kizuna_scope_size() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'INSERT' THEN
            INSERT INTO scope_sizes VALUES (NEW.scope, 1)
                ON CONFLICT (scope) DO UPDATE SET memories = scope_sizes.memories + 1;
        ELSE
            UPDATE scope_sizes SET memories = memories - 1 WHERE scope = OLD.scope;
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER memories_counted AFTER INSERT OR DELETE ON memories
        FOR EACH ROW EXECUTE FUNCTION kizuna_scope_size();
    """,
    """
    -- Two processes may serve one conversation (Telegram webhooks behind a load balancer, the
    -- console beside the web client). Each snapshot names the process that wrote it, and a
    -- conversation's turns are taken one at a time under a lease: the process holding it
    -- (its application_name) is alive as long as one of its connections is.
    ALTER TABLE sessions ADD COLUMN writer TEXT NOT NULL DEFAULT '';
    CREATE TABLE conversation_leases (
        persona TEXT NOT NULL,
        scope   TEXT NOT NULL,
        holder  TEXT NOT NULL,
        PRIMARY KEY (persona, scope)
    );
    """,
    """
    -- Messages a process keeps while it waits for another process's turn of their
    -- conversation: should it die waiting, the next process to take the conversation finds
    -- them here (said, and unanswered, as after any crash).
    CREATE TABLE conversation_inbox (
        persona    TEXT NOT NULL,
        scope      TEXT NOT NULL,
        holder     TEXT NOT NULL,  -- the waiting process's application_name
        message_id TEXT NOT NULL,
        turn       TEXT NOT NULL,  -- as in a snapshot's turns
        seq        BIGSERIAL,      -- the order they came in
        PRIMARY KEY (persona, scope, holder, message_id)
    );
    """,
    """
    -- Forgotten means gone: a prune's report keeps which memory went, when and why, not
    -- what it said.
    ALTER TABLE pruned DROP COLUMN text;
    """,
    """
    -- Who said what a memory records, by the platform's stable id: `speaker` is the display
    -- name they had then, which changes and collides.
    ALTER TABLE memories ADD COLUMN speaker_id TEXT;
    """,
)

# Any constant: the lock every process opening the database takes while it migrates.
_MIGRATION_LOCK = 0x6B697A756E61

# The pgvector path, set up at open when the extension can be created (not a migration: a
# server without it keeps the FAISS path). Idempotent. The float32 BYTEA column stays the
# truth (the FAISS path, `kizuna migrate` and twins read it); `embedding_v` holds the same
# vector for the server's index. Every write of this store sets both; a write of `embedding`
# alone (an upsert by `kizuna migrate`) clears the vector, which `fill_vectors` puts back.
_VECTOR_SETUP = """
ALTER TABLE memories ADD COLUMN IF NOT EXISTS embedding_v vector;
-- Out of the row (TOAST, uncompressed), whatever its size: kept in the row, it pushed the
-- full-text column out instead, and full-text search took twice as long (8.8 -> 17.4 ms at 20k
-- memories). The HNSW index holds its own copy; only exact scans and scores fetch it.
ALTER TABLE memories ALTER COLUMN embedding_v SET STORAGE EXTERNAL;
-- What `fill_vectors` looks for at every open, found without reading the table.
CREATE INDEX IF NOT EXISTS memories_unvectored ON memories (id)
    WHERE embedding IS NOT NULL AND embedding_v IS NULL;
CREATE OR REPLACE FUNCTION kizuna_vector_stale() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Vectors of two dimensions cannot be compared (an error): the nested IFs come first.
    IF OLD.embedding_v IS NOT NULL AND NEW.embedding_v IS NOT NULL THEN
        IF vector_dims(OLD.embedding_v) = vector_dims(NEW.embedding_v) THEN
            IF OLD.embedding_v = NEW.embedding_v THEN
                NEW.embedding_v := NULL;
            END IF;
        END IF;
    END IF;
    RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS memories_vector_stale ON memories;
CREATE TRIGGER memories_vector_stale BEFORE UPDATE OF embedding ON memories FOR EACH ROW
    WHEN (NEW.embedding IS DISTINCT FROM OLD.embedding) EXECUTE FUNCTION kizuna_vector_stale();
"""
# HNSW in pgvector 0.6 (no iterative scans) filters by scope after the graph search: a scan
# that looks at ef_search candidates finds about ef_search * (scope's share of the rows) of the
# scope's. ef_search is raised so that this is VECTOR_EF_MARGIN times k; past pgvector's
# limit, or for a scope of at most VECTOR_EXACT_UP_TO memories, the scope's rows are scanned
# exactly (through the scope's btree), as they are when an HNSW scan comes back short. An exact
# scan costs about 8 us a row at 512 dimensions (3.8 ms at 500, 15 ms at 2,000; HNSW about
# 2 ms): unlike FAISS's flat index, it only pays for small scopes.
VECTOR_EXACT_UP_TO = 500
VECTOR_EF_MARGIN = 2.0
_EF_SEARCH = (40, 1000)  # pgvector's default and its largest ef_search
_FILL_BATCH = 1_000
# The scope's memories, an overcount of all (from the id range: two index lookups), and
# ef_search = VECTOR_EF_MARGIN * k * all / the scope's ($2 = the margin times k), within
# pgvector's bounds ($3, $4).
_VECTOR_PLAN = """
WITH n AS (
    SELECT coalesce((SELECT memories FROM scope_sizes WHERE scope = $1), 0) AS size,
           coalesce((SELECT max(id) - min(id) + 1 FROM memories), 0) AS total
)
SELECT size, total, set_config(
    'hnsw.ef_search',
    greatest($3::int, least($4::int, ceil($2::float8 * total / greatest(size, 1))))::int::text,
    false
) FROM n
"""

_LOG_RECALL = (
    "INSERT INTO recalls (memory_id, at, strength)"
    " SELECT id, last_recalled_at, strength FROM memories WHERE scope = $1 AND id = $2"
)

# The writer is the connection's application_name: this process's name (see PgStore.open).
_UPSERT_SESSION = (
    "INSERT INTO sessions (persona, scope, snapshot, updated_at, writer)"
    " VALUES ($1, $2, $3, $4, current_setting('application_name'))"
    " ON CONFLICT (persona, scope) DO UPDATE SET snapshot = excluded.snapshot,"
    " updated_at = excluded.updated_at, writer = excluded.writer"
)

# Take a conversation's lease when it is free, ours already, or its holder's connections are
# all gone (the process died); and, in the same trip, the session's snapshot when another
# process wrote it last (`missing` when it has none: wiped, or never saved).
_TAKE_CONVERSATION = """
WITH taken AS (
    INSERT INTO conversation_leases AS lease (persona, scope, holder) VALUES ($1, $2, $3)
    ON CONFLICT (persona, scope) DO UPDATE SET holder = excluded.holder
    WHERE lease.holder = excluded.holder
        OR NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE application_name = lease.holder)
    RETURNING 1
),
orphans AS (  -- messages a process that died was keeping for this conversation
    DELETE FROM conversation_inbox AS kept
    WHERE kept.persona = $1 AND kept.scope = $2 AND kept.holder <> $3
        AND EXISTS (SELECT 1 FROM taken)
        AND NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE application_name = kept.holder)
    RETURNING kept.message_id, kept.turn, kept.seq
)
SELECT held, s.persona IS NULL AS missing,
    CASE WHEN held AND s.writer <> $3 THEN s.snapshot END AS snapshot, s.updated_at,
    (SELECT array_agg(message_id ORDER BY seq) FROM orphans) AS orphan_ids,
    (SELECT array_agg(turn ORDER BY seq) FROM orphans) AS orphan_turns
FROM (SELECT EXISTS (SELECT 1 FROM taken) AS held) AS asked
LEFT JOIN sessions AS s ON s.persona = $1 AND s.scope = $2
"""

_KEEP_WAITING = (
    "INSERT INTO conversation_inbox (persona, scope, holder, message_id, turn)"
    " SELECT $1, $2, $3, m, t FROM unnest($4::text[], $5::text[]) WITH ORDINALITY AS w(m, t, n)"
    " ORDER BY n ON CONFLICT DO NOTHING"
)

_RELEASE_CONVERSATION = """
WITH gone AS (
    DELETE FROM conversation_leases WHERE persona = $1 AND scope = $2 AND holder = $3
    RETURNING 1
)
SELECT pg_notify('kizuna_leases', $4) FROM gone
"""

_MEMORY_COLUMNS = (
    "id, scope, text, speaker, kind, category, importance, sentiment, created_at,"
    " last_recalled_at, recall_count, strength, related, conversation_id, previous_id,"
    " speaker_id"
)

_CONVERSATION_COLUMNS = (
    "id, persona, scope, started_at, ended_at, reason, turns, encoded_at, attempts, recap"
)

# BM25's IDF times each term's cover density (ts_rank_cd, normalised by the log of the
# document's length; body weighs 1, the memory before `context_weight`), summed over the query's
# terms that the memory holds. Not FTS5's bm25(): no saturation of repeated terms and another
# length normalisation, so scores differ; the order is what recall uses. Document frequencies
# are counted in the scope (a scope is a wall: no other scope's words weigh here).
_LEXICAL_SEARCH = """
WITH total AS (
    SELECT coalesce((SELECT memories FROM scope_sizes WHERE scope = $1), 0)::float8 AS n
),
terms AS MATERIALIZED (  -- (inlined, each term's tsquery was parsed again for every row)
    SELECT q, ln(1 + (total.n - df.n + 0.5) / (df.n + 0.5)) AS idf
    FROM (SELECT phraseto_tsquery('simple', t) AS q FROM unnest($2::text[]) AS t) AS asked
    CROSS JOIN total
    CROSS JOIN LATERAL (
        SELECT count(*)::float8 AS n FROM memories WHERE scope = $1 AND search @@ asked.q
    ) AS df
    WHERE numnode(q) > 0
)
SELECT m.id, sum(terms.idf * ts_rank_cd($3::float4[], m.search, terms.q, 1)) AS score
FROM memories AS m JOIN terms ON m.search @@ terms.q
WHERE m.scope = $1
GROUP BY m.id
ORDER BY score DESC, m.id
LIMIT $4
"""

_INSERT_MEMORY = (
    "INSERT INTO memories (scope, text, speaker, kind, category, importance,"
    " sentiment, created_at, strength, related, conversation_id, previous_id,"
    " embedding, embedder, speaker_id, search_body, search_context{}) VALUES"
    " ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17{})"
    " RETURNING id"
)

T = TypeVar("T")

# A quoted FTS5 string ("" inside is a quote), or a bare word.
_FTS_TERM_RE = re.compile(r'"((?:[^"]|"")*)"|([^\s"(){}:^*+]+)')
_FTS_OPERATORS = frozenset({"OR", "AND", "NOT", "NEAR"})


def _fts_terms(match: str) -> list[str]:
    """The terms of an FTS5 query as memory.text.fts_query writes them (an OR of quoted
    strings). Operators are dropped: every query is taken as an OR of its terms."""
    out: list[str] = []
    for quoted, bare in _FTS_TERM_RE.findall(match):
        if quoted:
            out.append(quoted.replace('""', '"'))
        elif bare and bare not in _FTS_OPERATORS:
            out.append(bare)
    return out


def _where(dsn: str) -> str:
    """The server and database a DSN names, without its password (nor anything else of a
    DSN that is not a URL, where a password may hide): for messages."""
    try:
        url = urllib.parse.urlsplit(dsn.strip())
    except ValueError:  # a malformed URL ("postgresql://[bad/db")
        return "the PostgreSQL database (a malformed connection string)"
    if not url.scheme or not url.netloc:
        return "the PostgreSQL database (a connection string that is not a URL)"
    return f"{url.scheme}://{url.netloc.rpartition('@')[2]}{url.path}"


def _settings(instance: str) -> dict[str, str]:
    """Every connection's settings: named for this process (its leases and change
    notifications), and probed while idle, so that the server ends the connections of a
    machine that died within a minute or so rather than the system's two hours, and its
    leases and locks pass to the others."""
    return {
        "application_name": instance,
        "tcp_keepalives_idle": "30",
        "tcp_keepalives_interval": "10",
        "tcp_keepalives_count": "3",
    }


def _lease_key(persona: str, scope: str) -> str:
    """A conversation's name in lease notifications: short, and free of what a payload
    cannot hold (NUL), whatever the scope string."""
    return hashlib.blake2b(f"{persona}\x1f{scope}".encode(), digest_size=16).hexdigest()


def _in_lock_order(items: Sequence[tuple[int, T]]) -> list[tuple[int, T]]:
    """Row updates sorted by id (stable: repeats keep their order). Two transactions that lock
    the same rows in the same order wait for each other instead of deadlocking."""
    return sorted(items, key=lambda item: item[0])


def _lock_key(name: str) -> int:
    """The advisory lock named `name`: a signed 64-bit hash of it."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "big") - 2**63


def _vector_rows(embedder: str, dimension: int) -> str:
    """The rows of one HNSW index: its partial index's predicate, which a query must repeat
    word for word (with literals: a parameter would not let the planner match the index)."""
    literal = "'" + clean_text(embedder).replace("'", "''") + "'"
    return f"embedder = {literal} AND vector_dims(embedding_v) = {int(dimension)}"


def _real(vector: Vectors | None) -> list[float] | None:
    """A vector as asyncpg sends a real[] (cast to `vector` in SQL: no codec to register)."""
    return None if vector is None else np.asarray(vector, dtype=np.float32).reshape(-1).tolist()


def clean_text(text: str) -> str:
    """Text PostgreSQL can store: lone surrogates (from undecodable input) and NUL become "?"."""
    if text.isascii():
        return text.replace("\x00", "?")
    return text.encode("utf-8", "replace").decode("utf-8").replace("\x00", "?")


def _json_object(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _json(value: Any) -> str:
    # json.dumps writes NUL as \u0000: only surrogates need replacing.
    return clean_text(json.dumps(value, ensure_ascii=False))


class PgStore:
    """Open with `await PgStore.open(dsn)`; close with `await store.close()`.

    Several processes may share one database: each write is a transaction of its own, and
    encoding marks a conversation under its row lock, so it is encoded once whoever gets there
    first.
    """

    def __init__(self, pool: asyncpg.Pool, dsn: str, instance: str) -> None:
        self._pool = pool
        self._dsn = dsn  # for the listening connection, which stays out of the pool
        where = _where(dsn)
        self.where = where  # the server and database, for messages (no password)
        self.instance = instance  # names this process's writes in change notifications
        # One connection of this process's own, outside the pool: it listens for other
        # processes' changes and holds the advisory locks of the jobs this process leads
        # (they go with it if the process dies).
        self._session: asyncpg.Connection | None = None
        self._session_busy = asyncio.Lock()  # a connection runs one query at a time
        self._led: set[str] = set()
        self._returned: dict[str, asyncio.Event] = {}  # by _lease_key, for those waiting
        self._scopes_held: set[str] = set()  # by a task of this process (see scope_lock)
        self._hearing: list[Callable[[object, int, str, str], None]] = []
        # Whether the server searches vectors (pgvector): set at open.
        self.searches_vectors = False
        self.vector_exact_up_to = VECTOR_EXACT_UP_TO
        self._vector_indexes: set[tuple[str, int]] = set()  # (embedder, dimension) made
        self.exact_searches = 0  # vector searches that scanned their scope: tests, benchmarks

    @classmethod
    async def open(cls, dsn: str, *, min_size: int = 1, max_size: int = 10) -> PgStore:
        """Connect (creating or migrating the schema); StoreError says why not."""
        where = _where(dsn)
        # The connections' name is the writer in change notifications (a name set at connect
        # survives the pool's reset of each connection it takes back).
        instance = f"kizuna-{uuid.uuid4().hex[:12]}"
        try:
            pool = await asyncpg.create_pool(
                dsn,
                min_size=min_size,
                max_size=max_size,
                server_settings=_settings(instance),
            )
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, ValueError) as e:
            # ValueError: a malformed connection string (a port that is not a number...).
            raise StoreError(f"{where}: cannot open the database: {e}") from None
        store = cls(pool, dsn, instance)
        try:
            await store._migrate()
            await store._vectors()
        except BaseException as e:
            await pool.close()
            if isinstance(e, asyncpg.PostgresError):
                raise StoreError(f"{where}: cannot open the database: {e}") from None
            raise
        return store

    async def listen(self, changed: Callable[[str], None]) -> None:
        """Call `changed(scope)` whenever another process changes a scope's memories (adds,
        deletes or re-embeds them), so indexes derived from them can be rebuilt."""

        def heard(_conn: object, _pid: int, _channel: str, payload: str) -> None:
            writer, _, scope = payload.partition("|")
            if writer != self.instance and scope:
                changed(scope)

        async with self._session_busy:
            session = await self._own_connection()
            self._hearing.append(heard)  # heard again on a new connection, should this one drop
            await session.add_listener("kizuna_memories", heard)

    async def leads(self, job: str) -> bool:
        """Whether this process leads `job` (say "daily": the daily prune), taking the lead
        when no live process holds it: a session advisory lock, released when the holder's
        connection ends."""
        async with self._session_busy:
            if job in self._led:  # a lead lasts as long as the connection holding it
                await self._on_session("SELECT 1")
            if job not in self._led:
                _, taken = await self._on_session("SELECT pg_try_advisory_lock($1)", _lock_key(job))
                if taken:
                    self._led.add(job)
            return job in self._led

    @contextlib.asynccontextmanager
    async def scope_lock(self, scope: str) -> AsyncIterator[bool]:
        """Hold a scope's lock for its encoding or prune, if no other process (nor another
        task of this one) holds it: yields whether it is held; a scope held elsewhere is left
        to its holder, not waited for. A session advisory lock on this process's own
        connection, so the pool's connections stay free for the work done under it, and a
        dead process's locks go with its connection. (Should that connection drop meanwhile,
        the lock is lost early: commit_encoding's mark still writes a conversation once.)"""
        if scope in self._scopes_held:  # session locks nest: this process already holds it
            yield False
            return
        key = _lock_key("scope " + scope)
        async with self._session_busy:
            session, held = await self._on_session("SELECT pg_try_advisory_lock($1)", key)
        if not held:
            yield False
            return
        self._scopes_held.add(scope)
        try:
            yield True
        finally:
            self._scopes_held.discard(scope)
            # Shielded: a cancelled task still lets go, or the scope stays locked for good.
            await asyncio.shield(self._unlock(session, key))

    async def _unlock(self, session: asyncpg.Connection, key: int) -> None:
        async with self._session_busy:
            current = self._session  # a new connection never held the lock
            if current is not None and current is session and not current.is_closed():
                await current.fetchval("SELECT pg_advisory_unlock($1)", key)

    async def _on_session(self, query: str, *args: object) -> tuple[asyncpg.Connection, Any]:
        """Run a query on this process's own connection (holding _session_busy), on a new one
        if that connection is found dead (its locks went with it); returns the connection
        used and the query's value."""
        session = await self._own_connection()
        try:
            return session, await session.fetchval(query, *args)
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError):
            if not session.is_closed():
                raise
        session = await self._own_connection()
        return session, await session.fetchval(query, *args)

    async def _own_connection(self) -> asyncpg.Connection:
        """This process's own connection (call holding _session_busy), reconnected if it
        dropped."""
        if self._session is None or self._session.is_closed():
            self._led.clear()  # a new connection holds no locks, and hears nothing yet
            # Named like the pool's: while it is open, this process holds its leases.
            self._session = await asyncpg.connect(
                self._dsn, server_settings=_settings(self.instance)
            )
            await self._session.add_listener("kizuna_leases", self._lease_returned)
            for heard in self._hearing:
                await self._session.add_listener("kizuna_memories", heard)
        return self._session

    # Leases: one process at a time takes a conversation's turns (see bot.sessions.TurnLock).

    async def take_conversation(self, persona: str, scope: str) -> Lease:
        """Take the conversation's lease unless another live process holds it; with it, the
        session's snapshot if another process has written it since this one last did."""
        if self._session is None or self._session.is_closed():
            async with self._session_busy:  # it keeps the lease alive, hears it given back
                await self._own_connection()
        row = await self._pool.fetchrow(_TAKE_CONVERSATION, persona, scope, self.instance)
        assert row is not None  # (one row, always)
        if not row["held"]:
            return Lease(held=False)
        orphans = tuple(
            (str(m), turn)
            for m, text in zip(row["orphan_ids"] or (), row["orphan_turns"] or (), strict=True)
            if isinstance(turn := _json_object(text), dict)
        )
        if row["missing"]:
            return Lease(held=True, gone=True, orphans=orphans)
        if row["snapshot"] is None:
            return Lease(held=True, orphans=orphans)
        newer = session_row((persona, scope, row["snapshot"], row["updated_at"]))
        return Lease(held=True, newer=newer, orphans=orphans)

    async def keep_waiting(
        self, persona: str, scope: str, waiting: Sequence[tuple[str, dict[str, Any]]]
    ) -> None:
        """Keep messages (message id, turn) waiting for the conversation, in the order
        given, until `drop_waiting`; found by the next process to take it if this one dies."""
        await self._pool.execute(
            _KEEP_WAITING,
            persona,
            scope,
            self.instance,
            [m for m, _ in waiting],
            [_json(turn) for _, turn in waiting],
        )

    async def drop_waiting(self, persona: str, scope: str, message_ids: Sequence[str]) -> None:
        """The messages have joined the conversation's saved snapshot: kept no more."""
        await self._pool.execute(
            "DELETE FROM conversation_inbox WHERE persona = $1 AND scope = $2 AND holder = $3"
            " AND message_id = ANY($4::text[])",
            persona,
            scope,
            self.instance,
            list(message_ids),
        )

    async def give_back_conversation(self, persona: str, scope: str) -> None:
        """Give the conversation's lease back, waking any process waiting for it."""
        await self._pool.execute(
            _RELEASE_CONVERSATION, persona, scope, self.instance, _lease_key(persona, scope)
        )

    async def conversation_returned(self, persona: str, scope: str) -> None:
        """Wait until the conversation's lease is given back (a holder that dies gives
        nothing back: wait with a timeout, and try again)."""
        await self._returned.setdefault(_lease_key(persona, scope), asyncio.Event()).wait()

    def _lease_returned(self, _conn: object, _pid: int, _channel: str, payload: str) -> None:
        returned = self._returned.pop(payload, None)
        if returned is not None:
            returned.set()

    async def close(self) -> None:
        async with self._session_busy:
            if self._session is not None:
                await self._session.close()
                self._session = None
        await self._pool.close()

    async def schema_version(self) -> int:
        # An open store has the table: opening created it.
        return int(await self._pool.fetchval("SELECT max(version) FROM kizuna_schema"))

    async def _vectors(self) -> None:
        """Set up the pgvector path if the extension can be created (or is there); else say
        once that the FAISS path is taken."""
        try:
            async with self._pool.acquire() as conn, conn.transaction():
                # Under the lock: two processes creating the extension at once would collide.
                await conn.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
                await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                version = str(
                    await conn.fetchval(
                        "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
                    )
                )
                hnsw = tuple(int(n) for n in re.findall(r"\d+", version)[:2]) >= (0, 5)
                if hnsw:
                    await conn.execute(_VECTOR_SETUP)
        except asyncpg.PostgresError as e:
            log.info(
                "dense search: FAISS indexes in each process (%s: %s; with pgvector 0.5 or"
                " later installed on the server and CREATE EXTENSION vector run once by a"
                " superuser, the server would search)",
                self.where,
                str(e).strip(),
            )
            return
        if not hnsw:
            log.info(
                "dense search: FAISS indexes in each process (pgvector %s on %s has no HNSW:"
                " 0.5 or later does)",
                version,
                self.where,
            )
            return
        self.searches_vectors = True
        filled = await self.fill_vectors()
        log.info(
            "dense search: pgvector %s in %s%s",
            version,
            self.where,
            f" ({filled} stored embeddings copied into it)" if filled else "",
        )

    async def fill_vectors(self) -> int:
        """Give the server's vector index every stored embedding that is not in it yet (those
        written by `kizuna migrate`, or before the extension was created), then the index of
        each (embedder, dimension) among them (else an index is made when its embedder is
        first searched); returns how many were filled."""
        if not self.searches_vectors:
            return 0
        filled = 0
        async with self._pool.acquire() as conn, conn.transaction():
            # One process fills; the others wait, then find nothing left.
            await conn.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
            while True:
                rows = await conn.fetch(
                    "SELECT id, embedding FROM memories WHERE embedding IS NOT NULL"
                    " AND embedding_v IS NULL ORDER BY id LIMIT $1",
                    _FILL_BATCH,
                )
                if not rows:
                    break
                await conn.executemany(
                    "UPDATE memories SET embedding_v = $2::real[]::vector WHERE id = $1",
                    [(r[0], np.frombuffer(r[1], dtype=np.float32).tolist()) for r in rows],
                )
                filled += len(rows)
            kinds = []
            if filled:
                kinds = await conn.fetch(
                    "SELECT DISTINCT embedder, vector_dims(embedding_v) FROM memories"
                    " WHERE embedder IS NOT NULL AND embedding_v IS NOT NULL"
                )
        for embedder, dimension in kinds:
            await self._vector_index(embedder, int(dimension))
        return filled

    async def _vector_index(self, embedder: str, dimension: int) -> None:
        """The HNSW index of one embedder's vectors (each index holds one dimension: an
        expression index, partial on the embedder and the dimension), made the first time
        the embedder is seen. Building over many stored rows takes a while, once."""
        if (embedder, dimension) in self._vector_indexes:
            return
        name = (
            "memories_hnsw_"
            + hashlib.blake2b(f"{embedder}\0{dimension}".encode(), digest_size=8).hexdigest()
        )
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
            # The graph of 100k 384-dimension vectors needs about 200 MB to build in memory.
            await conn.execute("SET LOCAL maintenance_work_mem = '256MB'")
            await conn.execute(
                f"CREATE INDEX IF NOT EXISTS {name} ON memories USING hnsw"
                f" ((embedding_v::vector({dimension})) vector_ip_ops)"
                f" WHERE {_vector_rows(embedder, dimension)}"
            )
        self._vector_indexes.add((embedder, dimension))

    async def _migrate(self) -> None:
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
            await conn.execute("CREATE TABLE IF NOT EXISTS kizuna_schema (version INTEGER)")
            version = int(
                await conn.fetchval("SELECT coalesce(max(version), 0) FROM kizuna_schema")
            )
            if version > len(MIGRATIONS):
                raise StoreError(
                    f"{self.where} has schema version {version}, newer than this "
                    f"Kizuna knows ({len(MIGRATIONS)}): upgrade Kizuna"
                )
            for number in range(version, len(MIGRATIONS)):
                await conn.execute(MIGRATIONS[number])
            if version < len(MIGRATIONS):
                await conn.execute("DELETE FROM kizuna_schema")
                await conn.execute("INSERT INTO kizuna_schema VALUES ($1)", len(MIGRATIONS))

    # Sessions: one snapshot per open conversation.

    async def save_session(
        self, persona: str, scope: str, snapshot: dict[str, Any], updated_at: datetime
    ) -> None:
        await self._pool.execute(
            _UPSERT_SESSION, persona, scope, _json(snapshot), timestamp(updated_at)
        )

    async def save_sessions(self, snapshots: Sequence[SessionSave]) -> None:
        """Several sessions' snapshots in one transaction (autosave)."""
        rows = await encode_sessions(snapshots)
        await self._pool.executemany(_UPSERT_SESSION, rows)

    async def load_session(self, persona: str, scope: str) -> SessionRow | None:
        row = await self._pool.fetchrow(
            "SELECT persona, scope, snapshot, updated_at FROM sessions"
            " WHERE persona = $1 AND scope = $2",
            persona,
            scope,
        )
        return None if row is None else session_row(row)

    async def load_sessions(self, personas: Collection[str]) -> list[SessionRow]:
        """Every session of the given personas, oldest first."""
        rows = await self._pool.fetch(
            "SELECT persona, scope, snapshot, updated_at FROM sessions"
            " WHERE persona = ANY($1::text[]) ORDER BY updated_at",
            sorted(set(personas)),
        )
        return [session_row(r) for r in rows]

    # Channel bindings: the persona a channel of a multi-persona bot talks to.

    async def channel_persona(self, bot_id: str, channel_id: str) -> str | None:
        persona = await self._pool.fetchval(
            "SELECT persona FROM channel_personas WHERE bot_id = $1 AND channel_id = $2",
            bot_id,
            channel_id,
        )
        return None if persona is None else str(persona)

    async def bind_channel(
        self, bot_id: str, channel_id: str, persona: str, bound_by: str, at: datetime
    ) -> None:
        await self._pool.execute(
            "INSERT INTO channel_personas (bot_id, channel_id, persona, bound_by, bound_at)"
            " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (bot_id, channel_id) DO UPDATE"
            " SET persona = excluded.persona, bound_by = excluded.bound_by,"
            " bound_at = excluded.bound_at",
            bot_id,
            channel_id,
            persona,
            bound_by,
            timestamp(at),
        )

    # Sharing of private memories in groups, by the user's choice.

    async def dm_sharing(self, persona: str, user: str) -> bool:
        found = await self._pool.fetchval(
            'SELECT 1 FROM dm_sharing WHERE persona = $1 AND "user" = $2', persona, user
        )
        return found is not None

    async def set_dm_sharing(self, persona: str, user: str, on: bool, at: datetime) -> None:
        if on:
            await self._pool.execute(
                'INSERT INTO dm_sharing (persona, "user", since) VALUES ($1, $2, $3)'
                " ON CONFLICT DO NOTHING",
                persona,
                user,
                timestamp(at),
            )
        else:
            await self._pool.execute(
                'DELETE FROM dm_sharing WHERE persona = $1 AND "user" = $2', persona, user
            )

    # Conversations: closed sessions, kept until long-term memory has encoded them.

    async def archive_conversation(
        self,
        persona: str,
        scope: str,
        *,
        started_at: datetime,
        ended_at: datetime,
        reason: str,
        turns: list[dict[str, Any]],
        snapshot: dict[str, Any],
    ) -> int:
        """Archive a closed conversation and replace the session's snapshot, atomically: a crash
        leaves either the open conversation or the archived one, never both or neither."""
        async with self._pool.acquire() as conn, conn.transaction():
            conversation_id = await conn.fetchval(
                "INSERT INTO conversations (persona, scope, started_at, ended_at, reason, turns)"
                " VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
                persona,
                scope,
                timestamp(started_at),
                timestamp(ended_at),
                reason,
                _json(turns),
            )
            await conn.execute(
                _UPSERT_SESSION, persona, scope, _json(snapshot), timestamp(ended_at)
            )
        return int(conversation_id)

    async def conversations(
        self, persona: str, scope: str, *, limit: int = 20
    ) -> list[ArchivedConversation]:
        """The scope's archived conversations, newest first."""
        rows = await self._pool.fetch(
            f"SELECT {_CONVERSATION_COLUMNS} FROM conversations WHERE persona = $1"
            " AND scope = $2 ORDER BY ended_at DESC, id DESC LIMIT $3",
            persona,
            scope,
            limit,
        )
        return [conversation_row(r) for r in rows]

    async def unencoded(
        self,
        personas: Collection[str],
        now: datetime,
        *,
        limit: int = 20,
        skip: Collection[tuple[str, str]] = (),
    ) -> list[ArchivedConversation]:
        """Conversations of these personas waiting to be encoded and due (not waiting out a
        retry delay), oldest first; none of the (persona, scope) pairs in `skip`."""
        if not personas:
            return []
        rows = await self._pool.fetch(
            f"SELECT {_CONVERSATION_COLUMNS} FROM conversations"
            " WHERE encoded_at IS NULL AND persona = ANY($1::text[])"
            " AND (retry_at IS NULL OR retry_at <= $2)"
            " AND (persona, scope) NOT IN (SELECT * FROM unnest($4::text[], $5::text[]))"
            " ORDER BY ended_at, id LIMIT $3",
            list(personas),
            timestamp(now),
            limit,
            [persona for persona, _ in skip],
            [scope for _, scope in skip],
        )
        return [conversation_row(r) for r in rows]

    async def conversation(self, conversation_id: int) -> ArchivedConversation | None:
        row = await self._pool.fetchrow(
            f"SELECT {_CONVERSATION_COLUMNS} FROM conversations WHERE id = $1", conversation_id
        )
        return None if row is None else conversation_row(row)

    async def encoding_failed(self, conversation_id: int, retry_at: datetime) -> None:
        """Count a failed attempt; the conversation waits until `retry_at`."""
        await self._pool.execute(
            "UPDATE conversations SET attempts = attempts + 1, retry_at = $1"
            " WHERE id = $2 AND encoded_at IS NULL",
            timestamp(retry_at),
            conversation_id,
        )

    async def count_conversations(self, persona: str, scope: str) -> int:
        count = await self._pool.fetchval(
            "SELECT count(*) FROM conversations WHERE persona = $1 AND scope = $2",
            persona,
            scope,
        )
        return int(count)

    async def wipe(self, persona: str, scope: str) -> None:
        """Forget everything of one persona in one scope: the open session and the archive."""
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "DELETE FROM sessions WHERE persona = $1 AND scope = $2", persona, scope
            )
            await conn.execute(
                "DELETE FROM conversations WHERE persona = $1 AND scope = $2", persona, scope
            )
            await conn.execute(
                "DELETE FROM conversation_inbox WHERE persona = $1 AND scope = $2", persona, scope
            )

    async def wipe_memories(self, scope: str) -> int:
        """Delete every memory of a scope (and its full-text rows), its diary, profiles and
        prune reports; returns how many memories went."""
        async with self._pool.acquire() as conn, conn.transaction():
            ids = [
                r[0] for r in await conn.fetch("SELECT id FROM memories WHERE scope = $1", scope)
            ]
            gone = await self._delete(conn, scope, ids)
            for table in ("diary", "profiles", "pruned", "prune_days"):
                await conn.execute(f"DELETE FROM {table} WHERE scope = $1", scope)
        return len(gone)

    # Encoding, the diary, profiles and pruning.

    async def commit_encoding(self, write: EncodingWrite) -> list[int] | None:
        """Write an encoded conversation (see EncodingWrite) and mark it encoded, in one
        transaction. Returns the new memories' ids, or None if it was already encoded (then
        nothing is written)."""
        at = timestamp(write.at)
        async with self._pool.acquire() as conn, conn.transaction():
            # The row lock makes a concurrent encoder of the same conversation wait, then find
            # it encoded: the mark and everything else commit together, once.
            marked = await conn.fetchval(
                "UPDATE conversations SET encoded_at = $1, recap = $2"
                " WHERE id = $3 AND encoded_at IS NULL RETURNING id",
                at,
                clean_text(write.recap),
                write.conversation_id,
            )
            if marked is None:
                return None
            ids: list[int] = []
            for memory in write.memories:
                ids.append(await self._insert(conn, memory, ids[-1] if ids else None))
            for memory_id, memory, siblings in zip(
                ids, write.memories, write.sibling_links, strict=True
            ):
                if siblings:
                    related = [*memory.related, *(ids[i] for i in siblings)]
                    await conn.execute(
                        "UPDATE memories SET related = $1 WHERE id = $2",
                        json.dumps(related),
                        memory_id,
                    )
            merges = sorted(write.merges, key=lambda m: m.memory_id)  # see _in_lock_order
            await conn.executemany(
                "UPDATE memories SET strength = $1, importance = greatest(importance, $2),"
                " recall_count = recall_count + 1, last_recalled_at = $3"
                " WHERE scope = $4 AND id = $5",
                [(m.strength, m.importance, at, write.scope, m.memory_id) for m in merges],
            )
            await conn.executemany(_LOG_RECALL, [(write.scope, m.memory_id) for m in merges])
            if write.diary is not None:
                day, text = write.diary
                await conn.execute(
                    "INSERT INTO diary (scope, day, text, conversations, updated_at)"
                    " VALUES ($1, $2, $3, 1, $4) ON CONFLICT (scope, day) DO UPDATE"
                    " SET text = excluded.text, conversations = diary.conversations + 1,"
                    " updated_at = excluded.updated_at",
                    write.scope,
                    day.isoformat(),
                    clean_text(text),
                    at,
                )
            await conn.executemany(
                "INSERT INTO profiles (scope, user_id, name, text, updated_at)"
                " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (scope, user_id) DO UPDATE"
                " SET name = excluded.name, text = excluded.text,"
                " updated_at = excluded.updated_at",
                [
                    (write.scope, user_id, clean_text(name), clean_text(text), at)
                    for user_id, name, text in write.profiles
                ],
            )
        return ids

    async def diary_entry(self, scope: str, day: date) -> DiaryEntry | None:
        row = await self._pool.fetchrow(
            "SELECT scope, day, text, conversations, updated_at FROM diary"
            " WHERE scope = $1 AND day = $2",
            scope,
            day.isoformat(),
        )
        return None if row is None else diary_row(row)

    async def diary_entries(
        self, scope: str, *, before: date | None = None, limit: int = 10
    ) -> list[DiaryEntry]:
        """The scope's diary pages, newest first (only those before `before`, if given)."""
        rows = await self._pool.fetch(
            "SELECT scope, day, text, conversations, updated_at FROM diary"
            " WHERE scope = $1 AND day < $2 ORDER BY day DESC LIMIT $3",
            scope,
            (before or date.max).isoformat(),
            limit,
        )
        return [diary_row(r) for r in rows]

    async def profiles(self, scope: str, user_ids: Sequence[str] | None = None) -> list[Profile]:
        """The scope's user profiles (those of `user_ids`, if given)."""
        query = "SELECT scope, user_id, name, text, updated_at FROM profiles WHERE scope = $1"
        params: list[Any] = [scope]
        if user_ids is not None:
            if not user_ids:
                return []
            query += " AND user_id = ANY($2::text[])"
            params.append(list(user_ids))
        rows = await self._pool.fetch(query + " ORDER BY updated_at DESC", *params)
        return [Profile(r[0], r[1], r[2], r[3], moment(r[4])) for r in rows]

    async def last_prune(self, scope: str) -> date | None:
        day = await self._pool.fetchval("SELECT day FROM prune_days WHERE scope = $1", scope)
        return None if day is None else date.fromisoformat(day)

    async def prune(
        self,
        scope: str,
        day: date,
        forgotten: Sequence[tuple[Memory, str]],
        policy: str,
        at: datetime,
    ) -> list[int]:
        """Delete the forgotten memories, keep a report of each (which, and why: not what it
        said), and note that the scope was pruned on `day`, in one transaction. Returns the
        ids deleted."""
        async with self._pool.acquire() as conn, conn.transaction():
            gone = set(await self._delete(conn, scope, [m.id for m, _ in forgotten]))
            await conn.executemany(
                "INSERT INTO pruned (scope, memory_id, category, importance, policy,"
                " reason, pruned_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                [
                    (scope, m.id, m.category, m.importance, policy, reason, timestamp(at))
                    for m, reason in forgotten
                    if m.id in gone
                ],
            )
            await conn.execute(
                "INSERT INTO prune_days (scope, day) VALUES ($1, $2)"
                " ON CONFLICT (scope) DO UPDATE SET day = excluded.day",
                scope,
                day.isoformat(),
            )
        return sorted(gone)

    async def pruned_since(
        self, since: datetime, *, scope: str | None = None, limit: int = 1000
    ) -> list[PrunedMemory]:
        """Prune reports from `since` on, oldest first (of one scope, or all)."""
        rows = await self._pool.fetch(
            "SELECT scope, memory_id, category, importance, policy, reason, pruned_at"
            " FROM pruned WHERE pruned_at >= $1 AND ($2::text IS NULL OR scope = $2)"
            " ORDER BY pruned_at, id LIMIT $3",
            timestamp(since),
            scope,
            limit,
        )
        return [PrunedMemory(r[0], r[1], r[2], r[3], r[4], r[5], moment(r[6])) for r in rows]

    # Memories (memory.records.MemoryStore).

    async def add_memory(self, memory: NewMemory) -> int:
        async with self._pool.acquire() as conn:
            return await self._insert(conn, memory)

    async def _insert(
        self, conn: asyncpg.Connection, memory: NewMemory, previous_id: int | None = None
    ) -> int:
        """Insert on `conn`, in its transaction if any (`previous_id` overrides the memory's)."""
        values = (
            *memory_values(memory, previous_id),
            clean_text(memory.search_text),
            clean_text(memory.search_context),
        )
        if self.searches_vectors:
            memory_id = await conn.fetchval(
                _INSERT_MEMORY.format(", embedding_v", ", $18::real[]::vector"),
                *values,
                _real(memory.embedding),
            )
        else:
            memory_id = await conn.fetchval(_INSERT_MEMORY.format("", ""), *values)
        return int(memory_id)

    async def find_memory(self, scope: str, text: str, kind: Kind) -> int | None:
        found = await self._pool.fetchval(
            "SELECT id FROM memories WHERE scope = $1 AND kind = $2 AND text = $3"
            " ORDER BY id LIMIT 1",
            scope,
            kind,
            clean_text(text),
        )
        return None if found is None else int(found)

    async def get_memories(self, scope: str, ids: Sequence[int]) -> list[Memory]:
        unique = list(dict.fromkeys(int(i) for i in ids))
        rows = await self._pool.fetch(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE scope = $1 AND id = ANY($2::bigint[])",
            scope,
            unique,
        )
        found = {r[0]: memory_row(r) for r in rows}
        return [found[i] for i in unique if i in found]

    async def list_memories(
        self, scope: str, *, limit: int | None = None, newest_first: bool = True
    ) -> list[Memory]:
        order = "DESC" if newest_first else "ASC"
        rows = await self._pool.fetch(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE scope = $1"
            f" ORDER BY created_at {order}, id {order} LIMIT $2",
            scope,
            limit,  # LIMIT NULL: all
        )
        return [memory_row(r) for r in rows]

    async def count_memories(self, scope: str) -> int:
        count = await self._pool.fetchval("SELECT count(*) FROM memories WHERE scope = $1", scope)
        return int(count)

    async def delete_memories(self, scope: str, ids: Sequence[int]) -> list[int]:
        async with self._pool.acquire() as conn, conn.transaction():
            return await self._delete(conn, scope, ids)

    @staticmethod
    async def _delete(conn: asyncpg.Connection, scope: str, ids: Sequence[int]) -> list[int]:
        """Delete in the caller's transaction; returns the ids that were there."""
        rows = await conn.fetch(
            "DELETE FROM memories WHERE scope = $1 AND id = ANY($2::bigint[])"
            " RETURNING id, conversation_id",
            scope,
            list(dict.fromkeys(int(i) for i in ids)),
        )
        gone = [int(r[0]) for r in rows]
        # The transcript and recap it was encoded from said it too.
        sources = list({int(r[1]) for r in rows if r[1] is not None})
        if sources:
            await conn.execute(
                "UPDATE conversations SET turns = '[]', recap = NULL WHERE id = ANY($1::bigint[])",
                sources,
            )
        if gone:
            # What came next no longer carries the forgotten text as its context.
            await conn.execute(
                "UPDATE memories SET previous_id = NULL, search_context = ''"
                " WHERE previous_id = ANY($1::bigint[])",
                gone,
            )
        return gone

    async def lexical_search(
        self, scope: str, match: str, k: int, *, context_weight: float = 0.35, narrow: bool = True
    ) -> list[tuple[int, float]]:
        """Like Store's, for the queries memory.text.fts_query writes (an OR of quoted terms);
        scored by `_LEXICAL_SEARCH`. `narrow` is for FTS5: here the scope's rows are always
        the only ones ranked."""
        terms = _fts_terms(match)
        if not terms or k <= 0:
            return []
        # ts_rank_cd's weights are {D, C, B, A}, each at most 1.
        weights = [0.0, 0.0, min(max(float(context_weight), 0.0), 1.0), 1.0]
        rows = await self._pool.fetch(_LEXICAL_SEARCH, scope, terms, weights, k)
        return [(int(r[0]), float(r[1])) for r in rows]

    async def document_frequencies(self, scope: str, terms: Sequence[str]) -> dict[str, int]:
        """In how many of the scope's memories each term occurs (in their own text, not the
        context): recall leaves out words too common to tell memories apart."""
        if not terms:
            return {}
        rows = await self._pool.fetch(
            "SELECT t, (SELECT count(*) FROM memories WHERE scope = $1 AND search @@ q"
            " AND ts_filter(search, '{a}') @@ q)"
            " FROM unnest($2::text[]) AS t, phraseto_tsquery('simple', t) AS q",
            scope,
            list(terms),
        )
        return {r[0]: int(r[1]) for r in rows}

    async def sizes(self, scope: str) -> tuple[int, int]:
        """(memories in the scope, memories in all scopes: from the id range, an overcount)."""
        row = await self._pool.fetchrow(
            "SELECT (SELECT count(*) FROM memories WHERE scope = $1),"
            " (SELECT max(id) - min(id) + 1 FROM memories)",
            scope,
        )
        assert row is not None
        return int(row[0]), int(row[1] or 0)

    async def last_memory(self, scope: str) -> Memory | None:
        """The scope's most recently stored memory."""
        row = await self._pool.fetchrow(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE scope = $1 ORDER BY id DESC LIMIT 1",
            scope,
        )
        return None if row is None else memory_row(row)

    async def with_successors(self, scope: str, ids: Sequence[int]) -> list[Memory]:
        """The memories `ids` and those stored right after them (whose previous_id is one of
        them), in one read."""
        rows = await self._pool.fetch(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE scope = $1"
            " AND (id = ANY($2::bigint[]) OR previous_id = ANY($2::bigint[])) ORDER BY id",
            scope,
            list(dict.fromkeys(int(i) for i in ids)),
        )
        return [memory_row(r) for r in rows]

    async def reinforce(
        self, scope: str, updates: Sequence[tuple[int, float]], now: datetime
    ) -> None:
        ordered = _in_lock_order(updates)
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.executemany(
                "UPDATE memories SET recall_count = recall_count + 1, last_recalled_at = $1,"
                " strength = $2 WHERE scope = $3 AND id = $4",
                [(timestamp(now), strength, scope, memory_id) for memory_id, strength in ordered],
            )
            await conn.executemany(_LOG_RECALL, [(scope, memory_id) for memory_id, _ in ordered])

    async def recall_history(self, scope: str, memory_id: int) -> list[tuple[datetime, float]]:
        """When the memory was recalled (or merged with a repeat), oldest first, with the
        strength each left; empty for a memory outside the scope."""
        rows = await self._pool.fetch(
            "SELECT r.at, r.strength FROM recalls r JOIN memories m ON m.id = r.memory_id"
            " WHERE m.scope = $1 AND m.id = $2 ORDER BY r.at, r.id",
            scope,
            memory_id,
        )
        return [(moment(r[0]), float(r[1])) for r in rows]

    async def set_related(self, scope: str, memory_id: int, related: Sequence[int]) -> None:
        await self._pool.execute(
            "UPDATE memories SET related = $1 WHERE scope = $2 AND id = $3",
            json.dumps([int(r) for r in related]),
            scope,
            memory_id,
        )

    async def scopes(self) -> list[str]:
        rows = await self._pool.fetch("SELECT DISTINCT scope FROM memories ORDER BY scope")
        return [r[0] for r in rows]

    async def embeddings(
        self, scope: str, embedder: str
    ) -> tuple[npt.NDArray[np.int64], Vectors | None]:
        rows = await self._pool.fetch(
            "SELECT id, embedding FROM memories"
            " WHERE scope = $1 AND embedder = $2 AND embedding IS NOT NULL ORDER BY id",
            scope,
            embedder,
        )
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        if not rows:
            return ids, None
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        return ids, matrix.reshape(len(rows), -1).copy()

    async def unembedded(self, scope: str, embedder: str) -> list[Memory]:
        rows = await self._pool.fetch(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE scope = $1"
            " AND (embedder IS DISTINCT FROM $2 OR embedding IS NULL) ORDER BY id",
            scope,
            embedder,
        )
        return [memory_row(r) for r in rows]

    async def set_embeddings(
        self, scope: str, embedder: str, items: Sequence[tuple[int, Vectors]]
    ) -> None:
        ordered = _in_lock_order(items)
        if self.searches_vectors and ordered:
            # Made before the vectors go in (so they go into it one by one): after `kizuna
            # memories reindex` under a new embedder, the first recall builds nothing.
            await self._vector_index(embedder, int(np.asarray(ordered[0][1]).size))
        async with self._pool.acquire() as conn, conn.transaction():
            if self.searches_vectors:
                await conn.executemany(
                    "UPDATE memories SET embedding = $1, embedder = $2,"
                    " embedding_v = $5::real[]::vector WHERE scope = $3 AND id = $4",
                    [(vector_bytes(v), embedder, scope, i, _real(v)) for i, v in ordered],
                )
                return
            await conn.executemany(
                "UPDATE memories SET embedding = $1, embedder = $2 WHERE scope = $3 AND id = $4",
                [
                    (vector_bytes(vector), embedder, scope, memory_id)
                    for memory_id, vector in ordered
                ],
            )

    async def vector_search(
        self, scope: str, embedder: str, query: Vectors, k: int
    ) -> list[tuple[int, float]]:
        """The scope's k memories nearest `query` (embedded by `embedder`), as (id, inner
        product), best first: the HNSW index where the scope is a large enough share of the
        rows for a graph search to find k of its own, else (or when it finds fewer) an exact
        scan of the scope's rows. Only with `searches_vectors`."""
        vector = np.asarray(query, dtype=np.float32).reshape(-1)
        dimension = len(vector)
        await self._vector_index(embedder, dimension)
        rows_of = _vector_rows(embedder, dimension)
        # The index's expression, and the operator of its opclass: <#> is minus the inner
        # product (the vectors are unit length: cosine, FAISS's score on the other path).
        distance = f"embedding_v::vector({dimension}) <#> $2::real[]::vector({dimension})"
        values = vector.tolist()
        async with self._pool.acquire() as conn:
            # The sizes, and ef_search set from them in the same trip. For the session, not
            # the transaction (there is none: it would cost two more trips): every search on
            # this connection sets it before it uses the graph, and the pool resets it.
            row = await conn.fetchrow(_VECTOR_PLAN, scope, VECTOR_EF_MARGIN * k, *_EF_SEARCH)
            size, total = int(row[0]), int(row[1])
            if not size:
                return []
            ef = math.ceil(VECTOR_EF_MARGIN * k * total / size)
            if size > self.vector_exact_up_to and ef <= _EF_SEARCH[1]:
                rows = await conn.fetch(
                    f"SELECT id, -({distance}) FROM memories WHERE scope = $1 AND {rows_of}"
                    f" ORDER BY {distance} LIMIT $3",
                    scope,
                    values,
                    k,
                )
                if len(rows) >= min(k, size):
                    return [(int(r[0]), float(r[1])) for r in rows]
            self.exact_searches += 1
            # The scope's rows (by its btree when they are few) and their distances, then
            # sorted: OFFSET 0 keeps the subquery apart, so the HNSW index cannot be used.
            rows = await conn.fetch(
                f"SELECT id, -d FROM (SELECT id, {distance} AS d FROM memories"
                f" WHERE scope = $1 AND {rows_of} OFFSET 0) AS scoped ORDER BY d, id LIMIT $3",
                scope,
                values,
                k,
            )
        return [(int(r[0]), float(r[1])) for r in rows]

    async def vector_scores(
        self, scope: str, embedder: str, query: Vectors, ids: Sequence[int]
    ) -> dict[int, float]:
        """The inner product with `query` of those `ids` in the scope that have a vector from
        `embedder` (computed in the server: a float each comes back, not a vector)."""
        vector = np.asarray(query, dtype=np.float32).reshape(-1)
        dimension = len(vector)
        rows = await self._pool.fetch(
            f"SELECT id, -(embedding_v::vector({dimension}) <#> $3::real[]::vector({dimension}))"
            f" FROM memories WHERE scope = $1 AND id = ANY($2::bigint[])"
            f" AND {_vector_rows(embedder, dimension)}",
            scope,
            list(dict.fromkeys(int(i) for i in ids)),
            vector.tolist(),
        )
        return {int(r[0]): float(r[1]) for r in rows}

    async def embedding_digest(self, scope: str, embedder: str) -> IdDigest:
        row = await self._pool.fetchrow(
            "SELECT count(*), coalesce(sum((id::numeric * 2654435761) % 4294967296), 0)"
            " FROM memories WHERE scope = $1 AND embedder = $2 AND embedding IS NOT NULL",
            scope,
            embedder,
        )
        assert row is not None
        return IdDigest(int(row[0]), int(row[1]))

    async def forget_cached(self, keys: Sequence[bytes]) -> None:
        """Drop cached embeddings of these text hashes (of every embedder): a forgotten
        memory's text leaves no trace."""
        await self._pool.execute(
            "DELETE FROM embedding_cache WHERE text_hash = ANY($1::bytea[])",
            list(dict.fromkeys(keys)),
        )

    async def cached_embeddings(self, embedder: str, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        rows = await self._pool.fetch(
            "SELECT text_hash, vector FROM embedding_cache"
            " WHERE embedder = $1 AND text_hash = ANY($2::bytea[])",
            embedder,
            list(dict.fromkeys(keys)),
        )
        return {r[0]: r[1] for r in rows}

    async def cache_embeddings(self, embedder: str, items: Sequence[tuple[bytes, bytes]]) -> None:
        # Sorted: two processes caching overlapping batches take the row locks in one order.
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.executemany(
                "INSERT INTO embedding_cache (embedder, text_hash, vector) VALUES ($1, $2, $3)"
                " ON CONFLICT (embedder, text_hash) DO UPDATE SET vector = excluded.vector",
                sorted((embedder, key, vector) for key, vector in dict(items).items()),
            )
