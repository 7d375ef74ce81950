"""The engine under a crowd: many sessions talking at once through one Engine, with a model
that answers instantly (so what is measured is Kizuna's own work), on at most 2 cores, with
the e5 embedder (the default install's), the hash embedder, or each in turn (`both`, the
default; the figures name the embedder they were measured with).

    python benchmarks/engine_load.py [--embedder both|e5|hash] [--sessions 1000]
                                     [--messages 10] [--memories 8] [--rate 500]
                                     [--scopes 10000]

Every user starts with a few long-term memories, so each turn recalls for real (full text,
FAISS, the diary for dates). Their texts name the user by one of NAMES, so across users they
repeat and e5 embeds each text once (the store's cache of embeddings); the cues are every
message, embedded as a crowd's are (memory/recall/cues.py). The scheduler runs as in production
(autosave of dirty sessions every `snapshot_seconds`, index saves). Three measurements:

1. Capacity: every session sends its messages back to back, all sessions at once; messages per
   second is how many turns the engine completes.
2. Latency at a steady rate: the same users, their memory indexes open by now, send as many
   messages again, `--rate` a second in all (each user once every sessions/rate seconds, at a
   random phase); each turn's latency is the time `Engine.handle` takes minus the time spent
   inside the model. The worst event-loop stall
   (how late a 5 ms timer fires) is measured here: under a steady load a late timer means
   something held the loop, while in the capacity run every ready turn delays it.
3. Start-up: a data folder with `--scopes` scopes (memories, index files and session
   snapshots on disk) is opened as `kizuna run` opens it; indexes load lazily.

After each run every session is checked: each message sent has one reply and is in the
conversation (session or archive) in the order sent. The last line is one line of JSON.
Never run by CI.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import json
import os
import random
import resource
import signal
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.chat_model import Completion, Message, Usage
from bot.config import TIERS, Config, EngineConfig
from bot.conversation.recollect import Recollector
from bot.conversation.sessions import Turn, persona_place
from bot.events import ChatEvent
from bot.persona.file import Persona, PersonaLibrary
from bot.platforms import Platforms
from bot.runtime.assemble import Runtime, load_personas, open_runtime
from bot.runtime.loopwatch import LoopWatch
from memory.bank import MemoryBank
from memory.clock import Clock
from memory.recall.dense import ScopeSearch
from memory.records import Vectors
from memory.storage.sqlite import Store
from tests.fakes.factories import PLATFORMS

ROOT = Path(__file__).resolve().parent.parent
PERSONAS = ("monikai", "miao", "dungeon_master")
LINES = (
    "hello again! how have you been?",
    "my sister Aiko is visiting next week and I'm nervous about it",
    "do you remember what I told you about my garden?",
    "we used to fight a lot as kids, but I think it's different now",
    "what did I tell you yesterday?",
    "I finally finished the book you recommended, the ending made me cry",
    "我今天去公园散步了，看到好多樱花",
    "should I cook pasta or ramen tonight?",
    "work was long today, my manager moved the deadline again",
    "tell me something nice before I sleep",
)
MEMORIES = (
    "{name} grows tomatoes and basil on the balcony",
    "{name}'s sister Aiko lives in Osaka and visits twice a year",
    "{name} is learning to play the cello and practises on Sundays",
    "{name} works as a nurse on night shifts",
    "{name} adopted a grey cat called Mochi last spring",
    "{name} hates coriander but loves spicy ramen",
    "{name} ran a half marathon in October",
    "{name} is reading a novel about lighthouse keepers",
    "{name}喜欢在周末去爬山",
    "{name} is afraid of thunderstorms",
)
NAMES = tuple(f"Friend{i}" for i in range(40))
STALL_TICK = 0.005  # seconds: the stall monitor's timer

# Seconds spent inside the model during the current turn (a turn's tasks share the context).
_in_model: contextvars.ContextVar[list[float] | None] = contextvars.ContextVar(
    "in_model", default=None
)


class InstantModel:
    """A chat model that answers at once: the reply names the message it answers."""

    name = "instant"

    async def complete(
        self, messages: Sequence[Message], *, json_mode: bool = False, **_options: Any
    ) -> Completion:
        """The reply; tools and sampling options are not its concern."""
        start = time.perf_counter()
        last = next((m.content for m in reversed(messages) if m.role == "user"), "")
        text = '{"memories": []}' if json_mode else f"[HAPPY] I hear you: {last[-40:]}"
        completion = Completion(text, usage=Usage(len(last) // 4, 12), model=self.name)
        spent = _in_model.get()
        if spent is not None:
            spent.append(time.perf_counter() - start)
        return completion


@dataclass(slots=True)
class User:
    persona: str
    user_id: str
    name: str
    dm: bool
    platform: str = "discord"

    def event(self, text: str) -> ChatEvent:
        return ChatEvent(
            platform=self.platform,
            bot_id="load",
            persona=self.persona,
            chat_id="" if self.dm else "guild1",
            # A game table (the dungeon master's channel scope) seats a few users.
            channel_id=f"dm{self.user_id}" if self.dm else f"table{int(self.user_id[1:]) // 12}",
            user_id=self.user_id,
            user_name=self.name,
            is_dm=self.dm,
            text=text,
            timestamp=datetime.now(UTC),
            # A table's channel is bound to its dungeon master: every message is for it.
            addressed=frozenset() if self.dm else frozenset({"bound"}),
        )


@dataclass(slots=True)
class Run:
    latencies: list[float] = field(default_factory=list)  # seconds, the model's time excluded
    replies: dict[str, list[str]] = field(default_factory=dict)  # user id -> replies
    failed: int = 0


def users_of(prefix: str, count: int) -> list[User]:
    return [
        User(PERSONAS[i % len(PERSONAS)], f"{prefix}{i}", f"User{prefix}{i}", dm=i % 2 == 0)
        for i in range(count)
    ]


def message(user: User, n: int) -> str:
    return f"{LINES[(n + int(user.user_id[1:])) % len(LINES)]} ({user.user_id} #{n})"


async def seed_memories(
    bank: MemoryBank, engine_scope: list[str], users: list[User], n: int
) -> None:
    """`n` memories for each user, written as encoding would (so recall has work to do)."""
    now = datetime.now(UTC)
    for user, scope in zip(users, engine_scope, strict=True):
        for j in range(n):
            when = now - timedelta(days=2 * (n - j), hours=j)
            text = MEMORIES[(j + len(user.user_id)) % len(MEMORIES)].format(name=named(user))
            await bank.remember(scope, text, when=when, importance=1 + j % 3)
    await bank.flush()


def named(user: User) -> str:
    """The name the user's memories call them by."""
    return NAMES[int(user.user_id[1:]) % len(NAMES)]


async def turn(runtime: Runtime, user: User, text: str, run: Run) -> None:
    spent: list[float] = []
    token = _in_model.set(spent)
    try:
        start = time.perf_counter()
        reply = await runtime.engine.handle(user.event(text))
        run.latencies.append(time.perf_counter() - start - sum(spent))
    finally:
        _in_model.reset(token)
    run.replies.setdefault(user.user_id, []).append(reply.text)
    run.failed += reply.failed


async def talk_back_to_back(runtime: Runtime, user: User, numbers: range, run: Run) -> None:
    for n in numbers:
        await turn(runtime, user, message(user, n), run)


async def talk_at_rate(
    runtime: Runtime, user: User, numbers: range, period: float, phase: float, run: Run
) -> None:
    loop = asyncio.get_running_loop()
    start = loop.time() + phase
    for i, n in enumerate(numbers):
        await asyncio.sleep(max(0.0, start + i * period - loop.time()))
        await turn(runtime, user, message(user, n), run)


async def check(runtime: Runtime, users: list[User], numbers: range, run: Run) -> tuple[int, int]:
    """(lost, reordered): a message (of those numbered `numbers`) missing from its
    conversation or never answered, and conversations whose messages are not in the order
    sent."""
    lost = reordered = 0
    store = runtime.store
    await runtime.engine.drain()
    for user in users:
        sent = [message(user, n) for n in numbers]
        replies = run.replies.get(user.user_id, [])
        persona = runtime.engine.personas[user.persona]
        scope = persona_place(persona, user.event(""))
        session = await runtime.engine.sessions.get(persona.key, scope)
        turns: list[tuple[str, str]] = []
        for conversation in reversed(await store.conversations(persona.key, scope, limit=100)):
            turns += [(t["role"], t["text"]) for t in conversation.turns]
        turns += [(t.role, t.text) for t in session.turns]
        said = [text for role, text in turns if role == "user"]
        mine = [s for s in said if s in sent]
        # Never answered: after the conversation's last reply (messages that waited together
        # are answered by one turn, so a message's own reply may be another's).
        last = max((i for i, (role, _) in enumerate(turns) if role == "assistant"), default=-1)
        lost += sum(1 for role, text in turns[last + 1 :] if role == "user" and text in sent)
        lost += len(sent) - len(replies) + len(set(sent) - set(mine))
        reordered += int(mine != sorted(mine, key=sent.index))
    return lost, reordered


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def open_load_runtime(
    data_dir: Path,
    personas: Mapping[str, Persona],
    embedder: str,
    platform: str = "discord",
    dsn: str | None = None,
    index_memory_mb: int | None = None,
    large_scopes: Literal["auto", "copied", "served"] = "auto",
    clock: Clock | None = None,
) -> Runtime:
    """The runtime `kizuna run` would open, its models the instant one; on the PostgreSQL
    database at `dsn` if given, else on SQLite in `data_dir`; what it keeps of its scopes (FAISS
    indexes included) within `index_memory_mb` if given, else the configuration's default, and
    its large scopes as `large_scopes` says ([memory] large_scopes); on `clock` if given, else
    the system's."""
    config = Config(data_dir=str(data_dir), engine=EngineConfig(snapshot_seconds=5.0))
    config.memory.embedder = embedder  # type: ignore[assignment]  # (checked by argparse)
    if index_memory_mb is not None:
        config.memory.index_memory_mb = index_memory_mb
    config.memory.large_scopes = large_scopes
    config.access.messages_per_minute = 0  # a crowd of bots, not people: no rate limit
    if dsn is not None:
        config.storage = "postgres"
    runtime = await open_runtime(
        config,
        personas,
        {} if dsn is None else {config.dsn_env: dsn},
        platforms=Platforms([PLATFORMS[platform]]),
        seed=7,
        probe=_no_ollama,
        clock=clock,
    )
    instant = InstantModel()
    runtime.engine.models.models = {tier: instant for tier in TIERS}
    return runtime


async def _no_ollama(host: str) -> list[str]:
    return []


def scopes_of(runtime: Runtime, users: list[User]) -> list[str]:
    engine = runtime.engine
    return [
        Recollector.scope(u.persona, persona_place(engine.personas[u.persona], u.event("")))
        for u in users
    ]


async def load(args: argparse.Namespace, data_dir: Path) -> dict[str, float | int]:
    personas = load_personas(PersonaLibrary.default(Path.cwd()), PERSONAS)
    runtime = await open_load_runtime(data_dir, personas, args.embedder)
    print(f"embedder {runtime.bank.embedder.name}")
    crowd = users_of("c", args.sessions)
    started = time.perf_counter()
    await seed_memories(runtime.bank, scopes_of(runtime, crowd), crowd, args.memories)
    seeded = args.sessions * args.memories
    print(f"seeded {seeded} memories in {time.perf_counter() - started:.1f} s")
    # The day's prune first, whatever the hour: from prune_hour on (4 am) the scheduler runs it
    # beside the turns, every scope of a new database due at once, and the figures would
    # depend on the time of day. `--prune-in-run` measures that case: the scheduler prunes
    # from hour 0, as it would after prune_hour.
    lifecycle = runtime.scheduler.lifecycle
    assert lifecycle is not None
    lifecycle.prune_hour = 0
    if not args.prune_in_run:
        started = time.perf_counter()
        pruned = await lifecycle.prune_due(limit=args.sessions * 2)
        took = time.perf_counter() - started
        print(f"the daily prune of {len(pruned)} scopes took {took:.1f} s, before the runs")
    runtime.scheduler.start()
    await runtime.settle()  # as `kizuna run` does once its bots are up
    searched = count_dense(runtime.bank)
    try:
        capacity = Run()
        first, then = range(args.messages), range(args.messages, 2 * args.messages)
        started = time.perf_counter()
        await asyncio.gather(*(talk_back_to_back(runtime, u, first, capacity) for u in crowd))
        elapsed = time.perf_counter() - started
        per_second = len(capacity.latencies) / elapsed
        lost_a, reordered_a = await check(runtime, crowd, first, capacity)
        by_meaning_a = searched.share()
        print(
            f"capacity: {len(capacity.latencies)} turns in {elapsed:.1f} s = {per_second:.0f} "
            f"messages/s; lost {lost_a}, reordered {reordered_a}, apologies {capacity.failed}; "
            f"recalls by meaning {by_meaning_a:.0%}"
        )

        steady_run = Run()
        period = args.sessions / args.rate
        rng = random.Random(11)
        async with LoopWatch(STALL_TICK) as monitor:
            started = time.perf_counter()
            await asyncio.gather(
                *(
                    talk_at_rate(runtime, u, then, period, rng.uniform(0, period), steady_run)
                    for u in crowd
                )
            )
            elapsed = time.perf_counter() - started
        lost_b, reordered_b = await check(runtime, crowd, then, steady_run)
        by_meaning_b = searched.share()
        ms = [x * 1000 for x in steady_run.latencies]
        print(
            f"steady {args.rate}/s: {len(ms)} turns in {elapsed:.1f} s; turn latency without the "
            f"model p50 {statistics.median(ms):.2f} ms, p95 {pct(ms, 95):.2f}, p99 "
            f"{pct(ms, 99):.2f}, max {max(ms):.2f}; worst loop stall "
            f"{monitor.worst * 1000:.1f} ms; lost {lost_b}, reordered {reordered_b}; "
            f"recalls by meaning {by_meaning_b:.0%}"
        )
    finally:
        await runtime.scheduler.stop()
        await runtime.close()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {rss_mb:.0f} MB")
    return {
        "messages_per_second": round(per_second, 1),
        "p50_ms": round(statistics.median(ms), 2),
        "p95_ms": round(pct(ms, 95), 2),
        "p99_ms": round(pct(ms, 99), 2),
        "max_stall_ms": round(monitor.worst * 1000, 1),
        "rss_mb": round(rss_mb),
        "lost": lost_a + lost_b,
        "reordered": reordered_a + reordered_b,
        "capacity_by_meaning": round(by_meaning_a, 3),
        "steady_by_meaning": round(by_meaning_b, 3),
    }


class DenseCount:
    """How many recalls searched by meaning (their cue embedded in time) and how many went by
    words alone, since the last `share`: under a crowd a cue not embedded within CUE_WAIT
    recalls by words, cheaper work, so a capacity means little without this share."""

    def __init__(self) -> None:
        self.by_meaning = 0
        self.by_words = 0

    def share(self) -> float:
        """The share by meaning since the last call."""
        total = self.by_meaning + self.by_words
        share = self.by_meaning / total if total else 0.0
        self.by_meaning = self.by_words = 0
        return share


def count_dense(bank: MemoryBank) -> DenseCount:
    """Count the bank's recalls by meaning and by words (its Retrieval is not slotted for
    such swaps)."""
    counted = DenseCount()
    retrieval = bank.retrieval
    dense_query = retrieval._dense_query

    async def counting(scope: str, cue: str) -> tuple[Vectors | None, ScopeSearch | None]:
        query, index = await dense_query(scope, cue)
        if query is None:
            counted.by_words += 1
        else:
            counted.by_meaning += 1
        return query, index

    retrieval._dense_query = counting  # type: ignore[method-assign]
    return counted


async def fill_scopes(data_dir: Path, scopes: int, embedder: str) -> None:
    """`scopes` users' worth of data, each in a private chat on the web page: two memories
    and an index file each, and an open conversation each (restored at start-up)."""
    personas = load_personas(PersonaLibrary.default(Path.cwd()), PERSONAS)
    runtime = await open_load_runtime(data_dir, personas, embedder, "console")
    users = [replace(u, dm=True, platform="console") for u in users_of("u", scopes)]
    now = datetime.now(UTC)
    try:
        for user, scope in zip(users, scopes_of(runtime, users), strict=True):
            for j, when in enumerate((now - timedelta(days=3), now - timedelta(days=1))):
                text = MEMORIES[(j + len(user.user_id)) % len(MEMORIES)].format(name=named(user))
                await runtime.bank.remember(scope, text, when=when)
            await runtime.bank.recall(scope, named(user), fail=False)  # builds its index
            persona = runtime.engine.personas[user.persona]
            session = await runtime.engine.sessions.get(
                persona.key, persona_place(persona, user.event(""))
            )
            session.add(Turn("user", user.name, "see you tomorrow", now, user_id=user.user_id))
        await runtime.engine.sessions.save_dirty()
    finally:
        await runtime.close()  # writes the indexes


async def startup(args: argparse.Namespace, data_dir: Path) -> tuple[float, float]:
    """Seconds to open the runtime on a data folder of `--scopes` scopes (in this process),
    and for `kizuna run` with the web client to be up on it (a new process: imports too)."""
    started = time.perf_counter()
    await fill_scopes(data_dir, args.scopes, args.embedder)
    store = await Store.open(data_dir / "kizuna.sqlite3")
    scopes = len(await store.scopes())
    await store.close()
    files = len(list((data_dir / "index").glob("*.faiss")))
    print(f"filled {scopes} scopes ({files} index files) in {time.perf_counter() - started:.0f} s")
    personas = load_personas(PersonaLibrary.default(Path.cwd()), PERSONAS)
    started = time.perf_counter()
    runtime = await open_load_runtime(data_dir, personas, args.embedder, "console")
    opened = time.perf_counter() - started
    sessions = len(runtime.engine.sessions.all())
    await runtime.close()
    up = await run_until_up(data_dir, args.embedder)
    print(
        f"start-up with {scopes} scopes: the runtime opens in {opened:.2f} s ({sessions} open "
        f"conversations restored); `kizuna run` is up in {up:.2f} s"
    )
    return opened, up


async def run_until_up(data_dir: Path, embedder: str) -> float:
    """Seconds from starting `kizuna run` (the web client, the offline model) to its line
    saying the web client is up; then it is stopped."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = data_dir.parent / "start.toml"
    config.write_text(
        f"data_dir = {json.dumps(str(data_dir))}\n[memory]\nembedder = {json.dumps(embedder)}\n"
        f"[web]\nport = {port}\n[[bots]]\n"
        'platform = "web"\npersona = "monikai"\npersonas = ["miao", "dungeon_master"]\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "KIZUNA_"))}
    env["OLLAMA_HOST"] = "http://127.0.0.1:9"  # closed: the offline model
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "adapters.command.cli", "run", "--config", str(config),
        cwd=ROOT, env=env, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stderr is not None
    try:
        while b"web client is up" not in (line := await process.stderr.readline()):
            if not line:
                raise RuntimeError("kizuna run ended before it was up")
        return time.perf_counter() - started
    finally:
        process.send_signal(signal.SIGTERM)
        await process.wait()


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--embedder", choices=("both", "e5", "hash"), default="both")
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--messages", type=int, default=10, help="per session")
    parser.add_argument("--memories", type=int, default=8, help="per user, before the run")
    parser.add_argument("--rate", type=float, default=500.0, help="messages/s in the steady run")
    parser.add_argument("--scopes", type=int, default=10_000, help="on disk, for start-up")
    parser.add_argument(
        "--prune-in-run",
        action="store_true",
        help="leave the day's prune to the scheduler, beside the turns (as after 4 am)",
    )
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity") and len(os.sched_getaffinity(0)) > 2:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:2])
    print(f"{len(os.sched_getaffinity(0))} cores, Python {sys.version.split()[0]}")
    embedders = ("e5", "hash") if args.embedder == "both" else (args.embedder,)
    headline: dict[str, dict[str, float | int]] = {}
    for embedder in embedders:
        one = argparse.Namespace(**{**vars(args), "embedder": embedder})
        print(f"-- {embedder}")
        with tempfile.TemporaryDirectory() as tmp:
            figures = await load(one, Path(tmp) / "load")
            opened, up = await startup(one, Path(tmp) / "start")
        figures["runtime_open_s"] = round(opened, 2)
        figures["startup_s"] = round(up, 2)
        headline[embedder] = figures
    print(json.dumps({"scopes": args.scopes, **headline}))


if __name__ == "__main__":
    asyncio.run(main())
