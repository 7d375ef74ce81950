"""Per room and per person choices (memory.storage.RoomStore) on PostgreSQL:
memory.storage.rooms', and hearing of the changes other processes make to a room's group
settings."""

from __future__ import annotations

from collections.abc import Callable

from memory.storage.postgres.base import PgBase
from memory.storage.rooms import Rooms

__all__ = ["PgRooms"]


class PgRooms(PgBase, Rooms):
    """Channel bindings, rooms' group settings and DM sharing, shared by the processes on one
    database."""

    async def listen_rooms(
        self, changed: Callable[[str, str], None], missed: Callable[[], None]
    ) -> None:
        instance = self.instance

        def heard(_conn: object, _pid: int, _channel: str, payload: str) -> None:
            writer, _, rest = payload.partition("|")
            persona, _, room = rest.partition("|")
            if writer != instance and room:
                changed(persona, room)

        async with self._session_busy:
            self._missing.append(missed)
            session = await self._own_connection()
            self._hearing.append(("kizuna_rooms", heard))  # heard again on a new connection
            await session.add_listener("kizuna_rooms", heard)
