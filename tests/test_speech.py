"""Replies said aloud (bot/media/speech.py): whether the persona and the user want them (its [voice]
speak, /voice, eco mode, the platform, the user's media of the hour; the offline model
murmurs), the words sent to the speech tier through the openai SDK's audio.speech against the
fake, audio that is not OGG converted by an
ffmpeg on PATH (a stand-in script here) or sent as a file, and a failure that keeps the text."""

from __future__ import annotations

import asyncio
import stat
import sys
from pathlib import Path

import pytest

from bot.commands import table as commands
from bot.config import TIERS, EngineConfig
from bot.events import Attachment, ChatEvent, Voice
from bot.front import Front
from bot.llm.murmur import murmur
from bot.llm.offline import OfflineChatModel
from bot.llm.router import ModelRouter
from bot.media.speech import SPOKEN_CHARS, audio_kind, speakable
from bot.persona.file import SpeakWhen, VoicePolicy
from bot.spoken import Spoken
from tests.fakes.factories import Bot, make_event, make_persona, open_bot, speaking_router
from tests.fakes.openai_server import FakeOpenAI, HttpError, ogg_opus

OGG = b"OggS\x00\x02" + bytes(2000)  # a voice note's first bytes
MP3 = b"ID3\x04\x00" + bytes(300)  # what a compatible server may send whatever was asked


async def note() -> bytes:
    return OGG


def voice_note() -> Attachment:
    return Attachment("voice note.ogg", "telegram-file:v", "audio/ogg", len(OGG), note)


async def openai_bot(
    path: Path,
    fake: FakeOpenAI,
    speak: SpeakWhen = "when_spoken_to",
    *,
    eco: bool = False,
    media_per_hour: int = 30,
) -> Bot:
    router = await speaking_router(fake.base_url, eco=eco, chat_model="talker")
    persona = make_persona(voice=VoicePolicy(speak=speak, voice="nova"))
    settings = EngineConfig(timezone="UTC", burst_seconds=0, media_per_hour=media_per_hour)
    return await open_bot(path, [persona], router=router, settings=settings)


def fake_ffmpeg(folder: Path, body: str) -> str:
    """An executable standing in for ffmpeg: a Python script, `body` its code."""
    path = folder / "ffmpeg"
    path.write_text(f"#!{sys.executable}\nimport sys, time\n{body}\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


# -- what is said ------------------------------------------------------------------------------


def test_what_is_said_has_no_markup_and_is_cut_at_a_sentence() -> None:
    assert speakable("[HAPPY] *waves* Hi **Ana**! I'm `here`.") == "Hi Ana ! I'm here ."
    assert speakable("*tilts head*") == ""
    long = "This is a sentence. " * 100
    said = speakable(long)
    assert len(said) <= SPOKEN_CHARS and said.endswith(".")
    assert speakable("2*3*4 is 24") == "2 3 4 is 24"  # not an action: no spaces round it


def test_audio_is_known_by_its_first_bytes() -> None:
    assert audio_kind(ogg_opus()) == ("audio/ogg", "ogg")
    assert audio_kind(MP3) == ("audio/mpeg", "mp3")
    assert audio_kind(b"\x00\x00\x00\x18ftypM4A ") == ("audio/mp4", "m4a")
    assert audio_kind(b"what is this") is None


# -- when a reply is said aloud ----------------------------------------------------------------


async def test_a_voice_note_is_answered_with_text_and_a_voice_note(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    bot = await openai_bot(tmp_path / "k.sqlite3", fake_openai)
    try:
        fake_openai.transcripts.append("How was your day?")
        fake_openai.reply_text("[HAPPY] Lovely, *smiles* thank you!")
        front = Front(bot.engine, bot.services, "b", "pip")
        spoken = await front.receive(
            make_event("", platform="telegram", attachments=(voice_note(),))
        )
        assert spoken is not None and spoken.reply.text == "Lovely, *smiles* thank you!"
        assert spoken.reply.voice == Voice(ogg_opus())
        assert spoken.reply.voice.note
        assert fake_openai.speeches == [
            {
                "model": "tts-1",
                "voice": "nova",  # the persona's
                "input": "Lovely, thank you!",
                "response_format": "opus",
            }
        ]
        usage = bot.engine.models.usage["speech"]
        assert (usage.calls, usage.characters, usage.audio_bytes) == (1, 18, len(ogg_opus()))

        typed = await front.receive(make_event("and yours?", platform="telegram"))
        assert typed is not None and typed.reply.voice is None  # typed: answered in text
        assert len(fake_openai.speeches) == 1
    finally:
        await bot.close()


async def test_always_speaks_every_reply_but_not_on_the_console(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    bot = await openai_bot(tmp_path / "k.sqlite3", fake_openai, "always")
    try:
        front = Front(bot.engine, bot.services, "b", "pip")
        spoken = await front.receive(make_event("hi"))  # Discord
        assert spoken is not None and spoken.reply.voice is not None
        console = await front.receive(make_event("hi", platform="console"))
        assert console is not None and console.reply.voice is None  # no voice notes there
        assert len(fake_openai.speeches) == 1
    finally:
        await bot.close()


async def test_a_persona_that_never_speaks_makes_no_speech_call(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    bot = await openai_bot(tmp_path / "k.sqlite3", fake_openai, "never")
    try:
        event = make_event("", platform="telegram", attachments=(voice_note(),))
        spoken = await Front(bot.engine, bot.services, "b", "pip").receive(event)
        assert spoken is not None and spoken.reply.voice is None
        assert fake_openai.speeches == [] and bot.engine.models.usage["speech"].calls == 0
        answer = await commands.run(
            bot.services, make_event("", platform="telegram"), "voice", "on"
        )
        assert answer.text == "Pip only writes here: it has no voice to answer with."
        contact = await bot.store.contact("pip", "telegram", "u1")
        assert contact is None or contact.voice is None  # nothing kept
    finally:
        await bot.close()


async def test_a_users_voice_off_wins_and_on_speaks_what_they_type(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    bot = await openai_bot(tmp_path / "k.sqlite3", fake_openai)
    try:
        front = Front(bot.engine, bot.services, "b", "pip")
        alice = make_event("", platform="telegram")
        said = await commands.run(bot.services, alice, "voice")
        assert said.text.startswith("Pip answers your voice notes with a voice note too")
        off = await commands.run(bot.services, alice, "voice", "off")
        assert off.text == "Pip will answer you in text only. /voice on sends voice notes too."
        spoken = await front.receive(
            make_event("", platform="telegram", attachments=(voice_note(),))
        )
        assert spoken is not None and spoken.reply.voice is None
        assert fake_openai.speeches == []

        await commands.run(bot.services, alice, "voice", "on")
        assert (await commands.run(bot.services, alice, "voice")).text.startswith(
            "Pip will send its replies to you as voice notes too."
        )
        typed = await front.receive(make_event("hello", platform="telegram"))
        assert typed is not None and typed.reply.voice is not None
        # Another user made no choice: their typed message is answered in text.
        bob = await front.receive(make_event("hello", platform="telegram", user_id="u2"))
        assert bob is not None and bob.reply.voice is None
        assert len(fake_openai.speeches) == 1
        assert (await commands.run(bot.services, alice, "voice", "loud")).text == (
            "Say /voice on or /voice off."
        )
    finally:
        await bot.close()


async def test_eco_mode_speaks_nothing(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    bot = await openai_bot(tmp_path / "k.sqlite3", fake_openai, "always", eco=True)
    try:
        spoken = await Front(bot.engine, bot.services, "b", "pip").receive(make_event("hi"))
        assert spoken is not None and spoken.reply.text and spoken.reply.voice is None
        assert fake_openai.speeches == []
    finally:
        await bot.close()


async def test_the_offline_model_murmurs_a_reply_aloud(tmp_path: Path) -> None:
    offline = ModelRouter(dict.fromkeys(TIERS, OfflineChatModel()))
    persona = make_persona(voice=VoicePolicy(speak="always", voice="purr"))
    bot = await open_bot(tmp_path / "o.sqlite3", [persona], router=offline)
    try:
        bot.engine.senses.speech.ffmpeg = None
        spoken = await Front(bot.engine, bot.services, "b", "pip").receive(make_event("hi"))
        assert spoken is not None and spoken.reply.text and spoken.reply.voice is not None
        voice = spoken.reply.voice
        assert (voice.mime, voice.name) == ("audio/wav", "reply.wav")  # a file, no ffmpeg here
        assert voice.data == murmur(speakable(spoken.reply.text), "purr")
        assert offline.usage["speech"].calls == 1
    finally:
        await bot.close()


async def test_a_reply_said_aloud_counts_against_the_hour_s_media(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    bot = await openai_bot(tmp_path / "k.sqlite3", fake_openai, "always", media_per_hour=2)
    try:
        front = Front(bot.engine, bot.services, "b", "pip")
        first = await front.receive(make_event("hi", platform="telegram"))
        assert first is not None and first.reply.voice is not None
        # A voice note sent (transcribed: the second medium) and a reply said aloud: past it.
        fake_openai.transcripts.append("Still there?")
        heard = await front.receive(
            make_event("", platform="telegram", attachments=(voice_note(),))
        )
        assert heard is not None and heard.reply.text and heard.reply.voice is None
        assert len(fake_openai.speeches) == 1
        other = await front.receive(make_event("hi", platform="telegram", user_id="u2"))
        assert other is not None and other.reply.voice is not None  # each user's own hour
        bot.clock.advance(hours=1)
        again = await front.receive(make_event("back", platform="telegram"))
        assert again is not None and again.reply.voice is not None
    finally:
        await bot.close()


async def test_a_speech_tier_that_fails_leaves_the_text_reply(
    tmp_path: Path, fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    bot = await openai_bot(tmp_path / "k.sqlite3", fake_openai, "always")
    try:
        fake_openai.reply_text("[NEUTRAL] My secret plan is tea.")
        fake_openai.voices.append(HttpError(500))
        spoken = await Front(bot.engine, bot.services, "b", "pip").receive(make_event("hi"))
        assert spoken is not None and spoken.reply.text == "My secret plan is tea."
        assert spoken.reply.voice is None
        usage = bot.engine.models.usage["speech"]
        assert (usage.calls, usage.failures) == (1, 1)
        assert "could not say a reply" in caplog.text
        assert "secret plan" not in caplog.text  # what was said is never logged
    finally:
        await bot.close()


# -- audio that is not OGG ---------------------------------------------------------------------


async def test_audio_that_is_not_ogg_goes_as_a_file_without_ffmpeg(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    bot = await openai_bot(tmp_path / "k.sqlite3", fake_openai, "always")
    try:
        bot.engine.senses.speech.ffmpeg = None
        fake_openai.voices.extend([MP3, b"no known audio"])
        front = Front(bot.engine, bot.services, "b", "pip")
        spoken = await front.receive(make_event("hi"))
        assert spoken is not None and spoken.reply.voice == Voice(MP3, "audio/mpeg", "reply.mp3")
        assert not spoken.reply.voice.note  # a file, not a voice note
        unknown = await front.receive(make_event("again"))
        assert unknown is not None and unknown.reply.text and unknown.reply.voice is None
    finally:
        await bot.close()


async def test_ffmpeg_on_path_makes_a_voice_note_within_its_time(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    bot = await openai_bot(tmp_path / "k.sqlite3", fake_openai, "always")
    try:
        speech = bot.engine.senses.speech
        converted = b"OggS converted " + bytes(10)
        speech.ffmpeg = fake_ffmpeg(
            tmp_path, f"sys.stdin.buffer.read()\nsys.stdout.buffer.write({converted!r})"
        )
        assert await speech.playable(MP3) == Voice(converted)
        assert await speech.playable(ogg_opus()) == Voice(ogg_opus())  # OGG already: as it is

        speech.ffmpeg = fake_ffmpeg(tmp_path, "sys.stderr.write('bad input\\n')\nsys.exit(1)")
        assert await speech.playable(MP3) == Voice(MP3, "audio/mpeg", "reply.mp3")

        speech.ffmpeg = fake_ffmpeg(tmp_path, "time.sleep(30)")
        speech.convert_seconds = 0.2  # (the one real wait: a subprocess's time)
        assert await speech.playable(MP3) == Voice(MP3, "audio/mpeg", "reply.mp3")

        speech.ffmpeg = str(tmp_path / "no-such-ffmpeg")
        assert await speech.playable(b"no known audio") is None
    finally:
        await bot.close()


async def test_a_reply_to_several_people_is_said_aloud_if_each_wants_it_counted_for_each(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    """One turn answering Bob and Alice in a group acts for each: Bob's /voice off keeps it
    in text though Alice, the newest, made no choice; a reply said aloud to Alice and Carol
    counts against each one's hour, not only the newest's."""
    router = await speaking_router(fake_openai.base_url, chat_model="talker")
    persona = make_persona(scope="channel", voice=VoicePolicy(speak="always", voice="nova"))
    settings = EngineConfig(timezone="UTC", burst_seconds=2.0, media_per_hour=1)
    bot = await open_bot(tmp_path / "k.sqlite3", [persona], router=router, settings=settings)
    timer = bot.timer
    assert timer is not None
    front = Front(bot.engine, bot.services, "b", "pip")

    def said(text: str, user: str) -> ChatEvent:
        return make_event(text, platform="telegram", is_dm=False, user_id=user)

    async def burst(*events: ChatEvent) -> Spoken | None:
        pending = []
        for event in events:
            started = timer.started
            pending.append(asyncio.create_task(front.receive(event, settle=True)))
            async with asyncio.timeout(10):
                while True:  # until it waits out its window
                    if timer.started > started:
                        break
                    await asyncio.sleep(0)
            await timer.advance(0.5)
        await timer.advance(2.0)
        async with asyncio.timeout(10):
            return (await asyncio.gather(*pending))[-1]

    try:
        await commands.run(
            bot.services, make_event("", platform="telegram", user_id="u2"), "voice", "off"
        )
        quiet = await burst(said("Pip, hello", "u2"), said("Pip, hi", "u1"))
        assert quiet is not None and quiet.reply.text and quiet.reply.voice is None
        loud = await burst(said("Pip, hi again", "u1"), said("Pip, hey", "u3"))
        assert loud is not None and loud.reply.voice is not None
        # Alice's hour holds one: the reply said to both counted against her too.
        alone = await burst(said("Pip, one more", "u1"))
        assert alone is not None and alone.reply.text and alone.reply.voice is None
        assert len(fake_openai.speeches) == 1
    finally:
        await bot.close()
