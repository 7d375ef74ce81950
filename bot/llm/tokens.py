"""Token estimates without a tokenizer.

tiktoken downloads its encodings at run time, which this project never does, so we estimate:
CJK characters cost about one token each in the BPE vocabularies of GPT-4-class and GLM models,
other text about four characters a token. Estimates run a little high on purpose: the budget
is a ceiling, and running over it costs more than leaving a few tokens unused.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable

from bot.chat_model import Message

__all__ = ["estimate_messages", "estimate_tokens", "pieces"]

# Per-message framing (role, separators) in chat formats.
MESSAGE_OVERHEAD = 4
# A picture of at most 1024 px a side, as OpenAI counts one at high detail (85 + 170 a tile).
IMAGE_TOKENS = 765


# Characters that cost about a token each: kana, CJK ideographs (and extension A), hangul,
# CJK compatibility, full-width forms, CJK punctuation, emoji and the supplementary planes.
_WIDE = re.compile(
    "[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
    "\uf900-\ufaff\uff00-\uffef\U0001f300-\U0010ffff]"
)


_PIECE = re.compile(f"{_WIDE.pattern}|(?:(?!{_WIDE.pattern}).){{1,4}}", re.DOTALL)


# Cached: each turn re-counts the conversation's earlier turns (prompt budget, folding).
@functools.lru_cache(maxsize=8192)
def estimate_tokens(text: str) -> int:
    wide = len(_WIDE.findall(text))
    return wide + math.ceil((len(text) - wide) / 4)


def pieces(text: str) -> list[str]:
    """`text` cut into the tokens `estimate_tokens` counts: each wide character, and runs of
    up to four others (a stand-in for a tokenizer where prompts are compared token by token,
    as a provider's prompt cache does)."""
    return _PIECE.findall(text)


def estimate_messages(messages: Iterable[Message]) -> int:
    return sum(
        estimate_tokens(m.content) + MESSAGE_OVERHEAD + IMAGE_TOKENS * len(m.images)
        for m in messages
    )
