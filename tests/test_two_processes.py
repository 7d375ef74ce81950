"""Two `kizuna run` processes sharing one PostgreSQL database.

Discord: each hosts a bot of the same persona on the fake Discord server; both answer, every
conversation is encoded exactly once (each process encodes, a scope at a time under its lock),
and a memory made through one process is recalled through the other. Discord split into
shards: one bot, its shards in two processes, each guild's messages answered once by the
process running its shard, a user's private memories the same in either. Telegram: one bot in
webhook mode behind a "load balancer" that hands each update of one chat to either process;
the chat stays one conversation, its turns taken in order."""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp
import asyncpg
import pytest

from memory.records import NewIntention
from memory.storage.postgres import PgStore
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
ALICE, BOB, CAROL = 4242, 4343, 4444
PIP = """
[identity]
name = "Pip"
personality = "A cheerful test persona."

[memory]
idle_minutes = {idle}
forgetting = "never"
"""
QUICK = 0.02  # a conversation quiet for a second goes to long-term memory
NEVER = 600.0  # one conversation, however slow a loaded machine makes its turns


def config(tmp_path: Path, name: str, bot: str, *, idle: float = QUICK, persona: str = "") -> Path:
    """One process's folder: Pip (conversations closing after `idle` minutes; `persona`: more
    of its file), and a kizuna.toml on PostgreSQL hosting `bot` (TOML). Each message is
    answered on its own (no burst window): two sent at once here are two turns for the lease
    to order, not one burst (tests/test_bursts.py has those). Pip forgets nothing, so what
    comes to mind is not a draw: ACT-R's retrieval failure misses a memory a minute old one
    time in 25, more often the slower a loaded machine gets to the question."""
    folder = tmp_path / name
    (folder / "personas").mkdir(parents=True)
    (folder / "personas" / "pip.toml").write_text(PIP.format(idle=idle) + persona, encoding="utf-8")
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


async def start(
    path: Path, token: str, dsn: str, *options: str, **env: str
) -> asyncio.subprocess.Process:
    environment = base_env(DISCORD_TOKEN=token, KIZUNA_DATABASE_URL=dsn, **env)
    process = await start_run(path, environment, *options)
    assert process.stderr is not None
    try:
        while True:
            line = (await asyncio.wait_for(process.stderr.readline(), TIMEOUT)).decode()
            assert line, "kizuna run ended before its bot came up"
            if "is up" in line:
                return process
    except BaseException:
        # Not up in time: it would otherwise outlive the test and the suite.
        if process.returncode is None:
            process.kill()
            await process.wait()
        raise


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


async def follow_up_due(dsn: str, user: int) -> None:
    """Discord user `user` talked to Pip privately yesterday (and was answered) and has a
    follow-up due now."""
    store = await PgStore.open(dsn)
    try:
        now = datetime.now(UTC)
        await store.heard("pip", "discord", str(user), now - timedelta(days=1), private=True)
        await store.answered("pip", "discord", str(user), now - timedelta(days=1))
        await store.set_contact("pip", "discord", str(user), timezone="UTC", at=now)
        await store.add_intention(
            NewIntention(
                scope=f"pip/discord:dm:{user}",
                user_id=str(user),
                kind="follow_up",
                what="the exam",
                ask="ask how the exam went",
                due_at=now - timedelta(minutes=1),
                until=now + timedelta(days=2),
                created_at=now - timedelta(days=1),
            )
        )
    finally:
        await store.close()


async def stop(*processes: asyncio.subprocess.Process) -> None:
    """SIGTERM each still running; each must end cleanly, no traceback on its stderr."""
    for process in processes:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
    for process in processes:
        _, err = await asyncio.wait_for(process.communicate(), TIMEOUT)
        assert process.returncode == 0, err.decode()
        assert b"Traceback" not in err, err.decode()


async def test_shards_split_over_two_processes(
    tmp_path: Path, postgres_dsn: str, discord: FakeDiscord
) -> None:
    """Two `kizuna run` of one bot, shard 0 and shard 1 of 2: a guild's messages reach, and
    are answered by, the process running its shard only; DMs are shard 0's. What Alice says
    in private (a /remember, a conversation encoded by either process) comes to mind in her
    conversations in guilds of the other shard while she lets it (/dm_memories), and not once
    she says no. A follow-up due is written once, though both processes run the courier."""
    guilds = {n: (n << 22 | 2000, 3000 + n) for n in range(4)}  # guild n: shard n % 2
    for guild, channel in guilds.values():
        if guild != discord.guild_id:
            discord.add_guild(guild, channel)
    await follow_up_due(postgres_dsn, CAROL)
    bot = discord_bot(discord.api_base)
    # Pip writes first, never in quiet hours: set far from the hour it is now (real clock).
    quiet = "-".join(f"{(datetime.now(UTC).hour + h) % 24:02d}" for h in (11, 13))
    writes = f'\n[outreach]\nenabled = true\nquiet_hours = "{quiet}"\n'
    processes = await asyncio.gather(
        *(
            start(
                config(tmp_path, f"shard{shard}", bot, persona=writes),
                DISCORD_TOKEN,
                postgres_dsn,
                *("--shard-ids", str(shard), "--shard-count", "2"),
            )
            for shard in (0, 1)
        )
    )
    me, dm = f"<@{discord.bot_id}>", 7001
    try:
        assert sorted(discord.shards.values()) == [(0, 2), (1, 2)]
        # Both processes look for what to write first: Carol's follow-up goes out from one.
        written = await discord.next_message(wait=TIMEOUT)
        assert discord.dms[written["channel_id"]] == CAROL

        async def said(channel: int, user: int, text: str, shard: int) -> str:
            """Say `text`; the one reply, from the process running `shard`."""
            guild = channel != dm
            sent = await discord.dispatch_message(
                channel, user, text, guild=guild, mentions_bot=guild
            )
            reply = await discord.next_message(wait=TIMEOUT)
            assert reply["channel_id"] == str(channel)
            delivered = [s for _, i, s in discord.delivered if i == sent["id"]]
            assert delivered == [(shard, 2)]  # so only that process could answer it
            return str(reply["content"])

        async def command(name: str, option: str, value: str) -> str:
            await discord.slash(name, {option: value}, user_id=ALICE, guild=False)
            return str((await discord.answer(wait=TIMEOUT))["content"])

        assert "in private" in await command("dm_memories", "choice", "on")
        assert "will remember" in await command("remember", "text", "my cat is called Mochi")
        assert "(offline model)" in await said(dm, ALICE, "My sister is called Maya.", 0)

        # A message in each guild, all at once: each answered once, in its own channel.
        sent = [
            await discord.dispatch_message(channel, BOB, f"{me} hello", mentions_bot=True)
            for _, channel in guilds.values()
        ]
        replies = [await discord.next_message(wait=TIMEOUT) for _ in guilds]
        assert sorted(r["channel_id"] for r in replies) == sorted(
            str(c) for _, c in guilds.values()
        )
        assert await discord.no_message()
        for n, message in enumerate(sent):
            assert [s for _, i, s in discord.delivered if i == message["id"]] == [(n % 2, 2)]

        # Shard 1's process recalls what shard 0's stored, in Alice's turn in guild 1.
        assert "Mochi" in await said(guilds[1][1], ALICE, f"{me} what is my cat called?", 1)
        db = await asyncpg.connect(postgres_dsn)
        try:
            for _ in range(int(TIMEOUT * 10)):  # her private conversation is encoded
                rows = await db.fetch(
                    "SELECT m.text FROM memories m JOIN conversations c"
                    " ON c.id = m.conversation_id WHERE c.scope = $1",
                    f"discord:dm:{ALICE}",
                )
                if rows:
                    break
                await asyncio.sleep(0.1)
        finally:
            await db.close()
        texts = [r["text"] for r in rows]
        assert any("Maya" in t for t in texts) and len(texts) == len(set(texts))
        assert "Maya" in await said(guilds[3][1], ALICE, f"{me} what is my sister called?", 1)
        # Her choice, changed through shard 0's process, holds at once in shard 1's.
        assert "stays private" in await command("dm_memories", "choice", "off")
        assert "Mochi" not in await said(guilds[3][1], ALICE, f"{me} what is my cat called?", 1)
    finally:
        await stop(*processes)  # (each lets its round of writing first finish)
    to_carol = [
        r
        for r in discord.requests
        if r.method == "POST" and r.path == f"/channels/{written['channel_id']}/messages"
    ]
    assert len(to_carol) == 1


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
            rows = await db.fetch("SELECT turn FROM session_turns ORDER BY seq")
            snapshot = await db.fetchval("SELECT snapshot FROM sessions")
        finally:
            await db.close()
        # The older turns have rows of their own, the newest are in the session's row.
        turns = [json.loads(row["turn"]) for row in rows] + json.loads(snapshot)["turns"]
        assert [t["role"] for t in turns] == ["user", "assistant"] * len(said)
        assert [t["text"] for t in turns[::2]] == order
