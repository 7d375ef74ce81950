"""The seam between the bot and any chat model: messages in, text + tool calls + usage out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from memory.errors import KizunaError

__all__ = [
    "ChatModel",
    "Completion",
    "Hearer",
    "Message",
    "ModelError",
    "Speaker",
    "Tool",
    "ToolCall",
    "Usage",
]

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(slots=True, frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as the model wrote it (it may be malformed)


@dataclass(slots=True, frozen=True)
class Message:
    role: Role
    content: str
    name: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    # Pictures shown with a user message, as JPEG bytes (bot.media.pictures shrinks them first):
    # OpenAI-compatible image input, for a model that sees.
    images: tuple[bytes, ...] = field(default=(), repr=False)


@dataclass(slots=True, frozen=True)
class Tool:
    """A function the model may call; `parameters` is a JSON schema object."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # of the prompt's, read from the provider's prompt cache

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(slots=True, frozen=True)
class Completion:
    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()
    model: str = ""


class ModelError(KizunaError):
    """A model call failed for good (after retries): the caller apologises and keeps the turn.

    `retryable` says whether the cause was transient (rate limit, server error, timeout,
    network), so work such as encoding can be tried again later.
    """

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


@runtime_checkable
class ChatModel(Protocol):
    """One model behind one provider. Implementations raise `ModelError` on failure."""

    @property
    def name(self) -> str: ...

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Tool] = (),
        json_mode: bool = False,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Completion: ...


@runtime_checkable
class Hearer(Protocol):
    """A model that writes down what a recording says (the `hearing` tier): OpenAI-compatible
    `/audio/transcriptions`, or the offline model's stub. Raises `ModelError` on failure (a
    recording it cannot decode among them)."""

    async def transcribe(self, name: str, audio: bytes) -> str: ...


@runtime_checkable
class Speaker(Protocol):
    """A model that says a text aloud (the `speech` tier): OpenAI-compatible `/audio/speech`,
    in the provider's `voice`. Returns the audio as the server sent it (OGG/Opus asked for; a
    compatible server may send another format). Raises `ModelError` on failure."""

    async def speak(self, text: str, voice: str) -> bytes: ...
