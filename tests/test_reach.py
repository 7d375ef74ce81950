"""What a conversation does for prospective memory (bot/turn/reach.py and its part of the engine):
stop-requests in English and Chinese, and not stories about others; contacts heard and
answered; the intention due as the user writes brought up in the reply, once, and closed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.chat_model import ModelError
from bot.config import TIERS
from bot.llm.offline import OfflineChatModel
from bot.llm.router import ModelRouter
from bot.prompts import QUIET_NOTE
from bot.turn.reach import asks_for_quiet
from memory.clock import FakeClock
from memory.quoting import quote
from memory.records import NewIntention
from tests.fakes.factories import Bot, make_event, make_persona, open_bot
from tests.fakes.models import ModelCall

NOW = datetime(2026, 12, 9, 10, 0, tzinfo=UTC)  # a Wednesday
DM = "pip/discord:dm:u1"  # Alice's private chat with Pip (make_event's default)


@pytest.mark.parametrize(
    "text",
    [
        "Stop messaging me.",
        "please stop texting me",
        "Can you stop writing to me first?",
        "ok, don't message me anymore",
        "Do not contact me again",
        "no more messages please",
        "Please never DM me again",
        "thanks. Stop reaching out to me",
        "别再给我发消息了",
        "以后不要主动给我发消息",
        "请不要再联系我",
        "好的，别给我发信息了",
    ],
)
def test_a_request_for_quiet_is_heard_in_english_and_chinese(text: str) -> None:
    assert asks_for_quiet(text)


@pytest.mark.parametrize(
    "text",
    [
        "please don't stop messaging me",
        "he won't stop messaging me",
        "I told him to stop messaging me",
        "why don't you message me more",
        "never stop texting me!",
        "can you message me tomorrow?",
        "我让他别再给我发消息",
        "他别再给我发消息了",
        "你为什么不给我发消息",
        "别难过",
    ],
)
def test_a_story_or_the_opposite_is_no_request(text: str) -> None:
    assert not asks_for_quiet(text)


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[Bot]:
    opened = await open_bot(tmp_path / "k.sqlite3", clock=FakeClock(NOW))
    yield opened
    await opened.close()


def _chat(bot: Bot) -> list[ModelCall]:
    return [c for c in bot.model.calls if not c.json_mode]


async def test_a_private_message_makes_a_private_contact_answered_after_the_reply(
    bot: Bot,
) -> None:
    await bot.engine.handle(make_event("hi", timestamp=NOW))
    contact = await bot.store.contact("pip", "discord", "u1")
    assert contact is not None
    assert contact.private and contact.last_heard == NOW and contact.last_answered == NOW
    assert not contact.unanswered and not contact.quiet
    assert sum(contact.hours) == 1


async def test_a_failed_reply_leaves_the_message_unanswered(bot: Bot) -> None:
    bot.model.push(ModelError("down"))
    reply = await bot.engine.handle(make_event("hi"))
    assert reply.failed
    contact = await bot.store.contact("pip", "discord", "u1")
    assert contact is not None and contact.unanswered


async def test_a_group_message_is_heard_but_not_private(bot: Bot) -> None:
    await bot.engine.handle(make_event("hello @pip", is_dm=False))
    contact = await bot.store.contact("pip", "discord", "u1")
    assert contact is not None and not contact.private and contact.last_answered == NOW


async def test_stop_messaging_me_sets_quiet_and_the_reply_acknowledges_it(bot: Bot) -> None:
    await bot.store.add_intention(_new("her exam", "ask how the exam went"))
    await bot.engine.handle(make_event("Stop messaging me."))
    contact = await bot.store.contact("pip", "discord", "u1")
    assert contact is not None and contact.quiet
    [call] = _chat(bot)
    assert QUIET_NOTE in call.system
    assert "ask how the exam went" not in call.text  # not now: kept for another time
    assert [i.what for i in await bot.store.intentions(DM, "u1")] == ["her exam"]


async def test_a_message_overheard_in_a_group_is_owed_no_answer_nor_asks_for_quiet(
    bot: Bot,
) -> None:
    said = make_event("he won't stop. stop messaging me, Bob!", is_dm=False, addressed=())
    await bot.engine.handle(said)
    assert await bot.store.contact("pip", "discord", "u1") is None
    await bot.engine.handle(make_event("hi"))
    contact = await bot.store.contact("pip", "discord", "u1")
    assert contact is not None and not contact.quiet and not contact.unanswered


def _new(what: str, ask: str, *, due: datetime = NOW - timedelta(hours=1)) -> NewIntention:
    return NewIntention(
        scope=DM,
        user_id="u1",
        kind="follow_up",
        what=what,
        ask=ask,
        due_at=due,
        until=due + timedelta(days=3),
        created_at=NOW - timedelta(days=2),
    )


async def test_a_due_intention_is_brought_up_once_in_the_users_own_conversation(
    bot: Bot,
) -> None:
    await bot.store.add_intention(_new("her exam", 'ask how the "exam" went'))
    await bot.store.add_intention(
        _new("the trip", "ask about the trip", due=NOW + timedelta(days=2))
    )
    await bot.engine.handle(make_event("hey"))
    await bot.engine.handle(make_event("what's new?"))
    first, second = _chat(bot)
    assert quote('ask how the "exam" went') in first.system  # quoted, one line
    assert "exam" not in second.system
    assert "trip" not in first.text + second.text  # not due yet
    assert [i.what for i in await bot.store.intentions(DM, "u1")] == ["the trip"]
    [closed] = [i for i in await bot.store.intentions(DM, "u1", open_only=False) if i.id == 1]
    assert closed.state == "done" and closed.done_at == NOW


async def test_a_reminder_due_is_a_reminder_and_another_users_is_not_brought_up(
    bot: Bot,
) -> None:
    reminder = _new("call my sister", "call my sister")
    await bot.store.add_intention(replace(reminder, kind="reminder"))
    bob = make_event("hey", user_id="u2", user_name="Bob")
    await bot.engine.handle(bob)
    await bot.engine.handle(make_event("hey"))
    bobs, alices = _chat(bot)
    assert "sister" not in bobs.text
    assert "remind them" in alices.system and "call my sister" in alices.text
    assert await bot.store.intentions(DM, "u1") == []


async def test_a_failed_reply_keeps_the_intention_for_next_time(bot: Bot) -> None:
    await bot.store.add_intention(_new("her exam", "ask how the exam went"))
    bot.model.push(ModelError("down"))
    assert (await bot.engine.handle(make_event("hey"))).failed
    assert len(await bot.store.intentions(DM, "u1")) == 1
    await bot.engine.handle(make_event("hey again"))
    assert "ask how the exam went" in _chat(bot)[-1].system
    assert await bot.store.intentions(DM, "u1") == []


async def test_an_intention_of_another_scope_stays_behind_its_wall(tmp_path: Path) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3", [make_persona()], clock=FakeClock(NOW))
    try:
        await bot.store.add_intention(_new("her exam", "ask how the exam went"))
        await bot.engine.handle(make_event("hi @pip", is_dm=False))  # Alice, in a group
        assert "exam" not in _chat(bot)[0].text
        assert len(await bot.store.intentions(DM, "u1")) == 1
    finally:
        await bot.close()


async def test_a_store_that_fails_to_note_contacts_or_intentions_costs_the_turn_nothing(
    bot: Bot, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    await bot.store.add_intention(_new("her exam", "ask how the exam went"))
    for name in ("heard", "answered", "close_intention"):
        monkeypatch.setattr(bot.store, name, broken)
    reply = await bot.engine.handle(make_event("hello"))
    assert reply.text == "ok" and not reply.failed
    for failed in ("note a contact", "note an answer", "close an intention"):
        assert f"could not {failed} of pip" in caplog.text
    assert len(await bot.store.intentions(DM, "u1")) == 1  # still pending: not lost
    monkeypatch.setattr(bot.store, "due_intention", broken)
    assert (await bot.engine.handle(make_event("hello again"))).text == "ok"
    assert "could not read the intentions of pip" in caplog.text


async def test_the_offline_model_says_what_it_meant_to_bring_up_in_either_language(
    tmp_path: Path,
) -> None:
    """A bare install (no key) shows the intention its conversation brings up."""
    offline = ModelRouter(dict.fromkeys(TIERS, OfflineChatModel()))
    miao = make_persona("miao", name="喵", language="zh")
    bot = await open_bot(
        tmp_path / "k.sqlite3", [make_persona(), miao], router=offline, clock=FakeClock(NOW)
    )
    try:
        await bot.store.add_intention(_new("her exam", 'ask how the "exam" went'))
        said = await bot.engine.handle(make_event("hi"))
        assert 'Something I meant to bring up: "ask how the "exam" went".' in said.text
        chinese = replace(_new("打电话", "提醒：给妈妈打电话"), scope="miao/discord:dm:u1")
        await bot.store.add_intention(replace(chinese, kind="reminder"))
        said = await bot.engine.handle(make_event("你好", persona="miao"))
        assert "我本来就想跟你说：「打电话」。" in said.text
        again = await bot.engine.handle(make_event("hi again"))
        assert "bring up" not in again.text
    finally:
        await bot.close()
