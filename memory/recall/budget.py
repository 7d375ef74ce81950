"""One byte budget for the copies a process keeps of its scopes (memory/recall/lexicon.py's word
indexes, memory/recall/rowcache.py's rows, memory/recall/links.py's links).

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
from collections.abc import Callable
from typing import Generic, TypeVar

from memory.storage import MemoryStore

__all__ = ["CACHE_BYTES", "Budget", "ScopeCopies"]

C = TypeVar("C")

CACHE_BYTES = 512 << 20  # the default bound for the whole process


class Budget:
    def __init__(self, max_bytes: int = CACHE_BYTES) -> None:
        if max_bytes < 0:
            raise ValueError("max_bytes must not be negative")
        self.max_bytes = max_bytes
        self.total = 0
        self._held: OrderedDict[tuple[str, str], int] = OrderedDict()  # least recent first
        self._drops: dict[str, Callable[[str], None]] = {}

    def register(self, cache: str, drop: Callable[[str], None]) -> None:
        """`drop(scope)`: how the cache named `cache` lets a scope's copy go."""
        self._drops[cache] = drop

    def held(self, cache: str, scope: str) -> int:
        """The bytes the cache holds for the scope, as it said (0: none)."""
        return self._held.get((cache, scope), 0)

    def keep(self, cache: str, scope: str, nbytes: int) -> None:
        """The cache holds `nbytes` for the scope now (the most recently used); copies used
        least recently go until all fit (never this one: a single copy past the bound is
        kept until another comes)."""
        key = (cache, scope)
        self.total += nbytes - self._held.get(key, 0)
        self._held[key] = nbytes
        self._held.move_to_end(key)
        while self.total > self.max_bytes and len(self._held) > 1:
            (other, gone), size = next(iter(self._held.items()))
            if (other, gone) == key:
                break
            del self._held[other, gone]
            self.total -= size
            self._drops[other](gone)

    def touch(self, cache: str, scope: str) -> None:
        key = (cache, scope)
        if key in self._held:
            self._held.move_to_end(key)

    def release(self, cache: str, scope: str) -> None:
        self.total -= self._held.pop((cache, scope), 0)


class ScopeCopies(ABC, Generic[C]):
    """What the caches of scope copies share: each holds what it derives `C` of up to
    `capacity` of the `store`'s scopes (0: none kept), least recently used first, charged to
    the byte `budget` under its name `cache`, which lets one go by the cache's `drop`."""

    def __init__(
        self, cache: str, store: MemoryStore, capacity: int, budget: Budget | None
    ) -> None:
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
