"""What saving the conversation at hand writes to disk a turn, as conversations grow: LoCoMo's
chats replayed through the session manager, saved as a turn saves them.

    python benchmarks/session_saves.py [../shared/data/locomo-dev.json] [--users 40]
                                       [--store sqlite|postgres] [--dsn postgresql://...]

Each of `--users` private chats replays one of the data set's conversations (in turn), its two
speakers as the user and the persona, a message at a time, all chats interleaved; each message
joins the session and the session is saved (`SessionManager.save`, as a turn saves before the
model and again before the reply goes out). Two ways a conversation goes on:

- closed: each of the data set's sessions is one conversation, archived at its end (an idle
  close): conversations of 20-30 messages;
- folded: one conversation that never goes quiet (a busy group, a long evening), its oldest
  turns folded into the running summary whenever they outgrow the default `fold_tokens`, as
  bot.turn.after does (the summary a fixed 1,500 characters: no model here).

Prints, for each: saves, kilobytes written a save and a save's latency p50 / p95 / p99. On
SQLite what the process wrote to disk (the WAL and the checkpoints' writes into the database,
from /proc/self/io: Linux only); on PostgreSQL (a new database on `--dsn`'s server, or on a
throwaway local one) the WAL the server wrote meanwhile, the conversation's lease included
(taken and given back for each message, as a turn takes it). The last line is one JSON
object. Never run by CI.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

import asyncpg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from recall_latency import fresh_database, postgres_server

from bot.config import EngineConfig
from bot.conversation.sessions import SessionManager, Turn
from bot.turn.after import fold_at
from memory.clock import FakeClock
from memory.storage import Storage
from memory.storage.postgres import PgStore
from memory.storage.sqlite import Store

Mode = Literal["closed", "folded"]
SUMMARY = ("They talked about their week, their plans and the people in their lives. " * 21)[:1500]


def conversations(path: Path) -> list[tuple[str, list[list[dict[str, str]]]]]:
    """Each conversation of the data set: its first speaker (the user), and its sessions'
    messages in order."""
    found = []
    for item in json.loads(path.read_text()):
        talk = item["conversation"]
        numbers = sorted(
            int(key.split("_")[1])
            for key in talk
            if key.startswith("session_") and not key.endswith("date_time")
        )
        found.append((talk["speaker_a"], [talk[f"session_{n}"] for n in numbers]))
    return found


async def written() -> int:
    """Bytes this process has caused to be written to disk."""
    io = await asyncio.to_thread(Path("/proc/self/io").read_text)
    return int(dict(line.split(": ") for line in io.splitlines())["write_bytes"])


@contextlib.asynccontextmanager
async def opened(server: str | None) -> AsyncIterator[tuple[Storage, Callable[[], Awaitable[int]]]]:
    """A new store, and how many bytes it has written: SQLite's in a temporary folder, or a
    new database on the PostgreSQL `server` (its WAL's position)."""
    if server is None:
        with tempfile.TemporaryDirectory() as tmp:
            store = await Store.open(Path(tmp) / "kizuna.sqlite3")
            try:
                yield store, written
            finally:
                await store.close()
        return
    async with fresh_database(server) as dsn:
        pg = await PgStore.open(dsn)
        admin = await asyncpg.connect(dsn)

        async def wal() -> int:
            return int(await admin.fetchval("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn"))

        try:
            yield pg, wal
        finally:
            await admin.close()
            await pg.close()


async def replay(data: Path, users: int, mode: Mode, server: str | None) -> dict[str, Any]:
    talks = conversations(data)
    chats = [(f"discord:dm:u{n}", f"u{n}", *talks[n % len(talks)]) for n in range(users)]
    fold_tokens = EngineConfig().fold_tokens
    clock = FakeClock()
    latencies: list[float] = []
    async with opened(server) as (store, bytes_written):
        manager = SessionManager(store, clock)
        before = await bytes_written()
        for part in range(max(len(sessions) for *_, sessions in chats)):
            longest = max((len(s[part]) for *_, s in chats if part < len(s)), default=0)
            for n in range(longest):
                for scope, user_id, user, sessions in chats:
                    if part >= len(sessions) or n >= len(sessions[part]):
                        continue
                    message = sessions[part][n]
                    session = await manager.get("pip", scope)
                    role: Literal["user", "assistant"] = (
                        "user" if message["speaker"] == user else "assistant"
                    )
                    said_by = user_id if role == "user" else ""
                    turn = Turn(role, message["speaker"], message["text"], clock.now(), said_by)
                    # (On PostgreSQL the lock is the conversation's lease, as a turn takes it.)
                    async with session.lock:
                        session.add(turn)
                        started = time.perf_counter()
                        await manager.save(session)
                        latencies.append(time.perf_counter() - started)
                    clock.advance(timedelta(seconds=20))
                    if mode == "folded" and (count := fold_at(session, fold_tokens)):
                        async with session.lock:
                            await manager.fold(session, count, SUMMARY)
            if mode == "closed":
                for scope, *_ in chats:
                    session = await manager.get("pip", scope)
                    async with session.lock:
                        await manager.close(session, "idle")
        wrote = await bytes_written() - before
    latencies.sort()

    def ms(q: float) -> float:
        return round(1000 * latencies[int(q * (len(latencies) - 1))], 3)

    return {
        "saves": len(latencies),
        "kb_written_per_save": round(wrote / len(latencies) / 1024, 2),
        "save_ms": {"p50": ms(0.5), "p95": ms(0.95), "p99": ms(0.99)},
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "data", nargs="?", type=Path, default=Path("../shared/data/locomo-dev.json")
    )
    parser.add_argument("--users", type=int, default=40)
    parser.add_argument("--store", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--dsn", help="with --store postgres: a server to make a database on")
    args = parser.parse_args()
    figures: dict[str, Any] = {"store": args.store}
    async with postgres_server(args.store, args.dsn) as server:
        for mode in ("closed", "folded"):
            figures[mode] = one = await replay(args.data, args.users, mode, server)
            print(
                f"{mode}: {one['saves']} saves, {one['kb_written_per_save']} KB written a save,"
                f" save p50 / p95 / p99 {one['save_ms']['p50']} / {one['save_ms']['p95']}"
                f" / {one['save_ms']['p99']} ms"
            )
    print(json.dumps(figures))


if __name__ == "__main__":
    asyncio.run(main())
