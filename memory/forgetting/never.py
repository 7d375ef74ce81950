"""The `never` policy: forgetting turned off."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

from memory.forgetting.base import Forgotten
from memory.forgetting.ebbinghaus import Ebbinghaus, OnEbbinghaus
from memory.records import Memory

__all__ = ["Never"]


class Never(OnEbbinghaus):
    """Forgetting turned off: retention 1, nothing pruned. Strengths still follow Ebbinghaus,
    so turning forgetting back on finds sensible values."""

    __slots__ = ("grace",)

    def __init__(self) -> None:
        super().__init__(Ebbinghaus())
        self.grace = timedelta(0)

    name = "never"

    def retention(self, memory: Memory, now: datetime) -> float:
        return 1.0

    def forgotten(
        self, memories: Sequence[Memory], now: datetime, retention: Mapping[int, float], seed: int
    ) -> list[Forgotten]:
        return []
