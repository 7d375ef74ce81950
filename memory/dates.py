"""Days, and spans of days, a chat message refers to, found locally in English and Chinese.

A persona keeps a diary per day; when a message names a day ("yesterday", "上周三",
"May 4th", "2024-09-03", "9月3日"...), that day's entry goes into the prompt. This runs on every
message, so it is a few precompiled regular expressions: a gate that most messages fail (no
digit, no "day", "week", no 天/月/号...: about 5-10 microseconds for 200 characters), fast scans
for the places a date could begin, the full pattern (English or Chinese) tried only there (about
50-70 microseconds for 200 characters that pass the gate), and small handlers that turn a match
into a calendar day or a span of days. No library, no model, no I/O, no global mutable state.

It would rather miss an ambiguous date than invent one: "you may go", "march on", "second
thoughts", "3/4 of the pizza", "一周三次", "3号线", "以前天天跑步" give nothing.

Semantics (``today`` is ``now.date()``: the caller passes ``now`` in the user's timezone):

* English relative words: today / tonight / this morning|afternoon|evening = today; yesterday /
  last night = -1; the day before yesterday = -2; tomorrow = +1; the day after tomorrow = +2;
  "N days ago" (digits, one..twelve, the teens, twenty, thirty, "a", "a couple of"), "N weeks
  ago", "a fortnight ago".
* English weekdays (full names only; "wed", "sat", "sun" are words too):
  "last Monday" / "this past Monday" = the most recent Monday strictly before today (said on a
  Monday: a week ago); "this Monday" = the Monday of the current ISO week (may be past or
  future); "next Monday" / "this coming Monday" = the first Monday strictly after today;
  "on Monday" = the most recent Monday strictly before today (past-leaning, since the bot
  recalls the past, and English names today "today", not "Monday"). A bare "Monday" without
  one of these words is not taken; neither is "the last Monday of ..." nor "on Mondays".
* Month and day: "May 4th", "May 4", "4 May", "4th of May", "the 4th of May",
  "May 4th, 2024", "Sept 3 2024" (full names and the usual abbreviations, case-insensitive).
  Without a year: the most recent such day not after today ("May 4th" said in January is last
  year's). The month words that are also ordinary words ("may", "march", "mar") count only
  with an ordinal ("may 4th"), a year, a capital letter ("May 4"), or after words a date
  follows ("is march 22", "on may 4", at the start); a bare day followed by a
  quantity word ("May 3 people", "June 3 times") or by a range ("May 4-6") is not taken.
  "of" needs an ordinal ("4th of May", not "4 of May").
* A bare ordinal: "the 14th", "on the 22nd", "Sunday the 13th" = that day of this month when
  not after today (past sense) or not gone by (future sense), else of the nearest month that
  has it; not a position ("the 3rd time", "the 2nd floor": only before punctuation, the end,
  or a few words such as "at", "and", "is", "morning").
* ISO-like: 2024-09-03, 2024/09/03, 2024.09.03 (the same separator twice; years 1900-2099).
  Numeric forms are read only when plain and said as a date: "on 20/12", "is 12/20/2026"
  (one number over 12 says which is the day); 3/4, 9/3/2024 are ambiguous and ignored, and
  "got 9/20 on the quiz" is a score.
* Chinese relative words: 今天 今日 今晚 今早 今夜 = today, 昨天 昨日 昨晚 昨夜 = -1,
  前天 = -2, 大前天 = -3, 明天 明日 明晚 明早 = +1, 后天 = +2, 大后天 = +3 (with guards for
  the words they hide in: 以前天天, 目前天气, 聪明天才, 然后天, 后天性...); "N天前",
  "N日前", "N周前", "N个星期前" (digits or 一..十, 两).
* Chinese weekdays: 上周三 / 上星期三 / 上礼拜三 / 上个星期三 = that weekday of the previous ISO
  week (上上周三: two weeks back); 这周三 / 本周三 / 这个星期三 = of the current ISO week;
  下周三 = of the next; 周三 / 星期三 / 礼拜三 alone = the most recent such weekday, today
  included. 日 and 天 are Sunday. Not taken: 每周三, 一周三次, 这周一直, 这周天天, 本周日程.
* Chinese month and day: 9月3日, 9月3号, 九月三日, 2024年9月3日, 二〇二四年九月三日; without
  a year the most recent such day not after today. 上个月3号, 这个月3号, 下个月3号 (上月,
  本月, 下月 too). A bare "3号" (or digits + 日: "3日") is that day of the current month when
  not after today, else of the most recent month that has it; not taken before 线 楼 房 门
  床 位 车 ... ("3号线", "一号线", "5号楼"), nor a Chinese numeral + 日 ("三日" is also "three
  days").
* Invalid dates (Feb 30, 13月, May 45) are ignored.

Spans (a mention with ``first``, its last day in ``day``), past-leaning like the rest:

* Vague: "a few days ago" and 前几天 / 几天前 = 5 to 2 days back; "several days ago" 7 to 3;
  "the other day" 7 to 1; "a few weeks ago" / 几周前 / 几个星期前 35 to 14; "several weeks
  ago" 49 to 21; 前两天 3 to 1; 前些天 / 前些日子 14 to 2; 前阵子 / 前段时间 / 前一阵 30 to 7;
  "the past few days" / 这几天 / 近几天 3 to 0; 这两天 2 to 0; "the past N days" N to 0; "the
  past week" 7 to 0. 前几天 after a noun ("考试前几天": before the exam) is not taken.
* Weeks (ISO, Monday to Sunday): "last week" / 上周 / 上个星期, "this week" / 这周 / 本周, "the
  week before last" / 上上周; "earlier this week" = Monday to yesterday; "early" / "late" /
  "the beginning" / "the end of" a week = Monday-Wednesday / Thursday-Sunday. Weekends:
  "last weekend" / "this past weekend" / 上周末 = the previous week's Saturday and Sunday,
  "this weekend" / 这周末 / 本周末 this week's, "over the weekend" the latest one begun.
* Months: "last month" / 上个月 / 上月, "this month" / 这个月 / 本月, "the month before last"
  / 上上个月; thirds: "early" / "the beginning of" / 初 / 上旬 = days 1-10, "mid" / 中 / 中旬
  = 11-20, "late" / "the end of" / 底 / 末 / 下旬 = 21 to the end ("early last month",
  上个月初, 本月底); "earlier this month" = the 1st to yesterday.
* Months by name: "in May", "during May", "early May", "the end of May", "May 2025", "last
  May" (the most recent May before this month; the others, the most recent May begun), "this
  May" (this year's), "next May" (the first after this month), "since May"; 5月, 五月份, 5月初,
  去年5月 (去年 今年 前年 明年 also before a full date: 去年5月3日), 2025年5月. A month's name
  alone ("May I", "March on") is not taken, nor 五月天, 一月一次, 三个月, nor a lowercase "may"
  or "march" after last / this / next / since ("this may help").
* Months and years back, said loosely: "two months ago" / 两个月前 / 半年前 = that day give or
  take 15 days; "a year ago" / 三年前 = that day give or take 30 (up to 99 months, 30 years);
  "a few months ago" / 几个月前 150 to 60 days, "a few years ago" / 几年前 about 5 to 2 years.
  Numbers in words up to twelve, the teens, twenty and thirty ("fifteen days ago"), and
  Chinese numerals (十天前, 两周前).
* Recently: "recently", "lately", "these days", "of late", 最近, 近来, 近期, 近日, 这些天, 这阵子,
  这段时间 = the last 14 days and today; 最近三天 / "the past 3 weeks" / "the past month" that
  many days back to today. 最近 as "nearest" (离这里最近, 最近的超市) is not taken.
* Years: "last year" / 去年, "this year" / 今年, "the year before last" / 前年 (大前年 too), "in
  2025" / "during 2025" / 2025年 / 二〇二五年, "earlier this year" (1 January to yesterday);
  thirds as months: "early" / 初 = January-April, "mid" = May-August, "late" / "the end of" /
  底 / 末 = September-December ("early 2024", 去年底, 年初 alone: this year's, or last year's
  while this one's has not begun); 上半年 / 下半年 = January-June / July-December. A bare
  "2025" is not taken. Not taken: 过去年代, 以前年轻, 如今年轻人.
* Seasons, meteorological and northern (spring March-May, summer June-August, autumn / fall
  September-November, winter December-February; a southern user's seasons are read the same):
  a winter belongs to the year of its December ("the winter of 2025", 2025年冬天: December
  2025 to February 2026). "last summer" / 上个夏天 = the latest summer ended; "this summer" /
  这个夏天 = the one under way, else the latest begun; "in the summer" / "during the winter" /
  冬天的时候 / 夏天里 = the latest begun (``yearless``); 去年夏天, 今年春天, 前年秋天, "summer
  2025", "the summer of 2025". A season alone ("summer dresses", 我喜欢冬天), "in fall", and
  "the fall of ..." are not taken.
* Since: "since May", "ever since last week", "since 2020", "since Monday", 自从五月, 五月以来,
  上周以来, 去年至今, 三月开始 = from the first day of what follows (or precedes) to today;
  said of a day still to come ("明天开始"), the day alone; in the future sense, 开始 after a
  day is the day something starts (周一开始新工作: the coming Monday) unless what follows has
  gone on since (周一开始就一直下雨).
* Parts of this month or week alone: "the end of the month" / 月底 / 月初 / "the beginning of
  the week" = this one's part, or (in the past sense) the previous one's while this one's has
  not begun; "later this week" / "later this month" = tomorrow to its end.
* Ahead: "next week" / 下周 / 下个星期 / 下周末 / "next weekend", "next month" / 下个月 / 下月初,
  "next year" / 明年 / 后年, "the week after next", "next May", "next summer" / 下个夏天 /
  明年夏天; "in 3 days" / "in two weeks" / "in a month" / "3 days from now" / "in 3 days' time"
  / 三天后 / 两周后 / 十天以后 / 两个月之后 / 半年后 = that day; "in a few days" / 几天后 = 2 to 5
  days ahead, "within a week" = today to 7 days ahead. "twice in a week" is not taken.
* Times of day, after one day or in its word: "tomorrow evening", "on Friday night", "today at
  noon", 明天晚上, 周五下午, "tonight", 明晚, 今早, "first thing tomorrow" give ``hours``:
  morning 6-12 (上午 8-12), noon / 中午 11-14, afternoon / 下午 12-18, 傍晚 17-20, evening /
  night / 晚上 / 夜里 18-24, 凌晨 0-6.
* Clock times (``clock_time``, for a due time: "at 3pm", "at 15:30", "8.30pm", "3.30" (a
  quarter's minutes after a dot), "9 o'clock", "at 8", "at six thirty", "at two-thirty", "at
  seven forty", "8ish", "3pm-ish", "noonish", "half past 7", "half-past 7", "half 8" (British:
  half past), "quarter to 8", "twenty to 11", "ten past 9", "20 past 1", "5 mins past 8",
  "quarter to noon" (11:45), "ten to midnight" (23:50), "at 7 45", "at 6 30pm", "at 12
  midnight" (23:59), "at 1700" (not 19xx or 20xx, years), "1400 hours", "at 15h30", "noon",
  "midnight", "at eight", 下午3点, 晚上八点半, 明晚8点, 3点15分,
  八点三刻, 3点1刻, 四点五十, 三点零五, 两点整, 七点多 (一点多 is "a bit more"), 下午三时
  and 15时30分 (时 with a part of the day or in digits: 一时半会 is "a while"), 差一刻八点 and
  七点差一刻 (7:45, 6:45: the hour's part of the day first), 十点过五分, 周六七点 and
  星期三十点 (a weekday's numeral is not the hour's), 晚上7:30 and 19：30 (a full-width
  colon)): the first one said,
  its words running to its am or pm, or to its part of the day said after "in the" ("at 6 in
  the morning"). An hour with a
  leading zero ("06:50") is the 24-hour clock's. An hour without am or pm is read in the part
  of the day said beside it (晚上8点, 明晚八点, 晚上7:30, "8 in the evening", "7 tonight"; 夜里 up
  to 4 is the small hours), else in the part said with its day (``hours``: "tomorrow evening at
  8" is 20:00), else from 1 to 6 in the afternoon and from 7 to 12 in the morning ("quarter to
  1" is 12:45); 12 am / 12 pm
  are midnight / noon, and "midnight" (晚上12点) said of a day is its last minute, 23:59. An
  hour in Chinese numerals is one alone (明天九点) unless a count comes before it (第三点,
  有五点, 这三点); 一点, 两点 need a part of the day, minutes, 钟, a day or its part before
  them or what starts then (明天两点, 两点开会; alone they are "a little", "two points"); no
  number is an hour before a noun it counts (3点建议, "at 3 people", "at 8%").
* Not understood: words that point at another date ("the day before", "考试三天后" is read
  as three days from now), "this time last year", solar terms and the lunar calendar.

A day or month said without a year is marked ``yearless``: its days are the most recent ones,
and the caller may look at earlier years (the diary does, for a day with no page).

Results come in order of appearance, each day or span once (its first mention), future days
included: the caller decides what to do with them (recall reads no day still to come).

The future sense (``future_spans``, for due dates: "my exam is on Tuesday"). The same words,
with the ambiguous ones turned forward, and only what is still to come:

* Weekdays: "next Tuesday" / "this coming Tuesday" = the first Tuesday strictly after today,
  as in the past sense (said on a Monday, "next Friday" is four days on: the nearest reading
  of an ambiguous English phrase; 下周五, of the next ISO week, is the unambiguous one);
  "this Tuesday" = the first Tuesday from today on (today included); "on Tuesday" = the first
  strictly after today (said on a Tuesday: a week on; today would be "today"); 周二 alone =
  the first from today on; 这周二 = of the current ISO week, or, once gone by, the coming one
  (said on a Sunday, 这周六 is the coming Saturday, as "this Saturday" is).
* A month and day without a year ("May 4th", 5月4日, 五月四号): this year's if still to come
  (today included), else next year's if at most 183 days ahead ("January 10th" said in
  November); otherwise it is a day gone by, and not returned. 3号 alone: this month's if not
  gone by, else the next month's that has it.
* Months, seasons and parts by name: "in May" / 5月 = this year's if May is under way or to
  come, else next year's; "in the summer" / 夏天的时候 = the one under way or the next; "this
  winter" = the one under way, else the next; 月底 / "the end of the month" / 年底 = this
  one's; "over the weekend" = this week's.
* A span under way begins today ("this week" said on a Wednesday: Wednesday to Sunday); spans
  that look back from now ("recently", "the past few days", 这几天, 前几天, "since May") and
  days gone by are left out.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta, tzinfo

__all__ = [
    "DATE_STAMP",
    "ClockTime",
    "DateMention",
    "clock_time",
    "day_bounds",
    "find_dates",
    "future_spans",
    "undated",
]

# The date a memory written by encoding starts with: "2026-03-02: ...", "2025-03-14（星期五）：...".
DATE_STAMP = re.compile(r"^\s*\d{4}-\d{2}-\d{2}(?:\s*[（(][^）)]*[）)])?\s*[:：]\s*")


def undated(text: str) -> str:
    """A memory's text without the date encoding starts it with."""
    return DATE_STAMP.sub("", text, count=1)


def day_bounds(first: date, last: date, tz: tzinfo | None) -> tuple[datetime, datetime]:
    """The moments the days `first` to `last` of `tz` (the local time zone if None) begin and
    end: midnight of the first, and midnight after the last."""

    def midnight(day: date) -> datetime:
        start = datetime.combine(day, time.min, tz)
        return start if tz is not None else start.astimezone()

    return midnight(first), midnight(last + timedelta(days=1))


@dataclass(slots=True, frozen=True)
class DateMention:
    """One day, or one span of days, a message refers to."""

    day: date  # the calendar day meant; for a span, its last day
    text: str  # the words that said it, as in the message
    start: int  # offset in the message
    first: date | None = None  # a span's first day; None when one day is meant
    # Said without a year ("May 4th", "in May", "5月"): `first` and `day` are the most recent
    # such days, and an earlier year may be meant.
    yearless: bool = False
    # A time of day said with one day ("tomorrow evening", 明天晚上, "tonight"): the hours
    # [from, to) of that day, 24 being the midnight after it.
    hours: tuple[int, int] | None = None

    @property
    def days(self) -> tuple[date, date]:
        """The first and the last day meant (the same day when one day is meant)."""
        return (self.day if self.first is None else self.first, self.day)

    def bounds(self, tz: tzinfo | None) -> tuple[datetime, datetime]:
        """The moments the days meant begin and end in `tz` (local time if None), narrowed to
        the hours when a time of day was said."""
        start, end = day_bounds(*self.days, tz)
        if self.hours is not None:
            start, end = (
                start + timedelta(hours=self.hours[0]),
                start + timedelta(hours=self.hours[1]),
            )
        return start, end


# --- the pattern -------------------------------------------------------------------------------

# ASCII word boundaries: Python's \b sees Chinese characters as word characters, so "我today" or
# "昨天yesterday" would have no boundary.
_B0 = r"(?<![A-Za-z0-9])"
_B1 = r"(?![A-Za-z0-9])"

_EN_NUMBERS: dict[str, int] = {
    "a": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "a couple of": 2,
    "a couple": 2,
    "couple of": 2,
}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = (
    r"january|february|march|april|may|june|july|august|september|october|november|december"
    r"|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec"
)
_MONTH_KEYS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# Month words that are also everyday English words.
_AMBIGUOUS_MONTHS = frozenset({"may", "march", "mar"})
_EN_RELATIVE: dict[str, int] = {
    "today": 0,
    "tonight": 0,
    "this morning": 0,
    "this afternoon": 0,
    "this evening": 0,
    "yesterday": -1,
    "last night": -1,
    "day before yesterday": -2,
    "tomorrow": 1,
    "day after tomorrow": 2,
}
_ZH_RELATIVE: dict[str, int] = {
    "大前天": -3,
    "前天": -2,
    "昨天": -1,
    "昨日": -1,
    "昨晚": -1,
    "昨夜": -1,
    "今天": 0,
    "今日": 0,
    "今晚": 0,
    "今早": 0,
    "今夜": 0,
    "明天": 1,
    "明日": 1,
    "明晚": 1,
    "明早": 1,
    "后天": 2,
    "大后天": 3,
}
_ZH_DIGITS: dict[str, int] = {
    "\u3007": 0,  # ideographic zero, as in 二〇二四
    "零": 0,
    "一": 1,
    "二": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_ZH_WEEKDAYS: dict[str, int] = {
    "一": 0,
    "二": 1,
    "三": 2,
    "四": 3,
    "五": 4,
    "六": 5,
    "日": 6,
    "天": 6,
}
_ZH_WEEK_SHIFT: dict[str, int] = {
    "上上": -2,
    "上": -1,
    "这": 0,
    "本": 0,
    "下": 1,
    "下下": 2,
}

# Vague spans, as days back from today (first, last): "a few days ago" is two to five days back.
_FEW_DAYS_AGO = (-5, -2)
_FEW_WEEKS_AGO = (-35, -14)
_EN_FEW: dict[str, tuple[int, int]] = {
    "few days": _FEW_DAYS_AGO,
    "several days": (-7, -3),
    "few weeks": _FEW_WEEKS_AGO,
    "several weeks": (-49, -21),
    "few months": (-150, -60),
    "several months": (-210, -90),
    "few years": (-1826, -730),
    "several years": (-2557, -1095),
}
_THE_OTHER_DAY = (-7, -1)
# A span found: its first and last days, and whether it was said without a year.
_Span = tuple[date, date, bool]
_A_WHILE_AGO = (-30, -7)
_ZH_FEW: dict[str, tuple[int, int]] = {
    "前几天": _FEW_DAYS_AGO,
    "几天前": _FEW_DAYS_AGO,
    "前两天": (-3, -1),
    "前些天": (-14, -2),
    "前些日子": (-14, -2),
    "前一阵": _A_WHILE_AGO,
    "前一阵子": _A_WHILE_AGO,
    "前阵子": _A_WHILE_AGO,
    "前段时间": _A_WHILE_AGO,
    "前些时候": _A_WHILE_AGO,
    "这几天": (-3, 0),
    "近几天": (-3, 0),
    "这两天": (-2, 0),
    "近两天": (-2, 0),
    "几个月前": _EN_FEW["few months"],
    "几年前": _EN_FEW["few years"],
}
# "recently", "lately", 最近, 近来: the last two weeks.
_RECENTLY = (-14, 0)
# "two months ago", 三年前: that day, give or take this many days (a month or a year back is
# said loosely; a day is said with days or weeks).
_MONTHS_AGO_SLACK = 15
_YEARS_AGO_SLACK = 30
# The most months and years counted ("in 9999 years" is not a day worth reading).
_MOST_MONTHS = 99
_MOST_YEARS = 30
# A day of the year said without one, in the future sense ("my exam is on May 4th"): this
# year's if still to come, else next year's if at most this many days ahead ("January 10th"
# said in November); further ahead, it is a day gone by.
_AHEAD_AT_MOST = 183
# What may come before 前几天 and its kin: the start, a pronoun or a particle ("我们前几天"), not
# a noun ("考试前几天" is a few days before the exam).
_ZH_FEW_AFTER = frozenset("我你他她它们咱就在是了也都还才刚那说和跟与及而但又早好最近")
# Parts of a month (thirds) and of a week (days from Monday).
_MONTH_PARTS: dict[str, int] = {
    "early": 0,
    "beginning": 0,
    "start": 0,
    "初": 0,
    "上旬": 0,
    "mid": 1,
    "middle": 1,
    "中": 1,
    "中旬": 1,
    "late": 2,
    "end": 2,
    "底": 2,
    "末": 2,
    "下旬": 2,
}
_WEEK_PARTS: tuple[tuple[int, int], ...] = ((0, 2), (2, 4), (3, 6))
# Thirds of a year, as months: "early 2025" is January to April, 年底 September to December.
_YEAR_PARTS: tuple[tuple[int, int], ...] = ((1, 4), (5, 8), (9, 12))
_ZH_YEAR_HALVES: dict[str, tuple[int, int]] = {"上半年": (1, 6), "下半年": (7, 12)}
_ZH_YEARS: dict[str, int] = {"大前": -3, "前": -2, "去": -1, "今": 0, "明": 1, "后": 2, "大后": 3}
# Seasons, meteorological and northern (the hemisphere of most users; a southern "summer" is
# read as June to August too): each begins on the 1st of its month and lasts three months. A
# winter belongs to the year of its December: "the winter of 2025" is December 2025 to
# February 2026.
_SEASONS: dict[str, int] = {
    "spring": 0,
    "summer": 1,
    "autumn": 2,
    "fall": 2,
    "winter": 3,
    "春": 0,
    "夏": 1,
    "秋": 2,
    "冬": 3,
}
_SEASON_FIRST_MONTH = (3, 6, 9, 12)
# Times of day said after a day ("tomorrow evening", 明天晚上) or in its word ("tonight", 明晚):
# hours [from, to) of that day.
_HOURS: dict[str, tuple[int, int]] = {
    "morning": (6, 12),
    "noon": (11, 14),
    "afternoon": (12, 18),
    "evening": (18, 24),
    "night": (18, 24),
    "tonight": (18, 24),
    "早上": (6, 12),
    "早晨": (6, 12),
    "上午": (8, 12),
    "中午": (11, 14),
    "下午": (12, 18),
    "傍晚": (17, 20),
    "晚上": (18, 24),
    "夜里": (18, 24),
    "夜间": (18, 24),
    "凌晨": (0, 6),
    "晚": (18, 24),
    "夜": (18, 24),
    "早": (6, 12),
}

_ZH_NUM = r"[一二三四五六七八九十廿卅]{1,3}"  # a day or month number in Chinese numerals
_NUM_BEFORE = r"(?<![0-9一二两三四五六七八九十廿卅百千万几多第\u3007零.:/-])"  # not in a number

# A count in English words or digits ("a couple of", "three", "12").
_EN_NUM = "|".join(
    [r"\d{1,4}", *sorted((w.replace(" ", r"\s+") for w in _EN_NUMBERS), key=len, reverse=True)]
)
# 下 after 一 is "a little" (看一下周末的安排: look at the weekend's plans), not "next".
_NOT_A_LITTLE = r"(?<![一等])"

# Characters before 前天 / 后天 / 明天 / 今天 that make it part of another word.
_ZH_REL_BLOCKED_BEFORE: dict[str, str] = {
    "前": "以之目提面眼事空当跟先向往日生从门胸朝",
    "后": "先以之然最背落午随而今此其前",
    "明": "聪光文透表声证发精英鲜分清黎贤开简申阐查标注失昌神鸣照",
    "今": "如古迄",
}
# Characters before 去年 / 前年 / 今年 / 明年 / 后年 that make it part of another word (过去年代,
# 以前年轻, 如今年轻人, 然后年底: then at the year's end).
_ZH_YEAR_BLOCKED_BEFORE: dict[str, str] = {
    "去": "过失回离死",
    "前": "以之目提从先面眼事当跟向往生",
    "今": "如古迄至",
    "明": _ZH_REL_BLOCKED_BEFORE["明"],
    "后": _ZH_REL_BLOCKED_BEFORE["后"],
}
# 去年, 前年, 大前年... as they begin a year's words.
_ZH_RELATIVE_YEAR = "|".join(
    [
        "大前",
        "大后",
        *(f"(?<![{before}]){word}" for word, before in _ZH_YEAR_BLOCKED_BEFORE.items()),
    ]
)

# Each alternative is one named group: its name says which handler reads it. Where two can
# match at one place the first listed wins, so the longer readings come first.
_ALTERNATIVES = (
    # English relative words.
    rf"(?P<en_rel>{_B0}(?:(?:the\s+)?day\s+before\s+yesterday|(?:the\s+)?day\s+after"
    r"\s+tomorrow|today|tonight|this\s+(?:morning|afternoon|evening)|yesterday|tomorrow"
    rf"|last\s+night){_B1})",
    # N days / weeks / months / years ago.
    rf"(?P<en_ago>{_B0}(?P<ea_n>{_EN_NUM})\s+"
    r"(?P<ea_u>days?|weeks?|fortnights?|months?|years?)\s+ago" + _B1 + ")",
    # In N days, within a week, in a few weeks' time, 3 days from now.
    rf"(?P<en_in>{_B0}(?<!times\s)(?<!once\s)(?<!twice\s)(?P<ei_lead>in|within)\s+(?:(?P<ei_few>"
    rf"a\s+few|few|several)|(?P<ei_n>{_EN_NUM}))\s+(?P<ei_u>days?|weeks?|fortnights?|months?"
    rf"|years?)(?:'?\s+time)?{_B1}|{_B0}(?P<ei_n2>{_EN_NUM})\s+(?P<ei_u2>days?|weeks?|months?"
    rf"|years?)\s+from\s+(?:now|today){_B1})",
    # A bare ordinal, the day of this month or the next: "the 14th", "on the 22nd", "Sunday
    # the 13th"; not a position ("the 3rd time", "the 2nd floor").
    # Chat leaves "the" out after "on" or a weekday: "on 11th", "friday 13th".
    rf"(?P<en_ord>{_B0}(?:(?:on\s+)?(?:{'|'.join(_WEEKDAYS)})\s+(?:the\s+)?|on\s+(?:the\s+)?"
    r"|the\s+)"
    r"(?P<eo_day>\d{1,2})(?:st|nd|rd|th)(?![A-Za-z0-9])(?!\s+of\s)"
    r"(?=\s*(?:$|[^\sA-Za-z0-9]|(?:at|and|or|is|was|in|for|to|so|but|then|morning|afternoon"
    r"|evening|night|i|we|my|lol|haha|btw|this|next|too|already|right|around|from|until|till"
    r"|before|after|by|with|if|when|ugh|omg|yay|finally|wish|pray|ngl|tbh|lmao|fml|cant|can't"
    r"|im|i'm|that|about|because|cos|bc|as|since|pls|please|against|vs|versus)(?![A-Za-z])"
    # its clock time right after it: "the 9th 10 am", "on the 20th 9:15"
    r"|\d{1,2}(?:[:.]\d\d\s*(?:[ap]\.?m(?![a-z]))?|\s*[ap]\.?m(?![a-z]))(?!\d))))",
    # last / this / next / on / since + weekday.
    rf"(?P<en_wd>(?<!the\s){_B0}(?P<ew_mod>last|this\s+past|this\s+coming|this|next|on"
    rf"|(?:ever\s+)?since)\s+(?P<ew_day>{'|'.join(_WEEKDAYS)}){_B1}(?!\s+of{_B1}))",
    # Month day [year]: May 4th, Sept 3 2024.
    rf"(?P<en_md>{_B0}(?P<em_mon>{_MONTHS})\.?\s+(?P<em_day>\d{{1,2}})"
    rf"(?P<em_ord>st|nd|rd|th)?{_B1}(?![.:/\-\u2013]\d)"
    rf"(?:,?\s+(?P<em_year>(?:19|20)\d\d){_B1})?)",
    # [the] day[th] [of] Month [year]: 4 May, the 4th of May, 4th May 2024.
    rf"(?P<en_dm>{_B0}(?<![.:/-])(?:the\s+)?(?P<ed_day>\d{{1,2}})"
    rf"(?P<ed_ord>st|nd|rd|th)?(?P<ed_of>\s+of)?\s+(?P<ed_mon>{_MONTHS}){_B1}\.?"
    rf"(?:,?\s+(?P<ed_year>(?:19|20)\d\d){_B1})?)",
    # Spans: a few / several days, weeks, months or years ago; the other day.
    rf"(?P<en_few>{_B0}(?:a\s+)?(?P<ef_n>few|several)\s+(?P<ef_u>days|weeks|months|years)"
    rf"\s+ago{_B1}|{_B0}the\s+other\s+day{_B1})",
    # The past few days, the last 3 weeks, these past couple of days, the past month.
    rf"(?P<en_past>{_B0}(?:(?:the|these)\s+)?(?:past|last)\s+(?P<es_n>few|couple\s+of"
    r"|\d{1,2}|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+(?P<es_u>days"
    rf"|weeks|months){_B1}|{_B0}(?:the|this)\s+past\s+(?P<es_u1>week|month|year){_B1})",
    # Recently, lately, these days.
    rf"(?P<en_recent>{_B0}(?:recently|lately|these\s+days|of\s+late|in\s+recent\s+(?:days"
    rf"|weeks)){_B1})",
    # Last weekend, this past weekend, this weekend, over the weekend.
    rf"(?P<en_wkend>{_B0}(?P<ee_which>last|this\s+past|this|next|(?:over|at|on|during)\s+the)"
    rf"\s+weekend{_B1})",
    # Last week, earlier this week, early last month, the end of the month, next year, the
    # week before last.
    rf"(?P<en_per>{_B0}(?:the\s+)?(?P<ep_rel_unit>week|month|year)\s+(?P<ep_rel>before\s+last"
    rf"|after\s+next){_B1}|{_B0}(?:(?P<ep_part>early|earlier|later|late|mid|(?:at\s+)?"
    r"(?:the\s+)?(?:beginning|start|end|middle)\s+of)(?:\s+|-))?(?P<ep_which>last|this|next"
    rf"|the)\s+(?P<ep_unit>week|month|year){_B1}"
    rf"|{_B0}earlier\s+in\s+the\s+(?P<ep_in>week|month|year){_B1})",
    # Months by name: in May, last March, early June, the end of May, May 2025, since May (not
    # "May 4": a day).
    rf"(?P<en_mon>{_B0}(?:(?P<eo_lead>in|during|back\s+in|last|this|next|(?:ever\s+)?since)"
    r"\s+)?(?:(?P<eo_part>early|late|mid|(?:at\s+)?the\s+(?:beginning|start|end|middle)\s+of)"
    rf"(?:\s+|-))?(?P<eo_mon>{_MONTHS}){_B1}\.?(?!\s*\d{{1,2}}(?![0-9]))"
    rf"(?:,?\s+(?P<eo_year>(?:19|20)\d\d){_B1})?)",
    # Seasons: last summer, this spring, in the winter, the summer of 2025.
    rf"(?P<en_season>{_B0}(?:(?P<es_lead>in|during|over|through|throughout|back\s+in"
    r"|(?:ever\s+)?since|last|this\s+past|this\s+coming|this|next)\s+)?(?:(?P<es_the>the)\s+)?"
    r"(?P<es_name>spring|summer|autumn|fall|winter)(?:\s+(?:of\s+)?(?P<es_year>(?:19|20)\d\d)"
    rf"(?![0-9]))?{_B1}(?!\s+of{_B1}(?!\s+(?:19|20)\d\d)))",
    # Whole years: in 2025, since 2020, in early 2024.
    rf"(?P<en_year>{_B0}(?P<ey_lead>in|during|throughout|back\s+in|(?:ever\s+)?since)\s+"
    r"(?:(?P<ey_part>early|late|mid)(?:\s+|-))?(?P<ey_year>(?:19|20)\d\d)"
    rf"{_B1}(?![.:/\-\u2013]\d))",
    # 2024-09-03, 2024/09/03, 2024.09.03.
    r"(?P<iso>(?<![0-9./-])(?P<is_y>(?:19|20)\d\d)(?P<is_sep>[-/.])(?P<is_m>\d{1,2})"
    r"(?P=is_sep)(?P<is_d>\d{1,2})(?![0-9])(?![./-]\d))",
    # 20/12, 12/20/2026: a day and a month only one way round (20/12), after a date's words.
    r"(?P<num>(?<![0-9./:-])(?P<nu_a>\d{1,2})/(?P<nu_b>\d{1,2})(?:/(?P<nu_y>(?:19|20)?\d\d))?"
    r"(?![0-9])(?![./-]\d))",
    # [2024年]9月3日, 九月三号, 明年5月4日.
    rf"(?P<zh_md>{_NUM_BEFORE}(?:(?:(?P<zm_y>\d{{4}}|[\u3007零一二三四五六七八九]{{4}})"
    r"|(?P<zm_ry>去|今|明|(?<![以之目提从先])前))\s*年\s*)?"
    rf"(?P<zm_m>\d{{1,2}}|{_ZH_NUM})\s*月份?\s*(?P<zm_d>\d{{1,2}}|{_ZH_NUM})\s*[日号號])",
    # 上个月3号, 这个月3号, 本月3日.
    rf"(?P<zh_mo>(?P<zo_mod>上上个?|上个?|这个?|本|下下个?|下个?)月的?\s*"
    rf"(?P<zo_d>\d{{1,2}}|{_ZH_NUM})\s*[日号號])",
    # 上个月, 上月初, 这个月底, 本月中旬, 下个月 (not 这个月饼).
    rf"(?P<zh_mspan>(?P<zp_mod>上上个?|上个?|这个?|本|{_NOT_A_LITTLE}下下个?|{_NOT_A_LITTLE}"
    r"下个?)月份?(?P<zp_part>初|中旬|上旬|下旬|中|底|末)?"
    r"(?![饼亮光球台票嫂薪子\d一二三四五六七八九十廿卅]))",
    # 今天, 昨天, 前天, ... (guards in the handler).
    r"(?P<zh_rel>大前天|大后天|前天|后天|昨天|昨日|昨晚|昨夜|今天|今日|今晚|今早|今夜"
    r"|明天|明日|明晚|明早)",
    # N天前, 两周前, 三个星期前, 两个月前, 半年前.
    rf"(?P<zh_ago>{_NUM_BEFORE}(?P<za_n>\d{{1,4}}|[一二三四五六七八九十两]{{1,3}}|半)\s*"
    r"(?:(?P<za_d>[天日])|(?P<za_w>个?(?:星期|礼拜)|周)|(?P<za_m>个多?月)|(?P<za_y>多?年))"
    r"\s*之?前(?!往))",
    # 三天后, 两周后, 十天以后, 两个月之后, 几天后.
    rf"(?P<zh_after>{_NUM_BEFORE}(?P<zf_n>\d{{1,4}}|[一二三四五六七八九十两]{{1,3}}|半|几)\s*"
    r"(?:(?P<zf_d>[天日])|(?P<zf_w>个?(?:星期|礼拜)|周)|(?P<zf_m>个多?月)|(?P<zf_y>年))"
    r"\s*[之以]?后(?![来面边头续果者天]))",
    # 最近, 近来, 这些天, 最近三天.
    r"(?P<zh_recent>(?<![离距比较得里个])最近\s*(?P<zr_n>\d{1,2}|[一二三四五六七八九十两])\s*"
    r"(?:(?P<zr_d>天)|(?P<zr_w>个?(?:星期|礼拜)|周)|(?P<zr_m>个月))"
    r"|(?<![离距比较得里个])最近(?![的点处距些])(?!这?[几两]天)|近来|近期|近日|这些天|这些日子"
    r"|这阵子|这段时间)",
    # 前几天, 前些日子, 这两天, 几天前, 几个星期前 (guards in the handler).
    r"(?P<zh_few>前几天|前两天|前些天|前些日子|前一阵子?|前阵子|前段时间|前些时候|这几天|这两天"
    r"|近几天|近两天|几天之?前|几个?(?:星期|礼拜)之?前|几周之?前|几个月之?前|几年之?前)(?!往)",
    # [上|这|下]周三, 星期天, 礼拜日.
    r"(?P<zh_wk>(?:(?P<zw_mod>上上个?|上个?|这个?|本|下下个?|下个?)"
    r"|(?<![0-9一二两三四五六七八九十几每数半个上下这本隔第整大小]))"
    r"(?:周|星期|礼拜)(?P<zw_day>[一二三四五六日天])"
    r"(?![次遍趟顿个名位年月周岁本件只条张场节号程常期子志历])(?!记(?!得))(?!天(?!气))"
    r"(?!回(?![家来去国老京沪校学宿趟一]))"  # 周日回家 is Sunday's; 三回 alone is three times
    r"(?!(?<=天)气))",  # 上周天气: last week's weather
    # 上周, 上周末, 上个星期, 本周末, 下周 (not 上周三: a day; nor 这周期).
    rf"(?P<zh_wspan>(?P<zs_mod>上上个?|上个?|这个?|本|{_NOT_A_LITTLE}下下个?|{_NOT_A_LITTLE}"
    r"下个?)(?:周|星期|礼拜)(?P<zs_end>末)?(?![一二三四五六日期年岁边报刊会])(?!天(?!气)))",
    # Months: 5月, 五月份, 去年5月, 2025年5月初 (not 5月3日: a day; nor 五月天).
    rf"(?P<zh_mon>{_NUM_BEFORE}(?<![个每几这上下本半哪正腊闰])(?:(?:(?P<zn_y>\d{{4}}"
    r"|[\u3007零一二三四五六七八九]{4})|(?P<zn_ry>去|今|明|(?<![以之目提从先])前))\s*年\s*)?"
    r"(?P<zn_m>\d{1,2}|十[一二]?|[一二三四五六七八九])\s*月份?(?P<zn_part>初|中旬|上旬|下旬|中|底|末)?"
    r"(?![\d一二两三四五六七八九十廿卅几日号號天亮光饼球票薪嫂]))",
    # Seasons: 去年夏天, 今年春天, 这个冬天, 冬天的时候 (a season alone is not a date).
    rf"(?P<zh_season>{_NUM_BEFORE}(?:(?:(?P<zz_y>(?:19|20)\d\d|[一二][\u3007零一二三四五六七八九]"
    rf"{{3}})\s*年|(?P<zz_ry>{_ZH_RELATIVE_YEAR})年)的?|(?P<zz_mod>上个?|这个?|下个?))?"
    r"(?<!立)(?P<zz_s>[春夏秋冬])[天季](?P<zz_when>的时候|时候|那时候?|那会儿?|期间|里)?)",
    # Years: 去年, 前年, 今年底, 2025年, 明年上半年.
    rf"(?P<zh_year>{_NUM_BEFORE}(?:(?P<zy_y>(?:19|20)\d\d|[一二][\u3007零一二三四五六七八九]{{3}})"
    rf"|(?P<zy_ry>{_ZH_RELATIVE_YEAR}))\s*年(?:(?P<zy_part>初|底|末)|的?(?P<zy_half>[上下]半年))?"
    r"(?![\d\u3007零一二两三四五六七八九十月轻纪龄级代前后头]))",
    # 年底, 年初 alone (去年底 is a year's, read above): this year's.
    r"(?P<zh_ypart>(?<![\d\u3007零一二两三四五六七八九十每半几多个新过跨百千万当同])年"
    r"(?P<zq_ypart>初|底|末)(?![一二三四五六七八九十\d]))",
    # 月底, 月初 alone: this month's.
    r"(?P<zh_mpart>(?<![\d\u3007零一二两三四五六七八九十廿卅个上下这本每半几多岁日正腊闰年])月"
    r"(?P<zq_mpart>初|中旬|上旬|下旬|底|末)(?![\d一二三四五六七八九十]))",
    # 3号, 三号, 3日 alone (guards in the handler too).
    rf"(?P<zh_day>(?<![A-Za-z]){_NUM_BEFORE}(?<![月年])(?P<zd_n>\d{{1,2}}|{_ZH_NUM})"
    r"(?P<zd_s>[号號日])"
    r"(?![线綫楼樓房间門门床位座机車车厅馆台口码碼桌柜箱球员字种型院厂站仓单元栋室"
    r"店铺窗选电池病]))",
)


def _pattern(kinds: frozenset[str]) -> re.Pattern[str]:
    return re.compile("|".join(a for a in _ALTERNATIVES if a[4 : a.index(">")] in kinds))


_KINDS = frozenset(a[4 : a.index(">")] for a in _ALTERNATIVES)
# Tried where an English word begins, and where a digit or a Chinese character does: each tries
# only the alternatives that can begin there (the cost of a try grows with their number).
_EN_PATTERN = _pattern(frozenset(k for k in _KINDS if k.startswith("en_")))
_ZH_PATTERN = _pattern(
    frozenset(k for k in _KINDS if not k.startswith("en_")) | {"en_ago", "en_dm", "en_in"}
)

# Before a lowercase "march 22", "may 4": words after which a month is meant ("is march 22",
# "on may 4"), not a verb ("we march 22 miles", "you may 4").
_DATE_BEFORE = re.compile(
    r"(?:^|[,:(]|(?<![a-z])(?:is|'s|are|be|on|by|until|till|before|after|from|since|for|of|due"
    r"|starting|through|thru|out|back|home|monday|tuesday|wednesday|thursday|friday|saturday"
    r"|sunday|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun))\s*$"
)
# After a bare "May 3": a quantity, not a date.
_QUANTITY_AFTER = re.compile(
    r"\s+(?:of|times?|more|less|people|persons?|men|women|kids|children|guys|hours?"
    r"|hrs?|minutes?|mins?|seconds?|secs?|days?|weeks?|months?|years?|miles?|km|kilometers?"
    r"|meters?|kg|kilos?|pounds?|lbs?|percent|dollars?|bucks|euros?|yuan|pieces?|items?"
    r"|things|cups?|glasses?|bottles?|slices?|x)(?![A-Za-z])"
)
# After "May 3" or "March 3" also: "may 3 or 4 of us", "march 3 to 5 km" ("dec 17 and the deck"
# is a day).
_CONNECTIVE_AFTER = re.compile(r"\s+(?:or|to|and)(?![A-Za-z])")
# Where a match may begin. The patterns' lookbehinds keep the regex engine from skipping ahead, so
# scanning them over every position costs about a microsecond per character. These two are scanned
# fast (each alternative begins with a literal, or the pattern is one character class, which lets
# the engine skip positions), and a pattern is only tried where they hit: _ZH_PATTERN at digits
# and Chinese characters, _EN_PATTERN at English words. Their English words
# consume letters only, so no match can begin inside one of their hits.
_ZH_ANCHOR = re.compile(
    r"[\d大上下这本前后今明昨去几近周星礼\u3007零一二三四五六七八九十两廿卅半最年月春夏秋冬]"
)
_EN_ANCHOR = re.compile(
    "|".join(
        [
            *("today", "tonight", "tomorrow", "yesterday", "couple"),
            *(rf"{word}(?=\s)" for word in ("the", "day", "this", "last", "next", "on")),
            *(rf"{word}(?=\s)" for word in _EN_NUMBERS if " " not in word),
            *(
                rf"{word}(?=\s)"
                for word in ("few", "several", "past", "these", "over", "during", "early")
            ),
            *(rf"{word}(?=\s)" for word in ("earlier", "late", "back", "week", "month")),
            *(rf"{word}(?=\s)" for word in ("later", "since", "ever", "in", "within", "end")),
            *(
                rf"{word}(?=\s)"
                for word in ("through", "throughout", "year", *filter(str.isascii, _SEASONS))
            ),
            *("recently", "lately", r"of(?=\s+late)"),
            r"at(?=\s+the\s)",
            r"mid(?=[\s-])",
            *(rf"{month}(?=[a-z]*\.?\s+\d)" for month in _MONTH_KEYS),
            *(rf"{day}(?=\s+(?:the\s+)?\d)" for day in _WEEKDAYS),
        ]
    )
)
# Something every date this module knows has: a digit, a weekday or "today" ("day"), "ago",
# "week", "year", a season, a month's name after the words that make it a date ("in May")...;
# in Chinese 天日晚早夜 (今天 今早 昨晚), 前后 (三天前, 三天后), 周期拜 (周三 星期三 礼拜三), 月,
# 号, 年, 季 (冬季), 近 (最近), 阵段 (这阵子, 这段时间).
# Most messages have none, and cost these two fast scans.
_GATE_CHARS = re.compile(r"[\d天日晚早夜前后周期拜月号號年季近阵段]")
_GATE_WORDS = re.compile(
    r"day|night|tomorrow|morning|afternoon|evening|ago|week|month|year|recent|lately"
    r"|spring|summer|autumn|fall|winter"
    rf"|(?:in|during|last|this|next|since|early|late|mid|of)[\s-]+(?:{'|'.join(_MONTH_KEYS)})"
)
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
# Traditional forms of the characters of days and hours (禮拜五, 下週一, 兩點鐘), read as the
# simplified ones; one character for one, so offsets stay the message's.
_TRADITIONAL = str.maketrans("禮週個後這幾兩鐘來", "礼周个后这几两钟来")
# After 周一 / 星期一: 一 begins another word (这周一直很忙, 这周一起去).
_AFTER_WEEKDAY_ONE = frozenset("直起样共般切些定块同次遍趟点会")
# After a bare digit + 日: a duration, not a day (3日游, 3日内).
_AFTER_BARE_RI = frozenset("游内后前间以之来左右多余起止")
# "Since" around a day or span: it then runs from there to today ("since May", 自从五月,
# 五月以来, 上周以来). English "since" before the words, Chinese before or after them.
_SINCE_BEFORE = re.compile(r"(?:(?<![a-z])(?:ever\s+)?since\s+|(?:自从|自打|打从)\s*)$")
_SINCE_AFTER = re.compile(r"\s*(?:以来|至今|到现在|开始)")
# 开始 after a day read ahead is the day something starts (周一开始新工作), unless what follows
# has gone on since (周一开始就一直下雨).
_STARTS_ZH = re.compile(r"\s*开始(?!\s*(?:就|都|一直|便|已经|到现在|至今))")
# A time of day after a day: "tomorrow evening", "on Friday night", 明天晚上.
_HOURS_AFTER = re.compile(
    r"\s+(?:in\s+the\s+|at\s+)?(?P<en>morning|afternoon|evening|night|noon)(?![a-z])"
    r"|\s*的?(?P<zh>早上|早晨|上午|中午|下午|傍晚|晚上|夜里|夜间|凌晨)"
    r"|\s+(?P<first>first\s+thing)(?![a-z])"
)
# "First thing" before a day is its morning: "first thing tomorrow", "first thing on monday".
_FIRST_THING_BEFORE = re.compile(r"(?<![a-z])first\s+thing\s+(?:on\s+)?$")


# --- helpers ---------------------------------------------------------------------------------


def _zh_int(s: str) -> int | None:
    """An integer written in digits or Chinese numerals (up to 39, or four digit characters)."""
    if s.isdigit():
        return int(s)
    if s == "两":
        return 2
    if len(s) == 1 and s in _ZH_DIGITS:
        return _ZH_DIGITS[s]
    if len(s) == 4 and all(c in _ZH_DIGITS for c in s):  # a year: 二〇二四
        return int("".join(str(_ZH_DIGITS[c]) for c in s))
    if "十" in s:
        left, _, right = s.partition("十")
        if len(left) > 1 or len(right) > 1 or "十" in right:
            return None
        high = 1 if not left else _ZH_DIGITS.get(left)
        low = 0 if not right else _ZH_DIGITS.get(right)
    elif s[0] in "廿卅" and len(s) <= 2:
        high = 2 if s[0] == "廿" else 3
        low = 0 if len(s) == 1 else _ZH_DIGITS.get(s[1])
    else:
        return None
    if high is None or low is None or high == 0 or low > 9:
        return None
    return high * 10 + low


def _make_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except (ValueError, OverflowError):
        return None


def _recent_month_day(today: date, month: int, day: int) -> date | None:
    """The most recent month/day not after today (back up to eight years, for 29 February)."""
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    for year in range(today.year, today.year - 9, -1):
        found = _make_date(year, month, day)
        if found is not None and found <= today:
            return found
    return None


def _add_months(year: int, month: int, delta: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


def _recent_day_of_month(today: date, day: int) -> date | None:
    """That day of this month if not after today, else of the most recent month that has it."""
    if not 1 <= day <= 31:
        return None
    for back in range(12):
        year, month = _add_months(today.year, today.month, -back)
        found = _make_date(year, month, day)
        if found is not None and found <= today:
            return found
    return None


def _shift(today: date, days: int) -> date | None:
    try:
        return today + timedelta(days=days)
    except OverflowError:
        return None


def _month_number(word: str) -> int:
    return _MONTH_KEYS.index(word[:3].lower()) + 1


def _days_back(today: date, span: tuple[int, int]) -> _Span | None:
    first, last = _shift(today, span[0]), _shift(today, span[1])
    return None if first is None or last is None else (first, last, False)


def _week_span(today: date, weeks: int, days: tuple[int, int]) -> _Span | None:
    """Days `days` (from Monday, 0, to Sunday, 6) of the ISO week `weeks` from today's."""
    monday = _shift(today, 7 * weeks - today.weekday())
    if monday is None:
        return None
    return _days_back(monday, days)


def _month_span(year: int, month: int, part: int | None, yearless: bool) -> _Span | None:
    """The month, or one third of it (`part` 0: days 1-10, 1: 11-20, 2: 21 to the end)."""
    if not (1 <= month <= 12 and date.min.year <= year <= date.max.year):
        return None
    end = calendar.monthrange(year, month)[1]
    first, last = {None: (1, end), 0: (1, 10), 1: (11, 20), 2: (21, end)}[part]
    return date(year, month, first), date(year, month, last), yearless


def _part(words: str | None) -> int | None:
    """Which third of a month "early", "the end of", "中旬"... mean (None: the whole)."""
    if words is None:
        return None
    words = " ".join(words.split())
    return _MONTH_PARTS[words.split()[-2] if words.endswith(" of") else words]


def _coming_month_day(today: date, month: int, day: int) -> date | None:
    """This year's month/day if still to come (today included), else next year's if at most
    _AHEAD_AT_MOST days ahead; None for a day gone by."""
    this = _make_date(today.year, month, day)
    if this is not None and this >= today:
        return this
    following = _make_date(today.year + 1, month, day) if today.year < date.max.year else None
    if following is not None and (following - today).days <= _AHEAD_AT_MOST:
        return following
    return None


def _coming_day_of_month(today: date, day: int) -> date | None:
    """That day of this month if not before today, else of the next month that has it."""
    if not 1 <= day <= 31:
        return None
    for ahead in range(12):
        year, month = _add_months(today.year, today.month, ahead)
        if year > date.max.year:
            return None
        found = _make_date(year, month, day)
        if found is not None and found >= today:
            return found
    return None


def _add_months_to(day: date, months: int) -> date | None:
    """The same day `months` later (earlier if negative), the month's last if it is shorter."""
    year, month = _add_months(day.year, day.month, months)
    if not date.min.year <= year <= date.max.year:
        return None
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def _counted(today: date, count: int, unit: str, back: bool) -> date | _Span | None:
    """`count` units (d: days, w: weeks, f: fortnights, m: months, y: years) before today
    (`back`) or after it. Months and years back are said loosely: a span around the day."""
    sign = -1 if back else 1
    if unit in "dwf":
        return _shift(today, sign * count * {"d": 1, "w": 7, "f": 14}[unit])
    if count > (_MOST_MONTHS if unit == "m" else _MOST_YEARS):
        return None
    day = _add_months_to(today, sign * count * (1 if unit == "m" else 12))
    if day is None or not back:
        return day
    slack = _MONTHS_AGO_SLACK if unit == "m" else _YEARS_AGO_SLACK
    first, last = _shift(day, -slack), _shift(day, slack)
    return None if first is None or last is None else (first, min(last, today), False)


def _days_ahead(today: date, span: tuple[int, int]) -> _Span | None:
    """A span of days back (as in _EN_FEW), turned to the same days ahead."""
    return _days_back(today, (-span[1], -span[0]))


def _year_span(year: int, months: tuple[int, int] = (1, 12)) -> _Span | None:
    """The months `months` (first, last) of a year."""
    if not date.min.year <= year <= date.max.year:
        return None
    end = calendar.monthrange(year, months[1])[1]
    return date(year, months[0], 1), date(year, months[1], end), False


def _season_span(year: int, index: int) -> tuple[date, date] | None:
    """The season `index` (0 spring ... 3 winter) of `year`: a winter runs into the next."""
    month = _SEASON_FIRST_MONTH[index]
    end_year, end_month = _add_months(year, month, 2)
    if year < date.min.year or end_year > date.max.year:
        return None
    last = date(end_year, end_month, calendar.monthrange(end_year, end_month)[1])
    return date(year, month, 1), last


def _season(today: date, index: int, which: str, *, yearless: bool = False) -> _Span | None:
    """The season meant by `which`: "last" the latest ended, "next" the first not begun,
    "recent" the latest begun, "coming" the first not ended, "this" the one under way (else
    none)."""
    seasons = [
        found
        for year in range(today.year - 2, today.year + 2)
        if (found := _season_span(year, index)) is not None
    ]
    if which == "last":
        chosen = [s for s in seasons if s[1] < today][-1:]
    elif which == "next":
        chosen = [s for s in seasons if s[0] > today][:1]
    elif which == "recent":
        chosen = [s for s in seasons if s[0] <= today][-1:]
    elif which == "coming":
        chosen = [s for s in seasons if s[1] >= today][:1]
    else:
        chosen = [s for s in seasons if s[0] <= today <= s[1]]
    return (chosen[0][0], chosen[0][1], yearless) if chosen else None


def _period(today: date, unit: str, shift: int, part: int | None) -> _Span | None:
    """The week, month or year `shift` from today's, or a part of it (thirds of a month or a
    year, days of a week as in _WEEK_PARTS)."""
    if unit == "week":
        return _week_span(today, shift, (0, 6) if part is None else _WEEK_PARTS[part])
    if unit == "month":
        year, month = _add_months(today.year, today.month, shift)
        return _month_span(year, month, part, False)
    year = today.year + shift
    return _year_span(year) if part is None else _year_span(year, _YEAR_PARTS[part])


def _earlier(today: date, unit: str) -> _Span | None:
    """From the start of this week, month or year to yesterday ("earlier this week")."""
    if unit == "week":
        start = _shift(today, -today.weekday())
    elif unit == "month":
        start = today.replace(day=1)
    else:
        start = today.replace(month=1, day=1)
    end = _shift(today, -1)
    return None if start is None or end is None or end < start else (start, end, False)


def _this_or_last(today: date, unit: str, part: int, ahead: bool) -> _Span | None:
    """A part of this week, month or year ("the end of the month", 月底, 年初): this one's;
    in the past sense, the previous one's while this one's has not begun."""
    span = _period(today, unit, 0, part)
    if ahead or span is None or span[0] <= today:
        return span
    return _period(today, unit, -1, part)


def _en_count(raw: str) -> int:
    raw = " ".join(raw.split())
    return int(raw) if raw.isdigit() else _EN_NUMBERS[raw]


# --- handlers: a match to a day (or a span: _Span), or None -------------------------------------
# `ahead`: the future sense (future_spans), where ambiguous words mean the coming day or span.


def _en_rel(m: re.Match[str], today: date) -> date | None:
    words = " ".join(m.group().lower().split()).removeprefix("the ")
    return _shift(today, _EN_RELATIVE[words])


def _en_ago(m: re.Match[str], today: date) -> date | _Span | None:
    return _counted(today, _en_count(m.group("ea_n")), m.group("ea_u")[0], back=True)


def _en_in(m: re.Match[str], today: date) -> date | _Span | None:
    few = m.group("ei_few")
    if few is not None:
        unit = m.group("ei_u").rstrip("s")
        key = f"{'several' if few == 'several' else 'few'} {unit}s"
        return _days_ahead(today, _EN_FEW[key]) if key in _EN_FEW else None
    raw, unit = m.group("ei_n"), m.group("ei_u")
    if raw is None:
        raw, unit = m.group("ei_n2"), m.group("ei_u2")
    day = _counted(today, _en_count(raw), unit[0], back=False)
    if m.group("ei_lead") == "within" and isinstance(day, date):
        return (today, day, False)
    return day


def _en_wd(m: re.Match[str], today: date, ahead: bool) -> date | None:
    mod = " ".join(m.group("ew_mod").lower().split())
    target = _WEEKDAYS.index(m.group("ew_day").lower())
    now_wd = today.weekday()
    if mod == "this" and not ahead:
        return _shift(today, target - now_wd)
    if mod == "this":  # the coming one, today included
        return _shift(today, (target - now_wd) % 7)
    if mod in ("next", "this coming") or (mod == "on" and ahead):
        return _shift(today, (target - now_wd - 1) % 7 + 1)
    # last, this past, since, on: the most recent one strictly before today.
    return _shift(today, -((now_wd - target - 1) % 7 + 1))


def _en_month_day(
    m: re.Match[str], today: date, original: str, key: str, ahead: bool
) -> date | None:
    """Month and day (``key`` "em": "May 4th") or day and month (``key`` "ed": "4th of May")."""
    word, ordinal, year_s = m.group(f"{key}_mon"), m.group(f"{key}_ord"), m.group(f"{key}_year")
    bare = ordinal is None and year_s is None
    ambiguous = word.rstrip(".") in _AMBIGUOUS_MONTHS and original[m.start(f"{key}_mon")].islower()
    if bare and ambiguous and not _DATE_BEFORE.search(m.string, 0, m.start(f"{key}_mon")):
        return None  # "you may 4", "we march 10 miles"
    if key == "em" and bare and _QUANTITY_AFTER.match(m.string, m.end()):
        return None  # "May 3 people", "June 3 times"
    ambiguous_word = word.rstrip(".") in _AMBIGUOUS_MONTHS
    if key == "em" and bare and ambiguous_word and _CONNECTIVE_AFTER.match(m.string, m.end()):
        return None  # "May 3 or 4 of us"
    if key == "ed" and m.group("ed_of") is not None and ordinal is None:
        return None  # "3 of march"
    month, day = _month_number(word), int(m.group(f"{key}_day"))
    if year_s is not None:
        return _make_date(int(year_s), month, day)
    if ahead:
        return _coming_month_day(today, month, day)
    return _recent_month_day(today, month, day)


def _iso(m: re.Match[str], today: date) -> date | None:
    return _make_date(int(m.group("is_y")), int(m.group("is_m")), int(m.group("is_d")))


def _numeric(m: re.Match[str], today: date, ahead: bool) -> date | None:
    """20/12 or 12/20: only when the order is plain (one number over 12) and the words before
    it are a date's ("on 20/12", "is 12/20"): "got 9/20 on the quiz" is a score, "3/4" either."""
    a, b = int(m.group("nu_a")), int(m.group("nu_b"))
    if (a > 12) == (b > 12) or _QUANTITY_AFTER.match(m.string, m.end()):
        return None
    if not _DATE_BEFORE.search(m.string, 0, m.start()):
        return None
    month, day = (b, a) if a > 12 else (a, b)
    year = m.group("nu_y")
    if year is not None:
        return _make_date(int(year) + (2000 if len(year) == 2 else 0), month, day)
    return (_coming_month_day if ahead else _recent_month_day)(today, month, day)


def _zh_md(m: re.Match[str], today: date, ahead: bool) -> date | None:
    month, day = _zh_int(m.group("zm_m")), _zh_int(m.group("zm_d"))
    if month is None or day is None:
        return None
    year_s, relative = m.group("zm_y"), m.group("zm_ry")
    if relative is not None:  # 去年, 今年, 前年, 明年
        return _make_date(today.year + _ZH_YEARS[relative], month, day)
    if year_s is not None:
        year = _zh_int(year_s)
        return None if year is None else _make_date(year, month, day)
    if ahead:
        return _coming_month_day(today, month, day)
    return _recent_month_day(today, month, day)


def _zh_mo(m: re.Match[str], today: date) -> date | None:
    day = _zh_int(m.group("zo_d"))
    if day is None:
        return None
    shift = _ZH_WEEK_SHIFT[m.group("zo_mod").rstrip("个")]
    year, month = _add_months(today.year, today.month, shift)
    return _make_date(year, month, day)


def _zh_counted(m: re.Match[str], today: date, key: str, back: bool) -> date | _Span | None:
    """三天前, 两个月前 (``key`` "za", `back`), 三天后, 半年后 (``key`` "zf")."""
    raw = m.group(f"{key}_n")
    unit = next(u for u in "dwmy" if m.group(f"{key}_{u}") is not None)
    if raw == "几":  # a few: 几天后, 几个月后
        few = {"d": "few days", "w": "few weeks", "m": "few months", "y": "few years"}[unit]
        return _days_ahead(today, _EN_FEW[few])
    if raw == "半":  # half: 半个月 is 15 days, 半年 6 months
        if unit not in "my":
            return None
        count, unit = (15, "d") if unit == "m" else (6, "m")
    else:
        parsed = _zh_int(raw)
        if parsed is None:
            return None
        count = parsed
    return _counted(today, count, unit, back)


def _zh_wk(m: re.Match[str], today: date, text: str, ahead: bool) -> date | None:
    wd_char = m.group("zw_day")
    if wd_char == "一" and m.end() < len(text) and text[m.end()] in _AFTER_WEEKDAY_ONE:
        return None
    target = _ZH_WEEKDAYS[wd_char]
    mod = m.group("zw_mod")
    if mod is None:  # alone: the most recent one, or (ahead) the coming one, today included
        step = (target - today.weekday()) % 7 if ahead else -((today.weekday() - target) % 7)
        return _shift(today, step)
    weeks = _ZH_WEEK_SHIFT[mod.rstrip("个")]
    if ahead and weeks == 0 and target < today.weekday():
        # 这周六 said on a Sunday is of the week to come, as "this Saturday" is: a day gone
        # by is no due day, and those who count weeks from Sunday mean the coming one.
        return _shift(today, target - today.weekday() + 7)
    return _shift(today, 7 * weeks + target - today.weekday())


def _zh_rel(m: re.Match[str], today: date, text: str) -> date | None:
    word, start, end = m.group(), m.start(), m.end()
    before = text[start - 1] if start else ""
    after = text[end] if end < len(text) else ""
    if len(word) == 2 and before:
        blocked = _ZH_REL_BLOCKED_BEFORE.get(word[0], "")
        if before in blocked:
            return None
        if word == "明天" and before == "说" and after in ("气", "空", "才"):  # 说明天气
            return None
    if word[-2:] == "后天" and after == "性":  # 后天性: acquired
        return None
    return _shift(today, _ZH_RELATIVE[word])


def _zh_day(m: re.Match[str], today: date, text: str, ahead: bool) -> date | None:
    number = m.group("zd_n")
    if m.group("zd_s") == "日":
        if not number.isdigit():  # 三日: also "three days"
            return None
        if m.end() < len(text) and text[m.end()] in _AFTER_BARE_RI:
            return None
    day = _zh_int(number)
    if day is None:
        return None
    return _coming_day_of_month(today, day) if ahead else _recent_day_of_month(today, day)


def _en_few(m: re.Match[str], today: date) -> _Span | None:
    unit = m.group("ef_u")
    if unit is None:
        return _days_back(today, _THE_OTHER_DAY)
    return _days_back(today, _EN_FEW[f"{m.group('ef_n')} {unit}"])


def _en_past(m: re.Match[str], today: date) -> _Span | None:
    unit = m.group("es_u1")
    if unit is not None:  # the past week, month, year
        return _days_back(today, (-{"week": 7, "month": 30, "year": 365}[unit], 0))
    raw = " ".join(m.group("es_n").split())
    count = int(raw) if raw.isdigit() else 3 if raw == "few" else _EN_NUMBERS[raw]
    per = {"days": 1, "weeks": 7, "months": 30}[m.group("es_u")]
    return _days_back(today, (-count * per, 0)) if count else None


def _en_wkend(m: re.Match[str], today: date, ahead: bool) -> _Span | None:
    which = " ".join(m.group("ee_which").split())
    if which == "this":
        weeks = 0
    elif which == "next":
        weeks = 1
    elif which in ("last", "this past"):
        weeks = -1
    else:  # over the weekend: the latest one begun, or (ahead) this week's
        weeks = 0 if ahead or today.weekday() >= 5 else -1
    return _week_span(today, weeks, (5, 6))


def _en_per(m: re.Match[str], today: date, ahead: bool) -> _Span | None:
    unit = m.group("ep_rel_unit")
    if unit is not None:  # the week before last, the month after next
        return _period(today, unit, -2 if m.group("ep_rel").startswith("before") else 2, None)
    unit = m.group("ep_in")
    if unit is not None:  # earlier in the week
        return _earlier(today, unit)
    unit, which, words = m.group("ep_unit"), m.group("ep_which"), m.group("ep_part")
    words = None if words is None else " ".join(words.split())
    shift = {"last": -1, "this": 0, "next": 1, "the": 0}[which]
    if which == "this" and words == "earlier":  # up to yesterday
        return _earlier(today, unit)
    if which == "this" and words == "later":  # from tomorrow
        span = _period(today, unit, 0, None)
        start = _shift(today, 1)
        return None if span is None or start is None or start > span[1] else (start, span[1], False)
    part = None if words is None or words == "earlier" else _part(words.replace("later", "late"))
    if which == "the":  # "the end of the month": needs a part ("the week" alone is no date)
        return None if part is None else _this_or_last(today, unit, part, ahead)
    return _period(today, unit, shift, part)


def _en_mon(m: re.Match[str], today: date, original: str, ahead: bool) -> _Span | None:
    lead, part_words, year_s = m.group("eo_lead"), m.group("eo_part"), m.group("eo_year")
    word = m.group("eo_mon")
    if lead is None and part_words is None and year_s is None:
        return None  # a month's name alone: "May I ask", "March on"
    lead = None if lead is None else " ".join(lead.split()).removeprefix("ever ")
    if (
        word.rstrip(".") in _AMBIGUOUS_MONTHS
        and original[m.start("eo_mon")].islower()
        and lead in ("last", "this", "next", "since")
        and part_words is None
        and year_s is None
    ):
        return None  # "their last march", "this may help"
    month = _month_number(word)
    if year_s is not None:
        year = int(year_s)
    elif lead == "last":  # the most recent one before this month
        year = today.year if month < today.month else today.year - 1
    elif lead == "next":  # the first one after this month
        year = today.year if month > today.month else today.year + 1
    elif lead == "this":
        year = today.year
    elif ahead and lead not in ("back in", "since"):  # the coming one, this month included
        year = today.year if month >= today.month else today.year + 1
    else:  # the most recent one begun
        year = today.year if month <= today.month else today.year - 1
    yearless = year_s is None and lead not in ("this", "next")
    return _month_span(year, month, _part(part_words), yearless)


def _en_season(m: re.Match[str], today: date, ahead: bool) -> _Span | None:
    lead, name, year_s = m.group("es_lead"), m.group("es_name"), m.group("es_year")
    lead = None if lead is None else " ".join(lead.split()).removeprefix("ever ")
    index = _SEASONS[name]
    if year_s is not None:  # the summer of 2025
        span = _season_span(int(year_s), index)
        return None if span is None else (*span, False)
    if lead is None:
        return None  # a season's name alone: "summer dresses"
    if name == "fall" and m.group("es_the") is None and lead in ("in", "during", "since"):
        return None  # "in fall" is too often the verb
    if lead in ("last", "this past"):
        return _season(today, index, "last")
    if lead in ("next", "this coming"):
        return _season(today, index, "next")
    if lead == "this":
        return _season(today, index, "this") or _season(
            today, index, "coming" if ahead else "recent"
        )
    coming = ahead and lead not in ("back in", "since")
    return _season(today, index, "coming" if coming else "recent", yearless=True)


def _en_year(m: re.Match[str], today: date) -> _Span | None:
    part = m.group("ey_part")
    year = int(m.group("ey_year"))
    return _year_span(year) if part is None else _year_span(year, _YEAR_PARTS[_part(part) or 0])


def _zh_mspan(m: re.Match[str], today: date) -> _Span | None:
    year, month = _add_months(
        today.year, today.month, _ZH_WEEK_SHIFT[m.group("zp_mod").rstrip("个")]
    )
    return _month_span(year, month, _part(m.group("zp_part")), False)


def _zh_few(m: re.Match[str], today: date, text: str) -> _Span | None:
    before = text[m.start() - 1] if m.start() else ""
    if before.isdigit() or ("\u4e00" <= before <= "\u9fff" and before not in _ZH_FEW_AFTER):
        return None  # 考试前几天, 十几天前
    word = m.group().replace("之", "")
    return _days_back(today, _ZH_FEW.get(word, _FEW_WEEKS_AGO))


def _zh_recent(m: re.Match[str], today: date) -> _Span | None:
    raw = m.group("zr_n")
    if raw is None:
        return _days_back(today, _RECENTLY)
    count = _zh_int(raw)
    per = 1 if m.group("zr_d") else 7 if m.group("zr_w") else 30
    return None if not count else _days_back(today, (-count * per, 0))


def _zh_wspan(m: re.Match[str], today: date) -> _Span | None:
    weeks = _ZH_WEEK_SHIFT[m.group("zs_mod").rstrip("个")]
    return _week_span(today, weeks, (5, 6) if m.group("zs_end") else (0, 6))


def _zh_mon(m: re.Match[str], today: date, ahead: bool) -> _Span | None:
    month = _zh_int(m.group("zn_m"))
    if month is None:
        return None
    year_s, relative = m.group("zn_y"), m.group("zn_ry")
    part = _part(m.group("zn_part"))
    if relative is not None:
        return _month_span(today.year + _ZH_YEARS[relative], month, part, False)
    if year_s is not None:
        year = _zh_int(year_s)
        return None if year is None else _month_span(year, month, part, False)
    if ahead:
        year = today.year if month >= today.month else today.year + 1
    else:
        year = today.year if month <= today.month else today.year - 1
    return _month_span(year, month, part, True)


def _zh_season(m: re.Match[str], today: date, text: str, ahead: bool) -> _Span | None:
    index = _SEASONS[m.group("zz_s")]
    year_s, relative, mod = m.group("zz_y"), m.group("zz_ry"), m.group("zz_mod")
    if relative is not None:
        span = _season_span(today.year + _ZH_YEARS[relative], index)
        return None if span is None else (*span, False)
    if year_s is not None:
        year = _zh_int(year_s)
        span = None if year is None else _season_span(year, index)
        return None if span is None else (*span, False)
    if mod is not None:
        which = {"上": "last", "这": "this", "下": "next"}[mod.rstrip("个")]
        if which == "this":
            return _season(today, index, "this") or _season(
                today, index, "coming" if ahead else "recent"
            )
        return _season(today, index, which)
    since = _SINCE_AFTER.match(text, m.end()) or _SINCE_BEFORE.search(text, 0, m.start())
    if m.group("zz_when") is None and since is None:
        return None  # a season alone: 我喜欢冬天
    return _season(today, index, "coming" if ahead and since is None else "recent", yearless=True)


def _zh_year(m: re.Match[str], today: date, text: str) -> _Span | None:
    year_s, relative = m.group("zy_y"), m.group("zy_ry")
    if relative is not None:
        year: int | None = today.year + _ZH_YEARS[relative]
    else:
        year = _zh_int(year_s)
    if year is None:
        return None
    half, part = m.group("zy_half"), m.group("zy_part")
    if half is not None:
        return _year_span(year, _ZH_YEAR_HALVES[half])
    return _year_span(year) if part is None else _year_span(year, _YEAR_PARTS[_MONTH_PARTS[part]])


def _resolve(m: re.Match[str], today: date, original: str, ahead: bool) -> date | _Span | None:
    """The day or span a match of a pattern (over the lowercased text) means, or None."""
    kind, text = m.lastgroup, m.string
    if kind == "en_few":
        return _en_few(m, today)
    if kind == "en_past":
        return _en_past(m, today)
    if kind == "en_recent":
        return _days_back(today, _RECENTLY)
    if kind == "en_wkend":
        return _en_wkend(m, today, ahead)
    if kind == "en_per":
        return _en_per(m, today, ahead)
    if kind == "en_mon":
        return _en_mon(m, today, original, ahead)
    if kind == "en_season":
        return _en_season(m, today, ahead)
    if kind == "en_year":
        return _en_year(m, today)
    if kind == "en_in":
        return _en_in(m, today)
    if kind == "zh_mspan":
        return _zh_mspan(m, today)
    if kind == "zh_few":
        return _zh_few(m, today, text)
    if kind == "zh_recent":
        return _zh_recent(m, today)
    if kind == "zh_wspan":
        return _zh_wspan(m, today)
    if kind == "zh_mon":
        return _zh_mon(m, today, ahead)
    if kind == "zh_season":
        return _zh_season(m, today, text, ahead)
    if kind == "zh_year":
        return _zh_year(m, today, text)
    if kind == "zh_ypart":
        return _this_or_last(today, "year", _MONTH_PARTS[m.group("zq_ypart")], ahead)
    if kind == "zh_mpart":
        return _this_or_last(today, "month", _MONTH_PARTS[m.group("zq_mpart")], ahead)
    if kind == "zh_after":
        return _zh_counted(m, today, "zf", back=False)
    if kind == "en_rel":
        return _en_rel(m, today)
    if kind == "en_ago":
        return _en_ago(m, today)
    if kind == "en_wd":
        return _en_wd(m, today, ahead)
    if kind == "en_md":
        return _en_month_day(m, today, original, "em", ahead)
    if kind == "en_dm":
        return _en_month_day(m, today, original, "ed", ahead)
    if kind == "iso":
        return _iso(m, today)
    if kind == "num":
        return _numeric(m, today, ahead)
    if kind == "zh_md":
        return _zh_md(m, today, ahead)
    if kind == "zh_mo":
        return _zh_mo(m, today)
    if kind == "zh_rel":
        return _zh_rel(m, today, text)
    if kind == "zh_ago":
        return _zh_counted(m, today, "za", back=True)
    if kind == "zh_wk":
        return _zh_wk(m, today, text, ahead)
    if kind == "en_ord":
        day = int(m.group("eo_day"))
        return _coming_day_of_month(today, day) if ahead else _recent_day_of_month(today, day)
    if kind == "zh_day":
        return _zh_day(m, today, text, ahead)
    raise AssertionError(f"unhandled date pattern {kind!r}")  # pragma: no cover


# --- the API ---------------------------------------------------------------------------------


def find_dates(text: str, now: datetime) -> list[DateMention]:
    """Every day the message refers to, in order of appearance, without duplicates (same day
    once, at its first mention), in the past sense: "on Friday", "May 4th" and "in the
    summer" are the most recent ones.

    Relative words are resolved against ``now.date()``: ``now`` is timezone-aware and already
    in the user's timezone, and it is not converted. Future days are returned too ("next
    week", "tomorrow"): the caller decides (recall reads none of them).
    """
    return [mention for mention, _ in _scan(text, now, ahead=False)]


def future_spans(text: str, now: datetime) -> list[DateMention]:
    """The days and spans still to come that a message names, in the future sense, for a due
    date ("my exam is on Tuesday", 下周三考试, "at the end of the month"): ambiguous words mean
    the coming ones ("on Friday", "May 4th", 周五, 3号, "in the summer"). In order of
    appearance, each once; a span under way begins today ("this week" said on a Wednesday is
    Wednesday to Sunday); days gone by, and spans that look back from now ("recently", "since
    May", 这几天), are left out. A single day is the due day (``day``, with ``hours`` when a
    time of day was said); a span is a window, ``days``.

    ``now`` is timezone-aware and already in the user's timezone, as for find_dates.
    """
    today = now.date()
    out: dict[tuple[date, date], DateMention] = {}
    for mention, backward in _scan(text, now, ahead=True):
        if backward or mention.day < today:
            continue
        first = max(mention.days[0], today)
        if (first, mention.day) not in out:
            out[first, mention.day] = replace(
                mention, first=None if first == mention.day else first
            )
    return list(out.values())


_CLOCK_WORDS: dict[str, int] = {w: n for w, n in _EN_NUMBERS.items() if " " not in w and w != "a"}
_CLOCK_HOUR = r"(?:\d{1,2}|" + "|".join(sorted(_CLOCK_WORDS, key=len, reverse=True)) + ")"
# What a number after "at" counts when it is no hour: "at 3 people", "at 8%", "at 5 km".
_NOT_A_TIME = (
    r"(?!\s*(?:%|percent|people|persons?|times|minutes?|mins?|hours?|hrs?|days?|weeks?|"
    r"months?|years?|degrees?|points?|pts?|kg|km|k|lbs?|miles?|mph|st|nd|rd|th|of|x|/|-\d"
    # a count of a game's ("lost by one round", "at 2 goals down") or a measure's
    r"|rounds?|goals?|games?|sets?|laps?|matches|frames?|runs?|wickets?|strokes?|shots?|votes?"
    r"|seconds?|secs?|levels?|places?|spots?|stars?|pages?|metres?|meters?|feet|ft|inches?|cm)"
    r"(?![a-z]))"
)
_CLOCK_EN = re.compile(
    r"(?<![a-z0-9:.$\u00a3\u20ac\u00a5])(?:"
    r"(?P<h>\d{1,2})(?:[:.](?P<m>\d\d))?\s*(?P<ap>[ap])\.?m\.?(?:-?ish)?(?![a-z])"
    rf"|(?P<h2>{_CLOCK_HOUR})\s*o['\u2019 ]?clock"
    r"|(?P<half>half|(?:a\s+)?quarter|(?P<mins>five|ten|twenty(?:[\s-]five)?)(?:\s+(?:minutes|mins))?)"
    rf"(?:\s+|-)(?P<rel>past|after|to|till|til)\s+(?P<h5>{_CLOCK_HOUR}|noon|midday|midnight)"
    r"(?![a-z0-9])"
    r"|(?P<noon>noon|midday|midnight)(?:-?ish)?(?![a-z])"
    # "20 past 1" in numerals; not "2 to 4", a span
    rf"|(?P<nmins>[1-5]?\d)(?:\s+(?:minutes?|mins?))?\s+(?:past|after)\s+(?P<h8>{_CLOCK_HOUR})"
    r"(?![a-z0-9])"
    # the European "15h30" (after "at": "a 5h30 flight" is a length)
    r"|(?:at|by|@|\u00e0)\s*(?P<h11>[01]?\d|2[0-3])h(?P<m11>[0-5]\d)(?![\da-z])"
    # "half 8": British for half past eight.
    rf"|half\s+(?P<h7>{_CLOCK_HOUR})(?![a-z0-9:.]){_NOT_A_TIME}"
    # (not "at twenty to 11": minutes to an hour, read above when said without "at")
    # (a time moved to: "the review got moved to 4")
    r"|(?:at|around|about|by|@|(?:moved|pushed|changed|bumped|rescheduled)(?:\s+(?:back|forward))?"
    r"\s+to(?=\s))\s*(?:around\s+|about\s+)?"
    r"(?!(?:five|ten|twenty(?:[\s-]five)?)\s+(?:(?:minutes|mins)\s+)?(?:past|after|to|till|til)\s)"
    rf"(?!\d{{1,2}}\s+(?:(?:minutes?|mins?)\s+)?(?:past|after)\s+{_CLOCK_HOUR}(?![a-z0-9]))"
    rf"(?P<h3>{_CLOCK_HOUR})"
    # "at 7 45": its minutes after a space
    r"(?:[:.](?P<m3>\d\d)|\s+(?P<m12>[0-5]\d)(?![\d:.,%])"
    r"|[\s-]+(?P<mw>fifteen|twenty|thirty|forty(?:[\s-]five)?|fifty))?"
    # (its am or pm may follow a space's minutes at once: "at 6 30pm")
    r"(?:\s*-?ish)?(?(m12)(?:(?=[ap]\.?m(?![a-z]))|(?![a-z0-9:]|\.\d))|(?![a-z0-9:]|\.\d))"
    rf"{_NOT_A_TIME}"
    r"|(?P<h4>\d{1,2})\s*-?ish(?![a-z])"
    # the 24-hour clock in four digits: "at 1700", "by 0930", "1400 hours" (not a year: "by 2030")
    r"|(?<![a-z])(?:at|by|@)\s*(?!19|20)(?P<h9>[01]\d|2[0-3])(?P<m9>[0-5]\d)(?![\d%:.,])"
    rf"{_NOT_A_TIME}"
    r"|(?P<h10>[01]\d|2[0-3])(?P<m10>[0-5]\d)\s*(?:hours|hrs)(?![a-z])"
    r"|(?P<h6>\d{1,2})(?::(?P<m6>\d\d)|\.(?P<m7>00|15|30|45))(?![\d:])(?!\.\d)"
    r")"
)
# "six thirty", "two-thirty", "at 7 forty-five", "at seven forty"
_WORD_MINUTES = {"fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50}
_PAST_MINUTES = {"five": 5, "ten": 10, "twenty": 20}  # "twenty to 11", "twenty-five past 3"
# A part of the day said right after the clock time: "at 8 in the evening", "7 tonight".
_CLOCK_TAIL = re.compile(
    r"\s*(?:(?P<ap>[ap])\.?m\.?|(?:in\s+the\s+|at\s+|this\s+|tomorrow\s+)?"
    r"(?P<part>morning|afternoon|evening|night|tonight|midnight|noon))(?![a-z])"
)
_ZH_MINUTES = (
    r"[0-9]{1,2}|零[一二三四五六七八九]|[一二三四五]?十[一二三四五六七八九]?|[一二三四五六七八九]"
)
_ZH_PARTS = r"上午|下午|晚上|早上|早晨|中午|凌晨|傍晚|夜里|半夜|晚|早|夜"
_CLOCK_ZH = re.compile(
    rf"(?P<part>{_ZH_PARTS})?\s*"
    # minutes to the hour said first: 差一刻八点 (7:45), 差五分十点
    rf"(?:差(?P<cha>一刻|(?:{_ZH_MINUTES})分))?"
    # (not a weekday's numeral: 周六七点 is seven on Saturday, 星期三十点 ten on Wednesday)
    r"(?<![周期拜])(?P<h>[0-9]{1,2}|[一二两三四五六七八九十]{1,3})"
    # 时: the formal 点 (下午三时, 15时30分)
    r"\s*(?:[点點]|(?P<shi>[时時]))(?:(?P<half>半)|(?P<q>[一1]刻)|(?P<q3>[三3]刻)"
    # minutes to or past the hour said after it: 七点差一刻 (6:45), 十点过五分, 五点过一刻
    rf"|(?P<rel>[差过過])(?P<by>[一1]刻|(?:{_ZH_MINUTES})分)"
    r"|(?P<m>[0-9]{1,2})分?|(?P<zhong>[钟整])"
    # minutes in numerals: 四点五十(分), 三点零五
    r"|(?P<mz>零[一二三四五六七八九]|[一二三四五]?十[一二三四五六七八九]?)分?)?"
)
# Before a numeral and 点: a count of points, not an hour (第三点, 有五点, 这三点).
_COUNTED = re.compile(r"(?:第|有|这|那|几|哪|另|前|后|最后|以下)\s*$")
# After 三点 / 3点: points, not hours (三点建议, 有3点意见, 一点也不).
_NOT_HOURS_AFTER = frozenset("建意理原要看想内也儿都东多")
_A_LITTLE = frozenset("一两")  # 一点多, 两点多: "a bit more"; 七点多 is past seven
# Right after a day (明天两点, 周六一点) or before what starts or leaves then (两点开会, 一点集合,
# 两点的飞机), 一点 and 两点 are hours.
_DAY_BEFORE = re.compile(r"(?:[今明后]天|[明后]儿|(?:周|星期|礼拜)[一二三四五六日天]|[号日])\s*$")
_STARTS_THEN = re.compile(
    r"(?:开始|开会|集合|出发|见面|开考|面试|上课|开门|碰头|的(?:飞机|航班|高铁|火车|动车|车|会|课|面试))"
)
# A part of the day said before a time with a colon: 晚上7:30, 明晚9:00.
_PART_BEFORE_ZH = re.compile(rf"(?P<part>{_ZH_PARTS})\s*$")
_PM_PARTS = frozenset({"下午", "晚上", "傍晚", "晚", "夜里", "夜", "afternoon", "evening", "night"})
_PM_PARTS |= {"tonight"}
_LATE_NIGHT = frozenset({"夜里", "夜", "半夜", "night", "tonight"})  # 夜里2点: two in the morning


@dataclass(slots=True, frozen=True)
class ClockTime:
    """A clock time a message names, and where its words are."""

    at: time
    start: int
    end: int


def clock_time(text: str, hours: tuple[int, int] | None = None) -> ClockTime | None:
    """The first clock time a message names ("at 3pm", "at 8", "half past 7", "noon",
    下午3点, 明晚八点), or None. `hours`: the part of the day said with its day
    (``DateMention.hours``: "tomorrow evening" is 18-24), which an hour said without am or pm
    falls in ("tomorrow evening at 8" is 20:00)."""
    said_as = text
    # The same length: offsets stay the message's (a full-width colon is a colon: 19：30).
    lowered = text.translate(_ASCII_LOWER).replace("\uff1a", ":")
    en = _CLOCK_EN.search(lowered)
    text = text.translate(_TRADITIONAL)
    # (the pattern needs 点 or 时, 點 or 時: a plain look first is cheaper than its search)
    zh = _CLOCK_ZH.search(text) if any(c in text for c in "点點时時") else None
    if en is not None and (zh is None or en.start() <= zh.start()):
        said = _english_clock(en, lowered, hours)
        tail = _CLOCK_TAIL.match(lowered, en.end())
        # "at 10:30 pm": the words run to the "pm".
        # "at 6 in the morning": to its part of the day too, said with the words "in the"
        ran = tail is not None and (tail.group("ap") or tail.group().lstrip().startswith("in "))
        span = (en.start(), tail.end()) if tail is not None and ran else en.span()
    elif zh is not None:
        said = _chinese_clock(zh, text, hours)
        span = zh.span()
    else:
        return None
    if said is None or said[0] > 23 or said[1] > 59:
        # Words that are no clock time (两点了, "a little") hide none said after them:
        # 两点了还没睡，今天上午九点半要考试.
        cut = max(span[1], span[0] + 1)
        later = clock_time(said_as[cut:], hours)
        return None if later is None else ClockTime(later.at, later.start + cut, later.end + cut)
    return ClockTime(time(*said), *span)


def _clock_hour(said: str) -> int:
    return int(said) if said.isdigit() else _CLOCK_WORDS[said]


def _english_clock(
    m: re.Match[str], lowered: str, hours: tuple[int, int] | None
) -> tuple[int, int] | None:
    if m.group("noon"):
        # Midnight said of a day is its end: the last minute keeps it on that day.
        return (23, 59) if m.group("noon") == "midnight" else (12, 0)
    if m.group("h"):
        hour, minute = int(m.group("h")), int(m.group("m") or 0)
        if hour > 12 or hour == 0:
            return None
        return (hour % 12 + (12 if m.group("ap") == "p" else 0), minute)
    if m.group("h11"):  # "15h30"
        return int(m.group("h11")), int(m.group("m11"))
    if m.group("h5"):
        noon = m.group("h5") in ("noon", "midday", "midnight")
        hour = 12 if noon else _clock_hour(m.group("h5"))
        mins = m.group("mins")
        minute = 30 if m.group("half") == "half" else 15
        if mins:
            minute = sum(_PAST_MINUTES[w] for w in re.split(r"[\s-]+", mins))
        if noon:  # "quarter to noon" 11:45, "ten to midnight" 23:50, "half past midnight" 00:30
            base = 0 if m.group("h5") == "midnight" else 12
            if m.group("rel") in ("to", "till", "til"):
                return (base - 1) % 24, 60 - minute
            return base, minute
        if m.group("rel") in ("to", "till", "til"):
            # The hour before one o'clock is twelve ("quarter to 1": 12:45), not 0.
            hour, minute = (hour - 1) or 12, 60 - minute
        if not 0 <= hour <= 12:
            return None
    elif m.group("h8"):
        hour, minute = _clock_hour(m.group("h8")), int(m.group("nmins"))
        if hour > 12 or minute == 0:
            return None
    elif m.group("h7"):
        hour, minute = _clock_hour(m.group("h7")), 30
        if hour > 12:
            return None
    else:
        if m.group("h9") or m.group("h10"):
            return int(m.group("h9") or m.group("h10")), int(m.group("m9") or m.group("m10"))
        raw = m.group("h2") or m.group("h3") or m.group("h4") or m.group("h6")
        hour = _clock_hour(raw)
        minute = int(m.group("m3") or m.group("m6") or m.group("m7") or m.group("m12") or 0) or sum(
            _WORD_MINUTES.get(w, 5 if w == "five" else 0)
            for w in re.split(r"[\s-]+", m.group("mw") or "")
        )
        if hour > 12 or (raw.startswith("0") and (m.group("m3") or m.group("m6"))):
            return hour, minute  # 15:30, 06:50: the 24-hour clock says it all
    tail = _CLOCK_TAIL.match(lowered, m.end())
    if tail is not None and tail.group("ap"):  # "at 10:30 pm"
        return hour % 12 + (12 if tail.group("ap") == "p" else 0), minute
    if tail is not None and tail.group("part") in ("midnight", "noon"):  # "at 12 midnight"
        return (23, 59) if tail.group("part") == "midnight" else (hour % 12 + 12, minute)
    if tail is None:  # a Chinese part of the day before it: 晚上7:30
        before = _PART_BEFORE_ZH.search(lowered, max(0, m.start() - 4), m.start())
        return _ambiguous(hour, minute, None if before is None else before.group("part"), hours)
    return _ambiguous(hour, minute, tail.group("part"), hours)


def _chinese_clock(
    m: re.Match[str], text: str, hours: tuple[int, int] | None
) -> tuple[int, int] | None:
    parsed = _zh_int(m.group("h"))
    part = m.group("part")
    said_so = (
        part or m.group("half") or m.group("q") or m.group("q3") or m.group("m") or m.group("mz")
    )
    numeral = not m.group("h").isdigit()
    after = text[m.end() : m.end() + 1]
    if after in _NOT_HOURS_AFTER and not said_so and (after != "多" or m.group("h") in _A_LITTLE):
        return None  # 3点建议, 一点也不, 一点多 (七点多 is past seven)
    if m.group("shi") and not (part or m.group("h").isdigit()):
        return None  # 一时半会, 四时: a while, the seasons
    said_so = said_so or m.group("cha") or m.group("rel")
    # 一点, 两点 alone are "a little", "two points"; other numerals are hours when the day's
    # part was said ("周五晚上我们八点见"), or when no count comes before them (明天九点，...;
    # not 第三点, 有五点).
    plain = (
        m.group("h") not in ("一", "两")
        or _STARTS_THEN.match(text, m.end()) is not None
        or _DAY_BEFORE.search(text, 0, m.start()) is not None
    )
    context = plain and (hours is not None or not _COUNTED.search(text, 0, m.start()))
    if parsed is None or not (said_so or m.group("zhong") or not numeral or context):
        return None
    minute = (30 if m.group("half") else 15 if m.group("q") else 45 if m.group("q3") else 0) or int(
        m.group("m") or 0
    )
    if m.group("mz"):
        minute = _zh_int(m.group("mz").lstrip("零")) or 0
    if m.group("cha") or m.group("rel"):
        by = m.group("cha") or m.group("by")
        moved = 15 if by.endswith("刻") else _zh_int(by.rstrip("分").lstrip("零")) or 0
        if not 0 < moved < 60 or parsed > 24:
            return None
        if m.group("rel") in ("过", "過"):
            minute = moved
        else:  # 差: minutes to the hour said, read in its part of the day (七点差一刻: 6:45)
            hour, at = (parsed, 0) if parsed > 12 else _ambiguous(parsed, 0, part, hours)
            hour = 24 if at == 59 else hour  # 晚上差一刻十二点: 23:45, before midnight's 24:00
            return (hour - 1) % 24, 60 - moved
    if parsed > 12:
        return parsed, minute
    return _ambiguous(parsed, minute, part, hours)


def _ambiguous(
    hour: int, minute: int, part: str | None, hours: tuple[int, int] | None
) -> tuple[int, int]:
    """An hour of 12 or less said without am or pm: in the part of the day said beside it
    (晚上8点, "8 in the evening"), else in the day's part (`hours`), else 1 to 6 in the
    afternoon and 7 to 12 in the morning (12: noon)."""
    if part is not None:
        if part in _LATE_NIGHT and hour <= 4:
            return hour, minute  # 夜里2点, "2 at night"
        if part in _PM_PARTS or part == "半夜":
            if hour == 12:
                return (23, 59) if part != "afternoon" and part != "下午" else (12, minute)
            return hour + (12 if part in _PM_PARTS else 0), minute
        if part in ("中午",) and hour <= 2:
            return hour + 12, minute
        return hour % 12 if part in ("凌晨",) else hour, minute
    if hours is not None:
        first, last = hours
        later = hour % 12 + 12
        if first <= later < last and not first <= hour % 12 < last:
            return later, minute
        return hour % 12 if first < 6 and hour == 12 else hour, minute
    return (hour + 12 if 1 <= hour <= 6 else hour), minute


def _scan(text: str, now: datetime, *, ahead: bool) -> list[tuple[DateMention, bool]]:
    """The mentions, each with whether it looks back from now ("recently", "since May")."""
    today = now.date()
    # The patterns are lowercase; IGNORECASE would defeat the fast scans of the anchors.
    lowered = text.lower()
    if len(lowered) != len(text):  # a few characters lengthen ("İ"): keep offsets aligned
        lowered = text.translate(_ASCII_LOWER)
    lowered = lowered.translate(_TRADITIONAL)
    if _GATE_CHARS.search(lowered) is None and _GATE_WORDS.search(lowered) is None:
        return []
    starts = [(a.start(), _ZH_PATTERN) for a in _ZH_ANCHOR.finditer(lowered)]
    starts += [(a.start(), _EN_PATTERN) for a in _EN_ANCHOR.finditer(lowered)]
    starts.sort(key=lambda hit: hit[0])
    found: dict[tuple[date, date], tuple[DateMention, bool]] = {}
    consumed = 0
    for start, pattern in starts:
        if start < consumed:
            continue
        m = pattern.match(lowered, start)
        if m is None:
            continue
        floor, consumed = consumed, m.end()  # even when rejected: those words were not a date
        # "Since" looks back: what it is said of is read in the past sense ("五月以来").
        since = _since(lowered, m, floor)
        if since is not None and ahead and _STARTS_ZH.match(lowered, m.end()):
            since = None
        meant = _resolve(m, today, text, ahead and since is None)
        if meant is None:
            continue
        kind = m.lastgroup or ""
        if isinstance(meant, date):
            first, last, yearless = meant, meant, kind in _YEARLESS_KINDS and _no_year(m)
        else:
            first, last, yearless = meant
        begin, end, hours = m.start(), m.end(), None
        backward = kind in _BACKWARD_KINDS
        if since is not None and first <= today:
            (begin, end), last, yearless, backward = since, today, False, True
        elif first == last:
            hours, begin, end = _hours(lowered, m, floor)
        consumed = max(consumed, end)
        if (first, last) not in found:
            mention = DateMention(
                day=last,
                text=text[begin:end],
                start=begin,
                first=None if first == last else first,
                yearless=yearless,
                hours=hours,
            )
            found[first, last] = (mention, backward)
    return list(found.values())


# Days named by month and day, perhaps without a year.
_YEARLESS_KINDS = frozenset({"en_md", "en_dm", "zh_md", "num"})
# Spans that run up to now, looking back: never a due date.
_BACKWARD_KINDS = frozenset({"en_few", "en_past", "en_recent", "zh_few", "zh_recent"})


def _no_year(m: re.Match[str]) -> bool:
    groups = m.groupdict()
    return all(groups.get(name) is None for name in ("em_year", "ed_year", "zm_y", "zm_ry", "nu_y"))


def _since(lowered: str, m: re.Match[str], floor: int) -> tuple[int, int] | None:
    """Where the words run, "since" included ("since May", 自从五月, 五月以来), if the match
    is said with it; None if not. `floor`: where the previous match ended."""
    begin, end = m.start(), m.end()
    said = m.group()
    if said.startswith(("since", "ever since")):
        return begin, end
    before = _SINCE_BEFORE.search(lowered, max(floor, begin - 16), begin)
    after = _SINCE_AFTER.match(lowered, end)
    if before is None and after is None:
        return None
    return (begin if before is None else before.start()), (end if after is None else after.end())


def _hours(lowered: str, m: re.Match[str], floor: int) -> tuple[tuple[int, int] | None, int, int]:
    """The hours of a time of day said in a day's words ("tonight", 明晚), after them
    ("tomorrow evening", 明天晚上) or as "first thing" before them, and where the words begin
    and end. `floor`: where the previous match ended."""
    kind, said = m.lastgroup, m.group()
    if kind == "en_rel" and (said.startswith(("tonight", "this ")) or said.endswith("night")):
        return _HOURS[said.split()[-1] if " " in said else said], m.start(), m.end()
    if kind == "zh_rel" and said[-1] in "晚夜早":
        return _HOURS[said[-1]], m.start(), m.end()
    after = _HOURS_AFTER.match(lowered, m.end())
    if after is not None:
        return _HOURS[after.group("en") or after.group("zh") or "morning"], m.start(), after.end()
    before = _FIRST_THING_BEFORE.search(lowered, max(floor, m.start() - 20), m.start())
    if before is not None:
        return _HOURS["morning"], before.start(), m.end()
    return None, m.start(), m.end()
