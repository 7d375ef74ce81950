"""An embedder whose vectors the memory's text states, for tests of recall's ranking."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["FacingE5"]


class FacingE5:
    """An embedder of e5's family (its floors, companion floors and diversity) whose memory
    states its cosine to every cue and one of 9 ways it faces: "..., at 0.90 facing 3". Two
    memories facing different ways are at cosine c1 * c2 to each other, two facing the same
    way nearly 1."""

    name = "e5:facing"
    dimension = 10

    async def start(self) -> None:
        return None

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows = np.zeros((len(texts), self.dimension), np.float32)
        for row, text in zip(rows, texts, strict=True):
            found = re.search(r"at (0\.\d+) facing (\d)", text)
            if found is None:
                raise ValueError(f"no cosine and way in {text!r}")
            cosine = float(found.group(1))
            row[0] = cosine
            row[1 + int(found.group(2))] = math.sqrt(1.0 - cosine * cosine)
        return rows

    async def embed_query(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows = np.zeros((len(texts), self.dimension), np.float32)
        rows[:, 0] = 1.0
        return rows
