"""The intent tier's request: what a message wants (when `[engine] intent = "model"`)."""

from __future__ import annotations

from bot.chat_model import Message

__all__ = ["INTENT_TASK", "intent_messages"]

INTENT_TASK = (
    "Decide what the user's message wants. Answer with JSON only: "
    '{"intent": "chat" | "keyword_memory" | "date_memory" | "web_search" | "translation", '
    '"query": "...", "target_language": "..."}. '
    "keyword_memory: they ask about something from earlier conversations (query: what to "
    "recall). date_memory: they ask what happened on a day. web_search: they want current or "
    "outside facts looked up (query: the search). translation: they want a text translated "
    "(target_language: into what). Otherwise chat."
)


def intent_messages(text: str) -> list[Message]:
    return [Message("system", INTENT_TASK), Message("user", text[:2000])]
