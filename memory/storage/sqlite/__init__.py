"""The SQLite store, the source of truth when Kizuna runs alone: session snapshots, archived
conversations and long-term memories (with their embeddings and a full-text index), the diary,
user profiles and prune reports, intentions, contacts and the outreach ledger, in one file of
the data folder.

`Store` is made of one part per thing kept (each a module here, on `SqliteBase`'s connection,
or memory.storage's where both stores run the same SQL: see memory.storage.statements);
together they implement memory.storage.Storage.
"""

from __future__ import annotations

from memory.storage.archive import Archive
from memory.storage.journal import Journal
from memory.storage.sqlite.base import DATABASE
from memory.storage.sqlite.contacts import SqliteContacts
from memory.storage.sqlite.coordination import SqliteCoordination
from memory.storage.sqlite.embeddings import SqliteEmbeddings
from memory.storage.sqlite.intentions import SqliteIntentions
from memory.storage.sqlite.memories import SqliteMemories
from memory.storage.sqlite.rooms import SqliteRooms
from memory.storage.sqlite.sessions import SqliteSessions

__all__ = ["DATABASE", "Store"]


class Store(
    SqliteSessions,
    Archive,
    SqliteMemories,
    SqliteEmbeddings,
    Journal,
    SqliteRooms,
    SqliteIntentions,
    SqliteContacts,
    SqliteCoordination,
):
    """Open with `await Store.open(path)` (or `read_only=True`, beside a running process);
    close with `await store.close()`."""
