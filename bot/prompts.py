"""Prompt assembly within a token budget, and the emotion tag a reply begins with."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from bot.llm.base import Message
from bot.llm.tokens import MESSAGE_OVERHEAD, estimate_messages, estimate_tokens
from bot.persona import Persona, StateSlot
from bot.sessions import Turn

__all__ = [
    "EMOTION_INSTRUCTION",
    "LANGUAGES",
    "Prompt",
    "build_chat_prompt",
    "build_state_prompt",
    "parse_emotion",
    "parse_emotion_instruction",
]

LANGUAGES = {"en": "English", "zh": "Chinese", "ja": "Japanese", "ko": "Korean"}

EMOTION_INSTRUCTION = "Begin every reply with exactly one emotion tag from this list:"
_TAG = re.compile(r"^\s*\**\s*\[([A-Za-z][A-Za-z0-9_]{1,23})\]\s*\**\s*")


@dataclass(slots=True, frozen=True)
class Prompt:
    messages: tuple[Message, ...]
    tokens: int  # estimated
    turns_dropped: int  # oldest turns left out to stay within the budget


def _system_text(persona: Persona, user_name: str, group: bool, now: datetime) -> str:
    ident, user = persona.identity, persona.user
    lines = [f"You are {ident.name}" + (f" ({ident.nickname})." if ident.nickname else ".")]
    lines.append(f"Personality: {ident.personality.strip()}")
    if ident.language_style:
        lines.append(f"How you speak: {ident.language_style.strip()}")
    language = LANGUAGES.get(ident.language, ident.language)
    lines.append(f"Always reply in {language}, in character, as a person in a chat would.")
    if ident.brief:
        lines.append(f"About you: {ident.brief.strip()}")
    if ident.notices:
        lines.append("Keep in mind:")
        lines.extend(f"- {n.strip()}" for n in ident.notices)
    if ident.example_memory:
        lines.append(f"This is how you remember things: {ident.example_memory.strip()}")
    if group:
        lines.append("You are in a group chat; each message starts with the speaker's name.")
    else:
        who = user_name or user.name
        lines.append(f"You are talking with {who}. You usually call them {user.name}.")
        if user.identity:
            lines.append(f"They are: {user.identity.strip()}")
        if user.info:
            lines.append(f"What you know of them: {user.info.strip()}")
    lines.append(f"It is now {now:%A %Y-%m-%d %H:%M} ({now.tzname() or 'UTC'}).")
    tags = " ".join(f"[{name}]" for name in persona.emotions.names)
    lines.append(f"{EMOTION_INSTRUCTION} {tags}. Then write your reply.")
    return "\n".join(lines)


def _state_text(slots: Sequence[StateSlot], state: dict[str, str]) -> str:
    parts = ["What you are keeping track of:"]
    for slot in slots:
        parts.append(f"## {slot.name}\n{slot.value(state) or '(not known yet)'}")
    return "\n".join(parts)


def _turn_message(turn: Turn, group: bool) -> Message:
    if turn.role == "assistant":
        tag = f"[{turn.emotion}] " if turn.emotion else ""
        return Message("assistant", tag + turn.text)
    return Message("user", f"{turn.speaker}: {turn.text}" if group else turn.text)


def build_chat_prompt(
    persona: Persona,
    turns: Sequence[Turn],
    state: dict[str, str],
    *,
    user_name: str,
    group: bool,
    now: datetime,
    budget: int,
    memories: str = "",
) -> Prompt:
    """System prompt (with the recalled `memories` text, already within its own budget), then
    as many of the most recent turns as fit in `budget` tokens.

    The newest turn always goes in (cut short if it alone is over budget): the model must see
    what it is answering.
    """
    system = _system_text(persona, user_name, group, now)
    if persona.state:
        system += "\n\n" + _state_text(persona.state, state)
    if memories:
        system += "\n\n" + memories
    head = [Message("system", system)]
    used = estimate_messages(head)
    chosen: list[Message] = []
    for turn in reversed(turns):
        message = _turn_message(turn, group)
        cost = estimate_tokens(message.content) + MESSAGE_OVERHEAD
        if used + cost > budget:
            if not chosen:
                room = max(budget - used - MESSAGE_OVERHEAD, 16)
                chosen.append(Message(message.role, _truncate(message.content, room)))
                used = budget
            break
        chosen.append(message)
        used += cost
    chosen.reverse()
    return Prompt((*head, *chosen), used, len(turns) - len(chosen))


def _truncate(text: str, tokens: int) -> str:
    """Keep the end of `text` (the latest words matter most) within about `tokens`."""
    keep = len(text)
    while keep > 0 and estimate_tokens(text[-keep:]) > tokens:
        keep = keep * 3 // 4
    return "…" + text[-keep:] if keep < len(text) else text


def build_state_prompt(
    persona: Persona, slots: Sequence[StateSlot], state: dict[str, str], recent: Sequence[Turn]
) -> list[Message]:
    """Ask for updated state slots as one JSON object."""
    names = ", ".join(f'"{s.name}"' for s in slots)
    once = " (set once: leave it empty until it is complete; it will not change afterwards)"
    rules = "\n".join(
        f"- {s.name}{once if s.update == 'once' else ''}: {s.instructions.strip()}" for s in slots
    )
    current = "\n".join(f"{s.name}: {s.value(state) or '(empty)'}" for s in slots)
    exchange = "\n".join(f"{t.speaker}: {t.text}" for t in recent)
    system = (
        f"You keep {persona.identity.name}'s notes up to date. Read the latest exchange and "
        f"return a JSON object with the keys {names}, each a short plain-text value. Keep "
        "everything still true; change only what the exchange changed.\n"
        f"What each note holds:\n{rules}"
    )
    user = f"Current notes:\n{current}\n\nLatest exchange:\n{exchange}"
    return [Message("system", system), Message("user", user)]


def parse_emotion(text: str) -> tuple[str | None, str]:
    """Split a leading `[TAG]` off a reply. Returns (tag or None, the rest)."""
    match = _TAG.match(text)
    if match is None:
        return None, text.strip()
    return match.group(1).upper(), text[match.end() :].strip()


def parse_emotion_instruction(system: str) -> list[str]:
    """The emotion names a system prompt offers (used by the offline model)."""
    for line in system.splitlines():
        if line.startswith(EMOTION_INSTRUCTION):
            return re.findall(r"\[([A-Z][A-Z0-9_]*)\]", line)
    return []
