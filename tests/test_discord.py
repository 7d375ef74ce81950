"""The Discord adapter end to end: the real discord.py client against the loopback fake."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from datetime import timedelta
from io import BytesIO
from pathlib import Path
from typing import Any

import discord
import pytest
from PIL import Image

from adapters.discord import DiscordAdapter
from bot.access import Gate
from bot.config import TIERS, AccessConfig, EngineConfig
from bot.events import Attachment, ChatEvent, Reply
from bot.llm.offline import OfflineChatModel
from bot.llm.router import ModelRouter
from bot.persona.file import VoicePolicy
from bot.persona.toolspec import CustomTool
from bot.prompts.tools import TOOL_ADMINS_ONLY, TOOL_FOR_ONE
from memory.records import NewIntention
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.factories import (
    Bot,
    make_event,
    make_persona,
    make_picture,
    open_bot,
    speaking_router,
    tool_persona,
    with_tools,
)
from tests.fakes.logs import logged_errors
from tests.fakes.models import ModelCall, ScriptedChatModel, calling
from tests.fakes.openai_server import FakeOpenAI, ogg_opus
from tests.fakes.platforms import discord_at
from tests.fakes.secrets import DISCORD_TOKEN, OTHER_DISCORD_TOKEN

ALICE = 42
BOB = 43


@pytest.fixture(autouse=True)
def no_discord_errors() -> Iterator[None]:
    """discord.py only logs errors in handlers and the command tree: make them fail the test."""
    with logged_errors("discord", "adapters.discord"):
        yield


@pytest.fixture
async def fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeDiscord]:
    async with discord_at(monkeypatch) as server:
        yield server


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[Bot]:
    kizuna = await open_bot(tmp_path / "k.sqlite3")
    try:
        yield kizuna
    finally:
        await kizuna.close()


@pytest.fixture
async def adapter(fake: FakeDiscord, bot: Bot) -> AsyncIterator[DiscordAdapter]:
    running = DiscordAdapter(
        bot.engine,
        bot.services,
        "pip",
        DISCORD_TOKEN,
        bot_id="discord-pip",
        guild_ready_timeout=0.05,
    )
    await running.start()
    try:
        yield running
    finally:
        await running.close()


def mention(fake: FakeDiscord) -> str:
    return f"<@{fake.bot_id}>"


async def test_guild_mention_gets_a_reply(fake: FakeDiscord, bot: Bot, adapter: DiscordAdapter):
    await fake.dispatch_message(
        fake.channel_id, ALICE, f"{mention(fake)} hello there", mentions_bot=True
    )
    sent = await fake.next_message()
    assert sent["content"] == "ok"
    assert sent["channel_id"] == str(fake.channel_id)
    assert sent["allowed_mentions"]["parse"] == []  # the model's text pings nobody
    assert any(r.path == f"/channels/{fake.channel_id}/typing" for r in fake.requests)
    [call] = bot.model.calls
    assert "hello there" in call.text
    assert mention(fake) not in call.text
    guild_event = make_event(
        is_dm=False, chat_id=str(fake.guild_id), channel_id=str(fake.channel_id), user_id=str(ALICE)
    )
    session = await bot.engine.session(guild_event)
    assert [t.text for t in session.turns][-1] == "ok"  # the guild conversation, by user id


async def test_guild_message_without_mention_is_ignored(
    fake: FakeDiscord, bot: Bot, adapter: DiscordAdapter
):
    await fake.dispatch_message(fake.channel_id, ALICE, "just chatting")
    assert await fake.no_message()
    assert bot.model.calls == []


def spy_events(bot: Bot, monkeypatch: pytest.MonkeyPatch) -> list[ChatEvent]:
    """Record every ChatEvent the adapter hands the engine."""
    seen: list[ChatEvent] = []
    handle = bot.engine.handle

    async def spy(event: ChatEvent, **how: Any) -> Reply:
        seen.append(event)
        return await handle(event, **how)

    monkeypatch.setattr(bot.engine, "handle", spy)
    return seen


async def test_reply_to_the_bot_gets_a_reply(
    fake: FakeDiscord, bot: Bot, adapter: DiscordAdapter, monkeypatch: pytest.MonkeyPatch
):
    seen = spy_events(bot, monkeypatch)
    earlier = fake._message(fake.channel_id, fake.user(fake.bot_id, bot=True), "I like tea")
    photo = {
        "id": "77",
        "filename": "cat.zip",
        "size": 1234,
        "url": "https://cdn.example/cat.zip",
        "proxy_url": "https://cdn.example/cat.zip",
        "content_type": "application/zip",
    }
    await fake.dispatch_message(
        fake.channel_id, ALICE, "me too", reply_to=earlier, attachments=[photo]
    )
    assert (await fake.next_message())["content"] == "ok"
    [event] = seen
    assert event.reply_to == "I like tea"
    assert event.attachments == (
        Attachment("cat.zip", "https://cdn.example/cat.zip", "application/zip", 1234),
    )
    assert (event.platform, event.chat_id, event.channel_id) == (
        "discord",
        str(fake.guild_id),
        str(fake.channel_id),
    )
    assert (event.user_id, event.user_name, event.is_dm) == (str(ALICE), "User42", False)
    assert event.bot_id == "discord-pip" and event.persona == "pip"
    assert event.timestamp.tzinfo is not None


async def test_reply_to_someone_else_is_ignored(fake: FakeDiscord, adapter: DiscordAdapter):
    earlier = fake._message(fake.channel_id, fake.user(BOB), "hello Alice")
    await fake.dispatch_message(fake.channel_id, ALICE, "hi Bob", reply_to=earlier)
    assert await fake.no_message()


async def test_dm_gets_a_reply(fake: FakeDiscord, bot: Bot, adapter: DiscordAdapter):
    await fake.dispatch_message(5555, ALICE, "hi in private", guild=False)
    sent = await fake.next_message()
    assert sent == {**sent, "content": "ok", "channel_id": "5555"}
    assert "hi in private" in bot.model.calls[0].text


async def test_long_reply_arrives_as_two_messages(
    fake: FakeDiscord, bot: Bot, adapter: DiscordAdapter
):
    bot.model.push("[NEUTRAL] " + " ".join(["word"] * 600))  # 2,999 characters
    await fake.dispatch_message(5555, ALICE, "tell me a story", guild=False)
    first, second = await fake.next_message(), await fake.next_message()
    assert len(first["content"]) <= 2000 and len(second["content"]) <= 2000
    assert len(first["content"]) + len(second["content"]) == 2999 - 1
    assert await fake.no_message(0.1)


async def test_remember_then_recall_is_ephemeral(fake: FakeDiscord, adapter: DiscordAdapter):
    await fake.slash("remember", {"text": "my cat is called Mochi"}, user_id=ALICE)
    deferred, said = await fake.next_response(), await fake.next_response()
    assert deferred["type"] == 5 and deferred["data"]["flags"] & 64
    assert said["flags"] & 64
    assert "remember" in said["content"]

    await fake.slash("recall", {"query": "cat"}, user_id=ALICE)
    await fake.next_response()
    recalled = await fake.next_response()
    assert recalled["flags"] & 64
    assert "Mochi" in recalled["content"]

    await fake.slash("recall", {"query": "cat"}, user_id=BOB)  # Bob sees none of Alice's
    await fake.next_response()
    assert "Mochi" not in (await fake.next_response())["content"]


async def test_forget_lists_then_deletes_the_pick(fake: FakeDiscord, adapter: DiscordAdapter):
    await fake.slash("remember", {"text": "my cat is called Mochi"}, user_id=ALICE)
    await fake.answer()
    await fake.slash("forget", {"query": "cat"}, user_id=ALICE)
    listed = await fake.answer()
    assert listed["flags"] & 64
    assert listed["content"].startswith("1. ") and "Mochi" in listed["content"]

    await fake.click(listed, "1", user_id=BOB)  # not Bob's to press
    refused = await fake.next_response()
    assert refused["type"] == 4 and refused["data"]["flags"] & 64
    await fake.click(listed, "1", user_id=ALICE)
    done = await fake.next_response()
    assert done["type"] == 7 and done["data"]["content"] == "Forgotten: my cat is called Mochi"
    assert done["data"]["components"] == []

    await fake.slash("memories", {}, user_id=ALICE)
    assert (await fake.answer())["content"] == "No memories yet."


async def test_intentions_cancel_buttons_are_their_owners_alone(
    fake: FakeDiscord, bot: Bot, adapter: DiscordAdapter
):
    scope = f"pip/discord:{fake.guild_id}:channel:{fake.channel_id}:user:{ALICE}"
    now = bot.clock.now()
    due = now + timedelta(days=1)
    await bot.store.add_intention(
        NewIntention(scope, str(ALICE), "reminder", "call mum", "call mum", due, due, now)
    )
    await fake.slash("intentions", {}, user_id=ALICE)
    listed = await fake.answer()
    assert listed["flags"] & 64 and listed["content"].startswith("1. Reminder: call mum (")
    await fake.click(listed, "Cancel 1", user_id=BOB)
    refused = await fake.next_response()
    assert refused["type"] == 4 and refused["data"]["flags"] & 64
    assert len(await bot.store.intentions(scope, str(ALICE))) == 1
    await fake.click(listed, "Cancel 1", user_id=ALICE)
    done = await fake.next_response()
    assert done["data"]["content"] == "Cancelled: call mum. Pip won't bring it up."
    assert await bot.store.intentions(scope, str(ALICE)) == []
    await fake.slash("timezone", {"name": "Europe/Paris"}, user_id=ALICE)
    assert (await fake.answer())["content"].startswith("Your time zone is now Europe/Paris")


async def test_wipe_needs_confirmation(fake: FakeDiscord, adapter: DiscordAdapter):
    await fake.slash("remember", {"text": "my cat is called Mochi"}, user_id=ALICE)
    await fake.answer()
    await fake.slash("wipe", user_id=ALICE)
    asked = await fake.answer()
    await fake.click(asked, "Cancel", user_id=ALICE)
    assert (await fake.next_response())["data"]["content"] == "Cancelled."
    await fake.slash("memories", {}, user_id=ALICE)
    assert "Mochi" in (await fake.answer())["content"]

    await fake.slash("wipe", user_id=ALICE)
    await fake.click(await fake.answer(), "Wipe", user_id=ALICE)
    assert (await fake.next_response())["data"]["content"] == (
        "Wiped: Pip remembers nothing of you now."
    )
    await fake.slash("memories", {}, user_id=ALICE)
    assert (await fake.answer())["content"] == "No memories yet."


async def test_state_and_export(fake: FakeDiscord, adapter: DiscordAdapter):
    await fake.slash("state", user_id=ALICE)
    assert (await fake.answer())["content"] == "Pip keeps no state."
    await fake.slash("diary", user_id=ALICE)
    assert (await fake.answer())["content"] == "The diary is empty so far."
    await fake.slash("diary", {"day": "yesterday"}, user_id=ALICE)
    assert (await fake.answer())["content"].startswith("No diary page for ")
    await fake.slash("profile", user_id=ALICE)
    assert "knows nothing about you yet" in (await fake.answer())["content"]
    await fake.slash("remember", {"text": "my cat is called Mochi"}, user_id=ALICE)
    await fake.answer()
    await fake.slash("export", user_id=ALICE, guild=False)
    exported = await fake.answer()
    assert exported["flags"] & 64 and exported["content"] == "0 memories."  # the DM is apart
    await fake.slash("export", user_id=ALICE)
    exported = await fake.answer()
    [memory] = json.loads(exported["_files"]["memories.json"])["memories"]
    assert memory["text"] == "my cat is called Mochi" and memory["kind"] == "explicit"
    assert memory["speaker_id"] == str(ALICE)  # who said it, by the platform's id


async def test_bound_channel_answers_everything(fake: FakeDiscord, bot: Bot):
    running = DiscordAdapter(
        bot.engine,
        bot.services,
        "pip",
        "t",
        bot_id="b",
        channel_ids=[fake.channel_id],
        guild_ready_timeout=0.05,
    )
    await running.start()
    try:
        await fake.dispatch_message(fake.channel_id, ALICE, "no mention needed here")
        assert (await fake.next_message())["content"] == "ok"
    finally:
        await running.close()


async def test_commands_synced_globally(fake: FakeDiscord, adapter: DiscordAdapter):
    synced = fake.commands[f"/applications/{fake.app_id}/commands"]
    names = {c["name"] for c in synced}
    assert {"remember", "recall", "memories", "forget", "end", "wipe", "state", "export"} <= names
    assert {"diary", "profile"} <= names


async def test_commands_synced_to_guilds(fake: FakeDiscord, bot: Bot):
    running = DiscordAdapter(
        bot.engine,
        bot.services,
        "pip",
        DISCORD_TOKEN,
        bot_id="b",
        guild_ids=[fake.guild_id],
        guild_ready_timeout=0.05,
    )
    await running.start()
    try:
        path = f"/applications/{fake.app_id}/guilds/{fake.guild_id}/commands"
        assert "remember" in {c["name"] for c in fake.commands[path]}
    finally:
        await running.close()


async def test_end_in_a_dm(fake: FakeDiscord, adapter: DiscordAdapter):
    await fake.dispatch_message(5555, ALICE, "hi", guild=False)
    await fake.next_message()
    await fake.slash("end", user_id=ALICE, guild=False, channel_id=5555)
    await fake.next_response()
    assert (await fake.next_response())[
        "content"
    ] == "Conversation ended; it goes to long-term memory."


# --- several personas behind one bot --------------------------------------------------------


def said_by(sent: dict[str, Any]) -> tuple[str, str]:
    """(who, what): a webhook message's username and content."""
    assert "webhook_id" in sent, sent
    return sent["username"], sent["content"]


@pytest.fixture
async def duo(fake: FakeDiscord, tmp_path: Path) -> AsyncIterator[tuple[Bot, DiscordAdapter]]:
    personas = [make_persona("pip", name="Pip"), make_persona("bo", name="Bo", nickname="B")]
    kizuna = await open_bot(tmp_path / "duo.sqlite3", personas)
    running = DiscordAdapter(
        kizuna.engine,
        kizuna.services,
        ["pip", "bo"],
        DISCORD_TOKEN,
        bot_id="duo",
        channel_ids=[fake.channel_id],
        guild_ready_timeout=0.05,
    )
    await running.start()
    try:
        yield kizuna, running
    finally:
        await running.close()
        await kizuna.close()


async def test_a_name_at_the_start_picks_the_persona(
    fake: FakeDiscord, duo: tuple[Bot, DiscordAdapter]
):
    bot, _ = duo
    await fake.dispatch_message(fake.channel_id, ALICE, "hello there")
    assert said_by(await fake.next_message()) == ("Pip", "ok")
    await fake.dispatch_message(fake.channel_id, ALICE, "Bo, what do you think?")
    assert said_by(await fake.next_message()) == ("Bo", "ok")
    await fake.dispatch_message(fake.channel_id, ALICE, "b: and you?")  # the nickname
    assert said_by(await fake.next_message()) == ("Bo", "ok")
    # Both speak through one webhook the bot made in the channel.
    [hook] = fake.webhooks[str(fake.channel_id)]
    assert hook["name"] == "Kizuna"
    # Each persona keeps its own conversation with Alice.
    guild, alice, channel = str(fake.guild_id), str(ALICE), str(fake.channel_id)
    pip = await bot.engine.session(
        make_event(persona="pip", is_dm=False, chat_id=guild, channel_id=channel, user_id=alice)
    )
    bo = await bot.engine.session(
        make_event(persona="bo", is_dm=False, chat_id=guild, channel_id=channel, user_id=alice)
    )
    assert [t.text for t in pip.turns if t.role == "user"] == ["hello there"]
    assert [t.text for t in bo.turns if t.role == "user"] == [
        "Bo, what do you think?",
        "b: and you?",
    ]


async def test_personas_of_one_bot_answer_each_other_by_name_within_the_bound(
    fake: FakeDiscord, duo: tuple[Bot, DiscordAdapter]
):
    """Their webhook's messages never come back as messages (the adapter drops them): they
    hear each other through the engine's relay (bot.groups.relay)."""
    bot, _ = duo
    bot.model.push("[NEUTRAL] Bo, tea?", "[NEUTRAL] Pip, yes!", "[NEUTRAL] Bo, great.")
    await fake.dispatch_message(fake.channel_id, ALICE, "Pip, ask someone about tea")
    assert said_by(await fake.next_message()) == ("Pip", "Bo, tea?")
    assert said_by(await fake.next_message()) == ("Bo", "Pip, yes!")
    assert said_by(await fake.next_message()) == ("Pip", "Bo, great.")
    assert await fake.no_message()  # two replies between them: Bo hears, says nothing
    assert len(bot.model.calls) == 3


async def test_persona_set_binds_the_channel_for_those_who_may(
    fake: FakeDiscord, duo: tuple[Bot, DiscordAdapter]
):
    await fake.slash("persona", user_id=ALICE)
    shown = (await fake.answer())["content"]
    assert shown.startswith("Here you talk with Pip (pip).") and "Bo (bo)" in shown

    await fake.slash("persona", {"action": "set", "name": "Bo"}, user_id=BOB, permissions=0)
    assert (
        "Only an admin of this chat can choose who talks here." in (await fake.answer())["content"]
    )

    manage_channels = 1 << 4
    await fake.slash(
        "persona", {"action": "set", "name": "bo"}, user_id=ALICE, permissions=manage_channels
    )
    assert (await fake.answer())["content"] == "From now on Bo talks in this channel."
    await fake.dispatch_message(fake.channel_id, BOB, "who is here?")
    assert said_by(await fake.next_message()) == ("Bo", "ok")
    await fake.dispatch_message(fake.channel_id, BOB, "Pip, are you here too?")
    assert said_by(await fake.next_message()) == ("Pip", "ok")  # a name still wins

    await fake.slash("persona", {"action": "set", "name": "nobody"}, user_id=ALICE)
    assert "No persona 'nobody' here" in (await fake.answer())["content"]


async def test_without_manage_webhooks_personas_sign_in_bold(
    fake: FakeDiscord, duo: tuple[Bot, DiscordAdapter]
):
    fake.manage_webhooks = False
    await fake.dispatch_message(fake.channel_id, ALICE, "Bo, hello")
    sent = await fake.next_message()
    assert sent["content"] == "**Bo**: ok" and "webhook_id" not in sent
    await fake.dispatch_message(fake.channel_id, ALICE, "hi", guild=False)  # a DM: no webhook
    assert (await fake.next_message())["content"] == "**Pip**: ok"
    asked = [r for r in fake.requests if r.path.endswith("/webhooks")]
    assert len(asked) == 1  # the refusal is remembered, not asked again each message


async def test_access_lists_by_role_cover_messages_and_commands(
    fake: FakeDiscord, bot: Bot, adapter: DiscordAdapter
):
    regular, muted = 2100, 2200
    bot.engine.admission.gate = Gate(
        AccessConfig(allow_roles=[str(regular)], block_roles=[str(muted)])
    )
    hello = f"{mention(fake)} hello"
    await fake.dispatch_message(fake.channel_id, ALICE, hello, mentions_bot=True, roles=[regular])
    assert (await fake.next_message())["content"] == "ok"
    for roles in ([], [regular, muted]):  # no allowed role; a blocked one wins
        await fake.dispatch_message(fake.channel_id, BOB, hello, mentions_bot=True, roles=roles)
        assert await fake.no_message()
    assert len(bot.model.calls) == 1

    await fake.slash("remember", {"text": "I like tea"}, user_id=BOB, roles=[muted])
    assert (await fake.answer())["content"] == "You can't use this bot here."
    await fake.slash("memories", user_id=BOB, roles=[regular])
    assert "tea" not in (await fake.answer())["content"]  # nothing was stored


async def test_two_tokens_in_one_process_are_two_bots(fake: FakeDiscord, tmp_path: Path):
    """One client per token: each bot answers its own mentions as its own persona."""
    personas = [make_persona("pip", name="Pip"), make_persona("bo", name="Bo")]
    kizuna = await open_bot(tmp_path / "two.sqlite3", personas)
    fake.bots[OTHER_DISCORD_TOKEN] = bo_bot = 1001
    pip = DiscordAdapter(
        kizuna.engine,
        kizuna.services,
        "pip",
        DISCORD_TOKEN,
        bot_id="d-pip",
        guild_ready_timeout=0.05,
    )
    bo = DiscordAdapter(
        kizuna.engine,
        kizuna.services,
        "bo",
        OTHER_DISCORD_TOKEN,
        bot_id="d-bo",
        guild_ready_timeout=0.05,
    )
    await pip.start()
    await bo.start()
    try:
        assert pip.client.user is not None and pip.client.user.id == fake.bot_id
        assert bo.client.user is not None and bo.client.user.id == bo_bot
        await fake.dispatch_message(
            fake.channel_id, ALICE, f"<@{bo_bot}> hi Bo", mentions_bot=bo_bot
        )
        sent = await fake.next_message()
        assert sent["_bot"] == bo_bot and sent["content"] == "ok"
        await fake.dispatch_message(
            fake.channel_id, ALICE, f"{mention(fake)} hi", mentions_bot=True
        )
        assert (await fake.next_message())["_bot"] == fake.bot_id
        assert await fake.no_message()  # each message answered once, by the bot it mentioned
        guild, alice, channel = str(fake.guild_id), str(ALICE), str(fake.channel_id)
        # Each persona also heard (and keeps) what was said to the other, the other's mention
        # as its name (the fake names every bot "Kizuna").
        heard = {"pip": ["@Kizuna hi Bo", "hi"], "bo": ["hi Bo", "@Kizuna hi"]}
        for persona, said in heard.items():
            event = make_event(
                persona=persona, is_dm=False, chat_id=guild, channel_id=channel, user_id=alice
            )
            session = await kizuna.engine.session(event)
            assert [t.text for t in session.turns if t.role == "user"] == said
        assert len(kizuna.model.calls) == 2
    finally:
        await bo.close()
        await pip.close()
        await kizuna.close()


async def test_a_document_opens_document_mode(fake: FakeDiscord, bot: Bot, adapter: DiscordAdapter):
    notes = fake.attachment("trip.txt", b"The ferry to Bergen leaves at 7:40 from pier 3.")
    await fake.dispatch_message(fake.channel_id, ALICE, "", guild=False, attachments=[notes])
    opened = await fake.next_message()
    assert opened["content"].startswith("I've read trip.txt.")
    [summary] = bot.model.calls
    assert "ferry to Bergen" in summary.text
    await fake.dispatch_message(fake.channel_id, ALICE, "when does it leave?", guild=False)
    await fake.next_message()
    assert "7:40" in bot.model.calls[-1].system
    huge = fake.attachment("huge.pdf", b"%PDF-", size=50 * 1024 * 1024)
    await fake.dispatch_message(fake.channel_id, ALICE, "", guild=False, attachments=[huge])
    assert (await fake.next_message())["content"].startswith("huge.pdf: is too big")
    fetched = [r.path for r in fake.requests if r.path.startswith("/attachments/")]
    assert len(fetched) == 1  # the big one was never downloaded


async def test_a_photo_is_fetched_and_described_and_a_sticker_told_by_its_name(
    fake: FakeDiscord, bot: Bot, adapter: DiscordAdapter
):
    bot.model.push("A red square.", "[NEUTRAL] Nice.")
    photo = fake.attachment("red.png", make_picture(1800, 900), content_type="image/png")
    await fake.dispatch_message(fake.channel_id, ALICE, "look", guild=False, attachments=[photo])
    assert (await fake.next_message())["content"] == "Nice."
    describe, chat = bot.model.calls
    [jpeg] = describe.messages[-1].images
    with Image.open(BytesIO(jpeg)) as image:
        assert image.size == (1024, 512)
    assert chat.messages[-1].content == "look [picture red.png, seen: A red square.]"
    gif = fake.attachment("party.gif", b"GIF89a", content_type="image/gif")
    await fake.dispatch_message(
        fake.channel_id,
        ALICE,
        "",
        guild=False,
        attachments=[gif],
        sticker_items=[fake.sticker("Wave")],
    )
    await fake.next_message()
    assert bot.model.calls[-1].messages[-1].content == "[GIF: party.gif] [sticker: Wave]"
    big = fake.attachment("big.png", b"\x89PNG", content_type="image/png", size=40 << 20)
    await fake.dispatch_message(fake.channel_id, ALICE, "", guild=False, attachments=[big])
    assert (await fake.next_message())["content"].startswith("big.png is too big for me")
    fetched = [r.path for r in fake.requests if r.path.startswith("/attachments/")]
    assert len(fetched) == 1  # the photo only: neither the GIF nor the big one


async def test_shards_each_take_their_own_events(fake: FakeDiscord, bot: Bot):
    sharded = DiscordAdapter(
        bot.engine,
        bot.services,
        "pip",
        DISCORD_TOKEN,
        bot_id="d-sharded",
        shard_ids=[0, 1],
        shard_count=2,
        guild_ready_timeout=0.05,
    )
    await sharded.start()
    try:
        assert sorted(fake.shards.values()) == [(0, 2), (1, 2)]
        await fake.dispatch_message(
            fake.channel_id, ALICE, f"{mention(fake)} hi", mentions_bot=True
        )
        await fake.dispatch_message(fake.channel_id + 7, BOB, "hello", guild=False)
        assert [(await fake.next_message())["content"] for _ in range(2)] == ["ok", "ok"]
        assert await fake.no_message()  # one shard answered each, not both
        assert len(bot.model.calls) == 2
    finally:
        await sharded.close()


async def test_the_fake_gateway_shards_guilds_as_discord_does(fake: FakeDiscord) -> None:
    """An AutoShardedClient told no count runs what GET /gateway/bot recommends; each shard
    is sent only its own guilds (shard (guild id >> 22) % count) and their messages, a DM
    only shard 0."""
    fake.recommended_shards = 2
    other = 1 << 22 | fake.guild_id  # shard 1 of 2 (the first guild is shard 0's)
    fake.add_guild(other, fake.channel_id + 1)
    heard: asyncio.Queue[discord.Message] = asyncio.Queue()
    client = discord.AutoShardedClient(
        intents=discord.Intents.default(), guild_ready_timeout=0.05, chunk_guilds_at_startup=False
    )

    @client.event
    async def on_message(message: discord.Message) -> None:
        await heard.put(message)

    await client.login(DISCORD_TOKEN)
    running = asyncio.create_task(client.connect())
    try:
        await asyncio.wait_for(client.wait_until_ready(), 10)
        assert client.shard_count == 2 and sorted(fake.shards.values()) == [(0, 2), (1, 2)]
        assert {g.id: g.shard_id for g in client.guilds} == {fake.guild_id: 0, other: 1}
        for channel, guild, shard in ((fake.channel_id + 1, other, 1), (7001, None, 0)):
            sent = await fake.dispatch_message(channel, ALICE, "hi", guild=guild is not None)
            message = await asyncio.wait_for(heard.get(), 5)
            assert (message.guild and message.guild.id) == guild
            assert [s for _, i, s in fake.delivered if i == sent["id"]] == [(shard, 2)]
        assert heard.empty()
    finally:
        await client.close()
        running.cancel()


async def test_only_people_speaking_are_answered_even_in_a_bound_channel(
    fake: FakeDiscord, bot: Bot
) -> None:
    """Webhooks (a PluralKit-style proxy posting as "Alice"), other bots and apps, Discord's
    own system user and system messages are no one to remember or answer."""
    running = DiscordAdapter(
        bot.engine,
        bot.services,
        "pip",
        "t",
        bot_id="b",
        channel_ids=[fake.channel_id],
        guild_ready_timeout=0.05,
    )
    await running.start()
    channel, hi = fake.channel_id, f"{mention(fake)} what is my bank pin?"
    try:
        await fake.dispatch_webhook_message(channel, 7000, "Alice", hi, mentions_bot=True)
        # The same without the bot flag (a Discord-compatible server may leave it out).
        unflagged = fake.user(7001) | {"username": "Alice"}
        await fake.dispatch_message(
            channel, 7001, hi, author=unflagged, webhook_id="7001", mentions_bot=True
        )
        await fake.dispatch_message(
            channel, 7002, hi, author=fake.user(7002, bot=True), mentions_bot=True
        )
        # An app's answer to someone's slash command (type 20).
        await fake.dispatch_message(
            channel, 7003, "done", author=fake.user(7003, bot=True), type=20
        )
        discord_itself = fake.user(643945264868098049) | {"system": True}
        await fake.dispatch_message(channel, 0, hi, author=discord_itself)
        # A member joined (7), a thread opened (18, its text the thread's name), a pin (6).
        for kind, text in ((7, ""), (18, "plans for friday"), (6, "")):
            await fake.dispatch_message(channel, BOB, text, type=kind)
        await fake.dispatch_message(channel, ALICE, "hello, it's really me")
        assert (await fake.next_message())["content"] == "ok"
        assert await fake.no_message(0.2)
    finally:
        await running.close()
    [call] = bot.model.calls
    assert "really me" in call.text and "bank pin" not in call.text
    assert {s.scope for s in bot.sessions.all()} == {
        f"discord:{fake.guild_id}:channel:{fake.channel_id}:user:{ALICE}"
    }


async def test_a_persona_called_by_name_answers_and_hears_the_rest(
    fake: FakeDiscord, bot: Bot, adapter: DiscordAdapter
) -> None:
    """No mention, no reply: the bot hears the channel and decides (bot.groups.floor)."""
    await fake.dispatch_message(fake.channel_id, BOB, "lunch at noon?")
    await fake.dispatch_message(fake.channel_id, ALICE, "pip, what do you think?")
    assert (await fake.next_message())["content"] == "ok"
    assert await fake.no_message()
    [call] = bot.model.calls
    assert "what do you think" in call.text
    bob = make_event(
        is_dm=False, chat_id=str(fake.guild_id), channel_id=str(fake.channel_id), user_id=str(BOB)
    )
    session = await bot.engine.session(bob)
    assert [t.text for t in session.turns] == ["lunch at noon?"]  # heard, kept, unanswered
    assert not session.dirty  # saved as it joined
    # Typing shows only while the persona answers.
    assert sum(r.path == f"/channels/{fake.channel_id}/typing" for r in fake.requests) == 1


async def test_a_burst_in_a_dm_is_answered_once(fake: FakeDiscord, tmp_path: Path) -> None:
    windowed = EngineConfig(timezone="UTC", burst_seconds=2.0)
    kizuna = await open_bot(tmp_path / "burst.sqlite3", settings=windowed)
    timer = kizuna.timer
    assert timer is not None
    running = DiscordAdapter(
        kizuna.engine, kizuna.services, "pip", "t", bot_id="b", guild_ready_timeout=0.05
    )
    await running.start()
    try:
        for text in ("hey", "so about", "that tea?"):
            started = timer.started
            await fake.dispatch_message(5555, ALICE, text, guild=False)
            async with asyncio.timeout(10):  # (a guard: the gateway is a socket)
                while True:  # until its message waits out the window
                    if timer.started > started:
                        break
                    await asyncio.sleep(0.01)
            await timer.advance(1.0)
        await timer.advance(2.0)
        assert (await fake.next_message())["content"] == "ok"
        assert await fake.no_message()
        [call] = kizuna.model.calls
        assert [m.content for m in call.turns] == ["hey", "so about", "that tea?"]
    finally:
        await running.close()
        await kizuna.close()


async def test_a_reply_threads_to_its_message_when_others_spoke_in_between(
    fake: FakeDiscord, tmp_path: Path
) -> None:
    windowed = EngineConfig(timezone="UTC", burst_seconds=2.0)
    kizuna = await open_bot(tmp_path / "thread.sqlite3", settings=windowed)
    timer = kizuna.timer
    assert timer is not None
    running = DiscordAdapter(
        kizuna.engine, kizuna.services, "pip", "t", bot_id="b", guild_ready_timeout=0.05
    )
    await running.start()

    async def said(author: int, text: str, **options: Any) -> dict[str, Any]:
        started = timer.started
        data = await fake.dispatch_message(fake.channel_id, author, text, **options)
        async with asyncio.timeout(10):  # until it waits out its burst's window
            while True:
                if timer.started > started:
                    break
                await asyncio.sleep(0.01)
        return data

    try:
        asked = await said(ALICE, f"{mention(fake)} what tea is best?", mentions_bot=True)
        await timer.advance(0.5)
        await said(BOB, "I like coffee myself")  # said before the answer
        await timer.advance(2.5)
        first = await fake.next_message()
        assert first["content"] == "ok"
        assert str(first["message_reference"]["message_id"]) == asked["id"]
        # Asked again with no one in between: the answer simply follows.
        await said(ALICE, f"{mention(fake)} and green tea?", mentions_bot=True)
        await timer.advance(2.5)
        second = await fake.next_message()
        assert second["content"] == "ok" and "message_reference" not in second
    finally:
        await running.close()
        await kizuna.close()


async def test_a_plain_thanks_gets_a_reaction_of_the_last_replys_emotion(
    fake: FakeDiscord, tmp_path: Path
) -> None:
    pip = make_persona(reactions={"NEUTRAL": "👌", "SAD": "😢"})
    model = ScriptedChatModel(["[SAD] It rained all day."])
    bot = await open_bot(tmp_path / "k.sqlite3", [pip], model=model)
    adapter = DiscordAdapter(
        bot.engine,
        bot.services,
        "pip",
        DISCORD_TOKEN,
        bot_id="discord-pip",
        guild_ready_timeout=0.05,
    )
    await adapter.start()
    try:
        await fake.dispatch_message(5555, ALICE, "how was your day?", guild=False)
        assert (await fake.next_message())["content"] == "It rained all day."
        thanks = await fake.dispatch_message(5555, ALICE, "ok 👍", guild=False)
        reacted = await fake.next_reaction()
        assert reacted == {**reacted, "channel_id": "5555", "message_id": thanks["id"]}
        assert reacted["emoji"] == "😢"
        assert await fake.no_message()
        assert len(model.calls) == 1
    finally:
        await adapter.close()
        await bot.close()


async def test_a_voice_message_is_heard_as_the_users_words(
    fake: FakeDiscord, tmp_path: Path
) -> None:
    router = ModelRouter(dict.fromkeys(TIERS, OfflineChatModel()))
    bot = await open_bot(tmp_path / "k.sqlite3", router=router)
    adapter = DiscordAdapter(
        bot.engine,
        bot.services,
        "pip",
        DISCORD_TOKEN,
        bot_id="discord-pip",
        guild_ready_timeout=0.05,
    )
    await adapter.start()
    try:
        note = fake.attachment("voice-message.ogg", b"OggS" + bytes(3000), content_type="audio/ogg")
        await fake.dispatch_message(5555, ALICE, "", guild=False, attachments=[note], flags=8192)
        assert (await fake.next_message())["content"]
        dm = make_event(user_id=str(ALICE))
        [user, _] = [t.text for t in (await bot.desk.info(dm)).turns]
        assert user == "[voice] (offline model: a recording of 2 KB, not transcribed)"
        assert bot.engine.models.usage["hearing"].recordings == 1
    finally:
        await adapter.close()
        await bot.close()


async def test_a_reply_said_aloud_follows_its_text_as_an_ogg_file(
    fake: FakeDiscord, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    router = await speaking_router(fake_openai.base_url)
    pip = make_persona(voice=VoicePolicy(speak="always"))
    bot = await open_bot(tmp_path / "k.sqlite3", [pip], router=router)
    adapter = DiscordAdapter(
        bot.engine,
        bot.services,
        "pip",
        DISCORD_TOKEN,
        bot_id="discord-pip",
        guild_ready_timeout=0.05,
    )
    await adapter.start()
    try:
        fake_openai.reply_text("[HAPPY] Good morning!")
        await fake.dispatch_message(5555, ALICE, "morning!", guild=False)
        text = await fake.next_message()
        assert text["content"] == "Good morning!"
        audio = await fake.next_message()
        assert audio["channel_id"] == "5555" and not audio.get("content")
        assert audio["_files"] == {"reply.ogg": ogg_opus()}  # Discord plays it in place
        assert [a["filename"] for a in audio["attachments"]] == ["reply.ogg"]
        assert fake_openai.speeches[0]["input"] == "Good morning!"
    finally:
        await adapter.close()
        await bot.close()


async def test_a_persona_of_several_says_its_reply_aloud_through_its_webhook(
    fake: FakeDiscord, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    router = await speaking_router(fake_openai.base_url)
    pip = make_persona("pip", name="Pip", voice=VoicePolicy(speak="always"))
    bo = make_persona("bo", name="Bo")  # never speaks aloud
    bot = await open_bot(tmp_path / "duo.sqlite3", [pip, bo], router=router)
    adapter = DiscordAdapter(
        bot.engine,
        bot.services,
        ["pip", "bo"],
        DISCORD_TOKEN,
        bot_id="duo",
        channel_ids=[fake.channel_id],
        guild_ready_timeout=0.05,
    )
    await adapter.start()
    try:
        fake_openai.reply_text("[HAPPY] Hello, everyone!")
        await fake.dispatch_message(fake.channel_id, ALICE, "Pip, say hi")
        assert said_by(await fake.next_message()) == ("Pip", "Hello, everyone!")
        audio = await fake.next_message()
        assert "webhook_id" in audio and audio["username"] == "Pip"
        assert audio["_files"] == {"reply.ogg": ogg_opus()}
        fake_openai.reply_text("[NEUTRAL] Hi.")
        await fake.dispatch_message(fake.channel_id, ALICE, "Bo, and you?")
        assert said_by(await fake.next_message()) == ("Bo", "Hi.")
        assert await fake.no_message()  # Bo has no voice
        assert len(fake_openai.speeches) == 1
    finally:
        await adapter.close()
        await bot.close()


# --- tools: whom a call acts for, and who is an admin ---------------------------------------

MANAGE_CHANNELS = 1 << 4
MEMBER = (1 << 10) | (1 << 11) | (1 << 16)  # view the channel, send, read its history
MODS = 2300  # a role that manages channels
VAULT = CustomTool("vault", module="tests.fakes.tools:secretive", admin_only=True)


def offered(call: ModelCall) -> set[str]:
    return {tool.name for tool in call.tools}


async def test_an_admin_only_tool_is_for_those_who_manage_the_channel(
    fake: FakeDiscord, tmp_path: Path
) -> None:
    """A message carries the rule of commands: Manage Channels (here through a role) or a
    configured admin id is an admin, a member is not; worked out by discord.py from the
    server's roles, with no request."""
    fake.everyone_permissions = MEMBER
    fake.roles[MODS] = "Mods"
    fake.role_permissions[MODS] = MANAGE_CHANNELS
    kizuna = await open_bot(tmp_path / "k.sqlite3", [tool_persona(VAULT)])
    with_tools(kizuna)
    running = DiscordAdapter(
        kizuna.engine,
        kizuna.services,
        "pip",
        "t",
        bot_id="b",
        admin_ids=["44"],
        guild_ready_timeout=0.05,
    )
    await running.start()
    try:
        for author, roles, admin in ((ALICE, [MODS], True), (BOB, [], False), (44, [], True)):
            kizuna.model.push(calling("vault", {}), "[NEUTRAL] done")
            await fake.dispatch_message(
                fake.channel_id, author, f"{mention(fake)} open it", mentions_bot=True, roles=roles
            )
            assert (await fake.next_message())["content"] == "done"
            first, answered = kizuna.model.calls[-2:]
            assert ("vault" in offered(first)) is admin
            said = answered.messages[-1].content
            assert said == ('"the vault is open"' if admin else TOOL_ADMINS_ONLY)
        assert not any("/members/" in r.path for r in fake.requests)
    finally:
        await running.close()
        await kizuna.close()


async def test_a_burst_of_two_members_acts_for_neither_and_one_alone_for_them(
    fake: FakeDiscord, tmp_path: Path
) -> None:
    """Bob asks for a reminder as Alice says hi: the turn is not Bob's alone, so no tool acts
    for a person (a call anyway keeps nothing); asked again alone, the reminder and the host
    tool act for Bob, by his id."""
    fake.everyone_permissions = MEMBER
    windowed = EngineConfig(timezone="UTC", burst_seconds=2.0)
    kizuna = await open_bot(tmp_path / "k.sqlite3", [tool_persona()], settings=windowed)
    with_tools(kizuna)
    timer = kizuna.timer
    assert timer is not None
    running = DiscordAdapter(
        kizuna.engine, kizuna.services, "pip", "t", bot_id="b", guild_ready_timeout=0.05
    )
    await running.start()

    async def said(author: int, text: str) -> None:
        started = timer.started
        await fake.dispatch_message(
            fake.channel_id, author, f"{mention(fake)} {text}", mentions_bot=True
        )
        async with asyncio.timeout(10):  # until it waits out its burst's window
            while True:
                if timer.started > started:
                    break
                await asyncio.sleep(0.01)

    try:
        remind = {"what": "call mum", "when": "on Friday"}
        kizuna.model.push(calling("reminder", remind), "[NEUTRAL] ok")
        await said(BOB, "remind me on Friday to call mum")
        await timer.advance(0.5)
        await said(ALICE, "hi")
        await timer.advance(2.5)
        assert (await fake.next_message())["content"] == "ok"
        first, answered = kizuna.model.calls_with(json_mode=False)
        assert offered(first) == {"recall_memory", "dice"}
        assert answered.messages[-1].content == TOOL_FOR_ONE
        room = make_event(is_dm=False, chat_id=str(fake.guild_id), channel_id=str(fake.channel_id))
        scope = kizuna.desk.event_scope(room)
        assert await kizuna.store.intentions(scope, str(BOB)) == []
        assert await kizuna.store.intentions(scope, str(ALICE)) == []

        kizuna.model.push(calling("reminder", remind), calling("where", {}), "[NEUTRAL] set")
        await said(BOB, "remind me on Friday to call mum")
        await timer.advance(2.5)
        assert (await fake.next_message())["content"] == "set"
        tool = kizuna.model.calls[-1].messages[-1]
        assert tool.content == f'"scope={scope} user={BOB} admin=False note="'
        [kept] = await kizuna.store.intentions(scope, str(BOB))
        assert (kept.kind, kept.what) == ("reminder", "call mum")
        assert await kizuna.store.intentions(scope, str(ALICE)) == []
    finally:
        await running.close()
        await kizuna.close()


@pytest.mark.parametrize("share_channels", [False, True])
async def test_what_alice_says_in_mods_comes_up_in_general_only_where_channels_are_shared(
    fake: FakeDiscord, tmp_path: Path, share_channels: bool
) -> None:
    """#mods has other readers than #general: a user-scoped persona keeps a member's corner
    per channel, unless its file says a server's channels share one."""
    persona = make_persona()
    persona = replace(persona, memory=replace(persona.memory, share_channels=share_channels))
    kizuna = await open_bot(tmp_path / "k.sqlite3", [persona])
    running = DiscordAdapter(
        kizuna.engine,
        kizuna.services,
        "pip",
        DISCORD_TOKEN,
        bot_id="discord-pip",
        guild_ready_timeout=0.05,
    )
    await running.start()
    try:
        mods, general = fake.mods_channel_id, fake.channel_id
        await fake.slash(
            "remember",
            {"text": "the moderators' password is swordfish"},
            user_id=ALICE,
            channel_id=mods,
        )
        await fake.answer()
        await fake.dispatch_message(
            mods, ALICE, f"{mention(fake)} we ban Carolyn tomorrow", mentions_bot=True
        )
        await fake.next_message()
        await fake.dispatch_message(general, BOB, "hi everyone")
        await fake.dispatch_message(
            general, ALICE, f"{mention(fake)} what is the password?", mentions_bot=True
        )
        sent = await fake.next_message()
        assert sent["channel_id"] == str(general)
        prompt = kizuna.model.calls[-1].text
        assert ("swordfish" in prompt) is share_channels
        assert ("Carolyn" in prompt) is share_channels
        # What the member asked /recall in #general finds is what #general may hear.
        await fake.slash("recall", {"query": "password"}, user_id=ALICE, channel_id=general)
        assert ("swordfish" in (await fake.answer())["content"]) is share_channels
    finally:
        await running.close()
        await kizuna.close()


async def test_a_memory_of_the_server_with_no_channel_stays_out_until_wiped(
    fake: FakeDiscord, bot: Bot, adapter: DiscordAdapter
) -> None:
    """What a database of before kept of a member in a whole server, with no record of the
    channel it was said in, comes up in no channel; the member's wipe in one channel takes
    it, and their corner of every other channel, too."""
    unplaced = f"pip/discord:{fake.guild_id}:user:{ALICE}"
    await bot.bank.remember(unplaced, "the moderators' password is swordfish")
    mods = f"pip/discord:{fake.guild_id}:channel:{fake.mods_channel_id}:user:{ALICE}"
    await bot.bank.remember(mods, "we ban Carolyn tomorrow")
    bobs = f"pip/discord:{fake.guild_id}:channel:{fake.mods_channel_id}:user:{BOB}"
    await bot.bank.remember(bobs, "Bob keeps the ban list")
    await fake.dispatch_message(
        fake.channel_id, ALICE, f"{mention(fake)} what is the password?", mentions_bot=True
    )
    await fake.next_message()
    assert "swordfish" not in bot.model.calls[-1].text
    await fake.slash("wipe", user_id=ALICE)
    await fake.click(await fake.answer(), "Wipe", user_id=ALICE)
    await fake.next_response()
    assert await bot.bank.count(unplaced) == 0
    assert await bot.bank.count(mods) == 0
    assert await bot.bank.count(bobs) == 1  # (not hers)


async def test_a_memory_is_shown_under_its_speakers_name_now(
    fake: FakeDiscord, bot: Bot, adapter: DiscordAdapter
) -> None:
    """Bob, going by "Alice" in the server, has something remembered; once he is "Bob" again,
    the memory is his under the name he has now, in the prompt and in what commands show,
    with "Alice" one of the names he went by."""
    fake.nicks[BOB] = "Alice"
    await fake.slash("remember", {"text": "I promised to give Bob my horse"}, user_id=BOB)
    await fake.answer()
    fake.nicks[BOB] = "Bob"
    await fake.dispatch_message(
        fake.channel_id,
        BOB,
        f"{mention(fake)} what did I promise about my horse?",
        mentions_bot=True,
    )
    await fake.next_message()
    prompt = bot.model.calls[-1].text
    assert '"Bob": "I promised to give Bob my horse"' in prompt
    assert '"Alice": "I promised' not in prompt
    assert '- "Bob": also "Alice"' in prompt
    for name, options in [
        ("memories", {}),
        ("recall", {"query": "horse"}),
        ("forget", {"query": "horse"}),
    ]:
        await fake.slash(name, options, user_id=BOB)
        shown = (await fake.answer())["content"]
        assert "Bob: I promised to give Bob my horse" in shown, name
        assert "Alice" not in shown, name
