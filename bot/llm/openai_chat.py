"""`ChatModel` over any OpenAI-compatible endpoint (OpenAI, Zhipu, Ollama, vLLM...)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import openai
from openai import AsyncOpenAI

from bot.chat_model import Completion, Message, ModelError, Tool, ToolCall, Usage
from bot.events import valid_text
from bot.llm.retry import call_with_retries
from memory.remote import describe_error, is_retryable, redact

__all__ = ["OpenAIChatModel", "is_retryable", "make_client", "prompt_cache_key"]


def make_client(base_url: str | None, api_key: str, timeout: float) -> AsyncOpenAI:
    """An SDK client that never retries by itself (OpenAIChatModel does). An empty base_url
    lets the SDK use $OPENAI_BASE_URL or its default; an empty api_key, $OPENAI_API_KEY."""
    return AsyncOpenAI(
        api_key=api_key or None,
        base_url=base_url or None,
        timeout=timeout,
        max_retries=0,
    )


class OpenAIChatModel:
    """One model on one OpenAI-compatible endpoint, through `chat.completions.create` (and
    `audio.transcriptions.create` on the hearing tier, `audio.speech.create` on speech)."""

    def __init__(
        self,
        client: AsyncOpenAI,
        model: str,
        *,
        label: str = "openai",
        timeout: float,
        max_retries: int,
        retry_base_delay: float,
        rng: random.Random,
        extra_body: Mapping[str, Any] | None = None,
        cache_key: bool = False,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        """`cache_key`: send OpenAI's `prompt_cache_key` with each request, a hash of the
        prompt's beginning (`prompt_cache_key()`), so that prompts beginning alike go to the
        same cache."""
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        self._client = client
        self._model = model
        self._label = label
        self._timeout = timeout
        self._max_retries = max_retries
        self._retry_base_delay = retry_base_delay
        self._rng = rng
        self._extra_body = dict(extra_body) if extra_body else None
        self._cache_key = cache_key
        self._sleep = sleep

    @property
    def name(self) -> str:
        return f"{self._label}:{self._model}"

    @property
    def model(self) -> str:
        """The model's name at its endpoint."""
        return self._model

    @property
    def cache_key(self) -> bool:
        """Whether its requests say `prompt_cache_key`."""
        return self._cache_key

    @property
    def endpoint(self) -> str:
        """The address its requests go to."""
        return str(self._client.base_url)

    async def served(self) -> list[str] | None:
        """The models the endpoint lists (`kizuna doctor` checks the configured one is
        there); None when it lists none (not every compatible server has /models).
        ModelError when it cannot be reached or refuses the key."""
        try:
            async with asyncio.timeout(self._timeout):
                page = await self._client.models.list(timeout=self._timeout)
        except openai.NotFoundError:
            return None
        except Exception as exc:
            message = f"{self.name}: {describe_error(exc, self._timeout)}"
            raise ModelError(redact(message, self._client)) from None
        return [model.id for model in page.data]

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Tool] = (),
        json_mode: bool = False,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Completion:
        params: dict[str, Any] = {
            "model": self._model,
            "messages": [_message_param(m) for m in messages],
        }
        if tools:
            params["tools"] = [_tool_param(t) for t in tools]
        if json_mode:
            params["response_format"] = {"type": "json_object"}
        if max_tokens is not None:
            params["max_tokens"] = max_tokens
        if temperature is not None:
            params["temperature"] = temperature
        extra = dict(self._extra_body or {})
        if self._cache_key and messages:
            extra["prompt_cache_key"] = prompt_cache_key(messages)
        if extra:
            params["extra_body"] = extra

        async def create() -> Completion:  # (a body of the wrong shape fails it, unretried)
            response = await self._client.chat.completions.create(
                **params, stream=False, timeout=self._timeout
            )
            return _completion(response, self._model)

        completion: Completion = await self._call(create)
        return completion

    async def transcribe(self, name: str, audio: bytes) -> str:
        """What the recording says, through `audio.transcriptions.create` (Whisper-style; the
        model tells the language: users do not always speak the persona's)."""

        async def create() -> str:
            transcript = await self._client.audio.transcriptions.create(
                model=self._model, file=(name, audio), response_format="json", timeout=self._timeout
            )
            return valid_text(str(transcript.text))

        text: str = await self._call(create)
        return text

    async def speak(self, text: str, voice: str) -> bytes:
        """`text` said aloud in `voice`, through `audio.speech.create`, asked for as OGG/Opus
        (what Telegram plays as a voice note); the bytes as the server sent them."""

        async def create() -> bytes:
            response = await self._client.audio.speech.create(
                model=self._model,
                voice=voice,
                input=valid_text(text),
                response_format="opus",
                timeout=self._timeout,
            )
            return bytes(response.content)

        audio: bytes = await self._call(create)
        return audio

    async def _call(self, create: Callable[[], Awaitable[Any]]) -> Any:
        """`create()` within the timeout, retried as the provider's settings say; ModelError
        when it fails for good."""
        tries = 0

        async def attempt() -> Any:
            nonlocal tries
            tries += 1
            async with asyncio.timeout(self._timeout):  # hard bound on the whole call
                return await create()

        try:
            return await call_with_retries(
                attempt,
                attempts=self._max_retries + 1,
                base_delay=self._retry_base_delay,
                rng=self._rng,
                sleep=self._sleep,
                retryable=is_retryable,
            )
        except Exception as exc:
            retryable = is_retryable(exc)
            tried = f" after {tries} attempts" if tries > 1 else ""
            message = f"{self.name}: {describe_error(exc, self._timeout)}{tried}"
            error = ModelError(redact(message, self._client), retryable=retryable)
            if isinstance(exc, openai.APIError):
                # Its text is the server's and may repeat the key: keep it out of tracebacks.
                raise error from None
            raise error from exc


def prompt_cache_key(messages: Sequence[Message]) -> str:
    """A key for the prompt's beginning: its first message (the persona's or the task's
    system prompt) and the first after it (a conversation's oldest turn in the prompt). It
    stays while the beginning does, and names no one: a hash."""
    first = [m.content for m in messages[:2]]
    return hashlib.sha256("\x00".join(first).encode("utf-8", "replace")).hexdigest()[:32]


def _message_param(message: Message) -> dict[str, Any]:
    # A lone surrogate (a model's own "\\udcff" escape, kept in the conversation) cannot be
    # encoded as UTF-8: it would fail this request and every later one of the conversation.
    param: dict[str, Any] = {"role": message.role, "content": valid_text(message.content)}
    if message.role == "tool":
        param["tool_call_id"] = message.tool_call_id or ""
        return param
    if message.name:
        param["name"] = message.name
    if message.images:  # OpenAI-compatible image input: the text, then each picture
        param["content"] = [
            {"type": "text", "text": param["content"]},
            *(
                {"type": "image_url", "image_url": {"url": _data_url(image)}}
                for image in message.images
            ),
        ]
    if message.role == "assistant" and message.tool_calls:
        param["content"] = param["content"] or None
        param["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": valid_text(call.arguments)},
            }
            for call in message.tool_calls
        ]
    return param


def _data_url(jpeg: bytes) -> str:
    return "data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii")


def _tool_param(tool: Tool) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters or {"type": "object", "properties": {}},
        },
    }


def _completion(response: Any, model: str) -> Completion:
    choices = getattr(response, "choices", None) or []
    text = ""
    calls: list[ToolCall] = []
    if choices:
        message = choices[0].message
        # A model may write a "\\udcff" escape: kept, a lone surrogate fails every write of
        # the reply (a platform's request, a terminal, a file), so it becomes U+FFFD here.
        text = valid_text(_text(message.content))
        for call in message.tool_calls or ():
            function = getattr(call, "function", None)
            if function is None:  # a non-function ("custom") tool call: not ours
                continue
            calls.append(
                ToolCall(
                    id=call.id, name=function.name, arguments=valid_text(function.arguments or "")
                )
            )
    usage = getattr(response, "usage", None)
    return Completion(
        text=text,
        tool_calls=tuple(calls),
        usage=Usage(
            prompt_tokens=_count(getattr(usage, "prompt_tokens", 0)),
            completion_tokens=_count(getattr(usage, "completion_tokens", 0)),
            cached_tokens=_cached(usage),
        ),
        model=getattr(response, "model", None) or model,
    )


def _cached(usage: Any) -> int:
    """The prompt's tokens the provider read from its prompt cache: OpenAI's (and Zhipu's)
    `prompt_tokens_details.cached_tokens`, else DeepSeek's `prompt_cache_hit_tokens`."""
    details = getattr(usage, "prompt_tokens_details", None)
    if isinstance(details, dict):  # (a compatible server's shape the SDK does not know)
        cached = _count(details.get("cached_tokens"))
    else:
        cached = _count(getattr(details, "cached_tokens", 0))
    if not cached and usage is not None:
        extra = getattr(usage, "model_extra", None) or {}
        cached = _count(extra.get("prompt_cache_hit_tokens"))
    return cached


def _text(content: Any) -> str:
    """A message's text: a string, or the text parts of a list (some compatible servers)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "") if isinstance(part, dict) else str(getattr(part, "text", ""))
            for part in content
        )
    raise TypeError(f"message content is {type(content).__name__}")


def _count(value: Any) -> int:
    """A token count as the server gave it; anything but a whole number counts as 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
