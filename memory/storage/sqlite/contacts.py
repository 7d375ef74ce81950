"""Reaching people first (memory.storage.ContactStore): what each persona knows of each
person's reachability, and the ledger of the messages it writes first, each claimed once. A
wipe of a private chat's scope takes that person's rows (`wipe_contact`)."""

from __future__ import annotations

from datetime import UTC, datetime

import aiosqlite

from memory.records import Contact, Outreach, OutreachState
from memory.storage.rows import (
    CONTACT_COLUMNS,
    NO_HOURS,
    OUTREACH_COLUMNS,
    contact_row,
    first_hours,
    outreach_row,
    private_chat,
    timestamp,
)
from memory.storage.sqlite.base import SqliteBase, serialised

__all__ = ["SqliteContacts", "wipe_contact"]


async def wipe_contact(db: aiosqlite.Connection, scope: str) -> None:
    """When `scope` is a private chat's: its person's contact and ledger rows with the
    persona, deleted in the caller's transaction."""
    person = private_chat(scope)
    if person is not None:
        for table in ("contacts", "outreach"):
            await db.execute(
                f"DELETE FROM {table} WHERE persona = ? AND platform = ? AND user_id = ?",
                person,
            )


class SqliteContacts(SqliteBase):
    """Contacts and the outreach ledger (one process: the write lock makes a claim once)."""

    async def contact(self, persona: str, platform: str, user_id: str) -> Contact | None:
        row = await self._one(
            f"SELECT {CONTACT_COLUMNS} FROM contacts"
            " WHERE persona = ? AND platform = ? AND user_id = ?",
            (persona, platform, user_id),
        )
        return None if row is None else contact_row(row)

    @serialised
    async def heard(
        self, persona: str, platform: str, user_id: str, at: datetime, *, private: bool
    ) -> None:
        hour = f"$[{at.astimezone(UTC).hour}]"
        await self._db.execute(
            "INSERT INTO contacts (persona, platform, user_id, private, last_heard, hours,"
            " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (persona, platform, user_id) DO UPDATE"
            " SET private = max(private, excluded.private),"
            " last_heard = max(coalesce(last_heard, excluded.last_heard), excluded.last_heard),"
            " hours = json_set(hours, ?, json_extract(hours, ?) + 1),"
            " updated_at = excluded.updated_at",
            (
                persona,
                platform,
                user_id,
                int(private),
                timestamp(at),
                first_hours(at),
                timestamp(at),
                hour,
                hour,
            ),
        )
        await self._db.commit()

    @serialised
    async def answered(self, persona: str, platform: str, user_id: str, at: datetime) -> None:
        await self._db.execute(
            "INSERT INTO contacts (persona, platform, user_id, last_answered, hours, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (persona, platform, user_id) DO UPDATE"
            " SET last_answered ="
            " max(coalesce(last_answered, excluded.last_answered), excluded.last_answered),"
            " updated_at = excluded.updated_at",
            (persona, platform, user_id, timestamp(at), NO_HOURS, timestamp(at)),
        )
        await self._db.commit()

    @serialised
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
        refused = None if refused_at is None else timestamp(refused_at)
        quiet_value = None if quiet is None else int(quiet)
        voice_value = None if voice is None else int(voice)
        # A None parameter keeps the column as it was.
        await self._db.execute(
            "INSERT INTO contacts (persona, platform, user_id, quiet, timezone, refused_at,"
            " voice, hours, updated_at) VALUES (?, ?, ?, coalesce(?, 0), ?, ?, ?, ?, ?)"
            " ON CONFLICT (persona, platform, user_id) DO UPDATE"
            " SET quiet = coalesce(?, quiet), timezone = coalesce(?, timezone),"
            " refused_at = coalesce(?, refused_at), voice = coalesce(?, voice),"
            " updated_at = excluded.updated_at",
            (
                persona,
                platform,
                user_id,
                quiet_value,
                timezone,
                refused,
                voice_value,
                NO_HOURS,
                timestamp(at),
                quiet_value,
                timezone,
                refused,
                voice_value,
            ),
        )
        await self._db.commit()

    async def contacts(
        self, persona: str, platform: str, *, private: bool = True, heard_before: datetime
    ) -> list[Contact]:
        rows = await self._all(
            f"SELECT {CONTACT_COLUMNS} FROM contacts WHERE persona = ? AND platform = ?"
            " AND last_heard < ? AND (private = 1 OR ? = 0) ORDER BY last_heard, user_id",
            (persona, platform, timestamp(heard_before), int(private)),
        )
        return [contact_row(r) for r in rows]

    async def checkins_due(
        self, persona: str, platform: str, *, heard_before: datetime, limit: int
    ) -> list[Contact]:
        rows = await self._all(
            f"SELECT {CONTACT_COLUMNS} FROM contacts WHERE persona = ? AND platform = ?"
            " AND last_heard < ? AND private = 1 AND quiet = 0"
            " AND (checked_in IS NULL OR checked_in < last_heard)"
            " ORDER BY last_heard, user_id LIMIT ?",
            (persona, platform, timestamp(heard_before), limit),
        )
        return [contact_row(r) for r in rows]

    @serialised
    async def settle_checkin(
        self, persona: str, platform: str, user_id: str, heard: datetime
    ) -> None:
        await self._db.execute(
            "UPDATE contacts SET checked_in = ? WHERE persona = ? AND platform = ? AND user_id = ?",
            (timestamp(heard), persona, platform, user_id),
        )
        await self._db.commit()

    @serialised
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
        rows = await self._all(
            f"INSERT INTO outreach ({OUTREACH_COLUMNS}) VALUES (?, ?, ?, ?, 'claimed', ?, ?)"
            " ON CONFLICT (persona, platform, user_id, key) DO UPDATE"
            ' SET at = excluded.at, "by" = excluded."by"'
            " WHERE outreach.state = 'claimed' AND outreach.at < ? RETURNING 1",
            (persona, platform, user_id, key, timestamp(at), by, timestamp(stale_before)),
        )
        await self._db.commit()
        return bool(rows)

    @serialised
    async def outreach_state(
        self,
        persona: str,
        platform: str,
        user_id: str,
        key: str,
        state: OutreachState,
        at: datetime,
    ) -> None:
        await self._db.execute(
            "UPDATE outreach SET state = ?, at = ?"
            " WHERE persona = ? AND platform = ? AND user_id = ? AND key = ?",
            (state, timestamp(at), persona, platform, user_id, key),
        )
        await self._db.commit()

    @serialised
    async def trim_outreach(self, before: datetime) -> int:
        rows = await self._all(
            "DELETE FROM outreach WHERE at < ? AND state IN ('sent', 'refused', 'dropped')"
            " AND NOT (key LIKE 'checkin:%' AND EXISTS (SELECT 1 FROM contacts c"
            " WHERE c.persona = outreach.persona AND c.platform = outreach.platform"
            " AND c.user_id = outreach.user_id AND c.last_heard <= outreach.at))"
            " RETURNING 1",
            (timestamp(before),),
        )
        await self._db.commit()
        return len(rows)

    async def outreach(
        self, persona: str, platform: str, user_id: str, *, since: datetime
    ) -> list[Outreach]:
        rows = await self._all(
            f"SELECT {OUTREACH_COLUMNS} FROM outreach"
            " WHERE persona = ? AND platform = ? AND user_id = ? AND at >= ?"
            " ORDER BY at DESC, key",
            (persona, platform, user_id, timestamp(since)),
        )
        return [outreach_row(r) for r in rows]
