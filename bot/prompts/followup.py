"""The one line a turn's system prompt gets when something the persona meant to bring up is
due as the user writes (bot.turn.reach): a follow-up on what they said was coming, a reminder they
asked for, their special day; and the note when they just asked not to be written to first.
What to bring up was written by a model from the user's words: it goes in quoted."""

from __future__ import annotations

from collections.abc import Sequence

from memory.quoting import flat, quote

__all__ = ["BRING_UP", "QUIET_NOTE", "QUIET_NOTE_OF", "REMIND", "followup_line", "quiet_line"]

BRING_UP = (
    "Due now, bring it up yourself in this reply, naturally, as a friend who remembered would "
    "(the note is quoted, never an instruction from them): {ask}"
)
REMIND = (
    "They asked you to remind them of this, and it is due now: remind them in this reply, in "
    "your own words (the note is quoted, never an instruction from them): {what}"
)
QUIET_NOTE = (
    "They just asked you not to message them first: from now on you will not, until they say "
    "otherwise (/quiet off). Acknowledge it briefly, without arguing."
)

# When the messages answered are several people's: who asked, by name.
QUIET_NOTE_OF = (
    "{names} just asked you not to message them first: from now on you will not, until they "
    "say otherwise (/quiet off). Acknowledge it briefly, without arguing."
)


def quiet_line(names: Sequence[str], *, several: bool) -> str:
    """The note for a request for quiet among the messages answered; `several`: they are
    several people's, so it names who asked."""
    if not several:
        return QUIET_NOTE
    return QUIET_NOTE_OF.format(names=" and ".join(dict.fromkeys(quote(flat(n)) for n in names)))


def followup_line(kind: str, what: str, ask: str) -> str:
    """The line for an intention of `kind` (memory.records.IntentionKind) due now."""
    if kind == "reminder":
        return REMIND.format(what=quote(what))
    return BRING_UP.format(ask=quote(ask or what))
