"""Relayed words: one Discord bot hosts two personas, who hear each other in-process
(bot.groups.relay). What one persona said in a channel some cannot read never reaches the other's
reply in a channel they can; what one said of a user, derived from its memories of them, is
never kept in the other's long-term memory, so it goes when that user's memories go. Through
the real discord.py against the loopback fake, with a scripted model whose encodings write
down the transcript they were shown (so a word in it becomes a word in memory)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from adapters.discord import DiscordAdapter
from bot.chat_model import Message
from bot.events import ChatEvent
from bot.groups.relay import speaker_id
from bot.persona.file import Persona
from memory.encoding.encoder import ENCODING_TASK
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.factories import Bot, make_event, make_persona, open_bot
from tests.fakes.logs import logged_errors
from tests.fakes.models import ScriptedChatModel
from tests.fakes.secrets import DISCORD_TOKEN
from tests.security.test_forgetting_leaves_nothing import traces, word

ALICE, BOB, ADMIN = 42, 43, 44
MODS, TAVERN = 3011, 3012  # #mods: Alice's and the admin's only; #tavern: everyone's
VAULT = "zqvaultpelican"  # what Alice told Pip in #mods
CAT = "zqmochiquokka"  # what Pip knows of Alice, said in #tavern


def remembering(messages: Sequence[Message]) -> str:
    """The model: an encoding keeps its transcript word for word as one memory; a chat turn
    says "ok"."""
    system, user = messages[0].content, messages[-1].content
    if ENCODING_TASK not in system:
        return "[NEUTRAL] ok"
    transcript = user.split("The conversation:\n", 1)[1]
    memory = {"text": f"I heard: {transcript}"[:500], "category": "personal_daily"}
    return json.dumps({"memories": [memory], "diary": "", "recap": "We talked."})


@dataclass
class Duo:
    fake: FakeDiscord
    bot: Bot

    @property
    def model(self) -> ScriptedChatModel:
        return self.bot.model

    def heard_from(self, persona: str, other: str, channel: int) -> ChatEvent:
        """What `persona` hears `other` say in `channel`, as the relay hands it over."""
        event = make_event(
            persona=persona,
            is_dm=False,
            chat_id=str(self.fake.guild_id),
            channel_id=str(channel),
            user_id=speaker_id(other),
        )
        return replace(event, from_persona=True)

    async def turns(self, event: ChatEvent, count: int) -> list[str]:
        """The texts of `event`'s conversation once it holds `count` turns."""
        async with asyncio.timeout(5):  # (a guard: the relay runs in the bot's handler)
            while True:
                turns = (await self.bot.engine.session(event)).turns
                if len(turns) >= count:
                    return [t.text for t in turns]
                await asyncio.sleep(0.01)

    async def said(self) -> tuple[str, str]:
        """(who, what) of the bot's next message: a persona's, through the channel's webhook."""
        sent: dict[str, Any] = await self.fake.next_message()
        assert "webhook_id" in sent, sent
        return sent["username"], sent["content"]

    async def slash(self, command: str, channel: int, user: int, **options: str) -> dict[str, Any]:
        """The answer to `user`'s slash `command` in `channel`."""
        await self.fake.slash(command, options, user_id=user, channel_id=channel)
        return await self.fake.answer()


@asynccontextmanager
async def duo(fake: FakeDiscord, tmp_path: Path, personas: list[Persona]) -> AsyncIterator[Duo]:
    fake.add_channel(MODS, "mods", readers=[ALICE, ADMIN])
    fake.add_channel(TAVERN, "tavern")
    model = ScriptedChatModel(default=remembering)
    bot = await open_bot(tmp_path / "k.sqlite3", personas, model=model)
    keys = [p.key for p in personas]
    adapter = DiscordAdapter(
        bot.engine, bot.services, keys, DISCORD_TOKEN, bot_id="duo", guild_ready_timeout=0.05
    )
    await adapter.start()
    try:
        with logged_errors("discord", "adapters.discord"):
            yield Duo(fake, bot)
    finally:
        await adapter.close()
        await bot.close()


@pytest.fixture
async def members(fake_discord: FakeDiscord, tmp_path: Path) -> AsyncIterator[Duo]:
    """Pip and Miao, each with a memory per member."""
    personas = [make_persona("pip", name="Pip"), make_persona("miao", name="Miao")]
    async with duo(fake_discord, tmp_path, personas) as here:
        yield here


@pytest.fixture
async def tavern(fake_discord: FakeDiscord, tmp_path: Path) -> AsyncIterator[Duo]:
    """Pip, with a memory per member across the server's channels (`share_channels`: so Alice
    may ask it in another channel than the tavern), and Miao the tavern keeper, whose memory
    of a channel is the whole channel's (anyone there may /recall it)."""
    pip = make_persona("pip", name="Pip")
    pip = replace(pip, memory=replace(pip.memory, share_channels=True))
    personas = [pip, make_persona("miao", name="Miao", scope="channel")]
    async with duo(fake_discord, tmp_path, personas) as here:
        yield here


async def test_what_pip_said_in_a_private_channel_never_reaches_miaos_reply_elsewhere(
    members: Duo,
) -> None:
    """Alice tells Pip something in #mods, which Bob cannot read; Miao, seated there too,
    hears Pip's answer. In #general Bob has Pip ask Miao what Pip told people today: Miao's
    conversation with Pip there is another, and no prompt after Bob spoke holds the word."""
    duo, fake = members, members.fake
    duo.model.push(f"[NEUTRAL] Noted, Alice: the vault code is {VAULT}.")
    await fake.dispatch_message(MODS, ALICE, "Pip, keep the vault code for me")
    assert await duo.said() == ("Pip", f"Noted, Alice: the vault code is {VAULT}.")
    # Miao heard it where it was said, and kept quiet (it was not called).
    in_mods = await duo.turns(duo.heard_from("miao", "pip", MODS), 1)
    assert in_mods == [f"Noted, Alice: the vault code is {VAULT}."]

    before = len(duo.model.calls)
    duo.model.push("[NEUTRAL] Miao, what did I tell people today?", "[NEUTRAL] Not a thing.")
    await fake.dispatch_message(fake.channel_id, BOB, "Pip, ask Miao what you told people today")
    assert await duo.said() == ("Pip", "Miao, what did I tell people today?")
    assert await duo.said() == ("Miao", "Not a thing.")
    asked = duo.model.calls[before:]
    assert len(asked) == 2  # Pip's answer to Bob, Miao's to Pip
    assert [m.content for c in asked for m in c.messages if VAULT in m.content] == []
    in_general = await duo.turns(duo.heard_from("miao", "pip", fake.channel_id), 2)
    assert in_general == ["Miao, what did I tell people today?", "Not a thing."]


async def test_pips_words_about_alice_in_the_tavern_leave_with_her_wipe(
    tavern: Duo, tmp_path: Path
) -> None:
    """Pip answers Alice in the tavern from what it knows of her; Miao hears it in the
    tavern's shared conversation, and serves Bob. The conversations close into memory; Alice
    wipes her memories with Pip. Nothing of Pip's words stays with Miao: Bob's /recall in the
    tavern finds his own cider, never Alice's cat, and no file of the data folder holds it."""
    duo, fake = tavern, tavern.fake
    bound = await duo.slash("persona", TAVERN, ADMIN, action="set", name="miao")
    assert "Miao" in bound["content"]
    duo.model.push(f"[NEUTRAL] Your cat is called {CAT}, Alice!")
    await fake.dispatch_message(TAVERN, ALICE, "Pip, what is my cat called?")
    assert await duo.said() == ("Pip", f"Your cat is called {CAT}, Alice!")
    duo.model.push("[NEUTRAL] Here is your cider, Bob.")
    await fake.dispatch_message(TAVERN, BOB, "Miao, a cider please")
    assert await duo.said() == ("Miao", "Here is your cider, Bob.")
    shared = make_event(
        persona="miao", is_dm=False, chat_id=str(fake.guild_id), channel_id=str(TAVERN)
    )
    assert await duo.turns(shared, 3) == [
        f"Your cat is called {CAT}, Alice!",  # heard from Pip
        "Miao, a cider please",
        "Here is your cider, Bob.",  # (said with Pip's words in view)
    ]

    duo.bot.clock.advance(timedelta(hours=1))
    await duo.bot.sessions.close_idle(duo.bot.engine.idle_time)
    encoded = await duo.bot.lifecycle.encode_pending()
    assert encoded  # Pip's conversation with Alice, and the tavern's
    room = f"discord:{fake.guild_id}:channel:{TAVERN}"
    [closed] = await duo.bot.store.conversations("miao", room)
    assert [t["text"] for t in closed.turns] == ["Miao, a cider please"]
    pips = await duo.slash("recall", fake.channel_id, ALICE, query=CAT)
    assert CAT in pips["content"]  # Pip remembers it of Alice, until she wipes it

    await fake.slash("wipe", user_id=ALICE)
    await fake.click(await fake.answer(), "Wipe", user_id=ALICE)
    assert "Pip remembers nothing of you now" in (await fake.next_response())["data"]["content"]
    recalled = await duo.slash("recall", TAVERN, BOB, query=f"{CAT} cat Alice cider")
    assert "cider" in recalled["content"] and CAT not in recalled["content"]
    memories = await duo.slash("memories", TAVERN, BOB)
    assert CAT not in memories["content"]
    await duo.bot.bank.flush()
    assert traces(tmp_path, *word(CAT)) == []
