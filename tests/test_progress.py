"""The re-embedding's progress (adapters/command/progress.py): a bar, or whole lines where
someone is typing at a prompt."""

from __future__ import annotations

import io

from adapters.command.progress import embedding_bar


def test_lines_at_the_start_each_quarter_and_the_end() -> None:
    out = io.StringIO()
    progress = embedding_bar("e5", lines=True, out=out)
    for done in range(0, 1001, 10):
        progress(done, 1000)
    said = [line for line in out.getvalue().splitlines() if line]
    assert said == [
        "[re-embedding 1,000 memories with e5 (recall by words meanwhile)]",
        "[re-embedding: 250 of 1,000]",
        "[re-embedding: 500 of 1,000]",
        "[re-embedding: 750 of 1,000]",
        "[re-embedding done: 1,000 memories with e5]",
    ]
    assert all("\r" not in line for line in said)  # nothing redrawn over a prompt


def test_a_short_run_says_where_it_starts_and_ends() -> None:
    out = io.StringIO()
    progress = embedding_bar("hash", lines=True, out=out)
    progress(0, 3)
    progress(3, 3)
    progress(3, 3)  # said once
    assert out.getvalue().count("done") == 1 and out.getvalue().startswith("\n[re-embedding 3")
