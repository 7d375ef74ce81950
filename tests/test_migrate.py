"""`kizuna migrate`: an SQLite store with real content (a conversation encoded into memories,
a diary page and a profile, an explicit memory, recalls, a prune, bindings) copied into
PostgreSQL, ids and all; a rerun that copies nothing and repairs what differs; verification;
and the command line."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import numpy as np
import pytest

from adapters.command.cli import main
from bot.chat_model import Message
from bot.commands import memory as memory_commands
from memory.encoding.encoder import ENCODING_TASK
from memory.records import ArchiveWrite, NewIntention, NewMemory, PruneWrite
from memory.storage.migrate import TABLES, CopyReport, MigrationError, copy_store
from memory.storage.postgres import PgStore
from memory.storage.sqlite import Store
from tests.fakes.factories import make_event, open_bot
from tests.fakes.models import ScriptedChatModel, encoding

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
CACHED = (b"\x00\x01 text hash", np.arange(8, dtype=np.float32).tobytes())  # a remote model's


def answer(messages: Sequence[Message]) -> str:
    if ENCODING_TASK in messages[0].content:
        return encoding(
            ("Alice adopted a cat called Mochi.", "personal_daily", 2),
            ("Mochi only eats tuna.", "personal_daily", 1),
            diary="Alice told me about Mochi, her new cat.",
            profile="Alice: has a cat, Mochi.",
        )
    return "[NEUTRAL] ok"


@dataclass(slots=True, frozen=True)
class Built:
    scope: str
    embedder: str
    pruned_id: int  # the newest id SQLite gave a memory, since pruned
    at: datetime  # when the intentions, contact and ledger entry were made
    wiped_intention: int  # the newest id SQLite gave an intention, since wiped


async def build(path: Path) -> Built:
    """A store with something in every table, made through the bot's own APIs."""
    bot = await open_bot(path, model=ScriptedChatModel(default=answer))
    try:
        await bot.engine.handle(make_event("I adopted a cat called Mochi!"))
        bot.clock.advance(seconds=30)
        await bot.engine.handle(make_event("She only eats tuna."))
        await bot.desk.end(make_event())
        await bot.lifecycle.encode_pending()
        bot.clock.advance(minutes=1)
        await memory_commands.remember(bot.services, make_event(), "my birthday is on 14 March")
        scope = bot.desk.event_scope(make_event())
        memories = await bot.store.list_memories(scope)
        assert len(memories) == 3
        bot.clock.advance(hours=2)
        await bot.bank.reinforce(scope, [m.id for m in memories], bot.clock.now())
        # An open session too, long enough for its turns to have rows of their own.
        await bot.engine.handle(make_event("good morning! " + "My day so far. " * 120))
        bot.clock.advance(minutes=1)
        doomed = await bot.bank.remember(scope, "Alice had toast.", when=bot.clock.now())
        [forgotten] = await bot.store.get_memories(scope, [doomed])
        now = bot.clock.now()
        await bot.store.prune(
            PruneWrite(scope, now.date(), [(forgotten, "faded")], "ebbinghaus", now)
        )
        await bot.store.bind_channel("bot1", "c9", "pip", "u1", now)
        await bot.store.set_dm_sharing("pip", "discord:u1", True, now)
        await bot.store.set_channel_floor("pip", "discord:c9", '{"mode": "listen"}', "u1", now)
        await bot.store.cache_embeddings("remote", [CACHED])  # the hash embedder caches none
        intention = await bot.store.add_intention(
            NewIntention(scope, "u1", "follow_up", "her exam", "ask how it went", now, now, now)
        )
        await bot.store.close_intention(scope, intention, "done", now)
        await bot.store.add_intention(
            NewIntention(scope, "u1", "special_day", "her birthday", "greet her", now, now, now)
        )
        group = "pip/discord:c9:user:u1"
        wiped = await bot.store.add_intention(
            NewIntention(group, "u1", "reminder", "tea", "remind her", now, now, now)
        )
        await bot.store.wipe_memories(group)  # SQLite issued its id all the same
        await bot.store.heard("pip", "discord", "u1", now, private=True)
        await bot.store.set_contact("pip", "discord", "u1", timezone="Europe/Paris", at=now)
        await bot.store.claim_outreach(
            "pip", "discord", "u1", f"intention:{intention}", by="a", at=now, stale_before=now
        )
        await bot.engine.drain()
        return Built(scope, bot.bank.embedder.name, doomed, now, wiped)
    finally:
        await bot.close()


async def contents(store: Store | PgStore, built: Built) -> dict[str, Any]:
    """Everything the bot would read back, through the store's public API."""
    scope = built.scope
    memories = await store.list_memories(scope)
    ids, vectors = await store.embeddings(scope, built.embedder)
    sessions = await store.load_sessions(["pip"])
    return {
        "memories": memories,
        "embeddings": (ids.tolist(), None if vectors is None else vectors.tobytes()),
        "recalls": {m.id: await store.recall_history(scope, m.id) for m in memories},
        "sessions": sessions,
        "conversations": [c for s in sessions for c in await store.conversations("pip", s.scope)],
        "diary": await store.diary_entries(scope),
        "profiles": await store.profiles(scope),
        "pruned": await store.pruned_since(EPOCH),
        "last_prune": await store.last_prune(scope),
        "channel": await store.channel_persona("bot1", "c9"),
        "sharing": await store.dm_sharing("pip", "discord:u1"),
        "floor": await store.channel_floor("pip", "discord:c9"),
        "cache": await store.cached_embeddings("remote", [CACHED[0]]),
        "intentions": await store.intentions(scope, open_only=False),
        "contact": await store.contact("pip", "discord", "u1"),
        "outreach": await store.outreach("pip", "discord", "u1", since=built.at),
    }


@pytest.fixture
async def built(tmp_path: Path) -> Built:
    return await build(tmp_path / "kizuna.sqlite3")


def assert_clean(report: CopyReport, *, inserted: bool) -> None:
    assert report.ok
    assert [t.name for t in report.tables] == [t.name for t in TABLES]
    for table in report.tables:
        assert table.source_rows > 0, table.name  # every table has something to copy
        assert table.inserted == (table.source_rows if inserted else 0), table.name
        assert table.updated == 0, table.name
        assert table.destination_rows == table.source_rows, table.name


async def test_everything_is_copied_with_its_ids(
    tmp_path: Path, built: Built, postgres_dsn: str
) -> None:
    source = tmp_path / "kizuna.sqlite3"
    seen: dict[str, tuple[int, int]] = {}
    report = await copy_store(
        source, postgres_dsn, progress=lambda t, done, total: seen.__setitem__(t, (done, total))
    )
    assert_clean(report, inserted=True)
    assert seen == {t.name: (t.source_rows, t.source_rows) for t in report.tables}
    assert "@" not in report.destination  # the server and database, no user or password

    sqlite = await Store.open(source, read_only=True)
    pg = await PgStore.open(postgres_dsn)
    try:
        expected, copied = await contents(sqlite, built), await contents(pg, built)
        assert copied == expected
        memories = copied["memories"]
        assert any(m.previous_id for m in memories) and copied["embeddings"][1]
        assert any(m.speaker_id for m in memories)  # who said it, by id
        assert all(copied["recalls"].values()) and copied["diary"] and copied["profiles"]
        assert [c.encoded_at is not None for c in copied["conversations"]] == [True]
        # The full-text column is PostgreSQL's own, computed from the copied text.
        [mochi] = [m.id for m in memories if m.text.endswith("a cat called Mochi.")]
        assert mochi in [i for i, _ in await pg.lexical_search(built.scope, '"mochi"', 5)]
        terms = ["mochi", "tuna", "birthday"]
        frequencies = await pg.document_frequencies(built.scope, terms)
        assert frequencies == await sqlite.document_frequencies(built.scope, terms)
        assert frequencies == {"mochi": 2, "tuna": 1, "birthday": 1}

        # The sequences are past every id SQLite gave, the pruned memory's too.
        new = await pg.add_memory(
            NewMemory(
                built.scope, "Alice moved.", None, "fact", None, 1, 0.0, datetime.now(UTC), 1.0
            )
        )
        assert new == built.pruned_id + 1
        conversation = await pg.archive_conversation(
            ArchiveWrite(
                "pip",
                "discord:dm:u9",
                started_at=datetime.now(UTC),
                ended_at=datetime.now(UTC),
                reason="end",
                turns=[],
                snapshot={},
            )
        )
        assert conversation > max(c.id for c in copied["conversations"])
        intention = await pg.add_intention(
            NewIntention(built.scope, "u1", "reminder", "tea", "remind her", EPOCH, EPOCH, EPOCH)
        )
        assert intention == built.wiped_intention + 1
        assert copied["contact"].timezone == "Europe/Paris" and copied["outreach"]
    finally:
        await pg.close()
        await sqlite.close()


async def test_a_rerun_copies_nothing_and_repairs_what_differs(
    tmp_path: Path, built: Built, postgres_dsn: str
) -> None:
    source = tmp_path / "kizuna.sqlite3"
    await copy_store(source, postgres_dsn)
    assert_clean(await copy_store(source, postgres_dsn), inserted=False)

    conn = await asyncpg.connect(postgres_dsn)
    try:
        await conn.execute("UPDATE memories SET text = 'tampered' WHERE id = 1")
        await conn.execute("DELETE FROM recalls WHERE id = 1")
        await conn.execute("INSERT INTO prune_days VALUES ('other scope', '2026-01-01')")
        report = await copy_store(source, postgres_dsn)
        assert report.ok
        by_name = {t.name: t for t in report.tables}
        assert (by_name["memories"].inserted, by_name["memories"].updated) == (0, 1)
        assert (by_name["recalls"].inserted, by_name["recalls"].updated) == (1, 0)
        # A row only PostgreSQL has is left alone, and counted there.
        days = by_name["prune_days"]
        assert days.destination_rows == days.source_rows + 1 and days.checksum_ok
        assert await conn.fetchval("SELECT count(*) FROM memories") == 3
    finally:
        await conn.close()
    sqlite = await Store.open(source, read_only=True)
    pg = await PgStore.open(postgres_dsn)
    try:
        assert await contents(pg, built) == await contents(sqlite, built)
    finally:
        await pg.close()
        await sqlite.close()


async def test_rows_that_do_not_match_fail_the_verification(
    tmp_path: Path, built: Built, postgres_dsn: str
) -> None:
    await (await PgStore.open(postgres_dsn)).close()  # the schema, to put a trigger on
    conn = await asyncpg.connect(postgres_dsn)
    try:
        # Something on the server that rewrites what is written: the copy cannot be trusted.
        await conn.execute(
            "CREATE FUNCTION garble() RETURNS trigger LANGUAGE plpgsql AS"
            " $$ BEGIN NEW.text := upper(NEW.text); RETURN NEW; END $$;"
            " CREATE TRIGGER garble BEFORE INSERT OR UPDATE ON diary"
            " FOR EACH ROW EXECUTE FUNCTION garble()"
        )
    finally:
        await conn.close()
    with pytest.raises(MigrationError) as failed:
        await copy_store(tmp_path / "kizuna.sqlite3", postgres_dsn)
    message = str(failed.value)
    assert "\n" not in message and "verification failed for diary" in message
    report = failed.value.report
    assert report is not None and not report.ok
    assert [t.name for t in report.tables if not t.checksum_ok] == ["diary"]


# --- the command line ----------------------------------------------------------------------


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with a populated data/kizuna.sqlite3, as the current directory."""
    monkeypatch.chdir(tmp_path)
    for name in ("KIZUNA_CONFIG", "KIZUNA_DATABASE_URL", "OTHER_URL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_kizuna_migrate(
    workdir: Path,
    postgres_dsn: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    asyncio.run(build(workdir / "data" / "kizuna.sqlite3"))
    # Trust authentication ignores the password: it is there to be kept out of the output.
    dsn = postgres_dsn.replace("postgres@", "postgres:hunter2@")
    monkeypatch.setenv("KIZUNA_DATABASE_URL", dsn)
    where = "postgresql://" + dsn.rpartition("@")[2]

    assert main(["migrate", "--from", "sqlite:data", "--to", "postgres"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert len(lines) == len(TABLES) + 1
    assert "memories: 3 rows, 3 new, 0 updated; 3 there; checksum ok" in lines
    total = sum(int(line.split(": ")[1].split()[0]) for line in lines[:-1])
    assert lines[-1] == (
        f"Copied {total:,} rows in {len(TABLES)} tables into {where} ({total:,} new, 0 updated);"
        " counts and checksums match."
    )
    assert "hunter2" not in out + err and "Traceback" not in err

    # Again, from the file itself and with the connection string in another variable.
    monkeypatch.delenv("KIZUNA_DATABASE_URL")
    monkeypatch.setenv("OTHER_URL", dsn)
    arguments = ["--from", "sqlite:data/kizuna.sqlite3", "--to", "postgres:OTHER_URL"]
    assert main(["migrate", *arguments]) == 0
    out, _ = capsys.readouterr()
    assert out.splitlines()[-1] == (
        f"Copied {total:,} rows in {len(TABLES)} tables into {where} (0 new, 0 updated);"
        " counts and checksums match."
    )


def test_kizuna_migrate_says_what_is_missing(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(build(workdir / "data" / "kizuna.sqlite3"))
    assert main(["migrate", "--from", "sqlite:data", "--to", "postgres"]) == 2
    _, err = capsys.readouterr()
    assert err == (
        "--to postgres: the environment variable KIZUNA_DATABASE_URL (the PostgreSQL "
        "connection string) is not set\n"
    )
    assert main(["migrate", "--from", "sqlite:data", "--to", "postgres:OTHER_URL"]) == 2
    assert "variable OTHER_URL " in capsys.readouterr().err
    assert main(["migrate", "--from", "sqlite:nowhere", "--to", "postgres"]) == 2
    assert capsys.readouterr().err == "--from: no SQLite database at nowhere\n"
    assert main(["migrate", "--from", "data", "--to", "postgres"]) == 2
    assert capsys.readouterr().err.startswith("--from must be sqlite:PATH")

    # A server that is not there: one line, exit 1, no password.
    monkeypatch.setenv("KIZUNA_DATABASE_URL", "postgresql://kizuna:hunter2@127.0.0.1:9/kizuna")
    assert main(["migrate", "--from", "sqlite:data", "--to", "postgres"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith("postgresql://127.0.0.1:9/kizuna: cannot open the database")
    assert "hunter2" not in err
