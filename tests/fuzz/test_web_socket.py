"""The web client's chat socket fed fuzzed frames: not JSON, JSON of every shape, nested too
deeply, nasty text, commands with odd arguments, binary. The socket stays open, every message
gets its answer, nothing is logged as an error."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer
from hypothesis import example, given
from hypothesis import strategies as st

from adapters.web import WebServer
from tests.fakes.factories import Bot, open_bot
from tests.fakes.fuzz import echo, fuzzed, nasty_text
from tests.fakes.models import ScriptedChatModel

pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")

COMMANDS = ["/remember ", "/forget ", "/memories ", "/diary ", "/recall ", "/state set ", "/x "]
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), nasty_text(max_size=4)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.just("text"), inner, max_size=1)
    ),
    max_leaves=6,
)
# Frames within MAX_FRAME (64 KB: 16k characters of up to 4 bytes): a bigger one closes the
# socket (1009, message too big), which is the protocol's own refusal.
frames = st.one_of(
    json_values.map(lambda value: json.dumps(value)),
    st.tuples(st.sampled_from(["", *COMMANDS]), nasty_text(max_size=6)).map(
        lambda pair: json.dumps({"text": "".join(pair)})
    ),
    nasty_text(max_size=6).map(lambda text: text.encode("utf-8", "replace").decode()),
    st.binary(max_size=40),
).map(lambda frame: frame[:16_000])


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[Bot]:
    opened = await open_bot(tmp_path / "ws.sqlite3", model=ScriptedChatModel(default=echo))
    yield opened
    await opened.close()


@pytest.fixture
async def web(bot: Bot) -> AsyncIterator[TestClient[Any, Any]]:
    client: TestClient[Any, Any] = TestClient(
        TestServer(WebServer(bot.engine, bot.services, bot.store, bot.bank, ["pip"]).app())
    )
    await client.start_server()
    yield client
    await client.close()


async def answer(ws: aiohttp.ClientWebSocketResponse) -> dict[str, Any]:
    """The next message that is not "thinking"."""
    while True:
        message: dict[str, Any] = await asyncio.wait_for(ws.receive_json(), 10)
        if message["type"] != "thinking":
            return message


@fuzzed(30)
@given(sent=st.lists(frames, min_size=1, max_size=5))
@example(sent=["[" * 30_000])  # RecursionError in json.loads closed the socket, logged
@example(sent=['{"text": "\\ud800"}', '{"text": "/remember \\udcff\\u0000"}'])
@example(sent=['{"text": "/diary year 99999999"}', '{"text": "/forget %\' OR 1=1 --"}'])
async def test_the_socket_survives_any_frame(
    web: TestClient[Any, Any], caplog: pytest.LogCaptureFixture, sent: list[str | bytes]
) -> None:
    caplog.clear()
    caplog.set_level(logging.INFO)
    async with web.ws_connect("/ws?persona=pip&user=ann") as ws:
        assert (await ws.receive_json())["type"] == "history"
        for frame in sent:
            if isinstance(frame, bytes):
                await ws.send_bytes(frame)
            else:
                await ws.send_str(frame)
        await ws.send_json({"text": "still there? (end of fuzz)"})
        # Whatever came before is answered (or ignored) in order; then the last message is.
        while "(end of fuzz)" not in (reply := await answer(ws))["text"]:
            assert reply["type"] in ("reply", "note", "error") and reply["text"].strip()
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not bad, [f"{r.name}: {r.getMessage()}" for r in bad]
