"""What both stores run the same way (memory/storage/statements.py)."""

from __future__ import annotations

from memory.storage.statements import numbered, runs


def test_a_writes_statements_go_one_executemany_a_kind_in_order() -> None:
    """Turns' writes interleave their kinds (heard, reinforced, logged, answered): each kind is
    one trip, its rows in the order asked, the kinds in the order they first came."""
    statements = [("A", (1,)), ("B", (2,)), ("A", (3,)), ("C", (4,)), ("B", (5,))]
    assert list(runs(statements)) == [("A", [(1,), (3,)]), ("B", [(2,), (5,)]), ("C", [(4,)])]


def test_placeholders_are_numbered_for_postgresql() -> None:
    assert numbered("SELECT ? WHERE a = ? AND b IN (?, ?)") == (
        "SELECT $1 WHERE a = $2 AND b IN ($3, $4)"
    )
