"""OpenAIChatModel and call_with_retries, end to end through the real openai SDK against the
loopback fake in tests/fakes/openai_server.py."""

from __future__ import annotations

import random
import socket
from typing import Any

import openai
import pytest

from bot.chat_model import ChatModel, Message, ModelError, Tool, ToolCall
from bot.llm.openai_chat import OpenAIChatModel, make_client
from bot.llm.retry import MAX_DELAY, call_with_retries
from tests.fakes.openai_server import (
    FakeOpenAI,
    Hang,
    HttpError,
    Malformed,
    Raw,
    Text,
    Truncated,
)
from tests.fakes.secrets import OPENAI_API_KEY

KEY = OPENAI_API_KEY


class Sleeps:
    """A sleep that records the delays asked for and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def model_for(
    fake: FakeOpenAI,
    *,
    key: str = KEY,
    timeout: float = 2.0,
    max_retries: int = 2,
    sleep: Sleeps | None = None,
    **kwargs,
) -> OpenAIChatModel:
    return OpenAIChatModel(
        fake.own(make_client(fake.base_url, key, timeout)),
        "fake-chat",
        timeout=timeout,
        max_retries=max_retries,
        retry_base_delay=0.001,
        rng=random.Random(0),
        sleep=sleep or Sleeps(),
        **kwargs,
    )


HELLO = [Message("system", "You are Miao."), Message("user", "hello there")]


def raw_completion(content: Any, usage: dict[str, Any]) -> Raw:
    """A chat completion's body as a server sends it, with this content and usage as given."""
    return Raw(
        {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": "fake-chat",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": usage,
        }
    )


# -- OpenAIChatModel ----------------------------------------------------------------------------


async def test_plain_text_reply(fake_openai: FakeOpenAI) -> None:
    model = model_for(fake_openai, label="zhipu")
    assert isinstance(model, ChatModel)
    assert model.name == "zhipu:fake-chat"
    result = await model.complete(HELLO)
    assert result.text == "[NEUTRAL] echo: hello there"
    assert result.tool_calls == ()
    assert result.model == "fake-chat"
    (request,) = fake_openai.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    body = request.json
    assert body["model"] == "fake-chat"
    assert body["messages"] == [
        {"role": "system", "content": "You are Miao."},
        {"role": "user", "content": "hello there"},
    ]
    assert not body.get("stream")
    for absent in ("max_tokens", "temperature", "response_format", "tools"):
        assert absent not in body


async def test_pictures_go_as_openai_image_input(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply_text("a red square")
    shown = Message("user", "what is this?", images=(b"\xff\xd8jpeg one", b"\xff\xd8two"))
    result = await model_for(fake_openai).complete([HELLO[0], shown])
    assert result.text == "a red square"
    [body] = fake_openai.chat_requests
    text, *pictures = body["messages"][1]["content"]
    assert text == {"type": "text", "text": "what is this?"}
    assert [p["image_url"]["url"][:23] for p in pictures] == ["data:image/jpeg;base64,"] * 2
    assert fake_openai.images == [[b"\xff\xd8jpeg one", b"\xff\xd8two"]]
    assert body["messages"][0]["content"] == "You are Miao."  # no pictures: plain text


async def test_the_prompt_caches_tokens_are_counted(fake_openai: FakeOpenAI) -> None:
    """The fake caches as OpenAI does (a prefix seen before, of 1,024 tokens and more, in
    128-token steps) and says so in `prompt_tokens_details.cached_tokens`, which the usage
    reads; DeepSeek's `prompt_cache_hit_tokens` is read too."""
    model = model_for(fake_openai)
    persona = Message("system", " ".join(f"w{n}" for n in range(1300)))
    first = await model.complete([persona, Message("user", "hi")])
    again = await model.complete([persona, Message("user", "hi"), Message("user", "more")])
    other = await model.complete([Message("system", "short"), Message("user", "hi")])
    # (1,300 words and a role token: the prefix of 1,280 tokens, 1,024 and two steps)
    assert (first.usage.cached_tokens, again.usage.cached_tokens) == (0, 1280)
    assert other.usage.cached_tokens == 0
    fake_openai.reply(
        raw_completion(
            "hi",
            {
                "prompt_tokens": 2000,
                "completion_tokens": 3,
                "total_tokens": 2003,
                "prompt_cache_hit_tokens": 1536,
                "prompt_cache_miss_tokens": 464,
            },
        )
    )
    assert (await model.complete(HELLO)).usage.cached_tokens == 1536


async def test_usage_counted(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply_text("Nya, hello!", usage=(42, 7))
    result = await model_for(fake_openai).complete(HELLO)
    assert result.text == "Nya, hello!"
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (42, 7)
    assert result.usage.total_tokens == 49
    # Without an override the fake counts words, never zero for a real exchange.
    result = await model_for(fake_openai).complete(HELLO)
    assert result.usage.prompt_tokens > 0 and result.usage.completion_tokens > 0


async def test_tool_calls_parsed_and_sent_back(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply_tool_call("remember", {"fact": "likes tea"}, id="call_7")
    tool = Tool(
        "remember",
        "Store a fact",
        {"type": "object", "properties": {"fact": {"type": "string"}}},
    )
    model = model_for(fake_openai)
    result = await model.complete(HELLO, tools=[tool])
    assert result.text == ""
    assert result.tool_calls == (ToolCall("call_7", "remember", '{"fact": "likes tea"}'),)
    assert fake_openai.chat_requests[0]["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "remember",
                "description": "Store a fact",
                "parameters": tool.parameters,
            },
        }
    ]

    follow_up = [
        *HELLO,
        Message("assistant", "", tool_calls=result.tool_calls),
        Message("tool", "stored", tool_call_id="call_7"),
    ]
    result = await model.complete(follow_up, tools=[Tool("noop", "No parameters")])
    assert result.text.startswith("[NEUTRAL] echo:")
    body = fake_openai.chat_requests[1]
    assert body["messages"][2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_7",
                "type": "function",
                "function": {"name": "remember", "arguments": '{"fact": "likes tea"}'},
            }
        ],
    }
    assert body["messages"][3] == {"role": "tool", "content": "stored", "tool_call_id": "call_7"}
    assert body["tools"][0]["function"]["parameters"] == {"type": "object", "properties": {}}


async def test_json_mode_and_sampling_options(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply_text('{"mood": "happy"}')
    result = await model_for(fake_openai).complete(
        HELLO, json_mode=True, max_tokens=50, temperature=0.3
    )
    assert result.text == '{"mood": "happy"}'
    body = fake_openai.chat_requests[0]
    assert body["response_format"] == {"type": "json_object"}
    assert body["max_tokens"] == 50
    assert body["temperature"] == 0.3


async def test_extra_body_reaches_server(fake_openai: FakeOpenAI) -> None:
    extra = {"thinking": {"type": "disabled"}, "do_sample": False}
    await model_for(fake_openai, extra_body=extra).complete(HELLO)
    body = fake_openai.chat_requests[0]
    assert body["thinking"] == {"type": "disabled"}
    assert body["do_sample"] is False


async def test_a_prompt_cache_key_names_the_prompts_beginning(fake_openai: FakeOpenAI) -> None:
    """With `cache_key`, each request says OpenAI's `prompt_cache_key`: the same for prompts
    that begin alike (a conversation's next turn), another for another beginning; a hash,
    naming no one. Without it, nothing is added (others may refuse a field they don't know)."""
    persona, alice = Message("system", "You are Miao."), Message("user", "hi, I'm Alice")
    model = model_for(fake_openai, cache_key=True, extra_body={"do_sample": False})
    await model.complete([persona, alice])
    await model.complete([persona, alice, Message("assistant", "hi!"), Message("user", "bye")])
    await model.complete([persona, Message("user", "hi, I'm Bob")])
    await model_for(fake_openai).complete([persona, alice])
    keys = [body.get("prompt_cache_key") for body in fake_openai.chat_requests]
    assert keys[0] == keys[1] != keys[2] and keys[3] is None
    assert all(len(key) == 32 and "Alice" not in key for key in keys[:3])
    assert fake_openai.chat_requests[0]["do_sample"] is False  # (the provider's own, kept)


async def test_rate_limit_retried_honouring_retry_after(fake_openai: FakeOpenAI) -> None:
    fake_openai.fail(429, retry_after=0.25)
    sleeps = Sleeps()
    result = await model_for(fake_openai, sleep=sleeps).complete(HELLO)
    assert result.text == "[NEUTRAL] echo: hello there"
    assert len(fake_openai.chat_requests) == 2
    assert sleeps.delays == [0.25]


async def test_a_retry_after_longer_than_anyone_should_wait_is_not_retried(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.fail(429, retry_after=3600)
    sleeps = Sleeps()
    with pytest.raises(ModelError, match="HTTP 429"):
        await model_for(fake_openai, sleep=sleeps).complete(HELLO)
    assert len(fake_openai.chat_requests) == 1 and sleeps.delays == []


async def test_an_exhausted_quota_is_not_retried(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply(HttpError(429, "You exceeded your current quota", code="insufficient_quota"))
    with pytest.raises(ModelError) as info:
        await model_for(fake_openai, sleep=Sleeps()).complete(HELLO)
    assert not info.value.retryable and len(fake_openai.chat_requests) == 1


@pytest.mark.parametrize(
    ("error", "requests"),
    [
        (HttpError(408, "request timeout"), 2),
        (HttpError(409, "lock conflict"), 2),
        (HttpError(400, "bad", headers=(("x-should-retry", "true"),)), 2),
        (HttpError(503, "down for good", headers=(("x-should-retry", "false"),)), 1),
    ],
)
async def test_retry_follows_the_sdks_rules(
    fake_openai: FakeOpenAI, error: HttpError, requests: int
) -> None:
    fake_openai.reply(error)
    model = model_for(fake_openai, sleep=Sleeps())
    if requests == 2:
        assert (await model.complete(HELLO)).text.startswith("[NEUTRAL]")
    else:
        with pytest.raises(ModelError):
            await model.complete(HELLO)
    assert len(fake_openai.chat_requests) == requests


@pytest.mark.parametrize(
    "body",
    [
        {"choices": [{"index": 0, "message": None, "finish_reason": "stop"}]},
        {"choices": [{"index": 0, "message": {"role": "assistant", "content": 42}}]},
    ],
)
async def test_a_completion_of_the_wrong_shape_is_a_model_error(
    fake_openai: FakeOpenAI, body: dict[str, Any]
) -> None:
    fake_openai.reply(Raw(body))
    with pytest.raises(ModelError, match="malformed response"):
        await model_for(fake_openai).complete(HELLO)


async def test_content_in_parts_and_odd_usage_are_read(fake_openai: FakeOpenAI) -> None:
    parts = [{"type": "text", "text": "[HAPPY] hello "}, {"type": "text", "text": "there"}]
    fake_openai.reply(
        raw_completion(parts, {"prompt_tokens": "x", "completion_tokens": 3, "total_tokens": 3})
    )
    result = await model_for(fake_openai).complete(HELLO)
    assert result.text == "[HAPPY] hello there"
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (0, 3)


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_server_error_retried(fake_openai: FakeOpenAI, status: int) -> None:
    fake_openai.fail(status)
    sleeps = Sleeps()
    result = await model_for(fake_openai, sleep=sleeps).complete(HELLO)
    assert result.text.startswith("[NEUTRAL]")
    assert len(fake_openai.chat_requests) == 2
    assert len(sleeps.delays) == 1 and 0 <= sleeps.delays[0] <= 0.001


async def test_server_errors_exhaust_retries(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply(*[HttpError(500, "overloaded")] * 5)
    with pytest.raises(ModelError) as info:
        await model_for(fake_openai, max_retries=2).complete(HELLO)
    assert info.value.retryable
    assert len(fake_openai.chat_requests) == 3
    assert "HTTP 500" in str(info.value) and "3 attempts" in str(info.value)


async def test_hang_retried_then_succeeds(fake_openai: FakeOpenAI) -> None:
    fake_openai.hang(5)  # then answers: without the timeout there would be one request
    result = await model_for(fake_openai, timeout=0.2).complete(HELLO)
    assert result.text.startswith("[NEUTRAL]")
    assert len(fake_openai.chat_requests) == 2


async def test_hang_every_time_gives_retryable_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.hang(5).hang(5)  # each then answers: only timeouts make this an error
    with pytest.raises(ModelError) as info:
        await model_for(fake_openai, timeout=0.2, max_retries=1).complete(HELLO)
    assert info.value.retryable
    assert "timed out" in str(info.value)
    assert len(fake_openai.chat_requests) == 2


async def test_zero_retries_means_one_try(fake_openai: FakeOpenAI) -> None:
    fake_openai.fail(503)
    with pytest.raises(ModelError) as info:
        await model_for(fake_openai, max_retries=0).complete(HELLO)
    assert info.value.retryable
    assert len(fake_openai.chat_requests) == 1


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_client_errors_fail_at_once(fake_openai: FakeOpenAI, status: int) -> None:
    fake_openai.fail(status, message="nope")
    sleeps = Sleeps()
    with pytest.raises(ModelError) as info:
        await model_for(fake_openai, sleep=sleeps).complete(HELLO)
    assert not info.value.retryable
    assert f"HTTP {status}" in str(info.value)
    assert len(fake_openai.chat_requests) == 1
    assert sleeps.delays == []


async def test_api_key_never_in_error_text() -> None:
    async with FakeOpenAI(api_key=KEY) as fake:
        fake.reply(*[HttpError(500, f"upstream said {KEY}")] * 3)
        with pytest.raises(ModelError) as server_error:
            await model_for(fake).complete(HELLO)
    async with FakeOpenAI(api_key="the-right-key") as fake:  # its 401 repeats the key sent
        with pytest.raises(ModelError) as auth_error:
            await model_for(fake).complete(HELLO)
        assert len(fake.requests) == 1
    assert server_error.value.retryable and not auth_error.value.retryable
    assert "upstream said ***" in str(server_error.value)
    assert "HTTP 401" in str(auth_error.value) and "Incorrect API key" in str(auth_error.value)
    for error in (server_error.value, auth_error.value):
        assert KEY not in str(error) and "SECRET" not in str(error)
        assert KEY not in repr(error)
        assert error.__cause__ is None and error.__suppress_context__


async def test_a_body_that_is_not_json_is_retried_like_a_dropped_connection(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.reply(Malformed(), Malformed('{"id": "x", "choices": [{"mess'), Text("whole"))
    assert (await model_for(fake_openai).complete(HELLO)).text == "whole"
    assert len(fake_openai.chat_requests) == 3

    fake_openai.burst(3, Malformed())
    with pytest.raises(ModelError, match="malformed response") as info:
        await model_for(fake_openai).complete(HELLO)
    assert info.value.retryable  # the model may answer later: encoding waits and retries
    assert KEY not in str(info.value)
    assert len(fake_openai.chat_requests) == 6


@pytest.mark.parametrize("keep", [0.0, 0.5, 0.99])
async def test_a_reply_cut_by_a_dropped_connection_is_retried_never_half_shown(
    fake_openai: FakeOpenAI, keep: float
) -> None:
    fake_openai.reply(Truncated(Text("a long answer cut in the middle"), keep=keep), Text("all"))
    assert (await model_for(fake_openai).complete(HELLO)).text == "all"
    fake_openai.burst(3, Truncated(keep=keep))
    with pytest.raises(ModelError, match="could not connect") as info:
        await model_for(fake_openai).complete(HELLO)
    assert info.value.retryable
    assert len(fake_openai.chat_requests) == 5


async def test_a_burst_of_mixed_failures_then_recovery(fake_openai: FakeOpenAI) -> None:
    """429 with Retry-After, 500, a hang past the timeout, a cut body: each retried."""
    sleeps = Sleeps()
    fake_openai.burst(
        4, HttpError(429, retry_after=0.05), HttpError(500), Hang(5.0), Truncated()
    ).reply_text("back")
    model = model_for(fake_openai, timeout=0.3, max_retries=4, sleep=sleeps)
    assert (await model.complete(HELLO)).text == "back"
    assert len(fake_openai.chat_requests) == 5
    assert sleeps.delays[0] >= 0.05  # the Retry-After hint, over the jittered backoff


async def test_an_outage_fails_every_call_until_recovery(fake_openai: FakeOpenAI) -> None:
    fake_openai.reply_text("scripted, waiting out the outage")
    fake_openai.outage(HttpError(503), Truncated(), chat=True, embeddings=False)
    model = model_for(fake_openai, max_retries=2)
    for _ in range(2):
        with pytest.raises(ModelError) as info:
            await model.complete(HELLO)
        assert info.value.retryable
    assert len(fake_openai.chat_requests) == 6
    client = fake_openai.own(make_client(fake_openai.base_url, KEY, 2.0))
    assert (await client.embeddings.create(model="e", input="tea")).data  # not in the outage
    fake_openai.recover()
    assert (await model.complete(HELLO)).text == "scripted, waiting out the outage"
    assert (await model.complete(HELLO)).text == "[NEUTRAL] echo: hello there"


async def test_connection_refused_is_retryable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    async with make_client(f"http://127.0.0.1:{port}/v1", KEY, 1.0) as client:
        model = OpenAIChatModel(
            client,
            "m",
            timeout=1.0,
            max_retries=1,
            retry_base_delay=0.001,
            rng=random.Random(0),
            sleep=Sleeps(),
        )
        with pytest.raises(ModelError) as info:
            await model.complete(HELLO)
    assert info.value.retryable
    assert KEY not in str(info.value)


async def test_no_choices_or_null_content_give_empty_text(fake_openai: FakeOpenAI) -> None:
    head = {"id": "x", "object": "chat.completion", "created": 0, "model": "fake-chat"}
    fake_openai.reply(
        Raw({**head, "choices": []}),
        Raw(
            {
                **head,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": None},
                        "finish_reason": "stop",
                    }
                ],
            }
        ),
    )
    model = model_for(fake_openai)
    first = await model.complete(HELLO)
    second = await model.complete(HELLO)
    assert (first.text, first.tool_calls, first.usage.total_tokens) == ("", (), 0)
    assert (second.text, second.tool_calls) == ("", ())


def test_make_client_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    client = make_client("", KEY, 3.0)
    assert str(client.base_url).startswith("http://127.0.0.1:9/v1")
    assert client.max_retries == 0
    assert client.timeout == 3.0
    assert str(make_client("http://x.test/api/paas/v4/", KEY, 3.0).base_url).startswith(
        "http://x.test/api/paas/v4"
    )


# -- call_with_retries ------------------------------------------------------------------------


async def test_retry_backoff_full_jitter_and_cap() -> None:
    calls = 0

    async def flaky() -> str:
        nonlocal calls
        calls += 1
        if calls < 8:
            raise ConnectionError("down")
        return "up"

    sleeps = Sleeps()
    result = await call_with_retries(
        flaky,
        attempts=8,
        base_delay=1.0,
        rng=random.Random(1),
        sleep=sleeps,
        retryable=lambda e: isinstance(e, ConnectionError),
    )
    assert result == "up" and calls == 8
    assert len(sleeps.delays) == 7
    for n, delay in enumerate(sleeps.delays):
        assert 0 <= delay <= min(MAX_DELAY, 2.0**n)


async def test_retry_stops_on_non_retryable_and_on_last_attempt() -> None:
    calls = 0

    async def broken() -> None:
        nonlocal calls
        calls += 1
        raise KeyError("bad")

    with pytest.raises(KeyError):
        await call_with_retries(
            broken,
            attempts=5,
            base_delay=0.0,
            rng=random.Random(0),
            sleep=Sleeps(),
            retryable=lambda e: False,
        )
    assert calls == 1
    with pytest.raises(KeyError):
        await call_with_retries(
            broken,
            attempts=3,
            base_delay=0.0,
            rng=random.Random(0),
            sleep=Sleeps(),
            retryable=lambda e: True,
        )
    assert calls == 4


# -- the fake itself, through the SDK ------------------------------------------------------------


async def test_fake_streams_text_and_tool_calls(fake_openai: FakeOpenAI) -> None:
    client = fake_openai.own(make_client(fake_openai.base_url, KEY, 2.0))
    fake_openai.reply(Text("one two three"))
    stream = await client.chat.completions.create(
        model="fake-chat",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    pieces, finish, usage = [], None, None
    async for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            pieces.append(choice.delta.content or "")
            finish = choice.finish_reason or finish
    assert "".join(pieces) == "one two three"
    assert finish == "stop"
    assert usage is not None and usage.completion_tokens == 3

    fake_openai.reply_tool_call("look", {"at": "moon"})
    stream = await client.chat.completions.create(
        model="fake-chat", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    names, args, finish = [], [], None
    async for chunk in stream:
        for choice in chunk.choices:
            for call in choice.delta.tool_calls or ():
                assert call.function is not None
                names.append(call.function.name)
                args.append(call.function.arguments)
            finish = choice.finish_reason or finish
    assert names == ["look"] and args == ['{"at": "moon"}']
    assert finish == "tool_calls"


async def test_fake_cuts_a_stream_without_its_end(fake_openai: FakeOpenAI) -> None:
    """(Kizuna does not stream; the fake can, for whoever does.)"""
    client = fake_openai.own(make_client(fake_openai.base_url, KEY, 2.0))
    fake_openai.reply(Truncated(Text("one two three four five six"), keep=0.5))
    stream = await client.chat.completions.create(
        model="fake-chat", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    pieces: list[str] = []
    with pytest.raises(openai.APIConnectionError):
        async for chunk in stream:
            pieces.extend(choice.delta.content or "" for choice in chunk.choices)
    assert "".join(pieces) == "one two"  # the role chunk and two of six words, no more


async def test_fake_embeddings_float_and_base64(fake_openai: FakeOpenAI) -> None:
    client = fake_openai.own(make_client(fake_openai.base_url, KEY, 2.0))
    floats = await client.embeddings.create(
        model="fake-embedding", input=["tea", "moon"], encoding_format="float"
    )
    default = await client.embeddings.create(model="fake-embedding", input=["tea", "moon"])
    assert fake_openai.embedding_requests[0]["encoding_format"] == "float"
    assert fake_openai.embedding_requests[1].get("encoding_format", "base64") == "base64"
    assert [d.embedding for d in floats.data] == [d.embedding for d in default.data]
    tea, moon = (d.embedding for d in floats.data)
    assert len(tea) == 8 and tea != moon
    assert abs(sum(v * v for v in tea) - 1.0) < 1e-5
    assert floats.usage.prompt_tokens == 2
    again = await client.embeddings.create(
        model="fake-embedding", input="tea", encoding_format="float"
    )
    assert again.data[0].embedding == tea
    wide = await client.embeddings.create(model="fake-embedding", input="tea", dimensions=32)
    assert len(wide.data[0].embedding) == 32

    fake_openai.embedding_replies.append(HttpError(503))
    with pytest.raises(openai.InternalServerError):
        await client.embeddings.create(model="fake-embedding", input="tea")


async def test_fake_models_and_zhipu_prefix(fake_openai: FakeOpenAI) -> None:
    client = fake_openai.own(make_client(fake_openai.zhipu_base_url, "id.secret", 2.0))
    models = await client.models.list()
    assert [m.id for m in models.data] == ["fake-chat", "fake-embedding"]
    await OpenAIChatModel(
        client, "glm-4", timeout=2.0, max_retries=0, retry_base_delay=0.0, rng=random.Random(0)
    ).complete(HELLO)
    assert fake_openai.requests[-1].path == "/api/paas/v4/chat/completions"
    assert fake_openai.requests[-1].headers["Authorization"] == "Bearer id.secret"


def test_fake_in_a_thread() -> None:
    with FakeOpenAI() as fake:
        fake.reply_text("from the thread")
        client = openai.OpenAI(base_url=fake.base_url, api_key=KEY, max_retries=0, timeout=2.0)
        reply = client.chat.completions.create(
            model="fake-chat", messages=[{"role": "user", "content": "hi"}]
        )
        assert reply.choices[0].message.content == "from the thread"
        fake.hang(30)  # stop() must not wait for a hanging handler
        with pytest.raises(openai.APITimeoutError):
            client.with_options(timeout=0.1).chat.completions.create(
                model="fake-chat", messages=[{"role": "user", "content": "hi"}]
            )
    assert len(fake.chat_requests) == 2
