"""Fuzzed messages and commands through the real engine, store and memory bank: empty,
whitespace, very long, control characters, NUL, lone surrogates, emoji, right-to-left and
mixed scripts, odd display names. Every message gets a reply or a deliberate silence, the
session and the store stay consistent, and nothing is logged as an error or a traceback."""

from __future__ import annotations

import logging
import random
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from bot.access import NotAllowed
from bot.chat_model import Completion, Message
from bot.commands import memory as memory_commands
from bot.conversation.sessions import SessionManager
from bot.events import Reply, valid_text
from bot.llm.openai_chat import OpenAIChatModel, make_client
from bot.turn.settle import MAX_MESSAGE_CHARS
from memory.encoding.encoder import ENCODING_TASK
from memory.text import visible
from tests.fakes.factories import PLATFORMS, Bot, make_event, make_persona, open_bot
from tests.fakes.fuzz import fuzzed, nasty_text
from tests.fakes.models import ScriptedChatModel, encoding
from tests.fakes.openai_server import FakeOpenAI

pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")

PERSONAS = [make_persona("pip"), make_persona("mao", name="猫", language="zh", scope="channel")]


class Echo:
    """The chat tier through the real openai SDK to FakeOpenAI, which says back the last
    message (so what a user sends travels as a real request would); the encoding task gets
    memories, a diary page and a profile cut from the conversation, nasty characters and all.
    """

    def __init__(self, fake: FakeOpenAI) -> None:
        self.client = fake.own(make_client(fake.base_url, "sk-fuzz", 5.0))
        self.model = OpenAIChatModel(
            self.client,
            "fake-chat",
            timeout=5.0,
            max_retries=0,
            retry_base_delay=0.001,
            rng=random.Random(0),
        )

    async def __call__(self, messages: Sequence[Message]) -> Completion | str:
        said = messages[-1].content
        if ENCODING_TASK in messages[0].content:
            return encoding(
                (said[-300:], "personal_daily", 2), diary=said[-200:], profile=said[-80:]
            )
        answer = await self.model.complete(messages)
        # A model may answer a JSON "\\udcff" escape too: a lone surrogate in the reply, which
        # goes back to it with the rest of the conversation next time.
        return replace(answer, text=answer.text + " \udcff")


@pytest.fixture
async def bot(tmp_path: Path, fake_openai: FakeOpenAI) -> AsyncIterator[Bot]:
    """One bot for all the examples of a property: the store has to stay consistent across
    everything they throw at it."""
    echo = Echo(fake_openai)
    opened = await open_bot(
        tmp_path / "fuzz.sqlite3", PERSONAS, model=ScriptedChatModel(default=echo)
    )
    yield opened
    await opened.close()
    await echo.client.close()  # else its connections are closed by the collector, loop gone


def storable(text: str) -> str:
    """What the store keeps of a text: lone surrogates can't be UTF-8, they become "?"."""
    return text.encode("utf-8", "replace").decode("utf-8")


def no_errors_logged(caplog: pytest.LogCaptureFixture) -> None:
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    caplog.clear()
    assert not bad, [f"{r.name}: {r.getMessage()}" for r in bad]


def check_reply(reply: Reply, text: str, platform: str) -> None:
    limit = PLATFORMS[platform].limit
    if not text.strip():  # nothing said: a deliberate silence
        assert reply.text == "" and reply.chunks == ()
        return
    assert reply.text.strip() and reply.chunks, reply
    assert not reply.failed, reply  # the model is up: an answer, not an apology
    assert all(0 < len(chunk) <= limit for chunk in reply.chunks)
    assert reply.emotion


events = st.fixed_dictionaries(
    {
        "text": nasty_text(),
        "persona": st.sampled_from(["pip", "mao"]),
        "platform": st.sampled_from([p.name for p in PLATFORMS]),
        "is_dm": st.booleans(),
        "user_name": st.one_of(st.just("Alice"), nasty_text(max_size=3)),
        "reply_to": st.one_of(st.none(), nasty_text(max_size=3)),
        "admin": st.booleans(),
    }
)
actions = st.one_of(
    st.tuples(st.just("say"), events),
    st.tuples(st.just("say"), events),
    st.tuples(st.just("say"), events),
    st.tuples(st.sampled_from(["remember", "memories", "forget", "recall", "diary"]), events),
    st.tuples(st.sampled_from(["save", "end", "idle", "export", "dm_memories"]), events),
)


async def act(bot: Bot, action: str, spec: dict[str, Any]) -> None:
    engine, services, text = bot.engine, bot.services, spec["text"]
    event = make_event(**spec, timestamp=bot.clock.now())
    if action in ("forget", "export") and services.desk.shares(event) and not event.admin:
        # A channel's shared memory is its admins' to change or take away, no one else's.
        with pytest.raises(NotAllowed):
            if action == "forget":
                await memory_commands.forget_candidates(services, event, text)
            else:
                await memory_commands.export(services, event)
    elif action == "say":
        bot.clock.advance(seconds=20)
        reply = await engine.handle(event)
        check_reply(reply, text, spec["platform"])
        if text.strip():
            turns = (await services.desk.info(event)).turns
            said = [t for t in turns if t.role == "user"]
            assert said, turns
            kept = said[-1].text
            assert valid_text(text).strip()[:MAX_MESSAGE_CHARS] in kept
    elif action == "remember":
        done = await memory_commands.remember(services, event, text)
        assert done.message and (done.id is not None or not visible(text) or len(text) > 2000)
        if done.id is not None:
            found = await memory_commands.list_memories(services, event, limit=1000)
            assert any(m.id == done.id for m in found)
    elif action == "memories":
        await memory_commands.list_memories(services, event, text)
    elif action == "recall":
        await memory_commands.closest(services, event, text)
    elif action == "forget":
        for memory in await memory_commands.forget_candidates(services, event, text):
            gone = await memory_commands.forget(services, event, memory.id)
            assert gone is not None and gone.id == memory.id
            break
    elif action == "diary":
        assert (await memory_commands.diary(services, event, text)).strip()
    elif action == "save":
        exported = await services.desk.save(event)
        # A fresh process restores what was saved: the same turns, as the store keeps them.
        restored = SessionManager(bot.store, bot.clock)
        await restored.restore(bot.personas.keys(), PLATFORMS.places())
        session = await restored.get(exported["persona"], exported["scope"])
        assert [t.text for t in session.turns] == [storable(t["text"]) for t in exported["turns"]]
    elif action == "end":
        await services.desk.end(event)
        await bot.lifecycle.encode_pending()
    elif action == "idle":
        bot.clock.advance(hours=2)  # the next message closes the conversation as idle
        await bot.lifecycle.encode_pending()
    elif action == "export":
        count, data = await memory_commands.export(services, event)
        assert count and data.decode("utf-8")
    elif action == "dm_memories":
        assert await memory_commands.dm_memories(services, event, text)


@fuzzed(40)
@given(script=st.lists(actions, min_size=1, max_size=6))
@example(script=[("say", {"text": "x" * 1_000_000})])  # 1 MB
@example(script=[("say", {"text": "😀" * 300_000}), ("save", {"text": ""})])
@example(script=[("say", {"text": "\x00" * 5000}), ("end", {"text": ""})])
@example(script=[("say", {"text": "hi \udcff there \ud800"}), ("save", {"text": ""})])
# A lone surrogate failed the model request (UnicodeEncodeError) and, kept in the turns, every
# later request of the conversation: apologies until it closed.
@example(script=[("say", {"text": "\ud800"}), ("say", {"text": "hello", "user_name": "\udcff"})])
@example(script=[("remember", {"text": "caf\udce9 \x00 \u202eevil"}), ("memories", {"text": ""})])
@example(script=[("say", {"text": "今天 \ud800 上周三"}), ("end", {"text": ""})])
@example(script=[("say", {"text": " \t\n\u3000"})])  # whitespace only: silence
@example(script=[("say", {"text": "\u200b\u200d\ufeff"})])  # invisible, not whitespace
@example(script=[("diary", {"text": "year 99999999"}), ("diary", {"text": "3000000 days ago"})])
@example(script=[("forget", {"text": "%' OR 1=1; -- NEAR( \"*"}), ("recall", {"text": "*"})])
@example(script=[("remember", {"text": "x" * 100_000})])
# The name went into the system prompt before its placeholders were filled: each "<user>" in
# it became the whole name again, a 1 MB request the model refused.
@example(script=[("say", {"text": "hi", "user_name": "<user>" * 418})])
async def test_messages_and_commands_keep_the_store_consistent(
    bot: Bot, caplog: pytest.LogCaptureFixture, script: list[tuple[str, dict[str, Any]]]
) -> None:
    caplog.set_level(logging.INFO)
    defaults = {
        "persona": "pip",
        "platform": "discord",
        "is_dm": True,
        "user_name": "Alice",
        "admin": False,
    }
    for action, spec in script:
        await act(bot, action, {**defaults, "reply_to": None, **spec})
    await bot.engine.drain()
    no_errors_logged(caplog)


async def test_a_models_lone_surrogate_becomes_a_replacement_character(
    fake_openai: FakeOpenAI,
) -> None:
    """What a model writes as a "\\udcff" escape arrives as U+FFFD: the reply can be sent,
    printed and stored."""
    echo = Echo(fake_openai)
    fake_openai.reply_text("[HAPPY] hi \udcff there")
    try:
        completion = await echo.model.complete([Message("user", "hello")])
    finally:
        await echo.client.close()
    assert completion.text == "[HAPPY] hi \ufffd there"
