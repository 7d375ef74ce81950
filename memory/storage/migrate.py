"""Copy an embedded SQLite store into PostgreSQL (`kizuna migrate`), every table, ids and all.

The SQLite database is read read-only in one snapshot (a bot may be running on it); the
PostgreSQL schema is created or migrated by opening `PgStore`. Each table is copied in batches:
a batch goes into a temporary table with COPY, then into the real one with
INSERT ... ON CONFLICT DO UPDATE, which inserts what is missing, repairs rows that differ and
leaves equal rows alone, so a rerun copies nothing new and never duplicates. Rows only the
destination has are left alone. Sequences are then set past the copied ids (and past every id
SQLite ever gave a memory or an intention: ids are shown or keyed on, never reused).

Verification reads the destination back: for each table, the rows with a source key must be as
many as the source's, and an order-independent checksum (the sum of a hash of each row's values)
must match.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite
import asyncpg

from memory.storage.errors import StoreError
from memory.storage.postgres import PgStore
from memory.storage.sqlite import Store

__all__ = ["CopyReport", "MigrationError", "TableReport", "copy_store"]

BATCH = 1000


@dataclass(slots=True, frozen=True)
class _Table:
    name: str
    key: tuple[str, ...]  # the primary key's columns
    columns: tuple[str, ...]  # the destination's columns, key first
    select: str  # the SQLite query giving `columns`, in key order
    serial: bool = False  # `id` comes from a sequence on PostgreSQL


def _plain(name: str, key: tuple[str, ...], columns: tuple[str, ...], **kw: bool) -> _Table:
    quoted = ", ".join(f'"{c}"' for c in columns)
    order = ", ".join(f'"{c}"' for c in key)
    return _Table(name, key, columns, f'SELECT {quoted} FROM "{name}" ORDER BY {order}', **kw)


_MEMORY_COLUMNS = (
    "id",
    "scope",
    "text",
    "speaker",
    "kind",
    "category",
    "importance",
    "sentiment",
    "created_at",
    "last_recalled_at",
    "recall_count",
    "strength",
    "related",
    "conversation_id",
    "previous_id",
    "embedding",
    "embedder",
    "speaker_id",
    "recent_recalls",
    "search_body",
    "search_context",
)

# In copy order: memories before recalls, which reference them.
TABLES: Sequence[_Table] = (
    _plain("sessions", ("persona", "scope"), ("persona", "scope", "snapshot", "updated_at")),
    _plain("session_turns", ("persona", "scope", "seq"), ("persona", "scope", "seq", "turn")),
    _plain(
        "conversations",
        ("id",),
        (
            "id",
            "persona",
            "scope",
            "started_at",
            "ended_at",
            "reason",
            "turns",
            "encoded_at",
            "attempts",
            "retry_at",
            "recap",
        ),
        serial=True,
    ),
    # SQLite keeps the full-text columns in memories_fts (rowid = id); PostgreSQL beside the
    # memory, where its generated tsvector is computed from them.
    _Table(
        "memories",
        ("id",),
        _MEMORY_COLUMNS,
        "SELECT "
        + ", ".join(f"m.{c}" for c in _MEMORY_COLUMNS[:-2])
        + ", coalesce(f.body, ''), coalesce(f.context, '')"
        " FROM memories AS m LEFT JOIN memories_fts AS f ON f.rowid = m.id ORDER BY m.id",
        serial=True,
    ),
    _plain("embedding_cache", ("embedder", "text_hash"), ("embedder", "text_hash", "vector")),
    _plain("diary", ("scope", "day"), ("scope", "day", "text", "conversations", "updated_at")),
    _plain(
        "profiles",
        ("scope", "user_id"),
        ("scope", "user_id", "name", "text", "updated_at", "aliases"),
    ),
    _plain(
        "pruned",
        ("id",),
        (
            "id",
            "scope",
            "memory_id",
            "category",
            "importance",
            "policy",
            "reason",
            "pruned_at",
        ),
        serial=True,
    ),
    _plain("prune_days", ("scope",), ("scope", "day")),
    _plain(
        "channel_personas",
        ("bot_id", "channel_id"),
        ("bot_id", "channel_id", "persona", "bound_by", "bound_at"),
    ),
    _plain("dm_sharing", ("persona", "user"), ("persona", "user", "since")),
    _plain(
        "channel_floor",
        ("persona", "room"),
        ("persona", "room", "settings", "set_by", "set_at"),
    ),
    _plain(
        "intentions",
        ("id",),
        (
            "id",
            "scope",
            "persona",
            "user_id",
            "kind",
            "what",
            "ask",
            "due_at",
            "until",
            "created_at",
            "state",
            "conversation_id",
            "yearly",
            "done_at",
            "said_by",
        ),
        serial=True,
    ),
    _plain(
        "contacts",
        ("persona", "platform", "user_id"),
        (
            "persona",
            "platform",
            "user_id",
            "private",
            "last_heard",
            "last_answered",
            "hours",
            "timezone",
            "quiet",
            "refused_at",
            "updated_at",
            "voice",
            "checked_in",
        ),
    ),
    _plain(
        "outreach",
        ("persona", "platform", "user_id", "key"),
        ("persona", "platform", "user_id", "key", "state", "at", "by"),
    ),
    # SQLite's recalls have no id column: their rowid keeps the order, as PostgreSQL's id does.
    _Table(
        "recalls",
        ("id",),
        ("id", "memory_id", "at", "strength"),
        "SELECT rowid, memory_id, at, strength FROM recalls ORDER BY rowid",
        serial=True,
    ),
)


class MigrationError(StoreError):
    """A copy that failed or did not verify; the message is one line. `report` is what was
    found, when the copy got as far as verifying."""

    def __init__(self, message: str, report: CopyReport | None = None) -> None:
        super().__init__(message)
        self.report = report


@dataclass(slots=True, frozen=True)
class TableReport:
    name: str
    source_rows: int
    inserted: int  # rows the destination did not have
    updated: int  # rows it had with other values, now equal to the source's
    destination_rows: int  # all its rows, including any the source does not have
    checksum_ok: bool  # the source's rows are all there (count and checksum)


@dataclass(slots=True, frozen=True)
class CopyReport:
    destination: str  # the server and database, without the password
    tables: tuple[TableReport, ...]

    @property
    def ok(self) -> bool:
        return all(t.checksum_ok for t in self.tables)

    @property
    def source_rows(self) -> int:
        return sum(t.source_rows for t in self.tables)


def _canonical(value: Any) -> str:
    """One spelling per value whichever database it came from (an integral REAL may come
    back from SQLite as an int)."""
    if value is None:
        return "N"
    if isinstance(value, float):
        return f"i{int(value)}" if value.is_integer() else value.hex()
    if isinstance(value, int):
        return f"i{value}"
    if isinstance(value, bytes | bytearray | memoryview):
        return "b" + bytes(value).hex()
    return "s" + str(value)


def _row_hash(row: Iterable[Any]) -> int:
    text = repr(tuple(_canonical(v) for v in row))
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass")).digest()[:16])


_MOD = 1 << 128  # sums of 128-bit row hashes: unlike XOR, a repeated row does not cancel


def _upsert(table: _Table) -> str:
    """INSERT the staged rows: new ones inserted, differing ones updated, equal ones left
    alone; returns one row per change, true where it was an insert."""
    cols = ", ".join(f'"{c}"' for c in table.columns)
    rest = [c for c in table.columns if c not in table.key]
    sets = ", ".join(f'"{c}" = excluded."{c}"' for c in rest)
    mine = ", ".join(f't."{c}"' for c in rest)
    theirs = ", ".join(f'excluded."{c}"' for c in rest)
    key = ", ".join(f'"{c}"' for c in table.key)
    return (
        f'INSERT INTO "{table.name}" AS t ({cols}) SELECT {cols} FROM kizuna_stage'
        f" ON CONFLICT ({key}) DO UPDATE SET {sets}"
        f" WHERE ROW({mine}) IS DISTINCT FROM ROW({theirs})"
        " RETURNING (xmax = 0)"  # xmax is 0 on a freshly inserted row version
    )


async def copy_store(
    source: Path,
    dsn: str,
    *,
    progress: Callable[[str, int, int], None] | None = None,
) -> CopyReport:
    """Copy every table of the SQLite store at `source` into the PostgreSQL store at `dsn`
    and verify it; `progress(table, rows done, rows in table)` follows along. StoreError if a
    database cannot be opened; MigrationError if the copy fails or does not verify."""
    reader = await Store.open(source, read_only=True)
    try:
        target = await PgStore.open(dsn, min_size=1, max_size=1)
        try:
            report = await _copy(reader._db, target, progress)
            await target.fill_search()  # the copied rows' full text, stemmed as FTS5 does
            await target.fill_vectors()  # pgvector's copy of the embeddings, if it is there
            return report
        finally:
            await target.close()
    finally:
        await reader.close()


async def _copy(
    db: aiosqlite.Connection,
    target: PgStore,
    progress: Callable[[str, int, int], None] | None,
) -> CopyReport:
    reports: list[TableReport] = []
    step = "reading"  # for the error message
    try:
        # One read transaction: every table from the same moment, whatever a bot writes.
        await db.execute("BEGIN")
        async with target._pool.acquire() as conn:
            for table in TABLES:
                step = f"copying {table.name}"
                reports.append(await _copy_table(db, conn, table, progress))
            async with db.execute("SELECT name, seq FROM sqlite_sequence") as cur:
                issued = {str(name): int(seq) for name, seq in await cur.fetchall()}
            step = "setting the id sequences"
            for serial in (t for t in TABLES if t.serial):
                await _advance_sequence(conn, serial.name, issued.get(serial.name, 0))
        await db.rollback()
    except (OSError, sqlite3.Error, asyncpg.PostgresError, asyncpg.InterfaceError) as e:
        detail = " ".join(str(e).split()) or type(e).__name__
        raise MigrationError(f"{target.where}: {step} failed: {detail}") from None
    report = CopyReport(target.where, tuple(reports))
    bad = [t.name for t in report.tables if not t.checksum_ok]
    if bad:
        raise MigrationError(
            f"{target.where}: verification failed for {', '.join(bad)}: the rows there differ "
            "from the SQLite store's",
            report,
        )
    return report


async def _copy_table(
    db: aiosqlite.Connection,
    conn: asyncpg.Connection,
    table: _Table,
    progress: Callable[[str, int, int], None] | None,
) -> TableReport:
    async with db.execute(f'SELECT count(*) FROM "{table.name}"') as cur:
        row = await cur.fetchone()
    total = int(row[0]) if row else 0
    if progress:
        progress(table.name, 0, total)
    keys: set[tuple[Any, ...]] = set()
    checksum = inserted = updated = done = 0
    width = len(table.key)
    upsert = _upsert(table)
    stage = ", ".join(f'"{c}"' for c in table.columns)
    async with db.execute(table.select) as cur:
        while batch := list(await cur.fetchmany(BATCH)):
            for source_row in batch:
                keys.add(tuple(source_row[:width]))
                checksum = (checksum + _row_hash(source_row)) % _MOD
            async with conn.transaction():
                # The staging table takes the destination's column types; it goes at commit.
                await conn.execute(
                    "CREATE TEMP TABLE kizuna_stage ON COMMIT DROP AS"
                    f' SELECT {stage} FROM "{table.name}" WITH NO DATA'
                )
                await conn.copy_records_to_table(
                    "kizuna_stage", records=[tuple(r) for r in batch], columns=table.columns
                )
                changed = await conn.fetch(upsert)
            inserted += sum(1 for r in changed if r[0])
            updated += sum(1 for r in changed if not r[0])
            done += len(batch)
            if progress:
                progress(table.name, done, total)
    found, matching, their_checksum = await _destination(conn, table, keys)
    return TableReport(
        table.name,
        done,
        inserted,
        updated,
        found,
        matching == done and their_checksum == checksum,
    )


async def _destination(
    conn: asyncpg.Connection, table: _Table, keys: set[tuple[Any, ...]]
) -> tuple[int, int, int]:
    """(rows in the destination table, those with a source key, the checksum of those)."""
    found = matching = checksum = 0
    width = len(table.key)
    cols = ", ".join(f'"{c}"' for c in table.columns)
    async with conn.transaction():  # asyncpg's cursors live in a transaction
        async for row in conn.cursor(f'SELECT {cols} FROM "{table.name}"', prefetch=BATCH):
            found += 1
            values = tuple(row)
            if values[:width] in keys:
                matching += 1
                checksum = (checksum + _row_hash(values)) % _MOD
    return found, matching, checksum


async def _advance_sequence(conn: asyncpg.Connection, table: str, issued: int) -> None:
    """Set the id sequence past every id there and every id SQLite issued; never back."""
    sequence = await conn.fetchval("SELECT pg_get_serial_sequence($1, 'id')", table)
    highest = int(await conn.fetchval(f'SELECT coalesce(max(id), 0) FROM "{table}"'))
    target = max(highest, issued)
    if target > 0:
        # `sequence` is the server's own qualified name for it.
        await conn.execute(
            "SELECT setval($1::regclass, GREATEST($2::bigint,"
            f" (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM {sequence})))",
            sequence,
            target,
        )
