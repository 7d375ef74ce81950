"""The narrow protocols the parts of Kizuna see the store through, by what each keeps.

The memory bank sees its memories (`MemoryStore`) with the diary, profiles and prune reports
(`JournalStore`, together `BankStore`), so recall and encoding hold no SQL; sessions see
`SessionStore`, the encoding of closed conversations `ArchiveStore`, channel bindings and DM
sharing `RoomStore`, what personas mean to bring up later `IntentionStore`, reaching people
first `ContactStore`, the work several processes share `Coordination`, and a store several
processes share also `LeaseStore`. `Storage` is all of them but the leases. Every operation on
memories names its scope, and an implementation must filter by it: a scope is a wall.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Collection, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import date, datetime
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from memory.records import (
    ArchivedConversation,
    ArchiveWrite,
    Contact,
    DiaryEntry,
    EncodingWrite,
    IdDigest,
    Intention,
    IntentionState,
    Lease,
    LinkColumns,
    Member,
    Memory,
    MemoryKind,
    MemoryLink,
    MemoryNotice,
    NewIntention,
    NewMemory,
    Outreach,
    OutreachState,
    Profile,
    PrunedMemory,
    PruneWrite,
    SessionRow,
    SessionSave,
    Vectors,
)


class MemoryStore(Protocol):
    """The memory bank's storage. Scope-filtered everywhere; ids are unique across scopes."""

    async def add_memory(self, memory: NewMemory) -> int: ...

    async def get_memories(self, scope: str, ids: Sequence[int]) -> list[Memory]:
        """Those of `ids` that exist in `scope` (others are silently absent)."""
        ...

    async def list_memories(
        self, scope: str, *, limit: int | None = None, newest_first: bool = True
    ) -> list[Memory]: ...

    async def memories_between(
        self, scope: str, start: datetime, end: datetime, *, limit: int
    ) -> list[Memory]:
        """The scope's memories made in [start, end), newest first, at most `limit`."""
        ...

    async def count_memories(self, scope: str) -> int: ...

    async def find_memory(self, scope: str, text: str, kind: MemoryKind) -> int | None:
        """The id of the scope's oldest memory of this kind with exactly this text, if any."""
        ...

    async def delete_memories(self, scope: str, ids: Sequence[int]) -> list[int]:
        """Delete from the memories and the full-text index, empty the transcripts and recaps
        they were made from and delete the scope's intentions made from those conversations;
        returns the ids that went."""
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

    async def last_memory(self, scope: str) -> Memory | None:
        """The scope's most recently stored memory."""
        ...

    async def with_successors(self, scope: str, ids: Sequence[int]) -> list[Memory]:
        """The memories `ids` and those stored right after them (whose previous_id is one of them),
        in one read."""
        ...

    async def links(self, scope: str, ids: Sequence[int]) -> list[MemoryLink]:
        """The links (previous memory, speaker) of the scope's memories `ids` (those that
        exist), by id."""
        ...

    async def scope_links(self, scope: str) -> LinkColumns:
        """The links of all the scope's memories, as columns."""
        ...

    async def search_documents(
        self, scope: str, ids: Sequence[int] | None = None
    ) -> list[tuple[int, int | None, str, str]]:
        """What full-text search indexes of the scope's memories `ids` (those that exist), or
        of all of them when `ids` is None, by id: (id, previous id, the memory's own words,
        the words of the memory before it), as NewMemory's search_text and search_context."""
        ...

    async def reinforce(
        self, scope: str, updates: Sequence[tuple[int, float]], now: datetime
    ) -> None:
        """Each (id, new strength): recall_count + 1, last_recalled_at = now; logged in the
        memory's recall history."""
        ...

    async def recall_history(self, scope: str, memory_id: int) -> list[tuple[datetime, float]]:
        """When the memory was recalled (or merged with a repeat), oldest first, with the strength
        each left: the last RECENT_RECALLS of them once the daily prune has run (older ones are
        in its recall count), more since; empty for a memory outside the scope."""
        ...

    async def wipe_memories(self, scope: str) -> int:
        """Delete every memory of a scope (and its full-text rows), its diary, profiles, prune
        reports and intentions (a private chat's: its person's contact and outreach ledger too);
        returns how many memories went."""
        ...

    async def commit_encoding(self, write: EncodingWrite) -> list[int] | None:
        """Write what encoding a conversation made (memories, merges, diary, profiles, recap: see
        EncodingWrite) and mark it encoded, in one transaction; the new memories' ids, or None
        if it was encoded already (then nothing is written)."""
        ...

    async def prune(self, write: PruneWrite) -> list[int]:
        """Write what a prune changes (see PruneWrite) in one transaction, and keep each of the
        scope's memories' last RECENT_RECALLS recalls in the log; returns the ids deleted."""
        ...

    async def listen(
        self, heard: Callable[[MemoryNotice], None], missed: Callable[[], None]
    ) -> None:
        """Call `heard(notice)` when another process adds, deletes or re-embeds some of a
        scope's memories, or changes some in place (reinforces, merges into, relates them),
        in the order they were written; `missed()` when some may have gone unheard (the
        connection hearing them was lost), and again once they are heard again."""
        ...

    async def set_related(self, scope: str, memory_id: int, related: Sequence[int]) -> None: ...

    async def scopes(self) -> list[str]: ...

    # Embeddings: kept in the memories table, tagged with the embedder that made them.

    async def embeddings(
        self, scope: str, embedder: str
    ) -> tuple[npt.NDArray[np.int64], Vectors | None]:
        """Ids and vectors of the scope's memories embedded by `embedder` (None if none)."""
        ...

    def embedding_slices(
        self, scope: str, embedder: str
    ) -> AsyncIterator[tuple[npt.NDArray[np.int64], Vectors]]:
        """The same, a slice of the scope at a time (by id), never all of it held at once."""
        ...

    async def unembedded(self, scope: str, embedder: str) -> list[Memory]:
        """The scope's memories with no embedding from `embedder`, oldest first."""
        ...

    async def unembedded_scopes(self, embedder: str) -> list[str]:
        """The scopes holding a memory with no embedding from `embedder`: the whole bank in
        one statement, where asking each scope is a trip each (10,000 at a start)."""
        ...

    async def set_embeddings(
        self, scope: str, embedder: str, items: Sequence[tuple[int, Vectors]]
    ) -> None: ...

    async def embedding_digest(self, scope: str, embedder: str) -> IdDigest: ...

    async def stored_vectors(
        self, scope: str, embedder: str, ids: Sequence[int]
    ) -> dict[int, Vectors]:
        """The stored vectors from `embedder` of those `ids` in the scope that have one."""
        ...

    # The cache of embeddings by (embedder, text hash): the same text is never paid for twice.

    async def cached_embeddings(
        self, embedder: str, keys: Sequence[bytes]
    ) -> dict[bytes, bytes]: ...

    async def cache_embeddings(
        self, embedder: str, items: Sequence[tuple[bytes, bytes]]
    ) -> None: ...

    async def forget_cached(self, keys: Sequence[bytes]) -> None:
        """Drop cached embeddings by key (their text's hash), whatever the embedder: a forgotten
        memory's text leaves no trace."""
        ...


class JournalStore(Protocol):
    """What encoding writes beside memories (diary pages, profiles) and the prune's records."""

    async def diary_entry(self, scope: str, day: date) -> DiaryEntry | None: ...

    async def diary_entries(
        self, scope: str, *, before: date | None = None, limit: int = 10
    ) -> list[DiaryEntry]:
        """The scope's diary pages, newest first (only those before `before`, if given)."""
        ...

    async def profiles(self, scope: str, user_ids: Sequence[str] | None = None) -> list[Profile]:
        """The scope's user profiles (those of `user_ids`, if given)."""
        ...

    async def members(self, scope: str) -> list[Member]:
        """The people the scope has profiles of, by their names (no text), newest first."""
        ...

    async def members_and_profile(
        self, scope: str, user_id: str
    ) -> tuple[list[Member], Profile | None]:
        """`members`, and `user_id`'s profile if the scope has one, in one read."""
        ...

    async def last_prune(self, scope: str) -> date | None: ...

    async def pruned_scopes(self, since: date) -> set[str]:
        """The scopes whose daily prune ran on `since` or later (one read for them all)."""
        ...

    async def pruned_since(
        self, since: datetime, *, scope: str | None = None, limit: int = 1000
    ) -> list[PrunedMemory]:
        """Prune reports from `since` on, oldest first (of one scope, or all)."""
        ...

    async def trim_pruned(self, before: datetime) -> int:
        """Delete the prune's records from before `before` (a bounded history); how many."""
        ...


class BankStore(MemoryStore, JournalStore, Protocol):
    """What the memory bank and its encoder keep: memories, diary pages and profiles."""


class SessionStore(Protocol):
    """Conversations at hand (one snapshot per persona and scope) and the archive of closed
    ones, per persona and scope."""

    where: str  # the database, for messages

    async def save_session(
        self, persona: str, scope: str, snapshot: dict[str, Any], updated_at: datetime
    ) -> None: ...

    async def save_sessions(self, snapshots: Sequence[SessionSave]) -> None:
        """Several snapshots in one transaction."""
        ...

    async def load_session(self, persona: str, scope: str) -> SessionRow | None: ...

    async def load_sessions(self, personas: Collection[str]) -> list[SessionRow]:
        """Every session of the given personas, oldest first."""
        ...

    async def session_places(self, persona: str) -> list[str]:
        """The places (scopes) where the persona has a session, without reading them."""
        ...

    async def archive_conversation(self, write: ArchiveWrite) -> int:
        """Archive a closed conversation and replace its session's snapshot with the write's,
        atomically: a crash leaves either the open conversation or the archived one, never both
        or neither; the reminders set while it went on become its own. The archived
        conversation's id."""
        ...

    async def conversations(
        self, persona: str, scope: str, *, limit: int = 20
    ) -> list[ArchivedConversation]:
        """The scope's archived conversations, newest first."""
        ...

    async def count_conversations(self, persona: str, scope: str) -> int: ...

    async def wipe(self, persona: str, scope: str) -> None:
        """The session and every archived conversation of the scope, gone; its intentions
        too (a private chat's: its person's contact and outreach ledger), as wipe_memories
        takes them: a wipe takes them whether long-term memory is on or off."""
        ...


class ArchiveStore(Protocol):
    """Closed conversations waiting to become long-term memory."""

    async def unencoded(
        self,
        personas: Collection[str],
        now: datetime,
        *,
        limit: int = 20,
        skip: Collection[tuple[str, str]] = (),
    ) -> list[ArchivedConversation]:
        """Conversations of these personas waiting to be encoded and due (not waiting out a retry
        delay), oldest first; none of the (persona, scope) pairs in `skip`."""
        ...

    async def conversation(self, conversation_id: int) -> ArchivedConversation | None: ...

    async def encoding_failed(self, conversation_id: int, retry_at: datetime) -> None:
        """Count a failed attempt; the conversation waits until `retry_at`."""
        ...

    async def trim_archive(self, before: datetime) -> int:
        """Delete the encoded conversations that ended before `before` (a bounded history),
        but each scope's newest; how many."""
        ...


class RoomStore(Protocol):
    """Per room and per person choices: which persona a channel is bound to, when a persona
    speaks in a room, and whether a user lets their private memories into their own
    conversations in groups."""

    async def listen_rooms(
        self, changed: Callable[[str, str], None], missed: Callable[[], None]
    ) -> None:
        """Call `changed(persona, room)` when another process changes a room's group
        settings for a persona (kept in each process's memory); `missed()` when some changes
        may have gone unheard (the connection hearing them was lost), and again once they are
        heard again."""
        ...

    async def channel_persona(self, bot_id: str, channel_id: str) -> str | None: ...

    async def bind_channel(
        self, bot_id: str, channel_id: str, persona: str, bound_by: str, at: datetime
    ) -> None: ...

    async def dm_sharing(self, persona: str, user: str) -> bool: ...

    async def set_dm_sharing(self, persona: str, user: str, on: bool, at: datetime) -> None: ...

    async def channel_floor(self, persona: str, room: str) -> str | None:
        """A room's admin's group settings for a persona (JSON text, the bot's to read);
        None: none set."""
        ...

    async def set_channel_floor(
        self, persona: str, room: str, settings: str | None, set_by: str, at: datetime
    ) -> None:
        """Set them (None: drop them)."""
        ...


@runtime_checkable  # the encoder reads pending intentions from a store that keeps them
class IntentionStore(Protocol):
    """What personas mean to bring up later (memory.records.Intention): follow-ups, reminders
    and special days, per scope. Encoding writes them with the conversation
    (EncodingWrite.intentions); a tool or a command adds one here. A wipe of the scope takes
    them, and a forgotten memory those of the conversation it came from. Every read names its
    scope but `due_intentions`, the scheduler's, which names its persona."""

    async def add_intention(self, intention: NewIntention) -> int: ...

    async def intentions(
        self, scope: str, user_id: str | None = None, *, open_only: bool = True
    ) -> list[Intention]:
        """The scope's intentions (only `user_id`'s if given), soonest due first; open_only:
        those still pending."""
        ...

    async def due_intention(self, scope: str, user_id: str, now: datetime) -> Intention | None:
        """`user_id`'s own pending intention in the scope due now (due_at <= now <= until;
        Intention.own), soonest due first: the one to bring up in a reply. None if none is."""
        ...

    async def is_pending(self, scope: str, intention_id: int) -> bool:
        """Whether the scope's intention is pending (a yearly one rolled on is, again)."""
        ...

    async def due_intentions(
        self, persona: str, now: datetime, *, limit: int, asked_only: bool = False
    ) -> list[Intention]:
        """The persona's pending intentions due by `now` (due_at <= now), across its scopes,
        soonest first; `asked_only` (a persona that writes first only when asked): only the
        reminders their user asked for themself (Intention.solicited) and those past their
        `until`."""
        ...

    async def close_intention(
        self, scope: str, intention_id: int, state: IntentionState, at: datetime
    ) -> bool:
        """Move a pending intention of `scope` to `state` (done, cancelled, missed), done_at =
        `at`; a yearly one made done or missed is pending again instead, due and until a year
        on (done_at: when last done), but only once due (before, only cancelling closes it),
        and simply closed if the same event is pending a year on already. False when it was
        not pending (or not the scope's, or a yearly one not due): whoever closes it first
        wins."""
        ...

    async def miss_intentions(self, persona: str, now: datetime) -> int:
        """Close the persona's pending intentions whose `until` is before `now` as missed,
        done_at `now`, all in one statement; yearly ones are left to close_intention (they roll
        on a year). Returns how many."""
        ...

    async def trim_intentions(self, before: datetime) -> int:
        """Delete the intentions closed (done, cancelled, missed) before `before`: nothing
        reads them but a scope's own history, and they would grow with every follow-up.
        Pending ones stay, yearly ones too (they are pending again). Returns how many."""
        ...


@runtime_checkable  # the encoder reads the time zones users set from a store that keeps them
class ContactStore(Protocol):
    """Reaching people first: what the persona knows of each person's reachability
    (memory.records.Contact) and the ledger that makes each message it writes first go out at
    most once, across processes (memory.records.Outreach)."""

    async def contact(self, persona: str, platform: str, user_id: str) -> Contact | None: ...

    async def heard(
        self, persona: str, platform: str, user_id: str, at: datetime, *, private: bool
    ) -> None:
        """A message from them: their last_heard, an hour counted, `private` remembered (once
        true it stays)."""
        ...

    async def answered(self, persona: str, platform: str, user_id: str, at: datetime) -> None:
        """The persona replied to them."""
        ...

    async def set_contact(
        self,
        persona: str,
        platform: str,
        user_id: str,
        *,
        quiet: bool | None = None,
        timezone: str | None = None,
        refused_at: datetime | None = None,
        voice: bool | None = None,
        at: datetime,
    ) -> None:
        """Change what is given (None leaves it); creates the contact if there is none."""
        ...

    async def contacts(
        self, persona: str, platform: str, *, private: bool = True, heard_before: datetime
    ) -> list[Contact]:
        """The persona's contacts on a platform (only those who talked privately, by
        default) last heard before `heard_before`."""
        ...

    async def checkins_due(
        self, persona: str, platform: str, *, heard_before: datetime, limit: int
    ) -> list[Contact]:
        """Those a check-in may be due to, through an index: the persona's contacts on a
        platform who talked privately, are not quiet, were last heard before `heard_before`,
        and whose absence has no settled check-in (`settle_checkin`); longest silent first,
        at most `limit`."""
        ...

    async def contacts_of(
        self, persona: str, platform: str, user_ids: Sequence[str]
    ) -> list[Contact]:
        """The contacts of these people (those known), in one read: a round's gates for
        everyone it may write to."""
        ...

    async def ledgers(
        self, persona: str, platform: str, user_ids: Sequence[str], *, since: datetime
    ) -> list[Outreach]:
        """The ledger's entries for these people changed since `since`, in one read (as
        `outreach` reads one person's), newest first."""
        ...

    async def settle_checkin(
        self, persona: str, platform: str, user_id: str, heard: datetime
    ) -> None:
        """The check-in of the absence since `heard` (their last_heard) is settled: written,
        refused or dropped. They are due again once heard after it."""
        ...

    async def claim_outreach(
        self,
        persona: str,
        platform: str,
        user_id: str,
        key: str,
        *,
        by: str,
        at: datetime,
        stale_before: datetime,
    ) -> bool:
        """Claim the message `key` to write: True for the one caller that may write it. A
        claim left in state `claimed` since before `stale_before` (its process died before
        sending) may be taken over; one in any other state never."""
        ...

    async def outreach_state(
        self,
        persona: str,
        platform: str,
        user_id: str,
        key: str,
        state: OutreachState,
        at: datetime,
    ) -> None:
        """Move a claimed message on (sending, sent, refused, dropped)."""
        ...

    async def outreach(
        self, persona: str, platform: str, user_id: str, *, since: datetime
    ) -> list[Outreach]:
        """The ledger's entries for one person changed since `since`, newest first: how many
        went out this week, and what."""
        ...

    async def trim_outreach(self, before: datetime) -> int:
        """Delete the ledger's settled entries (sent, refused, dropped) last changed before
        `before` whose key cannot come due again: all but a check-in of an absence still going
        on (the contact not heard from since). Claimed and sending ones stay, whatever their
        age: they keep a message from going out twice. Returns how many."""
        ...


class Coordination(Protocol):
    """Work several processes on one store share out (one process does it all on SQLite)."""

    async def leads(self, job: str) -> bool:
        """Whether this process does `job` (polling a Telegram bot, the daily prune)."""
        ...

    def scope_lock(self, scope: str) -> AbstractAsyncContextManager[bool]:
        """Hold a scope for its encoding or prune; yields whether it is held."""
        ...


class Storage(
    BankStore,
    SessionStore,
    ArchiveStore,
    RoomStore,
    IntentionStore,
    ContactStore,
    Coordination,
    Protocol,
):
    """The whole store, as the runtime opens and closes it."""

    async def schema_version(self) -> int: ...

    async def close(self) -> None: ...


@runtime_checkable
class LeaseStore(Protocol):
    """A store several processes share (PgStore): each conversation's turns are taken by one
    process at a time, under a lease that goes with the process if it dies."""

    async def take_conversation(self, persona: str, scope: str) -> Lease: ...

    async def give_back_conversation(self, persona: str, scope: str) -> None: ...

    async def conversation_returned(self, persona: str, scope: str) -> None: ...

    async def keep_waiting(
        self, persona: str, scope: str, waiting: Sequence[tuple[str, dict[str, Any]]]
    ) -> None: ...

    async def drop_waiting(self, persona: str, scope: str, message_ids: Sequence[str]) -> None: ...
