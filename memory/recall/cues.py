"""Cues' vectors for recall: each text embedded once, concurrent cues embedded together.

A crowd's turns all want their cue embedded at the same moment, and a model such as e5 takes
milliseconds of a core for each. `Cues` stands between recall and the embedder's
`embed_query`:

- a cue embedded before is answered from a cache (the latest `cache` texts);
- a cue already asked for by another turn, queued or being embedded, is waited for, not
  embedded again;
- the cues queued while the embedder works go to it together, in one call (at most `batch`
  texts), which for a model runs in a worker thread, off the event loop;
- an embedder quick enough to embed on the event loop (`ImmediateEmbedder`: the hash
  embedder) embeds a cue at once, unqueued: a busy loop never leaves it unembedded;
- `within(text, wait)` gives up on a cue that found the embedder busy with others' cues and
  is not embedded within `wait` seconds (the turn goes on with the words alone; a cue that
  found it idle is waited for, as a lone turn's is); a cue nobody waits for any
  more leaves the queue, so a backlog never outgrows the crowd (one being embedded is
  finished, and cached);
- a call is not begun for cues it would finish after all their turns gave up (by the calls'
  time a text so far): they are given up at once. Under a crowd the embedder would otherwise
  spend a core on batches nobody waits for any more, and serve none in time.

One `Cues` per embedder; it holds nothing but vectors derived from texts.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from memory.embeddings import Embedder, ImmediateEmbedder
from memory.records import Vectors

__all__ = ["CUE_BATCH", "CUE_CACHE", "Cues"]

CUE_CACHE = 512  # cues' vectors kept
CUE_BATCH = 8  # cues in one call: a bigger batch makes the first of them wait longer
# A call longer than this many seconds was a hang or an outage (recall's own deadline deals with
# those), not the embedder's pace: it does not count in the time a text takes.
PACE_FROM = 1.0


class _GaveUp(Exception):
    """The cue would be embedded after its turns gave up: not begun."""


@dataclass(slots=True)
class _Pending:
    future: asyncio.Future[Vectors]
    waiters: int = 0
    # The loop time until which some turn waits for it (None: one waits as long as it takes).
    until: float | None = 0.0


class Cues:
    def __init__(
        self,
        embedder: Embedder,
        *,
        cache: int = CUE_CACHE,
        batch: int = CUE_BATCH,
        clock: Callable[[], float] | None = None,
    ):
        """`clock`: seconds, monotonic (default: the event loop's time)."""
        if cache < 1 or batch < 1:
            raise ValueError("cache and batch must be at least 1")
        self.embedder = embedder
        self._immediate = embedder if isinstance(embedder, ImmediateEmbedder) else None
        self._size = cache
        self._batch = batch
        self._cache: OrderedDict[str, Vectors] = OrderedDict()
        self._pending: dict[str, _Pending] = {}  # asked for, queued or being embedded
        self._queue: dict[str, None] = {}  # the pending not begun, oldest first
        self._worker: asyncio.Task[None] | None = None
        self._began: float | None = None  # when the call under way began (loop time)
        self._per_text: float | None = None  # seconds a text the calls took, lately
        self._paced_from = float("-inf")  # calls begun before do not count (`hung`)
        self._clock = clock

    def cached(self, text: str) -> Vectors | None:
        vector = self._cache.get(text)
        if vector is not None:
            self._cache.move_to_end(text)
        return vector

    def _at_once(self, text: str) -> Vectors | None:
        """The cue's vector, cached or embedded now if the embedder is immediate."""
        vector = self.cached(text)
        if vector is None and self._immediate is not None:
            found = self._immediate.embed_at_once([text])
            if found is not None:
                vector = found[0]
                self._remember(text, vector)
        return vector

    def clear(self) -> None:
        """Forget the cached vectors (benchmarks measure a cold cue this way)."""
        self._cache.clear()

    def working_for(self) -> float:
        """Seconds the embedder's call under way has taken so far (0 when idle)."""
        if self._began is None:
            return 0.0
        return self._now() - self._began

    def hung(self) -> None:
        """The call under way took too long for a turn (recall counts the embedder down): it,
        and the pace measured so far, say nothing of the pace once the embedder is back."""
        self._per_text = None
        self._paced_from = self._now()

    def _now(self) -> float:
        return asyncio.get_running_loop().time() if self._clock is None else self._clock()

    async def vector(self, text: str) -> Vectors:
        """The cue's vector. Raises what the embedder raises (EmbeddingError)."""
        vector = self._at_once(text)
        if vector is not None:
            return vector
        pending = self._join(text)
        try:
            return await asyncio.shield(pending.future)
        finally:
            self._leave(text, pending)

    async def within(self, text: str, wait: float) -> Vectors | None:
        """`vector`, or None if the embedder was busy with other cues and this one is not
        embedded within `wait` seconds."""
        vector = self._at_once(text)
        if vector is not None:
            return vector
        idle = self._began is None and not self._queue
        pending = self._join(text, None if idle else wait)
        try:
            async with asyncio.timeout(None if idle else wait):
                return await asyncio.shield(pending.future)
        except (TimeoutError, _GaveUp):
            return None
        finally:
            self._leave(text, pending)

    def _join(self, text: str, wait: float | None = None) -> _Pending:
        """Wait for the text's vector, `wait` seconds at most (None: as long as it takes)."""
        pending = self._pending.get(text)
        if pending is None:
            pending = self._pending[text] = _Pending(asyncio.get_running_loop().create_future())
            self._queue[text] = None
            if self._worker is None or self._worker.done():
                self._worker = asyncio.create_task(self._work())
        pending.waiters += 1
        if pending.until is not None:
            until = None if wait is None else self._now() + wait
            pending.until = None if until is None else max(pending.until, until)
        return pending

    def _leave(self, text: str, pending: _Pending) -> None:
        pending.waiters -= 1
        if not pending.waiters and text in self._queue:  # nobody wants it any more
            del self._queue[text]
            del self._pending[text]
            pending.future.cancel()

    async def close(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)
            self._worker = None
        for pending in self._pending.values():
            pending.future.cancel()
        self._pending.clear()
        self._queue.clear()

    async def _work(self) -> None:
        while self._queue:
            texts = self._next_batch(self._now())
            if not texts:
                continue
            self._began = began = self._now()
            try:
                matrix = await self.embedder.embed_query(texts)
            except Exception as exc:
                for text in texts:
                    future = self._pending.pop(text).future
                    if not future.done():
                        future.set_exception(exc)
                        future.exception()  # seen: whoever still waits gets it raised
                continue
            except BaseException:
                for text in texts:
                    self._pending.pop(text).future.cancel()
                raise
            finally:
                self._began = None
            took = self._now() - began
            if took <= PACE_FROM and began >= self._paced_from:
                took /= len(texts)
                self._per_text = took if self._per_text is None else (self._per_text + took) / 2
            for text, vector in zip(texts, matrix, strict=True):
                self._remember(text, vector)
                future = self._pending.pop(text).future
                if not future.done():
                    future.set_result(vector)

    def _next_batch(self, now: float) -> list[str]:
        """The queued texts the next call embeds, out of the queue; those it would finish after
        their turns gave up are given up now."""
        texts: list[str] = []
        for text in list(self._queue):
            if len(texts) == self._batch:
                break
            del self._queue[text]
            until = self._pending[text].until
            done = now + (self._per_text or 0.0) * (len(texts) + 1)
            if until is not None and done > until:
                future = self._pending.pop(text).future
                future.set_exception(_GaveUp())
                future.exception()  # seen: its waiters go by words
            else:
                texts.append(text)
        return texts

    def _remember(self, text: str, vector: Vectors) -> None:
        self._cache[text] = vector
        self._cache.move_to_end(text)
        while len(self._cache) > self._size:
            self._cache.popitem(last=False)
