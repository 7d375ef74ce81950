"""bot/llm/murmur.py: the offline model's voice, a hummed note a word, as a WAV file."""

from __future__ import annotations

import io
import wave

import numpy as np

from bot.llm.murmur import MAX_WORDS, RATE, murmur
from bot.media.speech import audio_kind


def samples(audio: bytes) -> np.ndarray:
    with wave.open(io.BytesIO(audio)) as file:
        assert (file.getnchannels(), file.getsampwidth(), file.getframerate()) == (1, 2, RATE)
        return np.frombuffer(file.readframes(file.getnframes()), "<i2")


def notes(audio: bytes) -> int:
    """How many hummed notes: runs of sound (10 ms frames) between silences."""
    sound = np.abs(samples(audio).astype(np.int32))
    frames = sound[: len(sound) // 160 * 160].reshape(-1, 160).max(axis=1)
    loud = np.concatenate([[0], (frames > 300).astype(np.int8)])
    return int(np.count_nonzero(np.diff(loud) == 1))


def test_a_note_a_word_and_a_pause_after_a_sentence() -> None:
    audio = murmur("Hello there. How are you?", "alloy")
    assert audio_kind(audio) == ("audio/wav", "wav")
    assert notes(audio) == 5
    # The pause after "there." makes it longer than five words in one sentence.
    assert len(samples(audio)) > len(samples(murmur("Hello there how are you", "alloy")))


def test_chinese_is_a_note_a_character() -> None:
    assert notes(murmur("你好吗？", "alloy")) == 3
    assert notes(murmur("café", "alloy")) == 1  # a word with an accent is still one


def test_the_same_words_and_voice_always_murmur_the_same() -> None:
    assert murmur("Good morning", "nova") == murmur("Good morning", "nova")
    assert murmur("Good morning", "nova") != murmur("Good morning", "onyx")  # a pitch apart
    assert murmur("Good morning", "nova") != murmur("Good evening", "nova")


def test_a_long_text_is_murmured_only_so_long_and_nothing_is_a_moment_of_silence() -> None:
    assert notes(murmur("word " * (MAX_WORDS + 40), "nova")) == MAX_WORDS
    quiet = samples(murmur("", "nova"))
    assert 0 < len(quiet) < RATE and not quiet.any()
