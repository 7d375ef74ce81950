"""State slots: what a persona keeps up to date about a conversation (a dungeon master's
inventory, a quest), revised by the tools tier after a reply or set by the user."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

from bot.chat_model import ModelError, ToolCall
from bot.conversation.sessions import Session
from bot.llm.router import ModelRouter
from bot.llm.tokens import estimate_tokens, pieces
from bot.persona.file import Persona, StateSlot
from bot.prompts import STATE_TOOL, build_state_prompt, state_tool

__all__ = ["VALUE_LIMIT", "StateSlots", "fit", "parse_state_call"]

log = logging.getLogger(__name__)

VALUE_LIMIT = 2000  # characters per slot: state stays a note, not a transcript


class StateSlots:
    def __init__(self, models: ModelRouter) -> None:
        self.models = models

    @staticmethod
    def due(persona: Persona, session: Session) -> list[StateSlot]:
        """`every_turn` slots, and `once` slots not gathered yet (then they stay as they are
        unless the user changes them with `state set`)."""
        return [slot for slot in persona.state if not slot.settled(session.state)]

    async def update(self, persona: Persona, session: Session, due: list[StateSlot]) -> None:
        """Ask the tools tier to revise the due slots through the `update_state` tool (the
        whole new value of each slot it changes) or to decline; declining rewrites nothing.
        The caller holds the session's lock."""
        try:
            messages = build_state_prompt(persona, due, session.state, session.turns[-2:])
            completion = await self.models.complete(
                "tools", messages, tools=[state_tool(due)], purpose="state"
            )
        except ModelError as e:
            log.warning(
                "state update failed for %s (%s); the state stays as it was", persona.key, e
            )
            return
        changed = parse_state_call(completion.tool_calls, due)
        bounds = {slot.name: slot.tokens for slot in due}
        for name, value in changed.items():
            self.set(session, name, fit(value, bounds[name]))

    @staticmethod
    def set(session: Session, name: str, value: str) -> str:
        """Set one slot (the caller holds the session's lock); returns the value kept."""
        session.state[name] = value.strip()[:VALUE_LIMIT]
        session.touch()
        return session.state[name]


def fit(value: str, tokens: int) -> str:
    """`value` within about `tokens` (0: as it is), each line keeping its start: the longest
    lines are cut first, to one length, so a note kept in fixed lines keeps every line."""
    lines = value.strip().splitlines()
    sizes = [estimate_tokens(line) for line in lines]
    if not tokens or sum(sizes) <= tokens:
        return value
    # The longest a line may stay: the largest length at which the lines fit.
    low, high = 0, max(sizes)
    while low < high:
        middle = (low + high + 1) // 2
        if sum(min(size, middle) for size in sizes) <= tokens:
            low = middle
        else:
            high = middle - 1
    return "\n".join(
        line if size <= low else _cut(line, low) for line, size in zip(lines, sizes, strict=True)
    )


def _cut(line: str, tokens: int) -> str:
    """The first `tokens` of `line`, ended at a word's end where one is in reach, then "…"."""
    head = "".join(pieces(line)[: max(tokens - 1, 0)])
    space = head.rfind(" ")
    if space > len(head) // 2:
        head = head[:space]
    return head.rstrip(" ,;:") + "…"


def parse_state_call(calls: Sequence[ToolCall], slots: Sequence[StateSlot]) -> dict[str, str]:
    """The slots an update_state call changed, with their new values; {} when the model
    declined (no call) or the call is unreadable. Values identical to none, or empty, are
    not changes."""
    names = {s.name for s in slots}
    changed: dict[str, str] = {}
    for call in calls:
        if call.name != STATE_TOOL:
            continue
        try:
            arguments = json.loads(call.arguments or "{}")
        except ValueError:
            continue
        if not isinstance(arguments, dict):
            continue
        for name, value in arguments.items():
            if name not in names:
                continue
            if isinstance(value, dict | list):
                text = json.dumps(value, ensure_ascii=False)
            elif isinstance(value, str | int | float) and not isinstance(value, bool):
                text = str(value).strip()
            else:
                continue
            if text:
                changed[name] = text
    return changed
