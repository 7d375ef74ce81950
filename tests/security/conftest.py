"""The isolation suite's world: Alice has memories in her DM with Pip, in her own corner of a
server, a diary page and a profile, and a private word with the tavern keeper (a persona whose
server memory is the channel's); Bob, and an impostor who took the display name "Alice", try
to reach them through every surface. Each of Alice's things carries a made-up word found
nowhere else, so a leak is a plain substring."""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from bot.config import TIERS
from bot.events import ChatEvent
from bot.llm.openai_chat import OpenAIChatModel, make_client
from bot.llm.router import ModelRouter
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.factories import Bot, make_event, make_persona, open_bot, write_page
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.platforms import discord_at
from tests.fakes.secrets import OPENAI_API_KEY

if TYPE_CHECKING:
    pass

ALICE, BOB, IMPOSTOR = "u1", "u2", "u3"
# (who asks, where, persona, Alice's words they may see): those who may see none of them,
# in a private chat and in a server.
STRANGERS = [
    pytest.param(BOB, "dm", "pip", (), id="bob-dm"),
    pytest.param(BOB, "group", "pip", (), id="bob-group"),
    pytest.param(IMPOSTOR, "dm", "pip", (), id="impostor-dm"),
    pytest.param(IMPOSTOR, "group", "pip", (), id="impostor-group"),
]
# Alice's things, each with its own word.
DM_MEMORY = "Alice's bank pin is zebraquokka-4921"
GROUP_MEMORY = "Alice hums marmosetfjord tunes in the cellar"
DIARY_PAGE = "Alice cried about the narwhalpumpkin today."
PROFILE = "Alice is allergic to axolotlbrioche."
TAVERN_DM = "Alice whispered that the tavern password is quetzalmango"
# Phrases of hers that no one types (a question may name her words: "zebraquokka?").
PIN, HUMS, CRIED, ALLERGY, PASSWORD = (
    "zebraquokka-4921",
    "hums marmosetfjord",
    "about the narwhalpumpkin",
    "allergic to axolotlbrioche",
    "password is quetzalmango",
)
MARKERS = (PIN, HUMS, CRIED, ALLERGY, PASSWORD)
DAY = date(2026, 1, 1)  # the fake clock's first day


def leaked(text: str) -> list[str]:
    """Alice's phrases found in `text`."""
    return [m for m in MARKERS if m in text]


def event(user: str, text: str = "hello", *, where: str = "dm", persona: str = "pip") -> ChatEvent:
    """`user` writing `text` to `persona`: in a DM, or in the server's channel c1 ("group")."""
    name = {ALICE: "Alice", BOB: "Bob", IMPOSTOR: "Alice"}[user]
    return make_event(text, user_id=user, user_name=name, is_dm=where == "dm", persona=persona)


@dataclass(slots=True)
class World:
    bot: Bot
    dm_id: int  # Alice's DM memory
    group_id: int  # Alice's memory in the server
    tavern_id: int  # Alice's DM memory with the tavern keeper

    def scope(self, user: str, where: str = "dm", persona: str = "pip") -> str:
        return self.bot.desk.event_scope(event(user, where=where, persona=persona))

    @property
    def alice_ids(self) -> list[int]:
        return [self.dm_id, self.group_id, self.tavern_id]


async def furnish(bot: Bot) -> World:
    """Alice's things in `bot`."""
    world = World(bot, 0, 0, 0)
    bank = bot.bank
    world.dm_id = await bank.remember(world.scope(ALICE), DM_MEMORY, speaker="Alice")
    world.group_id = await bank.remember(world.scope(ALICE, "group"), GROUP_MEMORY, speaker="Alice")
    world.tavern_id = await bank.remember(
        world.scope(ALICE, persona="tavern"), TAVERN_DM, speaker="Alice"
    )
    await write_page(bot.store, world.scope(ALICE), DAY, DIARY_PAGE, [(ALICE, "Alice", PROFILE)])
    await write_page(
        bot.store, world.scope(ALICE, "group"), DAY, DIARY_PAGE, [(ALICE, "Alice", PROFILE)]
    )
    # The tavern's channel keeps one diary for everyone there, but a profile per person.
    channel = world.scope(ALICE, "group", "tavern")
    await write_page(bot.store, channel, DAY, "The tavern was busy.", [(ALICE, "Alice", PROFILE)])
    return world


@pytest.fixture
async def fake_discord(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeDiscord]:
    async with discord_at(monkeypatch) as server:
        yield server


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    personas = [
        make_persona("pip", name="Pip", tools=["recall_memory"]),
        make_persona("tavern", name="Tavern", scope="channel", tools=["recall_memory"]),
    ]
    bot = await open_bot(tmp_path / "k.sqlite3", personas)
    try:
        yield await furnish(bot)
    finally:
        await bot.close()


@pytest.fixture
async def fake(world: World) -> AsyncIterator[FakeOpenAI]:
    """Every tier of the world's engine on the fake server, through the real SDK client."""
    async with FakeOpenAI() as server:
        client = make_client(server.base_url, OPENAI_API_KEY, 5.0)
        model = OpenAIChatModel(
            client,
            "fake-chat",
            timeout=5.0,
            max_retries=0,
            retry_base_delay=0.01,
            rng=random.Random(0),
        )
        router = ModelRouter(dict.fromkeys(TIERS, model))
        engine = world.bot.engine  # the tiers the turn's stages call
        engine.models = engine.calls.models = engine.after.models = router
        assert world.bot.engine.memory is not None
        world.bot.engine.memory.models = router  # deep recall asks the intent tier
        world.bot.lifecycle.models = router  # and encoding, the summary tier
        yield server
        await client.close()  # (left to the garbage collector, it logs from another test)


def sent(fake: FakeOpenAI) -> str:
    """Everything the client sent to the model, as one text."""
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in fake.chat_requests)
