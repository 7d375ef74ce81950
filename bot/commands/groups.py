"""The commands about a group chat: /persona (who speaks in this channel, where the bot hosts
several; an admin binds another) and /group (when the persona speaks here, bot.groups.floor;
an admin changes it). Offered only where there are groups with admins."""

from __future__ import annotations

from collections.abc import Mapping

from bot.commands.answers import Answer
from bot.commands.command import Command, Invocation, Option, in_groups
from bot.commands.services import Services
from bot.events import ChatEvent
from bot.groups.floor import ChannelFloor

__all__ = ["COMMANDS", "group"]

# What `group` takes, as an admin types it (cooldown: its seconds).
_GROUP_WORDS: Mapping[str, str] = {
    "mode": "mode",
    "talkativeness": "talkativeness",
    "cooldown": "cooldown_seconds",
    "cooldown_seconds": "cooldown_seconds",
    "max_per_minute": "max_per_minute",
}
_GROUP_CHOICES = ("mode", "talkativeness", "cooldown", "max_per_minute", "reset")


async def group(services: Services, event: ChatEvent, argument: str) -> str:
    """`group`: when the persona speaks in this channel (bot.groups.floor); `group SETTING VALUE`,
    an admin's, changes one setting here (mode, talkativeness, cooldown, max_per_minute), and
    `group reset` brings back the persona's own."""
    if event.is_dm:
        return services.say(event, "group_private")
    persona, floors = services.persona(event), services.floors
    word, _, value = argument.strip().partition(" ")
    word = word.lower()
    if word:
        if not event.admin:
            return services.say(event, "group_admins_only")
        if word == "reset":
            await floors.set_channel(persona, event, ChannelFloor())
        elif (setting := _GROUP_WORDS.get(word)) is None:
            return services.say(event, "group_which")
        else:
            changed = (await floors.channel(persona, event)).changed(setting, value)
            if changed is None:
                allowed = {
                    "mode": "speak, listen",
                    "talkativeness": "0-1",
                    "cooldown_seconds": "0-86400",
                    "max_per_minute": "1-60",
                }[setting]
                return services.say(event, "group_bad_value", setting=word, allowed=allowed)
            await floors.set_channel(persona, event, changed)
    policy = await floors.policy(persona, event)
    return services.say(
        event,
        "group_now",
        mode=policy.mode,
        talkativeness=f"{policy.talkativeness:g}",
        cooldown=f"{policy.cooldown_seconds:g}",
        most=str(policy.max_per_minute),
    )


async def _persona(call: Invocation) -> Answer:
    router, event = call.router, call.event
    assert router is not None  # offered only where a router chooses the persona
    word, _, name = call.argument.partition(" ")
    if word.lower() != "set":
        return Answer(await router.describe(event.channel_id, call.language))
    if not event.admin:
        return Answer(call.say("persona_admins_only"))
    return Answer(await router.bind(event.channel_id, name, event.user_id, call.language))


async def _group(call: Invocation) -> Answer:
    return Answer(await group(call.services, call.event, call.argument))


COMMANDS = (
    Command("persona", _persona, (Option("action"), Option("name")), in_groups),
    Command(
        "group",
        _group,
        (Option("setting", choices=_GROUP_CHOICES), Option("value")),
        in_groups,
    ),
)
