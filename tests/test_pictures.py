"""Pictures users send (bot/media/pictures.py): shrunk before a model sees them, refused by their
declared size before any download, described once by the vision tier (or shown to a chat model
that sees, which says what it saw), kept as words in the conversation; stickers told by their
title; a user's media counted per hour; the offline model tells what it can of a picture."""

from __future__ import annotations

import json
import random
import struct
import zlib
from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta
from io import BytesIO
from pathlib import Path

import pytest
from PIL import Image

from bot.access import Gate
from bot.chat_model import Message
from bot.config import (
    TIERS,
    AccessConfig,
    EngineConfig,
    ModelsConfig,
    ProviderConfig,
    TierConfig,
)
from bot.events import Attachment, FetchError
from bot.front import Front
from bot.llm.offline import OfflineChatModel
from bot.llm.router import ModelRouter, build_router
from bot.llm.sight import glance
from bot.media.pictures import MAX_PER_MESSAGE, MAX_PIXELS, PictureError, shrink
from bot.prompts.pictures import DESCRIBE_TASK, SEEN_NOTE
from tests.fakes.factories import Bot, make_event, make_picture, open_bot
from tests.fakes.models import ScriptedChatModel, encoding
from tests.fakes.openai_server import FakeOpenAI


class Download:
    """An attachment's fetch that counts its calls, and fails if told to."""

    def __init__(self, data: bytes = b"", *, fails: bool = False) -> None:
        self.data, self.fails, self.calls = data, fails, 0

    async def __call__(self) -> bytes:
        self.calls += 1
        if self.fails:
            raise FetchError("gone")
        return self.data


def photo(data: bytes, name: str = "kitten.png", size: int | None = None) -> Attachment:
    declared = len(data) if size is None else size
    return Attachment(name, f"https://x/{name}", "image/png", declared, Download(data))


def vision_calls(model: ScriptedChatModel) -> list[Sequence[Message]]:
    return [c.messages for c in model.calls if c.messages[0].content.startswith(DESCRIBE_TASK)]


def chat_calls(model: ScriptedChatModel) -> list[Sequence[Message]]:
    return [c.messages for c in model.calls if not c.messages[0].content.startswith(DESCRIBE_TASK)]


def describer(messages: Sequence[Message]) -> str:
    if messages[0].content.startswith(DESCRIBE_TASK):
        return "  A grey tabby kitten\nasleep on a red sofa.\n"
    return "[NEUTRAL] What a sweet kitten!"


async def turns_of(bot: Bot) -> list[str]:
    return [t.text for t in (await bot.desk.info(make_event())).turns]


# --- shrinking ------------------------------------------------------------------------------


def test_a_large_picture_is_shrunk_to_a_jpeg_within_its_side() -> None:
    big = make_picture(3000, 2000, format="JPEG")
    picture = shrink("beach.jpg", big, 1024)
    assert (picture.width, picture.height, picture.format) == (1024, 683, "JPEG")
    with Image.open(BytesIO(picture.jpeg)) as image:
        assert (image.format, image.size) == ("JPEG", (1024, 683))


def test_a_transparent_picture_becomes_an_opaque_jpeg() -> None:
    sticker = make_picture(200, 300, (0, 0, 0, 0), mode="RGBA")
    picture = shrink("logo.png", sticker, 100)
    assert (picture.width, picture.height, picture.format) == (67, 100, "PNG")
    with Image.open(BytesIO(picture.jpeg)) as image:
        assert image.getpixel((30, 50)) == pytest.approx((255, 255, 255), abs=2)


@pytest.mark.parametrize("data", [b"", b"not a picture at all", make_picture()[:40]])
def test_a_damaged_picture_is_refused(data: bytes) -> None:
    with pytest.raises(PictureError) as refused:
        shrink("cat.png", data, 1024)
    assert refused.value.key == "picture_unreadable"


def test_a_picture_of_too_many_pixels_is_refused_before_it_is_decoded() -> None:
    # Only a header claiming 10000x6000, then no pixels: decoding it would be the harm.
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", 10_000, 6_000, 8, 2, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", b"") + chunk(b"IEND", b"")
    with pytest.raises(PictureError) as refused:
        shrink("bomb.png", png, 1024)
    assert refused.value.key == "picture_too_big"
    assert refused.value.fields["size"] == "10000x6000 pixels"
    assert refused.value.fields["most"] == f"{MAX_PIXELS // 1_000_000} megapixels"


def test_the_offline_glance_tells_shape_size_and_colours() -> None:
    assert glance(make_picture(640, 480, (200, 30, 30))) == (
        "a landscape picture, 640x480 pixels, mostly red"
    )
    half = Image.new("RGB", (100, 300), (255, 255, 255))
    half.paste((40, 80, 200), (0, 0, 100, 100))
    out = BytesIO()
    half.save(out, "PNG")
    assert glance(out.getvalue()) == "a portrait picture, 100x300 pixels, mostly white and blue"
    assert "not a picture" in glance(b"junk")


# --- described by the vision tier -----------------------------------------------------------


async def test_a_picture_is_described_once_and_kept_as_words(tmp_path: Path) -> None:
    model = ScriptedChatModel(default=describer)
    bot = await open_bot(tmp_path / "k.sqlite3", model=model)
    try:
        front = Front(bot.engine, bot.services, "b", "pip")
        event = make_event("look at her!", attachments=(photo(make_picture(2000, 1500)),))
        spoken = await front.receive(event)
        assert spoken is not None and spoken.reply.text == "What a sweet kitten!"
        [described] = vision_calls(model)
        [jpeg] = described[-1].images
        with Image.open(BytesIO(jpeg)) as image:
            assert max(image.size) == 1024
        [chat] = chat_calls(model)
        assert not any(m.images for m in chat)  # the chat model gets words
        assert "A grey tabby kitten asleep on a red sofa." in chat[-1].content
        user, _ = await turns_of(bot)
        assert user == (
            "look at her! [picture kitten.png, seen: A grey tabby kitten asleep on a red sofa.]"
        )
        assert bot.router.usage["vision"].images == 1 and bot.router.usage["chat"].images == 0
        assert bot.router.purposes["vision"].calls == 1
    finally:
        await bot.close()


async def test_what_was_seen_is_encoded_with_the_conversation(tmp_path: Path) -> None:
    model = ScriptedChatModel(default=describer)
    bot = await open_bot(tmp_path / "k.sqlite3", model=model)
    try:
        event = make_event("my new kitten!", attachments=(photo(make_picture()),))
        await Front(bot.engine, bot.services, "b", "pip").receive(event)
        assert await bot.desk.end(make_event())
        model.push(encoding(("Alice showed me her new kitten, a grey tabby.", "special", 2)))
        [encoded] = await bot.lifecycle.encode_pending()
        asked = model.calls[-1]
        assert "[picture NAME, seen: ...]" in asked.messages[0].content  # how to read it
        assert "A grey tabby kitten asleep on a red sofa." in asked.messages[-1].content
        [memory] = await bot.bank.get(bot.desk.event_scope(make_event()), encoded.memory_ids)
        assert memory.text.endswith("Alice showed me her new kitten, a grey tabby.")
    finally:
        await bot.close()


async def test_without_a_key_the_offline_model_describes_the_picture(tmp_path: Path) -> None:
    router = ModelRouter(dict.fromkeys(TIERS, OfflineChatModel()))
    bot = await open_bot(tmp_path / "k.sqlite3", router=router)
    try:
        front = Front(bot.engine, bot.services, "b", "pip")
        blue = photo(make_picture(300, 300, (40, 80, 200)), "sky.png")
        spoken = await front.receive(make_event("", attachments=(blue,)))
        assert spoken is not None and "(offline model)" in spoken.reply.text
        [user, _] = await turns_of(bot)
        assert user == (
            "[picture sky.png, seen: (offline model) a square picture, 300x300 pixels, "
            "mostly blue.]"
        )
    finally:
        await bot.close()


# --- shown to a chat model that sees ----------------------------------------------------------


async def test_a_chat_model_that_sees_gets_the_picture_and_says_what_it_saw(
    tmp_path: Path,
) -> None:
    model = ScriptedChatModel(default="[saw: a grey tabby kitten on a sofa] [HAPPY] So fluffy!")
    router = ModelRouter(dict.fromkeys(TIERS, model), settings={"chat": TierConfig(vision=True)})
    bot = await open_bot(tmp_path / "k.sqlite3", router=router)
    try:
        front = Front(bot.engine, bot.services, "b", "pip")
        event = make_event("my new kitten", attachments=(photo(make_picture()),))
        spoken = await front.receive(event)
        assert spoken is not None and spoken.reply.text == "So fluffy!"
        assert spoken.reply.emotion == "HAPPY"
        assert vision_calls(model) == []  # seen once, by the chat model itself
        [chat] = chat_calls(model)
        assert len(chat[-1].images) == 1 and SEEN_NOTE in chat[-1].content
        user, reply = await turns_of(bot)
        assert user == "my new kitten [picture kitten.png] [seen: a grey tabby kitten on a sofa]"
        assert reply == "So fluffy!"
        session = await bot.engine.session(make_event())
        assert all(t.images == () for t in session.turns)  # shown once, then let go
        assert "images" not in session.snapshot()["turns"][0]
        await front.receive(make_event("and she purrs"))
        assert not any(m.images for m in chat_calls(model)[-1])  # not shown again
        assert bot.router.usage["chat"].images == 1
    finally:
        await bot.close()


async def test_the_offline_model_marked_vision_says_what_it_saw(tmp_path: Path) -> None:
    offline = OfflineChatModel()
    router = ModelRouter(dict.fromkeys(TIERS, offline), settings={"chat": TierConfig(vision=True)})
    bot = await open_bot(tmp_path / "k.sqlite3", router=router)
    try:
        grey = photo(make_picture(200, 100, (128, 128, 128)), "rain.png")
        spoken = await Front(bot.engine, bot.services, "b", "pip").receive(
            make_event("", attachments=(grey,), platform="web")
        )
        assert spoken is not None and "[saw:" not in spoken.reply.text
        assert spoken.reply.text.startswith("(offline model)")
        session = await bot.engine.session(make_event(platform="web"))
        assert session.turns[0].text == (
            "[picture rain.png] [seen: a landscape picture, 200x100 pixels, mostly grey]"
        )
    finally:
        await bot.close()


async def test_eco_mode_describes_with_the_cheap_model_even_for_a_seeing_chat_model(
    tmp_path: Path,
) -> None:
    model = ScriptedChatModel(default=describer)
    settings = dict.fromkeys(TIERS, TierConfig(vision=True))
    router = ModelRouter(dict.fromkeys(TIERS, model), eco_mode=True, settings=settings)
    bot = await open_bot(tmp_path / "k.sqlite3", router=router)
    try:
        await Front(bot.engine, bot.services, "b", "pip").receive(
            make_event("", attachments=(photo(make_picture()),))
        )
        assert len(vision_calls(model)) == 1
        assert not any(m.images for m in chat_calls(model)[0])
    finally:
        await bot.close()


# --- refused, and said so ------------------------------------------------------------------


async def test_pictures_it_cannot_look_at_are_said_and_the_message_is_kept(
    tmp_path: Path,
) -> None:
    model = ScriptedChatModel(default=describer)
    settings = EngineConfig(timezone="UTC", burst_seconds=0, picture_max_kb=1)
    bot = await open_bot(tmp_path / "k.sqlite3", model=model, settings=settings)
    try:
        front = Front(bot.engine, bot.services, "b", "pip")
        unfetched = Download(b"x" * 10)
        big = Attachment("huge.png", "https://x/huge.png", "image/png", 5 << 20, unfetched)
        gone = Attachment("gone.png", "https://x/gone.png", "image/png", 10, Download(fails=True))
        broken = photo(b"\x89PNG broken", "broken.png")
        spoken = await front.receive(make_event("three of them", attachments=(big, gone, broken)))
        assert spoken is not None
        assert spoken.reply.text.splitlines()[:3] == [
            "huge.png is too big for me to look at (5 MB; the most I can take is 1 KB).",
            "I couldn't download gone.png. Could you send it again?",
            "I couldn't open broken.png: it isn't a picture I can read (damaged, or a kind I "
            "don't know).",
        ]
        assert spoken.reply.text.endswith("What a sweet kitten!")
        assert unfetched.calls == 0
        assert vision_calls(model) == []
        [user, _] = await turns_of(bot)
        assert user == (
            "three of them [picture huge.png, not looked at] [picture gone.png, not looked at] "
            "[picture broken.png, not looked at]"
        )
    finally:
        await bot.close()


async def test_a_vision_tier_that_fails_is_said_in_the_personas_language(tmp_path: Path) -> None:
    from bot.chat_model import ModelError
    from tests.fakes.factories import make_persona

    model = ScriptedChatModel([ModelError("down")], default="[NEUTRAL] 好可爱")
    bot = await open_bot(tmp_path / "k.sqlite3", [make_persona(language="zh")], model=model)
    try:
        spoken = await Front(bot.engine, bot.services, "b", "pip").receive(
            make_event("", attachments=(photo(make_picture()),))
        )
        assert spoken is not None
        assert spoken.reply.text == "kitten.png我收到了，但现在看不清楚。\n\n好可爱"
    finally:
        await bot.close()


async def test_a_picture_delivered_again_or_from_a_blocked_sender_is_not_looked_at(
    tmp_path: Path,
) -> None:
    model = ScriptedChatModel(default=describer)
    bot = await open_bot(tmp_path / "k.sqlite3", model=model)
    try:
        front = Front(bot.engine, bot.services, "b", "pip")
        fetch = Download(make_picture())
        cat = Attachment("cat.png", "https://x/cat.png", "image/png", 100, fetch)
        event = make_event("", attachments=(cat,), message_id="m1")
        assert await front.receive(event) is not None
        assert await front.receive(event) is None  # after a crash: answered already
        bot.engine.admission.gate = Gate(AccessConfig(block_users=["u2"]))
        assert await front.receive(replace(event, user_id="u2", message_id="m2")) is None
        assert fetch.calls == 1 and len(vision_calls(model)) == 1
    finally:
        await bot.close()


# --- stickers, and how many ------------------------------------------------------------------


async def test_a_sticker_is_told_by_its_title_without_a_download_or_a_model_call(
    tmp_path: Path,
) -> None:
    model = ScriptedChatModel(default="[NEUTRAL] hehe")
    bot = await open_bot(tmp_path / "k.sqlite3", model=model)
    try:
        fetch = Download(make_picture())
        sticker = Attachment("sticker.webp", "x", "image/webp", 100, fetch, sticker="😹 (Cats)")
        gif = Attachment("dance.mp4", "y", "video/mp4", 100, fetch, sticker="dancing cat")
        await Front(bot.engine, bot.services, "b", "pip").receive(
            make_event("", attachments=(sticker, gif))
        )
        assert fetch.calls == 0 and vision_calls(model) == []
        [user, _] = await turns_of(bot)
        assert user == "[sticker: 😹 (Cats)] [GIF: dancing cat]"
    finally:
        await bot.close()


async def test_a_users_media_are_counted_per_hour(tmp_path: Path) -> None:
    model = ScriptedChatModel(default=describer)
    settings = EngineConfig(timezone="UTC", burst_seconds=0, media_per_hour=2)
    bot = await open_bot(tmp_path / "k.sqlite3", model=model, settings=settings)
    try:
        front = Front(bot.engine, bot.services, "b", "pip")
        pictures = tuple(photo(make_picture(), f"p{i}.png") for i in range(3))
        spoken = await front.receive(make_event("", attachments=pictures))
        assert spoken is not None
        assert spoken.reply.text.startswith("That's a lot of pictures for one hour")
        assert len(vision_calls(model)) == 2
        other = await front.receive(make_event("", user_id="u2", attachments=pictures[:1]))
        assert other is not None and len(vision_calls(model)) == 3  # another user's own hour
        bot.clock.advance(timedelta(hours=1))
        await front.receive(make_event("", attachments=pictures[:1]))
        assert len(vision_calls(model)) == 4
    finally:
        await bot.close()


async def test_a_picture_refused_for_its_size_is_not_counted(tmp_path: Path) -> None:
    model = ScriptedChatModel(default=describer)
    settings = EngineConfig(timezone="UTC", burst_seconds=0, media_per_hour=1, picture_max_kb=1)
    bot = await open_bot(tmp_path / "k.sqlite3", model=model, settings=settings)
    try:
        front = Front(bot.engine, bot.services, "b", "pip")
        huge = photo(make_picture(), "huge.png", size=10 * 1024 * 1024)
        spoken = await front.receive(make_event("", attachments=(huge,)))
        assert spoken is not None and vision_calls(model) == []
        assert huge.fetch is not None and isinstance(huge.fetch, Download)
        assert huge.fetch.calls == 0  # refused by its declared size
        small = photo(make_picture(), "small.png", size=100)  # its real size is under 1 KB
        await front.receive(make_event("", attachments=(small,)))
        assert len(vision_calls(model)) == 1  # the hour's one picture is still to be had
        await front.receive(make_event("", attachments=(photo(make_picture(), "third.png"),)))
        assert len(vision_calls(model)) == 1  # and now it is spent
    finally:
        await bot.close()


async def test_at_most_a_few_pictures_of_a_message_are_looked_at(tmp_path: Path) -> None:
    model = ScriptedChatModel(default=describer)
    settings = EngineConfig(timezone="UTC", burst_seconds=0, media_per_hour=MAX_PER_MESSAGE + 1)
    bot = await open_bot(tmp_path / "k.sqlite3", model=model, settings=settings)
    try:
        front = Front(bot.engine, bot.services, "b", "pip")
        many = tuple(photo(make_picture(), f"p{i}.png") for i in range(MAX_PER_MESSAGE + 1))
        spoken = await front.receive(make_event("", attachments=many))
        assert spoken is not None and spoken.reply.text == "What a sweet kitten!"
        assert len(vision_calls(model)) == MAX_PER_MESSAGE
        [user, _] = await turns_of(bot)
        assert user.endswith(f"[picture p{MAX_PER_MESSAGE}.png, not looked at]")
        # The one not looked at was not counted: the hour has room for one more.
        sticker = Attachment("s.webp", "", "image/webp", sticker="🐱")
        await front.receive(make_event("", attachments=(sticker, sticker)))
        assert (await turns_of(bot))[-2] == "[sticker: 🐱] [sticker 🐱, not looked at]"
    finally:
        await bot.close()


# --- through the openai SDK, against the fake server ----------------------------------------


async def openai_router(fake: FakeOpenAI, *, vision: bool) -> ModelRouter:
    config = ModelsConfig(
        providers={"openai": ProviderConfig(base_url=fake.base_url, max_retries=0)},
        chat=TierConfig(model="seeing" if vision else "blind", vision=vision),
        vision=TierConfig(model="describer"),
    )
    return await build_router(config, {"OPENAI_API_KEY": "k"}, rng=random.Random(0))


async def test_an_openai_vision_tier_describes_and_a_seeing_chat_model_is_shown(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    picture = make_picture(1600, 1200, (40, 160, 60), format="JPEG")
    router = await openai_router(fake_openai, vision=False)
    bot = await open_bot(tmp_path / "a" / "k.sqlite3", router=router)
    try:
        fake_openai.reply_text("A green field under a clear sky.")
        spoken = await Front(bot.engine, bot.services, "b", "pip").receive(
            make_event("home!", attachments=(photo(picture, "field.jpg"),))
        )
        assert spoken is not None
        describe, chat = fake_openai.chat_requests
        assert (describe["model"], chat["model"]) == ("describer", "blind")
        [[jpeg], []] = fake_openai.images
        with Image.open(BytesIO(jpeg)) as image:
            assert (image.format, image.size) == ("JPEG", (1024, 768))
        assert "A green field under a clear sky." in json.dumps(chat["messages"][-1])
    finally:
        await bot.close()

    router = await openai_router(fake_openai, vision=True)
    bot = await open_bot(tmp_path / "b" / "k.sqlite3", router=router)
    try:
        fake_openai.reply_text("[saw: a green field] [NEUTRAL] Lovely and open.")
        spoken = await Front(bot.engine, bot.services, "b", "pip").receive(
            make_event("home!", attachments=(photo(picture, "field.jpg"),))
        )
        assert spoken is not None and spoken.reply.text == "Lovely and open."
        chat = fake_openai.chat_requests[-1]
        assert chat["model"] == "seeing" and len(fake_openai.images[-1]) == 1
        [user, _] = await turns_of(bot)
        assert user == "home! [picture field.jpg] [seen: a green field]"
    finally:
        await bot.close()
