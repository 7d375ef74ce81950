"""The commands about the conversation itself: /state (the persona's state slots here, which
the user may set), /end (close it now), /wipe (forget it and everything remembered of it, asked
first) and /cancel (the answer to a question such as the wipe's). /state set and /wipe are
refused (`NotAllowed`, said as the answer) in a channel's shared memory to all but its admins."""

from __future__ import annotations

from bot.commands.answers import Answer, Button
from bot.commands.command import Command, Invocation, Option
from bot.commands.services import Services
from bot.events import ChatEvent

__all__ = ["COMMANDS", "set_state", "show_state", "wipe", "wipe_question"]


async def show_state(services: Services, event: ChatEvent) -> str:
    """The persona's state slots in this scope (a dungeon master's party and game)."""
    persona = services.persona(event)
    if not persona.state:
        return services.say(event, "no_state")
    state = (await services.desk.info(event)).state
    unset = services.say(event, "not_set")
    return "\n".join(
        f"{slot.name} ({slot.update}):\n{slot.value(state) or unset}" for slot in persona.state
    )


async def set_state(services: Services, event: ChatEvent, argument: str) -> str:
    """`state set NAME VALUE`: the user changes a slot themselves (the way to change a slot
    updated `once`, such as the party's characters)."""
    persona = services.persona(event)
    name, _, value = argument.strip().partition(" ")
    names = [slot.name for slot in persona.state]
    if not names:
        return services.say(event, "no_state")
    if name not in names:
        return services.say(event, "no_slot", slot=repr(name), slots=", ".join(names))
    if not value.strip():
        return services.say(event, "give_value", slot=name)
    stored = await services.desk.set_state(event, name, value)
    return services.say(event, "slot_now", slot=name, value=stored)


def wipe_question(services: Services, event: ChatEvent) -> str:
    """What a wipe asks before it forgets: what will really be lost."""
    key = "wipe_question_channel" if services.desk.shares(event) else "wipe_question_you"
    return services.say(event, key)


async def wipe(services: Services, event: ChatEvent) -> str:
    """Forget the conversation and every memory of the event's scope; says what is gone."""
    await services.desk.wipe(event)
    return services.say(event, "wiped_channel" if services.desk.shares(event) else "wiped_you")


async def _state(call: Invocation) -> Answer:
    word, _, rest = call.argument.partition(" ")
    if word == "set":
        return Answer(await set_state(call.services, call.event, rest))
    if call.argument:  # the slot and value given as options
        return Answer(await set_state(call.services, call.event, call.argument))
    return Answer(await show_state(call.services, call.event))


async def _end(call: Invocation) -> Answer:
    ended = await call.services.desk.end(call.event)
    return Answer(call.say("ended" if ended else "not_open"))


async def _wipe(call: Invocation) -> Answer:
    """Asks first (what will really be lost); `wipe yes`, its button, wipes."""
    if call.argument == "yes":
        return Answer(await wipe(call.services, call.event))
    call.services.desk.check_may_change(call.event)  # refused before asking, not after
    buttons = (
        Button(call.say("button_wipe"), "wipe", "yes", danger=True),
        Button(call.say("button_cancel"), "cancel"),
    )
    return Answer(wipe_question(call.services, call.event), buttons=buttons)


async def _cancel(call: Invocation) -> Answer:
    return Answer(call.say("cancelled"))


COMMANDS = (
    Command("state", _state, (Option("slot"), Option("value"))),
    Command("end", _end),
    Command("wipe", _wipe),
    Command("cancel", _cancel, listed=False),
)
