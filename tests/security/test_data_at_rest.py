"""Data at rest is its owner's: whatever the umask, `kizuna` creates the data folder 0700 and
every file in it 0600 (the database, its WAL and shared-memory files, the lock, the indexes,
the session exports), and backups and the copy kept by a restore 0600 too. A data folder an
older version left readable by all is tightened when it is opened."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from memory.bank import MemoryBank
from memory.storage import DATABASE

ROOT = Path(__file__).resolve().parents[2]


def kizuna(cwd: Path, umask: int, *args: str, stdin: str = "") -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "KIZUNA"))}
    env |= {"PYTHONPATH": str(ROOT), "OLLAMA_HOST": "http://127.0.0.1:9"}
    result = subprocess.run(
        [sys.executable, "-m", "adapters.command.cli", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
        preexec_fn=lambda: os.umask(umask),
    )
    assert result.returncode == 0, result.stderr


def modes(folder: Path) -> dict[str, int]:
    """Each path under `folder` (itself included) -> its permission bits."""
    paths = [folder, *folder.rglob("*")]
    return {str(p.relative_to(folder.parent)): stat.S_IMODE(p.stat().st_mode) for p in paths}


def private(found: dict[str, int], folders: set[str]) -> dict[str, int]:
    """What is not as it should be: folders 0700, files 0600."""
    return {p: m for p, m in found.items() if m != (0o700 if p in folders else 0o600)}


@pytest.mark.parametrize("umask", [0o022, 0o000], ids=["umask-022", "umask-000"])
def test_everything_kizuna_writes_is_its_owners_alone(tmp_path: Path, umask: int) -> None:
    said = "/remember my locker code is 4417\nhello\nsave\n"
    kizuna(tmp_path, umask, "chat", "--persona", "monikai", "--user", "ann", stdin=said)
    kizuna(tmp_path, umask, "backup", "backups/")
    [copy] = (tmp_path / "backups").iterdir()
    kizuna(tmp_path, umask, "restore", str(copy))

    data = modes(tmp_path / "data")
    assert {"data/index", "data/exports", f"data/{DATABASE}"} <= data.keys()
    assert any(p.startswith(f"data/{DATABASE}.before-restore-") for p in data)
    assert any(p.startswith("data/exports/monikai-ann-") for p in data)
    assert private(data, {"data", "data/index", "data/exports"}) == {}
    assert private(modes(tmp_path / "backups"), {"backups"}) == {}


async def test_an_older_data_folder_open_to_all_is_tightened(tmp_path: Path) -> None:
    data = tmp_path / "data"
    bank = await MemoryBank.open(data)
    await bank.remember("pip/console:dm:ann", "my locker code is 4417")
    await bank.close()
    for path in [data, *data.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    bank = await MemoryBank.open(data)
    await bank.recall("pip/console:dm:ann", "locker", k=1, fail=False)
    await bank.close()
    found = modes(data)
    assert private(found, {p for p in found if (tmp_path / p).is_dir()}) == {}
