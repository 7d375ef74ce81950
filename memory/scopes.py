"""A scope is a wall: the memories of one persona in one place of one platform (one user's private
chat, one member's corner of a channel or of a whole group, or a whole channel). It is written
"persona/place" — `pip/telegram:-1001:user:7`, `miao/discord:dm:42`,
`pip/discord:9:channel:12:user:42` — and this is the one place that writes and reads that form; the
place part is the session's (bot.conversation.sessions.scope_key)."""

from __future__ import annotations

from dataclasses import dataclass

from memory.errors import KizunaError

__all__ = ["NotAScope", "Scope"]


class NotAScope(KizunaError, ValueError):
    """A string or a pair of parts that is not a scope."""


@dataclass(slots=True, frozen=True)
class Scope:
    persona: str
    place: str

    def __post_init__(self) -> None:
        if not self.persona or "/" in self.persona or not self.place:
            raise NotAScope(f"not a scope: persona {self.persona!r}, place {self.place!r}")

    def __str__(self) -> str:
        return f"{self.persona}/{self.place}"

    @classmethod
    def parse(cls, text: str) -> Scope:
        """The scope written as `text` (`NotAScope` if it is not one)."""
        persona, _, place = text.partition("/")
        return cls(persona, place)
