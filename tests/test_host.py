"""`kizuna run`'s host: every configured bot in one process over one runtime, against the
loopback fakes of Discord and Telegram, with the offline model."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import discord
import pytest

from adapters.command.host import BotStartError, host
from adapters.kinds import RULES
from bot.config import BotConfig, Config, EngineConfig, load_config
from bot.persona.file import OutreachPolicy
from bot.tomlfile import TomlError
from memory.clock import FakeClock
from memory.records import NewIntention
from memory.storage import DATABASE
from memory.storage.sqlite import Store
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.factories import make_persona, no_ollama
from tests.fakes.logs import logged_errors
from tests.fakes.telegram_server import FakeTelegram

ALICE = 4242


@pytest.fixture(autouse=True)
def errors() -> Iterator[list[logging.LogRecord]]:
    """What the libraries log as errors fails the test, unless the test expected it."""
    with logged_errors("discord", "telegram", "adapters") as records:
        yield records


@pytest.fixture
async def discord_fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeDiscord]:
    """The fake, reached through the bots' `base_url`; discord.py's process-wide addresses,
    which that sets, are put back afterwards."""
    monkeypatch.setattr(discord.http.Route, "BASE", discord.http.Route.BASE)
    gateway = discord.gateway.DiscordWebSocket
    monkeypatch.setattr(gateway, "DEFAULT_GATEWAY", gateway.DEFAULT_GATEWAY)
    async with FakeDiscord() as server:
        yield server


def config(tmp_path: Path, telegram: FakeTelegram, discord_api: str = "") -> Config:
    return Config(
        data_dir=str(tmp_path / "data"),
        engine=EngineConfig(timezone="UTC"),
        bots=[
            BotConfig("discord", "pip", token_env="KZ_DISCORD", base_url=discord_api),
            BotConfig("telegram", "bo", token_env="KZ_TELEGRAM", base_url=telegram.base_url),
        ],
    )


PERSONAS = {"pip": make_persona("pip", name="Pip"), "bo": make_persona("bo", name="Bo")}


async def test_two_platforms_two_personas_one_process(
    tmp_path: Path, discord_fake: FakeDiscord
) -> None:
    async with FakeTelegram() as telegram:
        environ = {"KZ_DISCORD": "discord-token", "KZ_TELEGRAM": telegram.token}
        stop = asyncio.Event()
        lines: list[str] = []
        hosting = asyncio.create_task(
            host(
                config(tmp_path, telegram, discord_fake.api_base),
                PERSONAS,
                environ,
                stop=stop,
                probe=no_ollama,
                announce=lines.append,
            )
        )
        await discord_fake.dispatch_message(
            discord_fake.channel_id, ALICE, "I live in Oslo", guild=False
        )
        said = await discord_fake.next_message(wait=10)
        assert "(offline model) Pip here." in said["content"]
        telegram.send_text(77, 77, "I live in Kyoto")
        [answer] = await telegram.next_messages(within=10)
        assert "(offline model) Bo here." in answer["text"]
        # A document is downloaded from the configured server, not the public one.
        telegram.send_document(77, 77, "trip.md", content=b"The ferry leaves at 7:40.")
        [opened] = await telegram.next_messages(within=10)
        assert "trip.md" in opened["text"] and "could not be downloaded" not in opened["text"]
        stop.set()
        await asyncio.wait_for(hosting, 30)
        assert lines == ["discord bot 'pip' is up: pip", "telegram bot 'bo' is up: bo"]
        # The gateway's address came from the configured API server.
        assert ("GET", "/gateway/bot") in [(r.method, r.path) for r in discord_fake.requests]

    # Stopped and saved: both conversations are in the one store, each with its persona.
    store = await Store.open(tmp_path / "data" / DATABASE)
    try:
        rows = {
            (r.persona, r.scope.split(":")[0]) for r in await store.load_sessions(["pip", "bo"])
        }
    finally:
        await store.close()
    assert rows == {("pip", "discord"), ("bo", "telegram")}


async def test_a_missing_token_is_named_before_anything_opens(tmp_path: Path) -> None:
    async with FakeTelegram() as telegram:
        cfg = config(tmp_path, telegram)
        with pytest.raises(TomlError, match=r"bots\[1\]\.token_env.*KZ_TELEGRAM"):
            await host(cfg, PERSONAS, {"KZ_DISCORD": "x"}, stop=asyncio.Event())
    assert not (tmp_path / "data").exists()


async def test_a_rejected_token_stops_the_others_cleanly(
    tmp_path: Path, discord_fake: FakeDiscord, errors: list[logging.LogRecord]
) -> None:
    async with FakeTelegram() as telegram:
        environ = {"KZ_DISCORD": "discord-token", "KZ_TELEGRAM": "999:wrong"}
        with pytest.raises(BotStartError, match="telegram bot 'bo' could not start"):
            await host(
                config(tmp_path, telegram, discord_fake.api_base),
                PERSONAS,
                environ,
                stop=asyncio.Event(),
                probe=no_ollama,
            )
    errors.clear()  # PTB logs the rejected token; that is this test's point
    # The store was closed on the way out: it opens again.
    store = await Store.open(tmp_path / "data" / DATABASE)
    await store.close()


async def test_a_missing_webhook_secret_is_named_too(tmp_path: Path) -> None:
    cfg = Config(
        data_dir=str(tmp_path / "data"),
        bots=[
            BotConfig(
                "telegram",
                "bo",
                token_env="KZ_TELEGRAM",
                webhook_url="https://bots.example/hook",
                webhook_secret_env="KZ_SECRET",
            )
        ],
    )
    with pytest.raises(TomlError, match=r"bots\[0\]\.webhook_secret_env.*KZ_SECRET"):
        await host(cfg, PERSONAS, {"KZ_TELEGRAM": "1:x"}, stop=asyncio.Event())


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"webhook_url": "http://x/h"}, "must start with https://"),
        ({"webhook_listen": "8443"}, "host:port"),
        ({"language": "fr"}, "language must be one of en, zh"),
    ],
)
def test_webhook_settings_are_checked(fields: dict[str, str], problem: str) -> None:
    settings = {"platform": "telegram", "persona": "bo", **fields}
    with pytest.raises(ValueError, match=problem):
        BotConfig(**settings)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ('platform = "discord"\nwebhook_url = "https://x/h"', "webhook_url is for telegram bots"),
        ('platform = "web"\nbase_url = "http://x/"', "base_url is for discord and telegram bots"),
    ],
)
def test_keys_of_other_platforms_are_refused(tmp_path: Path, table: str, problem: str) -> None:
    path = tmp_path / "kizuna.toml"
    path.write_text(f'[[bots]]\npersona = "bo"\ntoken_env = "T"\n{table}\n', encoding="utf-8")
    key = problem.split()[0]
    with pytest.raises(TomlError, match=rf"kizuna.toml:5: bots\[0\]\.{key}: {problem}$"):
        load_config(path, {}, RULES)


def test_discord_bots_share_one_api_server(tmp_path: Path) -> None:
    path = tmp_path / "kizuna.toml"
    path.write_text(
        "[[bots]]\n"
        'platform = "discord"\npersona = "pip"\ntoken_env = "A"\n'
        'base_url = "http://127.0.0.1:1/api/v10"\n\n'
        "[[bots]]\n"
        'platform = "discord"\npersona = "bo"\ntoken_env = "B"\n',
        encoding="utf-8",
    )
    with pytest.raises(TomlError, match=r"kizuna.toml:5: bots\[0\]\.base_url: every discord bot"):
        load_config(path, {}, RULES)


async def test_a_persona_writes_first_through_its_bot(tmp_path: Path) -> None:
    """The host hands its started bots to the runtime's outreach: a follow-up due when the
    host comes up goes out through python-telegram-bot, once, to the person's private chat."""
    now = datetime(2026, 12, 9, 12, tzinfo=UTC)
    clock = FakeClock(now)
    persona = make_persona("bo", name="Bo")
    persona.outreach = OutreachPolicy(enabled=True)
    async with FakeTelegram() as telegram:
        telegram.chat(77, "private")  # Alice started the bot
        cfg = config(tmp_path, telegram)
        cfg.bots = [b for b in cfg.bots if b.platform == "telegram"]
        store = await Store.open(tmp_path / "data" / DATABASE)
        try:
            await store.heard("bo", "telegram", "77", now - timedelta(days=1), private=True)
            await store.answered("bo", "telegram", "77", now - timedelta(days=1))
            await store.set_contact("bo", "telegram", "77", timezone="UTC", at=now)
            await store.add_intention(
                NewIntention(
                    scope="bo/telegram:dm:77",
                    user_id="77",
                    kind="follow_up",
                    what="the exam",
                    ask="ask how the exam went",
                    due_at=now - timedelta(hours=1),
                    until=now + timedelta(days=1),
                    created_at=now - timedelta(days=1),
                )
            )
        finally:
            await store.close()
        stop = asyncio.Event()
        hosting = asyncio.create_task(
            host(
                cfg,
                {"bo": persona},
                {"KZ_TELEGRAM": telegram.token},
                stop=stop,
                clock=clock,
                probe=no_ollama,
            )
        )
        [written] = await telegram.next_messages(within=10)
        assert written["chat"]["id"] == 77 and "Bo" in written["text"]
        stop.set()
        await asyncio.wait_for(hosting, 30)
    store = await Store.open(tmp_path / "data" / DATABASE)
    try:
        assert await store.intentions("bo/telegram:dm:77", "77") == []  # done: not again
    finally:
        await store.close()
