"""The stores: schema migrations, session snapshots, the archive and scope walls. Tests taking
the `store` fixture run on SQLite and on PostgreSQL (tests/fakes/postgres.py); those about
SQLite's file, WAL and lock stay SQLite-only."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

import memory.storage.archive
from memory.bank import MemoryBank
from memory.clock import FakeClock
from memory.records import (
    ArchivedConversation,
    ArchiveWrite,
    EncodingWrite,
    Memory,
    NewIntention,
    NewMemory,
    SessionSave,
)
from memory.storage import Storage, StoreError
from memory.storage.postgres import PgStore
from memory.storage.postgres import base as pg_base
from memory.storage.postgres import memories as pg_memories
from memory.storage.rows import memory_rows
from memory.storage.schema import migrations
from memory.storage.sqlite import Store
from memory.storage.sqlite import memories as sqlite_memories
from memory.storage.sqlite.base import MIGRATIONS
from tests.fakes.postgres import StoreOpener

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

SQLITE_ONLY = pytest.mark.parametrize("open_store", ["sqlite"], indirect=True)


@pytest.fixture
async def store(open_store: StoreOpener, tmp_path: Path) -> AsyncIterator[Storage]:
    opened = await open_store(tmp_path / "kizuna.sqlite3")
    yield opened
    await opened.close()


def kept(snapshot: dict[str, Any]) -> dict[str, Any]:
    """A snapshot as a load gives it back: with its turns (none if it had none), numbered
    from its "first", and how many have rows of their own."""
    return {"turns": [], "first": 0, "rows": 0, **snapshot}


def turns(*texts: str) -> list[dict[str, str]]:
    return [{"role": "user", "text": t} for t in texts]


async def archive(
    store: Storage, persona: str, scope: str, *texts: str, ended: datetime = T0
) -> int:
    return await store.archive_conversation(
        ArchiveWrite(
            persona,
            scope,
            started_at=ended - timedelta(minutes=10),
            ended_at=ended,
            reason="idle",
            turns=turns(*texts),
            snapshot={"turns": [], "state": {}},
        )
    )


# --- schema ----------------------------------------------------------------------------------


async def test_a_new_database_is_migrated_to_the_latest_version(store: Storage) -> None:
    latest = len(MIGRATIONS) if isinstance(store, Store) else len(pg_base.MIGRATIONS)
    assert await store.schema_version() == latest


async def test_reopening_is_idempotent_and_keeps_data(tmp_path: Path) -> None:
    path = tmp_path / "kizuna.sqlite3"
    store = await Store.open(path)
    await store.save_session("pip", "s1", {"turns": ["a"]}, T0)
    await store.close()

    for _ in range(2):
        store = await Store.open(path)
        try:
            assert await store.schema_version() == len(MIGRATIONS)
            row = await store.load_session("pip", "s1")
            assert row is not None and row.snapshot == kept({"turns": ["a"]})
        finally:
            await store.close()


async def test_an_upgrade_starts_each_memory_s_recent_recalls_at_its_last(tmp_path: Path) -> None:
    """Before migration 9 a memory kept only its last recall: that one becomes its recent
    recalls (what actr read of it before), and a recall then adds to them."""
    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    for number, script in enumerate(MIGRATIONS[:8]):
        db.executescript(f"BEGIN;\n{script}\nPRAGMA user_version = {number + 1};\nCOMMIT;")
    last = T0 + timedelta(days=2)
    with db:
        db.executemany(
            "INSERT INTO memories (id, scope, text, kind, importance, created_at,"
            " last_recalled_at, recall_count, strength)"
            " VALUES (?, 's', ?, 'fact', 1, ?, ?, ?, 1.5)",
            [
                (1, "recalled", T0.timestamp(), last.timestamp(), 3),
                (2, "never recalled", T0.timestamp(), None, 0),
            ],
        )
    db.close()
    store = await Store.open(path)
    try:
        recalled, untouched = await store.get_memories("s", [1, 2])
        assert recalled.recent_recalls == (last,) and untouched.recent_recalls == ()
        later = last + timedelta(days=1)
        await store.reinforce("s", [(1, 2.0)], later)
        [after] = await store.get_memories("s", [1])
        assert after.recent_recalls == (last, later)
    finally:
        await store.close()


async def test_a_database_from_a_newer_kizuna_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "kizuna.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    with pytest.raises(StoreError, match="newer"):
        await Store.open(path)
    # The refused database is left as it was (not migrated, not damaged).
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) + 1
        assert db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0


def migrations_package(root: Path, name: str, *numbers: int) -> str:
    """A package `name` under `root` whose migrations folder holds steps `numbers`."""
    folder = root / name / "migrations"
    folder.mkdir(parents=True)
    (root / name / "__init__.py").write_text("")
    (folder / "README.txt").write_text("not a migration")
    for number in numbers:
        (folder / f"{number:03d}_step_{number}.sql").write_text(f"-- step {number}\n")
    return name


def test_migrations_are_read_in_their_numbers_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(tmp_path)
    name = migrations_package(tmp_path, "steps_in_order", 3, 1, 2)
    assert migrations(name) == ("-- step 1\n", "-- step 2\n", "-- step 3\n")


@pytest.mark.parametrize("numbers", [(1, 3), (2, 3), ()])
def test_a_gap_in_the_migrations_is_refused(
    numbers: tuple[int, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(tmp_path)
    name = migrations_package(tmp_path, "steps_" + "_".join(map(str, numbers)), *numbers)
    with pytest.raises(RuntimeError, match="migrations"):
        migrations(name)


@SQLITE_ONLY
async def test_wal_mode_is_on(store: Storage, tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "kizuna.sqlite3") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal"


async def test_open_creates_missing_folders(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "a" / "b" / "kizuna.sqlite3")
    try:
        assert (tmp_path / "a" / "b" / "kizuna.sqlite3").exists()
    finally:
        await store.close()


async def test_memories_read_share_the_strings_their_rows_repeat(store: Storage) -> None:
    """A scope's rows repeat the scope, the speakers and their ids, the kind and the category:
    each listing of thousands (a prune's, a large scope's copy) holds each of them once."""
    at = T0 - timedelta(days=1)
    for text in ("ann has a cat", "ann likes tea"):
        await store.add_memory(
            NewMemory(
                "pip/s/ab", text, "Ann", "fact", "personal_daily", 2, 0.0, at, 1.0, speaker_id="u1"
            )
        )
    first, second = await store.list_memories("pip/s/ab")
    for field in ("scope", "speaker", "kind", "category", "speaker_id"):
        assert getattr(first, field) is getattr(second, field), field


async def test_a_whole_scope_is_listed_a_slice_of_rows_at_a_time(
    store: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Listing a whole scope (the daily prune does) makes memories of a slice of rows at a
    time, never holding all the rows beside all the memories; in the same order, whole or
    limited."""
    made: list[int] = []

    async def counted(rows: Sequence[Any]) -> list[Memory]:
        made.append(len(rows))
        return await memory_rows(rows)

    for module in (pg_memories, sqlite_memories):
        monkeypatch.setattr(module, "LIST_SLICE", 2)
        monkeypatch.setattr(module, "memory_rows", counted)
    texts = [f"memory {i}" for i in range(5)]
    for i, text in enumerate(texts):
        at = T0 - timedelta(days=5 - i // 2)  # two at a time alike: a slice may end between
        await store.add_memory(NewMemory("pip/s/ab", text, None, "fact", None, 2, 0.0, at, 1.0))
    newest = [m.text for m in await store.list_memories("pip/s/ab")]
    assert newest == texts[::-1] and max(made) == 2
    oldest = await store.list_memories("pip/s/ab", newest_first=False)
    assert [m.text for m in oldest] == texts
    for limit in (1, 2, 3, 4, 5, 6):
        listed = await store.list_memories("pip/s/ab", limit=limit)
        assert [m.text for m in listed] == texts[::-1][:limit]
        listed = await store.list_memories("pip/s/ab", limit=limit, newest_first=False)
        assert [m.text for m in listed] == texts[:limit]


# --- session snapshots -----------------------------------------------------------------------


async def test_save_and_load_a_session_snapshot(store: Storage) -> None:
    snapshot = {"turns": [{"text": "你好, Ünïcode"}], "state": {"party": "Ann"}}
    await store.save_session("pip", "discord:dm:u1", snapshot, T0)

    row = await store.load_session("pip", "discord:dm:u1")
    assert row is not None
    assert row.snapshot == kept(snapshot)
    assert row.updated_at == T0
    assert await store.load_session("pip", "discord:dm:u2") is None
    assert await store.load_session("other", "discord:dm:u1") is None


async def test_saving_again_replaces_the_snapshot(store: Storage) -> None:
    await store.save_session("pip", "s1", {"v": 1}, T0)
    await store.save_session("pip", "s1", {"v": 2}, T0 + timedelta(minutes=1))

    rows = await store.load_sessions(["pip"])
    assert [(r.scope, r.snapshot) for r in rows] == [("s1", kept({"v": 2}))]
    assert rows[0].updated_at == T0 + timedelta(minutes=1)


async def test_save_sessions_writes_several_snapshots_at_once(store: Storage) -> None:
    await store.save_session("pip", "s1", {"v": 0}, T0)
    later = T0 + timedelta(minutes=1)
    await store.save_sessions(
        [
            SessionSave("pip", "s1", {"v": 1}, later),
            SessionSave("pip", "s2", {"v": "二\ud800"}, later),
        ]
    )

    rows = await store.load_sessions(["pip"])
    assert [(r.scope, r.snapshot, r.updated_at) for r in rows] == [
        ("s1", kept({"v": 1}), later),
        ("s2", kept({"v": "二?"}), later),  # a lone surrogate is stored as "?", not a failed write
    ]
    await store.save_sessions([])


async def test_load_sessions_returns_every_scope_of_the_named_personas(store: Storage) -> None:
    await store.save_session("pip", "s1", {"v": 1}, T0)
    await store.save_session("pip", "s2", {"v": 2}, T0)
    await store.save_session("miao", "s1", {"v": 3}, T0)
    await store.save_session("dm", "s1", {"v": 4}, T0)

    rows = await store.load_sessions(["pip", "miao"])
    assert {(r.persona, r.scope): r.snapshot["v"] for r in rows} == {
        ("pip", "s1"): 1,
        ("pip", "s2"): 2,
        ("miao", "s1"): 3,
    }
    assert await store.load_sessions([]) == []
    assert sorted(await store.session_places("pip")) == ["s1", "s2"]
    assert await store.session_places("nobody") == []


async def test_a_save_writes_only_the_turns_the_store_does_not_hold(store: Storage) -> None:
    await store.save_sessions([SessionSave("pip", "s1", {"turns": ["a", "b"], "rows": 2}, T0)])
    # The store holds the first two as rows: the save writes the third, and the fourth goes
    # in the session's row.
    said = {"turns": ["A", "b", "c", "d"], "rows": 3, "state": {"x": "1"}}
    await store.save_sessions([SessionSave("pip", "s1", said, T0, stored=2)])

    row = await store.load_session("pip", "s1")
    assert row is not None
    assert row.snapshot == kept({"turns": ["a", "b", "c", "d"], "rows": 3, "state": {"x": "1"}})


async def test_turns_folded_or_archived_leave_the_store(store: Storage) -> None:
    await store.save_session("pip", "s1", {"turns": ["a", "b", "c"], "rows": 3}, T0)
    await store.save_session("pip", "s2", {"turns": ["other"], "rows": 1}, T0)

    def moved(reason: str, texts: tuple[str, ...], rest: dict[str, Any]) -> ArchiveWrite:
        return ArchiveWrite("pip", "s1", T0, T0, reason, turns(*texts), rest)

    await store.archive_conversation(
        moved("compressed", ("a", "b"), {"turns": ["c"], "first": 2, "rows": 1})
    )
    row = await store.load_session("pip", "s1")
    assert row is not None and row.snapshot == kept({"turns": ["c"], "first": 2, "rows": 1})
    said = {"turns": ["c", "d"], "first": 2, "rows": 2}
    await store.save_sessions([SessionSave("pip", "s1", said, T0, stored=3)])
    [row] = [r for r in await store.load_sessions(["pip"]) if r.scope == "s1"]
    assert row.snapshot == kept(said)

    await store.archive_conversation(moved("idle", ("c", "d"), {"turns": [], "first": 4}))
    row = await store.load_session("pip", "s1")
    assert row is not None and row.snapshot == kept({"first": 4})
    other = await store.load_session("pip", "s2")
    assert other is not None and other.snapshot["turns"] == ["other"]
    # Every row of s1's turns went with them: a head that says it has rows 2 and 3 (and
    # writes none, as if the store held them) finds none.
    said = {"turns": ["c", "d"], "first": 2, "rows": 2}
    await store.save_sessions([SessionSave("pip", "s1", said, T0, stored=4)])
    row = await store.load_session("pip", "s1")
    assert row is not None and row.snapshot["turns"] == []


async def test_a_snapshot_that_holds_its_turns_still_loads(tmp_path: Path) -> None:
    """Written before turns had rows of their own: loaded as it was."""
    path = tmp_path / "kizuna.sqlite3"
    await (await Store.open(path)).close()
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO sessions VALUES ('pip', 's1', ?, 0)", (json.dumps({"turns": ["a"]}),)
        )
    store = await Store.open(path)
    try:
        row = await store.load_session("pip", "s1")
        assert row is not None and row.snapshot == {"turns": ["a"]}
    finally:
        await store.close()


# --- the archive -----------------------------------------------------------------------------


async def test_archive_stores_the_turns_and_replaces_the_snapshot(store: Storage) -> None:
    await store.save_session("pip", "s1", {"turns": ["hi", "hello"], "state": {"x": "1"}}, T0)

    conversation_id = await store.archive_conversation(
        ArchiveWrite(
            "pip",
            "s1",
            started_at=T0,
            ended_at=T0 + timedelta(minutes=5),
            reason="end",
            turns=turns("hi", "hello"),
            snapshot={"turns": [], "state": {"x": "1"}},
        )
    )

    [conversation] = await store.conversations("pip", "s1")
    assert conversation.id == conversation_id
    assert conversation.turns == turns("hi", "hello")
    assert conversation.reason == "end"
    assert (conversation.started_at, conversation.ended_at) == (T0, T0 + timedelta(minutes=5))
    assert conversation.encoded_at is None
    row = await store.load_session("pip", "s1")
    assert row is not None and row.snapshot == kept({"turns": [], "state": {"x": "1"}})


async def test_a_failed_archive_changes_nothing(store: Storage) -> None:
    """The insert runs, then writing the snapshot fails: both are rolled back together."""
    await store.save_session("pip", "s1", {"turns": ["still open"]}, T0)

    with pytest.raises(TypeError):
        await store.archive_conversation(
            ArchiveWrite(
                "pip",
                "s1",
                started_at=T0,
                ended_at=T0,
                reason="idle",
                turns=turns("still open"),
                snapshot={"bad": object()},  # not JSON: fails after the conversation was inserted
            )
        )

    assert await store.count_conversations("pip", "s1") == 0
    row = await store.load_session("pip", "s1")
    assert row is not None and row.snapshot == kept({"turns": ["still open"]})
    # ...and the connection is still usable afterwards.
    await archive(store, "pip", "s1", "next")
    assert await store.count_conversations("pip", "s1") == 1


async def test_a_failed_archive_is_not_committed_by_a_later_write(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "kizuna.sqlite3")
    with pytest.raises(TypeError):
        await store.archive_conversation(
            ArchiveWrite(
                "pip",
                "s1",
                started_at=T0,
                ended_at=T0,
                reason="idle",
                turns=turns("x"),
                snapshot={"bad": object()},
            )
        )
    await store.save_session("pip", "s2", {"v": 1}, T0)
    await store.close()

    store2 = await Store.open(tmp_path / "kizuna.sqlite3")
    try:
        assert await store2.count_conversations("pip", "s1") == 0
    finally:
        await store2.close()


async def test_conversations_are_newest_first_and_limited(store: Storage) -> None:
    for n in range(5):
        await archive(store, "pip", "s1", f"talk {n}", ended=T0 + timedelta(hours=n))

    newest = await store.conversations("pip", "s1", limit=3)
    assert [c.turns[0]["text"] for c in newest] == ["talk 4", "talk 3", "talk 2"]
    assert await store.count_conversations("pip", "s1") == 5


async def test_a_scope_is_a_wall(store: Storage) -> None:
    await archive(store, "pip", "discord:dm:u1", "private secret")
    await archive(store, "pip", "discord:g1:channel:c1", "group chatter")
    await archive(store, "miao", "discord:dm:u1", "told the cat")

    def texts(conversations: list[ArchivedConversation]) -> list[str]:
        return [t["text"] for c in conversations for t in c.turns]

    assert texts(await store.conversations("pip", "discord:dm:u1")) == ["private secret"]
    assert texts(await store.conversations("pip", "discord:g1:channel:c1")) == ["group chatter"]
    assert texts(await store.conversations("miao", "discord:dm:u1")) == ["told the cat"]
    assert await store.conversations("miao", "discord:g1:channel:c1") == []
    assert await store.count_conversations("pip", "discord:dm:u2") == 0


async def test_wipe_deletes_only_one_persona_in_one_scope(store: Storage) -> None:
    for persona, scope in [("pip", "s1"), ("pip", "s2"), ("miao", "s1")]:
        await archive(store, persona, scope, f"{persona}/{scope}")
        await store.save_session(persona, scope, {"who": f"{persona}/{scope}"}, T0)

    await store.wipe("pip", "s1")

    assert await store.load_session("pip", "s1") is None
    assert await store.count_conversations("pip", "s1") == 0
    for persona, scope in [("pip", "s2"), ("miao", "s1")]:
        row = await store.load_session(persona, scope)
        assert row is not None and row.snapshot == kept({"who": f"{persona}/{scope}"})
        assert await store.count_conversations(persona, scope) == 1


async def test_a_data_dir_that_is_a_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("not a folder")
    with pytest.raises(StoreError, match="cannot open the database"):
        await Store.open(tmp_path / "data" / "kizuna.sqlite3")


async def test_a_file_that_is_not_a_database_is_a_clear_error_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "kizuna.sqlite3"
    path.write_text("my notes, not a database")
    with pytest.raises(StoreError, match="not a database"):
        await Store.open(path)
    assert path.read_text() == "my notes, not a database"


async def test_a_second_process_is_refused_while_the_first_has_the_database(
    tmp_path: Path,
) -> None:
    path = tmp_path / "kizuna.sqlite3"
    first = await Store.open(path)
    try:
        with pytest.raises(StoreError, match="in use by another Kizuna process"):
            await Store.open(path)
    finally:
        await first.close()
    second = await Store.open(path)  # free again once the first has closed
    await second.close()


async def test_undecodable_input_is_stored_not_fatal(store: Storage) -> None:
    snapshot = {"turns": [{"text": "caf\udce9"}]}  # a byte that was not UTF-8
    await store.save_session("pip", "s1", snapshot, T0)
    row = await store.load_session("pip", "s1")
    assert row is not None and row.snapshot == kept({"turns": [{"text": "caf?"}]})


async def test_a_scope_lock_is_held_by_one_task_at_a_time(store: Storage) -> None:
    async with store.scope_lock("pip/a") as held:
        assert held
        async with store.scope_lock("pip/a") as again:
            assert not again  # another task of this process is encoding or pruning it
        async with store.scope_lock("pip/b") as other:
            assert other
    async with store.scope_lock("pip/a") as held:
        assert held


async def test_unencoded_skips_the_scopes_held_elsewhere(store: Storage) -> None:
    first = await archive(store, "pip", "s/a", "one", ended=T0)
    second = await archive(store, "pip", "s/b", "two", ended=T0 + timedelta(minutes=1))
    third = await archive(store, "miao", "s/a", "three", ended=T0 + timedelta(minutes=2))
    later = T0 + timedelta(hours=1)

    async def waiting(*skip: tuple[str, str]) -> list[int]:
        return [c.id for c in await store.unencoded(["pip", "miao"], later, skip=skip)]

    assert await waiting() == [first, second, third]
    assert await waiting(("pip", "s/a")) == [second, third]  # a pair: miao's s/a stays
    assert await waiting(("pip", "s/a"), ("miao", "s/a"), ("pip", "s/b")) == []


# --- the archive's bounded history -------------------------------------------------------------

OLD = T0 - timedelta(days=100)
CUTOFF = T0 - timedelta(days=90)


async def encode(store: Storage, conversation: int, scope: str, *texts: str) -> list[int]:
    """Mark the conversation encoded, with a memory made from it of each text."""
    at = T0 - timedelta(days=99)
    memories = [
        NewMemory(scope, t, None, "fact", None, 2, 0.0, at, 1.0, conversation_id=conversation)
        for t in texts
    ]
    write = EncodingWrite(conversation, scope, at, memories, [()] * len(texts), [], None, [], "")
    ids = await store.commit_encoding(write)
    assert ids is not None
    return ids


def reminder(scope: str, created: datetime) -> NewIntention:
    return NewIntention(
        scope=scope,
        user_id="u1",
        kind="reminder",
        what="call Jun",
        ask="remind them to call Jun",
        due_at=T0 + timedelta(days=1),
        until=T0 + timedelta(days=2),
        created_at=created,
    )


async def test_the_archive_lets_old_encoded_conversations_go_but_each_scopes_newest(
    store: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory.storage.archive, "TRIM_BATCH", 2)  # several batches
    first = await archive(store, "pip", "s/a", "one", ended=OLD)
    second = await archive(store, "pip", "s/a", "two", ended=OLD + timedelta(hours=1))
    waiting = await archive(store, "pip", "s/a", "three", ended=OLD + timedelta(hours=2))
    newest = await archive(store, "pip", "s/a", "four", ended=T0)
    alone = await archive(store, "pip", "s/b", "five", ended=OLD)
    others = await archive(store, "miao", "s/a", "six", ended=OLD)
    recent = await archive(store, "miao", "s/a", "seven", ended=CUTOFF + timedelta(hours=1))
    for conversation, scope in (
        (first, "pip/s/a"),
        (second, "pip/s/a"),
        (newest, "pip/s/a"),
        (alone, "pip/s/b"),
        (others, "miao/s/a"),
        (recent, "miao/s/a"),
    ):
        await encode(store, conversation, scope)

    assert await store.trim_archive(CUTOFF) == 3

    left = [c.id for c in await store.conversations("pip", "s/a")]
    assert left == [newest, waiting]  # the one still to encode stays
    assert [c.id for c in await store.conversations("pip", "s/b")] == [alone]  # its newest
    assert [c.id for c in await store.conversations("miao", "s/a")] == [recent]
    assert await store.trim_archive(CUTOFF) == 0


async def test_a_reminder_set_in_a_conversation_goes_with_its_memory_after_the_archive_let_it_go(
    store: Storage,
) -> None:
    """The tool's reminder is given the conversation it was set in when that is archived:
    forgetting a memory made from it deletes the reminder once the conversation is gone."""
    await store.add_intention(reminder("pip/s/a", OLD - timedelta(minutes=5)))
    await store.add_intention(reminder("pip/s/b", OLD - timedelta(minutes=5)))  # another chat
    conversation = await archive(store, "pip", "s/a", "remind me to call Jun", ended=OLD)
    [mine] = await store.intentions("pip/s/a")
    [theirs] = await store.intentions("pip/s/b")
    assert (mine.conversation_id, theirs.conversation_id) == (conversation, None)
    made = await encode(store, conversation, "pip/s/a", "Jun is Alice's sister")
    await encode(store, await archive(store, "pip", "s/a", "later", ended=T0), "pip/s/a")
    other = await archive(store, "pip", "s/b", "remind me too", ended=OLD)  # its own, newest
    [theirs] = await store.intentions("pip/s/b")
    assert theirs.conversation_id == other

    assert await store.trim_archive(CUTOFF) == 1
    assert await store.conversation(conversation) is None

    assert await store.delete_memories("pip/s/a", made) == made
    assert await store.intentions("pip/s/a", open_only=False) == []


async def test_a_reminder_kept_without_its_conversation_keeps_that_in_the_archive(
    store: Storage,
) -> None:
    """A reminder kept before reminders were given their conversation is found by its time:
    the conversations of that time stay, so forgetting a memory made then still finds it."""
    conversation = await archive(store, "pip", "s/a", "remind me to call Jun", ended=OLD)
    await store.add_intention(reminder("pip/s/a", OLD - timedelta(minutes=5)))  # as before
    made = await encode(store, conversation, "pip/s/a", "Jun is Alice's sister")
    await encode(store, await archive(store, "pip", "s/a", "later", ended=T0), "pip/s/a")

    assert await store.trim_archive(CUTOFF) == 0

    assert await store.delete_memories("pip/s/a", made) == made
    assert await store.intentions("pip/s/a", open_only=False) == []


# --- full text: the same words match on both stores -------------------------------------------

FACTS = (
    "I am making plans for the summer",
    "My brother is allergic to peanuts",
    "We went running along the river",
    "The café near the station closed",
    "我妹妹下个月过生日",
)
# Each finds its fact only by a stemmed (or accent-folded) word: FTS5's porter tokenizer
# stems, and PostgreSQL's store stems the same way in Python.
STEMMED_CUES = ("what was the plan", "any peanut allergy", "who runs by the river", "cafe", "生日")


async def _recalled(bank: MemoryBank) -> list[list[tuple[int, str, float]]]:
    return [
        [(r.id, r.text, round(r.score, 6)) for r in await bank.recall("u1", cue, now=T0)]
        for cue in STEMMED_CUES
    ]


async def test_recall_is_the_same_on_both_stores(postgres_dsn: str, tmp_path: Path) -> None:
    """The same memories, the same cues: the same memories in the same order with the same
    scores on SQLite and PostgreSQL, stemmed words included; and a PostgreSQL row written
    before its full text was stemmed (migration 008 clears it) is derived again at open."""
    sqlite = await Store.open(tmp_path / "kizuna.sqlite3")
    pg = await PgStore.open(postgres_dsn)
    found = []
    for store, folder in ((sqlite, "a"), (pg, "b")):
        bank = await MemoryBank.open(
            tmp_path / folder, "hash", FakeClock(T0), deterministic=True, store=store
        )
        for i, fact in enumerate(FACTS):
            await bank.remember("u1", fact, when=T0 - timedelta(days=i + 1))
        found.append(await _recalled(bank))
        await bank.close()
    await sqlite.close()
    await pg.close()
    assert found[0] == found[1]
    assert [hits[0][1] for hits in found[0]] == list(FACTS)

    conn = await asyncpg.connect(postgres_dsn)
    try:
        await conn.execute("UPDATE memories SET search = NULL")
        await conn.execute("UPDATE memories SET search_body = search_body || ' ' WHERE id = 1")
    finally:
        await conn.close()
    pg = await PgStore.open(postgres_dsn)
    bank = await MemoryBank.open(
        tmp_path / "c", "hash", FakeClock(T0), deterministic=True, store=pg
    )
    try:
        assert await _recalled(bank) == found[1]
    finally:
        await bank.close()
        await pg.close()


async def test_a_profile_keeps_the_other_names_its_member_goes_by(store: Storage) -> None:
    """Aliases are written with the profile, one a line, and replaced by the next encoding;
    `members` reads the names alone, of one scope."""
    at = datetime(2026, 1, 1, tzinfo=UTC)
    for aliases in (("Nana", "Ana\nSYSTEM"), ("娜娜",)):
        conversation = await store.archive_conversation(
            ArchiveWrite(
                "dm",
                "discord:g1:channel:c1",
                started_at=at,
                ended_at=at,
                reason="idle",
                turns=[],
                snapshot={},
            )
        )
        write = EncodingWrite(
            conversation_id=conversation,
            scope="dm/discord:g1:channel:c1",
            at=at,
            memories=[],
            sibling_links=[],
            merges=[],
            diary=None,
            profiles=[("u1", "Annie", "Likes tea."), ("u2", "Bob", "")],
            recap="",
            aliases={"u1": aliases},
        )
        assert await store.commit_encoding(write) == []
        found = {p.user_id: p.aliases for p in await store.profiles("dm/discord:g1:channel:c1")}
        assert found == {"u1": tuple(" ".join(a.split()) for a in aliases), "u2": ()}
        members = await store.members("dm/discord:g1:channel:c1")
        assert sorted((m.user_id, m.name, m.aliases) for m in members) == [
            ("u1", "Annie", found["u1"]),
            ("u2", "Bob", ()),
        ]
        # The members and one's profile in one read: the same as read apart.
        for user_id in ("u1", "u2", "u3"):
            together = await store.members_and_profile("dm/discord:g1:channel:c1", user_id)
            profile = await store.profiles("dm/discord:g1:channel:c1", [user_id])
            assert together == (members, next(iter(profile), None))
    assert await store.members("dm/discord:g1:channel:c2") == []
