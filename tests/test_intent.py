"""What a message wants (bot/turn/intent.py): the free local decision, the intent tier's JSON parsed
robustly, and what each decision does to the turn (a search run at once, translation mode,
deep recall when the model says so)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.config import EngineConfig
from bot.prompts import INTENT_TASK, SEARCHED_HEADING
from bot.tools.builtin import SearchResult
from bot.turn.intent import Decision, decide, decide_locally, parse_decision
from tests.fakes.factories import make_event, make_persona, open_bot
from tests.fakes.models import ScriptedChatModel, make_router

NOW = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("hi, how was your day?", "chat"),
        ("translate 'good night' into French", "translation"),
        ("how do you say thank you in Japanese?", "translation"),
        ("帮我翻译一下这句话", "translation"),
        ("用英语怎么说「谢谢」", "translation"),
        ("can you look up the ferry times to Bergen?", "web_search"),
        ("search for the latest news on the elections", "web_search"),
        ("帮我搜索一下明天的天气", "web_search"),
        ("what did I tell you yesterday?", "date_memory"),
        ("上周三我说了什么？", "date_memory"),
        ("do you remember my sister's name?", "keyword_memory"),
        ("你还记得我养的猫叫什么吗？", "keyword_memory"),
    ],
)
def test_the_local_decision(text: str, intent: str) -> None:
    assert decide_locally(text, NOW).intent == intent


def test_the_local_decision_finds_the_target_language() -> None:
    assert decide_locally("translate this into German please", NOW).target_language == "German"
    assert decide_locally("翻成日语", NOW).target_language == "日语"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            '{"intent": "web_search", "query": "Oslo weather"}',
            Decision("web_search", "Oslo weather", by_model=True),
        ),
        (
            'Sure! ```json\n{"intent": "translation", "target_language": "English"}\n```',
            Decision("translation", target_language="English", by_model=True),
        ),
        ('{"intent": "dance"}', None),
        ("I think they just want to chat.", None),
        ('{"intent": "chat", "query": null}', Decision("chat", by_model=True)),
        ("{not json}", None),
        ('["chat"]', None),
    ],
)
def test_the_intent_tiers_json_is_parsed_robustly(reply: str, expected: Decision | None) -> None:
    assert parse_decision(reply) == expected


async def test_the_model_decides_when_asked_and_a_bad_answer_falls_back() -> None:
    model = ScriptedChatModel(['{"intent": "keyword_memory", "query": "sister"}', "no idea"])
    router = make_router(model)
    asked = await decide("hello", NOW, None, models=router, by_model=True)
    assert asked == Decision("keyword_memory", "sister", by_model=True)
    assert model.calls[0].messages[0].content == INTENT_TASK and model.calls[0].json_mode
    fallback = await decide("look up the ferry", NOW, None, models=router, by_model=True)
    assert fallback.intent == "web_search" and not fallback.by_model  # the local one
    assert (await decide("hello", NOW, None, models=router, by_model=False)).intent == "chat"
    assert len(model.calls) == 2  # local decisions cost no call


class FoundSearch:
    name = "test search"

    def __init__(self) -> None:
        self.queries: list[str] = []

    async def search(self, query: str) -> list[SearchResult]:
        self.queries.append(query)
        return [SearchResult("Ferry times", "https://ferry.example", "Daily at 7:40.")]


async def test_a_search_request_is_searched_before_the_model_answers(tmp_path: Path) -> None:
    pip = make_persona("pip", name="Pip", tools=["web_search"])
    bot = await open_bot(tmp_path / "k.sqlite3", [pip])
    search = FoundSearch()
    bot.engine.calls.search = search
    try:
        bot.model.push("[HAPPY] The ferry leaves daily at 7:40 [1].")
        reply = await bot.engine.handle(make_event("can you look up the ferry times to Bergen?"))
        assert search.queries == ["can you look up the ferry times to Bergen?"]
        [call] = bot.model.calls  # one model call: no tool round needed
        assert SEARCHED_HEADING in call.system
        assert '[1] "Ferry times" ("https://ferry.example"): "Daily at 7:40."' in call.text
        assert reply.text.endswith("Sources: [1] https://ferry.example")
        # Without the tool (or in eco mode) nothing is searched.
        bot.engine.models.eco_mode = True
        await bot.engine.handle(make_event("look up the ferry again"))
        assert len(search.queries) == 1
    finally:
        await bot.close()


async def test_translation_mode_and_the_models_memory_decision(tmp_path: Path) -> None:
    settings = EngineConfig(timezone="UTC", intent="model")
    bot = await open_bot(tmp_path / "k.sqlite3", settings=settings)
    try:
        bot.model.push(
            '{"intent": "translation", "target_language": "French"}', "[HAPPY] Bonne nuit!"
        )
        await bot.engine.handle(make_event("say good night for me, the French way"))
        chat = bot.model.calls[-1]
        assert 'They are asking for a translation into "French"' in chat.system
        # The model's keyword_memory decision asks for deep recall even when something came.
        assert bot.engine.memory is not None
        await bot.engine.memory.bank.remember("pip/discord:dm:u1", "Alice's sister is Maya")
        bot.model.push(
            '{"intent": "keyword_memory", "query": "sister"}',
            '{"queries": ["sister"]}',
            "[NEUTRAL] Maya, of course.",
        )
        bot.model.calls.clear()
        await bot.engine.handle(make_event("Alice's sister is lovely"))
        kinds = [c.messages[0].content.split(".")[0] for c in bot.model.calls]
        assert kinds[0] == INTENT_TASK.split(".")[0]
        assert any("Split the user's question" in c.messages[0].content for c in bot.model.calls)
    finally:
        await bot.close()
