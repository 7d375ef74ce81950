"""Shared memory obeys who may change it, the same way on Discord and Telegram: the tavern
keeper's memory of a channel is the channel's, so wiping it, exporting it, forgetting its
entries and changing its state take a server or chat admin (or a configured admin id), in
slash commands, buttons and text commands alike; the question before a wipe says what is
really lost; a member still forgets their own memories of a user-scoped persona. And what a
user typed never reaches a log line, even when their command fails. End to end through
discord.py and python-telegram-bot against the loopback fakes."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.discord import DiscordAdapter
from bot.commands import memory as memory_commands
from bot.events import ChatEvent
from bot.persona.file import StateSlot
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.factories import Bot, make_event, make_persona, open_bot
from tests.fakes.logs import logged_errors
from tests.fakes.platforms import telegram_adapter
from tests.fakes.secrets import DISCORD_TOKEN
from tests.fakes.telegram_server import FakeTelegram

REFUSED = "What Tavern remembers here belongs to the whole channel: only an admin may change it."
ASKED = (
    "Forget this channel's conversation and everything Tavern remembers of this channel, "
    "for everyone in it?"
)
WIPED = "Wiped: Tavern remembers nothing of this channel now."
TAVERN_MEMORY = "The party owes the innkeeper forty gold crowns"
MANAGE_CHANNELS, MANAGE_GUILD, SEND_MESSAGES = 1 << 4, 1 << 5, 1 << 11
# A word of a user's own, to find in any log record.
TYPED = "pelicanquince"


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[Bot]:
    personas = [
        make_persona(
            "tavern",
            name="Tavern",
            scope="channel",
            state=[StateSlot(name="party", instructions="who is in the party", update="once")],
        ),
        make_persona("pip", name="Pip"),
    ]
    opened = await open_bot(tmp_path / "k.sqlite3", personas)
    try:
        yield opened
    finally:
        await opened.close()


async def count(bot: Bot, scope: str) -> int:
    return await bot.bank.count(scope)


# -- Discord -----------------------------------------------------------------------------------

MEMBER, ADMIN, HOST = 42, 43, 44


@pytest.fixture
async def discord_bot(fake_discord: FakeDiscord, bot: Bot) -> AsyncIterator[DiscordAdapter]:
    adapter = DiscordAdapter(
        bot.engine,
        bot.services,
        ["tavern", "pip"],
        DISCORD_TOKEN,
        bot_id="d",
        admin_ids=[str(HOST)],
        guild_ready_timeout=0.05,
    )
    await adapter.start()
    try:
        with logged_errors("discord", "adapters.discord"):
            yield adapter
    finally:
        await adapter.close()


async def test_discord_members_cannot_change_a_channels_memory(
    fake_discord: FakeDiscord, discord_bot: DiscordAdapter, bot: Bot
) -> None:
    fake = fake_discord
    channel = f"tavern/discord:{fake.guild_id}:channel:{fake.channel_id}"
    await bot.bank.remember(channel, TAVERN_MEMORY)
    for name, options in [
        ("wipe", {}),
        ("forget", {"query": "innkeeper gold"}),
        ("export", {}),
        ("state", {"slot": "party", "value": "nobody"}),
    ]:
        await fake.slash(name, options, user_id=MEMBER, permissions=SEND_MESSAGES)
        said = await fake.answer()
        assert said["content"] == REFUSED, name
        assert not said.get("components") and not said.get("_files"), name
    assert await count(bot, channel) == 1
    # The memory is still everyone's to see.
    await fake.slash("memories", {}, user_id=MEMBER, permissions=SEND_MESSAGES)
    assert "innkeeper" in (await fake.answer())["content"]


@pytest.mark.parametrize(
    ("user", "permissions"),
    [
        pytest.param(ADMIN, MANAGE_CHANNELS, id="manage-channels"),
        pytest.param(ADMIN, MANAGE_GUILD, id="manage-server"),
        pytest.param(HOST, SEND_MESSAGES, id="admin-id"),
    ],
)
async def test_discord_admins_wipe_a_channels_memory_after_a_true_question(
    fake_discord: FakeDiscord, discord_bot: DiscordAdapter, bot: Bot, user: int, permissions: int
) -> None:
    fake = fake_discord
    channel = f"tavern/discord:{fake.guild_id}:channel:{fake.channel_id}"
    await bot.bank.remember(channel, TAVERN_MEMORY)
    await fake.slash("forget", {"query": "innkeeper gold"}, user_id=user, permissions=permissions)
    listed = await fake.answer()
    assert "innkeeper" in listed["content"]
    await fake.slash("wipe", {}, user_id=user, permissions=permissions)
    asked = await fake.answer()
    assert asked["content"] == ASKED
    await fake.click(asked, "Wipe", user_id=user)
    assert (await fake.next_response())["data"]["content"] == WIPED
    assert await count(bot, channel) == 0


async def test_discord_members_forget_their_own_memories(
    fake_discord: FakeDiscord, discord_bot: DiscordAdapter, bot: Bot
) -> None:
    fake = fake_discord
    await bot.store.bind_channel("d", str(fake.channel_id), "pip", "test", bot.engine.clock.now())
    own = f"pip/discord:{fake.guild_id}:channel:{fake.channel_id}:user:{MEMBER}"
    await bot.bank.remember(own, "Member 42 keeps a lucky pebble")
    await fake.slash("forget", {"query": "lucky pebble"}, user_id=MEMBER, permissions=0)
    listed = await fake.answer()
    await fake.click(listed, "1", user_id=MEMBER)
    assert (await fake.next_response())["data"]["content"].startswith("Forgotten:")
    assert await count(bot, own) == 0


# -- Telegram ----------------------------------------------------------------------------------

GROUP, T_MEMBER, T_ADMIN, T_HOST = -1002, 7, 8, 9


@pytest.fixture
def telegram_errors() -> Iterator[None]:
    with logged_errors("telegram", "adapters.telegram"):
        yield


async def test_telegram_members_cannot_change_a_channels_memory(
    bot: Bot, telegram_errors: None
) -> None:
    channel = f"tavern/telegram:{GROUP}:channel:{GROUP}"
    await bot.bank.remember(channel, TAVERN_MEMORY)
    async with FakeTelegram() as fake:
        adapter = telegram_adapter(bot, fake, ["tavern", "pip"], admin_ids=[str(T_HOST)])
        await adapter.start()
        try:
            for text in ["/wipe", "/forget innkeeper gold", "/export", "/state set party no one"]:
                fake.send_text(GROUP, T_MEMBER, text, chat_type="supergroup")
                [said] = await fake.next_messages()
                assert said["text"] == REFUSED, text
            assert await count(bot, channel) == 1
            assert (await bot.desk.info(tavern_event(T_MEMBER))).state == {}

            fake.admins.add((GROUP, T_ADMIN))
            fake.send_text(T_ADMIN, T_ADMIN, "/start")  # so answers may reach them privately
            await fake.next_messages()
            fake.send_text(GROUP, T_ADMIN, "/forget innkeeper gold", chat_type="supergroup")
            listed, told = await fake.next_messages(2)
            assert "innkeeper" in listed["text"] and listed["chat"]["id"] == T_ADMIN
            assert "innkeeper" not in told["text"]
            fake.send_text(GROUP, T_ADMIN, "/forget 1", chat_type="supergroup")
            gone, _ = await fake.next_messages(2)
            assert gone["text"].endswith(f"Forgotten: {TAVERN_MEMORY}")
            await bot.bank.remember(channel, TAVERN_MEMORY)
            # A configured admin id, though no admin of the chat, may too.
            fake.send_text(GROUP, T_HOST, "/wipe", chat_type="supergroup")
            [asked] = await fake.next_messages()
            assert asked["text"] == ASKED
            fake.press(asked, "Wipe", T_MEMBER)  # not theirs to press
            await fake.until_answered()
            assert fake.answered[-1]["text"] == "These buttons are not yours."
            # A modified client sends data of its own for the button: made up, or the real
            # data with the member as the one who may press.
            signed = asked["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
            forged = signed.replace(str(T_HOST), str(T_MEMBER))
            made_up = f"wipe|yes|{T_MEMBER}|{GROUP}|AAAAAAAAAAAA"
            for data in (forged, made_up, "wipe|yes"):
                fake.press(asked, "Wipe", T_MEMBER, data=data)
                await fake.until_answered()
            assert await count(bot, channel) == 1
            fake.press(asked, "Wipe", T_HOST)
            [wiped] = await fake.next_messages()
            assert wiped["text"] == WIPED
            assert await count(bot, channel) == 0
        finally:
            await adapter.close()


def tavern_event(user: int) -> ChatEvent:
    return make_event(
        "",
        platform="telegram",
        persona="tavern",
        user_id=str(user),
        is_dm=False,
        chat_id=str(GROUP),
        channel_id=str(GROUP),
    )


# -- logs --------------------------------------------------------------------------------------


async def test_a_failing_command_logs_its_name_and_error_never_the_text(
    bot: Bot, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> None:
        raise ValueError(f"no good: {args[-1]!r}")  # an error that quotes what was typed

    monkeypatch.setattr(memory_commands, "list_memories", broken)
    async with FakeTelegram() as fake:
        adapter = telegram_adapter(bot, fake, "pip")
        await adapter.start()
        try:
            with caplog.at_level(logging.DEBUG):
                fake.send_text(T_MEMBER, T_MEMBER, f"/memories {TYPED}")
                [apology] = await fake.next_messages()
        finally:
            await adapter.close()
    assert apology["text"].startswith("Sorry")
    failures = [r for r in caplog.records if r.name == "adapters.telegram"]
    assert [r.levelno for r in failures] == [logging.ERROR]
    line = failures[0].getMessage()
    assert "/memories" in line and "ValueError" in line
    # Every record at the levels `kizuna` logs (INFO with --verbose; the libraries' DEBUG
    # records carry whole updates, and are never on).
    logged = "\n".join(
        r.getMessage() + (logging.Formatter().formatException(r.exc_info) if r.exc_info else "")
        for r in caplog.records
        if r.levelno >= logging.INFO
    )
    assert TYPED not in logged
