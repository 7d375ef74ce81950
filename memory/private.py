"""Files that hold what people said are readable by their owner only: 0600 in folders of
0700, whatever the process's umask.

A umask only takes permissions away, and only when a file is created: each file is created
with its final mode and then set to it again (`chmod` ignores the umask), so a file Kizuna
wrote with looser permissions in an older version, or that a copy created, is tightened too.
SQLite creates a database's -wal and -shm files with the database file's own mode, so a
database file made private first keeps its companions private.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "FILE_MODE",
    "FOLDER_MODE",
    "private_file",
    "private_folder",
    "tighten",
    "tighten_tree",
    "write_private",
]

FILE_MODE = 0o600
FOLDER_MODE = 0o700


def private_folder(path: Path) -> Path:
    """`path` as a folder that only its owner may enter, made (with its parents) if missing.
    Only the folder itself is tightened: its parents may be the user's own, shared ones."""
    path.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    os.chmod(path, FOLDER_MODE)
    return path


def private_file(path: Path) -> Path:
    """`path` as a file only its owner may read: created empty if missing, tightened if not."""
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE))
    os.chmod(path, FILE_MODE)
    return path


def tighten(*paths: Path) -> None:
    """Make each of `paths` that exists readable by its owner only."""
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            os.chmod(path, FILE_MODE)


def tighten_tree(folder: Path) -> None:
    """Make `folder`, if it exists, and everything in it its owner's only."""
    if not folder.is_dir():
        return
    os.chmod(folder, FOLDER_MODE)
    for path in folder.rglob("*"):
        os.chmod(path, FOLDER_MODE if path.is_dir() else FILE_MODE)


def write_private(path: Path, data: bytes | Callable[[BinaryIO], object]) -> None:
    """Write `data` into `path` (replacing what was there), readable by its owner only; `data`
    may be a function that writes into the open file (so a large file needs no copy of it in
    memory)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    with os.fdopen(descriptor, "wb") as file:
        if hasattr(os, "fchmod"):  # not on Windows before Python 3.13
            os.fchmod(file.fileno(), FILE_MODE)
        else:
            os.chmod(path, FILE_MODE)
        if isinstance(data, bytes):
            file.write(data)
        else:
            data(file)
        file.flush()
        os.fsync(file.fileno())
