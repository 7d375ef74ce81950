"""memory/dates.py: the days a message refers to, in English and Chinese, against a fixed now.

NOW is Sunday 29 November 2026, 15:00 UTC. Its ISO week runs from Monday 23 to Sunday 29
November; the previous one from 16 to 22 November.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime, time, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.dates import ClockTime, DateMention, clock_time, find_dates, future_spans

NOW = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)  # a Sunday
MONDAY = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
WEDNESDAY = datetime(2026, 11, 25, 10, 0, tzinfo=UTC)
JANUARY = datetime(2026, 1, 15, 9, 0, tzinfo=UTC)  # a Thursday
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
PROPS = settings(max_examples=150, deadline=None, derandomize=True, database=None)


def found(text: str, now: datetime = NOW) -> list[tuple[str, str]]:
    """(ISO day, words) of every mention; also checks that each offset points at its words."""
    mentions = find_dates(text, now)
    for mention in mentions:
        assert text[mention.start : mention.start + len(mention.text)] == mention.text
    return [(mention.day.isoformat(), mention.text) for mention in mentions]


def test_now_is_a_sunday() -> None:
    assert NOW.weekday() == 6
    assert MONDAY.weekday() == 0
    assert WEDNESDAY.weekday() == 2


# The issue's own examples.
ISSUE_EXAMPLES = [
    ("today", "2026-11-29"),
    ("yesterday", "2026-11-28"),
    ("前天", "2026-11-27"),
    ("上周三", "2026-11-18"),
    ("last Monday", "2026-11-23"),
    ("May 4th", "2026-05-04"),
    ("2024-09-03", "2024-09-03"),
    ("9月3日", "2026-09-03"),
]


@pytest.mark.parametrize(("text", "day"), ISSUE_EXAMPLES)
def test_issue_examples(text: str, day: str) -> None:
    assert found(text) == [(day, text)]


ENGLISH = [
    # relative words
    ("today", "2026-11-29"),
    ("Today", "2026-11-29"),
    ("TODAY", "2026-11-29"),
    ("tonight", "2026-11-29"),
    ("this morning", "2026-11-29"),
    ("this afternoon", "2026-11-29"),
    ("this evening", "2026-11-29"),
    ("yesterday", "2026-11-28"),
    ("last night", "2026-11-28"),
    ("the day before yesterday", "2026-11-27"),
    ("day before yesterday", "2026-11-27"),
    ("tomorrow", "2026-11-30"),
    ("the day after tomorrow", "2026-12-01"),
    ("day after tomorrow", "2026-12-01"),
    # N days / weeks ago
    ("3 days ago", "2026-11-26"),
    ("1 day ago", "2026-11-28"),
    ("a day ago", "2026-11-28"),
    ("two days ago", "2026-11-27"),
    ("ten days ago", "2026-11-19"),
    ("a couple of days ago", "2026-11-27"),
    ("a week ago", "2026-11-22"),
    ("two weeks ago", "2026-11-15"),
    ("3 weeks ago", "2026-11-08"),
    ("a fortnight ago", "2026-11-15"),
    # weekdays (NOW is a Sunday)
    ("last Monday", "2026-11-23"),
    ("last Sunday", "2026-11-22"),
    ("last Saturday", "2026-11-28"),
    ("this past Sunday", "2026-11-22"),
    ("this Monday", "2026-11-23"),
    ("this Sunday", "2026-11-29"),
    ("next Monday", "2026-11-30"),
    ("next Sunday", "2026-12-06"),
    ("this coming Sunday", "2026-12-06"),
    ("on Monday", "2026-11-23"),
    ("on Sunday", "2026-11-22"),
    ("on Friday", "2026-11-27"),
    # month and day
    ("May 4th", "2026-05-04"),
    ("May 4", "2026-05-04"),
    ("may 4th", "2026-05-04"),
    ("4 May", "2026-05-04"),
    ("4th of May", "2026-05-04"),
    ("the 4th of May", "2026-05-04"),
    ("4th May", "2026-05-04"),
    ("May 4th, 2024", "2024-05-04"),
    ("4 May 2024", "2024-05-04"),
    ("Sept 3 2024", "2024-09-03"),
    ("Sept. 3, 2024", "2024-09-03"),
    ("September 3rd", "2026-09-03"),
    ("March 10", "2026-03-10"),
    ("5 March", "2026-03-05"),
    ("Nov 29", "2026-11-29"),
    ("Nov 30", "2025-11-30"),  # tomorrow without a year: last year's
    ("December 25th", "2025-12-25"),
    ("Dec 25, 2026", "2026-12-25"),  # with a year, the future is fine
    ("Jan 1st", "2026-01-01"),
    ("aug 1st", "2026-08-01"),
    # numeric
    ("2024-09-03", "2024-09-03"),
    ("2024/09/03", "2024-09-03"),
    ("2024.09.03", "2024-09-03"),
    ("2024-9-3", "2024-09-03"),
    ("2024-09-03T10:00", "2024-09-03"),
]


@pytest.mark.parametrize(("text", "day"), ENGLISH)
def test_english(text: str, day: str) -> None:
    assert found(text) == [(day, text.removesuffix("T10:00"))]


CHINESE = [
    # relative words
    ("今天", "2026-11-29"),
    ("今日", "2026-11-29"),
    ("今晚", "2026-11-29"),
    ("今早", "2026-11-29"),
    ("昨天", "2026-11-28"),
    ("昨日", "2026-11-28"),
    ("昨晚", "2026-11-28"),
    ("前天", "2026-11-27"),
    ("大前天", "2026-11-26"),
    ("明天", "2026-11-30"),
    ("后天", "2026-12-01"),
    ("大后天", "2026-12-02"),
    # N天前
    ("3天前", "2026-11-26"),
    ("三天前", "2026-11-26"),
    ("两天前", "2026-11-27"),
    ("十天前", "2026-11-19"),
    ("十五天前", "2026-11-14"),
    ("二十天前", "2026-11-09"),
    ("3日前", "2026-11-26"),
    ("五天之前", "2026-11-24"),
    ("一周前", "2026-11-22"),
    ("两周前", "2026-11-15"),
    ("三个星期前", "2026-11-08"),
    ("两个礼拜前", "2026-11-15"),
    # weekdays (NOW is a Sunday; ISO weeks start on Monday)
    ("上周三", "2026-11-18"),
    ("上星期三", "2026-11-18"),
    ("上礼拜三", "2026-11-18"),
    ("上个星期三", "2026-11-18"),
    ("上周日", "2026-11-22"),
    ("上上周三", "2026-11-11"),
    ("这周三", "2026-11-25"),
    ("本周三", "2026-11-25"),
    ("这星期三", "2026-11-25"),
    ("这个礼拜一", "2026-11-23"),
    ("本周日", "2026-11-29"),
    ("下周三", "2026-12-02"),
    ("下个星期一", "2026-11-30"),
    ("周三", "2026-11-25"),
    ("星期三", "2026-11-25"),
    ("礼拜三", "2026-11-25"),
    ("周一", "2026-11-23"),
    ("周六", "2026-11-28"),
    ("周日", "2026-11-29"),  # today: alone, the most recent one, today included
    ("星期日", "2026-11-29"),
    ("星期天", "2026-11-29"),
    ("礼拜天", "2026-11-29"),
    # month and day
    ("9月3日", "2026-09-03"),
    ("9月3号", "2026-09-03"),
    ("九月三日", "2026-09-03"),
    ("十一月二十九日", "2026-11-29"),
    ("十二月二十五号", "2025-12-25"),  # not yet this year
    ("12月1日", "2025-12-01"),
    ("2024年9月3日", "2024-09-03"),
    ("2024年9月3号", "2024-09-03"),
    ("二〇二四年九月三日", "2024-09-03"),
    ("２０２４年９月３日", "2024-09-03"),  # full-width digits
    ("9 月 3 日", "2026-09-03"),
    # a day of a month
    ("上个月3号", "2026-10-03"),
    ("上月3号", "2026-10-03"),
    ("这个月3号", "2026-11-03"),
    ("本月3日", "2026-11-03"),
    ("下个月3号", "2026-12-03"),
    ("上个月三十一号", "2026-10-31"),
    ("3号", "2026-11-03"),
    ("三号", "2026-11-03"),
    ("二十九号", "2026-11-29"),
    ("三十一号", "2026-10-31"),  # November has no 31st
    ("30号", "2026-10-30"),  # tomorrow: last month's
    ("卅号", "2026-10-30"),
    ("十一号", "2026-11-11"),
    ("二十三号", "2026-11-23"),
    ("3日", "2026-11-03"),
]


@pytest.mark.parametrize(("text", "day"), CHINESE)
def test_chinese(text: str, day: str) -> None:
    assert found(text) == [(day, text)]


EMBEDDED = [
    ("what did I tell you yesterday?", [("2026-11-28", "yesterday")]),
    ("你还记得上周三我说了什么吗", [("2026-11-18", "上周三")]),
    ("On May 4th, 2024 we went hiking", [("2024-05-04", "May 4th, 2024")]),
    ("Remember what happened on Monday?", [("2026-11-23", "on Monday")]),
    (
        "I met Jun the day before yesterday at the café.",
        [("2026-11-27", "the day before yesterday")],
    ),
    ("It was 3 days ago, I think.", [("2026-11-26", "3 days ago")]),
    ("Yesterday was rough.", [("2026-11-28", "Yesterday")]),
    ("我昨天去了公园", [("2026-11-28", "昨天")]),
    ("我们前天去看了电影", [("2026-11-27", "前天")]),
    ("前天天气很好", [("2026-11-27", "前天")]),
    ("周三天气很好", [("2026-11-25", "周三")]),
    ("他说明天来", [("2026-11-30", "明天")]),
    ("我记得9月3号那天下雨了", [("2026-09-03", "9月3号")]),
    ("3号那天你说了什么？", [("2026-11-03", "3号")]),
    ("我today去了公园", [("2026-11-29", "today")]),
    ("the log from 2024-09-03 says", [("2024-09-03", "2024-09-03")]),
    ("We went there last Saturday, not this one.", [("2026-11-28", "last Saturday")]),
    ("İstanbul was lovely yesterday", [("2026-11-28", "yesterday")]),  # "İ" lowercases to two
]


@pytest.mark.parametrize(("text", "expected"), EMBEDDED)
def test_embedded_in_a_sentence(text: str, expected: list[tuple[str, str]]) -> None:
    assert found(text) == expected


NO_DATE = [
    "no date here",
    "",
    "you may go",
    "May I ask you something?",
    "I may 4 times a day",
    "we march 10 miles every day",
    "march on",
    "In June 3 people left",
    "May 3 people came",
    "second thoughts",
    "a second",
    "one day",
    "someday",
    "I ate 3/4 of the pizza",
    "call me at 10:30",
    "version 1.2.3",
    "it costs 3 of May's salary",
    "on Mondays I swim",
    "every Monday",
    "the last Monday of the month",
    "Monday",  # a bare weekday without on / last / this / next
    "we wed on Sat",
    "我有三个苹果",
    "一号线地铁",
    "3号线",
    "坐3号线去",
    "住在5号楼",
    "我是第3号",
    "以前天天跑步",
    "目前天气很好",
    "如今天气变了",
    "午后天气晴朗",
    "他很聪明天才一样",
    "然后天就黑了",
    "后天性的",
    "一周三次",
    "每周三",
    "这周一直很忙",
    "这周一起去吧",
    "这周三天都在下雨",
    "这周天天加班",
    "本周日程",
    "三个月",
    "三日",
    "3日游",
    "十几天前",
    "七天前往北京",
    "大周天",
    "写周日记",
]


@pytest.mark.parametrize("text", NO_DATE)
def test_no_false_positives(text: str) -> None:
    assert find_dates(text, NOW) == []


INVALID = [
    "Feb 30",
    "February 30th, 2024",
    "30 Feb",
    "April 31st",
    "May 45",
    "2023-02-29",
    "2024-13-01",
    "2024-00-10",
    "2月30日",
    "13月3日",
    "9月31日",
    "2023年2月29日",
    "32号",
    "0号",
    "上个月31号",  # October has 31 days, but September...
]


@pytest.mark.parametrize("text", INVALID)
def test_invalid_dates_are_ignored(text: str) -> None:
    now = NOW if text != "上个月31号" else datetime(2026, 10, 10, tzinfo=UTC)
    assert find_dates(text, now) == []


ROLLBACK = [
    # said on 15 January 2026: a month and day without a year is the most recent one
    ("May 4th", "2025-05-04"),
    ("4th of May", "2025-05-04"),
    ("9月3日", "2025-09-03"),
    ("九月三号", "2025-09-03"),
    ("December 25th", "2025-12-25"),
    ("Jan 15", "2026-01-15"),  # today
    ("Jan 16", "2025-01-16"),  # tomorrow: last year's
    ("1月16日", "2025-01-16"),
    ("Feb 29", "2024-02-29"),  # the most recent leap day
    ("2月29日", "2024-02-29"),
    ("May 4th, 2027", "2027-05-04"),  # a year given: taken as is
    ("3号", "2026-01-03"),
    ("20号", "2025-12-20"),  # not yet this month: last month's
    ("上个月20号", "2025-12-20"),
    ("下个月3号", "2026-02-03"),
    ("last Friday", "2026-01-09"),
    ("上周五", "2026-01-09"),
]


@pytest.mark.parametrize(("text", "day"), ROLLBACK)
def test_month_day_without_year_rolls_back(text: str, day: str) -> None:
    assert found(text, JANUARY) == [(day, text)]


WEEKDAYS_ON_MONDAY = [
    ("last Monday", "2026-11-23"),  # strictly before today: a week ago
    ("on Monday", "2026-11-23"),  # past-leaning, strictly before today
    ("this Monday", "2026-11-30"),
    ("next Monday", "2026-12-07"),
    ("last Sunday", "2026-11-29"),
    ("周一", "2026-11-30"),  # alone: today included
    ("上周一", "2026-11-23"),
    ("这周一", "2026-11-30"),
    ("下周一", "2026-12-07"),
    ("周日", "2026-11-29"),
]

WEEKDAYS_ON_WEDNESDAY = [
    ("last Tuesday", "2026-11-24"),  # the most recent one, even yesterday
    ("last Thursday", "2026-11-19"),
    ("this Friday", "2026-11-27"),  # the current ISO week's, here in the future
    ("this Monday", "2026-11-23"),
    ("next Tuesday", "2026-12-01"),
    ("next Thursday", "2026-11-26"),  # the first one after today
    ("on Thursday", "2026-11-19"),
    ("上周五", "2026-11-20"),
    ("周五", "2026-11-20"),
    ("周二", "2026-11-24"),
    ("这周五", "2026-11-27"),
    ("下周五", "2026-12-04"),
]


@pytest.mark.parametrize(("text", "day"), WEEKDAYS_ON_MONDAY)
def test_weekdays_said_on_a_monday(text: str, day: str) -> None:
    assert found(text, MONDAY) == [(day, text)]


@pytest.mark.parametrize(("text", "day"), WEEKDAYS_ON_WEDNESDAY)
def test_weekdays_said_on_a_wednesday(text: str, day: str) -> None:
    assert found(text, WEDNESDAY) == [(day, text)]


SEVERAL = [
    (
        "yesterday I said one thing, and on May 4th another",
        [("2026-11-28", "yesterday"), ("2026-05-04", "May 4th")],
    ),
    (
        "今天是9月3日，昨天是9月2日",
        [
            ("2026-11-29", "今天"),
            ("2026-09-03", "9月3日"),
            ("2026-11-28", "昨天"),
            ("2026-09-02", "9月2日"),
        ],
    ),
    (
        "Compare 2024-09-03 with 2024年9月4日 and 前天.",
        [("2024-09-03", "2024-09-03"), ("2024-09-04", "2024年9月4日"), ("2026-11-27", "前天")],
    ),
    # the same day once, at its first mention
    ("today, 今天, today again", [("2026-11-29", "today")]),
    ("昨天, i.e. yesterday, 11月28日", [("2026-11-28", "昨天")]),
    ("last Saturday or 上周六?", [("2026-11-28", "last Saturday"), ("2026-11-21", "上周六")]),
]


@pytest.mark.parametrize(("text", "expected"), SEVERAL)
def test_several_dates_in_order_without_duplicates(
    text: str, expected: list[tuple[str, str]]
) -> None:
    assert found(text) == expected


def test_offsets_point_into_the_message() -> None:
    text = "So, on May 4th, 2024 — and 前天 too."
    first, second = find_dates(text, NOW)
    assert (first.start, first.text) == (text.index("May"), "May 4th, 2024")
    assert (second.start, second.text) == (text.index("前天"), "前天")


def test_today_follows_the_timezone_of_now() -> None:
    east = timezone(timedelta(hours=8), "UTC+8")
    west = timezone(timedelta(hours=-8), "UTC-8")
    just_after_midnight = datetime(2026, 11, 30, 0, 30, tzinfo=east)  # 16:30 UTC on the 29th
    just_before_midnight = datetime(2026, 11, 29, 23, 30, tzinfo=west)  # 07:30 UTC on the 30th
    assert just_after_midnight.astimezone(UTC).date() == date(2026, 11, 29)
    assert just_before_midnight.astimezone(UTC).date() == date(2026, 11, 30)

    assert found("today", just_after_midnight) == [("2026-11-30", "today")]
    assert found("昨天", just_after_midnight) == [("2026-11-29", "昨天")]
    assert found("周一", just_after_midnight) == [("2026-11-30", "周一")]
    assert found("today", just_before_midnight) == [("2026-11-29", "today")]
    assert found("明天", just_before_midnight) == [("2026-11-30", "明天")]


def test_long_messages_without_dates() -> None:
    english = (
        "I think the new recipe worked out well, although the sauce was a bit too salty for "
        "my taste and the kids wanted more cheese on top. Maybe next time I should add some "
        "basil and less salt; on the other hand, a second batch might be too much. "
    )
    chinese = (
        "我觉得这个新菜谱做得还不错，不过酱汁有点太咸了，孩子们想在上面多加点奶酪。"
        "下次我应该加点罗勒，少放点盐。天气非常好，大家都很开心。"
    )
    for unit in (english, chinese):
        text = (unit * (2000 // len(unit) + 1))[:2000]
        assert len(text) == 2000
        assert find_dates(text, NOW) == []
        assert found(text + " yesterday") == [("2026-11-28", "yesterday")]


def test_date_mention_is_a_frozen_value() -> None:
    mention = DateMention(day=date(2026, 11, 28), text="yesterday", start=0)
    assert mention == find_dates("yesterday", NOW)[0]
    assert hash(mention) == hash(DateMention(date(2026, 11, 28), "yesterday", 0))
    with pytest.raises(dataclasses.FrozenInstanceError):
        mention.start = 1  # type: ignore[misc]
    assert not hasattr(mention, "__dict__")  # slots


def test_future_days_are_returned() -> None:
    assert found("tomorrow and 下周三 and next Friday") == [
        ("2026-11-30", "tomorrow"),
        ("2026-12-02", "下周三"),
        ("2026-12-04", "next Friday"),
    ]


# --- spans of days -----------------------------------------------------------------------------


def spans(text: str, now: datetime = NOW) -> list[tuple[str, str, str]]:
    """(first day, last day, words) of every mention; offsets checked as in found()."""
    mentions = find_dates(text, now)
    for mention in mentions:
        assert text[mention.start : mention.start + len(mention.text)] == mention.text
    return [(m.days[0].isoformat(), m.days[1].isoformat(), m.text) for m in mentions]


# Said on Sunday 29 November 2026 (NOW): this ISO week is 23-29 November, the last 16-22.
SPANS = [
    # the issue's
    ("a few days ago", "2026-11-24", "2026-11-27"),
    ("last weekend", "2026-11-21", "2026-11-22"),
    ("上周末", "2026-11-21", "2026-11-22"),
    ("前几天", "2026-11-24", "2026-11-27"),
    ("the other day", "2026-11-22", "2026-11-28"),
    ("earlier this week", "2026-11-23", "2026-11-28"),
    ("上个月初", "2026-10-01", "2026-10-10"),
    # English
    ("few days ago", "2026-11-24", "2026-11-27"),
    ("several days ago", "2026-11-22", "2026-11-26"),
    ("a few weeks ago", "2026-10-25", "2026-11-15"),
    ("the past few days", "2026-11-26", "2026-11-29"),
    ("these past couple of days", "2026-11-27", "2026-11-29"),
    ("the last 5 days", "2026-11-24", "2026-11-29"),
    ("the past week", "2026-11-22", "2026-11-29"),
    ("this past weekend", "2026-11-21", "2026-11-22"),
    ("this weekend", "2026-11-28", "2026-11-29"),
    ("over the weekend", "2026-11-28", "2026-11-29"),  # a Sunday: this one
    ("earlier in the week", "2026-11-23", "2026-11-28"),
    ("last week", "2026-11-16", "2026-11-22"),
    ("this week", "2026-11-23", "2026-11-29"),
    ("the week before last", "2026-11-09", "2026-11-15"),
    ("late last week", "2026-11-19", "2026-11-22"),
    ("last month", "2026-10-01", "2026-10-31"),
    ("early last month", "2026-10-01", "2026-10-10"),
    ("mid-last month", "2026-10-11", "2026-10-20"),
    ("at the end of last month", "2026-10-21", "2026-10-31"),
    ("earlier this month", "2026-11-01", "2026-11-28"),
    ("the month before last", "2026-09-01", "2026-09-30"),
    ("in May", "2026-05-01", "2026-05-31"),
    ("in may", "2026-05-01", "2026-05-31"),
    ("last November", "2025-11-01", "2025-11-30"),  # before this month
    ("during November", "2026-11-01", "2026-11-30"),  # the most recent begun
    ("in December", "2025-12-01", "2025-12-31"),
    ("early June", "2026-06-01", "2026-06-10"),
    ("the end of February", "2026-02-21", "2026-02-28"),
    ("in late October 2025", "2025-10-21", "2025-10-31"),
    ("March 2025", "2025-03-01", "2025-03-31"),
    ("May 2024", "2024-05-01", "2024-05-31"),
    # Chinese
    ("几天前", "2026-11-24", "2026-11-27"),
    ("前两天", "2026-11-26", "2026-11-28"),
    ("前些日子", "2026-11-15", "2026-11-27"),
    ("前阵子", "2026-10-30", "2026-11-22"),
    ("这两天", "2026-11-27", "2026-11-29"),
    ("近几天", "2026-11-26", "2026-11-29"),
    ("几个星期前", "2026-10-25", "2026-11-15"),
    ("几周之前", "2026-10-25", "2026-11-15"),
    ("上周", "2026-11-16", "2026-11-22"),
    ("上个星期", "2026-11-16", "2026-11-22"),
    ("上上周", "2026-11-09", "2026-11-15"),
    ("这周", "2026-11-23", "2026-11-29"),
    ("本周末", "2026-11-28", "2026-11-29"),
    ("上个周末", "2026-11-21", "2026-11-22"),
    ("上个月", "2026-10-01", "2026-10-31"),
    ("上月底", "2026-10-21", "2026-10-31"),
    ("本月中旬", "2026-11-11", "2026-11-20"),
    ("这个月", "2026-11-01", "2026-11-30"),
    ("上上个月", "2026-09-01", "2026-09-30"),
    ("5月", "2026-05-01", "2026-05-31"),
    ("五月份", "2026-05-01", "2026-05-31"),
    ("十二月", "2025-12-01", "2025-12-31"),
    ("5月初", "2026-05-01", "2026-05-10"),
    ("去年5月", "2025-05-01", "2025-05-31"),
    ("前年十月下旬", "2024-10-21", "2024-10-31"),
    ("2025年5月", "2025-05-01", "2025-05-31"),
]


@pytest.mark.parametrize(("text", "first", "last"), SPANS)
def test_spans(text: str, first: str, last: str) -> None:
    assert spans(text) == [(first, last, text)]


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        ("last weekend", "2026-11-28", "2026-11-29"),  # the two days just gone
        ("over the weekend", "2026-11-28", "2026-11-29"),
        ("this weekend", "2026-12-05", "2026-12-06"),  # ahead: the caller decides
        ("上周末", "2026-11-28", "2026-11-29"),
        ("last week", "2026-11-23", "2026-11-29"),
    ],
)
def test_weekends_and_weeks_said_on_a_monday(text: str, first: str, last: str) -> None:
    assert spans(text, MONDAY) == [(first, last, text)]


def test_earlier_this_week_on_a_monday_is_nothing() -> None:
    assert find_dates("earlier this week", MONDAY) == []


@pytest.mark.parametrize(
    "text",
    [
        "May I ask something?",
        "March on!",
        "their last march was long",
        "考试前几天很紧张",
        "十几天前",
        "五月天的歌",
        "一月一次",
        "这个月饼很好吃",
        "这周期很长",
        "周末愉快",
        "以前年轻的时候",
        "几天前往",
    ],
)
def test_spans_that_are_not(text: str) -> None:
    assert find_dates(text, NOW) == []


def test_last_weeks_weather_is_not_last_sunday() -> None:
    assert spans("上周天气很好") == [("2026-11-16", "2026-11-22", "上周")]


def test_a_day_inside_a_month_is_the_day() -> None:
    assert spans("in May 4th") == [("2026-05-04", "2026-05-04", "May 4th")]
    assert spans("去年5月3日") == [("2025-05-03", "2025-05-03", "去年5月3日")]
    assert spans("今年3月3日") == [("2026-03-03", "2026-03-03", "今年3月3日")]


def test_one_day_has_no_first_and_a_span_its_first() -> None:
    [day] = find_dates("yesterday", NOW)
    assert day.first is None and day.days == (date(2026, 11, 28), date(2026, 11, 28))
    [span] = find_dates("last weekend", NOW)
    assert span.first == date(2026, 11, 21) and span.day == date(2026, 11, 22)


def test_a_day_and_a_span_ending_on_it_are_both_kept() -> None:
    assert spans("yesterday, or over the weekend", MONDAY) == [
        ("2026-11-29", "2026-11-29", "yesterday"),
        ("2026-11-28", "2026-11-29", "over the weekend"),
    ]


@pytest.mark.parametrize(
    ("text", "yearless"),
    [
        ("May 4th", True),
        ("4 May", True),
        ("5月4日", True),
        ("in May", True),
        ("5月", True),
        ("May 4th, 2025", False),
        ("2025年5月4日", False),
        ("去年5月4日", False),
        ("去年5月", False),
        ("May 2025", False),
        ("2025-05-04", False),
        ("yesterday", False),
        ("last month", False),
        ("上周三", False),
    ],
)
def test_yearless(text: str, yearless: bool) -> None:
    [mention] = find_dates(text, NOW)
    assert mention.yearless is yearless


def test_a_span_after_words_that_lead_to_it() -> None:
    assert spans("最近这几天") == [("2026-11-26", "2026-11-29", "这几天")]
    assert spans("我们前几天聊过") == [("2026-11-24", "2026-11-27", "前几天")]
    assert spans("what did we do a few days ago?") == [
        ("2026-11-24", "2026-11-27", "a few days ago")
    ]


# --- seasons, years, recently, since, months and years ago -------------------------------------

# Said on Sunday 29 November 2026 (NOW).
PAST_SPANS = [
    # seasons (meteorological, northern; a winter is of the year of its December)
    ("last summer", "2026-06-01", "2026-08-31"),
    ("this spring", "2026-03-01", "2026-05-31"),
    ("in the winter", "2025-12-01", "2026-02-28"),
    ("during the summer", "2026-06-01", "2026-08-31"),
    ("last winter", "2025-12-01", "2026-02-28"),
    ("this autumn", "2026-09-01", "2026-11-30"),  # under way
    ("last fall", "2025-09-01", "2025-11-30"),  # this one has not ended
    ("the summer of 2025", "2025-06-01", "2025-08-31"),
    ("summer 2024", "2024-06-01", "2024-08-31"),
    ("the winter of 2024", "2024-12-01", "2025-02-28"),
    ("去年夏天", "2025-06-01", "2025-08-31"),
    ("今年春天", "2026-03-01", "2026-05-31"),
    ("冬天的时候", "2025-12-01", "2026-02-28"),
    ("夏天里", "2026-06-01", "2026-08-31"),
    ("这个夏天", "2026-06-01", "2026-08-31"),
    ("上个冬天", "2025-12-01", "2026-02-28"),
    ("前年秋天", "2024-09-01", "2024-11-30"),
    ("2024年冬天", "2024-12-01", "2025-02-28"),
    ("去年的冬季", "2025-12-01", "2026-02-28"),
    # whole years and their parts
    ("in 2025", "2025-01-01", "2025-12-31"),
    ("last year", "2025-01-01", "2025-12-31"),
    ("the year before last", "2024-01-01", "2024-12-31"),
    ("this year", "2026-01-01", "2026-12-31"),
    ("during 2023", "2023-01-01", "2023-12-31"),
    ("in early 2024", "2024-01-01", "2024-04-30"),
    ("in late 2025", "2025-09-01", "2025-12-31"),
    ("earlier this year", "2026-01-01", "2026-11-28"),
    ("the end of last year", "2025-09-01", "2025-12-31"),
    ("去年", "2025-01-01", "2025-12-31"),
    ("前年", "2024-01-01", "2024-12-31"),
    ("大前年", "2023-01-01", "2023-12-31"),
    ("今年", "2026-01-01", "2026-12-31"),
    ("2025年", "2025-01-01", "2025-12-31"),
    ("二〇二四年", "2024-01-01", "2024-12-31"),
    ("去年底", "2025-09-01", "2025-12-31"),
    ("今年上半年", "2026-01-01", "2026-06-30"),
    ("年初", "2026-01-01", "2026-04-30"),
    # whole months without a day
    ("in March", "2026-03-01", "2026-03-31"),
    ("三月份", "2026-03-01", "2026-03-31"),
    ("next May", "2027-05-01", "2027-05-31"),
    ("明年5月", "2027-05-01", "2027-05-31"),
    ("明年5月3日", "2027-05-03", "2027-05-03"),
    ("this March", "2026-03-01", "2026-03-31"),
    # recently: the last two weeks
    ("recently", "2026-11-15", "2026-11-29"),
    ("lately", "2026-11-15", "2026-11-29"),
    ("these days", "2026-11-15", "2026-11-29"),
    ("最近", "2026-11-15", "2026-11-29"),
    ("近来", "2026-11-15", "2026-11-29"),
    ("这段时间", "2026-11-15", "2026-11-29"),
    ("最近三天", "2026-11-26", "2026-11-29"),
    ("最近两周", "2026-11-15", "2026-11-29"),
    ("the past 3 weeks", "2026-11-08", "2026-11-29"),
    ("the past month", "2026-10-30", "2026-11-29"),
    # since: from then to today
    ("since May", "2026-05-01", "2026-11-29"),
    ("since last week", "2026-11-16", "2026-11-29"),
    ("ever since March", "2026-03-01", "2026-11-29"),
    ("since 2020", "2020-01-01", "2026-11-29"),
    ("since Monday", "2026-11-23", "2026-11-29"),
    ("since yesterday", "2026-11-28", "2026-11-29"),
    ("since the summer", "2026-06-01", "2026-11-29"),
    ("自从五月", "2026-05-01", "2026-11-29"),
    ("五月以来", "2026-05-01", "2026-11-29"),
    ("上周以来", "2026-11-16", "2026-11-29"),
    ("去年至今", "2025-01-01", "2026-11-29"),
    ("三月开始", "2026-03-01", "2026-11-29"),
    # months and years back, said loosely
    ("two months ago", "2026-09-14", "2026-10-14"),
    ("两个月前", "2026-09-14", "2026-10-14"),
    ("半年前", "2026-05-14", "2026-06-13"),
    ("a year ago", "2025-10-30", "2025-12-29"),
    ("三年前", "2023-10-30", "2023-12-29"),
    ("a few months ago", "2026-07-02", "2026-09-30"),
    ("几个月前", "2026-07-02", "2026-09-30"),
    # ahead (the past sense returns them too: recall reads none)
    ("next week", "2026-11-30", "2026-12-06"),
    ("下周", "2026-11-30", "2026-12-06"),
    ("next month", "2026-12-01", "2026-12-31"),
    ("下个月", "2026-12-01", "2026-12-31"),
    ("next year", "2027-01-01", "2027-12-31"),
    ("明年", "2027-01-01", "2027-12-31"),
    ("the week after next", "2026-12-07", "2026-12-13"),
    ("the end of the month", "2026-11-21", "2026-11-30"),
    ("月底", "2026-11-21", "2026-11-30"),
    ("next weekend", "2026-12-05", "2026-12-06"),
    ("in a few days", "2026-12-01", "2026-12-04"),
    ("几天后", "2026-12-01", "2026-12-04"),
    ("within a week", "2026-11-29", "2026-12-06"),
]


@pytest.mark.parametrize(("text", "first", "last"), PAST_SPANS)
def test_seasons_years_recently_and_since(text: str, first: str, last: str) -> None:
    assert spans(text) == [(first, last, text)]


PAST_DAYS = [
    ("three weeks ago", "2026-11-08"),
    ("fifteen days ago", "2026-11-14"),
    ("twenty days ago", "2026-11-09"),
    ("三周前", "2026-11-08"),
    ("十天前", "2026-11-19"),
    ("半个月前", "2026-11-14"),
    ("in 3 days", "2026-12-02"),
    ("in two weeks", "2026-12-13"),
    ("in a month", "2026-12-29"),
    ("3 days from now", "2026-12-02"),
    ("三天后", "2026-12-02"),
    ("两周后", "2026-12-13"),
    ("十天以后", "2026-12-09"),
    ("两个月之后", "2027-01-29"),
]


@pytest.mark.parametrize(("text", "day"), PAST_DAYS)
def test_counted_days_in_words_and_chinese_numerals(text: str, day: str) -> None:
    assert found(text) == [(day, text)]


@pytest.mark.parametrize(
    "text",
    [
        "我喜欢冬天",
        "summer dresses are on sale",
        "the fall of Rome",
        "I fall asleep in fall",
        "this may help",
        "离这里最近",
        "最近的超市在哪",
        "哪个最近",
        "如今年轻人",
        "过去年代的歌",
        "冬季奥运会",
        "立春",
        "新年快乐",
        "每年都去",
        "I paid 2025 yuan",
        "twice in a week",
        "back in a minute",
        "the week was long",
    ],
)
def test_new_words_that_are_not_dates(text: str) -> None:
    assert find_dates(text, NOW) == []


@pytest.mark.parametrize(
    ("text", "yearless"),
    [
        ("in the winter", True),
        ("冬天的时候", True),
        ("last summer", False),
        ("this spring", False),
        ("the summer of 2025", False),
        ("since May", False),
        ("in 2025", False),
        ("recently", False),
        ("next May", False),
    ],
)
def test_yearless_seasons_and_spans(text: str, yearless: bool) -> None:
    [mention] = find_dates(text, NOW)
    assert mention.yearless is yearless


def test_a_year_word_inside_another_word_leaves_what_follows() -> None:
    # 然后年底: "then, at the year's end" (后年 here is no year); 以前年轻: "when young before".
    assert spans("然后年底去日本") == [("2026-09-01", "2026-12-31", "年底")]
    assert spans("以前年轻的时候") == []
    assert spans("去年底") == [("2025-09-01", "2025-12-31", "去年底")]


def test_recently_inside_a_longer_phrase_is_the_longer_phrase() -> None:
    assert spans("最近这几天") == [("2026-11-26", "2026-11-29", "这几天")]
    assert spans("最近这段时间") == [("2026-11-15", "2026-11-29", "最近")]
    assert spans("what have you been up to lately?") == [("2026-11-15", "2026-11-29", "lately")]


# --- year boundaries and leap years ------------------------------------------------------------

JAN_2 = datetime(2027, 1, 2, 9, 0, tzinfo=UTC)  # a Saturday


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        ("last December", "2026-12-01", "2026-12-31"),
        ("上个月", "2026-12-01", "2026-12-31"),
        ("last month", "2026-12-01", "2026-12-31"),
        ("in December", "2026-12-01", "2026-12-31"),
        ("十二月", "2026-12-01", "2026-12-31"),
        ("Dec 31st", "2026-12-31", "2026-12-31"),
        ("12月31日", "2026-12-31", "2026-12-31"),
        ("31号", "2026-12-31", "2026-12-31"),
        ("上个月31号", "2026-12-31", "2026-12-31"),
        ("last year", "2026-01-01", "2026-12-31"),
        ("去年", "2026-01-01", "2026-12-31"),
        ("前年", "2025-01-01", "2025-12-31"),
        ("this year", "2027-01-01", "2027-12-31"),
        ("earlier this year", "2027-01-01", "2027-01-01"),
        ("last week", "2026-12-21", "2026-12-27"),
        ("上周", "2026-12-21", "2026-12-27"),
        ("the end of the month", "2026-12-21", "2026-12-31"),  # this one's has not begun
        ("月底", "2026-12-21", "2026-12-31"),
        ("年底", "2026-09-01", "2026-12-31"),
        ("last winter", "2025-12-01", "2026-02-28"),  # this one is under way
        ("in the winter", "2026-12-01", "2027-02-28"),
        ("since December", "2026-12-01", "2027-01-02"),
        ("a month ago", "2026-11-17", "2026-12-17"),
        ("recently", "2026-12-19", "2027-01-02"),
    ],
)
def test_asked_on_the_second_of_january(text: str, first: str, last: str) -> None:
    assert spans(text, JAN_2) == [(first, last, text)]


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        ("Feb 29", "2028-02-29", "2028-02-29"),
        ("2月29日", "2028-02-29", "2028-02-29"),
        ("last February", "2029-02-01", "2029-02-28"),
        ("the winter of 2027", "2027-12-01", "2028-02-29"),
        ("the winter of 2028", "2028-12-01", "2029-02-28"),
        ("a year ago", "2028-01-31", "2028-03-31"),  # 1 March 2028, give or take 30 days
        ("the end of last month", "2029-02-21", "2029-02-28"),
    ],
)
def test_leap_years_looking_back(text: str, first: str, last: str) -> None:
    assert spans(text, datetime(2029, 3, 1, 10, 0, tzinfo=UTC)) == [(first, last, text)]


# --- times of day ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "day", "hours"),
    [
        ("tomorrow evening", "2026-11-30", (18, 24)),
        ("yesterday morning", "2026-11-28", (6, 12)),
        ("last night", "2026-11-28", (18, 24)),
        ("tonight", "2026-11-29", (18, 24)),
        ("this afternoon", "2026-11-29", (12, 18)),
        ("on Friday night", "2026-11-27", (18, 24)),
        ("today at noon", "2026-11-29", (11, 14)),
        ("明天晚上", "2026-11-30", (18, 24)),
        ("昨天下午", "2026-11-28", (12, 18)),
        ("明晚", "2026-11-30", (18, 24)),
        ("今早", "2026-11-29", (6, 12)),
        ("周五下午", "2026-11-27", (12, 18)),
        ("明天的上午", "2026-11-30", (8, 12)),
        # "first thing" before or after a day is its morning
        ("first thing tomorrow", "2026-11-30", (6, 12)),
        ("first thing on Friday", "2026-11-27", (6, 12)),
        ("tomorrow first thing", "2026-11-30", (6, 12)),
        ("yesterday", "2026-11-28", None),
    ],
)
def test_times_of_day(text: str, day: str, hours: tuple[int, int] | None) -> None:
    [mention] = find_dates(text, NOW)
    assert (mention.day.isoformat(), mention.text, mention.hours) == (day, text, hours)


def test_bounds_of_a_day_and_of_its_hours() -> None:
    shanghai = timezone(timedelta(hours=8))
    [evening] = future_spans("明天晚上", datetime(2026, 11, 29, 15, 0, tzinfo=shanghai))
    assert evening.bounds(shanghai) == (
        datetime(2026, 11, 30, 18, 0, tzinfo=shanghai),
        datetime(2026, 12, 1, 0, 0, tzinfo=shanghai),
    )
    [week] = future_spans("next week", NOW)
    assert week.bounds(UTC) == (
        datetime(2026, 11, 30, tzinfo=UTC),
        datetime(2026, 12, 7, tzinfo=UTC),
    )


# --- the future sense: future_spans ------------------------------------------------------------


def ahead(text: str, now: datetime = NOW) -> list[tuple[str, str, str]]:
    """(first day, last day, words) of every span still to come; offsets checked."""
    mentions = future_spans(text, now)
    for mention in mentions:
        assert text[mention.start : mention.start + len(mention.text)] == mention.text
    return [(m.days[0].isoformat(), m.days[1].isoformat(), m.text) for m in mentions]


# Said on Sunday 29 November 2026 (NOW).
FUTURE = [
    ("tomorrow", "2026-11-30", "2026-11-30"),
    ("the day after tomorrow", "2026-12-01", "2026-12-01"),
    ("today", "2026-11-29", "2026-11-29"),
    ("on Friday", "2026-12-04", "2026-12-04"),
    ("this Friday", "2026-12-04", "2026-12-04"),
    ("next Tuesday", "2026-12-01", "2026-12-01"),
    ("this Sunday", "2026-11-29", "2026-11-29"),  # today
    ("on Sunday", "2026-12-06", "2026-12-06"),  # today would be "today"
    ("next week", "2026-11-30", "2026-12-06"),
    ("next month", "2026-12-01", "2026-12-31"),
    ("in two weeks", "2026-12-13", "2026-12-13"),
    ("in 3 days", "2026-12-02", "2026-12-02"),
    ("in three days' time", "2026-12-02", "2026-12-02"),
    ("at the end of the month", "2026-11-29", "2026-11-30"),  # under way: from today
    ("May 4th", "2027-05-04", "2027-05-04"),  # within half a year
    ("Dec 25th", "2026-12-25", "2026-12-25"),
    ("in December", "2026-12-01", "2026-12-31"),
    ("in May", "2027-05-01", "2027-05-31"),
    ("in the summer", "2027-06-01", "2027-08-31"),
    ("next summer", "2027-06-01", "2027-08-31"),
    ("this winter", "2026-12-01", "2027-02-28"),
    ("this weekend", "2026-11-29", "2026-11-29"),
    ("this week", "2026-11-29", "2026-11-29"),
    ("over the weekend", "2026-11-29", "2026-11-29"),
    ("next weekend", "2026-12-05", "2026-12-06"),
    ("next year", "2027-01-01", "2027-12-31"),
    ("the end of the year", "2026-11-29", "2026-12-31"),
    ("within a week", "2026-11-29", "2026-12-06"),
    ("in a few days", "2026-12-01", "2026-12-04"),
    ("3 days from now", "2026-12-02", "2026-12-02"),
    ("明天", "2026-11-30", "2026-11-30"),
    ("后天", "2026-12-01", "2026-12-01"),
    ("大后天", "2026-12-02", "2026-12-02"),
    ("下周三", "2026-12-02", "2026-12-02"),
    ("下星期五", "2026-12-04", "2026-12-04"),
    ("下个月", "2026-12-01", "2026-12-31"),
    ("两周后", "2026-12-13", "2026-12-13"),
    ("三天后", "2026-12-02", "2026-12-02"),
    ("十天以后", "2026-12-09", "2026-12-09"),
    ("月底", "2026-11-29", "2026-11-30"),
    ("年底", "2026-11-29", "2026-12-31"),
    ("5月4日", "2027-05-04", "2027-05-04"),
    ("五月四号", "2027-05-04", "2027-05-04"),
    ("周五", "2026-12-04", "2026-12-04"),
    ("周日", "2026-11-29", "2026-11-29"),  # alone: today included
    ("3号", "2026-12-03", "2026-12-03"),
    ("下个月3号", "2026-12-03", "2026-12-03"),
    ("12月", "2026-12-01", "2026-12-31"),
    ("下周末", "2026-12-05", "2026-12-06"),
    ("明年春天", "2027-03-01", "2027-05-31"),
    ("明年", "2027-01-01", "2027-12-31"),
    ("半年后", "2027-05-29", "2027-05-29"),
    ("几天后", "2026-12-01", "2026-12-04"),
]


@pytest.mark.parametrize(("text", "first", "last"), FUTURE)
def test_future_spans(text: str, first: str, last: str) -> None:
    assert ahead(text) == [(first, last, text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("my 1:1 got pushed to 4 today", time(16, 0)),
        ("the viewing got moved back to 5:30", time(17, 30)),
    ],
)
def test_a_time_moved_to_is_read(text: str, expected: time) -> None:
    said = clock_time(text)
    assert said is not None and said.at == expected


def test_a_day_read_ahead_then_kaishi_is_the_day_something_starts() -> None:
    # said on Sunday 29 November: 周二开始 is the coming Tuesday; 周二开始就一直 looked back
    assert ahead("周二开始新工作") == [("2026-12-01", "2026-12-01", "周二")]
    assert ahead("三月开始学钢琴") == [("2027-03-01", "2027-03-31", "三月")]
    assert ahead("周二开始就一直下雨") == []
    assert ahead("上周二开始减肥") == []


# Said on Wednesday 25 November 2026: the convention for this / next / on + weekday.
FUTURE_ON_WEDNESDAY = [
    ("this Friday", "2026-11-27"),
    ("on Friday", "2026-11-27"),
    ("next Friday", "2026-11-27"),  # the nearest: the first Friday after today
    ("this coming Friday", "2026-11-27"),
    ("下周五", "2026-12-04"),  # of the next ISO week
    ("这周五", "2026-11-27"),
    ("周五", "2026-11-27"),
    ("this Monday", "2026-11-30"),  # the coming one
    ("this Wednesday", "2026-11-25"),  # today
    ("on Wednesday", "2026-12-02"),
    ("next Wednesday", "2026-12-02"),
    ("周三", "2026-11-25"),
]


def test_a_weekday_before_jide_is_a_day() -> None:
    """周一记得...: "remember on Monday", not a weekly 记 (周日记 stays none)."""
    [(first, _, words)] = ahead("周一记得交表", WEDNESDAY)
    assert (first, words) == ("2026-11-30", "周一")


@pytest.mark.parametrize(("text", "day"), FUTURE_ON_WEDNESDAY)
def test_future_weekdays_said_on_a_wednesday(text: str, day: str) -> None:
    assert ahead(text, WEDNESDAY) == [(day, day, text)]


@pytest.mark.parametrize(
    "text",
    [
        "yesterday",
        "last week",
        "上个月",
        "去年",
        "last summer",
        "a few days ago",
        "two months ago",
        "earlier this week",
        "last Friday",
        # spans that look back from now, though they end today
        "recently",
        "最近",
        "since May",
        "五月以来",
        "这几天",
        "the past few days",
        "the past week",
    ],
)
def test_the_future_sense_leaves_out_the_past(text: str) -> None:
    assert future_spans(text, NOW) == []


@pytest.mark.parametrize(
    ("text", "now", "day"),
    [
        ("这周五", NOW, "2026-12-04"),  # said on a Sunday: the coming Friday
        ("我这周六要搬家", NOW, "2026-12-05"),
        ("本周六", NOW, "2026-12-05"),
        ("这个星期一", WEDNESDAY, "2026-11-30"),
        ("这周三", WEDNESDAY, "2026-11-25"),  # today, still this week's
    ],
)
def test_this_weeks_day_gone_by_is_the_coming_one_in_the_future_sense(
    text: str, now: datetime, day: str
) -> None:
    [mention] = future_spans(text, now)
    assert mention.day.isoformat() == day
    [past] = find_dates(text, now)  # the past sense keeps this ISO week's
    assert past.day <= now.date()


def test_a_time_of_day_gives_the_due_hours() -> None:
    [mention] = future_spans("remind me tomorrow evening", NOW)
    assert (mention.day, mention.hours, mention.text) == (
        date(2026, 11, 30),
        (18, 24),
        "tomorrow evening",
    )
    [mention] = future_spans("明天晚上考试", NOW)
    assert (mention.day, mention.hours) == (date(2026, 11, 30), (18, 24))


def test_a_month_day_ahead_is_this_years_or_next_within_half_a_year() -> None:
    january = datetime(2026, 1, 15, 9, 0, tzinfo=UTC)
    assert ahead("May 4th", january) == [("2026-05-04", "2026-05-04", "May 4th")]
    assert ahead("Jan 15", january) == [("2026-01-15", "2026-01-15", "Jan 15")]  # today
    june = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
    assert ahead("May 4th", june) == []  # gone by, and next year's is far: a past day
    assert find_dates("May 4th", june)[0].day == date(2026, 5, 4)
    assert ahead("Dec 31st", JAN_2) == [("2027-12-31", "2027-12-31", "Dec 31st")]  # this year's
    assert ahead("Jan 1st", JAN_2) == []  # gone by, and next year's is far
    assert ahead("1月5日", JAN_2) == [("2027-01-05", "2027-01-05", "1月5日")]
    december = datetime(2026, 12, 20, 9, 0, tzinfo=UTC)
    assert ahead("Jan 10th", december) == [("2027-01-10", "2027-01-10", "Jan 10th")]
    assert ahead("下个月3号", december) == [("2027-01-03", "2027-01-03", "下个月3号")]
    assert ahead("next month", december) == [("2027-01-01", "2027-01-31", "next month")]


@pytest.mark.parametrize(
    ("now", "text", "first", "last"),
    [
        (datetime(2028, 2, 28, 12, 0, tzinfo=UTC), "tomorrow", "2028-02-29", "2028-02-29"),
        (datetime(2028, 2, 28, 12, 0, tzinfo=UTC), "Feb 29", "2028-02-29", "2028-02-29"),
        (datetime(2028, 2, 28, 12, 0, tzinfo=UTC), "2月29日", "2028-02-29", "2028-02-29"),
        (datetime(2028, 2, 28, 12, 0, tzinfo=UTC), "29号", "2028-02-29", "2028-02-29"),
        (datetime(2028, 2, 28, 12, 0, tzinfo=UTC), "月底", "2028-02-28", "2028-02-29"),
        (datetime(2028, 2, 28, 12, 0, tzinfo=UTC), "in 2 days", "2028-03-01", "2028-03-01"),
        (datetime(2027, 9, 1, 12, 0, tzinfo=UTC), "Feb 29", "2028-02-29", "2028-02-29"),
        (datetime(2027, 1, 31, 12, 0, tzinfo=UTC), "in a month", "2027-02-28", "2027-02-28"),
        (datetime(2027, 1, 31, 12, 0, tzinfo=UTC), "29号", "2027-03-29", "2027-03-29"),
    ],
)
def test_leap_years_and_short_months_ahead(now: datetime, text: str, first: str, last: str) -> None:
    assert ahead(text, now) == [(first, last, text)]


def test_a_leap_day_too_far_ahead_is_nothing() -> None:
    assert future_spans("Feb 29", datetime(2027, 8, 1, tzinfo=UTC)) == []  # 212 days


# --- properties, against many fixed days (never the real clock) --------------------------------

DAYS = st.dates(min_value=date(1990, 1, 1), max_value=date(2090, 12, 31))


def noon(day: date) -> datetime:
    return datetime.combine(day, time(12, 0), UTC)


@PROPS
@given(day=DAYS, n=st.integers(1, 30))
def test_counted_days_back_and_ahead(day: date, n: int) -> None:
    now = noon(day)
    for back in (f"{n} days ago", f"{n}天前"):
        assert find_dates(back, now)[0].day == day - timedelta(days=n)
    for forward in (f"in {n} days", f"{n}天后"):
        [mention] = future_spans(forward, now)
        assert mention.day == day + timedelta(days=n)


@PROPS
@given(day=DAYS, weekday=st.integers(0, 6))
def test_on_a_weekday_looks_back_in_the_past_sense_and_ahead_in_the_future(
    day: date, weekday: int
) -> None:
    now = noon(day)
    name = WEEKDAY_NAMES[weekday]
    [back] = find_dates(f"on {name}", now)
    [forward] = future_spans(f"on {name}", now)
    assert back.day.weekday() == forward.day.weekday() == weekday
    assert day - timedelta(days=7) <= back.day < day < forward.day <= day + timedelta(days=7)
    # next Tuesday is never a past day, and this Tuesday (ahead) is within the coming week
    [this] = future_spans(f"this {name}", now)
    assert day <= this.day < day + timedelta(days=7)


@PROPS
@given(day=DAYS, month=st.integers(1, 12), dom=st.integers(1, 29))
def test_a_month_day_without_a_year(day: date, month: int, dom: int) -> None:
    now = noon(day)
    text = f"{month}月{dom}日"
    [back] = find_dates(text, now)
    assert back.day <= day and (day - back.day).days < 366 * 8
    if (month, dom) != (2, 29):
        assert (day - back.day).days < 366
    forward = future_spans(text, now)
    this_year = date(day.year, month, dom) if (month, dom) != (2, 29) else None
    if this_year is not None and this_year >= day:
        assert [m.day for m in forward] == [this_year]
    for mention in forward:  # this year's still to come, or next year's within half a year
        assert mention.day >= day
        assert mention.day.year == day.year or mention.day <= day + timedelta(days=183)


@PROPS
@given(day=DAYS)
def test_calendar_spans_have_calendar_edges(day: date) -> None:
    now = noon(day)
    this_month = day.replace(day=1)
    [last_month] = find_dates("上个月", now)
    assert last_month.days[1] == this_month - timedelta(days=1)
    assert last_month.days[0] == last_month.days[1].replace(day=1)
    [next_month] = future_spans("next month", now)
    following = (this_month + timedelta(days=31)).replace(day=1)
    assert next_month.days[0] == following
    assert (next_month.days[1] + timedelta(days=1)).day == 1
    [last_year] = find_dates("last year", now)
    assert last_year.days == (date(day.year - 1, 1, 1), date(day.year - 1, 12, 31))
    [summer] = find_dates("last summer", now)
    assert summer.days[1] < day and summer.days[0].month == 6 and summer.days[1].month == 8
    assert summer.days[1].year in (day.year, day.year - 1)
    [winter] = find_dates("in the winter", now)
    assert winter.days[0] <= day and winter.days[0].month == 12
    assert (winter.days[1] - winter.days[0]).days in (89, 90)
    [coming] = future_spans("in the winter", now)
    assert coming.days[1] >= day and coming.days[0] >= day


@PROPS
@given(day=DAYS, phrase=st.sampled_from([p for p, _, _ in PAST_SPANS] + [p for p, _ in PAST_DAYS]))
def test_the_future_sense_is_never_before_today(day: date, phrase: str) -> None:
    for mention in future_spans(phrase, noon(day)):
        assert day <= mention.days[0] <= mention.day


@PROPS
@given(
    day=st.dates(min_value=date(2021, 1, 1), max_value=date(2090, 12, 31)),  # after "2020"
    phrase=st.sampled_from(
        [
            "recently",
            "lately",
            "最近",
            "近来",
            "这几天",
            "since May",
            "自从去年",
            "上周以来",
            "the past few days",
            "since 2020",
            "ever since last summer",
        ]
    ),
)
def test_spans_that_look_back_end_today(day: date, phrase: str) -> None:
    [mention] = find_dates(phrase, noon(day))
    assert mention.day == day and mention.days[0] <= day
    assert future_spans(phrase, noon(day)) == []


@PROPS
@given(day=DAYS, phrase=st.sampled_from([p for p, _, _ in PAST_SPANS if "since" not in p]))
def test_spans_other_than_since_are_at_most_a_year_long(day: date, phrase: str) -> None:
    for mention in find_dates(phrase, noon(day)):
        if "以来" in mention.text or "至今" in mention.text or "开始" in mention.text:
            continue
        assert (mention.days[1] - mention.days[0]).days <= 366


# --- clock times (for due times) ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("my interview is tomorrow at 3pm", time(15, 0)),
        ("at 10:30 am", time(10, 30)),
        ("12 pm", time(12, 0)),
        ("12am", time(0, 0)),
        ("at 15:30", time(15, 30)),
        ("9 o'clock", time(9, 0)),
        ("明天下午3点开会", time(15, 0)),
        ("晚上八点半", time(20, 30)),
        ("上午九点一刻", time(9, 15)),
        ("3点15分", time(15, 15)),  # an hour of 1 to 6 alone is the afternoon's
        ("早上7点", time(7, 0)),
        # A time inside an evening's words is in the evening; numerals, "at 8", "8ish",
        # "half past 7", noon and midnight are read in both languages.
        ("明晚8点提醒我吃药", time(20, 0)),
        ("提醒我明晚八点吃药", time(20, 0)),
        ("今晚十点半", time(22, 30)),
        ("夜里2点的航班", time(2, 0)),
        ("八点三刻", time(8, 45)),
        ("at 8 in the evening", time(20, 0)),
        ("around 7 tonight", time(19, 0)),
        ("at 10:30 pm", time(22, 30)),
        ("at 8ish", time(8, 0)),
        ("dinner 8ish?", time(8, 0)),
        ("half past 7", time(7, 30)),
        ("quarter to 8 in the evening", time(19, 45)),
        ("at eight", time(8, 0)),
        ("lunch at noon", time(12, 0)),
        ("by midnight", time(23, 59)),
        ("tomorrow 8:30", time(8, 30)),
        ("at 4", time(16, 0)),  # an hour of 1 to 6 alone is the afternoon's
        # British "half 8" (half past), and minutes after a dot.
        ("job interview at half 8", time(8, 30)),
        ("remind me at half 6", time(18, 30)),
        ("dinner at 8.30pm", time(20, 30)),
        ("the train is at 7.45", time(7, 45)),
        ("interview tomorrow 3.30", time(15, 30)),
        ("at six thirty", time(18, 30)),
        ("at 7 forty-five", time(7, 45)),
        # minutes to or past an hour in words, a leading zero's 24-hour clock, Chinese minutes
        ("booster at twenty to 11", time(10, 40)),
        ("ten past 9 tomorrow", time(9, 10)),
        ("twenty-five past 3", time(15, 25)),
        ("train's at 05:40 on friday", time(5, 40)),
        ("下午四点五十分面试", time(16, 50)),
        ("明早七点四十的高铁", time(7, 40)),
        ("三点零五开会", time(15, 5)),
        # the hour before one o'clock is noon's; minutes past or to an hour in numerals
        ("ping me at quarter to 1 to ring the vet", time(12, 45)),
        ("ten to 1 works for lunch", time(12, 50)),
        ("remind me at 20 past 1 to take the bread out", time(13, 20)),
        ("the shuttle leaves at 5 past 9", time(9, 5)),
        # no clock time first (两点 alone is "two points") hides none after it
        ("两点了还没睡，明天上午十点半开会", time(10, 30)),
        ("一点多了，早上八点的高铁", time(8, 0)),
        # the 24-hour clock in four digits
        ("muster at 0645 on the quay", time(6, 45)),
        ("brief the team by 1130", time(11, 30)),
        ("handover is 2200 hours", time(22, 0)),
        # hyphens, "-ish" after am or pm or noon, minutes as "mins", an hour's words to noon or
        # midnight, the European "15h30"
        ("the ferry's at half-past seven", time(7, 30)),
        ("pick up at quarter-past 5", time(17, 15)),
        ("let's say at two-thirty at the cafe", time(14, 30)),
        ("call at eleven-fifteen", time(11, 15)),
        ("at seven forty the bus goes", time(7, 40)),
        ("tee time 10amish", time(10, 0)),
        ("drinks 6pm-ish", time(18, 0)),
        ("lunch noonish?", time(12, 0)),
        ("5 mins past 8 the doors open", time(8, 5)),
        ("ten mins to 4 is fine", time(15, 50)),
        ("the demo is at quarter to noon", time(11, 45)),
        ("fireworks at ten to midnight", time(23, 50)),
        ("rdv à 15h30 devant la gare", time(15, 30)),
        # Chinese: 时 (formal), 整, 1刻 in numerals, 差 and 过 with minutes, a full-width
        # colon, and a part of the day said before a colon's time
        ("会议定于下午三时举行", time(15, 0)),
        ("15时30分开始检录", time(15, 30)),
        ("两点整到门口", time(14, 0)),
        ("九点整开会", time(9, 0)),
        ("下午3点1刻集合", time(15, 15)),
        ("差一刻八点到校", time(7, 45)),
        ("差五分十点我给你打电话", time(9, 55)),
        ("七点差一刻出门", time(6, 45)),
        ("十点过五分开始", time(10, 5)),
        ("五点过一刻下课", time(17, 15)),
        ("晚上7:30看电影", time(19, 30)),
        ("下午 2:15 面试", time(14, 15)),
        ("早上7：30的车", time(7, 30)),
        ("19：45开始", time(19, 45)),
        ("明晚9:00直播", time(21, 0)),
        ("大概7点多到", time(7, 0)),
        # minutes after a space
        ("remind me at 7 45 to defrost it", time(7, 45)),
        ("meet at 8 05 sharp", time(8, 5)),
        ("at 3 15 pm works", time(15, 15)),
        # its am or pm at once after a space's minutes; "12 midnight" and "12 noon"
        ("pick me up at 6 30pm", time(18, 30)),
        ("lock the doors at 12 midnight", time(23, 59)),
        ("service at 12 noon", time(12, 0)),
        # the hour's numeral after a weekday's (周六七点 had no clock time, 礼拜二十二点 22:00)
        ("我周六七点去面试", time(7, 0)),
        ("星期三十点开会", time(10, 0)),
        ("礼拜二十二点的飞机", time(12, 0)),
        ("下周三三点见", time(15, 0)),
        ("周五八点见", time(8, 0)),
    ],
)
def test_a_clock_time_is_read_in_english_and_chinese(text: str, expected: time) -> None:
    said = clock_time(text)
    assert said is not None and said.at == expected
    assert said.start == text.index(text[said.start : said.end])


def test_a_clock_times_words_are_where_it_was_said() -> None:
    text = "the İnterview is tomorrow at 3pm"  # İ lowercases to two characters
    said = clock_time(text)
    assert said is not None and text[said.start : said.end] == "3pm"


def test_a_clock_times_words_run_to_its_am_or_pm() -> None:
    text = "dinner at 8 pm on friday"
    said = clock_time(text)
    assert said is not None and text[said.start : said.end] == "at 8 pm"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("remind me tomorrow at 6 in the morning to call mum", "at 6 in the morning"),
        ("flight's at 9 in the evening", "at 9 in the evening"),
    ],
)
def test_a_clock_times_words_run_to_its_part_of_the_day_after_in_the(text: str, words: str) -> None:
    """So the day's reading does not take the part for a day's own ("tomorrow at 6 in the
    morning" was a reminder at 18:00, its morning left to the day)."""
    said = clock_time(text)
    assert said is not None and text[said.start : said.end] == words


@pytest.mark.parametrize(
    ("text", "hours", "expected"),
    [
        ("remind me tomorrow evening at 8", (18, 24), time(20, 0)),
        ("tomorrow afternoon at 3", (12, 18), time(15, 0)),
        ("tomorrow morning at 8", (6, 12), time(8, 0)),
        ("周五晚上我们八点见", (18, 24), time(20, 0)),
        ("明天凌晨3点", (0, 6), time(3, 0)),
    ],
)
def test_an_hour_without_am_or_pm_is_in_the_part_of_the_day_said_with_its_day(
    text: str, hours: tuple[int, int], expected: time
) -> None:
    said = clock_time(text, hours)
    assert said is not None and said.at == expected


@pytest.mark.parametrize(
    "text",
    ["3 people", "at 25:00", "page 3", "3/4 of it", "一点也不", "", "at 3 people", "at 8%",
     "at 5 km", "half an hour", "half 2 people", "half 13", "costs 3.50", "$3.30",
     "version 2.15.1", "lost by one round", "we're at 2 goals down", "by three laps",
     "around 5 sets", "at 7 pages", "done by 2030", "that 1700 figure", "at 1700 metres",
     "a 5h30 flight", "the 3h drive", "at 2 mins", "half-past"],
)  # fmt: skip
def test_numbers_that_are_no_clock_time_give_none(text: str) -> None:
    assert clock_time(text) is None


@pytest.mark.parametrize(
    "text",
    ["我有3点建议", "两点不同", "一点都不难", "第三点", "我有五点要说", "这三点", "一时半会儿",
     "一时想不起来", "四时美景", "一点多了"],
)  # fmt: skip
def test_points_and_a_little_are_no_hours(text: str) -> None:
    assert clock_time(text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("后天面试 十点，有点慌", time(10, 0)),
        ("明天 yoga 七点", time(7, 0)),
        ("十二点见", time(12, 0)),
    ],
)
def test_a_chinese_numeral_hour_alone_is_an_hour_when_no_count_comes_before_it(
    text: str, expected: time
) -> None:
    said = clock_time(text)
    assert said is not None and said.at == expected


@pytest.mark.parametrize(
    ("text", "coming", "past"),
    [
        ("my sister's wedding is the 14th", date(2026, 12, 14), date(2026, 11, 14)),
        ("on the 22nd, he's a tree", date(2026, 12, 22), date(2026, 11, 22)),
        ("pay rent on the 1st", date(2027, 1, 1), date(2026, 12, 1)),
        ("on sunday the 13th", date(2026, 12, 13), date(2026, 11, 13)),
        ("interview on the 9th!!", date(2026, 12, 9), date(2026, 11, 9)),
        # A lowercase "march" or "may" with a day, after a date's words.
        ("our wedding anniversary is march 22", date(2027, 3, 22), date(2026, 3, 22)),
        ("flying home on may 4", date(2027, 5, 4), date(2026, 5, 4)),
        ("march 22, can't wait", date(2027, 3, 22), date(2026, 3, 22)),
        # A numeric date only one way round (a number over 12), said as a date.
        ("my exam is on 20/12", date(2026, 12, 20), date(2025, 12, 20)),
        ("the flight is 12/20", date(2026, 12, 20), date(2025, 12, 20)),
        ("due 1/15", date(2027, 1, 15), date(2026, 1, 15)),
        # Chat leaves "the" out; a month and day before "and" is a day.
        ("my viva is on 11th, pray for me", date(2026, 12, 11), date(2026, 11, 11)),
        ("brunch sunday 13th", date(2026, 12, 13), date(2026, 11, 13)),
        ("ortho appt on the 9th ugh braces", date(2026, 12, 9), date(2026, 11, 9)),
        ("pitching on dec 17 and the deck is a mess", date(2026, 12, 17), date(2025, 12, 17)),
    ],
)
def test_a_day_said_without_its_month_or_year_is_the_coming_one_or_the_last(
    text: str, coming: date, past: date
) -> None:
    now = datetime(2026, 12, 3, 15, 0, tzinfo=UTC)
    assert [m.day for m in future_spans(text, now)] == [coming]
    assert [m.day for m in find_dates(text, now)] == [past]


@pytest.mark.parametrize(
    "text", ["got 9/20 on the quiz", "on 3/4", "12/20 people came", "on 9/3/2024", "18/20"]
)
def test_a_numeric_date_either_way_round_or_a_score_is_no_date(text: str) -> None:
    now = datetime(2026, 12, 3, 15, 0, tzinfo=UTC)
    assert future_spans(text, now) == [] and find_dates(text, now) == []


@pytest.mark.parametrize(
    ("text", "day"),
    [("禮拜五", date(2026, 12, 4)), ("下週一", date(2026, 12, 7)), ("下禮拜一", date(2026, 12, 7))],
)
def test_traditional_characters_of_days_are_read(text: str, day: date) -> None:
    now = datetime(2026, 12, 3, 15, 0, tzinfo=UTC)
    [mention] = future_spans(f"{text}要去看牙醫", now)
    assert (mention.day, mention.text) == (day, text)


def test_a_traditional_hour_is_read() -> None:
    assert clock_time("禮拜六下午三點") == ClockTime(time(15, 0), 3, 7)
    assert clock_time("兩點鐘") == ClockTime(time(14, 0), 0, 3)


@pytest.mark.parametrize(
    "text", ["we march 22 miles", "you may 4 get in", "they march 10 km", "May 3 or 4 of us"]
)
def test_a_march_or_may_as_a_verb_or_a_count_is_no_date(text: str) -> None:
    now = datetime(2026, 12, 3, 15, 0, tzinfo=UTC)
    assert future_spans(text, now) == [] and find_dates(text, now) == []


@pytest.mark.parametrize("text", ["the 3rd time", "the 2nd floor", "she came 1st", "the 5th one"])
def test_an_ordinal_of_a_position_is_no_day(text: str) -> None:
    now = datetime(2026, 12, 3, 15, 0, tzinfo=UTC)
    assert future_spans(text, now) == [] and find_dates(text, now) == []


@pytest.mark.parametrize(("text", "day"), [("周五回来", "2026-12-04"), ("周三回家", "2026-12-02")])
def test_a_weekday_before_going_home_is_a_day(text: str, day: str) -> None:
    assert ahead(text) == [(day, day, text[:2])]


@pytest.mark.parametrize("text", ["一周三回", "每周三回", "周三回"])
def test_a_weekday_count_of_times_is_no_day(text: str) -> None:
    # (so before 周日回家 was read as a day, and still)
    assert future_spans(text, NOW) == [] and find_dates(text, NOW) == []


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("the 9th 10 am", "2026-12-09"),
        ("on the 20th 9:15", "2026-12-20"),
        ("the 4th 7.30pm", "2026-12-04"),
    ],
)
def test_an_ordinal_right_before_its_clock_time_is_a_day(text: str, day: str) -> None:
    now = datetime(2026, 12, 3, 15, 0, tzinfo=UTC)
    [mention] = future_spans(text, now)
    assert mention.day.isoformat() == day


@pytest.mark.parametrize(
    "text", ["the 5th 10 people", "the 3rd 2 times", "on the 2nd 40 minutes in"]
)
def test_an_ordinal_before_a_count_is_still_no_day(text: str) -> None:
    now = datetime(2026, 12, 3, 15, 0, tzinfo=UTC)
    assert future_spans(text, now) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # right after a day, or before what starts or leaves then
        ("明天两点", time(14, 0)),
        ("周六一点", time(13, 0)),
        ("两点开会", time(14, 0)),
        ("一点集合", time(13, 0)),
        ("两点的飞机", time(14, 0)),
    ],
)
def test_one_and_two_oclock_after_a_day_or_before_a_start_are_hours(
    text: str, expected: time
) -> None:
    found = clock_time(text)
    assert found is not None and found.at == expected


@pytest.mark.parametrize("text", ["明天一点都不想去", "周六两点意见", "这两点要注意", "两点不同意"])
def test_one_and_two_points_near_a_day_are_still_no_hours(text: str) -> None:
    assert clock_time(text) is None
