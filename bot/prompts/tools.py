"""The tools the chat model may call besides recall_memory (a web search, a translator), the
translator's own instructions, and what the prompt says when the message's intent already
asked for a search or a translation."""

from __future__ import annotations

from bot.llm.base import Message, Tool

__all__ = [
    "SEARCHED_HEADING",
    "SEARCH_TOOL",
    "TRANSLATE_TASK",
    "TRANSLATE_TOOL",
    "TRANSLATION_MODE",
    "searched_section",
    "translate_messages",
    "translation_section",
]

SEARCH_TOOL = Tool(
    name="web_search",
    description=(
        "Look something up on the web: news, facts you are not sure of, anything after your "
        "training. Cite what you use as [1], [2] by the result numbers."
    ),
    parameters={
        "type": "object",
        "properties": {"query": {"type": "string", "description": "what to search for"}},
        "required": ["query"],
    },
)
TRANSLATE_TOOL = Tool(
    name="translate",
    description=(
        "Translate a text faithfully into another language, when someone asks you to "
        "translate. You then give the translation in your own voice."
    ),
    parameters={
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "the text to translate, exactly"},
            "target_language": {"type": "string", "description": "e.g. English, 中文, 日本語"},
        },
        "required": ["text", "target_language"],
    },
)
TRANSLATE_TASK = (
    "You are a translator. Translate the user's text into {language}. Keep its meaning, tone "
    "and formatting; add nothing, explain nothing. Answer with the translation only."
)
SEARCHED_HEADING = (
    "They asked for something to be looked up; a web search just found this (cite what you "
    "use as [1], [2]):"
)
TRANSLATION_MODE = (
    "They are asking for a translation{into}: give it faithfully and completely, then, in your "
    "own voice and staying in character, a word about it if you like."
)


def translate_messages(text: str, language: str) -> list[Message]:
    return [Message("system", TRANSLATE_TASK.format(language=language)), Message("user", text)]


def searched_section(section: str, results: str) -> str:
    """The prompt's `section` with what a search run for the message found."""
    return f"{section}\n\n{SEARCHED_HEADING}\n{results}".strip()


def translation_section(section: str, target_language: str) -> str:
    """The prompt's `section` with translation mode, into `target_language` if known."""
    into = f" into {target_language}" if target_language else ""
    return f"{section}\n\n{TRANSLATION_MODE.format(into=into)}".strip()
