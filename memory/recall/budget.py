"""One byte budget for the copies a process keeps of its scopes (memory/recall/index.py's FAISS
indexes, memory/recall/lexicon.py's word indexes, memory/recall/rowcache.py's rows,
memory/recall/links.py's links).

Each cache says what it keeps of a scope and about how many bytes that takes (`keep`, again
whenever it grows or shrinks), that a scope was used (`touch`), and that it let one go
(`release`). Past `max_bytes` in all, the least recently used scopes' copies go, whichever
cache holds them, by that cache's own `drop`: a community's many small scopes and its few
large ones share one bound, however they come and go. Nothing kept here is the truth: a
dropped copy is read again from the store when next wanted.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Generic, Literal, Protocol, TypeVar

from memory.storage import MemoryStore

__all__ = ["CACHE_BYTES", "Budget", "FollowedCopies", "ScopeCopies"]

C = TypeVar("C")
Item = TypeVar("Item")
Item_contra = TypeVar("Item_contra", contravariant=True)

CACHE_BYTES = 512 << 20  # the default bound for the whole process


class Budget:
    def __init__(self, max_bytes: int = CACHE_BYTES) -> None:
        if max_bytes < 0:
            raise ValueError("max_bytes must not be negative")
        self.max_bytes = max_bytes
        self.total = 0
        self._held: OrderedDict[tuple[str, str], int] = OrderedDict()  # least recent first
        self._drops: dict[str, Callable[[str], None]] = {}
        self._pinned: set[tuple[str, str]] = set()

    def register(self, cache: str, drop: Callable[[str], None]) -> None:
        """`drop(scope)`: how the cache named `cache` lets a scope's copy go."""
        self._drops[cache] = drop

    def held(self, cache: str, scope: str) -> int:
        """The bytes the cache holds for the scope, as it said (0: none)."""
        return self._held.get((cache, scope), 0)

    def keep(
        self, cache: str, scope: str, nbytes: int, *, pinned: bool = False, used: bool = True
    ) -> None:
        """The cache holds `nbytes` for the scope now (the most recently used, unless not
        `used`: then it keeps its place); copies used least recently go until all fit (never
        this one if used: a single copy past the bound is kept until another comes; nor one
        `pinned`, counted but not let go until kept again unpinned or released: letting it go
        would give nothing back)."""
        key = (cache, scope)
        self.total += nbytes - self._held.get(key, 0)
        self._held[key] = nbytes
        if used:
            self._held.move_to_end(key)
        if pinned:
            self._pinned.add(key)
        else:
            self._pinned.discard(key)
        while self.total > self.max_bytes:
            gone = next(
                (k for k in self._held if (k != key or not used) and k not in self._pinned), None
            )
            if gone is None:
                break
            self.total -= self._held.pop(gone)
            self._drops[gone[0]](gone[1])

    def touch(self, cache: str, scope: str) -> None:
        key = (cache, scope)
        if key in self._held:
            self._held.move_to_end(key)

    def release(self, cache: str, scope: str) -> None:
        self.total -= self._held.pop((cache, scope), 0)
        self._pinned.discard((cache, scope))


class ScopeCopies(ABC, Generic[C]):
    """What the caches of scope copies share: each holds what it derives `C` of up to
    `capacity` of the `store`'s scopes (0: none kept), least recently used first, charged to
    the byte `budget` under its name `cache`, which lets one go by the cache's `drop`."""

    def __init__(
        self, cache: str, store: MemoryStore, capacity: int, budget: Budget | None
    ) -> None:
        self._cache = cache
        self._store = store
        self._capacity = capacity
        self._budget = budget or Budget()
        self._budget.register(cache, self.drop)
        self._scopes: OrderedDict[str, C] = OrderedDict()

    def __contains__(self, scope: str) -> bool:
        return scope in self._scopes

    @abstractmethod
    def drop(self, scope: str) -> None:
        """The scope changed in a way not followed here (or the budget let it go): read it
        whole next time."""

    def drop_all(self) -> None:
        """Every scope changed in ways not followed here: every copy goes, and none being made
        now is kept."""
        for scope in self._held():
            self.drop(scope)

    def _held(self) -> set[str]:
        """The scopes it keeps a copy of, or is making one for."""
        return set(self._scopes)

    def _used(self, scope: str) -> C | None:
        """The scope's copy, now the most recently used, if one is kept."""
        found = self._scopes.get(scope)
        if found is not None:
            self._scopes.move_to_end(scope)
            self._budget.touch(self._cache, scope)
        return found

    def _keep(self, scope: str, copy: C, nbytes: int) -> None:
        """Keep `copy`, of about `nbytes`, as the scope's (unless none are kept): the least
        recently used go past `capacity`."""
        if self._capacity > 0:
            self._scopes[scope] = copy
            while len(self._scopes) > self._capacity:
                self._forget(next(iter(self._scopes)))
            self._budget.keep(self._cache, scope, nbytes)

    def _forget(self, scope: str) -> None:
        """Let the scope's copy go."""
        self._scopes.pop(scope, None)
        self._budget.release(self._cache, scope)


class Patchable(Protocol[Item_contra]):
    """A scope's copy that follows the bank's writes (`add`, of what the store gives for the
    memories written) and deletions (`remove`)."""

    @property
    def nbytes(self) -> int: ...
    def add(self, items: Sequence[Item_contra]) -> None: ...
    def remove(self, ids: Sequence[int]) -> None: ...


P = TypeVar("P", bound=Patchable[Any])


class FollowedCopies(ScopeCopies[P], Generic[P, Item]):
    """Caches whose copies follow the bank's own writes and deletions of a kept scope: the
    store's `Item` of the memories written (`_read`) added, the memories deleted removed.
    `_noted` hears of each change first, kept or not."""

    async def added(self, scope: str, ids: Sequence[int]) -> None:
        """The bank wrote the memories `ids` to the scope."""
        self._noted(scope, "added", ids)
        kept = self._scopes.get(scope)
        if kept is None or not ids:
            return
        items = await self._read(scope, ids)
        # Dropped meanwhile: read whole next time (and a copy read whole since holds them).
        found = self._scopes.get(scope)
        if found is not None and found is kept:
            found.add(items)
            self._budget.keep(self._cache, scope, found.nbytes)

    def removed(self, scope: str, ids: Sequence[int]) -> None:
        """The memories `ids` of the scope were deleted."""
        self._noted(scope, "removed", ids)
        found = self._scopes.get(scope)
        if found is not None:
            found.remove(ids)
            self._budget.keep(self._cache, scope, found.nbytes)

    @abstractmethod
    async def _read(self, scope: str, ids: Sequence[int]) -> Sequence[Item]:
        """What the store holds for the scope's memories `ids`."""

    @abstractmethod
    def _noted(self, scope: str, kind: Literal["added", "removed"], ids: Sequence[int]) -> None:
        """The bank changed the scope's memories `ids`."""
