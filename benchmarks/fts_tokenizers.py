"""Which SQLite FTS5 setup to use for the lexical (BM25) half of recall, in English and Chinese:
the ``trigram`` tokenizer over raw text, or text segmented in Python (jieba for Chinese,
lowercased) under ``porter unicode61 remove_diacritics 2``. Recall@1/5/10, query latency and
index size for each.

    python benchmarks/fts_tokenizers.py [LOCOMO.json]

English: every turn of LoCoMo (default ../shared/data/locomo-dev.json from the repository root)
is a document "speaker: text [image: caption]", one index per conversation; questions of
categories 1-4 are the queries, their evidence turns the relevant documents; Recall@k is
LoCoMo's |evidence in top k| / |evidence|, averaged over questions.
Chinese: benchmarks/data/zh_recall.json, a small hand-written set (105 chat lines of a user and
the cat persona 喵, 60 paraphrased questions; 16 of them "mixed", with Latin-script words such
as Costco or OKR, reported apart as well). Never run by CI. The last line printed is one line of
JSON with the headline figures.

How each trigram query is built (the best a trigram user could reasonably do; trigram cannot
match a term shorter than three characters):
- ``trigram``: English words of three or more letters, stop words removed, OR'ed as quoted
  strings (a trigram phrase is a substring match, so "paint" also finds "painting"). A Chinese
  run is cut at stop words (the list in memory/text.py) and each piece into its overlapping
  3-character windows, all OR'ed; no segmenter is needed.
- ``trigram+like``: as above, then rows matching none of it are ranked by how many of the
  query's 2-character pieces (English 2-letter words, every 2-character window of a Chinese
  piece) they contain, with LIKE, and fill the list after the MATCH results.
- ``trigram+jieba q``: the query (only) segmented by jieba: words of three or more characters
  OR'ed in MATCH, two-character words through the LIKE fill.
The "b" rows prepare text in Python and vary only how jieba cuts Chinese; "ref CJK bigrams"
(overlapping character pairs, no segmenter) is a classic baseline, for reference only.

Measured 2026-11-29 on the 2-core development machine (Python 3.11, SQLite 3.40.1); latency is
per query, Python preparation (jieba) included; "index" is the whole in-memory database holding
the FTS5 table(s) after 'optimize' (the Chinese set is so small that 4 KiB pages dominate):

| setup | en R@1 | en R@5 | en R@10 | en p50 µs | en index KiB | zh R@1 | zh R@5 | zh R@10 |
|---|---:|---:|---:|---:|---:|---:|---:|---:|
| a trigram | 0.322 | 0.514 | 0.589 | 582 | 1896 | 0.208 | 0.250 | 0.250 |
| a trigram+like | 0.322 | 0.514 | 0.589 | 580 | 1896 | 0.556 | 0.747 | 0.764 |
| a trigram+jieba q | 0.322 | 0.514 | 0.589 | 585 | 1896 | 0.564 | 0.739 | 0.772 |
| b lcut | 0.319 | 0.529 | 0.611 | 438 | 852 | 0.606 | 0.747 | 0.772 |
| b search (lcut_for_search) | 0.319 | 0.529 | 0.611 | 437 | 852 | 0.639 | 0.789 | 0.806 |
| b search doc, lcut q | 0.319 | 0.529 | 0.611 | 438 | 852 | 0.672 | 0.789 | 0.806 |
| b ..., no HMM (memory/text.py) | 0.319 | 0.529 | 0.611 | 434 | 852 | 0.672 | 0.839 | 0.872 |
| ref CJK bigrams | 0.319 | 0.529 | 0.611 | 434 | 852 | 0.664 | 0.772 | 0.797 |

Kept: (b) as memory/text.py does it (documents in jieba's search mode, queries in its accurate
mode, HMM off on both sides). On Chinese, trigram can only reach two-character words through a
LIKE scan, and loses 9 points of R@5 even so; on English it ties at R@1, is 1.5 points lower at
R@5, with an index 2.2 times as big and queries a third slower. Turning jieba's HMM off matters
because its guesses at unknown words differ between a memory and a question ("学弹" vs "学" "弹");
without it, unknown words fall into single characters the same way on both sides. The Chinese
set is small (one query is 0.017 of R@k): read its differences under 0.03 as noise.
The LoCoMo README reports R@5 0.448 for "BM25, stemmed, stop words removed"; FTS5 here gives
0.529, and an independent pure-Python Okapi BM25 (k1 1.5, b 0.75) over the same tokens gives
0.525 (0.475 if the question's stop words are kept), so the gap is in tokenisation, not FTS5.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory import text as mtext

HERE = Path(__file__).resolve().parent
DEFAULT_LOCOMO = HERE.parent.parent / "shared" / "data" / "locomo-dev.json"
ZH_SET = HERE / "data" / "zh_recall.json"
K = 10

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"  # as memory/text.py
_TOKEN_RE = re.compile(f"([{_HAN}]+)|([^\\W_{_HAN}]+)")
_ZH_STOP = sorted((w for w in mtext.STOP_WORDS if re.fullmatch(f"[{_HAN}]+", w)), key=len)[::-1]
_ZH_STOP_RE = re.compile("|".join(map(re.escape, _ZH_STOP)))


@dataclass
class Group:
    """One index: its documents (rowid -> text) and queries (text, relevant rowids, kind)."""

    docs: dict[int, str]
    queries: list[tuple[str, frozenset[int], str]] = field(default_factory=list)


Search = Callable[[sqlite3.Connection, str], list[int]]


@dataclass(frozen=True)
class Method:
    name: str
    tokenizer: str
    document: Callable[[str], str]
    search: Search


# --- data --------------------------------------------------------------------------------------


def _norm_evidence(raw: Iterable[str]) -> list[str]:
    out: list[str] = []
    for item in raw:
        for a, b in re.findall(r"D:?(\d+):(\d+)", item):
            out.append(f"D{int(a)}:{int(b)}")
    return out


def load_locomo(path: Path) -> list[Group]:
    groups: list[Group] = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conv: dict[str, Any] = sample["conversation"]
        ids: dict[str, int] = {}
        group = Group(docs={})
        for key, session in conv.items():
            if not re.fullmatch(r"session_\d+", key):
                continue
            for turn in session:
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [image: {turn['blip_caption']}]"
                rowid = len(group.docs) + 1
                ids[turn["dia_id"]] = rowid
                group.docs[rowid] = text
        for qa in sample["qa"]:
            if qa["category"] not in (1, 2, 3, 4):
                continue
            relevant = frozenset(ids[e] for e in _norm_evidence(qa["evidence"]) if e in ids)
            if relevant:
                group.queries.append((qa["question"], relevant, "en"))
        groups.append(group)
    return groups


def load_zh(path: Path) -> list[Group]:
    data = json.loads(path.read_text(encoding="utf-8"))
    ids = {m["id"]: i for i, m in enumerate(data["memories"], 1)}
    group = Group(docs={ids[m["id"]]: m["text"] for m in data["memories"]})
    for q in data["queries"]:
        group.queries.append((q["query"], frozenset(ids[r] for r in q["relevant"]), q["kind"]))
    return [group]


# --- option (a): trigram -----------------------------------------------------------------------


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _han_pieces(run: str) -> list[str]:
    """A Han run cut at stop words: the pieces a user without a segmenter would search for."""
    return [p for p in _ZH_STOP_RE.split(run) if p]


def _trigram_terms(query: str, *, jieba_query: bool) -> tuple[list[str], list[str]]:
    """(MATCH terms of 3+ characters, 2-character LIKE pieces) of a query."""
    long: list[str] = []
    short: list[str] = []
    for han, other in _TOKEN_RE.findall(query):
        if other:
            word = other.lower()
            if word in mtext.STOP_WORDS:
                continue
            (long if len(word) >= 3 else short if len(word) == 2 else []).append(word)
        elif jieba_query:
            for word in mtext.terms(han):
                (long if len(word) >= 3 else short if len(word) == 2 else []).append(word)
        else:
            for piece in _han_pieces(han):
                long.extend(piece[i : i + 3] for i in range(len(piece) - 2))
                short.extend(piece[i : i + 2] for i in range(len(piece) - 1))
    return list(dict.fromkeys(long)), list(dict.fromkeys(short))


def trigram_search(*, like: bool, jieba_query: bool) -> Search:
    def search(db: sqlite3.Connection, query: str) -> list[int]:
        long, short = _trigram_terms(query, jieba_query=jieba_query)
        found: list[int] = []
        if long:
            found = [
                r
                for (r,) in db.execute(
                    "SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank LIMIT ?",
                    (" OR ".join(map(_quote, long)), K),
                )
            ]
        if like and short and len(found) < K:
            score = " + ".join("(body LIKE ?)" for _ in short)
            rows = db.execute(
                f"SELECT rowid, {score} AS n FROM t WHERE n > 0 ORDER BY n DESC, rowid",
                [f"%{s}%" for s in short],
            )
            have = set(found)
            for rowid, _n in rows:
                if rowid not in have:
                    found.append(rowid)
                    if len(found) == K:
                        break
        return found

    return search


# --- option (b): segmented text under porter unicode61 -----------------------------------------


def _segmented(cut: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    def tokens(text: str) -> list[str]:
        out: list[str] = []
        for han, other in _TOKEN_RE.findall(text):
            out.extend(cut(han) if han else [other.lower()])
        return out

    return tokens


def _jieba(mode: str, *, hmm: bool = True) -> Callable[[str], list[str]]:
    jieba = mtext._segmenter()  # the module, initialised and silenced
    fn = jieba.lcut_for_search if mode == "search" else jieba.lcut

    def cut(run: str) -> list[str]:
        words: list[str] = fn(run, HMM=hmm)
        return words

    return cut


def _bigrams(run: str) -> list[str]:
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


def unicode61_method(
    name: str, doc_tokens: Callable[[str], list[str]], query_tokens: Callable[[str], list[str]]
) -> Method:
    def search(db: sqlite3.Connection, query: str) -> list[int]:
        words = [w for w in dict.fromkeys(query_tokens(query)) if w not in mtext.STOP_WORDS]
        if not words:
            return []
        expr = " OR ".join(map(_quote, words[:32]))
        sql = "SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank LIMIT ?"
        return [r for (r,) in db.execute(sql, (expr, K))]

    return Method(name, mtext.FTS_TOKENIZER, lambda s: " ".join(doc_tokens(s)), search)


def shipped_search(db: sqlite3.Connection, query: str) -> list[int]:
    expr = mtext.fts_query(query)
    if expr is None:
        return []
    sql = "SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank LIMIT ?"
    return [r for (r,) in db.execute(sql, (expr, K))]


def methods() -> list[Method]:
    """Every setup measured. "b" rows differ only in how jieba cuts Chinese (lcut: accurate
    mode; search: lcut_for_search, which adds the words inside long words; noHMM: no guessing
    of words missing from the dictionary); English text is the same in all of them."""
    lcut, search = _segmented(_jieba("lcut")), _segmented(_jieba("search"))
    lcut_x = _segmented(_jieba("lcut", hmm=False))
    search_x = _segmented(_jieba("search", hmm=False))
    raw: Callable[[str], str] = lambda s: s  # noqa: E731
    return [
        Method("a trigram", "trigram", raw, trigram_search(like=False, jieba_query=False)),
        Method("a trigram+like", "trigram", raw, trigram_search(like=True, jieba_query=False)),
        Method("a trigram+jieba q", "trigram", raw, trigram_search(like=True, jieba_query=True)),
        unicode61_method("b lcut", lcut, lcut),
        unicode61_method("b search", search, search),
        unicode61_method("b search doc, lcut q", search, lcut),
        unicode61_method("b lcut noHMM", lcut_x, lcut_x),
        unicode61_method("b search noHMM", search_x, search_x),
        unicode61_method("b search doc, lcut q noHMM", search_x, lcut_x),
        Method("b memory.text (kept)", mtext.FTS_TOKENIZER, mtext.fts_document, shipped_search),
        unicode61_method("ref CJK bigrams", _segmented(_bigrams), _segmented(_bigrams)),
    ]


# --- measuring ---------------------------------------------------------------------------------


@dataclass
class Result:
    recall: dict[str, list[tuple[float, float, float]]] = field(default_factory=dict)
    latency_us: list[float] = field(default_factory=list)
    index_bytes: int = 0
    text_bytes: int = 0

    def r(self, kind: str | None, k: int) -> float:
        rows = [x for key, v in self.recall.items() if kind in (None, key) for x in v]
        return statistics.fmean(x[(1, 5, 10).index(k)] for x in rows) if rows else float("nan")

    def n(self, kind: str | None) -> int:
        return sum(len(v) for key, v in self.recall.items() if kind in (None, key))


def run(method: Method, groups: list[Group]) -> Result:
    result = Result()
    for group in groups:
        db = sqlite3.connect(":memory:")
        db.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{method.tokenizer}')")
        db.executemany(
            "INSERT INTO t(rowid, body) VALUES (?, ?)",
            ((rowid, method.document(text)) for rowid, text in group.docs.items()),
        )
        db.commit()
        db.execute("INSERT INTO t(t) VALUES ('optimize')")
        (pages,) = db.execute("PRAGMA page_count").fetchone()
        (page_size,) = db.execute("PRAGMA page_size").fetchone()
        result.index_bytes += pages * page_size
        result.text_bytes += sum(len(t.encode()) for t in group.docs.values())
        for query, relevant, kind in group.queries:
            t0 = time.perf_counter_ns()
            top = method.search(db, query)
            result.latency_us.append((time.perf_counter_ns() - t0) / 1000)
            hits = [len(relevant & set(top[:k])) / len(relevant) for k in (1, 5, 10)]
            result.recall.setdefault(kind, []).append((hits[0], hits[1], hits[2]))
        db.close()
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("locomo", nargs="?", type=Path, default=DEFAULT_LOCOMO)
    args = parser.parse_args(argv)
    probe = sqlite3.connect(":memory:")
    try:
        probe.execute("CREATE VIRTUAL TABLE x USING fts5(a, tokenize=trigram)")
        trigram_ok = True
    except sqlite3.OperationalError:  # SQLite before 3.34
        trigram_ok = False
    probe.close()
    print(f"SQLite {sqlite3.sqlite_version}, FTS5 trigram tokenizer available: {trigram_ok}")
    en, zh = load_locomo(args.locomo), load_zh(ZH_SET)
    print(
        f"English: {sum(len(g.docs) for g in en)} turns, {sum(len(g.queries) for g in en)} "
        f"questions; Chinese: {len(zh[0].docs)} lines, {len(zh[0].queries)} questions "
        f"({sum(q[2] == 'mixed' for q in zh[0].queries)} mixed)"
    )
    header = (
        f"| {'method':<28} | set | R@1 | R@5 | R@10 | p50 µs | index KiB | text KiB |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|"
    )
    print(header)
    headline: dict[str, float] = {}
    results: dict[tuple[str, str], Result] = {}
    for method in methods():
        if method.tokenizer == "trigram" and not trigram_ok:
            continue
        for label, groups, kinds in (("en", en, [None]), ("zh", zh, [None, "zh", "mixed"])):
            res = run(method, groups)
            for kind in kinds:
                set_name = label if kind is None else f"{label}/{kind}"
                print(
                    f"| {method.name:<28} | {set_name} "
                    f"| {res.r(kind, 1):.3f} | {res.r(kind, 5):.3f} | {res.r(kind, 10):.3f} "
                    + (
                        f"| {statistics.median(res.latency_us):.0f} "
                        f"| {res.index_bytes / 1024:.0f} | {res.text_bytes / 1024:.0f} |"
                        if kind is None
                        else "| | | |"
                    )
                )
            results[(method.name, label)] = res
    # Headline: the kept setup, and for trigram the best of its three query strategies.
    for label in ("en", "zh"):
        best = max(
            (name for name, lab in results if lab == label and name.startswith("a ")),
            key=lambda name: results[(name, label)].r(None, 5),
            default="",
        )
        for key, name in (("trigram", best), ("jieba", "b memory.text (kept)")):
            if (name, label) in results:
                res = results[(name, label)]
                headline[f"{label}_{key}_r1"] = round(res.r(None, 1), 3)
                headline[f"{label}_{key}_r5"] = round(res.r(None, 5), 3)
                headline[f"{label}_{key}_r10"] = round(res.r(None, 10), 3)
                headline[f"{label}_{key}_p50_us"] = round(statistics.median(res.latency_us))
                headline[f"{label}_{key}_index_kib"] = round(res.index_bytes / 1024)
    print(json.dumps(headline))


if __name__ == "__main__":
    main()
