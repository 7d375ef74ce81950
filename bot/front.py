"""The one way in from a chat platform: an adapter hands over a `ChatEvent` and renders what
comes back; everything between happens here, once, for every platform.

A message: which of the bot's personas it is for (bot.groups.routing), then a document given to the
persona (refused by its declared size before any download, fetched through its
`Attachment.fetch`, read) or a turn of conversation (bot.turn.engine: access and rate limits,
whether the persona speaks at all in a group, its pictures and voice notes taken in, the
reply said aloud too where wanted). A command: the persona of its room, the access gate, then
the command table (bot.commands.table),
working with the runtime's `Services`.

    front = Front(engine, services, bot_id, ["miao", "monikai"])
    spoken = await front.receive(event)     # None: nothing to say
    answer = await front.command(event, "forget", "Mochi")
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

from bot.catalogue import say
from bot.commands import table as commands
from bot.commands.answers import Answer
from bot.commands.services import Services
from bot.events import Attachment, ChatEvent, FetchError, Reply, split_chunks
from bot.groups.routing import PersonaRouter
from bot.media.documents import Document, DocumentError, is_document, precheck
from bot.spoken import Spoken
from bot.turn.engine import Engine
from bot.turn.senses import Typing, showing

__all__ = ["Front"]

log = logging.getLogger(__name__)


class Front:
    def __init__(
        self,
        engine: Engine,
        services: Services,
        bot_id: str,
        personas: str | Sequence[str],
        *,
        language: str = "",
    ) -> None:
        """`personas`: the bot's persona keys (the first is the default; the others are
        addressed by name or bound to a room with /persona set). `language`: what the bot
        itself says (commands, menus) is in it, whatever its personas speak ("": theirs)."""
        self.engine = engine
        self.services = services  # what the commands work with
        self._language = language
        self.router = PersonaRouter(
            engine.personas,
            engine.rooms,
            engine.clock,
            bot_id,
            [personas] if isinstance(personas, str) else personas,
        )

    @property
    def persona(self) -> str:
        """The bot's default persona."""
        return self.router.default

    def language(self, persona: str | None = None) -> str:
        """The language of what the bot says for a persona (the default one unless named)."""
        return self._language or self.engine.personas[persona or self.persona].identity.language

    async def persona_of(self, room: str) -> str:
        """Who speaks in a room (a channel, a chat or a forum topic) when no one is named."""
        return await self.router.choose(room)

    async def receive(
        self, event: ChatEvent, *, settle: bool = False, typing: Typing | None = None
    ) -> Spoken | None:
        """Answer a message the bot heard in `event.channel_id` (its `persona` is chosen
        here), or keep it unanswered: whether the persona speaks in a group is the engine's
        floor's decision; one relayed from another persona in the room (bot.groups.relay) is for the
        persona it names. None: nothing to say. `settle`: wait for the rest of a burst
        (bot.turn.settle); `typing` is shown while the persona is really answering."""
        if event.from_persona:  # relayed to a persona of this bot by name (bot.groups.relay)
            persona = event.persona
        else:
            persona = await self.router.choose(event.channel_id, event.text)
        event = replace(event, persona=persona, language=self._language)
        if event.is_empty:
            return None
        document = next((a for a in event.attachments if is_document(a.filename)), None)
        floor = self.engine.floor  # (a private chat has none: it always calls on the persona)
        called = event.is_dm or floor.call(self.router.persona(persona), event) is not None
        if document is not None and called and not event.from_bot:
            async with showing(typing):
                reply = await self._read(event, document)
        else:  # (a document nobody gave the persona is a message like another)
            reply = await self.engine.handle(event, settle=settle, typing=typing, senses=True)
        if not reply.text and not reply.reaction:
            return None
        return Spoken(self.router.persona(persona), reply, self.router.several)

    async def welcome(self, event: ChatEvent) -> Spoken | None:
        """The room's persona greets `event`'s sender, who just joined (bot.groups.welcome); None
        where it does not greet."""
        persona = await self.router.choose(event.channel_id)
        event = replace(event, persona=persona, language=self._language)
        reply = await self.engine.welcomes.welcome(self.router.persona(persona), event)
        if reply is None:
            return None
        chunks = split_chunks(reply.text, self.engine.platforms[event.platform].limit)
        reply = replace(reply, chunks=chunks)
        return Spoken(self.router.persona(persona), reply, self.router.several)

    @property
    def asks_admins(self) -> bool:
        """Whether one of the bot's personas has a tool for admins only: only then need a
        group message say whether its sender is an admin (`ChatEvent.admin`), where the
        platform must be asked."""
        box = self.engine.calls.toolbox
        return box is not None and any(
            box.asks_admins(self.router.persona(key)) for key in self.router.personas
        )

    @property
    def greets(self) -> bool:
        """Whether one of the bot's personas greets new members (`group.greet`)."""
        return any(self.router.persona(key).group.greet for key in self.router.personas)

    async def _read(self, event: ChatEvent, attachment: Attachment) -> Reply:
        """Document mode with a file the user sent: refused by its declared size before any
        download, else fetched and read."""
        refused = self.engine.admission.refusal(event)
        if refused is not None:
            return refused
        neutral = self.engine.persona(event).emotions.neutral
        limit = self.engine.platforms[event.platform].limit
        name = attachment.filename
        try:
            precheck(name, attachment.size, limit_bytes=self.document_limit)
            if attachment.fetch is None:
                raise FetchError("no way to fetch it")
            data = await attachment.fetch()
        except DocumentError as e:
            return Reply.build(e.said(self.language(event.persona)), neutral, limit)
        except FetchError as e:  # gone, over the platform's limit, or the network
            log.warning("could not download a document (%s): %s", event.platform, e)
            refusal = DocumentError(name, "document_not_downloaded")
            return Reply.build(refusal.said(self.language(event.persona)), neutral, limit)
        return await self.engine.documents.read(event, name, data)

    @property
    def document_limit(self) -> int:
        """The largest document file read, in bytes."""
        return self.engine.documents.limit

    async def read(self, event: ChatEvent, name: str, data: bytes) -> Reply:
        """Document mode with a file's bytes, for `event.persona` (a page or console that
        picked its persona itself)."""
        refused = self.engine.admission.refusal(event)
        if refused is not None:
            return refused
        return await self.engine.documents.read(event, name, data)

    async def open(self, event: ChatEvent, document: Document) -> Reply:
        """Document mode with a document read already (a local file), for `event.persona`."""
        refused = self.engine.admission.refusal(event)
        if refused is not None:
            return refused
        return await self.engine.documents.open(event, document)

    async def command(self, event: ChatEvent, name: str, argument: str = "") -> Answer | None:
        """Run command `name` for `event` in its room (its `persona` is chosen here); a name
        the table does not offer on the event's platform is answered with the catalogue's
        line. None when the sender is blocked or told to slow down already: nothing to say."""
        persona = await self.router.choose(event.channel_id)
        event = replace(event, persona=persona, language=self._language)
        command = commands.COMMANDS.get(name)
        if command is None or not command.offered_on(self.engine.platforms[event.platform]):
            said = say(self.language(persona), "no_such_command", command=f"/{name[:40]}")
            return Answer(said)
        verdict = self.engine.admission.admit(event)
        if verdict == "slow_down":
            return Answer(self.engine.admission.slow_down(event))
        if verdict != "admit":
            return None
        return await commands.run(self.services, event, name, argument, router=self.router)
