"""Contacts and the outreach ledger (memory.storage.contacts) on SQLite: its upserts of a
contact, and `wipe_contact`, which a wipe of a private chat's scope runs in its transaction."""

from __future__ import annotations

import aiosqlite

from memory.storage.contacts import Contacts, wipes
from memory.storage.sqlite.base import SqliteBase

__all__ = ["SqliteContacts", "wipe_contact"]


async def wipe_contact(db: aiosqlite.Connection, scope: str) -> None:
    """memory.storage.contacts.wipes, run in the caller's transaction."""
    for sql, params in wipes(scope):
        await db.execute(sql, params)


class SqliteContacts(SqliteBase, Contacts):
    """Contacts and the outreach ledger (one process: the write lock makes a claim once)."""

    _HEARD = (
        "INSERT INTO contacts (persona, platform, user_id, private, last_heard, hours,"
        " updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?5)"
        " ON CONFLICT (persona, platform, user_id) DO UPDATE"
        " SET private = max(private, excluded.private),"
        " last_heard = max(coalesce(last_heard, excluded.last_heard), excluded.last_heard),"
        " hours = json_set(hours, '$[' || ?7 || ']', json_extract(hours, '$[' || ?7 || ']') + 1),"
        " updated_at = max(updated_at, excluded.updated_at)"
    )
    _ANSWERED = (
        "INSERT INTO contacts (persona, platform, user_id, last_answered, hours, updated_at)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?4) ON CONFLICT (persona, platform, user_id) DO UPDATE"
        " SET last_answered ="
        " max(coalesce(last_answered, excluded.last_answered), excluded.last_answered),"
        " updated_at = max(updated_at, excluded.updated_at)"
    )
    _SET_CONTACT = (
        "INSERT INTO contacts (persona, platform, user_id, quiet, timezone, refused_at,"
        " voice, hours, updated_at) VALUES (?1, ?2, ?3, coalesce(?4, 0), ?5, ?6, ?9, ?7, ?8)"
        " ON CONFLICT (persona, platform, user_id) DO UPDATE"
        " SET quiet = coalesce(?4, quiet), timezone = coalesce(?5, timezone),"
        " refused_at = coalesce(?6, refused_at), voice = coalesce(?9, voice),"
        " updated_at = excluded.updated_at"
    )
