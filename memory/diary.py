"""The diary: one page per day per scope, in the persona's words.

Pages are written by encoding (memory/encoding.py): each conversation that closes updates its
day's page, so a page grows with the day instead of being rebuilt from the whole log. This
module reads them: by date, and by the days a message mentions ("what did I tell you
yesterday?", 上周三, 2024-09-03, "last weekend", 前几天), parsed locally by memory/dates.py at no
model cost.

A day or month named without a year ("May 4th", 5月) means the most recent year that has a page
for it: asked a year later, "what did we do on May 4th?" finds last year's page. A span of days
brings its pages newest first.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, tzinfo

from memory.dates import DateMention, find_dates
from memory.records import DiaryEntry, JournalStore

__all__ = ["MAX_PAGES", "YEARS_BACK", "Diary"]

# Diary pages one message can bring into the prompt; the memory block's budget decides how much
# of each fits (bot/recollect.py).
MAX_PAGES = 6
# A day named without a year: how many years before the most recent one are looked at for a
# page (one query each, only while none is found).
YEARS_BACK = 5


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
        most MAX_PAGES: in the order mentioned, a span's newest first. Days without a page
        are skipped."""
        local = now.astimezone(tz)
        today = local.date()
        out: list[DiaryEntry] = []
        for mention in find_dates(text, local):
            room = MAX_PAGES - len(out)
            if room <= 0:
                break
            seen = {entry.day for entry in out}
            found = await self.named(scope, mention, today, limit=room)
            out.extend(entry for entry in found if entry.day not in seen)
        return out

    async def named(
        self, scope: str, mention: DateMention, today: date, *, limit: int = MAX_PAGES
    ) -> list[DiaryEntry]:
        """The pages of the days `mention` names, up to `today`, newest first (at most
        `limit`). Named without a year, those of the most recent year that has any, at most
        YEARS_BACK years before the most recent one."""
        first, last = mention.days
        for back in range(YEARS_BACK + 1 if mention.yearless else 1):
            days = _years_before(first, last, back)
            if days is None:  # 29 February, in a year without one
                continue
            lo, hi = days[0], min(days[1], today)
            if lo > hi:
                continue
            if lo == hi:
                entry = await self.store.diary_entry(scope, lo)
                found = [] if entry is None else [entry]
            else:
                newest = await self.store.diary_entries(
                    scope, before=hi + timedelta(days=1), limit=limit
                )
                found = [entry for entry in newest if entry.day >= lo]
            if found:
                return found[:limit]
        return []


def _years_before(first: date, last: date, years: int) -> tuple[date, date] | None:
    """The same days `years` earlier; None for a single 29 February without one (a span
    ending on it ends on the 28th)."""
    if years == 0:
        return first, last
    if first.year - years < date.min.year:
        return None
    try:
        lo = first.replace(year=first.year - years)
    except ValueError:
        return None
    try:
        hi = last.replace(year=last.year - years)
    except ValueError:
        hi = last.replace(year=last.year - years, day=28)
    return lo, hi
