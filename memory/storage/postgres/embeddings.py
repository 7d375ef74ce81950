"""Embeddings (memory.storage.MemoryStore): kept in the memories table, tagged with the
embedder that made them (and, on the pgvector path, in its vector column too); and the cache of
embeddings by (embedder, text hash), so the same text is never paid for twice."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memory.records import IdDigest, Memory, Vectors
from memory.storage.embeddings import Embeddings
from memory.storage.postgres.base import in_lock_order
from memory.storage.postgres.vectors import PgVectors, real_array
from memory.storage.rows import MEMORY_COLUMNS, memory_row, vector_bytes

__all__ = ["PgEmbeddings"]


class PgEmbeddings(PgVectors, Embeddings):
    """The memories' vectors and the embedding cache."""

    async def unembedded(self, scope: str, embedder: str) -> list[Memory]:
        rows = await self._pool.fetch(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE scope = $1"
            " AND (embedder IS DISTINCT FROM $2 OR embedding IS NULL) ORDER BY id",
            scope,
            embedder,
        )
        return [memory_row(r) for r in rows]

    async def set_embeddings(
        self, scope: str, embedder: str, items: Sequence[tuple[int, Vectors]]
    ) -> None:
        ordered = in_lock_order(items)
        if self.searches_vectors and ordered:
            # Made before the vectors go in (so they go into it one by one): after `kizuna
            # memories reindex` under a new embedder, the first recall builds nothing.
            await self._vector_index(embedder, int(np.asarray(ordered[0][1]).size))
        async with self._pool.acquire() as conn, conn.transaction():
            if self.searches_vectors:
                await conn.executemany(
                    "UPDATE memories SET embedding = $1, embedder = $2,"
                    " embedding_v = $5::real[]::vector WHERE scope = $3 AND id = $4",
                    [(vector_bytes(v), embedder, scope, i, real_array(v)) for i, v in ordered],
                )
                return
            await conn.executemany(
                "UPDATE memories SET embedding = $1, embedder = $2 WHERE scope = $3 AND id = $4",
                [
                    (vector_bytes(vector), embedder, scope, memory_id)
                    for memory_id, vector in ordered
                ],
            )

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
