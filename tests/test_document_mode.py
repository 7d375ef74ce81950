"""Document mode in the engine: a long document summarised map-reduce by the summary tier, its
questions answered from the passages that bear on them, closed by `document close` or
退出文档模式 — and its text never in the store, nor its turns in long-term memory."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from bot.chat_model import Message
from bot.config import EngineConfig
from bot.conversation.sessions import SessionManager
from bot.media.document_mode import closes_document
from bot.prompts import DOCUMENT_HEADING, MAP_TASK, REDUCE_TASK, WHOLE_TASK
from memory.encoding.encoder import ENCODING_TASK
from tests.fakes.factories import make_event, make_persona, open_bot
from tests.fakes.models import ScriptedChatModel, encoding

SECRET = "The stew's secret is cardamom-lime-7731, added at dawn."
FILLER = "The village of Orrin keeps goats and grows barley on terraced hills. " * 12


def long_document() -> bytes:
    """About 40 paragraphs of filler with the secret in the middle: too long for one call."""
    paragraphs = [FILLER.strip() for _ in range(40)]
    paragraphs[21] = SECRET
    return "\n\n".join(paragraphs).encode("utf-8")


def model(messages: Sequence[Message]) -> str:
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    if system.startswith((MAP_TASK, REDUCE_TASK, WHOLE_TASK)):
        return "A chronicle of Orrin: goats, barley and a village recipe."
    if ENCODING_TASK in system:
        return encoding(("Alice likes long walks.", "personal_daily", 2))
    if "You are reading a document" in system:
        return "[NEUTRAL] The stew gets something special at dawn."
    return "[HAPPY] I'm well, thanks!"


async def test_a_long_document_is_read_asked_and_closed_without_its_text_kept(
    tmp_path: Path,
) -> None:
    chat = ScriptedChatModel(default=model)
    settings = EngineConfig(timezone="UTC", context_tokens=2000, reply_tokens=300)
    bot = await open_bot(tmp_path / "k.sqlite3", model=chat, settings=settings)
    try:
        await bot.engine.handle(make_event("I love long walks"))
        opened = await bot.engine.documents.read(make_event(""), "orrin.md", long_document())
        assert "orrin.md" in opened.text and "goats, barley" in opened.text
        kinds = [c.messages[0].content.split("\n")[0] for c in chat.calls[1:]]
        assert kinds.count(MAP_TASK) > 1 and REDUCE_TASK in kinds  # map-reduce past context

        bot.clock.advance(seconds=20)
        chat.calls.clear()
        await bot.engine.handle(make_event("what is the stew's secret?"))
        [asked] = chat.calls
        assert DOCUMENT_HEADING.format(name='"orrin.md"') in asked.system
        assert SECRET in asked.system  # the passage that bears on the question

        closed = await bot.engine.handle(make_event("退出文档模式"))
        assert "orrin.md" in closed.text
        chat.calls.clear()
        await bot.engine.handle(make_event("anyway, how are you?"))
        assert SECRET not in chat.calls[0].system

        session = await bot.engine.session(make_event())
        flags = [(t.text[:20], t.document) for t in session.turns]
        assert flags[0] == ("I love long walks", False)
        assert flags[-2:] == [("anyway, how are you?", False), (flags[-1][0], False)]
        assert all(document for _, document in flags[2:-2])

        # The conversation ends and is encoded: the document's turns are left out.
        await bot.desk.end(make_event())
        chat.calls.clear()
        await bot.lifecycle.encode_pending()
        [encoded] = [c for c in chat.calls if ENCODING_TASK in c.messages[0].content]
        transcript = encoded.messages[-1].content
        assert "I love long walks" in transcript and "how are you" in transcript
        assert "stew" not in transcript and "orrin" not in transcript.lower()
        await bot.sessions.save_dirty()
    finally:
        await bot.close()

    assert_nowhere(tmp_path, "cardamom")


def assert_nowhere(folder: Path, word: str) -> None:
    """Not in any table of the database, nor on any page of any file in the data folder."""
    db = sqlite3.connect(folder / "k.sqlite3")
    try:
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            for row in db.execute(f'SELECT * FROM "{table}"'):
                assert not any(word in str(value) for value in row), table
    finally:
        db.close()
    for file in folder.rglob("*"):
        if file.is_file():
            assert word.encode() not in file.read_bytes(), file.name


async def test_a_conversation_only_about_a_document_leaves_no_memory(tmp_path: Path) -> None:
    chat = ScriptedChatModel(default=model)
    bot = await open_bot(tmp_path / "k.sqlite3", model=chat)
    try:
        await bot.engine.documents.read(make_event(""), "note.txt", b"Buy milk. Call Ann.")
        await bot.engine.handle(make_event("what should I buy?"))
        await bot.desk.end(make_event())
        chat.calls.clear()
        await bot.lifecycle.encode_pending()
        assert not [c for c in chat.calls if ENCODING_TASK in c.messages[0].content]
        assert await bot.store.unencoded(["pip"], bot.clock.now()) == []  # done, not pending
        assert await bot.bank.count("pip/discord:dm:u1") == 0
    finally:
        await bot.close()


async def test_files_it_cannot_read_are_refused_in_one_line(tmp_path: Path) -> None:
    settings = EngineConfig(timezone="UTC", document_max_kb=1)
    bot = await open_bot(tmp_path / "k.sqlite3", settings=settings)
    try:
        big = await bot.engine.documents.read(make_event(""), "big.txt", b"x" * 5000)
        assert big.text.startswith("big.txt: ") and "\n" not in big.text
        odd = await bot.engine.documents.read(make_event(""), "table.docx", b"PK\x03\x04")
        assert odd.text.startswith("table.docx: ")
        assert bot.model.calls == []
        session = await bot.engine.session(make_event())
        assert session.reading is None and session.turns == []
    finally:
        await bot.close()


async def test_after_a_restart_the_summary_answers(tmp_path: Path) -> None:
    chat = ScriptedChatModel(default=model)
    bot = await open_bot(tmp_path / "k.sqlite3", model=chat)
    try:
        await bot.engine.documents.read(make_event(""), "orrin.md", SECRET.encode())
        await bot.sessions.save_dirty()
        restarted = SessionManager(bot.store, bot.clock)
        await restarted.restore(["pip"], ["discord"])
        [session] = restarted.all()
        assert session.reading is not None and session.reading.text == ""
        assert session.reading.summary.startswith("A chronicle of Orrin")
        engine = bot.engine  # each stage of the turn on the restarted sessions
        engine.sessions = engine.admission.sessions = engine.settling.sessions = restarted
        engine.after.sessions = restarted
        chat.calls.clear()
        await bot.engine.handle(make_event("and the stew?"))
        prompt = chat.calls[0].system
        assert "Only this summary is at hand now" in prompt and SECRET not in prompt
    finally:
        await bot.close()


def test_ways_to_close_a_document() -> None:
    for text in ("/document close", "document close", "Close the document", "好了，退出文档模式"):
        assert closes_document(text), text
    for text in ("what does the document close with?", "closer", "文档很长"):
        assert not closes_document(text), text


async def test_a_chinese_persona_reads_in_chinese(tmp_path: Path) -> None:
    chat = ScriptedChatModel(default=model)
    miao = make_persona("miao", name="喵", language="zh")
    bot = await open_bot(tmp_path / "k.sqlite3", [miao], model=chat)
    try:
        said = await bot.engine.documents.read(
            make_event("", persona="miao"), "菜谱.txt", "先放盐，再放糖。".encode()
        )
        assert said.text.startswith("《菜谱.txt》读完啦") and "退出文档模式" in said.text
        [summary_call] = chat.calls
        assert "Chinese" in summary_call.messages[0].content
    finally:
        await bot.close()
