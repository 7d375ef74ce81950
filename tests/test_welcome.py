"""Greeting a new member (bot.groups.welcome): only where the persona's `group.greet` is on, once in
five minutes a channel, one chat-tier call (the catalogue's line if the model fails); through
the real python-telegram-bot and discord.py against the fakes, with a fake clock."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from adapters.discord import DiscordAdapter
from bot.catalogue import say
from bot.chat_model import ModelError
from bot.events import ChatEvent
from bot.groups.welcome import WELCOME_EVERY, Welcomes
from bot.persona.file import GroupPolicy, Persona
from memory.clock import FakeClock
from tests.fakes.factories import make_event, make_persona, open_bot
from tests.fakes.logs import logged_errors
from tests.fakes.models import ScriptedChatModel, make_router
from tests.fakes.platforms import discord_at, telegram_adapter
from tests.fakes.secrets import DISCORD_TOKEN
from tests.fakes.telegram_server import FakeTelegram

GROUP = -3001


def greeter(key: str = "pip", name: str = "Pip", language: str = "en") -> Persona:
    made = make_persona(key, name=name, language=language)
    made.group = GroupPolicy(greet=True)
    return made


def joined(user: str = "u9", name: str = "Cleo", channel: str = "c1") -> ChatEvent:
    return make_event("", is_dm=False, user_id=user, user_name=name, channel_id=channel)


async def test_a_persona_greets_only_when_set_and_once_in_five_minutes_a_channel() -> None:
    clock, model = FakeClock(), ScriptedChatModel(default="[HAPPY] Welcome aboard, Cleo!")
    welcomes = Welcomes(clock, make_router(model))
    assert await welcomes.welcome(make_persona(), joined()) is None  # off by default
    assert model.calls == []
    pip = greeter()
    reply = await welcomes.welcome(pip, joined())
    assert reply is not None and (reply.text, reply.emotion) == ("Welcome aboard, Cleo!", "HAPPY")
    [call] = model.calls
    assert "You are Pip." in call.messages[0].content
    assert call.messages[-1].content == 'Joined: "Cleo"'
    assert await welcomes.welcome(pip, joined("u10", "Dan")) is None  # a raid: greeted once
    assert await welcomes.welcome(pip, joined("u10", "Dan", channel="c2")) is not None
    clock.advance(WELCOME_EVERY - timedelta(seconds=1))
    assert await welcomes.welcome(pip, joined("u11", "Eve")) is None
    clock.advance(timedelta(seconds=1))
    assert await welcomes.welcome(pip, joined("u11", "Eve")) is not None
    assert await welcomes.welcome(pip, replace(joined(), is_dm=True)) is None
    assert len(model.calls) == 3


async def test_when_the_model_fails_the_catalogues_line_greets_in_the_personas_language() -> None:
    model = ScriptedChatModel([ModelError("down")])
    welcomes = Welcomes(FakeClock(), make_router(model))
    reply = await welcomes.welcome(greeter("miao", "Miao", "zh"), joined(name="小美"))
    assert reply is not None and reply.text == say("zh", "welcome", name="小美")


async def test_telegram_new_members_are_greeted_once(tmp_path: Path) -> None:
    model = ScriptedChatModel(default="[NEUTRAL] Hi Cleo, welcome!")
    bot = await open_bot(tmp_path / "k.sqlite3", [greeter()], model=model)
    try:
        async with FakeTelegram() as fake:
            adapter = telegram_adapter(bot, fake)
            await adapter.start()
            try:
                fake.join(GROUP, (9, "Cleo"), (10, "Dan"))
                [greeting] = await fake.next_messages()
                assert greeting["text"] == "Hi Cleo, welcome!"
                assert greeting["chat"]["id"] == GROUP
                fake.join(GROUP, (11, "Eve"))  # within five minutes: not again
                model.default = "[NEUTRAL] yes?"
                fake.send_text(GROUP, 9, "@pip_bot hello", chat_type="supergroup")
                [answer] = await fake.next_messages()
                assert answer["text"] == "yes?"
                assert len(model.calls) == 2
            finally:
                await adapter.close()
    finally:
        await bot.close()


async def test_discord_asks_for_members_only_to_greet_and_greets_in_the_system_channel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = ScriptedChatModel(default="[NEUTRAL] Welcome, friend!")
    personas = [greeter(), make_persona("bo", name="Bo")]
    bot = await open_bot(tmp_path / "k.sqlite3", personas, model=model)
    try:
        with logged_errors("discord", "adapters.discord"):
            async with discord_at(monkeypatch) as fake:
                quiet = DiscordAdapter(
                    bot.engine,
                    bot.services,
                    "bo",
                    DISCORD_TOKEN,
                    bot_id="d-bo",
                    guild_ready_timeout=0.05,
                )
                assert not quiet.client.intents.members
                greeting = DiscordAdapter(
                    bot.engine,
                    bot.services,
                    "pip",
                    DISCORD_TOKEN,
                    bot_id="d-pip",
                    guild_ready_timeout=0.05,
                )
                assert greeting.client.intents.members
                await greeting.start()
                try:
                    await fake.dispatch_join(4242)
                    posted = await fake.next_message()
                    assert posted["content"] == "Welcome, friend!"
                    assert posted["channel_id"] == str(fake.channel_id)
                    assert len(bot.model.calls) == 1
                finally:
                    await greeting.close()
    finally:
        await bot.close()
