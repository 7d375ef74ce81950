"""Contacts and the outreach ledger (memory.storage.contacts) on PostgreSQL: its upserts of a
contact, and `wipe_contact`, which a wipe of a private chat's scope runs in its transaction.
Of several processes writing one row at once, its lock makes each wait for the one before."""

from __future__ import annotations

import asyncpg

from memory.storage.contacts import Contacts, wipes
from memory.storage.postgres.base import PgBase
from memory.storage.statements import numbered

__all__ = ["PgContacts", "wipe_contact"]


async def wipe_contact(conn: asyncpg.Connection, scope: str) -> None:
    """memory.storage.contacts.wipes, run in the caller's transaction."""
    for sql, params in wipes(scope):
        await conn.execute(numbered(sql), *params)


class PgContacts(PgBase, Contacts):
    """Contacts and the outreach ledger, shared by the processes on one database."""

    _HEARD = (
        "INSERT INTO contacts (persona, platform, user_id, private, last_heard, hours,"
        " updated_at) VALUES ($1, $2, $3, $4, $5, $6, $5)"
        " ON CONFLICT (persona, platform, user_id) DO UPDATE"
        " SET private = greatest(contacts.private, excluded.private),"
        " last_heard = greatest(contacts.last_heard, excluded.last_heard),"
        " hours = jsonb_set(contacts.hours::jsonb, ARRAY[$7::int::text],"
        " to_jsonb((contacts.hours::jsonb ->> $7::int)::int + 1))::text,"
        " updated_at = greatest(contacts.updated_at, excluded.updated_at)"
    )
    _ANSWERED = (
        "INSERT INTO contacts (persona, platform, user_id, last_answered, hours, updated_at)"
        " VALUES ($1, $2, $3, $4, $5, $4) ON CONFLICT (persona, platform, user_id) DO UPDATE"
        " SET last_answered = greatest(contacts.last_answered, excluded.last_answered),"
        " updated_at = greatest(contacts.updated_at, excluded.updated_at)"
    )
    _SET_CONTACT = (
        "INSERT INTO contacts (persona, platform, user_id, quiet, timezone, refused_at,"
        " voice, hours, updated_at)"
        " VALUES ($1, $2, $3, coalesce($4::int, 0), $5, $6, $9::int, $7, $8)"
        " ON CONFLICT (persona, platform, user_id) DO UPDATE"
        " SET quiet = coalesce($4::int, contacts.quiet),"
        " timezone = coalesce($5, contacts.timezone),"
        " refused_at = coalesce($6, contacts.refused_at),"
        " voice = coalesce($9::int, contacts.voice), updated_at = excluded.updated_at"
    )
