"""The memory bank: remember, recall, reinforce and forget, scope by scope.

    bank = await MemoryBank.open(data_dir, embedder="local")
    mid = await bank.remember(scope, "Alice adopted a cat called Mochi", speaker="Alice")
    hits = await bank.recall(scope, "what is the name of her pet?")
    await bank.reinforce(scope, [h.id for h in hits])
    await bank.close()

A scope is an opaque string built by the caller ("miao/discord:g123/u456"); every read and write
names it and the store filters by it, so nothing reaches across scopes. SQLite holds the truth,
embeddings included; the FAISS indexes are derived and rebuilt from it whenever in doubt. An
embedding that cannot be made now (the embedding service is down) does not lose the memory: it
is stored without one, found by its words meanwhile, and embedded by `embed_pending` (the
scheduler calls it every round, backing off while the embedder stays out), when its index is
next built, or by `reindex`.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import random
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Self

import numpy as np
import numpy.typing as npt

from memory.budget import CACHE_BYTES, Budget
from memory.clock import Clock, SystemClock
from memory.cues import Cues
from memory.dates import day_bounds
from memory.dense import DenseIndex, ScopeSearch, server_index
from memory.embeddings import Embedder, EmbeddingError, HashEmbedder, make_embedder
from memory.errors import KizunaError
from memory.forgetting import ForgettingPolicy, absorbed, merge_targets, recalled
from memory.forgetting.actr import ActR
from memory.forgetting.curve import RetentionCurve, retention_curve
from memory.index import IndexCache
from memory.lexicon import LexiconCache
from memory.links import LINK_SCOPES, LinkCache
from memory.private import tighten_tree
from memory.recall import (
    CONTEXT_WEIGHT,
    DENSE_CANDIDATES,
    DIVERSE_FROM,
    LEXICAL_CANDIDATES,
    Recalled,
    asks,
    contenders,
    diversify,
    finalists,
    relevance,
    surfaces,
    weigh,
)
from memory.records import (
    CATEGORIES,
    KINDS,
    Category,
    EncodingWrite,
    Kind,
    Memory,
    NewMemory,
    Vectors,
)
from memory.rowcache import ROW_SCOPES, RowCache
from memory.storage import DATABASE, BankStore
from memory.storage.sqlite import Store
from memory.text import fts_document, fts_query, porter_term, restates, terms, visible

__all__ = ["BankError", "MemoryBank", "undated"]

log = logging.getLogger(__name__)

INDEX_FOLDER = "index"
# Which words of a cue full-text search uses, once there are DF_FROM memories (below that every
# search is fast and every word counts): see MemoryBank._distinctive.
COMMON_WORD = 0.10
DF_FROM = 1_000
POSTINGS = 2_000  # hits of the cue's words that full-text search may score
# A scope this large is searched by words in memory (memory/lexicon.py), not by the store: its
# full-text search took 3 ms or more of a 100k scope's recall.
LARGE_SCOPE = 20_000
MAX_CUE_TERMS = 32  # words of a cue searched, at most
DF_STALE_AFTER = 100  # writes after which those counts are read again
EMBEDDER_PAUSE = timedelta(seconds=60)
# The longest a recall waits for its cue's embedding (a remote embedder's own timeout and
# retries can run to minutes): past it, recall goes by words and the embedder counts as down.
CUE_DEADLINE = 5.0  # seconds
# The longest a recall waits for its cue's embedding while the embedder is busy with other
# turns' cues: past it, that recall goes by words alone (the embedder is not down).
CUE_WAIT = 0.05  # seconds
EMBED_RETRY_MAX = timedelta(minutes=30)  # embed_pending's longest wait, doubling from the pause
NEIGHBOUR_GAP = timedelta(minutes=10)
SAME_OCCASION = timedelta(
    hours=1
)  # recalls this close together count as one  # memories stored this close together are neighbours
TWIN = 0.95  # cosine of two memories that say nearly the same
HEARSAY = "hearsay: words another speaker passed on, which the scope may not keep"
TWIN_BLOCK = 1_024
TWIN_SCAN_LIMIT = 50_000  # memories of a scope compared pairwise by the daily prune
MAX_SCOPE = 512
MAX_ID = 2**63 - 1  # the largest id a 64-bit INTEGER / BIGINT column holds
MAX_TEXT = 8_000  # characters of one memory
EMBED_BATCH = 256
# Recall by date reads at most this many of the days' memories, the newest: a span busier
# than that brings its latest (the rest come to mind by words, as any memory does).
DATED_READ = 500
# A scope missing at most this many vectors of the current embedder has them made when its
# index is first wanted (memories stored during a short outage); more (a change of embedder)
# are left to `catch_up` in the background, and the scope recalls by words meanwhile.
INLINE_EMBED = 32
# (Cosine below which a memory is unrelated to a cue, the same for one that shares a word with
# it) by embedder family, on the raw cosine (before e5's rescaling below, which hides how close
# a cue is). Measured on LoCoMo and off-topic cues ("what's the capital of France?" scores 0.18
# under hash and local): they reject those and cost R@5 0.003 (hash) and under 0.005 (local); a
# hash vector is itself lexical, so a shared word needs little more. E5's cosines crowd into a
# narrow band where no floor parts match from noise cleanly (an off-topic cue's best LoCoMo
# memory reaches 0.84, a tenth of the answers score under 0.80): its floors, chosen on half of
# LoCoMo, leave 53 of 180 off-topic cues recalling something (all 180 without) for R@5 -0.008.
# See benchmarks/README.md.
DENSE_FLOORS = {"hash": (0.20, 0.05), "local": (0.30, 0.15), "e5": (0.84, 0.78)}
DEFAULT_DENSE_FLOOR = (0.30, 0.15)
# The floors of a turn's recall once one candidate has passed those above (memory/recall.py),
# by family: e5's answers often score under its floor, which is set by off-topic cues.
COMPANION_FLOORS = {"e5": (0.82, 0.76)}
# Diversity past the first few of a turn's recall (memory/recall.py), by family: (penalty,
# threshold) on the raw cosine between two memories. Measured for e5 only (benchmarks/README.md).
DIVERSITY = {"e5": (0.25, 0.88)}
# E5's cosines crowd into a narrow band that moves with the cue and the language (on LoCoMo a
# cue's median memory scores 0.80 and its answer 0.84; on the Chinese set 0.86 and 0.91), where
# the fusion's weights, tuned on cosines spread over 0..1, would hear little of them. For these
# families recall rescales a cosine c as DENSE_GAIN * max(c - low, 0) / (high - low), where
# high and low are the cue's best and last dense candidates (low at least the baseline given
# here): like BM25 over its best hit. Below `low` a lexical hit keeps its words' score alone.
# Measured: benchmarks/README.md.
DENSE_BASELINES = {"e5": 0.7}
DENSE_GAIN = 0.6

Progress = Callable[[int, int], None]  # (done, total)
_WORD = re.compile(r"\w+")
# The date a memory written by encoding starts with: "2026-03-02: ...", "2025-03-14（星期五）：...".
DATE_STAMP = re.compile(r"^\s*\d{4}-\d{2}-\d{2}(?:\s*[（(][^）)]*[）)])?\s*[:：]\s*")


class BankError(KizunaError, ValueError):
    """A request the bank cannot take (empty text, unknown category...), said plainly."""


class MemoryBank:
    def __init__(
        self,
        store: BankStore,
        embedder: Embedder,
        *,
        data_dir: Path,
        clock: Clock,
        policy: ForgettingPolicy | Callable[[str], ForgettingPolicy],
        rng: random.Random | None,
        close_store: Callable[[], Awaitable[None]] | None,
        index_capacity: int = 10_000,
        index_bytes: int = 256 << 20,
        link_scopes: int = LINK_SCOPES,
        row_scopes: int = ROW_SCOPES,
        cache_bytes: int = CACHE_BYTES,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.clock = clock
        # One policy for every scope, or the policy of each scope (personas choose theirs).
        self._policy = policy
        self.data_dir = data_dir
        self._rng = rng
        self._close_store = close_store  # the bank opened it, so closes it
        self.indexes = IndexCache(
            data_dir / INDEX_FOLDER, store, capacity=index_capacity, max_bytes=index_bytes
        )
        # The dense half of recall: the store's own vector search where it has one
        # (PostgreSQL with pgvector), else the FAISS indexes above.
        self.dense: DenseIndex = server_index(store) or self.indexes
        # What ranking needs of each memory before its text (memory/links.py).
        # One byte budget for the copies kept of scopes below (memory/budget.py).
        self.budget = Budget(cache_bytes)
        self.links = LinkCache(store, link_scopes, self.budget)
        self.lexicon = LexiconCache(store, budget=self.budget)
        # What recall answers with, in a large scope (memory/rowcache.py).
        self.rows = RowCache(store, row_scopes, self.budget)
        family = embedder.name.split(":")[0].split("-")[0]
        self.dense_floor, self.shared_word_floor = DENSE_FLOORS.get(family, DEFAULT_DENSE_FLOOR)
        self.dense_baseline = DENSE_BASELINES.get(family, 0.0)
        self.companion_floors = COMPANION_FLOORS.get(family)
        self.diversity = DIVERSITY.get(family)
        # The cosine at which two texts say nearly the same, on this embedder's scale.
        self.duplicate = self.dense_baseline + TWIN * (1.0 - self.dense_baseline)
        self.cues = Cues(embedder)
        # Told of a scope another process changed, after the bank's own caches are dropped:
        # what its callers keep of the scope's memories (a prompt's notes) goes too.
        self._watchers: list[Callable[[str], None]] = []
        # Counts for full-text search's choice of words, refreshed as memories are written.
        self._df: dict[str, dict[str, tuple[int, int]]] = {}  # scope -> word -> (hits, at)
        self._sizes: dict[str, tuple[int, int, int]] = {}  # scope -> (its, all, at write)
        self._writes = 0
        self._embedder_down_until: datetime | None = None
        self.cue_deadline = CUE_DEADLINE
        self.cue_wait = CUE_WAIT
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

    @classmethod
    async def open(
        cls,
        data_dir: Path | str,
        embedder: str | Embedder = "hash",
        clock: Clock | None = None,
        deterministic: bool = False,
        *,
        seed: int | None = None,
        store: BankStore | None = None,
        policy: ForgettingPolicy | Callable[[str], ForgettingPolicy] | None = None,
        index_capacity: int = 10_000,
        index_bytes: int = 256 << 20,
        link_scopes: int = LINK_SCOPES,
        row_scopes: int = ROW_SCOPES,
        cache_bytes: int = CACHE_BYTES,
    ) -> Self:
        """Open the bank in `data_dir` (the database and index/ inside it). `embedder` is a
        name ("hash", "local") or an Embedder; `deterministic` turns retrieval failure off.
        Pass `store` to share an open store; the bank then leaves closing it to the caller."""
        folder = Path(data_dir)
        if isinstance(embedder, str):
            embedder = make_embedder(embedder)
        try:
            await embedder.start()
        except EmbeddingError as e:  # recall works by words until the embedder answers
            log.warning("the embedder is not ready: %s", e)
        close_store = None
        if store is None:
            opened = await Store.open(folder / DATABASE)
            store, close_store = opened, opened.close
        tighten_tree(folder / INDEX_FOLDER)
        bank = cls(
            store,
            embedder,
            data_dir=folder,
            clock=clock or SystemClock(),
            policy=policy or ActR(),
            rng=None if deterministic else random.Random(seed),
            close_store=close_store,
            index_capacity=index_capacity,
            index_bytes=index_bytes,
            link_scopes=link_scopes,
            row_scopes=row_scopes,
            cache_bytes=cache_bytes,
        )
        await store.listen(bank._changed_elsewhere, bank._touched_elsewhere)
        return bank

    def _changed_elsewhere(self, scope: str) -> None:
        """Another process changed the scope's memories: its open index is out of date, so
        the next recall rebuilds it from the store; its counts are read again."""
        self._sizes.pop(scope, None)
        self._df.pop(scope, None)
        self.dense.drop(scope, self.embedder.name)
        self.links.drop(scope)
        self.lexicon.drop(scope)
        self.rows.drop(scope)
        for watcher in self._watchers:
            watcher(scope)

    def watch(self, changed_elsewhere: Callable[[str], None]) -> None:
        """Call `changed_elsewhere(scope)` whenever another process changes (adds to,
        forgets from) a scope's memories."""
        self._watchers.append(changed_elsewhere)

    def _touched_elsewhere(self, scope: str) -> None:
        """Another process changed some of the scope's memories in place (reinforced them):
        the indexes hold nothing of that, the copy of the rows does."""
        self.rows.drop(scope)

    def policy(self, scope: str) -> ForgettingPolicy:
        """The forgetting policy of a scope."""
        policy = self._policy
        return policy(scope) if callable(policy) else policy

    async def close(self) -> None:
        try:
            await self.cues.close()
            await self.lexicon.close()
            await self.rows.close()
            await self.dense.flush()
        finally:
            if self._close_store is not None:
                await self._close_store()

    async def flush(self) -> int:
        """Save changed indexes (the scheduler calls this now and then)."""
        return await self.dense.flush()

    # Writing.

    async def remember(
        self,
        scope: str,
        text: str,
        *,
        when: datetime | None = None,
        speaker: str | None = None,
        speaker_id: str | None = None,
        importance: int | None = None,
        category: str | None = None,
        kind: str = "episodic",
        sentiment: float = 0.0,
        related: Sequence[int] = (),
        conversation_id: int | None = None,
    ) -> int:
        """Store a memory; returns its id. `speaker` is the name of who said it, as shown;
        `speaker_id` the platform's stable id of who said it, as kept."""
        _check_scope(scope)
        text = visible(text)
        if not text:
            raise BankError("a memory needs some text")
        if len(text) > MAX_TEXT:
            raise BankError(f"a memory holds at most {MAX_TEXT} characters, not {len(text)}")
        if kind not in KINDS:
            raise BankError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
        if category is not None and category not in CATEGORIES:
            raise BankError(f"category must be one of {', '.join(CATEGORIES)}, not {category!r}")
        if importance is None:
            importance = 3 if kind == "explicit" else 2
        if importance not in (1, 2, 3):
            raise BankError(f"importance must be 1, 2 or 3, not {importance!r}")
        if kind == "explicit":
            # Asked to keep the same words again (or the request delivered again after a
            # crash, before it was confirmed): kept once.
            same = await self.store.find_memory(scope, text, "explicit")
            if same is not None:
                return same
        sentiment = max(-1.0, min(1.0, float(sentiment)))
        when = _aware(when or self.clock.now())
        speaker = speaker.strip() or None if speaker else None
        previous = await self.neighbour(scope, when)
        vector: Vectors | None = None
        try:
            [vector] = await self._embed([self.embed_text(text, speaker, when)])
        except EmbeddingError as e:
            log.warning("memory stored without an embedding for now: %s", e)
            self._unembedded.add(scope)
        memory_id = await self.store.add_memory(
            NewMemory(
                scope=scope,
                text=text,
                speaker=speaker,
                kind=_kind(kind),
                category=_category(category),
                importance=importance,
                sentiment=sentiment,
                created_at=when,
                strength=self.policy(scope).initial_strength(importance, sentiment),
                related=tuple(related),
                conversation_id=conversation_id,
                previous_id=None if previous is None else previous.id,
                search_text=fts_document(text),
                search_context="" if previous is None else fts_document(previous.text),
                embedding=vector,
                embedder=None if vector is None else self.embedder.name,
                speaker_id=speaker_id or None,
            )
        )
        self._writes += 1
        await self.links.added(scope, [memory_id])
        await self.lexicon.added(scope, [memory_id])
        await self.rows.added(scope, [memory_id])
        await self.dense.added(scope, self.embedder.name, [memory_id], [vector])
        return memory_id

    async def commit_encoding(
        self, write: EncodingWrite, vectors: Sequence[Vectors | None]
    ) -> list[int] | None:
        """Write an encoded conversation (one transaction, see EncodingWrite) and add the new
        memories' `vectors` (parallel to write.memories) to the scope's index. None if the
        conversation was already encoded."""
        _check_scope(write.scope)
        ids = await self.store.commit_encoding(write)
        if ids is None:
            return None
        self._writes += len(ids)
        await self.rows.changed(write.scope, [merge.memory_id for merge in write.merges])
        await self.links.added(write.scope, ids)
        await self.lexicon.added(write.scope, ids)
        await self.rows.added(write.scope, ids)
        if any(v is None for v in vectors):
            self._unembedded.add(write.scope)
        await self.dense.added(write.scope, self.embedder.name, ids, vectors)
        return ids

    async def similar(
        self, scope: str, vectors: Sequence[Vectors], k: int
    ) -> list[list[tuple[int, float]]]:
        """For each vector, the scope's k memories nearest in meaning, as (id, cosine), best
        first; empty lists when the index cannot be had (the embedder is down)."""
        _check_scope(scope)
        if not vectors:
            return []
        try:
            index = await self._index(scope)
        except (EmbeddingError, ValueError) as e:
            log.warning("similar memories not searched: %s", e)
            return [[] for _ in vectors]
        if index is None:  # still being embedded
            return [[] for _ in vectors]
        return [await index.search(v, k) for v in vectors]

    async def embed_memories(
        self, texts: Sequence[str], speaker: str | None, when: datetime
    ) -> list[Vectors | None]:
        """Embeddings for memories about to be written (None each while the embedder is
        down: they are stored without and embedded later)."""
        try:
            vectors = await self._embed([self.embed_text(t, speaker, when) for t in texts])
        except EmbeddingError as e:
            log.warning("memories stored without an embedding for now: %s", e)
            return [None] * len(texts)
        return list(vectors)

    async def embed_plain(self, texts: Sequence[str]) -> Vectors | None:
        """Embeddings of texts as they are (no date or speaker added), through the cache;
        None while the embedder is down."""
        try:
            return await self._embed(texts)
        except EmbeddingError as e:
            log.warning("texts not embedded for now: %s", e)
            return None

    async def neighbour(self, scope: str, when: datetime) -> Memory | None:
        """The memory stored just before `when`, if close enough to be its neighbour."""
        last = await self.store.last_memory(scope)
        if last is not None and timedelta(0) <= when - last.created_at <= NEIGHBOUR_GAP:
            return last
        return None

    async def prune(
        self,
        scope: str,
        now: datetime,
        *,
        day: date,
        seed: int,
        hearsay: Callable[[Memory], bool] | None = None,
    ) -> tuple[int, list[tuple[int, str]]]:
        """Let the scope's forgetting policy decide what is forgotten today; delete it, with
        a report of each kept in the store. Returns (memories kept, [(id, reason)]).
        `hearsay`: the memories the scope may not keep at all, by the caller's rule (words
        passed on by another speaker): forgotten whatever the policy says, never merged."""
        _check_scope(scope)
        now = _aware(now)
        policy = self.policy(scope)
        memories = await self.store.list_memories(scope)
        heard = {m.id for m in memories if hearsay is not None and hearsay(m)}
        twins = [t for t in await self.twins(scope) if not heard.intersection(t)]
        judged = [m for m in memories if m.id not in heard]
        # Off the event loop: a scope of 20,000 memories takes the policy about 80 ms.
        decisions = await asyncio.to_thread(policy.prune, judged, now, seed=seed, twins=twins)
        by_id = {m.id: m for m in memories}
        decided = {d.id: d.reason for d in decisions if d.id in by_id}
        # A forgotten memory with a near-duplicate that stays is merged into it: deleted like
        # any forgotten memory, its recalls and strength carried by the survivor.
        into = merge_targets(
            decided, twins, {i: policy.retention(m, now) for i, m in by_id.items()}
        )
        for twin, keep in into.items():
            decided[twin] = f"merged into near-duplicate {keep}; {decided[twin]}"
        decided.update(dict.fromkeys(sorted(heard), HEARSAY))
        forgotten = [(by_id[i], reason) for i, reason in decided.items()]
        gone = await self.store.prune(scope, day, forgotten, policy.name, now, merged=into)
        # The survivors of merges took over their twins' recalls: read again once _absorb has
        # reinforced them.
        self.rows.removed(scope, [*gone, *(into[g] for g in gone if g in into)])
        if gone:
            self.links.removed(scope, gone)
            self.lexicon.removed(scope, gone)
            await self.dense.removed(scope, self.embedder.name, gone)
            await self._forget_cached([by_id[i] for i in gone])
            self._writes += len(gone)
        await self._absorb(scope, policy, by_id, {g: into[g] for g in gone if g in into}, now)
        return len(memories) - len(gone), [(i, decided[i]) for i in gone]

    async def _absorb(
        self,
        scope: str,
        policy: ForgettingPolicy,
        by_id: dict[int, Memory],
        into: dict[int, int],
        now: datetime,
    ) -> None:
        """Strengthen each survivor of a merge, which the prune gave the recalls of the
        deleted twins `into` it (at their own times): the repetition is one more recall,
        leaving the strength `absorbed` gives."""
        merged: dict[int, list[Memory]] = {}
        for twin, keep in into.items():
            merged.setdefault(keep, []).append(by_id[twin])
        for keep, twins in sorted(merged.items()):
            after = absorbed(policy, by_id[keep], twins, now)
            assert after.last_recalled_at is not None
            await self.store.reinforce(scope, [(keep, after.strength)], after.last_recalled_at)
            await self.rows.changed(scope, [keep])

    async def twins(self, scope: str) -> list[tuple[int, int]]:
        """Pairs of the scope's memories that say nearly the same (cosine >= `duplicate`, and
        neither saying what the other does not: memory.text.restates): a prune keeps one of
        each pair, merged."""
        ids, vectors = await self.store.embeddings(scope, self.embedder.name)
        if vectors is None or len(ids) < 2 or len(ids) > TWIN_SCAN_LIMIT:
            return []
        pairs = await asyncio.to_thread(_twins, ids, vectors, self.duplicate)
        if not pairs:
            return []
        wanted = sorted({i for pair in pairs for i in pair})
        texts = {m.id: m.text for m in await self.store.get_memories(scope, wanted)}
        return [
            (a, b)
            for a, b in pairs
            if a in texts and b in texts and restates(undated(texts[a]), undated(texts[b]))
        ]

    async def forget(self, scope: str, target: int | str) -> list[Memory]:
        """Delete a memory by id, or the one that best matches a query; returns what went
        (nothing if there was no such memory in this scope)."""
        _check_scope(scope)
        if isinstance(target, str):
            hits = await self.recall(scope, target, k=1, fail=False)
            ids = [h.id for h in hits]
        else:
            ids = _ids([target])
        gone = await self.store.get_memories(scope, ids)
        if not gone and not isinstance(target, str):
            log.info("forget refused: no memory %s in scope %s", target, scope)
        deleted = set(await self.store.delete_memories(scope, [m.id for m in gone]))
        if deleted:
            self.rows.removed(scope, sorted(deleted))
            self.links.removed(scope, sorted(deleted))
            self.lexicon.removed(scope, sorted(deleted))
            await self.dense.removed(scope, self.embedder.name, sorted(deleted))
            await self._forget_cached([m for m in gone if m.id in deleted])
        return [m for m in gone if m.id in deleted]

    async def wipe(self, scope: str) -> int:
        """Forget every memory of a scope; returns how many."""
        _check_scope(scope)
        memories = await self.store.list_memories(scope)
        count = await self.store.wipe_memories(scope)
        self.links.drop(scope)
        self.lexicon.drop(scope)
        self.rows.drop(scope)
        await self.dense.delete_file(scope, self.embedder.name)
        await self._forget_cached(memories)
        return count

    async def _forget_cached(self, memories: Sequence[Memory]) -> None:
        """Drop the cached embeddings of deleted memories: a forgotten text leaves no vector."""
        await self.store.forget_cached(
            [_text_key(self.embed_text(m.text, m.speaker, m.created_at)) for m in memories]
        )

    async def reinforce(self, scope: str, ids: Sequence[int], now: datetime | None = None) -> None:
        """The memories were used (put in a prompt): one more recall each, and the forgetting
        clock restarts. recall() itself changes nothing. A memory recalled within
        SAME_OCCASION is not reinforced again: coming back to a thought in the same
        conversation is one rehearsal, not many (else strength would grow with every turn).
        A clock behind a memory's last touch dates its recall at that touch (see
        memory.forgetting.recalled)."""
        _check_scope(scope)
        now = _aware(now or self.clock.now())
        memories = await self.store.get_memories(scope, _ids(ids))
        policy = self.policy(scope)
        by_time: dict[datetime, list[tuple[int, float]]] = {}
        for m in memories:
            if m.last_recalled_at is not None and now - m.last_recalled_at < SAME_OCCASION:
                continue
            after = recalled(policy, m, now)
            assert after.last_recalled_at is not None
            by_time.setdefault(after.last_recalled_at, []).append((m.id, after.strength))
        for at, updates in sorted(by_time.items()):
            await self.store.reinforce(scope, updates, at)
            await self.rows.changed(scope, [memory_id for memory_id, _ in updates])

    # Reading.

    async def recall(
        self,
        scope: str,
        cue: str,
        *,
        k: int = 5,
        now: datetime | None = None,
        fail: bool = True,
    ) -> list[Recalled]:
        """The memories `cue` brings to mind, best first, at most k; none when nothing
        remembered is relevant. `fail=False` is a look-up on purpose (a command, the encoder):
        no retrieval failure, and each memory judged by its own words and meaning, where a
        mind's recall also brings the memory said right after a matching one (full-text
        search's context) and, once the floor lets one candidate through, lets the others
        through by the embedder's lower companion floors. How they are ranked:
        memory/recall.py."""
        _check_scope(scope)
        now = _aware(now or self.clock.now())
        cue = cue.strip()
        if not cue or k <= 0:
            return []
        words = terms(cue)
        lexical: dict[int, float] = {}
        # The cue's embedding (a model in a thread, or a remote call) overlaps the full-text
        # search (in SQLite's thread).
        dense = asyncio.ensure_future(self._dense_query(scope, cue))
        try:
            lexical = await self._lexical(scope, words)
        except BaseException:
            dense.cancel()
            raise
        query, index = await dense
        cosine: dict[int, float] = {}
        if query is not None and index is not None:
            cosine = dict(await index.search(query, DENSE_CANDIDATES))
        dense_hits = dict(cosine)
        candidates = set(cosine) | set(lexical)
        if not candidates:
            return []
        # Ranked by their links; only what may come to mind is read whole.
        links = await self.links.get(scope)
        memories = links.around(candidates)
        if await self._large(scope):
            self.rows.fill(scope, links.ids)
        if query is not None and index is not None:
            cosine.update(
                await index.scores(query, [i for i in memories.ids.tolist() if i not in cosine])
            )
        similarity = cosine
        if self.dense_baseline and dense_hits:
            low = max(self.dense_baseline, min(dense_hits.values()))
            span = max(max(dense_hits.values()) - low, 1e-6)
            cosine = {i: DENSE_GAIN * max(c - low, 0.0) / span for i, c in cosine.items()}
        named = set(words) | set(_WORD.findall(cue.lower()))
        relevant = relevance(
            memories,
            cosine,
            lexical,
            named,
            dense_floor=self.dense_floor,
            shared_word_floor=self.shared_word_floor,
            similarity=similarity,
            shared=None if fail else await self._sharing(scope, words, lexical, similarity),
            companion=self.companion_floors if fail else None,
        )
        rng = self._rng if fail else None
        # A turn's recall past DIVERSE_FROM picks among twice as many for diversity; a look-up
        # on purpose (the encoder's search for repeats among them) wants the closest alone.
        diverse = self.diversity if fail and k > DIVERSE_FROM else None
        reach = 2 * k if diverse is not None else k
        # With retrieval failure some of the best may not come: keep a deeper pool.
        depth = max(reach, k if rng is None else 3 * k)
        pool = contenders(relevant, depth)
        results: list[Recalled] = []
        policy = self.policy(scope)

        read = await self._memories(scope, pool)
        asking = {memory.id: asks(memory.text) for memory in read}

        def score(memory: Memory, retention: float) -> float:
            return weigh(relevant[memory.id], retention, memory.importance, asking[memory.id])

        for memory in finalists(read, score, depth):
            retention = policy.retention(memory, now)
            results.append(
                _recalled(memory, score(memory, retention), relevant[memory.id], retention)
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
        borderline = [
            i
            for i in lexical
            if self.shared_word_floor <= similarity.get(i, self.dense_floor) < self.dense_floor
        ]
        if not borderline:
            return set(lexical)
        wanted = {porter_term(w) for w in words}
        own = {
            m.id
            for m in await self._memories(scope, borderline)
            if wanted & {porter_term(t) for t in fts_document(m.text).split()}
        }
        return (set(lexical) - set(borderline)) | own

    async def _memories(self, scope: str, ids: Sequence[int]) -> list[Memory]:
        """The scope's memories `ids`: in a large scope from its copy (memory/rowcache.py)."""
        if await self._large(scope):
            return await self.rows.get(scope, ids)
        return await self.store.get_memories(scope, ids)

    async def _large(self, scope: str) -> bool:
        size, _ = await self._sizes_of(scope)
        return size >= LARGE_SCOPE

    async def _lexical(self, scope: str, words: Sequence[str]) -> dict[int, float]:
        """The best LEXICAL_CANDIDATES memories by the cue's distinctive words, with their
        BM25: from the store's full-text search, or in a scope of LARGE_SCOPE or more from
        its index in memory (memory/lexicon.py) once built (it ranks as FTS5 does)."""
        size, _ = await self._sizes_of(scope)
        lexicon = self.lexicon.ready(scope) if size >= LARGE_SCOPE else None
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
        match = fts_query(" ".join(await self._distinctive(scope, words)), max_terms=MAX_CUE_TERMS)
        if not match:
            return {}
        found = await self.store.lexical_search(
            scope,
            match,
            LEXICAL_CANDIDATES,
            context_weight=CONTEXT_WEIGHT,
            narrow=await self._small_scope(scope),
        )
        return dict(found)

    async def _distinctive(self, scope: str, words: Sequence[str]) -> list[str]:
        """`_distinctive` of the cue's words, counted by the store (the counts kept until
        DF_STALE_AFTER writes)."""
        if not words:
            return []
        size, _ = await self._sizes_of(scope)
        if size < DF_FROM:
            return list(words)
        known = self._df.get(scope, {})
        hits = {
            w: known[w][0]
            for w in words
            if w in known and self._writes - known[w][1] <= DF_STALE_AFTER
        }
        stale = [w for w in words if w not in hits]
        if stale:
            counts = await self.store.document_frequencies(scope, stale)
            kept = self._df.setdefault(scope, {})  # (dropped meanwhile: counted afresh)
            for word, count in counts.items():
                kept[word] = (count, self._writes)
            hits |= counts
        return _distinctive(words, hits, size)

    async def _sizes_of(self, scope: str) -> tuple[int, int]:
        """(the scope's memories, all memories), re-read after DF_STALE_AFTER writes."""
        known = self._sizes.get(scope)
        if known is None or self._writes - known[2] > DF_STALE_AFTER:
            size, total = await self.store.sizes(scope)
            known = self._sizes[scope] = (size, total, self._writes)
        return known[0], known[1]

    async def _small_scope(self, scope: str) -> bool:
        """Whether the scope holds a small part of all memories: full-text search then
        narrows to it inside FTS5 (for a scope of most of the bank, that only costs)."""
        size, total = await self._sizes_of(scope)
        return size * 2 < max(total, 1)

    async def _dense_query(self, scope: str, cue: str) -> tuple[Vectors | None, ScopeSearch | None]:
        """The cue's vector and the scope's dense search, or (None, None): recall then goes on with
        the words alone. After an embedding failure, or a cue not embedded within
        `cue_deadline` seconds, cues are not embedded for EMBEDDER_PAUSE, so an outage does not
        cost every turn a timeout. A cue not embedded within `cue_wait` seconds while
        the embedder works (busy with other turns' cues) goes by words this once."""
        now = self.clock.now()
        if self._embedder_down_until is not None and now < self._embedder_down_until:
            return None, None
        if scope in self._catching_up and (scope, self.embedder.name) not in self.dense:
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
            index = await self._index(scope)
            return (None, None) if index is None else (query, index)
        except TimeoutError:
            self._embedder_down_until = now + EMBEDDER_PAUSE
            log.warning("recall by words only for a while: the embedder took too long")
        except EmbeddingError as e:
            self._embedder_down_until = now + EMBEDDER_PAUSE
            log.warning("recall by words only for a while: %s", e)
        except ValueError as e:  # stored vectors of another size under this embedder's name
            log.error("recall by words only: %s; run `kizuna memories reindex`", e)
        return None, None

    async def flashback(
        self, scope: str, cue: str, *, now: datetime | None = None
    ) -> list[Recalled]:
        """What a wandering mind lands on: the memory closest in meaning to `cue` and the one
        farthest from it (their relevance is their cosine to the cue)."""
        _check_scope(scope)
        now = _aware(now or self.clock.now())
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
            out.append(_recalled(memory, picked[memory.id], picked[memory.id], retention))
        return out

    async def dated(
        self,
        scope: str,
        first: date,
        last: date,
        tz: tzinfo | None,
        *,
        k: int,
        now: datetime | None = None,
    ) -> list[Recalled]:
        """Memories made on the days `first` to `last` (the days of `tz`, local time if None)
        that come to mind, newest first, at most k; their score is their retention. Among
        the days' newest DATED_READ."""
        _check_scope(scope)
        now = _aware(now or self.clock.now())
        policy = self.policy(scope)
        out: list[Recalled] = []
        if k <= 0 or first > last:
            return out
        start, end = day_bounds(first, last, tz)
        for memory in await self.store.memories_between(scope, start, end, limit=DATED_READ):
            retention = policy.retention(memory, now)
            if surfaces(retention, self._rng):
                out.append(_recalled(memory, retention, 0.0, retention))
                if len(out) == k:
                    break
        return out

    async def get(
        self, scope: str, ids: Sequence[int], now: datetime | None = None
    ) -> list[Recalled]:
        """Memories by id (those in this scope), with their retention now."""
        _check_scope(scope)
        now = _aware(now or self.clock.now())
        policy = self.policy(scope)
        return [
            _recalled(m, retention, 0.0, retention)
            for m in await self.store.get_memories(scope, _ids(ids))
            for retention in [policy.retention(m, now)]
        ]

    async def memories(
        self,
        scope: str,
        query: str | None = None,
        *,
        limit: int = 20,
        now: datetime | None = None,
    ) -> list[Recalled]:
        """A listing: the best matches of `query`, or without one the newest memories (their
        score is then their retention)."""
        if query and query.strip():
            return await self.recall(scope, query, k=limit, now=now, fail=False)
        _check_scope(scope)
        now = _aware(now or self.clock.now())
        listed = await self.store.list_memories(scope, limit=limit)
        return [
            _recalled(m, retention, 0.0, retention)
            for m in listed
            for retention in [self.policy(scope).retention(m, now)]
        ]

    async def count(self, scope: str) -> int:
        _check_scope(scope)
        return await self.store.count_memories(scope)

    async def inspect(
        self, scope: str, query: str | None = None, *, limit: int = 200, now: datetime | None = None
    ) -> list[tuple[Memory, float]]:
        """Whole memories with their retention now, for someone looking at the bank: the
        best matches of `query` (nothing fails to surface here), or the newest."""
        _check_scope(scope)
        now = _aware(now or self.clock.now())
        if query and query.strip():
            ids = [r.id for r in await self.recall(scope, query, k=limit, now=now, fail=False)]
            found = {m.id: m for m in await self.store.get_memories(scope, ids)}
            listed = [found[i] for i in ids if i in found]
        else:
            listed = await self.store.list_memories(scope, limit=limit)
        policy = self.policy(scope)
        return [(m, policy.retention(m, now)) for m in listed]

    async def curve(
        self,
        scope: str,
        memory_id: int,
        *,
        now: datetime | None = None,
        ahead: timedelta = timedelta(days=30),
    ) -> RetentionCurve | None:
        """The memory's retention from its creation to `ahead` past now, by the scope's
        forgetting policy; None if the scope has no such memory."""
        _check_scope(scope)
        found = await self.store.get_memories(scope, _ids([memory_id]))
        if not found:
            log.info("curve refused: no memory %s in scope %s", memory_id, scope)
            return None
        history = await self.store.recall_history(scope, memory_id)
        now = _aware(now or self.clock.now())
        return retention_curve(self.policy(scope), found[0], history, now, ahead=ahead)

    # Embeddings and indexes.

    def embed_text(self, text: str, speaker: str | None, when: datetime) -> str:
        """What is embedded for a memory: its date and speaker anchor it in time and person
        (once: a date the text starts with is left to this one)."""
        text = DATE_STAMP.sub("", text, count=1) or text
        said = f"{speaker}: {text}" if speaker else text
        return f"[{when.day} {when:%B %Y}] {said}"

    async def reindex(self, progress: Progress | None = None) -> int:
        """Embed every memory that has no embedding from the current embedder (after a change
        of embedder, or an outage), in every scope, and rebuild their indexes; returns how
        many were embedded."""
        done = 0
        async for done, total in self.catch_up(rebuild=True):
            if progress:
                progress(done, total)
        return done

    async def catch_up(
        self, batch: int = EMBED_BATCH, *, rebuild: bool = False
    ) -> AsyncIterator[tuple[int, int]]:
        """Embed, a batch at a time, every memory without a vector of the current embedder
        (after a change of embedder, the whole bank), yielding (done, total) first and after
        each batch: the background task that runs it draws a progress bar and gives the event
        loop a turn between batches. Until a scope is done its recall goes by words: its dense
        index is built only from a complete set of the current embedder's vectors (never a
        part of the scope, never two embedders' vectors). `rebuild`: drop each index touched,
        so it is rebuilt from the store (`reindex`). Raises EmbeddingError (what was done is
        kept)."""
        name = self.embedder.name
        pending: list[tuple[str, list[Memory]]] = []
        for scope in await self.store.scopes():
            missing = await self.store.unembedded(scope, name)
            if missing:
                pending.append((scope, missing))
                if (scope, name) not in self.dense:
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
        name = self.embedder.name
        done = 0
        for scope, memories in pending:
            for start in range(0, len(memories), batch):
                chunk = memories[start : start + batch]
                vectors = await self._embed_memories(scope, chunk)
                await self.dense.added(scope, name, [m.id for m in chunk], list(vectors))
                done += len(chunk)
                yield done
            self._catching_up.discard(scope)
            self._unembedded.discard(scope)
            if rebuild:
                await self.dense.delete_file(scope, name)

    def waiting(self, scope: str) -> bool:
        """Whether the scope recalls by words only until its memories are embedded."""
        return scope in self._catching_up

    async def embed_pending(self, limit: int = EMBED_BATCH) -> int:
        """Embed up to `limit` memories stored here without a vector (the embedder was out)
        and add them to their scope's open index; returns how many. While the embedder stays
        out it is asked again after EMBEDDER_PAUSE, then twice as long each time, up to
        EMBED_RETRY_MAX. Costs nothing when nothing waits. (Memories left unembedded by an
        earlier process are embedded when their index is built.)"""
        now = self.clock.now()
        waits = (self._embed_retry_at, self._embedder_down_until)
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
                await self.dense.added(scope, name, [m.id for m in batch], list(vectors))
                done += len(batch)
            if done >= limit:
                break
        if done:
            log.info("embedded %d memories stored while the embedder was out", done)
        return done

    async def _embed_memories(self, scope: str, memories: Sequence[Memory]) -> Vectors:
        texts = [self.embed_text(m.text, m.speaker, m.created_at) for m in memories]
        vectors = await self._embed(texts)
        await self.store.set_embeddings(
            scope, self.embedder.name, [(m.id, v) for m, v in zip(memories, vectors, strict=True)]
        )
        return vectors

    async def _index(self, scope: str) -> ScopeSearch | None:
        """The scope's dense search; None while its memories wait to be embedded."""
        name = self.embedder.name
        if (scope, name) not in self.dense:
            if scope in self._catching_up:
                return None
            # Memories stored during an outage (or, for `hash`, which is quick, under another
            # embedder) join the index now; many more wait for the background.
            missing = await self.store.unembedded(scope, name)
            if len(missing) > INLINE_EMBED and not isinstance(self.embedder, HashEmbedder):
                self._catching_up.add(scope)
                self._unembedded.add(scope)  # embed_pending goes on, if catch_up is not run
                log.info("recall by words in a scope until its memories are embedded")
                return None
            try:
                for start in range(0, len(missing), EMBED_BATCH):
                    await self._embed_memories(scope, missing[start : start + EMBED_BATCH])
            except EmbeddingError as e:
                log.warning("some memories stay unembedded for now: %s", e)
                self._unembedded.add(scope)  # embed_pending adds them to the index later
        return await self.dense.searcher(scope, name, self.embedder.dimension)

    async def _query_vector(self, cue: str) -> Vectors:
        return await self.cues.vector(cue)

    async def _embed(self, texts: Sequence[str]) -> Vectors:
        """Embed memory texts, through the SQLite cache (hash vectors are cheaper to compute
        than to read back, so they skip it)."""
        if isinstance(self.embedder, HashEmbedder):
            return await self.embedder.embed(texts)
        name = self.embedder.name
        keys = [_text_key(t) for t in texts]
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


def _twins(ids: npt.NDArray[np.int64], vectors: Vectors, threshold: float) -> list[tuple[int, int]]:
    pairs: list[tuple[int, int]] = []
    for start in range(0, len(ids), TWIN_BLOCK):
        block = vectors[start : start + TWIN_BLOCK] @ vectors.T
        rows, cols = np.nonzero(block >= threshold)
        for row, col in zip(rows.tolist(), cols.tolist(), strict=True):
            if start + row < col:
                pairs.append((int(ids[start + row]), int(ids[col])))
    return pairs


def undated(text: str) -> str:
    """A memory's text without the date encoding starts it with."""
    return DATE_STAMP.sub("", text, count=1)


def _text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=16).digest()


def _recalled(memory: Memory, score: float, relevance: float, retention: float) -> Recalled:
    return Recalled(
        id=memory.id,
        text=memory.text,
        when=memory.created_at,
        speaker=memory.speaker,
        speaker_id=memory.speaker_id,
        score=score,
        relevance=relevance,
        retention=retention,
        importance=memory.importance,
        kind=memory.kind,
        related=memory.related,
    )


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


def _ids(ids: Sequence[int]) -> list[int]:
    """The ids that can be a memory's (whole numbers SQLite and PostgreSQL can hold): any
    other, from a URL or a model's tool call, names no memory, rather than an error."""
    return [
        int(i)
        for i in ids
        if isinstance(i, int | np.integer) and not isinstance(i, bool) and 0 < i <= MAX_ID
    ]


def _check_scope(scope: str) -> None:
    if not isinstance(scope, str) or not scope or len(scope) > MAX_SCOPE:
        raise BankError(f"a scope is a non-empty string of at most {MAX_SCOPE} characters")


def _aware(at: datetime) -> datetime:
    """Naive datetimes are taken as UTC, so ages never mix naive and aware times."""
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def _kind(kind: str) -> Kind:
    return next(k for k in KINDS if k == kind)


def _category(category: str | None) -> Category | None:
    return None if category is None else next(c for c in CATEGORIES if c == category)
