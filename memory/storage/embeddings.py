"""What both stores read of the memories' vectors the same way: a scope's vectors, for the
dense index to be made from."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from memory.records import Vectors
from memory.storage.statements import Statements

__all__ = ["VECTOR_SLICE", "Embeddings"]

# Rows read at a time into a scope's array: each slice's bytes joined and copied on the event
# loop take about a millisecond at 512 dimensions.
VECTOR_SLICE = 2_048

_WHERE = "WHERE scope = ? AND embedder = ? AND embedding IS NOT NULL"


class Embeddings(Statements):
    """The scope's vectors, the SQL the same in either dialect."""

    async def embeddings(
        self, scope: str, embedder: str
    ) -> tuple[npt.NDArray[np.int64], Vectors | None]:
        # A slice at a time into one array: rows of the whole scope at once held about as much
        # again as the vectors, as Python objects, on top of the array made from them. The
        # slices are ranges of the ids read first, not `id > ? ORDER BY id LIMIT ?`: for that
        # PostgreSQL walked the primary key, every scope's rows, filtering out the others.
        listed = await self._all(f"SELECT id FROM memories {_WHERE} ORDER BY id", (scope, embedder))
        if not listed:
            return np.zeros(0, dtype=np.int64), None
        ids = np.empty(len(listed), dtype=np.int64)
        matrix: Vectors | None = None
        filled = 0
        for start in range(0, len(listed), VECTOR_SLICE):
            first, last = listed[start][0], listed[min(start + VECTOR_SLICE, len(listed)) - 1][0]
            rows = await self._all(
                f"SELECT id, embedding FROM memories {_WHERE} AND id >= ? AND id <= ? ORDER BY id",
                (scope, embedder, first, last),
            )
            if not rows:  # deleted since they were listed
                continue
            if matrix is None:
                matrix = np.empty((len(ids), len(rows[0][1]) // 4), dtype=np.float32)
            if filled + len(rows) > len(ids):  # one committed since, with an id in the range
                ids = np.resize(ids, filled + len(rows))
                matrix = np.resize(matrix, (filled + len(rows), matrix.shape[1]))
            ids[filled : filled + len(rows)] = [r[0] for r in rows]
            joined = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
            matrix[filled : filled + len(rows)] = joined.reshape(len(rows), -1)
            filled += len(rows)
        if matrix is None:
            return ids[:0], None
        return ids[:filled], matrix[:filled]
