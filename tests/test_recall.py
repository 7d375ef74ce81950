"""memory/recall.py: which candidates pass the relevance floor."""

from __future__ import annotations

from memory.recall import relevance
from memory.records import MemoryLink

LINKS = {1: MemoryLink(1, None, None), 2: MemoryLink(2, 1, None), 3: MemoryLink(3, None, None)}


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
