"""How both stores turn records into rows and rows into records: the columns they share,
timestamps as seconds since the epoch, JSON text that SQLite and PostgreSQL both take, vectors
as float32 bytes."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Collection, Sequence
from datetime import UTC, date, datetime
from typing import Any

import numpy as np

from memory.records import (
    CATEGORIES,
    KINDS,
    RECENT_RECALLS,
    ArchivedConversation,
    Category,
    Contact,
    DiaryEntry,
    EncodingWrite,
    Intention,
    IntentionState,
    Member,
    Memory,
    MemoryKind,
    NewIntention,
    NewMemory,
    Outreach,
    Profile,
    PruneWrite,
    SessionRow,
    SessionSave,
    Vectors,
)
from memory.scopes import Scope

__all__ = [
    "CONTACT_COLUMNS",
    "CONVERSATION_COLUMNS",
    "INLINE_ROWS",
    "INLINE_SNAPSHOTS",
    "INTENTION_COLUMNS",
    "LIST_SLICE",
    "MEMORY_COLUMNS",
    "NO_HOURS",
    "OUTREACH_COLUMNS",
    "PROFILE_COLUMNS",
    "clean_text",
    "contact_row",
    "conversation_row",
    "diary_row",
    "encode_sessions",
    "first_hours",
    "intention_row",
    "intention_values",
    "json_text",
    "member_row",
    "memory_row",
    "memory_rows",
    "memory_values",
    "moment",
    "outreach_row",
    "private_chat",
    "profile_row",
    "profile_values",
    "pruned_values",
    "recall_times",
    "recent_recalls_text",
    "session_parts",
    "session_row",
    "timestamp",
    "vector_bytes",
    "year_on",
]

# A conversation's columns, in the order conversation_row reads them.
CONVERSATION_COLUMNS = (
    "id, persona, scope, started_at, ended_at, reason, turns, encoded_at, attempts, recap"
)

_KINDS: dict[str, MemoryKind] = {kind: kind for kind in KINDS}  # each one's one string
_CATEGORIES: dict[str | None, Category | None] = {c: c for c in CATEGORIES}

# A memory's columns, in the order memory_row reads them.
MEMORY_COLUMNS = (
    "id, scope, text, speaker, kind, category, importance, sentiment, created_at,"
    " last_recalled_at, recall_count, strength, related, conversation_id, previous_id,"
    " speaker_id, recent_recalls"
)


INLINE_SNAPSHOTS = 4  # snapshots encoded on the event loop: cheaper than a trip to a thread
# Rows made into memories on the event loop; a large scope's are made in a thread,
# where the loop goes on between slices (the daily prune reads whole scopes).
INLINE_ROWS = 1_024
LIST_SLICE = 4_096  # rows read at a time by a listing of a whole scope


# A save's rows, a session each: persona, scope, its head as JSON text (its snapshot but the
# turns with rows of their own), the time, and the numbers and JSON texts of the turns the
# store does not hold yet.
SessionValues = list[tuple[str, str, str, float, list[int], list[str]]]


async def encode_sessions(saves: Sequence[SessionSave]) -> SessionValues:
    """The rows of sessions to save, their JSON written; many are encoded off the loop."""
    if len(saves) <= INLINE_SNAPSHOTS:
        return _session_values(saves)
    return await asyncio.to_thread(_session_values, saves)


def _session_values(saves: Sequence[SessionSave]) -> SessionValues:
    values: SessionValues = []
    for save in saves:
        head, new = session_parts(save.snapshot, save.stored)
        values.append(
            (
                save.persona,
                save.scope,
                json_text(head),
                timestamp(save.updated_at),
                [seq for seq, _ in new],
                [json_text(turn) for _, turn in new],
            )
        )
    return values


def session_parts(
    snapshot: dict[str, Any], stored: int = 0
) -> tuple[dict[str, Any], list[tuple[int, Any]]]:
    """A snapshot as the store keeps it: its head, the session's own row (all but the turns
    with rows of their own: its first "rows" turns, numbered from its "first"), and those
    turns by number, from `stored` on."""
    turns = snapshot.get("turns", [])
    first = int(snapshot.get("first", 0))
    own = max(0, min(int(snapshot.get("rows", 0)), len(turns)))
    head = {**snapshot, "turns": turns[own:], "first": first, "rows": own}
    return head, [(first + n, turns[n]) for n in range(own) if first + n >= stored]


def json_text(value: Any) -> str:
    """JSON text SQLite can store: a lone surrogate (from undecodable input) becomes "?"
    instead of failing the whole write."""
    text = json.dumps(value, ensure_ascii=False)
    return text.encode("utf-8", "replace").decode("utf-8") if not text.isascii() else text


def clean_text(text: str) -> str:
    """Text SQLite can store: lone surrogates (from undecodable input) become "?"."""
    return text if text.isascii() else text.encode("utf-8", "replace").decode("utf-8")


def session_row(row: Any, turns: Sequence[tuple[int, str]] = ()) -> SessionRow:
    """A session from its row (persona, scope, head, time) and its turns' rows (number, JSON
    text): those its head counts as its own rows put back before the turns it holds."""
    try:
        snapshot = json.loads(row[2])
        if isinstance(snapshot, dict) and snapshot.get("rows"):
            first = int(snapshot["first"])
            end = first + int(snapshot["rows"])
            own = [json.loads(text) for seq, text in turns if first <= seq < end]
            snapshot["turns"] = own + list(snapshot.get("turns", []))
    except (KeyError, TypeError, ValueError):
        snapshot = None
    if not isinstance(snapshot, dict):
        return SessionRow(row[0], row[1], {}, moment(row[3]), damaged=True)
    return SessionRow(row[0], row[1], snapshot, moment(row[3]))


def memory_values(memory: NewMemory, previous_id: int | None) -> tuple[Any, ...]:
    """A new memory's columns, scope to embedder, as both stores insert them
    (`previous_id` overrides the memory's)."""
    return (
        memory.scope,
        clean_text(memory.text),
        None if memory.speaker is None else clean_text(memory.speaker),
        memory.kind,
        memory.category,
        memory.importance,
        memory.sentiment,
        timestamp(memory.created_at),
        memory.strength,
        json.dumps(list(memory.related)),
        memory.conversation_id,
        previous_id if previous_id is not None else memory.previous_id,
        None if memory.embedding is None else vector_bytes(memory.embedding),
        memory.embedder,
        memory.speaker_id,
    )


def memory_row(row: Any) -> Memory:
    # A scope's rows repeat a few strings (the scope, the speakers and their ids, the kind and
    # the category): each is shared, not copied a row, so rows held by the thousand (a prune's
    # listing, a large scope's copy) take a third less memory.
    return Memory(
        id=row[0],
        scope=sys.intern(row[1]),
        text=row[2],
        speaker=_shared(row[3]),
        kind=_KINDS.get(row[4], row[4]),
        category=_CATEGORIES.get(row[5], row[5]),
        importance=row[6],
        sentiment=row[7],
        created_at=moment(row[8]),
        last_recalled_at=None if row[9] is None else moment(row[9]),
        recall_count=row[10],
        strength=row[11],
        related=() if row[12] == "[]" else tuple(json.loads(row[12])),
        conversation_id=row[13],
        previous_id=row[14],
        speaker_id=_shared(row[15]),
        recent_recalls=recall_times(row[16]),
    )


def _shared(text: str | None) -> str | None:
    return None if text is None else sys.intern(text)


def recall_times(text: str) -> tuple[datetime, ...]:
    """A memory's recent_recalls column (JSON seconds since the epoch) as times."""
    return () if text == "[]" else tuple(moment(float(t)) for t in json.loads(text))


def recent_recalls_text(*lists: Sequence[datetime]) -> str:
    """The recent_recalls column of a memory that has the recalls of all `lists`: the latest
    RECENT_RECALLS of them, oldest first (a merge's survivor takes its twin's)."""
    merged = sorted(timestamp(t) for times in lists for t in times)
    return json.dumps(merged[len(merged) - min(len(merged), RECENT_RECALLS) :])


def conversation_row(row: Any) -> ArchivedConversation:
    return ArchivedConversation(
        id=row[0],
        persona=row[1],
        scope=row[2],
        started_at=moment(row[3]),
        ended_at=moment(row[4]),
        reason=row[5],
        turns=json.loads(row[6]),
        encoded_at=None if row[7] is None else moment(row[7]),
        attempts=row[8],
        recap=row[9] or "",
    )


def diary_row(row: Any) -> DiaryEntry:
    return DiaryEntry(row[0], date.fromisoformat(row[1]), row[2], row[3], moment(row[4]))


# A profile's columns, in the order profile_row reads them.
PROFILE_COLUMNS = "scope, user_id, name, text, updated_at, aliases"


def profile_row(row: Any) -> Profile:
    member = member_row((row[1], row[2], row[5]))
    return Profile(row[0], row[1], row[2], row[3], moment(row[4]), member.aliases)


def member_row(row: Any) -> Member:
    """A Member from (user_id, name, aliases)."""
    aliases = row[2]  # written without an empty line: see profile_values
    return Member(row[0], row[1], tuple(aliases.split("\n")) if aliases else ())


def _one_line(name: str) -> str:
    return " ".join(clean_text(name).split())


def pruned_values(write: PruneWrite, gone: Collection[int]) -> list[tuple[Any, ...]]:
    """The reports a prune keeps of the memories it deleted (`gone`)."""
    at = timestamp(write.at)
    return [
        (write.scope, m.id, m.category, m.importance, write.policy, reason, at)
        for m, reason in write.forgotten
        if m.id in gone
    ]


def profile_values(write: EncodingWrite, at: Any) -> list[tuple[Any, ...]]:
    """The profile rows an encoding writes; aliases one a line (names are kept on one line)."""
    return [
        (
            write.scope,
            user_id,
            clean_text(name),
            clean_text(text),
            at,
            "\n".join(filter(None, (_one_line(a) for a in write.aliases.get(user_id, ())))),
        )
        for user_id, name, text in write.profiles
    ]


# An intention's columns, in the order intention_row reads them.
INTENTION_COLUMNS = (
    "id, scope, user_id, kind, what, ask, due_at, until, created_at, state, conversation_id,"
    " yearly, done_at, said_by"
)


def intention_values(intention: NewIntention) -> tuple[Any, ...]:
    """A new intention's columns: scope, persona (the scope's), user_id, kind, what, ask,
    due_at, until, created_at, conversation_id, yearly, said_by (its user when None: the
    row always names whose words it came from). ValueError if the scope is not one."""
    return (
        intention.scope,
        Scope.parse(intention.scope).persona,
        intention.user_id,
        intention.kind,
        clean_text(intention.what),
        clean_text(intention.ask),
        timestamp(intention.due_at),
        timestamp(intention.until),
        timestamp(intention.created_at),
        intention.conversation_id,
        int(intention.yearly),
        intention.user_id if intention.said_by is None else intention.said_by,
    )


def intention_row(row: Any) -> Intention:
    return Intention(
        id=row[0],
        scope=row[1],
        user_id=row[2],
        kind=row[3],
        what=row[4],
        ask=row[5],
        due_at=moment(row[6]),
        until=moment(row[7]),
        created_at=moment(row[8]),
        state=row[9],
        conversation_id=row[10],
        yearly=bool(row[11]),
        done_at=None if row[12] is None else moment(row[12]),
        said_by=row[13],
    )


def year_on(
    intention: Intention, state: IntentionState, at: datetime
) -> tuple[float, float, float | None]:
    """The row's due_at, until and done_at when a yearly intention made `state` (done or
    missed) at `at` is pending again instead: due and until a year on, done_at when it was last
    done."""
    done = at if state == "done" else intention.done_at
    return (
        timestamp(_a_year_on(intention.due_at)),
        timestamp(_a_year_on(intention.until)),
        None if done is None else timestamp(done),
    )


def _a_year_on(at: datetime) -> datetime:
    """The same moment a year later (29 February: the 28th)."""
    try:
        return at.replace(year=at.year + 1)
    except ValueError:
        return at.replace(year=at.year + 1, day=28)


# A contact's columns, in the order contact_row reads them.
CONTACT_COLUMNS = (
    "persona, platform, user_id, private, last_heard, last_answered, hours, timezone, quiet,"
    " refused_at, voice"
)


def contact_row(row: Any) -> Contact:
    return Contact(
        persona=row[0],
        platform=row[1],
        user_id=row[2],
        private=bool(row[3]),
        last_heard=None if row[4] is None else moment(row[4]),
        last_answered=None if row[5] is None else moment(row[5]),
        hours=tuple(int(n) for n in json.loads(row[6])),
        timezone=row[7],
        quiet=bool(row[8]),
        refused_at=None if row[9] is None else moment(row[9]),
        voice=None if row[10] is None else bool(row[10]),
    )


# The `hours` column of a contact not heard from yet.
NO_HOURS = "[" + ",".join("0" * 24) + "]"


def first_hours(at: datetime) -> str:
    """A new contact's `hours` column: one message, in `at`'s UTC hour."""
    hours = [0] * 24
    hours[at.astimezone(UTC).hour] = 1
    return json.dumps(hours, separators=(",", ":"))


OUTREACH_COLUMNS = 'persona, platform, user_id, key, state, at, "by"'


def outreach_row(row: Any) -> Outreach:
    return Outreach(row[0], row[1], row[2], row[3], row[4], moment(row[5]), row[6])


def private_chat(scope: str) -> tuple[str, str, str] | None:
    """(persona, platform, user id) when `scope` is a private chat's (its place written
    `platform:dm:user id`, as bot.conversation.sessions.scope_key makes it), else None."""
    persona, _, place = scope.partition("/")
    platform, dm, user_id = [*place.split(":", 2), "", ""][:3]
    return (persona, platform, user_id) if dm == "dm" and platform and user_id else None


def vector_bytes(vector: Vectors) -> bytes:
    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


async def memory_rows(rows: Sequence[Any]) -> list[Memory]:
    """The memories of rows of MEMORY_COLUMNS; many are made off the event loop."""
    if len(rows) <= INLINE_ROWS:
        return [memory_row(r) for r in rows]
    return await asyncio.to_thread(lambda: [memory_row(r) for r in rows])


def timestamp(at: datetime) -> float:
    return at.timestamp()


def moment(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC)
