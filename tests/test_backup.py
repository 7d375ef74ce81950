"""`kizuna backup` while a bot runs, and `kizuna restore` once it has stopped."""

from __future__ import annotations

import asyncio
import io
import os
import shutil
import sqlite3
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from adapters.command.cli import main
from memory.bank import INDEX_FOLDER, MemoryBank
from memory.clock import FakeClock
from memory.storage import DATABASE
from memory.storage.backup import BackupError, backup, restore

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
    assert out.startswith("Backed up 1 memory and 0 conversations to saved.sqlite3 (")
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


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_progress_bar_shows_only_once_the_copy_has_begun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KIZUNA_CONFIG", raising=False)
    asyncio.run(_one_memory(tmp_path / "data"))
    (tmp_path / "notes.txt").write_text("a file, not a folder")

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["backup", "notes.txt/"]) == 1
    assert terminal.getvalue() == "notes.txt: cannot write there: notes.txt is a file\n"
    assert capsys.readouterr().out == ""

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["backup", "backups/"]) == 0
    assert "backing up: 100%" in terminal.getvalue()
    assert capsys.readouterr().out.startswith("Backed up 1 memory and 0 conversations to ")


# -- where a backup goes, and where it cannot ------------------------------------------------------


def test_the_nightly_cron_line_adds_a_dated_file_each_night(tmp_path: Path) -> None:
    """`kizuna backup backups/` (docs/data.md's cron line) with no such folder yet: the first
    night makes it, and every night after adds a file to it."""
    data = tmp_path / "data"
    asyncio.run(_one_memory(data))
    clock = FakeClock(datetime(2026, 11, 30, 4, 0, tzinfo=UTC))
    folder = f"{tmp_path / 'backups'}/"
    made = []
    for _ in range(3):
        made.append(backup(data / DATABASE, folder, now=clock.now()))
        clock.advance(days=1)
    assert [m.path.name for m in made] == [
        "kizuna-20261130-040000.sqlite3",
        "kizuna-20261201-040000.sqlite3",
        "kizuna-20261202-040000.sqlite3",
    ]
    assert sorted(p.name for p in (tmp_path / "backups").iterdir()) == [m.path.name for m in made]
    assert all(count(m.path) == 1 for m in made)
    # Twice in one second (a second run by hand after the cron job): the next number.
    again = backup(data / DATABASE, folder, now=clock.now() - timedelta(days=1))
    assert again.path.name == "kizuna-20261202-040000-2.sqlite3" and count(again.path) == 1


def test_a_backup_is_one_file_that_leaves_nothing_beside_it_when_read(tmp_path: Path) -> None:
    data = tmp_path / "data"
    asyncio.run(_one_memory(data))
    copy = backup(data / DATABASE, tmp_path / "b" / "k.sqlite3").path
    restore(copy, data / DATABASE, data / INDEX_FOLDER)
    assert sorted(p.name for p in copy.parent.iterdir()) == ["k.sqlite3"]
    with sqlite3.connect(data / DATABASE) as db:  # the restored database is Kizuna's again
        assert db.execute("SELECT count(*) FROM memories").fetchone()[0] == 1


def _unwritable(tmp_path: Path) -> list[tuple[str, str]]:
    """Places no backup can go, each with the reason the line should give: under a file, a
    name longer than the file system takes, /sys (refused even to root), and a folder
    without write permission (for anyone but root)."""
    (tmp_path / "notes.txt").write_text("a file, not a folder")
    places = [
        (f"{tmp_path / 'notes.txt'}/", "is a file"),
        (str(tmp_path / "notes.txt" / "copy.sqlite3"), "is a file"),
        (f"{tmp_path / 'notes.txt' / 'new'}/", "is a file"),
        (str(tmp_path / ("x" * 300)), "File name too long"),
        (f"{tmp_path / ('x' * 300)}/", "File name too long"),
    ]
    if Path("/sys/kernel").is_dir():
        places += [("/sys/kizuna-backups/", "not permitted"), ("/sys/k.sqlite3", "denied")]
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        places += [(f"{locked}/", "denied"), (str(locked / "k.sqlite3"), "denied")]
    return places


def test_a_backup_that_cannot_be_written_says_where_and_why(tmp_path: Path) -> None:
    data = tmp_path / "data"
    asyncio.run(_one_memory(data))
    places = _unwritable(tmp_path)
    before = sorted(tmp_path.rglob("*"))
    for target, why in places:
        with pytest.raises(BackupError) as raised:
            backup(data / DATABASE, target, progress=lambda *_: pytest.fail("a copy began"))
        said = str(raised.value)
        assert said.startswith(target.rstrip("/") + ": cannot write there: "), said
        assert why in said and "\n" not in said
    assert sorted(tmp_path.rglob("*")) == before  # no folder made, no partial file left


def test_restore_names_what_is_wrong_with_the_backup_or_the_place(tmp_path: Path) -> None:
    data = tmp_path / "data"
    asyncio.run(_one_memory(data))
    folder = tmp_path / "backups"
    folder.mkdir()
    with pytest.raises(BackupError, match=r"backups: a folder, with no backup"):
        restore(folder, data / DATABASE, data / INDEX_FOLDER)
    made = backup(data / DATABASE, folder, now=datetime(2026, 11, 30, 4, tzinfo=UTC)).path
    backup(data / DATABASE, folder, now=datetime(2026, 12, 1, 4, tzinfo=UTC))
    with pytest.raises(BackupError, match=r"name one of its backups, such as .*20261201-04"):
        restore(folder, data / DATABASE, data / INDEX_FOLDER)
    with pytest.raises(BackupError, match="cannot read it: File name too long"):
        restore(tmp_path / ("x" * 300), data / DATABASE, data / INDEX_FOLDER)
    before = sorted(tmp_path.rglob("*"))
    (tmp_path / "notes.txt").write_text("a file, not a folder")
    elsewhere = tmp_path / "notes.txt" / "data" / DATABASE
    with pytest.raises(BackupError, match=r"cannot write there: .*notes\.txt is a file"):
        restore(made, elsewhere, elsewhere.parent / INDEX_FOLDER)
    if Path("/sys/kernel").is_dir():
        with pytest.raises(BackupError, match=r"^/sys/kizuna/kizuna\.sqlite3: cannot write"):
            restore(made, Path("/sys/kizuna") / DATABASE, Path("/sys/kizuna") / INDEX_FOLDER)
    assert sorted(tmp_path.rglob("*")) == sorted([*before, tmp_path / "notes.txt"])


def test_a_nightly_backup_into_a_new_folder_adds_a_dated_file_each_night(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/data.md's cron line, `kizuna backup backups/`, two nights running: the folder is
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
