"""The progress of a re-embedding of the memory bank (after a change of embedder), on stderr
while the bot runs: `kizuna run` and `kizuna chat` pass it to the scheduler. A bar redraws its
line; where someone is typing at a prompt (an interactive chat) that would write over what they
type, so there it is a few whole lines instead."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Never, TextIO

from tqdm import tqdm

__all__ = ["embedding_bar"]


def embedding_bar(
    embedder: str, *, lines: bool = False, out: TextIO | None = None
) -> Callable[[int, int], None]:
    """A (done, total) callback that opens a bar on its first call and closes it when done;
    `lines`: a line at the start, at each quarter and at the end instead."""
    if lines:
        return _quarters(embedder, out or sys.stderr)
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


def _quarters(embedder: str, out: TextIO) -> Callable[[int, int], None]:
    said: list[int] = []  # the quarters said so far

    def progress(done: int, total: int) -> None:
        quarter = 4 if done >= total else 4 * done // max(total, 1)
        if said and quarter <= said[-1]:
            return
        said.append(quarter)
        if not done:
            text = f"re-embedding {total:,} memories with {embedder} (recall by words meanwhile)"
        elif quarter == 4:
            text = f"re-embedding done: {total:,} memories with {embedder}"
        else:
            text = f"re-embedding: {done:,} of {total:,}"
        out.write(f"\n[{text}]\n")
        out.flush()

    return progress
