"""The real platform libraries pointed at the loopback fakes: shared by the adapter tests, the
isolation suite and the fuzz tests."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

import discord
import pytest

from adapters.telegram import TelegramAdapter
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.factories import Bot
from tests.fakes.telegram_server import FakeTelegram

__all__ = ["discord_at", "telegram_adapter"]


@contextlib.asynccontextmanager
async def discord_at(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeDiscord]:
    """A fake Discord, with discord.py's API and gateway addresses pointed at it."""
    async with FakeDiscord() as server:
        monkeypatch.setattr(discord.http.Route, "BASE", server.api_base)
        monkeypatch.setattr(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", server.gateway_url)
        yield server


def telegram_adapter(
    bot: Bot,
    fake: FakeTelegram,
    personas: str | Sequence[str] = "pip",
    bot_id: str = "tg1",
    **options: Any,
) -> TelegramAdapter:
    """A polling Telegram adapter on the fake server, polling briefly (tests end quickly);
    `options` go to TelegramAdapter."""
    return TelegramAdapter(
        bot.engine,
        bot.services,
        personas,
        fake.token,
        bot_id=bot_id,
        base_url=fake.base_url,
        base_file_url=fake.base_file_url,
        poll_timeout=1,
        **options,
    )
