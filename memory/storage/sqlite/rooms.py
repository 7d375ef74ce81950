"""Per room and per person choices (memory.storage.RoomStore) on SQLite: memory.storage.rooms',
with nothing to hear of other processes."""

from __future__ import annotations

from collections.abc import Callable

from memory.storage.rooms import Rooms
from memory.storage.sqlite.base import SqliteBase

__all__ = ["SqliteRooms"]


class SqliteRooms(SqliteBase, Rooms):
    """Channel bindings, rooms' group settings and DM sharing, in one process."""

    async def listen_rooms(
        self, changed: Callable[[str, str], None], missed: Callable[[], None]
    ) -> None:
        """Nothing to hear: one process has an SQLite database at a time (PgStore tells of
        other processes' changes)."""
