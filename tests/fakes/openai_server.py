"""A scriptable OpenAI-compatible server on 127.0.0.1 for tests.

    async with FakeOpenAI() as fake:             # in the test's event loop
        fake.reply_text("hi")                     # queue scripted replies...
        fake.fail(429, retry_after=0.01)
        client = AsyncOpenAI(base_url=fake.base_url, api_key="k", max_retries=0)

    with FakeOpenAI() as fake:                    # or in a background thread (own loop),
        subprocess.run(..., env={"OPENAI_BASE_URL": fake.base_url, ...})  # e.g. for a subprocess

Routes live under /v1 (`base_url`) and Zhipu's /api/paas/v4 (`zhipu_base_url`):
POST chat/completions (plain or SSE streaming), POST embeddings, GET models, POST
audio/transcriptions (multipart, recorded in `transcriptions`; the next of `transcripts`,
else "fake transcript of <file name>"; audio whose first bytes are no known container's gets
OpenAI's 400 "could not be decoded"), POST audio/speech (JSON, recorded in `speeches`; the
next of `voices`, else `ogg_opus()`, a short valid OGG/Opus stream's first page); and Zhipu's
POST /api/paas/v4/tools (web-search-pro), answering from `search_replies`.
Chat completions take the next scripted reply from `replies`; when it is empty they answer
`default_reply(body)` (by default "[NEUTRAL] echo: <last user message>"). Embeddings take the
next reply from `embedding_replies` (errors, hangs, malformed, truncated or raw bodies), else
deterministic unit vectors derived from a hash of each input. Every request is recorded in
`requests`. Image input (a user message's `image_url` parts, OpenAI's shape) is checked as
OpenAI checks it (a data URL of an image, else 400 "invalid_image"); `images` gives the pictures
each chat request was sent, decoded.

Faults, for outage tests:
    fake.fail(429, retry_after=0.01)              # one scripted error (HttpError)
    fake.reply(Hang(5), Malformed(), Truncated())  # a hung request, a body that is not JSON,
                                                   # a body (or SSE stream) cut by a dropped
                                                   # connection
    fake.burst(4, HttpError(500), Truncated())     # the next 4 chat requests fail, taking
                                                   # these in turn (embeddings=True: embeddings)
    fake.outage(HttpError(503))                    # every chat and embedding request fails...
    fake.recover()                                 # ...until this; scripted replies waited
    fake.release_hangs()                           # requests hanging now answer at once
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import itertools
import json
import math
import random
import re
import struct
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from aiohttp import web

__all__ = [
    "FakeOpenAI",
    "FakeToolCall",
    "Hang",
    "HttpError",
    "Malformed",
    "Raw",
    "RecordedRequest",
    "Reply",
    "Text",
    "ToolCalls",
    "Truncated",
    "echo_reply",
    "ogg_opus",
]


@dataclass(frozen=True)
class Text:
    """A plain assistant reply. `usage` overrides the (prompt, completion) token counts."""

    text: str
    finish_reason: str = "stop"
    usage: tuple[int, int] | None = None


@dataclass(frozen=True)
class FakeToolCall:
    name: str
    arguments: str | dict[str, Any] = field(default_factory=dict)  # a dict is JSON-encoded
    id: str | None = None  # None: "call_<n>"


@dataclass(frozen=True)
class ToolCalls:
    """An assistant reply calling tools (finish_reason "tool_calls"), with optional text."""

    calls: tuple[FakeToolCall, ...]
    text: str = ""
    usage: tuple[int, int] | None = None


@dataclass(frozen=True)
class HttpError:
    """An OpenAI-style error body with this status (and a Retry-After header if given);
    `code` replaces the body's error code, `headers` adds response headers."""

    status: int
    message: str | None = None
    retry_after: float | None = None
    code: str | None = None
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Hang:
    """Wait `seconds` (woken early when the fake stops), then answer `then` (None: the default
    reply). Longer than the client's timeout, it looks like a hung server."""

    seconds: float = 30.0
    then: Reply | None = None


@dataclass(frozen=True)
class Malformed:
    """A 200 response whose JSON body is cut short."""

    body: str = '{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{'


@dataclass(frozen=True)
class Raw:
    """Any JSON body as is (e.g. no choices, or null content)."""

    body: Any
    status: int = 200


@dataclass(frozen=True)
class Truncated:
    """The answer (`reply`, or the default one) cut off by a dropped connection: a plain body
    stops after `keep` of its bytes (its Content-Length promised more); a stream stops after
    `keep` of its chunks, without the final chunk or `data: [DONE]`. On embeddings, `reply`
    must be None. (`Malformed` is a cut body delivered whole.)"""

    reply: Text | ToolCalls | None = None
    keep: float = 0.5


Reply = Text | ToolCalls | HttpError | Hang | Malformed | Raw | Truncated


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    json: Any  # the parsed body, or None


def _content_text(content: Any) -> str:
    """Text of a message's content: a string, or a list of parts ({"type": "text", ...})."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(part.get("text", "")) for part in content if isinstance(part, dict)
        ).strip()
    return ""


def images_of(body: Any) -> list[bytes]:
    """The pictures a chat request's messages carry, decoded from their data URLs."""
    found: list[bytes] = []
    for message in body.get("messages") or [] if isinstance(body, dict) else []:
        content = message.get("content") if isinstance(message, dict) else None
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and part.get("type") == "image_url":
                url = str((part.get("image_url") or {}).get("url", ""))
                header, _, data = url.partition(",")
                if not (header.startswith("data:image/") and header.endswith(";base64")):
                    raise ValueError("image_url is not a base64 data URL of an image")
                found.append(base64.b64decode(data, validate=True))
    return found


def system_of(body: dict[str, Any]) -> str:
    """A chat request's system messages' text, joined: a chat prompt's system prompt and the
    note before its newest turn (the time, the memories recalled, what is due)."""
    return "\n\n".join(
        _content_text(m.get("content"))
        for m in body.get("messages") or []
        if isinstance(m, dict) and m.get("role") == "system"
    )


def echo_reply(body: dict[str, Any]) -> str:
    """The default reply: "[NEUTRAL] echo: <last user message>"."""
    messages = body.get("messages") or []
    last = ""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            last = _content_text(message.get("content"))
            break
    return f"[NEUTRAL] echo: {last}"


def _tokens(text: str) -> int:
    return len(text.split())


# OpenAI's prompt cache: a prompt's first 1,024 tokens, then each 128 more, are reused when an
# earlier prompt (to the same model) began with exactly them.
CACHE_MIN_TOKENS = 1024
CACHE_STEP_TOKENS = 128


def prompt_tokens(body: dict[str, Any], tokenize: Callable[[str], list[str]]) -> list[str]:
    """A chat request as the tokens a prompt cache sees, in order: the tools' definitions,
    then each message's role and text (and a token for each picture it shows)."""
    tokens: list[str] = []
    if body.get("tools"):
        tokens += tokenize(json.dumps(body["tools"], sort_keys=True))
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        tokens.append(f"<|{message.get('role')}|>")
        tokens += tokenize(_content_text(message.get("content")))
        if message.get("tool_calls"):
            tokens += tokenize(json.dumps(message["tool_calls"], sort_keys=True))
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and part.get("type") == "image_url":
                url = str((part.get("image_url") or {}).get("url", ""))
                tokens.append(hashlib.sha256(url.encode()).hexdigest())
    return tokens


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_exceeded",
}


def _drop(request: web.Request) -> None:
    """Close the connection under a response being sent (a server or proxy dying mid-reply)."""
    if request.transport is not None:
        request.transport.close()


# The first bytes of the recordings OpenAI decodes: Ogg, MP3 (tagged or a frame), WAV, FLAC,
# WebM (MP4/M4A: "ftyp" at byte 4).
_AUDIO_MAGIC = (b"OggS", b"ID3", b"\xff\xfb", b"\xff\xf3", b"RIFF", b"fLaC", b"\x1aE\xdf\xa3")


def ogg_opus() -> bytes:
    """The first page of an OGG/Opus stream (its OpusHead): a real Ogg page, checksum and
    all, as /audio/speech's response_format "opus" begins."""
    head = b"OpusHead" + struct.pack("<BBHIhB", 1, 1, 312, 48000, 0, 0)
    page = bytearray(
        b"OggS" + struct.pack("<BBqIII", 0, 2, 0, 0x4B5A, 0, 0) + bytes([1, len(head)]) + head
    )
    struct.pack_into("<I", page, 22, _ogg_crc(bytes(page)))
    return bytes(page)


def _ogg_crc(data: bytes) -> int:
    """Ogg's page checksum: CRC-32, polynomial 0x04C11DB7, unreflected, starting at 0."""
    crc = 0
    for byte in data:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7 if crc & 0x80000000 else crc << 1) & 0xFFFFFFFF
    return crc


def _error_response(
    status: int, message: str, retry_after: float | None = None, code: str | None = None
) -> web.Response:
    headers = {"retry-after": f"{retry_after:g}"} if retry_after is not None else None
    body = {
        "error": {
            "message": message,
            "type": _ERROR_TYPES.get(status, "server_error" if status >= 500 else "api_error"),
            "param": None,
            "code": code or str(status),
        }
    }
    return web.json_response(body, status=status, headers=headers)


class _Closable(Protocol):
    async def close(self) -> None: ...


_C = TypeVar("_C", bound=_Closable)


class FakeOpenAI:
    def __init__(
        self,
        *,
        embedding_dim: int = 8,
        api_key: str | None = None,
        models: tuple[str, ...] = ("fake-chat", "fake-embedding"),
        default_reply: Callable[[dict[str, Any]], str] = echo_reply,
        respond: Callable[[dict[str, Any]], Awaitable[Text | ToolCalls]] | None = None,
        port: int = 0,
    ) -> None:
        """`api_key`: when set, requests without `Bearer <api_key>` get a 401 whose message
        repeats the key they sent (as careless servers do). `respond`: what answers a chat
        request nothing was scripted for, instead of `default_reply` (a model that calls
        tools: tests/fakes/playground.py)."""
        self.respond = respond
        self._port = port  # 0: any free one
        self.embedding_dim = embedding_dim
        self.api_key = api_key
        self.models = models
        self.default_reply = default_reply
        self.replies: deque[Reply] = deque()
        self.embedding_replies: deque[Reply] = deque()
        # Zhipu's web-search-pro (POST /api/paas/v4/tools): scripted errors or Raw bodies,
        # else two results made from the query.
        self.search_replies: deque[Reply] = deque()
        # Set to give embeddings a meaning (text, dimension -> vector); by default each text
        # gets a random unit vector seeded by its hash.
        self.embed_fn: Callable[[str, int], list[float]] | None = None
        self.requests: list[RecordedRequest] = []
        # Transcription requests: their form fields, the file's name (`file_name`) and bytes
        # (`audio`); `transcripts` are the next answers (text, or an HttpError).
        self.transcriptions: list[dict[str, Any]] = []
        self.transcripts: deque[str | HttpError] = deque()
        # Speech requests: their JSON bodies (model, voice, input, response_format); `voices`
        # are the next answers (audio bytes, or an HttpError).
        self.speeches: list[dict[str, Any]] = []
        self.voices: deque[bytes | HttpError] = deque()
        # While set (outage()), requests to these endpoints ("completions", "embeddings")
        # answer these replies in turn, not the scripts.
        self._outage: dict[str, tuple[Reply, ...]] = {}
        self._outage_turn = itertools.count()
        self.port = 0
        self._ids = itertools.count(1)
        # The prompt cache (`cached_tokens` in each chat completion's usage): the hashes of the
        # prompt prefixes seen, each CACHE_MIN_TOKENS long or CACHE_STEP_TOKENS more; how a
        # prompt is cut into tokens (words, as the usage counts them, unless set).
        self._cached_prefixes: set[bytes] = set()
        self.tokenize: Callable[[str], list[str]] = str.split
        self._runner: web.AppRunner | None = None
        self._closing: asyncio.Event | None = None
        self._release: asyncio.Event | None = None  # set (and replaced) by release_hangs()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._clients: list[_Closable] = []

    def own(self, client: _C) -> _C:
        """`client`, closed when the server is (before it stops): an SDK client left to the
        garbage collector logs its unfinished close into whichever test runs then."""
        self._clients.append(client)
        return client

    # -- scripting ------------------------------------------------------------------------

    def reply(self, *replies: Reply) -> FakeOpenAI:
        self.replies.extend(replies)
        return self

    def reply_text(self, text: str, *, usage: tuple[int, int] | None = None) -> FakeOpenAI:
        return self.reply(Text(text, usage=usage))

    def reply_tool_call(
        self,
        name: str,
        arguments: str | dict[str, Any] | None = None,
        *,
        id: str | None = None,
        text: str = "",
    ) -> FakeOpenAI:
        return self.reply(ToolCalls((FakeToolCall(name, arguments or {}, id),), text=text))

    def fail(
        self, status: int, *, retry_after: float | None = None, message: str | None = None
    ) -> FakeOpenAI:
        return self.reply(HttpError(status, message, retry_after))

    def hang(self, seconds: float = 30.0) -> FakeOpenAI:
        return self.reply(Hang(seconds))

    def malformed(self) -> FakeOpenAI:
        return self.reply(Malformed())

    def burst(self, count: int, *failures: Reply, embeddings: bool = False) -> FakeOpenAI:
        """Queue `count` failing replies, taking `failures` in turn (default: HTTP 503), on
        chat completions, or on embeddings; afterwards the service is back."""
        cycle = itertools.cycle(failures or (HttpError(503),))
        script = self.embedding_replies if embeddings else self.replies
        script.extend(next(cycle) for _ in range(count))
        return self

    def outage(self, *failures: Reply, chat: bool = True, embeddings: bool = True) -> FakeOpenAI:
        """From now until `recover()`, every chat completion and/or embedding request answers
        the next of `failures` in turn (default: HTTP 503); the scripts wait meanwhile."""
        replies = failures or (HttpError(503),)
        for kind, on in (("completions", chat), ("embeddings", embeddings)):
            if on:
                self._outage[kind] = replies
        return self

    def recover(self) -> FakeOpenAI:
        """End the outage."""
        self._outage.clear()
        return self

    # -- what was received -----------------------------------------------------------------

    @property
    def chat_requests(self) -> list[Any]:
        """JSON bodies of the chat completion requests, in order."""
        return [r.json for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def images(self) -> list[list[bytes]]:
        """The pictures each chat completion request carried (image input), in order."""
        return [images_of(body) for body in self.chat_requests]

    @property
    def embedding_requests(self) -> list[Any]:
        return [r.json for r in self.requests if r.path.endswith("/embeddings")]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def zhipu_base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/paas/v4/"

    # -- lifecycle: in the current loop --------------------------------------------------------

    async def start(self) -> FakeOpenAI:
        self._closing = asyncio.Event()
        self._release = asyncio.Event()
        app = web.Application()
        for prefix in ("/v1", "/api/paas/v4"):
            app.router.add_post(f"{prefix}/chat/completions", self._chat)
            app.router.add_post(f"{prefix}/embeddings", self._embeddings)
            app.router.add_get(f"{prefix}/models", self._models)
            app.router.add_post(f"{prefix}/audio/transcriptions", self._transcribe)
            app.router.add_post(f"{prefix}/audio/speech", self._speech)
        app.router.add_post("/api/paas/v4/tools", self._tools)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self._port)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def aclose(self) -> None:
        while self._clients:
            await self._clients.pop().close()
        if self._closing is not None:
            self._closing.set()  # wake hanging handlers so shutdown does not wait for them
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeOpenAI:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- lifecycle: in a background thread with its own loop -------------------------------------

    def start_in_thread(self) -> FakeOpenAI:
        """Serve from a daemon thread (for code under test that runs its own loop or process)."""
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self.start())
            except BaseException as exc:  # report to the starting thread
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self.aclose())
            loop.close()

        self._thread = threading.Thread(target=run, name="fake-openai", daemon=True)
        self._thread.start()
        ready.wait(10)
        if failure:
            raise failure[0]
        return self

    def stop(self) -> None:
        """Stop the server started by start_in_thread()."""
        if self._thread is None or self._loop is None:
            return
        loop = self._loop
        if self._closing is not None:
            loop.call_soon_threadsafe(self._closing.set)
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(10)
        self._thread = None
        self._loop = None

    def __enter__(self) -> FakeOpenAI:
        return self.start_in_thread()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- handlers -----------------------------------------------------------------------------

    async def _record(self, request: web.Request) -> Any:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        self.requests.append(
            RecordedRequest(request.method, request.path, dict(request.headers), body)
        )
        return body

    def _unauthorized(self, request: web.Request) -> web.Response | None:
        if self.api_key is None:
            return None
        header = request.headers.get("Authorization", "")
        if header == f"Bearer {self.api_key}":
            return None
        sent = header.removeprefix("Bearer ")
        return _error_response(401, f"Incorrect API key provided: {sent}.")

    def release_hangs(self) -> None:
        """Wake the requests hanging now: each answers its Hang's `then` at once."""
        if self._loop is not None:  # served from a thread: wake them in its loop
            self._loop.call_soon_threadsafe(self._wake_hangs)
        else:
            self._wake_hangs()

    def _wake_hangs(self) -> None:
        if self._release is not None:
            self._release.set()
            self._release = asyncio.Event()  # later hangs wait again

    async def _wait(self, seconds: float) -> None:
        assert self._closing is not None and self._release is not None
        wakers = [asyncio.ensure_future(e.wait()) for e in (self._closing, self._release)]
        try:
            await asyncio.wait(wakers, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waker in wakers:
                waker.cancel()

    async def _take(
        self, request: web.Request, script: deque[Reply]
    ) -> tuple[dict[str, Any], Reply | None, web.Response | None]:
        """Record the request, check its key and body, and take the next reply (the outage's,
        while one lasts, else the script's): (body, reply left to answer, or a response
        already made)."""
        body = await self._record(request)
        denied = self._unauthorized(request)
        if denied is not None:
            return {}, None, denied
        if not isinstance(body, dict):
            return {}, None, _error_response(400, "body must be a JSON object")
        failures = self._outage.get(request.path.rsplit("/", 1)[-1])
        if failures:
            reply: Reply | None = failures[next(self._outage_turn) % len(failures)]
        else:
            reply = script.popleft() if script else None
        left, response = await self._common(reply)
        return body, left, response

    async def _common(self, reply: Reply | None) -> tuple[Reply | None, web.Response | None]:
        """Handle the replies any endpoint understands; returns (reply left, response)."""
        while isinstance(reply, Hang):
            await self._wait(reply.seconds)
            reply = reply.then
        if isinstance(reply, HttpError):
            message = reply.message or f"scripted error {reply.status}"
            response = _error_response(reply.status, message, reply.retry_after, reply.code)
            response.headers.update(dict(reply.headers))
            return None, response
        if isinstance(reply, Malformed):
            return None, web.Response(
                status=200, body=reply.body.encode(), content_type="application/json"
            )
        if isinstance(reply, Raw):
            return None, web.json_response(reply.body, status=reply.status)
        return reply, None

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body, reply, response = await self._take(request, self.replies)
        if response is not None:
            return response
        try:
            images_of(body)
        except ValueError as e:  # (binascii.Error is one too)
            return _error_response(400, f"Invalid image: {e}", code="invalid_image")
        cut: float | None = None
        if isinstance(reply, Truncated):
            cut, reply = reply.keep, reply.reply
        if reply is None and self.respond is not None:
            reply = await self.respond(body)
        if reply is None:
            reply = Text(self.default_reply(body))
        if not isinstance(reply, Text | ToolCalls):
            return _error_response(500, f"fake: cannot answer {type(reply).__name__} here")

        n = next(self._ids)
        model = str(body.get("model") or self.models[0])
        calls: list[dict[str, Any]] = []
        if isinstance(reply, ToolCalls):
            for i, call in enumerate(reply.calls):
                args = call.arguments
                calls.append(
                    {
                        "id": call.id or f"call_{n}_{i}",
                        "type": "function",
                        "function": {
                            "name": call.name,
                            "arguments": args if isinstance(args, str) else json.dumps(args),
                        },
                    }
                )
        finish = "tool_calls" if calls else reply.finish_reason if isinstance(reply, Text) else ""
        prompt = sum(
            _tokens(_content_text(m.get("content")))
            for m in body.get("messages") or []
            if isinstance(m, dict)
        )
        completion = _tokens(reply.text) + sum(_tokens(c["function"]["arguments"]) for c in calls)
        if reply.usage is not None:
            prompt, completion = reply.usage
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": min(self._cache(body), prompt)},
        }
        head = {"id": f"chatcmpl-fake-{n}", "created": int(time.time()), "model": model}
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return await self._stream(
                request, head, reply.text, calls, finish, usage, include_usage, cut
            )
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if calls:
            message["tool_calls"] = calls
        elif message["content"] is None:
            message["content"] = ""
        answer = {
            **head,
            "object": "chat.completion",
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
            ],
            "usage": usage,
        }
        if cut is not None:
            return await self._cut(request, answer, cut)
        return web.json_response(answer)

    def _cache(self, body: dict[str, Any]) -> int:
        """The tokens of this prompt an earlier one's cache holds (OpenAI's rule: the longest
        prefix seen before, of CACHE_MIN_TOKENS and more in CACHE_STEP_TOKENS steps; 0 for
        anything shorter); its own prefixes are cached for the prompts after it."""
        digest = hashlib.blake2b(str(body.get("model")).encode())
        cached, missed, seen = 0, False, []
        boundary = CACHE_MIN_TOKENS
        for count, token in enumerate(prompt_tokens(body, self.tokenize), 1):
            digest.update(token.encode("utf-8", "replace") + b"\x00")
            if count == boundary:
                key = digest.digest()
                missed = missed or key not in self._cached_prefixes
                cached = cached if missed else count
                seen.append(key)
                boundary += CACHE_STEP_TOKENS
        self._cached_prefixes.update(seen)
        return cached

    @staticmethod
    async def _cut(request: web.Request, answer: Any, keep: float) -> web.StreamResponse:
        """Send `keep` of the JSON body `answer`, then drop the connection."""
        data = json.dumps(answer).encode()
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.content_length = len(data)
        await response.prepare(request)
        await response.write(data[: int(len(data) * keep)])
        _drop(request)
        return response

    async def _stream(
        self,
        request: web.Request,
        head: dict[str, Any],
        text: str,
        calls: list[dict[str, Any]],
        finish: str,
        usage: dict[str, Any],
        include_usage: bool,
        cut: float | None = None,
    ) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)

        async def send(payload: str) -> None:
            await response.write(f"data: {payload}\n\n".encode())

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> str:
            choice = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
            return json.dumps({**head, "object": "chat.completion.chunk", "choices": [choice]})

        chunks = [chunk({"role": "assistant", "content": ""})]
        chunks += [chunk({"content": piece}) for piece in re.findall(r"\s*\S+", text)]
        chunks += [chunk({"tool_calls": [{"index": i, **call}]}) for i, call in enumerate(calls)]
        if cut is not None:  # part of the content, then the connection drops
            for payload in chunks[: max(1, int(len(chunks) * cut))]:
                await send(payload)
            _drop(request)
            return response
        for payload in chunks:
            await send(payload)
        await send(chunk({}, finish))
        if include_usage:
            last = {**head, "object": "chat.completion.chunk", "choices": [], "usage": usage}
            await send(json.dumps(last))
        await send("[DONE]")
        await response.write_eof()
        return response

    def _vector(self, text: str, dim: int) -> list[float]:
        if self.embed_fn is not None:
            return self.embed_fn(text, dim)
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
        rng = random.Random(seed)
        values = [rng.gauss(0.0, 1.0) for _ in range(dim)]
        norm = math.sqrt(sum(v * v for v in values)) or 1.0
        # Rounded through float32 so float and base64 answers carry the same numbers.
        return list(struct.unpack(f"<{dim}f", struct.pack(f"<{dim}f", *(v / norm for v in values))))

    async def _transcribe(self, request: web.Request) -> web.Response:
        """OpenAI's /audio/transcriptions: a multipart form with `file` and `model`."""
        form = await request.post()
        fields = {k: v for k, v in form.items() if isinstance(v, str)}
        upload = form.get("file")
        audio = upload.file.read() if isinstance(upload, web.FileField) else b""
        name = upload.filename if isinstance(upload, web.FileField) else ""
        self.requests.append(RecordedRequest(request.method, request.path, {}, fields))
        denied = self._unauthorized(request)
        if denied is not None:
            return denied
        self.transcriptions.append({**fields, "file_name": name, "audio": audio})
        if not audio or "model" not in fields:
            return _error_response(400, "file and model are required")
        if not audio.startswith(_AUDIO_MAGIC) and audio[4:8] != b"ftyp":
            return _error_response(
                400,
                "Audio file could not be decoded or its format is not supported.",
                code="invalid_value",
            )
        answer = self.transcripts.popleft() if self.transcripts else f"fake transcript of {name}"
        if isinstance(answer, HttpError):
            return _error_response(answer.status, answer.message or "scripted error")
        if fields.get("response_format") == "text":
            return web.Response(text=answer)
        return web.json_response({"text": answer})

    async def _speech(self, request: web.Request) -> web.Response:
        """OpenAI's /audio/speech: JSON with model, voice and input; the audio in the body."""
        body = await request.json()
        self.requests.append(RecordedRequest(request.method, request.path, {}, body))
        denied = self._unauthorized(request)
        if denied is not None:
            return denied
        self.speeches.append(body)
        if not body.get("input") or not body.get("model") or not body.get("voice"):
            return _error_response(400, "model, voice and input are required")
        answer = self.voices.popleft() if self.voices else ogg_opus()
        if isinstance(answer, HttpError):
            return _error_response(answer.status, answer.message or "scripted error")
        kind = "audio/ogg" if answer.startswith(b"OggS") else "application/octet-stream"
        return web.Response(body=answer, content_type=kind)

    async def _embeddings(self, request: web.Request) -> web.StreamResponse:
        body, reply, response = await self._take(request, self.embedding_replies)
        if response is not None:
            return response
        cut: float | None = None
        if isinstance(reply, Truncated) and reply.reply is None:
            cut, reply = reply.keep, None
        if reply is not None:
            return _error_response(500, f"fake: cannot answer {type(reply).__name__} here")
        raw = body.get("input")
        if isinstance(raw, str):
            inputs = [raw]
        elif isinstance(raw, list) and raw and all(isinstance(x, int) for x in raw):
            inputs = [" ".join(map(str, raw))]  # one input given as token ids
        elif isinstance(raw, list) and raw:
            inputs = [x if isinstance(x, str) else " ".join(map(str, x)) for x in raw]
        else:
            return _error_response(400, "input must be a non-empty string or list")
        dim = body.get("dimensions")
        dim = dim if isinstance(dim, int) and dim > 0 else self.embedding_dim
        # Like the real API, float unless base64 is asked for (the openai SDK asks for base64
        # by default and decodes it).
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for i, text in enumerate(inputs):
            vector = self._vector(text, dim)
            embedding: Any = (
                base64.b64encode(struct.pack(f"<{dim}f", *vector)).decode() if as_base64 else vector
            )
            data.append({"object": "embedding", "index": i, "embedding": embedding})
        tokens = sum(_tokens(t) for t in inputs)
        answer = {
            "object": "list",
            "data": data,
            "model": str(body.get("model") or self.models[-1]),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
        if cut is not None:
            return await self._cut(request, answer, cut)
        return web.json_response(answer)

    @property
    def search_requests(self) -> list[Any]:
        return [r.json for r in self.requests if r.path.endswith("/tools")]

    async def _tools(self, request: web.Request) -> web.StreamResponse:
        body, _, response = await self._take(request, self.search_replies)
        if response is not None:
            return response
        query = _content_text((body.get("messages") or [{}])[-1].get("content", ""))
        hits = [
            {
                "title": f"{query} ({n})",
                "link": f"https://example.org/{n}",
                "content": f"What page {n} says about {query}.",
                "media": "example.org",
                "refer": f"ref_{n}",
                "index": n,
            }
            for n in (1, 2)
        ]
        calls = [
            {"id": "i", "type": "search_intent", "search_intent": [{"query": query}]},
            {"id": "r", "type": "search_result", "search_result": hits},
        ]
        return web.json_response(
            {
                "id": f"search-{next(self._ids)}",
                "created": int(time.time()),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "tool", "tool_calls": calls},
                    }
                ],
            }
        )

    async def _models(self, request: web.Request) -> web.StreamResponse:
        await self._record(request)
        denied = self._unauthorized(request)
        if denied is not None:
            return denied
        return web.json_response(
            {
                "object": "list",
                "data": [
                    {"id": m, "object": "model", "created": 0, "owned_by": "fake"}
                    for m in self.models
                ],
            }
        )
