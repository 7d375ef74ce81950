"""Compose: what came to mind for a turn in (`InMind`, bot.turn.recall), its chat prompt out
(`Composed`), built within its token budget: the system prompt (bot.prompts' text, with a
card's placeholders filled), then as many of the latest turns as fit, with a note of the
turn's own (the time, the memories, the lorebook entries the recent turns bring up...) before
the newest; the emotion tag the reply begins with is read back by bot.prompts' `parse_emotion`.

What users wrote, and what models wrote from it (recaps, summaries, notes, documents), is put
in through memory.quoting: quoted, one line each, so no text of theirs opens a section of the
system prompt or becomes another speaker's line. Display names are put in on one line."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from bot.chat_model import Message
from bot.config import EngineConfig
from bot.conversation.sessions import Turn
from bot.llm.tokens import IMAGE_TOKENS, MESSAGE_OVERHEAD, estimate_messages, estimate_tokens
from bot.persona import cards
from bot.persona.card_file import lore_book
from bot.persona.file import Persona
from bot.prompts import (
    MEMORY_HEADING,
    MEMORY_HEADING_AGAIN,
    greeting_section,
    lore_section,
    now_line,
    people_section,
    persona_text,
    recap_section,
    speaker_names,
    state_section,
    summary_section,
)
from bot.turn.recall import InMind
from memory.quoting import flat, quote

__all__ = ["Composed", "Prompt", "build_chat_prompt", "compose"]

# A tag in bold ("**[SAD]**") loses the stars round it, and only those: the reply's own
# "*smiles*" after a bare tag keeps its first.
# Past the budget, the oldest turns go about a budget's this-many-th part at a time.
HISTORY_STEPS = 4
# Memories an earlier turn's note showed that come to mind first again are shown again.
RESHOWN = 2
# The earlier turns' notes in a prompt, at most (tokens): what came to mind for the oldest turns
# goes, or they would grow the prompt by a memory block a turn; what comes to mind again is
# shown again with the newest turn.
NOTES_TOKENS = 1200


@dataclass(slots=True, frozen=True)
class Prompt:
    messages: tuple[Message, ...]
    tokens: int  # estimated
    turns_dropped: int  # oldest turns left out to stay within the budget
    # What of the newest turn's note is kept with it (`Turn.note`) for the prompts after: the
    # memories recalled (those the earlier notes did not show), not what changes every turn.
    note: str = ""


@dataclass(slots=True, frozen=True)
class Composed:
    """A turn's prompt, with what came to mind for it."""

    mind: InMind
    prompt: Prompt


def compose(mind: InMind, settings: EngineConfig) -> Composed:
    """The turn's prompt, within the context budget less the reply's (and the share of the
    pictures shown to a chat model that sees). The newest turn keeps the prompt's note to be
    shown before it in the prompts after; never a note of private memories, which the user
    may make private again from any process."""
    settled = mind.settled
    persona, session, event = settled.persona, settled.session, settled.event
    reading = session.reading is not None
    prompt = build_chat_prompt(
        persona,
        session.turns,
        session.state,
        user_name=event.user_name,
        group=not event.is_dm and persona.memory.scope == "channel",
        now=mind.now,
        budget=settings.context_tokens
        - settings.reply_tokens
        - IMAGE_TOKENS * sum(len(t.images) for _, t in settled.taken),
        memories="" if reading else mind.section,
        passages=mind.section if reading else "",
        summary=session.summary,
        recap=session.recap,
        aliases=mind.aliases,
        followup=mind.followup,
    )
    session.turns[-1].note = prompt.note if mind.private is None else ""
    return Composed(mind, prompt)


def _filled(text: str, persona: Persona, user_name: str) -> str:
    """{{char}} and {{user}} (a character card's placeholders) as the persona and the user."""
    return cards.resolve_placeholders(text, persona.identity.name, user_name or persona.user.name)


def _lore_texts(persona: Persona, turns: Sequence[Turn], user_name: str) -> tuple[str, str]:
    """The persona's lorebook entries the recent turns bring up, within the book's budget:
    (the constant ones, which stay from turn to turn; the ones these turns brought up)."""
    book = persona.lorebook
    if not book.entries:
        return "", ""
    found = cards.active_entries(
        lore_book(book),
        [t.text for t in turns],
        budget_tokens=book.token_budget,
        count_tokens=estimate_tokens,
    )

    def section(contents: list[str]) -> str:
        return _filled(lore_section(contents), persona, user_name) if contents else ""

    return (
        section([e.content for e in found if e.constant]),
        section([e.content for e in found if not e.constant]),
    )


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
            text = "…" + text[len(text) // 4 + 1 :]  # escapes took more space than the words
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
    passages: str = "",
) -> Prompt:
    """The prompt, ordered from what changes least to what changes every turn, so that a
    provider's prompt cache reuses as much of it as it can: the system prompt (the persona,
    its constant lore, the state slots gathered once, the greeting, the `recap` of the
    conversation before and the running `summary` of this one's older turns: all of it the
    same through a conversation, the summary until it is folded again), then as many of the
    turns as fit in `budget` tokens, older ones dropped in large steps (`_first_kept`), each
    with the note of what came to mind as it was answered (`Turn.note`) before it (the
    newest notes, NOTES_TOKENS at most: older ones dropped in large steps too); and before
    the newest turn its own note:
    the recalled `memories` (already within their own budget) that those notes do not show
    already (`Prompt.note`, to keep with it), then what changes every turn: the time, the
    state, the people's other names, the lore the turns bring up and `followup`, the line of
    something due to bring up now (bot.prompts.followup), and the `passages` of a document
    being read (chosen for each question anew: not kept).

    The newest turn always goes in (cut short if it alone is over budget): the model must see
    what it is answering. In a group each line names its speaker as they go by now; in a group
    or not, `aliases` (user id -> the other names the persona knows them by) and the names they
    had earlier in these turns are shown beside the name they go by now.
    """
    user_name = flat(user_name)
    system = _filled(persona_text(persona, group), persona, user_name)
    constant, brought_up = _lore_texts(persona, turns, user_name)
    if constant:
        system += "\n\n" + constant
    # State slots gathered once stay as they are: with what stays; the others change each turn.
    settled = [slot for slot in persona.state if slot.settled(state)]
    changing = [slot for slot in persona.state if not slot.settled(state)]
    if settled:
        system += "\n\n" + state_section(settled, state)
    greeting = _filled(persona.card.first_message.strip(), persona, user_name)
    # The card's greeting, unless the conversation opened with it as the persona's first turn
    # (bot.turn.settle's greeting): the model sees it there.
    opened = bool(turns) and turns[0].role == "assistant" and turns[0].text == greeting
    if greeting and not recap and not summary and not opened:
        system += "\n\n" + greeting_section(greeting)
    if recap:
        system += "\n\n" + recap_section(recap)
    if summary:
        system += "\n\n" + summary_section(summary)
    ephemeral = [now_line(now)]  # (what changes every turn, shown with the newest turn only)
    if changing:
        ephemeral.append(state_section(changing, state))
    ephemeral += [people_section(turns, aliases or {}), brought_up, followup, passages]
    head = [Message("system", system)]
    after = persona.card.post_history_instructions.strip()
    tail = [Message("system", _filled(after, persona, user_name))] if after else []
    names = speaker_names(turns) if group else {}
    messages = [_turn_message(turn, group, names) for turn in turns]
    # The notes of the earlier turns, before each as it was shown then; the newest's is new.
    notes = [
        Message("system", t.note) if t.note and i < len(turns) - 1 else None
        for i, t in enumerate(turns)
    ]
    # Past NOTES_TOKENS, the older notes go together (`_first_kept`'s marks), not one a turn.
    noted = _first_kept(
        turns, [estimate_messages([n]) if n else 0 for n in notes], NOTES_TOKENS, step=NOTES_TOKENS
    )
    notes = [note if i >= noted else None for i, note in enumerate(notes)]
    costs = [
        estimate_tokens(m.content) + MESSAGE_OVERHEAD + (estimate_messages([n]) if n else 0)
        for m, n in zip(messages, notes, strict=True)
    ]
    # (space kept for the memories whole: what earlier notes hold is left out of them after)
    used = estimate_messages([*head, _note(memories, *ephemeral), *tail])
    first = _first_kept(turns, costs, budget - used, step=max(budget // HISTORY_STEPS, 1))
    shown = {key for n in notes[first:] if n is not None for key in _keys(n.content)}
    recalled = _unseen(memories, shown)
    this_turn = [_note(recalled, *ephemeral)]
    used = estimate_messages([*head, *this_turn, *tail])
    earlier: list[Message] = []
    for message, note in zip(messages[first:-1], notes[first:-1], strict=True):
        earlier += [note, message] if note else [message]
    newest = messages[-1:] if first < len(turns) else []
    if newest:
        used += sum(costs[first:])
    elif turns:  # the newest turn alone is over budget: its end, cut to fit
        space = max(budget - used - MESSAGE_OVERHEAD, 16)
        newest = [_turn_message(turns[-1], group, names, space)]
        used = budget
    kept = len(turns) - first if first < len(turns) else len(newest)
    messages_out = (*head, *earlier, *this_turn, *newest, *tail)
    return Prompt(messages_out, used, len(turns) - kept, recalled)


def _note(*parts: str) -> Message:
    """The parts that are not empty, as one system message."""
    return Message("system", "\n\n".join(part for part in parts if part))


# A listed line's own words: a memory's age and strength (which change) left aside.
_LISTED = re.compile(r"^- (?:\[[^\]\n]*\] )?")


def _keys(note: str) -> set[str]:
    """What a note shows: each heading, each listed line's words, and each part with no
    list."""
    keys: set[str] = set()
    for part in note.split("\n\n"):
        heading, *lines = part.split("\n")
        keys.update([heading, *(_LISTED.sub("", line) for line in lines)] if lines else [part])
    return keys


def _unseen(section: str, shown: set[str]) -> str:
    """`section` (parts of a heading and its lines) without what the earlier turns' notes in
    the prompt show already: their lines left out, but for the first RESHOWN of a list (the
    best for this message stay right before it, in their order); a part left out when none
    of it is new; the memories' long heading, shown already, shortened."""
    parts: list[str] = []
    for part in section.split("\n\n") if section else []:
        heading, *lines = part.split("\n")
        listed = all(line.startswith("- ") for line in lines)
        new = [
            line
            for i, line in enumerate(lines)
            if (listed and i < RESHOWN) or _LISTED.sub("", line) not in shown
        ]
        if new:
            again = heading == MEMORY_HEADING and heading in shown  # (its advice shown already)
            parts.append("\n".join([MEMORY_HEADING_AGAIN if again else heading, *new]))
        elif not lines and part not in shown:
            parts.append(part)
    return "\n\n".join(parts)


def _first_kept(turns: Sequence[Turn], costs: Sequence[int], space: int, *, step: int) -> int:
    """The index of the oldest turn that goes in: 0 while every turn fits in `space` tokens;
    past it, the earliest of the marks that lets the rest fit, so the turns a prompt begins
    with (what a prompt cache reuses) stay the same for many turns, rather than moving by
    one turn a message. The marks are the first user turns after each `step` tokens of the
    conversation counted from its start: they stay where they are as turns are added. When
    no mark lets the rest fit, as many of the newest turns as fit (len(turns): not even the
    newest)."""
    if sum(costs) <= space:
        return 0
    marks: list[int] = []
    counted, next_mark = 0, step
    for i, turn in enumerate(turns):
        if counted >= next_mark and turn.role == "user":
            marks.append(i)
            next_mark = (counted // step + 1) * step
        counted += costs[i]
    for mark in marks:
        if sum(costs[mark:]) <= space:
            return mark
    first, kept = len(turns), 0
    while first > 0 and kept + costs[first - 1] <= space:
        first -= 1
        kept += costs[first]
    return first


def _truncate(text: str, tokens: int) -> str:
    """Keep the end of `text` (the latest words matter most) within about `tokens`."""
    keep = len(text)
    while keep > 0 and estimate_tokens(text[-keep:]) > tokens:
        keep = keep * 3 // 4
    return "…" + text[-keep:] if keep < len(text) else text
