"""`kizuna run` as a real subprocess with the example configuration (its bots uncommented and
pointed at the loopback fakes by `base_url`, fake tokens in the environment, the web client on a
free port): all three come up and answer, and a SIGTERM stops the process cleanly with
everything saved."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from bot.persona.file import load_persona
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.factories import base_env, example_config_with_bots
from tests.fakes.process import free_port, lines_until, start_run
from tests.fakes.secrets import DISCORD_TOKEN as FAKE_DISCORD_TOKEN
from tests.fakes.telegram_server import FakeTelegram

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 30.0  # seconds: generous; the whole run takes about three
ALICE, BOB = 4242, 77
MIAO = load_persona(ROOT / "personas" / "miao.toml").identity.name


@pytest.fixture
async def fakes() -> AsyncIterator[tuple[FakeDiscord, FakeTelegram]]:
    async with FakeDiscord() as discord, FakeTelegram() as telegram:
        yield discord, telegram


def pointed_at(discord: FakeDiscord, telegram: FakeTelegram, web_port: int) -> str:
    text = example_config_with_bots()
    assert "\nport = 3000\n" in text
    text = text.replace("\nport = 3000\n", f"\nport = {web_port}\n")
    for variable, url in (
        ("DISCORD_TOKEN", discord.api_base),
        ("TELEGRAM_TOKEN", telegram.base_url),
    ):
        line = f'token_env = "{variable}"\n'
        assert line in text
        text = text.replace(line, f'{line}base_url = "{url}"\n')
    return text


async def test_kizuna_run_hosts_the_example_bots_until_sigterm(
    tmp_path: Path, fakes: tuple[FakeDiscord, FakeTelegram]
) -> None:
    discord, telegram = fakes
    config = tmp_path / "kizuna.toml"
    web_port = free_port()
    config.write_text(pointed_at(discord, telegram, web_port), encoding="utf-8")
    env = base_env(DISCORD_TOKEN=FAKE_DISCORD_TOKEN, TELEGRAM_TOKEN=telegram.token)
    # -v: httpx logs each request, and Telegram's URLs carry the token (scrubbed).
    process = await start_run(config, env, "-v")
    assert process.stderr is not None
    try:
        started = await lines_until(process.stderr, "discord bot", "telegram bot", "web client")
        assert any("discord bot 'monikai' is up: monikai, miao" in line for line in started)
        assert any("telegram bot 'dm-telegram' is up: dungeon_master" in line for line in started)
        assert any(f"http://127.0.0.1:{web_port}/" in line for line in started)

        # Discord: the default persona, and the second one by name through a webhook.
        mention = f"<@{discord.bot_id}>"
        await discord.dispatch_message(
            discord.channel_id, ALICE, f"{mention} hi, I'm Alice", mentions_bot=True
        )
        first = await discord.next_message(wait=TIMEOUT)
        assert first["username"] == "Monikai" and "(offline model)" in first["content"]
        await discord.dispatch_message(
            discord.channel_id, ALICE, f"{mention} Miao, 你好", mentions_bot=True
        )
        second = await discord.next_message(wait=TIMEOUT)
        assert second["username"] == MIAO and second["content"]

        # Telegram: the dungeon master in a private chat, and a memory command.
        telegram.send_text(BOB, BOB, "I roll for initiative")
        [answer] = await telegram.next_messages(within=TIMEOUT)
        assert "(offline model)" in answer["text"]
        telegram.send_text(BOB, BOB, "/remember my character is a halfling bard")
        [kept] = await telegram.next_messages(within=TIMEOUT)
        assert "remember" in kept["text"]

        # The web client: the dungeon master on the page.
        async with (
            aiohttp.ClientSession() as http,
            http.ws_connect(f"http://127.0.0.1:{web_port}/ws?persona=dungeon_master&user=cy") as ws,
        ):
            assert (await ws.receive_json(timeout=TIMEOUT))["type"] == "history"
            await ws.send_json({"text": "I open the dungeon door"})
            while (said := await ws.receive_json(timeout=TIMEOUT))["type"] == "thinking":
                pass
            assert said["type"] == "reply" and "(offline model)" in said["text"]
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(process.communicate(), TIMEOUT)

    assert process.returncode == 0, err.decode()
    assert "Kizuna stopped; everything is saved." in err.decode()
    assert "Traceback" not in err.decode()
    assert "/bot[redacted]/getUpdates" in err.decode() and telegram.token not in err.decode()
    db = sqlite3.connect(tmp_path / "data" / "kizuna.sqlite3")
    try:
        personas = {row[0] for row in db.execute("SELECT persona FROM sessions")}
        memories = [row[0] for row in db.execute("SELECT text FROM memories")]
    finally:
        db.close()
    assert personas == {"monikai", "miao", "dungeon_master"}
    assert any("halfling bard" in text for text in memories)
