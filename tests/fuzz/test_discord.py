"""Discord end to end (discord.py against the loopback fake) fed fuzzed DMs and attachments:
every one is answered or deliberately ignored, the bot keeps answering, and nothing is logged
as an error."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from adapters.discord import DiscordAdapter
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.factories import Bot, open_bot
from tests.fakes.fuzz import echo, fuzzed, nasty_text
from tests.fakes.models import ScriptedChatModel
from tests.fakes.platforms import discord_at

pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")

ALICE = 42
MB = 1024 * 1024


@pytest.fixture
async def fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeDiscord]:
    async with discord_at(monkeypatch) as server:
        yield server


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[Bot]:
    opened = await open_bot(tmp_path / "discord.sqlite3", model=ScriptedChatModel(default=echo))
    yield opened
    await opened.close()


@pytest.fixture
async def adapter(fake: FakeDiscord, bot: Bot) -> AsyncIterator[DiscordAdapter]:
    running = DiscordAdapter(
        bot.engine, bot.services, "pip", "token", bot_id="discord-pip", guild_ready_timeout=0.05
    )
    await running.start()
    yield running
    await running.close()


attachments = st.fixed_dictionaries(
    {
        "filename": st.tuples(
            nasty_text(max_size=2), st.sampled_from([".txt", ".md", ".pdf", ".png", ""])
        ).map(lambda pair: "".join(pair)[-100:] or "file"),
        "content": st.binary(max_size=200),
        "size": st.one_of(st.none(), st.just(20 * MB), st.integers(0, 2**40)),
    }
)
messages = st.tuples(nasty_text(max_size=8), st.lists(attachments, max_size=2))


@fuzzed(12)
@given(sent=st.lists(messages, min_size=1, max_size=4))
@example(sent=[("", [{"filename": "big.pdf", "content": b"%PDF-", "size": 20 * MB}])])
@example(sent=[("\ud800\x00 hi \u202e", [{"filename": "\udcff.txt", "content": b"\xff"}])])
async def test_every_dm_is_answered_or_ignored(
    fake: FakeDiscord,
    adapter: DiscordAdapter,
    caplog: pytest.LogCaptureFixture,
    sent: list[tuple[str, list[dict[str, Any]]]],
) -> None:
    caplog.clear()
    caplog.set_level(logging.INFO)
    for content, files in sent:
        attached = [fake.attachment(**file) for file in files]
        await fake.dispatch_message(
            fake.channel_id, ALICE, content, guild=False, attachments=attached
        )
    await fake.dispatch_message(fake.channel_id, ALICE, "still there? (end of fuzz)", guild=False)
    # Everything before is answered (or ignored) in order; then the last message is.
    while "(end of fuzz)" not in (reply := await fake.next_message(wait=10))["content"]:
        assert reply["content"].strip()
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not bad, [f"{r.name}: {r.getMessage()}" for r in bad]


async def test_an_attachment_that_cannot_be_downloaded_is_said_so(
    fake: FakeDiscord, adapter: DiscordAdapter, caplog: pytest.LogCaptureFixture
) -> None:
    """Its link expired or it was deleted: a clear line, not silence and a logged traceback."""
    gone = fake.attachment("notes.txt", b"hello")
    gone["url"] = gone["proxy_url"] = gone["url"].replace(f"/{gone['id']}/", "/0/")  # a 404
    await fake.dispatch_message(fake.channel_id, ALICE, "", guild=False, attachments=[gone])
    reply = await fake.next_message()
    assert reply["content"] == "notes.txt: could not be downloaded; send it again"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
