"""Memories in prompts: the headings the chat prompt shows them under (with what the persona
knows of the user and its diary), how one memory reads (its age and strength, what it says,
quoted), the recall_memory tool, and deep recall's request for sub-questions."""

from __future__ import annotations

from datetime import datetime

from bot.chat_model import Message, Tool
from bot.prompts.shapes import MemoryShape
from memory.quoting import flat, quote

__all__ = [
    "DIARY_HEADING",
    "FLASHBACK_HEADING",
    "MEMORY_HEADING",
    "MEMORY_HEADING_AGAIN",
    "NOTHING_FOUND",
    "PROFILE_HEADING",
    "RECALL_NEEDS_QUERY",
    "RECALL_TOOL",
    "describe_age",
    "memory_line",
    "sub_question_messages",
]

RECALL_TOOL = Tool(
    name="recall_memory",
    description=(
        "Search your own long-term memory of the people you are talking with, when you want "
        "to recall something specific from before that you don't have in mind right now."
    ),
    parameters={
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "what you are trying to remember"}
        },
        "required": ["query"],
    },
)

MEMORY_HEADING = (
    "Things that come to mind from before, with how long ago and how clearly you remember "
    "them (1 is vivid). Use them the way a friend would: naturally and only when they fit, "
    "never reciting them, never mentioning memories, strengths or notes. If one seems unsure "
    "or faded, you may be vague about it:"
)
# MEMORY_HEADING where an earlier turn's note in the prompt shows it whole.
MEMORY_HEADING_AGAIN = "More that comes to mind from before (use it as above):"
FLASHBACK_HEADING = "A passing thought, from nowhere in particular (mention it only if it fits):"
PROFILE_HEADING = "What you know of {name}, from your time together:"
DIARY_HEADING = "Your diary for {day}:"
NOTHING_FOUND = "Nothing comes to mind about that."
RECALL_NEEDS_QUERY = 'recall_memory needs {"query": "..."}'


def describe_age(then: datetime, now: datetime) -> str:
    seconds = max((now - then).total_seconds(), 0.0)
    minutes, hours, days = seconds / 60, seconds / 3600, seconds / 86400
    if minutes < 2:
        return "just now"
    if hours < 1:
        return f"{int(minutes)} minutes ago"
    if days < 1:
        return "an hour ago" if hours < 2 else f"{int(hours)} hours ago"
    if days < 2:
        return "yesterday"
    if days < 14:
        return f"{int(days)} days ago"
    if days < 60:
        return f"{int(days // 7)} weeks ago"
    if days < 730:
        return f"{int(days // 30)} months ago"
    return f"{int(days // 365)} years ago"


def memory_line(memory: MemoryShape, now: datetime) -> str:
    """A memory as the prompt shows it: who said it and what it says, quoted."""
    said = quote(memory.text)
    if memory.speaker:
        said = f"{quote(flat(memory.speaker))}: {said}"
    return f"- [{describe_age(memory.when, now)}, strength {memory.retention:.2f}] {said}"


def sub_question_messages(text: str, count: int) -> list[Message]:
    """Ask the intent tier to split a question about the past into at most `count` queries."""
    return [
        Message(
            "system",
            "Split the user's question about the past into at most "
            f"{count} short search queries for a memory of past conversations: "
            "the people, things, places and events it asks about. Answer with JSON only: "
            '{"queries": ["...", "..."]}. Keep the language of the question.',
        ),
        Message("user", text[:2000]),
    ]
