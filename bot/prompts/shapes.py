"""The shapes of what prompts are written from (a persona, its state slots, a conversation's
turns, a recalled memory), as read-only Protocols: the prompt text needs their fields, not the
modules that define them (bot.persona.file, bot.conversation.sessions, memory.recall.ranking)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Protocol

__all__ = [
    "CardShape",
    "EmotionsShape",
    "IdentityShape",
    "MemoryShape",
    "PersonaShape",
    "SearchResultShape",
    "SlotShape",
    "TurnShape",
    "UserShape",
]


class IdentityShape(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def nickname(self) -> str: ...
    @property
    def personality(self) -> str: ...
    @property
    def language(self) -> str: ...
    @property
    def language_style(self) -> str: ...
    @property
    def notices(self) -> Sequence[str]: ...
    @property
    def brief(self) -> str: ...
    @property
    def example_memory(self) -> str: ...


class UserShape(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def identity(self) -> str: ...
    @property
    def info(self) -> str: ...


class CardShape(Protocol):
    @property
    def system_prompt(self) -> str: ...
    @property
    def scenario(self) -> str: ...
    @property
    def example_messages(self) -> str: ...


class EmotionsShape(Protocol):
    @property
    def names(self) -> Sequence[str]: ...


class PersonaShape(Protocol):
    @property
    def identity(self) -> IdentityShape: ...
    @property
    def user(self) -> UserShape: ...
    @property
    def card(self) -> CardShape: ...
    @property
    def emotions(self) -> EmotionsShape: ...


class SlotShape(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def instructions(self) -> str: ...
    @property
    def update(self) -> str: ...

    def value(self, state: Mapping[str, str]) -> str: ...


class TurnShape(Protocol):
    @property
    def role(self) -> str: ...
    @property
    def speaker(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def user_id(self) -> str: ...


class MemoryShape(Protocol):
    @property
    def text(self) -> str: ...
    @property
    def speaker(self) -> str | None: ...
    @property
    def when(self) -> datetime: ...
    @property
    def retention(self) -> float: ...


class SearchResultShape(Protocol):
    @property
    def title(self) -> str: ...
    @property
    def url(self) -> str: ...
    @property
    def snippet(self) -> str: ...
