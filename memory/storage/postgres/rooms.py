"""Per room and per person choices (memory.storage.RoomStore): the persona a channel of a
multi-persona bot talks to, a room's group settings for a persona, and who lets their private
memories into groups."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from memory.storage.postgres.base import PgBase
from memory.storage.rows import timestamp

__all__ = ["PgRooms"]


class PgRooms(PgBase):
    """Channel bindings, rooms' group settings and DM sharing."""

    async def channel_persona(self, bot_id: str, channel_id: str) -> str | None:
        persona = await self._pool.fetchval(
            "SELECT persona FROM channel_personas WHERE bot_id = $1 AND channel_id = $2",
            bot_id,
            channel_id,
        )
        return None if persona is None else str(persona)

    async def bind_channel(
        self, bot_id: str, channel_id: str, persona: str, bound_by: str, at: datetime
    ) -> None:
        await self._pool.execute(
            "INSERT INTO channel_personas (bot_id, channel_id, persona, bound_by, bound_at)"
            " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (bot_id, channel_id) DO UPDATE"
            " SET persona = excluded.persona, bound_by = excluded.bound_by,"
            " bound_at = excluded.bound_at",
            bot_id,
            channel_id,
            persona,
            bound_by,
            timestamp(at),
        )

    async def dm_sharing(self, persona: str, user: str) -> bool:
        found = await self._pool.fetchval(
            'SELECT 1 FROM dm_sharing WHERE persona = $1 AND "user" = $2', persona, user
        )
        return found is not None

    async def set_dm_sharing(self, persona: str, user: str, on: bool, at: datetime) -> None:
        if on:
            await self._pool.execute(
                'INSERT INTO dm_sharing (persona, "user", since) VALUES ($1, $2, $3)'
                " ON CONFLICT DO NOTHING",
                persona,
                user,
                timestamp(at),
            )
        else:
            await self._pool.execute(
                'DELETE FROM dm_sharing WHERE persona = $1 AND "user" = $2', persona, user
            )

    async def listen_rooms(self, changed: Callable[[str, str], None]) -> None:
        instance = self.instance

        def heard(_conn: object, _pid: int, _channel: str, payload: str) -> None:
            writer, _, rest = payload.partition("|")
            persona, _, room = rest.partition("|")
            if writer != instance and room:
                changed(persona, room)

        async with self._session_busy:
            session = await self._own_connection()
            self._hearing.append(("kizuna_rooms", heard))  # heard again on a new connection
            await session.add_listener("kizuna_rooms", heard)

    async def channel_floor(self, persona: str, room: str) -> str | None:
        settings = await self._pool.fetchval(
            "SELECT settings FROM channel_floor WHERE persona = $1 AND room = $2", persona, room
        )
        return None if settings is None else str(settings)

    async def set_channel_floor(
        self, persona: str, room: str, settings: str | None, set_by: str, at: datetime
    ) -> None:
        if settings is None:
            await self._pool.execute(
                "DELETE FROM channel_floor WHERE persona = $1 AND room = $2", persona, room
            )
            return
        await self._pool.execute(
            "INSERT INTO channel_floor (persona, room, settings, set_by, set_at)"
            " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (persona, room) DO UPDATE"
            " SET settings = excluded.settings, set_by = excluded.set_by,"
            " set_at = excluded.set_at",
            persona,
            room,
            settings,
            set_by,
            timestamp(at),
        )
