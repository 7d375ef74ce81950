"""The Telegram adapter end to end: the real python-telegram-bot client against the loopback
Bot API fake, with a test engine (scripted model, real memory bank) behind it."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, replace
from datetime import timedelta
from io import BytesIO
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from PIL import Image
from telegram.error import InvalidToken

from adapters.telegram import TelegramAdapter, Webhook, webhook_secret
from bot.access import Gate
from bot.catalogue import say
from bot.commands import memory as memory_commands
from bot.commands import table as commands
from bot.config import TIERS, AccessConfig, EngineConfig
from bot.llm.offline import OfflineChatModel
from bot.llm.router import ModelRouter
from bot.persona.file import VoicePolicy
from bot.persona.toolspec import CustomTool
from bot.prompts import DOCUMENT_HEADING
from bot.prompts.tools import TOOL_ADMINS_ONLY, TOOL_FOR_ONE
from memory.records import NewIntention
from tests.fakes.factories import (
    PLATFORMS,
    Bot,
    make_event,
    make_persona,
    make_picture,
    open_bot,
    speaking_router,
    tool_persona,
    with_tools,
)
from tests.fakes.logs import logged_errors
from tests.fakes.models import ModelCall, ScriptedChatModel, calling
from tests.fakes.openai_server import FakeOpenAI, HttpError, ogg_opus
from tests.fakes.platforms import telegram_adapter
from tests.fakes.process import free_port
from tests.fakes.secrets import TELEGRAM_TOKEN, WEBHOOK_SECRET
from tests.fakes.telegram_server import CHANNEL_BOT, SERVICE, FakeTelegram

MP3 = b"ID3\x04\x00" + bytes(300)  # audio a speech server may send instead of OGG

GROUP = -1001
ALICE, BOB = 7, 8


@dataclass
class Harness:
    fake: FakeTelegram
    bot: Bot
    adapter: TelegramAdapter


@pytest.fixture(autouse=True)
def no_errors() -> Iterator[list[logging.LogRecord]]:
    """Errors inside handlers are only logged: any ERROR from PTB or the adapter fails."""
    with logged_errors("telegram", "adapters.telegram") as records:
        yield records


@pytest.fixture
def model() -> ScriptedChatModel:
    return ScriptedChatModel()


@pytest.fixture
async def tg(tmp_path: Path, model: ScriptedChatModel) -> AsyncIterator[Harness]:
    bot = await open_bot(tmp_path / "k.sqlite3", model=model)
    async with FakeTelegram() as fake:
        adapter = telegram_adapter(bot, fake)
        await adapter.start()
        try:
            yield Harness(fake, bot, adapter)
        finally:
            await adapter.close()
            await bot.close()


async def test_private_message_gets_a_reply_after_typing(tg: Harness) -> None:
    tg.fake.send_text(ALICE, ALICE, "hello Pip")
    [sent] = await tg.fake.next_messages()
    assert sent["text"] == "ok"
    assert sent["chat"]["id"] == ALICE
    methods = [r.method for r in tg.fake.requests]
    typing = methods.index("sendChatAction")
    assert typing < methods.index("sendMessage")
    assert tg.fake.requests[typing].params["action"] == "typing"
    # The model saw the user by first name; the session is keyed by the platform id.
    [call] = tg.bot.model.calls
    assert "hello Pip" in call.text
    assert "telegram:dm:7" in {s.scope for s in tg.bot.sessions.all()}


async def test_a_message_delivered_again_after_a_crash_is_answered_once(tg: Harness) -> None:
    first = tg.fake.send_text(ALICE, ALICE, "hello Pip")
    [sent] = await tg.fake.next_messages()
    remember = tg.fake.send_text(ALICE, ALICE, "/remember my cat is called Mochi")
    [kept] = await tg.fake.next_messages()
    tg.fake.deliver_again(first)
    tg.fake.deliver_again(remember)
    tg.fake.send_text(ALICE, ALICE, "still there?")
    answers = sorted(m["text"] for m in await tg.fake.next_messages(2))  # run concurrently

    assert answers == sorted([kept["text"], "ok"])  # /remember confirmed again, kept once
    assert sent["text"] == "ok"
    assert len(tg.bot.model.calls) == 2
    assert await tg.bot.bank.count("pip/telegram:dm:7") == 1
    turns = (await tg.bot.desk.info(make_event(platform="telegram", user_id="7"))).turns
    assert [t.text for t in turns if t.role == "user"] == ["hello Pip", "still there?"]


async def test_group_answers_only_when_addressed_and_hears_the_rest(tg: Harness) -> None:
    tg.fake.send_text(GROUP, ALICE, "just chatting among us", chat_type="group")
    mention = tg.fake.send_text(GROUP, ALICE, "hey @pip_bot how are you", chat_type="group")
    [sent] = await tg.fake.next_messages()
    assert sent["chat"]["id"] == GROUP
    assert sent["reply_to_message_id"] == mention["message_id"]  # quoted, in a group
    assert len(tg.bot.model.calls) == 1
    assert len(tg.fake.calls("sendChatAction")) == 1
    assert "hey how are you" in tg.bot.model.calls[0].text
    # Heard, not answered: it joined the conversation, so the persona sees it and remembers.
    assert "just chatting" in tg.bot.model.calls[0].text
    # A reply to the bot's message addresses it too, without a mention.
    tg.fake.send_text(GROUP, BOB, "and me?", chat_type="group", reply_to=sent)
    [again] = await tg.fake.next_messages()
    assert again["text"] == "ok"
    assert len(tg.bot.model.calls) == 2


async def test_remember_then_recall(tg: Harness) -> None:
    tg.fake.send_text(ALICE, ALICE, "/remember my cat is called Mochi")
    [said] = await tg.fake.next_messages()
    assert "remember" in said["text"]
    tg.fake.send_text(ALICE, ALICE, "/recall cat")
    [recalled] = await tg.fake.next_messages()
    assert "my cat is called Mochi" in recalled["text"]
    tg.fake.send_text(ALICE, ALICE, "/memories")
    [listed] = await tg.fake.next_messages()
    assert "Mochi" in listed["text"]
    assert not tg.bot.model.calls  # commands never reach the chat model


async def test_commands_with_bot_name_in_a_group(tg: Harness) -> None:
    tg.fake.send_text(GROUP, ALICE, "/remember@pip_bot I like tea", chat_type="supergroup")
    await tg.fake.next_messages()
    tg.fake.send_text(ALICE, ALICE, "/start")  # so the bot may write to her privately
    await tg.fake.next_messages()
    tg.fake.send_text(GROUP, ALICE, "/recall@pip_bot tea", chat_type="supergroup")
    recalled, told = await tg.fake.next_messages(2)
    assert "I like tea" in recalled["text"] and recalled["chat"]["id"] == ALICE
    assert told["text"] == "I sent you the answer privately." and told["chat"]["id"] == GROUP
    # A command meant for another bot is not ours.
    tg.fake.send_text(GROUP, ALICE, "/recall@other_bot tea", chat_type="supergroup")
    tg.fake.send_text(GROUP, ALICE, "/dance", chat_type="supergroup")  # maybe another bot's
    tg.fake.send_text(GROUP, ALICE, "/help", chat_type="supergroup")
    [helped] = await tg.fake.next_messages()
    assert "/remember" in helped["text"]
    tg.fake.send_text(GROUP, ALICE, "/dance@pip_bot", chat_type="supergroup")
    [unknown] = await tg.fake.next_messages()
    assert unknown["text"] == "There is no /dance command; /help lists them."
    tg.fake.send_text(ALICE, ALICE, "/dance")
    [private] = await tg.fake.next_messages()
    assert private["text"].startswith("There is no /dance command")
    assert not tg.bot.model.calls


async def test_forget_lists_then_deletes_the_chosen(tg: Harness) -> None:
    tg.fake.send_text(ALICE, ALICE, "/remember my cat is called Mochi")
    await tg.fake.next_messages()
    tg.fake.send_text(ALICE, ALICE, "/forget Mochi")
    [listed] = await tg.fake.next_messages()
    assert listed["text"].startswith("1. ")
    tg.fake.send_text(ALICE, ALICE, "/forget 1")
    [gone] = await tg.fake.next_messages()
    assert gone["text"] == "Forgotten: my cat is called Mochi"
    tg.fake.send_text(ALICE, ALICE, "/memories")
    [listed] = await tg.fake.next_messages()
    assert listed["text"] == "No memories yet."


async def test_a_group_forget_list_comes_privately_and_its_buttons_act_in_the_group(
    tg: Harness,
) -> None:
    group_scope = f"pip/telegram:{GROUP}:user:{ALICE}"
    tg.fake.send_text(GROUP, ALICE, "/remember my cat is called Mochi", chat_type="group")
    await tg.fake.next_messages()
    tg.fake.send_text(ALICE, ALICE, "/remember Mochi likes tuna")  # her private memory
    await tg.fake.next_messages()
    tg.fake.send_text(GROUP, ALICE, "/forget Mochi", chat_type="group")
    listed, told = await tg.fake.next_messages(2)
    assert listed["chat"]["id"] == ALICE and told["chat"]["id"] == GROUP
    assert "my cat is called Mochi" in listed["text"] and "tuna" not in listed["text"]
    assert listed["text"].endswith("Which one should be forgotten?")
    tg.fake.press(listed, "1", ALICE)  # pressed in her private chat, about the group's
    [gone] = await tg.fake.next_messages()
    assert gone["chat"]["id"] == ALICE and gone["text"] == "Forgotten: my cat is called Mochi"
    assert await tg.bot.bank.count(group_scope) == 0
    assert await tg.bot.bank.count(f"pip/telegram:dm:{ALICE}") == 1


async def test_intentions_come_privately_with_cancel_buttons_only_their_owner_may_press(
    tg: Harness,
) -> None:
    scope = f"pip/telegram:{GROUP}:user:{ALICE}"
    now = tg.bot.clock.now()
    due = now + timedelta(days=1)
    await tg.bot.store.add_intention(
        NewIntention(scope, str(ALICE), "follow_up", "her exam", "ask how it went", due, due, now)
    )
    tg.fake.send_text(ALICE, ALICE, "/start")  # a bot writes only to who started it
    await tg.fake.next_messages()
    tg.fake.send_text(GROUP, ALICE, "/intentions", chat_type="group")
    listed, told = await tg.fake.next_messages(2)
    assert listed["chat"]["id"] == ALICE and told["chat"]["id"] == GROUP
    assert "\n1. her exam: ask how it went (from " in listed["text"]
    tg.fake.press(listed, "Cancel 1", BOB)  # a forwarded list is still Alice's
    await tg.fake.until_answered()
    assert tg.fake.answered[-1]["text"] == say("en", "not_your_buttons")
    assert len(await tg.bot.store.intentions(scope, str(ALICE))) == 1
    tg.fake.press(listed, "Cancel 1", ALICE)
    [gone] = await tg.fake.next_messages()
    assert gone["text"] == "Cancelled: her exam. Pip won't bring it up."
    assert await tg.bot.store.intentions(scope, str(ALICE)) == []


async def test_a_private_chat_makes_a_contact_who_may_ask_for_quiet(tg: Harness) -> None:
    tg.fake.send_text(ALICE, ALICE, "Please stop messaging me first.")
    await tg.fake.next_messages()
    contact = await tg.bot.store.contact("pip", "telegram", str(ALICE))
    assert contact is not None and contact.private and contact.quiet
    assert not contact.unanswered
    tg.fake.send_text(ALICE, ALICE, "/quiet off")
    [said] = await tg.fake.next_messages()
    assert said["text"].startswith("Pip may message you first")
    contact = await tg.bot.store.contact("pip", "telegram", str(ALICE))
    assert contact is not None and not contact.quiet


async def test_commands_answer_in_the_personas_language(tmp_path: Path) -> None:
    miao = make_persona("miao", name="喵", language="zh")
    bot = await open_bot(tmp_path / "k.sqlite3", [miao])
    try:
        async with FakeTelegram() as fake:
            adapter = telegram_adapter(bot, fake, "miao")
            await adapter.start()
            try:
                [call] = fake.calls("setMyCommands")
                described = {c["command"]: c["description"] for c in call.params["commands"]}
                assert described["forget"] == "从符合 QUERY 的记忆里挑一条删掉"
                answers = []
                for typed in ("/profile", "/memories", "/diary", "/dance", "/wipe"):
                    fake.send_text(ALICE, ALICE, typed)  # one by one: updates run concurrently
                    answers += await fake.next_messages()
                profile, memories, diary, unknown, asked = answers
                assert profile["text"].startswith("喵还不了解你")
                assert memories["text"] == "还没有记忆。" and diary["text"] == "日记还是空的。"
                assert unknown["text"].startswith("没有 /dance 这个命令")
                assert [b["text"] for b in asked["reply_markup"]["inline_keyboard"][0]] == [
                    "清除",
                    "取消",
                ]
            finally:
                await adapter.close()
    finally:
        await bot.close()


async def test_two_users_in_a_group_keep_their_own_memories(tg: Harness) -> None:
    tg.fake.send_text(GROUP, ALICE, "/remember Alice's secret is blue", chat_type="group")
    await tg.fake.next_messages()
    tg.fake.send_text(BOB, BOB, "/start", first_name="Bob")  # answers come privately
    await tg.fake.next_messages()
    tg.fake.send_text(GROUP, BOB, "/memories", chat_type="group", first_name="Bob")
    bobs, _ = await tg.fake.next_messages(2)
    assert bobs["text"] == "(you asked in group -1001)\nNo memories yet."
    tg.fake.send_text(GROUP, BOB, "/recall secret", chat_type="group", first_name="Bob")
    recalled, _ = await tg.fake.next_messages(2)
    assert "blue" not in recalled["text"]
    # Nor does Alice's group memory surface in her private chat.
    tg.fake.send_text(ALICE, ALICE, "/memories")
    [private] = await tg.fake.next_messages()
    assert private["text"] == "No memories yet."
    tg.fake.send_text(GROUP, ALICE, "/memories", chat_type="group")
    alices, told = await tg.fake.next_messages(2)
    assert "blue" in alices["text"] and alices["chat"]["id"] == ALICE
    assert "blue" not in told["text"] and told["chat"]["id"] == GROUP


@pytest.mark.parametrize("model", [ScriptedChatModel(["[NEUTRAL] " + "word " * 1000])])
async def test_long_reply_arrives_in_two_messages(tg: Harness) -> None:
    tg.fake.send_text(ALICE, ALICE, "tell me a long story")
    first, second = await tg.fake.next_messages(2)
    assert len(first["text"]) <= 4096 and len(second["text"]) <= 4096
    assert len(first["text"]) + len(second["text"]) >= 4990


async def test_commands_are_registered(tg: Harness) -> None:
    [call] = tg.fake.calls("setMyCommands")
    listed = [c.name for c in commands.offered_on(PLATFORMS["telegram"])]
    assert [c["command"] for c in call.params["commands"]] == listed
    assert "start" not in listed and "cancel" not in listed and "export" in listed
    assert tg.fake.commands == call.params["commands"]


async def test_diary_profile_and_state(tg: Harness) -> None:
    tg.fake.send_text(ALICE, ALICE, "hi, I'm Alice")
    await tg.fake.next_messages()
    tg.fake.send_text(ALICE, ALICE, "/end")
    await tg.fake.next_messages()
    tg.bot.model.push(
        '{"memories": [], "diary": "Alice said hello.", "profiles": {"U1": "Says hello."}}'
    )
    await tg.bot.lifecycle.encode_pending()
    tg.fake.send_text(ALICE, ALICE, "/diary")
    [page] = await tg.fake.next_messages()
    assert page["text"].endswith("Alice said hello.")
    tg.fake.send_text(ALICE, ALICE, "/diary last year")
    [none] = await tg.fake.next_messages()
    assert none["text"] == "No diary page for Wednesday 2025-01-01 to Wednesday 2025-12-31."
    tg.fake.send_text(ALICE, ALICE, "/diary the day the music died")
    [unknown] = await tg.fake.next_messages()
    assert unknown["text"].startswith("Which day is")
    tg.fake.send_text(ALICE, ALICE, "/profile")
    [profile] = await tg.fake.next_messages()
    assert profile["text"].endswith("Says hello.")
    tg.fake.send_text(ALICE, ALICE, "/state")
    [state] = await tg.fake.next_messages()
    assert state["text"] == "Pip keeps no state."


async def test_other_files_are_handed_on_without_the_token(tg: Harness) -> None:
    tg.fake.send_document(ALICE, ALICE, "cat.zip", caption="my cat", mime_type="application/zip")
    [reply] = await tg.fake.next_messages()
    assert reply["text"] == "ok"
    [call] = tg.bot.model.calls
    assert call.messages[-1].content == "my cat [attachment: cat.zip]"
    assert tg.fake.token not in call.text
    assert tg.fake.calls("getFile") == []  # mentioned, not fetched


async def test_a_document_opens_document_mode(tg: Harness) -> None:
    notes = b"The ferry to Bergen leaves at 7:40 from pier 3.\n\nBring the blue ticket."
    tg.fake.send_document(ALICE, ALICE, "trip.md", caption="read this", content=notes)
    [opened] = await tg.fake.next_messages(within=5)
    assert opened["text"].startswith("I've read trip.md.")
    [summary] = tg.bot.model.calls
    assert "ferry to Bergen" in summary.text  # the summary tier read the file
    tg.fake.send_text(ALICE, ALICE, "when does the ferry leave?")
    await tg.fake.next_messages()
    asked = tg.bot.model.calls[-1].system
    assert DOCUMENT_HEADING.format(name='"trip.md"') in asked and "7:40" in asked
    # Too big: refused by its declared size, never downloaded.
    tg.fake.send_document(ALICE, ALICE, "huge.pdf", size=50 * 1024 * 1024)
    [refused] = await tg.fake.next_messages()
    assert refused["text"].startswith("huge.pdf: is too big")
    assert len(tg.fake.calls("getFile")) == 1


async def test_a_document_in_a_group_needs_a_mention_in_its_caption(tg: Harness) -> None:
    tg.fake.send_document(-5, ALICE, "a.zip", caption="for everyone", chat_type="group")
    tg.fake.send_document(-5, ALICE, "b.zip", caption="@pip_bot look", chat_type="group")
    [reply] = await tg.fake.next_messages()
    assert reply["text"] == "ok"
    [call] = tg.bot.model.calls
    assert call.messages[-1].content.endswith("look [attachment: b.zip]")


async def test_a_photo_is_fetched_shrunk_and_described(tg: Harness) -> None:
    tg.bot.model.push("A red square.", "[HAPPY] Bold choice!")
    tg.fake.send_photo(ALICE, ALICE, make_picture(2048, 1536), caption="my painting")
    [reply] = await tg.fake.next_messages()
    assert reply["text"] == "Bold choice!"
    describe, chat = tg.bot.model.calls
    [jpeg] = describe.messages[-1].images
    with Image.open(BytesIO(jpeg)) as image:
        assert image.size == (1024, 768)
    assert chat.messages[-1].content == "my painting [picture photo.jpg, seen: A red square.]"
    [fetched] = tg.fake.calls("getFile")
    assert fetched.params["file_id"] in tg.fake.files  # the largest size, not the thumbnail
    assert not fetched.params["file_id"].endswith("-thumb")
    assert tg.fake.token not in chat.text


async def test_image_files_are_pictures_and_too_big_ones_are_never_fetched(tg: Harness) -> None:
    tg.fake.send_document(
        ALICE, ALICE, "scan.png", mime_type="image/png", content=make_picture(), caption="hm"
    )
    await tg.fake.next_messages()
    assert len(tg.bot.model.calls) == 2  # described, then answered
    tg.fake.send_photo(ALICE, ALICE, b"\xff\xd8", size=30 * 1024 * 1024)
    [refused] = await tg.fake.next_messages()
    assert refused["text"].startswith("photo.jpg is too big for me to look at (30 MB;")
    assert len(tg.fake.calls("getFile")) == 1
    tg.fake.send_photo(ALICE, ALICE, b"\xff\xd8 not really a jpeg")
    [broken] = await tg.fake.next_messages()
    assert broken["text"].startswith("I couldn't open photo.jpg")
    alice = make_event(platform="telegram", user_id=str(ALICE), channel_id=str(ALICE))
    turns = (await tg.bot.desk.info(alice)).turns
    assert [t.text for t in turns if t.role == "user"][-2:] == [
        "[picture photo.jpg, not looked at]"
    ] * 2  # the messages are kept


async def test_stickers_and_gifs_are_told_by_their_emoji_and_name(tg: Harness) -> None:
    tg.fake.send_sticker(ALICE, ALICE, "😹", "CatsOfTheWorld")
    await tg.fake.next_messages()
    tg.fake.send_animation(ALICE, ALICE, "dancing-cat.mp4")
    await tg.fake.next_messages()
    first, second = tg.bot.model.calls  # no call to describe either
    assert first.messages[-1].content == "[sticker: 😹 (CatsOfTheWorld)]"
    assert second.messages[-1].content == "[GIF: dancing-cat.mp4]"
    assert tg.fake.calls("getFile") == []


async def test_export_sends_a_json_file_privately(tg: Harness) -> None:
    tg.fake.send_text(ALICE, ALICE, "/remember my cat is called Mochi")
    await tg.fake.next_messages()
    tg.fake.send_text(ALICE, ALICE, "/export")
    [sent] = await tg.fake.next_messages()
    assert sent["caption"] == "1 memory."
    exported = json.loads(sent["_bytes"])
    [memory] = exported["memories"]
    assert exported["intentions"] == []  # nothing said yet that is coming
    assert memory["text"] == "my cat is called Mochi" and memory["kind"] == "explicit"
    # Asked in a group, it comes privately too: the group hears only that it was sent.
    tg.fake.send_text(-3, ALICE, "/export", chat_type="group")
    sent, told = await tg.fake.next_messages(2)
    assert sent["chat"]["id"] == ALICE and sent["caption"] == "(you asked in group -3)\n0 memories."
    assert told["chat"]["id"] == -3 and told["text"] == "I sent you the answer privately."


async def test_end_and_wipe(tg: Harness) -> None:
    tg.fake.send_text(ALICE, ALICE, "/end")
    [none] = await tg.fake.next_messages()
    assert none["text"] == "No conversation is open."
    tg.fake.send_text(ALICE, ALICE, "hi")
    await tg.fake.next_messages()
    tg.fake.send_text(ALICE, ALICE, "/end")
    [ended] = await tg.fake.next_messages()
    assert ended["text"].startswith("Conversation ended")
    tg.fake.send_text(ALICE, ALICE, "/remember tea")
    await tg.fake.next_messages()
    tg.fake.send_text(ALICE, ALICE, "/wipe")
    [asked] = await tg.fake.next_messages()
    assert asked["text"] == "Forget this conversation and everything Pip remembers of you?"
    tg.fake.press(asked, "Cancel", ALICE)
    [cancelled] = await tg.fake.next_messages()
    assert cancelled["text"] == "Cancelled." and "reply_markup" not in cancelled
    assert await tg.bot.bank.count("pip/telegram:dm:7") == 1
    tg.fake.send_text(ALICE, ALICE, "/wipe")
    [asked] = await tg.fake.next_messages()
    tg.fake.press(asked, "Wipe", ALICE)
    [wiped] = await tg.fake.next_messages()
    assert wiped["text"] == "Wiped: Pip remembers nothing of you now."
    assert await tg.bot.bank.count("pip/telegram:dm:7") == 0
    tg.fake.send_text(ALICE, ALICE, "/memories")
    [listed] = await tg.fake.next_messages()
    assert listed["text"] == "No memories yet."


@pytest.mark.parametrize("model", [ScriptedChatModel([RuntimeError("boom")])])
async def test_a_failing_handler_apologises_and_keeps_running(
    tg: Harness, no_errors: list[logging.LogRecord]
) -> None:
    tg.fake.send_text(ALICE, ALICE, "hello")
    [sorry] = await tg.fake.next_messages()
    assert sorry["text"].startswith("Sorry")
    # The failure is logged as an ERROR by design here: take it out of the no-errors check.
    assert [r.name for r in no_errors] == ["adapters.telegram"]
    no_errors.clear()
    tg.fake.send_text(ALICE, ALICE, "hello again")
    [ok] = await tg.fake.next_messages()
    assert ok["text"] == "ok"


async def test_forget_number_out_of_range_keeps_the_choice(tg: Harness) -> None:
    tg.fake.send_text(ALICE, ALICE, "/remember tea at five")
    await tg.fake.next_messages()
    tg.fake.send_text(ALICE, ALICE, "/forget tea")
    await tg.fake.next_messages()
    tg.fake.send_text(ALICE, ALICE, "/forget 9")
    [again] = await tg.fake.next_messages()
    assert again["text"].startswith("Pick a number")
    # Another user's `/forget 1` in the same chat is not a pick from Alice's list.
    tg.fake.send_text(ALICE, BOB, "/forget 1", first_name="Bob")
    [bobs] = await tg.fake.next_messages()
    assert bobs["text"] == "No memory matches that."
    tg.fake.send_text(ALICE, ALICE, "/forget 1")
    [gone] = await tg.fake.next_messages()
    assert gone["text"] == "Forgotten: tea at five"


async def test_polls_are_held_not_spun(tg: Harness) -> None:
    """An empty getUpdates waits for its timeout (or an update) instead of answering at once."""
    tg.fake.send_text(ALICE, ALICE, "hi")
    await tg.fake.next_messages()
    assert len(tg.fake.calls("getUpdates")) <= 4
    assert all(c.params.get("timeout") == 1 for c in tg.fake.calls("getUpdates")[1:])


async def test_a_wrong_token_fails_start_cleanly(tmp_path: Path) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3")
    try:
        async with FakeTelegram() as fake:
            adapter = TelegramAdapter(
                bot.engine, bot.services, "pip", "999:wrong", bot_id="tg1", base_url=fake.base_url
            )
            with pytest.raises(InvalidToken):
                await adapter.start()
            assert not fake.calls("getUpdates")
    finally:
        await bot.close()


async def test_several_personas_and_persona_set_by_a_chat_admin(tmp_path: Path) -> None:
    personas = [make_persona("pip", name="Pip"), make_persona("bo", name="Bo")]
    bot = await open_bot(tmp_path / "k.sqlite3", personas)
    try:
        async with FakeTelegram() as fake:
            adapter = telegram_adapter(bot, fake, ["pip", "bo"], "tg-duo")
            await adapter.start()
            try:
                group, bob = -7, 88
                fake.send_text(group, ALICE, "@pip_bot hello", chat_type="group")
                [said] = await fake.next_messages()
                assert said["text"] == "Pip: ok"
                fake.send_text(group, ALICE, "@pip_bot Bo, hi!", chat_type="group")
                [said] = await fake.next_messages()
                assert said["text"] == "Bo: ok"

                fake.send_text(group, bob, "/persona set bo", chat_type="group")
                [refused] = await fake.next_messages()
                assert refused["text"] == "Only an admin of this chat can choose who talks here."
                fake.admins.add((group, ALICE))
                fake.send_text(group, ALICE, "/persona set bo", chat_type="group")
                [bound] = await fake.next_messages()
                assert bound["text"] == "From now on Bo talks in this channel."
                fake.send_text(group, bob, "@pip_bot who's there?", chat_type="group")
                [said] = await fake.next_messages()
                assert said["text"] == "Bo: ok"
                fake.send_text(group, bob, "/persona", chat_type="group")
                [shown] = await fake.next_messages()
                assert shown["text"].startswith("Here you talk with Bo (bo).")
                # Private chats keep the default persona: the binding is the group's.
                fake.send_text(ALICE, ALICE, "hi")
                [said] = await fake.next_messages()
                assert said["text"] == "Pip: ok"
            finally:
                await adapter.close()
    finally:
        await bot.close()


async def test_webhook_mode_takes_updates_with_the_secret_only(tmp_path: Path) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3")
    port = free_port()
    hook = Webhook("https://bots.example/kizuna/hook", port=port, secret=WEBHOOK_SECRET)
    try:
        async with FakeTelegram() as fake:
            adapter = TelegramAdapter(
                bot.engine,
                bot.services,
                "pip",
                fake.token,
                bot_id="tg-hook",
                base_url=fake.base_url,
                webhook=hook,
            )
            await adapter.start()
            try:
                assert fake.webhook["url"] == hook.url
                assert fake.webhook["secret_token"] == WEBHOOK_SECRET
                assert not fake.calls("getUpdates")  # no polling beside the webhook
                url = f"http://127.0.0.1:{port}/kizuna/hook"
                async with aiohttp.ClientSession() as http:
                    stranger = fake.update_for(fake.send_text(ALICE, ALICE, "not from Telegram"))
                    headers = {"X-Telegram-Bot-Api-Secret-Token": "guess"}
                    async with http.post(url, json=stranger, headers=headers) as refused:
                        assert refused.status == 403
                    update = fake.update_for(fake.send_text(ALICE, ALICE, "hello by webhook"))
                    headers = {"X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET}
                    async with http.post(url, json=update, headers=headers) as taken:
                        assert taken.status == 200
                [reply] = await fake.next_messages()
                assert reply["text"] == "ok"
                [call] = bot.model.calls
                assert call.messages[-1].content == "hello by webhook"
            finally:
                await adapter.close()
    finally:
        await bot.close()


async def test_a_blocked_user_gets_no_commands_and_a_fast_one_is_told_once(tg: Harness) -> None:
    tg.bot.engine.admission.gate = Gate(AccessConfig(messages_per_minute=2, block_users=[str(BOB)]))
    tg.fake.send_text(BOB, BOB, "/remember I like tea")
    tg.fake.send_text(ALICE, ALICE, "/remember my cat is Mochi")
    [said] = await tg.fake.next_messages()
    assert said["chat"]["id"] == ALICE and "remember" in said["text"]
    for _ in range(3):  # commands count towards the limit, like messages
        tg.fake.send_text(ALICE, ALICE, "/memories")
    texts = [m["text"] for m in await tg.fake.next_messages(2)]  # in either order
    texts.remove(say("en", "slow_down"))
    assert "Mochi" in texts[0]
    tg.fake.send_text(ALICE, ALICE, "/memories")  # told already: quiet
    tg.fake.send_text(BOB, BOB, "/help")
    with pytest.raises(TimeoutError):
        await tg.fake.next_messages(within=0.3)
    bob = make_event(platform="telegram", user_id=str(BOB), bot_id="tg1")
    assert await memory_commands.list_memories(tg.bot.services, bob) == []


async def test_one_process_polls_a_bot_and_another_takes_over_when_it_dies(
    tmp_path: Path, postgres_dsn: str
) -> None:
    """Telegram lets one process poll a bot: on a shared store the others stand by."""
    from memory.storage.postgres import PgStore

    first_bot = await open_bot(tmp_path / "a" / "k.sqlite3", model=ScriptedChatModel(["from a"]))
    second_bot = await open_bot(tmp_path / "b" / "k.sqlite3", model=ScriptedChatModel(["from b"]))
    first_store, second_store = await PgStore.open(postgres_dsn), await PgStore.open(postgres_dsn)
    try:
        async with FakeTelegram() as fake:
            first = telegram_adapter(first_bot, fake, leads=first_store.leads)
            second = telegram_adapter(
                second_bot, fake, leads=second_store.leads, standby_seconds=0.05
            )
            await first.start()
            await second.start()
            try:
                assert first.app.updater is not None and first.app.updater.running
                assert second.app.updater is not None and not second.app.updater.running
                fake.send_text(ALICE, ALICE, "hello")
                [reply] = await fake.next_messages()
                assert reply["text"] == "from a" and not second_bot.model.calls

                await first_store.close()  # the polling process dies: its lead goes with it
                await first.close()
                for _ in range(200):
                    if second.app.updater.running:
                        break
                    await asyncio.sleep(0.05)
                fake.send_text(ALICE, ALICE, "still there?")
                [reply] = await fake.next_messages(within=10)
                assert reply["text"] == "from b"
            finally:
                await second.close()
                await first.close()
    finally:
        await second_store.close()
        await first_bot.close()
        await second_bot.close()


# -- who speaks: senders Telegram stands in for -----------------------------------------------

NEWS, GAZETTE = -1002001, -1002002  # channels posting in GROUP


def scopes(tg: Harness) -> set[str]:
    return {s.scope for s in tg.bot.sessions.all()}


async def test_each_channel_posting_in_a_group_is_its_own_sender(tg: Harness) -> None:
    tg.fake.send_as_channel(GROUP, NEWS, "/remember the News desk closes at six", title="News")
    tg.fake.send_as_channel(GROUP, GAZETTE, "/memories", title="Gazette")
    said = sorted(m["text"] for m in await tg.fake.next_messages(2))
    assert said == ["No memories yet.", "Pip will remember that."]
    assert await tg.bot.bank.count(f"pip/telegram:{GROUP}:user:{NEWS}") == 1
    tg.fake.send_as_channel(GROUP, NEWS, "/memories", title="News")
    [news] = await tg.fake.next_messages()
    assert "closes at six" in news["text"]
    # A message as the channel is the channel's conversation, under its title.
    tg.fake.send_as_channel(GROUP, GAZETTE, "@pip_bot hello", title="Gazette")
    await tg.fake.next_messages()
    assert f"telegram:{GROUP}:user:{GAZETTE}" in scopes(tg)
    assert "Gazette" in tg.bot.model.calls[-1].text
    assert not any(str(CHANNEL_BOT["id"]) in scope for scope in scopes(tg))


async def test_anonymous_admins_have_only_the_chats_memory(tg: Harness) -> None:
    tg.fake.send_text(GROUP, ALICE, "/remember Alice keeps a bullfinch", chat_type="supergroup")
    tg.fake.send_as_anonymous_admin(GROUP, "/remember the raffle is on Friday", signature="Mod")
    await tg.fake.next_messages(2)
    shared = f"pip/telegram:{GROUP}:channel:{GROUP}"
    assert [m.text for m in await tg.bot.bank.memories(shared)] == ["the raffle is on Friday"]
    # Another anonymous admin (no one can tell which) sees the chat's, never Alice's.
    tg.fake.send_as_anonymous_admin(GROUP, "/memories")
    [listed] = await tg.fake.next_messages()
    assert "raffle" in listed["text"] and "bullfinch" not in listed["text"]
    tg.fake.send_text(ALICE, ALICE, "/start")  # her answers come privately
    await tg.fake.next_messages()
    tg.fake.send_text(GROUP, ALICE, "/memories", chat_type="supergroup")
    alices, _ = await tg.fake.next_messages(2)
    assert "bullfinch" in alices["text"] and "raffle" not in alices["text"]
    # Their conversation is the chat's too, and nothing about them is personal.
    tg.fake.send_as_anonymous_admin(GROUP, "@pip_bot hello all")
    await tg.fake.next_messages()
    assert f"telegram:{GROUP}:channel:{GROUP}" in scopes(tg)
    anonymous = say("en", "anonymous", name="Pip")
    for command in ("/profile", "/dm_memories on"):
        tg.fake.send_as_anonymous_admin(GROUP, command)
        [answer] = await tg.fake.next_messages()
        assert answer["text"] == anonymous
    assert await tg.bot.store.dm_sharing("pip", f"telegram:{GROUP}") is False
    # A wipe by one of them reaches the chat's memory only.
    tg.fake.send_as_anonymous_admin(GROUP, "/wipe")
    [asked] = await tg.fake.next_messages()
    assert "everything Pip remembers of this channel" in asked["text"]
    # The question is the chat's, so any of its admins may answer it, and no one else.
    tg.fake.press(asked, "Wipe", BOB)
    await tg.fake.until_answered()
    assert await tg.bot.bank.count(shared) == 1
    tg.fake.admins.add((GROUP, BOB))
    tg.fake.press(asked, "Wipe", BOB)
    [wiped] = await tg.fake.next_messages()
    assert wiped["text"] == "Wiped: Pip remembers nothing of this channel now."
    assert await tg.bot.bank.count(shared) == 0
    assert await tg.bot.bank.count(f"pip/telegram:{GROUP}:user:{ALICE}") == 1


async def answered_only(tg: Harness, sentinel: str = "@pip_bot still here?") -> None:
    """Alice's message after the ones that must not be answered is the only one answered."""
    asked = tg.fake.send_text(GROUP, ALICE, sentinel, chat_type="supergroup")
    [reply] = await tg.fake.next_messages()
    assert reply["reply_to_message_id"] == asked["message_id"]
    assert tg.fake.unread == []


async def test_messages_no_one_in_the_chat_said_to_the_persona_are_not_answered(
    tg: Harness,
) -> None:
    tg.fake.send_text(GROUP, ALICE, "/remember Alice keeps a bullfinch", chat_type="supergroup")
    await tg.fake.next_messages()
    origin = {
        "type": "user",
        "date": 1,
        "sender_user": {"id": BOB, "is_bot": False, "first_name": "Bob"},
    }
    channel = {"id": NEWS, "type": "channel", "title": "News"}
    for text in ("@pip_bot what is new?", "/wipe", "/memories", "/nosuchcommand@pip_bot"):
        # A linked channel's post, copied into its discussion group by Telegram.
        tg.fake.send_text(
            GROUP,
            0,
            text,
            chat_type="supergroup",
            sender=SERVICE,
            sender_chat=channel,
            is_automatic_forward=True,
            forward_origin={"type": "channel", "date": 1, "chat": channel, "message_id": 5},
        )
        # Another bot (not one Telegram stands in for a chat with).
        other = {"id": 555, "is_bot": True, "first_name": "Helper", "username": "helper_bot"}
        tg.fake.send_text(GROUP, 0, text, chat_type="supergroup", sender=other)
        # Bob's words forwarded by Alice: his mention and his command, not hers.
        tg.fake.send_text(GROUP, ALICE, text, chat_type="supergroup", forward_origin=origin)
        # An edit, and a message in a business account's chat.
        tg.fake.send_text(GROUP, ALICE, text, chat_type="supergroup", kind="edited_message")
        tg.fake.send_text(ALICE, ALICE, text, kind="business_message", business_connection_id="biz")
    await answered_only(tg)
    assert len(tg.bot.model.calls) == 1
    assert await tg.bot.bank.count(f"pip/telegram:{GROUP}:user:{ALICE}") == 1
    assert scopes(tg) == {f"telegram:{GROUP}:user:{ALICE}"}


async def test_a_forward_in_private_and_a_message_via_an_inline_bot_are_the_senders(
    tg: Harness,
) -> None:
    origin = {"type": "hidden_user", "date": 1, "sender_user_name": "Bob"}
    tg.fake.send_text(ALICE, ALICE, "look what Bob wrote", forward_origin=origin)
    await tg.fake.next_messages()
    gif_bot = {"id": 556, "is_bot": True, "first_name": "GIF", "username": "gif"}
    tg.fake.send_text(GROUP, ALICE, "@pip_bot a cat gif", chat_type="supergroup", via_bot=gif_bot)
    await tg.fake.next_messages()
    assert scopes(tg) == {f"telegram:dm:{ALICE}", f"telegram:{GROUP}:user:{ALICE}"}


async def test_in_a_forum_topic_only_a_real_reply_to_the_bot_addresses_it(tg: Harness) -> None:
    pip = {"id": 123456, "is_bot": True, "first_name": "Pip", "username": "pip_bot"}
    opening = {
        "message_id": 900,
        "date": 1,
        "chat": tg.fake.chat(GROUP),
        "from": pip,
        "message_thread_id": 900,
        "forum_topic_created": {"name": "Pip's corner", "icon_color": 7322096},
    }
    topic: dict[str, Any] = {"message_thread_id": 900, "is_topic_message": True}
    tg.fake.send_text(GROUP, ALICE, "among us", chat_type="supergroup", reply_to=opening, **topic)
    await answered_only(tg)
    [sent] = tg.fake.sent
    tg.fake.send_text(GROUP, ALICE, "and you?", chat_type="supergroup", reply_to=sent, **topic)
    [again] = await tg.fake.next_messages()
    assert again["text"] == "ok"
    assert len(tg.bot.model.calls) == 2


async def test_a_webhook_without_a_configured_secret_still_takes_only_telegrams_updates(
    tmp_path: Path,
) -> None:
    """No secret configured: one derived from the token, which every process serving the bot
    (and the next start) derives alike, and no other bot's token gives."""
    bot = await open_bot(tmp_path / "k.sqlite3")
    port = free_port()
    hook = Webhook("https://bots.example/kizuna/hook", port=port)
    secret = webhook_secret(TELEGRAM_TOKEN)
    assert len(secret) >= 32 and secret.replace("-", "").replace("_", "").isalnum()
    assert webhook_secret(TELEGRAM_TOKEN + "x") != secret
    try:
        async with FakeTelegram() as fake:
            for _ in range(2):  # a restart, or a second process behind the load balancer
                adapter = TelegramAdapter(
                    bot.engine,
                    bot.services,
                    "pip",
                    fake.token,
                    bot_id="tg",
                    base_url=fake.base_url,
                    webhook=hook,
                )
                await adapter.start()
                try:
                    assert fake.webhook["secret_token"] == secret
                    url = f"http://127.0.0.1:{port}/kizuna/hook"
                    update = fake.update_for(fake.send_text(ALICE, ALICE, "hello by webhook"))
                    async with aiohttp.ClientSession() as http:
                        async with http.post(url, json=update) as bare:
                            assert bare.status == 403
                        headers = {"X-Telegram-Bot-Api-Secret-Token": secret}
                        async with http.post(url, json=update, headers=headers) as taken:
                            assert taken.status == 200
                    assert (await fake.next_messages())[0]["text"] == "ok"
                finally:
                    await adapter.close()
    finally:
        await bot.close()


async def test_a_persona_called_by_name_in_a_group_answers(tg: Harness) -> None:
    """With the bot's privacy mode off it sees every message; its name is enough."""
    tg.fake.send_text(GROUP, BOB, "anyone seen my keys", chat_type="group", first_name="Bob")
    asked = tg.fake.send_text(GROUP, ALICE, "Pip, have you?", chat_type="group")
    [sent] = await tg.fake.next_messages()
    assert sent["reply_to_message_id"] == asked["message_id"]
    assert len(tg.bot.model.calls) == 1 and len(tg.fake.calls("sendChatAction")) == 1
    bob = make_event(platform="telegram", is_dm=False, chat_id=str(GROUP), user_id=str(BOB))
    bob = replace(bob, channel_id=str(GROUP), same_readers=True)
    turns = (await tg.bot.desk.info(bob)).turns
    assert [t.text for t in turns] == ["anyone seen my keys"]  # heard and kept, not answered


async def test_a_burst_in_private_is_answered_once(tmp_path: Path) -> None:
    windowed = EngineConfig(timezone="UTC", burst_seconds=2.0)
    bot = await open_bot(tmp_path / "burst.sqlite3", settings=windowed)
    timer = bot.timer
    assert timer is not None
    async with FakeTelegram() as fake:
        adapter = telegram_adapter(bot, fake)
        await adapter.start()
        try:
            for text in ("hi", "I have", "a question?"):
                started = timer.started
                fake.send_text(ALICE, ALICE, text)
                async with asyncio.timeout(10):  # (a guard: updates come by polling)
                    while True:  # until its message waits out the window
                        if timer.started > started:
                            break
                        await asyncio.sleep(0.01)
                await timer.advance(1.0)
            await timer.advance(2.0)
            [sent] = await fake.next_messages()
            assert sent["text"] == "ok"
            [call] = bot.model.calls
            assert [m.content for m in call.turns] == ["hi", "I have", "a question?"]
            assert len(fake.calls("sendChatAction")) == 1  # typing only while answering
        finally:
            await adapter.close()
            await bot.close()


async def test_a_plain_thanks_gets_a_reaction_of_the_last_replys_emotion(tmp_path: Path) -> None:
    pip = make_persona(reactions={"NEUTRAL": "👌", "HAPPY": "🥰"})
    model = ScriptedChatModel(["[HAPPY] Here you are!"])
    bot = await open_bot(tmp_path / "k.sqlite3", [pip], model=model)
    try:
        async with FakeTelegram() as fake:
            adapter = telegram_adapter(bot, fake)
            await adapter.start()
            try:
                fake.send_text(ALICE, ALICE, "a recipe please?")
                [sent] = await fake.next_messages()
                thanks = fake.send_text(ALICE, ALICE, "好的，谢谢！")
                [reacted] = await fake.until_reacted()
                assert reacted == {
                    "chat_id": ALICE,
                    "message_id": thanks["message_id"],
                    "reaction": [{"type": "emoji", "emoji": "🥰"}],
                }
                assert sent["text"] == "Here you are!" and len(fake.sent) == 1
                assert len(model.calls) == 1  # the reaction cost no model call
            finally:
                await adapter.close()
    finally:
        await bot.close()


async def test_a_voice_note_is_heard_and_one_too_big_is_not_downloaded(tmp_path: Path) -> None:
    router = ModelRouter(dict.fromkeys(TIERS, OfflineChatModel()))
    settings = EngineConfig(timezone="UTC", burst_seconds=0, audio_max_kb=100)
    bot = await open_bot(tmp_path / "k.sqlite3", router=router, settings=settings)
    try:
        async with FakeTelegram() as fake:
            adapter = telegram_adapter(bot, fake)
            await adapter.start()
            try:
                fake.send_voice(ALICE, ALICE, b"OggS" + bytes(5000))
                [answer] = await fake.next_messages()
                assert answer["text"]
                [user, _] = [
                    t.text
                    for t in (
                        await bot.desk.info(make_event(platform="telegram", user_id=str(ALICE)))
                    ).turns
                ]
                assert user == "[voice] (offline model: a recording of 4 KB, not transcribed)"
                assert len(fake.calls("getFile")) == 1
                fake.send_voice(ALICE, ALICE, b"OggS", size=101 * 1024)
                [refused] = await fake.next_messages()
                assert refused["text"].startswith(
                    "voice note.ogg is too long for me to listen to (101 KB; the most I can "
                    "take is 100 KB)."
                )
                assert len(fake.calls("getFile")) == 1  # refused before any download
            finally:
                await adapter.close()
    finally:
        await bot.close()


async def test_a_voice_note_is_answered_with_text_and_a_voice_note(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    router = await speaking_router(fake_openai.base_url)
    pip = make_persona(voice=VoicePolicy(speak="when_spoken_to", voice="shimmer"))
    bot = await open_bot(tmp_path / "k.sqlite3", [pip], router=router)
    try:
        async with FakeTelegram() as fake:
            adapter = telegram_adapter(bot, fake)
            adapter.engine.senses.speech.ffmpeg = None  # (none on PATH: other audio goes as a file)
            await adapter.start()
            try:
                fake_openai.transcripts.append("How are you?")
                fake_openai.reply_text("[HAPPY] Very well, thanks!")
                fake.send_voice(ALICE, ALICE, b"OggS" + bytes(3000))
                text, note = await fake.next_messages(2)
                assert text["text"] == "Very well, thanks!"
                assert note["voice"] and note["_bytes"] == ogg_opus()  # a voice note, sendVoice
                [spoken] = fake_openai.speeches
                assert (spoken["input"], spoken["voice"]) == ("Very well, thanks!", "shimmer")

                fake_openai.voices.append(MP3)  # a server that sends MP3 whatever was asked
                fake.send_voice(ALICE, ALICE, b"OggS" + bytes(3000))
                _, audio = await fake.next_messages(2)
                assert audio["_bytes"] == MP3 and "voice" not in audio  # a file: sendDocument
                [upload] = fake.calls("sendDocument")
                assert upload.params["document"] == MP3

                fake.send_text(ALICE, ALICE, "/voice off")
                [off] = await fake.next_messages()
                assert off["text"].startswith("Pip will answer you in text only.")
                fake.send_voice(ALICE, ALICE, b"OggS" + bytes(3000))
                [text_only] = await fake.next_messages()
                assert text_only["text"] and len(fake_openai.speeches) == 2

                fake.send_text(ALICE, ALICE, "/voice on")
                await fake.next_messages()
                fake_openai.voices.append(HttpError(500))
                fake.send_text(ALICE, ALICE, "typed, spoken: /voice on")
                [kept] = await fake.next_messages()
                assert kept["text"]  # the speech tier failed: the text went all the same
                speech = bot.engine.models.usage["speech"]
                assert (speech.calls, speech.failures) == (3, 1)
                assert fake.unread == [] and len(fake.calls("sendVoice")) == 1
            finally:
                await adapter.close()
    finally:
        await bot.close()


# --- tools: whom a call acts for, and who is an admin ---------------------------------------

VAULT = CustomTool("vault", module="tests.fakes.tools:secretive", admin_only=True)


def offered(call: ModelCall) -> set[str]:
    return {tool.name for tool in call.tools}


async def test_an_admin_only_tool_is_for_the_groups_admins(tmp_path: Path) -> None:
    """A group message carries the rule of commands: the chat's admins (getChatMember) and a
    configured admin id are admins, a member is not. Telegram is asked once a while per
    member, and only where a persona has a tool for admins."""
    bot = await open_bot(tmp_path / "k.sqlite3", [tool_persona(VAULT)])
    with_tools(bot)
    async with FakeTelegram() as fake:
        fake.admins.add((GROUP, ALICE))
        adapter = telegram_adapter(bot, fake, admin_ids=["9"])
        await adapter.start()
        try:
            for user, admin in ((ALICE, True), (BOB, False), (9, True), (ALICE, True)):
                bot.model.push(calling("vault", {}), "[NEUTRAL] done")
                fake.send_text(GROUP, user, "@pip_bot open it", chat_type="group")
                [sent] = await fake.next_messages()
                assert sent["text"] == "done"
                first, answered = bot.model.calls[-2:]
                assert ("vault" in offered(first)) is admin
                said = answered.messages[-1].content
                assert said == ('"the vault is open"' if admin else TOOL_ADMINS_ONLY)
            asked = [int(c.params["user_id"]) for c in fake.calls("getChatMember")]
            assert asked == [ALICE, BOB]  # Alice's second message: as Telegram said before
        finally:
            await adapter.close()
            await bot.close()


async def test_a_burst_of_two_members_acts_for_neither_and_one_alone_for_them(
    tmp_path: Path,
) -> None:
    windowed = EngineConfig(timezone="UTC", burst_seconds=2.0)
    bot = await open_bot(tmp_path / "k.sqlite3", [tool_persona()], settings=windowed)
    with_tools(bot)
    timer = bot.timer
    assert timer is not None
    async with FakeTelegram() as fake:
        adapter = telegram_adapter(bot, fake)
        await adapter.start()

        async def said(user: int, text: str) -> None:
            started = timer.started
            fake.send_text(GROUP, user, f"@pip_bot {text}", chat_type="group")
            async with asyncio.timeout(10):  # (a guard: updates come by polling)
                while True:  # until its message waits out the window
                    if timer.started > started:
                        break
                    await asyncio.sleep(0.01)

        try:
            remind = {"what": "call mum", "when": "on Friday"}
            bot.model.push(calling("reminder", remind), "[NEUTRAL] ok")
            await said(BOB, "remind me on Friday to call mum")
            await timer.advance(0.5)
            await said(ALICE, "hi")
            await timer.advance(2.5)
            [sent] = await fake.next_messages()
            assert sent["text"] == "ok"
            first, answered = bot.model.calls_with(json_mode=False)
            assert offered(first) == {"recall_memory", "dice"}
            assert answered.messages[-1].content == TOOL_FOR_ONE
            room = make_event(platform="telegram", is_dm=False, chat_id=str(GROUP))
            scope = bot.desk.event_scope(replace(room, channel_id=str(GROUP)))
            assert await bot.store.intentions(scope, str(BOB)) == []

            bot.model.push(calling("reminder", remind), calling("where", {}), "[NEUTRAL] set")
            await said(BOB, "remind me on Friday to call mum")
            await timer.advance(2.5)
            [sent] = await fake.next_messages()
            assert sent["text"] == "set"
            tool = bot.model.calls[-1].messages[-1]
            assert tool.content == f'"scope={scope} user={BOB} admin=False note="'
            [kept] = await bot.store.intentions(scope, str(BOB))
            assert (kept.kind, kept.what) == ("reminder", "call mum")
            assert await bot.store.intentions(scope, str(ALICE)) == []
        finally:
            await adapter.close()
            await bot.close()


async def test_a_groups_topics_are_one_place_for_a_members_memories(tg: Harness) -> None:
    """Every member of a Telegram group reads all its topics: what Alice asked Pip to
    remember in one comes up when she talks to it in another."""
    news: dict[str, Any] = {"message_thread_id": 901, "is_topic_message": True}
    chat: dict[str, Any] = {"message_thread_id": 902, "is_topic_message": True}
    tg.fake.send_text(
        GROUP, ALICE, "/remember@pip_bot I like oolong tea", chat_type="supergroup", **news
    )
    await tg.fake.next_messages()
    tg.fake.send_text(GROUP, ALICE, "@pip_bot what tea do I like?", chat_type="supergroup", **chat)
    await tg.fake.next_messages()
    assert "I like oolong tea" in tg.bot.model.calls[-1].text
