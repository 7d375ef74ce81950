"""Scope strings with path, SQL and full-text metacharacters: each is a wall like any other.
What is remembered in one is found in it alone, never in Alice's scope or another odd one;
nothing crashes (a scope that is empty or too long is a BankError saying so); the index
files stay inside the data folder's index/ (their names are hashes); and `kizuna memories
pruned --scope` takes any of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.command.cli import main
from memory.bank import MAX_SCOPE, BankError, MemoryBank
from memory.clock import FakeClock
from tests.security.conftest import DM_MEMORY, leaked

ALICE = "pip/discord:dm:u1"
SCOPES = [
    "pip/../../../etc/passwd",
    "pip/..\\..\\windows",
    "/absolute/path",
    "pip/' OR '1'='1",
    "pip/'; DROP TABLE memories; --",
    'pip/" OR scope_tag : *',
    "pip/%",
    "pip/_",
    "pip/*",
    "pip/discord:dm:u1 ",  # Alice's, with a space
    "PIP/DISCORD:DM:U1",  # Alice's, in capitals
    "pip/discord:dm:u1\x00",
    "pip/discord:dm:u1/../u2",
    "pip/\u202eevil",
    "pip/日本語:dm:ユーザー",
    "pip/" + "x" * (MAX_SCOPE - 4),
]


def files_under(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


@pytest.fixture
async def bank(tmp_path: Path) -> MemoryBank:
    opened = await MemoryBank.open(tmp_path / "data", "hash", FakeClock(), deterministic=True)
    await opened.remember(ALICE, DM_MEMORY, speaker="Alice")
    return opened


async def test_each_odd_scope_is_a_wall(bank: MemoryBank, tmp_path: Path) -> None:
    try:
        for scope in SCOPES:
            await bank.remember(scope, f"kept in {scope!r}: a kite called Quill")
        for scope in SCOPES:
            found = await bank.recall(scope, "zebraquokka bank pin kite Quill", k=20, fail=False)
            assert [r.text for r in found] == [f"kept in {scope!r}: a kite called Quill"]
            listed = await bank.memories(scope, "")
            assert leaked(" ".join(r.text for r in listed)) == [] and len(listed) == 1
            assert await bank.forget(scope, "zebraquokka bank pin") == []
            assert [m.id for m, _ in await bank.inspect(scope, "pin")] == []
        assert [r.text for r in await bank.recall(ALICE, "kite Quill", fail=False)] == []
        assert await bank.count(ALICE) == 1
        await bank.flush()
        data = tmp_path / "data"
        written = files_under(tmp_path)
        indexes = [p for p in written if p.parent != data]
        assert {(p.parent, p.suffix) for p in indexes} == {(data / "index", ".faiss")}
        assert len(indexes) == len(SCOPES) + 1
        for scope in SCOPES:
            assert await bank.wipe(scope) == 1
        assert await bank.count(ALICE) == 1
    finally:
        await bank.close()


@pytest.mark.parametrize("scope", ["", "x" * (MAX_SCOPE + 1)], ids=["empty", "too-long"])
async def test_an_empty_or_overlong_scope_is_refused_plainly(bank: MemoryBank, scope: str) -> None:
    try:
        for call in (
            bank.remember(scope, "anything"),
            bank.recall(scope, "pin"),
            bank.forget(scope, 1),
            bank.get(scope, [1]),
            bank.inspect(scope),
            bank.curve(scope, 1),
            bank.count(scope),
            bank.wipe(scope),
        ):
            with pytest.raises(BankError, match="a scope is a non-empty string"):
                await call
    finally:
        await bank.close()


@pytest.mark.parametrize("scope", SCOPES[:8], ids=repr)
def test_kizuna_memories_pruned_takes_any_scope(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], scope: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KIZUNA_CONFIG", raising=False)
    (tmp_path / "kizuna.toml").write_text(f'data_dir = "{tmp_path / "data"}"\n')
    assert main(["memories", "pruned", "--scope", scope, "--since", "2020-01-01"]) == 0
    assert capsys.readouterr().out == "Nothing was forgotten since 2020-01-01.\n"
