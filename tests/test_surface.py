"""The skeleton every chat surface shares (adapters/surface.py), on a whole platform written in
a few lines: `Memo`, a chat kept in memory. A message gets typing while its turn runs, then the
reply in chunks within the platform's limit (signed where several personas share the bot), or
an apology when the turn fails; a command is answered where it was given, its buttons pressed
run again as the presser; failures are logged without what the user wrote."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from adapters.surface import Surface, attachment, typing_every
from bot.access import Gate
from bot.catalogue import say
from bot.commands import memory as memory_commands
from bot.commands.answers import Answer
from bot.config import AccessConfig
from bot.events import Addressed, ChatEvent, FetchError
from bot.front import Front
from tests.fakes.factories import Bot, make_persona, open_bot
from tests.fakes.models import ScriptedChatModel

SECRET = "my bank pin is 4417"
TO_BOT: frozenset[Addressed] = frozenset({"mention"})  # a group's message, said to the bot


# -- a new platform: everything it writes ------------------------------------------------------


@dataclass(slots=True)
class Room:
    """Where Memo's messages go: what it showed, in order; `admin`, what the platform says of
    the one who writes here."""

    log: list[str] = field(default_factory=list)
    admin: bool = False


class Memo(Surface[Room]):
    platform = "web"  # a new platform declares its own (bot.platforms), in the engine's registry

    async def send(self, where: Room, chunks: Sequence[str]) -> None:
        where.log.extend(chunks)

    @asynccontextmanager
    async def _typing(self, where: Room) -> Any:
        where.log.append("<typing>")
        try:
            yield
        finally:
            where.log.append("</typing>")

    def typing(self, where: Room) -> AbstractAsyncContextManager[object]:
        return self._typing(where)

    async def admin(self, where: Room, event: ChatEvent) -> bool:
        return where.admin

    async def show(self, where: Room, event: ChatEvent, answer: Answer) -> None:
        await self.say(where, answer.text)
        where.log.extend(f"[{b.label}]" for b in answer.buttons)


# -- the skeleton, through it -------------------------------------------------------------------


async def opened(tmp_path: Path, *keys: str, model: ScriptedChatModel | None = None) -> Bot:
    personas = [make_persona(key, name=key.title()) for key in keys or ("pip",)]
    return await open_bot(tmp_path / "k.sqlite3", personas, model=model)


async def test_a_reply_comes_after_typing_in_chunks_within_the_limit(tmp_path: Path) -> None:
    long = "The ferry leaves at seven. " * 200  # over the 4,000 characters of a message
    bot = await opened(tmp_path, model=ScriptedChatModel(default=f"[NEUTRAL] {long}"))
    try:
        memo = Memo(Front(bot.engine, bot.services, "memo", "pip"), "memo")
        room = Room()
        await memo.receive(
            room, memo.event("room", "ann", "Ann", "when is the ferry?", addressed=TO_BOT)
        )
        assert room.log[:2] == ["<typing>", "</typing>"]
        chunks = room.log[2:]
        assert len(chunks) == 2 and all(len(c) <= memo.limit for c in chunks)
        assert " ".join(chunks) == long.strip()
        await memo.receive(room, memo.event("room", "ann", "Ann", "   ", addressed=TO_BOT))
        assert len(room.log) == 4  # nothing said: no turn, nothing shown
        [call] = bot.model.calls
        assert "when is the ferry?" in call.text
    finally:
        await bot.close()


async def test_where_several_personas_share_the_bot_each_signs_its_reply(tmp_path: Path) -> None:
    bot = await opened(tmp_path, "pip", "bo")
    try:
        memo = Memo(Front(bot.engine, bot.services, "memo", ["pip", "bo"]), "memo")
        room = Room()
        await memo.receive(room, memo.event("room", "ann", "Ann", "Bo, hello", addressed=TO_BOT))
        await memo.receive(room, memo.event("room", "ann", "Ann", "and you?", addressed=TO_BOT))
        assert [line for line in room.log if "typing" not in line] == ["Bo: ok", "Pip: ok"]
    finally:
        await bot.close()


async def test_a_failed_turn_apologises_and_logs_no_user_text(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bot = await opened(tmp_path, model=ScriptedChatModel([RuntimeError("boom")]))
    try:
        memo = Memo(Front(bot.engine, bot.services, "memo", "pip"), "memo")
        room = Room()
        with caplog.at_level(logging.DEBUG):
            await memo.receive(room, memo.event("room", "ann", "Ann", SECRET, addressed=TO_BOT))
        assert room.log == ["<typing>", "</typing>", say("en", "failed_here")]
        [failure] = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert failure.name == __name__  # the platform's own logger
        assert "RuntimeError" in failure.getMessage()
        assert not [r for r in caplog.records if "4417" in r.getMessage()]
        await memo.receive(room, memo.event("room", "ann", "Ann", "still there?", addressed=TO_BOT))
        assert room.log[-1] == "ok"
    finally:
        await bot.close()


async def test_a_command_is_answered_where_given_and_a_press_runs_it_again(tmp_path: Path) -> None:
    bot = await opened(tmp_path)
    try:
        memo = Memo(Front(bot.engine, bot.services, "memo", "pip"), "memo")
        room = Room()
        ann = memo.event("room", "ann", "Ann", is_dm=True)
        await memo.command(room, ann, "remember", "my cat is Mochi")
        await memo.command(room, ann, "wipe")
        assert room.log[-2:] == ["[Wipe]", "[Cancel]"]
        asked = await memo.answer(ann, "wipe")
        assert asked is not None
        cancel = next(b for b in asked.buttons if b.label == "Cancel")
        pressed = await memo.answer(ann, cancel.command, cancel.argument)
        assert pressed is not None and pressed.text == "Cancelled."
        await memo.command(room, ann, "memories")
        assert "Mochi" in room.log[-1]
    finally:
        await bot.close()


async def test_the_platform_says_who_is_an_admin_when_a_command_runs(tmp_path: Path) -> None:
    bot = await opened(tmp_path)
    seen: list[bool] = []

    class Watched(Memo):
        async def show(self, where: Room, event: ChatEvent, answer: Answer) -> None:
            seen.append(event.admin)

    try:
        memo = Watched(Front(bot.engine, bot.services, "memo", "pip"), "memo")
        event = memo.event("room", "ann", "Ann", admin=True)  # what the message claimed
        await memo.command(Room(admin=False), event, "memories")
        await memo.command(Room(admin=True), event, "memories")
        assert seen == [False, True]
    finally:
        await bot.close()


async def test_a_failing_command_apologises_and_a_blocked_sender_hears_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(*args: object, **kwargs: object) -> Answer:
        raise ValueError("the store is out")

    bot = await opened(tmp_path)
    try:
        memo = Memo(Front(bot.engine, bot.services, "memo", "pip"), "memo")
        room = Room()
        monkeypatch.setattr(memory_commands, "list_memories", broken)
        with caplog.at_level(logging.ERROR):
            await memo.command(room, memo.event("room", "ann", "Ann"), "memories", SECRET)
        assert room.log == [say("en", "failed_here")]
        [failure] = caplog.records
        assert "/memories" in failure.getMessage() and "ValueError" in failure.getMessage()
        assert "4417" not in failure.getMessage()
        bot.engine.admission.gate = Gate(AccessConfig(block_users=["bob"]))
        await memo.command(room, memo.event("room", "bob", "Bob"), "memories")
        assert room.log == [say("en", "failed_here")]
    finally:
        await bot.close()


async def test_an_attachment_the_platform_cannot_download_is_said_to_be_gone(
    tmp_path: Path,
) -> None:
    class Gone(Exception):
        pass

    async def download() -> bytes:
        raise Gone("404")

    async def good() -> bytes:
        return b"Goats eat barley."

    note = attachment("notes.txt", "memo:1", download, (Gone,), size=10)
    assert note.fetch is not None
    with pytest.raises(FetchError, match=r"notes\.txt: 404"):
        await note.fetch()
    bot = await opened(tmp_path, model=ScriptedChatModel(default="[NEUTRAL] Goats, then."))
    try:
        memo = Memo(Front(bot.engine, bot.services, "memo", "pip"), "memo")
        room = Room()
        await memo.receive(
            room, memo.event("room", "ann", "Ann", attachments=(note,), addressed=TO_BOT)
        )
        assert room.log[-1] == "notes.txt: could not be downloaded; send it again"
        read = attachment("goats.txt", "memo:2", good, (Gone,), size=17)
        await memo.receive(
            room, memo.event("room", "ann", "Ann", attachments=(read,), addressed=TO_BOT)
        )
        assert "goats.txt" in room.log[-1]
    finally:
        await bot.close()


async def test_typing_is_shown_again_until_the_turn_ends_and_never_costs_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    shown: list[int] = []

    async def show() -> None:
        shown.append(len(shown))
        if len(shown) == 2:
            raise ConnectionError("the platform is slow")

    log = logging.getLogger(__name__)
    with caplog.at_level(logging.WARNING):
        async with typing_every(show, 0.01, log):
            await asyncio.sleep(0.055)
    count = len(shown)
    await asyncio.sleep(0.03)
    assert count >= 4 and len(shown) == count  # shown again and again, then no more
    [warning] = caplog.records
    assert "could not show typing" in warning.getMessage()
