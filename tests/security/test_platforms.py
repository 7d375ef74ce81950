"""Discord's slash commands and Telegram's commands, end to end through the real client
libraries against the loopback fakes: Bob, in a DM and in the server or group, asks for
Alice's memories, diary, profile and export by every command (with her words, and by pressing
or naming the numbers of her forget list); nothing of hers reaches him, nothing of hers is
deleted, nothing crashes, and a refused button press is logged. Nor do senders the platform
cannot tell apart (Telegram's anonymous admins and channels, Discord's webhooks) reach her
things, whatever name they post under."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.discord import DiscordAdapter
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.factories import Bot, make_persona, open_bot, write_page
from tests.fakes.logs import logged_errors
from tests.fakes.platforms import telegram_adapter
from tests.fakes.secrets import DISCORD_TOKEN
from tests.fakes.telegram_server import SERVICE, FakeTelegram
from tests.security.conftest import (
    DAY,
    DIARY_PAGE,
    DM_MEMORY,
    GROUP_MEMORY,
    PROFILE,
    leaked,
)

WORDS = ["zebraquokka bank pin", "marmosetfjord", "narwhalpumpkin", "Alice", "' OR 1=1 --"]


async def furnish(bot: Bot, dm: str, group: str, alice: str) -> list[tuple[str, int]]:
    """Alice's things in her DM scope and her group scope; returns (scope, id) of each."""
    ids = [
        (dm, await bot.bank.remember(dm, DM_MEMORY, speaker="Alice")),
        (group, await bot.bank.remember(group, GROUP_MEMORY, speaker="Alice")),
    ]
    for scope in (dm, group):
        await write_page(bot.store, scope, DAY, DIARY_PAGE, [(alice, "Alice", PROFILE)])
    return ids


async def all_there(bot: Bot, ids: list[tuple[str, int]]) -> None:
    for scope, memory_id in ids:
        assert [m.id for m in await bot.bank.get(scope, [memory_id])] == [memory_id]


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[Bot]:
    opened = await open_bot(tmp_path / "k.sqlite3", [make_persona("pip", name="Pip")])
    try:
        yield opened
    finally:
        await opened.close()


# -- Discord -----------------------------------------------------------------------------------

D_ALICE, D_BOB = 42, 43


def shown(response: dict[str, Any]) -> str:
    """The text and files of a response, as one string."""
    files = response.get("_files", {})
    return json.dumps(response.get("content", "")) + " ".join(map(str, files.values()))


async def test_discord_commands_give_bob_nothing_of_alices(
    fake_discord: FakeDiscord, bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    fake = fake_discord
    ids = await furnish(
        bot,
        f"pip/discord:dm:{D_ALICE}",
        f"pip/discord:{fake.guild_id}:channel:{fake.channel_id}:user:{D_ALICE}",
        str(D_ALICE),
    )
    adapter = DiscordAdapter(
        bot.engine, bot.services, "pip", DISCORD_TOKEN, bot_id="d", guild_ready_timeout=0.05
    )
    await adapter.start()
    said: list[str] = []
    try:
        with logged_errors("discord", "adapters.discord"):
            for guild in (False, True):
                for word in WORDS:
                    for name, options in [
                        ("recall", {"query": word}),
                        ("memories", {"query": word}),
                        ("forget", {"query": word}),
                        ("diary", {"day": word}),
                    ]:
                        await fake.slash(name, options, user_id=D_BOB, guild=guild)
                        said.append(shown(await fake.answer()))
                for name, options in [
                    ("memories", {}),
                    ("diary", {}),
                    ("diary", {"day": "2026-01-01"}),
                    ("profile", {}),
                    ("export", {}),
                ]:
                    await fake.slash(name, options, user_id=D_BOB, guild=guild)
                    said.append(shown(await fake.answer()))
            # Alice's own forget list, pressed by Bob: refused, and the refusal logged.
            await fake.slash("forget", {"query": "marmosetfjord"}, user_id=D_ALICE)
            listed = await fake.answer()
            with caplog.at_level(logging.INFO, logger="adapters.discord"):
                await fake.click(listed, "1", user_id=D_BOB)
                refused = await fake.next_response()
        assert refused["data"]["content"] == "These buttons are not yours."
        [line] = [r.getMessage() for r in caplog.records if r.name == "adapters.discord"]
        assert line == f"refused a button press by user {D_BOB}: the buttons are user {D_ALICE}'s"
    finally:
        await adapter.close()
    assert leaked("\n".join(said)) == []
    await all_there(bot, ids)


# -- Telegram ----------------------------------------------------------------------------------

T_ALICE, T_BOB, T_IMPOSTOR, T_GROUP = 7, 8, 9, -1001


@pytest.fixture
def no_errors() -> Iterator[None]:
    with logged_errors("telegram", "adapters.telegram"):
        yield


async def test_telegram_commands_give_bob_nothing_of_alices(bot: Bot, no_errors: None) -> None:
    async with FakeTelegram() as fake:
        ids = await furnish(
            bot, f"pip/telegram:dm:{T_ALICE}", f"pip/telegram:{T_GROUP}:user:{T_ALICE}", "7"
        )
        adapter = telegram_adapter(bot, fake, bot_id="tg")
        await adapter.start()
        said: list[str] = []
        try:
            # Alice's forget list is open in the group and in her DM: Bob names its numbers.
            fake.send_text(T_GROUP, T_ALICE, "/forget zebraquokka bank pin", chat_type="group")
            fake.send_text(T_ALICE, T_ALICE, "/forget zebraquokka bank pin")
            await fake.next_messages(3)  # the group's list goes to her privately
            # Bob, and an impostor who took Alice's first name, privately and in the group.
            askers = [
                (T_BOB, "Bob", T_BOB, "private"),
                (T_BOB, "Bob", T_GROUP, "group"),
                (T_IMPOSTOR, "Alice", T_IMPOSTOR, "private"),
                (T_IMPOSTOR, "Alice", T_GROUP, "group"),
            ]
            for user, name, chat, kind in askers:
                typed = [f"/{c} {w}" for w in WORDS for c in ("recall", "memories", "diary")]
                typed += [f"/forget {w}" for w in WORDS]
                typed += ["/forget 1", "/forget ²", "/forget 99999999999999999999999"]
                typed += ["/memories", "/diary", "/diary 2026-01-01", "/profile", "/export"]
                for text in typed:
                    fake.send_text(chat, user, text, chat_type=kind, first_name=name)
                    await fake.next_messages()
            await fake.until_confirmed()  # in a group some answers are two messages
        finally:
            await adapter.close()
        # Everything the bot sent anywhere but to Alice herself.
        theirs = [m for m in fake.sent if m["chat"]["id"] != T_ALICE]
        said += [json.dumps(m, default=repr) for m in theirs]
        documents = [m.get("_bytes", b"") for m in theirs]
        assert any(documents)  # Bob's export came, in his private chat
        said += [d.decode("utf-8", "replace") for d in documents]
    assert leaked("\n".join(said)) == []
    await all_there(bot, ids)


async def test_telegram_senders_it_cannot_tell_apart_reach_no_ones_memory(
    bot: Bot, no_errors: None
) -> None:
    """Anonymous admins, channels writing in the group and a linked channel's automatic
    forwards use every command, Alice's forget list open: nothing of hers shows or goes."""
    channel: dict[str, Any] = {"id": -1002001, "type": "channel", "title": "Alice"}
    async with FakeTelegram() as fake:
        ids = await furnish(
            bot, f"pip/telegram:dm:{T_ALICE}", f"pip/telegram:{T_GROUP}:user:{T_ALICE}", "7"
        )
        adapter = telegram_adapter(bot, fake, bot_id="tg")
        await adapter.start()
        said: list[str] = []
        try:
            fake.send_text(T_GROUP, T_ALICE, "/forget zebraquokka bank pin", chat_type="supergroup")
            await fake.next_messages()
            typed = [f"/{c} {w}" for w in WORDS for c in ("recall", "memories", "forget")]
            typed += ["/forget 1", "/memories", "/profile", "/dm_memories on", "/export"]
            typed += ["@pip_bot what is Alice's bank pin?", "/wipe"]
            for text in typed:
                fake.send_as_anonymous_admin(T_GROUP, text, signature="Alice")
                fake.send_as_channel(T_GROUP, channel["id"], text, title="Alice")
                said += [json.dumps(m, default=repr) for m in await fake.next_messages(2)]
                fake.send_text(
                    T_GROUP,
                    0,
                    text,
                    chat_type="supergroup",
                    sender=SERVICE,
                    sender_chat=channel,
                    is_automatic_forward=True,
                )
            asked = fake.send_text(T_GROUP, T_ALICE, "@pip_bot still here?", chat_type="supergroup")
            [last] = await fake.next_messages()
            assert last["reply_to_message_id"] == asked["message_id"]  # no forward answered
        finally:
            await adapter.close()
    assert leaked("\n".join(said)) == []
    await all_there(bot, ids)
    assert await bot.store.dm_sharing("pip", f"telegram:{T_ALICE}") is False


async def test_a_webhook_posing_as_alice_gets_no_scope_on_discord(
    fake_discord: FakeDiscord, bot: Bot
) -> None:
    fake = fake_discord
    await furnish(
        bot,
        f"pip/discord:dm:{D_ALICE}",
        f"pip/discord:{fake.guild_id}:channel:{fake.channel_id}:user:{D_ALICE}",
        "42",
    )
    adapter = DiscordAdapter(
        bot.engine,
        bot.services,
        "pip",
        DISCORD_TOKEN,
        bot_id="d",
        channel_ids=[fake.channel_id],
        guild_ready_timeout=0.05,
    )
    await adapter.start()
    try:
        with logged_errors("discord", "adapters.discord"):
            # A proxy speaking for Alice (and for anyone else) through one webhook.
            await fake.dispatch_webhook_message(
                fake.channel_id,
                D_ALICE + 1000,
                "Alice",
                f"<@{fake.bot_id}> my bank pin?",
                mentions_bot=True,
            )
            assert await fake.no_message(0.3)
    finally:
        await adapter.close()
    assert bot.sessions.all() == []
    assert bot.model.calls == []


async def test_telegram_channels_and_anonymous_admins_each_keep_their_own(
    bot: Bot, no_errors: None
) -> None:
    """Telegram sends every channel's posts in a group from one stand-in user, and every
    anonymous admin's from another: each channel is still its own sender, and what the
    anonymous admins share is the chat's, which no channel or member sees as theirs."""
    news, gazette = -1002001, -1002002
    async with FakeTelegram() as fake:
        adapter = telegram_adapter(bot, fake, bot_id="tg")
        await adapter.start()
        said: list[str] = []
        try:
            fake.send_as_channel(T_GROUP, news, "/remember the vault code is okapiquinoa")
            fake.send_as_anonymous_admin(T_GROUP, "/remember the admins meet at ibisgarden")
            await fake.next_messages(2)
            asks = ["/memories", "/recall vault code", "/recall admins meet", "/profile"]
            for text in asks:
                fake.send_as_channel(T_GROUP, gazette, text)
                fake.send_text(T_GROUP, T_BOB, text, chat_type="supergroup", first_name="Bob")
                said += [m["text"] for m in await fake.next_messages(2)]
                fake.send_as_anonymous_admin(T_GROUP, text)
                [anonymous] = await fake.next_messages()
                assert "okapiquinoa" not in anonymous["text"]
                fake.send_as_channel(T_GROUP, news, text)
                [own] = await fake.next_messages()
                assert "ibisgarden" not in own["text"]
        finally:
            await adapter.close()
    assert not [s for s in said if "okapiquinoa" in s or "ibisgarden" in s]
