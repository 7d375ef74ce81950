"""Tools the chat model may call besides `recall_memory`: a web search and a translator.

A persona declares the tools it may use (`tools = ["recall_memory", "web_search", "translate"]`);
eco mode takes away the ones that cost money (the search). The search is absent unless a
backend is configured: Zhipu's web-search-pro when a Zhipu provider (or ZHIPUAI_API_KEY) is
there, else an OpenAI-compatible model that searches the web itself (`[tools] search_model`).

Results are condensed before the chat model sees them (the top few, each a title, a short
snippet and its address, numbered, quoted as user text is: bot.prompts.condense), and the
numbers the reply cites become its sources line.
The translator is the tools tier told to translate faithfully; the persona then says the
translation in its own voice. A failing tool answers with a sentence the persona can pass on;
nothing here raises into the turn.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from bot.chat_model import ModelError
from bot.config import ModelsConfig, ProviderConfig, ToolsConfig
from bot.llm.router import DEFAULT_KEY_ENV, ModelRouter, ModelSetupError, provider_client
from bot.persona.toolspec import BUILTIN_TOOLS
from bot.prompts import (
    NO_QUERY,
    NO_SEARCH,
    NOTHING_TO_TRANSLATE,
    RESULTS,
    SEARCH_FAILED,
    TRANSLATION_FAILED,
    condense,
    translate_messages,
    translated,
)

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = [
    "TOOL_NAMES",
    "ModelSearch",
    "SearchBackend",
    "SearchResult",
    "ToolRun",
    "ZhipuSearch",
    "build_search",
    "cited_sources",
    "run_search",
    "run_translate",
]

log = logging.getLogger(__name__)

TOOL_NAMES: tuple[str, ...] = BUILTIN_TOOLS
# The longest a search may hold up a turn, retries included: the SDK's timeout bounds each
# read, not a server that trickles its answer.
SEARCH_DEADLINE = 90.0


@dataclass(slots=True, frozen=True)
class SearchResult:
    title: str
    url: str
    snippet: str


class SearchBackend(Protocol):
    @property
    def name(self) -> str: ...

    async def search(self, query: str) -> list[SearchResult]: ...


@dataclass(slots=True)
class ToolRun:
    """What one tool call gave the chat model, and what it cost (for the log)."""

    text: str
    cost: str
    results: list[SearchResult] = field(default_factory=list)


class ZhipuSearch:
    """Zhipu's web-search-pro, through the provider's OpenAI-compatible client (its base URL,
    key and retries): POST {base}/tools."""

    name = "zhipu web-search-pro"

    def __init__(self, client: AsyncOpenAI) -> None:
        self._client = client

    async def search(self, query: str) -> list[SearchResult]:
        body = {
            "request_id": uuid.uuid4().hex,
            "tool": "web-search-pro",
            "stream": False,
            "messages": [{"role": "user", "content": query}],
        }
        data: Any = await self._client.post("/tools", body=body, cast_to=object)
        results: list[SearchResult] = []
        for choice in _items(data, "choices"):
            for call in _items(choice.get("message"), "tool_calls"):
                if call.get("type") != "search_result":
                    continue
                for hit in _items(call, "search_result"):
                    results.append(
                        SearchResult(
                            str(hit.get("title") or hit.get("media") or ""),
                            str(hit.get("link") or ""),
                            str(hit.get("content") or ""),
                        )
                    )
        return results


class ModelSearch:
    """An OpenAI-compatible model that searches the web itself (such as OpenAI's
    gpt-4o-mini-search-preview): its answer is one result, its cited pages the others."""

    def __init__(self, client: AsyncOpenAI, model: str) -> None:
        self._client = client
        self._model = model
        self.name = f"search model {model}"

    async def search(self, query: str) -> list[SearchResult]:
        response = await self._client.chat.completions.create(
            model=self._model, messages=[{"role": "user", "content": query}]
        )
        message = response.choices[0].message if response.choices else None
        if message is None or not message.content:
            return []
        results = [SearchResult("Summary of what the search found", "", message.content)]
        for note in getattr(message, "annotations", None) or []:
            cited = getattr(note, "url_citation", None)
            if cited is not None:
                results.append(SearchResult(cited.title or cited.url, cited.url, ""))
        return results


def build_search(
    tools: ToolsConfig, models: ModelsConfig, environ: Mapping[str, str]
) -> SearchBackend | None:
    """The search backend the configuration asks for (see ToolsConfig), or None. A choice
    that cannot be met is a ModelSetupError naming the key."""
    if tools.search == "off":
        return None
    providers = models.providers
    named = providers.get(tools.search_provider) if tools.search_provider else None
    if tools.search_provider and named is None:
        raise ModelSetupError(
            "tools.search_provider", f"no provider named {tools.search_provider!r}"
        )
    zhipu = [(n, p) for n, p in providers.items() if p.kind == "zhipu" and named in (None, p)]
    wants_zhipu = tools.search == "zhipu" or (tools.search == "auto" and not tools.search_model)
    if wants_zhipu and (zhipu or environ.get(DEFAULT_KEY_ENV["zhipu"])):
        name, provider = zhipu[0] if zhipu else ("zhipu", ProviderConfig(kind="zhipu"))
        return ZhipuSearch(provider_client(name, provider, environ, max_retries=2))
    if tools.search == "zhipu":
        raise ModelSetupError("tools.search", "no Zhipu provider or ZHIPUAI_API_KEY to search with")
    if tools.search_model:
        openai = [(n, p) for n, p in providers.items() if p.kind == "openai" and named in (None, p)]
        name, provider = openai[0] if openai else ("openai", ProviderConfig(kind="openai"))
        client = provider_client(name, provider, environ, max_retries=2)
        return ModelSearch(client, tools.search_model)
    if tools.search == "model":
        raise ModelSetupError("tools.search_model", "name the model that searches")
    return None


def _items(obj: Any, key: str) -> list[dict[str, Any]]:
    """The dicts in obj[key], if obj is a dict and that is a list (a response may lack it)."""
    value = obj.get(key) if isinstance(obj, dict) else None
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def cited_sources(reply: str, results: Sequence[SearchResult]) -> str:
    """A sources line for the results (numbered in order, as the model saw them) that the
    reply cites (all of them when it cites none: it answered from them); "" when none has an
    address. An address found by two searches of one turn is listed once, with its numbers."""
    shown = list(results)
    numbers = {int(n) for n in re.findall(r"\[(\d{1,2})\]", reply)}
    chosen = [i for i in range(1, len(shown) + 1) if i in numbers] or range(1, len(shown) + 1)
    cited: dict[str, list[int]] = {}
    for i in chosen:
        if shown[i - 1].url:
            cited.setdefault(shown[i - 1].url, []).append(i)
    lines = ["".join(f"[{i}]" for i in at) + f" {url}" for url, at in cited.items()]
    return "Sources: " + " ".join(lines) if lines else ""


def _argument(arguments: str, key: str) -> str:
    try:
        value = json.loads(arguments)
    except ValueError:
        return ""
    return str(value.get(key, "")).strip() if isinstance(value, dict) else ""


async def run_search(
    backend: SearchBackend | None,
    arguments: str,
    *,
    start: int = 1,
    deadline: float = SEARCH_DEADLINE,
) -> ToolRun:
    query = _argument(arguments, "query")
    if backend is None:
        return ToolRun(NO_SEARCH, "nothing")
    if not query:
        return ToolRun(NO_QUERY, "nothing")
    try:
        async with asyncio.timeout(deadline):
            results = await backend.search(query)
    except Exception as e:  # any failure is a sentence for the persona, not an error
        log.warning("web search (%s) failed: %s", backend.name, e)
        return ToolRun(SEARCH_FAILED, "1 search (failed)")
    shown = results[:RESULTS]
    return ToolRun(condense(shown, start=start), f"1 search ({backend.name})", shown)


async def run_translate(models: ModelRouter, arguments: str) -> ToolRun:
    text = _argument(arguments, "text")
    language = _argument(arguments, "target_language") or "English"
    if not text:
        return ToolRun(NOTHING_TO_TRANSLATE, "nothing")
    messages = translate_messages(text, language)
    try:
        completion = await models.complete("tools", messages, purpose="translate")
    except ModelError as e:
        log.warning("translation failed: %s", e)
        return ToolRun(TRANSLATION_FAILED, "1 call (failed)")
    tokens = completion.usage.total_tokens
    return ToolRun(translated(language, completion.text.strip()), f"{tokens} tokens")
