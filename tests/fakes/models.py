"""A scripted in-process `ChatModel`, and a router that sends every tier to it.

    model = ScriptedChatModel(["[HAPPY] hi", ModelError("down"), '{"party": "Ann"}'])
    router = make_router(model)

Each call takes the next script item: a `str` is the reply text, a `Completion` is returned as
it is (for tool calls: see `calling`), an `Exception` instance is raised, and a callable
`(messages) -> str | Completion` (sync or async) computes the reply, e.g. to wait on an
`asyncio.Event` and interleave concurrent calls. When the script runs out, every call answers
`default` (a text, or a function of the messages). Every call is recorded in `calls`, in the
order calls were made.
"""

from __future__ import annotations

import inspect
import json
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.chat_model import Completion, Message, Tool, ToolCall, Usage
from bot.config import TIERS
from bot.llm.router import ModelRouter
from bot.llm.tokens import estimate_messages, estimate_tokens

__all__ = ["ModelCall", "ScriptItem", "ScriptedChatModel", "calling", "encoding", "make_router"]

Reply = str | Completion
ScriptItem = Reply | BaseException | Callable[[Sequence[Message]], Reply | Awaitable[Reply]]


@dataclass(slots=True, frozen=True)
class ModelCall:
    messages: tuple[Message, ...]
    json_mode: bool
    tools: tuple[Tool, ...]
    max_tokens: int | None
    temperature: float | None

    @property
    def text(self) -> str:
        """Every message's content, joined: handy for `"x" in call.text`."""
        return "\n".join(m.content for m in self.messages)

    @property
    def system(self) -> str:
        """The system messages' content, joined: a chat prompt's system prompt and the note
        before its newest turn (the time, the memories recalled, what is due)."""
        return "\n\n".join(m.content for m in self.messages if m.role == "system")

    @property
    def note(self) -> str:
        """A chat prompt's note of its newest turn (bot.turn.compose): what came to mind for it that
        the earlier turns' notes do not show, the time, what is due."""
        return self.messages[-2].content if self.messages[-2].role == "system" else ""

    @property
    def turns(self) -> list[Message]:
        """The messages that are not the system's: the conversation, and tool rounds."""
        return [m for m in self.messages if m.role != "system"]


class ScriptedChatModel:
    """A `ChatModel` answering from a script, then with `default`."""

    def __init__(
        self,
        script: Iterable[ScriptItem] = (),
        *,
        default: str | Callable[[Sequence[Message]], Reply | Awaitable[Reply]] = "[NEUTRAL] ok",
        name: str = "scripted",
    ) -> None:
        self.script: deque[ScriptItem] = deque(script)
        self.default = default
        self.calls: list[ModelCall] = []
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def push(self, *items: ScriptItem) -> None:
        """Queue more scripted replies."""
        self.script.extend(items)

    def calls_with(self, *, json_mode: bool) -> list[ModelCall]:
        return [c for c in self.calls if c.json_mode is json_mode]

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Tool] = (),
        json_mode: bool = False,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Completion:
        self.calls.append(
            ModelCall(tuple(messages), json_mode, tuple(tools), max_tokens, temperature)
        )
        item: ScriptItem = self.script.popleft() if self.script else self.default
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, Completion):
            return item
        if callable(item):
            result = item(messages)
            item = await result if inspect.isawaitable(result) else result
            if isinstance(item, Completion):
                return item
        text = item
        usage = Usage(estimate_messages(messages), estimate_tokens(text))
        return Completion(text=text, usage=usage, model=self._name)


def calling(name: str, arguments: dict[str, Any] | str, text: str = "") -> Completion:
    """A reply that calls tool `name` (arguments as a dict, or raw text, maybe malformed)."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return Completion(text=text, tool_calls=(ToolCall(f"call-{name}", name, raw),))


def encoding(*memories: tuple[str, str, int], diary: str = "", profile: str = "") -> str:
    """An answer to the encoding task: memories as (text, category, importance); the profile,
    if any, is the first speaker's (U1: Alice, in the tests that use it)."""
    return json.dumps(
        {
            "memories": [
                {"text": text, "category": category, "importance": importance, "emotion": 0}
                for text, category, importance in memories
            ],
            "diary": diary,
            "profiles": {"U1": profile} if profile else {},
            "recap": "Alice was off to bed.",
        }
    )


def make_router(model: ScriptedChatModel) -> ModelRouter:
    """A router sending all four tiers (chat, tools, summary, intent) to `model`."""
    return ModelRouter(dict.fromkeys(TIERS, model))
