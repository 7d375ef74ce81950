"""A FakeOpenAI that tells what each chat request is for and answers it slowly, so a test
can act while a model call is in flight (the crash harness kills `kizuna` then).

Requests are sorted by what the summary tier is asked: an encoding request (it begins with
memory.encoding.encoder.ENCODING_TASK) is answered with the JSON object the encoder wants, one
memory per word of the conversation that starts with `MARK` (a test's unique tag); every
other request is a chat turn, answered by the usual echo. Each request waits `delay`
seconds before it is answered and first sets the `started` event of its purpose.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from typing import Any, Literal

from aiohttp import web

from memory.encoding.encoder import ENCODING_TASK
from tests.fakes.openai_server import FakeOpenAI, echo_reply

__all__ = ["MARK", "PhasedOpenAI", "Purpose", "encoded_text", "marks"]

Purpose = Literal["chat", "encoding"]
MARK = "zq"  # tags start with this: words no language uses
_TAG = re.compile(rf"\b{MARK}[a-z0-9]+\b")
_DAY = re.compile(r"starting with the date (\d{4}-\d{2}-\d{2})")


def marks(text: str) -> list[str]:
    """The tags in `text`, in order, each once."""
    return list(dict.fromkeys(_TAG.findall(text)))


def encoded_text(tag: str) -> str:
    """The memory an encoding makes of the message tagged `tag` (after its date stamp): the
    tag alone, so no two such memories are alike enough to be merged."""
    return tag


class PhasedOpenAI(FakeOpenAI):
    def __init__(self, *, delay: float = 0.3) -> None:
        super().__init__(default_reply=_answer)
        self.delay = delay
        self.started: dict[Purpose, asyncio.Event] = {
            "chat": asyncio.Event(),
            "encoding": asyncio.Event(),
        }
        self.counts: Counter[Purpose] = Counter()
        self.in_flight: Counter[Purpose] = Counter()  # requests not answered yet
        self.asked: set[str] = set()  # tags of the messages chat requests answered

    def arm(self) -> None:
        """Clear the `started` events, to wait for the next request of a purpose."""
        for event in self.started.values():
            event.clear()

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()  # aiohttp keeps the body: the fake reads it again
        messages = body.get("messages") or [{}]
        purpose: Purpose = (
            "encoding" if ENCODING_TASK in str(messages[0].get("content")) else "chat"
        )
        self.counts[purpose] += 1
        if purpose == "chat":
            last = [m for m in messages if m.get("role") == "user"][-1:]
            self.asked.update(marks(str(last[0].get("content"))) if last else [])
        self.started[purpose].set()
        self.in_flight[purpose] += 1
        try:
            await asyncio.sleep(self.delay)
            return await super()._chat(request)
        finally:
            self.in_flight[purpose] -= 1


def _answer(body: dict[str, Any]) -> str:
    messages = body.get("messages") or [{}]
    system = str(messages[0].get("content") or "")
    if ENCODING_TASK not in system:
        return echo_reply(body)
    return json.dumps(_encoding(system, str(messages[-1].get("content"))))


def _encoding(system: str, transcript: str) -> dict[str, Any]:
    """The encoder's JSON for a conversation: a memory for each tag the users said."""
    found = _DAY.search(system)
    day = found.group(1) if found else ""
    said = transcript.partition("The conversation:")[2]
    return {
        "memories": [
            {
                "text": f"{day} {encoded_text(tag)}".strip(),
                "category": "personal_daily",
                "importance": 2,
                "emotion": 0,
            }
            for tag in marks(said)
        ][:5],
        "diary": f"{day}: we talked.",
        "profiles": {},
        "recap": "We talked.",
    }
