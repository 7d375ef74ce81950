"""The senses of a turn. Before it, `perceive`: an admitted message in (`Admitted`,
bot.turn.admit), the message as the persona takes it in out (`Perceived`): its pictures,
stickers and GIFs looked at (bot.media.pictures: said in words, or shown to a chat model that
sees) and its voice notes heard (bot.media.hearing), when it is said to the persona. After it,
`voice`: the reply in, the reply as the user gets it out: said aloud too where the persona and
the user want it (bot.media.speech), after the persona's sentences about what it could not
take in."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, replace

from bot import redact
from bot.events import ChatEvent, Reply, split_chunks
from bot.media.hearing import Hearing, wants_hearing
from bot.media.pictures import Pictures, wants_looking
from bot.media.speech import Speech
from bot.persona.file import Persona
from bot.platforms import Platforms
from bot.turn.admit import Admitted

__all__ = ["Perceived", "Senses", "Typing", "showing"]

log = logging.getLogger(__name__)

Typing = Callable[[], AbstractAsyncContextManager[object]]  # shown while the persona works


@dataclass(slots=True, frozen=True)
class Perceived:
    """A message as the persona took it in: `event` says its pictures and recordings in
    words; `said`, the persona's sentences about those it could not take in; `spoken_to`: it
    came as a voice note, to be answered aloud where wanted."""

    event: ChatEvent
    said: tuple[str, ...] = ()
    spoken_to: bool = False


@dataclass(slots=True, eq=False)
class Senses:
    personas: Mapping[str, Persona]
    platforms: Platforms
    pictures: Pictures
    hearing: Hearing
    speech: Speech

    async def perceive(self, admitted: Admitted, typing: Typing | None = None) -> Perceived:
        """The message taken in (`typing` shown meanwhile); one overheard, or without
        pictures or recordings, as it is."""
        event = admitted.event
        if admitted.heard.call is None or not (
            wants_looking(event.attachments) or wants_hearing(event.attachments)
        ):
            return Perceived(event)
        language = event.language or admitted.persona.identity.language
        said: tuple[str, ...] = ()
        spoken_to = wants_hearing(event.attachments)
        async with showing(typing):
            if wants_looking(event.attachments):
                looked = await self.pictures.look(event, language)
                event, said = looked.event, looked.said
            if spoken_to:
                heard = await self.hearing.listen(event, language)
                event, said = heard.event, said + heard.said
        return Perceived(event, said, spoken_to)

    async def voice(
        self, perceived: Perceived, reply: Reply, typing: Typing | None = None
    ) -> Reply:
        """The reply said aloud too where wanted, once its text is final (whatever fails
        there, it goes as text: a failure is logged, never what was said); then the
        sentences about what could not be taken in, first."""
        reply = await self._voiced(perceived, reply, typing)
        if not perceived.said:
            return reply
        sentences = "\n".join(perceived.said)
        text = f"{sentences}\n\n{reply.text}" if reply.text else sentences
        limit = self.platforms[perceived.event.platform].limit
        return replace(reply, text=text, chunks=split_chunks(text, limit))

    async def _voiced(self, perceived: Perceived, reply: Reply, typing: Typing | None) -> Reply:
        event = perceived.event
        persona = self.personas[event.persona]
        if not reply.text or reply.failed or reply.reaction or not self.speech.speaks(persona):
            return reply
        try:
            if not await self.speech.wanted(persona, event, perceived.spoken_to, reply.people):
                return reply
            async with showing(typing):
                voice = await self.speech.say(persona, reply.text)
        except Exception as e:  # the text is answer enough
            log.error("saying a reply of %s aloud failed: %s", persona.key, redact.failure(e))
            return reply
        return replace(reply, voice=voice)


def showing(typing: Typing | None) -> AbstractAsyncContextManager[object]:
    """`typing` shown for a while, if there is one."""
    return typing() if typing is not None else contextlib.nullcontext()
