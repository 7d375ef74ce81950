"""The chat prompt, built within its token budget: the system prompt (bot.prompts' text, with
a card's placeholders filled and the lorebook entries the recent turns bring up), then as many
of the latest turns as fit; and the emotion tag the reply is asked to begin with, read back.

What users wrote, and what models wrote from it (recaps, summaries, notes, documents), is put
in through memory.quoting: quoted, one line each, so no text of theirs opens a section of the
system prompt or becomes another speaker's line. Display names are put in on one line."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from bot import cards
from bot.card_persona import lore_book
from bot.llm.base import Message
from bot.llm.tokens import MESSAGE_OVERHEAD, estimate_messages, estimate_tokens
from bot.persona import Persona
from bot.prompts import (
    greeting_section,
    lore_section,
    people_section,
    recap_section,
    speaker_names,
    state_section,
    summary_section,
    system_text,
)
from bot.sessions import Turn
from memory.quoting import flat, quote

__all__ = ["Prompt", "build_chat_prompt", "parse_emotion"]

# A tag in bold ("**[SAD]**") loses the stars round it, and only those: the reply's own
# "*smiles*" after a bare tag keeps its first.
_TAG = re.compile(r"^\s*(\**)\s*\[([A-Za-z][A-Za-z0-9_]{1,23})\]\s*(?:\1)?\s*")


@dataclass(slots=True, frozen=True)
class Prompt:
    messages: tuple[Message, ...]
    tokens: int  # estimated
    turns_dropped: int  # oldest turns left out to stay within the budget


def _filled(text: str, persona: Persona, user_name: str) -> str:
    """{{char}} and {{user}} (a character card's placeholders) as the persona and the user."""
    return cards.resolve_placeholders(text, persona.identity.name, user_name or persona.user.name)


def _lore_text(persona: Persona, turns: Sequence[Turn], user_name: str) -> str:
    """The persona's lorebook entries the recent turns bring up, within the book's budget."""
    book = persona.lorebook
    if not book.entries:
        return ""
    found = cards.active_entries(
        lore_book(book),
        [t.text for t in turns],
        budget_tokens=book.token_budget,
        count_tokens=estimate_tokens,
    )
    if not found:
        return ""
    return _filled(lore_section([e.content for e in found]), persona, user_name)


def _turn_message(
    turn: Turn, group: bool, names: dict[tuple[str, str], str], tokens: int | None = None
) -> Message:
    """A turn as a message; within about `tokens` if given (its end kept: the latest words
    matter most), cut before it is quoted so that its speaker and quotes stay whole."""
    if turn.role == "assistant":
        tag = f"[{turn.emotion}] " if turn.emotion else ""
        text = tag + turn.text
        return Message("assistant", text if tokens is None else _truncate(text, tokens))
    if not group:  # the user's own message: the role says whose it is
        return Message("user", turn.text if tokens is None else _truncate(turn.text, tokens))
    head = f"{names[turn.user_id, turn.speaker]}: "
    text = turn.text
    if tokens is not None:
        text = _truncate(text, max(tokens - estimate_tokens(head) - 2, 8))
        while text and estimate_tokens(head + quote(text)) > tokens and len(text) > 16:
            text = "…" + text[len(text) // 4 + 1 :]  # escapes took more room than the words
    return Message("user", head + quote(text))


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
    summary: str = "",
    recap: str = "",
    aliases: Mapping[str, Sequence[str]] | None = None,
    followup: str = "",
) -> Prompt:
    """System prompt (with the recalled `memories` text, already within its own budget, the
    `recap` of the conversation before and the running `summary` of this one's older turns),
    then as many of the most recent turns as fit in `budget` tokens. `followup`: the line of
    something due to bring up now (bot.prompts.followup), last, where it is not overlooked.

    The newest turn always goes in (cut short if it alone is over budget): the model must see
    what it is answering. In a group each line names its speaker as they go by now; in a group
    or not, `aliases` (user id -> the other names the persona knows them by) and the names they
    had earlier in these turns are shown beside the name they go by now.
    """
    user_name = flat(user_name)
    system = _filled(system_text(persona, group, now), persona, user_name)
    lore = _lore_text(persona, turns, user_name)
    if lore:
        system += "\n\n" + lore
    if persona.card.first_message.strip() and not recap and not summary:
        greeting = _filled(persona.card.first_message.strip(), persona, user_name)
        system += "\n\n" + greeting_section(greeting)
    if persona.state:
        system += "\n\n" + state_section(persona.state, state)
    people = people_section(turns, aliases or {})
    if people:
        system += "\n\n" + people
    if memories:
        system += "\n\n" + memories
    if recap:
        system += "\n\n" + recap_section(recap)
    if summary:
        system += "\n\n" + summary_section(summary)
    if followup:
        system += "\n\n" + followup
    head = [Message("system", system)]
    after = persona.card.post_history_instructions.strip()
    tail = [Message("system", _filled(after, persona, user_name))] if after else []
    used = estimate_messages([*head, *tail])
    chosen: list[Message] = []
    names = speaker_names(turns) if group else {}
    for turn in reversed(turns):
        message = _turn_message(turn, group, names)
        cost = estimate_tokens(message.content) + MESSAGE_OVERHEAD
        if used + cost > budget:
            if not chosen:
                room = max(budget - used - MESSAGE_OVERHEAD, 16)
                chosen.append(_turn_message(turn, group, names, room))
                used = budget
            break
        chosen.append(message)
        used += cost
    chosen.reverse()
    return Prompt((*head, *chosen, *tail), used, len(turns) - len(chosen))


def _truncate(text: str, tokens: int) -> str:
    """Keep the end of `text` (the latest words matter most) within about `tokens`."""
    keep = len(text)
    while keep > 0 and estimate_tokens(text[-keep:]) > tokens:
        keep = keep * 3 // 4
    return "…" + text[-keep:] if keep < len(text) else text


def parse_emotion(text: str) -> tuple[str | None, str]:
    """Split a leading `[TAG]` (what the system prompt's emotion instruction asks for) off a
    reply. Returns (tag or None, the rest)."""
    match = _TAG.match(text)
    if match is None:
        return None, text.strip()
    return match.group(2).upper(), text[match.end() :].strip()
