"""Recall quality on conversations: R@1, R@5 and R@10 by question category.

    python benchmarks/recall_quality.py ../shared/data/locomo-dev.json \
        benchmarks/data/zh_conversation.json [--embedder auto]

Each file is LoCoMo's format, or the Chinese set's (benchmarks/data/zh_conversation.json:
sessions of [speaker, text] turns, questions by category with a `paraphrase` flag, which gets
a row of its own); each is scored on its own.

For each conversation a fresh bank (deterministic: no retrieval failure) remembers every turn
in order (speaker, the session's date-time as `when`, an image's caption appended), then every
question of categories 1-4 goes through `recall` with `now` = the last session's time. A
question's recall@k is the share of its evidence turns among the top k (LoCoMo's definition),
averaged over questions. Malformed evidence ids ("D8:6; D9:17", "D:11:26", "D30:05") are split
and normalised; ids not in the conversation are dropped, and a question left with none is
skipped. Then OFF_TOPIC cues (questions about nothing any conversation holds, in English and
Chinese) go through the same recall: how many bring anything to mind is the relevance floor's
figure (`off_topic_recalled`, of `off_topic` cues). The last line of output is JSON with the
headline figures (one file: its figures; several: by file name).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memory.bank import MemoryBank
from memory.clock import FakeClock

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
ZH_CATEGORIES = {1: "plain", 2: "date", 3: "others"}
PARAPHRASE = "in other words"
KS = (1, 5, 10)
OFF_TOPIC = (
    "What's the capital of France?",
    "How do I reverse a linked list in Python?",
    "What is the boiling point of water at sea level?",
    "Who won the 1998 World Cup?",
    "What's the square root of 144?",
    "Explain how a TCP handshake works",
    "What is the chemical formula of table salt?",
    "How many moons does Jupiter have?",
    "What's the exchange rate between the yen and the euro?",
    "Translate 'good morning' into German",
    "What year did the Roman Empire fall?",
    "How does a transistor amplify a signal?",
    "What's the best way to compile a Linux kernel?",
    "Who wrote the Communist Manifesto?",
    "What is the speed of light in a vacuum?",
    "How do I fix a segmentation fault in C?",
    "What is the GDP of Brazil?",
    "Define photosynthesis",
    "What's the tallest mountain in Africa?",
    "How are interest rates set by a central bank?",
    "法国的首都是哪里？",
    "怎么用Python反转链表？",
    "水的沸点是多少度？",
    "一九九八年世界杯谁赢了？",
    "光速是多少？",
    "木星有几颗卫星？",
    "巴西的国内生产总值是多少？",
    "食盐的化学式是什么？",
    "罗马帝国哪一年灭亡？",
    "怎么编译Linux内核？",
)
SCOPE = "bench/locomo"


def session_time(text: str) -> datetime:
    """ "1:56 pm on 8 May, 2023" -> an aware datetime."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def evidence_ids(raw: list[str], known: set[str]) -> set[str]:
    found: set[str] = set()
    for item in raw:
        for part in re.split(r"[;,\s]+", item):
            match = re.fullmatch(r"D:?(\d+):0*(\d+)", part.strip())
            if match:
                dia = f"D{int(match.group(1))}:{int(match.group(2))}"
                if dia in known:
                    found.add(dia)
    return found


def sessions(conversation: dict[str, Any]) -> list[tuple[datetime, list[dict[str, Any]]]]:
    numbers = sorted(
        int(m.group(1))
        for key in conversation
        if (m := re.fullmatch(r"session_(\d+)", key)) and conversation[key]
    )
    return [
        (session_time(conversation[f"session_{n}_date_time"]), conversation[f"session_{n}"])
        for n in numbers
    ]


def turn_text(turn: dict[str, Any]) -> str:
    """What a turn says, an image's caption appended."""
    text = str(turn["text"])
    if turn.get("blip_caption"):
        text += f" [image: {turn['blip_caption']}]"
    return text


def from_zh(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The Chinese set as one LoCoMo-format sample (its categories: ZH_CATEGORIES)."""
    conversation: dict[str, Any] = {}
    for n, session in enumerate(data["sessions"], start=1):
        conversation[f"session_{n}_date_time"] = session["date_time"]
        conversation[f"session_{n}"] = [
            {"speaker": speaker, "text": text, "dia_id": f"D{n}:{i}"}
            for i, (speaker, text) in enumerate(session["turns"], start=1)
        ]
    number = {name: k for k, name in ZH_CATEGORIES.items()}
    qa = [
        {
            "question": q["question"],
            "evidence": q["evidence"],
            "category": number[q["category"]],
            "paraphrase": q["paraphrase"],
        }
        for q in data["questions"]
    ]
    return [{"sample_id": "zh", "conversation": conversation, "qa": qa}]


async def remember_conversation(
    bank: MemoryBank, sample: dict[str, Any], scope: str = SCOPE
) -> tuple[dict[int, str], datetime]:
    """Every turn of `sample`'s conversation remembered in order, in `scope`: which turn
    (dia_id) each memory holds, and the last session's time (the bank's clock if none)."""
    by_memory: dict[int, str] = {}
    last = bank.clock.now()
    for when, turns in sessions(sample["conversation"]):
        for turn in turns:
            memory_id = await bank.remember(
                scope, turn_text(turn), speaker=turn["speaker"], when=when
            )
            by_memory[memory_id] = turn["dia_id"]
        last = when
    return by_memory, last


async def evaluate(
    sample: dict[str, Any], embedder: str, folder: Path, categories: dict[int, str] = CATEGORIES
) -> tuple[list[dict[str, Any]], int]:
    """Each question's scores, and how many OFF_TOPIC cues recalled anything."""
    bank = await MemoryBank.open(folder, embedder, FakeClock(), deterministic=True)
    try:
        by_memory, last = await remember_conversation(bank, sample)
        known = set(by_memory.values())
        results = []
        for qa in sample["qa"]:
            category = qa.get("category")
            if category not in categories:
                continue
            evidence = evidence_ids(qa.get("evidence", []), known)
            if not evidence:
                continue
            started = time.perf_counter()
            hits = await bank.recall(SCOPE, str(qa["question"]), k=max(KS), now=last)
            elapsed = time.perf_counter() - started
            ranked = [by_memory[h.id] for h in hits]
            scores = {k: len(evidence & set(ranked[:k])) / len(evidence) for k in KS}
            results.append(
                {
                    "category": categories[category],
                    "paraphrase": qa.get("paraphrase", False),
                    "scores": scores,
                    "seconds": elapsed,
                }
            )
        off_topic = 0
        for cue in OFF_TOPIC:
            off_topic += bool(await bank.recall(SCOPE, cue, k=max(KS), now=last))
        return results, off_topic
    finally:
        await bank.close()


def table(results: list[dict[str, Any]]) -> tuple[str, dict[str, float]]:
    rows = ["| category | questions | R@1 | R@5 | R@10 |", "|---|---:|---:|---:|---:|"]
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for result in results:
        groups[result["category"]].append(result)
        if result["paraphrase"]:
            groups[PARAPHRASE].append(result)
    overall: dict[str, float] = {}
    for name, group in [*sorted(groups.items()), ("overall", results)]:
        means = {k: statistics.fmean(r["scores"][k] for r in group) for k in KS}
        cells = " | ".join(f"{means[k]:.3f}" for k in KS)
        rows.append(f"| {name} | {len(group)} | {cells} |")
        if name == "overall":
            overall = {f"r_at_{k}": round(means[k], 4) for k in KS}
    return "\n".join(rows), overall


async def score(path: Path, embedder: str) -> dict[str, float]:
    raw = json.loads(await asyncio.to_thread(path.read_text, encoding="utf-8"))
    zh = isinstance(raw, dict) and "sessions" in raw
    samples = from_zh(raw) if zh else raw
    categories = ZH_CATEGORIES if zh else CATEGORIES
    results: list[dict[str, Any]] = []
    started = time.perf_counter()
    off_topic = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, sample in enumerate(samples):
            found, off = await evaluate(sample, embedder, Path(tmp) / str(i), categories)
            results.extend(found)
            off_topic += off
            r5 = statistics.fmean(r["scores"][5] for r in found) if found else 0.0
            name = sample.get("sample_id", i)
            print(f"{name}: {len(found)} questions, R@5 {r5:.3f}", file=sys.stderr)
    text, overall = table(results)
    latencies = sorted(r["seconds"] * 1000 for r in results)
    print(f"{path.name}, embedder: {embedder}; {len(samples)} conversations")
    print(text)
    p50 = latencies[len(latencies) // 2]
    total = time.perf_counter() - started
    print(f"recall p50 {p50:.1f} ms (query embedding included); total {total:.0f} s")
    asked = len(OFF_TOPIC) * len(samples)
    print(f"off-topic cues that recalled anything: {off_topic} of {asked}")
    return {
        **overall,
        "questions": len(results),
        "off_topic_recalled": off_topic,
        "off_topic": asked,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, nargs="+", help="LoCoMo-format or Chinese-set files")
    parser.add_argument("--embedder", default="auto", help="auto (default), hash, e5, ...")
    args = parser.parse_args()
    figures = {path.stem: await score(path, args.embedder) for path in args.data}
    print(json.dumps(next(iter(figures.values())) if len(figures) == 1 else figures))


if __name__ == "__main__":
    asyncio.run(main())
