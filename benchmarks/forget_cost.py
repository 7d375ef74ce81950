"""What "forgotten means gone" costs: the time of one `forget` and one `wipe` on SQLite with the
purge (the full-text index merged into one segment, the WAL checkpointed and emptied, the
scope's FAISS index file rewritten), at several bank sizes.

    python benchmarks/forget_cost.py --sizes 1000,10000 --rounds 30

Each size is a fresh data folder holding that many memories, spread over 20 scopes (one
person's share of a shared bot); the FAISS index of the scope forgotten from is open, as it is
after a recall. A forget deletes one memory of that scope by id (`MemoryBank.forget`, the path
of `/forget N` and the inspector's delete); a wipe (`MemoryBank.wipe`, `/wipe`'s memory half)
deletes a whole scope of 20 memories, refilled between rounds outside the timing. The last
line is JSON: the median and p95 milliseconds of each, by size.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from memory.bank import MemoryBank

SCOPES = 20
WIPED = 20  # memories in the scope each wipe round empties


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def _fill(bank: MemoryBank, scope: str, count: int, start: int) -> list[int]:
    return [
        await bank.remember(
            scope, f"memory {start + i}: ann talked about topic {(start + i) % 997}"
        )
        for i in range(count)
    ]


async def measure(size: int, rounds: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="kizuna-forget-") as folder:
        bank = await MemoryBank.open(Path(folder), "hash", deterministic=True)
        try:
            per_scope = size // SCOPES
            ids: dict[str, list[int]] = {}
            for s in range(SCOPES):
                scope = f"pip/console:dm:user{s}"
                ids[scope] = await _fill(bank, scope, per_scope, s * per_scope)
            target = "pip/console:dm:user0"
            await bank.recall(target, "topic 5", k=5, fail=False)  # the index is open
            await bank.flush()
            forgets: list[float] = []
            for memory_id in ids[target][:rounds]:
                started = time.perf_counter()
                await bank.forget(target, memory_id)
                forgets.append((time.perf_counter() - started) * 1000)
            wipes: list[float] = []
            for r in range(rounds):
                scope = f"pip/console:dm:wiped{r}"
                await _fill(bank, scope, WIPED, size + r * WIPED)
                await bank.recall(scope, "topic 5", k=5, fail=False)
                started = time.perf_counter()
                await bank.wipe(scope)
                wipes.append((time.perf_counter() - started) * 1000)
        finally:
            await bank.close()
    return {
        "forget_ms_p50": round(statistics.median(forgets), 2),
        "forget_ms_p95": round(_p95(forgets), 2),
        "wipe_ms_p50": round(statistics.median(wipes), 2),
        "wipe_ms_p95": round(_p95(wipes), 2),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", default="1000,10000", help="memories in the bank, e.g. 1000,10000"
    )
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    for size in (int(s) for s in args.sizes.split(",")):
        results[str(size)] = await measure(size, args.rounds)
        print(f"{size:>7} memories: {results[str(size)]}", flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    asyncio.run(main())
