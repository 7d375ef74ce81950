"""Prompts about pictures users send: the vision tier's description of one, and the note that
asks a chat model that sees the pictures to say, in its reply, what they show (so what it saw
is kept as words: bot.media.pictures)."""

from __future__ import annotations

import re

from bot.chat_model import Message
from memory.quoting import quote

__all__ = ["DESCRIBE_TASK", "SEEN_NOTE", "SEEN_TAG", "describe_messages"]

DESCRIBE_TASK = "Describe a picture for a companion who cannot see it."

_DESCRIBE_RULES = (
    "In one or two plain sentences, say what it shows: the kind of picture (a photo, a "
    "screenshot, a drawing, a meme...), who or what is in it, what is happening, and any text "
    "written in it. Describe only what is visible; do not guess who a person is."
)

SEEN_NOTE = (
    "(The user's pictures are attached to this message. Begin your reply with "
    "[saw: what they show, in one sentence], then answer as usual.)"
)
# The tag a seeing chat model starts its reply with (SEEN_NOTE), anywhere in its reply.
SEEN_TAG = re.compile(r"\[saw:\s*([^\]\n]{1,600}?)\s*\]\s*", re.IGNORECASE)


def describe_messages(name: str, jpeg: bytes, language: str = "en") -> list[Message]:
    """The vision tier's request: describe the picture sent as `name` (user text: quoted)."""
    rules = _DESCRIBE_RULES + (" Answer in Chinese." if language == "zh" else "")
    return [
        Message("system", f"{DESCRIBE_TASK} {rules}"),
        Message("user", f"The picture, sent as {quote(name)}.", images=(jpeg,)),
    ]
