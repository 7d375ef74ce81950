"""memory/recall/ranking.py: which candidates pass the relevance floor, how a question weighs, and
how the top k is diversified."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime

import numpy as np

from memory.recall.links import ScopeLinks
from memory.recall.ranking import (
    DIVERSE_FROM,
    MIN_WEIGHT,
    QUESTION_WEIGHT,
    asks,
    contenders,
    diversify,
    finalists,
    relevance,
    weigh,
)
from memory.records import Memory, MemoryLink, Vectors

WHEN = datetime(2026, 1, 5, tzinfo=UTC)
LINKS = ScopeLinks.of(
    [MemoryLink(1, None, None), MemoryLink(2, 1, None), MemoryLink(3, None, None)]
).around([1, 2, 3])


def passing(
    cosine: dict[int, float], lexical: dict[int, float], shared: set[int] | None = None
) -> set[int]:
    """The candidates that pass e5's floors (0.84 alone, 0.78 with a word shared)."""
    found = relevance(
        LINKS, cosine, lexical, (), dense_floor=0.84, shared_word_floor=0.78, shared=shared
    )
    return set(found)


def test_a_lexical_hit_passes_by_the_lower_floor() -> None:
    cosine = {1: 0.86, 2: 0.80, 3: 0.80}
    assert passing(cosine, {1: 2.0, 2: 0.5}) == {1, 2}  # 3 shares no word and is under the floor


def test_a_hit_by_the_memory_before_it_passes_by_meaning_alone() -> None:
    # 2 matched only through its context (the words of 1, said just before it).
    cosine = {1: 0.86, 2: 0.80, 3: 0.80}
    assert passing(cosine, {1: 2.0, 2: 0.5}, shared={1}) == {1}
    assert passing({1: 0.86, 2: 0.85}, {1: 2.0, 2: 0.5}, shared={1}) == {1, 2}


def test_without_a_vector_words_decide() -> None:
    assert passing({}, {2: 1.0}, shared=set()) == {2}


def test_finalists_keep_every_memory_that_can_rank_in_the_top() -> None:
    """Pruned before any retention is reckoned, the contenders still hold the exact top
    `depth` once weighed, whatever their retention turns out to be (relevance of either sign,
    any importance, asking or not)."""
    rng = random.Random(7)
    pruned = 0
    for trial in range(300):
        count = rng.randint(1, 60)
        memories = [
            Memory(
                id=i,
                scope="s",
                text=rng.choice(("", "Did you?")),
                speaker=None,
                kind="episodic",
                category=None,
                importance=rng.choice((1, 2, 3)),
                sentiment=0.0,
                created_at=WHEN,
                last_recalled_at=None,
                recall_count=0,
                strength=1.0,
                related=(),
                conversation_id=None,
            )
            for i in range(1, count + 1)
        ]
        # Ties now and then, as hash vectors give.
        relevant = {m.id: rng.choice((0.5, rng.uniform(-0.3, 1.5))) for m in memories}
        retention = {m.id: rng.choice((0.0, 1.0, rng.random())) for m in memories}
        depth = rng.choice((1, 5, 10, 30))

        kept = finalists(memories, weighed(relevant), depth)
        expected = top(memories, relevant, retention, depth)
        assert top(kept, relevant, retention, depth) == expected, trial
        pruned += len(memories) - len(kept)
    assert pruned  # it does leave some out


def top(
    memories: list[Memory], relevant: dict[int, float], retention: dict[int, float], depth: int
) -> list[int]:
    """The ids of the `depth` best once weighed, as recall orders them."""
    weight = weighed(relevant)
    scored = sorted(memories, key=lambda m: (-weight(m, retention[m.id]), m.id))
    return [m.id for m in scored[:depth]]


def weighed(relevant: dict[int, float]) -> Callable[[Memory, float], float]:
    """How recall weighs a memory of these relevances at a retention."""
    return lambda m, retention: weigh(relevant[m.id], retention, m.importance, asks(m.text))


def test_once_one_passes_the_others_pass_by_the_companion_floors() -> None:
    cosine = {1: 0.86, 2: 0.80, 3: 0.70}
    found = relevance(
        LINKS, cosine, {}, (), dense_floor=0.84, shared_word_floor=0.78, companion=(0.75, 0.7)
    )
    assert set(found) == {1, 2}
    assert found[1] > found[2]  # still ranked by the fusion


def test_companion_floors_keep_an_unrelated_cue_out() -> None:
    cosine = {1: 0.83, 2: 0.80, 3: 0.70}  # nothing reaches the floor
    found = relevance(
        LINKS, cosine, {2: 1.0}, (), dense_floor=0.84, shared_word_floor=0.81, companion=(0, 0)
    )
    assert found == {}


def test_a_question_is_weighed_down() -> None:
    assert asks("Did you ever go back to Rome?")
    assert asks("你周末去哪儿了？")
    assert asks("What is this? [picture cat.jpg, seen: a grey kitten]")
    assert not asks("I went back to Rome? No, to Milan.")
    assert not asks("I adopted a kitten [picture cat.jpg]")
    assert weigh(1.0, 1.0, 2, asking=True) == QUESTION_WEIGHT * weigh(1.0, 1.0, 2)
    assert weigh(1.0, 1.0, 2, asking=True) < weigh(1.0, 1.0, 2)


def test_pruning_allows_for_a_question_weighed_down() -> None:
    # A statement just under the 1st's relevance must stay in the pool, whose bar allows
    # for the 1st being a question.
    relevant = {1: 1.0, 2: 1.0 * QUESTION_WEIGHT * 0.9, 3: 0.1}
    assert contenders(relevant, 1) == [1, 2]
    assert MIN_WEIGHT <= QUESTION_WEIGHT


def axis(n: int, dimension: int = 12) -> Vectors:
    """A unit vector of its own direction: cosine 0 to every other axis."""
    vector = np.zeros(dimension, np.float32)
    vector[n] = 1.0
    return vector


def twin_of(vector: Vectors, cosine: float, other: int) -> Vectors:
    """A unit vector at `cosine` to `vector`, leaning towards axis `other`."""
    found: Vectors = (cosine * vector + np.sqrt(1 - cosine**2) * axis(other)).astype(np.float32)
    return found


def test_past_the_first_a_near_twin_of_one_chosen_gives_way() -> None:
    ranked = [1, 2, 3, 4, 5, 6, 7]
    scores = {1: 1.0, 2: 0.95, 3: 0.9, 4: 0.85, 5: 0.8, 6: 0.75, 7: 0.7}
    vectors = {i: axis(i) for i in ranked}
    vectors[6] = twin_of(vectors[2], 0.98, 10)  # says nearly what the 2nd says
    # 6 is weighed 0.75 * (1 - 0.5 * (0.98 - 0.88) / 0.12) = 0.44, under 7's 0.7.
    found = diversify(ranked, scores, vectors, 7, penalty=0.5, threshold=0.88)
    assert found == [1, 2, 3, 4, 5, 7, 6]
    # Under the threshold nothing gives way.
    vectors[6] = twin_of(vectors[2], 0.85, 10)
    assert diversify(ranked, scores, vectors, 7, penalty=0.5, threshold=0.88) == ranked
    # A small penalty leaves a far better one where it was: 0.75 * 0.96 = 0.72 > 0.7.
    vectors[6] = twin_of(vectors[2], 0.98, 10)
    assert diversify(ranked, scores, vectors, 7, penalty=0.05, threshold=0.88) == ranked


def test_the_first_keep_their_rank_and_alike_ones_their_order() -> None:
    ranked = list(range(1, 11))
    scores = {i: 1.0 - i / 20 for i in ranked}
    same = {i: axis(0) for i in ranked}  # all alike: each weighed down by the same share
    assert diversify(ranked, scores, same, 10, penalty=0.5, threshold=0.88) == ranked
    # The first DIVERSE_FROM are never moved, however alike; k cuts the list.
    vectors = {i: axis(i) for i in ranked}
    vectors[2] = vectors[1]
    first = diversify(ranked, scores, vectors, DIVERSE_FROM, penalty=1.0, threshold=0.5)
    assert first == ranked[:DIVERSE_FROM]
    assert diversify(ranked, scores, vectors, 8, penalty=1.0, threshold=0.5) == ranked[:8]


def test_a_memory_without_a_vector_goes_by_its_score() -> None:
    ranked = [1, 2, 3, 4, 5, 6, 7]
    scores = {1: 1.0, 2: 0.95, 3: 0.9, 4: 0.85, 5: 0.8, 6: 0.75, 7: 0.7}
    vectors = {i: axis(0) for i in ranked if i != 7}  # 6 is a twin of them all, 7 unknown
    found = diversify(ranked, scores, vectors, 7, penalty=0.5, threshold=0.88)
    assert found == [1, 2, 3, 4, 5, 7, 6]
    assert diversify(ranked, scores, {}, 7, penalty=0.5, threshold=0.88) == ranked
