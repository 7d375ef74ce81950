"""A model for trying a setup without a key (`python -m tests.fakes`): an OpenAI-compatible
endpoint (tests/fakes/openai_server.py) whose chat calls a persona's tool when the user's
message names it ("dice 2d6", "reading_time 3000 words"), then says what the tool answered;
everything else (replies, memory encoding, summaries) is the built-in offline model's.

    fake = FakeOpenAI(respond=ToolUsingModel())
"""

from __future__ import annotations

import re
from typing import Any

from bot.chat_model import Message, Tool
from bot.llm.offline import OfflineChatModel
from tests.fakes.openai_server import FakeToolCall, Text, ToolCalls

__all__ = ["ToolUsingModel", "arguments_for"]

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict)).strip()
    return str(content or "")


def arguments_for(parameters: dict[str, Any], said: str) -> dict[str, Any]:
    """Arguments for a tool's JSON schema from what the user said after its name: strings
    get those words, numbers the first number among them, booleans false, arrays nothing."""
    found = _NUMBER.search(said)
    arguments: dict[str, Any] = {}
    properties = parameters.get("properties") or {}
    for name in parameters.get("required") or list(properties):
        kind = (properties.get(name) or {}).get("type", "string")
        if kind == "integer":
            arguments[name] = int(float(found.group())) if found else 1
        elif kind == "number":
            arguments[name] = float(found.group()) if found else 1.0
        elif kind == "boolean":
            arguments[name] = False
        elif kind == "array":
            arguments[name] = []
        else:
            arguments[name] = said or name
    return arguments


class ToolUsingModel:
    """`respond` for FakeOpenAI: calls the tool a message names, else answers as the offline
    model does."""

    def __init__(self) -> None:
        self._offline = OfflineChatModel("playground")

    async def __call__(self, body: dict[str, Any]) -> Text | ToolCalls:
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        last = messages[-1] if messages else {}
        if last.get("role") == "tool":  # the tool answered: say what it said
            return Text(f"[NEUTRAL] {_text(last.get('content'))}")
        said = _text(last.get("content")) if last.get("role") == "user" else ""
        for tool in body.get("tools") or []:
            function = tool.get("function") or {}
            name = str(function.get("name", ""))
            spoken = re.search(
                rf"\b{re.escape(name.replace('_', ' '))}\b|\b{re.escape(name)}\b", said, re.I
            )
            if name and spoken:
                # (a group's line comes quoted after its speaker's name: 'Bob: "DM, dice 2d6"')
                rest = said[spoken.end() :].strip(" :,.!?\"'“”「」")
                arguments = arguments_for(function.get("parameters") or {}, rest)
                return ToolCalls((FakeToolCall(name, arguments),))
        history = [
            Message(m["role"], _text(m.get("content")))
            for m in messages
            if m.get("role") in ("system", "user", "assistant")
        ]
        offered = [
            Tool(str(f.get("name", "")), str(f.get("description", "")), f.get("parameters") or {})
            for f in (t.get("function") or {} for t in body.get("tools") or [])
        ]
        json_mode = (body.get("response_format") or {}).get("type") == "json_object"
        completion = await self._offline.complete(history, tools=offered, json_mode=json_mode)
        return Text(completion.text)
