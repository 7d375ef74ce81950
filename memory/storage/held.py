"""The scopes the tasks of this process hold for their encoding or prune, in either store
(see Coordination.scope_lock): a task asking for one that another task holds is told no at
once, not made to wait."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = ["HeldScopes"]


class HeldScopes:
    """The scopes held by a task of this process."""

    def __init__(self) -> None:
        self._held: set[str] = set()

    def __contains__(self, scope: str) -> bool:
        return scope in self._held

    @contextlib.contextmanager
    def hold(self, scope: str) -> Iterator[bool]:
        """Hold `scope` for the block: yields whether it is held, which it is unless another
        task holds it already."""
        if scope in self._held:
            yield False
            return
        self._held.add(scope)
        try:
            yield True
        finally:
            self._held.discard(scope)
