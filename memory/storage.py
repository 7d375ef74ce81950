"""The store behind memory and sessions, whichever it is: SQLite in the data folder (embedded,
the default) or PostgreSQL (one database shared by several processes).

Each part of Kizuna sees the store through the narrow protocol of what it keeps: the memory
bank its memories (`MemoryStore`) with the diary, profiles and prune reports (`JournalStore`,
together `BankStore`, in memory.records), sessions `SessionStore`, the encoding of closed
conversations `ArchiveStore`, channel bindings and DM sharing `RoomStore`, the work several
processes share `Coordination`.
`Storage` is all of them, what `open_store` returns; both `memory.store.Store` and
`memory.pgstore.PgStore` implement it (tests/test_storage.py has the type checker hold them
to it)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from memory.records import ArchivedConversation, BankStore, SessionRow, SessionSave
from memory.store import DATABASE, Store, StoreError

__all__ = [
    "ArchiveStore",
    "Coordination",
    "RoomStore",
    "SessionStore",
    "Storage",
    "open_store",
]


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

    async def load_sessions(self, personas: Collection[str]) -> list[SessionRow]: ...

    async def archive_conversation(
        self,
        persona: str,
        scope: str,
        *,
        started_at: datetime,
        ended_at: datetime,
        reason: str,
        turns: list[dict[str, Any]],
        snapshot: dict[str, Any],
    ) -> int:
        """Archive a closed conversation (and write the session's `snapshot`) at once."""
        ...

    async def conversations(
        self, persona: str, scope: str, *, limit: int = 20
    ) -> list[ArchivedConversation]:
        """The newest archived conversations first."""
        ...

    async def count_conversations(self, persona: str, scope: str) -> int: ...

    async def wipe(self, persona: str, scope: str) -> None:
        """The session and every archived conversation of the scope, gone."""
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
    ) -> list[ArchivedConversation]: ...

    async def conversation(self, conversation_id: int) -> ArchivedConversation | None: ...

    async def encoding_failed(self, conversation_id: int, retry_at: datetime) -> None: ...


class RoomStore(Protocol):
    """Per room and per person choices: which persona a channel is bound to, and whether a
    user lets their private memories into their own conversations in groups."""

    async def channel_persona(self, bot_id: str, channel_id: str) -> str | None: ...

    async def bind_channel(
        self, bot_id: str, channel_id: str, persona: str, bound_by: str, at: datetime
    ) -> None: ...

    async def dm_sharing(self, persona: str, user: str) -> bool: ...

    async def set_dm_sharing(self, persona: str, user: str, on: bool, at: datetime) -> None: ...


class Coordination(Protocol):
    """Work several processes on one store share out (one process does it all on SQLite)."""

    async def leads(self, job: str) -> bool:
        """Whether this process does `job` (polling a Telegram bot, the daily prune)."""
        ...

    def scope_lock(self, scope: str) -> AbstractAsyncContextManager[bool]:
        """Hold a scope for its encoding or prune; yields whether it is held."""
        ...


class Storage(BankStore, SessionStore, ArchiveStore, RoomStore, Coordination, Protocol):
    """The whole store, as the runtime opens and closes it."""

    async def schema_version(self) -> int: ...

    async def close(self) -> None: ...


async def open_store(data_dir: Path, dsn: str | None = None) -> Storage:
    """PostgreSQL at `dsn` when one is given, else SQLite in `data_dir`; StoreError says why
    one cannot be opened."""
    if dsn is None:
        return await Store.open(data_dir / DATABASE)
    try:
        from memory.pgstore import PgStore  # the `postgres` extra
    except ImportError:
        raise StoreError(
            "storage = \"postgres\" needs the postgres extra: pip install 'kizuna[postgres]'"
        ) from None
    return await PgStore.open(dsn)
