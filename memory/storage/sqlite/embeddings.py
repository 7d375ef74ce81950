"""Embeddings (memory.storage.MemoryStore): kept in the memories table, tagged with the
embedder that made them; and the cache of embeddings by (embedder, text hash), so the same
text is never paid for twice."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memory.records import IdDigest, Memory, Vectors
from memory.storage.embeddings import Embeddings
from memory.storage.rows import MEMORY_COLUMNS, memory_row, vector_bytes
from memory.storage.sqlite.base import CHUNK, SqliteBase, serialised
from memory.storage.statements import placeholders

__all__ = ["SqliteEmbeddings"]


class SqliteEmbeddings(SqliteBase, Embeddings):
    """The memories' vectors and the embedding cache."""

    async def unembedded(self, scope: str, embedder: str) -> list[Memory]:
        rows = await self._all(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE scope = ?"
            " AND (embedder IS NOT ? OR embedding IS NULL) ORDER BY id",
            (scope, embedder),
        )
        return [memory_row(r) for r in rows]

    @serialised
    async def set_embeddings(
        self, scope: str, embedder: str, items: Sequence[tuple[int, Vectors]]
    ) -> None:
        await self._db.executemany(
            "UPDATE memories SET embedding = ?, embedder = ? WHERE scope = ? AND id = ?",
            [(vector_bytes(vector), embedder, scope, memory_id) for memory_id, vector in items],
        )
        await self._db.commit()

    async def embedding_digest(self, scope: str, embedder: str) -> IdDigest:
        row = await self._one(
            "SELECT count(*), total((id * 2654435761) % 4294967296) FROM memories"
            " WHERE scope = ? AND embedder = ? AND embedding IS NOT NULL",
            (scope, embedder),
        )
        assert row is not None
        return IdDigest(int(row[0]), int(row[1]))

    async def stored_vectors(
        self, scope: str, embedder: str, ids: Sequence[int]
    ) -> dict[int, Vectors]:
        rows = await self._all_in(
            lambda marks: (
                "SELECT id, embedding FROM memories WHERE scope = ? AND embedder = ?"
                f" AND embedding IS NOT NULL AND id IN ({marks})"
            ),
            (scope, embedder),
            list(dict.fromkeys(int(i) for i in ids)),
        )
        return {int(r[0]): np.frombuffer(r[1], dtype=np.float32).copy() for r in rows}

    @serialised
    async def forget_cached(self, keys: Sequence[bytes]) -> None:
        unique = list(dict.fromkeys(keys))
        dropped = 0
        for start in range(0, len(unique), CHUNK):
            chunk = unique[start : start + CHUNK]
            cur = await self._db.execute(
                f"DELETE FROM embedding_cache WHERE text_hash IN ({placeholders(len(chunk))})",
                chunk,
            )
            dropped += cur.rowcount
        await self._db.commit()
        if dropped:
            await self._scrub(words=False)

    async def cached_embeddings(self, embedder: str, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        rows = await self._all_in(
            lambda marks: (
                "SELECT text_hash, vector FROM embedding_cache"
                f" WHERE embedder = ? AND text_hash IN ({marks})"
            ),
            (embedder,),
            list(dict.fromkeys(keys)),
        )
        return {r[0]: r[1] for r in rows}

    @serialised
    async def cache_embeddings(self, embedder: str, items: Sequence[tuple[bytes, bytes]]) -> None:
        await self._db.executemany(
            "INSERT OR REPLACE INTO embedding_cache (embedder, text_hash, vector) VALUES (?, ?, ?)",
            [(embedder, key, vector) for key, vector in items],
        )
        await self._db.commit()
