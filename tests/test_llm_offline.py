"""bot/llm/offline.py: the offline model answers the encoder's request, intentions and special
days included, so a bare install finds what a user said is coming without a key; and the
outreach request (a message the persona writes first)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from bot.chat_model import Message
from bot.llm.offline import OfflineChatModel
from bot.prompts import outreach_messages, parse_emotion
from memory.bank import MemoryBank
from memory.clock import FakeClock
from memory.encoding.encoder import Author, Encoder
from memory.records import ArchiveWrite, EncodingWrite
from memory.storage.sqlite import Store
from tests.fakes.factories import make_persona

PERSONA = "miao"
SCOPE = "miao/telegram:dm:u1"
T0 = datetime(2026, 12, 3, 7, 0, tzinfo=UTC)  # a Thursday, 15:00 in Shanghai


class Recording(Store):
    """The SQLite store, keeping each encoding's write to look at what it carried."""

    writes: tuple[EncodingWrite, ...] = ()

    async def commit_encoding(self, write: EncodingWrite) -> list[int] | None:
        self.writes = (*self.writes, write)
        return await super().commit_encoding(write)


@pytest.fixture
async def recorded(tmp_path: Path) -> AsyncIterator[tuple[MemoryBank, Recording]]:
    store = await Recording.open(tmp_path / "kizuna.sqlite3")
    clock = FakeClock(T0 + timedelta(hours=1))
    bank = await MemoryBank.open(tmp_path, "hash", clock, deterministic=True, store=store)
    yield bank, store
    await bank.close()
    await store.close()


async def offline(messages: Sequence[tuple[str, str]], *, json_mode: bool) -> str:
    """The offline model as the encoder's summary tier (bot.conversation.lifecycle's adapter)."""
    chat = [Message("system" if r == "system" else "user", t) for r, t in messages]
    return (await OfflineChatModel().complete(chat, json_mode=json_mode)).text


async def encode(
    recorded: tuple[MemoryBank, Recording], language: str, *said: str
) -> EncodingWrite:
    bank, store = recorded
    turns: list[dict[str, Any]] = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "speaker": "Alice" if i % 2 == 0 else "Miao",
            "text": text,
            "at": (T0 + timedelta(minutes=i)).isoformat(),
            "user_id": "u1" if i % 2 == 0 else "",
        }
        for i, text in enumerate(said)
    ]
    conversation_id = await store.archive_conversation(ArchiveWrite(
        PERSONA, SCOPE, started_at=T0, ended_at=T0 + timedelta(minutes=len(said)),
        reason="idle", turns=turns, snapshot={},
    ))  # fmt: skip
    conversation = await store.conversation(conversation_id)
    assert conversation is not None
    author = Author("Miao", language, timezone=ZoneInfo("Asia/Shanghai"))
    encoded = await Encoder(bank, offline).encode(conversation, SCOPE, author, pending=[])
    assert encoded is not None and not encoded.fallback  # the offline model's JSON is usable
    return store.writes[-1]


async def test_the_offline_model_answers_follow_ups_reminders_and_special_days(
    recorded: tuple[MemoryBank, Recording],
) -> None:
    write = await encode(
        recorded,
        "en",
        "My exam is on Tuesday. Remind me to buy flowers tomorrow.",
        "Good luck!",
        "My birthday is May 4th",
        "Noted.",
    )
    exam, flowers, birthday = write.intentions
    assert (exam.kind, exam.what, exam.ask, exam.user_id) == (
        "follow_up", "exam", "ask how it went: exam", "u1",
    )  # fmt: skip
    assert exam.due_at.isoformat() == "2026-12-08T18:00:00+08:00"
    assert (flowers.kind, flowers.what) == ("reminder", "buy flowers")
    assert flowers.due_at.isoformat() == "2026-12-04T09:00:00+08:00"
    assert (birthday.kind, birthday.yearly) == ("special_day", True)
    assert birthday.due_at.isoformat() == "2027-05-04T09:00:00+08:00"


async def test_the_offline_model_reads_chinese_and_writes_the_ask_in_chinese(
    recorded: tuple[MemoryBank, Recording],
) -> None:
    write = await encode(recorded, "zh", "我下周三面试", "加油！", "我周末要去爬山", "好呀")
    interview, hike = write.intentions
    assert (interview.what, interview.ask) == ("面试", "问问面试怎么样了")
    assert interview.due_at.isoformat() == "2026-12-09T18:00:00+08:00"
    assert (hike.what, hike.due_at.isoformat()) == ("去爬山", "2026-12-06T18:00:00+08:00")


async def test_the_offline_model_takes_a_plan_the_rules_reject_that_the_veto_admits(
    recorded: tuple[MemoryBank, Recording],
) -> None:
    write = await encode(recorded, "en", "me and grandma, pottery, saturday!!", "Have fun!")
    [pottery] = write.intentions
    assert (pottery.kind, pottery.due_at.isoformat()) == ("follow_up", "2026-12-05T18:00:00+08:00")


async def test_small_talk_gives_the_offline_model_no_intentions(
    recorded: tuple[MemoryBank, Recording],
) -> None:
    write = await encode(
        recorded, "en", "I went hiking last Saturday", "Nice!", "see you tomorrow", "Bye!"
    )
    assert write.intentions == []


async def test_asked_to_write_first_it_says_who_writes_and_why_in_the_personas_language() -> None:
    english = make_persona(name="Pip")
    chinese = make_persona("miao", name="喵", language="zh")
    for persona, intro in ((english, "Pip here"), (chinese, "我是喵")):
        messages = outreach_messages(persona, T0, "follow_up", what="the exam", ask="ask")
        completion = await OfflineChatModel().complete(messages)
        tag, text = parse_emotion(completion.text)
        assert tag in persona.emotions.names
        assert intro in text and '"the exam"' in text  # the prompt's reason, as given
