"""The dense half of recall behind one seam, `DenseIndex`, with three implementations:

- memory.recall.index.IndexCache: FAISS indexes, one per (scope, embedder), derived from the store's
  embeddings, kept in memory and in files (SQLite; PostgreSQL without pgvector);
- `ServerIndex`: the store searches its own embeddings (PostgreSQL with pgvector, an HNSW
  index in the server). Nothing is on disk here and nothing goes stale: what another process
  writes is found by the next search;
- `SizedIndex` (PostgreSQL with pgvector): the server's search for large scopes, FAISS for
  the others.

memory/recall/derived.py tells the index what the bank wrote (`added`, `removed`) and what other
processes did (`stored_elsewhere`, `removed_elsewhere`); the FAISS indexes follow along, the
server's index already holds it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, runtime_checkable

from memory.records import Vectors

__all__ = ["DenseIndex", "ScopeSearch", "ServerIndex", "SizedIndex", "VectorStore", "server_index"]


class ScopeSearch(Protocol):
    """One scope's dense search, for one embedder."""

    async def search(self, query: Vectors, k: int) -> list[tuple[int, float]]:
        """The k memories nearest `query`, as (id, inner product: cosine), best first."""
        ...

    async def scores(self, query: Vectors, ids: Sequence[int]) -> dict[int, float]:
        """The inner product with `query` of those `ids` that have an embedding (from this
        embedder) in the scope: for candidates that full-text search found."""
        ...

    async def vectors(self, ids: Sequence[int]) -> dict[int, Vectors]:
        """The stored vectors (from this embedder) of those `ids` in the scope that have one:
        for recall's diversity among its few best."""
        ...


class DenseIndex(Protocol):
    def __contains__(self, key: tuple[str, str]) -> bool:
        """Whether (scope, embedder) was made ready by this process (the bank embeds what
        the scope lacks before it first searches it)."""
        ...

    async def searcher(self, scope: str, embedder: str, dimension: int) -> ScopeSearch: ...

    async def added(
        self, scope: str, embedder: str, ids: Sequence[int], vectors: Sequence[Vectors | None]
    ) -> None:
        """The bank stored these memories (parallel `vectors`; None: not embedded yet)."""
        ...

    async def removed(self, scope: str, embedder: str, ids: Sequence[int]) -> None:
        """The bank deleted these memories: nothing derived keeps them, on disk either."""
        ...

    async def stored_elsewhere(self, scope: str, embedder: str, ids: Sequence[int]) -> None:
        """Another process stored vectors for these memories (new ones, or embedded again)."""
        ...

    async def removed_elsewhere(self, scope: str, embedder: str, ids: Sequence[int]) -> None:
        """Another process deleted these memories: nothing derived keeps them, on disk either."""
        ...

    def drop(self, scope: str, embedder: str) -> None:
        """Another process changed the scope in ways not followed: what was derived from it is
        out of date."""
        ...

    def drop_all(self) -> None:
        """Other processes may have changed any scope in ways not followed: `drop` for all."""
        ...

    async def delete_file(self, scope: str, embedder: str) -> None:
        """The scope was wiped or re-embedded: rebuild from the store when next used."""
        ...

    async def flush(self) -> int:
        """Save what changed; returns how many indexes were written."""
        ...


@runtime_checkable
class VectorStore(Protocol):
    """What `ServerIndex` needs of a store (memory.storage.postgres.PgStore)."""

    searches_vectors: bool  # whether it can (PostgreSQL: the vector extension is there)

    async def vector_search(
        self, scope: str, embedder: str, query: Vectors, k: int
    ) -> list[tuple[int, float]]: ...

    async def vector_scores(
        self, scope: str, embedder: str, query: Vectors, ids: Sequence[int]
    ) -> dict[int, float]: ...

    async def stored_vectors(
        self, scope: str, embedder: str, ids: Sequence[int]
    ) -> dict[int, Vectors]: ...


class _ServerSearch:
    __slots__ = ("_embedder", "_scope", "_store")

    def __init__(self, store: VectorStore, scope: str, embedder: str) -> None:
        self._store = store
        self._scope = scope
        self._embedder = embedder

    async def search(self, query: Vectors, k: int) -> list[tuple[int, float]]:
        if k <= 0:
            return []
        return await self._store.vector_search(self._scope, self._embedder, query, k)

    async def scores(self, query: Vectors, ids: Sequence[int]) -> dict[int, float]:
        if not ids:
            return {}
        return await self._store.vector_scores(self._scope, self._embedder, query, ids)

    async def vectors(self, ids: Sequence[int]) -> dict[int, Vectors]:
        if not ids:
            return {}
        return await self._store.stored_vectors(self._scope, self._embedder, ids)


class ServerIndex:
    """The store's own vector search as a DenseIndex: every write is already in it."""

    def __init__(self, store: VectorStore) -> None:
        self.store = store
        self._ready: set[tuple[str, str]] = set()

    def __contains__(self, key: tuple[str, str]) -> bool:
        return key in self._ready

    async def searcher(self, scope: str, embedder: str, dimension: int) -> ScopeSearch:
        self._ready.add((scope, embedder))
        return _ServerSearch(self.store, scope, embedder)

    async def added(
        self, scope: str, embedder: str, ids: Sequence[int], vectors: Sequence[Vectors | None]
    ) -> None:
        # The insert put them in the server's index. One stored without a vector (the
        # embedder was out) is embedded before the scope's next search, as FAISS's reload does.
        if any(v is None for v in vectors):
            self._ready.discard((scope, embedder))

    async def removed(self, scope: str, embedder: str, ids: Sequence[int]) -> None:
        return None  # the delete took them out

    async def stored_elsewhere(self, scope: str, embedder: str, ids: Sequence[int]) -> None:
        # In the server's index already. (One stored there without a vector is embedded by
        # the process that stored it, as after `drop`.)
        return None

    async def removed_elsewhere(self, scope: str, embedder: str, ids: Sequence[int]) -> None:
        return None  # the delete took them out

    def drop(self, scope: str, embedder: str) -> None:
        # Nothing derived to refresh. (Not forgetting the scope is ready: that would make the
        # next recall look for unembedded memories in all of it after every write elsewhere.)
        return None

    def drop_all(self) -> None:
        return None

    async def delete_file(self, scope: str, embedder: str) -> None:
        self._ready.discard((scope, embedder))

    async def flush(self) -> int:
        return 0


class SizedIndex:
    """The server's search for a scope of `server_from` memories or more, where its graph
    pays and no process builds one; FAISS (`local`) below it, where the server would scan the
    scope's rows (a scope that is a small share of a large table finds too few of its own
    along the graph) and an exact search in the process takes a millisecond or two
    (benchmarks/README.md). `size(scope)` counts the scope's memories. What the bank writes
    goes to both: each follows only the scopes it holds."""

    def __init__(
        self,
        server: ServerIndex,
        local: DenseIndex,
        size: Callable[[str], Awaitable[int]],
        server_from: int,
    ) -> None:
        self.server = server
        self.local = local
        self._size = size
        self._from = server_from

    def __contains__(self, key: tuple[str, str]) -> bool:
        return key in self.local or key in self.server

    async def searcher(self, scope: str, embedder: str, dimension: int) -> ScopeSearch:
        if await self._size(scope) >= self._from:
            return await self.server.searcher(scope, embedder, dimension)
        return await self.local.searcher(scope, embedder, dimension)

    async def added(
        self, scope: str, embedder: str, ids: Sequence[int], vectors: Sequence[Vectors | None]
    ) -> None:
        await self.server.added(scope, embedder, ids, vectors)
        await self.local.added(scope, embedder, ids, vectors)

    async def removed(self, scope: str, embedder: str, ids: Sequence[int]) -> None:
        await self.local.removed(scope, embedder, ids)

    async def stored_elsewhere(self, scope: str, embedder: str, ids: Sequence[int]) -> None:
        await self.local.stored_elsewhere(scope, embedder, ids)

    async def removed_elsewhere(self, scope: str, embedder: str, ids: Sequence[int]) -> None:
        await self.local.removed_elsewhere(scope, embedder, ids)

    def drop(self, scope: str, embedder: str) -> None:
        self.local.drop(scope, embedder)

    def drop_all(self) -> None:
        self.local.drop_all()

    async def delete_file(self, scope: str, embedder: str) -> None:
        await self.server.delete_file(scope, embedder)
        await self.local.delete_file(scope, embedder)

    async def flush(self) -> int:
        return await self.local.flush()


def server_index(store: object) -> ServerIndex | None:
    """A ServerIndex over `store` if it searches vectors itself, else None (FAISS's turn)."""
    if isinstance(store, VectorStore) and store.searches_vectors:
        return ServerIndex(store)
    return None
