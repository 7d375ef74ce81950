"""Days a chat message refers to, found locally in English and Chinese free text.

A persona keeps a diary per day; when a message names a day ("yesterday", "上周三",
"May 4th", "2024-09-03", "9月3日"...), that day's entry goes into the prompt. This runs on every
message, so it is a few precompiled regular expressions: a gate that most messages fail (no
digit, no "day", no 天/月/号...: about 4 microseconds for 200 characters), fast scans for the
places a date could begin, the full pattern tried only there (about 15-25 microseconds for 200
characters that pass the gate), and small handlers that turn a match into a calendar day. No
library, no model, no I/O, no global mutable state.

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

Results come in order of appearance, each day once (its first mention), future days included:
the caller decides what to do with them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

__all__ = ["DateMention", "find_dates"]


@dataclass(slots=True, frozen=True)
class DateMention:
    """One day a message refers to."""

    day: date  # the calendar day meant
    text: str  # the words that said it, as in the message
    start: int  # offset in the message


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

_ZH_NUM = r"[一二三四五六七八九十廿卅]{1,3}"  # a day or month number in Chinese numerals
_NUM_BEFORE = r"(?<![0-9一二两三四五六七八九十廿卅百千万几多第\u3007零.:/-])"  # not in a number

_PATTERN = re.compile(
    "|".join(
        (
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
            # 2024-09-03, 2024/09/03, 2024.09.03.
            r"(?P<iso>(?<![0-9./-])(?P<is_y>(?:19|20)\d\d)(?P<is_sep>[-/.])(?P<is_m>\d{1,2})"
            r"(?P=is_sep)(?P<is_d>\d{1,2})(?![0-9])(?![./-]\d))",
            # [2024年]9月3日, 九月三号.
            rf"(?P<zh_md>{_NUM_BEFORE}(?:(?P<zm_y>\d{{4}}|[\u3007零一二三四五六七八九]{{4}})\s*年\s*)?"
            rf"(?P<zm_m>\d{{1,2}}|{_ZH_NUM})\s*月份?\s*(?P<zm_d>\d{{1,2}}|{_ZH_NUM})\s*[日号號])",
            # 上个月3号, 这个月3号, 本月3日.
            rf"(?P<zh_mo>(?P<zo_mod>上上个?|上个?|这个?|本|下下个?|下个?)月的?\s*"
            rf"(?P<zo_d>\d{{1,2}}|{_ZH_NUM})\s*[日号號])",
            # 今天, 昨天, 前天, ... (guards in the handler).
            r"(?P<zh_rel>大前天|大后天|前天|后天|昨天|昨日|昨晚|昨夜|今天|今日|今晚|今早|今夜"
            r"|明天|明日|明晚|明早)",
            # N天前, 两周前, 三个星期前.
            rf"(?P<zh_ago>{_NUM_BEFORE}(?P<za_n>\d{{1,4}}|[一二三四五六七八九十两]{{1,3}})\s*"
            r"(?:(?P<za_d>[天日])|(?P<za_w>个?(?:星期|礼拜)|周))\s*之?前(?!往))",
            # [上|这|下]周三, 星期天, 礼拜日.
            r"(?P<zh_wk>(?:(?P<zw_mod>上上个?|上个?|这个?|本|下下个?|下个?)"
            r"|(?<![0-9一二两三四五六七八九十几每数半个上下这本隔第整大小]))"
            r"(?:周|星期|礼拜)(?P<zw_day>[一二三四五六日天])"
            r"(?![次遍回趟顿个名位年月周岁本件只条张场节号程常期子志记历])(?!天(?!气)))",
            # 3号, 三号, 3日 alone (guards in the handler too).
            rf"(?P<zh_day>(?<![A-Za-z]){_NUM_BEFORE}(?<![月年])(?P<zd_n>\d{{1,2}}|{_ZH_NUM})"
            r"(?P<zd_s>[号號日])"
            r"(?![线綫楼樓房间門门床位座机車车厅馆台口码碼桌柜箱球员字种型院厂站仓单元栋室"
            r"店铺窗选电池病]))",
        )
    )
)

# After a bare "May 3": a quantity, not a date.
_QUANTITY_AFTER = re.compile(
    r"\s+(?:of|times?|or|to|and|more|less|people|persons?|men|women|kids|children|guys|hours?"
    r"|hrs?|minutes?|mins?|seconds?|secs?|days?|weeks?|months?|years?|miles?|km|kilometers?"
    r"|meters?|kg|kilos?|pounds?|lbs?|percent|dollars?|bucks|euros?|yuan|pieces?|items?"
    r"|things|cups?|glasses?|bottles?|slices?|x)(?![A-Za-z])"
)
# Where a match may begin. _PATTERN's lookbehinds keep the regex engine from skipping ahead, so
# scanning it over every position costs about a microsecond per character. These two are scanned
# fast (each alternative begins with a literal, or the pattern is one character class, which lets
# the engine skip positions), and _PATTERN is only tried where they hit. Their English words
# consume letters only, so no match can begin inside one of their hits.
_ZH_ANCHOR = re.compile(r"[\d大上下这本前后今明昨周星礼\u3007零一二三四五六七八九十两廿卅]")
_EN_ANCHOR = re.compile(
    "|".join(
        [
            *("today", "tonight", "tomorrow", "yesterday", "couple"),
            *(rf"{word}(?=\s)" for word in ("the", "day", "this", "last", "next", "on")),
            *(rf"{word}(?=\s)" for word in _EN_NUMBERS if " " not in word),
            *(rf"{month}(?=[a-z]*\.?\s+\d)" for month in _MONTH_KEYS),
        ]
    )
)
# Something every date this module knows has: a digit, a weekday or "today" ("day"), "ago", ...;
# in Chinese 天日晚早夜 (今天 今早 昨晚), 前 (三天前), 周期拜 (周三 星期三 礼拜三), 月, 号.
# Most messages have none, and cost these two fast scans.
_GATE_CHARS = re.compile(r"[\d天日晚早夜前周期拜月号號]")
_GATE_WORDS = re.compile(r"day|night|tomorrow|morning|afternoon|evening|ago")
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


# --- handlers: a match to a day, or None --------------------------------------------------------


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
    year_s = m.group("zm_y")
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


def _resolve(m: re.Match[str], today: date, original: str) -> date | None:
    """The day a match of _PATTERN (over the lowercased text) means, or None."""
    kind, text = m.lastgroup, m.string
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
    starts = [a.start() for a in _ZH_ANCHOR.finditer(lowered)]
    starts += [a.start() for a in _EN_ANCHOR.finditer(lowered)]
    starts.sort()
    found: dict[date, DateMention] = {}
    consumed = 0
    for start in starts:
        if start < consumed:
            continue
        m = _PATTERN.match(lowered, start)
        if m is None:
            continue
        consumed = m.end()  # even when rejected: those words were not a date
        day = _resolve(m, today, text)
        if day is not None and day not in found:
            found[day] = DateMention(day=day, text=text[m.start() : m.end()], start=m.start())
    return list(found.values())
