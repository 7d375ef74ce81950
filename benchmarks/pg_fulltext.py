"""Which full-text setup to use for the lexical half of recall on PostgreSQL, in English and
Chinese: what PgStore ships (a `simple` tsvector over the text memory.text prepares, Chinese
segmented by jieba), a `simple` tsvector over the raw text, or pg_trgm's trigram similarity
over the raw text (the issue's suggestion for Chinese). Recall@1/5/10 and query latency.

    python benchmarks/pg_fulltext.py [LOCOMO.json] [--dsn postgresql://...]

The sets are benchmarks/fts_tokenizers.py's: every LoCoMo turn a document, its questions of
categories 1-4 the queries (one scope per conversation); and the hand-written Chinese set
(benchmarks/data/zh_recall.json). Without --dsn a throwaway local server is started as
benchmarks/recall_latency.py starts one. Never run by CI. The last line printed is one line
of JSON with the headline figures.

Methods:
- ``shipped``: PgStore itself (memories added through add_memory with the search text the bank
  prepares; queries through lexical_search with memory.text.fts_query's terms).
- ``simple raw``: to_tsvector('simple', text), queried with the OR of the query's words
  (PostgreSQL's parser keeps a run of Han characters as one word).
- ``trgm similarity``: a GiST gist_trgm_ops index, ordered by `text <-> query` (1 - similarity).
- ``trgm word_similarity``: the same index, ordered by `query <<-> text`, how well the query's
  trigrams match some stretch of the memory.

Measured 2026-11-30 on the 2-core development machine (PostgreSQL 15, Debian), with other work
running (load about 3); latency is per query, client preparation (jieba) included:

| method | set | R@1 | R@5 | R@10 | p50 µs |
|---|---|---:|---:|---:|---:|
| shipped (jieba + simple) | en | 0.296 | 0.521 | 0.588 | 7367 |
| shipped (jieba + simple) | zh | 0.656 | 0.831 | 0.872 | 1287 |
| shipped (jieba + simple) | zh/mixed | 0.677 | 0.896 | 0.958 | 1287 |
| simple raw | en | 0.100 | 0.253 | 0.333 | 5147 |
| simple raw | zh | 0.000 | 0.000 | 0.000 | 98 |
| trgm similarity | en | 0.116 | 0.246 | 0.313 | 13347 |
| trgm similarity | zh | 0.442 | 0.600 | 0.608 | 599 |
| trgm similarity | zh/mixed | 0.469 | 0.688 | 0.688 | 599 |
| trgm word_similarity | en | 0.305 | 0.442 | 0.497 | 20426 |
| trgm word_similarity | zh | 0.358 | 0.483 | 0.508 | 651 |
| trgm word_similarity | zh/mixed | 0.406 | 0.562 | 0.625 | 651 |

Kept: what ships (benchmarks/README.md says why).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import asyncpg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere

from fts_tokenizers import DEFAULT_LOCOMO, ZH_SET, Group, load_locomo, load_zh
from recall_latency import fresh_database, postgres_server

from memory.records import NewMemory
from memory.storage.postgres import PgStore
from memory.text import fts_document, fts_query

K = 10
_WORD_RE = re.compile(r"\w+")

Search = Callable[[str, str], Awaitable[list[int]]]


@dataclass
class Result:
    recall: dict[str, list[tuple[float, float, float]]] = field(default_factory=dict)
    latency_us: list[float] = field(default_factory=list)

    def r(self, kind: str | None, k: int) -> float:
        rows = [x for key, v in self.recall.items() if kind in (None, key) for x in v]
        return statistics.fmean(x[(1, 5, 10).index(k)] for x in rows) if rows else float("nan")


async def shipped(dsn: str, groups: list[Group]) -> tuple[Search, Callable[[], Awaitable[None]]]:
    store = await PgStore.open(dsn)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    ids: dict[tuple[str, int], int] = {}
    for g, group in enumerate(groups):
        for rowid, text in group.docs.items():
            ids[(f"g{g}", await store.add_memory(_memory(f"g{g}", text, at)))] = rowid

    async def search(scope: str, query: str) -> list[int]:
        match = fts_query(query)
        if not match:
            return []
        found = await store.lexical_search(scope, match, K)
        return [ids[(scope, i)] for i, _ in found]

    return search, store.close


def _memory(scope: str, text: str, at: datetime) -> NewMemory:
    return NewMemory(
        scope=scope,
        text=text,
        speaker=None,
        kind="episodic",
        category=None,
        importance=2,
        sentiment=0.0,
        created_at=at,
        strength=5.0,
        search_text=fts_document(text),
    )


async def plain_table(dsn: str, groups: list[Group], index: str) -> asyncpg.Connection:
    db = await asyncpg.connect(dsn)
    await db.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    await db.execute("CREATE EXTENSION IF NOT EXISTS btree_gist")  # scope in the GiST index
    await db.execute(
        "CREATE TABLE docs (scope TEXT, id INT, body TEXT,"
        " tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('simple', body)) STORED)"
    )
    await db.executemany(
        "INSERT INTO docs VALUES ($1, $2, $3)",
        [(f"g{g}", i, t) for g, group in enumerate(groups) for i, t in group.docs.items()],
    )
    await db.execute(index)
    await db.execute("ANALYZE docs")
    return db


async def simple_raw(dsn: str, groups: list[Group]) -> tuple[Search, Callable[[], Awaitable[None]]]:
    db = await plain_table(dsn, groups, "CREATE INDEX ON docs USING GIN (tsv)")

    async def search(scope: str, query: str) -> list[int]:
        words = [w.lower() for w in _WORD_RE.findall(query)]
        if not words:
            return []
        rows = await db.fetch(
            "SELECT id FROM docs, to_tsquery('simple', $2) AS q WHERE scope = $1 AND tsv @@ q"
            " ORDER BY ts_rank_cd(tsv, q) DESC, id LIMIT $3",
            scope,
            " | ".join(f"'{w}'" for w in words),
            K,
        )
        return [r[0] for r in rows]

    return search, db.close


def trigram(
    order: str,
) -> Callable[[str, list[Group]], Awaitable[tuple[Search, Callable[[], Awaitable[None]]]]]:
    async def make(dsn: str, groups: list[Group]) -> tuple[Search, Callable[[], Awaitable[None]]]:
        db = await plain_table(
            dsn, groups, "CREATE INDEX ON docs USING GIST (scope, body gist_trgm_ops)"
        )

        async def search(scope: str, query: str) -> list[int]:
            rows = await db.fetch(
                f"SELECT id FROM docs WHERE scope = $1 ORDER BY {order}, id LIMIT $3",
                scope,
                query,
                K,
            )
            return [r[0] for r in rows]

        return search, db.close

    return make


async def run(
    dsn: str,
    make: Callable[[str, list[Group]], Awaitable[tuple[Search, Callable[[], Awaitable[None]]]]],
    groups: list[Group],
) -> Result:
    async with fresh_database(dsn) as database:
        search, close = await make(database, groups)
        result = Result()
        try:
            for g, group in enumerate(groups):
                for query, relevant, kind in group.queries:
                    t0 = time.perf_counter_ns()
                    top = await search(f"g{g}", query)
                    result.latency_us.append((time.perf_counter_ns() - t0) / 1000)
                    hits = [len(relevant & set(top[:k])) / len(relevant) for k in (1, 5, 10)]
                    result.recall.setdefault(kind, []).append((hits[0], hits[1], hits[2]))
        finally:
            await close()
    return result


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("locomo", nargs="?", type=Path, default=DEFAULT_LOCOMO)
    parser.add_argument("--dsn", help="a PostgreSQL server to make throwaway databases on")
    args = parser.parse_args()
    en, zh = load_locomo(args.locomo), load_zh(ZH_SET)
    methods = {
        "shipped (jieba + simple)": shipped,
        "simple raw": simple_raw,
        "trgm similarity": trigram("body <-> $2"),
        "trgm word_similarity": trigram("$2 <<-> body"),
    }
    print("| method | set | R@1 | R@5 | R@10 | p50 µs |\n|---|---|---:|---:|---:|---:|")
    headline: dict[str, float] = {}
    async with postgres_server("postgres", args.dsn) as server:
        assert server is not None
        for name, make in methods.items():
            for label, groups, kinds in (("en", en, [None]), ("zh", zh, [None, "mixed"])):
                res = await run(server, make, groups)
                p50 = statistics.median(res.latency_us)
                for kind in kinds:
                    set_name = label if kind is None else f"{label}/{kind}"
                    print(
                        f"| {name} | {set_name} | {res.r(kind, 1):.3f} | {res.r(kind, 5):.3f}"
                        f" | {res.r(kind, 10):.3f} | {p50:.0f} |"
                    )
                headline[f"{name} {label} R@5"] = round(res.r(None, 5), 3)
    print(json.dumps(headline, ensure_ascii=False))


if __name__ == "__main__":
    asyncio.run(main())
