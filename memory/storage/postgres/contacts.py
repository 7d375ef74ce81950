"""Reaching people first (memory.storage.ContactStore), on PostgreSQL: what each persona knows
of each person's reachability, and the ledger of the messages it writes first. A claim is one
INSERT ... ON CONFLICT: of several processes claiming one key at once, the unique key makes
all but one wait and then find it taken. A wipe of a private chat's scope takes that person's
rows (`wipe_contact`)."""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg

from memory.records import Contact, Outreach, OutreachState
from memory.storage.postgres.base import PgBase
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

__all__ = ["PgContacts", "wipe_contact"]


async def wipe_contact(conn: asyncpg.Connection, scope: str) -> None:
    """When `scope` is a private chat's: its person's contact and ledger rows with the
    persona, deleted in the caller's transaction."""
    person = private_chat(scope)
    if person is not None:
        for table in ("contacts", "outreach"):
            await conn.execute(
                f"DELETE FROM {table} WHERE persona = $1 AND platform = $2 AND user_id = $3",
                *person,
            )


class PgContacts(PgBase):
    """Contacts and the outreach ledger, shared by the processes on one database."""

    async def contact(self, persona: str, platform: str, user_id: str) -> Contact | None:
        row = await self._pool.fetchrow(
            f"SELECT {CONTACT_COLUMNS} FROM contacts"
            " WHERE persona = $1 AND platform = $2 AND user_id = $3",
            persona,
            platform,
            user_id,
        )
        return None if row is None else contact_row(row)

    async def heard(
        self, persona: str, platform: str, user_id: str, at: datetime, *, private: bool
    ) -> None:
        hour = at.astimezone(UTC).hour
        # One statement: the row's lock makes two processes' counts add up.
        await self._pool.execute(
            "INSERT INTO contacts (persona, platform, user_id, private, last_heard, hours,"
            " updated_at) VALUES ($1, $2, $3, $4, $5, $6, $5)"
            " ON CONFLICT (persona, platform, user_id) DO UPDATE"
            " SET private = greatest(contacts.private, excluded.private),"
            " last_heard = greatest(contacts.last_heard, excluded.last_heard),"
            " hours = jsonb_set(contacts.hours::jsonb, ARRAY[$7::text],"
            " to_jsonb((contacts.hours::jsonb ->> $8::int)::int + 1))::text,"
            " updated_at = excluded.updated_at",
            persona,
            platform,
            user_id,
            int(private),
            timestamp(at),
            first_hours(at),
            str(hour),
            hour,
        )

    async def answered(self, persona: str, platform: str, user_id: str, at: datetime) -> None:
        await self._pool.execute(
            "INSERT INTO contacts (persona, platform, user_id, last_answered, hours, updated_at)"
            " VALUES ($1, $2, $3, $4, $5, $4) ON CONFLICT (persona, platform, user_id) DO UPDATE"
            " SET last_answered = greatest(contacts.last_answered, excluded.last_answered),"
            " updated_at = excluded.updated_at",
            persona,
            platform,
            user_id,
            timestamp(at),
            NO_HOURS,
        )

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
        # A NULL parameter keeps the column as it was.
        await self._pool.execute(
            "INSERT INTO contacts (persona, platform, user_id, quiet, timezone, refused_at,"
            " voice, hours, updated_at)"
            " VALUES ($1, $2, $3, coalesce($4::int, 0), $5, $6, $9::int, $7, $8)"
            " ON CONFLICT (persona, platform, user_id) DO UPDATE"
            " SET quiet = coalesce($4::int, contacts.quiet),"
            " timezone = coalesce($5, contacts.timezone),"
            " refused_at = coalesce($6, contacts.refused_at),"
            " voice = coalesce($9::int, contacts.voice), updated_at = excluded.updated_at",
            persona,
            platform,
            user_id,
            None if quiet is None else int(quiet),
            timezone,
            None if refused_at is None else timestamp(refused_at),
            NO_HOURS,
            timestamp(at),
            None if voice is None else int(voice),
        )

    async def contacts(
        self, persona: str, platform: str, *, private: bool = True, heard_before: datetime
    ) -> list[Contact]:
        rows = await self._pool.fetch(
            f"SELECT {CONTACT_COLUMNS} FROM contacts WHERE persona = $1 AND platform = $2"
            " AND last_heard < $3 AND (private = 1 OR NOT $4) ORDER BY last_heard, user_id",
            persona,
            platform,
            timestamp(heard_before),
            private,
        )
        return [contact_row(r) for r in rows]

    async def checkins_due(
        self, persona: str, platform: str, *, heard_before: datetime, limit: int
    ) -> list[Contact]:
        rows = await self._pool.fetch(
            f"SELECT {CONTACT_COLUMNS} FROM contacts WHERE persona = $1 AND platform = $2"
            " AND last_heard < $3 AND private = 1 AND quiet = 0"
            " AND (checked_in IS NULL OR checked_in < last_heard)"
            " ORDER BY last_heard, user_id LIMIT $4",
            persona,
            platform,
            timestamp(heard_before),
            limit,
        )
        return [contact_row(r) for r in rows]

    async def settle_checkin(
        self, persona: str, platform: str, user_id: str, heard: datetime
    ) -> None:
        await self._pool.execute(
            "UPDATE contacts SET checked_in = $1"
            " WHERE persona = $2 AND platform = $3 AND user_id = $4",
            timestamp(heard),
            persona,
            platform,
            user_id,
        )

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
        # Taking over a stale claim: a second taker waits for the first's row lock, then
        # sees the claim fresh and takes nothing.
        claimed = await self._pool.fetchval(
            f"INSERT INTO outreach ({OUTREACH_COLUMNS})"
            " VALUES ($1, $2, $3, $4, 'claimed', $5, $6)"
            " ON CONFLICT (persona, platform, user_id, key) DO UPDATE"
            ' SET at = excluded.at, "by" = excluded."by"'
            " WHERE outreach.state = 'claimed' AND outreach.at < $7 RETURNING 1",
            persona,
            platform,
            user_id,
            key,
            timestamp(at),
            by,
            timestamp(stale_before),
        )
        return claimed is not None

    async def outreach_state(
        self,
        persona: str,
        platform: str,
        user_id: str,
        key: str,
        state: OutreachState,
        at: datetime,
    ) -> None:
        await self._pool.execute(
            "UPDATE outreach SET state = $1, at = $2"
            " WHERE persona = $3 AND platform = $4 AND user_id = $5 AND key = $6",
            state,
            timestamp(at),
            persona,
            platform,
            user_id,
            key,
        )

    async def trim_outreach(self, before: datetime) -> int:
        rows = await self._pool.fetch(
            "DELETE FROM outreach WHERE at < $1 AND state IN ('sent', 'refused', 'dropped')"
            " AND NOT (key LIKE 'checkin:%' AND EXISTS (SELECT 1 FROM contacts c"
            " WHERE c.persona = outreach.persona AND c.platform = outreach.platform"
            " AND c.user_id = outreach.user_id AND c.last_heard <= outreach.at))"
            " RETURNING 1",
            timestamp(before),
        )
        return len(rows)

    async def outreach(
        self, persona: str, platform: str, user_id: str, *, since: datetime
    ) -> list[Outreach]:
        rows = await self._pool.fetch(
            f"SELECT {OUTREACH_COLUMNS} FROM outreach"
            " WHERE persona = $1 AND platform = $2 AND user_id = $3 AND at >= $4"
            " ORDER BY at DESC, key",
            persona,
            platform,
            user_id,
            timestamp(since),
        )
        return [outreach_row(r) for r in rows]
