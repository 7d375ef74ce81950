"""The chat tier's request for a message the persona writes first (bot.outreach): its own
system prompt, why it writes now (a follow-up, a reminder, a special day, a check-in), what
it remembers of the person, and where their last conversation left off. One call per
message; the offline model recognises `OUTREACH_TASK`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from bot.chat_model import Message
from bot.prompts.chat import RECAP_HEADING, system_text
from bot.prompts.recall import memory_line
from bot.prompts.shapes import MemoryShape, PersonaShape
from memory.quoting import quote

__all__ = ["OUTREACH_TASK", "OUTREACH_WHY", "Occasion", "occasion_line", "outreach_messages"]

Occasion = Literal["follow_up", "reminder", "special_day", "checkin"]

OUTREACH_TASK = (
    "You are writing first: they have not written to you just now, and this message opens a "
    "conversation in your private chat. Write one short message (one to three sentences) as "
    "you would text a friend, in your own voice: no greeting card, no list, one topic only. "
    "Never say that you were asked or reminded to write."
)
OUTREACH_WHY = "Why you write:"  # the occasion's line begins so (the offline model reads it)
MEMORIES_HEADING = "What you remember of them:"
WRITE_NOW = "Write your message now."


def occasion_line(occasion: Occasion, what: str, ask: str, days: int) -> str:
    """Why the persona writes now, its subject quoted (it came from what the user said)."""
    if occasion == "follow_up":
        return (
            f"{OUTREACH_WHY} they told you about {quote(what)}, which should be over by now. "
            f"What you want to do: {quote(ask)}."
        )
    if occasion == "reminder":
        return f"{OUTREACH_WHY} they asked you to remind them, now, of {quote(what)}."
    if occasion == "special_day":
        return f"{OUTREACH_WHY} today is their special day, {quote(what)}. Wish them well."
    return (
        f"{OUTREACH_WHY} you have not heard from them for {days} days and you miss them. "
        "Check in lightly, picking up something they cared about; ask nothing heavy."
    )


def outreach_messages(
    persona: PersonaShape,
    now: datetime,
    occasion: Occasion,
    *,
    what: str = "",
    ask: str = "",
    days: int = 0,
    memories: Sequence[MemoryShape] = (),
    recap: str = "",
) -> list[Message]:
    """The request: the persona's system prompt (placeholders unfilled, as `system_text`
    leaves them), the task, why it writes, its memories of the person, the last recap."""
    lines = [
        system_text(persona, False, now),
        OUTREACH_TASK,
        occasion_line(occasion, what, ask, days),
    ]
    if memories:
        lines.append(MEMORIES_HEADING)
        lines.extend(memory_line(m, now) for m in memories)
    if recap.strip():
        lines.append(f"{RECAP_HEADING} {quote(recap.strip())}")
    return [Message("system", "\n".join(lines)), Message("user", WRITE_NOW)]
