"""Voice notes and audio users send (bot/media/hearing.py): refused by their declared size before
any
download, transcribed by the hearing tier through the openai SDK's audio.transcriptions
against the fake, kept as the user's words marked as spoken, counted per tier and against a
user's media per hour; the offline model's stub says it is one."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path

from bot.config import TIERS, EngineConfig, ModelsConfig, ProviderConfig, TierConfig
from bot.events import Attachment
from bot.front import Front
from bot.llm.offline import OfflineChatModel
from bot.llm.router import ModelRouter, build_router
from tests.fakes.factories import Bot, make_event, make_picture, open_bot
from tests.fakes.models import ScriptedChatModel, encoding
from tests.fakes.openai_server import FakeOpenAI, HttpError

OGG = b"OggS\x00\x02" + bytes(2000)  # the start of an Ogg stream, as a voice note's is


class Download:
    """An attachment's fetch that counts its calls."""

    def __init__(self, data: bytes) -> None:
        self.data, self.calls = data, 0

    async def __call__(self) -> bytes:
        self.calls += 1
        return self.data


def voice(
    data: bytes = OGG, name: str = "voice-message.ogg", size: int | None = None
) -> Attachment:
    declared = len(data) if size is None else size
    return Attachment(name, f"https://x/{name}", "audio/ogg", declared, Download(data))


async def openai_router(fake: FakeOpenAI) -> ModelRouter:
    config = ModelsConfig(
        providers={"openai": ProviderConfig(base_url=fake.base_url, max_retries=0)},
        chat=TierConfig(model="talker"),
    )
    return await build_router(config, {"OPENAI_API_KEY": "k"}, rng=random.Random(0))


async def openai_bot(path: Path, fake: FakeOpenAI, settings: EngineConfig | None = None) -> Bot:
    return await open_bot(path, router=await openai_router(fake), settings=settings)


async def turns_of(bot: Bot) -> list[str]:
    return [t.text for t in (await bot.desk.info(make_event())).turns]


async def test_a_voice_note_is_transcribed_and_is_the_users_spoken_message(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    bot = await openai_bot(tmp_path / "k.sqlite3", fake_openai)
    try:
        fake_openai.transcripts.append("My cat\nMochi is sick.")
        fake_openai.reply_text("[SAD] Oh no, poor Mochi!")
        spoken = await Front(bot.engine, bot.services, "b", "pip").receive(
            make_event("", attachments=(voice(),))
        )
        assert spoken is not None and spoken.reply.text == "Oh no, poor Mochi!"
        [sent] = fake_openai.transcriptions
        assert (sent["model"], sent["file_name"], sent["audio"]) == (
            "whisper-1",  # the hearing tier's default on openai, not the chat model
            "voice-message.ogg",
            OGG,
        )
        assert (
            "[voice] My cat Mochi is sick."
            in fake_openai.chat_requests[0]["messages"][-1]["content"]
        )
        assert await turns_of(bot) == ["[voice] My cat Mochi is sick.", "Oh no, poor Mochi!"]
        usage = bot.engine.models.usage["hearing"]
        assert (usage.calls, usage.recordings, usage.audio_bytes) == (1, 1, len(OGG))
    finally:
        await bot.close()


async def test_recordings_it_cannot_hear_are_said_and_the_message_is_kept(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    settings = EngineConfig(timezone="UTC", burst_seconds=0, audio_max_kb=10)
    bot = await openai_bot(tmp_path / "k.sqlite3", fake_openai, settings)
    try:
        fetch = Download(OGG)
        big = Attachment("long.ogg", "https://x/long.ogg", "audio/ogg", 11 * 1024, fetch)
        broken = voice(b"not audio at all", name="broken.ogg")
        third = voice(name="third.ogg")  # past the two a message may have heard
        fake_openai.reply_text("[NEUTRAL] Tell me in words?")
        spoken = await Front(bot.engine, bot.services, "b", "pip").receive(
            make_event("listen", attachments=(big, broken, third))
        )
        assert spoken is not None
        said, answer = spoken.reply.text.split("\n\n")
        assert said.splitlines() == [
            "long.ogg is too long for me to listen to (11 KB; the most I can take is 10 KB).",
            "I couldn't make out broken.ogg: it may be damaged, or a kind of recording I "
            "can't play. Could you type it?",
        ]
        assert answer == "Tell me in words?"
        assert fetch.calls == 0  # refused by its declared size, never downloaded
        assert [t["file_name"] for t in fake_openai.transcriptions] == ["broken.ogg"]
        [user, _] = await turns_of(bot)
        assert user == (
            "listen [voice note long.ogg, not heard] [voice note broken.ogg, not heard] "
            "[voice note third.ogg, not listened to]"
        )
        assert bot.engine.models.usage["hearing"].failures == 1
    finally:
        await bot.close()


async def test_without_a_key_the_offline_model_gives_a_marked_stub(tmp_path: Path) -> None:
    router = ModelRouter(dict.fromkeys(TIERS, OfflineChatModel()))
    bot = await open_bot(tmp_path / "k.sqlite3", router=router)
    try:
        spoken = await Front(bot.engine, bot.services, "b", "pip").receive(
            make_event("", attachments=(voice(),))
        )
        assert spoken is not None
        [user, _] = await turns_of(bot)
        assert user == "[voice] (offline model: a recording of 1 KB, not transcribed)"
    finally:
        await bot.close()


async def test_a_hearing_tier_that_fails_is_said_in_the_personas_language(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    bot = await openai_bot(tmp_path / "k.sqlite3", fake_openai)
    try:
        fake_openai.transcripts.append(HttpError(500))
        event = make_event("", attachments=(voice(name="v.ogg"),))
        heard = await bot.engine.senses.hearing.listen(event, "zh")
        assert heard.said == (
            "v.ogg我没听清：可能损坏了，或者是我放不了的格式。可以打字告诉我吗？",
        )
        assert heard.event.text == "[voice note v.ogg, not heard]" and not heard.event.attachments
    finally:
        await bot.close()


async def test_with_a_detected_ollama_a_voice_note_is_said_unheard_and_never_fetched(
    tmp_path: Path,
) -> None:
    async def ollama(host: str) -> list[str]:
        return ["llama3.2"]

    router = await build_router(ModelsConfig(), {}, rng=random.Random(0), probe=ollama)
    bot = await open_bot(tmp_path / "k.sqlite3", router=router)
    try:
        note = voice(name="v.ogg")
        heard = await bot.engine.senses.hearing.listen(make_event("", attachments=(note,)), "en")
        assert heard.said == (
            "I can't listen to voice notes here, so v.ogg went unheard. Could you type it?",
        )
        assert heard.event.text == "[voice note v.ogg, not heard]"
        assert isinstance(note.fetch, Download) and note.fetch.calls == 0
        assert router.usage["hearing"].calls == 0  # no tier, no call
    finally:
        await bot.close()


async def test_voice_notes_and_pictures_share_a_users_media_per_hour(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    settings = EngineConfig(timezone="UTC", burst_seconds=0, media_per_hour=2)
    bot = await openai_bot(tmp_path / "k.sqlite3", fake_openai, settings)
    try:
        front = Front(bot.engine, bot.services, "b", "pip")
        picture = Attachment("p.png", "https://x/p.png", "image/png", 100, Download(make_picture()))
        await front.receive(make_event("", attachments=(picture, voice())))
        spoken = await front.receive(make_event("", attachments=(voice(name="again.ogg"),)))
        assert spoken is not None
        assert spoken.reply.text.startswith("That's a lot to listen to for one hour")
        assert len(fake_openai.transcriptions) == 1
        bot.clock.advance(timedelta(hours=1))
        await front.receive(make_event("", attachments=(voice(name="later.ogg"),)))
        assert len(fake_openai.transcriptions) == 2
    finally:
        await bot.close()


async def test_a_voice_note_refused_for_its_size_is_not_counted(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    settings = EngineConfig(timezone="UTC", burst_seconds=0, media_per_hour=1, audio_max_kb=1)
    bot = await openai_bot(tmp_path / "k.sqlite3", fake_openai, settings)
    try:
        front = Front(bot.engine, bot.services, "b", "pip")
        await front.receive(make_event("", attachments=(voice(size=5 * 1024 * 1024),)))
        assert fake_openai.transcriptions == []
        short = voice(OGG[:500], name="short.ogg")
        await front.receive(make_event("", attachments=(short,)))
        assert len(fake_openai.transcriptions) == 1  # the hour's one medium was still to be had
    finally:
        await bot.close()


async def test_what_was_said_aloud_is_encoded_with_the_conversation(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    hearer = (await openai_router(fake_openai)).models["hearing"]
    model = ScriptedChatModel()
    router = ModelRouter({**dict.fromkeys(TIERS, model), "hearing": hearer})
    bot = await open_bot(tmp_path / "k.sqlite3", router=router)
    try:
        fake_openai.transcripts.append("I adopted a grey kitten called Mochi.")
        await Front(bot.engine, bot.services, "b", "pip").receive(
            make_event("", attachments=(voice(),))
        )
        assert await bot.desk.end(make_event())
        model.push(encoding(("Alice told me she adopted Mochi, a grey kitten.", "special", 2)))
        [encoded] = await bot.lifecycle.encode_pending()
        asked = model.calls[-1]
        assert "[voice] ... is what they said aloud" in asked.messages[0].content
        assert "[voice] I adopted a grey kitten called Mochi." in asked.messages[-1].content
        [memory] = await bot.bank.get(bot.desk.event_scope(make_event()), encoded.memory_ids)
        assert memory.text.endswith("Alice told me she adopted Mochi, a grey kitten.")
    finally:
        await bot.close()
