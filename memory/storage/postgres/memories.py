"""Long-term memories (memory.storage.MemoryStore) and their full-text index: written, read,
searched, reinforced, and encoded, deleted or pruned in one transaction each (their
embeddings: embeddings.py).

Full-text search runs on a stored `tsvector` of the text memory.text prepared (already
jieba-segmented), with the `simple` configuration, over words put through
memory.text.porter_term on both sides (documents and queries): English stemmed with Porter and
accents folded, as SQLite's FTS5 table does, so that both stores match the same words. The
store writes `search` itself (PostgreSQL has no Porter stemmer); a row whose text columns
changed without it is derived again by `fill_search`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from datetime import datetime

import asyncpg
import numpy as np

from memory.records import (
    RECENT_RECALLS,
    EncodingWrite,
    LinkColumns,
    Memory,
    MemoryKind,
    MemoryLink,
    MemoryNotice,
    NewMemory,
    NoticeKind,
    PruneWrite,
)
from memory.storage.postgres.base import clean_text
from memory.storage.postgres.contacts import wipe_contact
from memory.storage.postgres.intentions import (
    forget_intentions,
    insert_intention,
    wipe_intentions,
)
from memory.storage.postgres.vectors import PgVectors, real_array
from memory.storage.rows import (
    LIST_SLICE,
    MEMORY_COLUMNS,
    memory_row,
    memory_rows,
    memory_values,
    moment,
    profile_values,
    pruned_values,
    recent_recalls_text,
    timestamp,
)
from memory.text import porter_document, porter_term

__all__ = ["PgMemories", "notice"]


def _recent_with(at: str) -> str:
    """The recent_recalls after one more recall at the SQL expression `at`: appended, the
    oldest dropped beyond RECENT_RECALLS."""
    return (
        f"((CASE WHEN jsonb_array_length(recent_recalls::jsonb) >= {RECENT_RECALLS}"
        " THEN recent_recalls::jsonb - 0 ELSE recent_recalls::jsonb END)"
        f" || to_jsonb(({at})::float8))::text"
    )


# One statement for all the memories of a recall (one trip, one change notice naming them
# all): their rows locked in id order first, as every writer locks them, so that two
# transactions wait for one another rather than deadlock (the count of `locked` is complete,
# every lock taken, before the join gives the update a row), then rewritten, and each recall
# logged with its new strength.
_REINFORCE = (
    "WITH locked AS MATERIALIZED (SELECT id FROM memories WHERE scope = $2"
    " AND id = ANY($3::bigint[]) ORDER BY id FOR UPDATE),"
    " changed AS (UPDATE memories AS m SET recall_count = m.recall_count + 1,"
    f" last_recalled_at = $1, recent_recalls = {_recent_with('$1')}, strength = u.strength"
    " FROM unnest($3::bigint[], $4::float8[]) AS u (id, strength),"
    " (SELECT count(*) FROM locked) AS l WHERE m.scope = $2 AND m.id = u.id"
    " RETURNING m.id, m.last_recalled_at, m.strength)"
    " INSERT INTO recalls (memory_id, at, strength)"
    " SELECT id, last_recalled_at, strength FROM changed ORDER BY id"
)
_LOG_RECALL = (
    "INSERT INTO recalls (memory_id, at, strength)"
    " SELECT id, last_recalled_at, strength FROM memories"
    " WHERE scope = $1 AND id = ANY($2::bigint[]) ORDER BY id"
)
# The daily prune keeps each of the scope's memories' last RECENT_RECALLS recalls in the log, the
# ones its recent_recalls holds: the older ones live on in its recall count. A memory has no more
# rows than recalls counted, so only those counted more are looked at.
_TRIM_RECALLS = (
    "DELETE FROM recalls WHERE id IN (SELECT id FROM (SELECT r.id, row_number()"
    " OVER (PARTITION BY r.memory_id ORDER BY r.at DESC, r.id DESC) AS n FROM recalls AS r"
    " JOIN memories AS m ON m.id = r.memory_id WHERE m.scope = $1"
    f" AND m.recall_count > {RECENT_RECALLS}) AS ranked WHERE n > {RECENT_RECALLS})"
)

# What the full-text index holds of a memory (migration 019, word for word: a query that writes
# it otherwise does not use the index): its words and its scope's tag, one word that no text
# holds. Asked for the tag AND a word, GIN walks the scope's own memories.
_SEARCH_INDEXED = (
    "(search || to_tsvector('simple', 'kzs' || translate(md5(scope), '0123456789', 'ghijklmnop')))"
)
# The tag of the scope $1, as a tsquery.
_SCOPE_TAG = "to_tsquery('simple', 'kzs' || translate(md5($1), '0123456789', 'ghijklmnop'))"
# The memories whose indexed words match the tsquery `{}` (with the scope's tag: the scope's
# own, bar an md5 collision, which the caller's `scope = $1` rules out). OFFSET 0 keeps that
# test out of the scan: the planner would AND the scope's btree entries into the bitmap, all
# of them however few the matches (25 ms for a scope of 100k), narrowing nothing the tag has
# not (benchmarks/README.md).
_TAGGED = f"(SELECT id, scope, search FROM memories WHERE {_SEARCH_INDEXED} @@ ({{}}) OFFSET 0)"

# BM25's IDF times each term's cover density (ts_rank_cd, normalised by the log of the
# document's length; body weighs 1, the memory before `context_weight`), summed over the query's
# terms that the memory holds. Not FTS5's bm25(): no saturation of repeated terms and another
# length normalisation, so scores differ; the order is what recall uses. Document frequencies
# are counted in the scope (a scope is a wall: no other scope's words weigh here).
_LEXICAL_SEARCH = f"""
WITH total AS (
    SELECT coalesce((SELECT memories FROM scope_sizes WHERE scope = $1), 0)::float8 AS size,
           {_SCOPE_TAG} AS tag
),
asked AS MATERIALIZED (  -- (inlined, each term's tsquery was parsed again for every row)
    SELECT term, q, q && total.tag AS scoped
    FROM unnest($2::text[]) WITH ORDINALITY AS a(t, term)
    CROSS JOIN phraseto_tsquery('simple', t) AS q
    CROSS JOIN total
    WHERE numnode(q) > 0
),
hits AS MATERIALIZED (  -- each term's matches, read once: counted for its IDF, and ranked
    SELECT term, id, ts_rank_cd($3::float4[], search, asked.q, 1) AS cover
    FROM asked CROSS JOIN LATERAL {_TAGGED.format("asked.scoped")} AS tagged
    WHERE scope = $1
),
idf AS (
    SELECT term, ln(1 + (total.size - count(*) + 0.5) / (count(*) + 0.5)) AS idf
    FROM hits CROSS JOIN total
    GROUP BY term, total.size
)
SELECT id, sum(idf.idf * hits.cover) AS score
FROM hits JOIN idf USING (term)
GROUP BY id
ORDER BY score DESC, id
LIMIT $4
"""

# In how many of the scope's memories each term ($2) occurs in their own words (weight A).
_DOCUMENT_FREQUENCIES = (
    f"SELECT t, (SELECT count(*) FROM {_TAGGED.format('q && ' + _SCOPE_TAG)} AS tagged"
    " WHERE scope = $1 AND ts_filter(search, '{a}') @@ q)"
    " FROM unnest($2::text[]) AS t, phraseto_tsquery('simple', t) AS q"
)

_INSERT_MEMORY = (
    "INSERT INTO memories (scope, text, speaker, kind, category, importance,"
    " sentiment, created_at, strength, related, conversation_id, previous_id,"
    " embedding, embedder, speaker_id, search_body, search_context, search{}) VALUES"
    " ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,"
    " setweight(to_tsvector('simple', $18), 'A') || setweight(to_tsvector('simple', $19), 'B'){})"
    " RETURNING id"
)
# The memory's own words weigh A, the memory's before it B (ts_rank_cd's weights).
_FILL_SEARCH = (
    "UPDATE memories SET search = setweight(to_tsvector('simple', $2), 'A')"
    " || setweight(to_tsvector('simple', $3), 'B') WHERE id = $1"
)
FILL_BATCH = 1000

# A quoted FTS5 string ("" inside is a quote), or a bare word.
_FTS_TERM_RE = re.compile(r'"((?:[^"]|"")*)"|([^\s"(){}:^*+]+)')
_FTS_OPERATORS = frozenset({"OR", "AND", "NOT", "NEAR"})


def _fts_terms(match: str) -> list[str]:
    """The terms of an FTS5 query as memory.text.fts_query writes them (an OR of quoted
    strings). Operators are dropped: every query is taken as an OR of its terms."""
    out: list[str] = []
    for quoted, bare in _FTS_TERM_RE.findall(match):
        if quoted:
            out.append(quoted.replace('""', '"'))
        elif bare and bare not in _FTS_OPERATORS:
            out.append(bare)
    return out


# The kinds a notification names (migration 020), by the character it names them with.
_NOTICED: dict[str, NoticeKind] = {"+": "added", "-": "deleted", "~": "embedded", "*": "touched"}


def notice(payload: str, wide: NoticeKind) -> tuple[str, MemoryNotice] | None:
    """(the writer, what it changed) from a notification's payload (migration 020); a payload
    naming no memories, or not read whole, is scope-wide: `wide`. None: no scope."""
    head, _, scope = payload.partition("|")
    writer, _, named = head.partition(" ")
    if not scope:
        return None
    kind = _NOTICED.get(named[:1])
    try:
        ids = tuple(int(i) for i in named[1:].split(",")) if kind is not None else None
    except ValueError:
        ids = None
    if kind is None or ids is None:
        return writer, MemoryNotice(scope, wide)
    return writer, MemoryNotice(scope, kind, ids)


def _hearer(
    instance: str, call: Callable[[MemoryNotice], None], wide: NoticeKind
) -> Callable[[object, int, str, str], None]:
    """A listener calling `call(notice)` for a notification another process's writer sent."""

    def heard(_conn: object, _pid: int, _channel: str, payload: str) -> None:
        found = notice(payload, wide)
        if found is not None and found[0] != instance:
            call(found[1])

    return heard


class PgMemories(PgVectors):
    """Every operation names its scope; ids are unique across scopes."""

    # A large scope's full-text search and rows are read from here by each process, not
    # copied into each (memory/recall/derived.py): its scoped index (migration 019) finds a
    # scope's words without the rest of the community's, and several processes share it.
    serves_large_scopes = True

    async def listen(
        self, heard: Callable[[MemoryNotice], None], missed: Callable[[], None]
    ) -> None:
        """Call `heard(notice)` for each change another process makes to a scope's memories
        (migration 020): added, deleted or embedded again (`kizuna_memories`), changed in place
        (`kizuna_memories_touched`), in the order they were committed (one connection hears
        both channels); `missed()` when the connection hearing them was lost (the server
        restarted, the network dropped), and again once it is back: any change may have gone
        unheard meanwhile."""
        hearing = [
            ("kizuna_memories", _hearer(self.instance, heard, "changed")),
            ("kizuna_memories_touched", _hearer(self.instance, heard, "touched")),
        ]
        async with self._session_busy:
            self._missing.append(missed)
            session = await self._own_connection()
            for channel, hearer in hearing:
                # Heard again on a new connection, should this one drop.
                self._hearing.append((channel, hearer))
                await session.add_listener(channel, hearer)

    async def add_memory(self, memory: NewMemory) -> int:
        async with self._pool.acquire() as conn:
            return await self._insert(conn, memory)

    async def _insert(
        self, conn: asyncpg.Connection, memory: NewMemory, previous_id: int | None = None
    ) -> int:
        """Insert on `conn`, in its transaction if any (`previous_id` overrides the memory's)."""
        body, context = clean_text(memory.search_text), clean_text(memory.search_context)
        values = (
            *memory_values(memory, previous_id),
            body,
            context,
            porter_document(body),
            porter_document(context),
        )
        if self.searches_vectors:
            memory_id = await conn.fetchval(
                _INSERT_MEMORY.format(", embedding_v", ", $20::real[]::vector"),
                *values,
                real_array(memory.embedding),
            )
        else:
            memory_id = await conn.fetchval(_INSERT_MEMORY.format("", ""), *values)
        return int(memory_id)

    async def find_memory(self, scope: str, text: str, kind: MemoryKind) -> int | None:
        found = await self._pool.fetchval(
            "SELECT id FROM memories WHERE scope = $1 AND kind = $2 AND text = $3"
            " ORDER BY id LIMIT 1",
            scope,
            kind,
            clean_text(text),
        )
        return None if found is None else int(found)

    async def get_memories(self, scope: str, ids: Sequence[int]) -> list[Memory]:
        unique = list(dict.fromkeys(int(i) for i in ids))
        rows = await self._pool.fetch(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE scope = $1 AND id = ANY($2::bigint[])",
            scope,
            unique,
        )
        found = {r[0]: memory_row(r) for r in rows}
        return [found[i] for i in unique if i in found]

    async def list_memories(
        self, scope: str, *, limit: int | None = None, newest_first: bool = True
    ) -> list[Memory]:
        order = "DESC" if newest_first else "ASC"
        query = (
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE scope = $1"
            f" ORDER BY created_at {order}, id {order} LIMIT $2"
        )
        if limit is not None and limit <= LIST_SLICE:
            return await memory_rows(await self._pool.fetch(query, scope, limit))
        # A slice of rows at a time made into memories (the daily prune lists whole scopes):
        # never all the rows held beside all the memories made of them.
        memories: list[Memory] = []
        async with self._pool.acquire() as conn, conn.transaction():
            cursor = await conn.cursor(query, scope, limit)  # LIMIT NULL: all
            while rows := await cursor.fetch(LIST_SLICE):
                memories += await memory_rows(rows)
        return memories

    async def memories_between(
        self, scope: str, start: datetime, end: datetime, *, limit: int
    ) -> list[Memory]:
        rows = await self._pool.fetch(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE scope = $1 AND created_at >= $2"
            " AND created_at < $3 ORDER BY created_at DESC, id DESC LIMIT $4",
            scope,
            timestamp(start),
            timestamp(end),
            max(limit, 0),
        )
        return [memory_row(r) for r in rows]

    async def count_memories(self, scope: str) -> int:
        count = await self._pool.fetchval("SELECT count(*) FROM memories WHERE scope = $1", scope)
        return int(count)

    async def delete_memories(self, scope: str, ids: Sequence[int]) -> list[int]:
        async with self._pool.acquire() as conn, conn.transaction():
            sources = await conn.fetch(
                "SELECT DISTINCT conversation_id FROM memories WHERE scope = $1"
                " AND id = ANY($2::bigint[]) AND conversation_id IS NOT NULL",
                scope,
                list(dict.fromkeys(int(i) for i in ids)),
            )
            gone = await self._delete(conn, scope, ids)
            await forget_intentions(conn, scope, [int(r[0]) for r in sources])
            return gone

    @staticmethod
    async def _delete(conn: asyncpg.Connection, scope: str, ids: Sequence[int]) -> list[int]:
        """Delete in the caller's transaction; returns the ids that were there."""
        rows = await conn.fetch(
            "DELETE FROM memories WHERE scope = $1 AND id = ANY($2::bigint[])"
            " RETURNING id, conversation_id",
            scope,
            list(dict.fromkeys(int(i) for i in ids)),
        )
        gone = [int(r[0]) for r in rows]
        # The transcript and recap it was encoded from said it too.
        sources = list({int(r[1]) for r in rows if r[1] is not None})
        if sources:
            await conn.execute(
                "UPDATE conversations SET turns = '[]', recap = NULL WHERE id = ANY($1::bigint[])",
                sources,
            )
        if gone:
            # What came next no longer carries the forgotten text as its context.
            await conn.execute(
                "UPDATE memories SET previous_id = NULL, search_context = '',"
                " search = ts_filter(search, '{a}')"
                " WHERE previous_id = ANY($1::bigint[])",
                gone,
            )
        return gone

    async def lexical_search(
        self, scope: str, match: str, k: int, *, context_weight: float = 0.35, narrow: bool = True
    ) -> list[tuple[int, float]]:
        """Like Store's, for the queries memory.text.fts_query writes (an OR of quoted terms);
        scored by `_LEXICAL_SEARCH`. `narrow` is for FTS5: here the scope's rows are always
        the only ones ranked."""
        terms = [porter_term(t) for t in _fts_terms(match)]
        if not terms or k <= 0:
            return []
        # ts_rank_cd's weights are {D, C, B, A}, each at most 1.
        weights = [0.0, 0.0, min(max(float(context_weight), 0.0), 1.0), 1.0]
        rows = await self._pool.fetch(_LEXICAL_SEARCH, scope, terms, weights, k)
        return [(int(r[0]), float(r[1])) for r in rows]

    async def document_frequencies(self, scope: str, terms: Sequence[str]) -> dict[str, int]:
        """In how many of the scope's memories each term occurs (in their own text, not the
        context): recall leaves out words too common to tell memories apart."""
        if not terms:
            return {}
        rows = await self._pool.fetch(
            _DOCUMENT_FREQUENCIES,
            scope,
            list({porter_term(t) for t in terms}),
        )
        counts = {r[0]: int(r[1]) for r in rows}
        return {t: counts[porter_term(t)] for t in terms}

    async def fill_search(self) -> int:
        """Derive the full-text vector of every memory that has none (after migration 008,
        or a copy by `kizuna migrate`); returns how many."""
        filled = 0
        while True:
            rows = await self._pool.fetch(
                "SELECT id, search_body, search_context FROM memories"
                " WHERE search IS NULL ORDER BY id LIMIT $1",
                FILL_BATCH,
            )
            if not rows:
                return filled
            await self._pool.executemany(
                _FILL_SEARCH,
                [(r[0], porter_document(r[1]), porter_document(r[2])) for r in rows],
            )
            filled += len(rows)

    async def sizes(self, scope: str) -> tuple[int, int]:
        """(memories in the scope, memories in all scopes: from the id range, an overcount)."""
        row = await self._pool.fetchrow(
            "SELECT (SELECT count(*) FROM memories WHERE scope = $1),"
            " (SELECT max(id) - min(id) + 1 FROM memories)",
            scope,
        )
        assert row is not None
        return int(row[0]), int(row[1] or 0)

    async def last_memory(self, scope: str) -> Memory | None:
        row = await self._pool.fetchrow(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE scope = $1 ORDER BY id DESC LIMIT 1",
            scope,
        )
        return None if row is None else memory_row(row)

    async def with_successors(self, scope: str, ids: Sequence[int]) -> list[Memory]:
        rows = await self._pool.fetch(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE scope = $1"
            " AND (id = ANY($2::bigint[]) OR previous_id = ANY($2::bigint[])) ORDER BY id",
            scope,
            list(dict.fromkeys(int(i) for i in ids)),
        )
        return [memory_row(r) for r in rows]

    async def links(self, scope: str, ids: Sequence[int]) -> list[MemoryLink]:
        rows = await self._pool.fetch(
            "SELECT id, previous_id, speaker FROM memories"
            " WHERE scope = $1 AND id = ANY($2::bigint[]) ORDER BY id",
            scope,
            sorted({int(i) for i in ids}),
        )
        return [MemoryLink(r[0], r[1], r[2]) for r in rows]

    async def scope_links(self, scope: str) -> LinkColumns:
        # Three arrays in one row: no row object a memory (the columns' order is the same,
        # the rows' is not promised: ScopeLinks sorts them).
        row = await self._pool.fetchrow(
            "SELECT array_agg(id), array_agg(coalesce(previous_id, 0)), array_agg(speaker)"
            " FROM memories WHERE scope = $1",
            scope,
        )
        if row is None or row[0] is None:
            return LinkColumns(np.zeros(0, np.int64), np.zeros(0, np.int64), [])
        return LinkColumns(np.array(row[0], np.int64), np.array(row[1], np.int64), row[2])

    async def search_documents(
        self, scope: str, ids: Sequence[int] | None = None
    ) -> list[tuple[int, int | None, str, str]]:
        columns = "SELECT id, previous_id, search_body, search_context FROM memories"
        if ids is None:
            rows = await self._pool.fetch(f"{columns} WHERE scope = $1 ORDER BY id", scope)
        else:
            rows = await self._pool.fetch(
                f"{columns} WHERE scope = $1 AND id = ANY($2::bigint[]) ORDER BY id",
                scope,
                sorted({int(i) for i in ids}),
            )
        return [(r[0], r[1], r[2] or "", r[3] or "") for r in rows]

    async def reinforce(
        self, scope: str, updates: Sequence[tuple[int, float]], now: datetime
    ) -> None:
        if not updates:
            return
        await self._pool.execute(
            _REINFORCE,
            timestamp(now),
            scope,
            [memory_id for memory_id, _ in updates],
            [strength for _, strength in updates],
        )

    @staticmethod
    async def _merge_recalls(
        conn: asyncpg.Connection, scope: str, from_id: int, into_id: int
    ) -> None:
        """In the caller's transaction: `into_id` takes over the recalls of `from_id`
        (history rows, count and recent times), when both are the scope's."""
        if from_id == into_id:
            return
        pair = await conn.fetch(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE scope = $1 AND id = ANY($2::bigint[])",
            scope,
            [from_id, into_id],
        )
        if len(pair) == 2:
            await conn.execute(
                "UPDATE memories SET recent_recalls = $1 WHERE scope = $2 AND id = $3",
                recent_recalls_text(*(memory_row(r).recall_times for r in pair)),
                scope,
                into_id,
            )
        await conn.execute(
            "UPDATE memories SET recall_count = recall_count + coalesce("
            "(SELECT recall_count FROM memories WHERE scope = $1 AND id = $2), 0)"
            " WHERE scope = $1 AND id = $3",
            scope,
            from_id,
            into_id,
        )
        await conn.execute(
            "UPDATE recalls SET memory_id = $3"
            " WHERE memory_id IN (SELECT id FROM memories WHERE scope = $1 AND id = $2)"
            " AND EXISTS (SELECT 1 FROM memories WHERE scope = $1 AND id = $3)",
            scope,
            from_id,
            into_id,
        )

    async def recall_history(self, scope: str, memory_id: int) -> list[tuple[datetime, float]]:
        rows = await self._pool.fetch(
            "SELECT r.at, r.strength FROM recalls r JOIN memories m ON m.id = r.memory_id"
            " WHERE m.scope = $1 AND m.id = $2 ORDER BY r.at, r.id",
            scope,
            memory_id,
        )
        return [(moment(r[0]), float(r[1])) for r in rows]

    async def set_related(self, scope: str, memory_id: int, related: Sequence[int]) -> None:
        await self._pool.execute(
            "UPDATE memories SET related = $1 WHERE scope = $2 AND id = $3",
            json.dumps([int(r) for r in related]),
            scope,
            memory_id,
        )

    async def scopes(self) -> list[str]:
        rows = await self._pool.fetch("SELECT DISTINCT scope FROM memories ORDER BY scope")
        return [r[0] for r in rows]

    async def wipe_memories(self, scope: str) -> int:
        async with self._pool.acquire() as conn, conn.transaction():
            ids = [
                r[0] for r in await conn.fetch("SELECT id FROM memories WHERE scope = $1", scope)
            ]
            gone = await self._delete(conn, scope, ids)
            for table in ("diary", "profiles", "pruned", "prune_days"):
                await conn.execute(f"DELETE FROM {table} WHERE scope = $1", scope)
            await wipe_intentions(conn, scope)
            await wipe_contact(conn, scope)
        return len(gone)

    async def commit_encoding(self, write: EncodingWrite) -> list[int] | None:
        at = timestamp(write.at)
        async with self._pool.acquire() as conn, conn.transaction():
            # The row lock makes a concurrent encoder of the same conversation wait, then find
            # it encoded: the mark and everything else commit together, once.
            marked = await conn.fetchval(
                "UPDATE conversations SET encoded_at = $1, recap = $2"
                " WHERE id = $3 AND encoded_at IS NULL RETURNING id",
                at,
                clean_text(write.recap),
                write.conversation_id,
            )
            if marked is None:
                return None
            ids: list[int] = []
            for memory in write.memories:
                ids.append(await self._insert(conn, memory, ids[-1] if ids else None))
            for memory_id, memory, siblings in zip(
                ids, write.memories, write.sibling_links, strict=True
            ):
                if siblings:
                    related = [*memory.related, *(ids[i] for i in siblings)]
                    await conn.execute(
                        "UPDATE memories SET related = $1 WHERE id = $2",
                        json.dumps(related),
                        memory_id,
                    )
            merges = sorted(write.merges, key=lambda m: m.memory_id)  # see in_lock_order
            await conn.executemany(
                # A conversation encoded late never dates a recall before the memory's last
                # touch (its making or its last recall).
                "UPDATE memories SET strength = $1, importance = greatest(importance, $2),"
                " recall_count = recall_count + 1,"
                " last_recalled_at = greatest($3, coalesce(last_recalled_at, created_at)),"
                " recent_recalls ="
                f" {_recent_with('greatest($3, coalesce(last_recalled_at, created_at))')}"
                " WHERE scope = $4 AND id = $5",
                [(m.strength, m.importance, at, write.scope, m.memory_id) for m in merges],
            )
            await conn.execute(_LOG_RECALL, write.scope, [m.memory_id for m in merges])
            if write.diary is not None:
                day, text = write.diary
                await conn.execute(
                    "INSERT INTO diary (scope, day, text, conversations, updated_at)"
                    " VALUES ($1, $2, $3, 1, $4) ON CONFLICT (scope, day) DO UPDATE"
                    " SET text = excluded.text, conversations = diary.conversations + 1,"
                    " updated_at = excluded.updated_at",
                    write.scope,
                    day.isoformat(),
                    clean_text(text),
                    at,
                )
            await conn.executemany(
                "INSERT INTO profiles (scope, user_id, name, text, updated_at, aliases)"
                " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (scope, user_id) DO UPDATE"
                " SET name = excluded.name, text = excluded.text,"
                " updated_at = excluded.updated_at, aliases = excluded.aliases",
                profile_values(write, at),
            )
            for intention in write.intentions:
                await insert_intention(conn, intention)
        return ids

    async def prune(self, write: PruneWrite) -> list[int]:
        scope = write.scope
        # Survivors in id order, as in_lock_order has every writer take rows.
        going = {m.id for m, _ in write.forgotten}
        moves = sorted(
            ((t, k) for t, k in write.merged.items() if t in going),
            key=lambda move: (move[1], move[0]),
        )
        async with self._pool.acquire() as conn, conn.transaction():
            for twin, keep in moves:
                await self._merge_recalls(conn, scope, twin, keep)
            gone = set(await self._delete(conn, scope, [m.id for m, _ in write.forgotten]))
            await conn.execute(_TRIM_RECALLS, scope)
            await conn.executemany(
                "INSERT INTO pruned (scope, memory_id, category, importance, policy,"
                " reason, pruned_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                pruned_values(write, gone),
            )
            await conn.execute(
                "INSERT INTO prune_days (scope, day) VALUES ($1, $2)"
                " ON CONFLICT (scope) DO UPDATE SET day = excluded.day",
                scope,
                write.day.isoformat(),
            )
        return sorted(gone)
