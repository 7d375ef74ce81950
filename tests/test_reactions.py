"""Reactions (bot.turn.reactions): a message that only acknowledges the persona's reply gets an
emoji
of its last reply's emotion, with no model call, and still joins the conversation."""

from __future__ import annotations

from pathlib import Path

import pytest
from telegram.constants import ReactionEmoji

from bot.persona.file import REACTIONS, Emotions, Persona
from bot.turn.reactions import is_acknowledgement
from tests.fakes.factories import make_event, make_persona, open_bot
from tests.fakes.models import ScriptedChatModel

REACTS = {"NEUTRAL": "👌", "HAPPY": "🥰", "SAD": "😢"}


@pytest.mark.parametrize(
    "text",
    [
        "thanks!",
        "ok",
        "OK thanks Pip",
        "好的",
        "好的，谢谢！",
        "👍",
        "👍🏽",
        "thank you so much 🥰",
    ],
)
def test_acknowledgements(text: str) -> None:
    assert is_acknowledgement(text, ["Pip"])


@pytest.mark.parametrize(
    "text",
    [
        "",
        "ok why",
        "thanks, what about tomorrow?",
        "好的，明天呢？",
        "my cat is called Mochi",
        "no",
    ],
)
def test_more_than_an_acknowledgement(text: str) -> None:
    assert not is_acknowledgement(text, ["Pip"])


def test_the_reactions_are_the_ones_telegram_allows() -> None:
    assert {emoji.value for emoji in ReactionEmoji} == REACTIONS


def test_a_reaction_must_be_an_emotion_and_an_allowed_emoji() -> None:
    assert Emotions(["NEUTRAL"], reactions={"neutral": "👌"}).reactions == {"NEUTRAL": "👌"}
    with pytest.raises(ValueError, match=r"emotions\.reactions\.HAPPY is not in emotions\.names"):
        Emotions(["NEUTRAL"], reactions={"HAPPY": "👌"})
    with pytest.raises(ValueError, match="not an emoji Telegram lets a bot react with"):
        Emotions(["NEUTRAL"], reactions={"NEUTRAL": "🐈"})


async def test_thanks_after_a_reply_gets_its_emotions_emoji_and_no_model_call(
    tmp_path: Path,
) -> None:
    model = ScriptedChatModel(["[HAPPY] Here is the recipe!"])
    bot = await open_bot(tmp_path / "k.sqlite3", [make_persona(reactions=REACTS)], model=model)
    try:
        event = make_event("a recipe please?", platform="telegram", message_id="1")
        assert (await bot.engine.handle(event)).text == "Here is the recipe!"
        thanks = make_event("thanks Pip!", platform="telegram", message_id="2")
        reply = await bot.engine.handle(thanks)
        assert (reply.text, reply.reaction, reply.emotion) == ("", "🥰", "HAPPY")
        assert len(model.calls) == 1
        session = await bot.engine.session(thanks)
        assert [t.text for t in session.turns][-1] == "thanks Pip!"  # remembered as said
        assert session.answered("2")
        # Thanked twice: the persona's reply is no longer the last word, so it answers.
        again = await bot.engine.handle(make_event("ok", platform="telegram", message_id="3"))
        assert (again.text, again.reaction) == ("ok", "")
    finally:
        await bot.close()


@pytest.mark.parametrize(
    ("persona", "platform", "first"),
    [
        (make_persona(), "telegram", "hi"),  # no reactions in its file
        (make_persona(reactions=REACTS), "web", "hi"),  # a page shows no reactions
        (make_persona(reactions=REACTS), "telegram", ""),  # nothing said before
    ],
)
async def test_otherwise_it_replies(
    tmp_path: Path, persona: Persona, platform: str, first: str
) -> None:
    bot = await open_bot(tmp_path / "k.sqlite3", [persona])
    try:
        if first:
            await bot.engine.handle(make_event(first, platform=platform, message_id="1"))
        reply = await bot.engine.handle(make_event("thanks!", platform=platform, message_id="2"))
        assert (reply.text, reply.reaction) == ("ok", "")
    finally:
        await bot.close()
