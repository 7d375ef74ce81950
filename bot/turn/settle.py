"""Settling: an admitted message (bot.turn.admit) waits in its session until a turn takes it;
the stage gives the turn that holds the session's lock, with every message it takes
(`Settled`), or None when another message's turn answers for it.

Bursts: several messages arriving within a few seconds in one conversation (someone typing in
pieces, or several people at once) are answered once, by one turn that sees them all.

Each message of a conversation waits until the conversation has been quiet for `window`
seconds (the wait starts again with each new message), or until `longest` seconds have passed
since the burst's first message; then the newest one's turn answers for all of them, and the
others' get no reply of their own. Their messages wait in the session meanwhile
(`Session.waiting`, saved as they join), so a crash loses none of them; the turn that takes the
conversation's lock takes every message waiting in it.

Time is the injected clock's, and sleeping the injected `sleep`'s, so tests move a fake clock
instead of waiting. A window of 0 answers at once; so does a surface where a person sends whole
messages and waits for each answer (the console, the web page: the engine notes no arrival).

    bursts = Bursts(clock, window=2.0, longest=8.0)
    arrival = bursts.arrive(("pip", scope))   # as the message comes
    ...                                       # (it is saved meanwhile)
    if await bursts.settle(arrival):
        ...   # the newest message of its burst: answer

The messages a turn took join the conversation (`Settling.join`) when the persona keeps quiet,
or as `Settling.take_in` decides: a message that closes a document, a reaction for messages
that only acknowledge, otherwise all of them before the model is asked."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from bot.conversation.sessions import Session, SessionManager, Turn, is_private
from bot.events import ChatEvent, Reply
from bot.groups.floor import Heard
from bot.groups.relay import is_persona_speaker
from bot.media.document_mode import DocumentMode, closes_document
from bot.persona import cards
from bot.persona.file import Persona
from bot.platforms import Platforms
from bot.tools import Sender
from bot.turn.admit import Admitted
from bot.turn.reactions import reaction
from memory.clock import Clock

__all__ = [
    "MAX_MESSAGE_CHARS",
    "Arrival",
    "Bursts",
    "Mark",
    "Settled",
    "Settling",
    "Sleep",
    "idle_after",
    "save",
]

log = logging.getLogger(__name__)

MAX_MESSAGE_CHARS = 16_000  # of one message kept in short-term memory

Sleep = Callable[[float], Awaitable[None]]


@dataclass(slots=True)
class _Burst:
    first: datetime  # when its first message came
    newest: int = 0  # the number of its newest message
    arrived: asyncio.Event = field(default_factory=asyncio.Event)  # a newer message came


@dataclass(slots=True, frozen=True)
class Arrival:
    """A message's place in its conversation's burst."""

    conversation: Hashable
    burst: _Burst
    number: int
    at: datetime


class Bursts:
    def __init__(
        self, clock: Clock, *, window: float, longest: float, sleep: Sleep = asyncio.sleep
    ) -> None:
        """`window`: seconds of quiet that end a burst; `longest`: the most a burst's first
        message waits however many follow."""
        self.clock = clock
        self.window = timedelta(seconds=window)
        self.longest = timedelta(seconds=max(longest, window))
        self._sleep = sleep
        self._bursts: dict[Hashable, _Burst] = {}

    def arrive(self, conversation: Hashable) -> Arrival | None:
        """Note a message of `conversation` now (None: no window, it is answered at once)."""
        if self.window <= timedelta(0):
            return None
        now = self.clock.now()
        burst = self._bursts.get(conversation)
        if burst is None:
            burst = self._bursts[conversation] = _Burst(now)
        else:
            burst.arrived.set()
            burst.arrived = asyncio.Event()
        burst.newest += 1
        return Arrival(conversation, burst, burst.newest, now)

    async def settle(self, arrival: Arrival | None) -> bool:
        """Wait for the burst a message arrived in to end: True when it is the burst's newest
        message (its turn answers for all), False when a newer one came (that one answers)."""
        if arrival is None:
            return True
        burst = arrival.burst
        try:
            ends = min(arrival.at + self.window, burst.first + self.longest)
            left = (ends - self.clock.now()).total_seconds()
            if left > 0 and burst.newest == arrival.number:
                await self._until(burst.arrived, left)
            return burst.newest == arrival.number
        finally:
            # The burst ends with its newest message's wait (answered, or given up).
            if burst.newest == arrival.number and self._bursts.get(arrival.conversation) is burst:
                del self._bursts[arrival.conversation]

    async def _until(self, arrived: asyncio.Event, seconds: float) -> None:
        """Sleep `seconds`, or less if a newer message arrives."""
        sleeping = asyncio.ensure_future(self._sleep(seconds))
        waiting = asyncio.ensure_future(arrived.wait())
        try:
            await asyncio.wait({sleeping, waiting}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (sleeping, waiting):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task


Waited = tuple[str, Turn]  # an entry of `Session.waiting`: a message's id and its turn


@dataclass(slots=True, frozen=True)
class Mark:
    """What is known of a message waiting in a session beside its turn, kept until a turn
    takes it: what the turn does for its sender acts on it (bot.tools.Sender)."""

    heard: Heard  # how the floor heard it
    quiet: bool  # said to the persona, it asks not to be written to first
    admin: bool  # its sender is an admin of the chat (never in a private chat)
    anonymous: bool  # its sender is no one in particular (`ChatEvent.anonymous`)


@dataclass(slots=True, frozen=True)
class Settled:
    """A turn holding its session's lock, with the messages it took from the waiting, in the
    order they came (`event`'s among them), and what is known of them by `id` of each entry."""

    persona: Persona
    event: ChatEvent
    session: Session
    taken: tuple[Waited, ...]
    marks: Mapping[int, Mark]

    def mark(self, waited: Waited) -> Mark | None:
        return self.marks.get(id(waited))

    @property
    def quieted(self) -> list[str]:
        """The speakers whose messages ask for quiet."""
        return [w[1].speaker for w in self.taken if (m := self.mark(w)) and m.quiet]

    @property
    def sender(self) -> Sender:
        """Whom the turn's tool calls act for: everyone whose message it answers, since the
        model cannot be trusted to say whose words asked for a call (words can claim to be
        anyone's). An admin only when each of them is; one person, for the tools that act for
        a person, only when every message is that person's, known here as someone in
        particular (not another persona, not an anonymous admin, not a message this process
        did not take in)."""
        speakers = tuple(dict.fromkeys(t.user_id for _, t in self.taken))
        marks = [self.mark(w) for w in self.taken]
        known = [m for m in marks if m is not None]
        admin = len(known) == len(marks) > 0 and all(m.admin for m in known)
        one = (
            len(speakers) == 1
            and len(known) == len(marks)
            and not any(m.anonymous for m in known)
            and not is_persona_speaker(speakers[0])
        )
        return Sender(speakers, admin, speakers[0] if one else "")

    @property
    def anonymous(self) -> set[str]:
        """The turn's senders who are no one in particular."""
        return {w[1].user_id for w in self.taken if (m := self.mark(w)) and m.anonymous}

    @property
    def people(self) -> tuple[str, ...]:
        """The people the turn answers: its speakers but other personas and anonymous senders."""
        anonymous = self.anonymous
        return tuple(
            user
            for user in dict.fromkeys(t.user_id for _, t in self.taken)
            if user and user not in anonymous and not is_persona_speaker(user)
        )


def idle_after(persona: Persona, place: str) -> timedelta:
    """How long a conversation in `place` stays quiet before it closes: a private one the
    persona's memory.idle_minutes, a group's at least its group.idle_minutes."""
    minutes = persona.memory.idle_minutes
    if not is_private(place):
        minutes = max(minutes, persona.group.idle_minutes)
    return timedelta(minutes=minutes)


async def save(sessions: SessionManager, session: Session) -> None:
    """Save the session; a failure is logged (the scheduler's snapshot tries again)."""
    try:
        await sessions.save(session)
    except Exception:  # the turn goes on
        log.exception("could not save the conversation of %s", session.persona)


@dataclass(slots=True, eq=False)
class Settling:
    sessions: SessionManager
    platforms: Platforms
    clock: Clock
    bursts: Bursts
    documents: DocumentMode
    # What is known of each message waiting in a session, by the id of its `wait` entry
    # (in the session until a turn takes it).
    _marks: dict[int, Mark] = field(init=False, default_factory=dict)

    async def settle(self, admitted: Admitted, *, burst: bool = False) -> Settled | None:
        """The message joins its session's waiting messages, saved when it must wait (a crash
        loses nothing said); then the turn that takes the session's lock takes every message
        waiting in it. `burst`: first wait for the rest of the message's burst, of which only
        the newest message's turn goes on. None: another message's turn answers for it. The
        caller releases the lock of what it gets."""
        persona, event, session = admitted.persona, admitted.event, admitted.session
        turn = Turn(
            "user",
            event.user_name,
            user_text(event),
            self.clock.now(),
            event.user_id,
            document=session.reading is not None,
            images=event.images,
            hearsay=event.from_persona,
        )
        waiting = session.wait(event.message_id, turn)
        admin = event.admin and not event.is_dm
        self._marks[id(waiting)] = Mark(admitted.heard, admitted.quiet, admin, event.anonymous)
        arrival = self.bursts.arrive((persona.key, session.scope)) if burst else None
        try:
            if session.lock.locked() or arrival is not None:
                await save(self.sessions, session)  # it waits: kept meanwhile, for a crash
            if not await self.bursts.settle(arrival):
                return None  # a newer message of its burst answers for it
            await session.lock.acquire()
        except BaseException:
            self._marks.pop(id(waiting), None)  # (the message itself stays, said)
            raise
        try:
            for waited in list(session.waiting):  # another process's turn took it meanwhile
                if session.answered(waited[0]):
                    session.taken(waited)
                    self._marks.pop(id(waited), None)
            taken = tuple(session.waiting)
            if not any(w is waiting for w in taken):  # an earlier turn took it
                session.lock.release()
                return None
            marks = {id(w): m for w in taken if (m := self._marks.pop(id(w), None)) is not None}
        except BaseException:
            session.lock.release()
            raise
        return Settled(persona, event, session, taken, marks)

    async def join(self, settled: Settled, taken: Sequence[Waited] | None = None) -> None:
        """The messages taken from the waiting (by default all the turn took) join the
        conversation, in the order they came (an idle conversation is closed first, so they
        start the next)."""
        persona, session = settled.persona, settled.session
        taken = settled.taken if taken is None else taken
        now = self.clock.now()
        if session.idle_since(now, idle_after(persona, session.scope)):
            try:
                await self.sessions.close(session, "idle")
            except Exception:  # the scheduler closes it later; the message must go on
                log.exception("could not archive an idle conversation of %s", persona.key)
        if not session.is_open and taken:
            session.recap = await self.sessions.recap(session, now)
        for waited in taken:  # each stops waiting as it joins, with no await between
            session.taken(waited)
            session.add(waited[1])
            session.note_answered(waited[0])

    async def take_in(self, settled: Settled) -> Reply | None:
        """The messages join the conversation before the persona answers; a reply when no
        model is needed: the open document closed by the last message, or only an emoji for
        messages that only acknowledge. None: the model answers (the session saved first, so
        nothing is lost if the process dies while it thinks)."""
        persona, session, event = settled.persona, settled.session, settled.event
        taken = settled.taken
        closing = taken[-1][1]
        if session.reading is not None and closes_document(closing.text):
            await self.join(settled, taken[:-1])
            session.taken(taken[-1])  # the closing message joins with the persona's answer
            session.note_answered(taken[-1][0])
            return self.documents.close(persona, session, event, closing.text, self.clock.now())
        last = session.turns[-1] if session.turns else None
        # A picture or a request for quiet is more than an acknowledgement.
        plain = (
            session.reading is None and not settled.quieted and not any(t.images for _, t in taken)
        )
        words = [t.text for _, t in taken]
        where = self.platforms[event.platform]
        emoji = reaction(persona, last, words, platform=where) if plain else ""
        await self.join(settled)
        if emoji and last is not None:  # only acknowledged: an emoji says it, no model call
            return Reply(text="", emotion=persona.emotion(last.emotion), reaction=emoji)
        await save(self.sessions, session)
        return None

    async def greeting(self, persona: Persona, session: Session, event: ChatEvent) -> str:
        """Open a private conversation the way a character card does: the greeting
        (`card.first_message`) added as the persona's first turn, when this is the user's very
        first conversation with it (none open, none archived); "" when there is none to give
        (under the session's lock)."""
        greeting = persona.card.first_message.strip()
        if not greeting or not event.is_dm or session.is_open:
            return ""
        archived, _ = await self.sessions.archived(session)
        if archived:
            return ""
        name = event.user_name or persona.user.name
        text = cards.resolve_placeholders(greeting, persona.identity.name, name)
        now = self.clock.now()
        session.add(
            Turn("assistant", persona.identity.name, text, now, emotion=persona.emotions.neutral)
        )
        return text


def user_text(event: ChatEvent) -> str:
    """The message as its turn keeps it."""
    text = event.text.strip()
    if len(text) > MAX_MESSAGE_CHARS:
        # Short-term memory holds conversation, not documents: keep the start, say so.
        text = (
            text[:MAX_MESSAGE_CHARS] + f" […cut: {len(text) - MAX_MESSAGE_CHARS} more characters]"
        )
    if event.reply_to:
        text = f'(replying to "{event.reply_to.strip()[:200]}") {text}'
    for attachment in event.attachments:
        text += f" [attachment: {attachment.filename}]"
    return text.strip()
