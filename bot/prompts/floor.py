"""The intent tier's "should I answer?" for a persona in a group, asked only when a persona
sets `group.ask_model` and the local rules would let it join a conversation uninvited."""

from __future__ import annotations

from collections.abc import Sequence

from bot.chat_model import Message
from memory.quoting import flat, quote

__all__ = ["FLOOR_TASK", "floor_messages"]

FLOOR_TASK = (
    "You decide whether a character in a group chat should join the conversation now. "
    "Nobody addressed it; it may speak when it has something welcome to add (a question it "
    "can answer, a topic it cares about), and keeps quiet when people are talking among "
    'themselves. Answer with JSON only: {"answer": true} or {"answer": false}.'
)


def floor_messages(name: str, lines: Sequence[tuple[str, str]]) -> list[Message]:
    """The request: the character's name and the messages just said, as (speaker, text)."""
    said = "\n".join(f"{quote(flat(speaker))}: {quote(text[:500])}" for speaker, text in lines)
    return [
        Message("system", FLOOR_TASK),
        Message("user", f"Character: {quote(flat(name))}\nJust said:\n{said}"),
    ]
