"""What a memory is, and the operations the memory bank needs from a store.

The bank talks to storage only through `MemoryStore`, so recall and encoding hold no SQL and a
second backend (PostgreSQL, for several processes) can sit behind the same protocol. Every
operation names its scope, and an implementation must filter by it: a scope is a wall.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal, Protocol, get_args

import numpy as np
import numpy.typing as npt

__all__ = [
    "CATEGORIES",
    "KINDS",
    "ArchivedConversation",
    "BankStore",
    "Category",
    "DiaryEntry",
    "EncodingWrite",
    "IdDigest",
    "JournalStore",
    "Kind",
    "Lease",
    "Memory",
    "MemoryStore",
    "Merge",
    "NewMemory",
    "Profile",
    "PrunedMemory",
    "SessionRow",
    "SessionSave",
    "Vectors",
    "id_digest",
]

Kind = Literal["episodic", "fact", "explicit", "summary"]
Category = Literal["work_study", "social_emotional", "special", "personal_daily"]
KINDS: tuple[Kind, ...] = get_args(Kind)
CATEGORIES: tuple[Category, ...] = get_args(Category)

Vectors = npt.NDArray[np.float32]


@dataclass(slots=True, frozen=True)
class NewMemory:
    """A memory about to be written; the store gives it its id."""

    scope: str
    text: str
    speaker: str | None
    kind: Kind
    category: Category | None
    importance: int  # 1-3
    sentiment: float  # -1..1
    created_at: datetime
    strength: float  # days: how slowly it fades (the forgetting policy's S)
    related: tuple[int, ...] = ()
    conversation_id: int | None = None
    previous_id: int | None = None  # the memory stored just before, in the same moment
    # Who said what it records, by the platform's stable id (a name changes and collides);
    # None for what no one person said.
    speaker_id: str | None = None
    # What the full-text index holds for it and the memory before (prepared by memory.text),
    # and its embedding.
    search_text: str = ""
    search_context: str = ""
    embedding: Vectors | None = None
    embedder: str | None = None


@dataclass(slots=True, frozen=True)
class Memory:
    id: int
    scope: str
    text: str
    speaker: str | None
    kind: Kind
    category: Category | None
    importance: int
    sentiment: float
    created_at: datetime
    last_recalled_at: datetime | None
    recall_count: int
    strength: float
    related: tuple[int, ...]
    conversation_id: int | None
    previous_id: int | None = None
    speaker_id: str | None = None  # who said it, by stable id

    @property
    def last_touched(self) -> datetime:
        """When the forgetting clock last started: the last recall, else the creation."""
        return self.last_recalled_at or self.created_at


@dataclass(slots=True, frozen=True)
class DiaryEntry:
    """The persona's diary page for one day of one scope."""

    scope: str
    day: date
    text: str
    conversations: int  # how many conversations it covers
    updated_at: datetime


@dataclass(slots=True, frozen=True)
class Profile:
    """What the persona knows of one user, in one scope; bounded text."""

    scope: str
    user_id: str
    name: str
    text: str
    updated_at: datetime


@dataclass(slots=True, frozen=True)
class PrunedMemory:
    """A memory the daily prune let go, and why (not what it said: forgotten is gone)."""

    scope: str
    memory_id: int
    category: Category | None
    importance: int
    policy: str
    reason: str
    pruned_at: datetime


@dataclass(slots=True, frozen=True)
class Merge:
    """A new memory that repeated an existing one: the existing one is strengthened instead."""

    memory_id: int
    strength: float
    importance: int


@dataclass(slots=True, frozen=True)
class EncodingWrite:
    """Everything one encoded conversation changes, written in one transaction together with
    the conversation's encoded mark: a crash leaves all of it or none, so a conversation is
    encoded exactly once."""

    conversation_id: int
    scope: str
    at: datetime
    memories: Sequence[NewMemory]
    # Per new memory, the positions of earlier new memories it is related to (their ids are
    # only known once written). Each new memory's previous is the one before it in the batch.
    sibling_links: Sequence[Sequence[int]]
    merges: Sequence[Merge]
    diary: tuple[date, str] | None
    profiles: Sequence[tuple[str, str, str]]  # (user id, name, text)
    recap: str


@dataclass(slots=True, frozen=True)
class IdDigest:
    """Which ids a scope's index must hold: their count and an order-free checksum."""

    count: int
    checksum: int


def id_digest(ids: Iterable[int]) -> IdDigest:
    """The digest of a set of ids; SQL implementations compute the same with
    sum((id * 2654435761) % 4294967296), so a store and an index can be compared cheaply."""
    array = np.fromiter(ids, dtype=np.int64)
    checksum = int(((array * 2654435761) % 4294967296).sum()) if array.size else 0
    return IdDigest(int(array.size), checksum)


# (persona, scope, snapshot, updated_at): a session to save.
SessionSave = tuple[str, str, dict[str, Any], datetime]


@dataclass(slots=True, frozen=True)
class SessionRow:
    persona: str
    scope: str
    snapshot: dict[str, Any]
    updated_at: datetime
    damaged: bool = False  # the stored text was not a JSON object; `snapshot` is then {}


@dataclass(slots=True, frozen=True)
class Lease:
    """A store shared by several processes answering "may this process take the
    conversation's turn now?" (PgStore.take_conversation)."""

    held: bool  # False: another live process is taking a turn
    newer: SessionRow | None = None  # the snapshot another process wrote after this one's last
    gone: bool = False  # the session has no snapshot now (wiped elsewhere, or never saved)
    # Messages (message id, turn) a process that died kept while it waited for the
    # conversation (PgStore.keep_waiting), oldest first: theirs to restore, as said.
    orphans: tuple[tuple[str, dict[str, Any]], ...] = ()


@dataclass(slots=True, frozen=True)
class ArchivedConversation:
    id: int
    persona: str
    scope: str
    started_at: datetime
    ended_at: datetime
    reason: str  # "idle", "end", ...
    turns: list[dict[str, Any]]
    encoded_at: datetime | None
    attempts: int = 0  # failed encodings so far
    recap: str = ""  # set when encoded


class MemoryStore(Protocol):
    """The memory bank's storage. Scope-filtered everywhere; ids are unique across scopes."""

    async def add_memory(self, memory: NewMemory) -> int: ...

    async def get_memories(self, scope: str, ids: Sequence[int]) -> list[Memory]:
        """Those of `ids` that exist in `scope` (others are silently absent)."""
        ...

    async def list_memories(
        self, scope: str, *, limit: int | None = None, newest_first: bool = True
    ) -> list[Memory]: ...

    async def count_memories(self, scope: str) -> int: ...

    async def find_memory(self, scope: str, text: str, kind: Kind) -> int | None:
        """The id of the scope's oldest memory of this kind with exactly this text, if any."""
        ...

    async def delete_memories(self, scope: str, ids: Sequence[int]) -> list[int]:
        """Delete from the memories and the full-text index; returns the ids that went."""
        ...

    async def lexical_search(
        self, scope: str, match: str, k: int, *, context_weight: float = 0.35, narrow: bool = True
    ) -> list[tuple[int, float]]:
        """Full-text search of the memories' text, and with `context_weight` of the memory
        before each, for an FTS5-syntax query: (id, BM25 score, higher is better). `narrow`:
        the scope is a small part of the store (a hint; the result is the scope's either way)."""
        ...

    async def document_frequencies(self, scope: str, terms: Sequence[str]) -> dict[str, int]:
        """In how many of the scope's memories each term occurs."""
        ...

    async def sizes(self, scope: str) -> tuple[int, int]:
        """(memories in the scope, about how many in all scopes: a hint, it may overcount)."""
        ...

    async def last_memory(self, scope: str) -> Memory | None: ...

    async def with_successors(self, scope: str, ids: Sequence[int]) -> list[Memory]:
        """The memories `ids` and the ones stored right after each of them."""
        ...

    async def reinforce(
        self, scope: str, updates: Sequence[tuple[int, float]], now: datetime
    ) -> None:
        """Each (id, new strength): recall_count + 1, last_recalled_at = now; logged in the
        memory's recall history."""
        ...

    async def recall_history(self, scope: str, memory_id: int) -> list[tuple[datetime, float]]:
        """The memory's recalls, oldest first, with the strength each left."""
        ...

    async def wipe_memories(self, scope: str) -> int: ...

    async def commit_encoding(self, write: EncodingWrite) -> list[int] | None:
        """Write what encoding a conversation made (memories, merges, diary, profiles, recap)
        in one transaction; the new memories' ids, or None if it was encoded already."""
        ...

    async def prune(
        self,
        scope: str,
        day: date,
        forgotten: Sequence[tuple[Memory, str]],
        policy: str,
        at: datetime,
    ) -> list[int]:
        """Delete the forgotten memories (each with the reason), report them and note the
        scope pruned on `day`, at once; returns the ids deleted."""
        ...

    async def listen(self, changed: Callable[[str], None]) -> None:
        """Call `changed(scope)` when another process changes a scope's memories."""
        ...

    async def set_related(self, scope: str, memory_id: int, related: Sequence[int]) -> None: ...

    async def scopes(self) -> list[str]: ...

    # Embeddings: kept in the memories table, tagged with the embedder that made them.

    async def embeddings(
        self, scope: str, embedder: str
    ) -> tuple[npt.NDArray[np.int64], Vectors | None]:
        """Ids and vectors of the scope's memories embedded by `embedder` (None if none)."""
        ...

    async def unembedded(self, scope: str, embedder: str) -> list[Memory]:
        """The scope's memories with no embedding from `embedder`, oldest first."""
        ...

    async def set_embeddings(
        self, scope: str, embedder: str, items: Sequence[tuple[int, Vectors]]
    ) -> None: ...

    async def embedding_digest(self, scope: str, embedder: str) -> IdDigest: ...

    # The cache of embeddings by (embedder, text hash): the same text is never paid for twice.

    async def cached_embeddings(
        self, embedder: str, keys: Sequence[bytes]
    ) -> dict[bytes, bytes]: ...

    async def cache_embeddings(
        self, embedder: str, items: Sequence[tuple[bytes, bytes]]
    ) -> None: ...

    async def forget_cached(self, keys: Sequence[bytes]) -> None:
        """Drop cached embeddings by key, whatever the embedder (their text was forgotten)."""
        ...


class JournalStore(Protocol):
    """What encoding writes beside memories (diary pages, profiles) and the prune's records."""

    async def diary_entry(self, scope: str, day: date) -> DiaryEntry | None: ...

    async def diary_entries(
        self, scope: str, *, before: date | None = None, limit: int = 10
    ) -> list[DiaryEntry]: ...

    async def profiles(
        self, scope: str, user_ids: Sequence[str] | None = None
    ) -> list[Profile]: ...

    async def last_prune(self, scope: str) -> date | None: ...

    async def pruned_since(
        self, since: datetime, *, scope: str | None = None, limit: int = 1000
    ) -> list[PrunedMemory]: ...


class BankStore(MemoryStore, JournalStore, Protocol):
    """What the memory bank and its encoder keep: memories, diary pages and profiles."""
