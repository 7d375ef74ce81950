"""Crash safety: `kizuna run` (SQLite, a Telegram bot, models on a slow fake) is killed with
SIGKILL at random points, restarted, and its data folder checked after every kill.

Each round the harness starts the bot, sends it work (a chat message, a `/remember` from a
new chat, `/end`), waits until the child is in the round's phase and kills it a random moment
later: mid-turn (a chat request has reached the model), mid-encoding (an encoding request
has), mid-prune (the daily prune has begun: the harness makes it due again, and ages some
memories so it forgets them, while the child is down) or mid-index-save (changed indexes are
being written). The phases and delays come from `random.Random(SEED)`.

After each kill, with the child down: `PRAGMA integrity_check` is ok and the full-text index
matches the memories; every memory the user was told is kept is there exactly once (no
`/remember` twice, though Telegram delivers again what was not confirmed: the fake takes
TELEGRAM_LATENCY to hear the bot confirm); every message the bot confirmed to Telegram (which
never gives it again), every message that reached the model, and every reply the user saw with
the message it answers, is in the session snapshot or the archive, and no message is there
twice; no conversation is encoded twice, nor its memories written without
its mark; every index file either matches the store (ids and vectors) or is stale and so
rebuilt on load. At the end the child runs until every conversation has closed and been
encoded, stops cleanly, and the same checks hold, with every conversation encoded and no
temporary index file left.

Run alone (`pytest -m crash`) it makes ROUNDS_ALONE rounds; in the whole suite ROUNDS_IN_SUITE
(every phase still covered); KIZUNA_CRASH_ROUNDS=N sets the number.

A second test kills it while a persona writes first (bot.outreach): follow-ups due, the kill
while one is composed or handed to Telegram, the restart takes over the dead process's claim
and writes each follow-up exactly once; one killed after `sending` is never sent again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import sqlite3
import string
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from bot.outreach.sender import STALE
from memory.embeddings import make_embedder
from memory.recall.index import ScopeIndex, index_path
from memory.records import NewIntention, id_digest
from memory.storage.sqlite import Store
from tests.fakes.factories import base_env
from tests.fakes.phased_openai import PhasedOpenAI, Purpose, encoded_text, marks
from tests.fakes.process import start_run
from tests.fakes.telegram_server import FakeTelegram

pytestmark = pytest.mark.crash

SEED = 20261130
ROUNDS_ALONE = 100
ROUNDS_IN_SUITE = 4  # one kill in each phase: the whole suite stays under 5 minutes
PHASES = ("turn", "encoding", "prune", "index_save")
MODEL_DELAY = 0.8  # seconds each model call takes: the window a mid-call kill lands in
# Seconds a getUpdates takes to reach the fake Telegram: a bot killed within it after
# answering is given the same messages again when it restarts, as Telegram does. Shorter than
# MODEL_DELAY, so a message waiting for the turn before it is confirmed while it waits; longer
# than a message takes to be saved once it arrives (milliseconds), on a busy machine too.
TELEGRAM_LATENCY = 0.5
# How long after the phase begins the kill may come: through the call and what follows it.
KILL_WITHIN = {"turn": 1.5 * MODEL_DELAY, "encoding": 1.5 * MODEL_DELAY, "prune": 0.05}
KILL_WITHIN["index_save"] = 0.02
TIMEOUT = 30.0
CHATS = (101, 102, 103, 104)  # private chats that keep talking; /remember comes from new ones
REMEMBERED = "will remember that"
EMBEDDER = make_embedder("auto").name  # the bank's default embedder, as the config leaves it

PIP = """
[identity]
name = "Pip"
personality = "A cheerful test persona."

[memory]
idle_minutes = 0.05  # quiet for 3 s: the conversation goes to long-term memory
"""


def config_text(telegram: FakeTelegram) -> str:
    return (
        'data_dir = "data"\npersona_paths = ["personas"]\n\n'
        '[engine]\nsnapshot_seconds = 0.25\ntimezone = "UTC"\n\n'
        "[memory]\nindex_save_seconds = 0.25\nprune_hour = 0\n\n"
        "[access]\nmessages_per_minute = 0\n\n"
        '[[bots]]\nplatform = "telegram"\npersona = "pip"\ntoken_env = "TELEGRAM_TOKEN"\n'
        f'base_url = "{telegram.base_url}"\n'
    )


def rounds(config: pytest.Config) -> int:
    """ROUNDS_ALONE when the run selects the crash marker, else ROUNDS_IN_SUITE."""
    if "KIZUNA_CRASH_ROUNDS" in os.environ:
        return int(os.environ["KIZUNA_CRASH_ROUNDS"])
    alone = "crash" in str(config.getoption("markexpr") or "")
    return ROUNDS_ALONE if alone else ROUNDS_IN_SUITE


class Child:
    """One `kizuna run` process, its stderr collected line by line."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.lines: list[str] = []
        self._grew = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.process.stderr is not None
        while line := await self.process.stderr.readline():
            self.lines.append(line.decode(errors="replace"))
            self._grew.set()
        self._grew.set()

    async def line(self, text: str) -> None:
        """Wait for a line containing `text` (since the start)."""
        seen = 0
        async with asyncio.timeout(TIMEOUT):
            while True:
                if any(text in line for line in self.lines[seen:]):
                    return
                seen = len(self.lines)
                assert not self._reader.done(), f"kizuna ended: {''.join(self.lines)}"
                self._grew.clear()
                await self._grew.wait()

    def kill(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)

    async def ended(self) -> int:
        code = await asyncio.wait_for(self.process.wait(), TIMEOUT)
        await asyncio.wait_for(self._reader, TIMEOUT)
        return code


@dataclass
class World:
    """The fakes, the data folder, and what the user has said and been told."""

    folder: Path
    telegram: FakeTelegram
    model: PhasedOpenAI
    rng: random.Random
    remembers: dict[str, int] = field(default_factory=dict)  # tag -> its chat
    said: dict[str, int] = field(default_factory=dict)  # tag -> chat of a chat message
    next_chat: int = 5000

    @property
    def database(self) -> Path:
        return self.folder / "data" / "kizuna.sqlite3"

    def tag(self) -> str:
        return "zq" + "".join(self.rng.choices(string.ascii_lowercase + string.digits, k=10))

    async def start(self) -> Child:
        env = base_env(
            TELEGRAM_TOKEN=self.telegram.token,
            OPENAI_BASE_URL=self.model.base_url,
            OPENAI_API_KEY="fake-key",
        )
        process = await start_run(
            self.folder / "kizuna.toml", env, "-v", stdout=asyncio.subprocess.DEVNULL
        )
        return Child(process)

    def chat(self, chat: int) -> None:
        tag = self.tag()
        self.said[tag] = chat
        self.telegram.send_text(chat, chat, f"note {tag}")

    def remember(self) -> None:
        tag, chat = self.tag(), self.next_chat
        self.next_chat += 1
        self.remembers[tag] = chat
        self.telegram.send_text(chat, chat, f"/remember keep {tag}")

    def seen(self, chat: int) -> list[str]:
        """What the bot said in `chat`, as the user saw it."""
        return [m.get("text", "") for m in self.telegram.sent if m["chat"]["id"] == chat]


def connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, timeout=TIMEOUT)


def prune_due_again(database: Path, rng: random.Random) -> None:
    """While the child is down: make today's prune due again, and let 200 days pass for a
    third of the encoded memories, so it forgets some."""
    db = connect(database)
    try:
        with db:
            db.execute("DELETE FROM prune_days")
            db.execute(
                "UPDATE memories SET created_at = created_at - 200 * 86400,"
                " last_recalled_at = NULL WHERE kind = 'episodic' AND id % 3 = ?",
                (rng.randrange(3),),
            )
    finally:
        db.close()


def all_encoded(database: Path) -> bool:
    """No conversation open, and every closed one encoded (read beside the running child)."""
    db = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=TIMEOUT)
    try:
        (waiting,) = db.execute(
            "SELECT count(*) FROM conversations WHERE encoded_at IS NULL"
        ).fetchone()
        (open_turns,) = db.execute("SELECT count(*) FROM session_turns").fetchone()
        snapshots = [json.loads(s) for (s,) in db.execute("SELECT snapshot FROM sessions")]
    finally:
        db.close()
    return not waiting and not open_turns and not any(s.get("turns") for s in snapshots)


def phase_purpose(phase: str) -> Purpose:
    return "chat" if phase == "turn" else "encoding"


def unpruned(database: Path) -> int:
    """Scopes with memories not pruned today, when some are: a prune the kill cut short."""
    db = connect(database)
    try:
        scopes = {s for (s,) in db.execute("SELECT DISTINCT scope FROM memories")}
        pruned = {s for (s,) in db.execute("SELECT scope FROM prune_days")}
    finally:
        db.close()
    return len(scopes - pruned) if pruned & scopes else 0


def emptied(db: sqlite3.Connection, chat: int) -> bool:
    """Whether an encoded conversation of the private chat has no turns left: one of its
    memories was pruned, and what it was encoded from went with it."""
    (count,) = db.execute(
        "SELECT count(*) FROM conversations WHERE scope = ? AND turns = '[]'"
        " AND encoded_at IS NOT NULL",
        (f"telegram:dm:{chat}",),
    ).fetchone()
    return bool(count)


def turns_of(db: sqlite3.Connection, chat: int) -> list[dict[str, str]]:
    """Every turn of the private chat: archived, open and waiting (the session snapshot)."""
    scope = f"telegram:dm:{chat}"
    found: list[dict[str, str]] = []
    for (turns,) in db.execute(
        "SELECT turns FROM conversations WHERE scope = ? ORDER BY id", (scope,)
    ):
        found.extend(json.loads(turns))
    for (turn,) in db.execute(
        "SELECT turn FROM session_turns WHERE scope = ? ORDER BY seq", (scope,)
    ):
        found.append(json.loads(turn))
    for (snapshot,) in db.execute("SELECT snapshot FROM sessions WHERE scope = ?", (scope,)):
        session = json.loads(snapshot)
        # The newest turns are in the session's row; messages that were waiting for the turn
        # before them join the turns on restore.
        found.extend([*session.get("turns", []), *session.get("waiting", [])])
    return found


def check(world: World, *, final: bool) -> Counter[str]:
    """Every invariant, on the data folder of a child that is down; returns counts of what
    was found (index files stale or matching, ...)."""
    found: Counter[str] = Counter()
    db = connect(world.database)
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
        db.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")
        ids = {r[0] for r in db.execute("SELECT id FROM memories")}
        assert {r[0] for r in db.execute("SELECT rowid FROM memories_fts")} == ids

        # /remember: each acknowledged one kept exactly once, none ever twice.
        for tag, chat in world.remembers.items():
            (count,) = db.execute(
                "SELECT count(*) FROM memories WHERE kind = 'explicit' AND text = ?",
                (f"keep {tag}",),
            ).fetchone()
            confirmations = sum(REMEMBERED in text for text in world.seen(chat))
            assert count == 1 if confirmations else count <= 1, (tag, count, confirmations)
            found["remember acknowledged"] += confirmations > 0
            found["remember delivered again"] += max(0, confirmations - 1)

        # Chat: a reply seen implies the message and the reply are kept; nothing twice.
        confirmed = {
            t for update in world.telegram.confirmed for t in marks(update["message"]["text"])
        }
        for chat in CHATS:
            turns = turns_of(db, chat)
            user = Counter(
                t for turn in turns if turn["role"] == "user" for t in marks(turn["text"])
            )
            replies = [turn["text"] for turn in turns if turn["role"] == "assistant"]
            assert max(user.values(), default=0) <= 1, f"a message kept twice: {user}"
            # What a forgotten memory's conversation said is gone with it: not looked for.
            gone = emptied(db, chat)
            for tag in world.model.asked & {t for t, c in world.said.items() if c == chat}:
                if gone and not user[tag]:
                    found["messages forgotten with a pruned memory"] += 1
                    continue
                assert user[tag] == 1, f"{tag} reached the model but was not kept"
                found["messages that reached the model"] += 1
            # Python-telegram-bot confirms a batch as soon as it has it: Telegram never gives
            # these again, so each must be kept, even one waiting for its chat's last turn.
            for tag in confirmed & {t for t, c in world.said.items() if c == chat}:
                if gone and not user[tag]:
                    continue
                assert user[tag] == 1, f"{tag} was taken from Telegram but not kept"
                found["messages confirmed to Telegram"] += 1
            for reply in world.seen(chat):
                for tag in marks(reply):
                    if gone and not user[tag]:
                        continue
                    assert user[tag] == 1, f"{tag} answered but not kept"
                    assert reply in replies, f"the reply to {tag} was seen but not kept"
                    found["replies seen"] += 1

        # Encoding: once, and all of it or nothing. (A pruned memory's conversation keeps no
        # turns, so only what is kept is looked for.)
        kept = Counter(
            text for (text,) in db.execute("SELECT text FROM memories WHERE kind = 'episodic'")
        )
        for conversation_id, turns, encoded_at in db.execute(
            "SELECT id, turns, encoded_at FROM conversations"
        ):
            said = " ".join(t["text"] for t in json.loads(turns) if t["role"] == "user")
            for tag in marks(said)[:5]:
                text = encoded_text(tag)
                written = sum(n for t, n in kept.items() if t.endswith(f" {text}"))
                expected = 0 if encoded_at is None else 1
                assert written == expected, (conversation_id, tag, written, encoded_at)
            if final:
                assert encoded_at is not None, f"conversation {conversation_id} not encoded"
            found["encoded" if encoded_at is not None else "waiting"] += 1

        # Indexes: each file matches the store, or is stale (and so rebuilt when loaded).
        scopes = {s for (s,) in db.execute("SELECT DISTINCT scope FROM memories")}
        scopes |= {s for (s,) in db.execute("SELECT DISTINCT scope FROM pruned")}
        # Recall opens (and may save) the index of a scope with no memories yet.
        scopes |= {f"pip/telegram:dm:{c}" for c in (*CHATS, *world.remembers.values())}
        folder = world.folder / "data" / "index"
        by_file = {index_path(folder, scope, EMBEDDER): scope for scope in scopes}
        for path in sorted(folder.glob("*")) if folder.exists() else []:
            if path.suffix == ".tmp":
                assert not final, f"{path.name} left behind"
                found["index .tmp"] += 1
                continue
            assert path in by_file, f"{path.name}: an index file of no scope"
            found[index_state(db, path, by_file[path])] += 1
    finally:
        db.close()
    return found


def index_state(db: sqlite3.Connection, path: Path, scope: str) -> str:
    try:
        index = ScopeIndex.deserialize(path.read_bytes())
    except ValueError:
        return "index unreadable"
    rows = db.execute(
        "SELECT id, embedding FROM memories WHERE scope = ? AND embedder = ?"
        " AND embedding IS NOT NULL",
        (scope, EMBEDDER),
    ).fetchall()
    if index.digest() != id_digest(r[0] for r in rows):
        return "index stale"
    mine = index.vectors([r[0] for r in rows])
    for memory_id, blob in rows:
        stored = np.frombuffer(blob, dtype=np.float32)
        assert np.allclose(mine[memory_id], stored, atol=1e-6), f"{path.name}: wrong vector"
    return "index matches"


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    (tmp_path / "personas").mkdir()
    (tmp_path / "personas" / "pip.toml").write_text(PIP, encoding="utf-8")
    model = PhasedOpenAI(delay=MODEL_DELAY)
    async with FakeTelegram() as telegram, model:
        telegram.latency = TELEGRAM_LATENCY
        (tmp_path / "kizuna.toml").write_text(config_text(telegram), encoding="utf-8")
        yield World(tmp_path, telegram, model, random.Random(SEED))


def schedule(rng: random.Random, count: int, phases: tuple[str, ...] = PHASES) -> list[str]:
    """`count` phases: each run of len(phases) holds every phase once, in a random order."""
    order: list[str] = []
    while len(order) < count:
        order.extend(rng.sample(phases, len(phases)))
    return order[:count]


async def test_sigkill_at_random_points_loses_and_doubles_nothing(
    world: World, request: pytest.FixtureRequest
) -> None:
    rng = world.rng
    kills: Counter[str] = Counter()
    delivered_again = 0  # chat messages Telegram gave the restarted bot again
    inside: Counter[str] = Counter()  # kills that fell inside their phase's work, not after
    for number, phase in enumerate(schedule(rng, rounds(request.config))):
        if phase == "prune" and world.database.exists():
            prune_due_again(world.database, rng)
        world.model.arm()
        child = await world.start()
        try:
            await child.line(" is up")
            world.remember()
            talker = rng.choice(CHATS)
            world.chat(talker)
            if phase == "turn":
                await asyncio.wait_for(world.model.started["chat"].wait(), TIMEOUT)
            elif phase == "encoding":
                world.telegram.send_text(talker, talker, "/end")
                await asyncio.wait_for(world.model.started["encoding"].wait(), TIMEOUT)
            elif phase == "prune":
                await child.line("daily prune of")
            else:
                await child.line("changed memory indexes")
            # Work in hand at the kill: done or not, answered or not, confirmed to Telegram or not.
            world.remember()
            world.chat(talker)  # (mid-turn, it waits for the turn before it)
            await asyncio.sleep(rng.uniform(0, KILL_WITHIN[phase]))
        finally:
            with contextlib.suppress(ProcessLookupError):
                child.kill()
            await child.ended()
        kills[phase] += 1
        # Each round's log stays beside the data folder, for whoever reads a failure.
        log = world.folder / "logs" / f"round-{number:03}-{phase}.log"
        log.parent.mkdir(exist_ok=True)
        log.write_text("".join(child.lines), encoding="utf-8")
        if phase in ("turn", "encoding") and world.model.in_flight[phase_purpose(phase)]:
            inside[phase] += 1  # while the model call was still out
        elif phase == "prune" and unpruned(world.database) > 0:
            inside[phase] += 1  # some scopes pruned today, others not yet
        elif phase == "index_save" and any((world.folder / "data" / "index").glob("*.tmp")):
            inside[phase] += 1  # an index file half written
        delivered_again += sum("answered already" in line for line in child.lines)
        check(world, final=False)

    # The last start: it runs until every conversation has gone quiet, closed and been
    # encoded, then stops cleanly.
    child = await world.start()
    await child.line(" is up")
    async with asyncio.timeout(TIMEOUT):
        while True:  # (a child process: nothing to wait on but its database)
            if not world.telegram.unconfirmed and all_encoded(world.database):
                break
            await asyncio.sleep(0.2)
    child.process.send_signal(signal.SIGTERM)
    assert await child.ended() == 0, "".join(child.lines)
    assert "Traceback" not in "".join(child.lines)
    found = check(world, final=True)
    found["chat messages delivered again"] = delivered_again
    print(f"\nkills by phase: {dict(kills)}, of them inside the work: {dict(inside)}")
    print(f"at the end: {dict(found)}")
    assert set(kills) == set(PHASES) or sum(kills.values()) < len(PHASES)


# -- writing first: killed between a follow-up's due time and its sending -------------------------

# The persona writes first. Its quiet hours are set, when the test runs, far from the hour it is
# in the person's zone (UTC): `kizuna run` keeps the real clock.
PIP_WRITES = PIP + "\n[outreach]\nenabled = true\nquiet_hours = {quiet}\n"
WRITERS = tuple(range(201, 209))  # private chats, each with a follow-up due
WITNESS = 299  # due last: its message says the final round looked at every other one
OUTREACH_PHASES = ("compose", "send")  # a kill while composing (claimed), or while sending


async def seed_follow_up(database: Path, chat: int, due: datetime) -> None:
    """A person who talked to Pip privately (and was answered), with a follow-up due."""
    store = await Store.open(database)
    try:
        user = str(chat)
        await store.heard("pip", "telegram", user, due - timedelta(days=1), private=True)
        await store.answered("pip", "telegram", user, due - timedelta(days=1))
        await store.set_contact("pip", "telegram", user, timezone="UTC", at=due)
        await store.add_intention(
            NewIntention(
                scope=f"pip/telegram:dm:{chat}",
                user_id=user,
                kind="follow_up",
                what=f"the exam {chat}",
                ask="ask how the exam went",
                due_at=due,
                until=due + timedelta(days=2),
                created_at=due - timedelta(days=1),
            )
        )
    finally:
        await store.close()


def ledger(database: Path) -> dict[str, str]:
    """Each person's ledger state (the follow-up is the only message written to them)."""
    db = connect(database)
    try:
        return dict(db.execute("SELECT user_id, state FROM outreach"))
    finally:
        db.close()


def time_passes(database: Path) -> None:
    """While the child is down, claims age past STALE: as if it stayed down that long, so
    the next start may take over what the dead one claimed (and only that)."""
    db = connect(database)
    try:
        with db:
            db.execute(
                "UPDATE outreach SET at = at - ? WHERE state = 'claimed'",
                ((STALE + timedelta(minutes=1)).total_seconds(),),
            )
    finally:
        db.close()


@pytest.fixture
async def writer(tmp_path: Path) -> AsyncIterator[World]:
    hour = datetime.now(UTC).hour
    quiet = f'"{(hour + 11) % 24:02d}-{(hour + 13) % 24:02d}"'
    (tmp_path / "personas").mkdir()
    persona = PIP_WRITES.format(quiet=quiet)
    (tmp_path / "personas" / "pip.toml").write_text(persona, encoding="utf-8")
    model = PhasedOpenAI(delay=MODEL_DELAY)
    async with FakeTelegram() as telegram, model:
        (tmp_path / "kizuna.toml").write_text(config_text(telegram), encoding="utf-8")
        world = World(tmp_path, telegram, model, random.Random(SEED))
        now = datetime.now(UTC)
        for i, chat in enumerate(WRITERS):
            telegram.chat(chat, "private")  # each started the bot
            await seed_follow_up(world.database, chat, now - timedelta(hours=len(WRITERS) - i))
        yield world


async def test_sigkill_between_due_and_sent_writes_each_follow_up_once(
    writer: World, request: pytest.FixtureRequest
) -> None:
    """`kizuna run` killed while writing first (a follow-up composed, or being handed to
    Telegram), restarted: each follow-up goes out exactly once. A claim the dead process
    left is taken over once stale; a message it was sending (`sending`) is never sent again,
    though Telegram may or may not have it: the fake keeps it, so once is exactly once."""
    world, rng = writer, writer.rng
    kills: Counter[str] = Counter()
    # Each kill takes one follow-up at most (claimed, sending or sent): some are left for the
    # last start to write.
    count = min(rounds(request.config), len(WRITERS) - 2)
    for phase in schedule(rng, count, OUTREACH_PHASES):
        world.model.arm()
        calls = len(world.telegram.calls("sendMessage"))
        if phase == "send":
            world.telegram.fail("sendMessage", "hang")  # it has the message, the bot never hears
        child = await world.start()
        try:
            await child.line(" is up")
            if phase == "compose":
                await asyncio.wait_for(world.model.started["chat"].wait(), TIMEOUT)
                await asyncio.sleep(rng.uniform(0, 1.5 * MODEL_DELAY))
            else:
                async with asyncio.timeout(TIMEOUT):
                    while True:  # (the fake has the message as soon as the call arrives)
                        if len(world.telegram.calls("sendMessage")) > calls:
                            break
                        await asyncio.sleep(0.02)
                await asyncio.sleep(rng.uniform(0, 0.1))
        finally:
            with contextlib.suppress(ProcessLookupError):
                child.kill()
            await child.ended()
        kills[phase] += 1
        states = ledger(world.database)
        for chat in WRITERS:
            seen = len(world.seen(chat))
            assert seen <= 1, f"{chat} was written to {seen} times"
            # What Telegram has was at least handed over; what was handed over stays so.
            assert not seen or states[str(chat)] in ("sending", "sent"), (chat, states)
        time_passes(world.database)

    # The last start: the witness is due after everyone, so once its message is out the
    # round has looked at every follow-up; then it stops cleanly.
    await seed_follow_up(world.database, WITNESS, datetime.now(UTC) - timedelta(minutes=1))
    world.telegram.chat(WITNESS, "private")
    child = await world.start()
    await child.line(" is up")
    await child.line(f"wrote first to telegram user {WITNESS}")
    child.process.send_signal(signal.SIGTERM)
    assert await child.ended() == 0, "".join(child.lines)
    assert "Traceback" not in "".join(child.lines)
    states = ledger(world.database)
    for chat in (*WRITERS, WITNESS):
        assert len(world.seen(chat)) == 1, f"{chat}: {world.seen(chat)}"
        assert states[str(chat)] in ("sending", "sent"), (chat, states)
    print(f"\nkills by phase: {dict(kills)}; ledger: {Counter(states.values())}")
