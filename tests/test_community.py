"""benchmarks/community.py at a tiny size, on the throwaway PostgreSQL of the other tests
(skipped where none can start): it builds its community, warms the server up with two
processes, runs two more against it while the prune and the outreach sender run, and its last
line holds every figure."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np

from memory.embeddings import HashEmbedder
from tests.fakes.factories import base_env
from tests.fakes.postgres import PostgresServer

sys.path.append(str(Path(__file__).resolve().parent.parent / "benchmarks"))

import community  # a script in benchmarks/, found through the path above

ROOT = Path(__file__).resolve().parent.parent
USERS, MEMORIES, PROCESSES = 20, 300, 2


def test_a_tiny_community_reports_every_figure(postgres_server: PostgresServer) -> None:
    sizes = {
        "users": USERS,
        "memories": MEMORIES,
        "contacts": 60,
        "intentions": 30,
        "seconds": 12,
        "rate": 10,
        "processes": PROCESSES,
        "idle-minutes": 0.05,  # conversations close (and are encoded) within the run
        "warm-up": 3,
    }
    argv = [f"--{k}={v}" for k, v in sizes.items()]
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "community.py"),
            *argv,
            "--dsn",
            postgres_server.dsn(),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=base_env(PYTHONPATH=str(ROOT)),
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["vectors"] == "hash"
    assert figures["dense_search"] == ["IndexCache"] * PROCESSES  # FAISS: Debian's server
    assert figures["memories_in_db"] == MEMORIES
    assert figures["db_bytes_per_memory"] > figures["memories_table_bytes_per_memory"] > 0
    assert figures["turns"] > 0 and figures["failed"] == 0
    for name in ("turn_ms", "recall_ms", "turn_ms_during_prune", "turn_ms_outside_prune"):
        assert 0 < figures[name]["p50"] <= figures[name]["p95"] <= figures[name]["p99"], name
    # (A message sent while its sender's turn before is answered joins it: one recall for both.)
    assert figures["recalls"] > 0
    assert figures["prune_done"] and figures["prune_scopes"] == USERS
    assert figures["prune_s"] > 0 and figures["prune_paced_by_scheduler_s"] > 0
    assert figures["outreach_round_ms"]["max"] > 0
    assert figures["outreach_scan_ms"] > 0
    for per_process in ("encoded_per_s", "rss_mb", "peak_rss_mb", "open_s"):
        assert len(figures[per_process]) == PROCESSES, per_process
    assert sum(figures["encoded_per_s"]) > 0
    assert all(mb > 0 for mb in figures["rss_mb"])
    assert set(figures["rows_per_day"]) == set(community.TABLES)
    assert figures["rows_per_day"]["conversations"] > 0
    # The warm-up ran first, on the same database, and did not prune.
    warm_up = figures["warm_up"]
    assert warm_up["seconds"] == 3 and warm_up["turn_ms"]["p50"] > 0
    assert set(warm_up) == {"seconds", *community.WARM_UP_FIGURES}


def test_the_memories_vectors_are_the_embeddings_of_their_texts() -> None:
    """What a cue finds by meaning in the built community is what it would find in memories
    the store embedded itself: each text's vector is the hash embedder's of it."""
    embedder = HashEmbedder()
    pool = community.text_pool(20, random.Random(1), embedder)
    assert pool.vectors.shape == (20, embedder.dimension)
    for text, vector in zip(pool.texts, pool.vectors, strict=True):
        assert np.allclose(vector, embedder.embed_sync([text])[0])
