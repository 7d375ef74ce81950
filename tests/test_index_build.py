"""A large scope's first sight (memory.recall.index): its HNSW graph is built in a worker thread
while the scope is searched exactly over the vectors read, the build gated here by an event the
test releases; what is added and forgotten meanwhile is in the graph when it takes over. And a
scope's vectors read from either store a slice at a time."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import memory.recall.index
import memory.storage.embeddings
from memory.recall.budget import Budget
from memory.recall.index import Ids, IndexCache, ScopeIndex, index_path
from memory.records import Vectors
from memory.storage import Storage
from memory.storage.postgres import PgStore
from memory.storage.sqlite import Store
from tests.fakes.postgres import StoreOpener
from tests.test_dense import DIMENSION, EMBEDDER, new_memory, unit_vectors

GRAPH_FROM = 50  # HNSW_FROM here: scope "a" (60) gets a graph, "b" (30) stays exact


class GatedBuilder:
    """Builds as the cache would, once `release` is set; counts the builds it was asked for
    and how many ran at once."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls: list[int] = []
        self._running = 0
        self.most_at_once = 0
        self._count = threading.Lock()

    def __call__(self, dimension: int, ids: Ids, vectors: Vectors | None) -> ScopeIndex:
        with self._count:
            self.calls.append(len(ids))
            self._running += 1
            self.most_at_once = max(self.most_at_once, self._running)
        try:
            # The timeout only keeps a failing test from hanging the run.
            assert self.release.wait(timeout=120)
            return ScopeIndex.build(dimension, ids, vectors)
        finally:
            with self._count:
                self._running -= 1


@pytest.fixture
def builder(monkeypatch: pytest.MonkeyPatch) -> Iterator[GatedBuilder]:
    monkeypatch.setattr(memory.recall.index, "HNSW_FROM", GRAPH_FROM)
    gated = GatedBuilder()
    yield gated
    gated.release.set()


@pytest.fixture
async def sqlite_store(tmp_path: Path) -> AsyncIterator[Store]:
    store = await Store.open(tmp_path / "kizuna.sqlite3")
    yield store
    await store.close()


async def fill(store: Storage, scope: str, vectors: Vectors) -> dict[int, Vectors]:
    return {await store.add_memory(new_memory(scope, v)): v for v in vectors}


def exact(memories: dict[int, Vectors], query: Vectors, k: int) -> list[int]:
    """The k ids nearest `query` by inner product, as numpy sees it."""
    ids = list(memories)
    scores = np.stack([memories[i] for i in ids]) @ query
    return [ids[j] for j in np.argsort(-scores, kind="stable")[:k]]


async def found(cache: IndexCache, scope: str, query: Vectors, k: int = 10) -> list[int]:
    search = await cache.searcher(scope, EMBEDDER, DIMENSION)
    return [i for i, _ in await search.search(query, k)]


async def test_a_recall_during_the_build_is_exact_and_the_graph_takes_what_changed_meanwhile(
    sqlite_store: Store, builder: GatedBuilder, tmp_path: Path
) -> None:
    rng = np.random.default_rng(7)
    a = await fill(sqlite_store, "a", unit_vectors(rng, 60))
    b = await fill(sqlite_store, "b", unit_vectors(rng, 30))
    cache = IndexCache(tmp_path / "index", sqlite_store, builder=builder)
    queries = unit_vectors(rng, 6)

    for query in queries:  # answered while the graph is not built: exactly
        assert await found(cache, "a", query) == exact(a, query, 10)
        assert await found(cache, "b", query) == exact(b, query, 10)  # a wall either way
    index = cache.open_index("a", EMBEDDER)
    assert index is not None and index.building and builder.calls == [60]

    # Meanwhile: a memory added, one forgotten, one embedded again.
    added = queries[0]
    [new] = await fill(sqlite_store, "a", added[None, :])
    await cache.added("a", EMBEDDER, [new], [added])
    forgotten = exact(a, queries[1], 1)[0]
    await sqlite_store.delete_memories("a", [forgotten])
    await cache.removed("a", EMBEDDER, [forgotten])
    again = exact(a, queries[2], 1)[0]
    moved = -queries[2]
    await sqlite_store.set_embeddings("a", EMBEDDER, [(again, moved)])
    await cache.added("a", EMBEDDER, [again], [moved])
    now = {i: v for i, v in a.items() if i != forgotten} | {new: added, again: moved}

    for query in queries:
        assert await found(cache, "a", query) == exact(now, query, 10)
    search = await cache.searcher("a", EMBEDDER, DIMENSION)
    scores = await search.scores(queries[3], [new, forgotten, again])
    assert set(scores) == {new, again}
    assert scores[again] == pytest.approx(float(moved @ queries[3]), abs=1e-5)
    assert set(await search.vectors([forgotten, new])) == {new}
    assert builder.calls == [60]  # not started again by the searches

    builder.release.set()
    await cache.built()
    assert cache.open_index("a", EMBEDDER) is index  # the same index, now the graph
    assert index.hnsw and not index.building and builder.calls == [60]
    assert forgotten in index.tombstones and forgotten not in index.live
    assert index.live == set(now)
    assert await found(cache, "a", queries[0], 1) == [new]
    assert await found(cache, "a", -queries[2], 1) == [again]
    assert forgotten not in await found(cache, "a", queries[1], 61)
    assert await found(cache, "b", queries[3]) == exact(b, queries[3], 10)

    # Written once it took over, with no forgotten vector in the file.
    assert await cache.flush() == 2  # its graph, and b's new index
    data = index_path(tmp_path / "index", "a", EMBEDDER).read_bytes()
    assert a[forgotten].tobytes() not in data and added.tobytes() in data
    assert ScopeIndex.deserialize(data).live == set(now)


async def test_a_scope_whose_graph_is_built_stays_open_and_counts_both_copies(
    sqlite_store: Store, builder: GatedBuilder, tmp_path: Path
) -> None:
    """Its budget counts the vectors read and the graph the thread builds from them; evicting
    it would give nothing back, so the others go; once the graph takes over it may go too,
    saved."""
    rng = np.random.default_rng(8)
    await fill(sqlite_store, "a", unit_vectors(rng, 60))
    for scope in ("b", "c"):
        await fill(sqlite_store, scope, unit_vectors(rng, 5))
    cache = IndexCache(tmp_path / "index", sqlite_store, budget=Budget(1), builder=builder)
    query = unit_vectors(rng, 1)[0]
    await found(cache, "a", query)
    index = cache.open_index("a", EMBEDDER)
    assert index is not None and index.building
    assert index.nbytes >= 60 * DIMENSION * 4 * 2 and cache.open_bytes >= index.nbytes
    await found(cache, "b", query)
    await found(cache, "c", query)
    assert cache.open_index("a", EMBEDDER) is index  # stayed, being built
    assert ("b", EMBEDDER) not in cache  # went in its place

    builder.release.set()
    await cache.built()
    await cache.flush()  # (an index let go is saved in the background)
    assert index.hnsw and cache.open_index("a", EMBEDDER) is None  # evicted, saved
    assert ScopeIndex.deserialize(index_path(tmp_path / "index", "a", EMBEDDER).read_bytes()).hnsw
    assert cache.open_bytes < index.nbytes


async def test_a_scope_changed_elsewhere_during_its_build_is_built_again_after_it(
    sqlite_store: Store, builder: GatedBuilder, tmp_path: Path
) -> None:
    """Dropped (another process wrote to it), the graph under way is stale: thrown away when
    done. The scope read again is searched exactly, and its own graph is built once the
    first build's thread is done, never two at once."""
    rng = np.random.default_rng(9)
    a = await fill(sqlite_store, "a", unit_vectors(rng, 60))
    cache = IndexCache(tmp_path / "index", sqlite_store, builder=builder)
    query = unit_vectors(rng, 1)[0]
    await found(cache, "a", query)
    first = cache.open_index("a", EMBEDDER)

    more = await fill(sqlite_store, "a", query[None, :])  # written by another process
    cache.drop("a", EMBEDDER)
    assert await found(cache, "a", query) == exact(a | more, query, 10)
    second = cache.open_index("a", EMBEDDER)
    assert second is not None and second is not first and second.building
    assert builder.calls == [60]  # the second waits for the first's thread

    builder.release.set()
    await cache.built()
    assert builder.calls == [60, 61] and builder.most_at_once == 1
    assert first is not None and first.building  # thrown away
    assert cache.open_index("a", EMBEDDER) is second and second.hnsw
    assert await found(cache, "a", query, 1) == list(more)


async def test_two_large_scopes_graphs_are_built_one_after_the_other(
    sqlite_store: Store, builder: GatedBuilder, tmp_path: Path
) -> None:
    """Each graph holds its copy beside the vectors and takes a core: the process builds one
    at a time, and the scope waiting its turn is searched exactly meanwhile."""
    rng = np.random.default_rng(11)
    a = await fill(sqlite_store, "a", unit_vectors(rng, 60))
    c = await fill(sqlite_store, "c", unit_vectors(rng, 70))
    cache = IndexCache(tmp_path / "index", sqlite_store, builder=builder)
    query = unit_vectors(rng, 1)[0]
    assert await found(cache, "a", query) == exact(a, query, 10)
    assert await found(cache, "c", query) == exact(c, query, 10)
    assert builder.calls == [60]  # c waits for a's turn to end

    builder.release.set()
    await cache.built()
    assert builder.calls == [60, 70] and builder.most_at_once == 1
    for scope in ("a", "c"):
        index = cache.open_index(scope, EMBEDDER)
        assert index is not None and index.hnsw


async def test_a_failed_build_is_logged_and_the_scope_read_again_next_time(
    sqlite_store: Store, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(memory.recall.index, "HNSW_FROM", GRAPH_FROM)
    rng = np.random.default_rng(10)
    a = await fill(sqlite_store, "a", unit_vectors(rng, 60))
    calls: list[int] = []

    def failing(dimension: int, ids: Ids, vectors: Vectors | None) -> ScopeIndex:
        calls.append(len(ids))
        if len(calls) == 1:
            raise MemoryError
        return ScopeIndex.build(dimension, ids, vectors)

    cache = IndexCache(tmp_path / "index", sqlite_store, builder=failing)
    query = unit_vectors(rng, 1)[0]
    assert await found(cache, "a", query) == exact(a, query, 10)
    await cache.built()
    assert cache.open_index("a", EMBEDDER) is None
    assert await found(cache, "a", query) == exact(a, query, 10)
    await cache.built()
    index = cache.open_index("a", EMBEDDER)
    assert calls == [60, 60] and index is not None and index.hnsw


async def test_a_scope_s_vectors_are_read_a_slice_at_a_time_whole_and_in_order(
    open_store: StoreOpener, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(memory.storage.embeddings, "VECTOR_SLICE", 4)
    store = await open_store(tmp_path / "kizuna.sqlite3")
    try:
        rng = np.random.default_rng(11)
        a = await fill(store, "a", unit_vectors(rng, 11))  # two whole slices and a part
        await fill(store, "b", unit_vectors(rng, 3))
        await store.add_memory(new_memory("a", None))
        await store.add_memory(new_memory("a", unit_vectors(rng, 1)[0], "another"))
        more = await fill(store, "a", unit_vectors(rng, 1))
        ids, vectors = await store.embeddings("a", EMBEDDER)
        expected = a | more
        assert ids.tolist() == sorted(expected) and vectors is not None
        assert vectors.dtype == np.float32 and vectors.flags.c_contiguous
        assert np.array_equal(vectors, np.stack([expected[i] for i in sorted(expected)]))
        none, no_vectors = await store.embeddings("a", "none such")
        assert len(none) == 0 and no_vectors is None

        assert isinstance(store, Store | PgStore)
        listing = store._all

        async def one_unlisted(sql: str, params: Sequence[object] = ()) -> list[Any]:
            rows = await listing(sql, params)
            if sql.startswith("SELECT id FROM"):  # one committed after the listing
                del rows[6]
            return rows

        monkeypatch.setattr(store, "_all", one_unlisted)
        ids, grown = await store.embeddings("a", EMBEDDER)
        assert grown is not None and np.array_equal(grown, vectors)
        assert ids.tolist() == sorted(expected)
    finally:
        await store.close()


async def test_the_stored_vectors_of_some_memories_are_their_scope_s_and_embedder_s(
    open_store: StoreOpener, tmp_path: Path
) -> None:
    """What an index reads of the memories another process stored or embedded again."""
    store = await open_store(tmp_path / "kizuna.sqlite3")
    try:
        rng = np.random.default_rng(12)
        a = await fill(store, "a", unit_vectors(rng, 5))
        b = await fill(store, "b", unit_vectors(rng, 2))
        bare = await store.add_memory(new_memory("a", None))
        another = await store.add_memory(new_memory("a", unit_vectors(rng, 1)[0], "another"))
        found = await store.stored_vectors("a", EMBEDDER, [*a, *b, bare, another, 10_000])
        assert sorted(found) == sorted(a)
        for memory_id, vector in a.items():
            assert found[memory_id].dtype == np.float32
            np.testing.assert_array_equal(found[memory_id], vector)
    finally:
        await store.close()


async def test_an_open_index_follows_what_another_process_stored_and_deleted(
    sqlite_store: Store, tmp_path: Path
) -> None:
    """Read in, not rebuilt; its file, stale, goes at once and is written again when saved; a
    memory stored there without a vector has the index dropped (reopened, it embeds it)."""
    rng = np.random.default_rng(13)
    a = list(await fill(sqlite_store, "a", unit_vectors(rng, 6)))
    cache = IndexCache(tmp_path / "index", sqlite_store)
    index = await cache.get("a", EMBEDDER, DIMENSION)
    path = index_path(tmp_path / "index", "a", EMBEDDER)
    assert await cache.flush() == 1 and path.exists()

    more = await fill(sqlite_store, "a", unit_vectors(rng, 2))  # as another process would
    await cache.stored_elsewhere("a", EMBEDDER, list(more))
    assert set(more) <= index.live and not path.exists()
    moved = unit_vectors(rng, 1)[0]
    await sqlite_store.set_embeddings("a", EMBEDDER, [(a[2], moved)])
    await cache.stored_elsewhere("a", EMBEDDER, [a[2]])
    np.testing.assert_allclose(index.vectors([a[2]])[a[2]], moved, rtol=1e-6)
    assert await cache.flush() == 1 and path.exists()

    await sqlite_store.delete_memories("a", a[:2])
    await cache.removed_elsewhere("a", EMBEDDER, a[:2])
    assert not set(a[:2]) & index.live and not path.exists()
    await cache.stored_elsewhere("a", EMBEDDER, a[:1])  # heard late: gone since
    assert cache.open_index("a", EMBEDDER) is index and cache.rebuilds == 1
    assert await cache.flush() == 1
    assert ScopeIndex.deserialize(path.read_bytes()).live == index.live

    bare = await sqlite_store.add_memory(new_memory("a", None))
    await cache.stored_elsewhere("a", EMBEDDER, [bare])
    assert cache.open_index("a", EMBEDDER) is None
