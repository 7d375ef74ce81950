"""`kizuna backup` while a bot runs, and `kizuna restore` once it has stopped."""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from adapters.cli import main
from memory.backup import BackupError, backup, restore
from memory.bank import DATABASE, INDEX_FOLDER, MemoryBank
from memory.clock import FakeClock

SCOPE = "pip/console:dm:ann"


async def open_bank(folder: Path) -> MemoryBank:
    return await MemoryBank.open(folder, "hash", FakeClock(), deterministic=True)


def count(database: Path) -> int:
    with sqlite3.connect(database) as db:
        return int(db.execute("SELECT count(*) FROM memories").fetchone()[0])


async def test_a_backup_is_one_consistent_moment_of_a_database_in_use(tmp_path: Path) -> None:
    bank = await open_bank(tmp_path / "data")  # holds the data folder, as a running bot does
    for i in range(40):
        await bank.remember(SCOPE, f"memory number {i} about the lighthouse")
    copy = tmp_path / "backups" / "k.sqlite3"

    async def keep_writing() -> None:
        for i in range(40, 80):
            await bank.remember(SCOPE, f"memory number {i} about the harbour")

    made, _ = await asyncio.gather(
        asyncio.to_thread(backup, tmp_path / "data" / DATABASE, copy), keep_writing()
    )
    await bank.close()

    assert made.path == copy and made.bytes == copy.stat().st_size
    assert 40 <= made.memories <= 80 and made.memories == count(copy)
    assert not list(copy.parent.glob("*.partial"))
    with sqlite3.connect(copy) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    # The copy is a data folder's database as it is: its indexes are rebuilt from it.
    restored = tmp_path / "elsewhere"
    restored.mkdir()
    shutil.copy(copy, restored / DATABASE)
    again = await open_bank(restored)
    hits = await again.recall(SCOPE, "lighthouse", k=3, fail=False)
    assert hits and all("lighthouse" in h.text for h in hits)
    await again.close()


async def test_backups_into_a_folder_are_dated_and_never_overwritten(tmp_path: Path) -> None:
    bank = await open_bank(tmp_path / "data")
    await bank.remember(SCOPE, "a memory")
    await bank.close()
    folder = tmp_path / "backups"
    folder.mkdir()
    when = datetime(2026, 11, 30, 4, 5, 6, tzinfo=UTC)

    made = backup(tmp_path / "data" / DATABASE, folder, now=when)
    assert made.path == folder / "kizuna-20261130-040506.sqlite3" and made.memories == 1
    with pytest.raises(BackupError, match="already exists"):
        backup(tmp_path / "data" / DATABASE, made.path)
    assert backup(tmp_path / "data" / DATABASE, made.path, overwrite=True).memories == 1
    with pytest.raises(BackupError, match="no database"):
        backup(tmp_path / "nothing" / DATABASE, folder)


async def test_restore_puts_a_backup_back_and_keeps_what_it_replaces(tmp_path: Path) -> None:
    data = tmp_path / "data"
    bank = await open_bank(data)
    await bank.remember(SCOPE, "kept in the backup")
    await bank.close()
    copy = backup(data / DATABASE, tmp_path / "k.sqlite3").path

    bank = await open_bank(data)
    await bank.remember(SCOPE, "written after the backup")
    await bank.recall(SCOPE, "backup")
    with pytest.raises(BackupError, match="in use by a Kizuna process"):
        restore(copy, data / DATABASE, data / INDEX_FOLDER)  # the bot is still running
    await bank.close()
    assert list((data / INDEX_FOLDER).glob("*.faiss"))

    kept = restore(copy, data / DATABASE, data / INDEX_FOLDER)
    assert kept is not None and count(kept) == 2
    assert count(data / DATABASE) == 1
    assert not list((data / INDEX_FOLDER).glob("*.faiss"))  # rebuilt from the restored data
    bank = await open_bank(data)
    assert [m.text for m in await bank.memories(SCOPE)] == ["kept in the backup"]
    assert [h.text for h in await bank.recall(SCOPE, "backup", fail=False)] == [
        "kept in the backup"
    ]
    await bank.close()


def test_a_damaged_backup_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    data = tmp_path / "data"
    asyncio.run(_one_memory(data))
    before = (data / DATABASE).read_bytes()
    bad = tmp_path / "bad.sqlite3"
    bad.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 16)
    with pytest.raises(BackupError, match=r"bad\.sqlite3"):
        restore(bad, data / DATABASE, data / INDEX_FOLDER)
    assert (data / DATABASE).read_bytes() == before
    assert not list(data.glob("*.before-restore-*"))


async def _one_memory(data: Path) -> None:
    bank = await open_bank(data)
    await bank.remember(SCOPE, "one memory")
    await bank.close()


def test_kizuna_backup_and_restore(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KIZUNA_CONFIG", raising=False)
    asyncio.run(_one_memory(tmp_path / "data"))

    assert main(["backup", "saved.sqlite3"]) == 0
    out, _ = capsys.readouterr()
    assert out.startswith("Backed up 1 memories and 0 conversations to saved.sqlite3 (")
    assert main(["backup", "saved.sqlite3"]) == 1
    assert "already exists (--force replaces it)" in capsys.readouterr().err

    assert main(["restore", "saved.sqlite3"]) == 0
    out, _ = capsys.readouterr()
    assert out.splitlines()[0] == f"Restored {Path('data') / DATABASE} from saved.sqlite3."
    assert "is kept as" in out

    (tmp_path / "kizuna.toml").write_text('storage = "postgres"\n')
    assert main(["backup", "x.sqlite3"]) == 2
    err = capsys.readouterr().err
    assert "pg_dump" in err and "Traceback" not in err


def test_a_nightly_backup_into_a_new_folder_adds_a_dated_file_each_night(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's cron line, `kizuna backup backups/`, two nights running: the folder is
    made the first night, and each night adds a file to it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KIZUNA_CONFIG", raising=False)
    asyncio.run(_one_memory(tmp_path / "data"))
    database = tmp_path / "data" / DATABASE
    for night in (1, 2):
        when = datetime(2026, 11, night, 4, tzinfo=UTC)
        made = backup(database, "backups/", now=when)
        assert made.path == Path("backups") / f"kizuna-202611{night:02}-040000.sqlite3"
    assert len(list((tmp_path / "backups").iterdir())) == 2
    assert main(["backup", "backups/"]) == 0  # through the command too
    assert len(list((tmp_path / "backups").iterdir())) == 3
    assert "to backups/kizuna-" in capsys.readouterr().out


def test_a_backup_where_nothing_can_be_written_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Into a folder its user may not write (when not root, who may), or under a file: one
    line naming the place and why, no traceback, no progress bar, nothing left behind."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KIZUNA_CONFIG", raising=False)
    asyncio.run(_one_memory(tmp_path / "data"))
    (tmp_path / "notes.txt").write_text("a file, not a folder")
    targets = ["notes.txt/", "notes.txt/copy.sqlite3", "notes.txt/new/"]
    if os.geteuid() != 0:
        (tmp_path / "locked").mkdir(mode=0o500)
        targets += ["locked/", "locked/new/", "locked/copy.sqlite3"]
    for target in targets:
        assert main(["backup", target]) == 1
        out, err = capsys.readouterr()
        [line] = err.splitlines()
        assert line.startswith(target.rstrip("/")) and ": cannot write there: " in line, line
        assert out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["data", "notes.txt"] + (["locked"] if os.geteuid() != 0 else [])
    )
