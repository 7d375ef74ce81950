"""Another scope's memory id, or no memory's id at all, handed to the memory bank and to both
stores: nothing is read, changed or deleted across the wall, nothing crashes, and a refused
forget or curve says why in the log (naming ids and scopes, never a memory's words). Also an
audit of every SQL statement of both stores that touches a scope's rows: each names its scope
(or is one of the few listed here, with the reason it needs none)."""

from __future__ import annotations

import ast
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from memory.bank import MemoryBank
from memory.clock import FakeClock
from memory.storage import Storage
from tests.fakes.postgres import StoreOpener

ROOT = Path(__file__).resolve().parents[2]
ALICE = "pip/discord:dm:u1"
BOB = "pip/discord:dm:u2"
SECRET = "Alice's bank pin is zebraquokka-4921"
# Not the id of any memory: zero, negative, past 64 bits, a bool, a float, text.
NOT_IDS: list[object] = [0, -1, 2**63, 2**64, -(2**63) - 1, True, 1.0, "1"]


@dataclass(slots=True)
class Banks:
    bank: MemoryBank
    store: Storage
    alice: int  # Alice's memory
    bob: int  # Bob's memory


@pytest.fixture
async def banks(open_store: StoreOpener, tmp_path: Path) -> AsyncIterator[Banks]:
    store = await open_store(tmp_path / "kizuna.sqlite3")
    bank = await MemoryBank.open(tmp_path, "hash", FakeClock(), deterministic=True, store=store)
    try:
        alice = await bank.remember(ALICE, SECRET, speaker="Alice")
        bob = await bank.remember(BOB, "Bob likes kites", speaker="Bob")
        yield Banks(bank, store, alice, bob)
    finally:
        await bank.close()
        await store.close()


async def untouched(banks: Banks) -> None:
    """Alice's memory is as it was written."""
    [memory] = await banks.store.get_memories(ALICE, [banks.alice])
    assert memory.text == SECRET and memory.recall_count == 0 and memory.related == ()
    assert memory.last_recalled_at is None


async def test_bobs_scope_cannot_read_alices_memory_by_id(banks: Banks) -> None:
    bank, alice = banks.bank, banks.alice
    assert await bank.get(BOB, [alice]) == []
    assert await bank.curve(BOB, alice) is None
    assert await banks.store.get_memories(BOB, [alice]) == []
    assert await banks.store.with_successors(BOB, [alice]) == []
    assert await banks.store.recall_history(BOB, alice) == []
    inspected = await bank.inspect(BOB, "zebraquokka bank pin")
    assert [m.id for m, _ in inspected] == []
    assert [r.id for r in await bank.recall(BOB, "zebraquokka bank pin", fail=False)] == []
    assert [r.id for r in await bank.memories(BOB, "")] == [banks.bob]
    await untouched(banks)


async def test_bobs_scope_cannot_change_or_delete_alices_memory_by_id(banks: Banks) -> None:
    bank, store, alice = banks.bank, banks.store, banks.alice
    assert await bank.forget(BOB, alice) == []
    await bank.reinforce(BOB, [alice])
    await store.reinforce(BOB, [(alice, 99.0)], bank.clock.now())
    await store.set_related(BOB, alice, [banks.bob])
    name, size = bank.embedder.name, bank.embedder.dimension
    await store.set_embeddings(BOB, name, [(alice, np.zeros(size, dtype=np.float32))])
    assert await store.delete_memories(BOB, [alice]) == []
    await untouched(banks)
    ids, vectors = await store.embeddings(ALICE, name)
    assert ids.tolist() == [alice] and vectors is not None and vectors.any()  # not the zeros
    assert await bank.count(ALICE) == 1


@pytest.mark.parametrize("memory_id", NOT_IDS, ids=repr)
async def test_no_memorys_id_finds_nothing_and_crashes_nothing(
    banks: Banks, memory_id: object
) -> None:
    bank = banks.bank
    if isinstance(memory_id, str):  # forget takes text as a query: it may match, by words
        assert [m.id for m in await bank.forget(BOB, memory_id)] in ([], [banks.bob])
    else:
        assert await bank.forget(ALICE, memory_id) == []  # type: ignore[arg-type]
    assert await bank.get(ALICE, [memory_id]) == []  # type: ignore[list-item]
    assert await bank.curve(ALICE, memory_id) is None  # type: ignore[arg-type]
    await bank.reinforce(ALICE, [memory_id])  # type: ignore[list-item]
    await untouched(banks)


async def test_a_refused_forget_or_curve_is_logged_without_the_memory(
    banks: Banks, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="memory.bank.bank"):
        await banks.bank.forget(BOB, banks.alice)
        await banks.bank.curve(BOB, banks.alice)
    lines = [r.getMessage() for r in caplog.records if r.name == "memory.bank.bank"]
    assert lines == [
        f"forget refused: no memory {banks.alice} in scope {BOB}",
        f"curve refused: no memory {banks.alice} in scope {BOB}",
    ]
    assert not any("zebraquokka" in r.getMessage() for r in caplog.records)


# -- the SQL audit -----------------------------------------------------------------------------

SCOPED_TABLES = ("memories", "diary", "profiles", "recalls", "pruned")
# Statements that touch a scope's rows without naming the scope, and why that is safe.
# (Statements assembled in a local variable are not seen here: Store.profiles and
# pruned_since, read by hand; profiles names its scope, pruned_since is the operator's report.)
UNSCOPED = {
    # Store._delete: these ids were just selected WHERE scope = ? in the same transaction.
    "DELETE FROM memories WHERE id IN": "ids checked against the scope first",
    "UPDATE memories_fts SET context = '' WHERE rowid IN": "ids checked against the scope",
    "UPDATE memories SET previous_id = NULL WHERE previous_id IN": "ids checked against the scope",
    "UPDATE conversations SET turns = '[]', recap = NULL WHERE id IN": "the sources of those ids",
    # PgStore: the same, after DELETE ... WHERE scope = $1 ... RETURNING id.
    "UPDATE memories SET previous_id = NULL, search_context = ''": "ids deleted by scope",
    # commit_encoding: links between the memories this very transaction inserted.
    "UPDATE memories SET related = ? WHERE id = ?": "ids the transaction just inserted",
    "UPDATE memories SET related = $1 WHERE id = $2": "ids the transaction just inserted",
    # PgStore's pgvector path: the schema, and copying each row's own embedding into its own
    # vector column (nothing is returned), in every scope at once.
    "ADD COLUMN IF NOT EXISTS embedding_v": "DDL",
    "ON memories USING hnsw": "DDL",
    "AND embedding_v IS NULL ORDER BY id": "the rows to fill, read by fill_vectors only",
    "UPDATE memories SET embedding_v = $2::real[]::vector WHERE id = $1": "each row's own",
    "SELECT DISTINCT embedder, vector_dims(embedding_v)": "which embedders, not what rows say",
    # PgStore.fill_search: deriving each row's full-text vector from its own columns, in every
    # scope at once (nothing is returned but to be written back to the same row).
    "WHERE search IS NULL ORDER BY id": "the rows to fill, read by fill_search only",
    "UPDATE memories SET search = setweight(": "each row's own",
    # The daily upkeep's bounded history: every scope's old prune records go, nothing read.
    "DELETE FROM pruned WHERE pruned_at < ": "records past the history kept, counted only",
}


def _text(node: ast.expr, constants: dict[str, str]) -> str:
    """The SQL a call's first argument spells (f-string holes as {})."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            _text(v, constants) if isinstance(v, ast.Constant) else "{}" for v in node.values
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _text(node.left, constants) + _text(node.right, constants)
    if isinstance(node, ast.Name):
        return constants.get(node.id, "")
    return ""


def statements(package: Path) -> list[tuple[str, str]]:
    """(where, SQL) of every statement the package's modules run. A constant may be defined in
    one module of the store and run in another: their names are looked up across the package."""
    trees = {
        path.relative_to(ROOT).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(package.glob("*.py"))
    }
    constants = {
        t.id: _text(node.value, {})
        for tree in trees.values()
        for node in tree.body
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    # (Store reads through its one-trip helpers `_all` and `_one`.)
    runs = {"execute", "executemany", "fetch", "fetchval", "fetchrow", "_all", "_one"}
    found = []
    for module, tree in trees.items():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in runs
                and node.args
            ):
                found.append((f"{module}:{node.lineno}", _text(node.args[0], constants)))
    return found


@pytest.mark.parametrize("package", ["memory/storage/sqlite", "memory/storage/postgres"])
def test_every_statement_on_a_scopes_rows_names_the_scope(package: str) -> None:
    checked = 0
    unscoped = []
    for where, sql in statements(ROOT / package):
        if not any(f" {t} " in f" {sql} " or f" {t}\n" in sql for t in SCOPED_TABLES):
            continue
        if "WHERE" not in sql.upper() and not sql.lstrip().upper().startswith("SELECT"):
            continue  # an insert: the new row carries its scope
        checked += 1
        if "scope" in sql or any(allowed in sql for allowed in UNSCOPED):
            continue
        unscoped.append(f"{where}: {sql}")
    assert checked > 20
    assert not unscoped, "\n".join(unscoped)
