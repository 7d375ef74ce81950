"""Reactions: a message that only acknowledges what the persona said ("thanks!", "ok", "好的",
"👍") is answered with an emoji on it instead of a reply, where the platform shows reactions
(`Platform.reactions`). Decided here, locally: no model call. The emoji is the one the persona's
file gives for the emotion of its last reply (`emotions.reactions`), or for its neutral one;
a persona with none never reacts.

    emoji = reaction(persona, last_turn, ["thanks!"], platform=where)   # "" : reply
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.conversation.sessions import Turn
    from bot.persona.file import Persona
    from bot.platforms import Platform

__all__ = ["is_acknowledgement", "reaction"]


# Whole messages that only acknowledge, thank or agree, in English and Chinese; said with
# nothing else (a question, a new subject) they call for no more than a reaction.
_PHRASE = (
    r"(?:thanks?(?: ?you)?(?: so much| a lot)?|thx|ty|tysm|cheers|ok(?:ay)?|k|kk|alright|"
    r"all right|got it|gotcha|sure|cool|nice|great|perfect|noted|will do|sounds good|np|"
    r"no problem|good|yep|yup|yes|yeah|lol|haha+|hehe+"
    r"|好的?|好吧|好嘞|好哒|嗯+|嗯嗯|哦+|噢+|行|可以|没问题|知道了|收到|明白了?|懂了|"
    r"谢谢(?:你|啦|了|喵)?|多谢|感谢|哈哈+|嘿嘿+|好滴)"
)
_ACKNOWLEDGEMENTS = re.compile(rf"{_PHRASE}(?: ?{_PHRASE}){{0,2}}", re.IGNORECASE)
_TRAILING = re.compile(r"[\s!！.。~\uff5e,，:：;；)）(（]+")  # (\uff5e: a fullwidth ~)
_MOST_CHARS = 40  # a longer message says more than "thanks"


def is_acknowledgement(text: str, names: Sequence[str] = ()) -> bool:
    """Whether `text` only acknowledges: up to three of the phrases above, or emoji alone (a
    "👍"); punctuation, emoji and the persona's `names` ("thanks Miao!") do not count."""
    text = text.strip()
    if not text or len(text) > _MOST_CHARS:
        return False
    for name in names:
        if name:
            text = re.sub(re.escape(name), " ", text, flags=re.IGNORECASE)
    words = "".join(c for c in text if not _pictograph(c))
    words = _TRAILING.sub(" ", words).strip()
    if not words:  # emoji alone
        return True
    return _ACKNOWLEDGEMENTS.fullmatch(words) is not None


def reaction(
    persona: Persona, last: Turn | None, said: Sequence[str], *, platform: Platform
) -> str:
    """The emoji to react with to the messages `said` (all of them acknowledgements), following
    `last`, the conversation's last turn before them, when that was the persona's; "" when a
    reply is wanted (or the persona has no reactions, or the platform shows none)."""
    table = persona.emotions.reactions
    names = (persona.identity.name, persona.identity.nickname)
    if not table or not platform.reactions:
        return ""
    if last is None or last.role != "assistant" or last.document:
        return ""
    if not said or not all(is_acknowledgement(text, names) for text in said):
        return ""
    return table.get(last.emotion) or table.get(persona.emotions.neutral, "")


def _pictograph(char: str) -> bool:
    """An emoji, its modifiers and joiners (So: symbols; Sk: skin tones; ZWJ, variation)."""
    return unicodedata.category(char) in ("So", "Sk", "Cf", "Mn") or char == "\ufe0f"
