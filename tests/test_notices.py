"""Another process's changes to a scope's memories, named memory by memory (PostgreSQL's
notifications, migration 020) and followed here as the bank's own writes are
(memory/recall/derived.py): a few memories added, forgotten, embedded again or changed in place
elsewhere reach this process's word index, links, copy of the rows and FAISS index without
reading the scope again, and recall answers as after a rebuild (a large scope whose words and
rows PostgreSQL serves keeps only its links here); past the bound, or when the
scope is emptied, everything derived from the scope goes; a forgotten memory never comes back;
a notice that comes late, or names a scope or memories not loaded here, harms nothing. Two
banks on one database stand for two processes (tests/fakes/postgres.py)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import timedelta
from pathlib import Path

import asyncpg
import numpy as np
import pytest

import memory.recall.retrieval
from memory.bank import Capacity, MemoryBank
from memory.clock import FakeClock
from memory.records import MemoryNotice, NoticeKind
from memory.storage.postgres import PgStore
from memory.storage.postgres.memories import notice
from tests.fakes.postgres import cut_listening
from tests.test_lexicon import fresh_recall
from tests.test_links import SCOPE, START, copying_large, fill, recalled
from tests.test_pgstore import new
from tests.test_rowcache import copied, counting_reads

NOW = START + timedelta(days=60)
ELSEWHERE = "pip/discord:dm:u404"  # a scope this process never loaded


class Heard:
    """The notices a store hears, in order, and a wait for those wanted."""

    def __init__(self) -> None:
        self.notices: list[MemoryNotice] = []
        self.misses = 0  # times told some may have gone unheard
        self._new = asyncio.Event()

    def __call__(self, notice: MemoryNotice) -> None:
        self.notices.append(notice)
        self._new.set()

    def missed(self) -> None:
        self.misses += 1
        self._new.set()

    def ids(self, kind: NoticeKind) -> set[int]:
        return {i for n in self.notices if n.kind == kind for i in n.ids or ()}

    async def until(self, wanted: Callable[[], bool]) -> None:
        async with asyncio.timeout(30):
            while not wanted():
                self._new.clear()
                await self._new.wait()


@pytest.fixture
async def stores(postgres_dsn: str) -> AsyncIterator[Sequence[PgStore]]:
    opened = [await PgStore.open(postgres_dsn) for _ in range(2)]
    yield opened
    for store in opened:
        await store.close()


def test_a_notification_s_payload_is_read_whole_or_taken_as_scope_wide() -> None:
    assert notice("kizuna-a +12,13|s/a", "changed") == (
        "kizuna-a",
        MemoryNotice("s/a", "added", (12, 13)),
    )
    assert notice("kizuna-a *7|s/a|b", "touched") == (
        "kizuna-a",
        MemoryNotice("s/a|b", "touched", (7,)),
    )
    for wide in ("kizuna-a|s/a", "kizuna-a -1,x|s/a", "kizuna-a ?1|s/a", "kizuna-a -|s/a"):
        assert notice(wide, "changed") == ("kizuna-a", MemoryNotice("s/a", "changed"))
    assert notice("kizuna-a *1,|s/a", "touched") == ("kizuna-a", MemoryNotice("s/a", "touched"))
    assert notice("kizuna-a +1", "changed") is None


async def test_each_statement_names_the_memories_it_changed_and_how(
    stores: Sequence[PgStore], postgres_dsn: str
) -> None:
    writer, listener = stores
    heard = Heard()
    await listener.listen(heard, heard.missed)
    raw: list[str] = []
    conn = await asyncpg.connect(postgres_dsn)
    try:
        for channel in ("kizuna_memories", "kizuna_memories_touched"):
            await conn.add_listener(channel, lambda *args: raw.append(args[3]))
        ids = [await writer.add_memory(new("s/a", f"my secret number {i}")) for i in range(3)]
        other = await writer.add_memory(new("s/b", "another secret"))
        await writer.reinforce("s/a", [(ids[1], 3.0), (ids[0], 4.0)], START)  # one statement
        await writer.set_embeddings("s/a", "hash", [(ids[1], np.full(4, 0.5, np.float32))])
        await writer.delete_memories("s/a", [ids[2]])
        # One statement over two scopes: a notice for each, naming its own memories only.
        await conn.execute(
            "UPDATE memories SET strength = strength + 1 WHERE id = ANY($1::bigint[])",
            [ids[0], ids[1], other],
        )
        await heard.until(lambda: len(heard.notices) == 9)
        assert heard.notices == [
            *(MemoryNotice("s/a", "added", (i,)) for i in ids),
            MemoryNotice("s/b", "added", (other,)),
            MemoryNotice("s/a", "touched", (ids[0], ids[1])),
            MemoryNotice("s/a", "embedded", (ids[1],)),
            MemoryNotice("s/a", "deleted", (ids[2],)),
            MemoryNotice("s/a", "touched", (ids[0], ids[1])),
            MemoryNotice("s/b", "touched", (other,)),
        ]
        assert len(raw) == 9 and not any("secret" in payload for payload in raw)
    finally:
        await conn.close()


async def test_past_the_bound_or_emptied_or_rewritten_a_scope_is_named_whole(
    stores: Sequence[PgStore], postgres_dsn: str
) -> None:
    writer, listener = stores
    heard = Heard()
    await listener.listen(heard, heard.missed)
    conn = await asyncpg.connect(postgres_dsn)
    try:
        many = await conn.fetch(
            "INSERT INTO memories (scope, text, kind, importance, created_at, strength)"
            " SELECT 's/a', 'memory ' || n, 'fact', 2, 0, 3 FROM generate_series(1, 402) AS n"
            " RETURNING id"
        )
        ids = sorted(int(r[0]) for r in many)
        await writer.delete_memories("s/a", ids[:400])  # within the bound
        await conn.execute("UPDATE memories SET text = 'rewritten' WHERE id = $1", ids[400])
        await writer.delete_memories("s/a", ids[400:401])
        await writer.wipe_memories("s/a")  # the last one: the scope emptied
        await heard.until(lambda: len(heard.notices) == 5)
        wide = MemoryNotice("s/a", "changed")
        assert heard.notices == [
            wide,
            MemoryNotice("s/a", "deleted", tuple(ids[:400])),
            wide,
            MemoryNotice("s/a", "deleted", (ids[400],)),
            wide,
        ]
    finally:
        await conn.close()


@pytest.fixture
def large(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every scope counts as large, copied here (searched by words in memory) as a process
    told to copy them does (`Capacity.copy_large`)."""
    monkeypatch.setattr(memory.recall.retrieval, "LARGE_SCOPE", 1)
    copying_large(monkeypatch)


def whole_reads(bank: MemoryBank, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The reads of a whole scope (its links, its words, its vectors) the bank's store is
    asked from here on."""
    reads: list[str] = []
    store = bank.store
    search_documents, scope_links = store.search_documents, store.scope_links

    async def counted(scope: str, ids: Sequence[int] | None = None) -> object:
        if ids is None:
            reads.append("search_documents")
        return await search_documents(scope, ids)

    async def counted_links(scope: str) -> object:
        reads.append("links")
        return await scope_links(scope)

    monkeypatch.setattr(store, "search_documents", counted)
    monkeypatch.setattr(store, "scope_links", counted_links)
    embeddings = store.embeddings

    async def counted_embeddings(scope: str, embedder: str) -> object:
        reads.append("embeddings")
        return await embeddings(scope, embedder)

    monkeypatch.setattr(store, "embeddings", counted_embeddings)
    return reads


async def two_banks(
    stores: Sequence[PgStore], tmp_path: Path, capacity: Capacity | None = None
) -> list[MemoryBank]:
    return [
        await MemoryBank.open(
            tmp_path / str(i),
            "hash",
            FakeClock(NOW),
            deterministic=True,
            store=store,
            capacity=capacity,
        )
        for i, store in enumerate(stores)
    ]


@contextlib.asynccontextmanager
async def heard_pair(
    stores: Sequence[PgStore], tmp_path: Path
) -> AsyncIterator[tuple[MemoryBank, MemoryBank, Heard]]:
    """This process's bank and another's on one database, and the notices this one's store
    hears (told after the bank); both banks closed after."""
    mine, theirs = await two_banks(stores, tmp_path)
    heard = Heard()
    await stores[0].listen(heard, heard.missed)
    try:
        yield mine, theirs, heard
    finally:
        for bank in (mine, theirs):
            await bank.close()


async def texts(bank: MemoryBank, ids: Sequence[int]) -> list[str]:
    return [m.text for m in await bank.store.get_memories(SCOPE, ids)]


@pytest.mark.usefixtures("large")
async def test_a_few_changes_elsewhere_are_followed_without_reading_the_scope_again(
    stores: Sequence[PgStore], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with heard_pair(stores, tmp_path) as (mine, theirs, heard):
        ids = await fill(theirs, 150, seed=7)
        await copied(mine)
        name = mine.embedder.name
        links, lexicon = await mine.derived.links.get(SCOPE), await mine.derived.lexicon.get(SCOPE)
        index = mine.derived.indexes.open_index(SCOPE, name)
        held = mine.derived.rows.held(SCOPE)
        assert index is not None and held == len(ids)
        reads, rows_read = whole_reads(mine, monkeypatch), counting_reads(mine, monkeypatch)

        added = [
            await theirs.remember(SCOPE, text, when=NOW - timedelta(hours=h), speaker="Ana")
            for h, text in ((2, "Ana found a hedgehog in the garden"), (1, "the hedgehog ate cake"))
        ]
        gone = ids[10:12]
        forgotten = await texts(theirs, gone)
        for memory_id in gone:
            await theirs.forget(SCOPE, memory_id)
        touched = ids[20:23]
        await theirs.reinforce(SCOPE, touched, NOW)
        [vector] = await theirs.embedder.embed(["a hedgehog asleep in the snow"])
        await stores[1].set_embeddings(SCOPE, name, [(ids[30], vector)])
        await heard.until(
            lambda: (
                heard.ids("added") >= set(added)
                and heard.ids("deleted") >= set(gone)
                and heard.ids("touched") >= set(touched)
                and ids[30] in heard.ids("embedded")
            )
        )
        await mine.derived.settled(SCOPE)

        # The rows read: those added and changed in place (and those after the forgotten,
        # whose context went), not the scope.
        assert reads == [] and len(set(rows_read)) < 10
        assert await mine.derived.links.get(SCOPE) is links
        assert await mine.derived.lexicon.get(SCOPE) is lexicon
        assert mine.derived.indexes.open_index(SCOPE, name) is index
        assert mine.derived.rows.held(SCOPE) == held + len(added) - len(gone)
        assert links.holds(added) and not any(links.holds([g]) for g in gone)
        assert set(added) <= index.live and not set(gone) & index.live
        np.testing.assert_allclose(index.vectors([ids[30]])[ids[30]], vector, rtol=1e-6)
        for text in forgotten:
            found = lexicon.search(text.split(), 200, context_weight=0.35)
            assert not {i for i, _ in found} & set(gone)
        fresh = [m.recall_count for m in await mine.derived.rows.get(SCOPE, touched)]
        assert fresh == [1, 1, 1] and reads == []

        now = await recalled(mine)
        assert any(now) and reads == []
        for text in forgotten:
            assert not {r.id for r in await mine.recall(SCOPE, text, k=50, now=NOW)} & set(gone)
        hedgehog = await mine.recall(SCOPE, "the hedgehog in the snow", k=3, now=NOW)
        assert {r.id for r in hedgehog} & {*added, ids[30]}
        assert now == await fresh_recall(mine, tmp_path / "fresh")


@pytest.mark.usefixtures("large")
async def test_many_forgotten_at_once_elsewhere_drop_what_was_derived(
    stores: Sequence[PgStore], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with heard_pair(stores, tmp_path) as (mine, theirs, heard):
        ids = await fill(theirs, 450, seed=8)
        await copied(mine)
        name = mine.embedder.name
        links = await mine.derived.links.get(SCOPE)
        await theirs.forget(SCOPE, ids[0])  # a few: followed
        await heard.until(lambda: ids[0] in heard.ids("deleted"))
        await mine.derived.settled(SCOPE)
        assert await mine.derived.links.get(SCOPE) is links

        gone = ids[1:411]
        forgotten = await texts(theirs, gone[:20])
        assert len(await theirs.store.delete_memories(SCOPE, gone)) == len(gone)
        await heard.until(lambda: MemoryNotice(SCOPE, "changed") in heard.notices)
        for derived in (mine.derived.links, mine.derived.lexicon, mine.derived.rows):
            assert SCOPE not in derived
        assert mine.derived.indexes.open_index(SCOPE, name) is None
        for text in forgotten:
            assert not {r.id for r in await mine.recall(SCOPE, text, k=50, now=NOW)} & set(gone)
        assert await recalled(mine) == await fresh_recall(mine, tmp_path / "fresh")


@pytest.mark.usefixtures("large")
async def test_a_notice_late_or_for_what_is_not_loaded_here_harms_nothing(
    stores: Sequence[PgStore], tmp_path: Path, postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bank's notices held back, then given after a recall that wanted them (under load
    they come late), and notices of a scope, and of memories, this process has not loaded."""
    held: list[Callable[[MemoryNotice], None]] = []

    async def unheard(heard: Callable[[MemoryNotice], None], missed: Callable[[], None]) -> None:
        held.append(heard)

    monkeypatch.setattr(stores[0], "listen", unheard)
    mine, theirs = await two_banks(stores, tmp_path)
    watcher = await PgStore.open(postgres_dsn)
    heard = Heard()
    await watcher.listen(heard, heard.missed)
    try:
        ids = await fill(theirs, 100, seed=9)
        await copied(mine)
        added = await theirs.remember(SCOPE, "Ana found a hedgehog", when=NOW, speaker="Ana")
        gone = ids[5:7]
        forgotten = await texts(theirs, gone)
        for memory_id in gone:
            await theirs.forget(SCOPE, memory_id)
        await theirs.reinforce(SCOPE, ids[8:10], NOW)
        await heard.until(lambda: heard.ids("deleted") >= set(gone) and bool(heard.ids("touched")))
        await recalled(mine)  # before the notices: the safety net may read the scope again
        [listener] = held
        for late in heard.notices:
            listener(late)
        await mine.derived.settled(SCOPE)
        for text in forgotten:
            assert not {r.id for r in await mine.recall(SCOPE, text, k=50, now=NOW)} & set(gone)
        assert added in {r.id for r in await mine.recall(SCOPE, "hedgehog", now=NOW)}

        reads = whole_reads(mine, monkeypatch)
        unknown = max(ids) + 1_000
        kinds: tuple[NoticeKind, ...] = ("added", "deleted", "embedded", "touched")
        for kind in kinds:
            listener(MemoryNotice(ELSEWHERE, kind, (ids[0], unknown)))
            listener(MemoryNotice(SCOPE, kind, (unknown,)))
        await mine.derived.settled(ELSEWHERE)
        await mine.derived.settled(SCOPE)
        for derived in (mine.derived.links, mine.derived.lexicon, mine.derived.rows):
            assert ELSEWHERE not in derived and SCOPE in derived
        assert mine.derived.indexes.open_index(SCOPE, mine.embedder.name) is not None
        links = await mine.derived.links.get(SCOPE)
        assert not links.holds([unknown]) and links.holds([ids[0], *ids[10:]])
        now = await recalled(mine)
        assert reads == []
        assert now == await fresh_recall(mine, tmp_path / "fresh")
    finally:
        for bank in (mine, theirs):
            await bank.close()
        await watcher.close()


@pytest.mark.usefixtures("large")
async def test_a_lost_listening_connection_drops_what_was_derived_and_is_heard_again(
    stores: Sequence[PgStore], tmp_path: Path, postgres_dsn: str
) -> None:
    """The connection on which a process hears the others' changes is cut (a server restart,
    a dropped network): what was derived from every scope goes at once, as a memory forgotten
    meanwhile goes unheard; the connection comes back and what is changed after is heard."""
    async with heard_pair(stores, tmp_path) as (mine, theirs, heard):
        ids = await fill(theirs, 100, seed=11)
        await copied(mine)
        name = mine.embedder.name
        await cut_listening(postgres_dsn, stores[0].instance)
        gone = ids[3:5]
        forgotten = await texts(theirs, gone)
        for memory_id in gone:
            await theirs.forget(SCOPE, memory_id)
        await heard.until(lambda: heard.misses >= 1)
        for derived in (mine.derived.links, mine.derived.lexicon, mine.derived.rows):
            assert SCOPE not in derived
        assert mine.derived.indexes.open_index(SCOPE, name) is None
        for text in forgotten:
            assert not {r.id for r in await mine.recall(SCOPE, text, k=50, now=NOW)} & set(gone)

        await heard.until(lambda: heard.misses >= 2)  # connected again: told once more
        await copied(mine)
        later = ids[6]
        forgotten = await texts(theirs, [later])
        await theirs.forget(SCOPE, later)
        await heard.until(lambda: later in heard.ids("deleted"))
        await mine.derived.settled(SCOPE)
        assert SCOPE in mine.derived.links and not (await mine.derived.links.get(SCOPE)).holds(
            [later]
        )
        assert later not in {r.id for r in await mine.recall(SCOPE, forgotten[0], k=50, now=NOW)}
        assert await recalled(mine) == await fresh_recall(mine, tmp_path / "fresh")


async def test_a_large_scope_served_by_the_store_keeps_only_its_links(
    stores: Sequence[PgStore], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By default PostgreSQL serves a large scope's words and rows: nothing of it but its
    links is read whole or kept here, another process's changes reach recall at once (its
    notices followed in the links), and recall answers as a bank opened afresh."""
    monkeypatch.setattr(memory.recall.retrieval, "LARGE_SCOPE", 1)
    async with heard_pair(stores, tmp_path) as (mine, theirs, heard):
        ids = await fill(theirs, 150, seed=11)
        reads, rows_read = whole_reads(mine, monkeypatch), counting_reads(mine, monkeypatch)
        assert any(await recalled(mine))
        # (The FAISS index too: Debian's server has no pgvector.) What may come to mind is
        # read on each recall.
        first = list(reads)
        assert "links" in first and "search_documents" not in first and rows_read
        assert SCOPE not in mine.derived.lexicon and SCOPE not in mine.derived.rows
        links = await mine.derived.links.get(SCOPE)

        added = await theirs.remember(SCOPE, "Ana found a hedgehog", when=NOW, speaker="Ana")
        gone = ids[5:7]
        forgotten = await texts(theirs, gone)
        for memory_id in gone:
            await theirs.forget(SCOPE, memory_id)
        await heard.until(lambda: added in heard.ids("added") and heard.ids("deleted") >= set(gone))
        await mine.derived.settled(SCOPE)
        assert await mine.derived.links.get(SCOPE) is links
        assert links.holds([added]) and not any(links.holds([g]) for g in gone)
        assert added in {r.id for r in await mine.recall(SCOPE, "hedgehog", now=NOW)}
        for text in forgotten:
            assert not {r.id for r in await mine.recall(SCOPE, text, k=50, now=NOW)} & set(gone)
        assert reads == first
        assert SCOPE not in mine.derived.lexicon and SCOPE not in mine.derived.rows
        assert await recalled(mine) == await fresh_recall(mine, tmp_path / "fresh")


async def test_a_notice_that_cannot_be_followed_drops_what_was_derived(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The store failing while a notice is followed: whenever in doubt, the scope is read
    again whole."""
    bank = await MemoryBank.open(tmp_path, "hash", FakeClock(NOW), deterministic=True)
    try:
        await fill(bank, 30, seed=10)
        assert any(await recalled(bank)) and SCOPE in bank.derived.links

        async def failing(scope: str, ids: Sequence[int] | None = None) -> object:
            raise OSError("the store is gone")

        monkeypatch.setattr(bank.store, "links", failing)
        bank.heard(MemoryNotice(SCOPE, "added", (10_000,)))
        await bank.derived.settled(SCOPE)
        assert SCOPE not in bank.derived.links and SCOPE not in bank.derived.rows
        assert "could not follow another process's change" in caplog.text
    finally:
        await bank.close()


@pytest.mark.usefixtures("large")
async def test_what_a_recall_finds_before_its_notice_is_followed_without_reading_the_scope(
    pgvector_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The notice that another process stored a memory held back (under load it came after the
    recall that wanted it): in a large scope the server's vector search finds the memory,
    which comes to mind, followed as its notice would be, with nothing of the scope read
    whole (its word index and rows would take seconds to read again)."""
    stores = [await PgStore.open(pgvector_dsn) for _ in range(2)]
    held: list[Callable[[MemoryNotice], None]] = []

    async def unheard(heard: Callable[[MemoryNotice], None], missed: Callable[[], None]) -> None:
        held.append(heard)

    monkeypatch.setattr(stores[0], "listen", unheard)
    mine, theirs = await two_banks(stores, tmp_path, Capacity(server_from=0, copy_large=True))
    try:
        await fill(theirs, 150, seed=7)
        await copied(mine)
        lexicon = await mine.derived.lexicon.get(SCOPE)
        reads = whole_reads(mine, monkeypatch)
        added = await theirs.remember(
            SCOPE, "Ana found a hedgehog asleep in the garden", when=NOW, speaker="Ana"
        )
        assert held  # the bank listens: what it would hear is held back

        found = await mine.recall(SCOPE, "Ana found a hedgehog asleep in the garden", now=NOW)

        assert added in {r.id for r in found}
        assert reads == []
        assert (await mine.derived.links.get(SCOPE)).holds([added])
        assert await mine.derived.lexicon.get(SCOPE) is lexicon
        assert added in {i for i, _ in lexicon.search(["hedgehog"], 10, context_weight=0.35)}
    finally:
        for bank in (mine, theirs):
            await bank.close()
        for store in stores:
            await store.close()
