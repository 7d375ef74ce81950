"""Recall: from the lexical and dense hits of a cue to the memories that come to mind.

Pure functions over hits and memories; memory/recall/retrieval.py does the I/O. Candidates are the
dense top DENSE_CANDIDATES, the lexical top LEXICAL_CANDIDATES, and the memories stored just
before and just after each of them. For each:

    match(i) = DENSE_WEIGHT * cos(cue, i) + (1 - DENSE_WEIGHT) * bm25(i) / max bm25
               + SPEAKER_BOOST * [i's speaker is named in the cue]
    relevance(i) = match(i) + CONTIGUITY * (match(previous of i) + match(next of i))
    score(i) = relevance(i) * (RETENTION_FLOOR + (1 - RETENTION_FLOOR) * retention(i))
                            * IMPORTANCE_WEIGHT[importance(i)] * (QUESTION_WEIGHT if i asks)

bm25 is over the memory's words and, at a third of the weight, the words of the memory before
it (a reply is often about what was just said). A missing neighbour or lexical hit counts 0.
The contiguity term is human memory's contiguity effect: what was said next to a strong match
comes to mind with it. Retention and importance only tilt the ranking: an old memory that is
the answer still surfaces. A memory that asks (its text ends in a question mark, a picture's
note after it aside) is weighed down: a cue is often a question, and a question remembered looks
like it without holding the answer, which the memory after it (raised by contiguity) often does.
(Why these and not reciprocal rank fusion, and the figures:
benchmarks/README.md.)

Past the first DIVERSE_FROM, a turn's recall under an embedder with a diversity setting (e5)
diversifies: each next memory is the one of the deeper pool (ranked by score) that maximises

    score(i) * (1 - penalty * max(sim(i) - threshold, 0) / (1 - threshold))

with sim(i) its highest cosine to the memories already chosen, so ten turns of one exchange do
not push out the other sessions a question's answer is spread over. The first DIVERSE_FROM keep
their ranks.

The relevance floor keeps unrelated memories out: a candidate counts only if its cosine is at
least the embedder's floor, or it shares a searchable word with the cue and its cosine is at
least the embedder's lower shared-word floor (with no vector to judge by, during an embedding
outage, the shared word alone). The floor judges the raw cosine, also where the fusion hears a
rescaled one (e5: `Scale`). A cue about nothing remembered recalls nothing. In a turn's
recall an embedder may have companion floors, lower: once one candidate passes the floor, the
cue is about something remembered, and the other candidates pass by the companion floors (e5's
floor, tuned against off-topic cues, otherwise threw out answers the fusion ranked well). A
look-up on purpose judges every memory by the floor itself.

Retrieval failure: outside deterministic mode, a memory that made the cut may still not come
to mind, with probability MAX_FAILURE * (1 - retention) ** 2: seldom for a fresh memory (never
where retention starts at 1; ACT-R's starts below it, 1-4% in a memory's first minute, while the
conversation at hand still holds what it says), rarely for a half-faded one, often for one
nearly gone.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from memory.recall.links import Around
from memory.records import Memory, Vectors

__all__ = [
    "CONTIGUITY",
    "DENSE_CANDIDATES",
    "DENSE_WEIGHT",
    "DIVERSE_FROM",
    "IMPORTANCE_WEIGHT",
    "LEXICAL_CANDIDATES",
    "MAX_FAILURE",
    "QUESTION_WEIGHT",
    "RETENTION_FLOOR",
    "SPEAKER_BOOST",
    "Recalled",
    "Scale",
    "asks",
    "contenders",
    "diversify",
    "failure_probability",
    "finalists",
    "relevance",
    "surfaces",
    "weigh",
]

DENSE_CANDIDATES = 50
LEXICAL_CANDIDATES = 100
DENSE_WEIGHT = 0.6
SPEAKER_BOOST = 0.3
CONTIGUITY = 0.2
CONTEXT_WEIGHT = 0.35  # of the memory before, in bm25
RETENTION_FLOOR = 0.9
IMPORTANCE_WEIGHT = {1: 0.9, 2: 1.0, 3: 1.1}
QUESTION_WEIGHT = 0.8  # of a memory that asks
MAX_FAILURE = 0.8
DIVERSE_FROM = 5  # the memories that keep their rank before diversity counts
# Cosine below which a memory is unrelated to a cue, and the same for one that shares a word
# with it, by embedder family, on the raw cosine (before e5's rescaling, which hides how close
# a cue is). Each keeps off-topic cues from recalling anything at little cost to recall; a
# hash vector is itself lexical, so a shared word needs little more. E5's cosines crowd into a
# narrow band where no floor parts matches from noise cleanly: its floors are a trade-off,
# chosen on part of LoCoMo (benchmarks/README.md).
DENSE_FLOORS = {"hash": (0.20, 0.05), "local": (0.30, 0.15), "e5": (0.84, 0.78)}
DEFAULT_DENSE_FLOOR = (0.30, 0.15)
# The floors of a turn's recall once one candidate has passed those above, by family: e5's
# answers often score under its floor, which is set by off-topic cues.
COMPANION_FLOORS = {"e5": (0.82, 0.76)}
# Diversity past the first few of a turn's recall, by family: (penalty, threshold) on the raw
# cosine between two memories. Tuned for e5 alone.
DIVERSITY = {"e5": (0.25, 0.88)}
# E5's cosines crowd into a narrow band that moves with the cue and the language, where the
# fusion's weights, tuned on cosines spread over 0..1, would hear little of them. For these
# families recall rescales a cosine c as DENSE_GAIN * max(c - low, 0) / (high - low), where
# high and low are the cue's best and last dense candidates (low at least the baseline given
# here): like BM25 over its best hit. Below `low` a lexical hit keeps its words' score alone.
DENSE_BASELINES = {"e5": 0.7}
DENSE_GAIN = 0.6
TWIN = 0.95  # cosine of two memories that say nearly the same, above the family's baseline


@dataclass(slots=True, frozen=True)
class Scale:
    """Where an embedder family's cosines fall: the floors and settings above, for one
    embedder."""

    dense_floor: float
    shared_word_floor: float
    dense_baseline: float  # 0: cosines are not rescaled
    companion_floors: tuple[float, float] | None
    diversity: tuple[float, float] | None  # (penalty, threshold)
    duplicate: float  # the cosine at which two texts say nearly the same

    @classmethod
    def of(cls, embedder: str) -> Scale:
        """The scale of an embedder, by its name ("e5-small:...": the family e5)."""
        family = embedder.split(":")[0].split("-")[0]
        floor, shared = DENSE_FLOORS.get(family, DEFAULT_DENSE_FLOOR)
        baseline = DENSE_BASELINES.get(family, 0.0)
        return cls(
            dense_floor=floor,
            shared_word_floor=shared,
            dense_baseline=baseline,
            companion_floors=COMPANION_FLOORS.get(family),
            diversity=DIVERSITY.get(family),
            duplicate=baseline + TWIN * (1.0 - baseline),
        )


@dataclass(slots=True, frozen=True)
class Recalled:
    """A memory that came to mind, and why."""

    id: int
    text: str
    when: datetime
    speaker: str | None
    score: float  # what ranked it: relevance weighted by retention and importance
    relevance: float  # how well it matches the cue (about 0..1.5)
    retention: float  # 0..1, how strong it is now
    importance: int
    kind: str = "episodic"
    related: tuple[int, ...] = ()
    speaker_id: str | None = None  # who said it, by stable id

    @classmethod
    def of(cls, memory: Memory, score: float, relevance: float, retention: float) -> Recalled:
        return cls(
            id=memory.id,
            text=memory.text,
            when=memory.created_at,
            speaker=memory.speaker,
            speaker_id=memory.speaker_id,
            score=score,
            relevance=relevance,
            retention=retention,
            importance=memory.importance,
            kind=memory.kind,
            related=memory.related,
        )


def relevance(
    memories: Around,
    cosine: Mapping[int, float],
    lexical: Mapping[int, float],
    named: Collection[str],
    *,
    dense_floor: float,
    shared_word_floor: float,
    similarity: Mapping[int, float] | None = None,
    shared: Collection[int] | None = None,
    companion: tuple[float, float] | None = None,
) -> dict[int, float]:
    """Relevance of every memory in `memories` (candidates and their neighbours) that passes
    the floor. `cosine`: each one's cosine to the cue, as the fusion hears it; `similarity`:
    the cosines the floor judges, when `cosine` is rescaled (else `cosine`); `lexical`: BM25
    of the lexical hits; `named`: the lowercased words of the cue (a speaker is named when all
    the words of their name are among them); `shared`: the lexical hits whose own words (not
    only those of the memory before them) meet the cue's, which alone may pass by the lower
    floor (else every lexical hit may); `companion`: the (dense, shared-word) floors the others
    pass by once one memory passes the floor (a turn's recall)."""
    judged = cosine if similarity is None else similarity
    sharing = lexical if shared is None else shared
    top_bm25 = max(lexical.values(), default=0.0) or 1.0
    ids = memories.ids.tolist()
    # Each memory's match, in one pass of arrays over the candidates and their neighbours.
    dense = np.array([cosine.get(i, 0.0) for i in ids], np.float64)
    words = np.array([lexical.get(i, 0.0) for i in ids], np.float64)
    is_named = np.array([_named(name, named) for name in memories.names] + [False])
    boost = np.where(is_named[memories.speakers], SPEAKER_BOOST, 0.0)  # -1: the last, False
    match = DENSE_WEIGHT * dense + (1.0 - DENSE_WEIGHT) * words / top_bm25 + boost
    # Neighbours by position (ids ascend): the previous memory, and the one stored after (of
    # two after the same one, the later).
    n = len(ids)
    if not n:
        return {}
    at = np.minimum(np.searchsorted(memories.ids, memories.previous), n - 1)
    has_previous = (memories.previous != 0) & (memories.ids[at] == memories.previous)
    after = np.full(n, -1, np.intp)
    np.maximum.at(after, at[has_previous], np.flatnonzero(has_previous))
    padded = np.append(match, 0.0)  # position n: no memory, whose match is 0
    after[after < 0] = n
    before_match = np.where(has_previous, match[at], 0.0)
    found = match + CONTIGUITY * (before_match + padded[after])
    # The floor, judged on the raw cosine; with no vector to judge by, its words decide.
    judge = [judged.get(i) for i in ids]

    def passes(memory_id: int, raw: float | None, floor: float, shared_floor: float) -> bool:
        if raw is None:
            return memory_id in lexical
        return raw >= floor or (memory_id in sharing and raw >= shared_floor)

    floors = (dense_floor, shared_word_floor)
    if companion is not None and any(
        passes(i, raw, *floors) for i, raw in zip(ids, judge, strict=True)
    ):
        floors = companion
    return {
        memory_id: value
        for memory_id, value, raw in zip(ids, found.tolist(), judge, strict=True)
        if passes(memory_id, raw, *floors)
    }


def _named(speaker: str, words: Collection[str]) -> bool:
    parts = speaker.lower().split()
    return bool(parts) and all(part in words for part in parts)


# The weight retention, importance and asking can give, at least and at most: what pruning by
# relevance alone may rely on.
MIN_WEIGHT = RETENTION_FLOOR * min(IMPORTANCE_WEIGHT.values()) * min(QUESTION_WEIGHT, 1.0)
MAX_WEIGHT = max(IMPORTANCE_WEIGHT.values())


def contenders(relevant: Mapping[int, float], k: int) -> list[int]:
    """The ids that can still rank in the top k once weighed: weighing multiplies relevance by
    MIN_WEIGHT..MAX_WEIGHT, so anything below the k-th relevance * MIN_WEIGHT / MAX_WEIGHT is
    out whatever its retention and importance."""
    ranked = sorted(relevant, key=lambda m: -relevant[m])
    if len(ranked) <= k:
        return ranked
    bar = relevant[ranked[k - 1]] * MIN_WEIGHT / MAX_WEIGHT
    return [m for m in ranked if relevant[m] >= bar]


def finalists(
    memories: Sequence[Memory], score: Callable[[Memory, float], float], depth: int
) -> list[Memory]:
    """Of the contenders, read (`memories`), those that can still rank in the top `depth`:
    `score(memory, retention)` is how one is weighed, which moves with its retention alone
    (within 0..1) one way, so a memory whose best falls under the depth-th memory's worst
    cannot get in. Only these need their retention (a pluggable policy's, the dearest part
    of weighing)."""
    if len(memories) <= depth:
        return list(memories)
    bounds = [(score(m, 0.0), score(m, 1.0)) for m in memories]
    bar = sorted((min(b) for b in bounds), reverse=True)[depth - 1]
    bar -= 1e-9 * abs(bar)  # a hair under, so that no rounding leaves one out
    return [m for m, b in zip(memories, bounds, strict=True) if max(b) >= bar]


def diversify(
    ranked: Sequence[int],
    scores: Mapping[int, float],
    vectors: Mapping[int, Vectors],
    k: int,
    *,
    penalty: float,
    threshold: float,
) -> list[int]:
    """The k of `ranked` (best first by `scores`) that come to mind, diversified past the first
    DIVERSE_FROM (formula in the module docstring). A memory without a vector in `vectors`
    is taken by its score alone."""
    chosen = list(ranked[: min(DIVERSE_FROM, k)])
    rest = list(ranked[len(chosen) :])
    if not rest or len(chosen) >= k:
        return chosen
    dimension = next(iter(vectors.values())).shape[-1] if vectors else 0
    matrix = np.array([vectors.get(i, np.zeros(dimension)) for i in rest], np.float64)
    known = np.array([i in vectors for i in rest])
    base = np.array([scores[i] for i in rest], np.float64)
    # Each candidate's highest cosine to what is chosen, kept up to date pick by pick.
    closest = np.full(len(rest), -1.0)
    for memory_id in chosen:
        if memory_id in vectors and len(matrix):
            closest = np.maximum(closest, matrix @ np.asarray(vectors[memory_id], np.float64))
    taken = np.zeros(len(rest), bool)
    while len(chosen) < k and not taken.all():
        excess = np.where(known, np.maximum(closest - threshold, 0.0), 0.0)
        value = base * (1.0 - penalty * excess / (1.0 - threshold))
        value[taken] = -np.inf
        pick = int(np.argmax(value))  # the first of equals: the better ranked
        taken[pick] = True
        chosen.append(rest[pick])
        if known[pick]:
            closest = np.maximum(closest, matrix @ matrix[pick])
    return chosen


def weigh(relevance: float, retention: float, importance: int, asking: bool = False) -> float:
    """The ranking score (formula in the module docstring); `asking`: the memory asks."""
    strength = RETENTION_FLOOR + (1.0 - RETENTION_FLOOR) * retention
    weight = IMPORTANCE_WEIGHT.get(importance, 1.0) * (QUESTION_WEIGHT if asking else 1.0)
    return relevance * strength * weight


# A question mark ending the text, before any bracketed note ("[picture cat.jpg, seen: ...]").
_ASKS = re.compile(r"[?？]\s*(?:\[[^\[\]]*\]\s*)*$")


def asks(text: str) -> bool:
    """Whether a memory's text is a question: it ends in a question mark."""
    end = text.rstrip()
    if end.endswith(("?", "？")):
        return True
    # Only a text ending in a note needs the pattern: searching every text for it slowed a
    # large scope's recall (benchmarks/README.md).
    return end.endswith("]") and _ASKS.search(end) is not None


def failure_probability(retention: float) -> float:
    return MAX_FAILURE * (1.0 - min(max(retention, 0.0), 1.0)) ** 2


def surfaces(retention: float, rng: random.Random | None) -> bool:
    """Whether a memory comes to mind; always, when `rng` is None (deterministic mode)."""
    return rng is None or rng.random() >= failure_probability(retention)
