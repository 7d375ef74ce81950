"""memory/text.py: what goes into the FTS5 table, the MATCH expression a message becomes (run
against a real SQLite FTS5 table with the tokenizer the store uses), and key phrases."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator

import pytest

from memory.text import (
    FTS_TOKENIZER,
    STOP_WORDS,
    fts_document,
    fts_query,
    key_phrase,
    restates,
    terms,
    visible,
    warm_up,
)

DOCS = [
    "Aiko adopted a kitten named Mochi (a calico) last spring",
    "She runs along the river every morning before work",
    "我家的猫咪最近总是打喷嚏，明天带它去看兽医",
    "我今天去了Costco，买了一大箱坚果和牛排",
    "We had dinner at a café in Montréal with Jun",
    'The sign said "NEAR the AND gate" in big letters',
    "我们约好下个月给她过生日",
    "🍣🍣🍣",
]


@pytest.fixture
def fts() -> Iterator[sqlite3.Connection]:
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE mem USING fts5(body, tokenize='{FTS_TOKENIZER}')")
    db.executemany(
        "INSERT INTO mem(rowid, body) VALUES (?, ?)",
        [(i, fts_document(text)) for i, text in enumerate(DOCS, 1)],
    )
    yield db
    db.close()


def search(db: sqlite3.Connection, text: str) -> list[int]:
    expr = fts_query(text)
    assert expr is not None
    sql = "SELECT rowid FROM mem WHERE mem MATCH ? ORDER BY rank"
    return [rowid for (rowid,) in db.execute(sql, (expr,))]


# --- terms and documents -----------------------------------------------------------------------


def test_terms_are_lowercased_words_without_stop_words_or_duplicates() -> None:
    assert terms("What did Aiko's cats do when the Cats were RUNNING?") == [
        "aiko",
        "cats",
        "running",
    ]


def test_english_stemming_matches_other_forms(fts: sqlite3.Connection) -> None:
    assert search(fts, "Who was running by the river?")[0] == 2  # runs
    assert search(fts, "kittens adoption")[0] == 1  # kitten, adopted


def test_diacritics_are_folded(fts: sqlite3.Connection) -> None:
    assert search(fts, "cafe in Montreal")[0] == 5


def test_document_segments_chinese_and_lowercases() -> None:
    doc = fts_document("我今天去了Costco，买了坚果")
    assert doc.split() == [
        "我", "今天", "去", "了", "今", "天", "costco", "买", "了", "坚果", "坚", "果"
    ]  # fmt: skip


def test_one_chinese_character_finds_the_words_it_is_part_of(fts: sqlite3.Connection) -> None:
    # jieba cuts 猫咪 and 猫叫 as words: a query of 猫 alone met neither.
    assert search(fts, "猫") == [3]
    assert "猫" in fts_document("我的猫叫年糕").split()


def test_chinese_two_character_word_is_found(fts: sqlite3.Connection) -> None:
    assert "猫咪" in terms("猫咪怎么了？")
    assert search(fts, "猫咪怎么了？") == [3]
    assert search(fts, "兽医")[0] == 3


def test_chinese_query_drops_question_words() -> None:
    assert terms("那只狗去哪里了？为什么？") == ["只", "狗", "去"]


@pytest.mark.parametrize("query", ["她的生日是哪天？", "生日", "过生日"])
def test_a_chinese_word_meets_the_words_inside_it(fts: sqlite3.Connection, query: str) -> None:
    # The memory says 过生日; a question may say 生日, or 过生日 of a memory that says 生日.
    assert search(fts, query)[0] == 7


def test_inner_words_follow_the_message_own_words() -> None:
    assert terms("互联网公司") == ["互联网", "公司", "互联", "联网"]
    assert terms("你什么时候过生日") == ["过生日", "生日"]


@pytest.mark.parametrize("query", ["🍣", "想吃🍣", "sushi 🍣?"])
def test_emoji_are_words(fts: sqlite3.Connection, query: str) -> None:
    assert search(fts, query)[0] == 8


def test_emoji_parts_that_are_not_symbols_are_not_words() -> None:
    # A skin tone, the variation selector and the joiner belong to the emoji before them.
    assert terms("👍🏽 ❤️ 👨\u200d👩") == ["emoji1f44d", "emoji2764", "emoji1f468", "emoji1f469"]


@pytest.mark.parametrize(
    ("raw", "seen"),
    [
        ("  Mochi  ", "Mochi"),
        ("\u200b\u200d\u2060", ""),
        ("\x00\x00", ""),
        ("\ufeff \u200b \t", ""),
        ("Mo\x00chi\u200b", "Mochi"),
        ("line one\nline two", "line one\nline two"),
        ("👨\u200d👩", "👨\u200d👩"),
    ],
)
def test_visible_text(raw: str, seen: str) -> None:
    assert visible(raw) == seen


@pytest.mark.parametrize("query", ["在costco买了什么", "COSTCO", "我买的坚果呢"])
def test_mixed_chinese_and_english(fts: sqlite3.Connection, query: str) -> None:
    assert search(fts, query)[0] == 4


# --- queries are always valid FTS5 -------------------------------------------------------------


@pytest.mark.parametrize(
    "hostile",
    [
        'what about "Mochi" AND (kitten* NEAR calico)?',
        'Mochi" OR "',
        "NEAR(Mochi kitten, 2)",
        "Mochi AND NOT NOT kitten",
        "-Mochi ^kitten + body:calico {a b}",
        "Mochi*",
        '""Mochi""',
        "Mochi's kitten; DROP TABLE mem; --",
        "kitten\x00Mochi",
        "(((Mochi",
    ],
)
def test_user_syntax_never_breaks_match(fts: sqlite3.Connection, hostile: str) -> None:
    assert search(fts, hostile)[0] == 1


def test_operator_words_are_plain_words(fts: sqlite3.Connection) -> None:
    assert search(fts, "NEAR gate") == [6]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "?!... ，。！",
        '"" * () AND OR NOT',
        "what is it that you were doing there?",
        "我的你是了吗",
        "什么？",
        "_ _ _",
    ],
)
def test_nothing_searchable_gives_none(text: str) -> None:
    assert fts_query(text) is None


def test_query_is_deduplicated_and_capped() -> None:
    assert fts_query("cat cat Cat dog") == '"cat" OR "dog"'
    many = " ".join(f"word{i}" for i in range(50))
    expr = fts_query(many, max_terms=5)
    assert expr is not None and expr.count(" OR ") == 4


def test_stop_words_are_lowercase_single_tokens() -> None:
    assert all(w == w.lower() and terms(w) == [] for w in STOP_WORDS)


# --- key phrases -------------------------------------------------------------------------------


def test_key_phrase_of_a_short_message_is_the_message() -> None:
    assert key_phrase("  my sister  Aiko is visiting\nnext week ") == (
        "my sister Aiko is visiting next week"
    )


def test_key_phrase_of_a_long_english_message_keeps_names_and_nouns() -> None:
    message = (
        "Hey, so yesterday my sister Aiko finally came back from Osaka after 3 years and we "
        "went to that little ramen place near the station, the one with the red door, and "
        "honestly it was really nice to just talk to her again about everything and nothing."
    )
    phrase = key_phrase(message, max_words=8)
    words = phrase.split()
    assert len(words) == 8
    assert {"Aiko", "Osaka", "ramen", "station"} <= set(words)
    assert not {"the", "and", "to", "her"} & set(words)
    assert words.index("Aiko") < words.index("Osaka") < words.index("ramen")  # message order


def test_key_phrase_of_a_long_chinese_message_keeps_names_and_nouns() -> None:
    message = (
        "今天下班以后我带年糕去了宠物医院，医生说它只是有点轻微的感冒，不用太担心，但是要按时吃药，"
        "每天早晚各一次。回家的路上我和阿杰顺便在Costco买了新的猫粮和罐头。"
    )
    words = key_phrase(message, max_words=10).split()
    assert len(words) == 10
    assert {"年糕", "宠物医院", "感冒", "阿杰", "Costco", "罐头"} <= set(words)
    assert not {"的", "了", "我", "它"} & set(words)


def test_key_phrase_cue_finds_its_memory(fts: sqlite3.Connection) -> None:
    message = (
        "You know what, I keep thinking about the kitten again, the little calico one that "
        "Aiko adopted, I wonder how Mochi is doing these days and whether she still climbs "
        "the curtains every single night"
    )
    assert search(fts, key_phrase(message))[0] == 1


# --- jieba -------------------------------------------------------------------------------------


def test_warm_up_is_idempotent() -> None:
    warm_up()
    warm_up()
    assert fts_document("猫咪") == "猫咪 猫 咪"


def test_jieba_is_lazy_quiet_and_safe_to_start_from_threads() -> None:
    # In a fresh interpreter: English alone never imports jieba; then eight threads make the
    # first Chinese calls at once (asyncio.to_thread's situation) and agree; nothing on stderr.
    code = """
import sys
from concurrent.futures import ThreadPoolExecutor
from memory.text import fts_document, key_phrase
fts_document("plain English only")
key_phrase("plain English only")
print("jieba" in sys.modules)
texts = ["小橘最近总是打喷嚏", "我在上海一家互联网公司上班"] * 4
with ThreadPoolExecutor(max_workers=8) as pool:
    first = list(pool.map(fts_document, texts))
print(first == [fts_document(t) for t in texts], "jieba" in sys.modules)
key_phrase("今天下班以后我带年糕去了宠物医院，医生说它只是有点轻微的感冒，不用太担心，记得按时吃药")
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == ["False", "True", "True"]
    assert done.stderr == ""


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("Ann had toast for breakfast", "Ann had toast for breakfast again", True),
        ("Ann's cat is called Mochi", "ann's CAT is called mochi!", True),
        ("Ann's cat is called Mochi", "Ann's cat is called Luna", False),
        ("小明的猫叫咪咪", "小明的猫叫花花", False),
        ("她下个月过生日", "她下个月生日", True),
    ],
)
def test_restates(a: str, b: str, same: bool) -> None:
    assert restates(a, b) is same
    assert restates(b, a) is same
