"""Writing first (bot.outreach.courier through adapters.surface.CourierSurface): the Telegram and
Discord
adapters, with the real python-telegram-bot and discord.py against the loopback fakes, send a
persona's message to a person's private chat by their id, and say what became of it: sent,
refused (never started the bot, blocked it, closed DMs) or unreachable (an outage). A failure
after the request left counts as sent, so a message is never written twice."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from adapters.command.host import couriers_of
from adapters.discord import DiscordAdapter
from adapters.telegram import TelegramAdapter
from adapters.web import WebServer
from bot.events import Reply
from bot.spoken import Spoken
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.factories import Bot, make_persona, open_bot
from tests.fakes.logs import logged_errors
from tests.fakes.platforms import discord_at, telegram_adapter
from tests.fakes.secrets import DISCORD_TOKEN
from tests.fakes.telegram_server import FakeTelegram

ALICE, BOB = 7, 8
HELLO = "How did the exam go?"


@pytest.fixture(autouse=True)
def no_errors() -> Iterator[list[logging.LogRecord]]:
    """The libraries only log errors in their handlers; a courier's unknown failure is an
    error too: any of them fails the test."""
    with logged_errors("telegram", "discord", "adapters") as records:
        yield records


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[Bot]:
    personas = [make_persona("pip"), make_persona("miao", name="Miao")]
    kizuna = await open_bot(tmp_path / "k.sqlite3", personas)
    try:
        yield kizuna
    finally:
        await kizuna.close()


def spoken(bot: Bot, text: str = HELLO, persona: str = "pip") -> Spoken:
    # As the outreach sender makes it: no chunks of its own, and it does not know the bot.
    return Spoken(bot.personas[persona], Reply(text, "NEUTRAL"), several=False)


# -- Telegram ----------------------------------------------------------------------------------


@pytest.fixture
async def telegram(bot: Bot) -> AsyncIterator[tuple[FakeTelegram, TelegramAdapter]]:
    async with FakeTelegram() as fake:
        # Telegram's answer is waited for briefly: the test of a timeout ends quickly.
        adapter = telegram_adapter(bot, fake, write_first_timeout=0.3)
        await adapter.start()
        try:
            yield fake, adapter
        finally:
            await adapter.close()


async def test_telegram_writes_first_to_a_user_who_started_the_bot(
    bot: Bot, telegram: tuple[FakeTelegram, TelegramAdapter]
) -> None:
    fake, adapter = telegram
    fake.send_text(ALICE, ALICE, "/start")  # pressing Start opens the private chat
    await fake.next_messages()
    assert await adapter.write_first(str(ALICE), spoken(bot)) == "sent"
    [sent] = await fake.next_messages()
    assert (sent["chat"]["id"], sent["text"]) == (ALICE, HELLO)  # one persona: unsigned
    assert (adapter.platform, adapter.bot_id) == ("telegram", "tg1")
    assert adapter.hosts("pip") and not adapter.hosts("miao")


async def test_telegram_refusals_send_nothing(
    bot: Bot, telegram: tuple[FakeTelegram, TelegramAdapter]
) -> None:
    fake, adapter = telegram
    # Never started the bot: Telegram lets no bot begin a conversation.
    assert await adapter.write_first(str(BOB), spoken(bot)) == "refused"
    fake.chat(ALICE, "private")
    fake.blocked.add(ALICE)
    assert await adapter.write_first(str(ALICE), spoken(bot)) == "refused"
    assert fake.sent == []
    assert len(fake.calls("sendMessage")) == 2


async def test_telegram_outage_is_unreachable_and_tried_again_later(
    bot: Bot, telegram: tuple[FakeTelegram, TelegramAdapter]
) -> None:
    fake, adapter = telegram
    fake.chat(ALICE, "private")
    fake.fail("sendMessage", "outage")
    assert await adapter.write_first(str(ALICE), spoken(bot)) == "unreachable"
    assert fake.sent == []
    assert await adapter.write_first(str(ALICE), spoken(bot)) == "sent"
    assert [m["text"] for m in fake.sent] == [HELLO]


@pytest.mark.parametrize("how", ["hang", "drop"])
async def test_telegram_failure_after_the_request_left_counts_as_sent(
    bot: Bot, telegram: tuple[FakeTelegram, TelegramAdapter], how: str
) -> None:
    """Telegram delivered it but the answer never came (a timeout: PTB's TimedOut; a dropped
    connection): sent, so the sender never writes it a second time."""
    fake, adapter = telegram
    fake.chat(ALICE, "private")
    fake.fail("sendMessage", "hang" if how == "hang" else "drop")
    assert await adapter.write_first(str(ALICE), spoken(bot)) == "sent"
    assert [m["text"] for m in fake.sent] == [HELLO]
    assert len(fake.calls("sendMessage")) == 1


async def test_telegram_long_message_goes_in_parts_and_a_part_sent_is_the_message_sent(
    bot: Bot, telegram: tuple[FakeTelegram, TelegramAdapter]
) -> None:
    fake, adapter = telegram
    fake.chat(ALICE, "private")
    long = "word " * 1500  # 7,500 characters: two of Telegram's messages
    assert await adapter.write_first(str(ALICE), spoken(bot, long)) == "sent"
    assert [len(m["text"]) <= 4096 for m in fake.sent] == [True, True]
    assert " ".join(m["text"] for m in fake.sent) == long.strip()
    # The second part fails: the first went, so the message is sent, never begun again.
    fake.fail("sendMessage", "outage", after=1)
    assert await adapter.write_first(str(ALICE), spoken(bot, long)) == "sent"
    assert len(fake.sent) == 3


async def test_telegram_bot_of_several_personas_signs_its_first_words(
    bot: Bot, telegram: tuple[FakeTelegram, TelegramAdapter]
) -> None:
    fake, _ = telegram
    fake.chat(ALICE, "private")
    both = telegram_adapter(bot, fake, ["pip", "miao"], bot_id="tg2")
    assert both.hosts("miao") and both.hosts("pip")
    await both.app.initialize()  # writing first needs no polling
    try:
        assert await both.write_first(str(ALICE), spoken(bot, persona="miao")) == "sent"
    finally:
        await both.app.shutdown()
    assert [m["text"] for m in fake.sent] == [f"Miao: {HELLO}"]


async def test_nothing_to_say_is_not_sent(
    bot: Bot, telegram: tuple[FakeTelegram, TelegramAdapter]
) -> None:
    fake, adapter = telegram
    fake.chat(ALICE, "private")
    assert await adapter.write_first(str(ALICE), spoken(bot, "  ")) == "unreachable"
    assert fake.calls("sendMessage") == []


async def test_a_failure_that_is_no_platform_error_is_logged_and_never_raised(
    bot: Bot,
    telegram: tuple[FakeTelegram, TelegramAdapter],
    no_errors: list[logging.LogRecord],
) -> None:
    fake, adapter = telegram
    assert await adapter.write_first("not a telegram id", spoken(bot)) == "unreachable"
    [record] = no_errors
    assert record.getMessage().startswith("writing first to telegram user not a telegram id")
    assert HELLO not in record.getMessage()  # what the persona meant to say stays out of logs
    no_errors.clear()
    assert fake.calls("sendMessage") == []


# -- Discord -----------------------------------------------------------------------------------


@pytest.fixture
async def fake_discord(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeDiscord]:
    async with discord_at(monkeypatch) as server:
        yield server


async def started_discord(bot: Bot, personas: list[str]) -> DiscordAdapter:
    adapter = DiscordAdapter(
        bot.engine,
        bot.services,
        personas,
        DISCORD_TOKEN,
        bot_id="discord-pip",
        guild_ready_timeout=0.05,
    )
    await adapter.start()
    return adapter


@pytest.fixture
async def discord_bot(bot: Bot, fake_discord: FakeDiscord) -> AsyncIterator[DiscordAdapter]:
    adapter = await started_discord(bot, ["pip"])
    try:
        yield adapter
    finally:
        await adapter.close()


def posted(fake: FakeDiscord) -> list[tuple[str, str]]:
    """(channel, text) of each message the bot posted since the last call (none refused)."""
    found = []
    while not fake.messages.empty():
        message = fake.messages.get_nowait()
        found.append((message["channel_id"], message["content"]))
    return found


async def test_discord_opens_a_dm_by_id_and_writes_first(
    bot: Bot, fake_discord: FakeDiscord, discord_bot: DiscordAdapter
) -> None:
    assert await discord_bot.write_first(str(ALICE), spoken(bot)) == "sent"
    [(dm, user)] = fake_discord.dms.items()
    assert user == ALICE
    assert posted(fake_discord) == [(dm, HELLO)]
    assert (discord_bot.platform, discord_bot.bot_id) == ("discord", "discord-pip")
    # The DM is opened once: discord.py keeps it.
    assert await discord_bot.write_first(str(ALICE), spoken(bot, "again")) == "sent"
    opened = [r for r in fake_discord.requests if r.path == "/users/@me/channels"]
    assert len(opened) == 1
    assert posted(fake_discord) == [(dm, "again")]


async def test_discord_closed_dms_are_refused(
    bot: Bot, fake_discord: FakeDiscord, discord_bot: DiscordAdapter
) -> None:
    fake_discord.closed_dms.add(BOB)  # no shared server, or DMs from its members closed
    assert await discord_bot.write_first(str(BOB), spoken(bot)) == "refused"
    assert await discord_bot.write_first(str(ALICE), spoken(bot)) == "sent"
    [alice] = [dm for dm, user in fake_discord.dms.items() if user == ALICE]
    assert posted(fake_discord) == [(alice, HELLO)]


async def test_discord_outages_are_unreachable(
    bot: Bot, fake_discord: FakeDiscord, discord_bot: DiscordAdapter
) -> None:
    fake_discord.fail("POST /users/@me/channels", "outage")
    assert await discord_bot.write_first(str(ALICE), spoken(bot)) == "unreachable"
    fake_discord.fail("POST /channels/*/messages", "outage")
    assert await discord_bot.write_first(str(ALICE), spoken(bot)) == "unreachable"
    assert posted(fake_discord) == []
    assert await discord_bot.write_first(str(ALICE), spoken(bot)) == "sent"
    assert [text for _, text in posted(fake_discord)] == [HELLO]


async def test_discord_a_lost_answer_counts_as_sent_only_once_the_message_left(
    bot: Bot, fake_discord: FakeDiscord, discord_bot: DiscordAdapter
) -> None:
    # Opening the DM lost its answer: nothing of the message left, so it is tried again.
    fake_discord.fail("POST /users/@me/channels", "drop")
    assert await discord_bot.write_first(str(ALICE), spoken(bot)) == "unreachable"
    assert posted(fake_discord) == []
    # The message itself lost its answer: Discord may have posted it, so it is sent.
    fake_discord.fail("POST /channels/*/messages", "drop")
    assert await discord_bot.write_first(str(ALICE), spoken(bot)) == "sent"
    assert [text for _, text in posted(fake_discord)] == [HELLO]
    posts = [r for r in fake_discord.requests if r.path.endswith("/messages")]
    assert len(posts) == 1


async def test_discord_bot_of_several_personas_signs_in_bold(
    bot: Bot, fake_discord: FakeDiscord
) -> None:
    adapter = await started_discord(bot, ["pip", "miao"])
    try:
        assert await adapter.write_first(str(ALICE), spoken(bot, persona="miao")) == "sent"
    finally:
        await adapter.close()
    assert [text for _, text in posted(fake_discord)] == [f"**Miao**: {HELLO}"]


# -- the host ----------------------------------------------------------------------------------


async def test_couriers_of_started_bots_are_telegram_and_discord_not_the_web_client(
    bot: Bot, telegram: tuple[FakeTelegram, TelegramAdapter], discord_bot: DiscordAdapter
) -> None:
    _, adapter = telegram
    web = WebServer(bot.engine, bot.services, bot.store, bot.bank, ["pip"])
    couriers = couriers_of([web, adapter, discord_bot])
    assert [(c.platform, c.bot_id) for c in couriers] == [
        ("telegram", "tg1"),
        ("discord", "discord-pip"),
    ]
