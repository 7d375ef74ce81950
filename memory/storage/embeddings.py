"""What both stores read of the memories' vectors the same way: a scope's vectors, for the
dense index to be made from, and the scopes whose vectors are not all made."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import numpy.typing as npt

from memory.records import Vectors
from memory.storage.statements import Statements

__all__ = ["VECTOR_SLICE", "Embeddings"]

# Rows read at a time into a scope's array: each slice's bytes joined and copied on the event
# loop take about a millisecond at 512 dimensions.
VECTOR_SLICE = 2_048

_WHERE = "WHERE scope = ? AND embedder = ? AND embedding IS NOT NULL"

# The scopes with a memory of another embedder, or of none, or without a vector: each part a
# range of an index (memories_by_embedder, memories_vectorless), none reading the rows, so
# nothing when every memory has its vector (a whole table read at each start, before).
_UNEMBEDDED_SCOPES = (
    "SELECT scope FROM memories WHERE embedder < ?"
    " UNION SELECT scope FROM memories WHERE embedder > ?"
    " UNION SELECT scope FROM memories WHERE embedder IS NULL"
    " UNION SELECT scope FROM memories WHERE embedding IS NULL ORDER BY 1"
)


class Embeddings(Statements):
    """The scope's vectors, the SQL the same in either dialect."""

    async def embeddings(
        self, scope: str, embedder: str
    ) -> tuple[npt.NDArray[np.int64], Vectors | None]:
        # A slice at a time into one array: rows of the whole scope at once held about as much
        # again as the vectors, as Python objects, on top of the array made from them.
        listed = await self._listed(scope, embedder)
        ids = np.empty(len(listed), dtype=np.int64)
        matrix: Vectors | None = None
        filled = 0
        async for got, vectors in self._slices(scope, embedder, listed):
            if matrix is None:
                matrix = np.empty((len(ids), vectors.shape[1]), dtype=np.float32)
            if filled + len(got) > len(ids):  # one committed since, with an id in the range
                ids = np.resize(ids, filled + len(got))
                matrix = np.resize(matrix, (filled + len(got), matrix.shape[1]))
            ids[filled : filled + len(got)] = got
            matrix[filled : filled + len(got)] = vectors
            filled += len(got)
        if matrix is None:
            return ids[:0], None
        return ids[:filled], matrix[:filled]

    async def unembedded_scopes(self, embedder: str) -> list[str]:
        return [r[0] for r in await self._all(_UNEMBEDDED_SCOPES, (embedder, embedder))]

    async def embedding_slices(
        self, scope: str, embedder: str
    ) -> AsyncIterator[tuple[npt.NDArray[np.int64], Vectors]]:
        async for part in self._slices(scope, embedder, await self._listed(scope, embedder)):
            yield part

    async def _listed(self, scope: str, embedder: str) -> list[Any]:
        return await self._all(f"SELECT id FROM memories {_WHERE} ORDER BY id", (scope, embedder))

    async def _slices(
        self, scope: str, embedder: str, listed: list[Any]
    ) -> AsyncIterator[tuple[npt.NDArray[np.int64], Vectors]]:
        # The slices are ranges of the ids listed first, not `id > ? ORDER BY id LIMIT ?`: for
        # that PostgreSQL walked the primary key, every scope's rows, filtering out the others.
        for start in range(0, len(listed), VECTOR_SLICE):
            first, last = listed[start][0], listed[min(start + VECTOR_SLICE, len(listed)) - 1][0]
            rows = await self._all(
                f"SELECT id, embedding FROM memories {_WHERE} AND id >= ? AND id <= ? ORDER BY id",
                (scope, embedder, first, last),
            )
            if rows:  # (unless deleted since they were listed)
                joined = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
                yield np.array([r[0] for r in rows], dtype=np.int64), joined.reshape(len(rows), -1)
