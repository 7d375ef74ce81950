"""Text for the lexical half of recall: what goes into the FTS5 table, what a search asks it,
and the cue a long message is boiled down to. Pure functions; no SQL, no model.

Why this shape (measured by ``benchmarks/fts_tokenizers.py``; the figures are in its docstring):
SQLite's ``unicode61`` tokenizer splits on spaces and punctuation, so a run of Chinese characters
("我今天去了公园") would be one token and no Chinese word could ever match. The ``trigram``
tokenizer avoids that but cannot match anything shorter than three characters, and most Chinese
words have two ("猫咪", "加班"): even with a LIKE fallback it recalled less (Chinese R@5 0.75
against 0.84), and on English it was no better (LoCoMo R@5 0.51 against 0.53) with an index
2.2 times as big. So the text is prepared here instead: Chinese runs are segmented into words
with jieba, everything is lowercased, and the words are joined by spaces; the store then indexes
that with ``porter unicode61 remove_diacritics 2`` (Porter stemming for English, accents
folded). A query is an OR of the message's words, stop words removed, each quoted as an FTS5
string so that nothing a user types (quotes, ``AND``, ``NEAR``, ``*``, parentheses) can break
the MATCH syntax.

jieba is imported and initialised lazily, once, under a lock, and only when a text has Chinese
characters: an English-only host never pays for its dictionary (about a second to build, then
cached in the temp directory). Its "Building prefix dict" log lines are silenced. It never
downloads anything: the dictionary ships inside the package.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

__all__ = [
    "FTS_TOKENIZER",
    "STOP_WORDS",
    "fts_document",
    "fts_query",
    "key_phrase",
    "porter_document",
    "porter_term",
    "restates",
    "terms",
    "visible",
    "warm_up",
]

FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"
"""The ``tokenize=`` value of the FTS5 table whose column holds :func:`fts_document` text."""

# Han ideographs: the unified block, extension A, compatibility ideographs and the
# supplementary planes (extensions B-G). Kana and Hangul are left to unicode61, which keeps a
# run of them as one token; the personas speak English and Chinese.
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_HAN_RE = re.compile(f"[{_HAN}]")
# A Han run, or a run of other letters and digits: unicode61's own idea of a token (letters,
# numbers; underscore and punctuation separate), so that every term below is exactly one token
# of the FTS5 column and a quoted term is a one-token phrase.
_TOKEN_RE = re.compile(f"([{_HAN}]+)|([^\\W_{_HAN}]+)")
# Format characters that show nothing on their own: zero-width space, non-joiner and joiner,
# word joiner, the byte-order mark, soft hyphen, bidirectional marks.
_INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u200e\u200f\u202a\u202b\u202c\u202d\u202e"

_EN_STOP = """
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further get
got had has have having he her here hers herself him himself his how i if in into is it its
itself just let me more most my myself no nor not now of off oh ok okay on once only or other
our ours ourselves out over own really same she should so some such than that the their theirs
them themselves then there these they this those through to too under until up very was we were
what when where which while who whom whose why will with would yeah yes you your yours yourself
yourselves s t d ll m re ve don didn doesn isn wasn aren weren won wouldn couldn shouldn hasn
haven hadn hey hi hello
"""
_ZH_STOP = """
的 地 得 了 着 过 是 在 和 与 及 或 也 都 就 还 又 很 太 吗 呢 吧 啊 呀 哦 嗯 哈 啦 嘛 么 我 你 您
他 她 它 我们 你们 他们 她们 它们 咱们 这 那 这个 那个 这些 那些 这样 那样 这里 那里 有 没有 个
一个 一些 一下 什么 怎么 怎么样 为什么 哪 哪里 哪儿 哪个 哪些 谁 几 多少 什么样 什么时候 时候
被 把 给 对 从 向 会 能 可以 已经 就是 还是 但是 因为 所以 如果 而且 然后 自己
"""
STOP_WORDS: frozenset[str] = frozenset(_EN_STOP.split()) | frozenset(_ZH_STOP.split())
"""Words a search ignores: English function words and chat fillers ("hey", "yeah"), Chinese
particles, pronouns and question words (a question's 什么 or 哪里 is never in the memory that
answers it). Short on purpose: BM25's IDF already discounts what is common."""

# --- jieba, lazily ---------------------------------------------------------------------------

_jieba: Any = None
_posseg: Any = None
_jieba_lock = threading.RLock()


def _segmenter() -> Any:
    """The jieba module, its dictionary loaded: once, under a lock, so that the first calls
    from several ``asyncio.to_thread`` workers do not each build the prefix dictionary."""
    global _jieba
    if _jieba is None:
        with _jieba_lock:
            if _jieba is None:
                import jieba

                jieba.setLogLevel(logging.WARNING)  # "Building prefix dict ..." on stderr
                jieba.initialize()
                _jieba = jieba
    return _jieba


def _tagger() -> Any:
    """jieba.posseg (part-of-speech tagging), for :func:`key_phrase` only: its tag table loads
    on import (about 0.3 s), so that too happens once, under the lock, and only if needed."""
    global _posseg
    if _posseg is None:
        with _jieba_lock:
            if _posseg is None:
                _segmenter()
                import jieba.posseg

                _posseg = jieba.posseg
    return _posseg


def _cut(run: str, *, hmm: bool = False) -> list[str]:
    """Words of one Han run, as jieba's default (accurate) mode cuts them.

    Without HMM by default: jieba's HMM guesses words its dictionary lacks, and guesses them
    differently in different contexts ("学弹" in one sentence, "学" "弹" in another), so a
    query's word would miss the same characters in a memory. Without it, an unknown word falls
    apart into single characters the same way on both sides (measured: R@5 0.79 -> 0.84)."""
    if len(run) == 1:
        return [run]
    words: list[str] = _segmenter().lcut(run, HMM=hmm)
    return words


def _cut_for_search(run: str) -> list[str]:
    """Words of one Han run, plus the shorter dictionary words inside each long one
    ("互联网" -> "互联", "联网", "互联网"), so that a query's shorter word still matches."""
    if len(run) == 1:
        return [run]
    words: list[str] = _segmenter().lcut_for_search(run, HMM=False)
    return words


def _tokens(text: str, cut: Callable[[str], list[str]]) -> Iterator[str]:
    """Every token of ``text``, lowercased: Han runs through ``cut``, anything else as
    unicode61 would split it, in order; then each symbol (emoji, ♥, ☂) as a word of letters
    and digits. unicode61 treats symbols as separators, so without a word of their own a
    memory of emoji alone could never be found by words."""
    for han, other in _TOKEN_RE.findall(text):
        if han:
            yield from cut(han)
        else:
            yield other.lower()
    for char in text:
        # "So" leaves out the joiners, variation selectors and skin tones inside an emoji.
        if unicodedata.category(char) == "So":
            yield f"emoji{ord(char):x}"


def visible(text: str) -> str:
    """``text`` without control characters (tabs and newlines stay), trimmed of white space
    and invisible format characters at both ends; empty when nothing in it can be seen (only
    zero-width spaces, joiners or NULs), so that such text is refused like empty text."""
    kept = "".join(c for c in text if c in "\t\n" or unicodedata.category(c) != "Cc")
    return kept.strip().strip(_INVISIBLE).strip()


# --- the API ---------------------------------------------------------------------------------


def warm_up() -> None:
    """Load jieba and its tagger now (about 1.3 s and 0.5 s on a 2-core machine, with the
    dictionary cache already in the temp directory): a host whose personas speak Chinese calls
    this once at start-up, in a thread, so that the first Chinese message does not wait for
    it."""
    _tagger()


def terms(text: str) -> list[str]:
    """The searchable terms of ``text``: lowercased words in order (Chinese cut into words by
    jieba), then the dictionary words inside its long Chinese words ("过生日" -> "生日"), stop
    words and duplicates removed. The inner words come last so that a cap on terms keeps the
    message's own words; without them a question's "过生日" never met a memory's "生日" (the
    memory side is cut in search mode, which does the same). Not stemmed: FTS5 stems on both
    sides."""
    words = list(_tokens(text, _cut))
    inner = [
        part
        for word in words
        if len(word) > 2 and _HAN_RE.match(word)
        for part in _cut_for_search(word)
        if part != word
    ]
    return [w for w in dict.fromkeys(words + inner) if w not in STOP_WORDS]


def restates(a: str, b: str) -> bool:
    """Whether one text says nothing the other does not: the searchable terms of one are all
    among the other's. A merge of near-duplicates asks it beside their cosine, because a
    meaning embedder puts "her cat is called Mochi" and "her cat is called Luna" (or 猫叫咪咪
    and 猫叫花花) closer than two wordings of one fact; merging those would lose a fact."""
    left, right = set(terms(a)), set(terms(b))
    return left <= right or right <= left


def fts_document(text: str) -> str:
    """What goes into the FTS5 column for ``text``: its tokens, lowercased, space-separated,
    Chinese segmented in jieba's search mode (each long word also gives the words inside it),
    then each Han character once: a query of one character ("猫") finds the words it is part
    of (猫叫, 小猫), which the lexical `hash` embedder's vectors alone cannot, one character
    weighing little against a memory's bigrams. Stop words stay: they cost little in the
    index, and BM25 discounts them anyway."""
    return " ".join(_tokens(text, _search_words))


def _search_words(run: str) -> list[str]:
    """A Han run's words in search mode, then the characters not already a word of it."""
    words = _cut_for_search(run)
    return words + [c for c in dict.fromkeys(run) if c not in words]


def fts_query(text: str, *, max_terms: int = 32) -> str | None:
    """A MATCH expression for ``text`` that is always valid FTS5: the OR of its first
    ``max_terms`` :func:`terms`, each a quoted string (so ``AND``, ``NEAR``, ``*``, quotes and
    parentheses are just words). None when nothing searchable is left (empty text, or only stop
    words and punctuation); the caller then skips the lexical search."""
    chosen = terms(text)[:max_terms]
    if not chosen:
        return None
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in chosen)


# --- FTS5's porter tokenizer, for stores without it ------------------------------------------

# FTS5's porter tokenizer leaves tokens shorter than 3 or longer than 64 bytes as they are.
_PORTER_MIN, _PORTER_MAX = 3, 64


@lru_cache(maxsize=1 << 16)
def porter_term(token: str) -> str:
    """One token as FTS5's ``porter unicode61 remove_diacritics 2`` indexes it: accents
    folded from Latin letters, then Porter's (1980) stemmer on an ASCII word ("plans" ->
    "plan", "peanuts" -> "peanut"). PostgreSQL's full text has no Porter stemmer of its own
    (its ``english`` configuration is Porter2, and drops stop words), so its store indexes and
    queries words through this instead, and both stores match the same words. Chinese tokens
    and emoji words are left as they are; the rest lowercased, as unicode61 does."""
    if _HAN_RE.search(token):
        return token
    folded = "".join(
        c for c in unicodedata.normalize("NFD", token.lower()) if unicodedata.category(c) != "Mn"
    )
    if not folded.isascii() or not _PORTER_MIN <= len(folded) <= _PORTER_MAX:
        return folded
    if not folded.isalpha():
        return folded
    from snowballstemmer.porter_stemmer import PorterStemmer  # only stores without FTS5 need it

    stemmed: str = PorterStemmer().stemWord(folded)
    return stemmed


def porter_document(document: str) -> str:
    """:func:`fts_document` text with each token through :func:`porter_term`."""
    return " ".join(porter_term(token) for token in document.split())


_SENTENCE_END_RE = re.compile(r"[.!?;:。！？；：\n]+")
_LATIN_WORD_RE = re.compile(f"[^\\W\\d_{_HAN}](?:[^\\W{_HAN}]|['-])*")
_OPENING = " \t\"'\u201c\u2018([{\uff08\u300a\u300c\u3010-\u2014"  # quotes, brackets, dashes
# Words that are not stop words for search but say little about a message's subject: chat
# fillers, vague adverbs and relative days (a date in a message is handled by the diary).
_FILLER_WORDS = """
    actually almost already always anyway anything basically everyone everything finally gonna
    guess honestly kinda literally lot lots maybe much never nothing probably pretty quite
    something someone somehow still stuff sure thing things today tomorrow tonight totally wanna
    yesterday
    一点 一直 之前 以后 以前 其实 可能 好像 应该 总是 感觉 有点 最近 有些 比较 特别 现在 真的
    终于 觉得 非常 顺便 今天 昨天 明天
"""
_FILLER = frozenset(_FILLER_WORDS.split())
# How much a Chinese word's part of speech (jieba.posseg's tag, by its first letter) says it is
# what a memory is about: nouns most (names, places and organisations more still), then idioms
# and abbreviations, verbs, numerals, adjectives; function words (d c r p u f q x y e o) nothing.
_PROPER_TAGS = frozenset({"nr", "nrfg", "nrt", "ns", "nt", "nz"})
_TAG_WEIGHT = {"n": 2.0, "l": 1.5, "i": 1.5, "j": 1.5, "v": 1.0, "m": 1.0, "a": 0.75, "t": 0.5}


def key_phrase(text: str, *, max_words: int = 12) -> str:
    """A short cue for subconscious recall, taken locally (no model call) from a long message:
    the message itself (whitespace collapsed) when it has at most ``max_words`` content words;
    else its ``max_words`` most informative words, in their original order, space-separated.

    Why a heuristic and not a model: this runs on every message before the reply, where a model
    call would add its latency to every turn. Stop words and fillers ("honestly", "有点") never
    count; "informative" then favours what memories are about: names (capitalised other than
    at a sentence's start, kept as written; for Chinese, jieba's part-of-speech tags), nouns,
    numbers, long words, and words the message repeats."""
    collapsed = " ".join(text.split())
    tagged = list(_tagged(collapsed))
    first: dict[str, str] = {}  # word -> its tag, in order of first appearance
    counts: dict[str, int] = {}
    for word, tag in tagged:
        counts[word] = counts.get(word, 0) + 1
        if word not in STOP_WORDS and word not in _FILLER:
            first.setdefault(word, tag)
    if len(first) <= max_words:
        return collapsed
    names = _names(collapsed)

    def score(word: str, tag: str) -> float:
        if tag == "eng":
            s = min(len(word), 10) / 5  # "photography" over "cat"
            s += 2.0 if word in names else 0.0
            s += 1.5 if any(c.isdigit() for c in word) else 0.0
        else:
            s = 3.0 if tag in _PROPER_TAGS else _TAG_WEIGHT.get(tag[:1], 0.0)
            s *= 0.5 if len(word) == 1 else 1.0  # 去, 买: weak alone
            s += 0.5 if len(word) >= 3 else 0.0
        return s + 0.75 * (counts[word] - 1)

    words = list(first.items())
    ranked = sorted(range(len(words)), key=lambda i: (-score(*words[i]), i))
    return " ".join(names.get(words[i][0], words[i][0]) for i in sorted(ranked[:max_words]))


def _tagged(text: str) -> Iterator[tuple[str, str]]:
    """(lowercased token, tag) for every token: jieba.posseg's tag for a Chinese word (with its
    HMM, which keeps a name missing from the dictionary, such as "阿杰", whole), "eng" for any
    other token."""
    for han, other in _TOKEN_RE.findall(text):
        if other:
            yield other.lower(), "eng"
        else:
            for pair in _tagger().lcut(han):
                yield pair.word, pair.flag


def _names(text: str) -> dict[str, str]:
    """Words capitalised somewhere other than at the start of a sentence (lowercased -> as
    written): "my sister Aiko", "we flew to Osaka". A name that only ever starts a sentence is
    missed; a capitalised common word that only starts one ("Yesterday") is not taken."""
    names: dict[str, str] = {}
    for sentence in _SENTENCE_END_RE.split(text):
        sentence = sentence.lstrip(_OPENING)
        for match in _LATIN_WORD_RE.finditer(sentence):
            if match.start() > 0 and match[0][0].isupper():
                for _, part in _TOKEN_RE.findall(match[0]):
                    names.setdefault(part.lower(), part)
    return names
