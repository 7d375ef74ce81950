"""What a memory is, and the other records the stores keep and return (the operations on them
are the protocols of memory.storage)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal, get_args

import numpy as np
import numpy.typing as npt

__all__ = [
    "CATEGORIES",
    "INTENTION_KINDS",
    "KINDS",
    "RECENT_RECALLS",
    "ArchiveWrite",
    "ArchivedConversation",
    "Category",
    "Contact",
    "DiaryEntry",
    "EncodingWrite",
    "IdDigest",
    "Intention",
    "IntentionKind",
    "IntentionState",
    "Lease",
    "LinkColumns",
    "Member",
    "Memory",
    "MemoryKind",
    "MemoryLink",
    "MemoryNotice",
    "Merge",
    "NewIntention",
    "NewMemory",
    "NoticeKind",
    "Outreach",
    "OutreachState",
    "Profile",
    "PruneWrite",
    "PrunedMemory",
    "SessionRow",
    "SessionSave",
    "Vectors",
    "id_digest",
]

MemoryKind = Literal["episodic", "fact", "explicit", "summary"]
Category = Literal["work_study", "social_emotional", "special", "personal_daily"]
KINDS: tuple[MemoryKind, ...] = get_args(MemoryKind)
# What a persona means to bring up later: a follow-up on something the user said is coming
# ("my exam is on Tuesday"), a reminder they asked for, a special day of theirs (yearly).
IntentionKind = Literal["follow_up", "reminder", "special_day"]
INTENTION_KINDS: tuple[IntentionKind, ...] = get_args(IntentionKind)
# pending: waits for its due time; done: brought up (in a message the persona wrote first, or
# in a conversation the user started); cancelled: by the user; missed: its window passed
# with no chance to bring it up.
IntentionState = Literal["pending", "done", "cancelled", "missed"]
# A message the persona writes first, in the exactly-once ledger: claimed (a process is
# writing it), sending (handed to the platform: should the process die now, whether it went
# is unknown, and it is never sent again), sent, refused (the platform would not deliver:
# blocked, closed DMs), dropped (given up before sending: the user wrote first, a gate closed).
OutreachState = Literal["claimed", "sending", "sent", "refused", "dropped"]
# How another process changed some of a scope's memories: added, deleted, embedded again,
# changed in place (reinforced, merged into, related); or changed in any of these ways.
NoticeKind = Literal["added", "deleted", "embedded", "touched", "changed"]
CATEGORIES: tuple[Category, ...] = get_args(Category)

Vectors = npt.NDArray[np.float32]

# How many of a memory's latest recall times the store keeps on the memory itself (and, once a
# day's prune has cut it, in the recalls log, with the strength each left): enough for a
# forgetting policy to sum their traces exactly when ranking or pruning, without a query per
# memory; older ones are the policy's to fold into the strength.
RECENT_RECALLS = 8


@dataclass(slots=True, frozen=True)
class MemoryLink:
    """What ranking needs of a memory before its text: who said it and the memory stored
    just before it (recall's contiguity and speaker terms). Recall keeps these in memory."""

    id: int
    previous_id: int | None
    speaker: str | None


@dataclass(slots=True, frozen=True)
class LinkColumns:
    """A whole scope's links as columns, in the same order: ids, each one's previous id (0:
    none) and speaker. Read so rather than as a MemoryLink each: a large scope's are read at
    its first recall, and at 100k memories the objects cost more than the read."""

    ids: npt.NDArray[np.int64]
    previous: npt.NDArray[np.int64]
    speakers: Sequence[str | None]


@dataclass(slots=True, frozen=True)
class MemoryNotice:
    """Another process's change to a scope's memories, as its notification told it: the
    memories `ids` were `kind` (`changed`: never with ids). Without ids, any of the scope's
    memories may have changed so (too many to name, or a change not followed memory by
    memory). Ids only: nothing of what the memories say."""

    scope: str
    kind: NoticeKind
    ids: tuple[int, ...] | None = None


@dataclass(slots=True, frozen=True)
class NewMemory:
    """A memory about to be written; the store gives it its id."""

    scope: str
    text: str
    speaker: str | None
    kind: MemoryKind
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
    kind: MemoryKind
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
    # When it was last recalled, up to RECENT_RECALLS times, oldest first (a merged twin's
    # recalls among them); the last is last_recalled_at.
    recent_recalls: tuple[datetime, ...] = ()

    @property
    def last_touched(self) -> datetime:
        """When the forgetting clock last started: the last recall, else the creation."""
        return self.last_recalled_at or self.created_at

    @property
    def recall_times(self) -> tuple[datetime, ...]:
        """The latest recalls' times, oldest first: `recent_recalls`, or the last recall alone
        for a memory written without them."""
        if self.recent_recalls:
            return self.recent_recalls
        if self.last_recalled_at is not None and self.recall_count > 0:
            return (self.last_recalled_at,)
        return ()


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
    """What the persona knows of one user, in one scope; bounded text. `name` is the display
    name they had when last encoded; `aliases` the other names they are known by there (earlier
    display names, nicknames they asked for), most recent first."""

    scope: str
    user_id: str
    name: str
    text: str
    updated_at: datetime
    aliases: tuple[str, ...] = ()


@dataclass(slots=True, frozen=True)
class Member:
    """One person of a scope by the names the persona knows them by: a profile without its
    text, what recall reads on every turn to tell whom a message speaks of."""

    user_id: str
    name: str
    aliases: tuple[str, ...] = ()


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
    # Per user id of `profiles`, the other names they are known by (Profile.aliases).
    aliases: Mapping[str, Sequence[str]] = field(default_factory=dict)
    # What the users said is coming, to follow up once it is due (and their special days).
    intentions: Sequence[NewIntention] = ()


@dataclass(slots=True, frozen=True)
class PruneWrite:
    """Everything one prune of a scope changes, written in one transaction: the forgotten
    memories deleted, a report of each kept (which, and why: not what it said) under the name
    of the forgetting `policy`, the recall log cut to each memory's last RECENT_RECALLS, and
    the scope noted pruned on `day`."""

    scope: str
    day: date
    forgotten: Sequence[tuple[Memory, str]]  # (memory, why)
    policy: str
    at: datetime
    # Forgotten twin -> its survivor, which takes over the twin's recalls (their history rows,
    # at their own times, and their count) first; both must be the scope's, else nothing moves.
    merged: Mapping[int, int] = field(default_factory=dict)


@dataclass(slots=True, frozen=True)
class NewIntention:
    """Something coming that the persona means to bring up once it is due. `due_at` is the
    earliest moment (the event's end: "how did it go?" is asked after it), `until` the last
    (later it is missed: a follow-up weeks late is no friend's). Times are timezone-aware."""

    scope: str  # the conversation's scope it was said in (a wall, like a memory's)
    user_id: str  # whom it is for, by stable id
    kind: IntentionKind
    what: str  # the event in a few words: "her exam", 面试
    ask: str  # what to say then, as the persona would put it: "ask how the exam went"
    due_at: datetime
    until: datetime
    created_at: datetime
    conversation_id: int | None = None
    yearly: bool = False  # a special day: once done, it is due again a year later
    # Whose own message asked for it or told of it, by stable id; None: its user's. Only theirs is
    # kept (memory.encoding.intentions): one member's words never become another's reminder.
    said_by: str | None = None


@dataclass(slots=True, frozen=True)
class Intention:
    id: int
    scope: str
    user_id: str
    kind: IntentionKind
    what: str
    ask: str
    due_at: datetime
    until: datetime
    created_at: datetime
    state: IntentionState
    conversation_id: int | None = None
    yearly: bool = False
    done_at: datetime | None = None
    # As NewIntention's; "" when not known (kept before it was recorded, in a group).
    said_by: str | None = None

    @property
    def own(self) -> bool:
        """Its user's own words asked for it or told of it: only then is it brought up to
        them or written to them."""
        return self.said_by is None or self.said_by == self.user_id

    @property
    def solicited(self) -> bool:
        """A reminder its user asked for themself: the only message written first that may
        pass their night hours and /quiet (they chose the time)."""
        return self.kind == "reminder" and self.own


@dataclass(slots=True, frozen=True)
class Contact:
    """What a persona knows of reaching one person first on one platform (never what they
    said): whether they ever talked privately, when they last wrote and were last answered,
    the hours they talk at (UTC, 24 counts: their waking day, learned), their time zone if they
    set one, whether they asked for quiet, when the platform last refused a message, and
    whether they want replies spoken aloud."""

    persona: str
    platform: str
    user_id: str
    private: bool  # they have talked to the bot in a private chat (a platform's condition)
    last_heard: datetime | None  # their latest message, anywhere the persona hears them
    last_answered: datetime | None  # the persona's latest reply to them
    hours: tuple[int, ...] = (0,) * 24  # how many of their messages fell in each UTC hour
    timezone: str | None = None  # an IANA name they set (/timezone), else learned from hours
    quiet: bool = False  # they asked the persona not to write first
    refused_at: datetime | None = None  # the platform refused a message the persona wrote first
    # Their replies spoken aloud too (/voice on), or never (/voice off); None: as the persona's
    # [voice] speak says.
    voice: bool | None = None

    @property
    def unanswered(self) -> bool:
        """Their latest message has had no reply yet."""
        if self.last_heard is None:
            return False
        return self.last_answered is None or self.last_answered < self.last_heard


@dataclass(slots=True, frozen=True)
class Outreach:
    """One message a persona writes first, in the exactly-once ledger. `key` names what it is
    about, unique per person: ``intention:<id>``, ``special:<id>:<year>``, ``checkin:<iso time
    of the last message heard>``; a second claim of one key fails, in any process."""

    persona: str
    platform: str
    user_id: str
    key: str
    state: OutreachState
    at: datetime  # when it last changed state
    by: str = ""  # the process that claimed it


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


@dataclass(slots=True, frozen=True)
class SessionSave:
    """A session to save: its snapshot, whose "turns" are numbered from its "first" (0 when
    absent), the first "rows" of them (0 when absent) kept as rows of their own, the rest in
    the session's row; of those rows the store holds the ones numbered below `stored`
    already, so they are not written again."""

    persona: str
    scope: str
    snapshot: dict[str, Any]
    updated_at: datetime
    stored: int = 0


@dataclass(slots=True, frozen=True)
class ArchiveWrite:
    """A closed conversation of a persona and scope to archive, and the snapshot its session
    goes on with, written together."""

    persona: str
    scope: str
    started_at: datetime
    ended_at: datetime
    reason: str
    turns: list[dict[str, Any]]
    snapshot: dict[str, Any]


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
