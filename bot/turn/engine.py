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
    voice (bot.turn.senses)     the reply said aloud where wanted

and the commands a user gives about their own conversation."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta, tzinfo
from typing import Any

from bot.catalogue import say
from bot.conversation.sessions import (
    Session,
    SessionManager,
    Turn,
    is_shared,
    member_rooms,
    persona_room,
    server_room,
)
from bot.conversation.slots import StateSlots
from bot.events import PLATFORM_LIMITS, ChatEvent, Reply
from bot.groups.floor import Floor
from bot.groups.relay import Relay
from bot.groups.welcome import Welcomes
from bot.llm.router import ModelRouter
from bot.media.document_mode import DocumentMode
from bot.persona.file import Persona
from bot.runtime.config import EngineConfig
from bot.turn.access import NotAllowed
from bot.turn.admit import Admission
from bot.turn.after import After, Replied, addressed
from bot.turn.answer import Answering
from bot.turn.calls import ToolCalls
from bot.turn.compose import compose
from bot.turn.recall import Recall
from bot.turn.recollect import Recollector
from bot.turn.senses import Perceived, Senses, Typing, showing
from bot.turn.settle import Settled, Settling, idle_after, save
from memory.clock import Clock
from memory.records import ArchivedConversation
from memory.storage import ContactStore, IntentionStore, RoomStore

__all__ = ["Engine", "SessionInfo"]

log = logging.getLogger(__name__)


@dataclass(slots=True, frozen=True)
class SessionInfo:
    """What `log` shows of a session."""

    persona: str
    scope: str
    turns: tuple[Turn, ...]
    state: dict[str, str]
    archived: int  # closed conversations in the archive (encoded or waiting to be)
    last_closed: ArchivedConversation | None  # the newest of them, when none is open
    summary: str = ""  # the running summary of this conversation's folded turns


@dataclass(eq=False, repr=False, kw_only=True)
class Engine:
    """A turn's orchestrator; `bot.runtime.assemble.build_engine` makes one."""

    personas: Mapping[str, Persona]
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

    def __post_init__(self) -> None:
        if self.memory is not None:  # another process's /forget reaches the notes kept here
            self.memory.bank.watch(self._changed_elsewhere)

    def persona(self, event: ChatEvent) -> Persona:
        return self.personas[event.persona]

    async def session(self, event: ChatEvent) -> Session:
        return await self.sessions.of(self.persona(event), event)

    def idle_time(self, persona_key: str, room: str) -> timedelta:
        """How long a conversation in `room` stays quiet before it closes (bot.turn.settle)."""
        persona = self.personas.get(persona_key)
        return timedelta(minutes=5.0) if persona is None else idle_after(persona, room)

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
            verdict = await self.floor.decide(persona, event, heard)
            if not verdict.speak:
                await self.settling.join(settled)
                await self._save(session)
                log.debug("%s keeps quiet in %s: %s", persona.key, event.platform, verdict.why)
                return Reply(text="", emotion=persona.emotions.neutral)
            greeting = await self.settling.greeting(persona, session, event)
            async with showing(typing):
                reply = await self._answer(settled)
            reply = addressed(Replied(settled, reply), greeting, self.floor)
            if not reply.failed:
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
        return Reply.build(text, persona.emotions.neutral, PLATFORM_LIMITS[event.platform])

    async def drain(self, grace: float | None = None) -> None:
        """Wait for the work that follows replies (bot.turn.after)."""
        await self.after.drain(grace)

    def memory_scope(self, persona: Persona, session: Session) -> str:
        return Recollector.scope(persona.key, session.scope)

    async def _save(self, session: Session) -> None:
        await save(self.sessions, session)

    # Commands a user can give about their own conversation.

    async def end(self, event: ChatEvent) -> bool:
        """Close the conversation now (it goes to the archive). False if none was open."""
        session = await self.session(event)
        async with session.lock:
            return await self.sessions.close(session, "end") is not None

    def shares(self, event: ChatEvent) -> bool:
        """Whether the event's memory is the whole channel's (a channel-scoped persona in a
        server or group), not the sender's own."""
        return is_shared(self.persona(event).memory.scope, event)

    def check_may_change(self, event: ChatEvent) -> None:
        """Raise NotAllowed unless the sender may change the event's memory and state: their
        own always; a channel's shared one only as its admin (`ChatEvent.admin`)."""
        if self.shares(event) and not event.admin:
            persona = self.persona(event)
            raise NotAllowed(
                say(persona.identity.language, "shared_admins_only", name=persona.identity.name)
            )

    async def wipe(self, event: ChatEvent) -> None:
        """Forget the event's conversation, state, archive and long-term memories with this
        persona: the user's own (in a group, in every channel of it), or, for an admin, the
        channel's shared ones."""
        self.check_may_change(event)
        persona = self.persona(event)
        sessions = [await self.session(event)]
        if persona.memory.scope == "user" and not self.shares(event) and not event.is_dm:
            # "Everything remembered of you" here is the member's every corner of the server:
            # each channel's, and the whole server's (where what they said went before
            # memories kept to their channel).
            rooms = await self.sessions.rooms(persona.key)
            if self.memory is not None:
                prefix = f"{persona.key}/"
                scopes = await self.memory.bank.store.scopes()
                rooms |= {s.removeprefix(prefix) for s in scopes if s.startswith(prefix)}
            for room in member_rooms(event, rooms | {server_room(event)}):
                if room != sessions[0].scope:
                    sessions.append(await self.sessions.get(persona.key, room))
        for session in sessions:
            async with session.lock:
                await self.sessions.wipe(session)
                if self.memory is not None:
                    await self.memory.bank.wipe(self.memory_scope(persona, session))

    def _changed_elsewhere(self, scope: str) -> None:
        """Another process changed a scope's memories (a /forget, say): the conversations of
        that scope lose their notes, as `forget_notes` does here."""
        for persona in self.personas.values():
            for session in self.sessions.loaded(persona.key):
                if self.memory_scope(persona, session) == scope:
                    for turn in session.turns:
                        turn.note = ""

    def forget_notes(self, event: ChatEvent) -> None:
        """The persona's conversations lose what came to mind as their turns were answered
        (`Turn.note`): a memory forgotten, or private again, is not shown from a note (their
        next prompts are new to a prompt cache, once)."""
        for session in self.sessions.loaded(event.persona):
            for turn in session.turns:
                turn.note = ""

    async def set_state(self, event: ChatEvent, name: str, value: str) -> str:
        """Set one state slot (the user's own change, or an admin's of a shared one); returns
        the value stored."""
        self.check_may_change(event)
        session = await self.session(event)
        async with session.lock:
            return self.slots.set(session, name, value)

    async def offer(self, event: ChatEvent, memory_ids: Sequence[int]) -> None:
        """Keep the memories offered to the event's user to pick from (`/forget N`); none
        withdraws the offer. Saved at once: the pick may reach another process."""
        session = await self.session(event)
        async with session.lock:
            if memory_ids:
                session.offers[event.user_id] = list(memory_ids)
            elif session.offers.pop(event.user_id, None) is None:
                return
            session.touch()
            await self._save(session)

    async def offered(self, event: ChatEvent) -> list[int]:
        """The memories last offered to the event's user (`offer`), if any."""
        session = await self.session(event)
        async with session.lock:
            return list(session.offers.get(event.user_id, []))

    def event_scope(self, event: ChatEvent) -> str:
        """The memory bank's scope for an event (commands use it)."""
        persona = self.persona(event)
        return Recollector.scope(persona.key, persona_room(persona, event))

    async def save(self, event: ChatEvent) -> dict[str, Any]:
        """Snapshot now; returns an export of the session."""
        session = await self.session(event)
        async with session.lock:
            await self.sessions.save(session)
            return {
                "persona": session.persona,
                "scope": session.scope,
                "saved_at": self.clock.now().isoformat(),
                **session.snapshot(),
            }

    async def info(self, event: ChatEvent) -> SessionInfo:
        session = await self.session(event)
        async with session.lock:
            archived, last = await self.sessions.archived(session)
            return SessionInfo(
                session.persona,
                session.scope,
                tuple(session.turns),
                dict(session.state),
                archived,
                last,
                session.summary,
            )
