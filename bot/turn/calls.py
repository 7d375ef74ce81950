"""The tools a persona may call in a turn, and their calls answered: the built-in ones
(recall_memory, web_search, translate) and its Python and MCP tools (bot.tools). One object
shared by the stages that use them (recall runs a search the message asks for, answer answers
the model's calls), so both see the same search backend and toolbox.

    calls.offered(persona, sender)   -> the tools to offer the chat model
    await calls.run(persona, scope, call, used, sender)   -> what the call returns to it
"""

from __future__ import annotations

import json
import logging
from dataclasses import KW_ONLY, dataclass, field

from bot.chat_model import Tool, ToolCall
from bot.conversation.recollect import Recollector
from bot.llm.router import ModelRouter
from bot.persona.file import Persona
from bot.prompts import MEMORY_SILENT, NO_SUCH_TOOL, RECALL_TOOL, SEARCH_TOOL, TRANSLATE_TOOL
from bot.tools import Sender, Toolbox
from bot.tools.builtin import SearchBackend, SearchResult, ToolRun, run_search, run_translate
from memory.clock import Clock

__all__ = ["ToolCalls", "Used"]

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Used:
    """What a turn's tools brought in: the memories shown (to reinforce), the search results
    found (to cite)."""

    shown: list[int] = field(default_factory=list)
    found: list[SearchResult] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class ToolCalls:
    models: ModelRouter
    clock: Clock
    _: KW_ONLY
    memory: Recollector | None = None
    search: SearchBackend | None = None
    toolbox: Toolbox | None = None  # the personas' Python and MCP tools (bot/tools)

    def offered(self, persona: Persona, sender: Sender | None = None) -> list[Tool]:
        """The tools the persona may call now: declared, allowed (eco mode takes the paid
        ones away) and available here; then its Python and MCP tools this sender may use."""
        available = {
            "recall_memory": RECALL_TOOL if self.memory is not None else None,
            "web_search": SEARCH_TOOL if self.search is not None else None,
            "translate": TRANSLATE_TOOL,
        }
        allowed = self.models.tools_allowed(persona.tools)
        tools = [tool for name in allowed if (tool := available.get(name)) is not None]
        if self.toolbox is not None:
            tools += self.toolbox.tools(persona, sender or Sender(()))
        return tools

    async def prepare(self, persona: Persona) -> None:
        """The persona's MCP servers start here, the first time they are needed."""
        if self.toolbox is not None:
            await self.toolbox.prepare(persona)

    async def search_now(self, persona: Persona, query: str) -> ToolRun | None:
        """A search the message itself asks for (one model round cheaper than the model
        asking for it); None when the persona may not search."""
        if SEARCH_TOOL not in self.offered(persona):
            return None
        run = await run_search(self.search, json.dumps({"query": query}))
        log.info("search for %s (asked for): %s", persona.key, run.cost)
        return run

    async def run(
        self, persona: Persona, scope: str, call: ToolCall, used: Used, sender: Sender
    ) -> str:
        """What one call returns to the model; memories it shows join `used.shown`, search
        results `used.found`."""
        name, arguments = call.name, call.arguments
        if name in ("web_search", "translate") and name in persona.tools:
            if name == "web_search":
                run = await run_search(self.search, arguments, start=len(used.found) + 1)
            else:
                run = await run_translate(self.models, arguments)
            used.found.extend(run.results)
            log.info("tool %s for %s: %s", name, persona.key, run.cost)
            return run.text
        if name == "recall_memory" and self.memory is not None:
            try:
                result, ids = await self.memory.tool(scope, arguments, self.clock.now())
            except Exception:
                log.exception("recall_memory failed for %s", persona.key)
                return MEMORY_SILENT
            used.shown.extend(i for i in ids if i not in used.shown)
            return result
        if self.toolbox is not None:
            outcome = await self.toolbox.run(persona, scope, sender, name, arguments)
            if outcome is not None:
                return outcome.text
        return NO_SUCH_TOOL.format(name=name)
