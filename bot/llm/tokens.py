"""Token estimates without a tokenizer.

tiktoken downloads its encodings at run time, which this project never does, so we estimate:
CJK characters cost about one token each in the BPE vocabularies of GPT-4-class and GLM models,
other text about four characters a token. Estimates run a little high on purpose: the budget
is a ceiling, and running over it costs more than leaving a few tokens unused.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from bot.llm.base import Message

__all__ = ["estimate_messages", "estimate_tokens"]

# Per-message framing (role, separators) in chat formats.
MESSAGE_OVERHEAD = 4


def _is_wide(ch: str) -> bool:
    code = ord(ch)
    return (
        0x3040 <= code <= 0x30FF  # kana
        or 0x3400 <= code <= 0x4DBF  # CJK extension A
        or 0x4E00 <= code <= 0x9FFF  # CJK unified ideographs
        or 0xAC00 <= code <= 0xD7AF  # hangul
        or 0xF900 <= code <= 0xFAFF  # CJK compatibility
        or 0xFF00 <= code <= 0xFFEF  # full-width forms and punctuation
        or 0x3000 <= code <= 0x303F  # CJK punctuation
        or code >= 0x1F300  # emoji and the supplementary planes
    )


def estimate_tokens(text: str) -> int:
    wide = sum(1 for ch in text if _is_wide(ch))
    narrow = len(text) - wide
    return wide + math.ceil(narrow / 4)


def estimate_messages(messages: Iterable[Message]) -> int:
    return sum(estimate_tokens(m.content) + MESSAGE_OVERHEAD for m in messages)
