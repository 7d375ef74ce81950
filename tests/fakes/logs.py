"""Errors that libraries only log (discord.py and python-telegram-bot swallow exceptions in
handlers): `logged_errors` collects them so a test can fail on them."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

__all__ = ["logged_errors"]


class _Errors(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextlib.contextmanager
def logged_errors(*names: str) -> Iterator[list[logging.LogRecord]]:
    """The ERROR records of these loggers while the block runs; after it, any left in the
    list (a test clears those it expected) fail the test."""
    handler = _Errors()
    loggers = [logging.getLogger(name) for name in names]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
    assert not handler.records, [r.getMessage() for r in handler.records]
