"""Backing up the embedded store while Kizuna runs, and restoring it.

A backup is SQLite's online backup of the database (`sqlite3.Connection.backup`) through a
read-only connection: a running bot keeps writing (WAL lets a reader copy beside the writer)
and the copy is one consistent moment. It is checked (`PRAGMA integrity_check`) before it is
renamed into place, so a backup file that exists is whole. The FAISS indexes are not copied:
they are rebuilt from the database's embeddings.

Restoring needs the data folder to itself (no Kizuna process may hold it). The database being
replaced is kept beside it, and the index files are deleted so none outlives the data it was
built from.
"""

from __future__ import annotations

import os
import sqlite3
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock, Timeout

from memory import private

__all__ = ["Backup", "BackupError", "backup", "restore"]

PAGES_PER_STEP = 1024  # pages copied between progress reports (4 MB at SQLite's page size)


class BackupError(Exception):
    """A backup or restore that cannot be done, said in one line."""


@dataclass(slots=True, frozen=True)
class Backup:
    path: Path
    bytes: int
    memories: int
    conversations: int
    seconds: float


def _reader(path: Path) -> sqlite3.Connection:
    uri = "file:" + urllib.parse.quote(str(path.resolve())) + "?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True)
        db.execute("PRAGMA busy_timeout=5000")
        return db
    except sqlite3.Error as e:
        raise BackupError(f"{path}: cannot open the database: {e}") from None


def _check(db: sqlite3.Connection, path: Path) -> tuple[int, int]:
    """Whether `db` is a whole Kizuna database; (memories, conversations) in it."""
    try:
        verdict = db.execute("PRAGMA integrity_check").fetchone()
        if verdict is None or verdict[0] != "ok":
            raise BackupError(f"{path}: the database is damaged ({verdict and verdict[0]})")
        memories = db.execute("SELECT count(*) FROM memories").fetchone()[0]
        conversations = db.execute("SELECT count(*) FROM conversations").fetchone()[0]
    except sqlite3.DatabaseError as e:
        raise BackupError(f"{path}: not a Kizuna database ({e})") from None
    return int(memories), int(conversations)


def backup(
    database: Path,
    target: str | Path,
    *,
    overwrite: bool = False,
    progress: Callable[[int, int], None] | None = None,
    now: datetime | None = None,
) -> Backup:
    """Copy `database` to `target` while it may be in use: a file, or a folder to put a dated
    file in (one that exists, or a path written with a trailing slash, made if missing, so
    the same command run every night adds a file each night). `progress(done, total)` counts
    pages; it is first called once the copy has begun."""
    start = time.perf_counter()
    if not database.is_file():
        raise BackupError(f"{database}: no database to back up")
    folder = str(target).endswith(("/", os.sep))
    target = Path(target)
    if folder or target.is_dir():
        stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
        target = target / f"kizuna-{stamp}.sqlite3"
    if target.exists() and not overwrite:
        raise BackupError(f"{target}: already exists (--force replaces it)")
    if target.resolve() == database.resolve():
        raise BackupError(f"{target}: that is the database itself")
    partial = target.with_name(target.name + ".partial")
    try:
        if not target.parent.is_dir():
            private.private_folder(target.parent)
        partial.unlink(missing_ok=True)
        private.private_file(partial)
    except OSError as e:
        raise BackupError(f"{target}: cannot write there: {e.strerror or e}") from None
    source = _reader(database)
    try:
        copy = sqlite3.connect(partial)
        try:
            source.backup(
                copy,
                pages=PAGES_PER_STEP,
                progress=(lambda _, left, total: progress(total - left, total))
                if progress
                else None,
            )
            memories, conversations = _check(copy, partial)
        finally:
            copy.close()
    except sqlite3.Error as e:
        partial.unlink(missing_ok=True)
        raise BackupError(f"{database}: backup failed: {e}") from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    finally:
        source.close()
    partial.replace(target)
    return Backup(
        target, target.stat().st_size, memories, conversations, time.perf_counter() - start
    )


def restore(
    copy: Path, database: Path, index_folder: Path, *, now: datetime | None = None
) -> Path | None:
    """Put the backup `copy` in place of `database`, which no process may be using. Returns
    where the replaced database was kept (beside it, named for the time), if there was one."""
    if not copy.is_file():
        raise BackupError(f"{copy}: no such backup")
    reader = _reader(copy)
    try:
        _check(reader, copy)
    finally:
        reader.close()
    lock = FileLock(database.with_name(database.name + ".lock"), mode=private.FILE_MODE)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise BackupError(
            f"{database}: in use by a Kizuna process; stop it, then restore"
        ) from None
    try:
        stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
        kept: Path | None = None
        if database.exists():
            kept = database.with_name(f"{database.name}.before-restore-{stamp}")
            # Through SQLite, so what the write-ahead log holds is in the kept copy too.
            _copy_database(database, kept)
        database.parent.mkdir(parents=True, exist_ok=True)
        staged = database.with_name(database.name + ".restoring")
        _copy_database(copy, staged)
        for leftover in (Path(f"{database}-wal"), Path(f"{database}-shm")):
            leftover.unlink(missing_ok=True)
        staged.replace(database)
        for index in index_folder.glob("*.faiss"):
            index.unlink()
    finally:
        lock.release()
    return kept


def _copy_database(source: Path, target: Path) -> None:
    target.unlink(missing_ok=True)
    reader = _reader(source)
    try:
        writer = sqlite3.connect(private.private_file(target))
        try:
            reader.backup(writer)
        finally:
            writer.close()
    except sqlite3.Error as e:
        target.unlink(missing_ok=True)
        raise BackupError(f"{source}: cannot copy the database: {e}") from None
    finally:
        reader.close()
