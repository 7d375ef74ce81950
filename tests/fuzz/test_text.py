"""Fuzzed search text (memory/text.py): any text, nasty characters and all, becomes an FTS5
document SQLite stores and a MATCH expression FTS5 accepts; key phrases never fail."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from memory.text import FTS_TOKENIZER, fts_document, fts_query, key_phrase, terms
from tests.fakes.fuzz import fuzzed, nasty_text

pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")

texts = st.one_of(nasty_text(), st.text(max_size=60))


@pytest.fixture(scope="module")
def fts() -> Iterator[sqlite3.Connection]:
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE m USING fts5(body, tokenize='{FTS_TOKENIZER}')")
    yield db
    db.close()


def storable(text: str) -> str:
    """As the store writes text: lone surrogates as "?"."""
    return text.encode("utf-8", "replace").decode("utf-8")


@fuzzed(150)
@given(document=texts, query=texts)
@example(document="caf\udce9 \x00 NEAR(a b)", query='"unterminated AND OR NOT ^*')
@example(document="喵喵\ud800喵 上周三 😀\u200d", query="喵\udcff")
@example(document="x" * 20_000, query="-" * 5000)
@example(document="", query="")
def test_search_text_is_always_valid_fts5(
    fts: sqlite3.Connection, document: str, query: str
) -> None:
    assert all(isinstance(t, str) and t for t in terms(document))
    body = fts_document(document)
    fts.execute("INSERT INTO m (body) VALUES (?)", (storable(body),))
    match = fts_query(query)
    if match is not None:
        fts.execute("SELECT rowid FROM m WHERE m MATCH ?", (storable(match),)).fetchall()
    fts.execute("DELETE FROM m")


@fuzzed(100)
@given(text=texts, words=st.integers(1, 20))
@example(text="\U0001d7d7" * 3000, words=12)
def test_key_phrase(text: str, words: int) -> None:
    phrase = key_phrase(text, max_words=words)
    assert isinstance(phrase, str)
