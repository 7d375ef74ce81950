"""Intentions found when a conversation is encoded: what a user said is coming, as
memory.records.NewIntention with a due time and a last moment.

The encoder's one summary call answers, besides memories, "intentions" (at most
MAX_INTENTIONS: {user (a label), said_by (a label), kind, what, ask, when}) and "special_days"
(at most MAX_SPECIAL: {user, said_by, what, date "MM-DD"}); `from_answer` turns them into
intentions. `when` is the user's own words ("on Tuesday", 下周三, "next weekend", "tomorrow at
3pm") or an ISO date, read by memory.dates in the future sense against the moment they were
said; an intention whose time cannot be read is dropped, never guessed.

An intention is only ever for the member whose own message asked for it or told of it, and is
dated from that message. The model's label is checked against the words, not trusted: of the
messages saying its day (its `when`'s words, else a day among those it names; a special day's
date), the one sharing most words with its `what` must be that member's (on a tie, theirs),
and one the model says was said by someone else ("said_by") is dropped. Bob asking the bot to
remind Alice tomorrow of what she owes him is no reminder of Alice's, whatever else she said of
tomorrow.

`local_reading` is the same reading without a model (the encoder's fallback, and the offline
model's answer): what `taken` takes from each user's message (what
`memory.encoding.spotting.spot` finds, as the learned model judges it, or when it finds nothing,
the loose reading's candidate the model admits), made intentions by the rules below.

The due rules, in the time zone the user set (/timezone: the caller passes `zones`), else
the persona's:

* follow_up: a day's event is due at 18:00 that day, 3 h after a stated clock time, or at the
  end of a stated part of the day (at most 21:00); a span at 18:00 on its last day; never
  sooner than 3 h after it was said. It may be brought up for 3 days, then it is missed.
* reminder: at the stated time, else at the start of a stated part of the day, else 09:00 of
  its (first) day; for a day.
* special_day: yearly, 09:00 of its next date after the day it was said, for that day.

One not yet due that repeats a pending one (same user and kind, the same day, or the same
words due within the window) is left out (`fresh`): telling of an exam twice is one follow-up.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Any, TypeAlias, TypeVar

from memory.dates import clock_time, find_dates, future_spans
from memory.encoding.chat_days import (
    MORNING,
    MORNING_ALONE,
    TRADITIONAL,
    WEEK_FROM,
    day_shift,
    in_hours,
    next_morning,
    next_years,
    normalised,
    span_end,
)
from memory.encoding.spotting import WHAT_CHARS, Spotted, clipped, loose, spot
from memory.encoding.veto import admitted, kept
from memory.records import INTENTION_KINDS, Intention, IntentionKind, NewIntention

__all__ = [
    "MAX_INTENTIONS",
    "MAX_SPECIAL",
    "Judge",
    "Reading",
    "Said",
    "Spotted",
    "Window",
    "ask_for",
    "fresh",
    "from_answer",
    "local_reading",
    "resolve",
    "spot",
    "taken",
]

MAX_INTENTIONS = 4  # a conversation's follow-ups and reminders
MAX_SPECIAL = 2  # its special days
ASK_CHARS = 200
FOLLOW_UP_HOUR = 18  # "how did it go?" in the evening of the day
REMINDER_HOUR = 9
SPECIAL_HOUR = 9
LATEST_HOUR = 21  # a part of the day ending later ("tonight"): asked at 21:00 at the latest
AFTER_CLOCK = timedelta(hours=3)  # a stated time: the event is over three hours on
SOONEST = timedelta(hours=3)  # after it was said: a follow-up asked at once would be no news
FOLLOW_UP_DAYS = timedelta(days=3)
REMINDER_DAYS = timedelta(days=1)
AHEAD = timedelta(days=366)  # further off, it is a plan, not something to ask about


@dataclass(slots=True, frozen=True)
class Said:
    """A user's message of the conversation: who (stable id), when, what."""

    user_id: str
    at: datetime
    text: str


@dataclass(slots=True, frozen=True)
class Reading:
    """The conversation intentions are read from: its users' messages, its scope, its
    time zone and the persona's language (for each `ask`), when it was encoded, its id, and
    the time zone each user set, by id (the others' days and hours are `tz`'s)."""

    said: Sequence[Said]
    scope: str
    tz: tzinfo | None
    language: str
    created_at: datetime
    conversation_id: int | None
    zones: Mapping[str, tzinfo] = field(default_factory=dict)

    def zone(self, user_id: str) -> tzinfo | None:
        """The user's time zone, as they set it or the conversation's."""
        return self.zones.get(user_id, self.tz)


@dataclass(slots=True, frozen=True)
class Window:
    """When `when` falls: the days meant and, if said, the part of the day or the clock time."""

    first: date
    last: date
    hours: tuple[int, int] | None = None
    clock: time | None = None


# --- reading when ------------------------------------------------------------------------------

# What of a message's finds to keep (the veto), or of the loose reading's candidate to admit (the
# admit); a benchmark passes others to measure them.
Judge: TypeAlias = Callable[[str, list[Spotted]], list[Spotted]]

_ISO = re.compile(r"\s*(\d{4}-\d\d-\d\d)(?:[ T](\d\d:\d\d)(?::\d\d)?)?\s*")


# Words that say which half of the day an hour is in.
_HALF_SAID = re.compile(
    r"(?<![a-z])(?:[ap]\.?m|morning|noon|midnight|night|evening|afternoon|tonight)(?![a-z])"
    r"|上午|早上|早晨|凌晨|清早|早|中午|下午|晚上|晚|夜"
)


def resolve(when: str, now: datetime) -> Window | None:
    """The days `when` names still to come, read against `now` (aware, in the time zone the
    words were meant in): an ISO date (and time), or words ("on Tuesday", "Tuesday",
    下周三, 周末, "from friday to sunday", "next weekend at 10am", "tomorrow evening at 8",
    明晚八点), or a clock time alone ("at 8pm": today's if still to come, else tomorrow's; an
    hour of 7-11 said without its half of the day, once the morning's is gone, the evening's if
    still to come) or a morning alone ("in the morning": the next); a month and day gone by this
    year is next year's (an intention's day is to come, however far: memory.dates takes one
    more than half a year ahead for a day gone by). None when no day to come is named."""
    iso = _ISO.fullmatch(when)
    if iso is not None:
        try:
            day = date.fromisoformat(iso.group(1))
            clock = time.fromisoformat(iso.group(2)) if iso.group(2) else None
        except ValueError:
            return None
        return Window(day, day, None, clock) if day >= now.date() else None
    words = normalised(when, now)
    # an intention's month and day gone by this year is next year's ("june 6th" in December)
    mentions = future_spans(words, now) or future_spans(next_years(words, now), now)
    if not mentions:
        later = in_hours(words, now)
        if later is not None:
            moment = later.replace(second=0, microsecond=0)
            return Window(moment.date(), moment.date(), None, moment.time())
        # A clock time alone ("at 8pm"): today's if still to come, else tomorrow's.
        alone = clock_time(words)
        if alone is None:
            if MORNING_ALONE.search(words):  # "in the morning": the next one
                day = next_morning(now)
                return Window(day, day, MORNING)
            return None
        if alone.at > now.time().replace(tzinfo=None):
            return Window(now.date(), now.date(), None, alone.at)
        if 7 <= alone.at.hour < 12 and not _HALF_SAID.search(words):
            evening = time(alone.at.hour + 12, alone.at.minute)
            if evening > now.time().replace(tzinfo=None):
                # 十点提醒我吃药 said at three: tonight's ten, the nearest, not tomorrow morning's
                return Window(now.date(), now.date(), None, evening)
        day = now.date() + timedelta(days=1)
        return Window(day, day, None, alone.at)
    mention = mentions[0]
    first, last = mention.days
    if WEEK_FROM.search(words[: mention.start]):
        first, last = first + timedelta(days=7), last + timedelta(days=7)
    shift = day_shift(words, mention)
    first, last = first + shift, last + shift
    until = span_end(words, mentions)  # "from friday to monday"
    if until is not None:
        last = until.day
    said = clock_time(words, mention.hours)
    return Window(first, last, mention.hours, None if said is None else said.at)


def _at(day: date, hour: float, tz: tzinfo | None) -> datetime:
    moment = datetime.combine(day, time.min, tz) + timedelta(hours=hour)
    return moment if tz is not None else moment.astimezone()


def _due(
    kind: IntentionKind, window: Window, said: datetime, tz: tzinfo | None
) -> tuple[datetime, datetime] | None:
    """(due_at, until) of a follow-up or a reminder by the rules above; None for a reminder
    whose time has passed."""
    clock = None if window.clock is None else window.clock.hour + window.clock.minute / 60
    if kind == "reminder":  # on its (first) day
        if clock is not None:
            due = _at(window.first, clock, tz)
        elif window.hours is not None:
            due = _at(window.first, window.hours[0], tz)
        else:
            due = _at(window.first, REMINDER_HOUR, tz)
        return None if due <= said else (due, due + REMINDER_DAYS)
    if window.first != window.last:  # a span: once it is over
        due = _at(window.last, FOLLOW_UP_HOUR, tz)
    elif clock is not None:
        due = _at(window.last, clock, tz) + AFTER_CLOCK
    elif window.hours is not None:
        due = _at(window.last, min(window.hours[1], LATEST_HOUR), tz)
    else:
        due = _at(window.last, FOLLOW_UP_HOUR, tz)
    due = max(due, said + SOONEST)
    return due, due + FOLLOW_UP_DAYS


def _yearly(month: int, day: int, said: datetime, tz: tzinfo | None) -> tuple[datetime, datetime]:
    """The next `month`-`day` after the day `said` (today's is being spoken of already), at
    SPECIAL_HOUR, until that day's end. 29 February: the next leap year's."""
    today = said.astimezone(tz).date() if tz is not None else said.date()
    year = today.year
    while True:
        try:
            candidate = date(year, month, day)
        except ValueError:
            year += 1
            continue
        if candidate > today:
            break
        year += 1
    return _at(candidate, SPECIAL_HOUR, tz), _at(candidate + timedelta(days=1), 0, tz)


def _month_day(value: Any) -> tuple[int, int] | None:
    if not isinstance(value, str):
        return None
    match = re.fullmatch(r"\s*(?:\d{4}-)?(\d{1,2})-(\d{1,2})\s*", value)
    if match is None:
        return None
    month, day = int(match.group(1)), int(match.group(2))
    try:
        date(2024, month, day)  # a leap year: 02-29 is a day
    except ValueError:
        return None
    return month, day


# --- turning answers into intentions -----------------------------------------------------------


_REMEMBRANCE = re.compile(r"death|忌日")  # a close one's death day: no "happy"


def ask_for(kind: IntentionKind, what: str, language: str) -> str:
    """What to say about `what` when it is due, when no model wrote it."""
    if kind == "special_day" and _REMEMBRANCE.search(what):
        return f"今天是{what}，陪陪他们" if language == "zh" else f"be there for them: {what}"
    if language == "zh":
        if kind == "reminder":
            return f"提醒：{what}"
        if kind == "special_day":
            return f"祝{what}快乐" if len(what) <= 4 else f"为{what}送上祝福"
        return f"问问{what}怎么样了"
    if kind == "reminder":
        return f"remind them: {what}"
    if kind == "special_day":
        return f"wish them a happy {what}"
    return f"ask how it went: {what}"


def _folded_words(text: str) -> str:
    return " ".join(text.casefold().split())


_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")
# Words a model's "what" shares with any line about anyone ("her exam", "pay Bob the gold").
_COMMON = frozenset({
    "the", "and", "her", "his", "him", "she", "you", "your", "yours", "their", "them", "they",
    "for", "with", "our", "its", "was", "are", "has", "had", "not", "but", "this", "that",
    "from", "about", "will", "have", "get", "got", "can",
})  # fmt: skip


def _tokens(text: str) -> set[str]:
    """The words of `text` that tell what it is about: words of three letters or more but
    the commonest, numbers, and pairs of characters of a run of Chinese or Japanese."""
    folded = text.casefold()
    words = _CJK_RUN.sub(" ", folded)
    found = {w for w in re.findall(r"\w+", words) if w.isdigit() or len(w) >= 3} - _COMMON
    for run in _CJK_RUN.findall(folded):
        found.update({run[i : i + 2] for i in range(len(run) - 1)} or {run})
    return found


_Read = TypeVar("_Read")  # what was read in a message: its days, or nothing more


def _whose(
    user_id: str, what: str, readings: Sequence[tuple[Said, _Read]]
) -> tuple[Said, _Read] | None:
    """Of the messages that said the day (`readings`, each with what was read in it), the
    user's own that `what` came from: theirs sharing the most words with it, then the latest.
    None when they said it in none, or another member's says more of `what` than any of theirs
    (Bob's "remind Alice tomorrow to pay me the gold" beats Alice's "see you tomorrow")."""
    asked = _tokens(what)
    scored = [
        (len(asked & _tokens(m.text)), m.at, m.user_id == user_id, (m, r)) for m, r in readings
    ]
    theirs = [x for x in scored if x[2]]
    if not theirs:
        return None
    best = max(theirs, key=lambda x: (x[0], x[1]))
    if any(x[0] > best[0] for x in scored if not x[2]):
        return None
    return best[3]


def _spoken(
    said: Sequence[Said], user_id: str, when: str, what: str, tz: tzinfo | None
) -> tuple[datetime, Window] | None:
    """The message of `user_id`'s own that `when` was said in, and the days it names read
    against it: of the messages holding the words (else, as a model may write the day as a
    date, those naming a day among those), the one `_whose` finds. None when that is another
    member's, or no message of theirs says it."""
    words = _folded_words(when.translate(TRADITIONAL))
    if not words:
        return None
    # As `resolve` and `spot` read them: 周末 alone is this weekend, "tmrw" tomorrow, 禮拜 礼拜...
    texts = [normalised(m.text, m.at.astimezone(tz)) for m in said]
    readings: list[tuple[Said, Window]] = []
    for message, text in zip(said, texts, strict=True):
        if words in _folded_words(text):
            window = resolve(when, message.at.astimezone(tz))
            if window is not None:
                readings.append((message, window))
    if not readings and not any(words in _folded_words(t) for t in texts):
        for message, text in zip(said, texts, strict=True):
            local = message.at.astimezone(tz)
            window = resolve(when, local)
            if window is not None and any(
                first <= window.last and window.first <= last
                for first, last in (m.days for m in future_spans(next_years(text, local), local))
            ):
                readings.append((message, window))
    found = _whose(user_id, what, readings)
    return None if found is None else (found[0].at, found[1])


def _told_date(
    said: Sequence[Said], user_id: str, month_day: tuple[int, int], what: str, tz: tzinfo | None
) -> datetime | None:
    """When `user_id`'s own message naming that month and day was said (as `_whose` finds
    it); None if none of theirs names it (another's birthday is theirs to tell)."""
    readings: list[tuple[Said, None]] = []
    for message in said:
        local = message.at.astimezone(tz)
        days = [
            *find_dates(message.text, local),
            *future_spans(normalised(message.text, local), local),
        ]
        if any(m.first is None and (m.day.month, m.day.day) == month_day for m in days):
            readings.append((message, None))
    found = _whose(user_id, what, readings)
    return None if found is None else found[0].at


def _own(item: dict[str, Any], owner: Callable[[Any], str | None]) -> str | None:
    """The user id an item is for, when it is theirs: its "user" is a label of the
    conversation and its "said_by", when given, the same one (a model that saw one member
    ask for another's reminder may say so)."""
    user_id = owner(item.get("user"))
    said_by = item.get("said_by")
    if user_id is None or (said_by not in (None, "") and owner(said_by) != user_id):
        return None
    return user_id


def from_answer(
    intentions: Any,
    special_days: Any,
    *,
    owner: Callable[[Any], str | None],
    reading: Reading,
) -> list[NewIntention]:
    """The model's "intentions" and "special_days" as NewIntention. `owner` maps a label to
    a user id of the conversation (None for anything else: that item is dropped, as is one
    of an unknown kind, with no what, or whose time cannot be read). Each is only for the
    member whose own message asked for it or told of it, dated from that message: one whose
    day (or special date) no message of its user's names is dropped, whatever the model
    said of whom it is for (one member's words never become another's reminder)."""
    out: list[NewIntention] = []
    items = intentions if isinstance(intentions, list) else []
    for item in items[: MAX_INTENTIONS * 4]:  # a few unreadable ones may come first
        if len(out) == MAX_INTENTIONS:
            break
        if not isinstance(item, dict):
            continue
        user_id = _own(item, owner)
        kind = item.get("kind")
        what = clipped(item.get("what"), WHAT_CHARS)
        when = clipped(item.get("when"), WHAT_CHARS)
        if not user_id or kind not in INTENTION_KINDS or kind == "special_day" or not what:
            continue
        theirs = reading.zone(user_id)
        spoken = _spoken(reading.said, user_id, when, what, theirs)
        if spoken is None:
            continue
        moment, window = spoken
        if window.first - moment.astimezone(theirs).date() > AHEAD:
            continue
        bounds = _due(kind, window, moment, theirs)
        if bounds is None:
            continue
        ask = clipped(item.get("ask"), ASK_CHARS) or ask_for(kind, what, reading.language)
        out.append(
            NewIntention(
                reading.scope, user_id, kind, what, ask, *bounds, reading.created_at,
                reading.conversation_id, False, user_id,
            )
        )  # fmt: skip
    specials = special_days if isinstance(special_days, list) else []
    taken = 0
    for item in specials[: MAX_SPECIAL * 4]:
        if taken == MAX_SPECIAL:
            break
        if not isinstance(item, dict):
            continue
        user_id = _own(item, owner)
        what = clipped(item.get("what"), WHAT_CHARS)
        month_day = _month_day(item.get("date"))
        if not user_id or not what or month_day is None:
            continue
        told = _told_date(reading.said, user_id, month_day, what, reading.zone(user_id))
        if told is None:
            continue
        ask = clipped(item.get("ask"), ASK_CHARS) or ask_for("special_day", what, reading.language)
        due, until = _yearly(*month_day, told, reading.zone(user_id))
        out.append(
            NewIntention(
                reading.scope, user_id, "special_day", what, ask, due, until, reading.created_at,
                reading.conversation_id, True, user_id,
            )
        )  # fmt: skip
        taken += 1
    return out


def fresh(found: Sequence[NewIntention], pending: Sequence[Intention]) -> list[NewIntention]:
    """Those of `found` that repeat neither a pending intention nor one found before them:
    the same user and kind, and the same due day, or the same words due within a window."""
    kept: list[NewIntention] = []
    earlier: list[NewIntention | Intention] = list(pending)
    for new in found:
        if not any(_same(new, old) for old in earlier):
            kept.append(new)
            earlier.append(new)
    return kept


def _same(new: NewIntention, old: NewIntention | Intention) -> bool:
    if (new.scope, new.user_id, new.kind) != (old.scope, old.user_id, old.kind):
        return False
    if new.kind == "special_day":  # yearly: the same date of any year
        a, b = new.due_at.astimezone(old.due_at.tzinfo), old.due_at
        return (a.month, a.day) == (b.month, b.day) or _folded(new.what) == _folded(old.what)
    if new.due_at.astimezone(old.due_at.tzinfo).date() == old.due_at.date():
        return True
    return _folded(new.what) == _folded(old.what) and abs(new.due_at - old.due_at) <= (
        FOLLOW_UP_DAYS
    )


def _folded(what: str) -> str:
    text = re.sub(r"^(?:my|her|his|their|the|a|an)\s+|^(?:我的|我)", "", what.casefold().strip())
    return re.sub(r"[\s\W]+", "", text)


def taken(text: str, now: datetime, judge: Judge = kept, admit: Judge = admitted) -> list[Spotted]:
    """What the local reading takes from one message said at `now` (aware, in the time zone
    meant): what `spot` finds, less what `judge` (the learned veto, memory.encoding.veto) drops;
    when it finds nothing, the `loose` reading's candidate if `admit` (the same model) admits it.
    The learned model encodes the message: callers on the event loop run this in a thread."""
    found = spot(text, now)
    return judge(text, found) if found else admit(text, loose(text, now))


def local_reading(
    reading: Reading, judge: Judge = kept, admit: Judge = admitted
) -> list[NewIntention]:
    """Intentions from the users' messages without a model (the encoder's fallback): what
    `taken` takes from each, with `judge` and `admit`."""
    intentions: list[dict[str, str]] = []
    specials: list[dict[str, str]] = []
    for message in reading.said:
        now = message.at.astimezone(reading.zone(message.user_id))
        for spotted in taken(message.text, now, judge, admit):
            item = {"user": message.user_id, "what": spotted.what}
            if spotted.kind == "special_day":
                specials.append({**item, "date": spotted.when})
            else:
                intentions.append({**item, "kind": spotted.kind, "when": spotted.when})
    ids = {s.user_id for s in reading.said}
    return from_answer(
        intentions, specials, owner=lambda user: user if user in ids else None, reading=reading
    )
