"""The memory bank: remember, recall, reinforce and forget, scope by scope.

    bank = await MemoryBank.open(data_dir, embedder="local")
    mid = await bank.remember(scope, "Alice adopted a cat called Mochi", speaker="Alice")
    hits = await bank.recall(scope, "what is the name of her pet?")
    await bank.reinforce(scope, [h.id for h in hits])
    await bank.close()

A scope is an opaque string built by the caller ("miao/discord:g123/u456"); every read and write
names it and the store filters by it, so nothing reaches across scopes. The store holds the
truth, embeddings included. The bank is a façade over four parts:

- `derived` (memory/recall/derived.py): the indexes and copies derived from the store, told once by
  each write here what changed;
- `retrieval` (memory/recall/retrieval.py): the search paths (recall, flashback, recall by date);
- `catchup` (memory/recall/catchup.py): embedding memories, and those stored without a vector (the
  embedder was out, or changed) caught up on;
- `upkeep` (memory/bank/upkeep.py): the daily prune by the forgetting policy, merging
  near-duplicates.
"""

from __future__ import annotations

import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import UTC, date, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Self

import numpy as np

from memory.bank.upkeep import Upkeep
from memory.clock import Clock, SystemClock
from memory.embeddings import Embedder, EmbeddingError, make_embedder
from memory.errors import KizunaError
from memory.forgetting import ForgettingPolicy, recalled
from memory.forgetting.actr import ActR
from memory.forgetting.curve import RetentionCurve, retention_curve
from memory.private import tighten_tree
from memory.recall.catchup import EMBED_BATCH, CatchUp
from memory.recall.derived import Capacity, Derived
from memory.recall.ranking import Recalled, Scale
from memory.recall.retrieval import Retrieval
from memory.records import (
    CATEGORIES,
    KINDS,
    Category,
    EncodingWrite,
    Memory,
    MemoryKind,
    MemoryNotice,
    NewMemory,
    Vectors,
)
from memory.storage import DATABASE, BankStore
from memory.storage.sqlite import Store
from memory.text import fts_document, visible

__all__ = ["BankError", "Capacity", "MemoryBank"]

log = logging.getLogger(__name__)

INDEX_FOLDER = "index"
NEIGHBOUR_GAP = timedelta(minutes=10)  # memories stored this close together are neighbours
SAME_OCCASION = timedelta(hours=1)  # recalls this close together count as one
MAX_SCOPE = 512
MAX_ID = 2**63 - 1  # the largest id a 64-bit INTEGER / BIGINT column holds
MAX_TEXT = 8_000  # characters of one memory

Progress = Callable[[int, int], None]  # (done, total)


class BankError(KizunaError, ValueError):
    """A request the bank cannot take (empty text, unknown category...), said plainly."""


class MemoryBank:
    """The bank over `store`, the store of record, which callers may also read for what the
    bank does not cover (profiles, diary pages, members)."""

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
        capacity: Capacity,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.clock = clock
        # One policy for every scope, or the policy of each scope (personas choose theirs).
        self._policy = policy
        self.data_dir = data_dir
        self._close_store = close_store  # the bank opened it, so closes it
        self.scale = Scale.of(embedder.name)
        self.derived = Derived(store, data_dir / INDEX_FOLDER, embedder.name, capacity)
        self.catchup = CatchUp(store, embedder, self.derived, clock)
        self.retrieval = Retrieval(store, self.derived, self.catchup, self.policy, rng, self.scale)
        self.upkeep = Upkeep(store, self.derived, self.catchup, self.policy, self.scale.duplicate)
        # Told of a scope another process may have forgotten from, once heard: what its
        # callers keep of the scope's memories (a prompt's notes) goes too.
        self._watchers: list[Callable[[str | None], None]] = []

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
        capacity: Capacity | None = None,
    ) -> Self:
        """Open the bank in `data_dir` (the database and index/ inside it). `embedder` is a
        name ("hash", "local") or an Embedder; `deterministic` turns retrieval failure off.
        Pass `store` to share an open store; the bank then leaves closing it to the caller.
        `capacity`: how much of what is derived from the store it keeps in memory."""
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
            capacity=capacity or Capacity(),
        )
        await store.listen(bank.heard, bank.missed)
        return bank

    def heard(self, notice: MemoryNotice) -> None:
        """Another process changed the scope's memories (the store's listener calls this):
        what was derived from them follows (memory/recall/derived.py), and the watchers are
        told when some may be gone."""
        self.derived.heard(notice)
        if notice.kind in ("deleted", "changed"):
            for watcher in self._watchers:
                watcher(notice.scope)

    def missed(self) -> None:
        """Other processes' changes may have gone unheard (the store's listener calls this):
        nothing derived from any scope is trusted, and the watchers are told any scope may
        have lost memories."""
        self.derived.missed()
        for watcher in self._watchers:
            watcher(None)

    def watch(self, changed_elsewhere: Callable[[str | None], None]) -> None:
        """Call `changed_elsewhere(scope)` whenever another process may have forgotten some
        of a scope's memories (None: of any scope)."""
        self._watchers.append(changed_elsewhere)

    def _now(self, at: datetime | None) -> datetime:
        """`at`, or the clock's now; naive datetimes are taken as UTC, so ages never mix naive
        and aware times."""
        at = at or self.clock.now()
        return at if at.tzinfo else at.replace(tzinfo=UTC)

    def policy(self, scope: str) -> ForgettingPolicy:
        """The forgetting policy of a scope."""
        policy = self._policy
        return policy(scope) if callable(policy) else policy

    async def close(self) -> None:
        try:
            await self.retrieval.cues.close()
            await self.derived.close()
        finally:
            if self._close_store is not None:
                await self._close_store()

    async def flush(self) -> int:
        """Save changed indexes (the scheduler calls this now and then)."""
        return await self.derived.flush()

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
        text, importance = _checked(text, kind, category, importance)
        if kind == "explicit":
            # Asked to keep the same words again (or the request delivered again after a
            # crash, before it was confirmed): kept once.
            same = await self.store.find_memory(scope, text, "explicit")
            if same is not None:
                return same
        sentiment = max(-1.0, min(1.0, float(sentiment)))
        when = self._now(when)
        speaker = speaker.strip() or None if speaker else None
        previous = await self.neighbour(scope, when)
        [vector] = await self.catchup.for_memories([text], speaker, when)
        if vector is None:
            self.catchup.missed(scope)
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
        await self.derived.added(scope, [memory_id], [vector])
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
        await self.derived.changed(write.scope, [merge.memory_id for merge in write.merges])
        if any(v is None for v in vectors):
            self.catchup.missed(write.scope)
        await self.derived.added(write.scope, ids, vectors)
        return ids

    async def similar(
        self, scope: str, vectors: Sequence[Vectors], k: int
    ) -> list[list[tuple[int, float]]]:
        """For each vector, the scope's k memories nearest in meaning, as (id, cosine), best
        first; empty lists when the index cannot be had (the embedder is down)."""
        _check_scope(scope)
        return await self.catchup.similar(scope, vectors, k)

    async def embed_memories(
        self, texts: Sequence[str], speaker: str | None, when: datetime
    ) -> list[Vectors | None]:
        """Embeddings for memories about to be written (None each while the embedder is
        down: they are stored without and embedded later)."""
        return await self.catchup.for_memories(texts, speaker, when)

    async def embed_plain(self, texts: Sequence[str]) -> Vectors | None:
        """Embeddings of texts as they are (no date or speaker added), through the cache;
        None while the embedder is down."""
        return await self.catchup.plain(texts)

    def embed_text(self, text: str, speaker: str | None, when: datetime) -> str:
        """What is embedded for a memory (memory.recall.catchup.CatchUp.text)."""
        return self.catchup.text(text, speaker, when)

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
        """Forget what the scope's policy lets go today (memory.bank.upkeep.Upkeep.prune); returns
        (memories kept, [(id, reason)])."""
        _check_scope(scope)
        return await self.upkeep.prune(scope, self._now(now), day=day, seed=seed, hearsay=hearsay)

    async def twins(self, scope: str) -> list[tuple[int, int]]:
        """Pairs of the scope's memories that say nearly the same, which a prune merges."""
        return await self.upkeep.twins(scope)

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
            await self.derived.removed(scope, sorted(deleted))
            await self.catchup.uncache([m for m in gone if m.id in deleted])
        return [m for m in gone if m.id in deleted]

    async def wipe(self, scope: str) -> int:
        """Forget every memory of a scope; returns how many."""
        _check_scope(scope)
        memories = await self.store.list_memories(scope)
        count = await self.store.wipe_memories(scope)
        await self.derived.dropped(scope)
        await self.catchup.uncache(memories)
        return count

    async def reinforce(self, scope: str, ids: Sequence[int], now: datetime | None = None) -> None:
        """The memories were used (put in a prompt): one more recall each, and the forgetting
        clock restarts. recall() itself changes nothing. A memory recalled within
        SAME_OCCASION is not reinforced again: coming back to a thought in the same
        conversation is one rehearsal, not many (else strength would grow with every turn).
        A clock behind a memory's last touch dates its recall at that touch (see
        memory.forgetting.recalled)."""
        _check_scope(scope)
        now = self._now(now)
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
            await self.derived.changed(scope, [memory_id for memory_id, _ in updates])

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
        memory/recall/ranking.py."""
        _check_scope(scope)
        return await self.retrieval.recall(scope, cue, k=k, now=self._now(now), fail=fail)

    async def flashback(
        self, scope: str, cue: str, *, now: datetime | None = None
    ) -> list[Recalled]:
        """What a wandering mind lands on: the memory closest in meaning to `cue` and the one
        farthest from it (their relevance is their cosine to the cue)."""
        _check_scope(scope)
        return await self.retrieval.flashback(scope, cue, now=self._now(now))

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
        that come to mind, newest first, at most k; their score is their retention."""
        _check_scope(scope)
        return await self.retrieval.dated(scope, first, last, tz, k=k, now=self._now(now))

    async def get(
        self, scope: str, ids: Sequence[int], now: datetime | None = None
    ) -> list[Recalled]:
        """Memories by id (those in this scope), with their retention now."""
        _check_scope(scope)
        return await self.retrieval.get(scope, _ids(ids), self._now(now))

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
        return await self.retrieval.newest(scope, limit, self._now(now))

    async def count(self, scope: str) -> int:
        _check_scope(scope)
        return await self.store.count_memories(scope)

    async def inspect(
        self, scope: str, query: str | None = None, *, limit: int = 200, now: datetime | None = None
    ) -> list[tuple[Memory, float]]:
        """Whole memories with their retention now, for someone looking at the bank: the
        best matches of `query` (nothing fails to surface here), or the newest."""
        _check_scope(scope)
        return await self.retrieval.inspect(scope, query, limit=limit, now=self._now(now))

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
        return retention_curve(self.policy(scope), found[0], history, self._now(now), ahead=ahead)

    # Embeddings (memory/recall/catchup.py).

    async def reindex(self, progress: Progress | None = None) -> int:
        """Embed every memory that has no embedding from the current embedder (after a change
        of embedder, or an outage), in every scope, and rebuild their indexes; returns how
        many were embedded."""
        done = 0
        async for done, total in self.catch_up(rebuild=True):
            if progress:
                progress(done, total)
        return done

    def catch_up(
        self, batch: int = EMBED_BATCH, *, rebuild: bool = False
    ) -> AsyncIterator[tuple[int, int]]:
        """Embed every memory without a vector of the current embedder, yielding (done,
        total) as it goes (memory.recall.catchup.CatchUp.catch_up)."""
        return self.catchup.catch_up(batch, rebuild=rebuild)

    def waiting(self, scope: str) -> bool:
        """Whether the scope recalls by words only until its memories are embedded."""
        return self.catchup.waiting(scope)

    async def embed_pending(self, limit: int = EMBED_BATCH) -> int:
        """Embed up to `limit` memories stored without a vector while the embedder was out;
        returns how many (memory.recall.catchup.CatchUp.embed_pending)."""
        return await self.catchup.embed_pending(limit)


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


def _checked(text: str, kind: str, category: str | None, importance: int | None) -> tuple[str, int]:
    """A new memory's visible text and importance (by its kind when not given), or BankError
    for what the bank cannot take."""
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
    return text, importance


def _kind(kind: str) -> MemoryKind:
    return next(k for k in KINDS if k == kind)


def _category(category: str | None) -> Category | None:
    return None if category is None else next(c for c in CATEGORIES if c == category)
