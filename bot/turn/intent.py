"""What a message wants, decided before the persona answers: plain chat, something from memory
(by keyword or by date), a web search, or a translation.

By default the decision is local and free: dates through memory.dates, questions about the past
through bot.conversation.recollect, and a few phrases for search and translation requests, in
English and Chinese. With `[engine] intent = "model"` the intent tier decides (Miao's JSON
intents), one call a message; a reply it cannot parse falls back to the local decision, never to
an error.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Literal, get_args

from bot.chat_model import ModelError
from bot.conversation.recollect import about_the_past
from bot.llm.router import ModelRouter
from bot.prompts import intent_messages
from memory.dates import find_dates

__all__ = [
    "INTENTS",
    "Decision",
    "IntentName",
    "decide",
    "decide_locally",
    "parse_decision",
]

log = logging.getLogger(__name__)

IntentName = Literal["chat", "keyword_memory", "date_memory", "web_search", "translation"]
INTENTS: tuple[str, ...] = get_args(IntentName)

_TRANSLATE = re.compile(
    r"\btranslat\w*\b|\bhow (?:do|would) (?:you|I) say\b|\bin (?:english|chinese|japanese|"
    r"french|german|spanish|korean)\s*\??\s*$|翻译|翻成|译成|用(?:英语|英文|中文|日语|法语|德语|韩语)怎么说",
    re.IGNORECASE,
)
_SEARCH = re.compile(
    r"\b(?:search|google|look (?:it |that )?up|look up)\b|\blatest news\b|\bnews (?:about|on)\b|"
    r"搜索|搜一下|查一下|查查|上网查|最新消息|新闻",
    re.IGNORECASE,
)
_LANGUAGE = re.compile(
    r"\b(?:into|to|in)\s+(english|chinese|japanese|french|german|spanish|korean)\b|"
    r"(?:成|用)(英语|英文|中文|日语|法语|德语|韩语)",
    re.IGNORECASE,
)


@dataclass(slots=True, frozen=True)
class Decision:
    intent: IntentName
    query: str = ""  # what to recall or search for
    target_language: str = ""  # for a translation
    by_model: bool = False


def decide_locally(text: str, now: datetime, tz: tzinfo | None = None) -> Decision:
    """The free decision: phrases for translation and search, then dates, then questions
    about the past."""
    if _TRANSLATE.search(text):
        found = _LANGUAGE.search(text)
        language = next((g for g in found.groups() if g), "") if found else ""
        return Decision("translation", target_language=language)
    if _SEARCH.search(text):
        return Decision("web_search", query=text.strip()[:200])
    if find_dates(text, now.astimezone(tz) if tz else now):
        return Decision("date_memory")
    if about_the_past(text):
        return Decision("keyword_memory", query=text.strip()[:200])
    return Decision("chat")


def parse_decision(reply: str) -> Decision | None:
    """The intent tier's JSON, found in whatever it wrote around it; None if there is no
    usable decision in it."""
    match = re.search(r"\{.*\}", reply, re.DOTALL)
    if match is None:
        return None
    try:
        value = json.loads(match.group(0))
    except ValueError:
        return None
    if not isinstance(value, dict) or value.get("intent") not in INTENTS:
        return None
    intent: IntentName = value["intent"]
    return Decision(
        intent,
        query=str(value.get("query") or "").strip()[:200],
        target_language=str(value.get("target_language") or "").strip()[:40],
        by_model=True,
    )


async def decide(
    text: str,
    now: datetime,
    tz: tzinfo | None,
    *,
    models: ModelRouter,
    by_model: bool,
) -> Decision:
    """The decision for a message: the intent tier's when `by_model` (falling back to the
    local one when it fails or answers nonsense), else the local one."""
    local = decide_locally(text, now, tz)
    if not by_model:
        return local
    messages = intent_messages(text)
    try:
        completion = await models.complete("intent", messages, json_mode=True, purpose="intent")
    except ModelError as e:
        log.info("the intent model failed (%s); deciding locally", e)
        return local
    decision = parse_decision(completion.text)
    if decision is None:
        log.info("the intent model answered no usable JSON; deciding locally")
        return local
    return decision
