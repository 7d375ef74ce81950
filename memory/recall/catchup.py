"""The bank's embeddings: memories embedded through the store's cache, and caught up on.

An embedding that cannot be made now (the embedding service is down) does not lose the memory:
it is stored without one, found by its words meanwhile, and embedded by `embed_pending` (the
scheduler calls it every round, backing off while the embedder stays out), when its scope's
dense search is next made ready (`searcher`; once `catch_up` has named the scopes that wait,
only theirs and this process's are looked at), or by `catch_up` (at each start, through the
store's indexes; after a change of embedder, the whole bank, in the background; `reindex` runs
it to the end). A scope's dense index is built only from a complete set of the current
embedder's vectors, as far as this process knows (another process's memories stored without one
join when it embeds them): until then it recalls by words.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import AsyncIterator, Sequence
from datetime import datetime, timedelta

import numpy as np

from memory.clock import Clock
from memory.dates import DATE_STAMP
from memory.embeddings import Embedder, EmbeddingError, HashEmbedder
from memory.recall.dense import ScopeSearch
from memory.recall.derived import Derived
from memory.records import Memory, Vectors
from memory.storage import BankStore

__all__ = ["EMBEDDER_PAUSE", "EMBED_BATCH", "INLINE_EMBED", "CatchUp"]

log = logging.getLogger(__name__)

EMBED_BATCH = 256
# How long recall goes by words alone once the embedder failed it, and embed_pending's first
# wait while the embedder stays out (doubling each time, up to EMBED_RETRY_MAX).
EMBEDDER_PAUSE = timedelta(seconds=60)
EMBED_RETRY_MAX = timedelta(minutes=30)
# A scope missing at most this many vectors of the current embedder has them made when its
# dense search is first wanted (memories stored during a short outage); more (a change of
# embedder) are left to `catch_up` in the background, and the scope recalls by words meanwhile.
INLINE_EMBED = 32


class CatchUp:
    """Embeds the bank's memories and keeps track of those waiting for a vector."""

    def __init__(
        self, store: BankStore, embedder: Embedder, derived: Derived, clock: Clock
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.derived = derived
        self.clock = clock
        # Until when recall goes by words: the embedder failed or kept a cue waiting too long.
        self.down_until: datetime | None = None
        # Scopes holding memories stored here without a vector, for embed_pending; and its
        # backoff (separate from recall's pause, which must not grow with an outage).
        self._unembedded: set[str] = set()
        self._embed_failures = 0
        self._embed_retry_at: datetime | None = None
        # Scopes with more memories to embed than INLINE_EMBED: no dense index is built for
        # them (it would hold only part of the scope) until `catch_up` or `embed_pending` is
        # done with them.
        self._catching_up: set[str] = set()
        self._catch_ups = 0  # catch_up runs under way: embed_pending leaves the work to them
        # The scopes a catch_up found waiting for vectors; None until one has looked. Once it
        # has, a scope it did not name has every vector but those of memories stored here
        # since without one (`_unembedded`), so its first recall asks the store nothing more.
        # (Another process's memories stored without a vector join when it embeds them.)
        self._listed: set[str] | None = None

    def text(self, text: str, speaker: str | None, when: datetime) -> str:
        """What is embedded for a memory: its date and speaker anchor it in time and person
        (once: a date the text starts with is left to this one)."""
        text = DATE_STAMP.sub("", text, count=1) or text
        said = f"{speaker}: {text}" if speaker else text
        return f"[{when.day} {when:%B %Y}] {said}"

    def missed(self, scope: str) -> None:
        """Memories of the scope were stored without a vector: embed_pending makes them."""
        self._unembedded.add(scope)

    def embedder_down(self, now: datetime) -> None:
        """The embedder failed (or kept a cue too long): recall goes by words for a while."""
        self.down_until = now + EMBEDDER_PAUSE

    def waiting(self, scope: str) -> bool:
        """Whether the scope recalls by words only until its memories are embedded."""
        return scope in self._catching_up

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed memory texts, through the store's cache (hash vectors are cheaper to compute
        than to read back, so they skip it)."""
        if isinstance(self.embedder, HashEmbedder):
            return await self.embedder.embed(texts)
        name = self.embedder.name
        keys = [text_key(t) for t in texts]
        cached = await self.store.cached_embeddings(name, keys)
        missing = [i for i, key in enumerate(keys) if key not in cached]
        fresh = await self.embedder.embed([texts[i] for i in missing]) if missing else None
        # The dimension is read only now: a remote embedder learns it on its first answer.
        out = np.zeros((len(texts), self.embedder.dimension), dtype=np.float32)
        for i, key in enumerate(keys):
            if key in cached:
                out[i] = np.frombuffer(cached[key], dtype=np.float32)
        if fresh is not None:
            out[missing] = fresh
            await self.store.cache_embeddings(
                name, [(keys[i], fresh[j].tobytes()) for j, i in enumerate(missing)]
            )
        return out

    async def for_memories(
        self, texts: Sequence[str], speaker: str | None, when: datetime
    ) -> list[Vectors | None]:
        """Embeddings for memories about to be written (None each while the embedder is
        down: they are stored without and embedded later)."""
        try:
            vectors = await self.embed([self.text(t, speaker, when) for t in texts])
        except EmbeddingError as e:
            log.warning("memories stored without an embedding for now: %s", e)
            return [None] * len(texts)
        return list(vectors)

    async def plain(self, texts: Sequence[str]) -> Vectors | None:
        """Embeddings of texts as they are (no date or speaker added), through the cache;
        None while the embedder is down."""
        try:
            return await self.embed(texts)
        except EmbeddingError as e:
            log.warning("texts not embedded for now: %s", e)
            return None

    async def similar(
        self, scope: str, vectors: Sequence[Vectors], k: int
    ) -> list[list[tuple[int, float]]]:
        """For each vector, the scope's k memories nearest in meaning, as (id, cosine), best
        first; empty lists when the index cannot be had (the embedder is down)."""
        if not vectors:
            return []
        try:
            index = await self.searcher(scope)
        except (EmbeddingError, ValueError) as e:
            log.warning("similar memories not searched: %s", e)
            return [[] for _ in vectors]
        if index is None:  # still being embedded
            return [[] for _ in vectors]
        return [await index.search(v, k) for v in vectors]

    async def uncache(self, memories: Sequence[Memory]) -> None:
        """Drop the cached embeddings of deleted memories: a forgotten text leaves no vector."""
        await self.store.forget_cached(
            [text_key(self.text(m.text, m.speaker, m.created_at)) for m in memories]
        )

    async def searcher(self, scope: str) -> ScopeSearch | None:
        """The scope's dense search; None while its memories wait to be embedded."""
        if not self.derived.searched(scope):
            if scope in self._catching_up:
                return None
            listed = self._listed
            asked = listed is None or scope in listed or scope in self._unembedded
            if asked and not await self._embed_first(scope):
                return None
        return await self.derived.searcher(scope, self.embedder.dimension)

    async def _embed_first(self, scope: str) -> bool:
        """Memories stored during an outage (or, for `hash`, which is quick, under another
        embedder) are embedded before the scope's index is made; False: too many, they wait
        for the background and the scope recalls by words."""
        missing = await self.store.unembedded(scope, self.embedder.name)
        if len(missing) > INLINE_EMBED and not isinstance(self.embedder, HashEmbedder):
            self._catching_up.add(scope)
            self._unembedded.add(scope)  # embed_pending goes on, if catch_up is not run
            log.info("recall by words in a scope until its memories are embedded")
            return False
        try:
            for start in range(0, len(missing), EMBED_BATCH):
                await self._embed_memories(scope, missing[start : start + EMBED_BATCH])
        except EmbeddingError as e:
            log.warning("some memories stay unembedded for now: %s", e)
            self._unembedded.add(scope)  # embed_pending adds them to the index later
        return True

    async def catch_up(
        self, batch: int = EMBED_BATCH, *, rebuild: bool = False
    ) -> AsyncIterator[tuple[int, int]]:
        """Embed, a batch at a time, every memory without a vector of the current embedder
        (after a change of embedder, the whole bank), yielding (done, total) first and after
        each batch: the background task that runs it draws a progress bar and gives the event
        loop a turn between batches. Until a scope is done its recall goes by words.
        `rebuild`: drop what is derived from each scope touched, so it is rebuilt from the
        store (`reindex`). Raises EmbeddingError (what was done is kept)."""
        name = self.embedder.name
        pending: list[tuple[str, list[Memory]]] = []
        listed = await self.store.unembedded_scopes(name)
        self._listed = set(listed)
        for scope in listed:
            missing = await self.store.unembedded(scope, name)
            if missing:
                pending.append((scope, missing))
                if not self.derived.searched(scope):
                    self._catching_up.add(scope)
        total = sum(len(memories) for _, memories in pending)
        done = 0
        self._catch_ups += 1
        try:
            yield done, total
            async for step in self._catch_up(pending, batch, rebuild):
                done = step
                yield done, total
        finally:
            self._catch_ups -= 1

    async def _catch_up(
        self, pending: list[tuple[str, list[Memory]]], batch: int, rebuild: bool
    ) -> AsyncIterator[int]:
        done = 0
        for scope, memories in pending:
            for start in range(0, len(memories), batch):
                chunk = memories[start : start + batch]
                vectors = await self._embed_memories(scope, chunk)
                await self.derived.embedded(scope, [m.id for m in chunk], list(vectors))
                done += len(chunk)
                yield done
            self._catching_up.discard(scope)
            self._unembedded.discard(scope)
            if rebuild:
                await self.derived.dropped(scope)

    async def embed_pending(self, limit: int = EMBED_BATCH) -> int:
        """Embed up to `limit` memories stored here without a vector (the embedder was out)
        and add them to their scope's open index; returns how many. While the embedder stays
        out it is asked again after EMBEDDER_PAUSE, then twice as long each time, up to
        EMBED_RETRY_MAX. Costs nothing when nothing waits. (Memories left unembedded by an
        earlier process are embedded when their index is built.)"""
        now = self.clock.now()
        waits = (self._embed_retry_at, self.down_until)
        if not self._unembedded or self._catch_ups or any(w is not None and now < w for w in waits):
            return 0
        name = self.embedder.name
        done = 0
        for scope in sorted(self._unembedded):
            missing = await self.store.unembedded(scope, name)
            batch = missing[: limit - done]
            try:
                vectors = await self._embed_memories(scope, batch) if batch else None
            except EmbeddingError as e:
                pause = EMBEDDER_PAUSE * 2 ** min(self._embed_failures, 16)
                self._embed_failures += 1
                self._embed_retry_at = now + min(pause, EMBED_RETRY_MAX)
                log.warning(
                    "memories wait %s more to be embedded: %s",
                    self._embed_retry_at - now,
                    e,
                )
                break
            self._embed_failures = 0
            if len(batch) == len(missing):
                self._unembedded.discard(scope)
                self._catching_up.discard(scope)
            if vectors is not None:
                await self.derived.embedded(scope, [m.id for m in batch], list(vectors))
                done += len(batch)
            if done >= limit:
                break
        if done:
            log.info("embedded %d memories stored while the embedder was out", done)
        return done

    async def _embed_memories(self, scope: str, memories: Sequence[Memory]) -> Vectors:
        """Embed the memories and store their vectors."""
        vectors = await self.embed([self.text(m.text, m.speaker, m.created_at) for m in memories])
        await self.store.set_embeddings(
            scope, self.embedder.name, [(m.id, v) for m, v in zip(memories, vectors, strict=True)]
        )
        return vectors


def text_key(text: str) -> bytes:
    """The key of a text's embedding in the store's cache."""
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=16).digest()
