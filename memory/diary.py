"""The diary: one page per day per scope, in the persona's words.

Pages are written by encoding (memory/encoding.py): each conversation that closes updates its
day's page, so a page grows with the day instead of being rebuilt from the whole log. This
module reads them: by date, and by the days a message mentions ("what did I tell you
yesterday?", 上周三, 2024-09-03), parsed locally by memory/dates.py at no model cost.
"""

from __future__ import annotations

from datetime import date, datetime, tzinfo

from memory.dates import find_dates
from memory.records import DiaryEntry
from memory.storage import JournalStore

__all__ = ["MAX_PAGES", "Diary"]

MAX_PAGES = 2  # diary pages one message can bring into the prompt


class Diary:
    def __init__(self, store: JournalStore) -> None:
        self.store = store

    async def page(self, scope: str, day: date) -> DiaryEntry | None:
        return await self.store.diary_entry(scope, day)

    async def pages(
        self, scope: str, *, before: date | None = None, limit: int = 7
    ) -> list[DiaryEntry]:
        """The newest pages (before `before`, if given), newest first."""
        return await self.store.diary_entries(scope, before=before, limit=limit)

    async def mentioned(
        self, scope: str, text: str, now: datetime, tz: tzinfo | None
    ) -> list[DiaryEntry]:
        """The pages of the days `text` mentions, up to today (a diary has no future), at
        most MAX_PAGES, in the order mentioned. Days without a page are skipped."""
        local = now.astimezone(tz)
        today = local.date()
        out: list[DiaryEntry] = []
        for mention in find_dates(text, local):
            if mention.day > today:
                continue
            entry = await self.store.diary_entry(scope, mention.day)
            if entry is not None:
                out.append(entry)
                if len(out) == MAX_PAGES:
                    break
        return out
