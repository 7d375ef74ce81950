"""Ninety days of one person's memories under each forgetting policy: is trivia gone, and are
birthdays and often-recalled facts kept?

    python benchmarks/forgetting_sim.py --days 90 --seed 7

Runs the real bank (SQLite in a temporary folder, the hash embedder, a fake clock) once per
policy of `memory.forgetting.POLICIES` (a policy added there is simulated too) and once for
half_life with a persona's `days = 14`. Every day at noon the person says new things:
four pieces of trivia (importance 1), one everyday fact (importance 2), and on the first ten
days a birthday (importance 3, special) and a fact they come back to (importance 2), which is
recalled every 3 to 7 days (seeded) from then on; every fifth day one piece of trivia is said
again in nearly the same words (a near-duplicate, for the prune to merge). At 04:00 each
night the scope is pruned. At the end it counts, by kind, what is left of what is at least 30
days old (birthdays and recalled facts: all of them), the median age at which trivia went, and
the merges. The last line is JSON: those figures by policy.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memory.bank import MemoryBank
from memory.clock import FakeClock
from memory.forgetting import POLICIES, ForgettingPolicy, make_policy
from memory.forgetting.half_life import HalfLife, HalfLifeParams

SCOPE = "pip/console:dm:ann"
START = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
KINDS = ("trivia", "everyday", "birthday", "recalled")
OLD_ENOUGH = timedelta(days=30)  # trivia and everyday facts counted only from this age


@dataclass(slots=True)
class Made:
    kind: str
    at: datetime


@dataclass(slots=True)
class Outcome:
    made: dict[int, Made] = field(default_factory=dict)
    gone: dict[int, datetime] = field(default_factory=dict)
    merges: int = 0


def sentence(rng: random.Random, vocabulary: list[str]) -> str:
    """Words no other memory shares many of, so only the repeats are near-duplicates."""
    return "ann " + " ".join(rng.sample(vocabulary, 12))


async def simulate(policy: ForgettingPolicy, days: int, seed: int) -> Outcome:
    rng = random.Random(seed)
    vocabulary = [f"w{rng.randrange(10**6):06d}" for _ in range(3000)]
    clock = FakeClock(START)
    outcome = Outcome()
    due: dict[int, datetime] = {}  # recalled facts: id -> next recall
    with tempfile.TemporaryDirectory(prefix="kizuna-forgetting-") as folder:
        bank = await MemoryBank.open(Path(folder), "hash", clock, deterministic=True, policy=policy)
        try:
            for day in range(days):
                noon = START + timedelta(days=day)
                clock.advance(noon - clock.now())

                async def say(kind: str, importance: int, category: str, text: str) -> int:
                    mid = await bank.remember(SCOPE, text, importance=importance, category=category)
                    outcome.made[mid] = Made(kind, clock.now())
                    return mid

                trivia = [sentence(rng, vocabulary) for _ in range(4)]
                for text in trivia:
                    await say("trivia", 1, "personal_daily", text)
                await say("everyday", 2, "personal_daily", sentence(rng, vocabulary))
                if day % 5 == 4:
                    await say("trivia", 1, "personal_daily", trivia[0] + " again")
                if day < 10:
                    await say("birthday", 3, "special", sentence(rng, vocabulary) + " birthday")
                    fact = await say("recalled", 2, "work_study", sentence(rng, vocabulary))
                    due[fact] = noon + timedelta(days=rng.uniform(3, 7))
                clock.advance(hours=6)
                recall = [mid for mid, at in due.items() if at <= clock.now()]
                live = {m.id for m in await bank.store.get_memories(SCOPE, recall)}
                await bank.reinforce(SCOPE, sorted(live))
                for mid in recall:
                    due[mid] = clock.now() + timedelta(days=rng.uniform(3, 7))
                clock.advance(hours=10)  # 04:00: the night's prune
                now = clock.now()
                _, forgotten = await bank.prune(SCOPE, now, day=now.date(), seed=seed)
                for mid, reason in forgotten:
                    outcome.gone[mid] = now
                    outcome.merges += reason.startswith("merged into")
        finally:
            await bank.close()
    return outcome


def figures(outcome: Outcome, end: datetime) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for kind in KINDS:
        counted = [
            mid
            for mid, made in outcome.made.items()
            if made.kind == kind
            and (kind in ("birthday", "recalled") or end - made.at >= OLD_ENOUGH)
        ]
        kept = [mid for mid in counted if mid not in outcome.gone]
        out[f"{kind}_kept"] = round(len(kept) / max(len(counted), 1), 3)
    ages = [
        (outcome.gone[mid] - made.at) / timedelta(days=1)
        for mid, made in outcome.made.items()
        if made.kind == "trivia" and mid in outcome.gone
    ]
    out["trivia_median_days"] = round(statistics.median(ages), 1) if ages else None
    out["merges"] = outcome.merges
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    runs: dict[str, ForgettingPolicy] = {name: make_policy(name) for name in POLICIES}
    runs["half_life (days = 14)"] = HalfLife(HalfLifeParams(days=14))
    end = START + timedelta(days=args.days, hours=16)
    results: dict[str, dict[str, float | None]] = {}
    header = ["policy", *(f"{k} kept" for k in KINDS), "trivia median days", "merges"]
    print(" | ".join(header))
    for name, policy in runs.items():
        got = figures(await simulate(policy, args.days, args.seed), end)
        results[name] = got
        row = [name, *(f"{got[f'{k}_kept'] or 0:.0%}" for k in KINDS)]
        median = got["trivia_median_days"]
        print(" | ".join([*row, "-" if median is None else f"{median}", f"{got['merges']}"]))
    print(json.dumps({"days": args.days, "seed": args.seed, "policies": results}))


if __name__ == "__main__":
    asyncio.run(main())
