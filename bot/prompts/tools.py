"""The tools the chat model may call besides recall_memory (a web search, a translator), the
translator's own instructions, what a tool call answers the chat model (search results
condensed, or a sentence it can pass on), and what the prompt says when the message's intent
already asked for a search or a translation.

Outside text is data, as user text is: a page's title, address and snippet, a translation, and
whatever a host's tool or an MCP server answers reach the model only through
memory.quoting.quote (one JSON string on one line), so none of it opens a section, poses as a
result or a speaker, or reads as an instruction (the system prompt says quoted text never is).
The sentences Kizuna itself answers with (a tool refused, failed, cut) stay unquoted."""

from __future__ import annotations

from collections.abc import Sequence

from bot.chat_model import Message, Tool
from bot.prompts.shapes import SearchResultShape
from memory.quoting import flat, quote

__all__ = [
    "MCP_DOWN",
    "MCP_UNAVAILABLE",
    "MEMORY_SILENT",
    "NOTHING_TO_TRANSLATE",
    "NO_QUERY",
    "NO_SEARCH",
    "NO_SUCH_TOOL",
    "RESULTS",
    "SEARCHED_HEADING",
    "SEARCH_FAILED",
    "SEARCH_TOOL",
    "TOOL_ADMINS_ONLY",
    "TOOL_BAD_ARGUMENTS",
    "TOOL_FAILED",
    "TOOL_FOR_ONE",
    "TOOL_NOT_IN_ECO",
    "TOOL_RATE_LIMITED",
    "TOOL_TIMED_OUT",
    "TOOL_TRUNCATED",
    "TOO_MANY_CALLS",
    "TRANSLATE_TASK",
    "TRANSLATE_TOOL",
    "TRANSLATION_FAILED",
    "TRANSLATION_MODE",
    "condense",
    "searched_section",
    "tool_answer",
    "translate_messages",
    "translated",
    "translation_section",
]

RESULTS = 5  # search results the chat model sees
SNIPPET_WORDS = 60

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


# What a tool call answers when it cannot do what was asked: a sentence the persona can pass on.
NO_SEARCH = "There is no web search here: answer from what you know."
NO_QUERY = "The search needs a query."
SEARCH_FAILED = (
    "The search failed just now; say you couldn't look it up, and answer from what you know "
    "if you can."
)
NOTHING_TO_TRANSLATE = "Nothing to translate was given."
TRANSLATION_FAILED = "The translation failed just now; say so kindly."
NO_SUCH_TOOL = "There is no tool named {name!r}."
TOO_MANY_CALLS = "Not run: at most {count} tool calls at a time."
MEMORY_SILENT = "Memory is not answering right now."


def condense(results: Sequence[SearchResultShape], *, start: int = 1, limit: int = RESULTS) -> str:
    """The results as the chat model sees them: numbered from `start` (a turn's searches
    count on), short, with their addresses; one line each, its title, address and snippet
    quoted (the web's words, never instructions), whatever a page holds."""
    if not results:
        return "The search found nothing."
    lines = []
    for number, result in enumerate(results[:limit], start=start):
        words = result.snippet.split()
        snippet = " ".join(words[:SNIPPET_WORDS]) + (" …" if len(words) > SNIPPET_WORDS else "")
        where = f" ({quote(flat(result.url, 300))})" if result.url else ""
        lines.append(f"[{number}] {quote(flat(result.title, 200))}{where}: {quote(snippet)}")
    return "\n".join(lines)


def translated(language: str, translation: str) -> str:
    """The translator's answer, as the chat model is handed it: a model's rewording of user
    text, quoted as user text is."""
    return f"Translation into {quote(flat(language, 40))}: {quote(translation)}"


def tool_answer(text: str, limit: int) -> str:
    """What a host's tool or an MCP server answered, as the chat model is handed it: quoted
    (data, never instructions), its first `limit` characters, and a note when cut."""
    if len(text) <= limit:
        return quote(text)
    return f"{quote(text[:limit])}\n{TOOL_TRUNCATED.format(count=limit)}"


def translate_messages(text: str, language: str) -> list[Message]:
    return [Message("system", TRANSLATE_TASK.format(language=language)), Message("user", text)]


def searched_section(section: str, results: str) -> str:
    """The prompt's `section` with what a search run for the message found."""
    return f"{section}\n\n{SEARCHED_HEADING}\n{results}".strip()


def translation_section(section: str, target_language: str) -> str:
    """The prompt's `section` with translation mode, into `target_language` if known (read
    from the user's words: quoted)."""
    into = f" into {quote(flat(target_language, 40))}" if target_language else ""
    return f"{section}\n\n{TRANSLATION_MODE.format(into=into)}".strip()


# What a host's tool (bot/tools) answers the chat model when it was not run or failed.
TOOL_NOT_IN_ECO = "This tool is off while the bot saves money; say you can't use it right now."
TOOL_ADMINS_ONLY = "Only an admin of this chat may use this tool; say so kindly."
TOOL_FOR_ONE = (
    "Not run: this tool acts for one person, and these messages are not one person's alone. "
    "Ask whoever wants it to ask you again on their own."
)
TOOL_RATE_LIMITED = (
    "Not run: this person has used this tool {count} times in the last minute; ask them to "
    "wait a moment."
)
TOOL_BAD_ARGUMENTS = "The call was not made: its arguments were wrong ({problems}). Try again."
TOOL_TIMED_OUT = "The tool took too long and was stopped; say it isn't answering right now."
TOOL_FAILED = "The tool failed just now; say so, and go on without it."
TOOL_TRUNCATED = "[cut: only the first {count} characters are shown]"
MCP_UNAVAILABLE = (
    "A tool of the {server} service, which is not answering at the moment: calling it tells "
    "you why."
)
MCP_DOWN = "Not run: {reason}. Say that this service isn't answering right now."
