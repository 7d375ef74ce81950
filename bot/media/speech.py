"""Replies said aloud: a voice note as well as the text, where the persona and the user want it.

`Speech.wanted` decides, with no model call: the router has a speech tier (not eco mode:
`ModelRouter.speaks`; the offline model murmurs), the persona's `[voice] speak` is not "never",
and then the user's `/voice` choice (the contact's `voice`, kept in the store) wins: off is
never, on is every reply; with no choice made, "always" speaks every reply and "when_spoken_to"
those to a voice note. A voice note sent counts against the user's media of the hour
(`media_per_hour`, with the pictures and recordings they send): past it, replies go as text.

`Speech.say` runs once the reply's text is final (bot.front): the words without markup (stray
emotion tags, *actions*, markdown), at most SPOKEN_CHARS, go to the speech tier
(`ModelRouter.speak`, OGG/Opus asked for) in the persona's `voice`; audio that is not OGG is
converted by ffmpeg when it is on PATH (bounded in time), else goes as the file it is. Any
failure is logged without the words and the reply goes as text alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from bot.chat_model import ModelError
from bot.events import ChatEvent, Voice, split_chunks
from bot.llm.router import ModelRouter
from bot.persona.file import Persona
from bot.platforms import Platforms
from memory.storage import ContactStore

__all__ = ["SPOKEN_CHARS", "Speech", "audio_kind", "speakable"]

log = logging.getLogger(__name__)

SPOKEN_CHARS = 1000  # of a reply said aloud (speech is priced per character); cut at a sentence
CONVERT_SECONDS = 20.0  # ffmpeg's time to make OGG/Opus of a reply, at most
# What a speech server may send, by its first bytes: (mime, file suffix).
_KINDS: tuple[tuple[bytes, str, str], ...] = (
    (b"OggS", "audio/ogg", "ogg"),
    (b"ID3", "audio/mpeg", "mp3"),
    (b"\xff\xfb", "audio/mpeg", "mp3"),
    (b"\xff\xf3", "audio/mpeg", "mp3"),
    (b"RIFF", "audio/wav", "wav"),
    (b"fLaC", "audio/flac", "flac"),
)
_TAG = re.compile(r"\[[A-Z][A-Z0-9_]{1,23}\]")  # an emotion tag left in the text
_ACTION = re.compile(r"(?<![*\w])\*[^*\n]{1,200}\*(?![*\w])")  # *waves*: read, not said
_MARKUP = re.compile(r"[*_~`#>|]+")


def speakable(text: str) -> str:
    """What of a reply is said aloud: without emotion tags, *actions* or markdown, on one
    line, at most SPOKEN_CHARS (cut where a sentence or word ends)."""
    words = _MARKUP.sub(" ", _ACTION.sub(" ", _TAG.sub(" ", text)))
    words = " ".join(words.split())
    return (split_chunks(words, SPOKEN_CHARS) or ("",))[0] if words else ""


def audio_kind(audio: bytes) -> tuple[str, str] | None:
    """(mime, suffix) of audio by its first bytes; None for a format not known here."""
    for magic, mime, suffix in _KINDS:
        if audio.startswith(magic):
            return mime, suffix
    if audio[4:8] == b"ftyp":  # MP4/M4A
        return "audio/mp4", "m4a"
    return None


@dataclass(slots=True, eq=False)
class Speech:
    """Says replies aloud; one per engine (bot.turn.senses). `platforms`: where a voice note
    can be sent (`Platform.voice`); `count` counts one more medium of a user's (False: past the
    hour's limit); `ffmpeg`: its path, to make OGG/Opus of other audio (None: such audio goes
    as a file)."""

    models: ModelRouter
    contacts: ContactStore
    platforms: Platforms
    count: Callable[[ChatEvent], bool]
    ffmpeg: str | None
    convert_seconds: float = field(init=False, default=CONVERT_SECONDS)

    def speaks(self, persona: Persona) -> bool:
        """Whether `persona` ever says a reply aloud (a speech model, a voice not "never"):
        if not, a reply is never handed here."""
        return self.models.speaks and persona.voice.speak != "never"

    async def wanted(
        self, persona: Persona, event: ChatEvent, spoken: bool, people: Sequence[str] = ()
    ) -> bool:
        """Whether `persona`'s reply to `event` is said aloud too; `spoken`: the user sent a
        voice note; `people`: whom the reply answers (`Reply.people`; by default the event's
        sender). Never to a bot or another persona (no one listens), nor where no voice note
        can be sent (`Platform.voice`); for several people, only when each of them wants it (their
        /voice choice) and within each one's media of the hour (a reply said aloud is
        counted here, for each)."""
        if not self.speaks(persona):
            return False
        if event.from_bot or event.from_persona or not self.platforms[event.platform].voice:
            return False
        default = persona.voice.speak == "always" or spoken
        if not people:
            people = () if event.anonymous else (event.user_id,)
        wants = []
        for user_id in people:
            contact = await self.contacts.contact(persona.key, event.platform, user_id)
            chosen = None if contact is None else contact.voice
            wants.append(default if chosen is None else chosen)
        if not (all(wants) if wants else default):
            return False
        if not people:  # (an anonymous sender: counted as the event's, as the platform has it)
            return self.count(event)
        return all(self.count(replace(event, user_id=user_id)) for user_id in people)

    async def say(self, persona: Persona, text: str) -> Voice | None:
        """`text` said aloud in the persona's voice, as a platform plays it; None when there
        is nothing to say or it cannot be said (logged)."""
        words = speakable(text)
        if not words:
            return None
        try:
            audio = await self.models.speak(words, persona.voice.voice)
        except ModelError as e:
            log.warning("the speech tier could not say a reply of %s: %s", persona.key, e)
            return None
        return await self.playable(audio)

    async def playable(self, audio: bytes) -> Voice | None:
        """`audio` as a voice note (OGG/Opus), converted by ffmpeg if need be and possible;
        else as the file it is; None for audio of no known format that ffmpeg cannot read."""
        kind = audio_kind(audio)
        if kind is not None and kind[0] == "audio/ogg":
            return Voice(audio)
        if self.ffmpeg is not None:
            converted = await self._convert(audio)
            if converted is not None:
                return Voice(converted)
        if kind is None:
            log.warning("the speech tier sent audio of no known format (%d bytes)", len(audio))
            return None
        mime, suffix = kind
        return Voice(audio, mime, f"reply.{suffix}")

    async def _convert(self, audio: bytes) -> bytes | None:
        """OGG/Opus of `audio` by ffmpeg (stdin to stdout, nothing on disk), within
        CONVERT_SECONDS; None if it fails or takes longer (logged)."""
        assert self.ffmpeg is not None
        command = [self.ffmpeg, "-hide_banner", "-loglevel", "error", "-i", "pipe:0"]
        command += ["-vn", "-c:a", "libopus", "-b:a", "32k", "-f", "ogg", "pipe:1"]
        try:
            process = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except OSError as e:
            log.warning("could not start ffmpeg: %s", e)
            return None
        try:
            async with asyncio.timeout(self.convert_seconds):
                out, err = await process.communicate(audio)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
            log.warning("ffmpeg took over %.0f s to convert a reply", self.convert_seconds)
            return None
        if process.returncode != 0 or not out.startswith(b"OggS"):
            said = (err.decode("utf-8", "replace").strip().splitlines() or [""])[-1]
            log.warning("ffmpeg could not convert a reply (exit %s): %s", process.returncode, said)
            return None
        return out
