"""The commands about reaching the sender: /intentions (what the persona means to bring up with
them, each cancelled by its button), /quiet (whether it may write to them first), /voice
(whether its replies to them are said aloud too) and /timezone (theirs, for their waking
hours). Each is the sender's own, in the persona's language; an anonymous sender is no one to
reach."""

from __future__ import annotations

import zoneinfo
from collections.abc import Mapping
from datetime import tzinfo
from typing import Literal

from bot.commands.answers import Answer, Button
from bot.commands.command import Command, Invocation, Option, voiced
from bot.commands.services import Services
from bot.events import ChatEvent
from memory.records import Intention, IntentionKind

__all__ = [
    "COMMANDS",
    "INTENTIONS_SHOWN",
    "cancel_intention",
    "format_intention",
    "intentions",
    "quiet",
    "timezone",
    "voice",
]

INTENTIONS_SHOWN = 10  # pending intentions `intentions` lists, each with its cancel button
_INTENTION_LINES: Mapping[IntentionKind, str] = {
    "follow_up": "intention_follow_up",
    "reminder": "intention_reminder",
    "special_day": "intention_special_day",
}


async def intentions(services: Services, event: ChatEvent) -> list[Intention]:
    """The sender's own intentions still pending in the event's scope, soonest due first."""
    if event.anonymous:
        return []
    return await services.intentions.intentions(services.desk.event_scope(event), event.user_id)


async def cancel_intention(
    services: Services, event: ChatEvent, intention_id: int
) -> Intention | None:
    """Cancel one of the sender's own pending intentions here (whoever presses a button runs
    it as themselves: another's is not theirs); None if it is not theirs or not pending."""
    mine = {i.id: i for i in await intentions(services, event)}
    found = mine.get(intention_id)
    if found is None:
        return None
    at = services.clock.now()
    closed = await services.intentions.close_intention(found.scope, found.id, "cancelled", at)
    return found if closed else None


async def _zone(services: Services, event: ChatEvent) -> tuple[str | None, tzinfo]:
    """The sender's time zone here: the one they set (its name), else the bot's (None)."""
    contact = await services.contacts.contact(
        services.persona(event).key, event.platform, event.user_id
    )
    if contact is not None and contact.timezone:
        try:
            return contact.timezone, zoneinfo.ZoneInfo(contact.timezone)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):  # gone from this system's tzdata
            pass
    return None, services.tz


def format_intention(
    services: Services, event: ChatEvent, intention: Intention, number: int, tz: tzinfo
) -> str:
    """One numbered line: what, what will be asked, from when (in the sender's time zone)."""
    due = intention.due_at.astimezone(tz)
    when = f"{services.day(event, due.date())} {due:%H:%M}"
    if intention.kind == "special_day":
        when = due.strftime("%m-%d")
    return services.say(
        event,
        _INTENTION_LINES[intention.kind],
        number=str(number),
        what=intention.what,
        ask=intention.ask,
        when=when,
    )


async def quiet(services: Services, event: ChatEvent, argument: str) -> str:
    """`quiet on|off`: whether the persona may write to the sender first (bot.outreach); alone,
    what they chose (may, unless they said otherwise)."""
    if event.anonymous:  # no one in particular to leave alone
        return services.say(event, "anonymous")
    persona, choice = services.persona(event), argument.strip().lower()
    if choice and choice not in ("on", "off"):
        return services.say(event, "quiet_which")
    if choice:
        return await _choose(services, event, persona.key, "quiet", choice)
    contact = await services.contacts.contact(persona.key, event.platform, event.user_id)
    quieted = contact is not None and contact.quiet
    return services.say(event, "quiet_on" if quieted else "quiet_off")


async def voice(services: Services, event: ChatEvent, argument: str) -> str:
    """`voice on|off`: whether the persona's replies to the sender are said aloud too
    (bot.media.speech): off is text only, on even to what they type; alone, what is chosen now.
    Where the persona has no voice (its [voice] speak is "never", no speech tier, eco mode),
    it says so and keeps nothing."""
    if event.anonymous:
        return services.say(event, "anonymous")
    persona, choice = services.persona(event), argument.strip().lower()
    if choice and choice not in ("on", "off"):
        return services.say(event, "voice_which")
    if not services.voices.speaks or persona.voice.speak == "never":
        return services.say(event, "voice_none")
    if choice:
        return await _choose(services, event, persona.key, "voice", choice)
    contact = await services.contacts.contact(persona.key, event.platform, event.user_id)
    if contact is not None and contact.voice is not None:
        return services.say(event, "voice_on" if contact.voice else "voice_off")
    always = persona.voice.speak == "always"
    return services.say(event, "voice_always" if always else "voice_default")


async def _choose(
    services: Services,
    event: ChatEvent,
    persona: str,
    name: Literal["quiet", "voice"],
    choice: str,
) -> str:
    """Keeps the sender's `choice` ("on" or "off") for their switch `name` on their contact,
    and says so."""
    on = choice == "on"
    await services.contacts.set_contact(
        persona,
        event.platform,
        event.user_id,
        quiet=on if name == "quiet" else None,
        voice=on if name == "voice" else None,
        at=services.clock.now(),
    )
    return services.say(event, f"{name}_{choice}")


async def timezone(services: Services, event: ChatEvent, argument: str) -> str:
    """`timezone NAME`: the sender's time zone (an IANA name, checked), for their waking
    hours; alone, the one set, if any."""
    if event.anonymous:
        return services.say(event, "anonymous")
    name = argument.strip()
    if not name:
        chosen, _ = await _zone(services, event)
        if chosen is None:
            return services.say(event, "timezone_none")
        return services.say(event, "timezone_now", timezone=chosen)
    known = _zone_name(name)
    if known is None:
        return services.say(event, "timezone_unknown", timezone=repr(name[:64]))
    persona = services.persona(event)
    await services.contacts.set_contact(
        persona.key, event.platform, event.user_id, timezone=known, at=services.clock.now()
    )
    return services.say(event, "timezone_set", timezone=known)


def _zone_name(name: str) -> str | None:
    """The IANA name `name` means (its case as the database spells it), or None."""
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        pass
    else:
        if name in zoneinfo.available_timezones():  # not a path the system happens to have
            return name
    lowered = name.lower()
    return next((z for z in sorted(zoneinfo.available_timezones()) if z.lower() == lowered), None)


async def _intentions(call: Invocation) -> Answer:
    """Lists the sender's pending intentions here, with a button to cancel each (`intentions
    !ID`); typed, `intentions cancel N` cancels the Nth of the list."""
    services, event = call.services, call.event
    if event.anonymous:
        return Answer(call.say("anonymous"))
    argument = call.argument.lower().removeprefix("cancel").strip()
    if argument.startswith("!") and argument[1:].isdecimal():
        return _cancelled(call, await cancel_intention(services, event, int(argument[1:])))
    listed = (await intentions(services, event))[:INTENTIONS_SHOWN]
    if argument.isdecimal():  # "²" is a digit, not a number
        number = int(argument)
        if not listed:  # nothing to pick from: not "a number from 1 to 0"
            return Answer(call.say("intentions_none"), private=True)
        if not 1 <= number <= len(listed):
            return Answer(call.say("forget_pick_range", count=str(len(listed))), private=True)
        return _cancelled(call, await cancel_intention(services, event, listed[number - 1].id))
    if argument:
        return Answer(call.say("intentions_cancel_how"), private=True)
    if not listed:
        return Answer(call.say("intentions_none"), private=True)
    _, tz = await _zone(services, event)
    lines = [format_intention(services, event, i, n, tz) for n, i in enumerate(listed, start=1)]
    buttons = tuple(
        Button(call.say("button_cancel_number", number=str(n)), "intentions", f"!{i.id}", True)
        for n, i in enumerate(listed, start=1)
    )
    said = "\n".join([*lines, call.say("intentions_cancel_how")])
    return Answer(said, private=True, buttons=buttons)


def _cancelled(call: Invocation, gone: Intention | None) -> Answer:
    if gone is None:
        return Answer(call.say("intention_gone"), private=True)
    return Answer(call.say("intention_cancelled", what=gone.what), private=True)


async def _quiet(call: Invocation) -> Answer:
    return Answer(await quiet(call.services, call.event, call.argument))


async def _voice(call: Invocation) -> Answer:
    return Answer(await voice(call.services, call.event, call.argument))


async def _timezone(call: Invocation) -> Answer:
    return Answer(await timezone(call.services, call.event, call.argument))


_ON_OFF = (Option("choice", choices=("on", "off")),)

COMMANDS = (
    Command("intentions", _intentions, (Option("cancel"),)),
    Command("quiet", _quiet, _ON_OFF),
    Command("timezone", _timezone, (Option("name"),)),
    Command("voice", _voice, _ON_OFF, voiced),
)
