"""The error a store raises when it cannot be opened or used, whichever store it is."""

from __future__ import annotations

from memory.errors import KizunaError

__all__ = ["StoreError"]


class StoreError(KizunaError):
    pass
