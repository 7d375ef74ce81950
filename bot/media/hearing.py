"""Voice notes and audio users send: what the persona hears of them, the transcript kept as
the user's words, marked as spoken ("[voice] ..."), so the conversation and encoding keep it.

`Hearing.listen` runs before a turn (bot.front), for a message that calls on the persona,
after its pictures are looked at (bot.media.pictures): each recording is counted against the
sender's media per hour (the pictures' count, `Pictures.count`; given back if it is refused
before it is heard), refused by its declared size before any download, fetched, and
transcribed by the `hearing` tier (`ModelRouter.transcribe`: OpenAI-compatible
`/audio/transcriptions`; the offline model's stub says it is one). Nothing is written to
disk: the bytes live in memory until transcribed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePath

from bot.catalogue import say
from bot.chat_model import ModelError
from bot.config import EngineConfig
from bot.events import Attachment, ChatEvent
from bot.llm.router import ModelRouter
from bot.media.pictures import MediaError, fetch_within
from bot.tomlfile import one_line

__all__ = [
    "MAX_PER_MESSAGE",
    "SPOKEN",
    "Hearing",
    "Transcribed",
    "VoiceError",
    "is_audio",
    "wants_hearing",
]

log = logging.getLogger(__name__)

MAX_PER_MESSAGE = 2  # recordings transcribed in one message; the others are only named
SPOKEN = "[voice]"  # marks a transcript as what the user said aloud
TRANSCRIPT_CHARS = 4000  # of one recording's transcript
_SUFFIXES = frozenset(
    {".ogg", ".oga", ".opus", ".mp3", ".m4a", ".mp4a", ".aac", ".wav", ".flac", ".webm", ".amr"}
)


class VoiceError(MediaError):
    """A recording not heard."""


@dataclass(slots=True, frozen=True)
class Transcribed:
    """A message once its recordings were listened to: `event` says them in words (they are
    no longer attachments), `said` is the persona's sentences about those it could not hear."""

    event: ChatEvent
    said: tuple[str, ...] = ()


def is_audio(attachment: Attachment) -> bool:
    """A recording, by its declared type or its name's extension (a video is not one)."""
    kind = attachment.content_type.lower()
    return kind.startswith("audio/") or PurePath(attachment.filename).suffix.lower() in _SUFFIXES


def wants_hearing(attachments: Sequence[Attachment]) -> bool:
    """Whether a message's `attachments` hold voice notes or audio to listen to."""
    return any(is_audio(a) for a in attachments)


class Hearing:
    """Listens to the recordings of messages; one per engine (bot.turn.senses), for every
    platform and persona. `count` counts one more medium of a sender's (False: past the
    hour's limit); `refund` takes it back for a recording refused before it was heard (too
    big, not fetched, nothing to hear it with)."""

    def __init__(
        self,
        models: ModelRouter,
        count: Callable[[ChatEvent], bool],
        refund: Callable[[ChatEvent], None],
        settings: EngineConfig,
    ) -> None:
        self.models = models
        self.count = count
        self.refund = refund
        self.limit = settings.audio_max_kb * 1024

    async def listen(self, event: ChatEvent, language: str) -> Transcribed:
        """`event` with its recordings said in words (other attachments stay as they are); see
        the module's docstring; the persona's sentences about them are in `language`."""
        words: list[str] = []
        said: list[str] = []
        others: list[Attachment] = []
        heard = 0
        for attachment in event.attachments:
            if not is_audio(attachment):
                others.append(attachment)
                continue
            name = _name(attachment.filename)
            heard += 1
            over = heard > MAX_PER_MESSAGE  # (not counted either)
            if over or not self.count(event):
                words.append(f"[voice note {name}, not listened to]")
                if not over and say(language, "voice_too_many") not in said:
                    said.append(say(language, "voice_too_many"))
                continue
            try:
                words.append(f"{SPOKEN} {await self._transcribe(attachment, event)}")
            except VoiceError as e:
                words.append(f"[voice note {name}, not heard]")
                said.append(say(language, e.key, **e.fields))
        text = " ".join([event.text.strip(), *words]).strip()
        return Transcribed(replace(event, text=text, attachments=tuple(others)), tuple(said))

    async def _transcribe(self, attachment: Attachment, event: ChatEvent) -> str:
        name = _name(attachment.filename)
        try:
            if not self.models.hears:  # (an Ollama found on its own): not even downloaded
                raise VoiceError("voice_no_hearing", name=name)
            data = await fetch_within(
                attachment,
                self.limit,
                name,
                VoiceError,
                too_big="voice_too_big",
                not_fetched="voice_not_fetched",
            )
        except VoiceError:
            self.refund(event)  # refused before it was heard: not counted
            raise
        try:
            text = await self.models.transcribe(attachment.filename or "voice.ogg", data)
        except ModelError as e:  # undecodable audio among them: the server refuses it
            log.warning("the hearing tier could not transcribe a recording: %s", e)
            raise VoiceError("voice_not_heard", name=name) from None
        words = one_line(" ".join(text.split()))[:TRANSCRIPT_CHARS]
        if not words:
            raise VoiceError("voice_not_heard", name=name)
        return words


def _name(name: str) -> str:
    return one_line(name).replace("[", "(").replace("]", ")")[:100] or "voice note"
