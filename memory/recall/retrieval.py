"""The bank's search paths: what a cue brings to mind (dense and full-text search, fused and ranked
by memory/recall/ranking.py), what a wandering mind lands on (`flashback`), and what was made on
given days (`dated`).

A cue's embedding overlaps its full-text search. Full-text search asks the store, or in a scope of
LARGE_SCOPE memories or more on a store that does not serve large scopes itself (SQLite: see
memory/recall/derived.py) the word index kept in memory (memory/recall/lexicon.py), which ranks
as the store's does; there, too, what recall answers with is read from the copy of the scope's rows
(memory/recall/rowcache.py). While the embedder is out, or slow, recall goes by words alone."""

from __future__ import annotations

import asyncio
import logging
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, tzinfo

import numpy as np

from memory.dates import day_bounds
from memory.embeddings import EmbeddingError
from memory.forgetting import ForgettingPolicy
from memory.recall.catchup import CatchUp
from memory.recall.cues import Cues
from memory.recall.dense import ScopeSearch
from memory.recall.derived import Derived
from memory.recall.index import IndexFileError
from memory.recall.links import ScopeLinks
from memory.recall.ranking import (
    CONTEXT_WEIGHT,
    DENSE_CANDIDATES,
    DENSE_GAIN,
    DIVERSE_FROM,
    LEXICAL_CANDIDATES,
    Recalled,
    Scale,
    asks,
    contenders,
    diversify,
    finalists,
    relevance,
    surfaces,
    weigh,
)
from memory.records import Memory, Vectors
from memory.storage import BankStore
from memory.text import fts_document, fts_query, porter_term, terms

__all__ = ["LARGE_SCOPE", "Retrieval"]

log = logging.getLogger(__name__)

# Which words of a cue full-text search uses, once there are DF_FROM memories (below that every
# search is fast and every word counts): see `distinctive`.
COMMON_WORD = 0.10
DF_FROM = 1_000
POSTINGS = 2_000  # hits of the cue's words that full-text search may score
# A scope this large is searched by words in memory (memory/recall/lexicon.py), not by the store,
# whose full-text search grows with the scope, unless the store serves it (PostgreSQL).
LARGE_SCOPE = 20_000
MAX_CUE_TERMS = 32  # words of a cue searched, at most
# The longest a recall waits for its cue's embedding (a remote embedder's own timeout and
# retries can run to minutes): past it, recall goes by words and the embedder counts as down.
CUE_DEADLINE = 5.0  # seconds
# The longest a recall waits for its cue's embedding while the embedder is busy with other
# turns' cues: past it, that recall goes by words alone (the embedder is not down).
CUE_WAIT = 0.05  # seconds
# Recall by date reads at most this many of the days' memories, the newest: a span busier
# than that brings its latest (the rest come to mind by words, as any memory does).
DATED_READ = 500

_WORD = re.compile(r"\w+")


# Not slotted: benchmarks swap `read` (recall_latency.py) and `_dense_query` (engine_load.py)
# on one bank's instance.
@dataclass(eq=False)
class Retrieval:
    """Recall for the bank: `policy(scope)` judges retention; `rng` draws retrieval failure
    (None: none); `scale` holds the embedder's floors."""

    store: BankStore
    derived: Derived
    catchup: CatchUp
    policy: Callable[[str], ForgettingPolicy]
    rng: random.Random | None
    scale: Scale
    cues: Cues = field(init=False)
    cue_deadline: float = field(init=False, default=CUE_DEADLINE)
    cue_wait: float = field(init=False, default=CUE_WAIT)

    def __post_init__(self) -> None:
        self.cues = Cues(self.catchup.embedder)

    async def recall(
        self, scope: str, cue: str, *, k: int, now: datetime, fail: bool
    ) -> list[Recalled]:
        """What `cue` brings to mind (memory.bank.MemoryBank.recall)."""
        cue = cue.strip()
        if not cue or k <= 0:
            return []
        scale = self.scale
        words = terms(cue)
        # Another process's changes heard of the scope are followed first (a read of a few
        # rows): what it stored comes to mind from what was derived here.
        await self.derived.settled(scope)
        hits = await self._hits(scope, cue, words)
        lacking = [] if hits is None else hits.links.lacking(hits.candidates)
        if lacking:
            # The store found memories that the scope's links lack: another process stored
            # them and its notification (memory.storage's `listen`) has not come yet, which
            # under load can be after a recall here (or this process stored them a moment
            # ago). Taken as come, and the cue searched again, once, so they come to mind now,
            # ranked as they will be; through the old links they would not come at all. A
            # small scope's derived state is read again whole (the dense index and the words
            # here may lack others of them); a large one's would take seconds, so there only
            # those found are followed now, the notice bringing the rest.
            if await self._large(scope):
                await self.derived.caught_up(scope, lacking)
            else:
                self.derived.changed_elsewhere(scope)
            hits = await self._hits(scope, cue, words)
        if hits is None:
            return []
        query, index, lexical, cosine = hits.query, hits.index, hits.lexical, hits.cosine
        links, candidates = hits.links, hits.candidates
        dense_hits = dict(cosine)
        # Ranked by their links; only what may come to mind is read whole.
        memories = links.around(candidates)
        if await self._copied(scope):
            self.derived.rows.fill(scope, links.ids)
        if query is not None and index is not None:
            cosine.update(
                await index.scores(query, [i for i in memories.ids.tolist() if i not in cosine])
            )
        similarity = cosine
        if scale.dense_baseline and dense_hits:
            low = max(scale.dense_baseline, min(dense_hits.values()))
            span = max(max(dense_hits.values()) - low, 1e-6)
            cosine = {i: DENSE_GAIN * max(c - low, 0.0) / span for i, c in cosine.items()}
        named = set(words) | set(_WORD.findall(cue.lower()))
        relevant = relevance(
            memories,
            cosine,
            lexical,
            named,
            dense_floor=scale.dense_floor,
            shared_word_floor=scale.shared_word_floor,
            similarity=similarity,
            shared=None if fail else await self._sharing(scope, words, lexical, similarity),
            companion=scale.companion_floors if fail else None,
        )
        rng = self.rng if fail else None
        # A turn's recall past DIVERSE_FROM picks among twice as many for diversity; a look-up
        # on purpose (the encoder's search for repeats among them) wants the closest alone.
        diverse = scale.diversity if fail and k > DIVERSE_FROM else None
        reach = 2 * k if diverse is not None else k
        # With retrieval failure some of the best may not come: keep a deeper pool.
        depth = max(reach, k if rng is None else 3 * k)
        pool = contenders(relevant, depth)
        results: list[Recalled] = []
        policy = self.policy(scope)

        read = await self.read(scope, pool)
        asking = {memory.id: asks(memory.text) for memory in read}

        def score(memory: Memory, retention: float) -> float:
            return weigh(relevant[memory.id], retention, memory.importance, asking[memory.id])

        for memory in finalists(read, score, depth):
            retention = policy.retention(memory, now)
            results.append(
                Recalled.of(memory, score(memory, retention), relevant[memory.id], retention)
            )
        results.sort(key=lambda r: (-r.score, r.id))
        # Failure is drawn only for what would otherwise come to mind, best first, so the
        # random stream (and a replay) does not depend on the long tail.
        chosen: list[Recalled] = []
        for result in results:
            if len(chosen) == reach:
                break
            if surfaces(result.retention, rng):
                chosen.append(result)
        if diverse is None or index is None or len(chosen) <= DIVERSE_FROM:
            return chosen[:k]
        penalty, threshold = diverse
        by_id = {r.id: r for r in chosen}
        order = diversify(
            list(by_id),
            {r.id: r.score for r in chosen},
            await index.vectors(list(by_id)),
            k,
            penalty=penalty,
            threshold=threshold,
        )
        return [by_id[i] for i in order]

    async def _hits(self, scope: str, cue: str, words: Sequence[str]) -> _Hits | None:
        """The cue's dense and lexical hits, and the scope's links; None: no hits."""
        # The cue's embedding (a model in a thread, or a remote call) and the dense search
        # after it (FAISS, or a trip to the server) overlap the full-text search (in SQLite's
        # thread, or a trip to the server).
        dense = asyncio.ensure_future(self._dense_hits(scope, cue))
        try:
            lexical = await self._lexical(scope, words)
        except BaseException:
            dense.cancel()
            raise
        query, index, cosine = await dense
        candidates = set(cosine) | set(lexical)
        if not candidates:
            return None
        links = await self.derived.links.get(scope)
        return _Hits(query, index, lexical, cosine, candidates, links)

    async def _dense_hits(
        self, scope: str, cue: str
    ) -> tuple[Vectors | None, ScopeSearch | None, dict[int, float]]:
        """The cue's embedding, the scope's dense search, and the cue's nearest in it."""
        query, index = await self._dense_query(scope, cue)
        if query is None or index is None:
            return query, index, {}
        return query, index, dict(await index.search(query, DENSE_CANDIDATES))

    async def _sharing(
        self,
        scope: str,
        words: Sequence[str],
        lexical: dict[int, float],
        similarity: dict[int, float],
    ) -> set[int]:
        """The lexical hits under the dense floor whose own text holds one of the cue's words:
        full-text search also matches a memory by the one before it (its context), and in a
        look-up such a memory must pass by its meaning alone. Only these few are read."""
        floor, shared_floor = self.scale.dense_floor, self.scale.shared_word_floor
        borderline = [i for i in lexical if shared_floor <= similarity.get(i, floor) < floor]
        if not borderline:
            return set(lexical)
        wanted = {porter_term(w) for w in words}
        own = {
            m.id
            for m in await self.read(scope, borderline)
            if wanted & {porter_term(t) for t in fts_document(m.text).split()}
        }
        return (set(lexical) - set(borderline)) | own

    async def read(self, scope: str, ids: Sequence[int]) -> list[Memory]:
        """The scope's memories `ids`: in a large scope copied here from its copy
        (memory/recall/rowcache.py)."""
        if await self._copied(scope):
            return await self.derived.rows.get(scope, ids)
        return await self.store.get_memories(scope, ids)

    async def _large(self, scope: str) -> bool:
        size, _ = await self.derived.counts.sizes(scope)
        return size >= LARGE_SCOPE

    async def _copied(self, scope: str) -> bool:
        """Whether the scope's words and rows are kept here (a large scope, on a store that
        does not serve it)."""
        return self.derived.keeps_large and await self._large(scope)

    async def _lexical(self, scope: str, words: Sequence[str]) -> dict[int, float]:
        """The best LEXICAL_CANDIDATES memories by the cue's distinctive words, with their
        BM25: from the store's full-text search, or in a scope copied here (`_copied`) from
        its index in memory (memory/recall/lexicon.py) once built (it ranks as FTS5 does)."""
        lexicon = self.derived.lexicon.ready(scope) if await self._copied(scope) else None
        if lexicon is not None:
            chosen = _distinctive(words, lexicon.frequencies(words), len(lexicon))
            if not chosen:
                return {}
            found = lexicon.search(
                terms(" ".join(chosen))[:MAX_CUE_TERMS],
                LEXICAL_CANDIDATES,
                context_weight=CONTEXT_WEIGHT,
            )
            return dict(found)
        match = fts_query(" ".join(await self.distinctive(scope, words)), max_terms=MAX_CUE_TERMS)
        if not match:
            return {}
        size, total = await self.derived.counts.sizes(scope)
        found = await self.store.lexical_search(
            scope,
            match,
            LEXICAL_CANDIDATES,
            context_weight=CONTEXT_WEIGHT,
            # A scope of a small part of all memories: full-text search narrows to it inside
            # FTS5 (for a scope of most of the bank, that only costs).
            narrow=size * 2 < max(total, 1),
        )
        return dict(found)

    async def distinctive(self, scope: str, words: Sequence[str]) -> list[str]:
        """The cue's words that tell the scope's memories apart (`_distinctive`), counted by
        the store."""
        if not words:
            return []
        size, _ = await self.derived.counts.sizes(scope)
        if size < DF_FROM:
            return list(words)
        return _distinctive(words, await self.derived.counts.frequencies(scope, words), size)

    async def _dense_query(self, scope: str, cue: str) -> tuple[Vectors | None, ScopeSearch | None]:
        """The cue's vector and the scope's dense search, or (None, None): recall then goes on
        with the words alone. After an embedding failure, or a cue not embedded within
        `cue_deadline` seconds, cues are not embedded for a while (catchup.EMBEDDER_PAUSE), so
        an outage does not cost every turn a timeout. A cue not embedded within `cue_wait`
        seconds while the embedder works (busy with other turns' cues) goes by words this
        once."""
        catchup = self.catchup
        now = catchup.clock.now()
        if catchup.down_until is not None and now < catchup.down_until:
            return None, None
        if catchup.waiting(scope) and not self.derived.searched(scope):
            return None, None
        try:
            async with asyncio.timeout(self.cue_deadline):
                query = await self.cues.within(cue, self.cue_wait)
            if query is None:
                if self.cues.working_for() < self.cue_deadline:
                    return None, None  # busy, not down
                raise TimeoutError
            if not np.any(query):
                # The embedder sees nothing in the cue (emoji alone, to the hash embedder): its
                # cosines would all be 0 and veto what the words found.
                return None, None
            index = await catchup.searcher(scope)
            return (None, None) if index is None else (query, index)
        except TimeoutError:
            catchup.embedder_down(now)
            self.cues.hung()
            log.warning("recall by words only for a while: the embedder took too long")
        except EmbeddingError as e:
            catchup.embedder_down(now)
            log.warning("recall by words only for a while: %s", e)
        except IndexFileError as e:  # stored vectors of another size under this embedder's name
            log.error("recall by words only: %s; run `kizuna memories reindex`", e)
        return None, None

    async def flashback(self, scope: str, cue: str, *, now: datetime) -> list[Recalled]:
        """What a wandering mind lands on (memory.bank.MemoryBank.flashback)."""
        if not cue.strip():
            return []
        query, index = await self._dense_query(scope, cue.strip())
        if query is None or index is None:
            return []
        nearest = await index.search(query, 1)
        farthest = [(m, -s) for m, s in await index.search(-query, 1)]
        picked = dict(nearest + farthest)
        memories = await self.store.get_memories(scope, list(picked))
        out: list[Recalled] = []
        policy = self.policy(scope)
        for memory in memories:
            retention = policy.retention(memory, now)
            out.append(Recalled.of(memory, picked[memory.id], picked[memory.id], retention))
        return out

    async def dated(
        self, scope: str, first: date, last: date, tz: tzinfo | None, *, k: int, now: datetime
    ) -> list[Recalled]:
        """Memories made on the days `first` to `last` that come to mind, newest first, at
        most k, among the days' newest DATED_READ (memory.bank.MemoryBank.dated)."""
        policy = self.policy(scope)
        out: list[Recalled] = []
        if k <= 0 or first > last:
            return out
        start, end = day_bounds(first, last, tz)
        for memory in await self.store.memories_between(scope, start, end, limit=DATED_READ):
            retention = policy.retention(memory, now)
            if surfaces(retention, self.rng):
                out.append(Recalled.of(memory, retention, 0.0, retention))
                if len(out) == k:
                    break
        return out

    async def get(self, scope: str, ids: Sequence[int], now: datetime) -> list[Recalled]:
        """Memories by id (those in this scope), with their retention now."""
        policy = self.policy(scope)
        return [
            Recalled.of(m, retention, 0.0, retention)
            for m in await self.store.get_memories(scope, ids)
            for retention in [policy.retention(m, now)]
        ]

    async def newest(self, scope: str, limit: int, now: datetime) -> list[Recalled]:
        """The newest memories, their score their retention now."""
        policy = self.policy(scope)
        return [
            Recalled.of(m, retention, 0.0, retention)
            for m in await self.store.list_memories(scope, limit=limit)
            for retention in [policy.retention(m, now)]
        ]

    async def inspect(
        self, scope: str, query: str | None, *, limit: int, now: datetime
    ) -> list[tuple[Memory, float]]:
        """Whole memories with their retention now: the best matches of `query` (nothing
        fails to surface here), or the newest."""
        if query and query.strip():
            hits = await self.recall(scope, query, k=limit, now=now, fail=False)
            found = {m.id: m for m in await self.store.get_memories(scope, [r.id for r in hits])}
            listed = [found[r.id] for r in hits if r.id in found]
        else:
            listed = await self.store.list_memories(scope, limit=limit)
        policy = self.policy(scope)
        return [(m, policy.retention(m, now)) for m in listed]


@dataclass(slots=True, frozen=True)
class _Hits:
    """What a cue found in a scope, before ranking: its vector and the scope's dense search
    (None: by words alone), its lexical (BM25) and dense (cosine) hits, both together, and
    the scope's links."""

    query: Vectors | None
    index: ScopeSearch | None
    lexical: dict[int, float]
    cosine: dict[int, float]
    candidates: set[int]
    links: ScopeLinks


def _distinctive(words: Sequence[str], hits: Mapping[str, int], size: int) -> list[str]:
    """The cue's words that tell a scope's `size` memories apart (`hits`: in how many of them
    each occurs), within a budget of POSTINGS hits: rarest first (the most informative, as
    BM25's idf says), and never one in more than COMMON_WORD of them once the scope holds
    DF_FROM. Scoring every memory that holds a common word is what makes full-text search
    slow in a large bank; the rarest word is always kept."""
    if size < DF_FROM:
        return list(words)
    limit = COMMON_WORD * size
    kept: set[str] = set()
    used = 0
    for word in sorted(words, key=lambda w: hits[w]):
        if kept and (hits[word] > limit or used + hits[word] > POSTINGS):
            break
        kept.add(word)
        used += hits[word]
    return [w for w in words if w in kept]
