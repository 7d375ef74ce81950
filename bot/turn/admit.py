"""Admission: a message in (`ChatEvent`), the turn it may become out (`Admitted`), or the
`Reply` that ends it here. A bot's message is neither answered nor kept. In a group,
bot.groups.floor hears it first; a private chat has no floor (its messages all call on the
persona). The access gate then lets it in once: counted against the rate
limit when it is said to the persona, only checked against the lists when overheard, not at
all for another persona's words (no one the gate lists). The sender's contact is noted, and a
message delivered again after a crash (answered already) goes no further."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from bot.access import Admittance, Gate
from bot.catalogue import say
from bot.conversation.sessions import Session, SessionManager
from bot.events import ChatEvent, Reply
from bot.groups.floor import Floor, Heard
from bot.persona.file import Persona
from bot.platforms import Platforms
from bot.turn.reach import asks_for_quiet
from memory.clock import Clock
from memory.storage import ContactStore

__all__ = ["Admission", "Admitted"]

log = logging.getLogger(__name__)


@dataclass(slots=True, frozen=True)
class Admitted:
    """A message let in, for its turn: `quiet`, said to the persona, it asks not to be written
    to first."""

    persona: Persona
    event: ChatEvent
    session: Session
    heard: Heard  # how the floor heard it
    quiet: bool


@dataclass(slots=True, eq=False)
class Admission:
    personas: Mapping[str, Persona]
    platforms: Platforms
    sessions: SessionManager
    floor: Floor
    contacts: ContactStore  # who was heard, for writing first (bot.turn.reach)
    clock: Clock
    gate: Gate | None = None

    def admit(self, event: ChatEvent) -> Admittance:
        """What the access gate says to this message or command (counted against the rate
        limit): "admit", "blocked", "slow_down" (say `slow_down` once) or "quiet"."""
        return "admit" if self.gate is None else self.gate.admit(event, self.clock.now())

    def slow_down(self, event: ChatEvent) -> str:
        """The persona asking a user who writes too fast to wait a minute."""
        return say(self.personas[event.persona].identity.language, "slow_down")

    def refusal(self, event: ChatEvent) -> Reply | None:
        """What the access gate says instead of an answer when it does not admit the event:
        "slow down" once, then silence (blocked, or told already). None: admitted."""
        verdict = self.admit(event)
        if verdict == "admit":
            return None
        neutral = self.personas[event.persona].emotions.neutral
        if verdict == "slow_down":
            limit = self.platforms[event.platform].limit
            return Reply.build(self.slow_down(event), neutral, limit)
        return Reply(text="", emotion=neutral)

    async def hear(self, event: ChatEvent) -> Admitted | Reply:
        """The message admitted, or what it gets instead (an empty reply: nothing)."""
        persona = self.personas[event.persona]
        silent = Reply(text="", emotion=persona.emotions.neutral)
        if event.is_empty:  # nothing said: nothing to answer, no model call
            return silent
        if event.from_bot:  # (adapters drop them: this is the second guard)
            return silent
        if event.is_dm:
            heard = Heard(event.user_id, event.user_name, event.text, "private")
        else:
            heard = self.floor.hear(persona, event)
        if event.from_persona:  # another persona here (bot.groups.relay): no one the gate lists
            pass
        elif heard.call is None:  # said among others: kept if the lists let the sender in,
            if self.gate is not None and not self.gate.allowed(event):  # but not counted
                return silent
        elif (refused := self.refusal(event)) is not None:
            return refused
        # Only a message said to the persona is one it owes an answer (outreach waits while
        # one is unanswered): one overheard in a group is not, nor is it a request for quiet;
        # nor is another persona (or an anonymous admin, for quiet) anyone to write to.
        quiet = (
            heard.call is not None
            and not event.from_persona
            and not event.anonymous
            and asks_for_quiet(event.text)
        )
        if heard.call is not None and not event.from_persona:
            await self._heard_from(persona, event, quiet)
        session = await self.sessions.of(persona, event)
        if session.answered(event.message_id):  # delivered again after a crash
            log.info("%s: message %s was answered already", persona.key, event.message_id)
            return silent
        return Admitted(persona, event, session, heard, quiet)

    async def _heard_from(self, persona: Persona, event: ChatEvent, quiet: bool) -> None:
        """The sender's contact: heard now (privately, in a private chat), quiet if asked. An
        anonymous sender is no one to write to."""
        if event.anonymous:
            return
        now = self.clock.now()
        try:
            await self.contacts.heard(
                persona.key, event.platform, event.user_id, now, private=event.is_dm
            )
            if quiet:
                await self.contacts.set_contact(
                    persona.key, event.platform, event.user_id, quiet=True, at=now
                )
                log.info("%s: a user asked for quiet on %s", persona.key, event.platform)
        except Exception:  # the turn goes on; the next message notes them again
            log.exception("could not note a contact of %s", persona.key)
