"""Answer: a composed turn in (`Composed`, bot.turn.compose), the persona's reply out (a
`Reply`). The chat tier answers the prompt, with the tools the persona may call answered
round by round (bot.turn.calls) until it replies; its emotion tag is read, what it looked up
cited, the reply kept as the persona's turn, the intention it brought up closed, and the
memories it was shown reinforced. A model that fails, or says nothing, gets the user the
persona's apology instead."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from bot.chat_model import Completion, Message, ModelError
from bot.conversation.recollect import Recollector
from bot.conversation.sessions import Turn
from bot.events import Reply
from bot.media import pictures
from bot.persona.file import Persona
from bot.platforms import Platforms
from bot.prompts import TOO_MANY_CALLS, parse_emotion
from bot.tools import Sender
from bot.tools.builtin import cited_sources
from bot.turn.calls import ToolCalls, Used
from bot.turn.compose import Composed
from memory.clock import Clock
from memory.records import Intention
from memory.storage import IntentionStore

__all__ = ["MAX_TOOL_CALLS", "MAX_TOOL_ROUNDS", "Answering"]

log = logging.getLogger(__name__)

MAX_TOOL_ROUNDS = 3  # rounds of tool calls answered per turn before the model must reply
MAX_TOOL_CALLS = 3  # calls answered in one round; more are told to wait


@dataclass(slots=True, eq=False)
class Answering:
    calls: ToolCalls  # its models answer; it answers their tool calls
    platforms: Platforms
    intentions: IntentionStore
    clock: Clock
    memory: Recollector | None = field(default=None, kw_only=True)

    async def answer(self, composed: Composed) -> Reply:
        mind = composed.mind
        settled = mind.settled
        persona, session, event = settled.persona, settled.session, settled.event
        limit = self.platforms[event.platform].limit
        reading = session.reading
        try:
            messages = list(composed.prompt.messages)
            pictured = pictures.show(messages, [t for _, t in settled.taken])
            completion = await self._complete(
                persona, mind.scope, messages, mind.used, settled.sender
            )
        except ModelError as e:
            log.warning("chat model failed for %s: %s", persona.key, e)
            return _apology(persona, limit)
        tag, text = parse_emotion(pictures.seen(session, pictured, completion.text))
        if not text:  # nothing to say is a failure too: the user gets an answer either way
            log.warning("chat model gave %s an empty reply", persona.key)
            return _apology(persona, limit)
        if mind.due is not None:
            await self._brought_up(persona, mind.due)
        emotion = persona.emotion(tag)
        sources = cited_sources(text, mind.used.found)
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
        await self._reinforce(mind.scope, mind.used.shown, mind.now)
        if mind.private is not None:  # the store keeps each to its scope
            await self._reinforce(mind.private, mind.used.shown, mind.now)
        return Reply.build(text, emotion, limit)

    async def _complete(
        self, persona: Persona, scope: str, messages: list[Message], used: Used, sender: Sender
    ) -> Completion:
        """The chat tier's reply, answering its tool calls (at most MAX_TOOL_ROUNDS rounds,
        then it must reply). The persona's MCP servers start here, the first time they are
        needed."""
        await self.calls.prepare(persona)
        tools = self.calls.offered(persona, sender)
        for round_ in range(MAX_TOOL_ROUNDS + 1):
            offered = tools if round_ < MAX_TOOL_ROUNDS else []
            completion = await self.calls.models.complete("chat", messages, tools=offered)
            if not completion.tool_calls or not offered:
                return completion
            messages.append(Message("assistant", completion.text, tool_calls=completion.tool_calls))
            for number, call in enumerate(completion.tool_calls):
                if number < MAX_TOOL_CALLS:
                    result = await self.calls.run(persona, scope, call, used, sender)
                else:
                    result = TOO_MANY_CALLS.format(count=MAX_TOOL_CALLS)
                messages.append(Message("tool", result, tool_call_id=call.id))
        raise AssertionError("unreachable: the last round offers no tools")

    async def _brought_up(self, persona: Persona, intention: Intention) -> None:
        """Closed done once the reply that brings it up is written, before the sender is
        answered: bot.outreach, which waits while a message is unanswered, never writes it too."""
        try:
            await self.intentions.close_intention(
                intention.scope, intention.id, "done", self.clock.now()
            )
        except Exception:  # still pending: it may be brought up once more, never lost
            log.exception("could not close an intention of %s", persona.key)

    async def _reinforce(self, scope: str, ids: list[int], now: datetime) -> None:
        if self.memory is None or not ids:
            return
        try:
            await self.memory.reinforce(scope, ids, now)
        except Exception:
            log.exception("could not reinforce recalled memories")


def _apology(persona: Persona, limit: int) -> Reply:
    return Reply.build(persona.apology(), persona.emotion("SAD"), limit, failed=True)
