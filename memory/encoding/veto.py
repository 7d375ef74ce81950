"""A learned second opinion on what `memory.encoding.spotting.spot` finds: does the message
really promise, plan or ask for something, or does it only mention a time? A veto only: it may
drop what the rules found, never add anything.

The rules generalise to new writers' distractors at about one false positive in ten: each writer
brings kinds of distractor no rule has seen. A logistic regression over hashed features of the
whole message (English: its lower-cased words and pairs of words; Chinese: runs of one to three
characters; whether it states a clock time) weighs the message as a whole, as the rules cannot.
(Features of the rules' own reading were tried first and taught nothing: the rules find none of
the distractors of the parts it is fitted on.)

The weights ship beside this module (veto.json, package data): fitted by benchmarks/veto_fit.py
from the labelled messages of benchmarks/data/intentions.json's tune parts, deterministically (a
test refits them and compares). Scoring one find is a dictionary lookup per feature."""

from __future__ import annotations

import functools
import json
import math
import re
import zlib
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Final

from memory.encoding.spotting import Spotted

__all__ = ["BUCKETS", "WEIGHTS_FILE", "Veto", "features", "kept", "veto"]

BUCKETS: Final = 1 << 20  # hashed features: few enough collisions at this size to ignore
WEIGHTS_FILE: Final = "veto.json"

_WORD = re.compile(r"[a-z]+(?:['\u2019][a-z]+)?|\d+|[?!]")
_CJK = re.compile(r"[\u3400-\u9fff]+")
_CLOCK = re.compile(r"\d\s*(?:[ap]\.?m|:\d\d|点)|[一二三四五六七八九十两]点|noon|midnight|o'?clock")


def _hashed(name: str) -> int:
    return zlib.crc32(name.encode()) & (BUCKETS - 1)


def features(text: str) -> list[int]:
    """The hashed features of a message: its words and pairs of words (English, lower-cased,
    numbers as one word), its runs of one to three Chinese characters, and whether it states a
    clock time."""
    lowered = text.casefold()
    tokens = ["0" if t.isdigit() else t for t in _WORD.findall(lowered)]
    names = [*tokens, *(f"{a} {b}" for a, b in zip(["^", *tokens], tokens, strict=False))]
    for run in _CJK.findall(lowered):
        for size in (1, 2, 3):
            names.extend(run[i : i + size] for i in range(len(run) - size + 1))
    if _CLOCK.search(lowered):
        names.append("<clock>")
    return sorted({_hashed(n) for n in names})


@dataclass(slots=True, frozen=True)
class Veto:
    """The fitted model: its bias, its weights by hashed feature (those left out weigh
    nothing) and the probability below which a find is dropped."""

    bias: float
    weights: MappingProxyType[int, float]
    threshold: float

    def probability(self, text: str) -> float:
        """How likely the message `text` tells of an intention, by the model."""
        score = self.bias + sum(self.weights.get(f, 0.0) for f in features(text))
        return 1 / (1 + math.exp(-max(-30.0, min(30.0, score))))

    def kept(self, text: str, found: list[Spotted]) -> list[Spotted]:
        """`found` (all found in `text`), or nothing when the model vetoes the message."""
        return found if not found or self.probability(text) >= self.threshold else []


@functools.cache
def veto() -> Veto:
    """The shipped model, read once."""
    raw = json.loads(
        (resources.files("memory.encoding") / WEIGHTS_FILE).read_text(encoding="utf-8")
    )
    weights = {int(k): float(v) for k, v in raw["weights"].items()}
    return Veto(float(raw["bias"]), MappingProxyType(weights), float(raw["threshold"]))


def kept(text: str, found: list[Spotted]) -> list[Spotted]:
    """Those of `found` (all spotted in `text`) the shipped model does not veto."""
    return veto().kept(text, found) if found else found
