"""Documents in prompts: the summary tier's requests (one call for a short document; for a
long one, map over its parts, then reduce the partial summaries), and the chat prompt's
section for a document open in document mode."""

from __future__ import annotations

from collections.abc import Sequence

from bot.chat_model import Message
from bot.prompts.chat import LANGUAGES
from bot.tomlfile import one_line
from memory.quoting import flat, quote

__all__ = [
    "DOCUMENT_HEADING",
    "MAP_NOTE",
    "MAP_TASK",
    "PASSAGES_HEADING",
    "REDUCE_NOTE",
    "REDUCE_TASK",
    "WHOLE_TASK",
    "document_header",
    "document_messages",
    "document_section",
    "length_note",
    "numbered",
    "summary_rules",
]

# The first line of each call's system message: it says what kind of call it is.
WHOLE_TASK = "Summarise this document."
MAP_TASK = "Summarise one part of a longer document."
REDUCE_TASK = "Combine partial summaries of one document into a single summary."

_RULES = (
    "Write a faithful, structured summary: first what the document is (its kind, subject and "
    "purpose), then its main points in order, then the key facts: numbers, dates, names, "
    "definitions, decisions. Use only what the text says: do not invent, guess or add outside "
    "knowledge; where the text is unclear, say so. Write in {language}."
)
MAP_NOTE = "This part may begin or end mid-thought: summarise only what it contains."
REDUCE_NOTE = (
    "The summaries are of consecutive parts, in order. Merge them into one summary of the "
    "whole: remove repetition, keep every key fact, and keep the order of the document."
)

DOCUMENT_HEADING = (
    "You are reading a document together with them: {name}. Answer their questions from it, "
    "in your own voice; if the answer is not in it, say so rather than guess. Its summary:"
)
PASSAGES_HEADING = "The passages of it that bear on what they asked:"


def summary_rules(language: str) -> str:
    """How every summary of a document is written, in `language` ("en", "zh", ...)."""
    return _RULES.format(language=LANGUAGES.get(language, f"the language {language!r}"))


def document_messages(task: str, instructions: str, body: str) -> list[Message]:
    return [Message("system", f"{task}\n\n{instructions}"), Message("user", body)]


def document_header(name: str, kind: str, pages: int | None, part: int = 0, parts: int = 0) -> str:
    """The line before a document's text (or part, or partial summaries)."""
    counted = f", {pages} pages" if pages else ""
    of = f", part {part} of {parts}" if parts else ""
    # The name is cut so that a silly long one cannot crowd out the text.
    return f"Document: {one_line(name[:100])} ({kind}{counted}){of}\n\n"


def numbered(summaries: Sequence[str]) -> str:
    return "\n\n".join(
        f"Summary of part {i} of {len(summaries)}:\n{summary.strip()}"
        for i, summary in enumerate(summaries, 1)
    )


def length_note(budget: int, calls: int, language: str) -> str:
    """How long each of `calls` answers may be for all of them to fit `budget` together."""
    tokens = max(budget // calls, 100)
    if language in ("zh", "ja"):  # about a token a character
        return f"Keep it under about {tokens} characters."
    return f"Keep it under about {tokens * 3 // 4} words."


def document_section(name: str, summary: str, passages: Sequence[str]) -> str:
    """What the prompt holds of a document the user shared: its summary, and the passages
    that bear on the question (none after a restart, when only the summary is kept)."""
    parts = [DOCUMENT_HEADING.format(name=quote(flat(name, 100))), quote(summary.strip())]
    if passages:
        parts.append(PASSAGES_HEADING)
        parts.extend(quote(p.strip()) for p in passages)
    else:
        parts.append("(Only this summary is at hand now; say so if a question needs more.)")
    return "\n\n".join(parts)
