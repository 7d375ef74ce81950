"""What the bank derives from the store, scope by scope, kept in step with its writes here alone.

The store holds the truth; everything here is derived from it and rebuilt from it whenever in
doubt:

- the dense index (memory/recall/dense.py: FAISS files, memory/recall/index.py, or for a large
  scope the store's own vector search where it has one), one per scope and embedder; - the links
  ranking reads (memory/recall/links.py); - the word index of a large scope
  (memory/recall/lexicon.py); - the copy of a large scope's rows (memory/recall/rowcache.py); -
  the counts full-text search chooses a cue's words by (`Counts`).

The word index and the copy of the rows are made only where the store does not serve large
scopes itself (`keeps_large`: SQLite, one process, where they make a large scope's recall
fast); PostgreSQL searches a large scope's words and reads its rows for each process (its
scoped full-text index, migration 019), so nothing of such a scope but its links is kept here.
Whatever of these is kept in memory (the FAISS indexes too) shares one byte budget for the whole
process (memory/recall/budget.py). Each write path of the bank says once what it changed: new
memories (`added`), memories changed in place (`changed`), deleted ones (`removed`), a scope
emptied or re-embedded (`dropped`), vectors stored later (`embedded`). Another process's changes
arrive through `heard` (its notifications, memory by memory: followed by the same steps, the
added read from the store) or `changed_elsewhere` (too many to name: all dropped); a recall
whose hits in the store the links lack hears of them sooner (`caught_up` in a large scope, else
all dropped). Nothing else keeps these in step."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from memory.recall.budget import CACHE_BYTES, Budget
from memory.recall.dense import DenseIndex, ScopeSearch, SizedIndex, server_index
from memory.recall.index import HNSW_FROM, IndexCache
from memory.recall.lexicon import LexiconCache
from memory.recall.links import LINK_SCOPES, LinkCache
from memory.recall.rowcache import ROW_SCOPES, RowCache
from memory.records import MemoryNotice, NoticeKind, Vectors
from memory.storage import BankStore

__all__ = ["STALE_AFTER", "STALE_SHARE", "Capacity", "Counts", "Derived", "ServingStore"]

# A scope's counts are read from the store again once the memories written to it and deleted
# from it since reach STALE_AFTER, or STALE_SHARE of it in a larger scope (there a word's count
# hardly moves with a few writes, and a common word's count costs the store tens of ms).
STALE_AFTER = 100
STALE_SHARE = 0.01
WORDS_KEPT = 1_024  # words' counts kept a scope, the least recently asked for out

log = logging.getLogger(__name__)


class Counts:
    """How many memories a scope holds (and the whole bank), and in how many of them each word
    occurs: read from the store when wanted, then kept until enough writes to the scope later
    (STALE_AFTER, STALE_SHARE)."""

    def __init__(self, store: BankStore) -> None:
        self._store = store
        # scope -> word -> (hits, the scope's writes until which they hold)
        self._df: dict[str, OrderedDict[str, tuple[int, int]]] = {}
        self._sizes: dict[str, tuple[int, int, int]] = {}  # scope -> (its, all, held until)
        self._writes: dict[str, int] = {}  # memories written to and deleted from each scope

    def wrote(self, scope: str, count: int) -> None:
        """`count` of the scope's memories were written or deleted (here or elsewhere)."""
        self._writes[scope] = self._writes.get(scope, 0) + count

    def forget(self, scope: str) -> None:
        """The scope changed in a way not counted: read its counts again."""
        self._sizes.pop(scope, None)
        self._df.pop(scope, None)

    def clear(self) -> None:
        self._sizes.clear()
        self._df.clear()

    @staticmethod
    def _lasting(size: int) -> int:
        """How many writes to a scope of `size` memories its counts last."""
        return max(STALE_AFTER, int(STALE_SHARE * size))

    async def sizes(self, scope: str) -> tuple[int, int]:
        """(the scope's memories, all memories)."""
        known = self._sizes.get(scope)
        if known is None or self._writes.get(scope, 0) > known[2]:
            writes = self._writes.get(scope, 0)
            size, total = await self._store.sizes(scope)
            until = writes + self._lasting(size)
            known = self._sizes[scope] = (size, total, until)
        return known[0], known[1]

    async def frequencies(self, scope: str, words: Sequence[str]) -> dict[str, int]:
        """In how many of the scope's memories each of `words` occurs."""
        known = self._df.get(scope, OrderedDict())
        writes = self._writes.get(scope, 0)
        hits: dict[str, int] = {}
        for word in words:
            found = known.get(word)
            if found is not None and writes <= found[1]:
                hits[word] = found[0]
                known.move_to_end(word)
        stale = [w for w in words if w not in hits]
        if stale:
            size, _ = await self.sizes(scope)
            until = self._writes.get(scope, 0) + self._lasting(size)
            counts = await self._store.document_frequencies(scope, stale)
            kept = self._df.setdefault(scope, OrderedDict())  # (forgotten meanwhile: anew)
            for word, count in counts.items():
                kept[word] = (count, until)
                kept.move_to_end(word)
            while len(kept) > WORDS_KEPT:
                kept.popitem(last=False)
            hits |= counts
        return hits


@runtime_checkable
class ServingStore(Protocol):
    """A store that serves a large scope's full-text search and rows to each process
    (memory.storage.postgres.PgStore)."""

    serves_large_scopes: bool


@dataclass(slots=True, frozen=True)
class Capacity:
    """How much of what is derived is kept in memory: at most `index_capacity` dense indexes
    open, the links of `link_scopes` scopes and the rows of `row_scopes`, all of them (and the
    word indexes of large scopes) within `cache_bytes`; with a store that searches vectors
    itself, no dense index of a scope of `server_from` memories or more. `copy_large`: whether
    a large scope's words and rows are copied into the process (None: unless the store serves
    them, as PostgreSQL does; True on PostgreSQL suits one process with a large scope, whose
    recall the copies make quickest)."""

    index_capacity: int = 10_000
    link_scopes: int = LINK_SCOPES
    row_scopes: int = ROW_SCOPES
    cache_bytes: int = CACHE_BYTES
    server_from: int = HNSW_FROM  # (where FAISS would build a graph)
    copy_large: bool | None = None


class Derived:
    """The derived indexes of every scope, for the bank's one embedder (`embedder`, its name).
    `folder` holds the FAISS index files."""

    def __init__(self, store: BankStore, folder: Path, embedder: str, capacity: Capacity) -> None:
        self._embedder = embedder
        # What this process keeps of its scopes, whichever cache holds it.
        self.budget = Budget(capacity.cache_bytes)
        self.indexes = IndexCache(
            folder, store, capacity=capacity.index_capacity, budget=self.budget
        )
        self.counts = Counts(store)
        # The dense half of recall: the FAISS indexes above, and where the store searches
        # vectors itself (PostgreSQL with pgvector) its search for the large scopes.
        server = server_index(store)
        self.dense: DenseIndex = (
            self.indexes
            if server is None
            else SizedIndex(server, self.indexes, self._size, capacity.server_from)
        )
        # What ranking needs of each memory before its text.
        self.links = LinkCache(store, capacity.link_scopes, self.budget)
        # What full-text search reads in a large scope, and what recall answers with there,
        # unless the store serves both (then these stay empty).
        served = isinstance(store, ServingStore) and store.serves_large_scopes
        self.keeps_large = not served if capacity.copy_large is None else capacity.copy_large
        self.lexicon = LexiconCache(store, budget=self.budget)
        self.rows = RowCache(store, capacity.row_scopes, self.budget)
        # Other processes' changes heard and not yet followed, by scope, and the task
        # following each scope's.
        self._heard: dict[str, list[MemoryNotice]] = {}
        self._following: dict[str, asyncio.Task[None]] = {}
        self._closed = False  # (a store shared with other banks may go on hearing)

    async def _size(self, scope: str) -> int:
        return (await self.counts.sizes(scope))[0]

    def searched(self, scope: str) -> bool:
        """Whether the scope's dense search was made ready by this process (the bank embeds
        what the scope lacks before it first searches it)."""
        return (scope, self._embedder) in self.dense

    async def searcher(self, scope: str, dimension: int) -> ScopeSearch:
        """The scope's dense search (its index loaded, or rebuilt from the store)."""
        return await self.dense.searcher(scope, self._embedder, dimension)

    async def added(
        self, scope: str, ids: Sequence[int], vectors: Sequence[Vectors | None]
    ) -> None:
        """The bank stored the memories `ids` (parallel `vectors`; None: not embedded yet)."""
        self.counts.wrote(scope, len(ids))
        await self.links.added(scope, ids)
        await self.lexicon.added(scope, ids)
        await self.rows.added(scope, ids)
        await self.dense.added(scope, self._embedder, ids, vectors)

    async def changed(self, scope: str, ids: Sequence[int]) -> None:
        """The bank changed the memories `ids` in place (reinforced them, merged into them)."""
        await self.rows.changed(scope, ids)

    async def embedded(
        self, scope: str, ids: Sequence[int], vectors: Sequence[Vectors | None]
    ) -> None:
        """The bank stored vectors for memories that had none from its embedder."""
        await self.dense.added(scope, self._embedder, ids, vectors)

    async def removed(self, scope: str, ids: Sequence[int]) -> None:
        """The bank deleted the memories `ids`: nothing derived keeps them, on disk either."""
        if not ids:
            return
        self.counts.wrote(scope, len(ids))
        self.rows.removed(scope, ids)
        self.links.removed(scope, ids)
        self.lexicon.removed(scope, ids)
        await self.dense.removed(scope, self._embedder, ids)

    async def dropped(self, scope: str) -> None:
        """The bank emptied the scope, or re-embedded it: everything derived from it goes,
        its index file too, and is rebuilt from the store when next wanted."""
        self.counts.forget(scope)
        self.links.drop(scope)
        self.lexicon.drop(scope)
        self.rows.drop(scope)
        await self.dense.delete_file(scope, self._embedder)

    def heard(self, notice: MemoryNotice) -> None:
        """Another process changed the scope's memories (its notification, memory.storage's
        `listen`): followed as the bank's own writes are, in the order heard, in the
        background (`settled` waits for it); a forgotten memory leaves the copy of the rows at
        once. After a notice naming no memories, or one that could not be followed (the store
        failed), what was derived from the scope goes, rebuilt from the store when next
        wanted."""
        if self._closed:
            return
        scope = notice.scope
        if notice.ids is None:
            if notice.kind == "touched":
                self.rows.drop(scope)  # the indexes hold nothing of what changed in place
            else:
                self.changed_elsewhere(scope)
            return
        if notice.kind in ("added", "deleted"):
            self.counts.wrote(scope, len(notice.ids))
        if notice.kind == "deleted":
            self.rows.removed(scope, notice.ids)
        self._heard.setdefault(scope, []).append(notice)
        following = self._following.get(scope)
        if following is None or following.done():
            task = asyncio.ensure_future(self._follow(scope))
            self._following[scope] = task
            task.add_done_callback(lambda done: self._followed(scope, done))

    async def _follow(self, scope: str) -> None:
        """Apply the scope's notices heard, in order, those alike in a row at once (an
        encoding's memories, inserted one statement each, are read together)."""
        while heard := self._heard.get(scope):
            first = heard.pop(0)
            ids = list(first.ids or ())
            while heard and heard[0].kind == first.kind:
                ids += heard.pop(0).ids or ()
            if not heard:
                del self._heard[scope]
            await self._apply(scope, first.kind, ids)

    async def caught_up(self, scope: str, ids: Sequence[int]) -> None:
        """The store holds the scope's memories `ids` and what was derived here lacks them:
        another process stored them and its notice has not come yet (or this process did, a
        moment ago). Followed as their notice will be; following it twice changes nothing."""
        await self._apply(scope, "added", ids)

    async def _apply(self, scope: str, kind: NoticeKind, ids: Sequence[int]) -> None:
        if kind == "added":
            await self.links.added(scope, ids)
            await self.lexicon.added(scope, ids)
            await self.rows.added(scope, ids)
            await self.dense.stored_elsewhere(scope, self._embedder, ids)
        elif kind == "deleted":
            self.rows.removed(scope, ids)
            self.links.removed(scope, ids)
            self.lexicon.removed(scope, ids)
            await self.dense.removed_elsewhere(scope, self._embedder, ids)
        elif kind == "embedded":
            await self.dense.stored_elsewhere(scope, self._embedder, ids)
        else:
            await self.rows.changed(scope, ids)

    def _followed(self, scope: str, task: asyncio.Task[None]) -> None:
        if self._following.get(scope) is task:
            del self._following[scope]
        if not task.cancelled() and task.exception() is not None:
            log.warning("could not follow another process's change: %r", task.exception())
            self.changed_elsewhere(scope)

    async def settled(self, scope: str) -> None:
        """Wait until the notices heard of the scope are followed."""
        following = self._following.get(scope)
        if following is not None:
            await asyncio.wait({following})

    def changed_elsewhere(self, scope: str) -> None:
        """Another process changed the scope's memories in ways not followed one by one: what
        was derived from it is out of date, and rebuilt from the store when next wanted (the
        notices heard of it before are in what is read then)."""
        self._heard.pop(scope, None)
        self.counts.forget(scope)
        self.dense.drop(scope, self._embedder)
        self.links.drop(scope)
        self.lexicon.drop(scope)
        self.rows.drop(scope)

    def missed(self) -> None:
        """Other processes' changes may have gone unheard (the store lost the connection that
        hears them): what was derived from every scope goes, as `changed_elsewhere`."""
        self._heard.clear()
        self.counts.clear()
        self.dense.drop_all()
        self.links.drop_all()
        self.lexicon.drop_all()
        self.rows.drop_all()

    async def flush(self) -> int:
        """Save changed indexes; returns how many were written."""
        return await self.dense.flush()

    async def close(self) -> None:
        """Stop the background builds, copies and notices followed, and save changed
        indexes."""
        self._closed = True
        following = list(self._following.values())
        for task in following:
            task.cancel()
        await asyncio.gather(*following, return_exceptions=True)
        await self.lexicon.close()
        await self.rows.close()
        await self.indexes.built()
        await self.dense.flush()
