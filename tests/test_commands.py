"""The command table (bot/commands.py): every command described in English and Chinese within
Discord's limits, answers whose buttons are the table's own commands, refusals as answers,
and the persona's language in what the commands say."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from bot import commands
from bot.catalogue import MESSAGES
from tests.fakes.factories import make_event, make_persona, open_bot, write_page

DISCORD_TEXT = 100  # characters of a slash command's or option's description


@pytest.mark.parametrize("name", sorted(commands.COMMANDS))
def test_every_command_is_described_in_english_and_chinese(name: str) -> None:
    command = commands.COMMANDS[name]
    keys = [f"help_{name}"] + [f"option_{name}_{o.name}" for o in command.options]
    for key in keys:
        assert {"en", "zh"} <= set(MESSAGES[key]), key
        assert all(0 < len(text) <= DISCORD_TEXT for text in MESSAGES[key].values()), key


def test_each_surface_lists_its_own() -> None:
    names = {p: [c.name for c in commands.offered_on(p)] for p in ("console", "discord")}
    assert "persona" in names["discord"] and "persona" not in names["console"]
    assert "help" in names["console"] and "help" not in names["discord"]  # Discord has a menu
    assert not {"cancel", "start"} & (set(names["console"]) | set(names["discord"]))


async def test_buttons_are_commands_of_the_table_run_as_who_presses(tmp_path: Path) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3")
    try:
        alice = make_event("")
        await commands.run(bot.engine, alice, "remember", "my cat is called Mochi")
        listed = await commands.run(bot.engine, alice, "forget", "Mochi")
        asked = await commands.run(bot.engine, alice, "wipe")
        for answer in (listed, asked):
            assert answer.buttons
            assert all(b.command in commands.COMMANDS for b in answer.buttons)
        assert listed.private and not asked.private
        [pick] = listed.buttons
        bob = make_event("", user_id="u2", user_name="Bob")
        taken = await commands.run(bot.engine, bob, pick.command, pick.argument)
        assert taken.text == "That memory is already gone."  # not Bob's: nothing happens
        assert await bot.bank.count("pip/discord:dm:u1") == 1
        done = await commands.run(bot.engine, alice, pick.command, pick.argument)
        assert done.text == "Forgotten: my cat is called Mochi"
    finally:
        await bot.close()


async def test_a_refusal_is_the_answer_and_a_command_is_offered_where_it_belongs(
    tmp_path: Path,
) -> None:
    tavern = make_persona("tavern", name="Tavern", scope="channel")
    bot = await open_bot(tmp_path / "k.sqlite3", [tavern])
    try:
        member = make_event("", persona="tavern", is_dm=False)
        for name in ("wipe", "export"):
            answer = await commands.run(bot.engine, member, name)
            assert answer.text.startswith("What Tavern remembers here belongs to the whole")
            assert not answer.buttons and answer.file is None
        console = make_event("", persona="tavern", platform="console")
        with pytest.raises(KeyError):
            await commands.run(bot.engine, console, "persona")
        with pytest.raises(KeyError):
            await commands.run(bot.engine, member, "nosuchcommand")
    finally:
        await bot.close()


async def test_a_chinese_persona_says_its_days_and_pages_in_chinese(tmp_path: Path) -> None:
    miao = make_persona("miao", name="喵", language="zh")
    bot = await open_bot(tmp_path / "k.sqlite3", [miao])
    try:
        event = make_event("", persona="miao")
        scope = bot.engine.event_scope(event)
        day = date(2025, 12, 30)  # a Tuesday before the fake clock's today
        await write_page(bot.store, scope, day, "今天和主人玩了毛线球。", [])
        page = await commands.run(bot.engine, event, "diary", "2025-12-30")
        assert page.text == "日记，2025-12-30（星期二）：\n今天和主人玩了毛线球。"
        later = await commands.run(bot.engine, event, "diary", "2026-09-01")
        assert later.text == "2026-09-01（星期二）还没有到。"
        assert (await commands.run(bot.engine, event, "profile")).text.startswith("喵还不了解你")
        said = await commands.run(bot.engine, event, "remember", "主人喜欢绿茶")
        assert said.text == "喵会记住的。"
    finally:
        await bot.close()


def test_the_readme_lists_every_command_the_platforms_offer() -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    offered = {c.name for p in ("discord", "telegram") for c in commands.offered_on(p)}
    assert [name for name in sorted(offered) if f"`/{name}`" not in readme] == []


async def test_memories_says_why_there_are_none_yet(
    tmp_path: Path,
) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3")
    try:
        alice = make_event("")
        assert (await commands.run(bot.engine, alice, "memories")).text == "No memories yet."
        await bot.engine.handle(make_event("my cat is called Mochi"))
        talking = await commands.run(bot.engine, alice, "memories")
        assert talking.text.startswith("No memories yet: this conversation becomes memory once")
        await commands.run(bot.engine, alice, "end")
        waiting = await commands.run(bot.engine, alice, "memories")
        assert waiting.text.startswith("No memories yet: the conversation that just ended")
        assert (await commands.run(bot.engine, alice, "memories", "dog")).text == (
            "No memories match."
        )
        await bot.lifecycle.encode_pending()
        after = await commands.run(bot.engine, alice, "memories")
        assert "being written" not in after.text
    finally:
        await bot.close()
