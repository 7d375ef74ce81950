"""After the reply: a settled turn and its reply in (`Replied`), the work that follows it out
of the user's way. Everyone the reply answers was answered now (the contacts bot.outreach
reads); then, in the background, still holding the session's lock so the next turn sees what
they change: the state slots due (bot.conversation.slots), and compression, the oldest turns
folded into the running summary once the turns outgrow `fold_tokens`. `follow` says whether
the background took the lock over; `drain` waits for that work at shutdown."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field, replace

from bot.chat_model import ModelError
from bot.conversation.sessions import Session, SessionManager
from bot.conversation.slots import StateSlots
from bot.events import Reply, split_chunks
from bot.groups.floor import Floor
from bot.groups.relay import is_persona_speaker
from bot.llm.router import ModelRouter
from bot.llm.tokens import MESSAGE_OVERHEAD, estimate_tokens
from bot.persona.file import Persona, StateSlot
from bot.prompts import build_summary_prompt
from bot.turn.settle import Settled
from memory.clock import Clock
from memory.storage import ContactStore

__all__ = ["After", "Replied", "addressed", "fold_at"]

log = logging.getLogger(__name__)

KEEP_ROUNDS = 3  # exchanges kept word for word when older turns are folded into the summary
SUMMARY_CHARS = 6_000  # of the running summary


def fold_at(session: Session, fold_tokens: int) -> int:
    """How many of the oldest turns to fold into the running summary: none while the turns
    fit in `fold_tokens`; else all but the last KEEP_ROUNDS exchanges."""
    tokens = sum(estimate_tokens(t.text) + MESSAGE_OVERHEAD for t in session.turns)
    if tokens <= fold_tokens:
        return 0
    users = [i for i, t in enumerate(session.turns) if t.role == "user"]
    return users[-KEEP_ROUNDS] if len(users) >= KEEP_ROUNDS else 0


@dataclass(slots=True, frozen=True)
class Replied:
    """A turn answered: what it settled, and the reply the user gets."""

    settled: Settled
    reply: Reply


def addressed(replied: Replied, greeting: str, floor: Floor, limit: int) -> Reply:
    """The reply as it goes out: after the card's `greeting` that opened a first private
    chat, to the people it answers, and as an answer to the event's message when others
    spoke in the channel since the turn's first message (the platform shows which), in
    pieces of at most `limit` characters."""
    settled, reply = replied.settled, replied.reply
    persona, event, taken = settled.persona, settled.event, settled.taken
    if greeting:
        text = f"{greeting}\n\n{reply.text}" if reply.text else greeting
        reply = replace(reply, text=text, chunks=split_chunks(text, limit))
    reply = replace(reply, people=settled.people)
    first = min(w[1].at for w in taken)
    if (
        event.message_id
        and not event.is_dm
        and floor.others_since(persona, event, first, {w[1].user_id for w in taken})
    ):
        reply = replace(reply, answers=event.message_id)
    return reply


@dataclass(slots=True, eq=False)
class After:
    models: ModelRouter
    sessions: SessionManager
    slots: StateSlots
    contacts: ContactStore  # who was answered, for writing first (bot.turn.reach)
    clock: Clock
    fold_tokens: int = field(kw_only=True)  # of turns kept before the oldest are folded
    _background: set[asyncio.Task[None]] = field(init=False, default_factory=set)

    async def follow(self, replied: Replied) -> bool:
        """What follows a reply; True when the background work took the session's lock over
        (it releases it when done), False when the caller releases it."""
        settled, reply = replied.settled, replied.reply
        persona, session = settled.persona, settled.session
        if reply.failed:
            return False
        await self._answered(settled)
        # (a reaction is no reply: nothing new for the state slots to read)
        due = [] if reply.reaction else self.slots.due(persona, session)
        fold = fold_at(session, self.fold_tokens) > 0
        if not due and not fold:
            return False
        task = asyncio.create_task(self._background_work(persona, session, due, fold))
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return True

    async def drain(self, grace: float | None = None) -> None:
        """Wait for the work that follows replies (state updates) to finish; after `grace`
        seconds, cancel what is left (each task releases its session's lock)."""
        pending = set(self._background)
        if not pending:
            return
        try:
            await asyncio.wait(pending, timeout=grace)
        finally:  # also when the wait itself is cancelled (a second Ctrl-C)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

    async def _answered(self, settled: Settled) -> None:
        """Everyone whose message the reply answers was answered now (an anonymous sender is
        no one to write to)."""
        event, taken = settled.event, settled.taken
        users = {t.user_id for _, t in taken if t.user_id and not is_persona_speaker(t.user_id)}
        users -= settled.anonymous
        if event.anonymous:
            users.discard(event.user_id)
        now = self.clock.now()
        for user_id in sorted(users):
            try:
                await self.contacts.answered(settled.persona.key, event.platform, user_id, now)
            except Exception:  # outreach waits while they seem unanswered: never too eager
                log.exception("could not note an answer of %s", settled.persona.key)

    async def _background_work(
        self, persona: Persona, session: Session, due: list[StateSlot], fold: bool
    ) -> None:
        """State slots, then compression; runs holding the session's lock, and releases it."""
        try:
            if due:
                await self.slots.update(persona, session, due)
            if fold:
                await self._fold(persona, session)
        finally:
            session.lock.release()

    async def _fold(self, persona: Persona, session: Session) -> None:
        """Compression: the oldest turns become part of the running summary (one summary-tier
        call) and go to the archive for long-term memory; a failure keeps them for next time."""
        count = fold_at(session, self.fold_tokens)
        if count <= 0:
            return
        messages = build_summary_prompt(persona, session.summary, session.turns[:count])
        try:
            completion = await self.models.complete("summary", messages, purpose="compression")
        except ModelError as e:
            log.warning("compression failed for %s (%s); trying again next turn", persona.key, e)
            return
        summary = completion.text.strip()[:SUMMARY_CHARS]
        if not summary:
            log.warning("the summary model gave %s an empty summary; trying again", persona.key)
            return
        try:
            await self.sessions.fold(session, count, summary)
        except Exception:
            log.exception("could not fold the older turns of %s; trying again", persona.key)
