"""Intentions found when a conversation is encoded: what a user said is coming, as
memory.records.NewIntention with a due time and a last moment.

The encoder's one summary call answers, besides memories, "intentions" (at most
MAX_INTENTIONS: {user (a label), kind, what, ask, when}) and "special_days" (at most
MAX_SPECIAL: {user, what, date "MM-DD"}); `from_answer` turns them into intentions. `when` is
the user's own words ("on Tuesday", 下周三, "next weekend", "tomorrow at 3pm") or an ISO date,
read by memory.dates in the future sense against the moment they were said; an intention whose
time cannot be read is dropped, never guessed. `spot` is the same reading without a model (the
encoder's fallback, and the offline model's answer): a user's sentence about themselves (or
about an event, naming no one: "the dentist is tomorrow") naming a day to come and an event,
or asking to be reminded, or naming their birthday.

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
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Any

from memory.dates import clock_time, find_dates, future_spans
from memory.records import INTENTION_KINDS, Intention, IntentionKind, NewIntention

__all__ = [
    "MAX_INTENTIONS",
    "MAX_SPECIAL",
    "Said",
    "Spotted",
    "Window",
    "ask_for",
    "fresh",
    "from_answer",
    "local_reading",
    "resolve",
    "spot",
]

MAX_INTENTIONS = 4  # a conversation's follow-ups and reminders
MAX_SPECIAL = 2  # its special days
WHAT_CHARS = 80
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
class Spotted:
    """What the local reading finds in one message: the answer a model would give."""

    kind: IntentionKind
    what: str
    when: str  # the words that said when; for a special day, its date as MM-DD


@dataclass(slots=True, frozen=True)
class Window:
    """When `when` falls: the days meant and, if said, the part of the day or the clock time."""

    first: date
    last: date
    hours: tuple[int, int] | None = None
    clock: time | None = None


# --- reading when ------------------------------------------------------------------------------

_ISO = re.compile(r"\s*(\d{4}-\d\d-\d\d)(?:[ T](\d\d:\d\d)(?::\d\d)?)?\s*")
_BARE_WEEKDAY = re.compile(
    r"(?<![a-z])(monday|tuesday|wednesday|thursday|friday|saturday|sunday)(?![a-z])"
)
_PLAIN_WEEKDAY = re.compile(r"(?:(?:this|next|last|on|coming|past)\s+)$")
# 周末 alone is this week's weekend (dates reads it only with 这 / 本 / 上 / 下).
_BARE_WEEKEND = re.compile(r"(?<![这本上下个每])(?:周末|週末)")


def resolve(when: str, now: datetime) -> Window | None:
    """The days `when` names still to come, read against `now` (aware, in the time zone the
    words were meant in): an ISO date (and time), or words ("on Tuesday", "Tuesday",
    下周三, 周末, "next weekend at 10am", "tomorrow evening at 8", 明晚八点), or a clock time
    alone ("at 8pm": today's if still to come, else tomorrow's). None when no day to come is
    named."""
    iso = _ISO.fullmatch(when)
    if iso is not None:
        try:
            day = date.fromisoformat(iso.group(1))
            clock = time.fromisoformat(iso.group(2)) if iso.group(2) else None
        except ValueError:
            return None
        return Window(day, day, None, clock) if day >= now.date() else None
    words = _BARE_WEEKEND.sub("这周末", when)
    lowered = words.lower()
    bare = _BARE_WEEKDAY.search(lowered)
    if bare is not None and _PLAIN_WEEKDAY.search(lowered[: bare.start()]) is None:
        words = f"{words[: bare.start()]}on {words[bare.start() :]}"
    mentions = future_spans(words, now)
    if not mentions:
        # A clock time alone ("at 8pm"): today's if still to come, else tomorrow's.
        alone = clock_time(words)
        if alone is None:
            return None
        day = now.date() if alone.at > now.time() else now.date() + timedelta(days=1)
        return Window(day, day, None, alone.at)
    mention = mentions[0]
    first, last = mention.days
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


def _text(value: Any, limit: int) -> str:
    if not isinstance(value, str):
        return ""
    text = " ".join(value.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def ask_for(kind: IntentionKind, what: str, language: str) -> str:
    """What to say about `what` when it is due, when no model wrote it."""
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


def _when_said(said: Sequence[Said], user_id: str, words: str) -> datetime | None:
    """When `user_id` said `words` (their latest message holding them), else their latest
    message's time; None if they said nothing."""
    theirs = [s for s in said if s.user_id == user_id]
    if not theirs:
        return None
    folded = words.casefold().strip()
    for message in reversed(theirs):
        if folded and folded in message.text.casefold():
            return message.at
    return theirs[-1].at


def from_answer(
    intentions: Any,
    special_days: Any,
    *,
    owner: Callable[[Any], str | None],
    said: Sequence[Said],
    scope: str,
    tz: tzinfo | None,
    language: str,
    created_at: datetime,
    conversation_id: int | None,
    zones: Mapping[str, tzinfo] | None = None,
) -> list[NewIntention]:
    """The model's "intentions" and "special_days" as NewIntention. `owner` maps a label to
    a user id of the conversation (None for anything else: that item is dropped, as is one
    of an unknown kind, with no what, or whose time cannot be read). `zones`: the time zone
    each user set, by id; the others' days and hours are `tz`'s."""
    zones = zones or {}
    out: list[NewIntention] = []
    items = intentions if isinstance(intentions, list) else []
    for item in items[: MAX_INTENTIONS * 4]:  # a few unreadable ones may come first
        if len(out) == MAX_INTENTIONS:
            break
        if not isinstance(item, dict):
            continue
        user_id = owner(item.get("user"))
        kind = item.get("kind")
        what = _text(item.get("what"), WHAT_CHARS)
        when = _text(item.get("when"), WHAT_CHARS)
        if not user_id or kind not in INTENTION_KINDS or kind == "special_day" or not what:
            continue
        moment = _when_said(said, user_id, when)
        theirs = zones.get(user_id, tz)
        window = resolve(when, moment.astimezone(theirs)) if moment is not None and when else None
        if moment is None or window is None:
            continue
        if window.first - moment.astimezone(theirs).date() > AHEAD:
            continue
        bounds = _due(kind, window, moment, theirs)
        if bounds is None:
            continue
        ask = _text(item.get("ask"), ASK_CHARS) or ask_for(kind, what, language)
        out.append(
            NewIntention(
                scope, user_id, kind, what, ask, *bounds, created_at, conversation_id, False
            )
        )
    specials = special_days if isinstance(special_days, list) else []
    taken = 0
    for item in specials[: MAX_SPECIAL * 4]:
        if taken == MAX_SPECIAL:
            break
        if not isinstance(item, dict):
            continue
        user_id = owner(item.get("user"))
        what = _text(item.get("what"), WHAT_CHARS)
        month_day = _month_day(item.get("date"))
        moment = _when_said(said, user_id, "") if user_id else None
        if not user_id or not what or month_day is None or moment is None:
            continue
        ask = _text(item.get("ask"), ASK_CHARS) or ask_for("special_day", what, language)
        due, until = _yearly(*month_day, moment, zones.get(user_id, tz))
        out.append(
            NewIntention(
                scope, user_id, "special_day", what, ask, due, until, created_at,
                conversation_id, True,
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


# --- the local reading -------------------------------------------------------------------------

_SENTENCES = re.compile(r"[^.!?;。！？；\n]+[.!?。！？]*")
_FIRST_PERSON = re.compile(r"(?<![a-z])(?:i|i'm|im|i've|i'll|i'd|my|me|we|we're|our)(?![a-z])|我")
_REMIND = re.compile(
    r"(?<![a-z])remind\s+me\s+(?:to\s+|about\s+|that\s+)?(?P<en>.+)|提醒我(?:一下)?[，,]?(?P<zh>.+)"
)
_SPECIAL = re.compile(
    r"(?<![a-z])(?:(?:my|our)\s+(?P<en>(?:wedding\s+)?(?:birthday|anniversary|bday)))"
    r"|(?P<zh>(?:我的?|我们的?)(?:结婚)?(?:生日|纪念日))"
)
# An event a follow-up can ask about: what the sentence is about, or words of going somewhere.
_EVENT_EN = re.compile(
    r"(?<![a-z])(?:exams?|tests?|quiz|finals|midterms?|interviews?|trip|flight|flying|fly|"
    r"appointment|meeting|date|party|wedding|concert|game|match|race|marathon|presentation|"
    r"surgery|operation|doctor|dentist|deadline|moving|move|audition|recital|show|gig|"
    r"conference|review|defen[cs]e|hike|hiking|vacation|holiday|visit|visiting|camp|"
    r"competition|tournament|ceremony|graduation|start(?:ing)?|class|lesson|"
    r"performance|checkup|check-up|results?|tryouts?|shift|launch|demo)(?![a-z])"
)
_EVENT_ZH = re.compile(
    r"考试|考研|面试|笔试|复试|答辩|约会|开会|会议|出差|旅行|旅游|聚会|婚礼|演唱会|比赛|手术|"
    r"看医生|看病|体检|复查|牙医|搬家|入职|报到|上班|开学|航班|飞机|出发|回家|回国|演出|"
    r"汇报|演讲|考|赛|展|音乐会|排练|试镜|毕业|典礼|截止|交稿|面签|相亲|爬山|见家长|(?<!过)去"
)
# Words that are no event to ask about afterwards: goodbyes, moods, the bot itself.
_NOT_EVENT = re.compile(
    r"(?<![a-z])(?:see\s+you|talk\s+(?:to\s+you\s+)?(?:later|tomorrow)|bye|good\s*night)"
    r"|明天见|回头聊|晚安|下次聊|再聊"
)
_NEGATED = re.compile(
    r"(?<![a-z])(?:no|not|don't|didn't|won't|never|cancel(?:l?ed)?)(?![a-z])|没|不用|取消"
)
_LEAD_EN = re.compile(
    r"^(?:(?:and|so|but|well|oh|also|btw)\s+)*(?:i\s+(?:have|got|'ve\s+got|am|'m)\s+"
    r"(?:a|an|my|the)\s+|i'?m\s+|i\s+(?:will|'ll|am|have\s+to|need\s+to|must)\s+|"
    r"i\s+(?:have|got)\s+|my\s+|our\s+|we\s+(?:have|are|'re)\s+(?:a|an|our)?\s*)",
)
# What is left before the event of a sentence that began with its day ("Tomorrow is the ...").
_ARTICLE_EN = re.compile(r"^(?:(?:is|'?s|will\s+be)\s+)?(?:(?:the|a|an|that)\s+)+")
_TAIL_EN = re.compile(r"\s+(?:is|are|will\s+be|'s|'re)\s*$|\s+(?:coming\s+up)\s*$")
_LEAD_ZH = re.compile(r"^(?:[我咱][们]?的?)?(?:就要|准备|打算|要|得|有|会|将)?(?:一)?(?:个|场|次)?")
_TAIL_ZH = re.compile(r"(?:了|啦|呢|哦|呀|吧|啊|哈|的)+$")
_JOINED = re.compile(r"\s*(?:at\s+|在\s*)?", re.IGNORECASE)  # a day, then its clock time
_CJK_GAP = re.compile(r"(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])")
_CHINESE = re.compile(r"[\u4e00-\u9fff]")
# An event stated with no one named ("the dentist is tomorrow morning", "Tomorrow's the big
# interview"): the speaker's, when the event is what the sentence begins with (the day's words
# taken out), nobody else is named and it is not told as past.
_EVENT_FIRST = re.compile(
    r"^(?:(?:and|so|but|oh|also|btw|well|ok|okay|ugh|yay)[\s,]+)*(?:(?:is|'?s|will\s+be)\s+)?"
    r"(?:(?:the|a|an|that|big|final)\s+)*(?:[a-z-]+\s+)?" + _EVENT_EN.pattern
)
_OTHERS_EN = re.compile(
    r"(?<![a-z])(?:you|your|you're|he|she|they|his|her|him|their|them|it|it's|there|who)(?![a-z])"
    r"|(?<![a-z])(?!(?:that|what|here|let|today|tomorrow)'s)[a-z]+'s\s+(?!the\s|a\s|an\s)"
)
_PAST_EN = re.compile(r"(?<![a-z])(?:was|were|went|had|did|got|ago)(?![a-z])")
_OTHERS_ZH = re.compile(r"[你他她它您]")
_STRIP = " ,，、：:。.!！?？~\uff5e-—\"'「」"  # \uff5e: the fullwidth tilde


def _without(sentence: str, words: str) -> str:
    """The sentence without the words that said when."""
    rest = " ".join(sentence.replace(words, " ", 1).split())
    return _CJK_GAP.sub("", rest)


def _clean_what(text: str) -> str:
    """The event in a few words: the sentence without its clock time, its "I have a" and
    "my", 我要, its particles."""
    clock = clock_time(text)
    if clock is not None:
        text = f"{text[: clock.start]} {text[clock.end :]}"
    text = _CJK_GAP.sub("", " ".join(text.split())).strip(_STRIP)
    text = re.sub(r"(?<![a-z])(?:on|at|in|this|next|coming|until)$|[在于]$", "", text)
    text = text.strip(_STRIP)
    lowered = text.lower()
    lead = _LEAD_EN.match(lowered)
    if lead is not None:
        text = text[lead.end() :]
    article = _ARTICLE_EN.match(text.lower())
    if article is not None:
        text = text[article.end() :]
    text = _TAIL_EN.sub("", text)
    text = _LEAD_ZH.sub("", text)
    text = _TAIL_ZH.sub("", text).strip(_STRIP)
    return _text(text, WHAT_CHARS)


def spot(text: str, now: datetime) -> list[Spotted]:
    """What a model would find in one user message said at `now` (aware, in the time zone
    meant): a reminder asked for ("remind me to call mom tomorrow", 提醒我明天交作业), a
    special day ("my birthday is May 4th", 我的生日是5月4日), an event to come the user will
    have ("my exam is on Tuesday", 我下周三面试). Questions, negations, goodbyes and sentences
    not about the user are not read."""
    found: list[Spotted] = []
    for raw in _SENTENCES.findall(text):
        sentence = raw.strip()
        lowered = sentence.lower()
        if not sentence or sentence.endswith(("?", "？")) or _NOT_EVENT.search(lowered):
            continue
        special = _SPECIAL.search(lowered)
        if special is not None:
            days = find_dates(sentence, now) or future_spans(sentence, now)
            day = next((m.day for m in days if m.first is None), None)
            if day is not None:
                what = special.group("en") or special.group("zh")
                what = _LEAD_ZH.sub("", what) if special.group("zh") else what
                found.append(Spotted("special_day", what, f"{day.month:02d}-{day.day:02d}"))
            continue
        sentence = _BARE_WEEKEND.sub("这周末", sentence)
        mentions = future_spans(sentence, now)
        if not mentions:
            continue
        mention = mentions[0]
        when = _when_words(sentence, mention.start, mention.start + len(mention.text))
        remind = _REMIND.search(lowered)
        if remind is not None:
            asked = sentence[remind.start("en" if remind.group("en") else "zh") :]
            what = _clean_what(_without(asked, mention.text))
            if what:
                found.append(Spotted("reminder", what, when))
            continue
        # Chinese leaves "I" out ("明天考试"): a sentence about no one else is the speaker's.
        own = _FIRST_PERSON.search(lowered) or (
            _CHINESE.search(sentence) and not _OTHERS_ZH.search(sentence)
        )
        if not own and not _impersonal(_without(sentence, mention.text).lower()):
            continue
        if _NEGATED.search(lowered):
            continue
        if not (_EVENT_EN.search(lowered) or _EVENT_ZH.search(sentence)):
            continue
        what = _clean_what(_without(sentence, mention.text))
        if what:
            found.append(Spotted("follow_up", what, when))
    return found


def _impersonal(rest: str) -> bool:
    """Whether an English sentence naming no one, its day's words taken out (`rest`), tells of
    an event to come: it begins with the event, names no one else, and is not told as past."""
    return bool(
        _EVENT_FIRST.match(rest.strip(_STRIP))
        and not _OTHERS_EN.search(rest)
        and not _PAST_EN.search(rest)
    )


def _when_words(sentence: str, start: int, end: int) -> str:
    """The words saying when: the date's, with a clock time said in the sentence."""
    clock = clock_time(sentence)
    if clock is None:
        return sentence[start:end]
    gap = sentence[end : clock.start] if clock.start >= end else ""
    if clock.start <= end or _JOINED.fullmatch(gap):  # "tomorrow at 3pm", 明天下午3点: one phrase
        return sentence[min(start, clock.start) : max(end, clock.end)]
    return f"{sentence[start:end]} {sentence[clock.start : clock.end]}"


def local_reading(
    said: Sequence[Said],
    *,
    scope: str,
    tz: tzinfo | None,
    language: str,
    created_at: datetime,
    conversation_id: int | None,
    zones: Mapping[str, tzinfo] | None = None,
) -> list[NewIntention]:
    """Intentions from the users' messages without a model (the encoder's fallback); `zones`
    as for from_answer."""
    zones = zones or {}
    intentions: list[dict[str, str]] = []
    specials: list[dict[str, str]] = []
    for message in said:
        for spotted in spot(message.text, message.at.astimezone(zones.get(message.user_id, tz))):
            item = {"user": message.user_id, "what": spotted.what}
            if spotted.kind == "special_day":
                specials.append({**item, "date": spotted.when})
            else:
                intentions.append({**item, "kind": spotted.kind, "when": spotted.when})
    ids = {s.user_id for s in said}
    return from_answer(
        intentions,
        specials,
        owner=lambda user: user if user in ids else None,
        said=said,
        scope=scope,
        tz=tz,
        language=language,
        created_at=created_at,
        conversation_id=conversation_id,
        zones=zones,
    )
