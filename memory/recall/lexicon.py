"""Full-text search of a large scope in memory: an inverted index of each memory's words and
the words of the memory before it (what the store's full-text search indexes), ranked by BM25
as SQLite's FTS5 ranks (k1 1.2, b 0.75, column weights), with its counts taken over the scope.

At 100k memories in one scope the store's full-text search was the largest part of a recall
(3 ms on SQLite, more on PostgreSQL with its round trip), and it needed a word-frequency read
for new cue words; here the same ranking over the cue's postings takes a fraction of a
millisecond and both stores rank alike by construction (benchmarks/README.md). The store stays
the source of truth: a scope's index is built from its `search_documents` when first wanted,
kept in step with the bank's own writes and deletions (a deleted memory's successor loses its
context, as in the stores) and another process's as its notifications name them, and dropped
when another process changes the scope too much to name (memory/recall/derived.py).
"""

from __future__ import annotations

import asyncio
import logging
import math
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Literal

import numpy as np
import numpy.typing as npt

from memory.recall.budget import Budget, FollowedCopies
from memory.storage import MemoryStore
from memory.text import porter_term

__all__ = ["LEXICON_SCOPES", "LexiconCache", "ScopeLexicon"]

_CACHE = "lexicon"  # its name in the budget
_DICT_ENTRY = 100  # bytes, about, of a dict's entry with its key and value
LEXICON_SCOPES = 8  # large scopes whose index is kept (about 600 bytes a memory), least recent out
BUILD_SLICE = 8_192  # memories indexed at a time when a scope is read whole
BM25_K1 = 1.2  # FTS5's
BM25_B = 0.75

log = logging.getLogger(__name__)

Document = tuple[int, int | None, str, str]  # id, previous id, own words, context words


@dataclass(slots=True)
class _Postings:
    """Rows that hold one word, and how often it occurs in each one's text and context."""

    rows: array[int] = field(default_factory=lambda: array("q"))
    body: array[int] = field(default_factory=lambda: array("H"))
    context: array[int] = field(default_factory=lambda: array("H"))


def _words(text: str) -> Counter[str]:
    return Counter(porter_term(token) for token in text.split())


_Hits = tuple[npt.NDArray[np.int64], npt.NDArray[np.uint16], npt.NDArray[np.uint16]]
_NO_HITS: _Hits = (np.zeros(0, np.int64), np.zeros(0, np.uint16), np.zeros(0, np.uint16))


class ScopeLexicon:
    """One scope's inverted index: the postings of the memories read whole (`of`) in flat
    arrays by word, those of memories added since in small arrays of their own. Rows are marked
    dead when their memories go (their postings stay until the scope is read again)."""

    __slots__ = (
        "_added",
        "_alive",
        "_body",
        "_context",
        "_context_alive",
        "_context_length",
        "_ids",
        "_length",
        "_offsets",
        "_posted",
        "_previous",
        "_rows",
        "_size",
        "_total_length",
        "_words",
        "live",
    )

    def __init__(self) -> None:
        self._words: dict[str, int] = {}  # word -> its slice of the flat postings
        self._offsets = np.zeros(1, np.int64)
        self._posted = np.zeros(0, np.int64)  # rows, by word
        self._body = np.zeros(0, np.uint16)
        self._context = np.zeros(0, np.uint16)
        self._added: dict[str, _Postings] = {}
        self._rows: dict[int, int] = {}  # memory id -> row
        self._size = 0  # rows used
        self._ids = np.zeros(0, np.int64)
        self._previous = np.zeros(0, np.int64)  # 0: none
        self._length = np.zeros(0, np.float64)  # tokens in the row, as FTS5 counts them
        self._context_length = np.zeros(0, np.float64)
        self._alive = np.zeros(0, np.bool_)
        self._context_alive = np.zeros(0, np.bool_)
        self._total_length = 0.0  # of the live rows
        self.live = 0

    @classmethod
    def of(cls, documents: Sequence[Document]) -> ScopeLexicon:
        """The index of `documents` (distinct ids), built by numpy over the tokens of a slice
        of them at a time: a Python loop per posting took 9 s for 100k memories."""
        found = cls()
        count = len(documents)
        found._reserve(count)
        ids = [d[0] for d in documents]
        found._rows = dict(zip(ids, range(count), strict=True))
        found._ids[:count] = ids
        found._previous[:count] = [d[1] or 0 for d in documents]
        lengths = np.zeros(2 * count, np.int64)  # own words then context, per memory
        raw: dict[str, int] = {}  # token -> its stem's number
        stems: dict[str, int] = {}
        found_words, found_rows, found_body, found_context = [], [], [], []
        # In slices of the scope, so only a slice's tokens are held as strings and arrays.
        for start in range(0, count, BUILD_SLICE):
            part = documents[start : start + BUILD_SLICE]
            size = len(part)
            split = [text.split() for d in part for text in (d[2], d[3])]
            part_lengths = np.fromiter(map(len, split), np.int64, 2 * size)
            lengths[2 * start : 2 * (start + size)] = part_lengths
            for token in set(chain.from_iterable(split)).difference(raw):
                raw[token] = stems.setdefault(porter_term(token), len(stems))
            words = np.fromiter(
                map(raw.__getitem__, chain.from_iterable(split)), np.int64, int(part_lengths.sum())
            )
            cells = np.repeat(np.arange(2 * size, dtype=np.int64), part_lengths)  # row*2 + column
            keys, tally = np.unique(words * (2 * size) + cells, return_counts=True)
            word, cell = np.divmod(keys, 2 * size)
            pairs, first, inverse = np.unique(
                word * size + cell // 2, return_index=True, return_inverse=True
            )
            body = np.zeros(len(pairs), np.int64)
            context = np.zeros(len(pairs), np.int64)
            own = cell % 2 == 0
            body[inverse[own]] = tally[own]
            context[inverse[~own]] = tally[~own]
            found_words.append(word[first])
            found_rows.append(start + cell[first] // 2)
            found_body.append(np.minimum(body, 0xFFFF).astype(np.uint16))
            found_context.append(np.minimum(context, 0xFFFF).astype(np.uint16))
        if count:
            by_word = np.concatenate(found_words)
            order = np.argsort(by_word, kind="stable")  # rows stay ascending within a word
            found._posted = np.concatenate(found_rows)[order]
            found._body = np.concatenate(found_body)[order]
            found._context = np.concatenate(found_context)[order]
            found._offsets = np.searchsorted(by_word[order], np.arange(len(stems) + 1))
        found._words = stems
        own_length, context_length = lengths[0::2], lengths[1::2]
        # FTS5 counts every column's tokens: the scope's tag is one.
        found._length[:count] = 1 + own_length + context_length
        found._context_length[:count] = context_length
        found._alive[:count] = True
        found._context_alive[:count] = True
        found._size = found.live = count
        found._total_length = float(found._length[:count].sum())
        return found

    @property
    def nbytes(self) -> int:
        """About what this index takes in memory (its arrays, and an estimate of its dicts)."""
        arrays = (
            self._offsets, self._posted, self._body, self._context, self._ids, self._previous,
            self._length, self._context_length, self._alive, self._context_alive,
        )  # fmt: skip
        added = sum(len(p.rows) * 12 + _DICT_ENTRY for p in self._added.values())
        return (
            sum(a.nbytes for a in arrays)
            + (len(self._words) + len(self._rows)) * _DICT_ENTRY
            + added
        )

    def __len__(self) -> int:
        return self.live

    def add(self, documents: Sequence[Document]) -> None:
        fresh = [d for d in documents if d[0] not in self._rows]
        self._reserve(self._size + len(fresh))
        for memory_id, previous, body, context in fresh:
            row = self._size
            self._size += 1
            self._rows[memory_id] = row
            own, before = _words(body), _words(context)
            for word in own.keys() | before.keys():
                postings = self._added.get(word)
                if postings is None:
                    postings = self._added[word] = _Postings()
                postings.rows.append(row)
                postings.body.append(min(own.get(word, 0), 0xFFFF))
                postings.context.append(min(before.get(word, 0), 0xFFFF))
            context_length = float(sum(before.values()))
            length = 1.0 + sum(own.values()) + context_length
            self._ids[row] = memory_id
            self._previous[row] = previous or 0
            self._length[row] = length
            self._context_length[row] = context_length
            self._alive[row] = True
            self._context_alive[row] = True
            self._total_length += length
            self.live += 1

    def remove(self, ids: Sequence[int]) -> None:
        """The memories `ids` were deleted: the stores also blank the context of each memory
        stored right after one of them."""
        rows = [self._rows.pop(int(i)) for i in ids if int(i) in self._rows]
        if not rows:
            return
        dead = np.asarray(rows, np.int64)
        self._total_length -= float(self._length[dead].sum())
        self._alive[dead] = False
        self.live -= len(rows)
        used = slice(0, self._size)
        orphans = np.nonzero(np.isin(self._previous[used], self._ids[dead]))[0]
        orphans = orphans[self._alive[orphans] & self._context_alive[orphans]]
        self._previous[orphans] = 0
        self._context_alive[orphans] = False
        self._length[orphans] -= self._context_length[orphans]
        self._total_length -= float(self._context_length[orphans].sum())

    def _hits(self, word: str) -> _Hits:
        """The postings of a word (stemmed): rows, occurrences in own words, in context."""
        at = self._words.get(word)
        added = self._added.get(word)
        if at is None and added is None:
            return _NO_HITS
        parts: list[_Hits] = []
        if at is not None:
            lo, hi = int(self._offsets[at]), int(self._offsets[at + 1])
            parts.append((self._posted[lo:hi], self._body[lo:hi], self._context[lo:hi]))
        if added is not None:
            parts.append(
                (
                    np.frombuffer(added.rows, np.int64),
                    np.frombuffer(added.body, np.uint16),
                    np.frombuffer(added.context, np.uint16),
                )
            )
        if len(parts) == 1:
            return parts[0]
        return (
            np.concatenate([p[0] for p in parts]),
            np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]),
        )

    def frequencies(self, words: Sequence[str]) -> dict[str, int]:
        """In how many live memories each word occurs in their own text (the stores'
        `document_frequencies`)."""
        counts: dict[str, int] = {}
        for word in words:
            rows, body, _ = self._hits(porter_term(word))
            counts[word] = int(np.count_nonzero(self._alive[rows] & (body > 0)))
        return counts

    def search(
        self, words: Sequence[str], k: int, *, context_weight: float
    ) -> list[tuple[int, float]]:
        """The k live memories that rank best for any of `words` (in their text, or in their
        context at `context_weight`), with their BM25 score (higher is better), best first."""
        if not self.live or k <= 0:
            return []
        average = self._total_length / self.live
        found_rows: list[npt.NDArray[np.int64]] = []
        found_scores: list[npt.NDArray[np.float64]] = []
        for word in words:  # a stem asked twice counts twice, as in FTS5
            rows, own, before = self._hits(porter_term(word))
            live = self._alive[rows]
            rows = rows[live]
            body = own[live].astype(np.float64)
            context = before[live].astype(np.float64) * self._context_alive[rows]
            matched = (body > 0) | (context > 0)
            hits = int(np.count_nonzero(matched))
            if not hits:
                continue
            rows, body, context = rows[matched], body[matched], context[matched]
            idf = math.log((self.live - hits + 0.5) / (hits + 0.5))
            idf = idf if idf > 0 else 1e-6  # FTS5's floor for a word in most rows
            frequency = body + context_weight * context
            norm = BM25_K1 * (1 - BM25_B + BM25_B * self._length[rows] / average)
            found_rows.append(rows)
            found_scores.append(idf * frequency * (BM25_K1 + 1) / (frequency + norm))
        if not found_rows:
            return []
        rows, at = np.unique(np.concatenate(found_rows), return_inverse=True)
        scores = np.bincount(at, weights=np.concatenate(found_scores))
        keep = scores > 0
        rows, scores = rows[keep], scores[keep]
        ids = self._ids[rows]
        order = np.lexsort((ids, -scores))[:k]
        return list(zip(ids[order].tolist(), scores[order].tolist(), strict=True))

    def _reserve(self, rows: int) -> None:
        if rows <= len(self._ids):
            return
        capacity = max(rows, 2 * len(self._ids), 1024)
        for name in ("_ids", "_previous", "_length", "_context_length", "_alive", "_context_alive"):
            old = getattr(self, name)
            grown = np.zeros(capacity, old.dtype)
            grown[: len(old)] = old
            setattr(self, name, grown)


class LexiconCache(FollowedCopies[ScopeLexicon, Document]):
    """The ScopeLexicon of up to `capacity` scopes, within the process's byte `budget`
    (memory/recall/budget.py). Reading and indexing a scope of 100k
    memories takes seconds, so `ready` builds it in the background (recall searches through the
    store meanwhile); the bank's changes to the scope during the build are applied to it after."""

    def __init__(
        self, store: MemoryStore, capacity: int = LEXICON_SCOPES, budget: Budget | None = None
    ) -> None:
        super().__init__(_CACHE, store, capacity, budget)
        self._building: dict[str, asyncio.Future[ScopeLexicon]] = {}
        # The bank's changes to a scope being built, in order: ("added" | "removed", ids);
        # None once it was dropped (the read may have missed a change: read again).
        self._changes: dict[str, list[tuple[str, list[int]]] | None] = {}

    def ready(self, scope: str) -> ScopeLexicon | None:
        """The scope's index if it is built, else None, and it is being built."""
        found = self._used(scope)
        if found is not None:
            return found
        if scope not in self._building:
            self._building[scope] = asyncio.ensure_future(self._build(scope))
            self._building[scope].add_done_callback(_log_failure)
        return None

    async def get(self, scope: str) -> ScopeLexicon:
        """The scope's index, built now if need be."""
        found = self.ready(scope)
        return found if found is not None else await asyncio.shield(self._building[scope])

    async def _build(self, scope: str) -> ScopeLexicon:
        try:
            while True:
                changes: list[tuple[str, list[int]]] = []
                self._changes[scope] = changes
                documents = await self._store.search_documents(scope)
                # Seconds at 100k memories: numpy lets the event loop run meanwhile.
                found = await asyncio.to_thread(ScopeLexicon.of, documents)
                done = 0
                while done < len(changes) and self._changes.get(scope) is changes:
                    kind, ids = changes[done]
                    if kind == "added":
                        found.add(await self._read(scope, ids))
                    else:
                        found.remove(ids)
                    done += 1
                if self._changes.get(scope) is not changes:
                    continue  # dropped meanwhile
                self._keep(scope, found, found.nbytes)
                return found
        finally:
            self._changes.pop(scope, None)
            self._building.pop(scope, None)

    def _held(self) -> set[str]:
        return super()._held() | set(self._building)

    def drop(self, scope: str) -> None:
        if scope in self._changes:
            self._changes[scope] = None
        self._forget(scope)

    async def close(self) -> None:
        """Stop the builds under way."""
        building = list(self._building.values())
        for task in building:
            task.cancel()
        await asyncio.gather(*building, return_exceptions=True)

    async def _read(self, scope: str, ids: Sequence[int]) -> Sequence[Document]:
        return await self._store.search_documents(scope, ids)

    def _noted(self, scope: str, kind: Literal["added", "removed"], ids: Sequence[int]) -> None:
        changes = self._changes.get(scope)
        if changes is not None and ids:
            changes.append((kind, [int(i) for i in ids]))


def _log_failure(task: asyncio.Future[ScopeLexicon]) -> None:
    if not task.cancelled() and task.exception() is not None:
        # Recall goes on through the store; the next one tries again.
        log.warning("could not build a scope's word index: %r", task.exception())
