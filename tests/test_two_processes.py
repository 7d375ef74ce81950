"""Two `kizuna run` processes sharing one PostgreSQL database.

Discord: each hosts a bot of the same persona on the fake Discord server; both answer, every
conversation is encoded exactly once (each process encodes, a scope at a time under its lock),
and a memory made through one process is recalled through the other. Telegram: one bot in
webhook mode behind a "load balancer" that hands each update of one chat to either process;
the chat stays one conversation, its turns taken in order."""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import asyncpg
import pytest

from tests.fakes.discord_server import FakeDiscord
from tests.fakes.factories import base_env
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.process import free_port, start_run
from tests.fakes.secrets import (
    DISCORD_TOKEN,
    OPENAI_API_KEY,
    OTHER_DISCORD_TOKEN,
    WEBHOOK_SECRET,
)
from tests.fakes.telegram_server import FakeTelegram

TIMEOUT = 30.0
ALICE, BOB = 4242, 4343
PIP = """
[identity]
name = "Pip"
personality = "A cheerful test persona."

[memory]
idle_minutes = {idle}
"""
QUICK = 0.02  # a conversation quiet for a second goes to long-term memory
NEVER = 600.0  # one conversation, however slow a loaded machine makes its turns


def config(tmp_path: Path, name: str, bot: str, *, idle: float = QUICK) -> Path:
    """One process's folder: Pip (conversations closing after `idle` minutes), and a
    kizuna.toml on PostgreSQL hosting `bot` (TOML). Each message is answered on its own
    (no burst window): two sent at once here are two turns for the lease to order, not one
    burst (tests/test_bursts.py has those)."""
    folder = tmp_path / name
    (folder / "personas").mkdir(parents=True)
    (folder / "personas" / "pip.toml").write_text(PIP.format(idle=idle), encoding="utf-8")
    path = folder / "kizuna.toml"
    path.write_text(
        'storage = "postgres"\npersona_paths = ["personas"]\n\n'
        '[engine]\nsnapshot_seconds = 0.2\ntimezone = "UTC"\nburst_seconds = 0\n\n' + bot,
        encoding="utf-8",
    )
    return path


def discord_bot(api: str) -> str:
    return (
        '[[bots]]\nplatform = "discord"\npersona = "pip"\ntoken_env = "DISCORD_TOKEN"\n'
        f'base_url = "{api}"\n'
    )


def webhook_bot(telegram: FakeTelegram, port: int) -> str:
    return (
        "[access]\nmessages_per_minute = 0\n\n"
        '[[bots]]\nplatform = "telegram"\npersona = "pip"\ntoken_env = "TELEGRAM_TOKEN"\n'
        f'base_url = "{telegram.base_url}"\n'
        'webhook_url = "https://bots.example/kizuna/hook"\n'
        f'webhook_listen = "127.0.0.1:{port}"\nwebhook_secret_env = "TG_HOOK_SECRET"\n'
    )


async def start(path: Path, token: str, dsn: str, **env: str) -> asyncio.subprocess.Process:
    process = await start_run(path, base_env(DISCORD_TOKEN=token, KIZUNA_DATABASE_URL=dsn, **env))
    assert process.stderr is not None
    while True:
        line = (await asyncio.wait_for(process.stderr.readline(), TIMEOUT)).decode()
        assert line, "kizuna run ended before its bot came up"
        if "is up" in line:
            return process


async def reply_from(fake: FakeDiscord, bot: int) -> str:
    while True:
        sent = await fake.next_message(wait=TIMEOUT)
        if sent.get("_bot") == bot:
            return str(sent["content"])


@pytest.fixture
async def discord() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as fake:
        fake.bots[OTHER_DISCORD_TOKEN] = 1001
        yield fake


async def test_two_processes_share_memory_and_encode_once(
    tmp_path: Path, postgres_dsn: str, discord: FakeDiscord
) -> None:
    bot = discord_bot(discord.api_base)
    first = await start(config(tmp_path, "a", bot), DISCORD_TOKEN, postgres_dsn)
    second = await start(config(tmp_path, "b", bot), OTHER_DISCORD_TOKEN, postgres_dsn)
    try:
        dm_a, dm_b = 7001, 7002  # each user's DM channel with each bot
        await discord.dispatch_message(dm_a, ALICE, "My sister is called Maya.", guild=False)
        assert "(offline model)" in await reply_from(discord, discord.bot_id)
        await discord.dispatch_message(dm_b, BOB, "I play the cello.", guild=False, to_bot=1001)
        assert "(offline model)" in await reply_from(discord, 1001)

        db = await asyncpg.connect(postgres_dsn)
        try:
            for _ in range(int(TIMEOUT * 10)):  # both conversations go quiet and are encoded
                encoded = await db.fetchval(
                    "SELECT count(*) FROM conversations WHERE encoded_at IS NOT NULL"
                )
                if encoded == 2:
                    break
                await asyncio.sleep(0.1)
            rows = await db.fetch("SELECT text, conversation_id FROM memories ORDER BY id")
        finally:
            await db.close()
        texts = [r["text"] for r in rows]
        assert any("Maya" in t for t in texts) and any("cello" in t for t in texts)
        assert len(texts) == len(set(texts))  # each conversation encoded exactly once

        # Alice asks the other process's bot: the memory made through the first comes back.
        await discord.dispatch_message(
            dm_b, ALICE, "what is my sister called?", guild=False, to_bot=1001
        )
        assert "Maya" in await reply_from(discord, 1001)
    finally:
        for process in (first, second):
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)
        for process in (first, second):
            _, err = await asyncio.wait_for(process.communicate(), TIMEOUT)
            assert process.returncode == 0, err.decode()


async def test_one_telegram_chat_through_two_webhook_processes(
    tmp_path: Path, postgres_dsn: str
) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as model:
        ports = (free_port(), free_port())
        env = {
            "TELEGRAM_TOKEN": telegram.token,
            "TG_HOOK_SECRET": WEBHOOK_SECRET,
            "OPENAI_BASE_URL": model.base_url,
            "OPENAI_API_KEY": OPENAI_API_KEY,
        }
        processes = [
            await start(
                config(tmp_path, name, webhook_bot(telegram, port), idle=NEVER),
                "",
                postgres_dsn,
                **env,
            )
            for name, port in zip("ab", ports, strict=True)
        ]
        said = [f"message {n}" for n in range(1, 9)]
        try:
            headers = {"X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET}
            async with aiohttp.ClientSession() as http:
                for pair in range(0, len(said), 2):
                    # Two updates of one chat at once, one to each process.
                    for text, port in zip(said[pair : pair + 2], ports, strict=True):
                        update = telegram.update_for(telegram.send_text(ALICE, ALICE, text))
                        url = f"http://127.0.0.1:{port}/kizuna/hook"
                        async with http.post(url, json=update, headers=headers) as taken:
                            assert taken.status == 200
                    replies = await telegram.next_messages(2, within=TIMEOUT)
                    assert sorted(r["text"] for r in replies) == sorted(
                        f"echo: {text}" for text in said[pair : pair + 2]
                    )

                async def command(text: str, port: int) -> str:
                    update = telegram.update_for(telegram.send_text(ALICE, ALICE, text))
                    url = f"http://127.0.0.1:{port}/kizuna/hook"
                    async with http.post(url, json=update, headers=headers) as taken:
                        assert taken.status == 200
                    [reply] = await telegram.next_messages(within=TIMEOUT)
                    return str(reply["text"])

                # /forget's numbered offer is the conversation's: picked through the other.
                await command("/remember my cat is called Mochi", ports[0])
                offered = await command("/forget Mochi", ports[0])
                assert offered.startswith("1.") and "Mochi" in offered
                assert await command("/forget 1", ports[1]) == "Forgotten: my cat is called Mochi"
        finally:
            for process in processes:
                process.send_signal(signal.SIGTERM)
            for process in processes:
                _, err = await asyncio.wait_for(process.communicate(), TIMEOUT)
                assert process.returncode == 0, err.decode()
                assert b"Traceback" not in err and b"Task was destroyed" not in err, err.decode()
        assert not telegram.calls("deleteWebhook")  # a process stopping leaves the hook set

        # One conversation, its turns one at a time: each request to the model carried every
        # message said before it, whichever process took it.
        asked = [
            [m["content"] for m in body["messages"] if m["role"] == "user"]
            for body in model.chat_requests
        ]
        assert len(asked) == len(said)
        order = [next(t for t in said if t in users[-1]) for users in asked]
        assert sorted(order) == said
        for n, users in enumerate(asked):
            assert all(any(t in u for u in users) for t in order[:n])
        db = await asyncpg.connect(postgres_dsn)
        try:
            snapshot = await db.fetchval("SELECT snapshot FROM sessions")
        finally:
            await db.close()
        turns = json.loads(snapshot)["turns"]
        assert [t["role"] for t in turns] == ["user", "assistant"] * len(said)
        assert [t["text"] for t in turns[::2]] == order
