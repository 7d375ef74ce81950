"""Long-term memories (memory.storage.MemoryStore) and their full-text index (FTS5): written,
read, searched, reinforced, and encoded, deleted or pruned in one transaction each (their
embeddings: embeddings.py)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from datetime import datetime

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
    PruneWrite,
)
from memory.storage.rows import (
    LIST_SLICE,
    MEMORY_COLUMNS,
    clean_text,
    memory_row,
    memory_rows,
    memory_values,
    moment,
    profile_values,
    pruned_values,
    recent_recalls_text,
    timestamp,
)
from memory.storage.sqlite.base import CHUNK, SqliteBase, serialised
from memory.storage.sqlite.contacts import wipe_contact
from memory.storage.sqlite.intentions import (
    forget_intentions,
    insert_intention,
    wipe_intentions,
)
from memory.storage.statements import placeholders

__all__ = ["SqliteMemories", "scope_tag"]


# Log the recall of a memory of the scope (after its update), with the strength it left.
_LOG_RECALL = (
    "INSERT INTO recalls (memory_id, at, strength)"
    " SELECT id, last_recalled_at, strength FROM memories WHERE scope = ? AND id = ?"
)
# The daily prune keeps each of the scope's memories' last RECENT_RECALLS recalls in the log, the
# ones its recent_recalls holds: the older ones live on in its recall count. A memory has no more
# rows than recalls counted, so only those counted more are looked at.
_TRIM_RECALLS = (
    "DELETE FROM recalls WHERE rowid IN (SELECT rid FROM (SELECT r.rowid AS rid, row_number()"
    " OVER (PARTITION BY r.memory_id ORDER BY r.at DESC, r.rowid DESC) AS n FROM recalls AS r"
    " JOIN memories AS m ON m.id = r.memory_id WHERE m.scope = ?"
    f" AND m.recall_count > {RECENT_RECALLS}) WHERE n > {RECENT_RECALLS})"
)


def _recent_with(at: str) -> str:
    """The recent_recalls after one more recall at the SQL expression `at`: appended, the
    oldest dropped beyond RECENT_RECALLS."""
    return (
        f"json_insert(CASE WHEN json_array_length(recent_recalls) >= {RECENT_RECALLS}"
        f" THEN json_remove(recent_recalls, '$[0]') ELSE recent_recalls END, '$[#]', {at})"
    )


def scope_tag(scope: str) -> str:
    """The one FTS5 token standing for a scope (letters and digits only, so no tokenizer
    splits or stems it)."""
    return "s" + hashlib.blake2b(scope.encode("utf-8", "replace"), digest_size=10).hexdigest() + "0"


class SqliteMemories(SqliteBase):
    """Every operation names its scope; ids are unique across scopes."""

    async def listen(
        self, heard: Callable[[MemoryNotice], None], missed: Callable[[], None]
    ) -> None:
        """Nothing to hear: one process has an SQLite database at a time (PgStore tells of
        other processes' changes)."""

    @serialised
    async def add_memory(self, memory: NewMemory) -> int:
        async with self._transaction():
            memory_id = await self._insert(memory)
        return memory_id

    async def _insert(self, memory: NewMemory, previous_id: int | None = None) -> int:
        """Insert inside the caller's transaction (`previous_id` overrides the memory's)."""
        cur = await self._db.execute(
            "INSERT INTO memories (scope, text, speaker, kind, category, importance,"
            " sentiment, created_at, strength, related, conversation_id, previous_id,"
            " embedding, embedder, speaker_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            memory_values(memory, previous_id),
        )
        memory_id = cur.lastrowid
        assert memory_id is not None
        await self._db.execute(
            "INSERT INTO memories_fts (rowid, scope_tag, body, context) VALUES (?, ?, ?, ?)",
            (
                memory_id,
                scope_tag(memory.scope),
                clean_text(memory.search_text),
                clean_text(memory.search_context),
            ),
        )
        return memory_id

    async def get_memories(self, scope: str, ids: Sequence[int]) -> list[Memory]:
        unique = list(dict.fromkeys(int(i) for i in ids))
        rows = await self._all_in(
            lambda marks: (
                f"SELECT {MEMORY_COLUMNS} FROM memories"
                # `+scope`: find the rows by id, then check the scope (a large scope's own index
                # would make SQLite walk all of it).
                f" WHERE +scope = ? AND id IN ({marks})"
            ),
            (scope,),
            unique,
        )
        found = {row[0]: memory_row(row) for row in rows}
        return [found[i] for i in unique if i in found]

    async def list_memories(
        self, scope: str, *, limit: int | None = None, newest_first: bool = True
    ) -> list[Memory]:
        order, beyond = ("DESC", "<") if newest_first else ("ASC", ">")
        query = (
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE scope = ?{{}}"
            f" ORDER BY created_at {order}, id {order} LIMIT ?"
        )
        if limit is not None and limit <= LIST_SLICE:
            return await memory_rows(await self._all(query.format(""), (scope, limit)))
        # A slice of rows at a time made into memories (the daily prune lists whole scopes),
        # each slice read after the last one's final row: never all the rows held beside all
        # the memories made of them, and no statement left open across awaits.
        memories: list[Memory] = []
        after = ""
        last: tuple[object, ...] = ()
        while limit is None or len(memories) < limit:
            wanted = LIST_SLICE if limit is None else min(LIST_SLICE, limit - len(memories))
            rows = await self._all(query.format(after), (scope, *last, wanted))
            memories += await memory_rows(rows)
            if len(rows) < wanted:
                break
            after, last = f" AND (created_at, id) {beyond} (?, ?)", (rows[-1][8], rows[-1][0])
        return memories

    async def memories_between(
        self, scope: str, start: datetime, end: datetime, *, limit: int
    ) -> list[Memory]:
        rows = await self._all(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE scope = ? AND created_at >= ?"
            " AND created_at < ? ORDER BY created_at DESC, id DESC LIMIT ?",
            (scope, timestamp(start), timestamp(end), max(limit, 0)),
        )
        return [memory_row(r) for r in rows]

    async def find_memory(self, scope: str, text: str, kind: MemoryKind) -> int | None:
        async with self._db.execute(
            "SELECT id FROM memories WHERE scope = ? AND kind = ? AND text = ? ORDER BY id LIMIT 1",
            (scope, kind, clean_text(text)),
        ) as cur:
            row = await cur.fetchone()
        return None if row is None else int(row[0])

    async def count_memories(self, scope: str) -> int:
        row = await self._one("SELECT count(*) FROM memories WHERE scope = ?", (scope,))
        return int(row[0]) if row else 0

    @serialised
    async def delete_memories(self, scope: str, ids: Sequence[int]) -> list[int]:
        async with self._transaction():
            sources = await self._sources(scope, ids)
            gone = await self._delete(scope, ids)
            await forget_intentions(self._db, scope, sources)
        if gone:
            await self._scrub()
        return gone

    async def _sources(self, scope: str, ids: Sequence[int]) -> list[int]:
        """The conversations the memories `ids` of the scope were made from."""
        rows = await self._all_in(
            lambda marks: (
                "SELECT DISTINCT conversation_id FROM memories WHERE scope = ?"
                f" AND id IN ({marks}) AND conversation_id IS NOT NULL"
            ),
            (scope,),
            list(dict.fromkeys(int(i) for i in ids)),
        )
        return sorted({int(r[0]) for r in rows})

    async def _delete(self, scope: str, ids: Sequence[int]) -> list[int]:
        """Delete inside the caller's transaction; returns the ids that were there."""
        gone: list[int] = []
        unique = list(dict.fromkeys(int(i) for i in ids))
        for start in range(0, len(unique), CHUNK):
            chunk = unique[start : start + CHUNK]
            rows = await self._all(
                f"SELECT id FROM memories WHERE scope = ? AND id IN ({placeholders(len(chunk))})",
                (scope, *chunk),
            )
            present = [r[0] for r in rows]
            if not present:
                continue
            marks = placeholders(len(present))
            # The transcript and recap it was encoded from said it too.
            await self._db.execute(
                "UPDATE conversations SET turns = '[]', recap = NULL WHERE id IN"
                f" (SELECT conversation_id FROM memories WHERE id IN ({marks}))",
                present,
            )
            await self._db.execute(f"DELETE FROM memories WHERE id IN ({marks})", present)
            await self._db.execute(f"DELETE FROM memories_fts WHERE rowid IN ({marks})", present)
            # What came next no longer carries the forgotten text as its context.
            await self._db.execute(
                f"UPDATE memories_fts SET context = '' WHERE rowid IN"
                f" (SELECT id FROM memories WHERE previous_id IN ({marks}))",
                present,
            )
            await self._db.execute(
                f"UPDATE memories SET previous_id = NULL WHERE previous_id IN ({marks})",
                present,
            )
            gone.extend(present)
        return gone

    async def lexical_search(
        self, scope: str, match: str, k: int, *, context_weight: float = 0.35, narrow: bool = True
    ) -> list[tuple[int, float]]:
        # bm25() is lower-is-better and weighs columns in order: the scope tag counts for
        # nothing, the memory before a little. The join on scope is the wall.
        weights = f"0.0, 1.0, {float(context_weight)!r}"
        # The best inside FTS5 first, then the join: joining first would look up every
        # matching row before ranking. Narrowed by the scope's tag, every row FTS5 ranks is
        # the scope's; unnarrowed (cheaper when the scope is most of the database), the best
        # 4k leave room for other scopes' rows, which the join then drops.
        where = f"scope_tag : {scope_tag(scope)} AND " if narrow else ""
        rows = await self._all(
            "SELECT r.id, r.score FROM ("
            f" SELECT rowid AS id, -bm25(memories_fts, {weights}) AS score FROM memories_fts"
            f" WHERE memories_fts MATCH ? ORDER BY bm25(memories_fts, {weights}) LIMIT ?"
            ") AS r JOIN memories AS m ON m.id = r.id WHERE m.scope = ?"
            " ORDER BY r.score DESC LIMIT ?",
            (f"{where}{{body context}} : ({match})", k if narrow else 4 * k, scope, k),
        )
        return [(r[0], float(r[1])) for r in rows]

    async def document_frequencies(self, scope: str, terms: Sequence[str]) -> dict[str, int]:
        """In how many of the scope's memories each term occurs: recall leaves out words too
        common to tell memories apart (counted per scope, so no other scope has a say)."""
        counts: dict[str, int] = {}
        tag = scope_tag(scope)
        for term in terms:
            quoted = '"' + term.replace('"', '""') + '"'
            row = await self._one(
                "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?",
                (f"scope_tag : {tag} AND body : {quoted}",),
            )
            counts[term] = int(row[0]) if row else 0
        return counts

    async def sizes(self, scope: str) -> tuple[int, int]:
        """(memories in the scope, memories in all scopes)."""
        row = await self._one(
            "SELECT (SELECT count(*) FROM memories WHERE scope = ?),"
            " (SELECT max(rowid) - min(rowid) + 1 FROM memories_fts)",
            (scope,),
        )
        return (int(row[0]), int(row[1] or 0)) if row else (0, 0)

    async def last_memory(self, scope: str) -> Memory | None:
        row = await self._one(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE scope = ? ORDER BY id DESC LIMIT 1",
            (scope,),
        )
        return None if row is None else memory_row(row)

    async def with_successors(self, scope: str, ids: Sequence[int]) -> list[Memory]:
        rows = await self._all_in(
            lambda marks: (
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE +scope = ?"
                f" AND (id IN ({marks}) OR previous_id IN ({marks}))"
            ),
            (scope,),
            list(dict.fromkeys(int(i) for i in ids)),
            lists=2,
        )
        return list({row[0]: memory_row(row) for row in rows}.values())

    async def links(self, scope: str, ids: Sequence[int]) -> list[MemoryLink]:
        rows = await self._all_in(
            lambda marks: (
                "SELECT id, previous_id, speaker FROM memories"
                f" WHERE +scope = ? AND id IN ({marks}) ORDER BY id"
            ),
            (scope,),
            sorted({int(i) for i in ids}),
        )
        return [MemoryLink(r[0], r[1], r[2]) for r in rows]

    async def scope_links(self, scope: str) -> LinkColumns:
        rows = await self._all(
            "SELECT id, coalesce(previous_id, 0), speaker FROM memories WHERE scope = ?"
            " ORDER BY id",
            (scope,),
        )
        return LinkColumns(
            np.fromiter((r[0] for r in rows), np.int64, len(rows)),
            np.fromiter((r[1] for r in rows), np.int64, len(rows)),
            [r[2] for r in rows],
        )

    async def search_documents(
        self, scope: str, ids: Sequence[int] | None = None
    ) -> list[tuple[int, int | None, str, str]]:
        columns = "SELECT m.id, m.previous_id, f.body, f.context FROM memories AS m"
        join = " JOIN memories_fts AS f ON f.rowid = m.id"
        if ids is None:
            rows = await self._all(f"{columns}{join} WHERE m.scope = ? ORDER BY m.id", (scope,))
        else:
            rows = await self._all_in(
                lambda marks: (
                    f"{columns}{join} WHERE +m.scope = ? AND m.id IN ({marks}) ORDER BY m.id"
                ),
                (scope,),
                sorted({int(i) for i in ids}),
            )
        return [(r[0], r[1], r[2] or "", r[3] or "") for r in rows]

    async def reinforce(
        self, scope: str, updates: Sequence[tuple[int, float]], now: datetime
    ) -> None:
        # A turn's own small write: in the group commit the turns' notes of contacts share.
        update = (
            "UPDATE memories SET recall_count = recall_count + 1, last_recalled_at = ?,"
            f" recent_recalls = {_recent_with('?')}, strength = ? WHERE scope = ? AND id = ?"
        )
        at = timestamp(now)
        await self._soon(
            [
                *(
                    (update, (at, at, strength, scope, memory_id))
                    for memory_id, strength in updates
                ),
                *((_LOG_RECALL, (scope, memory_id)) for memory_id, _ in updates),
            ]
        )

    async def _merge_recalls(self, scope: str, from_id: int, into_id: int) -> None:
        """Inside the caller's transaction: `into_id` takes over the recalls of `from_id`
        (history rows, count and recent times), when both are the scope's."""
        if from_id == into_id:
            return
        pair = await self._all(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE scope = ? AND id IN (?, ?)",
            (scope, from_id, into_id),
        )
        if len(pair) == 2:
            recent = recent_recalls_text(*(memory_row(r).recall_times for r in pair))
            await self._db.execute(
                "UPDATE memories SET recent_recalls = ? WHERE scope = ? AND id = ?",
                (recent, scope, into_id),
            )
        await self._db.execute(
            "UPDATE memories SET recall_count = recall_count + coalesce("
            "(SELECT recall_count FROM memories WHERE scope = ? AND id = ?), 0)"
            " WHERE scope = ? AND id = ?",
            (scope, from_id, scope, into_id),
        )
        await self._db.execute(
            "UPDATE recalls SET memory_id = ?"
            " WHERE memory_id IN (SELECT id FROM memories WHERE scope = ? AND id = ?)"
            " AND EXISTS (SELECT 1 FROM memories WHERE scope = ? AND id = ?)",
            (into_id, scope, from_id, scope, into_id),
        )

    async def recall_history(self, scope: str, memory_id: int) -> list[tuple[datetime, float]]:
        rows = await self._all(
            "SELECT r.at, r.strength FROM recalls r JOIN memories m ON m.id = r.memory_id"
            " WHERE m.scope = ? AND m.id = ? ORDER BY r.at, r.rowid",
            (scope, memory_id),
        )
        return [(moment(r[0]), float(r[1])) for r in rows]

    @serialised
    async def set_related(self, scope: str, memory_id: int, related: Sequence[int]) -> None:
        await self._db.execute(
            "UPDATE memories SET related = ? WHERE scope = ? AND id = ?",
            (json.dumps([int(r) for r in related]), scope, memory_id),
        )
        await self._db.commit()

    async def scopes(self) -> list[str]:
        rows = await self._all("SELECT DISTINCT scope FROM memories ORDER BY scope")
        return [r[0] for r in rows]

    @serialised
    async def wipe_memories(self, scope: str) -> int:
        rows = await self._all("SELECT id FROM memories WHERE scope = ?", (scope,))
        ids = [r[0] for r in rows]
        async with self._transaction():
            gone = await self._delete(scope, ids)
            for table in ("diary", "profiles", "pruned", "prune_days"):
                await self._db.execute(f"DELETE FROM {table} WHERE scope = ?", (scope,))
            await wipe_intentions(self._db, scope)
            await wipe_contact(self._db, scope)
        await self._scrub(words=bool(gone))
        return len(gone)

    @serialised
    async def commit_encoding(self, write: EncodingWrite) -> list[int] | None:
        at = timestamp(write.at)
        async with self._transaction():
            cur = await self._db.execute(
                "UPDATE conversations SET encoded_at = ?, recap = ?"
                " WHERE id = ? AND encoded_at IS NULL",
                (at, clean_text(write.recap), write.conversation_id),
            )
            if cur.rowcount != 1:
                return None
            ids: list[int] = []
            for memory in write.memories:
                ids.append(await self._insert(memory, ids[-1] if ids else None))
            for memory_id, memory, siblings in zip(
                ids, write.memories, write.sibling_links, strict=True
            ):
                if siblings:
                    related = [*memory.related, *(ids[i] for i in siblings)]
                    await self._db.execute(
                        "UPDATE memories SET related = ? WHERE id = ?",
                        (json.dumps(related), memory_id),
                    )
            await self._db.executemany(
                # A conversation encoded late never dates a recall before the memory's last
                # touch (its making or its last recall).
                "UPDATE memories SET strength = ?, importance = max(importance, ?),"
                " recall_count = recall_count + 1,"
                " last_recalled_at = max(?, coalesce(last_recalled_at, created_at)),"
                " recent_recalls ="
                f" {_recent_with('max(?, coalesce(last_recalled_at, created_at))')}"
                " WHERE scope = ? AND id = ?",
                [
                    (m.strength, m.importance, at, at, write.scope, m.memory_id)
                    for m in write.merges
                ],
            )
            await self._db.executemany(
                _LOG_RECALL, [(write.scope, m.memory_id) for m in write.merges]
            )
            if write.diary is not None:
                day, text = write.diary
                await self._db.execute(
                    "INSERT INTO diary (scope, day, text, conversations, updated_at)"
                    " VALUES (?, ?, ?, 1, ?) ON CONFLICT (scope, day) DO UPDATE"
                    " SET text = excluded.text, conversations = conversations + 1,"
                    " updated_at = excluded.updated_at",
                    (write.scope, day.isoformat(), clean_text(text), at),
                )
            await self._db.executemany(
                "INSERT INTO profiles (scope, user_id, name, text, updated_at, aliases)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (scope, user_id) DO UPDATE"
                " SET name = excluded.name, text = excluded.text,"
                " updated_at = excluded.updated_at, aliases = excluded.aliases",
                profile_values(write, at),
            )
            for intention in write.intentions:
                await insert_intention(self._db, intention)
        return ids

    @serialised
    async def prune(self, write: PruneWrite) -> list[int]:
        scope = write.scope
        async with self._transaction():
            going = {m.id for m, _ in write.forgotten}
            for twin, keep in sorted(write.merged.items()):
                if twin in going:
                    await self._merge_recalls(scope, twin, keep)
            gone = set(await self._delete(scope, [m.id for m, _ in write.forgotten]))
            await self._db.execute(_TRIM_RECALLS, (scope,))
            await self._db.executemany(
                "INSERT INTO pruned (scope, memory_id, category, importance, policy,"
                " reason, pruned_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                pruned_values(write, gone),
            )
            await self._db.execute(
                "INSERT INTO prune_days (scope, day) VALUES (?, ?)"
                " ON CONFLICT (scope) DO UPDATE SET day = excluded.day",
                (scope, write.day.isoformat()),
            )
        if gone:
            await self._scrub()
        return sorted(gone)
