"""Events and replies: what counts as an empty message, and splitting for platform limits."""

from __future__ import annotations

import random

import pytest

from adapters.discord import PLATFORM as DISCORD
from adapters.telegram import PLATFORM as TELEGRAM
from bot.events import Attachment, Reply, split_chunks
from tests.fakes.factories import make_event


def letters(text: str) -> str:
    """Every non-space character, in order."""
    return "".join(text.split())


# --- events ----------------------------------------------------------------------------------


def test_an_event_is_empty_without_text_or_attachments() -> None:
    assert make_event("  \n").is_empty
    assert not make_event("hi").is_empty
    assert not make_event("", attachments=(Attachment("a.png", "https://x/a.png"),)).is_empty


def test_platform_limits() -> None:
    assert DISCORD.limit == 2000
    assert TELEGRAM.limit == 4096


def test_reply_build_splits_for_the_limit() -> None:
    reply = Reply.build("One. Two. Three.", "HAPPY", 10)
    assert reply.chunks == ("One. Two.", "Three.")
    assert not reply.failed
    assert Reply.build("sorry", "SAD", 100, failed=True).failed


# --- split_chunks ----------------------------------------------------------------------------


def test_short_text_is_one_chunk_and_nothing_is_no_chunk() -> None:
    assert split_chunks("  hello  ", 2000) == ("hello",)
    assert split_chunks("", 2000) == ()
    assert split_chunks("   ", 10) == ()


def test_a_limit_must_be_positive() -> None:
    with pytest.raises(ValueError):
        split_chunks("text", 0)


def test_prefers_sentence_boundaries() -> None:
    text = "The cat sat down. It looked at me for a while. Then it slept."
    chunks = split_chunks(text, 40)
    assert chunks == ("The cat sat down.", "It looked at me for a while.", "Then it slept.")


def test_prefers_paragraphs_over_sentences() -> None:
    text = "First paragraph. Still first.\n\nSecond paragraph here."
    assert split_chunks(text, 50) == ("First paragraph. Still first.", "Second paragraph here.")


def test_falls_back_to_word_boundaries() -> None:
    text = "one two three four five six seven eight nine ten eleven twelve"
    chunks = split_chunks(text, 20)
    assert all(len(c) <= 20 for c in chunks)
    assert " ".join(chunks) == text  # no word cut in two


def test_a_word_longer_than_the_limit_is_cut() -> None:
    text = "x" * 25
    assert split_chunks(text, 10) == ("x" * 10, "x" * 10, "x" * 5)


def test_chinese_text_without_spaces_splits_after_sentence_marks() -> None:
    sentence = "今天天气很好，我们去公园散步吧。"  # 16 characters
    text = sentence * 10
    chunks = split_chunks(text, 50)
    assert all(len(c) <= 50 for c in chunks)
    assert all(c.endswith("。") for c in chunks)
    assert "".join(chunks) == text


def test_chinese_text_without_any_punctuation_is_cut_at_the_limit() -> None:
    text = "猫" * 105
    chunks = split_chunks(text, 50)
    assert [len(c) for c in chunks] == [50, 50, 5]
    assert "".join(chunks) == text


def _random_text(rng: random.Random) -> str:
    pieces = ["word", "longerword", "x" * 60, "。", "！", "你好世界", ". ", "? ", "\n", "\n\n", " "]
    return "".join(rng.choice(pieces) + rng.choice(["", " "]) for _ in range(rng.randint(0, 400)))


@pytest.mark.parametrize("seed", range(30))
def test_chunks_never_exceed_the_limit_and_lose_nothing(seed: int) -> None:
    rng = random.Random(seed)
    text = _random_text(rng)
    limit = rng.choice([5, 17, 50, 200, 2000])

    chunks = split_chunks(text, limit)

    assert all(0 < len(c) <= limit for c in chunks)
    assert all(c == c.strip() for c in chunks)
    assert letters("".join(chunks)) == letters(text)


def test_a_long_reply_fits_discord() -> None:
    text = "\n\n".join(
        " ".join(f"Sentence {p}.{s} goes on for a bit." for s in range(30)) for p in range(10)
    )
    chunks = split_chunks(text, DISCORD.limit)
    assert len(chunks) > 1
    assert all(len(c) <= 2000 for c in chunks)
    assert all(c.endswith(".") for c in chunks)
    assert letters("".join(chunks)) == letters(text)
