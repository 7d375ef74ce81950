"""A Python tool: an async function with a typed signature. Its first parameter, annotated
`ToolContext` (or `CommonContext`, for a tool that acts for no one in particular), is what
Kizuna hands it; the others are what the model fills in. The JSON
schema the model sees is pydantic's for a model built from those parameters
(`pydantic.create_model`), the description is the function's docstring, and the model's
arguments are validated with the same pydantic model before the call."""

from __future__ import annotations

import importlib
import inspect
import random
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, Protocol, get_type_hints

import pydantic

from bot.chat_model import Tool
from bot.prompts.tools import TOOL_BAD_ARGUMENTS
from memory.clock import Clock
from memory.errors import KizunaError

__all__ = ["CommonContext", "PythonTool", "Reminders", "ToolContext", "ToolLoadError", "load_tool"]

ToolFunction = Callable[..., Awaitable[Any]]


class Reminders(Protocol):
    """Where a reminder is kept, for the conversation and sender the tool is called for."""

    async def add(self, due: datetime, what: str) -> None: ...

    async def zone(self) -> tzinfo | None:
        """The time zone the sender set (/timezone), or None."""
        ...


@dataclass(slots=True, frozen=True)
class CommonContext:
    """What a tool that acts for no one in particular (dice) sees of the turn: this
    conversation's memory scope and no other, the persona, the clock. Such a tool is offered
    in any turn, one answering several people too. Never the store or the memory bank."""

    scope: str  # the conversation's memory scope
    persona: str  # the persona's key
    language: str  # the persona's language
    clock: Clock
    tz: tzinfo  # the bot's timezone, for days the user names (unless they set their own)
    rng: random.Random  # seeded by the runtime: the only randomness a tool should use


@dataclass(slots=True, frozen=True)
class ToolContext(CommonContext):
    """What a tool that acts for a person sees of the turn: the common context and the one
    person it acts for. Such a tool is offered only in a turn that answers that one person's
    words (never one of several people's, another persona's, or an anonymous admin's)."""

    user_id: str  # the person, as the platform names them
    admin: bool  # they are an admin of this chat (never in a private chat)
    reminders: Reminders | None = None  # theirs here; None: this host keeps no reminders


class ToolLoadError(KizunaError):
    """A tool that cannot be loaded or has no usable signature; says why in one line."""


@dataclass(slots=True, frozen=True)
class PythonTool:
    name: str
    function: ToolFunction
    arguments: type[pydantic.BaseModel]  # the model's arguments, checked before the call
    tool: Tool  # what the chat model is shown
    personal: bool = True  # it acts for a person (takes a ToolContext, not a CommonContext)

    @property
    def source(self) -> str:
        """Where the function is: "package.module:function"."""
        return _where(self.function)

    @classmethod
    def of(cls, name: str, function: ToolFunction) -> PythonTool:
        """The tool `function` makes, or ToolLoadError."""
        if not inspect.iscoroutinefunction(function):
            raise ToolLoadError(f"{_where(function)} is not an async function")
        description = inspect.getdoc(function) or ""
        if not description.strip():
            raise ToolLoadError(f"{_where(function)} has no docstring for the model to read")
        try:
            hints = get_type_hints(function, include_extras=True)
        except Exception as e:  # a name the annotations use that does not resolve
            raise ToolLoadError(f"{_where(function)}: its annotations do not resolve: {e}") from e
        parameters = list(inspect.signature(function).parameters.values())
        context = hints.get(parameters[0].name) if parameters else None
        if context not in (ToolContext, CommonContext):
            raise ToolLoadError(
                f"{_where(function)}: its first parameter must be a ToolContext (or a "
                "CommonContext)"
            )
        fields: dict[str, Any] = {}
        for p in parameters[1:]:
            if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) or p.name not in hints:
                raise ToolLoadError(
                    f"{_where(function)}: parameter {p.name!r} needs a type and a name"
                )
            default = ... if p.default is p.empty else p.default
            fields[p.name] = (hints[p.name], default)
        try:
            model = pydantic.create_model(
                f"{name}_arguments",
                __config__=pydantic.ConfigDict(extra="forbid"),
                **fields,
            )
            schema = model.model_json_schema()
        except Exception as e:  # pydantic cannot make a schema of a parameter's type
            raise ToolLoadError(f"{_where(function)}: no JSON schema for it: {e}") from e
        return cls(name, function, model, Tool(name, description, schema), context is ToolContext)

    def validate(self, arguments: str) -> dict[str, Any] | str:
        """The arguments as the function takes them, or a sentence for the model on what was
        wrong with them."""
        try:
            checked = self.arguments.model_validate_json(arguments or "{}")
        except pydantic.ValidationError as e:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
                for err in e.errors()[:5]
            )
            return TOOL_BAD_ARGUMENTS.format(problems=problems)
        return {name: getattr(checked, name) for name in type(checked).model_fields}


def load_tool(name: str, target: str, folder: Path | None = None) -> PythonTool:
    """The tool at `target` ("package.module:function"), called `name`; ToolLoadError says
    what is wrong. `folder` (the persona file's) is searched after the import path, so a
    host's module beside the persona file needs no PYTHONPATH."""
    module_name, _, attribute = target.partition(":")
    if folder is not None and str(folder) not in sys.path:
        sys.path.append(str(folder))  # last: an installed module of that name still wins
    try:
        module = importlib.import_module(module_name)
    except Exception as e:  # the host's module may fail in any way as it is imported
        raise ToolLoadError(f"cannot import {module_name!r}: {e}") from e
    function = getattr(module, attribute, None)
    if function is None:
        raise ToolLoadError(f"{module_name!r} has no {attribute!r}")
    return PythonTool.of(name, function)


def _where(function: object) -> str:
    module = getattr(function, "__module__", "?")
    return f"{module}:{getattr(function, '__qualname__', repr(function))}"
