"""One byte budget for the copies a process keeps of its scopes, whichever cache holds them."""

from __future__ import annotations

from pathlib import Path

from memory.bank import Capacity, MemoryBank
from memory.clock import FakeClock
from memory.recall.budget import Budget
from memory.recall.retrieval import LARGE_SCOPE


def test_the_least_recently_used_copies_go_past_the_bound_whichever_cache_holds_them() -> None:
    dropped: list[tuple[str, str]] = []
    budget = Budget(1_000)
    budget.register("rows", lambda scope: dropped.append(("rows", scope)))
    budget.register("links", lambda scope: dropped.append(("links", scope)))
    budget.keep("rows", "a", 400)
    budget.keep("links", "b", 400)
    budget.touch("rows", "a")  # a was used after b
    budget.keep("links", "c", 400)
    assert dropped == [("links", "b")] and budget.total == 800
    budget.keep("rows", "a", 900)  # a grew: the others go, a stays
    assert dropped == [("links", "b"), ("links", "c")] and budget.total == 900
    budget.keep("rows", "d", 2_000)  # one copy past the bound is kept alone
    assert dropped[-1] == ("rows", "a") and budget.total == 2_000
    budget.release("rows", "d")
    assert budget.total == 0


async def test_a_banks_copies_of_many_scopes_stay_within_its_bytes(tmp_path: Path) -> None:
    """Many small scopes' links (no count of scopes bounds them) fit in the bank's budget."""
    bank = await MemoryBank.open(
        tmp_path, "hash", FakeClock(), True, capacity=Capacity(cache_bytes=500)
    )
    scopes = [f"pip/discord:dm:u{i}" for i in range(20)]
    for scope in scopes:
        await bank.remember(scope, "Alice adopted a kitten called Mochi")
        await bank.remember(scope, "Alice works as a nurse")
        await bank.recall(scope, "how is Mochi?")
    kept = [s for s in scopes if s in bank.derived.links]
    assert 0 < len(kept) < len(scopes) and bank.derived.budget.total <= 500
    assert kept == scopes[-len(kept) :]  # the most recently used
    assert [h.text for h in await bank.recall(scopes[0], "Mochi", k=1)] == [
        "Alice adopted a kitten called Mochi"
    ]  # one let go is read again from the store
    assert LARGE_SCOPE > 2  # (these scopes are small: only their links are copied)
    await bank.close()
