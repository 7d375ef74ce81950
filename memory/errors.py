"""The root of every error Kizuna raises on purpose. It lives in memory/, the lowest layer,
so that every part may derive from it; catching `KizunaError` catches what Kizuna means to
say, never a bug. Its text is one line a user or a host may read: never a secret, and never
what someone typed (it may be logged)."""

from __future__ import annotations

__all__ = ["KizunaError"]


class KizunaError(Exception):
    """Something Kizuna refuses or cannot do, said in one line."""
