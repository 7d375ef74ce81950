"""`reminder`: "remind me on Friday to call my sister" becomes a reminder due on Friday,
kept for the conversation and the sender it was asked in (the context's `reminders`). The
day is read from the words the user used for it (memory.dates.future_spans: "on Friday",
"next Wednesday", 下周三, "tomorrow evening"); a window ("next week") is due when it
begins. A host that keeps no reminders makes the tool say so, so the persona never promises
what will not happen."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from bot.toolkit.python import ToolContext
from memory.dates import future_spans

__all__ = ["reminder"]


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
    now = context.clock.now().astimezone(context.tz)
    spans = future_spans(when, now)
    if not spans or not what.strip():
        return "Not set: ask them which day they mean (and what to remind them of)."
    due = max(spans[0].bounds(context.tz)[0], now)
    await context.reminders.add(due, what.strip())
    return f"Reminder set for {due:%A %d %B %Y, %H:%M}: {what.strip()}"
