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
from typing import TypeVar

from filelock import FileLock, Timeout

from memory.errors import KizunaError
from memory.private import FILE_MODE, private_file, private_folder

__all__ = ["Backup", "BackupError", "backup", "restore"]

_T = TypeVar("_T")

PAGES_PER_STEP = 1024  # pages copied between progress reports (4 MB at SQLite's page size)


class BackupError(KizunaError):
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
    file in (one that exists, or a path written with a trailing slash, made if missing: the
    same command run every night adds a file each night). `progress(done, total)` counts
    pages, from when the copy has begun."""
    start = time.perf_counter()
    try:
        present = database.is_file()
    except OSError as e:
        raise BackupError(f"{database}: cannot read it: {_reason(e)}") from None
    if not present:
        raise BackupError(f"{database}: no database to back up")
    folder = str(target).endswith(("/", os.sep))
    target = Path(target)
    try:
        if folder or target.is_dir():
            _make_folder(target, named=target)
            target = _dated(target, now or datetime.now(UTC))
        elif target.exists() and not overwrite:
            raise BackupError(f"{target}: already exists (--force replaces it)")
        if target.resolve() == database.resolve():
            raise BackupError(f"{target}: that is the database itself")
        _make_folder(target.parent, named=target)
    except OSError as e:  # a name too long for the file system, a loop of links...
        raise BackupError(f"{target}: cannot write there: {_reason(e)}") from None
    partial = target.with_name(target.name + ".partial")
    memories, conversations = _copy(
        database,
        partial,
        named=target,
        failed=f"{database}: the backup to {target} failed",
        progress=progress,
        finish=_finish_backup,
    )
    partial.replace(target)
    return Backup(
        target, target.stat().st_size, memories, conversations, time.perf_counter() - start
    )


def _finish_backup(copy: sqlite3.Connection, path: Path) -> tuple[int, int]:
    """Check the copy at `path`, and make it one self-contained file: reading a WAL database,
    even read-only, leaves -wal and -shm files beside it (Kizuna puts WAL back when it opens
    it). Returns (memories, conversations) in it."""
    counts = _check(copy, path)
    copy.execute("PRAGMA journal_mode=DELETE")
    return counts


def _dated(folder: Path, now: datetime) -> Path:
    """A new file in `folder` named for the time; a second backup within the same second
    takes the next number rather than failing."""
    stamp = now.strftime("%Y%m%d-%H%M%S")
    path, n = folder / f"kizuna-{stamp}.sqlite3", 1
    while path.exists() or path.with_name(path.name + ".partial").exists():
        n += 1
        path = folder / f"kizuna-{stamp}-{n}.sqlite3"
    return path


def _make_folder(folder: Path, *, named: Path) -> None:
    """`folder`, made (its owner's only) if missing; one that exists is left as it is."""
    try:
        if not folder.is_dir():
            private_folder(folder)
    except (FileExistsError, NotADirectoryError):  # a file stands where a folder would go
        file = next((p for p in (folder, *folder.parents) if p.is_file()), folder)
        raise BackupError(f"{named}: cannot write there: {file} is a file") from None
    except OSError as e:
        raise BackupError(f"{named}: cannot write there: {_reason(e)}") from None


def _create(path: Path, *, named: Path) -> None:
    """Make `path` an empty file its owner's only, or say in one line (naming `named`, the
    file the user asked for) why it cannot be: SQLite would only say it cannot open it."""
    try:
        path.unlink(missing_ok=True)
        private_file(path)
    except OSError as e:
        raise BackupError(f"{named}: cannot write there: {_reason(e)}") from None


def _reason(e: OSError) -> str:
    return e.strerror or str(e)


def restore(
    copy: Path, database: Path, index_folder: Path, *, now: datetime | None = None
) -> Path | None:
    """Put the backup `copy` in place of `database`, which no process may be using. Returns
    where the replaced database was kept (beside it, named for the time), if there was one."""
    try:
        if copy.is_dir():
            newest = max(copy.glob("kizuna-*.sqlite3"), default=None)
            such = f": name one of its backups, such as {newest}" if newest else ", with no backup"
            raise BackupError(f"{copy}: a folder{such}")
        if not copy.is_file():
            raise BackupError(f"{copy}: no such backup")
    except OSError as e:  # a name too long for the file system...
        raise BackupError(f"{copy}: cannot read it: {_reason(e)}") from None
    reader = _reader(copy)
    try:
        _check(reader, copy)
    finally:
        reader.close()
    _make_folder(database.parent, named=database)
    lock = FileLock(database.with_name(database.name + ".lock"), mode=FILE_MODE)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise BackupError(
            f"{database}: in use by a Kizuna process; stop it, then restore"
        ) from None
    except OSError as e:
        raise BackupError(f"{database}: cannot write there: {_reason(e)}") from None
    try:
        stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
        kept: Path | None = None
        if database.exists():
            kept = database.with_name(f"{database.name}.before-restore-{stamp}")
            # Through SQLite, so what the write-ahead log holds is in the kept copy too.
            _copy_database(database, kept)
        staged = database.with_name(database.name + ".restoring")
        try:
            _copy_database(copy, staged)
        except BackupError:  # nothing was replaced: nothing to keep
            if kept is not None:
                kept.unlink()
            raise
        for leftover in (Path(f"{database}-wal"), Path(f"{database}-shm")):
            leftover.unlink(missing_ok=True)
        staged.replace(database)
        for index in index_folder.glob("*.faiss"):
            index.unlink()
    finally:
        lock.release()
    return kept


def _copy_database(source: Path, target: Path) -> None:
    _copy(
        source,
        target,
        named=target,
        failed=f"{source}: cannot copy the database to {target}",
        finish=lambda *_: None,
    )


def _copy(
    source: Path,
    target: Path,
    *,
    named: Path,
    failed: str,
    finish: Callable[[sqlite3.Connection, Path], _T],
    progress: Callable[[int, int], None] | None = None,
) -> _T:
    """Copy the database `source` into a new file `target` (its owner's only; `named`, the file
    the user asked for, names it in errors) through SQLite's online backup, then `finish(copy,
    target)` before the copy is closed; returns what `finish` does. `target` is removed if any
    of it fails; an SQLite error is a BackupError saying `failed`. `progress(done, total)`
    counts pages, from when the copy has begun."""
    reader = _reader(source)
    try:
        _create(target, named=named)
        try:
            writer = sqlite3.connect(target)
            try:
                reader.backup(
                    writer,
                    pages=PAGES_PER_STEP,
                    progress=(lambda _, left, total: progress(total - left, total))
                    if progress
                    else None,
                )
                return finish(writer, target)
            finally:
                writer.close()
        except sqlite3.Error as e:
            target.unlink(missing_ok=True)
            raise BackupError(f"{failed}: {e}") from None
        except BaseException:
            target.unlink(missing_ok=True)
            raise
    finally:
        reader.close()
