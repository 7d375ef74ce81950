"""benchmarks/scope_prune.py at a tiny size: one scope pruned on SQLite, and the same scope on
the throwaway PostgreSQL of the other tests (skipped where none can start), forgets and merges
the same memories on every run and on both stores."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.fakes.postgres import PostgresServer

sys.path.append(str(Path(__file__).resolve().parent.parent / "benchmarks"))

import scope_prune  # a script in benchmarks/, found through the path above

MEMORIES = 400


def figures(*argv: str) -> dict[str, Any]:
    lines: list[str] = []
    tiny = ("--memories", str(MEMORIES), "--runs", "2", "--twins", "0.3", "--later", "120")
    scope_prune.run([*tiny, *argv], report=lines.append)
    size = json.loads(lines[-1])["sizes"][0]
    assert isinstance(size, dict)
    return size


def test_a_scope_prunes_alike_on_every_run_and_store(postgres_server: PostgresServer) -> None:
    on_sqlite = figures("--store", "sqlite")
    assert isinstance(on_sqlite["digest"], str)  # one digest: every run decided the same
    assert 0 < on_sqlite["merged"] < on_sqlite["forgotten"] < MEMORIES
    assert on_sqlite["kept"] == MEMORIES - on_sqlite["forgotten"]
    assert on_sqlite["prune_s_median"] > 0 and on_sqlite["stall_max_ms"] >= 0
    on_postgres = figures("--store", "postgres", "--dsn", postgres_server.dsn())
    for same in ("digest", "forgotten", "merged", "kept"):
        assert on_postgres[same] == on_sqlite[same], same
    # Another process with the scope in use follows the prune: nothing of it rebuilt.
    assert "other_recall_ms" not in on_sqlite
    assert on_postgres["other_rebuilds"] == 0 and on_postgres["other_back_ms"] > 0
