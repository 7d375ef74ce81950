"""Reaching people first (memory.storage.ContactStore), in either store: what each persona
knows of each person's reachability, and the ledger of the messages it writes first, each
claimed once (one INSERT ... ON CONFLICT: the unique key makes all claimants of one key but
the first find it taken). The upserts of a contact are each dialect's own SQL (`_HEARD`,
`_ANSWERED`, `_SET_CONTACT`); a wipe of a private chat's scope takes that person's rows
(`wipes`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import ClassVar

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
from memory.storage.statements import Statements, placeholders

__all__ = ["Contacts", "wipes"]


def wipes(scope: str) -> list[tuple[str, tuple[str, str, str]]]:
    """The statements (SQL, parameters) that delete a private chat's person's contact and
    ledger rows with the persona, when `scope` is a private chat's (none otherwise): a wipe
    of the scope runs them in its transaction (each store's `wipe_contact`)."""
    person = private_chat(scope)
    if person is None:
        return []
    return [
        (f"DELETE FROM {table} WHERE persona = ? AND platform = ? AND user_id = ?", person)
        for table in ("contacts", "outreach")
    ]


class Contacts(Statements):
    """Contacts and the outreach ledger."""

    # A message from them. Parameters: persona, platform, user id, private (0 or 1), the
    # time, the hours of a new contact, the hour (UTC) to count.
    _HEARD: ClassVar[str]
    # The persona replied. Parameters: persona, platform, user id, the time, no hours.
    _ANSWERED: ClassVar[str]
    # A NULL parameter keeps the column as it was. Parameters: persona, platform, user id,
    # quiet, timezone, refused at, no hours, the time, voice.
    _SET_CONTACT: ClassVar[str]

    async def contact(self, persona: str, platform: str, user_id: str) -> Contact | None:
        row = await self._one(
            f"SELECT {CONTACT_COLUMNS} FROM contacts"
            " WHERE persona = ? AND platform = ? AND user_id = ?",
            (persona, platform, user_id),
        )
        return None if row is None else contact_row(row)

    async def heard(
        self, persona: str, platform: str, user_id: str, at: datetime, *, private: bool
    ) -> None:
        # One statement: two processes' counts add up.
        await self._write_soon(
            self._HEARD,
            (
                persona,
                platform,
                user_id,
                int(private),
                timestamp(at),
                first_hours(at),
                at.astimezone(UTC).hour,
            ),
        )

    async def answered(self, persona: str, platform: str, user_id: str, at: datetime) -> None:
        await self._write_soon(
            self._ANSWERED, (persona, platform, user_id, timestamp(at), NO_HOURS)
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
        await self._write(
            self._SET_CONTACT,
            (
                persona,
                platform,
                user_id,
                None if quiet is None else int(quiet),
                timezone,
                None if refused_at is None else timestamp(refused_at),
                NO_HOURS,
                timestamp(at),
                None if voice is None else int(voice),
            ),
        )

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

    async def contacts_of(
        self, persona: str, platform: str, user_ids: Sequence[str]
    ) -> list[Contact]:
        if not user_ids:
            return []
        rows = await self._all(
            f"SELECT {CONTACT_COLUMNS} FROM contacts WHERE persona = ? AND platform = ?"
            f" AND user_id IN ({placeholders(len(user_ids))})",
            (persona, platform, *user_ids),
        )
        return [contact_row(r) for r in rows]

    async def ledgers(
        self, persona: str, platform: str, user_ids: Sequence[str], *, since: datetime
    ) -> list[Outreach]:
        if not user_ids:
            return []
        rows = await self._all(
            f"SELECT {OUTREACH_COLUMNS} FROM outreach WHERE persona = ? AND platform = ?"
            f" AND user_id IN ({placeholders(len(user_ids))}) AND at >= ?"
            " ORDER BY at DESC, key",
            (persona, platform, *user_ids, timestamp(since)),
        )
        return [outreach_row(r) for r in rows]

    async def settle_checkin(
        self, persona: str, platform: str, user_id: str, heard: datetime
    ) -> None:
        await self._write(
            "UPDATE contacts SET checked_in = ? WHERE persona = ? AND platform = ? AND user_id = ?",
            (timestamp(heard), persona, platform, user_id),
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
        # Taking over a stale claim: of two takers, the second (after the first's write, or
        # its row lock) sees the claim fresh and takes nothing.
        rows = await self._write(
            f"INSERT INTO outreach ({OUTREACH_COLUMNS}) VALUES (?, ?, ?, ?, 'claimed', ?, ?)"
            " ON CONFLICT (persona, platform, user_id, key) DO UPDATE"
            ' SET at = excluded.at, "by" = excluded."by"'
            " WHERE outreach.state = 'claimed' AND outreach.at < ? RETURNING 1",
            (persona, platform, user_id, key, timestamp(at), by, timestamp(stale_before)),
        )
        return bool(rows)

    async def outreach_state(
        self,
        persona: str,
        platform: str,
        user_id: str,
        key: str,
        state: OutreachState,
        at: datetime,
    ) -> None:
        await self._write(
            "UPDATE outreach SET state = ?, at = ?"
            " WHERE persona = ? AND platform = ? AND user_id = ? AND key = ?",
            (state, timestamp(at), persona, platform, user_id, key),
        )

    async def trim_outreach(self, before: datetime) -> int:
        rows = await self._write(
            "DELETE FROM outreach WHERE at < ? AND state IN ('sent', 'refused', 'dropped')"
            " AND NOT (key LIKE 'checkin:%' AND EXISTS (SELECT 1 FROM contacts c"
            " WHERE c.persona = outreach.persona AND c.platform = outreach.platform"
            " AND c.user_id = outreach.user_id AND c.last_heard <= outreach.at))"
            " RETURNING 1",
            (timestamp(before),),
        )
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
