"""The command table (bot/commands/table.py): every command described in English and Chinese within
Discord's limits, answers whose buttons are the table's own commands, refusals as answers,
and the persona's language in what the commands say."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from adapters import console
from bot.catalogue import MESSAGES
from bot.commands import memory as memory_commands
from bot.commands import table as commands
from memory.clock import FakeClock
from memory.records import NewIntention
from tests.fakes.factories import PLATFORMS, make_event, make_persona, open_bot, write_page

DISCORD_TEXT = 100  # characters of a slash command's or option's description


@pytest.mark.parametrize("name", sorted(commands.COMMANDS))
def test_every_command_is_described_in_english_and_chinese(name: str) -> None:
    command = commands.COMMANDS[name]
    keys = [f"help_{name}"] + [f"option_{name}_{o.name}" for o in command.options]
    for key in keys:
        assert {"en", "zh"} <= set(MESSAGES[key]), key
        assert all(0 < len(text) <= DISCORD_TEXT for text in MESSAGES[key].values()), key


def test_each_surface_lists_its_own() -> None:
    names = {p: [c.name for c in commands.offered_on(PLATFORMS[p])] for p in ("console", "discord")}
    assert "persona" in names["discord"] and "persona" not in names["console"]
    assert "help" in names["console"] and "help" not in names["discord"]  # Discord has a menu
    assert not {"cancel", "start"} & (set(names["console"]) | set(names["discord"]))


async def test_buttons_are_commands_of_the_table_run_as_who_presses(tmp_path: Path) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3")
    try:
        alice = make_event("")
        await commands.run(bot.services, alice, "remember", "my cat is called Mochi")
        listed = await commands.run(bot.services, alice, "forget", "Mochi")
        asked = await commands.run(bot.services, alice, "wipe")
        for answer in (listed, asked):
            assert answer.buttons
            assert all(b.command in commands.COMMANDS for b in answer.buttons)
        assert listed.private and not asked.private
        [pick] = listed.buttons
        bob = make_event("", user_id="u2", user_name="Bob")
        taken = await commands.run(bot.services, bob, pick.command, pick.argument)
        assert taken.text == "That memory is already gone."  # not Bob's: nothing happens
        assert await bot.bank.count("pip/discord:dm:u1") == 1
        done = await commands.run(bot.services, alice, pick.command, pick.argument)
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
            answer = await commands.run(bot.services, member, name)
            assert answer.text.startswith("What Tavern remembers here belongs to the whole")
            assert not answer.buttons and answer.file is None
        console = make_event("", persona="tavern", platform="console")
        with pytest.raises(KeyError):
            await commands.run(bot.services, console, "persona")
        with pytest.raises(KeyError):
            await commands.run(bot.services, member, "nosuchcommand")
    finally:
        await bot.close()


async def test_a_chinese_persona_says_its_days_and_pages_in_chinese(tmp_path: Path) -> None:
    miao = make_persona("miao", name="喵", language="zh")
    bot = await open_bot(tmp_path / "k.sqlite3", [miao])
    try:
        event = make_event("", persona="miao")
        scope = bot.desk.event_scope(event)
        day = date(2025, 12, 30)  # a Tuesday before the fake clock's today
        await write_page(bot.store, scope, day, "今天和主人玩了毛线球。", [])
        page = await commands.run(bot.services, event, "diary", "2025-12-30")
        assert page.text == "日记，2025-12-30（星期二）：\n今天和主人玩了毛线球。"
        later = await commands.run(bot.services, event, "diary", "2026-09-01")
        assert later.text == "2026-09-01（星期二）还没有到。"
        assert (await commands.run(bot.services, event, "profile")).text.startswith("喵还不了解你")
        said = await commands.run(bot.services, event, "remember", "主人喜欢绿茶")
        assert said.text == "喵会记住的。"
    finally:
        await bot.close()


@pytest.mark.parametrize("page", ["docs/commands.md", "README.md"])
def test_the_docs_list_every_command_the_platforms_offer(page: str) -> None:
    """docs/commands.md lists every chat command, and the README's short table does too."""
    text = (Path(__file__).parents[1] / page).read_text(encoding="utf-8")
    offered = {
        c.name
        for p in ("console", "web", "discord", "telegram")
        for c in commands.offered_on(PLATFORMS[p])
    }
    assert [name for name in sorted(offered) if not re.search(rf"`/{name}\b", text)] == []


def test_the_commands_page_lists_the_consoles_own_words() -> None:
    text = (Path(__file__).parents[1] / "docs" / "commands.md").read_text(encoding="utf-8")
    missing = [w for w in console.COMMANDS if not re.search(rf"`/?{w}\b", text)]
    assert missing == []


async def test_memories_says_why_there_are_none_yet(
    tmp_path: Path,
) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3")
    try:
        alice = make_event("")
        assert (await commands.run(bot.services, alice, "memories")).text == "No memories yet."
        await bot.engine.handle(make_event("my cat is called Mochi"))
        talking = await commands.run(bot.services, alice, "memories")
        assert talking.text.startswith("No memories yet: this conversation becomes memory once")
        await commands.run(bot.services, alice, "end")
        waiting = await commands.run(bot.services, alice, "memories")
        assert waiting.text.startswith("No memories yet: the conversation that just ended")
        assert (await commands.run(bot.services, alice, "memories", "dog")).text == (
            "No memories match."
        )
        await bot.lifecycle.encode_pending()
        after = await commands.run(bot.services, alice, "memories")
        assert "being written" not in after.text
    finally:
        await bot.close()


# --- what will be brought up later, and whether the persona may write first ---------------


async def test_intentions_lists_the_senders_own_and_cancels_by_button_or_number(
    tmp_path: Path,
) -> None:
    clock = FakeClock(datetime(2026, 12, 7, 9, 0, tzinfo=UTC))  # a Monday
    bot = await open_bot(tmp_path / "k.sqlite3", [make_persona(scope="channel")], clock=clock)
    try:
        alice = make_event("", is_dm=False)
        bob = make_event("", is_dm=False, user_id="u2", user_name="Bob")
        scope = bot.desk.event_scope(alice)  # the channel's: Alice's and Bob's alike
        due = datetime(2026, 12, 8, 18, 0, tzinfo=UTC)
        for user, what in (("u1", "her exam"), ("u1", "the trip"), ("u2", "his match")):
            await bot.store.add_intention(
                NewIntention(
                    scope, user, "follow_up", what, f"ask how {what} went", due, due, clock.now()
                )
            )
            due += timedelta(days=1)
        listed = await commands.run(bot.services, alice, "intentions")
        assert listed.private
        assert listed.text.splitlines() == [
            "1. her exam: ask how her exam went (from Tuesday 2026-12-08 18:00)",
            "2. the trip: ask how the trip went (from Wednesday 2026-12-09 18:00)",
            "To cancel one: /intentions cancel N",
        ]
        first, _ = listed.buttons
        assert first.command == "intentions" and first.label == "Cancel 1"
        pressed = await commands.run(bot.services, bob, first.command, first.argument)
        assert pressed.text == "That one is no longer waiting to be brought up."  # not Bob's
        assert len(await bot.store.intentions(scope, "u1")) == 2
        done = await commands.run(bot.services, alice, first.command, first.argument)
        assert done.text == "Cancelled: her exam. Pip won't bring it up."
        again = await commands.run(bot.services, alice, first.command, first.argument)
        assert again.text == "That one is no longer waiting to be brought up."
        assert (await commands.run(bot.services, alice, "intentions", "cancel 3")).text == (
            "Pick a number from 1 to 1."
        )
        typed = await commands.run(bot.services, alice, "intentions", "cancel 1")
        assert typed.text == "Cancelled: the trip. Pip won't bring it up."
        none = await commands.run(bot.services, alice, "intentions")
        assert none.text.startswith("Nothing to bring up later.") and not none.buttons
        assert [i.what for i in await bot.store.intentions(scope)] == ["his match"]
    finally:
        await bot.close()


async def test_export_holds_the_askers_pending_intentions_here_and_no_one_elses(
    tmp_path: Path,
) -> None:
    clock = FakeClock(datetime(2026, 12, 7, 9, 0, tzinfo=UTC))
    bot = await open_bot(tmp_path / "k.sqlite3", [make_persona(scope="channel")], clock=clock)
    try:
        alice = make_event("", is_dm=False, admin=True)  # the channel's memory is hers to export
        channel = bot.desk.event_scope(alice)
        dm = bot.desk.event_scope(make_event(""))
        due = datetime(2026, 12, 8, 18, 0, tzinfo=UTC)
        for scope, user, what in (
            (channel, "u1", "her exam"),
            (channel, "u1", "the trip"),  # cancelled below
            (channel, "u2", "his match"),  # Bob's, in the same shared memory
            (dm, "u1", "her secret"),  # hers, but of another scope
        ):
            ask = f"ask about {what}"
            await bot.store.add_intention(
                NewIntention(scope, user, "follow_up", what, ask, due, due, clock.now())
            )
        [_, trip] = await bot.store.intentions(channel, "u1")
        await bot.store.close_intention(channel, trip.id, "cancelled", clock.now())
        await memory_commands.remember(bot.services, alice, "the channel meets on Fridays")
        said, data = await memory_commands.export(bot.services, alice)
        exported = json.loads(data)
        assert said == "1 memory."
        assert [m["text"] for m in exported["memories"]] == ["the channel meets on Fridays"]
        [mine] = exported["intentions"]
        assert mine["what"] == "her exam" and mine["ask"] == "ask about her exam"
        assert (mine["kind"], mine["due_at"], mine["yearly"]) == (
            "follow_up",
            due.isoformat(),
            False,
        )
        _, private = await memory_commands.export(bot.services, make_event(""))
        assert [i["what"] for i in json.loads(private)["intentions"]] == ["her secret"]
    finally:
        await bot.close()


async def test_quiet_and_timezone_are_the_senders_own_and_in_the_personas_language(
    tmp_path: Path,
) -> None:
    miao = make_persona("miao", name="喵", language="zh")
    bot = await open_bot(tmp_path / "k.sqlite3", [make_persona(), miao])
    try:
        alice = make_event("")
        assert (await commands.run(bot.services, alice, "quiet")).text.startswith(
            "Pip may message you first"
        )
        said = await commands.run(bot.services, alice, "quiet", "on")
        assert said.text == "Pip won't message you first. /quiet off allows it again."
        assert (await commands.run(bot.services, alice, "quiet")).text == said.text
        assert (await commands.run(bot.services, alice, "quiet", "maybe")).text == (
            "Say /quiet on or /quiet off."
        )
        contact = await bot.store.contact("pip", "discord", "u1")
        assert contact is not None and contact.quiet
        assert await bot.store.contact("miao", "discord", "u1") is None  # Pip's, not Miao's

        assert (await commands.run(bot.services, alice, "timezone")).text.startswith(
            "No time zone set"
        )
        wrong = await commands.run(bot.services, alice, "timezone", "Mars/Olympus")
        assert wrong.text.startswith("'Mars/Olympus' is not a time zone I know")
        assert (
            await commands.run(bot.services, alice, "timezone", "../../etc/passwd")
        ).text.startswith("'../../etc/passwd' is not a time zone")
        set_ = await commands.run(bot.services, alice, "timezone", "asia/shanghai")
        assert set_.text.startswith("Your time zone is now Asia/Shanghai")
        now = await commands.run(bot.services, alice, "timezone")
        assert now.text == "Your time zone: Asia/Shanghai."
        contact = await bot.store.contact("pip", "discord", "u1")
        assert contact is not None and contact.timezone == "Asia/Shanghai" and contact.quiet

        zh = make_event("", persona="miao")
        assert (await commands.run(bot.services, zh, "quiet", "off")).text.startswith(
            "喵偶尔会主动给你发消息"
        )
        assert (await commands.run(bot.services, zh, "intentions")).text.startswith(
            "暂时没有之后要提起的事"
        )
    finally:
        await bot.close()


async def test_intentions_show_in_the_time_zone_the_user_set(tmp_path: Path) -> None:
    clock = FakeClock(datetime(2026, 12, 7, 9, 0, tzinfo=UTC))
    bot = await open_bot(tmp_path / "k.sqlite3", clock=clock)
    try:
        alice = make_event("")
        due = datetime(2026, 12, 8, 18, 0, tzinfo=UTC)
        scope = bot.desk.event_scope(alice)
        await bot.store.add_intention(
            NewIntention(scope, "u1", "reminder", "call mum", "call mum", due, due, clock.now())
        )
        await commands.run(bot.services, alice, "timezone", "Asia/Shanghai")
        listed = await commands.run(bot.services, alice, "intentions")
        assert listed.text.splitlines()[0] == "1. Reminder: call mum (Wednesday 2026-12-09 02:00)"
    finally:
        await bot.close()
