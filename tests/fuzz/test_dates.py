"""Fuzzed date finding: any text (huge numbers, impossible days, odd calendars, mixed
scripts) gives a list of real days, in order, each once, quoting the message; never raises."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from memory.dates import find_dates, future_spans
from tests.fakes.fuzz import NASTY_PIECES, fuzzed, nasty_text

pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")

# Words and numbers dates are made of, to be shuffled into things that nearly are dates.
DATE_PIECES = [
    "0",
    "1",
    "2",
    "3",
    "9",
    "12",
    "13",
    "29",
    "30",
    "31",
    "32",
    "99",
    "1900",
    "2024",
    "9999",
    "10000",
    "99999999",
    "3000000",
    "day",
    "days",
    "week",
    "weeks",
    "fortnight",
    "ago",
    "the",
    "of",
    "on",
    "last",
    "this",
    "next",
    "past",
    "coming",
    "today",
    "tonight",
    "yesterday",
    "tomorrow",
    "morning",
    "night",
    "before",
    "after",
    "few",
    "several",
    "a",
    "other",
    "weekend",
    "month",
    "earlier",
    "early",
    "late",
    "mid",
    "in",
    "end",
    "beginning",
    "Monday",
    "sunday",
    "May",
    "may",
    "March",
    "Feb",
    "February",
    "Sept",
    "sep",
    "Dec",
    "4th",
    "31st",
    "2nd",
    "-",
    "/",
    ".",
    ",",
    ":",
    "\u2013",
    "st",
    "nd",
    "rd",
    "th",
    "年",
    "月",
    "日",
    "号",
    "號",
    "天",
    "前",
    "后",
    "周",
    "星期",
    "礼拜",
    "上",
    "下",
    "这",
    "本",
    "个",
    "今",
    "明",
    "昨",
    "大",
    "之",
    "前往",
    "末",
    "几",
    "些",
    "初",
    "中旬",
    "底",
    "去",
    "近",
    "阵子",
    "月份",
    "线",
    "楼",
    "一",
    "二",
    "三",
    "四",
    "五",
    "六",
    "七",
    "八",
    "九",
    "十",
    "廿",
    "卅",
    "两",
    "\u3007",
    "零",
    "百",
    "千",
    "万",
    "公元前",
    "以来",
    "自从",
    "后",
    "最近",
    "夏天",
    "冬",
    "的时候",
    "晚上",
    "since",
    "summer",
    "winter",
    "year",
    "recently",
    "within",
    "from now",
    "农历",
    "闰",
    " ",
    "\n",
    "\u200b",
    "٣",
    "\U0001d7d7",
    "²",
]
TODAY = [
    datetime(2026, 9, 3, 12, 0, tzinfo=UTC),
    datetime(1, 1, 1, 0, 0, tzinfo=UTC),  # the first day there is
    datetime(9999, 12, 31, 23, 59, tzinfo=UTC),  # the last
    datetime(2024, 2, 29, 23, 30, tzinfo=timezone(timedelta(hours=-11))),
]

YEAR = re.compile("\\d{4}|[\u3007零一二三四五六七八九]{4}")  # what a year is written as
near_dates = st.lists(st.sampled_from(DATE_PIECES), max_size=12).map("".join)
spaced = st.lists(st.sampled_from(DATE_PIECES), max_size=12).map(" ".join)
texts = st.one_of(near_dates, spaced, nasty_text(), st.text(max_size=80))


@fuzzed(200)
@given(text=texts, now=st.sampled_from(TODAY))
@example(text="year 99999999 and 3000000 days ago", now=TODAY[0])
@example(text="9999 weeks ago, 9999 fortnights ago", now=TODAY[1])
@example(text="tomorrow, 下下个月31号, next Monday, 大后天", now=TODAY[2])
@example(text="yesterday 前天 上上周日 1 fortnight ago", now=TODAY[1])
@example(text="Feb 30, 2024-02-30, 二〇二三年二月二十九日, 9月31日, 13月1日", now=TODAY[0])
@example(text="公元前221年 上周三 İİİ May 4th", now=TODAY[0])
@example(text="0000-01-01 0000年1月1日 9999年12月31日", now=TODAY[2])
@example(text="31号", now=TODAY[1])
@example(text="\u0663\u0663\u0663 weeks ago", now=TODAY[0])  # Arabic-Indic digits
@example(text="٣ days ago, \U0001d7d7 days ago, ² days ago", now=TODAY[0])
def test_dates_are_real_days_quoted_from_the_text(text: str, now: datetime) -> None:
    found = find_dates(text, now)
    days = [mention.days for mention in found]
    assert len(days) == len(set(days))  # each day or span once
    starts = [mention.start for mention in found]
    assert starts == sorted(starts)  # in order of appearance
    for mention in found:
        assert isinstance(mention.day, date) and date.min <= mention.day <= date.max
        assert mention.days[0] <= mention.days[1]
        assert mention.text and text[mention.start : mention.start + len(mention.text)] == (
            mention.text
        )
        if not YEAR.search(mention.text):
            # No year said: a day near this one (at most 999 fortnights, or nine years back
            # for a 29 February).
            assert abs((mention.day - now.date()).days) <= 999 * 14 + 9 * 366, mention


@fuzzed(200)
@given(text=texts, now=st.sampled_from(TODAY))
@example(text="since 9999, in 30 years, 明年夏天, next winter, 9999年底", now=TODAY[2])
@example(text="a year ago, last winter, 前年冬天, since the summer", now=TODAY[1])
@example(text="明天晚上 tomorrow evening 五月以来 in 99 months", now=TODAY[3])
def test_future_spans_are_days_to_come_quoted_from_the_text(text: str, now: datetime) -> None:
    found = future_spans(text, now)
    days = [mention.days for mention in found]
    assert len(days) == len(set(days))
    assert [m.start for m in found] == sorted(m.start for m in found)
    for mention in found:
        assert now.date() <= mention.days[0] <= mention.days[1]
        assert text[mention.start : mention.start + len(mention.text)] == mention.text
        if mention.hours is not None:
            assert 0 <= mention.hours[0] < mention.hours[1] <= 24


@fuzzed(60)
@given(piece=st.sampled_from(NASTY_PIECES), times=st.integers(1, 3000))
def test_long_repetitive_text(piece: str, times: int) -> None:
    """Long messages of one repeated piece: no error, and no more mentions than days exist."""
    found = find_dates(piece * times, TODAY[0])
    assert len(found) <= len(piece * times)
