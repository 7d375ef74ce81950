"""One group commit (memory/groupcommit.py): what is asked for while a write is under way goes
in the next write, in order; a failed write fails those whose items were in it, and them only."""

from __future__ import annotations

import asyncio

import pytest

from memory.groupcommit import GroupCommit


class Writes:
    """Writes held at a gate, each recorded; the ones named in `failing` raise."""

    def __init__(self) -> None:
        self.written: list[list[str]] = []
        self.gate = asyncio.Event()
        self.failing: set[str] = set()

    async def __call__(self, items: list[str]) -> None:
        await self.gate.wait()
        self.written.append(items)
        if self.failing & set(items):
            raise OSError("disk full")


async def test_what_is_asked_during_a_write_goes_together_in_the_next() -> None:
    writes = Writes()
    group = GroupCommit(writes)
    first = asyncio.ensure_future(group(["a"]))
    await asyncio.sleep(0)  # the first write begins, and waits at the gate
    later = [asyncio.ensure_future(group([x, x + "'"])) for x in ("b", "c")]
    await asyncio.sleep(0)
    writes.gate.set()
    await asyncio.gather(first, *later)
    assert writes.written == [["a"], ["b", "b'", "c", "c'"]]
    await group.finish()


async def test_a_failed_write_fails_its_own_callers_only() -> None:
    writes = Writes()
    writes.failing = {"bad"}
    group = GroupCommit(writes)
    first = asyncio.ensure_future(group(["bad"]))
    await asyncio.sleep(0)
    second = asyncio.ensure_future(group(["good"]))
    await asyncio.sleep(0)
    writes.gate.set()
    with pytest.raises(OSError, match="disk full"):
        await first
    await second
    assert writes.written == [["bad"], ["good"]]


async def test_a_caller_giving_up_does_not_stop_the_write() -> None:
    writes = Writes()
    group = GroupCommit(writes)
    impatient = asyncio.ensure_future(group(["kept"]))
    await asyncio.sleep(0)
    impatient.cancel()
    writes.gate.set()
    await group.finish()
    assert writes.written == [["kept"]]
