"""The only currency between adapters and the bot: a `ChatEvent` in, a `Reply` out."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

__all__ = ["PLATFORM_LIMITS", "Attachment", "ChatEvent", "Platform", "Reply", "split_chunks"]

Platform = Literal["console", "discord", "telegram", "web"]
# Longest message each surface takes, in characters.
PLATFORM_LIMITS: dict[Platform, int] = {
    "console": 4000,
    "discord": 2000,
    "telegram": 4096,
    "web": 4000,
}


@dataclass(slots=True, frozen=True)
class Attachment:
    filename: str
    url: str
    content_type: str = ""
    size: int = 0


@dataclass(slots=True, frozen=True)
class ChatEvent:
    """One message said to a persona, as the adapter saw it."""

    platform: Platform
    bot_id: str
    persona: str
    chat_id: str  # guild id on Discord, chat id on Telegram, "" in the console
    channel_id: str
    user_id: str
    user_name: str  # display name
    is_dm: bool
    text: str
    timestamp: datetime  # timezone-aware
    attachments: tuple[Attachment, ...] = ()
    reply_to: str | None = None  # text of the message being replied to, if any
    roles: tuple[str, ...] = ()  # the user's role ids in this server (Discord), for access lists
    # The platform's id of the message, where it may deliver one again (Telegram, after a
    # crash): a message already answered is not answered twice.
    message_id: str = ""

    @property
    def is_empty(self) -> bool:
        return not self.text.strip() and not self.attachments


@dataclass(slots=True, frozen=True)
class Reply:
    """What the persona says back. `chunks` are ready for the platform's length limit."""

    text: str
    emotion: str
    chunks: tuple[str, ...] = field(default=())
    failed: bool = False  # the model failed; `text` is the persona's apology

    @classmethod
    def build(cls, text: str, emotion: str, limit: int, *, failed: bool = False) -> Reply:
        return cls(text=text, emotion=emotion, chunks=split_chunks(text, limit), failed=failed)


def split_chunks(text: str, limit: int) -> tuple[str, ...]:
    """Split text into pieces of at most `limit` characters, preferring paragraph, line,
    sentence and word boundaries, in that order, so no chunk cuts a word when it can help it."""
    if limit <= 0:
        raise ValueError("limit must be positive")
    text = text.strip()
    chunks: list[str] = []
    while len(text) > limit:
        window = text[:limit]
        cut = -1
        for sep in ("\n\n", "\n", "。", "！", "？", ". ", "! ", "? ", " "):
            at = window.rfind(sep)
            if at > limit // 3:
                cut = at + len(sep)
                break
        if cut <= 0:
            cut = limit
        chunks.append(text[:cut].rstrip())
        text = text[cut:].lstrip()
    if text:
        chunks.append(text)
    return tuple(chunks)
