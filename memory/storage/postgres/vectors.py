"""Dense search in the server (memory.recall.dense.ServerIndex), when the `vector` extension
(pgvector 0.5 or later, for HNSW) can be created: see `_VECTOR_SETUP` and `vector_search`.
Otherwise the bank searches per-process FAISS indexes built from the stored embeddings
(memory.recall.index), which `listen` keeps fresh."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import re
import time
from collections.abc import Sequence

import asyncpg
import numpy as np

from memory.records import Vectors
from memory.storage.postgres.base import MIGRATION_LOCK, PgBase, clean_text, settings

__all__ = [
    "SCOPE_GRAPH_FROM",
    "VECTOR_EF_MARGIN",
    "VECTOR_EXACT_UP_TO",
    "VECTOR_TUPLE_COST",
    "PgVectors",
    "real_array",
]


log = logging.getLogger(__name__)

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
# HNSW in pgvector 0.5-0.7 (no iterative scans) filters by scope after the graph search: a scan
# that looks at ef_search candidates finds about ef_search * (scope's share of the rows) of the
# scope's. ef_search is raised so that this is VECTOR_EF_MARGIN times k; past pgvector's
# limit, or for a scope of at most VECTOR_EXACT_UP_TO memories, the scope's rows are scanned
# exactly (through the scope's btree), as they are when an HNSW scan comes back short. An exact
# scan costs in proportion to the scope's rows, so unlike FAISS's flat index it only pays for
# small scopes (benchmarks/README.md, vector_search).
VECTOR_EXACT_UP_TO = 500
VECTOR_EF_MARGIN = 2.0
_EF_SEARCH = (40, 1000)  # pgvector's default and its largest ef_search
# pgvector 0.8 scans the graph iteratively (hnsw.iterative_scan): past its ef_search candidates
# it goes on until k rows have passed the scope's filter or hnsw.max_scan_tuples were visited.
# To find k of a scope holding a share `size / total` of the rows it visits about
# E = k * total / size tuples; ef_search is set as above (candidates good enough for the
# scope's exact k), within pgvector's bounds, and max_scan_tuples to VECTOR_EF_MARGIN * E, so
# the scan goes on where ef_search stops short. The model of the choice: such a search costs
# about what an exact scan of VECTOR_TUPLE_COST * E rows costs (its ef_search candidates, up to
# 2E, each with its neighbours' distances and a heap fetch for the filter, against one distance
# a row), so the scope's `size` rows are scanned exactly where size <= VECTOR_TUPLE_COST * E,
# or size <= VECTOR_EXACT_UP_TO (benchmarks/README.md has the figures).
VECTOR_TUPLE_COST = 10.0
# A scope of SCOPE_GRAPH_FROM memories or more gets a graph of its own (a partial HNSW index on
# the scope, built once, in the background, by one process): its k nearest are then found among
# its own memories, not filtered out of the whole table's. At a million memories a 20,000-memory
# scope's search of the shared graph visited about 5,000 tuples, each fetched to test its scope,
# and the server's vector searches took most of its CPU (benchmarks/README.md).
SCOPE_GRAPH_FROM = 20_000
# Searched in its own graph, a scope's candidates are all its own, but a graph search at ef_search
# = VECTOR_EF_MARGIN * k finds too few of the exact k (0.84 of 50 among 3,000 random vectors of 32
# dimensions): it looks at this many times more (0.99; tests/test_dense.py).
SCOPE_GRAPH_WIDTH = 4.0
GRAPH_RETRY = 60.0  # seconds before a process tries again to build a scope's graph
GRAPH_LOCK = MIGRATION_LOCK + 1  # the advisory lock of whoever builds a scope's graph
_ITERATIVE_FROM = (0, 8)
_FILL_BATCH = 1_000
# The scope's memories, and the graph's: an overcount of all (from the id range: two index
# lookups), or where the scope has its own graph ($5, its name: `own`), the scope's times
# SCOPE_GRAPH_WIDTH ($6); and ef_search = VECTOR_EF_MARGIN * k * the graph's / the scope's
# ($2 = the margin times k), within pgvector's bounds ($3, $4).
_VECTOR_PLAN = """
WITH n AS (
    SELECT coalesce((SELECT memories FROM scope_sizes WHERE scope = $1), 0) AS size,
           coalesce((SELECT max(id) - min(id) + 1 FROM memories), 0) AS whole,
           coalesce((SELECT i.indisvalid FROM pg_class AS c JOIN pg_index AS i
                     ON i.indexrelid = c.oid WHERE c.relname = $5), false) AS own
), g AS (
    SELECT size, own, CASE WHEN own THEN size * $6::float8 ELSE whole END AS total FROM n
)
SELECT size, total, own, set_config(
    'hnsw.ef_search',
    greatest($3::int, least($4::int, ceil($2::float8 * total / greatest(size, 1))))::int::text,
    false
) FROM g
"""
# The same, for an iterative scan: relaxed order (the search re-sorts what it finds),
# max_scan_tuples = VECTOR_EF_MARGIN * k * the graph's / the scope's, and the memory the scan
# may use (hnsw.scan_mem_multiplier times work_mem) enough for that many tuples of $5
# dimensions; $6 the scope's own graph's name, $7 SCOPE_GRAPH_WIDTH.
_ITERATIVE_PLAN = """
WITH n AS (
    SELECT coalesce((SELECT memories FROM scope_sizes WHERE scope = $1), 0) AS size,
           coalesce((SELECT max(id) - min(id) + 1 FROM memories), 0) AS whole,
           coalesce((SELECT i.indisvalid FROM pg_class AS c JOIN pg_index AS i
                     ON i.indexrelid = c.oid WHERE c.relname = $6), false) AS own
), g AS (
    SELECT size, own, CASE WHEN own THEN size * $7::float8 ELSE whole END AS total FROM n
), t AS (
    SELECT size, total, own,
           least(2147483647, ceil($2::float8 * total / greatest(size, 1))) AS tuples
    FROM g
)
SELECT size, total, own, set_config(
    'hnsw.ef_search', greatest($3::int, least($4::int, tuples))::int::text, false
), set_config('hnsw.iterative_scan', 'relaxed_order', false),
set_config('hnsw.max_scan_tuples', greatest($3::int, tuples)::int::text, false),
set_config('hnsw.scan_mem_multiplier', least(1000, greatest(1, ceil(
    tuples * (4 * $5::float8 + 128) / pg_size_bytes(current_setting('work_mem'))
)))::text, false)
FROM t
"""


def _vector_rows(embedder: str, dimension: int, scope: str | None = None) -> str:
    """The rows of one HNSW index: its partial index's predicate, which a query must repeat
    word for word (with literals: a parameter would not let the planner match the index). A
    scope's own graph's is worded so as not to imply the shared graph's: the planner, given
    the scope's, has only its own graph to take (else it may take either)."""
    if scope is None:
        return f"embedder = {_literal(embedder)} AND vector_dims(embedding_v) = {int(dimension)}"
    return (
        f"scope = {_literal(scope)}"
        f" AND embedder || '/' || vector_dims(embedding_v) = {_literal(f'{embedder}/{dimension}')}"
    )


# Building a graph in memory is much faster than on disk (benchmarks/README.md): at least 256
# MB, more where the server is set to give more. For the transaction, or ($local false) the
# session.
_BUILD_MEMORY = (
    "SELECT set_config('maintenance_work_mem', (greatest(pg_size_bytes("
    "current_setting('maintenance_work_mem')), pg_size_bytes('256MB')) / 1024) || 'kB', $local)"
)


def _create_graph(
    name: str,
    embedder: str,
    dimension: int,
    scope: str | None = None,
    *,
    concurrently: bool = False,
) -> str:
    return (
        f"CREATE INDEX {'CONCURRENTLY ' if concurrently else ''}IF NOT EXISTS {name} ON memories"
        f" USING hnsw ((embedding_v::vector({dimension})) vector_ip_ops)"
        f" WHERE {_vector_rows(embedder, dimension, scope)}"
    )


def _nearest(rows_of: str, distance: str, limit: int, *, iterative: bool) -> str:
    """The search of a graph for the `rows_of` nearest by `distance`, at most $`limit` of them."""
    if iterative:
        # Relaxed order (quicker than strict: benchmarks/README.md), re-sorted here; the CTE
        # keeps the sort from reaching into the index scan.
        return (
            f"WITH found AS MATERIALIZED (SELECT id, {distance} AS d FROM memories"
            f" WHERE {rows_of} ORDER BY {distance} LIMIT ${limit})"
            " SELECT id, -d FROM found ORDER BY d, id"
        )
    return (
        f"SELECT id, -({distance}) FROM memories WHERE {rows_of} ORDER BY {distance} LIMIT ${limit}"
    )


def _literal(text: str) -> str:
    return "'" + clean_text(text).replace("'", "''") + "'"


def _graph_name(embedder: str, dimension: int, scope: str | None = None) -> str:
    """The name of the HNSW index of one embedder's vectors of one dimension: of all scopes,
    or of `scope`'s alone."""
    key = f"{embedder}\0{dimension}" + ("" if scope is None else f"\0{scope}")
    return "memories_hnsw_" + hashlib.blake2b(key.encode(), digest_size=8).hexdigest()


def real_array(vector: Vectors | None) -> list[float] | None:
    """A vector as asyncpg sends a real[] (cast to `vector` in SQL: no codec to register)."""
    return None if vector is None else np.asarray(vector, dtype=np.float32).reshape(-1).tolist()


class PgVectors(PgBase):
    """The pgvector path: set up at open, its HNSW indexes, and searches."""

    def __init__(self, pool: asyncpg.Pool, dsn: str, instance: str) -> None:
        super().__init__(pool, dsn, instance)
        # Whether the server searches vectors (pgvector): set at open.
        self.searches_vectors = False
        # Whether its HNSW scans are iterative (pgvector 0.8 or later): set at open.
        self.iterative_scans = False
        self.vector_exact_up_to = VECTOR_EXACT_UP_TO
        self._vector_indexes: set[tuple[str, int]] = set()  # (embedder, dimension) made
        self.scope_graph_from = SCOPE_GRAPH_FROM
        self._graph_builds: dict[str, asyncio.Task[None]] = {}  # by the graph's name
        self._graph_tried: dict[str, float] = {}  # when to try again, by the graph's name
        self.exact_searches = 0  # vector searches that scanned their scope: tests, benchmarks

    async def close(self) -> None:
        for build in list(self._graph_builds.values()):
            build.cancel()  # its half-built graph is invalid: the next build drops it
            await asyncio.gather(build, return_exceptions=True)
        await super().close()

    async def _vectors(self) -> None:
        """Set up the pgvector path if the extension can be created (or is there); else say
        once that the FAISS path is taken."""
        try:
            async with self._pool.acquire() as conn, conn.transaction():
                # Under the lock: two processes creating the extension at once would collide.
                await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
                await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                version = str(
                    await conn.fetchval(
                        "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
                    )
                )
                release = tuple(int(n) for n in re.findall(r"\d+", version)[:2])
                hnsw = release >= (0, 5)
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
        self.iterative_scans = release >= _ITERATIVE_FROM
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
            await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
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
        name = _graph_name(embedder, dimension)
        # Looked for first, without a lock: CREATE INDEX's lock would wait for a scope's graph
        # being built (and that build for it, a deadlock).
        if not await self._pool.fetchval("SELECT to_regclass($1) IS NOT NULL", name):
            await self._create_shared_graph(name, embedder, dimension)
        self._vector_indexes.add((embedder, dimension))

    async def _create_shared_graph(self, name: str, embedder: str, dimension: int) -> None:
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
            await conn.execute(_BUILD_MEMORY.replace("$local", "true"))
            await conn.execute(_create_graph(name, embedder, dimension))

    async def vector_search(
        self, scope: str, embedder: str, query: Vectors, k: int
    ) -> list[tuple[int, float]]:
        """The scope's k memories nearest `query` (embedded by `embedder`), as (id, inner
        product), best first: the HNSW index where a graph search finds k of the scope's for
        less than an exact scan of its rows costs, else (or when it finds fewer) that exact
        scan. A scope of `scope_graph_from` memories or more is searched in a graph of its
        own once it is built (started here). Only with `searches_vectors`."""
        vector = np.asarray(query, dtype=np.float32).reshape(-1)
        dimension = len(vector)
        await self._vector_index(embedder, dimension)
        values = vector.tolist()
        own_graph = _graph_name(embedder, dimension, scope)
        async with self._pool.acquire() as conn:
            # The sizes, and the scan's settings set from them in the same trip. For the
            # session, not the transaction (there is none: it would cost two more trips): every
            # search on this connection sets them before it uses the graph (the pool leaves
            # them set).
            if self.iterative_scans:
                row = await conn.fetchrow(
                    _ITERATIVE_PLAN,
                    scope,
                    VECTOR_EF_MARGIN * k,
                    *_EF_SEARCH,
                    dimension,
                    own_graph,
                    SCOPE_GRAPH_WIDTH,
                )
            else:
                row = await conn.fetchrow(
                    _VECTOR_PLAN,
                    scope,
                    VECTOR_EF_MARGIN * k,
                    *_EF_SEARCH,
                    own_graph,
                    SCOPE_GRAPH_WIDTH,
                )
            size, total, own = int(row[0]), float(row[1]), bool(row[2])
            if not size:
                return []
            if not own and size >= self.scope_graph_from:
                self._graph_soon(own_graph, scope, embedder, dimension)
            # The scope's own graph is one the planner can match only with the scope written
            # out, as its predicate is.
            params: tuple[object, ...] = (values, k) if own else (scope, values, k)
            if own:
                rows_of = _vector_rows(embedder, dimension, scope)
            else:
                rows_of = _vector_rows(embedder, dimension) + " AND scope = $1"
            n = len(params) - 1  # the parameters after: the vector, then k
            # The index's expression, and the operator of its opclass: <#> is minus the inner
            # product (the vectors are unit length: cosine, FAISS's score on the other path).
            distance = f"embedding_v::vector({dimension}) <#> ${n}::real[]::vector({dimension})"
            if self.iterative_scans:
                graph = (
                    size > self.vector_exact_up_to and size > VECTOR_TUPLE_COST * k * total / size
                )
            else:
                graph = (
                    size > self.vector_exact_up_to
                    and math.ceil(VECTOR_EF_MARGIN * k * total / size) <= _EF_SEARCH[1]
                )
            search = _nearest(rows_of, distance, n + 1, iterative=self.iterative_scans)
            if graph:
                rows = await conn.fetch(search, *params)
                if len(rows) >= min(k, size):
                    return [(int(r[0]), float(r[1])) for r in rows]
            self.exact_searches += 1
            # The scope's rows (by its btree when they are few) and their distances, then
            # sorted: OFFSET 0 keeps the subquery apart, so the HNSW index cannot be used.
            rows = await conn.fetch(
                f"SELECT id, -d FROM (SELECT id, {distance} AS d FROM memories"
                f" WHERE {rows_of} OFFSET 0) AS scoped ORDER BY d, id LIMIT ${n + 1}",
                *params,
            )
        return [(int(r[0]), float(r[1])) for r in rows]

    def _graph_soon(self, name: str, scope: str, embedder: str, dimension: int) -> None:
        """Start building the scope's own graph, unless this process is at it or tried within
        GRAPH_RETRY seconds (another process may be building it)."""
        now = asyncio.get_running_loop().time()
        if name not in self._graph_builds and now >= self._graph_tried.get(name, now):
            self._graph_tried[name] = now + GRAPH_RETRY
            self._graph_builds[name] = asyncio.create_task(
                self.build_scope_graph(scope, embedder, dimension), name="kizuna-scope-graph"
            )

    async def build_scope_graph(self, scope: str, embedder: str, dimension: int) -> None:
        """Build a scope's own graph (if it has none) on a connection of its own, without
        blocking writes (CONCURRENTLY), under an advisory lock: one graph is built at a time,
        by one process, while the others go on searching the shared graph (two builds at once
        on one table deadlock: each waits for the other's transaction to end). A build that
        was cut off (its process died) left an invalid index: dropped, and built again."""
        name = _graph_name(embedder, dimension, scope)
        try:
            conn = await asyncpg.connect(self._dsn, server_settings=settings(self.instance))
            try:
                if not await conn.fetchval("SELECT pg_try_advisory_lock($1)", GRAPH_LOCK):
                    return  # a graph is being built: this one's turn comes later
                valid = await conn.fetchval(
                    "SELECT i.indisvalid FROM pg_class AS c JOIN pg_index AS i"
                    " ON i.indexrelid = c.oid WHERE c.relname = $1",
                    name,
                )
                if valid is False:
                    await conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
                await conn.execute(_BUILD_MEMORY.replace("$local", "false"))
                started = time.perf_counter()
                await conn.execute(
                    _create_graph(name, embedder, dimension, scope, concurrently=True)
                )
                log.info(
                    "a large scope's own vector graph built in %.1f s",
                    time.perf_counter() - started,
                )
            finally:
                await conn.close()
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as e:
            # Searched in the shared graph meanwhile; tried again on a later search.
            log.warning("could not build a large scope's own vector graph: %s", e)
        finally:
            self._graph_builds.pop(name, None)

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

    async def stored_vectors(
        self, scope: str, embedder: str, ids: Sequence[int]
    ) -> dict[int, Vectors]:
        """The stored vectors from `embedder` of those `ids` in the scope that have one (the
        float32 bytes, as `embeddings` reads them)."""
        rows = await self._pool.fetch(
            "SELECT id, embedding FROM memories WHERE scope = $1 AND id = ANY($2::bigint[])"
            " AND embedder = $3 AND embedding IS NOT NULL",
            scope,
            list(dict.fromkeys(int(i) for i in ids)),
            embedder,
        )
        return {int(r[0]): np.frombuffer(r[1], dtype=np.float32).copy() for r in rows}
