"""Recall: a settled turn in (`Settled`, bot.turn.settle), what comes to mind for it out
(`InMind`): the long-term memories its words bring up (bot.conversation.recollect), with the user's
private ones where they let them into a group; or, while a document is open, its passages
that answer the question. Then what the message's intent asks for now (a search run at once,
translation mode: bot.turn.intent), and the intention due now to bring up, when the turn
answers one person alone who did not ask for quiet."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import KW_ONLY, dataclass, field, replace
from datetime import datetime, tzinfo

from bot.conversation.recollect import Recollection, Recollector, memory_section
from bot.conversation.sessions import scope_key
from bot.media.document_mode import DocumentMode
from bot.persona.file import Persona
from bot.prompts import followup_line, quiet_line, searched_section, translation_section
from bot.turn.calls import ToolCalls, Used
from bot.turn.intent import Decision, decide
from bot.turn.settle import MAX_MESSAGE_CHARS, Settled
from memory.clock import Clock
from memory.records import Intention
from memory.storage import IntentionStore, RoomStore

__all__ = ["InMind", "Recall"]

log = logging.getLogger(__name__)


@dataclass(slots=True)
class InMind:
    """What comes to mind for a turn, for its prompt and its answer."""

    settled: Settled
    now: datetime
    scope: str  # the memory bank's scope of the conversation
    section: str = ""  # the recalled memories, or the open document's passages
    private: str | None = None  # the user's private scope, let into this group's turn
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)  # of the members
    followup: str = ""  # the line of a request for quiet, or of the intention due now
    due: Intention | None = None  # closed done once the reply brings it up
    used: Used = field(default_factory=Used)  # memories shown, search results found


@dataclass(slots=True, eq=False)
class Recall:
    calls: ToolCalls  # its models decide the intent; it runs a search asked for
    documents: DocumentMode
    rooms: RoomStore  # the users' choice to share their private memories
    intentions: IntentionStore  # what the persona means to bring up later
    clock: Clock
    tz: tzinfo
    _: KW_ONLY
    memory: Recollector | None = None
    intent_by_model: bool = False

    async def recall(self, settled: Settled) -> InMind:
        persona, session, event = settled.persona, settled.session, settled.event
        now = self.clock.now()
        sender = settled.sender
        quieted = settled.quieted
        # What the turn is about: everything its messages said.
        text = "\n".join(t.text for _, t in settled.taken)[-MAX_MESSAGE_CHARS:]
        scope = Recollector.scope(persona.key, session.scope)
        mind = InMind(settled, now, scope)
        if quieted:
            mind.followup = quiet_line(quieted, several=not sender.person)
        if session.reading is not None:  # questions about the document: from it, not memory
            mind.section = await self.documents.section(session.reading, text)
            return mind
        wants = await decide(
            text, now, self.tz, models=self.calls.models, by_model=self.intent_by_model
        )
        mind.private = await self._private_scope(persona, settled)
        deep = (wants.intent == "keyword_memory") if wants.by_model else None
        # The asker (their profile, their "my"): the turn's one speaker; none of several.
        asker = event.user_id if len(sender.speakers) == 1 else ""
        # The person's intention due now is looked up beside the recollection.
        due_soon = (
            asyncio.ensure_future(self._due(persona, scope, sender.person))
            if sender.person and not quieted
            else None
        )
        try:
            recollection = await self._recollect(mind, text, asker, deep)
            mind.aliases = recollection.aliases
            if self.memory is not None:
                budget = self.memory.settings.memory_tokens
                mind.section, mind.used.shown = memory_section(
                    recollection, now, budget, user_name=event.user_name
                )
            mind.section = await self._act_on(persona, wants, text, mind)
            due = None if due_soon is None else await due_soon
        finally:
            if due_soon is not None:
                due_soon.cancel()  # (done by now, unless the turn failed)
        if due is not None:
            mind.due = due
            mind.followup = followup_line(due.kind, due.what, due.ask)
        return mind

    async def _private_scope(self, persona: Persona, settled: Settled) -> str | None:
        """The user's private memories with this persona, when they chose to let them into
        their own conversations in groups (never into a channel's shared memory)."""
        event = settled.event
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
        self, mind: InMind, text: str, user_id: str, deep: bool | None
    ) -> Recollection:
        """What comes to mind; a memory that cannot be searched now costs the turn nothing."""
        persona = mind.settled.persona
        if self.memory is None:
            return Recollection()
        try:
            return await self.memory.gather(
                mind.scope,
                text,
                mind.now,
                flashback_rate=persona.memory.flashback_rate,
                user_id=user_id,
                tz=self.tz,
                also=mind.private,
                deep=deep,
                # the conversation's speakers by id, with their names now
                present=mind.settled.session.speakers(),
            )
        except Exception:
            log.exception("recall failed for %s; answering without long-term memory", persona.key)
            return Recollection()

    async def _act_on(self, persona: Persona, wants: Decision, text: str, mind: InMind) -> str:
        """What the message's intent adds to the prompt: a search run now, or translation
        mode."""
        if wants.intent == "web_search":
            run = await self.calls.search_now(persona, wants.query or text)
            if run is not None:
                mind.used.found.extend(run.results)
                return searched_section(mind.section, run.text)
        if wants.intent == "translation":
            return translation_section(mind.section, wants.target_language)
        return mind.section

    async def _due(self, persona: Persona, scope: str, user_id: str) -> Intention | None:
        """The person's intention due now in this scope, to bring up in this reply."""
        try:
            return await self.intentions.due_intention(scope, user_id, self.clock.now())
        except Exception:
            log.exception("could not read the intentions of %s", persona.key)
            return None
