"""How chat says days and hours, rewritten as `memory.dates` reads them: Traditional characters
as simplified, Cantonese days and parts of the day (聽日, 聽朝, 朝早) as Mandarin ones, chat's
"tmrw", "next tue", "wknd", 明儿, a weekday alone as the coming one, a weekday said around its
week ("thursday next week") or as a habit and then "this one", countdowns ("3 more days till"),
weeks counted the British way ("tomorrow week", "a fortnight today", "the weekend after next"),
12.20 before Chinese, a weekday before 年会 (下周五年会), holidays as their dates (the lunar new
year's and the days of its first month by a table of years), an evening's event's bare hour as the
evening's and an alarm's as the morning's; and "in two hours", "a week from Monday", "the day
before" a day, the last day of a span ("from friday to sunday"), a month and day gone by this
year in a plan as next year's. Shared by `memory.encoding.intentions.resolve` and the local
reading (`memory.encoding.spotting`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date, datetime, timedelta

from memory.dates import DateMention, clock_time, find_dates

CHINESE = re.compile(r"[\u4e00-\u9fff]")

_BARE_WEEKDAY = re.compile(
    r"(?<![a-z])(monday|tuesday|wednesday|thursday|friday|saturday|sunday)(?![a-z])"
)
# ("coming tuesday" alone is "on tuesday": the date reader knows "this coming tuesday")
_PLAIN_WEEKDAY = re.compile(
    r"(?<![a-z])(?:(?:this|next|last|on|(?<=this\s)coming|(?<=the\s)coming|past|since"
    r"|(?:every|each)(?:\s+(?:other|second|third|alternate))?)\s+)$"
)
# Any such day, no date: "it's 10pm on a saturday and i'm still at work".
_ANY_WEEKDAY = re.compile(r"(?<![a-z])(?:a|any)\s+$")
# "off to cornwall for the weekend": this week's.
_THE_WEEKEND = re.compile(r"(?<![a-z])(?<=for\s)the\s+weekend(?![a-z])", re.IGNORECASE)
# British and chat ways of counting weeks: "the weekend after next", "tomorrow week", "a
# fortnight today", "this coming weekend", "a week today".
_BRITISH_WEEKS = re.compile(
    r"(?<![a-z])(?:the\s+(?P<after>weekend|week)\s+after\s+next|(?P<day>tomorrow|today)\s+week"
    r"|(?:a\s+)?fortnight\s+(?:today|from\s+today)|(?:this\s+|the\s+)?coming\s+weekend"
    r"|a\s+week\s+(?P<week_from>today|tomorrow))(?![a-z])",
    re.IGNORECASE,
)


def _british_week(m: re.Match[str]) -> str:
    if m.group("after"):
        return f"a week from next {m.group('after').lower()}"
    if m.group("day"):
        return f"a week from {m.group('day').lower()}"
    if m.group("week_from"):  # "a week today": seven days on
        return "in 7 days" if m.group("week_from").lower() == "today" else "in 8 days"
    return "in 14 days" if "fortnight" in m.group().lower() else "this weekend"


# A month and day with a dot in Chinese: 12.20去看演唱会 (not 12.20元).
_DOTTED_ZH = re.compile(
    r"(?<![\d.])(1[0-2]|0?[1-9])\.(3[01]|[12]\d|0?[1-9])(?![\d.])(?=[\u4e00-\u9fff])"
    r"(?![元块角分米斤克个件次度点倍号日月岁年])"
)
# A weekday before 年 (年会, 年终): 下周五年会 is 下周五's 年会, not 五年.
_WEEKDAY_YEAR = re.compile(r"(?<=[周期拜][一二三四五六日天])(?=年(?:会|终|夜饭|货))")
# 周末 alone is this week's weekend (dates reads it only with 这 / 本 / 上 / 下).
_BARE_WEEKEND = re.compile(r"(?<![这本上下个每])(?:周末|週末)")
# Chat's short words for days: "tmrw", "2moro", "tonite"; Australian "arvo", "s'arvo" (this
# afternoon).
_CHAT_DAYS = re.compile(
    r"(?<![a-z0-9])(?:(?P<tomorrow>tmrw?|tmw|tmrrw|2mo?rr?ow|2moro|2mrw|tomoz|tomorow|tommorow|tommorrow)"
    r"|(?P<tonight>tonite|2nite)|(?P<arvo>arvo)|(?P<this_arvo>s['\u2019]?arvo))(?![a-z])",
    re.IGNORECASE,
)
# A part of the day alone opening a plan's clause is today's: 傍晚要去驾校练车, 晚上我得去医院.
_PART_TODAY_ZH = re.compile(
    r"(?:^|(?<=[，,。！!\s]))(?P<me>(?:我们?)?)(?P<part>傍晚|黄昏|晚上|下午|中午)(?=(?:我们?)?"
    r"(?:要|得|还要|还得|准备|打算|约了))"
)
# Spoken Chinese days: 明儿, 后儿个, 今儿.
_SPOKEN_DAYS = re.compile(r"(?<![聪光说透鲜证发表声然以之最前背])(大后|明|后|今)儿(?:个)?")
# 明天一早: early that morning.
_EARLY_ZH = re.compile(r"(?<=[天儿])一(?:大)?早(?:上)?")
_CHAT_DAY = {
    "tomorrow": "tomorrow", "tonight": "tonight", "arvo": "afternoon",
    "this_arvo": "this afternoon",
}  # fmt: skip
_SPOKEN_DAY = {"大后": "大后天", "明": "明天", "后": "后天", "今": "今天"}
# A countdown: "3 more days till my flight", "2 sleeps until the trip", 还有三天就考试了.
_COUNTDOWN = re.compile(
    r"(?<![a-z0-9])(?:only\s+)?(?P<n>\d{1,2}|two|three|four|five|six|seven|eight|nine|ten)"
    r"\s+(?:more\s+)?(?:days|sleeps)\s+(?:till|until|til|to|before)(?![a-z])",
    re.IGNORECASE,
)
_COUNTDOWN_ZH = re.compile(r"还有(?P<n>[0-9一二两三四五六七八九十]{1,3})天")
# Chat's "wk", "wknd": week, weekend.
_CHAT_WEEK = re.compile(r"(?<![a-z])(?:wk|wknd|wkend)(?![a-z])", re.IGNORECASE)
# A weekday cut short ("next tue", "fri evening", "sat at 2"), taken only with words that make
# it a day: "sat", "sun" and "wed" are words too ("we sat at 8", "sun at noon" is no day's).
_SHORT_WEEKDAY = re.compile(
    r"(?<![a-z'\u2019])(?:(?P<lead>next|this|on|coming|by|till|until|before)\s+)?"
    r"(?P<day>mon|tues?|weds?|thu|thur|thurs|fri|sat|sun)\.?(?![a-z'\u2019])"
    r"(?:(?P<part>\s+(?:morning|afternoon|evening|night|noon))"
    r"|(?P<clock>(?<!i\ssat)(?<!we\ssat)(?<!they\ssat)(?<!he\ssat)(?<!she\ssat)(?<!the\ssun)"
    r"(?=\s*(?:at|@|around|by)\s*\d|\s*,?\s*\d{1,2}(?:[:.]\d\d)?\s*[ap]\.?m(?![a-z]))))?",
    re.IGNORECASE,
)
# Short weekdays that are no other word ("mon", "fri"), taken alone too: "new job mon!!!".
_SHORT_ONLY = frozenset({"mon", "tue", "tues", "thu", "thur", "thurs", "fri"})
_SHORT_DAYS = {
    "mon": "monday", "tue": "tuesday", "tues": "tuesday", "wed": "wednesday",
    "weds": "wednesday", "thu": "thursday", "thur": "thursday", "thurs": "thursday",
    "fri": "friday", "sat": "saturday", "sun": "sunday",
}  # fmt: skip
# "A week from Monday", British "a week on Friday", "a week Friday": that day, a week on.
WEEK_FROM = re.compile(
    r"(?<![a-z])(?<!once\s)(?<!twice\s)(?<!in\s)(?:a|one)\s+week\s+(?:(?:from|on)\s+)?$",
    re.IGNORECASE,
)
# The day before or after a day: "the day before christmas eve", 周五前一天.
DAY_BEFORE_EN = re.compile(
    r"(?<![a-z])(?:the\s+)?(?:day|night)\s+(?P<dir>before|after)\s+(?:on\s+)?$", re.IGNORECASE
)
DAY_BEFORE_ZH = re.compile(r"的?(?P<dir>前|后)一(?:天|晚)")


def day_shift(words: str, mention: DateMention) -> timedelta:
    """A day less or more when `words` say the day before or after `mention`'s."""
    said = DAY_BEFORE_EN.search(words, 0, mention.start) or DAY_BEFORE_ZH.match(
        words, mention.start + len(mention.text)
    )
    if said is None:
        return timedelta()
    return timedelta(days=-1 if said.group("dir") in ("before", "前") else 1)


# Between a span's first day and its last: "from friday to monday", 周五到周日.
_SPAN_TO = re.compile(
    r"\s*(?:to|until|till|til|thru|through|-|\u2013|\u2014|至|到)\s*", re.IGNORECASE
)


def span_end(words: str, mentions: Sequence[DateMention]) -> DateMention | None:
    """The day a span begun on the first of `mentions` ends on, when the next follows it after
    "to" or "until" and is later; else None."""
    if len(mentions) < 2:
        return None
    first, then = mentions[0], mentions[1]
    gap = words[first.start + len(first.text) : then.start]
    if _SPAN_TO.fullmatch(gap) and then.day > first.day:
        return then
    return None


# A trip's return, between its first day and a later one ("off on the 10th and back on the
# 18th") or after the later one (12号去成都，20号才回来).
_BACK_EN = re.compile(
    r"[\s,]\s*(?:and\s+)?(?:(?:then|coming|flying|getting|heading|i['\u2019]?m|we['\u2019]?re)\s+)?"
    r"(?:back|home|returning)(?:\s+home)?(?:\s+on)?\s*$",
    re.IGNORECASE,
)
_BACK_ZH = re.compile(r"\s*(?:才|就|再)?(?:回来|返程|回国)")


def return_day(words: str, mentions: Sequence[DateMention]) -> DateMention | None:
    """The later day a trip begun on the first of `mentions` comes back on, when the next is
    said as its return and is later; else None."""
    if len(mentions) < 2:
        return None
    first, then = mentions[0], mentions[1]
    gap = words[first.start + len(first.text) : then.start]
    back = _BACK_EN.search(gap) or _BACK_ZH.match(words, then.start + len(then.text))
    return then if back is not None and then.day > first.day else None


# A morning with no day ("remind me in the morning", "first thing"): the next one.
MORNING_ALONE = re.compile(r"(?<![a-z])(?:in\s+the\s+morning|first\s+thing)(?![a-z])", re.I)
MORNING = (6, 12)


def next_morning(now: datetime) -> date:
    """The day of the next morning to begin: today's before it, else tomorrow's."""
    return now.date() if now.hour < MORNING[0] else now.date() + timedelta(days=1)


# "In two hours", "in 30 minutes": a reminder's moment, from now.
IN_HOURS = re.compile(
    r"(?<![a-z])in\s+(?:(?P<n>\d{1,3}|a|an|one|two|three|four|five|six|ten|twenty|thirty)"
    r"(?P<half_before>\s+and\s+a\s+half)?"
    r"|(?P<half>half\s+an?))\s+(?P<u>hours?|hrs?|minutes?|mins?)(?P<and_half>\s+and\s+a\s+half)?"
    r"(?![a-z])"
    r"|(?P<zn>\d{1,3}|[一二两三四五六七八九十半]{1,3})\s*(?:个)?(?P<zu>小时|钟头|分钟)[以之]?后",
    re.IGNORECASE,
)


# Events of the evening, whose hour without am or pm is the evening's; and the morning's words.
_EVENING = re.compile(
    r"(?<![a-z])(?:dinner|supper|drinks|party|movie|film|concert|gig|bar|pub|club|date|doors"
    r"|karaoke|gala|prom|bbq|barbecue)s?(?![a-z])"
)
_MORNING = re.compile(r"(?<![a-z])(?:morning|breakfast|brunch|tomorrow\s+am)(?![a-z])")
_CLAUSE_AFTER = re.compile(r"[,，;.!?。！？]|\s(?:and|but|then)\s")
_WAKING = re.compile(
    r"(?<![a-z])(?:alarm|wake\s+(?:me|up)|get\s+up|oversleep|sleep\s+in"
    # a race starts in the morning: "marathon tomorrow. 6:45 start"
    r"|(?:half\s+)?marathon|triathlon|park\s*run|duathlon|ultra|fun\s+run|\d+k\s+(?:race|run))"
    r"(?![a-z])"
)
_AM = re.compile(r"[ap]\.?m(?![a-z])|morning|night|evening|afternoon")


# What ends a message after its last word: "...the parcel pickup sat".
_AT_END = re.compile(r"[\s.!?~]*")
# Words before "sat", "sun" or "wed" that make it no weekday: "i sat", "the sun", "getting wed".
_NOT_A_DAY_AFTER = re.compile(
    r"(?<![a-z])(?:i|we|they|he|she|it|you|u|who|the|a|some|in|of|and|just|then|finally|getting"
    r"|get|got|be|been|newly)\s+$",
    re.IGNORECASE,
)

_OTHER_DAY = re.compile(
    r"(?:mon|tues?|wed|weds|wednes|thu|thur|thurs|fri|satur|sun)(?:day)?(?![a-z])|tomorrow|tmrw?"
    r"|tonight|today|weekend|\d",
    re.IGNORECASE,
)


def _short_weekday(m: re.Match[str]) -> str:
    alone = m.group("lead") is None and m.group("part") is None and m.group("clock") is None
    day_alone = m.group("day").lower() not in _SHORT_ONLY or m.group().endswith(".")
    # an ambiguous one ends a message naming no other day, after a noun: "remind me abt the
    # parcel pickup sat", or its sentence, the rest naming none: "got moved to thurs. wish me luck"
    ended = m.group().endswith(".") or m.string.startswith(("!", "?"), m.end())
    ends = (
        (
            _AT_END.fullmatch(m.string, m.end()) is not None
            or (ended and _OTHER_DAY.search(m.string, m.end()) is None)
        )
        and m.start() > 0
        and _NOT_A_DAY_AFTER.search(m.string, 0, m.start()) is None
        and _OTHER_DAY.search(m.string, 0, m.start()) is None
    )
    if alone and day_alone and not ends:
        return m.group()
    day = _SHORT_DAYS[m.group("day").lower()]
    lead = f"{m.group('lead')} " if m.group("lead") else ""
    return f"{lead}{day}{m.group('part') or ''}"


# A weekday of next week or of this one said around it: "thursday next week", "next week on
# friday", "friday this week".
_WEEKDAY_OF_WEEK = re.compile(
    r"(?<![a-z])(?:on\s+)?(?P<day>(?:mon|tues|wednes|thurs|fri|satur|sun)day)\s+(?:of\s+)?"
    r"(?P<week>next|this)\s+week(?![a-z])"
    r"|(?<![a-z])(?P<week2>next|this)\s+week\s+(?:on\s+)?(?P<day2>(?:mon|tues|wednes|thurs|fri"
    r"|satur|sun)day)(?![a-z])",
    re.IGNORECASE,
)
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


# A short weekday a message begins with, before who will do something: "wed i get my braces off".
_WEEKDAY_FIRST = re.compile(
    r"^(?P<lead>(?:(?:ok|so|and|omg|ugh|btw|also)[\s,]+)*)(?P<day>mon|tues?|weds?|thu|thurs?|fri|sat|sun)"
    r"\.?(?=\s+(?:i|i['\u2019]m|im|we|we['\u2019]re|my|our)(?![a-z]))",
    re.IGNORECASE,
)
# A weekday said as a habit, then "this one": "mondays are bad enough but this one i've got...".
_THIS_ONE = re.compile(
    r"(?<![a-z])(?P<day>(?:mon|tues|wednes|thurs|fri|satur|sun)day)s(?P<mid>[^.!?]{0,40}?)"
    r"(?<![a-z])this\s+one(?![a-z])",
    re.IGNORECASE,
)


def _weekday_of_week(m: re.Match[str], now: datetime) -> str:
    """The day of the week said, as words the date reader takes for that day alone: this
    week's as "this friday", next week's as its date (English "next friday" may be the
    coming one)."""
    day = (m.group("day") or m.group("day2")).lower()
    if (m.group("week") or m.group("week2")).lower() == "this":
        return f"this {day}"
    today = now.date()
    when = today + timedelta(days=7 - today.weekday() + _WEEKDAYS.index(day))
    return f"on {when:%B} {when.day}, {when.year}"


# Chat's "@" for "at" before a clock time: "dentist tmrw @ 3".
_AT_SIGN = re.compile(r"@\s*(?=\d)")
# Holidays of a fixed date, said as a day: "on christmas eve", "nye", "bonfire night", 元旦, 平安夜,
# 双十一, 儿童节, a Christmas
# hosted ("we're hosting christmas", "christmas at ours"); not "christmas" alone ("home for
# christmas" is a season) nor 圣诞快乐.
_HOLIDAYS_EN = re.compile(
    r"(?<![a-z])(?:on\s+)?(?:(?P<eve>christmas|xmas)\s+eve|(?P<day>christmas|xmas)\s+day"
    r"|(?P<meal>christmas|xmas)(?=\s+(?:dinner|lunch|morning)(?![a-z]))"
    r"|(?<=on\s)(?P<on>christmas|xmas)|new\s+year['\u2019]?s\s+(?P<ny>eve|day)|(?P<nye>nye)"
    # Christmas hosted: "we're hosting christmas", "christmas at ours"
    r"|(?P<host>(?:i['\u2019]?m|we['\u2019]?re|i\s+am|we\s+are)\s+(?:hosting|doing|cooking)\s+)"
    r"(?P<hosted>christmas|xmas)"
    r"|(?P<home>christmas|xmas)(?=\s+at\s+(?:ours|mine|my\s+place|our\s+place|my\s+house|our\s+house)"
    r"(?![a-z]))"
    r"|valentine['\u2019]?s\s+day|(?P<boxing>boxing\s+day)|(?P<halloween>halloween)"
    # other days of a fixed date: "on bonfire night", "april fools day", "st patrick's day"
    r"|(?P<fixed>bonfire\s+night|guy\s+fawkes\s+night|april\s+fool['\u2019]?s['\u2019]?(?:\s+day)?"
    r"|st\.?\s+patrick['\u2019]?s\s+day|paddy['\u2019]?s\s+day|canada\s+day|bastille\s+day"
    r"|independence\s+day|singles['\u2019]?\s+day))(?![a-z])",
    re.IGNORECASE,
)
_HOLIDAYS_ZH = re.compile(
    r"(元旦|平安夜|圣诞节|跨年夜|情人节|万圣节|国庆节?|劳动节|五一(?=假期|长假|小长假|节|去|要|回|[\u4e00-\u9fff]{0,2}[去回])"
    # chat's 520 (5月20号, "I love you"), said as a day
    r"|(?<![\d.])520(?=是|那天|当天|要|去|我们|情人节)"
    # shopping days and other days of a fixed date: 双十一, 双12, 光棍节, 儿童节, 教师节
    r"|(?:双十一|双11|双十二|双12)(?=那天|当天|这天|零点|晚上|早上|上午|下午|我|要|去|会|的时候|[，,])"
    r"|光棍节|妇女节|三八节|儿童节|教师节|愚人节|建军节|青年节|植树节"
    r"|(?<![\d.])618(?=那天|当天|要|大促|购物节))"
    r"(?!快乐|礼物|树|老人|歌)"
)
_HOLIDAY_ZH = {"元旦": "1月1号", "平安夜": "12月24号", "圣诞节": "12月25号", "跨年夜": "12月31号",
               "情人节": "2月14号", "万圣节": "10月31号", "国庆": "10月1号", "国庆节": "10月1号",
               "劳动节": "5月1号", "五一": "5月1号", "520": "5月20号", "双十一": "11月11号",
               "双11": "11月11号", "光棍节": "11月11号", "双十二": "12月12号", "双12": "12月12号",
               "妇女节": "3月8号", "三八节": "3月8号", "儿童节": "6月1号", "教师节": "9月10号",
               "愚人节": "4月1号", "建军节": "8月1号", "青年节": "5月4号", "植树节": "3月12号",
               "618": "6月18号"}  # fmt: skip


_FIXED_EN = {"bonfire": "November 5", "guy": "November 5", "april": "April 1", "st": "March 17",
             "paddy's": "March 17", "paddy\u2019s": "March 17", "canada": "July 1",
             "bastille": "July 14", "independence": "July 4", "singles": "November 11",
             "singles'": "November 11", "singles\u2019": "November 11"}  # fmt: skip


def _holiday(m: re.Match[str]) -> str:
    if m.group("eve"):
        return "on December 24"
    if m.group("meal"):
        return "December 25"  # "christmas dinner": the dinner of that day
    if m.group("hosted"):
        return f"{m.group('host')}on December 25"
    if m.group("day") or m.group("on") or m.group("home"):
        return "on December 25"
    if m.group("ny"):
        return "on December 31" if m.group("ny").lower() == "eve" else "on January 1"
    if m.group("nye"):
        return "on December 31"
    if m.group("boxing"):
        return "on December 26"
    if m.group("halloween"):
        return "on October 31"
    if m.group("fixed"):
        return f"on {_FIXED_EN[m.group('fixed').lower().split()[0].rstrip('.')]}"
    return "on February 14"


# Cantonese days: 聽日 (tomorrow), 聽朝 (tomorrow morning), 今朝, 朝早 (the morning), 晏晝 (the
# afternoon); 聽 is read as 听 by then.
_CANTONESE_DAYS = re.compile(
    r"听日(?![本语文剧韩])|朝早|晏昼|下昼|听朝|听晚|今朝(?!有酒)|后日(?![本语文])"
)
_CANTONESE_DAY = {"听日": "明天", "听朝": "明天早上", "听晚": "明晚", "今朝": "今天早上",
                  "后日": "后天", "朝早": "早上", "晏昼": "下午",
                  "下昼": "下午"}  # fmt: skip
# The lunar new year (its eve the day before), by year: no fixed date of the solar calendar.
_LUNAR = re.compile(
    r"(?P<eve>除夕|大年三十|年三十)|春节(?!快乐|期间|前|后|假)|大年初一|农历新年|阴历新年"
    # a day of the first month: 正月初十, 正月十五 (a lunar birthday)
    r"|正月(?P<first_month>初[一二三四五六七八九十]|十[一二三四五六七八九]?|二十|廿[一二三四五六七八九]"
    r"|三十)"
    r"|(?<![a-z])(?:on\s+)?(?:lunar|chinese)\s+new\s+year(?:['\u2019]s\s+day)?(?!['\u2019]s\s+eve)",
    re.IGNORECASE,
)
_LUNAR_NEW_YEAR = (
    date(2026, 2, 17), date(2027, 2, 6), date(2028, 1, 26), date(2029, 2, 13), date(2030, 2, 3),
    date(2031, 1, 23), date(2032, 2, 11), date(2033, 1, 31), date(2034, 2, 19), date(2035, 2, 8),
)  # fmt: skip


def _lunar(m: re.Match[str], now: datetime) -> str:
    """The date of the next lunar new year (its eve, or a day of its first month: 正月十五) not
    before `now`'s day, as words the date reader knows; the words as they are past the table's
    years."""
    eve = m.group("eve") is not None
    said = m.group("first_month")
    later = 0 if said is None else _zh_count(said.lstrip("初").replace("廿", "二十")) - 1
    today = now.date()
    for day in _LUNAR_NEW_YEAR:
        day = day - timedelta(days=1) if eve else day + timedelta(days=later)
        if day >= today:
            chinese = CHINESE.search(m.group()) is not None
            return f"{day.month}月{day.day}号" if chinese else f"on {day:%B} {day.day}, {day.year}"
    return m.group()


# Traditional forms of the characters the reading's Chinese words use (禮拜五要去看牙醫,
# 下週一報到, 好凍), read as the simplified ones, and Cantonese 哋 as 们 (我哋: we). Only characters
# that are never simplified forms themselves are mapped.
TRADITIONAL = str.maketrans(
    "禮週個後這幾兩鐘來點號醫報試會議約開飛機診檢療術幫記時們結紀賽畢業學課師場準備還沒說嗎麼"
    "興緊張體驗護簽證慶習實練鐵車國歸離職辦親長鏡銀別讓話發對為應該聽臺灣喚戶單錶晝見"
    "媽爺嬤婦兒孫歲哋凍",  # a family's words: 我媽生日, 阿嬤的忌日
    "礼周个后这几两钟来点号医报试会议约开飞机诊检疗术帮记时们结纪赛毕业学课师场准备还没说吗么"
    "兴紧张体验护签证庆习实练铁车国归离职办亲长镜银别让话发对为应该听台湾唤户单表昼见"
    "妈爷嬷妇儿孙岁们冻",
)


_A_MONTH = re.compile(
    r"(?<![a-z])(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)|月", re.IGNORECASE
)
# A month said by name, with no year: "june 6th", 6月6号.
_MONTH_NAMED = re.compile(
    r"^(?!.*\d{4})(?=.*(?:(?<![a-z])(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)|月))",
    re.IGNORECASE,
)


def _this_years(day: date, now: datetime) -> date:
    """The day of the same month and day in `now`'s year (29 February: the 28th when none)."""
    try:
        return day.replace(year=now.year)
    except ValueError:
        return date(now.year, 2, 28)


def next_years(words: str, now: datetime) -> str:
    """`words` with a month and day gone by this year, and no year said, as next year's ("june
    6th" said in December: "june 6th 2027"), for words telling of what is still to come: the
    date reader takes one more than half a year ahead for a day gone by."""
    if not _A_MONTH.search(words):
        return words  # (no month named: the date reader's scan is not worth its time)
    for mention in find_dates(words, now):
        if mention.first is not None or mention.day >= now.date():
            continue
        if mention.yearless and _this_years(mention.day, now) >= now.date():
            continue  # "aug 8" said in july: last year's in the past sense, this year's to come
        if not _MONTH_NAMED.match(mention.text):
            continue
        year = now.year + 1
        said = (
            f"{year}年{mention.text}" if CHINESE.search(mention.text) else f"{mention.text} {year}"
        )
        return words.replace(mention.text, said, 1)
    return words


def normalised(words: str, now: datetime) -> str:
    """`words` as the date reader knows them: Traditional characters as simplified, 周末 alone
    as this week's, chat's "tmrw" as "tomorrow", "next tue" as "next tuesday", a weekday
    alone ("Friday evening I'm...") as "on Friday" (the coming one), 傍晚要去 as 今天傍晚要去,
    "thursday next week" as
    that date, Cantonese days (聽日, 朝早) as Mandarin ones, and holidays as their dates (the
    lunar new year's and 正月十五's, the next after `now`)."""
    words = words.translate(TRADITIONAL)
    words = _CANTONESE_DAYS.sub(lambda m: _CANTONESE_DAY[m.group()], words)
    words = _LUNAR.sub(lambda m: _lunar(m, now), words)
    words = _AT_SIGN.sub("at ", words)
    words = _HOLIDAYS_EN.sub(_holiday, words)
    words = _HOLIDAYS_ZH.sub(lambda m: _HOLIDAY_ZH[m.group(1)], words)
    words = _BARE_WEEKEND.sub("这周末", words)
    words = _THE_WEEKEND.sub("this weekend", words)
    words = _BRITISH_WEEKS.sub(_british_week, words)
    words = _DOTTED_ZH.sub(lambda m: f"{m.group(1)}月{m.group(2)}号", words)
    words = _WEEKDAY_YEAR.sub(" ", words)
    words = _SPOKEN_DAYS.sub(lambda m: _SPOKEN_DAY[m.group(1)], words)
    words = _EARLY_ZH.sub("早上", words)
    words = _PART_TODAY_ZH.sub(
        lambda m: f"{m.group('me')}今天{'傍晚' if m.group('part') == '黄昏' else m.group('part')}",
        words,
    )
    words = _CHAT_DAYS.sub(lambda m: _CHAT_DAY[m.lastgroup or ""], words)
    words = _CHAT_WEEK.sub(lambda m: "weekend" if len(m.group()) > 2 else "week", words)
    words = _COUNTDOWN.sub(lambda m: f"in {m.group('n')} days,", words)
    words = _COUNTDOWN_ZH.sub(r"\g<n>天后", words)
    words = _WEEKDAY_FIRST.sub(
        lambda m: f"{m.group('lead')}on {_SHORT_DAYS[m.group('day').lower()]}", words
    )
    words = _SHORT_WEEKDAY.sub(_short_weekday, words)
    words = _WEEKDAY_OF_WEEK.sub(lambda m: _weekday_of_week(m, now), words)
    words = _THIS_ONE.sub(
        lambda m: f"{m.group('day')}s{m.group('mid')}this {m.group('day')}", words
    )
    lowered = words.lower()
    for bare in reversed(list(_BARE_WEEKDAY.finditer(lowered))):
        before = lowered[: bare.start()]
        if (
            _PLAIN_WEEKDAY.search(before) is None
            and _ANY_WEEKDAY.search(before) is None
            and not before.endswith(("happy ", "black ", "cyber "))
        ):
            words = f"{words[: bare.start()]}on {words[bare.start() :]}"
    return waking(evening(words))


def evening(words: str) -> str:
    """`words` with "pm" after an hour read as the morning's when it is an evening's event's
    ("dinner at 7", "drinks around 8"): the event named before the hour or in its clause."""
    lowered = words.lower()
    if not _EVENING.search(lowered) or _MORNING.search(lowered):
        return words
    clock = clock_time(words)
    if clock is None or not 7 <= clock.at.hour < 12:
        return words
    # the evening's event named before the hour or in its clause ("at 11, and then the party"
    # is no party's hour)
    clause = _CLAUSE_AFTER.split(lowered[clock.end :], maxsplit=1)[0]
    if not (_EVENING.search(lowered, 0, clock.start) or _EVENING.search(clause)):
        return words
    if _AM.search(lowered, clock.start, clock.end + 14):
        return words  # "at 7am", "at 8 in the morning"
    return f"{words[: clock.end]} pm{words[clock.end :]}"


def waking(words: str) -> str:
    """`words` with "am" after an hour said bare when it is an alarm's, a waking's or a race's
    ("set an alarm for 6:30", "wake me up at 7", "marathon tomorrow, 6:45 start")."""
    lowered = words.lower()
    if not _WAKING.search(lowered):
        return words
    clock = clock_time(words)
    if clock is None or _AM.search(lowered, clock.start, clock.end + 14):
        return words
    hour = clock.at.hour % 12
    if not 4 <= hour <= 11:
        return words
    return f"{words[: clock.end]} am{words[clock.end :]}"


def in_hours(words: str, now: datetime) -> datetime | None:
    """The moment "in two hours" (两个小时后) names, or None."""
    m = IN_HOURS.search(words)
    if m is None:
        return None
    raw = m.group("n") or m.group("zn")
    if m.group("half") or raw == "半":
        count = 0.5
    elif raw.isdigit():
        count = int(raw)
    elif raw.lower() in ("a", "an"):
        count = 1
    else:
        count = _EN_COUNTS.get(raw.lower(), 0) or _zh_count(raw)
    unit = (m.group("u") or m.group("zu")).lower()
    minutes = unit.startswith(("min", "分"))
    if not count:
        return None
    count += 0.5 if m.group("and_half") or m.group("half_before") else 0  # "an hour and a half"
    return now + (timedelta(minutes=count) if minutes else timedelta(hours=count))


_EN_COUNTS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "ten": 10,
              "twenty": 20, "thirty": 30}  # fmt: skip


def _zh_count(raw: str) -> int:
    digits = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
              "九": 9}  # fmt: skip
    if raw == "十":
        return 10
    if raw.startswith("十"):
        return 10 + digits.get(raw[1:], 0)
    if raw.endswith("十"):
        return digits.get(raw[:-1], 0) * 10
    if "十" in raw:
        tens, ones = raw.split("十", 1)
        return digits.get(tens, 0) * 10 + digits.get(ones, 0)
    return digits.get(raw, 0)
