"""The diary: one page per day per scope, in the persona's words.

Pages are written by encoding (memory/encoding/encoder.py): each conversation that closes updates
its day's page, so a page grows with the day instead of being rebuilt from the whole log. This
module reads them: by date, and by the days a message mentions ("what did I tell you yesterday?",
上周三, 2024-09-03, "last weekend", 前几天), parsed locally by memory/dates.py at no model cost.

A day or month named without a year ("May 4th", 5月) means the most recent year that has a page
or a memory of it: asked a year later, "what did we do on May 4th?" finds last year's page. A
span of days brings its pages newest first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo

from memory.dates import DateMention, day_bounds, find_dates
from memory.records import DiaryEntry
from memory.storage import BankStore

__all__ = ["MAX_PAGES", "YEARS_BACK", "Diary", "NamedDays", "pages_of"]

# Diary pages one message can bring into the prompt; the memory block's budget decides how much
# of each fits (bot/conversation/recollect.py).
MAX_PAGES = 6
# A day named without a year: how many years before the most recent one are looked at for a
# page or a memory (a query or two each, only while neither is found).
YEARS_BACK = 5


class Diary:
    def __init__(self, store: BankStore) -> None:
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
        return pages_of(await self.named(scope, text, now, tz))

    async def named(
        self, scope: str, text: str, now: datetime, tz: tzinfo | None
    ) -> list[NamedDays]:
        """The days `text` names that have begun, in the order named, each with its pages
        (at most MAX_PAGES in all)."""
        local = now.astimezone(tz)
        today = local.date()
        out: list[NamedDays] = []
        left = MAX_PAGES
        for mention in find_dates(text, local):
            named = await self.read(scope, mention, today, limit=left, tz=tz)
            if named is not None:
                out.append(named)
                left = max(left - len(named.pages), 0)
        return out

    async def read(
        self,
        scope: str,
        mention: DateMention,
        today: date,
        *,
        limit: int = MAX_PAGES,
        tz: tzinfo | None = None,
    ) -> NamedDays | None:
        """The days `mention` names, up to `today`, with their pages newest first (at most
        `limit`); None if none has begun. Named without a year: the days of the most recent
        year that has pages or memories for them (the days of `tz`, local time if None), at
        most YEARS_BACK years before the most recent one, else the most recent ones."""
        first, last = mention.days
        begun: NamedDays | None = None
        for back in range(YEARS_BACK + 1 if mention.yearless else 1):
            days = _years_before(first, last, back)
            if days is None:  # 29 February, in a year without one
                continue
            lo, hi = days[0], min(days[1], today)
            if lo > hi:
                continue
            if limit <= 0:
                return NamedDays(lo, hi, ())
            if lo == hi:
                entry = await self.store.diary_entry(scope, lo)
                found = [] if entry is None else [entry]
            else:
                newest = await self.store.diary_entries(
                    scope, before=hi + timedelta(days=1), limit=limit
                )
                found = [entry for entry in newest if entry.day >= lo]
            if found:
                return NamedDays(lo, hi, tuple(found[:limit]))
            if mention.yearless and await self.store.memories_between(
                scope, *day_bounds(lo, hi, tz), limit=1
            ):
                return NamedDays(lo, hi, ())  # no page, but memories of those days
            begun = begun or NamedDays(lo, hi, ())
        return begun


@dataclass(slots=True, frozen=True)
class NamedDays:
    """Days a message names, as the diary read them: `first` to `last` (up to today; for a
    day or month named without a year, of the year chosen), and their pages, newest first."""

    first: date
    last: date
    pages: tuple[DiaryEntry, ...]


def pages_of(named: Sequence[NamedDays]) -> list[DiaryEntry]:
    """The pages, in order, each once."""
    out: dict[date, DiaryEntry] = {}
    for days in named:
        for entry in days.pages:
            out.setdefault(entry.day, entry)
    return list(out.values())


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
