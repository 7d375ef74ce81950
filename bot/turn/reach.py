"""What a conversation does for prospective memory: who was heard and answered (the
contacts bot.outreach reads before writing first), a request not to be written to ("stop
messaging me", 别再给我发消息了) honoured as quiet, and the intention due now brought up in the
user's own conversation instead of a message the persona writes first (the store finds it:
IntentionStore.due_intention).

The patterns look for a request said to the persona, not a story about someone else: it
starts a sentence, or follows "please"/"can you"/请/你 ("he won't stop messaging me" and
"我让他别再给我发消息" are not requests). A user can always undo it with `/quiet off`."""

from __future__ import annotations

import re

__all__ = ["asks_for_quiet"]

_EN_REQUEST = re.compile(
    r"(?:^|[.!?;,:\n]\s*|\b(?:please|pls|plz|ok|okay|so|just|can you|could you|would you"
    r"|will you)\s+)"
    r"(?:(?:please|pls|plz|just)\s+)?"
    r"(?:(?:stop|quit)\s+(?:(?:messag|text|msg|dm|pm|ping|spamm|contact)ing\s+me"
    r"|writing\s+(?:to\s+)?me|sending\s+me\s+(?:any\s+)?(?:messages|texts|dms)"
    r"|reaching\s+out(?:\s+to\s+me)?)"
    r"|(?:don'?t|do\s+not|never)\s+(?:ever\s+)?(?:message|text|msg|dm|pm|ping|contact)\s+me"
    r"|(?:don'?t|do\s+not|never)\s+(?:ever\s+)?(?:write\s+(?:to\s+)?me|send\s+me\s+"
    r"(?:any\s+)?(?:more\s+)?(?:messages|texts|dms)|reach\s+out(?:\s+to\s+me)?)"
    r"|no\s+more\s+(?:messages|texts|dms)\b(?!\s+(?:like|about|than)))",
    re.IGNORECASE,
)
_ZH_REQUEST = re.compile(
    r"(?:^|[。！？!?，,；;：:\s]|请|求你|拜托|你)(?:以后|今后)?"
    r"(?:别|不要|不用|不许)再?(?:主动)?(?:给我|跟我|和我)?"
    r"(?:发(?:消息|信息|短信|私信)|找我|联系我|私信我)"
)


def asks_for_quiet(text: str) -> bool:
    """Whether `text` asks the persona not to write to the user (first, or at all)."""
    return bool(_EN_REQUEST.search(text) or _ZH_REQUEST.search(text))
