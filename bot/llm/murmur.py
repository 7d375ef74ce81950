"""The offline model's voice: a murmur, not speech, so that a reply said aloud can be tried end
to end without a key and nobody mistakes it for words.

Each word of the text is one short hummed note whose pitch comes from the word (and the voice
from the persona's `voice`, so two personas murmur apart); a sentence's end is a longer pause.
The same text and voice always give the same audio. It is a WAV file (16-bit mono), which
bot.media.speech turns into a voice note as it does any other format.
"""

from __future__ import annotations

import io
import re
import wave
import zlib

import numpy as np

__all__ = ["RATE", "murmur"]

RATE = 16_000  # samples a second
MAX_WORDS = 60  # murmured, of a longer text: a murmur says nothing, so it stays short
NOTE_SECONDS = 0.16
GAP_SECONDS = 0.05
PAUSE_SECONDS = 0.35  # after a sentence
_WORD = re.compile(r"\w+[.!?。！？]*|[.!?。！？]+")
_END = ".!?。！？"
# A CJK character is a syllable of its own; a run of other letters is one word.
_SYLLABLE = re.compile(
    r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]|[^\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+"
)


def murmur(text: str, voice: str) -> bytes:
    """`text` murmured in `voice` as WAV bytes (a moment of silence when it has no words)."""
    base = 150.0 + zlib.crc32(voice.encode()) % 120  # Hz
    words = [w for token in _WORD.findall(text) for w in _syllables(token)][:MAX_WORDS]
    parts = [_silence(GAP_SECONDS)]
    for word in words:
        if word.strip(_END):
            step = zlib.crc32(word.strip(_END).lower().encode()) % 8  # of a whole-tone scale
            parts.append(_note(base * 2 ** (step / 6), NOTE_SECONDS))
        parts.append(_silence(PAUSE_SECONDS if word[-1] in _END else GAP_SECONDS))
    samples = np.concatenate(parts)
    out = io.BytesIO()
    with wave.open(out, "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(RATE)
        file.writeframes((samples * 0.3 * 32767).astype("<i2").tobytes())
    return out.getvalue()


def _syllables(token: str) -> list[str]:
    """A token as the notes it is hummed in: a word of letters is one, a CJK character one
    (the punctuation after the token stays with its last)."""
    core = token.rstrip(_END)
    notes = _SYLLABLE.findall(core)
    if len(notes) < 2:
        return [token]
    return [*notes[:-1], notes[-1] + token[len(core) :]]


def _note(frequency: float, seconds: float) -> np.ndarray:
    t = np.arange(int(RATE * seconds)) / RATE
    envelope = np.sin(np.pi * t / seconds) ** 2  # soft in, soft out: a hum, not a beep
    tone = np.sin(2 * np.pi * frequency * t) + 0.3 * np.sin(4 * np.pi * frequency * t)
    return np.asarray(envelope * tone / 1.3, dtype=np.float64)


def _silence(seconds: float) -> np.ndarray:
    return np.zeros(int(RATE * seconds))
