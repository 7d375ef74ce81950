"""The engine: a `ChatEvent` in, a `Reply` out, one session's turns in order. It holds the
turn's stages, built by the runtime (bot.runtime.assemble), and runs them top to bottom:

    admit (bot.turn.admit)      the floor hears it, the access gate lets it in, contacts noted
    perceive (bot.turn.senses)  its pictures looked at, its voice notes heard
    settle (bot.turn.settle)    it waits for its burst and the session's lock; the turn takes it
                                (the floor decides whether the persona speaks at all)
    recall (bot.turn.recall)    what comes to mind: memories, a document's passages, a search,
                                the intention due now
    compose (bot.turn.compose)  the prompt
    answer (bot.turn.answer)    the chat model, its tool rounds, the reply kept
    after (bot.turn.after)      contacts answered; state slots and compression in the background
    voice (bot.turn.senses)     the reply said aloud where wanted"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import timedelta, tzinfo

from bot.config import EngineConfig
from bot.conversation.recollect import Recollector
from bot.conversation.sessions import (
    Session,
    SessionManager,
)
from bot.conversation.slots import StateSlots
from bot.events import ChatEvent, Reply
from bot.groups.floor import PRIVATE, Floor
from bot.groups.relay import Relay
from bot.groups.welcome import Welcomes
from bot.llm.router import ModelRouter
from bot.media.document_mode import DocumentMode
from bot.persona.file import Persona
from bot.platforms import Platforms
from bot.turn.admit import Admission
from bot.turn.after import After, Replied, addressed
from bot.turn.answer import Answering
from bot.turn.calls import ToolCalls
from bot.turn.compose import compose
from bot.turn.recall import Recall
from bot.turn.senses import Perceived, Senses, Typing, showing
from bot.turn.settle import Settled, Settling, idle_after, save
from memory.clock import Clock
from memory.storage import ContactStore, IntentionStore, RoomStore

__all__ = ["Engine"]

log = logging.getLogger(__name__)


@dataclass(eq=False, repr=False, kw_only=True)
class Engine:
    """A turn's orchestrator; `bot.runtime.assemble.build_engine` makes one."""

    personas: Mapping[str, Persona]
    platforms: Platforms  # what each platform of an event allows (bot.platforms)
    sessions: SessionManager
    clock: Clock
    tz: tzinfo
    settings: EngineConfig
    models: ModelRouter
    memory: Recollector | None
    rooms: RoomStore  # channel bindings and DM sharing
    contacts: ContactStore  # who was heard and answered, for writing first (bot.turn.reach)
    intentions: IntentionStore  # what the persona means to bring up later
    floor: Floor  # whether the persona speaks in a group (bot.groups.floor)
    relay: Relay  # personas sharing a room hear one another through it (bot.groups.relay)
    welcomes: Welcomes  # new members greeted (`group.greet`)
    documents: DocumentMode
    slots: StateSlots
    # The stages of a turn, in their order.
    admission: Admission
    senses: Senses
    settling: Settling
    recall: Recall
    answering: Answering
    after: After
    calls: ToolCalls  # the tools recall and answer share

    def persona(self, event: ChatEvent) -> Persona:
        return self.personas[event.persona]

    async def session(self, event: ChatEvent) -> Session:
        return await self.sessions.of(self.persona(event), event)

    def idle_time(self, persona_key: str, place: str) -> timedelta:
        """How long a conversation in `place` stays quiet before it closes (bot.turn.settle)."""
        persona = self.personas.get(persona_key)
        return timedelta(minutes=5.0) if persona is None else idle_after(persona, place)

    async def handle(
        self,
        event: ChatEvent,
        *,
        settle: bool = False,
        typing: Typing | None = None,
        senses: bool = False,
    ) -> Reply:
        """Answer one message, or keep it without answering (what the persona does not answer
        in a group still joins the conversation). `settle`: first wait for the rest of its
        burst (bot.turn.settle). An empty reply: nothing to say. `typing` is shown while the
        persona is really working. `senses` (a chat platform's message, bot.front): pictures
        and voice notes taken in, the reply said aloud where wanted (bot.turn.senses)."""
        admitted = await self.admission.hear(event)
        if isinstance(admitted, Reply):  # refused, or nothing to answer
            perceived, reply = Perceived(event), admitted
        else:
            perceived = await self.senses.perceive(admitted, typing) if senses else Perceived(event)
            admitted = replace(admitted, event=perceived.event)
            settled = await self.settling.settle(admitted, burst=settle)
            if settled is None:  # another message's turn answers for it
                reply = Reply(text="", emotion=admitted.persona.emotions.neutral)
            else:
                reply = await self._turn(settled, typing)
        return await self.senses.voice(perceived, reply, typing) if senses else reply

    async def _turn(self, settled: Settled, typing: Typing | None) -> Reply:
        """The turn, holding the session's lock: the floor's decision, the answer, then what
        follows it (bot.turn.after, which may keep the lock for its background work)."""
        persona, session, event = settled.persona, settled.session, settled.event
        handed_off = False
        try:
            heard = [mark.heard for mark in settled.marks.values()]
            # (a private chat has no floor: every message there calls on the persona)
            verdict = PRIVATE if event.is_dm else await self.floor.decide(persona, event, heard)
            if not verdict.speak:
                await self.settling.join(settled)
                await self._save(session)
                log.debug("%s keeps quiet in %s: %s", persona.key, event.platform, verdict.why)
                return Reply(text="", emotion=persona.emotions.neutral)
            greeting = await self.settling.greeting(persona, session, event)
            async with showing(typing):
                reply = await self._answer(settled)
            limit = self.platforms[event.platform].limit
            reply = addressed(Replied(settled, reply), greeting, self.floor, limit)
            if not reply.failed and not event.is_dm:
                self.floor.spoke(persona, event)
            session.note_answered(event.message_id)  # (closing a document notes it here)
            # Saved before the user sees the reply: a crash after it loses nothing they saw.
            await self._save(session)
            handed_off = await self.after.follow(Replied(settled, reply))
        finally:
            if not handed_off:
                session.lock.release()
        return reply

    async def _answer(self, settled: Settled) -> Reply:
        """The reply: one without the model (bot.turn.settle), else recall, compose, answer."""
        reply = await self.settling.take_in(settled)
        if reply is not None:
            return reply
        mind = await self.recall.recall(settled)
        return await self.answering.answer(compose(mind, self.settings))

    async def greet(self, event: ChatEvent) -> Reply | None:
        """The card's greeting, for a page or a console that shows the persona before the user
        writes (bot.turn.settle). None: no greeting to show."""
        persona = self.persona(event)
        session = await self.session(event)
        async with session.lock:
            text = await self.settling.greeting(persona, session, event)
            if not text:
                return None
            await self._save(session)
        limit = self.platforms[event.platform].limit
        return Reply.build(text, persona.emotions.neutral, limit)

    async def drain(self, grace: float | None = None) -> None:
        """Wait for the work that follows replies (bot.turn.after)."""
        await self.after.drain(grace)

    def memory_scope(self, persona: Persona, session: Session) -> str:
        return Recollector.scope(persona.key, session.scope)

    async def _save(self, session: Session) -> None:
        await save(self.sessions, session)
