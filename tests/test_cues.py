"""Cues' vectors: each text embedded once, concurrent cues in one call, a busy embedder shed."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

import memory.recall.cues
from memory.bank import MemoryBank
from memory.clock import FakeClock
from memory.embeddings import EmbeddingError, HashEmbedder
from memory.recall.cues import Cues

SCOPE = "pip/discord:dm:u1"


class Gated:
    """The hash embedder behind a gate: each call waits until the test opens it."""

    def __init__(self) -> None:
        self.inner = HashEmbedder(64)
        self.name = self.inner.name
        self.dimension = self.inner.dimension
        self.asked: list[list[str]] = []
        self.gate = asyncio.Event()
        self.error: EmbeddingError | None = None

    async def start(self) -> None:
        return None

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return await self.inner.embed(texts)

    async def embed_query(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.asked.append(list(texts))
        await self.gate.wait()
        if self.error is not None:
            raise self.error
        return await self.inner.embed_query(texts)


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_concurrent_cues_are_embedded_together_and_each_text_once() -> None:
    embedder = Gated()
    cues = Cues(embedder)
    first = asyncio.create_task(cues.vector("my cat Mochi"))
    await settle()  # the first call has begun; the next cues queue behind it
    rest = [asyncio.create_task(cues.vector(t)) for t in ("her garden", "the cello", "her garden")]
    await settle()
    embedder.gate.set()
    vectors = await asyncio.gather(first, *rest)
    assert embedder.asked == [["my cat Mochi"], ["her garden", "the cello"]]
    expected = await embedder.inner.embed_query(["her garden"])
    assert np.allclose(vectors[1], expected[0]) and np.allclose(vectors[3], expected[0])
    assert np.allclose(await cues.vector("the cello"), vectors[2])  # cached: no third call
    assert len(embedder.asked) == 2
    await cues.close()


async def test_a_cue_not_begun_in_time_is_given_up_and_never_embedded() -> None:
    embedder = Gated()
    cues = Cues(embedder)
    first = asyncio.create_task(cues.vector("my cat Mochi"))
    await settle()
    assert await cues.within("her garden", 0.01) is None  # the embedder is busy
    embedder.gate.set()
    await first
    await settle()
    assert embedder.asked == [["my cat Mochi"]]
    await cues.close()


async def test_an_embedding_error_reaches_every_waiter() -> None:
    embedder = Gated()
    embedder.error = EmbeddingError("down", retryable=True)
    cues = Cues(embedder)
    waiting = [asyncio.create_task(cues.vector("my cat")) for _ in range(2)]
    await settle()
    embedder.gate.set()
    for task in waiting:
        with pytest.raises(EmbeddingError):
            await task
    assert embedder.asked == [["my cat"]]
    await cues.close()


async def test_recall_goes_by_words_while_the_embedder_is_busy_and_it_is_not_down(
    tmp_path: Path,
) -> None:
    embedder = Gated()
    bank = await MemoryBank.open(tmp_path, embedder, FakeClock(), deterministic=True)
    embedder.gate.set()
    kitten = await bank.remember(SCOPE, "Alice adopted a kitten called Mochi")
    await bank.recall(SCOPE, "her garden")  # the index is open
    embedder.gate.clear()
    busy = asyncio.create_task(bank.retrieval.cues.vector("something else entirely"))
    await settle()
    bank.retrieval.cue_wait = 0.01
    assert [h.id for h in await bank.recall(SCOPE, "how is Mochi?")] == [kitten]
    embedder.gate.set()
    await busy
    bank.retrieval.cue_wait = 60.0  # (however busy the machine running the tests is)
    await bank.recall(SCOPE, "her pet")
    assert embedder.asked[-1] == ["her pet"]  # not counted down: the next cue is embedded
    assert ["how is Mochi?"] not in embedder.asked  # the cue given up was never embedded
    await bank.close()


async def test_an_immediate_embedder_embeds_a_cue_at_once_however_busy() -> None:
    """The hash embedder embeds a cue on the event loop in microseconds: never queued behind
    others' cues, so a busy loop never leaves a turn to recall by words alone."""
    hashed = HashEmbedder(64)
    cues = Cues(hashed)
    long = asyncio.ensure_future(cues.vector("a very long message " * 2_000))  # in a thread
    await settle()
    assert cues.working_for() > 0 or not long.done()  # the embedder is busy
    vector = await cues.within("how is Mochi?", 0.0)
    assert vector is not None
    np.testing.assert_array_equal(vector, (await hashed.embed_query(["how is Mochi?"]))[0])
    assert cues.cached("how is Mochi?") is vector
    await long
    await cues.close()


async def test_a_call_is_not_begun_for_cues_it_would_finish_after_their_turns_gave_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The embedder's calls take 20 s a text (a clock of the test's, the pace counted from
    calls that long): a cue whose turn waits 30 s more is given up when its call would begin,
    10 s before its wait is out, and never embedded; one whose turn waits a minute is."""
    monkeypatch.setattr(memory.recall.cues, "PACE_FROM", 100.0)
    embedder, now = Gated(), [0.0]
    cues = Cues(embedder, clock=lambda: now[0])
    first = asyncio.ensure_future(cues.vector("the first cue"))
    await settle()
    now[0] += 20.0  # the first call takes 20 s
    embedder.gate.set()
    await first
    embedder.gate.clear()
    busy = asyncio.ensure_future(cues.vector("keeps it busy"))
    await settle()
    soon = asyncio.ensure_future(cues.within("given up soon", 30.0))
    later = asyncio.ensure_future(cues.within("waited for", 60.0))
    await settle()
    now[0] += 20.0  # so does the second: the next would end at 60 s, past the first's 50
    embedder.gate.set()
    await busy
    assert await soon is None
    assert await later is not None
    assert ["given up soon"] not in embedder.asked and ["waited for"] in embedder.asked
    await cues.close()
