"""The links of each scope's memories (the memory stored just before, the speaker), kept in
memory beside the dense indexes, so a recall ranks its candidates and their neighbours without
reading their rows: at 100k memories that read was a third of a recall. Only what has come to
mind is then read from the store, which stays the source of truth: a scope's links are read
from it whole when first wanted, and kept in step with the bank's own writes and deletions (a
forgotten memory's link and, once no memory has it, its speaker's name go with it), and with
another process's as its notifications name them (memory/recall/derived.py); a change too large
to name drops a scope's links, as does a recall whose candidates they lack
(memory/recall/retrieval.py)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from memory.recall.budget import Budget, FollowedCopies
from memory.records import LinkColumns, MemoryLink
from memory.storage import MemoryStore

__all__ = ["LINK_SCOPES", "Around", "LinkCache", "ScopeLinks"]

_CACHE = "links"  # its name in the budget
# Scopes whose links are kept (about 20 bytes a memory), least recent out: as many as dense
# indexes may be open, so that a crowd of small scopes reads each one's links once, not at
# every recall; the byte budget bounds them all.
LINK_SCOPES = 10_000

Ids = npt.NDArray[np.int64]
_NONE = 0  # no previous memory (ids start at 1)


@dataclass(slots=True, frozen=True)
class Around:
    """Candidates and their neighbours, by id ascending: each one's previous id (0: none) and
    speaker (an index into `names`, -1: none). What ranking needs, as arrays."""

    ids: Ids
    previous: Ids
    speakers: npt.NDArray[np.int32]
    names: Sequence[str]


@dataclass(slots=True)
class ScopeLinks:
    """One scope's links, as arrays: ids ascending, each one's previous id (0: none) and
    speaker (an index into `names`, -1: none); and the memories that have a previous one,
    by that previous id (`after_of` ascending, `after` the memory stored after it)."""

    ids: Ids
    previous: Ids
    speakers: npt.NDArray[np.int32]
    names: list[str]
    after_of: Ids
    after: Ids

    @classmethod
    def of(cls, links: Sequence[MemoryLink]) -> ScopeLinks:
        ids = np.fromiter((link.id for link in links), np.int64, len(links))
        previous = np.fromiter((link.previous_id or _NONE for link in links), np.int64, len(ids))
        return cls.of_columns(LinkColumns(ids, previous, [link.speaker for link in links]))

    @classmethod
    def of_columns(cls, columns: LinkColumns) -> ScopeLinks:
        names: dict[str, int] = {}
        speakers = np.fromiter(
            (-1 if s is None else names.setdefault(s, len(names)) for s in columns.speakers),
            np.int32,
            len(columns.speakers),
        )
        order = np.argsort(columns.ids, kind="stable")
        ids = columns.ids[order]
        found = cls(ids, columns.previous[order], speakers[order], list(names), ids[:0], ids[:0])
        found._index_successors()
        return found

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def nbytes(self) -> int:
        """About what these links take in memory."""
        arrays = (self.ids, self.previous, self.speakers, self.after_of, self.after)
        return sum(a.nbytes for a in arrays) + sum(len(n) + 60 for n in self.names)

    def _index_successors(self) -> None:
        has = self.previous != _NONE
        order = np.argsort(self.previous[has], kind="stable")
        self.after_of = self.previous[has][order]
        self.after = self.ids[has][order]

    def holds(self, ids: Iterable[int]) -> bool:
        """Whether every memory of `ids` has its link here."""
        return not self.lacking(ids)

    def lacking(self, ids: Iterable[int]) -> list[int]:
        """Those of `ids` whose link is not here."""
        asked = np.unique(np.fromiter(ids, np.int64))
        return [int(i) for i in np.setdiff1d(asked, self.ids[self._rows(asked)])]

    def around(self, candidates: Iterable[int]) -> Around:
        """The links of the candidates that exist, of every memory stored right after one of
        them, and of the memory stored right before each: what the store's with_successors
        and get_memories of the previous ids gave."""
        asked = np.unique(np.fromiter(candidates, np.int64))
        found = self.ids[self._rows(asked)]
        lo = np.searchsorted(self.after_of, found, "left")
        counts = np.searchsorted(self.after_of, found, "right") - lo
        # after[lo:lo + count] for each, gathered at once.
        ends = np.cumsum(counts)
        gathered = np.repeat(lo - ends + counts, counts) + np.arange(ends[-1] if len(ends) else 0)
        first = np.union1d(found, self.after[gathered])
        first_rows = self._rows(first)
        before = np.setdiff1d(self.previous[first_rows], first)
        before_rows = self._rows(before[before != _NONE])
        rows = np.sort(np.concatenate([first_rows, before_rows]))  # rows ascend with ids
        return Around(self.ids[rows], self.previous[rows], self.speakers[rows], self.names)

    def _rows(self, ids: Ids) -> npt.NDArray[np.intp]:
        """The rows of those of `ids` (ascending) that are here."""
        rows = np.searchsorted(self.ids, ids)
        inside = rows < len(self.ids)
        rows, ids = rows[inside], ids[inside]
        kept: npt.NDArray[np.intp] = rows[self.ids[rows] == ids]
        return kept

    def add(self, links: Sequence[MemoryLink]) -> None:
        fresh = [link for link in links if not self._rows(np.array([link.id], np.int64)).size]
        if not fresh:
            return
        names = {name: code for code, name in enumerate(self.names)}
        new = ScopeLinks.of(fresh)
        codes = np.array(
            [names.setdefault(name, len(names)) for name in new.names] or [0], np.int32
        )
        new_speakers = np.where(new.speakers < 0, -1, codes[np.maximum(new.speakers, 0)])
        self.names = list(names)
        at = np.searchsorted(self.ids, new.ids)
        self.ids = np.insert(self.ids, at, new.ids)
        self.previous = np.insert(self.previous, at, new.previous)
        self.speakers = np.insert(self.speakers, at, new_speakers.astype(np.int32))
        at = np.searchsorted(self.after_of, new.after_of, "right")
        self.after_of = np.insert(self.after_of, at, new.after_of)
        self.after = np.insert(self.after, at, new.after)

    def remove(self, ids: Sequence[int]) -> None:
        """Forget the memories `ids`: their links, the links to them (as the store nulls its
        previous ids), and the names no memory left here has."""
        gone = np.unique(np.array(list(ids), np.int64))
        if not gone.size:
            return
        keep = ~np.isin(self.ids, gone)
        self.ids, self.previous = self.ids[keep], self.previous[keep]
        self.previous[np.isin(self.previous, gone)] = _NONE
        used = np.unique(self.speakers[keep][self.speakers[keep] >= 0])
        remap = np.full(len(self.names) + 1, -1, np.int32)
        remap[used] = np.arange(len(used), dtype=np.int32)
        self.speakers = remap[self.speakers[keep]]  # -1 stays -1 (the last slot)
        self.names = [self.names[i] for i in used.tolist()]
        self._index_successors()


class LinkCache(FollowedCopies[ScopeLinks, MemoryLink]):
    """The ScopeLinks of up to `capacity` scopes (0: none kept, every recall reads its scope's
    links from the store), within the process's byte `budget` (memory/recall/budget.py)."""

    def __init__(
        self, store: MemoryStore, capacity: int = LINK_SCOPES, budget: Budget | None = None
    ) -> None:
        super().__init__(_CACHE, store, capacity, budget)
        # Moves with every change to a scope, so that links read while it changed are not kept;
        # `_epoch` with a change to every scope.
        self._versions: dict[str, int] = {}
        self._epoch = 0

    async def get(self, scope: str) -> ScopeLinks:
        found = self._used(scope)
        if found is not None:
            return found
        version = self._version(scope)
        found = ScopeLinks.of_columns(await self._store.scope_links(scope))
        if self._version(scope) == version:
            self._keep(scope, found, found.nbytes)
        return found

    def drop(self, scope: str) -> None:
        self._moved(scope)
        self._forget(scope)

    def drop_all(self) -> None:
        self._epoch += 1
        super().drop_all()

    def _version(self, scope: str) -> tuple[int, int]:
        return self._epoch, self._versions.get(scope, 0)

    async def _read(self, scope: str, ids: Sequence[int]) -> Sequence[MemoryLink]:
        return await self._store.links(scope, ids)

    def _noted(self, scope: str, kind: Literal["added", "removed"], ids: Sequence[int]) -> None:
        self._moved(scope)

    def _moved(self, scope: str) -> None:
        self._versions[scope] = self._versions.get(scope, 0) + 1
