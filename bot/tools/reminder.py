"""`reminder`: "remind me on Friday to call my sister" becomes a reminder due on Friday, kept for
the conversation and the sender it was asked in (the context's `reminders`). The day is read from
the words the user used for it as the encoder reads them (memory.encoding.intentions.resolve:
"on Friday", "next Wednesday", 下周三, "tomorrow at 3pm", an ISO date): due at the clock time or
the part of the day they said, else at 09:00 of its (first) day, as a reminder the encoder finds,
in the time zone the sender set (/timezone), else the bot's. A host that keeps no reminders makes
the tool say so, so the persona never promises what will not happen.

`StoredReminders` keeps them in the store as intentions of kind ``reminder``: brought up in
the user's conversation once due, or written to them first (bot.outreach), for a day."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, tzinfo
from typing import Annotated, Protocol

from pydantic import Field

from bot.outreach.policy import zone
from bot.tools.python import ToolContext
from memory.clock import Clock
from memory.encoding.intentions import REMINDER_DAYS, REMINDER_HOUR, resolve
from memory.records import NewIntention
from memory.scopes import Scope
from memory.storage import ContactStore, IntentionStore

__all__ = ["ReminderStore", "StoredReminders", "reminder"]


class ReminderStore(IntentionStore, ContactStore, Protocol):
    """Where reminders are kept, and the time zone their sender set."""


@dataclass(slots=True, frozen=True)
class StoredReminders:
    """bot.tools.Reminders of one conversation's scope and one sender, kept as intentions:
    always the sender's own (whoever they name in it, it reminds them, who asked)."""

    store: ReminderStore
    clock: Clock
    scope: str
    user_id: str

    async def zone(self) -> tzinfo | None:
        parsed = Scope.parse(self.scope)
        platform = parsed.place.split(":", 1)[0]
        contact = await self.store.contact(parsed.persona, platform, self.user_id)
        return None if contact is None else zone(contact.timezone)

    async def add(self, due: datetime, what: str) -> None:
        await self.store.add_intention(
            NewIntention(
                scope=self.scope,
                user_id=self.user_id,
                kind="reminder",
                what=what,
                ask=what,
                due_at=due,
                until=due + REMINDER_DAYS,  # later, it is missed
                created_at=self.clock.now(),
                said_by=self.user_id,  # the sender asked for it: theirs, at the time they chose
            )
        )


async def reminder(
    context: ToolContext,
    what: Annotated[str, Field(description="what to remind them of, in a few words")],
    when: Annotated[
        str, Field(description="the day as they said it: 'on Friday', 'tomorrow evening', 下周三")
    ],
) -> str:
    """Set a reminder when someone asks to be reminded of something on a later day. Then
    tell them, in your own words, for when it is set."""
    if context.reminders is None:
        return (
            "Reminders are not kept here: say you cannot set one, and suggest they note it "
            "down themselves."
        )
    # Their day and hour, where they live when they said so (/timezone), else the bot's.
    tz = await context.reminders.zone() or context.tz
    now = context.clock.now().astimezone(tz)
    window = resolve(when, now)
    if window is None or not what.strip():
        return "Not set: ask them which day they mean (and what to remind them of)."
    at = window.clock or time(window.hours[0] if window.hours else REMINDER_HOUR)
    due = max(datetime.combine(window.first, at, tz), now)
    await context.reminders.add(due, what.strip())
    return f"Reminder set for {due:%A %d %B %Y, %H:%M}: {what.strip()}"
