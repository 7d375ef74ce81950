"""How fast an embedder is on this machine: load time, cue (query) latency and passage
throughput, over the questions and turns of the Chinese set (and of a LoCoMo file, if given).

    python benchmarks/embedder_speed.py [--embedder e5|hash] [--runs 3] [locomo-dev.json]

Each run embeds every question alone, as recall does (p50 and p95 in ms), then every turn in
batches of 32 (passages a second); the figures are the medians over the runs. The last line of
output is JSON with them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memory.embeddings import E5Embedder, HashEmbedder

ZH = Path(__file__).resolve().parent / "data" / "zh_conversation.json"
PASSAGES = 256  # turns embedded per run


def texts(locomo: Path | None) -> tuple[list[str], list[str]]:
    data = json.loads(ZH.read_text(encoding="utf-8"))
    questions = [q["question"] for q in data["questions"]]
    turns = [f"{speaker}: {text}" for s in data["sessions"] for speaker, text in s["turns"]]
    if locomo is not None:
        for sample in json.loads(locomo.read_text(encoding="utf-8")):
            questions += [str(qa["question"]) for qa in sample["qa"]][:40]
            conversation: dict[str, Any] = sample["conversation"]
            for key, value in conversation.items():
                if key.startswith("session_") and isinstance(value, list):
                    turns += [f"{t['speaker']}: {t['text']}" for t in value]
    return questions, turns[:PASSAGES]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("locomo", type=Path, nargs="?", help="a LoCoMo-format file (optional)")
    parser.add_argument("--embedder", default="e5", choices=("e5", "hash"))
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    questions, turns = texts(args.locomo)
    started = time.perf_counter()
    e5 = E5Embedder() if args.embedder == "e5" else None
    hashed = HashEmbedder()

    def query(text: str) -> object:
        return e5.embed_sync([text], query=True) if e5 else hashed.embed_sync([text])

    def passages(batch: list[str]) -> object:
        return e5.embed_sync(batch) if e5 else hashed.embed_sync(batch)

    query("warm up")
    load = time.perf_counter() - started
    p50s, p95s, rates = [], [], []
    for _ in range(args.runs):
        timings = []
        for question in questions:
            start = time.perf_counter()
            query(question)
            timings.append((time.perf_counter() - start) * 1000)
        timings.sort()
        p50s.append(timings[len(timings) // 2])
        p95s.append(timings[min(len(timings) - 1, int(len(timings) * 0.95))])
        start = time.perf_counter()
        for i in range(0, len(turns), 32):
            passages(turns[i : i + 32])
        rates.append(len(turns) / (time.perf_counter() - start))
    figures = {
        "embedder": args.embedder,
        "load_s": round(load, 3),
        "query_p50_ms": round(statistics.median(p50s), 1),
        "query_p95_ms": round(statistics.median(p95s), 1),
        "passages_per_s": round(statistics.median(rates), 1),
        "queries": len(questions),
        "runs": args.runs,
    }
    print(f"{args.embedder}: load {load:.2f} s; per run p95 {p95s}, passages/s {rates}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
