"""Two `kizuna run` processes sharing one PostgreSQL database, each hosting a Discord bot of the
same persona on the fake Discord server: both answer, every conversation is encoded exactly
once (each process encodes, a scope at a time under its lock), and a memory made through one
process is recalled through the other."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from tests.fakes.discord_server import FakeDiscord
from tests.fakes.factories import base_env
from tests.fakes.process import start_run
from tests.fakes.secrets import DISCORD_TOKEN, OTHER_DISCORD_TOKEN

TIMEOUT = 30.0
ALICE, BOB = 4242, 4343
PIP = """
[identity]
name = "Pip"
personality = "A cheerful test persona."

[memory]
idle_minutes = 0.02  # a conversation quiet for a second goes to long-term memory
"""


def config(tmp_path: Path, name: str, api: str) -> Path:
    folder = tmp_path / name
    (folder / "personas").mkdir(parents=True)
    (folder / "personas" / "pip.toml").write_text(PIP, encoding="utf-8")
    path = folder / "kizuna.toml"
    path.write_text(
        'storage = "postgres"\npersona_paths = ["personas"]\n\n'
        '[engine]\nsnapshot_seconds = 0.2\ntimezone = "UTC"\n\n'
        f'[[bots]]\nplatform = "discord"\npersona = "pip"\ntoken_env = "DISCORD_TOKEN"\n'
        f'base_url = "{api}"\n',
        encoding="utf-8",
    )
    return path


async def start(path: Path, token: str, dsn: str) -> asyncio.subprocess.Process:
    process = await start_run(path, base_env(DISCORD_TOKEN=token, KIZUNA_DATABASE_URL=dsn))
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
    first = await start(config(tmp_path, "a", discord.api_base), DISCORD_TOKEN, postgres_dsn)
    second = await start(config(tmp_path, "b", discord.api_base), OTHER_DISCORD_TOKEN, postgres_dsn)
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
