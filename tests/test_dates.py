"""memory/dates.py: the days a message refers to, in English and Chinese, against a fixed now.

NOW is Sunday 29 November 2026, 15:00 UTC. Its ISO week runs from Monday 23 to Sunday 29
November; the previous one from 16 to 22 November.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from memory.dates import DateMention, find_dates

NOW = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)  # a Sunday
MONDAY = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
WEDNESDAY = datetime(2026, 11, 25, 10, 0, tzinfo=UTC)
JANUARY = datetime(2026, 1, 15, 9, 0, tzinfo=UTC)  # a Thursday


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
