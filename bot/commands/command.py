"""What a command is: its name, its options, where it is offered, and what it does with one
use of it (`Invocation`). Each module of bot/commands gives its own commands; bot/commands/table.py
puts them in one table."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.commands.answers import Answer
from bot.commands.services import Services
from bot.events import ChatEvent
from bot.groups.routing import PersonaRouter
from bot.platforms import Platform

__all__ = ["Command", "Invocation", "Option", "in_groups", "started", "typed", "voiced"]


def in_groups(platform: Platform) -> bool:
    """Where there are groups, with admins."""
    return platform.groups


def typed(platform: Platform) -> bool:
    """Where commands are typed (no menu of their own)."""
    return platform.typed_commands


def voiced(platform: Platform) -> bool:
    """Where replies can come as voice notes."""
    return bool(platform.voice)


def started(platform: Platform) -> bool:
    """Where a chat opens with /start."""
    return platform.start


@dataclass(slots=True, frozen=True)
class Invocation:
    """One use of a command: by whom and where (`event`), with what argument. `router` is
    the bot's, where one hosts several personas (not in the console)."""

    services: Services
    event: ChatEvent
    argument: str
    router: PersonaRouter | None = None

    def say(self, key: str, **values: str) -> str:
        return self.services.say(self.event, key, **values)

    @property
    def language(self) -> str:
        """The language of what the bot says here (the bot's, else the persona's)."""
        return self.services.language(self.event)


@dataclass(slots=True, frozen=True)
class Option:
    """A named part of a command's argument, where a surface asks for each (Discord); typed,
    the options are the argument's words in this order."""

    name: str
    required: bool = False
    choices: tuple[str, ...] = ()


@dataclass(slots=True, frozen=True)
class Command:
    name: str
    run: Callable[[Invocation], Awaitable[Answer]]
    options: tuple[Option, ...] = ()
    # The platforms it is offered on, by what they can do (None: everywhere); `listed`: in
    # menus and /help.
    where: Callable[[Platform], bool] | None = None
    listed: bool = True

    def offered_on(self, platform: Platform) -> bool:
        return self.where is None or self.where(platform)
