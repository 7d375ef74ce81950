"""Per room and per person choices (memory.storage.RoomStore), in either store: the persona a
channel of a multi-persona bot talks to, a room's group settings for a persona, and who lets
their private memories into groups. Hearing of another process's changes is the store's own
(`listen_rooms`)."""

from __future__ import annotations

from datetime import datetime

from memory.storage.rows import timestamp
from memory.storage.statements import Statements, placeholders

__all__ = ["Rooms"]


def _upsert(table: str, keys: tuple[str, ...], values: tuple[str, ...]) -> str:
    """An INSERT of a row (its `keys`, then its `values`) that, where the table has a row with
    those keys already, replaces that row's values."""
    columns = (*keys, *values)
    update = ", ".join(f"{column} = excluded.{column}" for column in values)
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({placeholders(len(columns))})"
        f" ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {update}"
    )


class Rooms(Statements):
    """Channel bindings, rooms' group settings and DM sharing."""

    async def channel_persona(self, bot_id: str, channel_id: str) -> str | None:
        row = await self._one(
            "SELECT persona FROM channel_personas WHERE bot_id = ? AND channel_id = ?",
            (bot_id, channel_id),
        )
        return None if row is None else str(row[0])

    async def bind_channel(
        self, bot_id: str, channel_id: str, persona: str, bound_by: str, at: datetime
    ) -> None:
        await self._write(
            _upsert(
                "channel_personas", ("bot_id", "channel_id"), ("persona", "bound_by", "bound_at")
            ),
            (bot_id, channel_id, persona, bound_by, timestamp(at)),
        )

    async def dm_sharing(self, persona: str, user: str) -> bool:
        rows = await self._all(
            'SELECT 1 FROM dm_sharing WHERE persona = ? AND "user" = ?', (persona, user)
        )
        return bool(rows)

    async def set_dm_sharing(self, persona: str, user: str, on: bool, at: datetime) -> None:
        if on:
            await self._write(
                'INSERT INTO dm_sharing (persona, "user", since) VALUES (?, ?, ?)'
                " ON CONFLICT DO NOTHING",
                (persona, user, timestamp(at)),
            )
        else:
            await self._write(
                'DELETE FROM dm_sharing WHERE persona = ? AND "user" = ?', (persona, user)
            )

    async def channel_floor(self, persona: str, room: str) -> str | None:
        row = await self._one(
            "SELECT settings FROM channel_floor WHERE persona = ? AND room = ?", (persona, room)
        )
        return None if row is None else str(row[0])

    async def set_channel_floor(
        self, persona: str, room: str, settings: str | None, set_by: str, at: datetime
    ) -> None:
        if settings is None:
            await self._write(
                "DELETE FROM channel_floor WHERE persona = ? AND room = ?", (persona, room)
            )
            return
        await self._write(
            _upsert("channel_floor", ("persona", "room"), ("settings", "set_by", "set_at")),
            (persona, room, settings, set_by, timestamp(at)),
        )
