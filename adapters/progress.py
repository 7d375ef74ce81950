"""The progress bar of a re-embedding of the memory bank (after a change of embedder), drawn on
stderr while the bot runs: `kizuna run` and `kizuna chat` pass it to the scheduler."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Never

from tqdm import tqdm

__all__ = ["embedding_bar"]


def embedding_bar(embedder: str) -> Callable[[int, int], None]:
    """A (done, total) callback that opens a bar on its first call and closes it when done."""
    bars: list[tqdm[Never]] = []

    def progress(done: int, total: int) -> None:
        if not bars:
            desc = f"re-embedding memories with {embedder} (recall by words meanwhile)"
            bars.append(tqdm(total=total, unit="memory", desc=desc, file=sys.stderr))
        bar = bars[0]
        bar.total = total
        bar.n = done
        bar.refresh()
        if done >= total:
            bar.close()

    return progress
