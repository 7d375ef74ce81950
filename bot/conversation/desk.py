"""What a user can do with their own conversation with a persona, beside talking in it: end it,
wipe it with everything remembered of it, set its state, keep the memories offered to them to
pick from, save it and look at it. The commands (bot/commands) work through it.

Whether the sender may change a memory at all is decided here (`check_may_change`): their own
always, a channel's shared one only as its admin. What came to mind as turns were answered
(`Turn.note`) is dropped when a memory is forgotten, here or in another process
(`changed_elsewhere`, which the desk registers with the memory bank)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bot.access import NotAllowed
from bot.catalogue import say
from bot.conversation.sessions import (
    Session,
    SessionManager,
    Turn,
    is_shared,
    member_places,
    persona_place,
    server_place,
)
from bot.conversation.slots import StateSlots
from bot.events import ChatEvent
from bot.persona.file import Persona
from memory.clock import Clock
from memory.records import ArchivedConversation
from memory.scopes import Scope

__all__ = ["Desk", "ScopeList", "ScopedMemory", "SessionInfo"]

log = logging.getLogger(__name__)


class ScopedMemory(Protocol):
    """The long-term memory as the desk uses it (memory.bank.MemoryBank): a scope wiped, and
    word of another process's changes."""

    async def wipe(self, scope: str) -> int: ...

    def watch(self, changed_elsewhere: Callable[[str | None], None]) -> None: ...


class ScopeList(Protocol):
    """Every scope that holds memories (memory.storage)."""

    async def scopes(self) -> list[str]: ...


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


@dataclass(slots=True, eq=False, kw_only=True)
class Desk:
    personas: Mapping[str, Persona]
    sessions: SessionManager
    clock: Clock
    memory: ScopedMemory | None  # None when long-term memory is off
    scopes: ScopeList  # the store long-term memory keeps its scopes in

    def __post_init__(self) -> None:
        if self.memory is not None:  # another process's /forget reaches the notes kept here
            self.memory.watch(self.changed_elsewhere)

    def persona(self, event: ChatEvent) -> Persona:
        return self.personas[event.persona]

    async def session(self, event: ChatEvent) -> Session:
        return await self.sessions.of(self.persona(event), event)

    def event_scope(self, event: ChatEvent) -> str:
        """The memory bank's scope for an event."""
        persona = self.persona(event)
        return str(Scope(persona.key, persona_place(persona, event)))

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

    async def end(self, event: ChatEvent) -> bool:
        """Close the conversation now (it goes to the archive). False if none was open."""
        session = await self.session(event)
        async with session.lock:
            return await self.sessions.close(session, "end") is not None

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
            places = await self.sessions.places(persona.key)
            if self.memory is not None:
                prefix = f"{persona.key}/"
                scopes = await self.scopes.scopes()
                places |= {s.removeprefix(prefix) for s in scopes if s.startswith(prefix)}
            for place in member_places(event, places | {server_place(event)}):
                if place != sessions[0].scope:
                    sessions.append(await self.sessions.get(persona.key, place))
        for session in sessions:
            async with session.lock:
                await self.sessions.wipe(session)
                if self.memory is not None:
                    await self.memory.wipe(str(Scope(persona.key, session.scope)))

    def changed_elsewhere(self, scope: str | None) -> None:
        """Another process changed a scope's memories (a /forget, say; None: any scope's): the
        conversations of that scope lose their notes, as `forget_notes` does here."""
        for persona in self.personas.values():
            for session in self.sessions.loaded(persona.key):
                if scope is None or str(Scope(persona.key, session.scope)) == scope:
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
            return StateSlots.set(session, name, value)

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
            try:
                await self.sessions.save(session)
            except Exception:  # the scheduler's snapshot tries again
                log.exception("could not save the conversation of %s", session.persona)

    async def offered(self, event: ChatEvent) -> list[int]:
        """The memories last offered to the event's user (`offer`), if any."""
        session = await self.session(event)
        async with session.lock:
            return list(session.offers.get(event.user_id, []))

    async def save(self, event: ChatEvent) -> dict[str, Any]:
        """Snapshot now; returns an export of the session."""
        session = await self.session(event)
        async with session.lock:
            await self.sessions.save(session)
            return {
                "persona": session.persona,
                "scope": session.scope,
                "saved_at": self.clock.now().isoformat(),
                # (Not how the store numbers and keeps the turns: the conversation itself.)
                **{k: v for k, v in session.snapshot().items() if k not in ("first", "rows")},
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
