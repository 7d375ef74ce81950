"""The one way in (bot/front.py): the persona a message names, or its room's, answers it; a
document is refused by its declared size before anything is downloaded, fetched through its
attachment, or said to be gone; a command runs in its room's persona, past the access gate."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from bot.access import Gate
from bot.config import AccessConfig, EngineConfig
from bot.events import Attachment, FetchError
from bot.front import Front
from bot.persona.file import PersonaLibrary
from tests.fakes.factories import make_event, make_persona, open_bot
from tests.fakes.models import ScriptedChatModel


class Download:
    """An attachment's fetch that counts its calls, and fails if told to."""

    def __init__(self, data: bytes = b"", *, fails: bool = False) -> None:
        self.data, self.fails, self.calls = data, fails, 0

    async def __call__(self) -> bytes:
        self.calls += 1
        if self.fails:
            raise FetchError("gone")
        return self.data


async def test_a_message_goes_to_the_persona_it_names_or_its_rooms(tmp_path: Path) -> None:
    personas = [make_persona("pip"), make_persona("miao", name="Miao")]
    model = ScriptedChatModel(default="[NEUTRAL] hello")
    bot = await open_bot(tmp_path / "k.sqlite3", personas, model=model)
    try:
        front = Front(bot.engine, bot.services, "b", ["pip", "miao"])
        spoken = await front.receive(make_event("Miao, are you there?"))
        assert spoken is not None and spoken.persona.key == "miao" and spoken.several
        await front.router.bind("c1", "miao", "u1", "en")
        spoken = await front.receive(make_event("and now?", is_dm=False))
        assert spoken is not None and spoken.persona.key == "miao"
        assert await front.receive(make_event("  ")) is None
    finally:
        await bot.close()


async def test_a_persona_not_the_rooms_answers_to_its_group_names_and_its_chinese_name(
    tmp_path: Path,
) -> None:
    shipped = PersonaLibrary.default(tmp_path)
    monikai, miao = shipped.load("monikai"), shipped.load("miao")  # Miao: 喵, no names
    cap = make_persona("captain", name="Captain Hook")
    cap.group.names = ["Cap"]
    model = ScriptedChatModel(default="[NEUTRAL] hello")
    bot = await open_bot(tmp_path / "k.sqlite3", [monikai, miao, cap], model=model)
    try:
        front = Front(bot.engine, bot.services, "b", ["monikai", "miao", "captain"])
        for text, key in [("Cap, what tea is best?", "captain"), ("喵喵在吗", "miao")]:
            spoken = await front.receive(make_event(text, is_dm=False, addressed=()))
            assert spoken is not None and spoken.persona.key == key, text
            assert spoken.reply.text == "hello"
        assert front.router.addressed("Capitals are big") is None
    finally:
        await bot.close()


async def test_a_first_private_message_is_answered_after_the_cards_greeting(
    tmp_path: Path,
) -> None:
    inn = make_persona("inn", name="Keeper")
    inn.card.first_message = "Welcome to the inn, {{user}}!"
    model = ScriptedChatModel(default="[NEUTRAL] Tea is ready.")
    bot = await open_bot(tmp_path / "k.sqlite3", [inn], model=model)
    try:
        front = Front(bot.engine, bot.services, "b", "inn")
        first = await front.receive(make_event("hello"))
        assert first is not None
        assert first.reply.text == "Welcome to the inn, Alice!\n\nTea is ready."
        session = await bot.engine.session(make_event("", persona="inn"))
        assert [t.role for t in session.turns] == ["assistant", "user", "assistant"]
        # The model sees the greeting once: as the persona's first turn, not the system's too.
        [asked] = model.calls
        assert asked.text.count("Welcome to the inn") == 1
        again = await front.receive(make_event("and cake?"))
        assert again is not None and again.reply.text == "Tea is ready."
        group = await front.receive(make_event("hi all", is_dm=False, user_id="u2"))
        assert group is not None and group.reply.text == "Tea is ready."  # not in a group
        assert await bot.engine.greet(make_event("", persona="inn", user_id="u3")) is not None
        assert await bot.engine.greet(make_event("", persona="inn", user_id="u3")) is None
    finally:
        await bot.close()


async def test_a_document_is_checked_before_it_is_fetched(tmp_path: Path) -> None:
    settings = EngineConfig(timezone="UTC", document_max_kb=1)
    model = ScriptedChatModel(default="[NEUTRAL] A note about goats.")
    bot = await open_bot(tmp_path / "k.sqlite3", model=model, settings=settings)
    try:
        front = Front(bot.engine, bot.services, "b", "pip")
        big, gone, good = Download(), Download(fails=True), Download(b"Goats eat barley.")
        cases = [(big, 5000, "too big"), (gone, 10, "could not be downloaded"), (good, 17, "")]
        for fetch, size, refusal in cases:
            note = Attachment("notes.txt", "https://x/notes.txt", "text/plain", size, fetch)
            spoken = await front.receive(make_event("", attachments=(note,)))
            assert spoken is not None
            if refusal:
                assert refusal in spoken.reply.text
            else:
                assert "notes.txt" in spoken.reply.text
        assert (big.calls, gone.calls, good.calls) == (0, 1, 1)
    finally:
        await bot.close()


async def test_a_command_runs_in_its_rooms_persona_past_the_gate(tmp_path: Path) -> None:
    personas = [make_persona("pip"), make_persona("miao", name="喵", language="zh")]
    bot = await open_bot(tmp_path / "k.sqlite3", personas)
    try:
        front = Front(bot.engine, bot.services, "b", ["pip", "miao"])
        await front.router.bind("c1", "miao", "u1", "en")
        event = make_event("", is_dm=False)
        answer = await front.command(event, "memories")
        assert answer is not None and answer.text == "还没有记忆。"
        bot.engine.admission.gate = Gate(AccessConfig(block_users=["u2"]))
        assert await front.command(replace(event, user_id="u2"), "memories") is None
    finally:
        await bot.close()


async def test_a_bot_may_say_its_own_sentences_in_a_language_of_the_hosts(
    tmp_path: Path,
) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3")  # Pip speaks English
    try:
        front = Front(bot.engine, bot.services, "b", "pip", language="zh")
        answer = await front.command(make_event(""), "memories")
        assert answer is not None and answer.text == "还没有记忆。"
        asked = await front.command(make_event(""), "wipe")
        assert asked is not None and [b.label for b in asked.buttons] == ["清除", "取消"]
        assert (
            front.language() == "zh"
            and Front(bot.engine, bot.services, "b", "pip").language() == "en"
        )
    finally:
        await bot.close()
