"""Per room and per person choices (memory.storage.RoomStore): the persona a channel of a
multi-persona bot talks to, a room's group settings for a persona, and who lets their private
memories into groups."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from memory.storage.rows import timestamp
from memory.storage.sqlite.base import SqliteBase, serialised

__all__ = ["SqliteRooms"]


class SqliteRooms(SqliteBase):
    """Channel bindings, rooms' group settings and DM sharing."""

    async def channel_persona(self, bot_id: str, channel_id: str) -> str | None:
        row = await self._one(
            "SELECT persona FROM channel_personas WHERE bot_id = ? AND channel_id = ?",
            (bot_id, channel_id),
        )
        return None if row is None else str(row[0])

    @serialised
    async def bind_channel(
        self, bot_id: str, channel_id: str, persona: str, bound_by: str, at: datetime
    ) -> None:
        await self._db.execute(
            "INSERT INTO channel_personas (bot_id, channel_id, persona, bound_by, bound_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (bot_id, channel_id) DO UPDATE"
            " SET persona = excluded.persona, bound_by = excluded.bound_by,"
            " bound_at = excluded.bound_at",
            (bot_id, channel_id, persona, bound_by, timestamp(at)),
        )
        await self._db.commit()

    async def dm_sharing(self, persona: str, user: str) -> bool:
        rows = await self._all(
            "SELECT 1 FROM dm_sharing WHERE persona = ? AND user = ?", (persona, user)
        )
        return bool(rows)

    @serialised
    async def set_dm_sharing(self, persona: str, user: str, on: bool, at: datetime) -> None:
        if on:
            await self._db.execute(
                "INSERT OR IGNORE INTO dm_sharing (persona, user, since) VALUES (?, ?, ?)",
                (persona, user, timestamp(at)),
            )
        else:
            await self._db.execute(
                "DELETE FROM dm_sharing WHERE persona = ? AND user = ?", (persona, user)
            )
        await self._db.commit()

    async def listen_rooms(self, changed: Callable[[str, str], None]) -> None:
        """Nothing to hear: one process has an SQLite database at a time (PgStore tells of
        other processes' changes)."""

    async def channel_floor(self, persona: str, room: str) -> str | None:
        row = await self._one(
            "SELECT settings FROM channel_floor WHERE persona = ? AND room = ?", (persona, room)
        )
        return None if row is None else str(row[0])

    @serialised
    async def set_channel_floor(
        self, persona: str, room: str, settings: str | None, set_by: str, at: datetime
    ) -> None:
        if settings is None:
            await self._db.execute(
                "DELETE FROM channel_floor WHERE persona = ? AND room = ?", (persona, room)
            )
        else:
            await self._db.execute(
                "INSERT INTO channel_floor (persona, room, settings, set_by, set_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (persona, room) DO UPDATE"
                " SET settings = excluded.settings, set_by = excluded.set_by,"
                " set_at = excluded.set_at",
                (persona, room, settings, set_by, timestamp(at)),
            )
        await self._db.commit()
