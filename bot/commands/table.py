"""Every command a user can give, platform-free, in one table (`COMMANDS`), in the order menus
and /help list them; each module of bot/commands gives the commands of its concern (memory,
conversation, contact, groups), this one /help and /start, and runs a command. A command
returns an `Answer` (bot/commands/answers.py) that each surface renders its own way, in the
persona's language (bot/catalogue.py); a button in an answer is this table's command again, run
as whoever presses it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from bot.access import NotAllowed
from bot.catalogue import say
from bot.commands import contact, conversation, groups, memory
from bot.commands.answers import Answer
from bot.commands.command import Command, Invocation, started, typed
from bot.commands.services import Services
from bot.events import ChatEvent
from bot.groups.routing import PersonaRouter
from bot.platforms import Platform

__all__ = ["COMMANDS", "describe", "offered_on", "run"]


async def _start(call: Invocation) -> Answer:
    return Answer(call.say("start"))


async def _help(call: Invocation) -> Answer:
    platform = call.services.platforms[call.event.platform]
    lines = [f"/{c.name} - {describe(c.name, call.language)}" for c in offered_on(platform)]
    return Answer("\n".join(lines))


_OWN = (
    Command("help", _help, where=typed),
    Command("start", _start, where=started, listed=False),
)

# The order of menus and /help.
_ORDER = (
    "remember",
    "recall",
    "memories",
    "forget",
    "diary",
    "profile",
    "state",
    "persona",
    "export",
    "dm_memories",
    "group",
    "intentions",
    "quiet",
    "timezone",
    "voice",
    "end",
    "wipe",
    "help",
    "start",
    "cancel",
)


def _in_order(given: Iterable[Command], order: Iterable[str]) -> dict[str, Command]:
    by_name = {c.name: c for c in given}
    names = list(order)
    if sorted(names) != sorted(by_name):
        raise ValueError(f"the menu's order names {sorted(names)}, the modules {sorted(by_name)}")
    return {name: by_name[name] for name in names}


COMMANDS: Mapping[str, Command] = _in_order(
    (
        *memory.COMMANDS,
        *conversation.COMMANDS,
        *contact.COMMANDS,
        *groups.COMMANDS,
        *_OWN,
    ),
    _ORDER,
)


def describe(name: str, language: str) -> str:
    """What command `name` does, in `language`: one line for menus and /help."""
    return say(language, f"help_{name}")


def offered_on(platform: Platform) -> list[Command]:
    """The commands a surface lists in its menu and help."""
    return [c for c in COMMANDS.values() if c.listed and c.offered_on(platform)]


async def run(
    services: Services,
    event: ChatEvent,
    name: str,
    argument: str = "",
    *,
    router: PersonaRouter | None = None,
) -> Answer:
    """Run command `name` as `event`'s sender; a refusal is the answer. KeyError for a name
    not in the table (or not offered on the event's platform)."""
    command = COMMANDS[name]
    if not command.offered_on(services.platforms[event.platform]):
        raise KeyError(name)
    try:
        return await command.run(Invocation(services, event, argument.strip(), router))
    except NotAllowed as refusal:
        return Answer(str(refusal))
