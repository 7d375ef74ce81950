"""What both stores run the same way: SQL written once, with `?` placeholders (PostgreSQL's
base numbers them), through the calls each store's base provides. A part of the store
whose SQL is the same in both dialects is written once on `Statements` (sessions, the journal,
rooms, the archive's queue, contacts); the parts whose SQL or transactions differ stay in
memory.storage.sqlite and memory.storage.postgres."""

from __future__ import annotations

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
    """Each SQL of `statements` with its parameters in order, one executemany each, in the
    order each SQL first comes: a group commit's turns each ask for several kinds of write
    (a contact heard, a memory reinforced, its recall logged, the contact answered), and a run
    per change of kind would cost a trip to the database each time the kinds alternate.
    Statements of different SQL in one write must therefore commute: the group commit's are
    upserts that keep the greater time or add to a count, and rows of other tables."""
    grouped: dict[str, list[Sequence[Any]]] = {}
    for sql, params in statements:
        grouped.setdefault(sql, []).append(params)
    return iter(grouped.items())


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
