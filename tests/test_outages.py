"""Outages of the model and embedding servers, end to end: the real openai SDK against
FakeOpenAI failing in bursts (hangs past the timeout, 429 with Retry-After, 500s and 503s,
bodies cut by a dropped connection, bodies that are not JSON). The user gets a short apology in
the persona's voice and loses no message; encodings (with the diary and profile) and embeddings
wait with backoff and are done once, after the service returns; a slow model holds up no other
conversation. Time is the fake clock's; the fake's hangs outlast a short client timeout."""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

import bot.conversation.recollect as bot_recollect
import bot.media.document_mode as document_mode
import bot.media.documents as bot_documents
from bot.catalogue import say as catalogue_say
from bot.config import EngineConfig, ModelsConfig, ProviderConfig
from bot.llm.openai_chat import make_client
from bot.llm.router import ModelRouter, build_router
from bot.persona.file import StateSlot
from bot.prompts import MAP_TASK, REDUCE_TASK, STATE_TOOL, SUMMARY_TASK, WHOLE_TASK
from bot.runtime.scheduler import Scheduler
from memory.clock import FakeClock
from memory.embeddings import OpenAIEmbedder
from memory.encoding.encoder import ENCODING_TASK
from memory.text import key_phrase
from tests.fakes.factories import Bot, make_event, make_persona, no_ollama, open_bot
from tests.fakes.models import encoding
from tests.fakes.openai_server import (
    FakeOpenAI,
    FakeToolCall,
    Hang,
    HttpError,
    Malformed,
    Text,
    ToolCalls,
    Truncated,
    echo_reply,
    system_of,
)

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
KEY = "sk-test-outage"
# Every kind of failure, taken in turn while an outage lasts.
FAILURES = (
    HttpError(500),
    HttpError(429, retry_after=0.01),
    Truncated(),
    Malformed(),
    Hang(30.0),  # past the client's timeout
    HttpError(503),
)
MOVED = encoding(
    ("Alice moved to Lisbon.", "personal_daily", 2),
    diary="Alice told me she moved to Lisbon. I was happy for her.",
    profile="Alice: lives in Lisbon.",
)


def answer(body: dict[str, Any]) -> str:
    """The fake's default reply: an encoding for the encoding task, a summary for
    compression and for documents, else an echo of the user."""
    messages = body.get("messages") or [{}]
    system = str(messages[0].get("content") or "")
    if ENCODING_TASK in system:
        return MOVED
    if system.startswith(SUMMARY_TASK):
        return "Alice told a long story."
    if system.startswith((MAP_TASK, REDUCE_TASK, WHOLE_TASK)):
        return "Goats graze on terraced hills."
    return echo_reply(body)


@pytest.fixture
async def fake() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI(default_reply=answer) as server:
        yield server


async def router_on(fake: FakeOpenAI, *, wait: float = 0.5) -> ModelRouter:
    """Every tier on the fake, as configured in [models]: a short timeout (`wait` seconds),
    one retry."""
    provider = ProviderConfig(
        base_url=fake.base_url,
        api_key_env="FAKE_KEY",
        timeout=wait,
        max_retries=1,
        retry_base_delay=0.001,
    )
    config = ModelsConfig(providers={"fake": provider})
    return await build_router(config, {"FAKE_KEY": KEY}, rng=random.Random(0), probe=no_ollama)


OpenBot = Callable[..., Awaitable[Bot]]


@pytest.fixture
async def bots(tmp_path: Path, fake: FakeOpenAI) -> AsyncIterator[OpenBot]:
    opened: list[Bot] = []

    async def make(*personas: Any, wait: float = 0.5, **kwargs: Any) -> Bot:
        bot = await open_bot(
            tmp_path / "kizuna.sqlite3",
            list(personas),
            clock=FakeClock(START),
            router=await router_on(fake, wait=wait),
            **kwargs,
        )
        opened.append(bot)
        return bot

    yield make
    for bot in opened:
        await bot.close()


def remote_embedder(fake: FakeOpenAI) -> OpenAIEmbedder:
    return OpenAIEmbedder(
        fake.own(make_client(fake.base_url, KEY, 0.5)), "fake-embedding", dimension=8, timeout=0.5
    )


async def say(bot: Bot, text: str, **kwargs: Any) -> Any:
    bot.clock.advance(seconds=30)
    return await bot.engine.handle(make_event(text, **kwargs))


def encodings(fake: FakeOpenAI) -> int:
    return sum(ENCODING_TASK in str(body["messages"][0]["content"]) for body in fake.chat_requests)


def user_texts(body: dict[str, Any]) -> str:
    return "\n".join(str(m["content"]) for m in body["messages"] if m["role"] == "user")


# --- chat ---------------------------------------------------------------------------------------


async def test_a_chat_outage_gets_the_personas_apology_and_loses_no_message(
    bots: OpenBot, fake: FakeOpenAI
) -> None:
    cat = make_persona(apology="Mrrp... my whiskers are all in a tangle. I kept every word, nya!")
    mao = make_persona("mao", name="猫猫", language="zh")  # no apology of its own
    bot = await bots(cat, mao)
    said = ["I got the job!", "It starts on Monday.", "Are you there?", "Hello?"]
    fake.outage(*FAILURES)
    for text in said[:3]:
        reply = await say(bot, text)
        assert reply.failed and reply.text == cat.identity.apology
        assert reply.emotion == "SAD" and reply.chunks == (reply.text,)
    reply = await say(bot, "你好", persona="mao")
    assert reply.failed and reply.text == catalogue_say("zh", "apology")
    assert len(fake.chat_requests) == 8  # each turn tried twice (one retry)

    fake.recover()
    reply = await say(bot, said[3])
    assert not reply.failed and reply.text == "echo: Hello?"
    prompt = user_texts(fake.chat_requests[-1])
    assert all(text in prompt for text in said)  # the three unanswered messages too
    session = await bot.engine.session(make_event())
    assert [t.text for t in session.turns if t.role == "user"] == said
    assert [t.text for t in session.turns if t.role == "assistant"] == ["echo: Hello?"]


async def test_a_slow_model_does_not_hold_up_another_conversation(
    bots: OpenBot, fake: FakeOpenAI
) -> None:
    bot = await bots(make_persona(), wait=30.0)
    fake.reply(Hang(30.0, then=Text("[HAPPY] Sorry, I was miles away.")))
    slow = asyncio.create_task(bot.engine.handle(make_event("Alice here", user_id="u1")))
    async with asyncio.timeout(10):  # Alice's turn waits on the model...
        while not fake.chat_requests:  # noqa: ASYNC110 (the fake signals nothing)
            await asyncio.sleep(0.01)
    reply = await bot.engine.handle(make_event("Bob here", user_id="u2", user_name="Bob"))
    assert reply.text == "echo: Bob here"  # ...while Bob's is answered
    assert not slow.done()
    fake.release_hangs()
    assert (await slow).text == "Sorry, I was miles away."


async def test_state_and_intent_failures_keep_the_reply_and_the_state(
    bots: OpenBot, fake: FakeOpenAI
) -> None:
    """The intent model and the state update fail or answer malformed JSON: the message is
    decided locally, the state stays as it was, the reply is given."""
    slot = StateSlot("mood", "Alice's mood, in a word.")
    bot = await bots(
        make_persona(state=[slot]), settings=EngineConfig(timezone="UTC", intent="model")
    )
    fake.reply(
        Text("I think it is chat, probably"),  # intent: no JSON
        Text("[HAPPY] Good morning!"),  # chat
        ToolCalls((FakeToolCall(STATE_TOOL, '{"mood": "cheer'),)),  # state: cut arguments
    )
    reply = await say(bot, "Good morning")
    assert reply.text == "Good morning!"
    await bot.engine.drain()
    session = await bot.engine.session(make_event())
    assert session.state.get("mood", "") == ""
    intent, _, state = fake.chat_requests
    assert intent["response_format"] == {"type": "json_object"}
    assert [t["function"]["name"] for t in state["tools"]] == [STATE_TOOL]

    fake.burst(2, Truncated(), HttpError(500))  # intent: fails, with its retry
    fake.reply(Text("[HAPPY] Morning again!"))
    fake.burst(2, Malformed(), HttpError(503))  # state: fails, with its retry
    reply = await say(bot, "Good morning again")
    assert reply.text == "Morning again!"
    await bot.engine.drain()
    assert len(fake.chat_requests) == 3 + 5
    assert session.state.get("mood", "") == ""
    assert [t.text for t in session.turns if t.role == "user"] == [
        "Good morning",
        "Good morning again",
    ]


async def test_compression_that_fails_keeps_every_turn_until_the_model_is_back(
    bots: OpenBot, fake: FakeOpenAI
) -> None:
    settings = EngineConfig(context_tokens=4000, short_term_tokens=200, timezone="UTC")
    bot = await bots(make_persona(), settings=settings)
    story = "a long story about many things " * 10
    for i in range(3):
        await say(bot, f"part {i}: {story}")
        await bot.engine.drain()
    fake.outage(*FAILURES, embeddings=False)
    session = await bot.engine.session(make_event())
    before = len(fake.chat_requests)
    fake.reply(Text("[NEUTRAL] Go on."))  # answered once the outage is over...
    fake.recover()
    fake.burst(2, HttpError(500), Truncated())  # ...but the summary call fails
    await say(bot, f"part 3: {story}")
    await bot.engine.drain()
    assert len(fake.chat_requests) == before + 3
    assert session.summary == ""
    assert len([t for t in session.turns if t.role == "user"]) == 4
    await say(bot, f"part 4: {story}")  # the model is back: the old turns fold now
    await bot.engine.drain()
    assert session.summary == "Alice told a long story."
    assert session.turns[-2].text.startswith("part 4")
    conversations = await bot.store.conversations("pip", "discord:dm:u1")
    folded = [t["text"] for c in conversations for t in c.turns if t["role"] == "user"]
    shown = [t.text for t in session.turns if t.role == "user"]
    assert [text.split(":")[0] for text in folded + shown] == [f"part {i}" for i in range(5)]


async def test_a_document_that_cannot_be_summarised_now_is_kept_open(
    bots: OpenBot, fake: FakeOpenAI
) -> None:
    bot = await bots(make_persona())
    text = "The stew's secret is cardamom, added at dawn.\n\n" + "Goats graze. " * 50
    fake.outage(*FAILURES)
    reply = await bot.engine.documents.read(make_event(""), "stew.md", text.encode())
    assert reply.failed and reply.text == catalogue_say("en", "apology")
    fake.recover()
    reply = await say(bot, "what is the stew's secret?")
    assert not reply.failed
    assert "cardamom" in system_of(fake.chat_requests[-1])
    session = await bot.engine.session(make_event())
    assert session.reading is not None and session.reading.name == "stew.md"
    assert [t.text for t in session.turns if t.role == "user"] == [
        "[sent a document: stew.md]",
        "what is the stew's secret?",
    ]


# --- encoding and embedding ---------------------------------------------------------------------


async def test_recall_goes_on_by_words_while_the_embedder_is_out(
    bots: OpenBot, fake: FakeOpenAI
) -> None:
    bot = await bots(make_persona(), embedder=remote_embedder(fake))
    scope = bot.desk.event_scope(make_event())
    await bot.bank.remember(scope, "Alice adopted a kitten called Mochi", when=START)
    fake.outage(*FAILURES, chat=False)
    reply = await say(bot, "How is Mochi doing?")
    assert not reply.failed and reply.text == "echo: How is Mochi doing?"
    assert "kitten called Mochi" in system_of(fake.chat_requests[-1])


async def test_encoding_and_embedding_wait_out_an_outage_and_are_done_once(
    bots: OpenBot, fake: FakeOpenAI
) -> None:
    bot = await bots(make_persona(), embedder=remote_embedder(fake))
    tick = Scheduler(bot.sessions, bot.engine.idle_time, lifecycle=bot.lifecycle).tick
    await say(bot, "I just moved to Lisbon.")
    fake.outage(*FAILURES)
    bot.clock.advance(minutes=6)
    await tick()  # closes the conversation; its encoding fails
    assert encodings(fake) == 2  # tried, and retried once at once
    [conversation] = await bot.store.conversations("pip", "discord:dm:u1")
    assert conversation.encoded_at is None and conversation.attempts == 1

    for wait in (1, 2, 4):  # minutes: each failure doubles the wait
        asked = encodings(fake)
        bot.clock.advance(seconds=wait * 60 - 1)
        await tick()
        assert encodings(fake) == asked  # not yet
        bot.clock.advance(seconds=1)
        await tick()
        assert encodings(fake) == asked + 2  # tried again, in vain

    fake.recover()
    fake.outage(HttpError(503), Truncated(), chat=False)  # the embedder stays out
    bot.clock.advance(minutes=8)
    await tick()
    await tick()
    assert encodings(fake) == 2 * 4 + 1  # done once, after recovery
    [conversation] = await bot.store.conversations("pip", "discord:dm:u1")
    assert conversation.encoded_at is not None
    scope = bot.desk.event_scope(make_event())
    [memory] = await bot.bank.store.list_memories(scope)
    assert memory.text == "2026-03-02: Alice moved to Lisbon."
    diary = await bot.store.diary_entry(scope, date(2026, 3, 2))
    assert diary is not None and "moved to Lisbon" in diary.text
    [profile] = await bot.store.profiles(scope, ["u1"])
    assert "Lisbon" in profile.text
    assert await bot.bank.store.unembedded(scope, bot.bank.embedder.name) == [memory]

    fake.recover()
    bot.clock.advance(minutes=2)  # embed_pending waits out its backoff
    await tick()
    assert not await bot.bank.store.unembedded(scope, bot.bank.embedder.name)
    index = await bot.bank.derived.indexes.get(scope, bot.bank.embedder.name, 8)
    assert index.live == {memory.id}
    asked = len(fake.requests)
    bot.clock.advance(hours=2)
    await tick()
    assert len(fake.requests) == asked  # nothing left to do: no call at all


async def test_encoding_json_that_is_malformed_is_asked_for_again(
    bots: OpenBot, fake: FakeOpenAI
) -> None:
    bot = await bots(make_persona())
    tick = Scheduler(bot.sessions, bot.engine.idle_time, lifecycle=bot.lifecycle).tick
    await say(bot, "I just moved to Lisbon.")
    broken = MOVED[: len(MOVED) // 2]
    fake.reply(Text(broken), Text(f"```json\n{MOVED}\n```"))
    bot.clock.advance(minutes=6)
    await tick()
    assert encodings(fake) == 2
    assert "not usable" in user_texts(fake.chat_requests[-1])
    scope = bot.desk.event_scope(make_event())
    assert [m.text for m in await bot.bank.store.list_memories(scope)] == [
        "2026-03-02: Alice moved to Lisbon."
    ]


# --- the event loop -----------------------------------------------------------------------------


async def test_the_cue_of_a_chinese_message_is_taken_off_the_event_loop(
    bots: OpenBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """jieba's part-of-speech tagger is slow on Chinese (benchmarks/README.md): the recall cue
    of any non-ASCII message is taken in a worker thread."""
    on_loop: list[bool] = []

    def watched(text: str) -> str:
        on_loop.append(threading.current_thread() is threading.main_thread())
        return key_phrase(text)

    monkeypatch.setattr(bot_recollect, "key_phrase", watched)
    bot = await bots(make_persona("mao", name="猫猫", language="zh"))
    await say(bot, "我昨天和阿杰去公园散步，天气很好。" * 20, persona="mao")
    await say(bot, "plain words stay on the loop: they cost microseconds", persona="mao")
    assert on_loop == [False, True]


async def test_long_document_work_runs_off_the_event_loop(
    bots: OpenBot, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cutting a document into parts and picking passages for a question take a second on a
    few MB: they run in worker threads, so other conversations go on meanwhile."""
    threads: dict[str, list[bool]] = {"chunks": [], "excerpts": []}

    def watched(name: str, work: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            threads[name].append(threading.current_thread() is threading.main_thread())
            return work(*args, **kwargs)

        return run

    monkeypatch.setattr(bot_documents, "chunks", watched("chunks", bot_documents.chunks))
    monkeypatch.setattr(document_mode, "excerpts", watched("excerpts", bot_documents.excerpts))
    bot = await bots(make_persona(), settings=EngineConfig(timezone="UTC", context_tokens=2000))
    text = "\n\n".join(f"Part {i}: goats graze on the terraced hills. " * 20 for i in range(30))
    opened = await bot.engine.documents.read(make_event(""), "hills.md", text.encode())
    assert not opened.failed
    await say(bot, "what do the goats do?")
    assert threads["chunks"] and threads["excerpts"]
    assert not any(threads["chunks"] + threads["excerpts"])  # never on the loop's thread
