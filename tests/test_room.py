"""Several personas in one room (bot.groups.relay): two Telegram bots of one process, each with its
own
token and persona, in one group, through the real python-telegram-bot against two loopback Bot
API fakes (Telegram gives each bot the group's messages; neither sees the other's), over one
engine with a fake clock."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from adapters.telegram import TelegramAdapter
from bot.events import ChatEvent
from bot.groups.relay import speaker_id
from tests.fakes.factories import Bot, make_event, make_persona, open_bot
from tests.fakes.models import ScriptedChatModel
from tests.fakes.platforms import telegram_adapter
from tests.fakes.secrets import OTHER_TELEGRAM_TOKEN
from tests.fakes.telegram_server import FakeTelegram

GROUP = -2001
ALICE = 7


@dataclass
class Room:
    bot: Bot
    pip: FakeTelegram  # what the bot speaking as Pip sees and sends
    bo: FakeTelegram

    async def say(self, text: str, first: str = "bo") -> None:
        """Alice says `text` in the group: Telegram hands it to both bots, `first`'s first
        (heard before the other bot has it: the order of the conversations is known)."""
        fakes = {"pip": self.pip, "bo": self.bo}
        other = next(key for key in fakes if key != first)
        before = len(await self.heard(first, 0))
        fakes[first].send_text(GROUP, ALICE, text, chat_type="supergroup")
        await self.heard(first, before + 1)
        fakes[other].send_text(GROUP, ALICE, text, chat_type="supergroup")

    def event(self, persona: str) -> ChatEvent:
        event = make_event(
            persona=persona, platform="telegram", is_dm=False, chat_id=str(GROUP), user_id="7"
        )
        return replace(event, channel_id=str(GROUP))

    async def heard(self, persona: str, count: int) -> list[tuple[str, str]]:
        """`persona`'s conversation in the group once it holds `count` turns: (speaker, text),
        the speaker "" for the persona itself."""
        async with asyncio.timeout(10):  # (a guard: updates come by polling)
            while True:
                turns = (await self.bot.desk.info(self.event(persona))).turns
                if len(turns) >= count:
                    return [(t.user_id, t.text) for t in turns]
                await asyncio.sleep(0.01)


@pytest.fixture
async def room(tmp_path: Path) -> AsyncIterator[Room]:
    # Channel-scoped: each persona keeps the room's one conversation, everyone's lines in it.
    personas = [
        make_persona("pip", name="Pip", scope="channel"),
        make_persona("bo", name="Bo", scope="channel"),
    ]
    bot = await open_bot(tmp_path / "k.sqlite3", personas, model=ScriptedChatModel())
    async with (
        FakeTelegram() as pip,
        FakeTelegram(
            token=OTHER_TELEGRAM_TOKEN, bot_id=654321, username="bo_bot", first_name="Bo"
        ) as bo,
    ):
        adapters: list[TelegramAdapter] = [
            telegram_adapter(bot, pip, "pip", "tg-pip"),
            telegram_adapter(bot, bo, "bo", "tg-bo"),
        ]
        for adapter in adapters:
            await adapter.start()
        try:
            here = Room(bot, pip, bo)
            await here.say("morning all")  # both bots hear it, so both know the room
            await here.heard("pip", 1)
            yield here
        finally:
            for adapter in adapters:
                await adapter.close()
            await bot.close()


async def test_personas_hear_each_other_answer_by_name_and_stop_at_the_bound(room: Room) -> None:
    room.bot.model.push(
        "[NEUTRAL] Bo, do you like tea?",  # Pip, to Alice
        "[NEUTRAL] Pip, I love it!",  # Bo, to Pip: one exchange
        "[NEUTRAL] Bo, me too.",  # Pip, to Bo: two, the bound
        "[NEUTRAL] Pip, green or black?",  # (never asked for: Bo stays quiet)
    )
    await room.say("Pip, what shall we drink?")
    said_by_pip = await room.pip.next_messages(2)
    [said_by_bo] = await room.bo.next_messages()
    assert [m["text"] for m in said_by_pip] == ["Bo, do you like tea?", "Bo, me too."]
    assert said_by_bo["text"] == "Pip, I love it!"
    # Bo heard Pip's last words (kept in its conversation) but did not answer them.
    bo_heard = await room.heard("bo", 5)
    assert bo_heard[1:] == [
        ("7", "Pip, what shall we drink?"),
        (speaker_id("pip"), "Bo, do you like tea?"),
        ("", "Pip, I love it!"),
        (speaker_id("pip"), "Bo, me too."),
    ]
    assert len(room.bot.model.calls) == 3
    # Each keeps its own conversation: Pip's has Bo's words as a speaker's.
    assert await room.heard("pip", 5) == [
        ("7", "morning all"),
        ("7", "Pip, what shall we drink?"),
        ("", "Bo, do you like tea?"),
        (speaker_id("bo"), "Pip, I love it!"),
        ("", "Bo, me too."),
    ]


async def test_a_person_speaking_again_lets_them_answer_each_other_anew(room: Room) -> None:
    room.bot.model.push("[NEUTRAL] Bo?", "[NEUTRAL] Pip!", "[NEUTRAL] Bo!")
    await room.say("Pip, hi")
    await room.pip.next_messages(2)
    await room.bo.next_messages(1)
    room.bot.model.push("[NEUTRAL] Pip, yes?", "[NEUTRAL] Bo, hello.", "[NEUTRAL] Pip, hi.")
    await room.say("Bo, are you there?", first="pip")  # a person spoke: counting anew
    assert [m["text"] for m in await room.bo.next_messages(2)] == ["Pip, yes?", "Pip, hi."]
    [again] = await room.pip.next_messages()
    assert again["text"] == "Bo, hello."
    assert len(room.bot.model.calls) == 6


async def test_a_persona_not_called_by_name_is_not_answered(room: Room) -> None:
    room.bot.model.push("[NEUTRAL] Sunny today.")
    await room.say("Pip, weather?")
    [said] = await room.pip.next_messages()
    assert said["text"] == "Sunny today."
    await room.heard("bo", 3)  # Bo heard both, said nothing
    assert len(room.bot.model.calls) == 1
    assert room.bo.sent == []
