"""The PostgreSQL store: migrations, several processes on one database (each other's writes,
a conversation encoded once), full-text search behind scope walls (Chinese too), and the same
answers as the SQLite store for the same calls."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import numpy as np
import pytest

from memory.records import ArchiveWrite, EncodingWrite, Merge, NewMemory, PruneWrite
from memory.storage import StoreError
from memory.storage.postgres import PgStore
from memory.storage.postgres.base import MIGRATIONS
from memory.storage.postgres.memories import _DOCUMENT_FREQUENCIES, _LEXICAL_SEARCH
from memory.storage.sqlite import Store
from memory.text import fts_document, fts_query
from tests.fakes.postgres import kill_lock_holders

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
async def store(postgres_dsn: str) -> AsyncIterator[PgStore]:
    store = await PgStore.open(postgres_dsn)
    yield store
    await store.close()


def new(scope: str, text: str, *, context: str = "", **fields: Any) -> NewMemory:
    values: dict[str, Any] = {
        "speaker": None,
        "kind": "fact",
        "category": None,
        "importance": 2,
        "sentiment": 0.0,
        "created_at": T0,
        "strength": 3.0,
        "search_text": fts_document(text),
        "search_context": fts_document(context),
    }
    values.update(fields)
    return NewMemory(scope=scope, text=text, **values)


async def archive(store: Store | PgStore, scope: str) -> int:
    return await store.archive_conversation(
        ArchiveWrite(
            "pip",
            scope,
            started_at=T0,
            ended_at=T0 + timedelta(minutes=5),
            reason="idle",
            turns=[{"role": "user", "text": "hi"}],
            snapshot={"turns": []},
        )
    )


def encoding(conversation_id: int, scope: str, merges: tuple[Merge, ...] = ()) -> EncodingWrite:
    return EncodingWrite(
        conversation_id=conversation_id,
        scope=scope,
        at=T0 + timedelta(hours=1),
        memories=[new(scope, "Ann adopted a kitten"), new(scope, "the kitten is called Mochi")],
        sibling_links=[[], [0]],
        merges=merges,
        diary=(date(2026, 1, 1), "Ann told me about her kitten."),
        profiles=[("u1", "Ann", "has a kitten")],
        recap="kittens",
    )


# --- migrations ------------------------------------------------------------------------------


async def test_a_new_database_is_migrated_and_reopening_keeps_data(postgres_dsn: str) -> None:
    store = await PgStore.open(postgres_dsn)
    assert await store.schema_version() == len(MIGRATIONS)
    memory_id = await store.add_memory(new("s1", "kept"))
    await store.close()

    store = await PgStore.open(postgres_dsn)
    try:
        assert await store.schema_version() == len(MIGRATIONS)
        assert [m.text for m in await store.get_memories("s1", [memory_id])] == ["kept"]
    finally:
        await store.close()


async def test_a_reinforced_memory_is_rewritten_on_its_page_touching_no_index(
    store: PgStore,
) -> None:
    """A recall's new recall state goes on the row's own page (a HOT update, as none of it is
    indexed: no index entry, no insertion into the vector graph), on pages written full of
    memories too. Each page keeps the room."""
    ids = [await store.add_memory(new("s1", f"memory {n} " + "words " * 60)) for n in range(60)]
    pages = "SELECT id, (ctid::text::point)[0] FROM memories WHERE id = ANY($1::bigint[])"
    async with store._pool.acquire() as conn:
        before = dict(await conn.fetch(pages, ids))
        assert len(set(before.values())) > 2  # several pages, each shared
        firsts = [min(i for i in ids if before[i] == page) for page in set(before.values())]
        await store.reinforce("s1", [(i, 4.0) for i in firsts], T0 + timedelta(days=1))
        after = dict(await conn.fetch(pages, firsts))
    assert after == {i: before[i] for i in firsts}


async def test_a_database_from_a_newer_kizuna_is_refused(postgres_dsn: str) -> None:
    store = await PgStore.open(postgres_dsn)
    await store.close()
    conn = await asyncpg.connect(postgres_dsn)
    try:
        await conn.execute("UPDATE kizuna_schema SET version = $1", len(MIGRATIONS) + 1)
        with pytest.raises(StoreError, match="newer"):
            await PgStore.open(postgres_dsn)
        # The refused database is left as it was.
        assert await conn.fetchval("SELECT version FROM kizuna_schema") == len(MIGRATIONS) + 1
    finally:
        await conn.close()


async def test_processes_opening_a_new_database_together_migrate_it_once(
    postgres_dsn: str,
) -> None:
    stores = await asyncio.gather(*(PgStore.open(postgres_dsn) for _ in range(3)))
    try:
        assert [await s.schema_version() for s in stores] == [len(MIGRATIONS)] * 3
    finally:
        for s in stores:
            await s.close()


async def test_an_unreachable_server_is_a_clear_error_without_the_password() -> None:
    with pytest.raises(StoreError, match="cannot open the database") as refused:
        await PgStore.open("postgresql://postgres:hunter2@127.0.0.1:9/none")
    assert "127.0.0.1:9/none" in str(refused.value) and "hunter2" not in str(refused.value)


async def test_a_connection_given_back_keeps_its_session_but_not_an_open_transaction(
    postgres_dsn: str,
) -> None:
    """The pool does not reset what a connection set for its session (a round trip on every
    release, for state the store never leaves behind), but asyncpg still rolls back a
    transaction left open."""
    store = await PgStore.open(postgres_dsn, max_size=1)  # the same connection each time
    try:
        async with store._pool.acquire() as conn:
            await conn.execute("SET work_mem = '7MB'")
            await conn.execute("BEGIN")
            await conn.execute("INSERT INTO scope_sizes (scope, memories) VALUES ('left', 1)")
        async with store._pool.acquire() as conn:
            assert await conn.fetchval("SHOW work_mem") == "7MB"
            assert await conn.fetchval("SELECT count(*) FROM scope_sizes") == 0
    finally:
        await store.close()


# --- several processes -----------------------------------------------------------------------


async def test_two_stores_on_one_database_see_each_others_writes(postgres_dsn: str) -> None:
    a, b = await PgStore.open(postgres_dsn), await PgStore.open(postgres_dsn)
    try:
        memory_id = await a.add_memory(new("s1", "written by a"))
        assert [m.text for m in await b.get_memories("s1", [memory_id])] == ["written by a"]
        await b.save_session("pip", "s1", {"by": "b"}, T0)
        row = await a.load_session("pip", "s1")
        assert row is not None and row.snapshot == {"by": "b", "turns": [], "first": 0, "rows": 0}
        await b.reinforce("s1", [(memory_id, 9.0)], T0)
        [seen] = await a.get_memories("s1", [memory_id])
        assert (seen.recall_count, seen.strength) == (1, 9.0)
    finally:
        await a.close()
        await b.close()


async def test_two_stores_reinforcing_the_same_memories_crosswise_count_every_recall(
    postgres_dsn: str,
) -> None:
    """Recalls of the same memories asked in opposite orders by two processes at once: each
    statement locks its rows in one order, so they wait for each other (never a deadlock),
    and every recall is counted and logged once."""
    a, b = await PgStore.open(postgres_dsn), await PgStore.open(postgres_dsn)
    try:
        ids = [await a.add_memory(new("s1", f"memory {n}")) for n in range(8)]
        at = [T0 + timedelta(hours=n) for n in range(6)]
        await asyncio.gather(
            *(a.reinforce("s1", [(i, 2.0) for i in ids], when) for when in at),
            *(b.reinforce("s1", [(i, 3.0) for i in reversed(ids)], when) for when in at),
        )
        memories = await a.get_memories("s1", ids)
        assert [m.recall_count for m in memories] == [12] * len(ids)
        logged = await a._pool.fetchval(
            "SELECT count(*) FROM recalls WHERE memory_id = ANY($1::bigint[])", ids
        )
        assert logged == 12 * len(ids)
    finally:
        await a.close()
        await b.close()


async def test_a_conversation_encoded_by_two_stores_at_once_is_written_once(
    postgres_dsn: str,
) -> None:
    a, b = await PgStore.open(postgres_dsn), await PgStore.open(postgres_dsn)
    try:
        merged = await a.add_memory(new("s1", "Ann likes cats"))
        conversation_id = await archive(a, "s1")
        write = encoding(conversation_id, "s1", (Merge(merged, 7.0, 3),))

        results = await asyncio.gather(*(s.commit_encoding(write) for s in (a, b, a, b)))

        written = [r for r in results if r is not None]
        assert len(written) == 1 and len(written[0]) == 2
        assert await a.count_memories("s1") == 3
        [merged_now] = await b.get_memories("s1", [merged])
        assert (merged_now.recall_count, merged_now.importance) == (1, 3)
        entry = await b.diary_entry("s1", date(2026, 1, 1))
        assert entry is not None and entry.conversations == 1
        assert await a.unencoded(["pip"], T0 + timedelta(days=1)) == []
    finally:
        await a.close()
        await b.close()


async def test_a_failed_encoding_writes_nothing(store: PgStore) -> None:
    conversation_id = await archive(store, "s1")
    with pytest.raises(asyncpg.PostgresError):
        await store.commit_encoding(
            EncodingWrite(
                conversation_id=conversation_id,
                scope="s1",
                at=T0,
                memories=[new("s1", "fine"), new("s1", "too important", importance=9)],
                sibling_links=[[], []],
                merges=(),
                diary=None,
                profiles=(),
                recap="",
            )
        )
    assert await store.count_memories("s1") == 0
    assert [c.id for c in await store.unencoded(["pip"], T0)] == [conversation_id]


# --- full-text search ------------------------------------------------------------------------


async def test_lexical_search_stays_inside_its_scope(store: PgStore) -> None:
    mine = await store.add_memory(new("s1", "my cat Mochi sleeps all day"))
    await store.add_memory(new("s1", "the office was busy"))
    theirs = await store.add_memory(new("s2", "their cat Mochi and another cat"))

    for narrow in (True, False):
        found = await store.lexical_search("s1", '"cat" OR "mochi"', 10, narrow=narrow)
        assert [i for i, _ in found] == [mine]
    assert [i for i, _ in await store.lexical_search("s2", '"mochi"', 10)] == [theirs]
    assert await store.lexical_search("s3", '"mochi"', 10) == []
    assert await store.document_frequencies("s1", ["cat", "office", "zebra"]) == {
        "cat": 1,
        "office": 1,
        "zebra": 0,
    }


async def test_full_text_search_looks_up_the_scopes_tag_with_each_word(store: PgStore) -> None:
    """Both full-text statements write the index's expression as migration 019 does, so the
    server finds a word's matches among the scope's own memories (by its tag) instead of
    among every scope's: a query written otherwise would fall back to reading the scope."""
    await store.add_memory(new("s1", "my cat Mochi sleeps all day"))
    await store.add_memory(new("s2", "their cat Mochi"))
    async with store._pool.acquire() as conn:
        # A table this small is read whole, or through the scope's btree: neither, here (the
        # drop is rolled back).
        undo = conn.transaction()
        await undo.start()
        try:
            await conn.execute("SET LOCAL enable_seqscan = off")
            await conn.execute("DROP INDEX memories_by_scope, memories_by_scope_id")
            plans = [
                await conn.fetch("EXPLAIN " + _LEXICAL_SEARCH, "s1", ["cat"], [0, 0, 0.35, 1], 9),
                await conn.fetch("EXPLAIN " + _DOCUMENT_FREQUENCIES, "s1", ["cat"]),
            ]
        finally:
            await undo.rollback()
    for plan in plans:
        assert "memories_search_scoped" in "\n".join(row[0] for row in plan)


async def test_lexical_search_ranks_rarer_and_own_words_first(store: PgStore) -> None:
    common = [await store.add_memory(new("s1", f"went to work on day {n}")) for n in range(5)]
    rare = await store.add_memory(new("s1", "went to the aquarium"))
    answer = await store.add_memory(new("s1", "sharks", context="went to the aquarium"))

    found = await store.lexical_search("s1", '"went" OR "aquarium"', 10)
    ids = [i for i, _ in found]
    assert ids[0] == rare  # both words, the rare one in its own text
    assert ids[1] == answer  # the rare word only in its context
    assert set(ids[2:]) == set(common)
    scores = [score for _, score in found]
    assert scores == sorted(scores, reverse=True) and scores[-1] > 0
    # At weight 0 the context still matches but scores nothing (as FTS5's bm25() does).
    found = await store.lexical_search("s1", '"aquarium"', 10, context_weight=0)
    assert found[0][0] == rare and dict(found)[answer] == 0


async def test_chinese_memories_are_found_by_their_words(store: PgStore) -> None:
    park = await store.add_memory(new("s1", "我今天去了公园看猫咪"))
    await store.add_memory(new("s1", "明天要加班"))
    name = await store.add_memory(new("s1", "我的猫咪叫麻糬"))

    match = fts_query("猫咪在哪里")
    assert match is not None
    assert {i for i, _ in await store.lexical_search("s1", match, 10)} == {park, name}
    match = fts_query("公园")
    assert match is not None
    assert [i for i, _ in await store.lexical_search("s1", match, 10)] == [park]
    assert await store.document_frequencies("s1", ["猫咪", "加班"]) == {"猫咪": 2, "加班": 1}


async def test_deleting_a_memory_drops_it_from_its_successors_context(store: PgStore) -> None:
    first = await store.add_memory(new("s1", "the aquarium"))
    second = await store.add_memory(new("s1", "sharks", context="the aquarium", previous_id=first))

    assert await store.delete_memories("s1", [first, 12345]) == [first]

    assert await store.lexical_search("s1", '"aquarium"', 10) == []
    [successor] = await store.get_memories("s1", [second])
    assert successor.previous_id is None


# --- the same answers as SQLite --------------------------------------------------------------


async def script(store: Store | PgStore) -> list[Any]:
    """Every operation once, in order; what each returned (lexical scores aside: the two rank
    with different formulas)."""
    out: list[Any] = []
    vector = np.arange(4, dtype=np.float32)
    a = await store.add_memory(
        new(
            "s1",
            "Ann went to the aquarium",
            speaker="Ann",
            kind="episodic",
            category="social_emotional",
            sentiment=0.5,
            related=(7,),
            conversation_id=3,
            embedding=vector,
            embedder="hash",
        )
    )
    b = await store.add_memory(new("s1", "sharks", context="aquarium", previous_id=a))
    c = await store.add_memory(new("s2", "caf\udce9 in another scope"))
    out += [a, b, c]
    out.append(await store.get_memories("s1", [b, a, c, 999]))
    out.append(await store.list_memories("s1", limit=1, newest_first=False))
    out.append(await store.list_memories("s1"))
    out += [await store.count_memories("s1"), await store.last_memory("s1")]
    out.append(sorted(m.id for m in await store.with_successors("s1", [a])))
    await store.reinforce("s1", [(a, 5.5)], T0 + timedelta(days=1))
    out.append(await store.recall_history("s1", a))
    out.append(await store.recall_history("s2", a))
    await store.set_related("s1", b, [a])
    await store.set_embeddings("s1", "hash", [(b, vector + 1)])
    ids, vectors = await store.embeddings("s1", "hash")
    out += [ids.tolist(), None if vectors is None else vectors.tolist()]
    out.append([m.id for m in await store.unembedded("s2", "hash")])
    out.append(await store.embedding_digest("s1", "hash"))
    await store.cache_embeddings("hash", [(b"k1", b"v1"), (b"k2", b"v2"), (b"k1", b"v3")])
    out.append(await store.cached_embeddings("hash", [b"k1", b"k2", b"k3"]))
    await store.forget_cached([b"k2"])
    out.append(await store.cached_embeddings("hash", [b"k1", b"k2"]))
    out.append(sorted(i for i, _ in await store.lexical_search("s1", '"aquarium"', 10)))
    out.append(await store.document_frequencies("s1", ["aquarium", "sharks"]))
    out += [await store.scopes(), await store.sizes("s2")]

    conversation_id = await archive(store, "s1")
    out.append(await store.unencoded(["pip"], T0))
    await store.encoding_failed(conversation_id, T0 + timedelta(minutes=30))
    out.append(await store.unencoded(["pip"], T0))
    out.append(await store.conversation(conversation_id))
    write = encoding(conversation_id, "s1", (Merge(a, 8.0, 3),))
    out += [await store.commit_encoding(write), await store.commit_encoding(write)]
    out.append(await store.conversations("pip", "s1"))
    out.append(await store.recall_history("s1", a))
    out.append(await store.diary_entry("s1", date(2026, 1, 1)))
    out.append(await store.diary_entries("s1", before=date(2026, 1, 2)))
    out += [await store.profiles("s1"), await store.profiles("s1", ["u2"])]
    [memory_a] = await store.get_memories("s1", [a])
    out.append(
        await store.prune(PruneWrite("s1", date(2026, 1, 2), [(memory_a, "faded")], "curve", T0))
    )
    out += [await store.last_prune("s1"), await store.pruned_since(T0, scope="s1")]
    out.append(await store.delete_memories("s1", [b, c]))
    out.append(await store.wipe_memories("s1"))
    out += [await store.list_memories("s1"), await store.profiles("s1"), await store.scopes()]

    await store.bind_channel("bot", "c1", "pip", "u1", T0)
    out.append(await store.channel_persona("bot", "c1"))
    await store.set_dm_sharing("pip", "discord:u1", True, T0)
    await store.set_dm_sharing("pip", "discord:u1", True, T0)
    out.append(await store.dm_sharing("pip", "discord:u1"))
    await store.set_dm_sharing("pip", "discord:u1", False, T0)
    out.append(await store.dm_sharing("pip", "discord:u1"))
    await store.wipe("pip", "s1")
    out.append(await store.load_sessions(["pip"]))
    return out


async def test_postgres_answers_as_sqlite_does(store: PgStore, tmp_path: Path) -> None:
    sqlite = await Store.open(tmp_path / "kizuna.sqlite3")
    try:
        expected = await script(sqlite)
    finally:
        await sqlite.close()
    assert await script(store) == expected


async def test_one_process_leads_the_daily_jobs_and_another_takes_over(postgres_dsn: str) -> None:
    first, second = await PgStore.open(postgres_dsn), await PgStore.open(postgres_dsn)
    third = await PgStore.open(postgres_dsn)
    try:
        assert await first.leads("daily")
        assert await first.leads("daily")  # it keeps the lead
        assert not await second.leads("daily")
        assert await second.leads("reports")  # another job, another lock
        await first.close()  # the leader goes away: its lock goes with its connection
        assert await second.leads("daily")
        assert not await third.leads("daily")
        assert await kill_lock_holders(postgres_dsn) == 1  # the leader dies without a word
        assert await third.leads("daily")
        assert not await second.leads("daily")  # back on a new connection: the lead is gone
    finally:
        for store in (first, second, third):
            await store.close()


async def test_connections_are_probed_while_idle(store: PgStore) -> None:
    """A machine that dies sends no word: the server finds its connections gone by probing
    them, within a minute, and their leads, locks and leases pass to the others."""
    async with store._pool.acquire() as conn:
        shown = [await conn.fetchval(f"SHOW tcp_keepalives_{n}") for n in ("idle", "count")]
    assert shown == ["30", "3"]
    assert await store.leads("daily")  # (opens its own connection: the same settings)
    assert store._session is not None
    assert await store._session.fetchval("SHOW tcp_keepalives_interval") == "10"


async def test_a_scope_locked_by_one_process_is_skipped_by_another(postgres_dsn: str) -> None:
    first, second = await PgStore.open(postgres_dsn), await PgStore.open(postgres_dsn)
    try:
        async with first.scope_lock("pip/a") as held:
            assert held
            async with second.scope_lock("pip/a") as elsewhere:
                assert not elsewhere  # not waited for
            async with second.scope_lock("pip/b") as other:
                assert other
        async with second.scope_lock("pip/a") as held:
            assert held  # released after the first's work
        async with first.scope_lock("pip/c") as held:
            assert held
            assert await kill_lock_holders(postgres_dsn) == 1  # the first process dies
            async with second.scope_lock("pip/c") as taken:
                assert taken
                async with first.scope_lock("pip/c") as again:  # first, on a new connection
                    assert not again
        async with first.scope_lock("pip/c") as held:
            assert held
    finally:
        await first.close()
        await second.close()


async def test_scope_sizes_follow_adds_deletes_and_wipes(store: PgStore, postgres_dsn: str) -> None:
    ids = [await store.add_memory(new("s/a", f"memory {i}")) for i in range(5)]
    await store.add_memory(new("s/b", "another scope"))
    await store.delete_memories("s/a", ids[:2])
    db = await asyncpg.connect(postgres_dsn)
    try:

        async def sizes() -> dict[str, int]:
            rows = await db.fetch("SELECT scope, memories FROM scope_sizes")
            return {r["scope"]: r["memories"] for r in rows}

        assert await sizes() == {"s/a": 3, "s/b": 1}
        assert await store.count_memories("s/a") == 3
        await store.wipe_memories("s/a")
        assert await sizes() == {"s/a": 0, "s/b": 1}
    finally:
        await db.close()


async def test_an_upgrade_starts_each_memory_s_recent_recalls_at_its_last(
    postgres_dsn: str,
) -> None:
    """The recent-recalls migration on PostgreSQL: a memory kept only its last recall before
    it, and that one becomes its recent recalls; a recall then adds to them."""
    store = await PgStore.open(postgres_dsn)
    await store.close()
    last = T0 + timedelta(days=2)
    before = next(i for i, sql in enumerate(MIGRATIONS) if "recent_recalls" in sql)
    conn = await asyncpg.connect(postgres_dsn)
    try:
        # The schema as it was then: without what the migrations after it made.
        for trigger in ("added", "deleted", "updated"):
            await conn.execute(f"DROP TRIGGER memories_{trigger} ON memories")
        await conn.execute("DROP FUNCTION kizuna_memories_noticed()")
        await conn.execute("DROP FUNCTION kizuna_memories_notify(TEXT, TEXT, TEXT, BIGINT[])")
        await conn.execute(MIGRATIONS[1])  # 002's notification, which 020 replaced
        await conn.execute("DROP TRIGGER rooms_changed ON channel_floor")
        await conn.execute("DROP FUNCTION kizuna_rooms_changed()")
        await conn.execute("ALTER TABLE memories DROP COLUMN recent_recalls")
        await conn.execute("DROP TABLE intentions, contacts, outreach")
        await conn.execute("DROP INDEX conversations_by_age")
        await conn.execute("DROP INDEX memories_search_scoped")
        await conn.execute("DROP INDEX memories_by_embedder, memories_vectorless")
        await conn.execute("DROP TABLE session_turns")
        await conn.execute("CREATE INDEX memories_search ON memories USING GIN (search)")
        await conn.execute("UPDATE kizuna_schema SET version = $1", before)
        await conn.executemany(
            "INSERT INTO memories (id, scope, text, kind, importance, created_at,"
            " last_recalled_at, recall_count, strength)"
            " VALUES ($1, 's', $2, 'fact', 1, $3, $4, $5, 1.5)",
            [
                (1, "recalled", T0.timestamp(), last.timestamp(), 3),
                (2, "never recalled", T0.timestamp(), None, 0),
            ],
        )
    finally:
        await conn.close()
    store = await PgStore.open(postgres_dsn)
    try:
        assert await store.schema_version() == len(MIGRATIONS)
        recalled, untouched = await store.get_memories("s", [1, 2])
        assert recalled.recent_recalls == (last,) and untouched.recent_recalls == ()
        later = last + timedelta(days=1)
        await store.reinforce("s", [(1, 2.0)], later)
        [after] = await store.get_memories("s", [1])
        assert after.recent_recalls == (last, later)
    finally:
        await store.close()
