"""Pictures users send (photos, image files, stickers, GIFs): what the persona sees of them,
kept as words in the conversation so encoding remembers it ("showed me a photo of ...").

`Pictures.look` runs before a turn (bot.front), for a message that calls on the persona: each
picture is refused by its declared size before any download, fetched, shrunk to at most
`picture_side` pixels a side as JPEG (`shrink`, off the event loop), then either kept on the
message for a chat model that sees (`ModelRouter.sees`: its pictures go with the turn, `show`,
and the reply's `[saw: ...]` becomes the turn's words, `seen`), or described once by the
vision tier and put in the message as words. Stickers and GIFs are told by the emoji or title
the platform gives, with no download and no model call. Nothing is written to disk: the bytes
live in memory until the turn is answered.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from io import BytesIO
from pathlib import PurePath

from PIL import Image, ImageOps, UnidentifiedImageError

from bot.catalogue import say
from bot.chat_model import Message, ModelError
from bot.config import EngineConfig
from bot.conversation.sessions import Session, Turn
from bot.events import Attachment, ChatEvent, FetchError
from bot.llm.router import ModelRouter
from bot.prompts.pictures import SEEN_NOTE, SEEN_TAG, describe_messages
from bot.tomlfile import one_line
from memory.clock import Clock
from memory.errors import KizunaError

__all__ = [
    "MAX_PER_MESSAGE",
    "MAX_PIXELS",
    "Looked",
    "MediaError",
    "Picture",
    "PictureError",
    "Pictures",
    "fetch_within",
    "is_picture",
    "seen",
    "show",
    "shrink",
    "size_text",
    "wants_looking",
]

log = logging.getLogger(__name__)

MAX_PER_MESSAGE = 4  # pictures looked at in one message; the others are only named
# Pixels of a picture decoded at most: a few MB of PNG can hold a 20000 px square, which would
# take gigabytes to decode (a JPEG is decoded at a reduced scale, so only the others count).
MAX_PIXELS = 50_000_000
DESCRIPTION_CHARS = 500  # of what the vision tier says of one picture
_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".webp", ".gif", ".bmp", ".tif", ".tiff"})
_HOUR = timedelta(hours=1)
_KEPT_SENDERS = 10_000  # senders counted before those quiet for an hour are let go


class MediaError(KizunaError):
    """A picture or recording not taken in: `key` is the catalogue's sentence for it,
    `fields` its values."""

    def __init__(self, key: str, **fields: str) -> None:
        self.key, self.fields = key, fields
        super().__init__(f"{key}: {fields.get('name', '')}")


class PictureError(MediaError):
    """A picture not looked at."""


async def fetch_within(
    attachment: Attachment,
    limit: int,
    name: str,
    error: type[MediaError],
    *,
    too_big: str,
    not_fetched: str,
) -> bytes:
    """The attachment's bytes: refused past `limit` by its declared size before the download
    and by its real size after. `too_big` and `not_fetched` are the catalogue's sentences."""
    if attachment.size > limit:
        raise error(too_big, name=name, size=size_text(attachment.size), most=size_text(limit))
    if attachment.fetch is None:
        raise error(not_fetched, name=name)
    try:
        data = await attachment.fetch()
    except FetchError as e:  # gone, over the platform's limit, or the network
        log.warning("could not download an attachment: %s", e)
        raise error(not_fetched, name=name) from None
    if len(data) > limit:  # a size declared wrong, or not at all
        raise error(too_big, name=name, size=size_text(len(data)), most=size_text(limit))
    return data


@dataclass(slots=True, frozen=True)
class Picture:
    name: str
    jpeg: bytes = field(repr=False)  # at most `side` pixels a side
    width: int  # of the JPEG
    height: int
    format: str  # as it was sent: "PNG", "JPEG", "WEBP"...


@dataclass(slots=True, frozen=True)
class Looked:
    """A message once its pictures were looked at: `event` says them in words (its pictures
    and stickers no longer attachments; `ChatEvent.images` for a chat model that sees),
    `said` is the persona's sentences about the pictures it could not look at."""

    event: ChatEvent
    said: tuple[str, ...] = ()


def is_picture(attachment: Attachment) -> bool:
    """A picture to look at: an image by its declared type or its name's extension (a sticker
    or GIF, `Attachment.sticker`, is told by its title instead)."""
    if attachment.sticker:
        return False
    kind = attachment.content_type.lower()
    return kind.startswith("image/") or PurePath(attachment.filename).suffix.lower() in _SUFFIXES


def wants_looking(attachments: Sequence[Attachment]) -> bool:
    """Whether a message's `attachments` hold pictures, stickers or GIFs to look at."""
    return any(a.sticker or is_picture(a) for a in attachments)


def shrink(name: str, data: bytes, side: int) -> Picture:
    """`data` as a JPEG of at most `side` pixels a side (turned upright as its EXIF says, any
    transparency on white), or `PictureError` ("picture_unreadable"; "picture_too_big" past
    `MAX_PIXELS` once decoded at its reduced scale). Blocking: run it in a
    thread. A JPEG is decoded at a reduced scale (`draft`): a 12-megapixel photo decodes at an
    eighth of its size."""
    try:
        with Image.open(BytesIO(data)) as image:
            sent = image.format or "image"
            image.draft("RGB", (side, side))
            if image.width * image.height > MAX_PIXELS:
                size = f"{image.width}x{image.height} pixels"
                most = f"{MAX_PIXELS // 1_000_000} megapixels"
                raise PictureError("picture_too_big", name=_name(name), size=size, most=most)
            upright = ImageOps.exif_transpose(image)
            upright.thumbnail((side, side), Image.Resampling.BICUBIC)
            if upright.mode in ("RGBA", "LA", "PA") or "transparency" in upright.info:
                rgba = upright.convert("RGBA")
                flat = Image.new("RGB", rgba.size, (255, 255, 255))
                flat.paste(rgba, mask=rgba.getchannel("A"))
                upright = flat
            out = BytesIO()
            upright.convert("RGB").save(out, "JPEG", quality=85, optimize=True)
            width, height = upright.size
    # Pillow raises all sorts on a damaged or fake image; a decompression bomb is refused too.
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, Image.DecompressionBombError):
        raise PictureError("picture_unreadable", name=_name(name)) from None
    return Picture(name, out.getvalue(), width, height, sent)


class Pictures:
    """Looks at the pictures of messages; one per engine (bot.turn.senses), for every
    platform and persona. Counts each user's media (pictures, stickers, GIFs) per hour,
    against `media_per_hour`: those taken in (one refused for its size, or that could not
    be fetched or read, is given back)."""

    def __init__(self, models: ModelRouter, clock: Clock, settings: EngineConfig) -> None:
        self.models = models
        self.clock = clock
        self.limit = settings.picture_max_kb * 1024
        self.side = settings.picture_side
        self.per_hour = settings.media_per_hour
        self._sent: dict[str, deque[datetime]] = {}  # by platform:user, times in the last hour

    async def look(self, event: ChatEvent, language: str) -> Looked:
        """`event` with its pictures, stickers and GIFs said in words (other attachments stay
        as they are); see the module's docstring."""
        words: list[str] = []
        images: list[bytes] = []
        said: list[str] = []
        others: list[Attachment] = []
        looked = 0
        for attachment in event.attachments:
            if not (attachment.sticker or is_picture(attachment)):
                others.append(attachment)
                continue
            name = _name(attachment.sticker or attachment.filename)
            looked += not attachment.sticker
            over = not attachment.sticker and looked > MAX_PER_MESSAGE  # (not counted either)
            if over or not self.count(event):
                words.append(f"[{_kind(attachment)} {name}, not looked at]")
                if not over and say(language, "picture_too_many") not in said:
                    said.append(say(language, "picture_too_many"))
                continue
            if attachment.sticker:
                words.append(f"[{_kind(attachment)}: {name}]")
                continue
            try:
                try:
                    picture = await self._fetch(attachment)
                except PictureError:
                    self.refund(event)  # refused before anything was made of it: not counted
                    raise
                if self.models.sees:
                    images.append(picture.jpeg)
                    words.append(f"[picture {name}]")
                else:
                    described = await self._describe(picture, language)
                    words.append(f"[picture {name}, seen: {described}]")
            except PictureError as e:
                words.append(f"[picture {name}, not looked at]")
                said.append(say(language, e.key, **e.fields))
        text = " ".join([event.text.strip(), *words]).strip()
        shown = replace(event, text=text, attachments=tuple(others), images=tuple(images))
        return Looked(shown, tuple(said))

    def count(self, event: ChatEvent) -> bool:
        """Count one more medium of the sender's (bot.media.hearing counts voice notes here too);
        False when that is past the hour's limit."""
        if not self.per_hour:
            return True
        now = self.clock.now()
        if len(self._sent) > _KEPT_SENDERS:  # forget those who sent nothing this hour
            self._sent = {k: t for k, t in self._sent.items() if t and now - t[-1] < _HOUR}
        key = f"{event.platform}:{event.user_id}"
        times = self._sent.setdefault(key, deque())
        while times and now - times[0] >= _HOUR:
            times.popleft()
        if len(times) >= self.per_hour:
            return False
        times.append(now)
        return True

    def refund(self, event: ChatEvent) -> None:
        """Take back the sender's latest count: the medium was refused (too big, not
        fetched, unreadable), and only what is taken in counts."""
        times = self._sent.get(f"{event.platform}:{event.user_id}")
        if self.per_hour and times:
            times.pop()

    async def _fetch(self, attachment: Attachment) -> Picture:
        name = _name(attachment.filename)
        data = await fetch_within(
            attachment,
            self.limit,
            name,
            PictureError,
            too_big="picture_too_big",
            not_fetched="picture_not_fetched",
        )
        return await asyncio.to_thread(shrink, attachment.filename, data, self.side)

    async def _describe(self, picture: Picture, language: str) -> str:
        """The vision tier's words for the picture (eco mode: the eco model's)."""
        messages = describe_messages(picture.name, picture.jpeg, language)
        try:
            completion = await self.models.complete("vision", messages, purpose="vision")
        except ModelError as e:
            log.warning("the vision tier could not describe a picture: %s", e)
            raise PictureError("picture_not_seen", name=_name(picture.name)) from None
        words = _words(completion.text)
        if not words:
            raise PictureError("picture_not_seen", name=_name(picture.name))
        return words


def show(messages: list[Message], turns: Sequence[Turn]) -> list[Turn]:
    """Put the pictures of `turns` (the messages a turn answers) on the prompt's last user
    message, with the note asking for `[saw: ...]`; the turns no longer hold them (a picture
    is shown once). Returns the turns that had pictures."""
    had = [turn for turn in turns if turn.images]
    if not had:
        return []
    images = tuple(image for turn in had for image in turn.images)
    for turn in had:
        turn.images = ()
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "user":
            content = f"{messages[i].content}\n{SEEN_NOTE}"
            messages[i] = replace(messages[i], content=content, images=images)
            break
    return had


def seen(session: Session, shown: Sequence[Turn], reply: str) -> str:
    """The reply without its `[saw: ...]`; what it says was seen joins the words of the
    turns whose pictures were `shown`, so the conversation keeps it."""
    match = SEEN_TAG.search(reply)
    if match is None:
        return reply
    words = _words(match.group(1))
    for turn in shown:
        for i, kept in enumerate(session.turns):
            if kept is turn:
                session.turns[i] = replace(turn, text=f"{turn.text} [seen: {words}]")
                session.touch()
    return (reply[: match.start()] + reply[match.end() :]).strip()


def _kind(attachment: Attachment) -> str:
    if attachment.sticker:
        return "GIF" if attachment.content_type.startswith(("video/", "image/gif")) else "sticker"
    return "picture"


def _words(text: str) -> str:
    """What a model said a picture shows, as words on one line, within DESCRIPTION_CHARS;
    brackets made round, so it never closes the picture's own."""
    flat = one_line(" ".join(text.split()))[:DESCRIPTION_CHARS]
    return flat.replace("[", "(").replace("]", ")")


def _name(name: str) -> str:
    return one_line(name).replace("[", "(").replace("]", ")")[:100] or "picture"


def size_text(n: int) -> str:
    """A file's size as people say it: "740 KB", "1.5 MB" (bot.media.hearing says its own so)."""
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.1f}".removesuffix(".0") + " MB"
    return f"{max(n // 1024, 1)} KB"
