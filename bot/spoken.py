"""What a persona says, as a surface shows it: the reply, and which persona says it."""

from __future__ import annotations

from dataclasses import dataclass

from bot.events import Reply
from bot.persona.file import Persona

__all__ = ["Spoken"]


@dataclass(slots=True, frozen=True)
class Spoken:
    """A reply and who says it; `several`: the bot hosts several personas, so the platform
    shows which one speaks."""

    persona: Persona
    reply: Reply
    several: bool
