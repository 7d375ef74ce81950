"""What both stores run the same way: SQL written once, with `?` placeholders (PostgreSQL's
base numbers them), through the calls each store's base provides. A part of the store
whose SQL is the same in both dialects is written once on `Statements` (sessions, the journal,
rooms, the archive's queue, contacts); the parts whose SQL or transactions differ stay in
memory.storage.sqlite and memory.storage.postgres."""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["Statement", "Statements", "numbered", "placeholders", "runs"]

# SQL and its parameters.
Statement = tuple[str, Sequence[Any]]


def placeholders(n: int) -> str:
    """The placeholders of an IN (...) list of `n` values."""
    return ", ".join("?" * n)


def runs(statements: Sequence[Statement]) -> Iterator[tuple[str, list[Sequence[Any]]]]:
    """Each run of one SQL in `statements`, in order, with its parameters: one executemany."""
    for sql, run in itertools.groupby(statements, key=lambda statement: statement[0]):
        yield sql, [params for _, params in run]


def numbered(sql: str) -> str:
    """`sql` with PostgreSQL's placeholders: each `?` in turn becomes $1, $2, ..."""
    first, *rest = sql.split("?")
    return first + "".join(f"${n}{part}" for n, part in enumerate(rest, 1))


class Statements(ABC):
    """Reads, and writes each in a transaction of its own (or several together), in either
    store."""

    @abstractmethod
    async def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """The rows a read returns."""

    @abstractmethod
    async def _one(self, sql: str, params: Sequence[Any] = ()) -> Any | None:
        """A read's first row, if any."""

    @abstractmethod
    async def _write(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Run one statement that writes, in a transaction of its own; the rows it returns
        (RETURNING ...)."""

    @abstractmethod
    async def _write_together(
        self, statements: Sequence[tuple[str, Sequence[Any]]]
    ) -> list[list[Any]]:
        """Run statements (SQL, parameters) that write, in order, in one transaction; the rows
        each returns."""

    @abstractmethod
    async def _write_soon(self, sql: str, params: Sequence[Any]) -> None:
        """Run one statement that writes one row and returns nothing, its parameters
        beginning with the row's key (a contact's three); it may share a transaction with
        others asked for meanwhile (and fail with them). Returns once it is committed."""
