"""Days, and spans of days, a chat message refers to, found locally in English and Chinese.

A persona keeps a diary per day; when a message names a day ("yesterday", "上周三",
"May 4th", "2024-09-03", "9月3日"...), that day's entry goes into the prompt. This runs on every
message, so it is a few precompiled regular expressions: a gate that most messages fail (no
digit, no "day", "week", no 天/月/号...: about 8 microseconds for 200 characters), fast scans for
the places a date could begin, the full pattern (English or Chinese) tried only there (about
25-45 microseconds for 200 characters that pass the gate), and small handlers that turn a match
into a calendar day or a span of days. No library, no model, no I/O, no global mutable state.

It would rather miss an ambiguous date than invent one: "you may go", "march on", "second
thoughts", "3/4 of the pizza", "一周三次", "3号线", "以前天天跑步" give nothing.

Semantics (``today`` is ``now.date()``: the caller passes ``now`` in the user's timezone):

* English relative words: today / tonight / this morning|afternoon|evening = today; yesterday /
  last night = -1; the day before yesterday = -2; tomorrow = +1; the day after tomorrow = +2;
  "N days ago" (digits, one..twelve, "a", "a couple of"), "N weeks ago", "a fortnight ago".
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
  with an ordinal ("may 4th"), a year, or a capital letter ("May 4"); a bare day followed by a
  quantity word ("May 3 people", "June 3 times") or by a range ("May 4-6") is not taken.
  "of" needs an ordinal ("4th of May", not "4 of May").
* ISO-like: 2024-09-03, 2024/09/03, 2024.09.03 (the same separator twice; years 1900-2099).
  Numeric D/M forms (3/4, 9/3/2024) are ambiguous and ignored.
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
  May" (the most recent May before this month; the others, the most recent May begun); 5月,
  五月份, 5月初, 去年5月 (去年 今年 前年 also before a full date: 去年5月3日), 2025年5月. A
  month's name alone ("May I", "March on") is not taken, nor 五月天, 一月一次, 三个月.
* Not understood: seasons ("last summer": which months depends on the hemisphere), whole years
  (去年, "last year"), "recently", and words that point at another date ("the day before").

A day or month said without a year is marked ``yearless``: its days are the most recent ones,
and the caller may look at earlier years (the diary does, for a day with no page).

Results come in order of appearance, each day or span once (its first mention), future days
included: the caller decides what to do with them.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo

__all__ = ["DateMention", "day_bounds", "find_dates"]


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

    @property
    def days(self) -> tuple[date, date]:
        """The first and the last day meant (the same day when one day is meant)."""
        return (self.day if self.first is None else self.first, self.day)


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
}
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
_ZH_YEARS: dict[str, int] = {"去": -1, "今": 0, "前": -2}

_ZH_NUM = r"[一二三四五六七八九十廿卅]{1,3}"  # a day or month number in Chinese numerals
_NUM_BEFORE = r"(?<![0-9一二两三四五六七八九十廿卅百千万几多第\u3007零.:/-])"  # not in a number

# Each alternative is one named group: its name says which handler reads it.
_ALTERNATIVES = (
    # English relative words.
    rf"(?P<en_rel>{_B0}(?:(?:the\s+)?day\s+before\s+yesterday|(?:the\s+)?day\s+after"
    r"\s+tomorrow|today|tonight|this\s+(?:morning|afternoon|evening)|yesterday|tomorrow"
    rf"|last\s+night){_B1})",
    # N days / weeks ago.
    rf"(?P<en_ago>{_B0}(?P<ea_n>\d{{1,4}}|a\s+couple\s+of|a\s+couple|couple\s+of|a|one"
    r"|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+"
    r"(?P<ea_u>days?|weeks?|fortnights?)\s+ago" + _B1 + ")",
    # last / this / next / on + weekday.
    rf"(?P<en_wd>(?<!the\s){_B0}(?P<ew_mod>last|this\s+past|this\s+coming|this|next|on)"
    rf"\s+(?P<ew_day>{'|'.join(_WEEKDAYS)}){_B1}(?!\s+of{_B1}))",
    # Month day [year]: May 4th, Sept 3 2024.
    rf"(?P<en_md>{_B0}(?P<em_mon>{_MONTHS})\.?\s+(?P<em_day>\d{{1,2}})"
    rf"(?P<em_ord>st|nd|rd|th)?{_B1}(?![.:/\-\u2013]\d)"
    rf"(?:,?\s+(?P<em_year>(?:19|20)\d\d){_B1})?)",
    # [the] day[th] [of] Month [year]: 4 May, the 4th of May, 4th May 2024.
    rf"(?P<en_dm>{_B0}(?<![.:/-])(?:the\s+)?(?P<ed_day>\d{{1,2}})"
    rf"(?P<ed_ord>st|nd|rd|th)?(?P<ed_of>\s+of)?\s+(?P<ed_mon>{_MONTHS}){_B1}\.?"
    rf"(?:,?\s+(?P<ed_year>(?:19|20)\d\d){_B1})?)",
    # Spans: a few / several days or weeks ago; the other day.
    rf"(?P<en_few>{_B0}(?:a\s+)?(?P<ef_n>few|several)\s+(?P<ef_u>days|weeks)\s+ago{_B1}"
    rf"|{_B0}the\s+other\s+day{_B1})",
    # The past few days, the last 3 days, these past couple of days, the past week.
    rf"(?P<en_past>{_B0}(?:(?:the|these)\s+)?(?:past|last)\s+(?P<es_n>few|couple\s+of"
    r"|\d{1,2}|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+days"
    rf"{_B1}|{_B0}(?:the|this)\s+past\s+week{_B1})",
    # Last weekend, this past weekend, this weekend, over the weekend.
    rf"(?P<en_wkend>{_B0}(?P<ee_which>last|this\s+past|this|(?:over|at|on|during)\s+the)"
    rf"\s+weekend{_B1})",
    # Last week, earlier this week, early last month, the end of last month, the week
    # before last.
    rf"(?P<en_per>{_B0}(?:(?P<ep_part>early|earlier|late|mid|(?:at\s+)?the\s+(?:beginning"
    r"|start|end|middle)\s+of)(?:\s+|-))?(?P<ep_which>last|this)\s+(?P<ep_unit>week|month)"
    rf"{_B1}|{_B0}earlier\s+in\s+the\s+(?P<ep_in>week|month){_B1}"
    rf"|{_B0}(?:the\s+)?(?P<ep_before>week|month)\s+before\s+last{_B1})",
    # Months by name: in May, last March, early June, the end of May, May 2025 (not
    # "May 4": a day).
    rf"(?P<en_mon>{_B0}(?:(?P<eo_lead>in|during|back\s+in|last)\s+)?(?:(?P<eo_part>early"
    r"|late|mid|(?:at\s+)?the\s+(?:beginning|start|end|middle)\s+of)(?:\s+|-))?"
    rf"(?P<eo_mon>{_MONTHS}){_B1}\.?(?!\s*\d{{1,2}}(?![0-9]))"
    rf"(?:,?\s+(?P<eo_year>(?:19|20)\d\d){_B1})?)",
    # 2024-09-03, 2024/09/03, 2024.09.03.
    r"(?P<iso>(?<![0-9./-])(?P<is_y>(?:19|20)\d\d)(?P<is_sep>[-/.])(?P<is_m>\d{1,2})"
    r"(?P=is_sep)(?P<is_d>\d{1,2})(?![0-9])(?![./-]\d))",
    # [2024年]9月3日, 九月三号.
    rf"(?P<zh_md>{_NUM_BEFORE}(?:(?:(?P<zm_y>\d{{4}}|[\u3007零一二三四五六七八九]{{4}})"
    r"|(?P<zm_ry>去|今|(?<![以之目提从先])前))\s*年\s*)?"
    rf"(?P<zm_m>\d{{1,2}}|{_ZH_NUM})\s*月份?\s*(?P<zm_d>\d{{1,2}}|{_ZH_NUM})\s*[日号號])",
    # 上个月3号, 这个月3号, 本月3日.
    rf"(?P<zh_mo>(?P<zo_mod>上上个?|上个?|这个?|本|下下个?|下个?)月的?\s*"
    rf"(?P<zo_d>\d{{1,2}}|{_ZH_NUM})\s*[日号號])",
    # 上个月, 上月初, 这个月底, 本月中旬 (not 这个月饼).
    r"(?P<zh_mspan>(?P<zp_mod>上上个?|上个?|这个?|本)月份?(?P<zp_part>初|中旬|上旬|下旬|中|底|末)?"
    r"(?![饼亮光球台票嫂薪子\d一二三四五六七八九十廿卅]))",
    # 今天, 昨天, 前天, ... (guards in the handler).
    r"(?P<zh_rel>大前天|大后天|前天|后天|昨天|昨日|昨晚|昨夜|今天|今日|今晚|今早|今夜"
    r"|明天|明日|明晚|明早)",
    # N天前, 两周前, 三个星期前.
    rf"(?P<zh_ago>{_NUM_BEFORE}(?P<za_n>\d{{1,4}}|[一二三四五六七八九十两]{{1,3}})\s*"
    r"(?:(?P<za_d>[天日])|(?P<za_w>个?(?:星期|礼拜)|周))\s*之?前(?!往))",
    # 前几天, 前些日子, 这两天, 几天前, 几个星期前 (guards in the handler).
    r"(?P<zh_few>前几天|前两天|前些天|前些日子|前一阵子?|前阵子|前段时间|前些时候|这几天|这两天"
    r"|近几天|近两天|几天之?前|几个?(?:星期|礼拜)之?前|几周之?前)(?!往)",
    # [上|这|下]周三, 星期天, 礼拜日.
    r"(?P<zh_wk>(?:(?P<zw_mod>上上个?|上个?|这个?|本|下下个?|下个?)"
    r"|(?<![0-9一二两三四五六七八九十几每数半个上下这本隔第整大小]))"
    r"(?:周|星期|礼拜)(?P<zw_day>[一二三四五六日天])"
    r"(?![次遍回趟顿个名位年月周岁本件只条张场节号程常期子志记历])(?!天(?!气))"
    r"(?!(?<=天)气))",  # 上周天气: last week's weather
    # 上周, 上周末, 上个星期, 本周末 (not 上周三: a day; nor 这周期).
    r"(?P<zh_wspan>(?P<zs_mod>上上个?|上个?|这个?|本)(?:周|星期|礼拜)(?P<zs_end>末)?"
    r"(?![一二三四五六日期年岁边报刊会])(?!天(?!气)))",
    # Months: 5月, 五月份, 去年5月, 2025年5月初 (not 5月3日: a day; nor 五月天).
    rf"(?P<zh_mon>{_NUM_BEFORE}(?<![个每几这上下本半哪正腊闰])(?:(?:(?P<zn_y>\d{{4}}"
    r"|[\u3007零一二三四五六七八九]{4})|(?P<zn_ry>去|今|(?<![以之目提从先])前))\s*年\s*)?"
    r"(?P<zn_m>\d{1,2}|十[一二]?|[一二三四五六七八九])\s*月份?(?P<zn_part>初|中旬|上旬|下旬|中|底|末)?"
    r"(?![\d一二两三四五六七八九十廿卅几日号號天亮光饼球票薪嫂]))",
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
    frozenset(k for k in _KINDS if not k.startswith("en_")) | {"en_ago", "en_dm"}
)

# After a bare "May 3": a quantity, not a date.
_QUANTITY_AFTER = re.compile(
    r"\s+(?:of|times?|or|to|and|more|less|people|persons?|men|women|kids|children|guys|hours?"
    r"|hrs?|minutes?|mins?|seconds?|secs?|days?|weeks?|months?|years?|miles?|km|kilometers?"
    r"|meters?|kg|kilos?|pounds?|lbs?|percent|dollars?|bucks|euros?|yuan|pieces?|items?"
    r"|things|cups?|glasses?|bottles?|slices?|x)(?![A-Za-z])"
)
# Where a match may begin. The patterns' lookbehinds keep the regex engine from skipping ahead, so
# scanning them over every position costs about a microsecond per character. These two are scanned
# fast (each alternative begins with a literal, or the pattern is one character class, which lets
# the engine skip positions), and a pattern is only tried where they hit: _ZH_PATTERN at digits
# and Chinese characters, _EN_PATTERN at English words. Their English words
# consume letters only, so no match can begin inside one of their hits.
_ZH_ANCHOR = re.compile(r"[\d大上下这本前后今明昨去几近周星礼\u3007零一二三四五六七八九十两廿卅]")
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
            r"at(?=\s+the\s)",
            r"mid(?=[\s-])",
            rf"in(?=\s+(?:early|late|mid|{'|'.join(_MONTH_KEYS)}))",
            *(rf"{month}(?=[a-z]*\.?\s+\d)" for month in _MONTH_KEYS),
        ]
    )
)
# Something every date this module knows has: a digit, a weekday or "today" ("day"), "ago",
# "week", a month's name after the words that make it a date ("in May")...;
# in Chinese 天日晚早夜 (今天 今早 昨晚), 前 (三天前), 周期拜 (周三 星期三 礼拜三), 月, 号.
# Most messages have none, and cost these two fast scans.
_GATE_CHARS = re.compile(r"[\d天日晚早夜前周期拜月号號]")
_GATE_WORDS = re.compile(
    r"day|night|tomorrow|morning|afternoon|evening|ago|week|month"
    rf"|(?:in|during|last|early|late|mid|of)[\s-]+(?:{'|'.join(_MONTH_KEYS)})"
)
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
# Characters before 前天 / 后天 / 明天 / 今天 that make it part of another word.
_ZH_REL_BLOCKED_BEFORE: dict[str, str] = {
    "前": "以之目提面眼事空当跟先向往日生从门胸朝",
    "后": "先以之然最背落午随而今此其前",
    "明": "聪光文透表声证发精英鲜分清黎贤开简申阐查标注失昌神鸣照",
    "今": "如古迄",
}
# After 周一 / 星期一: 一 begins another word (这周一直很忙, 这周一起去).
_AFTER_WEEKDAY_ONE = frozenset("直起样共般切些定块同次遍趟点会")
# After a bare digit + 日: a duration, not a day (3日游, 3日内).
_AFTER_BARE_RI = frozenset("游内后前间以之来左右多余起止")


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


# --- handlers: a match to a day (or a span: _Span), or None -------------------------------------


def _en_rel(m: re.Match[str], today: date) -> date | None:
    words = " ".join(m.group().lower().split()).removeprefix("the ")
    return _shift(today, _EN_RELATIVE[words])


def _en_ago(m: re.Match[str], today: date) -> date | None:
    raw = " ".join(m.group("ea_n").lower().split())
    count = int(raw) if raw.isdigit() else _EN_NUMBERS[raw]
    unit = m.group("ea_u").lower()
    per = 14 if unit.startswith("fortnight") else 7 if unit.startswith("week") else 1
    return _shift(today, -count * per)


def _en_wd(m: re.Match[str], today: date) -> date | None:
    mod = " ".join(m.group("ew_mod").lower().split())
    target = _WEEKDAYS.index(m.group("ew_day").lower())
    now_wd = today.weekday()
    if mod == "this":
        return _shift(today, target - now_wd)
    if mod in ("next", "this coming"):
        return _shift(today, (target - now_wd - 1) % 7 + 1)
    # last, this past, on: the most recent one strictly before today.
    return _shift(today, -((now_wd - target - 1) % 7 + 1))


def _en_month_day(m: re.Match[str], today: date, original: str, key: str) -> date | None:
    """Month and day (``key`` "em": "May 4th") or day and month (``key`` "ed": "4th of May")."""
    word, ordinal, year_s = m.group(f"{key}_mon"), m.group(f"{key}_ord"), m.group(f"{key}_year")
    bare = ordinal is None and year_s is None
    if bare and word.rstrip(".") in _AMBIGUOUS_MONTHS and original[m.start(f"{key}_mon")].islower():
        return None  # "you may 4", "we march 10 miles"
    if key == "em" and bare and _QUANTITY_AFTER.match(m.string, m.end()):
        return None  # "May 3 people", "June 3 times"
    if key == "ed" and m.group("ed_of") is not None and ordinal is None:
        return None  # "3 of march"
    month, day = _month_number(word), int(m.group(f"{key}_day"))
    if year_s is not None:
        return _make_date(int(year_s), month, day)
    return _recent_month_day(today, month, day)


def _iso(m: re.Match[str], today: date) -> date | None:
    return _make_date(int(m.group("is_y")), int(m.group("is_m")), int(m.group("is_d")))


def _zh_md(m: re.Match[str], today: date) -> date | None:
    month, day = _zh_int(m.group("zm_m")), _zh_int(m.group("zm_d"))
    if month is None or day is None:
        return None
    year_s, relative = m.group("zm_y"), m.group("zm_ry")
    if relative is not None:  # 去年, 今年, 前年
        return _make_date(today.year + _ZH_YEARS[relative], month, day)
    if year_s is not None:
        year = _zh_int(year_s)
        return None if year is None else _make_date(year, month, day)
    return _recent_month_day(today, month, day)


def _zh_mo(m: re.Match[str], today: date) -> date | None:
    day = _zh_int(m.group("zo_d"))
    if day is None:
        return None
    shift = _ZH_WEEK_SHIFT[m.group("zo_mod").rstrip("个")]
    year, month = _add_months(today.year, today.month, shift)
    return _make_date(year, month, day)


def _zh_ago(m: re.Match[str], today: date) -> date | None:
    count = _zh_int(m.group("za_n"))
    if count is None:
        return None
    return _shift(today, -count * (1 if m.group("za_d") else 7))


def _zh_wk(m: re.Match[str], today: date, text: str) -> date | None:
    wd_char = m.group("zw_day")
    if wd_char == "一" and m.end() < len(text) and text[m.end()] in _AFTER_WEEKDAY_ONE:
        return None
    target = _ZH_WEEKDAYS[wd_char]
    mod = m.group("zw_mod")
    if mod is None:  # alone: the most recent one, today included
        return _shift(today, -((today.weekday() - target) % 7))
    weeks = _ZH_WEEK_SHIFT[mod.rstrip("个")]
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


def _zh_day(m: re.Match[str], today: date, text: str) -> date | None:
    number = m.group("zd_n")
    if m.group("zd_s") == "日":
        if not number.isdigit():  # 三日: also "three days"
            return None
        if m.end() < len(text) and text[m.end()] in _AFTER_BARE_RI:
            return None
    day = _zh_int(number)
    return None if day is None else _recent_day_of_month(today, day)


def _en_few(m: re.Match[str], today: date) -> _Span | None:
    unit = m.group("ef_u")
    if unit is None:
        return _days_back(today, _THE_OTHER_DAY)
    return _days_back(today, _EN_FEW[f"{m.group('ef_n')} {unit}"])


def _en_past(m: re.Match[str], today: date) -> _Span | None:
    raw = m.group("es_n")
    if raw is None:  # the past week
        return _days_back(today, (-7, 0))
    raw = " ".join(raw.split())
    count = int(raw) if raw.isdigit() else 3 if raw == "few" else _EN_NUMBERS[raw]
    return _days_back(today, (-count, 0)) if count else None


def _en_wkend(m: re.Match[str], today: date) -> _Span | None:
    which = " ".join(m.group("ee_which").split())
    if which == "this":
        weeks = 0
    elif which in ("last", "this past"):
        weeks = -1
    else:  # over the weekend: the latest one begun
        weeks = 0 if today.weekday() >= 5 else -1
    return _week_span(today, weeks, (5, 6))


def _en_per(m: re.Match[str], today: date) -> _Span | None:
    before = m.group("ep_before")
    if before == "week":
        return _week_span(today, -2, (0, 6))
    if before == "month":
        year, month = _add_months(today.year, today.month, -2)
        return _month_span(year, month, None, False)
    unit = m.group("ep_in")
    if unit is not None:  # earlier in the week
        part_words: str | None = "earlier"
        shift = 0
    else:
        unit, part_words = m.group("ep_unit"), m.group("ep_part")
        shift = -1 if m.group("ep_which") == "last" else 0
    if part_words == "earlier":
        if shift == 0:  # earlier this week / month: up to yesterday
            start = _shift(today, -today.weekday() if unit == "week" else 1 - today.day)
            end = _shift(today, -1)
            return None if start is None or end is None or end < start else (start, end, False)
        part_words = None
    part = _part(part_words)
    if unit == "week":
        return _week_span(today, shift, (0, 6) if part is None else _WEEK_PARTS[part])
    year, month = _add_months(today.year, today.month, shift)
    return _month_span(year, month, part, False)


def _en_mon(m: re.Match[str], today: date, original: str) -> _Span | None:
    lead, part_words, year_s = m.group("eo_lead"), m.group("eo_part"), m.group("eo_year")
    word = m.group("eo_mon")
    if lead is None and part_words is None and year_s is None:
        return None  # a month's name alone: "May I ask", "March on"
    if (
        word.rstrip(".") in _AMBIGUOUS_MONTHS
        and original[m.start("eo_mon")].islower()
        and lead == "last"
        and part_words is None
        and year_s is None
    ):
        return None  # "their last march"
    month = _month_number(word)
    if year_s is not None:
        year = int(year_s)
    elif lead == "last":  # the most recent one before this month
        year = today.year if month < today.month else today.year - 1
    else:  # the most recent one begun
        year = today.year if month <= today.month else today.year - 1
    return _month_span(year, month, _part(part_words), year_s is None)


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


def _zh_wspan(m: re.Match[str], today: date) -> _Span | None:
    weeks = _ZH_WEEK_SHIFT[m.group("zs_mod").rstrip("个")]
    return _week_span(today, weeks, (5, 6) if m.group("zs_end") else (0, 6))


def _zh_mon(m: re.Match[str], today: date) -> _Span | None:
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
    year = today.year if month <= today.month else today.year - 1
    return _month_span(year, month, part, True)


def _resolve(m: re.Match[str], today: date, original: str) -> date | _Span | None:
    """The day or span a match of a pattern (over the lowercased text) means, or None."""
    kind, text = m.lastgroup, m.string
    if kind == "en_few":
        return _en_few(m, today)
    if kind == "en_past":
        return _en_past(m, today)
    if kind == "en_wkend":
        return _en_wkend(m, today)
    if kind == "en_per":
        return _en_per(m, today)
    if kind == "en_mon":
        return _en_mon(m, today, original)
    if kind == "zh_mspan":
        return _zh_mspan(m, today)
    if kind == "zh_few":
        return _zh_few(m, today, text)
    if kind == "zh_wspan":
        return _zh_wspan(m, today)
    if kind == "zh_mon":
        return _zh_mon(m, today)
    if kind == "en_rel":
        return _en_rel(m, today)
    if kind == "en_ago":
        return _en_ago(m, today)
    if kind == "en_wd":
        return _en_wd(m, today)
    if kind == "en_md":
        return _en_month_day(m, today, original, "em")
    if kind == "en_dm":
        return _en_month_day(m, today, original, "ed")
    if kind == "iso":
        return _iso(m, today)
    if kind == "zh_md":
        return _zh_md(m, today)
    if kind == "zh_mo":
        return _zh_mo(m, today)
    if kind == "zh_rel":
        return _zh_rel(m, today, text)
    if kind == "zh_ago":
        return _zh_ago(m, today)
    if kind == "zh_wk":
        return _zh_wk(m, today, text)
    if kind == "zh_day":
        return _zh_day(m, today, text)
    raise AssertionError(f"unhandled date pattern {kind!r}")  # pragma: no cover


# --- the API ---------------------------------------------------------------------------------


def find_dates(text: str, now: datetime) -> list[DateMention]:
    """Every day the message refers to, in order of appearance, without duplicates (same day
    once, at its first mention).

    Relative words are resolved against ``now.date()``: ``now`` is timezone-aware and already
    in the user's timezone, and it is not converted. Future days are returned too (the caller
    decides).
    """
    today = now.date()
    # The patterns are lowercase; IGNORECASE would defeat the fast scans of the anchors.
    lowered = text.lower()
    if len(lowered) != len(text):  # a few characters lengthen ("İ"): keep offsets aligned
        lowered = text.translate(_ASCII_LOWER)
    if _GATE_CHARS.search(lowered) is None and _GATE_WORDS.search(lowered) is None:
        return []
    starts = [(a.start(), _ZH_PATTERN) for a in _ZH_ANCHOR.finditer(lowered)]
    starts += [(a.start(), _EN_PATTERN) for a in _EN_ANCHOR.finditer(lowered)]
    starts.sort(key=lambda hit: hit[0])
    found: dict[tuple[date, date], DateMention] = {}
    consumed = 0
    for start, pattern in starts:
        if start < consumed:
            continue
        m = pattern.match(lowered, start)
        if m is None:
            continue
        consumed = m.end()  # even when rejected: those words were not a date
        meant = _resolve(m, today, text)
        if meant is None:
            continue
        if isinstance(meant, date):
            first, last, yearless = meant, meant, m.lastgroup in _YEARLESS_KINDS and _no_year(m)
        else:
            first, last, yearless = meant
        if (first, last) not in found:
            found[first, last] = DateMention(
                day=last,
                text=text[m.start() : m.end()],
                start=m.start(),
                first=None if first == last else first,
                yearless=yearless,
            )
    return list(found.values())


# Days named by month and day, perhaps without a year.
_YEARLESS_KINDS = frozenset({"en_md", "en_dm", "zh_md"})


def _no_year(m: re.Match[str]) -> bool:
    groups = m.groupdict()
    return all(groups.get(name) is None for name in ("em_year", "ed_year", "zm_y", "zm_ry"))
