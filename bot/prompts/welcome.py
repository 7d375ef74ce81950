"""The chat tier's welcome to a new member of a group, asked only for a persona that sets
`group.greet`, at most once in `bot.groups.welcome.WELCOME_EVERY` per channel."""

from __future__ import annotations

from bot.chat_model import Message
from memory.quoting import flat, quote

__all__ = ["WELCOME_TASK", "welcome_messages"]

WELCOME_TASK = (
    "Someone has just joined the group chat. Welcome them in one or two short sentences, in "
    "your own voice, by the name they go by; ask nothing of them."
)


def welcome_messages(system: str, member: str) -> list[Message]:
    """The request: the persona's system prompt (its character, language and emotion tags),
    then who joined."""
    return [
        Message("system", f"{system}\n\n{WELCOME_TASK}"),
        Message("user", f"Joined: {quote(flat(member)[:100])}"),
    ]
