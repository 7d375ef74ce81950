"""Loaded by every Python subprocess a test starts (the secret scan puts this folder on
PYTHONPATH): a copy of what the process writes to stdout and stderr goes to a file in
$KIZUNA_TEST_OUTPUT, headed by the test that started it, for the scan to read at the end."""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

_FOLDER = os.environ.get("KIZUNA_TEST_OUTPUT")


class _Tee:
    """A text stream that also writes to the copy; everything else is the stream's own."""

    def __init__(self, stream: TextIO, copy: TextIO) -> None:
        self._stream = stream
        self._copy = copy

    def write(self, text: str) -> int:
        try:
            self._copy.write(text)
            self._copy.flush()
        except (OSError, ValueError):
            pass
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


if _FOLDER and os.path.isdir(_FOLDER):
    _copy = open(  # noqa: SIM115 - open for the life of the process
        os.path.join(_FOLDER, f"{os.getpid()}.out"), "w", encoding="utf-8", errors="replace"
    )
    _test = os.environ.get("PYTEST_CURRENT_TEST", "?")
    _copy.write(f"{_test}\n{' '.join(getattr(sys, 'argv', []))}\n")
    _copy.flush()
    sys.stdout = _Tee(sys.stdout, _copy)
    sys.stderr = _Tee(sys.stderr, _copy)
