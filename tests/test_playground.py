"""`python -m tests.fakes`, the playground a host tries a setup in before registering a bot
(tests/fakes/__main__.py): members who speak plainly or mention the bot, buttons pressed, and
a model that calls a persona's tools (tests/fakes/playground.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bot.config import Config, ModelsConfig, ProviderConfig, TierConfig
from bot.persona.file import PersonaLibrary
from bot.runtime.assemble import open_runtime
from tests.fakes.__main__ import GROUP, Playground, say
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.factories import PLATFORMS, make_event, no_ollama
from tests.fakes.openai_server import FakeOpenAI, FakeToolCall, ToolCalls
from tests.fakes.playground import ToolUsingModel, arguments_for
from tests.fakes.telegram_server import FakeTelegram

SCHEMA = {"properties": {"notation": {"type": "string"}}, "required": ["notation"]}


async def test_the_playground_model_calls_the_tool_a_message_names(tmp_path: Path) -> None:
    master = PersonaLibrary.default(tmp_path).load("dungeon_master")  # tools: dice
    async with FakeOpenAI(respond=ToolUsingModel()) as fake:
        provider = ProviderConfig(kind="openai", base_url=fake.base_url)
        models = ModelsConfig(
            providers={"playground": provider},
            chat=TierConfig(provider="playground", model="fake-chat"),
        )
        config = Config(data_dir=str(tmp_path / "data"), models=models)
        runtime = await open_runtime(
            config,
            {"dungeon_master": master},
            {},
            platforms=PLATFORMS,
            seed=1,
            probe=no_ollama,
        )
        try:
            engine = runtime.engine
            event = make_event("dice 2d6", persona="dungeon_master", platform="console")
            reply = await engine.handle(event)
            offered = [t["function"]["name"] for t in fake.chat_requests[-2]["tools"]]
            assert "dice" in offered
            called = fake.chat_requests[-1]["messages"]
            assert called[-1]["role"] == "tool" and "2d6" in called[-1]["content"]
            assert reply.text == called[-1]["content"]  # what the tool answered, said
            plain = await engine.handle(make_event("hello", persona="dungeon_master"))
            assert "offline model" in plain.text  # no tool named: answered as offline
        finally:
            await runtime.close()


async def test_a_quoted_group_line_names_the_tool_and_its_arguments() -> None:
    body = {
        "messages": [{"role": "user", "content": 'Bob: "DM, dice 2d6"'}],
        "tools": [{"type": "function", "function": {"name": "dice", "parameters": SCHEMA}}],
    }
    called = await ToolUsingModel()(body)
    assert isinstance(called, ToolCalls)
    assert called.calls == (FakeToolCall("dice", {"notation": "2d6"}),)


def test_tool_arguments_come_from_the_words_after_its_name() -> None:
    schema = {
        "properties": {"notation": {"type": "string"}, "times": {"type": "integer"}},
        "required": ["notation", "times"],
    }
    assert arguments_for(schema, "2d6 three 3 times") == {
        "notation": "2d6 three 3 times",
        "times": 2,
    }


async def test_members_speak_plainly_or_mention_the_bot_and_press_buttons() -> None:
    async with FakeDiscord() as discord, FakeTelegram() as telegram:
        play = Playground(discord, telegram)
        await say("user 43 Bob", play)
        await say("telegram-group lovely weather", play)
        await say("telegram-group @bot what do you think?", play)
        plain, mention = telegram.queued[-2:]
        assert plain["message"]["chat"]["id"] == GROUP and "entities" not in plain["message"]
        assert plain["message"]["from"] == {"id": 43, "is_bot": False, "first_name": "Bob"}
        assert mention["message"]["text"] == f"@{telegram.username} what do you think?"
        assert mention["message"]["entities"][0]["type"] == "mention"
        assert discord.user(43)["global_name"] == "Bob"
        asked = {
            "chat": {"id": 43, "type": "private"},
            "message_id": 7,
            "reply_markup": {
                "inline_keyboard": [
                    [
                        {"text": "Wipe", "callback_data": "w"},
                        {"text": "Cancel", "callback_data": "c"},
                    ]
                ]
            },
        }
        play.buttons = ("telegram", asked)
        await say("press 2", play)
        query = telegram.queued[-1]["callback_query"]
        assert query["data"] == "c" and query["from"]["id"] == 43


def test_its_help_lists_every_line_one_a_line() -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "tests.fakes", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    for line in (
        "    press LABEL ",
        "    discord TEXT ",
        "    user N [NAME] ",
        "    telegram-group ",
    ):
        assert f"\n{line}" in shown, line
