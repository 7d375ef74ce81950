"""Telegram end to end (python-telegram-bot against the fake Bot API) fed fuzzed messages,
names, commands and documents: every one is answered or deliberately ignored, the bot keeps
answering, and nothing is logged as an error."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.fakes.factories import Bot, open_bot
from tests.fakes.fuzz import echo, fuzzed, nasty_text
from tests.fakes.models import ScriptedChatModel
from tests.fakes.platforms import telegram_adapter
from tests.fakes.telegram_server import FakeTelegram

pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")

ALICE = 42
MB = 1024 * 1024
COMMANDS = ["", "", "/remember ", "/forget ", "/memories ", "/diary ", "/state set ", "/nosuch "]


class Harness:
    def __init__(self, fake: FakeTelegram, bot: Bot) -> None:
        self.fake, self.bot = fake, bot


@pytest.fixture
async def tg(tmp_path: Path) -> AsyncIterator[Harness]:
    bot = await open_bot(tmp_path / "tg.sqlite3", model=ScriptedChatModel(default=echo))
    async with FakeTelegram() as fake:
        adapter = telegram_adapter(bot, fake)
        await adapter.start()
        try:
            yield Harness(fake, bot)
        finally:
            await adapter.close()
            await bot.close()


# Telegram's JSON can carry what its clients let through, lone surrogates included.
texts = st.tuples(st.sampled_from(COMMANDS), nasty_text(max_size=8)).map("".join)
documents = st.fixed_dictionaries(
    {
        "file_name": st.tuples(
            nasty_text(max_size=2), st.sampled_from([".txt", ".md", ".pdf", ".exe", ""])
        ).map(lambda pair: "".join(pair)[-100:]),
        "content": st.binary(max_size=200),
        "size": st.one_of(st.none(), st.just(20 * MB), st.integers(0, 2**40)),
    }
)
messages = st.one_of(
    st.tuples(st.just("text"), texts, nasty_text(max_size=2)),
    st.tuples(st.just("document"), documents, nasty_text(max_size=2)),
)


@fuzzed(20)
@given(sent=st.lists(messages, min_size=1, max_size=4))
@example(sent=[("document", {"file_name": "big.pdf", "content": b"%PDF-", "size": 20 * MB}, "A")])
@example(sent=[("text", "/remember \ud800\x00" + "x" * 5000, "\udcff")])
@example(sent=[("text", "/diary 3000000 days ago", "Alice"), ("text", "/forget %*", "")])
async def test_every_message_is_answered_or_ignored(
    tg: Harness, caplog: pytest.LogCaptureFixture, sent: list[tuple[str, Any, str]]
) -> None:
    caplog.clear()
    caplog.set_level(logging.INFO)
    for kind, what, name in sent:
        first_name = name.strip() or "Alice"  # Telegram requires a first name
        if kind == "text":
            tg.fake.send_text(ALICE, ALICE, what, first_name=first_name)
        else:
            tg.fake.send_document(ALICE, ALICE, **what)
    tg.fake.send_text(ALICE, ALICE, "still there? (end of fuzz)")
    # Everything before is answered (or ignored) in order; then the last message is.
    while True:
        [reply] = await tg.fake.next_messages(within=10)
        assert reply["text"].strip()
        if "(end of fuzz)" in reply["text"]:
            break
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not bad, [f"{r.name}: {r.getMessage()}" for r in bad]


async def test_a_document_that_cannot_be_downloaded_is_said_so(
    tg: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """Gone from Telegram's servers (or over the Bot API's 20 MB): a clear line, not an
    apology and a logged traceback."""
    sent = tg.fake.send_document(ALICE, ALICE, "notes.txt", content=b"hello")
    del tg.fake.files[sent["document"]["file_id"]]
    [reply] = await tg.fake.next_messages(within=10)
    assert reply["text"] == "notes.txt: could not be downloaded; send it again"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
