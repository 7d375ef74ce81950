"""Forgotten means gone: after `/forget`, `/wipe`, the inspector's delete and the daily prune,
every file of the data folder (the database, its -wal and -shm, the index files) is read as
bytes and holds neither the forgotten words nor the forgotten memory's vector. Each word is
looked for whole and without its first letters too: the full-text index stores a word after
the one before it as only what differs (its shared beginning left out). Every check first
sees the word there, so a scan that could not find it proves nothing and fails. On PostgreSQL,
no row of any table holds the words (VACUUM and the server's own files: see docs/data.md,
"Your data")."""

from __future__ import annotations

import io
import re
import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
from aiohttp.test_utils import TestClient, TestServer

import memory.recall.index
from adapters.console import ConsoleChat
from adapters.web import WebServer
from bot.runtime.assemble import Runtime
from bot.runtime.scheduler import Scheduler
from memory.bank import MemoryBank
from memory.recall.index import ScopeIndex
from memory.records import ArchiveWrite, NewIntention
from memory.storage.postgres import PgStore
from memory.storage.sqlite import Store
from memory.storage.sqlite.base import MIGRATIONS, SCRUBBED_FROM
from memory.storage.sqlite.memories import scope_tag
from tests.security.conftest import ALICE, World

CONSOLE = "pip/console:dm:ann"


def traces(folder: Path, *needles: bytes) -> list[str]:
    """Which of `needles` some file under `folder` holds, as "file: needle"."""
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        found += [f"{path.name}: {n!r}" for n in needles if n in data]
    return found


def word(text: str) -> list[bytes]:
    """A made-up word as the files may hold it: whole, and past its first two letters."""
    return [text.encode(), text[2:].encode()]


async def console(world: World, folder: Path, user: str, typed: str) -> str:
    """What the console prints to `user` typing `typed` (one command a line)."""
    out = io.StringIO()
    runtime = Runtime(
        config=cast("Any", None),  # the console reads none
        engine=world.bot.engine,
        services=world.bot.services,
        store=world.bot.store,
        bank=world.bot.bank,
        scheduler=cast(Scheduler, None),
        data_dir=folder,
    )
    chat = ConsoleChat(
        runtime,
        world.bot.personas["pip"],
        user,
        stdin=io.StringIO(typed),
        stdout=out,
        interactive=False,
    )
    await chat.run()
    return out.getvalue()


async def vector(bank: MemoryBank, scope: str, memory_id: int) -> bytes:
    """The stored embedding of a memory, as its bytes."""
    ids, vectors = await bank.store.embeddings(scope, bank.embedder.name)
    assert vectors is not None
    [row] = np.nonzero(ids == memory_id)[0]
    return bytes(vectors[row].tobytes())


async def indexed(bank: MemoryBank, scope: str) -> None:
    """The scope's FAISS index built and written to its file."""
    await bank.recall(scope, "anything at all", k=1, fail=False)
    await bank.flush()


async def test_console_forget_leaves_no_word_and_no_vector(world: World, tmp_path: Path) -> None:
    bank = world.bot.bank
    await console(world, tmp_path, "ann", "/remember my locker word is zqvorblix\n")
    [memory] = await bank.memories(CONSOLE, "zqvorblix", limit=1)
    await indexed(bank, CONSOLE)
    vec = await vector(bank, CONSOLE, memory.id)
    needles = [*word("zqvorblix"), vec]
    assert len(traces(tmp_path, *needles)) >= 3  # the database, its WAL, the index file

    printed = await console(world, tmp_path, "ann", "/forget zqvorblix\n1\n")

    assert "Forgotten" in printed
    await bank.flush()
    assert traces(tmp_path, *needles) == []
    await world.bot.close()
    assert traces(tmp_path, *needles) == []


async def test_console_wipe_leaves_nothing_of_the_conversation_or_memories(
    world: World, tmp_path: Path
) -> None:
    bank = world.bot.bank
    typed = "my cat is called zqmarlowe\nend\nwe meet again, zqmarlowe says hi\n"
    await console(world, tmp_path, "ann", typed + "/remember the gate code is zqpelican\n")
    now = world.bot.clock.now()
    await world.bot.store.add_intention(  # what the persona meant to bring up goes too
        NewIntention(CONSOLE, "ann", "follow_up", "her zqexamday", "ask", now, now, now)
    )
    await indexed(bank, CONSOLE)
    needles = [*word("zqmarlowe"), *word("zqpelican"), *word("zqexamday")]
    assert await world.bot.store.count_conversations("pip", "console:dm:ann") == 1
    assert len(traces(tmp_path, *needles)) >= 2

    printed = await console(world, tmp_path, "ann", "wipe\nwipe\n")

    assert await world.bot.store.count_conversations("pip", "console:dm:ann") == 0
    assert await bank.count(CONSOLE) == 0, printed
    await bank.flush()
    assert traces(tmp_path, *needles) == []
    await world.bot.close()
    assert traces(tmp_path, *needles) == []


async def test_the_inspectors_delete_leaves_nothing(world: World, tmp_path: Path) -> None:
    bank, alice = world.bot.bank, world.scope(ALICE)
    await indexed(bank, alice)
    needles = [*word("zebraquokka"), await vector(bank, alice, world.dm_id)]
    assert len(traces(tmp_path, *needles)) >= 2
    client: TestClient[Any, Any] = TestClient(
        TestServer(
            WebServer(
                world.bot.engine, world.bot.services, world.bot.store, world.bot.bank, ["pip"]
            ).app()
        )
    )
    await client.start_server()
    try:
        gone = await client.delete(f"/api/inspect/memories/{world.dm_id}?scope={alice}")
        assert gone.status == 200
    finally:
        await client.close()
    await bank.flush()
    assert traces(tmp_path, *needles) == []


async def test_the_daily_prune_leaves_nothing_and_its_report_no_text(
    world: World, tmp_path: Path
) -> None:
    bank, store = world.bot.bank, world.bot.store
    now = world.bot.clock.now()
    old = now - timedelta(days=30)
    trivial = await bank.remember(
        CONSOLE, "ann had zqtoastling for breakfast", when=old, importance=1
    )
    await bank.remember(CONSOLE, "ann's grandmother lives in Oslo", when=old, importance=3)
    await indexed(bank, CONSOLE)
    needles = [*word("zqtoastling"), await vector(bank, CONSOLE, trivial)]
    assert len(traces(tmp_path, *needles)) >= 2

    _, forgotten = await bank.prune(CONSOLE, now, day=now.date(), seed=7)

    assert [i for i, _ in forgotten] == [trivial]
    [report] = await store.pruned_since(old, scope=CONSOLE)
    assert report.memory_id == trivial and report.reason
    await bank.flush()
    assert traces(tmp_path, *needles) == []


async def test_a_near_duplicate_merged_by_the_prune_leaves_nothing(
    world: World, tmp_path: Path
) -> None:
    """The twin a prune merges into its survivor is deleted by the prune's own path."""
    bank = world.bot.bank
    now = world.bot.clock.now()
    old = now - timedelta(days=30)
    said = (
        "ann had toast with strawberry jam and a cup of black coffee for breakfast at the "
        "kitchen table this morning before work"
    )
    kept = await bank.remember(CONSOLE, said, when=old, importance=1)
    await bank.reinforce(CONSOLE, [kept], now - timedelta(days=20))
    twin = await bank.remember(CONSOLE, said + " zqjamlet", when=old, importance=1)
    assert (kept, twin) in await bank.twins(CONSOLE)
    await indexed(bank, CONSOLE)
    needles = [*word("zqjamlet"), await vector(bank, CONSOLE, twin)]
    assert len(traces(tmp_path, *needles)) >= 2

    _, forgotten = await bank.prune(CONSOLE, now, day=now.date(), seed=7)

    [(gone, reason)] = forgotten
    assert gone == twin and reason.startswith(f"merged into near-duplicate {kept}")
    await bank.flush()
    assert traces(tmp_path, *needles) == []
    await world.bot.close()
    assert traces(tmp_path, *needles) == []


async def test_forgetting_clears_the_transcript_and_recap_it_came_from(
    world: World, tmp_path: Path
) -> None:
    bank, store = world.bot.bank, world.bot.store
    at = world.bot.clock.now()
    said = [{"speaker": "ann", "text": "my boat is the zqheron", "at": at.timestamp()}]
    conversation = await store.archive_conversation(
        ArchiveWrite(
            "pip",
            "console:dm:ann",
            started_at=at,
            ended_at=at,
            reason="end",
            turns=said,
            snapshot={},
        )
    )
    memory_id = await bank.remember(
        CONSOLE, "ann's boat is the zqheron", conversation_id=conversation
    )
    assert traces(tmp_path, *word("zqheron"))

    assert [m.id for m in await bank.forget(CONSOLE, memory_id)] == [memory_id]

    archived = await store.conversation(conversation)
    assert archived is not None and archived.turns == [] and archived.recap == ""
    assert traces(tmp_path, *word("zqheron")) == []


async def test_forgetting_takes_the_intentions_of_the_conversation_it_came_from(
    world: World, tmp_path: Path
) -> None:
    """A pin said in chat became a memory and, from the same conversation, a follow-up the
    encoder found and a reminder the tool set while it went on: `/forget` of the memory
    leaves none of their words; another conversation's intention stays."""
    bank, store = world.bot.bank, world.bot.store
    at = world.bot.clock.now()
    said = [{"speaker": "ann", "text": "pin this: zqlocker, exam Tuesday", "at": at.timestamp()}]
    conversation = await store.archive_conversation(ArchiveWrite(
        "pip", "console:dm:ann", started_at=at, ended_at=at + timedelta(minutes=5),
        reason="end", turns=said, snapshot={},
    ))  # fmt: skip
    memory_id = await bank.remember(
        CONSOLE, "ann's locker word is zqlocker", conversation_id=conversation
    )
    due = at + timedelta(days=2)
    found = NewIntention(
        CONSOLE, "ann", "follow_up", "zqlocker exam", "ask how zqlocker went", due, due, at,
        conversation,
    )  # fmt: skip
    tool = NewIntention(
        CONSOLE, "ann", "reminder", "zqlocker card", "zqlocker card", due, due,
        at + timedelta(minutes=2),
    )  # fmt: skip
    later = NewIntention(
        CONSOLE, "ann", "reminder", "buy milk", "buy milk", due, due, at + timedelta(hours=1)
    )
    for intention in (found, tool, later):
        await store.add_intention(intention)
    assert len(traces(tmp_path, *word("zqlocker"))) >= 1

    assert [m.id for m in await bank.forget(CONSOLE, memory_id)] == [memory_id]

    assert [i.what for i in await store.intentions(CONSOLE, open_only=False)] == ["buy milk"]
    await bank.flush()
    assert traces(tmp_path, *word("zqlocker")) == []


def test_a_graph_index_keeps_no_deleted_vector(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory.recall.index, "HNSW_FROM", 10)
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((40, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = ScopeIndex.build(16, np.arange(1, 41, dtype=np.int64), vectors)
    assert index.hnsw and vectors[4].tobytes() in index.serialize()

    index.remove([5])

    data = index.serialize()
    assert vectors[4].tobytes() not in data and vectors[5].tobytes() in data
    assert 5 not in [i for i, _ in index.search(vectors[4], 40)]
    reloaded = ScopeIndex.deserialize(data)
    assert 5 not in [i for i, _ in reloaded.search(vectors[4], 3)]


async def test_an_older_database_is_cleared_of_what_it_deleted_when_upgraded(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    for number, script in enumerate(MIGRATIONS[: SCRUBBED_FROM - 1]):
        db.executescript(f"BEGIN;\n{script}\nPRAGMA user_version = {number + 1};\nCOMMIT;")
    with db:
        for i in range(200):
            db.execute(
                "INSERT INTO memories (id, scope, text, kind, importance, created_at, strength)"
                " VALUES (?, 's', ?, 'fact', 2, 0, 1)",
                (i + 1, f"filler {i} zqoldword" if i == 7 else f"filler {i} about pears"),
            )
            db.execute(
                "INSERT INTO memories_fts (rowid, scope_tag, body, context) VALUES (?, ?, ?, '')",
                (
                    i + 1,
                    scope_tag("s"),
                    f"filler {i} zqoldword" if i == 7 else f"filler {i} about pears",
                ),
            )
        db.execute(
            "INSERT INTO pruned (scope, memory_id, text, importance, policy, reason, pruned_at)"
            " VALUES ('s', 8, 'filler 7 zqoldword', 2, 'ebbinghaus', 'faded', 0)"
        )
    with db:
        db.execute("DELETE FROM memories WHERE id = 8")
        db.execute("DELETE FROM memories_fts WHERE rowid = 8")
    db.close()
    assert traces(tmp_path, *word("zqoldword"))

    store = await Store.open(path)
    try:
        assert await store.schema_version() == len(MIGRATIONS)
        assert traces(tmp_path, *word("zqoldword")) == []
        assert await store.lexical_search("s", "pears", 5)  # the index still answers
    finally:
        await store.close()


async def test_postgres_keeps_no_row_of_what_was_forgotten(
    postgres_dsn: str, tmp_path: Path
) -> None:
    store = await PgStore.open(postgres_dsn)
    bank = await MemoryBank.open(tmp_path, "hash", deterministic=True, store=store)
    try:
        at = bank.clock.now()
        said = [{"speaker": "ann", "text": "my boat is the zqheron", "at": at.timestamp()}]
        conversation = await store.archive_conversation(
            ArchiveWrite(
                "pip",
                "console:dm:ann",
                started_at=at,
                ended_at=at,
                reason="end",
                turns=said,
                snapshot={},
            )
        )
        forgotten = await bank.remember(
            CONSOLE, "ann's boat is the zqheron", conversation_id=conversation
        )
        due = at + timedelta(days=2)
        await store.add_intention(  # a follow-up the encoder found in that conversation
            NewIntention(
                CONSOLE, "ann", "follow_up", "the zqheron's race", "ask about the zqheron",
                due, due, at, conversation,
            )
        )  # fmt: skip
        await bank.remember(CONSOLE, "ann's gate code is zqpelican")
        pruned = await bank.remember(
            CONSOLE, "ann had zqtoastling for breakfast", when=at - timedelta(days=30), importance=1
        )
        await bank.remember(CONSOLE, "ann's grandmother lives in Oslo", importance=3)
        await indexed(bank, CONSOLE)
        words = ["zqheron", "zqpelican", "zqtoastling"]
        assert set(await holding(store, words)) >= {"memories", "conversations", "intentions"}
        vec = await vector(bank, CONSOLE, forgotten)
        assert traces(tmp_path, vec)

        await bank.forget(CONSOLE, forgotten)
        assert await holding(store, ["zqheron"]) == []
        assert traces(tmp_path, vec) == []
        _, gone = await bank.prune(CONSOLE, at, day=at.date(), seed=7)
        assert [i for i, _ in gone] == [pruned]
        assert await holding(store, ["zqtoastling"]) == []
        await bank.wipe(CONSOLE)
        await store.wipe("pip", "console:dm:ann")
        assert await holding(store, words) == []
        await bank.flush()
        assert traces(tmp_path, *(w.encode() for w in words)) == []
    finally:
        await bank.close()
        await store.close()


async def holding(store: PgStore, words: list[str]) -> list[str]:
    """The tables of which some row, as text, holds one of `words`."""
    async with store._pool.acquire() as conn:
        tables = await conn.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
        )
        found = []
        for (table,) in tables:
            for w in words:
                if await conn.fetchval(
                    f'SELECT count(*) FROM "{table}" AS t WHERE t::text LIKE $1', f"%{w}%"
                ):
                    found.append(table)
                    break
        return found


async def test_postgres_pages_are_cleared_by_the_documented_vacuum_full(
    postgres_dsn: str, tmp_path: Path
) -> None:
    """What docs/data.md ("Your data") tells a PostgreSQL operator to run after a forget clears
    the table files too (read from the page, so the two cannot drift). A plain VACUUM is not
    enough: it may leave a dead row's bytes in the page's free space, and the full-text index
    keeps a word as a key for as long as it lives; VACUUM FULL rewrites the tables and their
    indexes."""
    store = await PgStore.open(postgres_dsn)
    bank = await MemoryBank.open(tmp_path, "hash", deterministic=True, store=store)
    try:
        for i in range(50):
            await bank.remember(CONSOLE, f"filler {i} about pears")
        at = bank.clock.now()
        conversation = await store.archive_conversation(ArchiveWrite(
            "pip", "console:dm:ann", started_at=at, ended_at=at, reason="end",
            turns=[{"speaker": "ann", "text": "the zqheron races Sunday", "at": at.timestamp()}],
            snapshot={},
        ))  # fmt: skip
        forgotten = await bank.remember(
            CONSOLE, "ann's boat is the zqheron", conversation_id=conversation
        )
        due = at + timedelta(days=3)
        await store.add_intention(
            NewIntention(
                CONSOLE, "ann", "follow_up", "the zqheron's race", "ask", due, due, at,
                conversation,
            )
        )  # fmt: skip
        assert {"intentions", "conversations", "memories"} <= {
            name.partition("_pkey")[0] for name in await pages_holding(store, b"zqheron")
        }
        await bank.forget(CONSOLE, forgotten)
        async with store._pool.acquire() as conn:
            await conn.execute(documented_vacuum())
        assert await pages_holding(store, b"zqheron") == []
    finally:
        await bank.close()
        await store.close()


def documented_vacuum() -> str:
    """The one `VACUUM FULL ...;` statement docs/data.md gives, without its semicolon."""
    page = (Path(__file__).parents[2] / "docs" / "data.md").read_text(encoding="utf-8")
    statements = re.findall(r"`(VACUUM FULL [a-z_, ]+);`", page)
    assert len(statements) == 1, statements
    return str(statements[0])


# Columns of a text kind that hold no one's words: ids, names of things, states, times kept as
# text, settings. Any other (a message, a summary, a name a user gave, a vector or a hash of
# words) makes its table one docs/data.md's VACUUM FULL must name.
WORDLESS = frozenset(
    {
        "scope", "persona", "platform", "user_id", "user", "speaker_id", "said_by", "kind",
        "state", "category", "policy", "reason", "room", "settings", "set_by", "bot_id",
        "channel_id", "bound_by", "hours", "timezone", "holder", "message_id", "writer",
        "day", "embedder", "key", "by", "related", "recent_recalls",
    }
)  # fmt: skip


async def test_the_documented_vacuum_full_names_every_table_that_holds_words(
    postgres_dsn: str,
) -> None:
    """Derived from the schema, as migrated: a table with a column that may hold words (of a
    text, binary, JSON, full-text or vector kind, and not WORDLESS) must be in docs/data.md's list;
    a new one fails here until it is."""
    store = await PgStore.open(postgres_dsn)
    try:
        async with store._pool.acquire() as conn:
            columns = await conn.fetch(
                "SELECT table_name, column_name FROM information_schema.columns"
                " WHERE table_schema = 'public' AND (data_type IN ('text', 'bytea', 'json',"
                " 'jsonb', 'tsvector', 'character varying', 'character', 'ARRAY')"
                " OR data_type = 'USER-DEFINED')"
            )
    finally:
        await store.close()
    holding = {r["table_name"] for r in columns if r["column_name"] not in WORDLESS}
    assert {"memories", "intentions", "conversation_inbox"} <= holding  # the scan sees them
    named = set(documented_vacuum().removeprefix("VACUUM FULL ").split(", "))
    assert named == holding


async def pages_holding(store: PgStore, needle: bytes) -> list[str]:
    """The files (after a checkpoint) of the tables and indexes that hold `needle`."""
    async with store._pool.acquire() as conn:
        await conn.execute("CHECKPOINT")
        relations = await conn.fetch(
            "SELECT c.oid::regclass::text AS name, pg_relation_filepath(c.oid) AS path"
            " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname IN ('public', 'pg_toast') AND c.relkind IN ('r', 'i', 't')"
            " AND pg_relation_size(c.oid) > 0"
        )
        return [
            r["name"]
            for r in relations
            if needle in await conn.fetchval("SELECT pg_read_binary_file($1)", r["path"])
        ]
