"""The only currency between adapters and the bot: a `ChatEvent` in, a `Reply` out."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from memory.errors import KizunaError

__all__ = [
    "Addressed",
    "Attachment",
    "ChatEvent",
    "FetchError",
    "Reply",
    "Voice",
    "split_chunks",
    "valid_text",
]

# How the platform says a group message is for the bot: it @mentions the bot, it replies to
# one of the bot's messages, or it is in a channel the host bound to the bot (Discord's
# `channel_ids`, where every message is for it). Whether to answer is bot.groups.floor's decision.
Addressed = Literal["mention", "reply", "bound"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """`text` with lone surrogates as U+FFFD. Python makes them of undecodable bytes
    (surrogateescape) and of a JSON "\\ud800" escape without its pair, which a chat platform
    may pass on; no model API, database or platform takes them, and one in a conversation
    would make every later request of it fail."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


class FetchError(KizunaError):
    """An attachment that could not be downloaded (gone, too large for the platform, or the
    network), said in a line."""


@dataclass(slots=True, frozen=True)
class Attachment:
    filename: str
    url: str
    content_type: str = ""
    size: int = 0  # as the platform declares it, before any download
    # Downloads it (FetchError if it cannot), through the platform's own client.
    fetch: Callable[[], Awaitable[bytes]] | None = field(default=None, compare=False, repr=False)
    # A sticker or GIF as the platform names it (its emoji and set, its title): the persona
    # is told that, with no download and no model call (bot.media.pictures).
    sticker: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "filename", valid_text(self.filename))
        object.__setattr__(self, "sticker", valid_text(self.sticker))


@dataclass(slots=True, frozen=True)
class ChatEvent:
    """One message said to a persona, as the adapter saw it."""

    platform: str  # its name (bot.platforms): what the bot may do there is the registry's
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
    # The sender may change what the chat shares (a channel's memory, its persona): their own
    # private chat, a chat or server admin, or a configured admin id. Set by the adapter from
    # the platform's permissions, for a command and for a message alike (its tool calls:
    # `admin_only`; Telegram asks only where a persona has such a tool); nothing else grants it.
    admin: bool = False
    # Every channel of the chat has the same readers (a Telegram group: its topics are read by
    # all its members), so they are one place for a user's memories (sessions.scope_key).
    # False where channels may differ (Discord's, each with its own permissions).
    same_readers: bool = False
    # A sender the platform cannot tell from others (a Telegram group's anonymous admins all
    # come as the group): no memory of their own, only the chat's (sessions.scope_key).
    anonymous: bool = False
    # Typed by the host themself, on their own machine (the platform's `host`): never blocked
    # nor slowed down by the access gate.
    host: bool = False
    # The platform whose private conversations these are, where not the event's own (the
    # platform's `private_as`): a private chat here continues the one there
    # (sessions.scope_key).
    private_as: str = ""
    # The language of what the bot itself says here (its commands and menus), where the host
    # set one for the bot; "" is the persona's.
    language: str = ""
    # What the platform knows of whom a group message is for (`Addressed`); an adapter passes
    # every group message it can see, addressed or not, and bot.groups.floor decides whether the
    # persona speaks. Meaningless in a private chat, which is always for the bot.
    addressed: frozenset[Addressed] = frozenset()
    # The bot's own names on the platform (its @username, its nickname in a server): calling
    # one is calling the persona, as its own names are.
    names: tuple[str, ...] = ()
    # Written by a bot (the bot itself included). Adapters drop those; bot.groups.floor never
    # answers one either, so two bots can never keep each other talking.
    from_bot: bool = False
    # Said by another persona of this process in the same room, relayed in-process
    # (bot.groups.relay; its `user_id` is "persona:<key>"): heard as a speaker, answered only when
    # called by name, and only as many times in a row as `group.persona_exchanges` lets.
    from_persona: bool = False
    # Pictures shrunk for a chat model that sees them (JPEG, bot.media.pictures): they go with the
    # turn to the model once, and are never stored.
    images: tuple[bytes, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        # Text from a platform is what the user typed, but not always valid Unicode.
        object.__setattr__(self, "text", valid_text(self.text))
        object.__setattr__(self, "user_name", valid_text(self.user_name))
        if self.reply_to is not None:
            object.__setattr__(self, "reply_to", valid_text(self.reply_to))

    @property
    def is_empty(self) -> bool:
        return not self.text.strip() and not self.attachments


@dataclass(slots=True, frozen=True)
class Voice:
    """A reply said aloud (bot.media.speech): OGG/Opus (`mime` "audio/ogg"), which Telegram plays as
    a voice note, or another format the speech server sent, which goes as a file."""

    data: bytes = field(repr=False)
    mime: str = "audio/ogg"
    name: str = "reply.ogg"

    @property
    def note(self) -> bool:
        """OGG/Opus: a platform's voice note, not just an audio file."""
        return self.mime == "audio/ogg"


@dataclass(slots=True, frozen=True)
class Reply:
    """What the persona says back. `chunks` are ready for the platform's length limit."""

    text: str
    emotion: str
    chunks: tuple[str, ...] = field(default=())
    failed: bool = False  # the model failed; `text` is the persona's apology
    # The platform's id of the message this answers, when others spoke in between: shown as a
    # reply to it (threaded) where the platform can. "" when it follows what it answers.
    answers: str = ""
    # An emoji put on the message instead of a reply (bot.turn.reactions): `text` is then "".
    reaction: str = ""
    # The reply said aloud too, sent after its text (bot.media.speech): None when it is not spoken.
    voice: Voice | None = None
    # The people whose messages it answers, by platform id (not another persona, not an
    # anonymous sender): saying it aloud is for each of them (bot.media.speech). () : the event's.
    people: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # A model may answer a "\\udcff" escape: no platform can send it as UTF-8.
        object.__setattr__(self, "text", valid_text(self.text))
        object.__setattr__(self, "chunks", tuple(valid_text(chunk) for chunk in self.chunks))

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
