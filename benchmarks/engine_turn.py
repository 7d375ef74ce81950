"""What one turn costs the host, apart from the model: engine latency, snapshot time, model
calls and prompt tokens per turn, for each shipped persona, with the offline model.

    python benchmarks/engine_turn.py [--turns 200]

The offline model answers in microseconds, so the latency measured here is Kizuna's own:
prompt assembly, session bookkeeping and the SQLite snapshot. Never run by CI.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from adapters.console import PLATFORM as CONSOLE
from bot.config import Config
from bot.events import ChatEvent
from bot.persona.file import PersonaLibrary
from bot.platforms import Platforms
from bot.runtime.assemble import load_personas, open_runtime
from memory.clock import FakeClock

LINES = [
    "hello again!",
    "my sister Aiko is visiting next week and I'm nervous about it",
    "we used to fight a lot as kids, but I think it's different now",
    "anyway, what did you do today?",
    "I finally finished the book you recommended, the ending made me cry",
    "我今天去公园散步了，看到好多樱花",
]


async def _no_ollama(host: str) -> list[str]:
    return []


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def bench(persona_name: str, turns: int, data_dir: Path) -> dict[str, float]:
    config = Config(data_dir=str(data_dir))
    personas = load_personas(PersonaLibrary.default(Path.cwd()), [persona_name])
    clock = FakeClock(datetime(2026, 11, 1, 9, 0, tzinfo=UTC))
    runtime = await open_runtime(
        config, personas, {}, platforms=Platforms([CONSOLE]), clock=clock, seed=1, probe=_no_ollama
    )
    engine, sessions = runtime.engine, runtime.engine.sessions
    handle_ms: list[float] = []
    save_ms: list[float] = []
    for i in range(turns):
        clock.advance(seconds=20)  # a lively chat: never idle long enough to close
        event = ChatEvent(
            platform="console",
            bot_id="bench",
            persona=persona_name,
            chat_id="",
            channel_id="bench",
            user_id="bench",
            user_name="Bench",
            is_dm=True,
            text=LINES[i % len(LINES)],
            timestamp=clock.now(),
        )
        start = time.perf_counter()
        await engine.handle(event)
        handle_ms.append((time.perf_counter() - start) * 1000)
        await engine.drain()  # the state update that follows a reply (dungeon master)
        for session in sessions.all():
            session.touch()  # handle saved it already: what one more save of it costs
        start = time.perf_counter()
        await sessions.save_dirty()
        save_ms.append((time.perf_counter() - start) * 1000)
    usage = engine.models.usage
    calls = sum(u.calls for u in usage.values())
    prompt_tokens = sum(u.prompt_tokens for u in usage.values())
    await runtime.close()
    return {
        "handle_p50": statistics.median(handle_ms),
        "handle_p95": _pct(handle_ms, 95),
        "save_p50": statistics.median(save_ms),
        "save_last": save_ms[-1],
        "calls_per_turn": calls / turns,
        "prompt_tokens_per_turn": prompt_tokens / turns,
        "db_kib": (data_dir / "kizuna.sqlite3").stat().st_size / 1024,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()
    print(f"{args.turns} turns per persona, offline model")
    print(
        "| persona | handle p50 ms | handle p95 ms | snapshot p50 ms | snapshot at end ms "
        "| model calls/turn | prompt tokens/turn |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in ("miao", "monikai", "dungeon_master"):
        with tempfile.TemporaryDirectory() as tmp:
            r = await bench(name, args.turns, Path(tmp))
        print(
            f"| {name} | {r['handle_p50']:.2f} | {r['handle_p95']:.2f} | {r['save_p50']:.2f} "
            f"| {r['save_last']:.2f} | {r['calls_per_turn']:.1f} "
            f"| {r['prompt_tokens_per_turn']:.0f} |"
        )


if __name__ == "__main__":
    asyncio.run(main())
