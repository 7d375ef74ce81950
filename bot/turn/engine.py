"""The engine: a `ChatEvent` in, a `Reply` out, one session's turns in order."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import shutil
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from bot.catalogue import say
from bot.conversation.sessions import (
    Session,
    SessionManager,
    Turn,
    is_private,
    scope_key,
)
from bot.conversation.slots import StateSlots
from bot.events import ChatEvent, Reply, split_chunks
from bot.groups.floor import Floor, Heard
from bot.groups.relay import Relay, is_persona_speaker
from bot.groups.welcome import Welcomes
from bot.llm.base import Completion, Message, ModelError, Tool
from bot.llm.router import ModelRouter
from bot.llm.tokens import IMAGE_TOKENS, MESSAGE_OVERHEAD, estimate_tokens
from bot.media import pictures
from bot.media.document_mode import DocumentMode, closes_document
from bot.media.hearing import Hearing
from bot.media.speech import Speech
from bot.persona import cards
from bot.persona.file import Persona, StateSlot
from bot.platforms import Platforms
from bot.prompts import (
    MEMORY_SILENT,
    NO_SUCH_TOOL,
    RECALL_TOOL,
    SEARCH_TOOL,
    TOO_MANY_CALLS,
    TRANSLATE_TOOL,
    build_summary_prompt,
    followup_line,
    quiet_line,
    searched_section,
    translation_section,
)
from bot.runtime.config import EngineConfig
from bot.tools import Sender, Toolbox
from bot.tools.builtin import SearchBackend, SearchResult, cited_sources, run_search, run_translate
from bot.turn.access import Gate, Verdict
from bot.turn.bursts import Bursts, Sleep
from bot.turn.context import build_chat_prompt, parse_emotion
from bot.turn.intent import Decision, decide
from bot.turn.reach import asks_for_quiet, due_now
from bot.turn.reactions import reaction
from bot.turn.recollect import Recollection, Recollector, memory_section
from memory.clock import Clock
from memory.records import Intention
from memory.storage import ContactStore, IntentionStore, RoomStore

__all__ = ["Engine"]

log = logging.getLogger(__name__)

MAX_MESSAGE_CHARS = 16_000  # of one message kept in short-term memory (more than any platform's)
MAX_TOOL_ROUNDS = 3  # rounds of tool calls answered per turn before the model must reply
MAX_TOOL_CALLS = 3  # calls answered in one round; more are told to wait
KEEP_ROUNDS = 3  # exchanges kept word for word when older turns are folded into the summary
SUMMARY_CHARS = 6_000  # of the running summary


@dataclass(slots=True, frozen=True)
class _Said:
    """What the engine knows of a message waiting in a session beside its turn, kept until a
    turn takes it: what the turn does for its sender acts on it (bot.tools.Sender)."""

    heard: Heard  # how the floor heard it
    quiet: bool  # said to the persona, it asks not to be written to first
    admin: bool  # its sender is an admin of the chat (never in a private chat)
    anonymous: bool  # its sender is no one in particular (`ChatEvent.anonymous`)


class Engine:
    def __init__(
        self,
        *,
        personas: Mapping[str, Persona],
        platforms: Platforms,
        models: ModelRouter,
        sessions: SessionManager,
        rooms: RoomStore,
        contacts: ContactStore,
        intentions: IntentionStore,
        clock: Clock,
        settings: EngineConfig,
        memory: Recollector | None = None,
        gate: Gate | None = None,
        search: SearchBackend | None = None,
        toolbox: Toolbox | None = None,
        rng: random.Random | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        """`rng` draws whether a persona joins a group's conversation uninvited (bot.groups.floor);
        `sleep` waits out a burst (bot.turn.bursts), both injected so tests decide."""
        self.personas = personas
        self.platforms = platforms  # what each platform of an event allows (bot.platforms)
        self.models = models
        self.sessions = sessions
        self.rooms = rooms  # channel bindings and DM sharing
        self.contacts = contacts  # who was heard and answered, for writing first (bot.turn.reach)
        self.intentions = intentions  # what the persona means to bring up later
        self.clock = clock
        self.settings = settings
        self.memory = memory
        self.gate = gate
        self.search = search
        self.toolbox = toolbox  # the personas' Python and MCP tools (bot/tools)
        self.tz = settings.tz()
        self.documents = DocumentMode(
            personas=personas,
            platforms=platforms,
            models=models,
            sessions=sessions,
            clock=clock,
            settings=settings,
        )
        self.pictures = pictures.Pictures(models, clock, settings)  # (one count per user)
        self.hearing = Hearing(  # (counted with them)
            models, self.pictures.count, self.pictures.refund, settings
        )
        self.speech = Speech(
            models, contacts, platforms, self.pictures.count, shutil.which("ffmpeg")
        )
        self.slots = StateSlots(models)
        self.floor = Floor(clock, rng or random.Random(), models=models, rooms=rooms)
        # Personas sharing a room hear one another through it (every bot of the process).
        self.relay = Relay(clock)
        self.welcomes = Welcomes(clock, models)  # new members greeted (`group.greet`)
        self.bursts = Bursts(
            clock,
            window=settings.burst_seconds,
            longest=settings.burst_longest_seconds,
            sleep=sleep,
        )
        # What is known of each message waiting in a session, by the id of its `wait` entry
        # (in the session until a turn takes it).
        self._said: dict[int, _Said] = {}
        self._background: set[asyncio.Task[None]] = set()

    def persona(self, event: ChatEvent) -> Persona:
        return self.personas[event.persona]

    def admit(self, event: ChatEvent) -> Verdict:
        """What the access gate says to this message or command (counted against the rate
        limit): "admit", "blocked", "slow_down" (say `slow_down` once) or "quiet"."""
        return "admit" if self.gate is None else self.gate.admit(event, self.clock.now())

    def slow_down(self, event: ChatEvent) -> str:
        """The persona asking a user who writes too fast to wait a minute."""
        language = self.persona(event).identity.language
        return say(language, "slow_down")

    def refusal(self, event: ChatEvent) -> Reply | None:
        """What the access gate says instead of an answer when it does not admit the event:
        "slow down" once, then silence (blocked, or told already). None: admitted."""
        verdict = self.admit(event)
        if verdict == "admit":
            return None
        neutral = self.persona(event).emotions.neutral
        if verdict == "slow_down":
            limit = self.platforms[event.platform].limit
            return Reply.build(self.slow_down(event), neutral, limit)
        return Reply(text="", emotion=neutral)

    def idle_time(self, persona_key: str, room: str) -> timedelta:
        """How long a conversation in `room` stays quiet before it closes: a private one the
        persona's memory.idle_minutes, a group's at least its group.idle_minutes."""
        persona = self.personas.get(persona_key)
        if persona is None:
            return timedelta(minutes=5.0)
        minutes = persona.memory.idle_minutes
        if not is_private(room):
            minutes = max(minutes, persona.group.idle_minutes)
        return timedelta(minutes=minutes)

    async def session(self, event: ChatEvent) -> Session:
        return await self.sessions.of(self.persona(event), event)

    async def handle(
        self,
        event: ChatEvent,
        *,
        settle: bool = False,
        typing: Callable[[], AbstractAsyncContextManager[object]] | None = None,
    ) -> Reply:
        """Answer one message, or keep it without answering: in a group, bot.groups.floor decides
        whether the persona speaks; what it does not answer still joins the conversation, to
        be remembered (a bot's message is neither). The message joins the session's waiting
        messages as it comes, saved when it must wait (a crash loses nothing said); the turn
        that takes the session's lock takes every message waiting in it, so messages that came
        together are answered once, together. `settle`: first wait for the rest of the
        message's burst (bot.turn.bursts): only its newest message's turn answers. An empty reply:
        nothing to say (not answered, answered by another message's turn, or answered
        already: `event.message_id` delivered again after a crash).

        `typing` is shown while the persona is really answering. The session is saved again
        before the reply is returned, so a crash loses nothing the user saw. State slots are
        updated after the reply is returned, still under the session's lock, so the user does
        not wait for that second call but the next turn sees the updated state."""
        persona = self.persona(event)
        limit = self.platforms[event.platform].limit
        silent = Reply(text="", emotion=persona.emotions.neutral)
        if event.is_empty:  # nothing said: nothing to answer, no model call
            return silent
        heard = self.floor.hear(persona, event)
        if heard is None:
            return silent
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
        quieted = (
            heard.call is not None
            and not event.from_persona
            and not event.anonymous
            and asks_for_quiet(event.text)
        )
        if heard.call is not None and not event.from_persona:
            await self._heard_from(persona, event, quieted)
        session = await self.session(event)
        if session.answered(event.message_id):  # delivered again after a crash
            log.info("%s: message %s was answered already", persona.key, event.message_id)
            return silent
        turn = Turn(
            "user",
            event.user_name,
            _user_text(event),
            self.clock.now(),
            event.user_id,
            document=session.reading is not None,
            images=event.images,
            hearsay=event.from_persona,
        )
        waiting = session.wait(event.message_id, turn)
        admin = event.admin and not event.is_dm
        self._said[id(waiting)] = _Said(heard, quieted, admin, event.anonymous)
        arrival = self.bursts.arrive((persona.key, session.scope)) if settle else None
        try:
            if session.lock.locked() or arrival is not None:
                await self._save(session)  # it waits: kept meanwhile, in case of a crash
            if not await self.bursts.settle(arrival):
                return silent  # a newer message of its burst answers for it
            await session.lock.acquire()
        except BaseException:
            self._said.pop(id(waiting), None)  # (the message itself stays, said)
            raise
        handed_off = False
        try:
            for waited in list(session.waiting):  # another process's turn took it meanwhile
                if session.answered(waited[0]):
                    session.taken(waited)
                    self._said.pop(id(waited), None)
            taken = list(session.waiting)
            if not any(w is waiting for w in taken):  # an earlier turn took it
                return silent
            said = {id(w): s for w in taken if (s := self._said.pop(id(w), None)) is not None}
            verdict = await self.floor.decide(persona, event, [s.heard for s in said.values()])
            if not verdict.speak:
                await self._join(persona, session, taken, self.clock.now())
                await self._save(session)
                log.debug("%s keeps quiet in %s: %s", persona.key, event.platform, verdict.why)
                return silent
            greeting = await self._greet(persona, session, event)
            async with typing() if typing is not None else contextlib.nullcontext():
                reply = await self._answer(persona, session, event, limit, taken, said)
            if greeting:  # a first private message: the card's greeting opened the chat
                text = f"{greeting}\n\n{reply.text}" if reply.text else greeting
                reply = replace(reply, text=text, chunks=split_chunks(text, limit))
            reply = replace(reply, people=_people(taken, said))
            first = min(w[1].at for w in taken)
            if event.message_id and self.floor.others_since(
                persona, event, first, {w[1].user_id for w in taken}
            ):
                reply = replace(reply, answers=event.message_id)
            if not reply.failed:
                self.floor.spoke(persona, event)
            session.note_answered(event.message_id)  # (closing a document notes it here)
            # Saved before the user sees the reply: a crash after it loses nothing they saw.
            await self._save(session)
            if not reply.failed:
                await self._answered(persona, event, taken, said)
            # (a reaction is no reply: nothing new for the state slots to read)
            due = [] if reply.failed or reply.reaction else self.slots.due(persona, session)
            fold = not reply.failed and self._fold_at(session) > 0
            if due or fold:
                task = asyncio.create_task(self._after_reply(persona, session, due, fold))
                self._background.add(task)
                task.add_done_callback(self._background.discard)
                handed_off = True  # the task releases the lock when it is done
        finally:
            if not handed_off:
                session.lock.release()
        return reply

    async def greet(self, event: ChatEvent) -> Reply | None:
        """Open a private conversation the way a character card does: the persona's greeting
        (`card.first_message`), as its first turn, when this is the user's very first
        conversation with it (none open, none archived). For a page or a console that shows
        the persona before the user writes; a first private message on a chat platform gets
        it before its answer (`handle`). None: no greeting to show."""
        persona = self.persona(event)
        session = await self.session(event)
        async with session.lock:
            text = await self._greet(persona, session, event)
            if not text:
                return None
            await self._save(session)
        return Reply.build(text, persona.emotions.neutral, self.platforms[event.platform].limit)

    async def _greet(self, persona: Persona, session: Session, event: ChatEvent) -> str:
        """The greeting added to the session as the persona's first turn, or "" when there
        is none to give (under the session's lock)."""
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

    async def _heard_from(self, persona: Persona, event: ChatEvent, quieted: bool) -> None:
        """The sender's contact: heard now (privately, in a private chat), quiet if asked. An
        anonymous sender is no one to write to."""
        if event.anonymous:
            return
        now = self.clock.now()
        try:
            await self.contacts.heard(
                persona.key, event.platform, event.user_id, now, private=event.is_dm
            )
            if quieted:
                await self.contacts.set_contact(
                    persona.key, event.platform, event.user_id, quiet=True, at=now
                )
                log.info("%s: a user asked for quiet on %s", persona.key, event.platform)
        except Exception:  # the turn goes on; the next message notes them again
            log.exception("could not note a contact of %s", persona.key)

    async def _answered(
        self,
        persona: Persona,
        event: ChatEvent,
        taken: Sequence[tuple[str, Turn]],
        said: Mapping[int, _Said],
    ) -> None:
        """Everyone whose message the reply answers was answered now (an anonymous sender is
        no one to write to)."""
        users = {t.user_id for _, t in taken if t.user_id and not is_persona_speaker(t.user_id)}
        users -= {w[1].user_id for w in taken if (s := said.get(id(w))) and s.anonymous}
        if event.anonymous:
            users.discard(event.user_id)
        now = self.clock.now()
        for user_id in sorted(users):
            try:
                await self.contacts.answered(persona.key, event.platform, user_id, now)
            except Exception:  # outreach waits while they seem unanswered: never too eager
                log.exception("could not note an answer of %s", persona.key)

    async def _due(self, persona: Persona, scope: str, user_id: str) -> Intention | None:
        """The person's intention due now in this scope, to bring up in this reply."""
        try:
            pending = await self.intentions.intentions(scope, user_id)
        except Exception:
            log.exception("could not read the intentions of %s", persona.key)
            return None
        return due_now(pending, self.clock.now())

    async def _brought_up(self, persona: Persona, intention: Intention) -> None:
        """Closed done once the reply that brings it up is written, before the sender is
        answered: bot.outreach, which waits while a message is unanswered, never writes it too."""
        try:
            await self.intentions.close_intention(
                intention.scope, intention.id, "done", self.clock.now()
            )
        except Exception:  # still pending: it may be brought up once more, never lost
            log.exception("could not close an intention of %s", persona.key)

    async def _save(self, session: Session) -> None:
        try:
            await self.sessions.save(session)
        except Exception:  # the scheduler's snapshot tries again; the turn goes on
            log.exception("could not save the conversation of %s", session.persona)

    async def _join(
        self,
        persona: Persona,
        session: Session,
        taken: Sequence[tuple[str, Turn]],
        now: datetime,
    ) -> None:
        """The messages taken from the waiting join the conversation, in the order they came
        (an idle conversation is closed first, so they start the next)."""
        if session.idle_since(now, self.idle_time(persona.key, session.scope)):
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

    async def _answer(
        self,
        persona: Persona,
        session: Session,
        event: ChatEvent,
        limit: int,
        taken: Sequence[tuple[str, Turn]],
        said: Mapping[int, _Said],
    ) -> Reply:
        """The reply to the messages `taken` from the waiting (`event`'s among them; `said`:
        what is known of them). What it does for someone acts for whoever's words asked for
        it: a request for quiet among them is acknowledged; a turn answering one person alone
        brings up that person's intention due now (unless they asked for quiet) and may use
        the tools that act for them (`_sender`); a turn of several people neither."""
        now = self.clock.now()
        sender = _sender(taken, said)
        quieted = [w[1].speaker for w in taken if (s := said.get(id(w))) and s.quiet]
        reading = session.reading
        closing = taken[-1][1]
        if reading is not None and closes_document(closing.text):
            await self._join(persona, session, taken[:-1], now)
            session.taken(taken[-1])  # the closing message joins with the persona's answer
            session.note_answered(taken[-1][0])
            return self.documents.close(persona, session, event, closing.text, now)
        last = session.turns[-1] if session.turns else None
        # A picture or a request for quiet is more than an acknowledgement.
        plain = reading is None and not quieted and not any(t.images for _, t in taken)
        words = [t.text for _, t in taken]
        where = self.platforms[event.platform]
        emoji = reaction(persona, last, words, platform=where) if plain else ""
        await self._join(persona, session, taken, now)
        if emoji and last is not None:  # only acknowledged: an emoji says it, no model call
            return Reply(text="", emotion=persona.emotion(last.emotion), reaction=emoji)
        # What the turn is about: everything its messages said.
        text = "\n".join(t.text for _, t in taken)[-MAX_MESSAGE_CHARS:]
        await self._save(session)  # kept, even if the process dies while the model thinks
        scope = self.memory_scope(persona, session)
        section, shown, private = "", list[int](), None
        aliases: dict[str, tuple[str, ...]] = {}  # of the members (bot.turn.recollect)
        found: list[SearchResult] = []
        followup = quiet_line(quieted, several=not sender.person) if quieted else ""
        due: Intention | None = None
        if reading is not None:  # questions about the document: answered from it, not memory
            section = await self.documents.section(reading, text)
        else:
            wants = await decide(
                text, now, self.tz, models=self.models, by_model=self.settings.intent == "model"
            )
            private = await self._private_scope(persona, event)
            deep = (wants.intent == "keyword_memory") if wants.by_model else None
            # The asker (their profile, their "my"): the turn's one speaker; none of several.
            asker = event.user_id if len(sender.speakers) == 1 else ""
            recollection = await self._recollect(
                persona,
                scope,
                text,
                now,
                asker,
                private,
                deep=deep,
                present=session.speakers(),
            )
            aliases = recollection.aliases
            if self.memory is not None:
                budget = self.memory.settings.memory_tokens
                section, shown = memory_section(
                    recollection, now, budget, user_name=event.user_name
                )
            section = await self._act_on(persona, wants, text, section, found)
            if (
                sender.person
                and not quieted
                and (due := await self._due(persona, scope, sender.person)) is not None
            ):
                followup = followup_line(due.kind, due.what, due.ask)
        prompt = build_chat_prompt(
            persona,
            session.turns,
            session.state,
            user_name=event.user_name,
            group=not event.is_dm and persona.memory.scope == "channel",
            now=now,
            # (pictures shown to a chat model that sees take their share)
            budget=self.settings.context_tokens
            - self.settings.reply_tokens
            - IMAGE_TOKENS * sum(len(t.images) for _, t in taken),
            memories=section if reading is None else "",
            passages=section if reading is not None else "",
            summary=session.summary,
            recap=session.recap,
            aliases=aliases,
            followup=followup,
        )
        # Shown before it in the prompts after; never a note of private memories, which the
        # user may make private again from any process (`_private_scope`).
        session.turns[-1].note = prompt.note if private is None else ""
        try:
            messages = list(prompt.messages)
            pictured = pictures.show(messages, [t for _, t in taken])
            completion = await self._complete(persona, scope, messages, shown, found, sender)
        except ModelError as e:
            log.warning("chat model failed for %s: %s", persona.key, e)
            return _apology(persona, limit)
        tag, text = parse_emotion(pictures.seen(session, pictured, completion.text))
        if not text:  # nothing to say is a failure too: the user gets an answer either way
            log.warning("chat model gave %s an empty reply", persona.key)
            return _apology(persona, limit)
        if due is not None:
            await self._brought_up(persona, due)
        emotion = persona.emotion(tag)
        sources = cited_sources(text, found)
        if sources:  # what was looked up is cited, in the reply as it is kept
            text = f"{text}\n\n{sources}"
        session.add(
            Turn(
                "assistant",
                persona.identity.name,
                text,
                self.clock.now(),
                emotion=emotion,
                document=bool(reading),
                hearsay=session.hearsay,  # (another persona's words in view: see Turn)
            )
        )
        await self._reinforce(scope, shown, now)
        if private is not None:
            await self._reinforce(private, shown, now)  # the store keeps each to its scope
        return Reply.build(text, emotion, limit)

    async def _act_on(
        self,
        persona: Persona,
        wants: Decision,
        text: str,
        section: str,
        found: list[SearchResult],
    ) -> str:
        """What the message's intent adds to the prompt: a search run now (one model round
        cheaper than the model asking for it), or translation mode."""
        if wants.intent == "web_search" and SEARCH_TOOL in self.tools(persona):
            run = await run_search(self.search, json.dumps({"query": wants.query or text}))
            found.extend(run.results)
            log.info("search for %s (asked for): %s", persona.key, run.cost)
            return searched_section(section, run.text)
        if wants.intent == "translation":
            return translation_section(section, wants.target_language)
        return section

    def memory_scope(self, persona: Persona, session: Session) -> str:
        return Recollector.scope(persona.key, session.scope)

    async def _private_scope(self, persona: Persona, event: ChatEvent) -> str | None:
        """The user's private memories with this persona, when they chose to let them into
        their own conversations in groups (never into a channel's shared memory)."""
        if event.is_dm or event.anonymous or persona.memory.scope != "user" or self.memory is None:
            return None  # (an anonymous sender has no private chat: it is no one in particular)
        user = f"{event.platform}:{event.user_id}"
        try:
            shared = await self.rooms.dm_sharing(persona.key, user)
        except Exception:
            log.exception("could not read %s's sharing choice", user)
            return None
        dm = replace(event, is_dm=True, chat_id="")
        return Recollector.scope(persona.key, scope_key("user", dm)) if shared else None

    async def _recollect(
        self,
        persona: Persona,
        scope: str,
        text: str,
        now: datetime,
        user_id: str,
        also: str | None = None,
        *,
        deep: bool | None = None,
        present: Mapping[str, str] | None = None,
    ) -> Recollection:
        """What comes to mind; a memory that cannot be searched now costs the turn nothing.
        `present`: the conversation's speakers by id, with their names now."""
        if self.memory is None:
            return Recollection()
        try:
            return await self.memory.gather(
                scope,
                text,
                now,
                flashback_rate=persona.memory.flashback_rate,
                user_id=user_id,
                tz=self.tz,
                also=also,
                deep=deep,
                present=present,
            )
        except Exception:
            log.exception("recall failed for %s; answering without long-term memory", persona.key)
            return Recollection()

    async def _reinforce(self, scope: str, ids: list[int], now: datetime) -> None:
        if self.memory is None or not ids:
            return
        try:
            await self.memory.bank.reinforce(scope, ids, now)
        except Exception:
            log.exception("could not reinforce recalled memories")

    def tools(self, persona: Persona, sender: Sender | None = None) -> list[Tool]:
        """The tools the persona may call now: declared, allowed (eco mode takes the paid
        ones away) and available here; then its Python and MCP tools this sender may use."""
        available = {
            "recall_memory": RECALL_TOOL if self.memory is not None else None,
            "web_search": SEARCH_TOOL if self.search is not None else None,
            "translate": TRANSLATE_TOOL,
        }
        allowed = self.models.tools_allowed(persona.tools)
        tools = [tool for name in allowed if (tool := available.get(name)) is not None]
        if self.toolbox is not None:
            tools += self.toolbox.tools(persona, sender or Sender(()))
        return tools

    async def _complete(
        self,
        persona: Persona,
        scope: str,
        messages: list[Message],
        shown: list[int],
        found: list[SearchResult],
        sender: Sender | None = None,
    ) -> Completion:
        """The chat tier's reply, answering its tool calls (at most MAX_TOOL_ROUNDS rounds,
        then it must reply). Memories recall_memory shows join `shown`, search results
        `found`. The persona's MCP servers start here, the first time they are needed."""
        sender = sender or Sender(())
        if self.toolbox is not None:
            await self.toolbox.prepare(persona)
        tools = self.tools(persona, sender)
        for round_ in range(MAX_TOOL_ROUNDS + 1):
            offered = tools if round_ < MAX_TOOL_ROUNDS else []
            completion = await self.models.complete("chat", messages, tools=offered)
            if not completion.tool_calls or not offered:
                return completion
            messages.append(Message("assistant", completion.text, tool_calls=completion.tool_calls))
            for number, call in enumerate(completion.tool_calls):
                if number < MAX_TOOL_CALLS:
                    result = await self._run_tool(
                        persona, scope, call.name, call.arguments, shown, found, sender
                    )
                else:
                    result = TOO_MANY_CALLS.format(count=MAX_TOOL_CALLS)
                messages.append(Message("tool", result, tool_call_id=call.id))
        raise AssertionError("unreachable: the last round offers no tools")

    async def _run_tool(
        self,
        persona: Persona,
        scope: str,
        name: str,
        arguments: str,
        shown: list[int],
        found: list[SearchResult],
        sender: Sender | None = None,
    ) -> str:
        if name in ("web_search", "translate") and name in persona.tools:
            if name == "web_search":
                run = await run_search(self.search, arguments, start=len(found) + 1)
            else:
                run = await run_translate(self.models, arguments)
            found.extend(run.results)
            log.info("tool %s for %s: %s", name, persona.key, run.cost)
            return run.text
        if name == "recall_memory" and self.memory is not None:
            try:
                result, ids = await self.memory.tool(scope, arguments, self.clock.now())
            except Exception:
                log.exception("recall_memory failed for %s", persona.key)
                return MEMORY_SILENT
            shown.extend(i for i in ids if i not in shown)
            return result
        if self.toolbox is not None:
            outcome = await self.toolbox.run(persona, scope, sender or Sender(()), name, arguments)
            if outcome is not None:
                return outcome.text
        return NO_SUCH_TOOL.format(name=name)

    def _fold_at(self, session: Session) -> int:
        """How many of the oldest turns to fold into the running summary: none while the
        turns fit in short_term_tokens; else all but the last KEEP_ROUNDS exchanges."""
        tokens = sum(estimate_tokens(t.text) + MESSAGE_OVERHEAD for t in session.turns)
        if tokens <= self.settings.fold_tokens:
            return 0
        users = [i for i, t in enumerate(session.turns) if t.role == "user"]
        return users[-KEEP_ROUNDS] if len(users) >= KEEP_ROUNDS else 0

    async def _after_reply(
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
        count = self._fold_at(session)
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


def _sender(taken: Sequence[tuple[str, Turn]], said: Mapping[int, _Said]) -> Sender:
    """Whom a turn's tool calls act for: everyone whose message it answers, since the model
    cannot be trusted to say whose words asked for a call (words can claim to be anyone's).
    An admin only when each of them is; one person, for the tools that act for a person, only
    when every message is that person's, known here as someone in particular (not another
    persona, not an anonymous admin, not a message this process did not take in)."""
    speakers = tuple(dict.fromkeys(t.user_id for _, t in taken))
    marks = [said.get(id(w)) for w in taken]
    known = [m for m in marks if m is not None]
    admin = len(known) == len(marks) > 0 and all(m.admin for m in known)
    one = (
        len(speakers) == 1
        and len(known) == len(marks)
        and not any(m.anonymous for m in known)
        and not is_persona_speaker(speakers[0])
    )
    return Sender(speakers, admin, speakers[0] if one else "")


def _people(taken: Sequence[tuple[str, Turn]], said: Mapping[int, _Said]) -> tuple[str, ...]:
    """The people a turn answers: its speakers but other personas and anonymous senders."""
    anonymous = {w[1].user_id for w in taken if (s := said.get(id(w))) and s.anonymous}
    return tuple(
        user
        for user in dict.fromkeys(t.user_id for _, t in taken)
        if user and user not in anonymous and not is_persona_speaker(user)
    )


def _apology(persona: Persona, limit: int) -> Reply:
    return Reply.build(persona.apology(), persona.emotion("SAD"), limit, failed=True)


def _user_text(event: ChatEvent) -> str:
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
