"""What the local reading spots in one message, without a model.

`spot` answers as a model would (the encoder's fallback, and the offline model's answer;
`memory.encoding.intentions.local_reading` makes intentions of it). Where it finds nothing,
`loose` reads a candidate without its checks, for the learned model to admit or not. Each kind
below has its examples and near-misses, both ways and in both languages, in
tests/test_intentions.py, whose test names say the kind; the patterns' comments here say which
words carry it.

Read:

* A user's sentence about themselves naming a day to come and an event. "Themselves" includes
  the "I" left out ("got a date friday", formal "will be travelling to pune on monday"), family
  and pets ("sister's baby shower is the 19th", a pet booked in), an event naming no one ("the
  dentist is tomorrow"), someone coming to them (the plumber between 8 and 10, family to stay)
  and a friend's wedding or stag do they have a part in. The day is chat's or anyone's
  ("tmrw", "next tue", "the 14th", "a week from Monday", 明儿, 还有三天, holidays and days of a
  fixed date by their names: 国庆, 双十一, "bonfire night"). The event is named from a broad
  lexicon (school, work, medical, travel, sport, family, legal, pet, gaming, contests, care by
  chat's names) or shown by a plan's shape ("we're going camping", "we sign the lease on the
  9th", 下下周要去实习), and may come in the sentence after its day ("GOT THE INTERVIEW!! its
  monday at 2pm").
* A reminder asked for ("remind me", "ping me", "note to self:", "set an alarm", 跟我说一声,
  帮我设个提醒), at a day, a clock time, "in two hours" or "in the morning"; its day is its
  own clause's.
* The user's special days: their birthday, an anniversary with their partner (by its name or
  its years), a close one's birthday or death day (走了五周年, "the day my dad passed"), told
  as to come or as gone by (next year's).
* Traditional characters as simplified, Cantonese days and words as Mandarin ones (聽日, 我哋).

Not read: questions (unless about the user's own plan, or asked in a clause of their own after it),
negations, a reminder declined, goodbyes, habits, what is imagined, unsure or wished, what is told
as done or over, the time now (a clock time opening a message before what is still going on, "3am
thoughts:"), a calendar's days and days off, timetables and opening hours of services and places,
what is due to be paid or sold, the weather, releases and the sky's events, quoted words, and
someone else's own event the user takes no part in (a friend's or colleague's; a relative's told
with their pronoun, of a kind of their own, or with the user not going, staying home, skipping it or
replaced). A negation or a doubt counts in the clause of the day only ("the funeral is on tuesday, i
don't know how i'll cope" is read).

Of several days: an event moved from one day to another is on the second, a day put right
(12月5号……不对是12月19号) the second, a span ("from friday to sunday", a trip and its return)
ends on its last, a weekday before its date is that date, and otherwise the event's day is the
first naming a day whose clause tells of it and not only of something ending. An evening event's
bare hour is the evening's, a race's the morning's; a clock time of another clause (unless telling
when "it starts"), before "btw" / 对了, or bounding something else ("no food from midnight"), is
not the event's, a part of the day in a short clause after it is (明天去他家吃饭 中午到); a month
and day gone by this year in a plan is next year's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from memory.dates import ClockTime, DateMention, clock_time, find_dates, future_spans
from memory.encoding.chat_days import (
    CHINESE,
    DAY_BEFORE_EN,
    DAY_BEFORE_ZH,
    IN_HOURS,
    MORNING_ALONE,
    TRADITIONAL,
    WEEK_FROM,
    evening,
    next_years,
    normalised,
    return_day,
    span_end,
    waking,
)
from memory.records import IntentionKind

__all__ = ["WHAT_CHARS", "Spotted", "clipped", "loose", "spot"]

WHAT_CHARS = 80
LONGEST_SPAN = timedelta(days=27)  # a month or longer names no day: a plan, not an event


@dataclass(slots=True, frozen=True)
class Spotted:
    """What the local reading finds in one message: the answer a model would give."""

    kind: IntentionKind
    what: str
    when: str  # the words that said when; for a special day, its date as MM-DD


def clipped(value: Any, limit: int) -> str:
    if not isinstance(value, str):
        return ""
    text = " ".join(value.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# Sentences; a dot between digits ("8.30pm", "7.45") ends none.
_SENTENCES = re.compile(r"(?:[^.!?;。！？；\n]|(?<=\d)\.(?=\d))+[.!?。！？]*")
_FIRST_PERSON = re.compile(
    r"(?<![a-z])(?:i|i'm|im|i've|i'll|i'd|my|me|we|we're|we'll|we've|our|us)(?![a-z])|我"
)
# A reminder asked for, by any of the ways chat asks to be told later: "remind me", "ping me",
# "don't let me forget", "set a reminder", "give us a shout", "tell me at 8 to", 提醒我, 别让我忘了,
# 六点叫我起床, 喊我一声, 帮我记一下, 跟我说一声, "remind我"; "nag me", "tell me to ... at 6",
# 周五催我, 下午叫我.
_REMIND = re.compile(
    r"(?<![a-z])(?<!'d\s)(?<!'ll\s)(?<!will\s)(?<!would\s)(?<!she\s)(?<!he\s)(?<!they\s)"
    r"(?<!n't\s)(?<!n\u2019t\s)(?<!dont\s)"  # "don't nag me tomorrow"
    r"(?:(?:remind|ping|nudge|buzz|text|message|msg|wake|nag|poke|hassle)\s+me(?:\s+up)?"
    # not asking to be told again why or how it came to be: "remind me why i signed up"
    r"(?!\s+(?:why|how|who|who['\u2019]s|whose|where|what(?!\s+to))(?![a-z]))"
    # told at a time to do something: "tell me at 8pm to ring my nan", "in an hour tell me to"
    r"|(?<=hours\s)tell\s+me(?=\s+to\s)|(?<=mins\s)tell\s+me(?=\s+to\s)"
    r"|(?<=minutes\s)tell\s+me(?=\s+to\s)|(?<=[ap]m\s)tell\s+me(?=\s+to\s)"
    r"|tell\s+me(?=(?:\s+(?:at|in|on|by|around|tomorrow|tonight|today|this|next|morning|evening"
    r"|afternoon|an?|hours?|mins?|minutes|half|[a-z]+day|midnight|noon|midday|the"
    r"|\d{1,2}(?:st|nd|rd|th)|\d[\d:.]*(?:\s*[ap]\.?m)?)(?![a-z]))+"
    r"\s+to\s+(?!you(?![a-z])|u(?![a-z])))"
    # asked first, its time after the errand: "tell me to water the plants at 6" (the caller
    # wants a time; not "don't tell me to relax", "he'd tell me to")
    r"|(?:^|(?<=^pls\s)|(?<=^please\s)|(?<=^yo\s)|(?<=^hey\s)|(?<=^ok\s)|(?<=,\s))"
    r"tell\s+me(?=\s+to\s+(?!you(?![a-z])|u(?![a-z])))"
    r"|give\s+(?:me|us)\s+a\s+(?:shout|bell|buzz|ring|nudge)"
    r"(?:\s+(?:to|about|that)(?![a-z]))?"
    r"|(?:do\s*n['\u2019]?t|pls\s+don['\u2019]?t|never)\s+let\s+me\s+forget(?:\s+(?:to|about)(?![a-z]))?"
    r"|(?:set|need|want|add|put|create|make)\s+(?:me\s+)?an?\s+(?:reminder|alarm)(?:\s+in)?"
    r"(?:\s+(?:to|for|about)(?![a-z]))?"
    r"|(?:reminder|note)(?:\s+(?:to|for)\s+(?:self|myself))?\s*:)\s*(?P<en>.+)"
    r"|(?:提醒(?:一下)?(?:我|本人)|(?<![别不])提我|remind\s*我|别让我忘[了记]?|(?<!你)别忘了|千万别忘了?|[叫喊]醒我|(?<=[点分后半早\d])[叫喊]我|记得[叫喊]我"
    # asked at a day or a part of one: 周五催我交报告, 明天下午叫我去取快递
    r"|(?:^|(?<=[午晚])|(?<=[明后]天)|(?<=[周末][一二三四五六日天末]))(?:[叫喊]|催(?:一下)?)我(?![们妈爸哥姐弟妹家的])"
    r"|[叫喊]我一[声下]|帮我记(?:一下|着|住)?|(?:跟|和)我说一声|告诉我一声"
    # an alarm asked for: 帮我定个闹钟; a reminder set: 帮我设个提醒, 加个提醒
    r"|帮我[定订设调上](?:一?个|一下)?闹钟"
    r"|(?:(?:帮|给|替)我|^|(?<=[，,。\s]))(?:设|定|订|加|建|添加?|弄)(?:一?个|一下|一?条)?提醒)"
    r"(?:一下)?[，,：:]?\s*"
    r"(?P<zh>.*)"
)
# A reminder declined: "no need to remind me", "you don't have to ping me", 不用提醒我, 别再提醒我.
_DECLINED = re.compile(
    r"(?:(?<![a-z])no\s+need\s+to|(?:do\s*n['\u2019]?t|dont)\s+(?:have|need)\s+to|needn['\u2019]?t)\s+$"
    r"|(?:不用|不需要|不必|甭|别|不要)再?$"
)
# The user's own day, or the user's and someone's: "my bday", "me and jake's anniversary",
# 我和我老公的结婚纪念日; 我下周四(过)生日 once its day's words are taken out.
_SPECIAL = re.compile(
    r"(?<![a-z])(?:my|our|(?:me|i)\s+(?:and|n|&)\s+(?:my\s+)?[a-z]+['\u2019]s"
    r"|[a-z]+\s+and\s+(?:my|i['\u2019]s))"
    r"\s+(?:(?:\d{1,2}(?:st|nd|rd|th)|first|second|third|fifth|tenth)\s+"
    r"|(?:\d{1,2}|one|two|three|four|five|six|ten)[\s-]+(?:year|yr|month)s?\s+)?"
    r"(?P<en>(?:(?:golden|silver|ruby|pearl|diamond|sapphire)\s+)?(?:(?:wedding|dating|engagement"
    r"|relationship)\s+)?(?:birthday|anniversary|bday"
    r"|name\s?day))"
    # With whom, the user's "my" left out: "anniversary with my girlfriend is tomorrow", "one
    # year anniversary with jess on friday" (not "her anniversary with him", nor the company's).
    r"|(?:^|(?<![a-z'\u2019])(?:our|it['\u2019]?s|its|the)\s+)"
    r"(?:(?:\d{1,2}|one|two|three|four|five|six|ten)[\s-]+(?:year|yr|month)s?\s+)?"
    r"(?P<en_with>anniversary)\s+with\s+(?:(?:my\s+)?(?:girlfriend|boyfriend|gf|bf|wife|wifey|husband"
    r"|hubby|partner|fianc[e\u00e9]e?|other\s+half|missus|bae)|(?!(?:the|a|an|her|his|their|work"
    r"|my)(?![a-z]))[a-z]+(?=\s+(?:is|on|this|next|tomorrow|today|tonight)(?![a-z])))(?![a-z])"
    # The user's "I" left out: "birthday's feb 3rd btw".
    r"|^(?:(?:ok|oh|also|btw|and|so)[\s,]+)*(?P<en_bare>birthday|bday)(?:['\u2019]s|\s+is)\s"
    # Time sober, clean or smoke-free: "one year sober on the 27th", 戒酒一周年.
    r"|(?<![a-z])(?:\d{1,2}|one|two|three|five|ten)\s+years?\s+(?P<sober>sober|clean"
    r"|smoke[\s-]free)(?![a-z])|(?P<zh_sober>戒(?:酒|烟|糖)[\d一二两三四五六七八九十]{1,3}周年)"
    # Together for so long on that day: "me n jia will have been together 2 years on jan 3rd".
    r"|(?<![a-z])(?:we|we['\u2019]ll|me\s+(?:and|n|&)\s+[a-z]+|[a-z]+\s+(?:and|n|&)\s+(?:i|me))"
    r"\s+(?:will\s+have\s+been|['\u2019]ll\s+have\s+been|will\s+be|have\s+been|['\u2019]ve\s+been)"
    r"\s+(?P<together>together|married)\s+(?:for\s+)?(?:\d{1,2}|a|one|two|three|five|ten)\s+years?"
    r"|(?:我们?的?|我们?(?:和|跟|与|同)[^，。,\s]{1,6}的)(?:要|就要|快)?过?(?:农历|阴历|公历|阳历)?"
    r"(?P<zh>(?:[\d一二两三四五六七八九十]{1,3}周?岁的?)?(?:结婚|恋爱|交往|相恋|相识|认识|订婚|领证|拍拖)?(?:[\d一二两三四五六七八九十]{1,3}周年)?(?:生日|纪念日))"
    r"|(?:我们|我(?:和|跟|与|同)[^，。,\s]{1,6}?)"
    r"(?P<zh_years>(?:在一起|结婚|恋爱|交往|相恋|领证|认识|相识|订婚|拍拖)"
    r"(?:[\d一二两三四五六七八九十百千]{1,4}(?:周年|天|个月)|周年))"
    # an age reached: 我下周六就满三十了, 我25号满20岁
    r"|我[^，。,\s]{0,8}?满(?:[\d]{1,2}|[一二三四五六七八九十]{2,3})(?P<zh_age>周?岁|了|啦)"
    # A birthday told by the age: "I'm turning 30 on saturday".
    r"|(?:(?<![a-z])(?:i['\u2019]?m|i\s+am|i['\u2019]ll\s+be|i\s+will\s+be|i)\s+|^)"
    r"(?P<turning>turning|turn)\s+\d"
    # years since the two got together: "saturday is 2 years since me and tom got together"
    r"|(?<![a-z])(?:\d{1,2}|a|one|two|three|four|five|six|ten)\s+years?\s+since\s+(?:we|me\s+"
    r"(?:and|n|&)\s+[a-z]+|[a-z]+\s+(?:and|n|&)\s+(?:i|me)|i)\s+(?P<since>got\s+(?:together|married"
    r"|engaged)|started\s+(?:dating|going\s+out|seeing)|met|tied\s+the\s+knot"
    # time sober: "the 18th is 3 years since i got sober"
    r"|(?:got|went|became)\s+(?:sober|clean)|(?:quit|stopped)\s+(?:drinking|smoking|drugs))(?![a-z])"
    # The day they married, told: "we got married on 14 feb 2019", 我们是5月20号领证的.
    r"|(?<![a-z])(?:we|i)\s+(?P<married>got\s+married|tied\s+the\s+knot|eloped)\s+on(?![a-z])"
    r"|我们是?[^，。,]{1,12}(?P<zh_married>结婚|领证)的"
)
# A special day told as gone by, right after its name: "my birthday was on the 2nd", 他忘了.
_GONE_BY = re.compile(r"\s+(?:was|fell)(?![a-z])")
_FORGOTTEN_ZH = re.compile(r"(?<![别不])忘了|已经过了")
_SPECIAL_DAY = re.compile(
    r"生日|纪念日|周年|忌日|死忌|在一起[\d一二两三四五六七八九十百千]{1,4}(?:天|个月)"
    r"|满(?:[\d]{1,2}|[一二三四五六七八九十]{2,3})(?:周?岁|了|啦)"
)
# An event a follow-up can ask about: what the sentence is about, or words of going somewhere.
# Nouns of many walks of life, each also in the plural ("final", "finals"), two-word ones
# ("root canal"), and the endings of events ("hackathon", "colonoscopy", "mammogram").
_EVENTS = frozenset({
    # exams and school
    "exam", "test", "quiz", "final", "midterm", "interview", "viva", "defense", "defence", "thesis",
    "dissertation", "assessment", "lecture", "seminar", "tutorial", "class", "lesson", "course",
    "orientation", "enrollment", "enrolment", "graduation", "admission", "mcat", "lsat", "gmat",
    "gre", "ielts", "toefl", "boards", "practical", "recital", "assignment", "essay", "coursework",
    "manuscript", "portfolio", "submission", "graduate", "graduating", "perform", "performing",
    # work
    "appointment", "appt", "meeting", "presentation", "pitch", "demo", "review", "appraisal",
    "deadline", "conference", "workshop", "webinar", "training", "offsite", "onsite", "onboarding",
    "shift", "launch", "release", "audit", "internship", "standup", "retreat", "deployment",
    "sprint", "duty", "session", "start", "starting", "event", "tax", "panel", "earlies", "lates",
    "callback", "induction",
    # medical and care
    "surgery", "operation", "op", "doctor", "dentist", "orthodontist", "dermatologist", "physio",
    "therapy", "therapist", "checkup", "check-up", "physical", "scan", "mri", "x-ray", "xray",
    "ultrasound", "biopsy", "procedure", "allergist", "optician", "chiropractor", "osteopath",
    "hygienist", "nutritionist", "dietitian", "treatment", "chemo", "dialysis", "vaccination",
    "vaccine", "jab", "booster", "bloodwork", "consult", "consultation", "specialist", "gp",
    "obgyn", "surgeon", "optometrist", "result", "ivf", "infusion", "injection", "haircut",
    "reconstruction", "transplant", "implant", "extraction",
    # body art and beauty, booked like a doctor
    "tattoo", "piercing", "manicure", "pedicure", "facial", "massage", "waxing",
    # travel
    "trip", "flight", "flying", "fly", "vacation", "holiday", "getaway", "cruise", "layover",
    "airport", "visa", "passport",
    # sport and games
    "game", "match", "race", "comp", "marathon", "tournament", "competition", "tryout", "playoff",
    "semifinal", "semi-final", "parkrun", "triathlon", "ironman", "fixture", "derby", "bout",
    "five-a-side", "a-side", "seven-a-side", "nativity", "lasik", "donation",  # a-side: 5-a-side
    "fanmeet", "fanmeeting", "fansign",
    # contests by their names: a throwdown, a bake-off, a cook-off; an ultramarathon
    "contest", "throwdown", "showdown", "bake-off", "bakeoff", "cook-off", "cookoff", "face-off",
    "ultra",
    "sangeet", "mehndi", "haldi",
    "hike", "hiking", "climb", "scrimmage", "raid", "speedrun", "practice", "tourney", "qualifier",
    "qualifiers", "regionals", "nationals", "championship", "scrim", "lan",
    # family and friends
    "date", "party", "wedding", "marriage", "shower", "reunion", "funeral", "memorial",
    "christening", "baptism", "mitzvah", "ceremony", "concert", "gig", "show", "performance",
    "audition", "rehearsal", "festival", "comedy", "gala", "prom", "sleepover", "playdate",
    "housewarming", "bbq", "barbecue", "potluck", "picnic", "dinner", "lunch", "brunch", "drinks",
    "visit", "visiting", "camp", "camping", "engagement", "karaoke",
    # legal and bureaucracy
    "trial", "hearing", "court", "deposition", "mediation", "lawyer", "solicitor", "notary",
    "sentencing", "custody", "dmv", "inspection", "registration", "renewal", "closing", "signing",
    "viewing", "move-in", "move-out", "moving", "move", "movers", "mechanic", "delivery",
    "installation", "citizenship", "naturalization", "naturalisation", "fitting", "surveyor",
    # a venue walked through, a menu tasted, a boat's or a house's survey
    "walkthrough", "walk-through", "tasting", "survey", "photoshoot",
    # pets
    "vet", "groomer", "grooming", "neuter", "spay", "neutered", "spayed", "jabs", "jury", "smear",
    # care by chat's name: "bloods"
    "bloods",
    "mot",
})  # fmt: skip
_EVENT_PAIRS = frozenset({
    "root canal", "blood test", "eye exam", "bar exam", "driving test", "road test", "road trip",
    "date night", "match day", "field trip", "open house", "open day",
    # "play" is a verb after a name ("arsenal play chelsea on sunday")
    "school play", "nativity play", "christmas play", "a play", "the play", "my play", "our play",
    "first day", "last day", "new job", "parents evening", "secret santa", "christmas do",
    "xmas do", "work do", "sports day", "open mic", "wisdom teeth",
    "wisdom tooth", "job fair", "career fair", "careers fair", "book fair", "craft fair",
    "science fair", "sleeping over", "staying over", "estate agent", "mortgage advisor",
    "mortgage adviser", "financial advisor", "claims court", "stag do", "hen do", "leaving do",
    "stag party", "hen party", "bachelor party", "bachelorette party", "safety check", "gas check",
    "health check", "eye check", "boiler service", "car service", "smear test", "call with",
    "park run", "zoom call", "video call", "phone call", "conference call", "sales call",
    "intro call", "the call", "our call",
    # shifts ("back on nights"), a selection's rounds, one's results
    "on night", "night shift", "first round", "second round", "third round", "final round",
    "next round", "call back", "my grade", "my mark", "my score", "offer letter",
    # starting somewhere, a fan's meeting, selling at a stall or a sale
    "new school", "new college", "new uni", "fan meet", "fan meeting", "fan sign", "market stall",
    "a stall", "my stall", "boot sale", "yard sale", "garage sale",
    # care by what is removed: "mole removal" (not the rubbish's)
    "mole removal", "cyst removal", "tattoo removal", "wart removal", "lump removal",
    "stitch removal", "stitches removal",
})  # fmt: skip
_EVENT_ENDINGS = ("athon", "scopy", "ectomy", "ogram", "otomy", "plasty", "ologist", "iatrist")
_WORD_EN = re.compile(r"[a-z]+(?:['\u2019-][a-z]+)*")


def _event_word(word: str) -> bool:
    """Whether `word` names an event, in the singular or the plural ("flight's": "is")."""
    word = word[:-2] if word.endswith(("'s", "\u2019s")) else word
    for stem in (
        word,
        word[:-1] if word.endswith("s") else "",
        word[:-2] if word.endswith("es") else "",
    ):
        if stem in _EVENTS or (len(stem) > 6 and stem.endswith(_EVENT_ENDINGS)):
            return True
    return False


def _event_among(words: Sequence[str]) -> int | None:
    """Where the first word or pair of `words` naming an event is, or None."""
    for i, word in enumerate(words):
        if " ".join(words[i : i + 2]).rstrip("s") in _EVENT_PAIRS:
            return i
        # "the exam timetable": a paper about the event, not the event
        if _event_word(word) and (i + 1 == len(words) or words[i + 1] not in _ABOUT_IT):
            return i
    return None


_ABOUT_IT = frozenset({
    "timetable", "timetables", "schedule", "schedules", "rota", "fees", "fee", "form", "forms",
    "list", "guide", "dates", "date", "tickets", "ticket", "server", "servers", "update", "updates",
    "patch",
})  # fmt: skip


# A meeting of two, written with digits: "a 1:1 with my manager", "1-on-1".
_ONE_ON_ONE = re.compile(
    r"(?<![\d:.])1\s*(?::|-|-?on-?)\s*1(?![\d:.])|(?<![a-z])one[\s-]on[\s-]one(?![a-z])"
)


# A race by its distance: "the 10k", "a 5k".
_RACE = re.compile(r"(?<![\w.])(?:5|10|15|21|42)\s?k(?![a-z\d])")


def _has_event(lowered: str) -> bool:
    return (
        _event_among(_WORD_EN.findall(lowered)) is not None
        or bool(_ONE_ON_ONE.search(lowered))
        or bool(_RACE.search(lowered))
        or bool(_AGE_PARTY.search(lowered))
    )


# A birthday by the age reached: "nan's 90th on sunday", "my 30th".
_AGE_PARTY = re.compile(
    r"(?:['\u2019]s|my|our)\s+\d{2,3}(?:st|nd|rd|th)(?![a-z])(?!\s+(?:of|time|floor|place))"
)


_EVENT_ZH = re.compile(
    r"考试|考研|面试|笔试|复试|答辩|约会|开会|会议|出差|旅行|旅游|聚会|婚礼|演唱会|比赛|手术|"
    r"看医生|看病|体检|(?<=[\u4e00-\u9fff])课(?![本文题件间余外代表程])|复查|牙医|搬家|入职|报到|上班|开学|航班|飞机|出发|回家|回国|回学校|回宿舍|返校|演出|"
    r"汇报|演讲|考|赛|展|音乐会|排练|试镜|毕业|典礼|截止|交稿|面签|相亲|爬山|见家长|(?<!过)去|"
    # care, family, bureaucracy, work, pets
    r"生孩子|生娃|产检|预产期|疫苗|拔牙|补牙|洗牙|化疗|透析|复诊|检查|开庭|庭审|公证|签证|护照|"
    r"驾照|科目[一二三四]|雷射|镭射|激光(?!笔|灯|打印)|胃镜|肠镜|喉镜|内镜|宫腔镜|腹腔镜|年会|述职|评审|路演|发布会|培训|讲座|家长会|运动会|彩排|婚宴|酒席|"
    r"满月酒|葬礼|追悼会|装修|交房|收房|交接钥匙|交钥匙|拿钥匙|看房|签约|值班|绝育|团建|聚餐|饭局|首映|上线|发版|电影|成绩|"
    r"出分|放榜|查分|拿结果|取报告|直播|回老家|陪审|搬新家|乔迁|新公司|新工作|新岗位|订婚|(?<=的)会(?![员计议])|"
    # exams and races by name: 雅思口语, 四六级, 期末, 马拉松
    r"雅思|托福|四级|六级|期末|期中|口语|口试|机考|马拉松|半马|越野跑|骑行|"
    # shows, deadlines
    r"话剧|音乐剧|歌剧|舞剧|相声|脱口秀|展览|晚会|联欢会|大寿|寿宴|(?<![号日节期假])第一天|幼儿园|沙龙|分享会|上台|交(?:论文|作业|报告|初稿|终稿|方案|材料|申请)|"
    # shifts, a selection's rounds (二面, 终面); Cantonese: 覆診, 睇醫生, 見工 (an interview), 搬屋
    r"夜班|早班|晚班|白班|中班|(?<![见当对全反正地表侧])[一二三四终]面(?![条包粉膜积对前])|覆诊|睇医生|睇牙|见工|搬屋|考车|"
    # a game's raid (团本, 开荒 a new one), being called in for a talk (找我谈绩效)
    r"团本|副本|开荒|打本|排位赛|公会战|找我(?:谈|聊)|约谈|谈话|"
    # formal: 研讨会, 董事会, 迁入新居
    r"研讨会|座谈会|董事会|股东大?会|例会|茶话会|迁入|迁居|入住新"
    # going to sea; back to one's unit after leave (归队, 回部队, 返岗)
    r"|出海|出航|赶海|海钓|归队|回部队|回连队|返岗|回单位|回岗位"
    # a photo shoot: 拍婚纱照, 拍写真
    r"|拍(?:婚纱照|写真|证件照|毕业照|全家福)"
    # care by what is done: 抽血, 拆线, 输液; a meeting by its kind: 开视频会, 开周会
    r"|抽血|验血|拆线|换药|输液|挂水|打针|拍片|做CT|核磁|B超|彩超"
    # the dentist's by what is done: 拔智齿, 种牙, 根管治疗, 戴牙套
    r"|拔(?:智齿|[一两颗个]*(?:智齿|牙))|种(?:植)?牙|根管|(?:戴|摘|换)牙套|看牙|矫正牙|整牙|补(?:蛀)?牙"
    r"|开(?:视频|电话|线上|周|月|早|晨|复盘|总结|动员|部门)会"
    # something installed at home: 装宽带, 装空调
    r"|装(?:宽带|空调|热水器|网线|净水器|燃气|地暖)|上门安装|安装师傅"
)
# Words that are no event to ask about afterwards: goodbyes, moods, the bot itself, what is
# on TV.
_NOT_EVENT = re.compile(
    r"(?<![a-z])(?:see\s+you|talk\s+(?:to\s+you\s+)?(?:later|tomorrow)|bye|good\s*night)"
    r"|明天见|回头聊|晚安|下次聊|再聊"
    r"|(?<![a-z])(?:on\s+(?:tv|telly)|airs|new\s+(?:season|series|episode)|season\s+\d+)(?![a-z])"
    r"|电视上|电视台|重播"
    # a message forwarded, not the user's words
    r"|^(?:fwd?|forwarded)\s*:"
    # a day of remembrance but a close one's (_KIN_SPECIAL), a horoscope's day
    r"|(?<![a-z])(?:anniversary\s+of\s+(?:the|his|her|their|my|our)|horoscope)(?![a-z])"
    # the elections, not exams: "midterms today and my feed is all politics"
    r"|(?<![a-z])midterms(?=.*(?:politic|vote|voting|election|ballot|polls?(?![a-z])))"
    # this day in a year gone by: 去年的今天
    r"|[去前]年的?今天|(?<![a-z])(?:this\s+(?:time|day)\s+last\s+year|a\s+year\s+ago\s+today)(?![a-z])"
)
# A goodbye in a clause of its own after the rest: "exam tomorrow, good night", 先睡了晚安.
_SIGNED_OFF = re.compile(
    r"[,，]\s*(?:(?:ok|okay|anyway|anyways|right|so)[\s,]+)?(?:先睡了?|我先睡了?|睡了|撤了)?[，,\s]*"
    r"(?:(?:good\s*night|night\s+night|nighty?\s+night|bye|see\s+(?:you|ya|u)|ttyl|talk\s+later"
    r")(?![a-z])|晚安|拜拜|回头聊|下次聊|再聊)[^,，]*$"
)
# ("not until Friday" is no negation: it says when; nor "not looking forward to it".)
_NEGATED = re.compile(
    # (not a grievance's "never" of someone else: "about the wages they never paid")
    r"(?<![a-z])(?:no|not|(?:do|did|wo|is|are|was|were|have|has|had|does)n['\u2019]?t"
    r"|(?<!they\s)(?<!he\s)(?<!she\s)(?<!who\s)(?<!which\s)never"
    r"|cancel(?:l?ed)?)(?![a-z])(?!\s+(?:until|till|til|looking|ready|sure|excited|prepared"
    # a day put right: "it's tuesday now not monday"
    r"|(?:on\s+)?(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?)(?![a-z]))|(?<!还)没|不用|取消|不去|不参加|不考了|不开了|不办了|改期|延期|不(?:打算|准备)"
    r"|不(?:上班|开门|营业|上课)"
    r"|不(?:跑|比|练|踢|打|玩|办|考)了"  # called off by the user: 马拉松不跑了
)
# The user not taking part, wherever the sentence says it: "the match is at 8 but i'm not
# watching", "can't make the concert tmrw", 周五的聚会我去不了了.
_NOT_GOING = re.compile(
    r"(?<![a-z])(?:i|i'm|im|we|we're|i\s+am|we\s+are)\s+(?:(?:just|really|probably|def(?:initely)?)\s+)?"
    r"(?:can(?:no|['\u2019])?t|cannot|can\s+not|won['\u2019]?t|will\s+not|not|n['\u2019]t|don['\u2019]?t)\s+"
    r"(?:(?:be\s+)?(?:make|making|go|going(?!\s+to\s)|come|coming|attend|attending|watch|watching"
    r"|join|joining|be\s+there|bother|taking|doing|sitting|playing|running|entering"
    r"|flying|travell?ing|leaving\s+(?:the\s+country|town)"  # "i'm not flying anywhere"
    r"|staying\s+up|getting\s+up))(?![a-z])"
    # "no way i'm staying up" for what is on in the night
    r"|(?<![a-z])no\s+way\s+(?:i['\u2019]?m|im|i\s+am|am\s+i|i['\u2019]?ll)\s+(?:staying\s+up|getting"
    r"\s+up|waking\s+up|going|watching|making\s+it)(?![a-z])"
    # Work in the way: "my mate's band is on friday but i have work".
    r"|(?<![a-z])but\s+i(?:['\u2019]ve|\s+have)?\s+(?:got\s+)?(?:work|a\s+shift)(?![a-z])"
    r"|(?<![a-z])but\s+i['\u2019]?m\s+working(?![a-z])"
    r"|(?:got|was|been|is|it's)\s+(?:cancell?ed|called\s+off)"
    # Put off to no day said: "tomorrow's meeting got postponed", 推迟了.
    r"|(?:got|was|been|is|it's)\s+(?:postponed|delayed|pushed\s+back|put\s+off)(?!\s+(?:to|till|until))"
    r"|推迟了|延后了|推后了|往后推了"
    r"|去不了|来不了|参加不了|赶不上|去不成|不去了|泡汤|黄了|回不去|回不来|赶不回|走不开|看不了|看不成|我(?:就|终于)?可以(?:睡懒觉|休息|躺平|放松|一个人)|我(?:就|也|才|肯定|应该)?不(?:去|参加|来|回)"
    r"|取消了|停掉|停课|(?:全部|全都|都|全)停了"
    r"|抢不到|买不到票|没票了?|(?:卖|抢)光了"
    r"|(?<![a-z])(?:no\s+tickets?\s+for\s+(?:me|us)|(?:missed\s+out\s+on|did\s*n['\u2019]?t\s+get)"
    r"\s+(?:the\s+|any\s+)?tickets?)(?![a-z])"
    # Staying in while it goes on: "my bf is going to a stag do, i'm staying in".
    r"|(?<![a-z])(?:i['\u2019]?m|i\s+am|i['\u2019]ll\s+be)\s+(?:just\s+)?staying\s+(?:in|home|behind)(?![a-z])"
    # The one whose event it is not going: "the trip is on the 15th, she's not going though".
    r"|(?<![a-z])(?:she|he|they)(?:['\u2019]s|['\u2019]re|\s+is|\s+are)\s+not\s+going(?!\s+to\s)(?![a-z])"
    r"|(?<![a-z])(?:she|he|they)\s+(?:isn['\u2019]t|aren['\u2019]t|won['\u2019]t\s+be)\s+going(?!\s+to\s)(?![a-z])"
    # No tickets to be had: "the match is sold out, gutted", 票卖完了.
    r"|(?<![a-z])(?:sold\s+out|couldn['\u2019]?t\s+get\s+(?:a\s+)?tickets?)(?![a-z])|卖完了|没抢到"
    # "not going", its "I" left out, a clause of its own: "stag do next weekend, not going tho"
    r"|(?:^|[,;.!]\s*)(?:(?:but|tho|though|and|def(?:initely)?|prob(?:ably)?)\s+)?not\s+(?:going|coming"
    r"|attending|staying\s+up)(?![a-z])"
    # Skipping it, envying those who go: "i'm skipping the xmas party", 羡慕死了.
    r"|(?<![a-z])(?:i['\u2019]?m|i\s+am|i['\u2019]ll\s+be)\s+(?:just\s+)?(?:skipping|ditching|bailing)(?:\s+it)?"
    r"(?=\s*(?:$|[,.!?;]))"
    r"|(?<![a-z])(?:skip|skipping|ditch|ditching|bail(?:ing)?\s+on|sit(?:ting)?\s+out|pass(?:ing)?\s+on)"
    r"\s+(?:the|this|that|our|my|their|his|her|tomorrow['\u2019]?s|[a-z]+day['\u2019]s)(?![a-z])"
    r"|(?<![a-z])(?:so\s+)?(?:jealous|envious|lucky\s+(?:them|her|him|sods?|things?))(?![a-z])|羡慕|嫉妒"
    # the noise of it: "the neighbours are having a party tonight, so loud"
    r"|(?<![a-z])(?:so|too|really)\s+(?:loud|noisy)|keep(?:s|ing)?\s+me\s+up(?![a-z])|吵死|好吵|太吵"
    r"|又要吵|又得吵|吵得要命|噪音"
    # woken by it: 又被楼下装修吵醒, "the drilling woke me up again"
    r"|吵醒|(?<![a-z])(?:woke\s+me(?:\s+up)?|woken\s+(?:up\s+)?by)(?![a-z])"
    r"|不想去了|不想参加了|推掉了"
    # someone else seeing to it, the user saying no: "mom's picking him up so i'm off the hook",
    # "i told her no", "she's getting a grab", "can't get off work", 我说没空
    r"|(?<![a-z])(?:off\s+the\s+hook|i\s+told\s+(?:her|him|them)\s+no|can(?:no|['\u2019])?t\s+get"
    r"\s+(?:off|out\s+of)\s+work|[a-z]+['\u2019]s\s+(?:picking|driving|taking)\s+(?:him|her|them)"
    r"|(?:she|he|they)(?:['\u2019]s|['\u2019]re|\s+is|\s+are)\s+(?:getting|taking)\s+an?\s+"
    r"(?:grab|uber|taxi|cab|lyft))(?![a-z])"
    # meant to, then given up: 本来想去环球影城…算了
    r"|(?:本来|原本|本想)[^。]*(?:^|[，,\s])算了[吧啦]?[。!！~]*$"
    # asked along, with no time for it: 叫我去帮忙我没空
    r"|(?:叫|请|约|喊|让)我[^。]*我(?:说|都|也|真的?|实在)*没(?:空|时间)(?:去|帮)?[啊呀了哈啦]*$"
    r"|陪不了|没法陪|不能陪|请不了假|请不到假|[他她](?:自己|一个人)(?:开车|打车)?去|(?:剩|归)下?我一个人|[又就]剩我"
    r"|(?:已经|我)?退(?:了|掉了|课了)|我请(?:了)?假了|我请了假(?![陪去回带])"
    r"|我(?:就|自己)?(?:留|待|呆)(?:在|喺)(?:家|屋企)|我(?:就|自己|一个人)(?:在|喺)(?:家|屋企)"
    r"|我(?:就|自己)?(?:在家|居家)(?:办公|上班|工作|带娃|待着|躺着|休息)"
    r"|不是我的(?:活|事|工作|问题)|跟我没关系|与我无关"
    # No need to go, someone going in the user's place, the user left behind: "don't have to go
    # in", "sam's covering for me", "house to myself", 不用去学校了, 找同事替我去, 只剩我一个人.
    r"|(?<![a-z])(?:(?:do\s*n['\u2019]?t|not)\s+(?:have|need)\s+to\s+go|no\s+need\s+to\s+go|cover(?:s|ing)?\s+(?:for\s+me|my)|in\s+my\s+place|instead\s+of\s+me"
    r"|(?:house|place|flat|apartment|home)\s+(?:all\s+)?to\s+myself|home\s+alone|without\s+me"
    r"|(?:house|dog|cat|pet)[\s-]?sit(?:ting)?|except\s+(?:me|us)"
    r"|not\s+my\s+(?:problem|job|thing))(?![a-z])"
    r"|(?<![a-z])(?:(?:not|n't|never)\s+(?:even\s+)?(?:been\s+)?invited|not\s+taking\s+(?:me|us)"
    # "not that anyone invited me", "nobody asked me"
    r"|(?:no\s*one|nobody|no\s+body|not\s+that\s+any(?:one|body))\s+(?:even\s+)?(?:invited|asked)\s+(?:me|us)"
    r")(?![a-z])"
    r"|没(?:被)?邀请我?|没[带叫喊]我|不[带叫喊]我"
    r"|不用去|不必去|[替代]我(?:去|参加|出席|上班|值班|开会|[了啦吧哈嘿，,。!！]|$)|只剩我|一个人在家"
    r"|不是我负责|不关我"
    # those it is for named after: 下周一考试的是隔壁班
    r"|的(?:是|都是)(?:隔壁|别的|其他|他们|她们|他|她|我(?:同事|朋友|室友|同学|老公|老婆))"
    # or whose it is after it: 明天的面试是我同事的，不是我
    r"|是我(?:同事|朋友|室友|同学|老公|老婆)的(?![\u4e00-\u9fff])|不是我[的啦了哦呀]*\s*$"
)
_LEAD_EN = re.compile(
    r"^(?:(?:and|so|but|well|oh|also|btw)\s+)*(?:i\s+(?:have|got|'ve\s+got|am|'m)\s+"
    r"(?:a|an|my|the)\s+|i'?m\s+|i\s+(?:will|'ll|am|have\s+to|need\s+to|must)\s+|"
    r"i\s+(?:have|got)\s+|my\s+|our\s+|we\s+(?:have|are|'re)\s+(?:a|an|our)?\s*)",
)
# What is left before the event of a sentence that began with its day ("Tomorrow is the ...").
# A reminder's words once its time is taken out: "ping me at 8.30pm to ..." leaves "at to ...".
_LEFT_OVER_EN = re.compile(r"^(?:(?:at|on|to|about|that|for|by|pls|please)[\s,]+)+", re.IGNORECASE)
_ARTICLE_EN = re.compile(r"^(?:(?:is|'?s|will\s+be)\s+)?(?:(?:the|a|an|that)\s+)+")
_TAIL_EN = re.compile(r"\s+(?:is|are|will\s+be|'s|'re)\s*$|\s+(?:coming\s+up)\s*$")
_LEAD_ZH = re.compile(r"^(?:[我咱][们]?的?)?(?:就要|准备|打算|要|得|有|会|将)?(?:一)?(?:个|场|次)?")
_TAIL_ZH = re.compile(r"(?:了|啦|呢|哦|呀|吧|啊|哈|的)+$")
_JOINED = re.compile(r"\s*(?:at\s+|from\s+|在\s*)?", re.IGNORECASE)  # a day, then its clock time
_GAP_BEFORE_MARK = re.compile(r"\s+(?=[,，.!?！？])")
_CJK_GAP = re.compile(r"(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])")
# Voice-typed and hurried Chinese parts its clauses with spaces ("今天被骂了 周五要去见家长"): a
# clause each, as with commas.
_CLAUSE_GAP = re.compile(r"(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff\d])")
# An event stated with no one named ("the dentist is tomorrow morning", "Tomorrow's the big
# interview"): the speaker's, when the event is what the sentence begins with (the day's words
# taken out), nobody else is named and it is not told as past.
_EVENT_FIRST = re.compile(
    r"^(?:(?:and|so|but|oh|also|btw|well|ok|okay|ugh|yay)[\s,]+)*(?:(?:is|'?s|will\s+be)\s+)?"
    r"(?:(?:the|a|an|that|big|final)\s+)*"
)
# Words that end the noun an event's words begin with ("the neighbours are having a party").
_NOT_NOUN = frozenset({
    "is", "are", "was", "were", "be", "have", "has", "having", "had", "will", "and", "or", "to",
    "for", "at", "in", "of", "with", "on", "by", "from", "do", "does", "did", "can", "not",
})  # fmt: skip
# Family and pets: their events are the user's concern ("sister's baby shower is the 19th").
# Pets: their events (the vet, a jab) are their owner's, whatever pronoun tells of them.
_PETS = r"dog|cat|puppy|kitten|pup|tortoise|rabbit|bunny|hamster|parrot|pony|horse"
_PET_FIRST = re.compile(r"^(?:the|our|my)?\s*(?:" + _PETS + r")(?![a-z])")
_PEOPLE = r"(?!(?:" + _PETS + r")(?![a-z]))"
_RELATIVES = (
    r"mom|mum|mommy|mummy|mother|dad|daddy|father|parents|sister|sis|brother|bro|son|daughter"
    r"|kid|kids|baby|wife|husband|hubby|partner|boyfriend|girlfriend|bf|gf|fiance|fiancee"
    r"|grandma|grandpa|granny|nan|nana|grandmother|grandfather|aunt|auntie|uncle|niece|nephew"
    r"|cousin|family|grandad|granddad|gran|grandparents|in-laws|grandchildren|grandkids|grandson"
    r"|granddaughter"
)
_KIN = _RELATIVES + "|" + _PETS
# A relative's event, its "my" left out: "kid's nativity is on the 2nd".
_KIN_FIRST = re.compile(
    r"^(?:" + _KIN + r")['\u2019]s\s+(?!(?:got|going|having|[a-z]+ing)(?![a-z]))"
    # a group the user is in, "my" left out: "band's first gig is on the 12th", "team's final"
    r"|^(?:band|team|choir|squad|crew|troupe|orchestra)['\u2019]s\s+(?![a-z]+ing(?![a-z]))"
)
_KIN_ZH = (
    r"(?:爸|妈|哥|姐|弟|妹|老公|老婆|儿子|女儿|爷爷|奶奶|外公|外婆|表[哥姐弟妹]|堂[哥姐弟妹]"
    r"|男朋友|女朋友|男友|女友|对象|男票|女票|媳妇|丈夫|妻子|爸妈|父母"
    # in-laws, grandchildren, aunts and uncles, nieces and nephews: 闺女, 女婿, 侄女
    r"|闺女|儿媳|女婿|孙子|孙女|外孙女?|公公|婆婆|岳父|岳母|丈母娘|老丈人|舅舅|舅妈|姑姑|姑父|叔叔"
    r"|婶婶|姨妈|小姨|侄子|侄女|外甥女?|嫂子|姐夫|妹夫|弟媳"
    # formal and old-fashioned: 家父, 犬子, 老伴
    r"|家父|家母|犬子|小女|老伴儿?)"
)
# A close one's day is the user's to be greeted or kept company on: "my mum's 70th birthday",
# "grandpa's death anniversary", "three years since dad passed", "my son turns 5", 我外公的生日,
# 阿嬷的忌日, 爷爷去世十周年; "we hit ten years married". Not a pet's, nor a party or a present.
_CLOSE = r"best\s+friend|bestie|bff|(?:little|baby)\s+(?:one|man|girl|boy)|" + _RELATIVES
_KIN_SPECIAL = re.compile(
    r"(?<![a-z])(?P<who>" + _CLOSE + r")['\u2019]s?\s+"
    # an ordinal birthday, in digits or words ("first birthday", "21st", "fortieth")
    r"(?:(?:\d{1,2}(?:st|nd|rd|th)|first|second|third|fifth|tenth|[a-z]+(?:teenth|ieth))\s+)?"
    r"(?P<day>(?:(?:wedding|death)\s+)?(?:birthday|bday|anniversary))"
    r"(?!\s+(?:party|dinner|drinks|meal|bash|do|lunch|present|gift|card)(?![a-z]))"
    # a close one's birthday by its number alone: "my mum's 60th is on the 15th"
    r"|(?<![a-z])(?:my|our)\s+(?P<who_nth>" + _CLOSE + r")['\u2019]s\s+"
    r"(?:\d{1,3}(?:st|nd|rd|th)|[a-z]+ieth)(?=\s+(?:is|on|this|next|tomorrow)(?![a-z]))"
    r"|(?<![a-z])years?\s+since\s+(?:he|she|(?:my\s+)?(?:" + _RELATIVES + r"))\s+"
    r"(?P<passed>passed|died)(?![a-z])"
    # the day they died, told: "the 20th is the day my dad passed"
    r"|(?<![a-z])the\s+day\s+(?:my\s+|our\s+)?(?:"
    + _RELATIVES
    + r")\s+(?P<lost>passed|died)(?![a-z])"
    # the day they died, dated: "my nan passed away on the 14th", "grandma died on june 2nd"
    r"|(?<![a-z])(?:my\s+|our\s+)?(?:"
    + _RELATIVES
    + r")\s+(?P<died_on>passed\s+away|passed|died)\s+on\s"
    r"|(?<![a-z])(?:my|our)\s+(?P<grows>" + _CLOSE + r")\s+(?:is\s+)?(?:turns|turning)\s+\d"
    r"|(?<![a-z])(?:we|i|me\s+and\s+(?:my\s+)?[a-z]+)\s+(?:hit|reach|celebrate|mark)\s+(?:\d{1,2}|[a-z]+)\s+years?\s+"
    r"(?P<reached>married|together)(?![a-z])"
    r"|(?P<kin_zh>" + _KIN_ZH + r"|阿嬷|阿嫲|阿公|阿爷|姥姥|姥爷|老爸|老妈)[的嘅]?过?"
    r"(?:[\d一二两三四五六七八九十]{1,3}周?岁的?)?"
    r"(?P<zh_day>生日|忌日|死忌)(?!聚会|派对|宴|会|趴|礼物|蛋糕)"
    # (走了, 过世, 离世: the ways a death is said)
    r"|(?P<kin_died>" + _KIN_ZH + r"|阿嬷|阿公|姥姥|姥爷)(?:去世|过世|离世|走了?)"
    r"[\d一二两三四五六七八九十]{1,3}周年"
    # the day they died, dated: 我外公是1月9号走的
    r"|(?P<kin_went>" + _KIN_ZH + r"|阿嬷|阿嫲|阿公|阿爷|姥姥|姥爷)是[^，。,\s]{1,10}?"
    r"(?:走|去世|过世|离世)的"
    # parents' years married: 爸妈结婚三十周年
    r"|(?P<kin_wed>爸妈|父母|公婆|岳父母|爷爷奶奶|外公外婆|姥姥姥爷)的?结婚"
    r"[\d一二两三四五六七八九十]{1,3}周年"
)


def _own_day(special: re.Match[str] | None) -> str:
    """What the user's own day _SPECIAL found is called: "birthday", 结婚纪念日, "anniversary"."""
    if special is None:
        return "birthday"
    return (
        special.group("en")
        or special.group("en_bare")
        or special.group("en_with")
        or special.group("zh")
        or special.group("zh_sober")
        or (
            "anniversary"
            if special.group("together")
            or special.group("since")
            or special.group("sober")
            or special.group("married")
            else None
        )
        or (
            "纪念日"
            if special.group("zh_years") or special.group("zh_married")
            else "生日"
            if special.group("zh_age")
            else "birthday"
        )
    )


def _close_ones_day(kin: re.Match[str]) -> str:
    """What a close one's day is called: "mum's birthday", 外公生日, 爷爷忌日."""
    if kin.group("who"):
        who = kin.group("who")
        return f"{who}'{'' if who.endswith('s') else 's'} {kin.group('day')}"
    if kin.group("passed") or kin.group("lost") or kin.group("died_on"):
        return "death anniversary"
    if kin.group("kin_went"):
        return f"{kin.group('kin_went')}忌日"
    if kin.group("kin_wed"):
        return f"{kin.group('kin_wed')}结婚纪念日"
    if kin.group("who_nth"):
        who = kin.group("who_nth")
        return f"{who}'{'' if who.endswith('s') else 's'} birthday"
    if kin.group("grows"):
        return f"{kin.group('grows')}'s birthday"
    if kin.group("reached"):
        return "anniversary"
    if kin.group("kin_zh"):
        return kin.group("kin_zh") + kin.group("zh_day")
    return f"{kin.group('kin_died')}忌日"


# Someone else calling or telling the user, in the clause of the asking: 他每天7点叫我起床 (not
# 我妈生日那天提醒我).
_BY_SOMEONE = re.compile(r"(?:[他她佢]|" + _KIN_ZH + r"(?!的|生日|过生|纪念)|闹钟)[^，,。]*$")
_OTHERS_EN = re.compile(
    r"(?<![a-z])(?:you|your|you're|u|ur|ya|he|she|they|his|her|him|their|them|there|who)"
    r"(?![a-z])"
    r"|(?<![a-z])(?!(?:that|what|here|let|today|tomorrow|tonight|weekend|monday|tuesday|wednesday"
    r"|thursday|friday|saturday|sunday|" + _KIN + r")'s)[a-z]+'s\s+"
    # "flight's at 6": "is", no one's
    r"(?!the\s|a\s|an\s|at\s|on\s|in\s|tomorrow|tonight|next\s|this\s|coming|due\s|booked\s"
    r"|scheduled\s|set\s|planned\s|confirmed\s|been\s|finally\s|supposedly\s|apparently\s"
    r"|actually\s)"
)
_PAST_EN = re.compile(
    r"(?<![a-z])(?:was|were|went|had|did|(?<!'s\s)(?<!'ve\s)(?<!have\s)(?<!has\s)got|ago|scored|finished|passed|failed|lost|won|saw|met"
    r"|came|took|ate|missed|forgot|loved|hated|enjoyed|watched|played|cancell?ed|sat|slept|woke"
    r"|helped|visited|attended|celebrated|hosted|joined|tried|walked|worked|cooked|cleaned|texted"
    r"|spent|bought|told|lasted|ended|began|overran|dragged|happened|kept|broke|threw|crashed|fell"
    r"|died|flooded|showed|turned\s+up)(?![a-z])"
    # Moved to a day to come: "the exam got moved to next week".
    r"(?!\s+(?:moved|pushed|postponed|rescheduled|bumped|changed)(?![a-z]))"
)
# 佢: Cantonese "he", "she"; not the one the user goes to see or with (去见他爸妈, 跟你说)
_OTHERS_ZH = re.compile(r"(?<![见去到陪接送跟和给帮回])[你他她它您佢]")
# Someone else's event, told by the user: a friend's or a colleague's, the subject of the
# sentence ("my friend has an exam tomorrow", 我朋友明天考试); family's events are the user's
# concern too ("my mom's surgery", 我姐14号结婚), and are read.
_THEIRS = re.compile(
    r"^(?:my|our)\s+(?:best\s+|close\s+|old\s+)?(?:friends?|coworkers?|co-workers?|colleagues?"
    r"|roommates?|roomies?|flatmates?|housemates?|classmates?|neighbou?rs?|boss|ex|manager|teacher|professor|prof"
    r"|mates?|buddy|buddies|pal|pals|bestie|bff"
    r"|landlord|client|mentor|tutor)"
    r"(?:\s+(?!(?:and|n|&|who|i)(?![a-z]))[a-z]+)?"  # their name: "my friend priya is defending"
    r"(?:\s+(?:has|have|is|are|will)|'s\s+(?:got|going|having)"
    r"|'s\s+[a-z]+ing\s+(?:out|away|off|back|home|over|to|up|abroad)"
    r"|'s\s+(?!\w+ing)[a-z]+|s'\s)(?![a-z])"
    # (what a teacher or a boss says is coming is the user's: 老师说下周一要考试)
    # (after its day too: 明天老板上台讲话; not 明天跟朋友…)
    # (not a partner, 女朋友; nor a friend's home gone to, 去朋友家)
    r"|^[^，,。我跟和与同陪约找见请带帮给替去]{0,6}?(?:我的?)?(?:(?<![男女])朋友|同事|室友|舍友|同学|闺蜜|哥们|邻居|老板|领导|导师|老师|客户)(?!说(?![他她]))"
    # (帮我带点资料: an errand for the user, not the user's event; nor is what the user does
    # for them, 我帮他改了简历, 我们凑钱给他买了果篮, nor how it leaves the user, 笑死我了)
    # (nor the user's remark on it after: 我赌他, 我也被吵得睡不着)
    r"(?!.*(?<![帮给替死])我(?!也?被|赌|打赌|猜|觉得|估计)(?!们?[^，,。]{0,8}?[给帮替为][他她]))"
    # the neighbours by where they live: "the kids next door have a party", 隔壁明天办酒席
    r"|^(?:the\s+)?(?:[a-z]+\s+){0,2}?(?:next\s+door|upstairs|downstairs)(?:['\u2019]s)?"
    r"(?:\s+[a-z]+)?\s+(?:has|have|is|are|will|got|'s|'re)(?![a-z])"
    r"|^(?:楼上|楼下|隔壁|对门)(?:的|那家|家|邻居)?"
    # Someone else the subject: 他们明天下午在我家附近拍电影.
    r"|^(?:他们|她们|他|她|佢哋|佢|人家|别人)(?!们)"
    # Someone else the subject, with their own event: "she's got her exam tomorrow".
    r"|^(?:she|he|they)(?:'s|'re|\s+(?:has|have|is|are|will|got))\s+(?:got\s+|getting\s+|having\s+)?"
    r"(?:his|her|their)\s"
)
# A family member's own event, told with their pronoun, the user not in it: "my sister has
# her driving test on friday", 我弟下周考研，他比我还淡定 ("my mum's having her op, so I'm
# going down" and 我妈住院，我请假陪她 are the user's too).
_KIN_OWN = re.compile(
    r"^(?:my|our)\s+"
    + _PEOPLE
    + r"(?:"
    + _KIN
    + r")(?:\s+(?:has|have|is|are|will|got)|['\u2019]s)\s+"
    r"(?:got\s+|having\s+|taking\s+|doing\s+|sitting\s+)?(?:his|her|their)\s"
    # (without 我 too, unless the user takes them: 明天送儿子去幼儿园，他不想去)
    r"|^[^，,。我送陪带接]{0,6}(?:我的?)?"
    + _KIN_ZH
    + r"(?:[^，,。]*[，,][^。]*[他她]|[^，,。]{0,3}(?:说|讲)[他她])"
    # someone else seeing to them: "my sister's flight lands at 9, my dad's picking her up"
    r"|^(?:my|our)\s+" + _PEOPLE + r"(?:" + _KIN + r")(?:['\u2019]s|\s)[^.!?]*[,;\u2014][^.!?]*"
    r"(?:['\u2019]s|\sis|\sare|\swill\s+be)\s+[a-z]+ing\s+(?:her|him|them)(?![a-z])"
    # their own, by their pronoun: "my dad keeps telling everyone his hernia op is on friday"
    r"|^(?:(?:lol|lmao|ugh|omg|so|and|btw|ok|okay|well|oh|ngl|tbh)[\s,]+)*(?:my|our)\s+"
    + _PEOPLE
    + r"(?:"
    + _KIN
    + r")(?![a-z'\u2019])[^,.!?]{0,40}?(?<![a-z])(?:his|her|their)\s"
    # their trip away, told with their pronoun after: "my sister's flying to toronto on the
    # 9th, she's so excited"
    r"|^(?:(?:my|our)\s+)?" + _PEOPLE + r"(?:" + _KIN + r")(?:['\u2019]s|\s+is|\s+are)\s+"
    r"(?:(?:flying|travel+ing|going|heading|off|moving|leaving|jetting|driving)\s+(?:off\s+|up\s+|down\s+)?(?:to|out"
    r"|away|abroad|back)"
    # or arriving: "my husband's flight lands at 6am tomorrow, he'll grab a cab"
    r"|(?:flight|train|plane|bus|coach|ferry)(?:\s+[a-z]+){0,3}?\s+(?:lands|arrives|gets\s+in"
    r"|comes\s+in))"
    r"(?![a-z])(?:[^.!?]*[,;\u2014][^.!?]*(?<![a-z])(?:she|he|they)(?:['\u2019](?:s|re|ll)"
    r"|\s+(?:is|are|was|were|will|can|can't|cannot))(?![a-z])"
    # or for their own ends: "my brother's flying out on tuesday for his new job"
    r"|[^.!?]*?(?<![a-z])for\s+(?:his|her|their)\s)"
    # their work trip: "my husband's away for work next week", 我老公下周去出差
    r"|^(?:my|our)\s+(?:" + _KIN + r")\b[^,.!?]*(?:business\s+trip|work\s+trip|for\s+work)"
    r"|^[^，,。我]{0,6}(?:我的?)?" + _KIN_ZH + r"[^，,。]*出差"
    # theirs, said after: 体检报告明天出来，不过是我妈的; "results tomorrow, but it's my dad's"
    r"|(?:不过|但是?)是?我?" + _KIN_ZH + r"的"
    r"|(?<![a-z])(?:but|though)\s+it['\u2019]?s\s+(?:my\s+)?(?:" + _KIN + r")['\u2019]s(?![a-z])"
    # what they sit alone, an exam or a hearing: "my daughter's got exams all next week",
    # 我弟14号要开庭 (a surgery or the dentist is read: the family goes along)
    # or a club or class of theirs: "mum's book club is tomorrow at 7"
    r"|^(?:(?:lol|ugh|omg|so|and|btw|ok|okay|well|oh|ngl|tbh)[\s,]+)*(?:(?:my|our)\s+)?"
    + _PEOPLE
    + r"(?:"
    + _KIN
    + r")(?:['\u2019]s|\s+has|\s+have|\s+is|\s+got)\s+(?:got\s+|having\s+|taking\s+|sitting\s+)?"
    r"(?:(?:a|an|the|all|final|mock|big|[a-z]+\s+(?=club|class|lesson|practice|training|trip|camp|excursion))\s*)*"
    # a kind of exam or interview of theirs: "my sister's job interview", "driving test"
    r"(?:(?:job|driving|theory|entrance|music|piano|dance|swimming|grading|visa|uni|college"
    r"|school|bar|board)\s+)?"
    r"(?:exams?|tests?|finals|midterms|mocks|gcses?|a-levels|sats|hearing|court|trial|interview"
    r"|audition|club|class|lessons?|practice|training|date|trip|excursion|camp|sleepover)(?![a-z])"
    # (their exam with the user's 我 left out too: 表妹周日考研，她压力好大)
    r"|^[^，,。我]{0,6}(?:我的?)?"
    + _KIN_ZH
    + r"[^，,。]{0,6}?(?:考试|考研|高考|中考|开庭|庭审|答辩|面试|笔试|期末"
    # or a pastime or a trip of theirs: 我爸下周去钓鱼
    # or a return to their unit: 我哥下周归队
    r"|去?(?:钓鱼|打?高尔夫|打?麻将|打牌|跳舞|广场舞|旅游|度假|同学会|出海)|归队|回部队|回连队|返岗)"
)
_WITH_THEM = re.compile(
    r"(?<![a-z])(?:i|i'm|im|i'll|we|we're|me|us)(?![a-z])|陪|我(?:要|也|得|会|去|当|请|跟)"
    r"|[接送][他她]|来(?:看|找)我"
)
# A calendar's days, no one's event: "school holidays start on the 18th", "bank holiday monday".
_PUBLIC_DAYS = r"(?:school|bank|public|national)\s+hol(?:iday)?s?|half[\s-]term"
_PUBLIC = re.compile(rf"(?<![a-z])(?:{_PUBLIC_DAYS})(?![a-z])")
# A day off, no event: "tomorrow is a holiday", "we have a bank holiday on monday".
_DAY_OFF = re.compile(
    rf"(?<![a-z])(?:{_PUBLIC_DAYS}"
    r"|(?:is|'s|be)\s+(?:a\s+)?holiday|day\s+off|off\s+day|rest\s+day|road\s*works|building\s+work"
    r"|construction"
    r"|maintenance|downtime|outage|power\s+cut|servers?\s+(?:are|is|'re|'s|will\s+be)\s+down"
    r"|(?:server|system|database|db|site|website|app|platform)\s+(?:migration|upgrade|update|cutover)"
    r"|(?:check-?in|registration|applications?|bookings?|tickets?|voting)\s+(?:for\s+[a-z\s']{1,30}?)?"
    r"(?:opens?|closes?|go(?:es)?\s+on\s+sale))(?![a-z])"
)
# Moved from the day said first to one said after: "friday's meeting got pushed to next week",
# 周五的会改到下周了.
_MOVED = re.compile(
    r"(?<![a-z])(?:moved|pushed|postponed|rescheduled|bumped|changed)(?:\s+(?:back|forward))?"
    r"\s+(?:to|till|until)(?![a-z])|改到|推到|推迟到|延到|延期到|挪到|改成|提前到|调到|换到"
)
# ... or from one day to another: "got moved from wednesday to tuesday" (not a span).
_MOVED_FROM = re.compile(
    r"(?<![a-z])(?:moved|pushed|postponed|rescheduled|bumped|changed|switched|brought)"
    r"(?:\s+[a-z'\u2019]+){0,3}?\s+from\s+(?:the\s+)?$"  # "pushed my surgery from"
)
_TO_DAY = re.compile(r"\s+(?:to|till|until)\s+(?:the\s+)?")
# ... or denied, then told: "isn't monday, it's tuesday".
_NOT_THAT = re.compile(r"(?<![a-z])(?:not|is\s*n['\u2019]?t)\s+(?:on\s+)?$")
_BUT_THIS = re.compile(r"[\s,;]*(?:it['\u2019]?s|its|it\s+is|but)\s+(?:on\s+)?")
# A day said, then put right: "the 5th, sorry i mean the 19th", 5号……不对是19号.
_CORRECTED = re.compile(
    r"(?<![a-z])(?:i\s+mean|i\s+meant|sorry\s+meant|wait\s+no|no\s+wait|correction|scratch\s+that)"
    r"(?![a-z])|不对|我是说|说错了|记错了|口误"
)
# The day itself coming, no event: 周一又要到了, "friday is almost here".
_ARRIVES = re.compile(
    r"\s*(?:又|就|快|马上|终于|总算)?要?(?:到|来)了"
    r"|\s*(?:又|就|终于|总算)?是(?:周|星期|礼拜)[一二三四五六日天末](?:了|啦)?(?:[，,。!！]|$)"
    r"|(?:\s+is|['\u2019]s)\s+(?:already\s+)?(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|the\s+weekend)"
    r"(?![a-z])(?!\s+(?:and|so|,)\s)|(?:\s+(?:is|'s))?\s+(?:almost\s+|nearly\s+|finally\s+)?"
    r"(?:here|upon\s+us|around\s+the\s+corner)(?![a-z])"
)
# A friend's gathering is one the user goes to: "my best friend's bday party is sat night".
_GATHERING = re.compile(
    r"(?<![a-z])(?:party|wedding|bbq|barbecue|housewarming|shower|reunion|gig|concert|funeral"
    r"|leaving\s+do|(?:hen|stag)\s+(?:do|party|weekend)|bachelor(?:ette)?\s+party"
    r"|bridesmaid|best\s+man|groomsman|maid\s+of\s+hono(?:u)?r|sangeet|mehndi|haldi)(?![a-z])"
    r"|婚礼|结婚|聚会|派对|生日会|婚宴|葬礼|演唱会|伴娘|伴郎|大寿|寿宴"
)
# Any doing a sentence begins with ("running a 10k on sunday"), not a noun in -ing, the
# weather, nor a state of mind ("wondering what to wear tomorrow").
_CHAT_LEAD = (
    r"^(?:(?:ok|okay|so|omg|ugh|and|also|btw|well|oh|yay|ngl|tbh|lowkey|honestly|lol|kinda|eh|oi"
    r"|wah|walao|aiyo|alamak"
    r"|sorta|just|finally|really|fr|yaar|bro|guess\s+what)[\s,]+)*"
)
_DOING_FIRST = (
    r"(?!(?:nothing|something|anything|everything|morning|evening|thing|wedding|meeting|during"
    r"|spring|string|ceiling|building|pudding|sibling|darling|raining|snowing|pouring|freezing"
    r"|boring|amazing|interesting|exciting|annoying|according)(?![a-z]))[a-z]{3,}ing(?![a-z])"
)
# A sentence that leaves its "I" out: "got a date friday", "gotta be at the airport by 6".
_IMPLIED_I = re.compile(
    _CHAT_LEAD + r"(?:got|gotta|gonna|going|back\s+(?:on|at|to|in)|on\s+(?:earlies|lates|nights)|"
    r"heading|have|having|need|off|flying|leaving|starting|meeting|seeing|getting|taking|"
    r"doing|visiting|signed\s+up|booked|registered|enrolled|scheduled|can'?t\s+wait|cannot\s+wait"
    # kept from sleep or food by it: "cant sleep bc of the interview at 10 today"
    r"|(?:can['\u2019]?t|cannot|couldn['\u2019]?t)\s+(?:sleep|eat|focus|concentrate|relax)"
    r"(?:\s+[a-z]+)?\s+(?:bc|b/c|because|cuz|cos|coz|about|over|before|thinking)"
    # formal English's "I" left out: "will be travelling to pune on monday"
    r"|will\s+be\s+(?:[a-z]+ing|in|at|away|off|out|back)"
    r"|looking\s+forward|so\s+(?:excited|nervous)|excited|nervous|dreading|stressed|anxious|scared"
    r"|terrified|worried|pumped|hyped|stoked|psyched"
    r"|remembered|realised|realized|forgot|found\s+out|noticed|saw|had|went|met|spoke|called"
    r"|" + _DOING_FIRST + r")(?![a-z])"
)
# A doing as a plan: "pitching to investors on dec 17".
_DOING = re.compile(
    _CHAT_LEAD + r"(?!(?:wondering|thinking|hoping|praying|feeling|missing|loving|hating|wishing"
    r"|guessing|dreading|looking|waiting|counting|kidding|joking|lying|saying|talking|asking"
    r"|telling|trying\s+to|craving|working|wanting|needing|starving|dying|struggling|living"
    r"|staying|sitting|lying)(?![a-z]))" + _DOING_FIRST
)
# The time now, told: "it's almost midnight", 现在已经三点了.
_NOW_IS = re.compile(
    r"(?:(?<![a-z])(?:it'?s|it\s+is|now|already|almost|nearly|past)\s+|现在|已经)$"
)
# The time now, told after it: 下午三点了, 都十二点多啦; opening the message: "2am and i'm up".
_NOW_ZH = re.compile(r"\s*(?:多|半)?(?:了|啦)")
# ... or set apart before what already is or still goes on: "凌晨一点四十 渔港那边已经开始热闹了".
_NOW_STILL_ZH = re.compile(
    r"(?:\s+|[，,]\s*)?[\u4e00-\u9fff]{0,8}?(?:已经|还在|还没|仍然|依然|睡不着|还醒着)"
)
_NOW_AND = re.compile(
    r"\s*(?:and|&|n)\s+(?:i['\u2019]?m|im|i\s+am|i['\u2019]?ve|still|we['\u2019]re|here\s+i\s+am)(?![a-z])"
    r"|\s*(?:thoughts|brain|vibes|feels)(?![a-z])"  # "3am thoughts: ..."
)
_NIGHT_LEAD = re.compile(r"大?(?:半|深)?(?:夜里?)?")  # 深夜两点还在刷题: the night's hour now
# A question about the user's own event is still about it: "what should I wear to my
# interview on Monday?"
_MY = re.compile(r"(?<![a-z])my\s+")
# A question asking for advice on an event told before it: "interview at 2pm on monday, any
# tips?", 周五面试，有什么建议吗？
_ADVICE = re.compile(
    r"[,，]\s*(?:any\s+(?:[a-z]+\s+)?(?:tips|advice|ideas|suggestions|recs|recommendations|recipes)"
    r"|what\s+should\s+i|how\s+(?:should|do)\s+i"
    r"|有什么建议|怎么准备|有啥建议|有(?:什么|啥)?推荐|求推荐)"
)
# What is only imagined: "if I had an interview tomorrow", "I'd go on friday", 如果明天下雨.
_UNREAL = re.compile(
    r"^(?:(?:so|and|but|ok|well|like)[\s,]+)*(?:what\s+)?if(?![a-z])|(?<![a-z])imagine(?:\s+if)?(?![a-z])"
    r"|(?<![a-z])(?:would|wouldn't|could|i'd|we'd|if\s+(?:you|u)\s+(?:want|like|wanna)|(?:was|were)\s+(?:supposed|meant)\s+to|let's|lets"
    r"|let\s+us|(?:we|you|i)\s+(?:should|ought\s+to)|should\s+we|shall\s+we|thinking\s+(?:about|of)|maybe"
    r"|might|(?:was|were)\s+(?:going\s+to|gonna|planning\s+to)|had\s+planned)(?![a-z])"
    r"|如果|要是|假如|万一|适合|适宜|好像|似乎|的话(?![剧题])|本来|原本|原来(?:打算|要|想)|原计划"
    r"|要不是|早知道"  # what would have been: 要不是周六加班我就去了
    r"|就算|即使|哪怕|估计|大概|(?<![理思感梦幻回构想不])想(?![到起法念象想])"
)
# A wish or a plan not made yet, wherever the sentence says it: "not sure if i'm going",
# 要是能请到假就好了, 可能要出差吧，还不确定.
_UNSURE = re.compile(
    # (not a doubt of wanting it: "not sure I even want the job")
    r"(?<![a-z])(?:not\s+sure(?!\s+(?:if\s+)?i\s+(?:even\s+)?(?:want|like|need))|unsure|idk|dunno|(?:do\s*n['\u2019]?t|not)\s+know\s+(?:if|whether)"
    r"|i\s+wish|wish\s+i|if\s+only|undecided|tbc|tbd|tba"
    # the day not said: "which day, she didn't say", 具体哪天还没通知
    r"|which\s+day[^.?!]{0,30}(?:did\s*n['\u2019]?t|never|not)\s+(?:say|said|tell)"
    r"|(?:did\s*n['\u2019]?t|never)\s+(?:say|said|tell\s+(?:me|us))\s+which\s+day"
    # the weather permitting: "if it's clear", "weather permitting"
    r"|if\s+the\s+weather(?:['\u2019]s|\s+is|\s+stays|\s+holds|\s+does\s*n['\u2019]?t)"
    r"|if\s+it(?:['\u2019]s|\s+is|\s+stays|\s+does\s*n['\u2019]?t)\s+(?:not\s+)?(?:clear|sunny|nice|dry"
    r"|fine|good|warm|rain|raining|snow|snowing|wet|windy|cold|too|pouring|stormy|icy)"
    r"|weather\s+permitting"
    # anyone's, not the user's, as what the sentence is about: "whoever books meetings for 4:30"
    r"|^(?:(?:honestly|tbh|ngl|lol|ok|so|like)[\s,]+)*(?:whoever|any(?:one|body)\s+(?:who|that)"
    r"|people\s+who|those\s+who|every(?:one|body)\s+who)"
    # said in mockery: "yeah right, like i'm going to the gym at 6", 呵呵…信我😏
    r"|yeah\s+right|as\s+if|like\s+(?:i['\u2019]?m|i\s+am|i['\u2019]ll|that['\u2019]?s)\s+(?:really\s+|actually\s+)?going)"
    r"(?![a-z])|^呵呵|(?:信|相信)我[一次吧啦]*[😏🙃🤡]"
    r"|的(?:人|同学|同事|家长)(?:都|真|就|是不是|应该|简直|怎么|太|有病|好多|很多|太多|可以|请|需要)"
    r"|真的假的"
    # torn between two: "can't decide if i should go to the gym or", 爬山还是在家睡觉好呢, 纠结
    r"|can['\u2019]?t\s+decide|cannot\s+decide|(?:(?:i['\u2019]?m|im|so|really)\s+torn|torn\s+between)(?![a-z])|or\s+should\s+i(?![a-z])"
    r"|纠结|好难选|难选|选哪个|还是[^，,。]{1,12}(?:好|呢)[呢吧啊呀]*(?:[，,。!！?？~]|$)"
    r"|就好了|多好啊|不确定|不一定|说不定|(?<!路线)(?<!行程)(?<!酒店)(?<!攻略)还没定|没定好|待定|没说哪天|哪天还没(?:定|通知|说)|可能|也许|或许|不知道(?:哪|几|什么时候|去不去|要不要|能不能)|去不去"
    # which of two days, not known or told both ways (不知道是周四还是周五, 有人说周六有人说周日);
    # a thought dropped (…算了 躺着吧), unless the subject changes after (算了…对了周五要…)
    r"|不知道是?[^，,。]{1,8}还是|有人说[^，,。]{1,10}有人说|(?:^|[，,\s])算了(?!.*(?:对了|另外|还有))"
)
# A Chinese question asked without a question mark: 周六的比赛看了吗.
_ASKED_ZH = re.compile(r"吗[呀啊]?[^\u4e00-\u9fff]*$|是不是|有没有|要不要|会不会")
# An English question asked without a question mark: "what should i cook for dinner tomorrow".
_ASKED_EN = re.compile(
    r"(?:(?:so|ok|okay|hey|and|but|also|btw|lol|omg|ugh|hmm)[\s,]+)*"
    r"(?:what|which|who|why|should\s+i|shall\s+i|do\s+i|do\s+you|did\s+you|are\s+you|can\s+you"
    r"|could\s+you|would\s+you|will\s+you|have\s+you|any\s+(?:ideas|tips|advice)"
    r"|remind\s+me\s+(?:why|how|who|what(?!\s+to)))(?![a-z'\u2019])"
)
# Asked by a question word and 呢, of a plan with no event: 周末去哪玩好呢.
_WONDER_ZH = re.compile(
    r"(?:哪|什么|啥|怎么|咋|几点|多少)[^，,。！？]*?(?:好|合适)?呢[^\u4e00-\u9fff]*$"
)
# Habits, not a day's event: "every Tuesday", 每周三, 一般.
_HABIT = re.compile(
    r"(?<![a-z])(?:(?:every|each)(?:\s+(?:single|other|second|few|couple\s+of))?\s+(?=[a-z0-9])"
    r"(?!(?:one|thing|document|bit|person|people|penny|minute\s+of)(?![a-z]))"
    r"(?:[a-z]*(?:day|week|weekend|month|year|morning|afternoon|evening|night|time|term|shift"
    r"|semester)s?|\d|mon|tue|wed|thu|fri|sat|sun)"
    # (not said of how a thing is: "the queue is always insane", "that shop's always rammed")
    r"|everyday|usually|(?<!\sis\s)(?<!\sare\s)(?<!['\u2019]s\s)(?<!\sgets\s)always|often|normally"
    r"|as\s+usual|used\s+to|use\s+to|whenever|anytime"
    # a weekday's plural: "the dentist near me closes at 5 on fridays"
    r"|(?:on|most|some)\s+(?:mon|tues|wednes|thurs|fri|satur|sun)days"
    # a timetable changed from a day on: "standup is at 10:30 from monday on"
    r"|from\s+(?:on\s+)?(?:next\s+|this\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)day\s+(?:on(?:wards?)?"
    r"|forwards?)"
    r"|even\s+(?:when|if)|(?:i|we)\s+(?:can\s+)?never(?!\s+(?:been|had|done|thought|seen))"
    r")(?![a-z])"
    # A place's timetable, not the user's day: "school starts at 7:40 here".
    r"|(?<![a-z])(?<!be\s)(?<!come\s)(?<!coming\s)(?<!get\s)(?:here|over\s+here|round\s+here"
    r"|in\s+this\s+country)(?![a-z])(?!\s+(?:at|on|in|by|for|tomorrow|tonight|next|this)(?![a-z]))"
    r"|每(?:天|日|晚|早|周|星期|礼拜|月|年|次|逢|隔|个(?:周|星期|礼拜|月|工作日|早上|晚上))"
    r"|一般|通常|经常|总是|平时|照常|曾经|又要(?:开始)?(?:上班|上学|上课|加班)|返工"
    # whenever (一到晚上十点就…), and what the user used to do (我以前上夜班; not 周五以前, "by")
    r"|一到[^，,。]{1,8}就|(?:^|(?<=[我们]))以前(?!的)"
    # every weekday of a span: 周一到周五都要打卡 (not 下周一到周五出差, a trip)
    r"|(?:周|星期|礼拜)[一二三四五六日天]\s*(?:到|至|-|~)\s*(?:周|星期|礼拜)?[一二三四五六日天][^，,。]{0,4}?都"
)
# Done today: 今天开会开了一整天 (了, without a word of what is still to come; not the 了 of the
# time now told: 三点了还在背书，今天上午十点考试).
_PAST_ZH = re.compile(r"(?<![点點])(?<!点多)(?<!点半)了(?!解)|过了|完了")
# Done already, whatever day is named: 周一已经考完了.
_DONE_ZH = re.compile(r"已经[^，,。]*了|[考开做办搞弄]完了")
# Rated as it goes or went: 开得好累, 考得还行.
_RATED_ZH = re.compile(r"得(?:好|太|很|真|挺|超|特别|非常|不错|还行|一般|一塌糊涂|稀烂)")
# Told as done ("we went", "it was"), with nothing said of what is still to come.
_FUTURE_EN = re.compile(
    r"(?<![a-z0-9])(?:will|'ll|gonna|going\s+to|is|are|am|'m|'re|have|has|got|gotta|tomorrow|next"
    r"|coming|tonight)(?![a-z])"
    # Set for a day to come: "she set up a call for tuesday".
    r"|(?<![a-z])for\s+(?:on\s+)?(?:next\s+|this\s+|coming\s+)?(?:(?:mon|tues|wednes|thurs|fri|satur"
    r"|sun)day|the\s+\d)"
)
# Words of a plan: an event the words have no entry for is still one ("we're going camping",
# "getting my wisdom teeth out", 下下周要去实习, 约了男朋友).
# "I have X": no plan when X is time or nothing, routine, or how the user feels.
_NOT_HAD = (
    r"(?:(?:a|an|the|my)\s+)?(?:time|nothing|no|to|work|school|plans|fun|money|been|had|never|got"
    r"|it|some|headache|migraine|cold|fever|cough|flu|hangover|feeling|idea|question|lot|bit|crush"
    r"|kids?|dog|cat|bad|day|house|place|period|snow|early|so|lots|loads|tons|much|stuff|things)"
    r"(?![a-z])"
)
_PLAN_EN = re.compile(
    r"(?<=[a-z])['\u2019]ll\s+be\s+(?:in|at|off|away|flying|travel+ing)(?![a-z])"
    r"|(?<![a-z])(?:going\s+to|gonna|gotta|have\s+to|need\s+to|will|heading|flying|off\s+to|"
    r"leaving|starting|start|moving|meeting|seeing|visiting|presenting|getting|doing|having|"
    r"booked|reserved|scheduled|signed\s+up|hosting|at\s+(?:ours|mine)(?![a-z])|"
    r"coming\s+(?:home|back|over|round|to\s+visit)|"
    r"taking|playing|running|(?:i|we)'?(?:m|re|\s+am|\s+are)\s+[a-z]+ing|"
    r"(?:i|we)(?:\s+have|'ve\s+got|\s+have\s+got)\s+(?!" + _NOT_HAD + r")[a-z0-9]+"
    r"|(?:i|we)\s+got\s+(?:a|an|my|our|the)|(?:i|we)\s+get\s+(?:my|our)\s+[a-z]+\s+(?:off|out|done|fitted|removed)"
    r"|(?:get|pick\s+up|collect)\s+(?:the|our|my)\s+keys"
    # tickets to it: "got tickets for taylor on the 16th"
    r"|(?:got|have|bought|booked|scored|snagged)\s+(?:the\s+|some\s+|our\s+|my\s+|\d\s+|two\s+)?tickets?\s+(?:for|to)"
    # someone doing something with the user: "the advisor is calling me on friday"
    r"|(?:calling|ringing|phoning|meeting|seeing|visiting|interviewing|collecting)\s+(?:me|us)"
    r"|(?:wants?|asked|needs?)\s+to\s+(?:see|meet|talk\s+to|speak\s+(?:to|with)|chat\s+with)\s+(?:me|us)"
    r"|go(?:ing)?\s+under\s+the\s+knife|back\s+to\s+(?:uni|school|college|campus)"
    # away somewhere: "a week today i'm in tokyo"
    r"|(?:i['\u2019]?m|we['\u2019]?re|i\s+am|we\s+are)\s+in\s+(?!(?:the|a|an|my|our|bed|work|school"
    r"|class|office|town|trouble|love|pain|charge|luck|hospital|tears|bits|shock|denial|pyjamas|pajamas"
    r"|pjs|sweats|uniform|costume|meetings|lectures|hell|heaven|agony)(?![a-z]))[a-z]{3,}"
    # A plan told in the present: "we close on the house on the 22nd", "i fly out monday".
    r"|(?:i|we)\s+(?:fly|leave|close|move|start|sign|graduate|land|arrive|depart|return|begin"
    r"|present|pitch|perform|compete|race|travel|set\s+off|head\s+off|check\s+in|get\s+married|meet"
    r"|exchange|complete)"
    r"|got\s+(?:a|an|my)"
    # looked forward to, whatever its name: "can't wait for my spa day on the 12th"
    r"|(?:can['\u2019]?t|cannot)\s+wait\s+(?:for|till|until)\s+(?:my|our)|looking\s+forward\s+to\s+(?:my|our)"
    r")(?![a-z])"
)
# What the user is idle at, no event: "tonight i'm just gonna chill", "stay home and sleep";
# or how a day will be: "tomorrow will be rough".
_IDLE = re.compile(
    r"(?<![a-z])(?:chill|chilling|relax|relaxing|rest|resting|sleep|sleeping|nap|napping|lazy"
    r"|netflix|diet|detox|fast|fasting|stay(?:ing)?\s+(?:home|in)"
    r"|\d+\s*(?:degrees|°)"
    r"|nothing(?!\s+(?:is|['\u2019]s|are|ready|prepared|packed|done))|wake\s+up|get\s+up|be\s+up\s+(?:at|by|early)|(?:go|going|head|heading)\s+to\s+bed"
    r"|(?:be|is|'s|'m|am|'re|are)\s+(?:so\s+|really\s+|very\s+|a\s+)*(?:rough|long|busy|hard"
    r"|crazy|hectic|fun|good|great|bad|cold|hot|nice|awful|tough|productive|free|fine|okay|ok"
    r"|freezing|boiling|rainy|wet|snowy|windy|sunny|warm|miserable|grim"
    r"|better|lucky|unlucky))(?![a-z])"
)
# The weather, or rest: no event (明天要降温了, 周末在家躺平).
_IDLE_ZH = re.compile(
    r"降温|升温|下雨|下雪|刮风|天气|气温|寒潮|雾霾|冰雹|台风|暴雨|暴雪|大风|沙尘暴|霜冻|"
    # the sky's events: 明晚有流星雨
    r"流星雨|月食|日食|月全食|超级月亮|"
    # the day a solar term or a festival of customs: 明天是冬至
    r"(?:是|就是)(?:冬至|夏至|腊八|小年|立[春夏秋冬]|春分|秋分|重阳|七夕|元宵|端午|中秋)|躺|休息|睡觉|睡懒觉|宅|减肥|节食|戒烟|戒酒|早睡|早起"
    r"|发工资|发奖金|年终奖|到账|停水|停电|断网|维护|停服"
    # hot or cold, the temperature: 聽日會好凍，得十度
    r"|(?:好|很|超|太|特别)(?:冷|冻|热|闷热)|(?:\d+|[两三四五六七八九十]+)度(?![假数过])"
)
# An event whose name the reader does not know, told by its shape: "the bake sale is at 3",
# "the movers are coming", "my viva is set for".
_SCHEDULED = re.compile(
    r"(?:(?:the|my|our|a|an)\s+)?+(?!(?:today|tonight|tomorrow|it|this|that|there|what|which|who"
    r"|now|weather|forecast|store|shop|trash|bins?|garbage|rubbish|refuse|recycling|laundry|payday"
    r"|christmas|xmas"
    r"|easter|halloween|thanksgiving|hanukkah|diwali|eid|holidays|sunset|sunrise|everything"
    r"|elections?|referendum|strike|eclipse|fireworks|parade|sales?|episode|finale"
    r"|nothing|favou?rite|best|worst|only)(?![a-z]))"
    r"[a-z0-9][a-z0-9'-]*(?:\s+[a-z0-9][a-z0-9'-]*){0,3}"
    r"(?:\s+(?:is|'s|are|'re|will\s+be)|'s"
    # or coming on its own: "the removal van comes at 8", "the movers arrive on saturday"
    r"|\s+(?:comes?(?!\s+out)|arrives?|starts?|begins?|kicks?\s+off))"
    r"(?:\s+(?:finally|actually|supposedly|apparently|definitely))?"
    r"(?:\s+(?:on|at|due|set\s+for|scheduled\s+for|booked\s+for"
    r"|planned\s+for|coming(?:\s+(?:over|round|up|in|to\s+visit))?))*"
    # in a window of hours: "the plumber's coming between 8 and 10"
    # (its clock time taken out: "between 1 and")
    r"(?:\s+between\s+\d{1,2}(?:[:.]\d\d)?\s*(?:[ap]m)?\s+and(?:\s+\d{1,2}(?:[:.]\d\d)?\s*(?:[ap]m)?)?)?"
    # someone coming to do something: "the landlord is coming to fix the boiler"
    r"(?:\s+to\s+(?:fix|repair|look\s+at|check|install|clean|collect|deliver|measure|quote|service"
    r"|rewire|replace|paint|fit|unblock|survey|plaster|sort\s+out)"
    r"(?:\s+[a-z']+){0,3})?"
)
_PLAN_ZH = re.compile(
    r"飞(?![机快速行舞])|(?:跟|和|约|同|与)[^，,。\s]{1,6}(?:吃|喝|看|见|逛|食|饮|睇|谈|签|碰头|对接)|要|(?<![记觉懂值显舍晓获取])得(?![太很好真挺超不特非这那跟像多更最越比我他她])|准备|打算|约了|约好|来(?:[^，,。\s]{1,6})?(?:看|找|接|陪)我|来我(?:家|这)|(?:过来|来)(?:住|玩)|上门|有个|有场|有一场|有一个|开始|结婚|实习|演出|看电影|吃饭|聚餐|年会|"
    r"高铁|火车|飞机|航班|签证|办|开组会|上课|去|[定约排改推]在|安排在|改到|推到|推迟到"
    # guests asked round, a trip home: 周六请了朋友来家里吃火锅, 周日回趟老家
    r"|请了?[^，,。\s]{1,6}(?:来|吃|喝)|来(?:我)?家里|回一?趟"
    # formal: 将于, 赴京, 需出席
    r"|将于|[我人]将|赴|出席|参加"
)
_STRIP = " ,，、：:。.!！?？~\uff5e-—\"'「」="  # \uff5e: the fullwidth tilde


def _without(sentence: str, words: str) -> str:
    """The sentence without the words that said when."""
    rest = " ".join(sentence.replace(words, " ", 1).split())
    return _CJK_GAP.sub("", _GAP_BEFORE_MARK.sub("", rest))


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
    text = _LEFT_OVER_EN.sub("", text)
    article = _ARTICLE_EN.match(text.lower())
    if article is not None:
        text = text[article.end() :]
    text = _TAIL_EN.sub("", text)
    text = _LEAD_ZH.sub("", text)
    text = _TAIL_ZH.sub("", text).strip(_STRIP)
    return clipped(text, WHAT_CHARS)


# Words quoted that name a day are someone else's (a lyric, a saying, what they wrote):
# “不要等到明天，明天太遥远”; a word in quotes ("my \"big day\" is saturday") is read as it is.
_QUOTED = re.compile(r"“[^“”]*”|「[^「」]*」|『[^『』]*』|\"[^\"]*\"")


def spot(text: str, now: datetime) -> list[Spotted]:
    """What a model would find in one user message said at `now` (aware, in the time zone
    meant): a reminder asked for ("remind me to call mom tomorrow", 提醒我明天交作业), a
    special day ("my birthday is May 4th", 我的生日是5月4日), an event to come the user will
    have ("my exam is on Tuesday", 我下周三面试), its day and its event perhaps told in two
    sentences one after the other ("GOT THE INTERVIEW!! it's monday at 2", "dreading wednesday.
    knee surgery at 8am"). Questions, negations, goodbyes and sentences not about the user are
    not read."""
    found: list[Spotted] = []
    text = _QUOTED.sub(
        lambda m: " " if future_spans(normalised(m.group(), now), now) else m.group(),
        text.translate(TRADITIONAL),
    )
    sentences = _SENTENCES.findall(_CLAUSE_GAP.sub("，", text))
    lent = -1
    # The sentence before, when it named a day and no event (its index and the day's words), or
    # an event of the user's and no day (its index and the event's words).
    day_before: tuple[int, str] | None = None
    event_before: tuple[int, str] | None = None
    # The last sentence that asked for a reminder on a day (its index and the day's words).
    reminded = (-2, "")
    began = [0] * len(sentences)  # where each sentence's finds begin in `found`
    for index, raw in enumerate(sentences):
        began[index] = len(found)
        if index == lent:
            continue
        sentence = raw.strip()
        lowered = sentence.lower()
        asked_before = found[began[index - 1] :] if index else []
        reminders = bool(asked_before) and all(x.kind == "reminder" for x in asked_before)
        if reminders and _TAKEN_BACK.match(lowered):
            del found[began[index - 1] :]  # "remind me tomorrow? nah i'll remember"
            continue
        bye = _SIGNED_OFF.search(lowered)
        if bye is not None:  # "明早7点的高铁，先睡了晚安": the plan before the goodbye's clause
            sentence, lowered = sentence[: bye.start()], lowered[: bye.start()]
        if not sentence or _NOT_EVENT.search(lowered):
            continue
        wonder = _WONDER_ZH.search(sentence) and not any(
            m.group() != "去" for m in _EVENT_ZH.finditer(sentence)
        )
        asked = (
            sentence.endswith(("?", "？")) or _ASKED_ZH.search(sentence) or _ASKED_EN.match(lowered)
        )
        if (asked or wonder) and not (
            _my_event(lowered) or _ADVICE.search(lowered) or _REMIND.search(lowered)
        ):
            told = _told_before_asking(sentence)
            if told is None:
                continue
            sentence, lowered = told, told.lower()
        special = _SPECIAL.search(lowered)
        # a close one's day told to ask what to give (我老婆下周二生日，送什么好呢): the question's;
        # told, then advice asked for ("dad's birthday is the 19th, any gift ideas?"): the day's
        close = special is None and not ((asked or wonder) and not _ADVICE.search(lowered))
        kin = _KIN_SPECIAL.search(lowered) if close else None
        if special is None and kin is None and _SPECIAL_DAY.search(lowered):
            # 我下周四生日, 后天我老爸生日: the day said inside
            told = normalised(sentence, now)
            coming = future_spans(told, now)
            said = _without(told.lower(), coming[0].text.lower()) if coming else ""
            special = _SPECIAL.search(said)
            kin = _KIN_SPECIAL.search(said) if close and special is None else None
        if special is not None or kin is not None:
            coming = future_spans(normalised(sentence, now), now)  # "on christmas day", "sat night"
            # The coming day first: "my anniversary is on the 28th" is this month's; told as gone
            # by ("our anniversary was on the 1st"), the day gone by.
            named = kin or special
            gone = (
                (named is not None and _GONE_BY.match(named.string, named.end()))
                or _FORGOTTEN_ZH.search(sentence)
                # the day a close one died, dated: the day gone by
                or (kin is not None and (kin.group("died_on") or kin.group("kin_went")))
            )
            days = (
                (find_dates(sentence, now) if gone else []) or coming or find_dates(sentence, now)
            )
            day = next((m.day for m in days if m.first is None), None)
            if day is not None:
                what = _close_ones_day(kin) if kin is not None else _own_day(special)
                found.append(Spotted("special_day", what, f"{day.month:02d}-{day.day:02d}"))
            continue
        sentence = normalised(sentence, now)
        lowered = sentence.lower()
        remind = _REMIND.search(lowered)
        if (
            remind is not None
            and remind.group("zh") is not None
            and _BY_SOMEONE.search(lowered, 0, remind.start("zh"))
        ):
            remind = None  # 妈妈明天7:30叫我起床: someone else calls the user
        # declined ("no need to remind me about monday", 不用提醒我周五的事了): a later one asked,
        # else nothing of that day to follow up either
        declined = False
        while remind is not None and _DECLINED.search(lowered, 0, remind.start()):
            asked = remind.start("en" if remind.group("en") is not None else "zh")
            remind, declined = _REMIND.search(lowered, asked), True
        if declined and remind is None:
            continue
        mentions = future_spans(sentence, now)
        planned = remind is not None or _WILL.search(lowered) is not None
        if not mentions and planned and not (_told_done(lowered) or _PAST_ZH.search(sentence)):
            # "we're getting married on june 6th" said in December: next year's
            sentence = next_years(sentence, now)
            lowered = sentence.lower()
            mentions = future_spans(sentence, now)
        if (
            not mentions
            and remind is None
            and day_before is not None
            and day_before[0] == index - 1
            and _named_event(sentence, lowered)
        ):
            # "dreading wednesday. knee surgery at 8am": the event is on the day before it.
            sentence = f"{day_before[1]} {sentence}"
            lowered = sentence.lower()
            mentions = future_spans(sentence, now)
        if not mentions:
            if remind is not None:  # "remind me at 9pm to...", "in two hours"
                timed = _timed_reminder(sentence, remind)
                that_day = reminded[0] == index - 1 and _THAT_DAY.search(lowered) is not None
                if timed and that_day and found and found[-1].kind == "reminder":
                    found[-1] = _on_that_day(found[-1], reminded[1], timed[0])
                    continue
                found.extend(timed)
                continue
            plans = _timed_plan(sentence, lowered, now)  # 下午四点要去银行: today, at a time
            found.extend(plans)
            if not plans and _own_event(sentence, lowered):
                event_before = (index, sentence)
            continue
        mention, start, end, when = _the_day(sentence, lowered, mentions, remind)
        if remind is not None:
            asked = sentence[remind.start("en" if remind.group("en") else "zh") :]
            what = _clean_what(_without(asked, sentence[start:end]))
            found.append(Spotted("reminder", what or _asked(remind), when))
            reminded = (index, sentence[start:end])
            continue
        if not _allowed(sentence, mention, now) or _no_day(mention, when, now):
            continue
        eventful = _eventful(sentence, mention)
        # whose it is, said with the first day; a sentence of no one's that begins with its day
        # tells the day of the user's event just before ("GOT THE INTERVIEW!! it's march 5th at
        # 11am, video call")
        if not eventful or not _owned(sentence, mentions[0]):
            if event_before is not None and event_before[0] == index - 1:
                before = event_before[1]
                # its day perhaps after a weekday ("fri 11th december, 2pm")
                lead = mentions[0] if _WEEKDAY_ALONE.fullmatch(mentions[0].text) else mention
                if _refers_back(lowered, lead):
                    # "second date with him!! friday 7.30 at the ramen place": the day of the
                    # event before, at the evening's hour if it is an evening's.
                    told = sentence
                    if clock_time(before) is None:
                        told = evening(f"{before} {sentence}")[len(before) + 1 :]
                    when = _when_words(told, start, end, mentions[1:])
                    found.append(Spotted("follow_up", _clean_what(before), when))
                    continue
            if not eventful:
                day_before = (index, sentence[start:end])
            continue
        what = _clean_what(_without(sentence, sentence[start:end]))
        if what:
            later = sentences[index + 1] if index + 1 < len(sentences) else ""
            hour = _its_hour(sentence, later, now)
            if hour:
                lent = index + 1  # that sentence's hour is this event's, and no event of its own
            found.append(Spotted("follow_up", what, f"{when} {hour}" if hour else when))
    return found


def loose(text: str, now: datetime) -> list[Spotted]:
    """A reading of a message `spot` finds nothing in, for the learned model to admit or not
    (memory.encoding.veto): the rules reject many a plan a new writer tells in words they do not
    know, and the model, which weighs the whole message, tells many of those from distractors.
    A sentence's day still to come as memory.dates reads it (a month and day gone
    by: next year's), the event's as `spot` chooses it, with the clock time `spot` adds; else
    a clock time or "in two hours" alone. A reminder when one is asked for, a special day when
    one is named, else a follow-up. None of `spot`'s checks of whose it is, of questions, doubts,
    habits or what is no event, but the one ruling out a month or more. At most one: the first
    of a sentence naming an event, else the first."""
    found: list[tuple[bool, Spotted]] = []  # each with whether its sentence names an event
    for raw in _SENTENCES.findall(_CLAUSE_GAP.sub("，", text.translate(TRADITIONAL))):
        sentence = normalised(raw.strip(), now)
        if not sentence:
            continue
        lowered = sentence.lower()
        remind = _REMIND.search(lowered)
        special = bool(
            _SPECIAL.search(lowered) or _KIN_SPECIAL.search(lowered) or _SPECIAL_DAY.search(lowered)
        )
        mentions = future_spans(sentence, now)
        if not mentions:
            sentence = next_years(sentence, now)
            lowered = sentence.lower()
            mentions = future_spans(sentence, now)
        said = clipped(raw, WHAT_CHARS) or "it"  # what, when no more can be told of it
        if not mentions:
            if remind is not None:
                found += [(True, s) for s in _timed_reminder(sentence, remind)]
                continue
            clock = _plan_clock(sentence)
            if clock is not None:
                words = sentence[clock.start : clock.end]
            elif (later := IN_HOURS.search(sentence)) is not None:
                words = later.group()
            else:
                continue
            what = _clean_what(_without(sentence, words)) or said
            found.append((_named_event(sentence, lowered), Spotted("follow_up", what, words)))
            continue
        if special:
            day = _the_mention(sentence, mentions).day
            what = _clean_what(sentence) or said
            found.append((True, Spotted("special_day", what, f"{day.month:02d}-{day.day:02d}")))
            continue
        mention, start, end, when = _the_day(sentence, lowered, mentions, remind)
        what = _clean_what(_without(sentence, sentence[start:end])) or said
        if remind is not None:
            found.append((True, Spotted("reminder", what, when)))
        elif not _no_day(mention, when, now):
            found.append((_eventful(sentence, mention), Spotted("follow_up", what, when)))
    return [next((s for event, s in found if event), found[0][1])] if found else []


def _the_day(
    sentence: str, lowered: str, mentions: Sequence[DateMention], remind: re.Match[str] | None
) -> tuple[DateMention, int, int, str]:
    """Of the days a sentence names (`mentions`), the event's (a reminder's: its asking clause's,
    not a consequence's, 不然明天要停水了), where the words saying it begin and end ("a week from",
    a span's end included), and the words saying when (with the clock time said for it, and a
    return: "off on the 10th and back on the 18th" is a span to the 18th)."""
    mention = _the_mention(sentence, mentions)
    if remind is not None:
        begin, stop = _clause_bounds(lowered, remind.start())
        mention = next((m for m in mentions if begin <= m.start < stop), mention)
    start = mention.start
    week = WEEK_FROM.search(sentence[:start]) or DAY_BEFORE_EN.search(sentence[:start])
    if week is not None:
        start = week.start()
    end = mention.start + len(mention.text)
    after = DAY_BEFORE_ZH.match(sentence, end)
    if after is not None:
        end = after.end()
    later_days = [m for m in mentions if m.start > mention.start]
    until = span_end(sentence, [mention, *later_days])
    back = None if until is not None else return_day(sentence, [mention, *later_days])
    if until is not None:  # "from friday to monday": the span's words
        end = until.start + len(until.text)
        later_days = later_days[1:]
    when = _when_words(sentence, start, end, later_days)
    if back is not None:
        when = f"{when} {'到' if CHINESE.search(back.text) else 'to'} {back.text}"
    return mention, start, end, when


# Told as still to come: "we're getting married on june 6th", 我们6月6号要去冰岛.
_WILL = re.compile(
    r"(?:(?<![a-z])(?:will|gonna|going\s+to)|['\u2019]ll)(?![a-z])"
    r"|(?:(?<![a-z])(?:are|am|is)|['\u2019](?:re|m|s))\s+(?:getting|having|going|flying|moving"
    r"|starting|doing|holding|booked|due|on)(?![a-z])|要|会|准备|打算|[定订约]在"
)
# Taking back the reminder the sentence before asked for: "remind me tomorrow? nah i'll remember".
_TAKEN_BACK = re.compile(
    r"(?:nah|nope|never\s*mind|nvm|forget\s+it|actually\s+(?:no|don['\u2019]?t|never\s*mind))(?![a-z])"
    r"|算了|不用了|当我没说"
)
# A day said before, referred to: "remind me that day at noon", 那天早上叫我.
_THAT_DAY = re.compile(
    r"(?<![a-z])(?:that|the\s+same)\s+(?:day|morning|afternoon|evening|night)(?![a-z])|那天|当天"
)
_WEEKDAY_ALONE = re.compile(
    r"(?:(?:on|this|next|coming)\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)day", re.IGNORECASE
)


def _the_mention(sentence: str, mentions: Sequence[DateMention]) -> DateMention:
    """Of the days a sentence names, the event's: the day it was moved to (周五的会改到下周了),
    the date after its weekday ("monday the 4th of jan"), else the first whose clause tells of
    an event ("今天累死了……周五上午十点还要给客户做演示"), else the first."""
    days = [m for m in mentions if m.first is None or m.day - m.first < LONGEST_SPAN]
    mentions = days or mentions  # "the london half in march, training starts monday"
    first = mentions[0]
    if len(mentions) == 1:
        return first
    second = mentions[1]
    if _MOVED.search(sentence, first.start, second.start):
        return second
    lowered = sentence.lower()
    if _MOVED_FROM.search(lowered, 0, first.start) and _TO_DAY.fullmatch(
        lowered, first.start + len(first.text), second.start
    ):
        return second
    if _NOT_THAT.search(lowered, 0, first.start) and _BUT_THIS.fullmatch(
        lowered, first.start + len(first.text), second.start
    ):
        return second  # "my exam isn't monday, it's tuesday"
    if _CORRECTED.search(lowered, first.start, second.start):
        return second  # 12月5号考研……不对是12月19号
    gap = sentence[first.start + len(first.text) : second.start]
    if _WEEKDAY_ALONE.fullmatch(first.text) and second.first is None and not gap.strip(" ,"):
        return second
    ended: DateMention | None = None
    for mention in mentions:
        begin, end = _clause_bounds(lowered, mention.start)
        clause = lowered[begin:end]
        if _eventful(sentence[begin:end], mention) and not (
            _told_done(clause) or _HABIT.search(clause)
        ):
            # "had the scan today, results on the 10th": the 10th; what ends on a day, then an
            # event on another: the event's ("night shifts end tuesday, then my exam wednesday",
            # 夜班周五结束，周六考试)
            if not _ENDS.search(clause):
                return mention
            ended = ended or mention
    return ended or first


# Something ending on a day: "my night shifts finally end tuesday", "camp wraps up", 夜班结束.
_ENDS = re.compile(
    r"(?<![a-z])(?:ends?|ending|finish(?:es)?|finishing|wraps?\s+up|(?:is|are)\s+over)(?![a-z])"
    r"|结束|完结|收尾"
)


# Where a question's own clause begins, after a statement: "i have X in 2 weeks and everyone
# says the prep is worse??".
_LAST_CLAUSE = re.compile(r".*(?:[,，]\s*|\s(?:and|but|so|tho|though)\s)", re.DOTALL)
_ASKING = re.compile(
    r"^(?:(?:ok|so|and|but|well|like)[\s,]+)*(?:what|when|where|who|whom|how|why|which|do|does|did"
    r"|is|are|am|was|were|can|could|should|would|will|shall|have|has|any|u|you)(?![a-z])"
    r"|吗|什么|怎么|为什么|几点|哪|谁|多少"
)
_RHETORICAL = re.compile(
    r"^(?:我|人)?(?:能|怎么能|怎么可能|哪能|咋能)不[^，,。a-z]{1,4}(?:吗|呢|啊)"
    r"|^how\s+(?:can|could|would)\s+i\s+not\s+be(?![a-z])"
)
_TO_YOU = re.compile(r"(?<![a-z])(?:you|u|ur|your|ya)(?![a-z])|[你您]")


def _told_before_asking(sentence: str) -> str | None:
    """The statement a question follows in its sentence, when the question is a clause of its
    own that asks nothing of the listener nor of the user ("i have a scan in 2 weeks and
    everyone says it hurts??"); None when the whole sentence asks."""
    last = _LAST_CLAUSE.match(sentence)
    if last is None:
        return None
    head, tail = sentence[: last.end()].strip(_STRIP), sentence[last.end() :].lower()
    own = _FIRST_PERSON.search(head.lower()) is not None  # "我生日是下周日，你会记得吗"
    # asking nothing: how the user feels, asked back ("我能不紧张吗", "how could i not be")
    own = own or _RHETORICAL.search(tail) is not None
    if not head or (not own and (_TO_YOU.search(tail) or _FIRST_PERSON.search(tail))):
        return None
    return None if _ASKING.search(head.lower()) else head


def _told_through(sentence: str, mention: DateMention) -> int:
    """Where the clause telling of the day (`mention`) ends, the one after it too when the day's
    holds nothing else ("in 2 days, the trip")."""
    lowered = sentence.lower()
    end = _clause_end(lowered, mention.start)
    if not _without(sentence[:end], mention.text).strip(_STRIP):
        end = _clause_end(lowered, end + 1)
    return end


def _owned(sentence: str, mention: DateMention) -> bool:
    """Whether a sentence naming a day (`mention`) is about the user: told in the first person,
    leaving its "I" out, in Chinese about no one else, or an event naming no one."""
    lowered = sentence.lower()
    # Up to the end of the day's clause: what a clause after it says of someone else ("she
    # hates the car", 有点心疼它) does not make the event theirs.
    end = _told_through(sentence, mention)
    told = sentence[:end]
    # Chinese leaves "I" out ("明天考试"): a sentence about no one else is the speaker's.
    own = (
        _FIRST_PERSON.search(lowered)
        or _IMPLIED_I.match(lowered)
        or (CHINESE.search(sentence) and not _OTHERS_ZH.search(told))
    )
    rest = _without(told, mention.text).lower()
    if own or _PET_FIRST.match(lowered) or _impersonal(rest) or _VISITORS.match(rest):
        return True
    if _KIN_FIRST.match(lowered):  # "kid's nativity is on the 2nd, she's a sheep": "my" left out
        return True
    if _IMPLIED_I.match(rest.strip(_STRIP)):
        return True  # "sunday got church retreat": the day first, then its "I" left out
    if _PET_CARE.match(rest.strip(_STRIP)) or _IN_FOR.match(rest.strip(_STRIP)):
        return True  # "vet tomorrow for biscuit's stitches", "car's in for its MOT tomorrow"
    if _BOOKED_IN.search(told.lower()):
        return True  # "biscuit needs surgery, they booked him in for thursday": the user's pet
    if _AT_OURS.search(told.lower()) and not _HABIT.search(lowered):
        return True  # "christmas at ours again, 9 people"
    # The event its own clause, after something else: "choir every week, but the concert is on
    # the 12th".
    begin = _clause_bounds(lowered, mention.start)[0]
    return begin > 0 and _impersonal(_without(sentence[begin:end], mention.text).lower())


_PET_CARE = re.compile(
    r"(?:(?:the|a)\s+)?(?:vet|vets|vet['\u2019]s|groomer|groomers|grooming)(?![a-z])"
)
# The user's things in for a service: "car's in for its MOT tomorrow", "the boiler goes in for".
_IN_FOR = re.compile(
    r"(?:(?:the|my|our)\s+)?(?:car|van|bike|motorbike|boiler|phone|laptop|boat|yacht|caravan"
    r"|motorhome|truck)(?:['\u2019]s|\s+is|\s+goes)"
    r"\s+in\s+for(?![a-z])"
)
# A pet (or the user) booked in by the vet or a clinic: the user takes them.
_BOOKED_IN = re.compile(
    r"(?<![a-z])(?:booked|got|fitted|squeezed)\s+(?:him|her|it|them|me|us)\s+in(?:\s+(?:for|on|at))?"
    r"(?![a-z])"
)
_AT_OURS = re.compile(r"(?<![a-z])at\s+(?:ours|mine)(?![a-z])")
# A place's hours, or a show's or a product's release, told with its day: 超市周日晚上九点关门;
# a service's timetable: 高铁最晚一班是21:35, 医院早上八点开始挂号, "the last bus is at 11:40".
_CLOSES = re.compile(
    r"关门|打烊|闭馆|歇业|停业|停课|停运|营业到|开门营业|上映|上线|开播|首播|定档|开售|发售|开抢"
    r"|(?<![a-z])(?:visiting|opening|office|business|surgery|clinic|shop|store|gym|pool)\s+hours"
    r"(?![a-z])|探视时间|探病时间|营业时间|开放时间"
    # a service's timetable: when its first or last run is or leaves (not one caught: 赶首班高铁,
    # 明早六点的首班高铁去北京), its opening
    r"|(?<![赶坐搭乘打])(?:末班|首班|头班|最晚一班|最早一班|最后一班)[^，,。]{0,10}?(?:是|发车|开出|几点)"
    r"|(?:开始|开放)(?:挂号|放号|营业"
    r"|售票|接待|办理)|放号"
    r"|(?<![a-z])the\s+(?:last|first)\s+(?:train|bus|tube|ferry|metro|subway|shuttle|tram|coach)"
    r"(?:\s+[a-z]+){0,2}?\s+(?:is|leaves|goes|departs|runs)(?![a-z])"
    r"|(?<![a-z])(?:pharmacy|chemist|clinic|bank|post\s+office|library|registration|reception"
    r"|canteen|cafeteria|supermarket|mall)\s+opens(?![a-z])"
    # meals served, a class run twice, a roster, a shift ending: a timetable, not a plan
    r"|供应(?!商|链)|晚市|(?<![去逛赶])早市|两场|两个场次"
    r"|(?<![a-z])(?:serves?|serving)\s+(?:breakfast|brunch|lunch|dinner)"
    r"|(?:two|2)\s+(?:[a-z]+\s+)?(?:sessions|showings|slots)|shift\s+pattern|roster|rota"
    r"|(?:\d|one|two|three|four|five)\s+on,?\s+(?:\d|one|two|three|four|five)\s+off"
    r"|(?:shift|work)\s+(?:ends|finishes|is\s+over)(?![a-z])"
    r"|排班|轮班表|早八晚八|[上做][一二三四五六]休[一二三四五六]"
)
# An event told for the roads it shuts, in any clause: "the marathon closes roads on sunday",
# 周日马拉松，市中心封路.
_ROADS_SHUT = re.compile(
    r"(?<![a-z])(?:clos(?:es|ing)|shuts?|shutting|block(?:s|ing))\s+(?:off\s+)?(?:the\s+|some\s+)?"
    r"(?:roads?|streets?|bridge)(?![a-z])|封路|交通管制"
)
# The user does not care: "the match on sunday is at 3, who cares".
_SHRUG = re.compile(
    r"(?<![a-z])(?:who\s+cares|not\s+that\s+i\s+care|couldn['\u2019]?t\s+care\s+less)(?![a-z])"
)
_NEIGHBOURS = re.compile(r"neighbou?r|next\s+door|upstairs|downstairs|邻居|楼上|楼下|隔壁|对门")
# Someone else coming to the user: 他明天来我家修空调.
_TO_ME_ZH = re.compile(r"来(?:[^，,。\s]{1,6})?(?:看|找|接|陪|帮|给)我|来我(?:家|这)")


def _allowed(sentence: str, mention: DateMention, now: datetime) -> bool:
    """Whether a sentence naming a day to come (`mention`) may tell of the user's event on it:
    not someone else's, nor denied, past, a habit, imagined, idle time or the day itself."""
    lowered = sentence.lower()
    clause = _clause(lowered, mention.start)
    if _NEGATED.search(clause) or _NOT_GOING.search(lowered):
        return False
    theirs = _THEIRS.search(lowered)
    if theirs is not None and (
        # a friend's party is the user's to go to, the neighbours' is not
        _NEIGHBOURS.search(theirs.group())
        or not (_GATHERING.search(lowered) or _TO_ME_ZH.search(sentence))
    ):
        return False
    kin = _KIN_OWN.search(lowered)
    if kin is not None and not _WITH_THEM.search(lowered, 1):
        return False  # "my sister has her driving test on friday"
    # Told as done in the day's clause or before it, and nothing to come said up to its end: "we
    # went to a concert on friday", "i helped my brother move on saturday, my back is gone" ("saw
    # the doctor yesterday, results next week" tells of what is to come after).
    told = lowered[: _clause_end(lowered, mention.start)]
    if (
        _PAST_EN.search(told)
        and not _FUTURE_EN.search(lowered[: _told_through(sentence, mention)])
        and not _SIGNED_UP.search(told)
        and _PAST_EN.search(_clause(lowered, mention.start))
    ):
        return False
    if _DONE_ZH.search(clause):
        return False  # 周一已经考完了: that Monday gone by
    if _LAST_YEARS.search(sentence, 0, mention.start):
        return False  # 开学典礼去年是九月一号: last year's date
    if _CLOSES.search(clause) or _ROADS_SHUT.search(lowered):
        return False  # 超市周日晚上九点关门, "visiting hours": a place's hours; 电影明天上映
    if _SHRUG.search(lowered) and not _FIRST_PERSON.search(lowered):
        return False  # "the match on sunday is at 3, who cares": not the user's
    # (up to the day's clause: 今天十点开会，心态崩了 tells a feeling after it)
    said = sentence[: _told_through(sentence, mention)]
    if mention.day == now.date() and (
        (_PAST_ZH.search(said) and not _PLAN_ZH.search(sentence)) or _RATED_ZH.search(sentence)
    ):
        return False  # 今天开会开了一整天, 今天的会开得好累
    # Chat's "got" is "have", and says nothing of today's being done or to come: "got my
    # results back today, passed!!" is told as done, "got a test today at 4" is to come.
    if mention.day == now.date() and _told_done(lowered):
        return False
    if mention.day == now.date() and _GOT.search(lowered) and not _named_event(sentence, lowered):
        return False  # "my kid got a free ice cream at school today": received, no event had
    # a habit in a clause of its own says nothing of the day's ("rehearsals every night this
    # week, show is saturday")
    unsure = _UNSURE.search(_UNSETTLED.sub(" ", _AFTERWARDS.sub(" ", lowered)))
    if _HABIT.search(clause) or _UNREAL.search(clause) or unsure or _HABIT_TACKED.search(lowered):
        return False  # "I usually go to the gym on Tuesdays", 我一般周三去健身
    named = _has_event(lowered) or _EVENT_ZH.search(sentence)
    off = _DAY_OFF.sub(" ", lowered)  # (a day off's start is no event: "school holidays start")
    if _DAY_OFF.search(lowered) and not (
        _has_event(_STARTING.sub(" ", off)) or _OUTING.search(off)
    ):
        return False  # "tomorrow is a holiday"; not "day off so i'm taking the kids to the zoo"
    idle = lowered[: _told_through(sentence, mention)]  # "..., whole family is busy" is no idling
    if _IDLE.search(idle) and not _has_event(_STARTING.sub(" ", lowered)):
        return False  # "tonight i'm just gonna chill", "starting my diet on monday"
    if _IDLE_ZH.search(sentence) and not _EVENT_ZH.search(sentence):
        return False  # 明天要降温了
    # 周一又要到了: the day itself coming
    return bool(named) or not _ARRIVES.match(lowered, mention.start + len(mention.text))


# A habit said in a clause of its own words alone, of the whole: "footy starts at 9, every week".
_HABIT_TACKED = re.compile(
    r"[,，;]\s*(?:(?:and|like)\s+)?(?:every|each)\s+(?:single\s+)?(?:week|weekend|month|time"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)day)(?![a-z])(?:\s+without\s+fail)?\s*(?:[,，.!;]|$)"
    r"|[,，]\s*(?:每周|每个?星期|每个?礼拜|每次)都?(?:这样|如此|一样)?\s*(?:[,，。!！]|$)"
)
# Somewhere gone to on a day off: "taking the kids to the zoo".
# A date said of last year: 去年是九月一号, "last year it was on the 3rd".
_LAST_YEARS = re.compile(
    r"(?:去年|前年)(?:是|在|的)?\s*$|(?<![a-z])last\s+year(?:\s+it)?\s+(?:was|fell)\s+(?:on\s+)?$",
    re.IGNORECASE,
)
_OUTING = re.compile(
    r"(?<![a-z])(?:taking|going|heading|driving|off)\s+(?:[a-z]+\s+){0,3}?to\s+the\s+[a-z]+"
)
_STARTING = re.compile(r"(?<![a-z])start(?:s|ing)?(?![a-z])")
# A clause of what follows from the plan, whose doubt is not the plan's: "到时可能冇咩时间覆你",
# "so i might be slow to reply".
_AFTERWARDS = re.compile(r"[，,]\s*(?:到时候?|那时候?|so\s+i|then\s+i|which\s+means)[^，,。.!?]*")


# A detail not yet settled, in a clause of its own subject, not the plan's doubt: 裙子还没定,
# 摄影师还没定好 (not 时间还没定, 具体哪天还没定).
_UNSETTLED = re.compile(
    r"[，,]\s*(?!时间|日期|日子|具体|哪天|几点|什么时候|还)[\u4e00-\u9fff]{1,5}"
    r"还没(?:定|定好|找好|选好|买好|订好|想好)(?:呢|啊|哈)?(?=[，,。!！\s]|$|[^\u4e00-\u9fff])"
)


# Family arriving, to stay with the user: "the in-laws arrive in 3 days and the guest room...",
# "mum and dad land on friday" (not "my sister arrives in sydney").
_VISITORS = re.compile(
    _CHAT_LEAD
    + r"(?:(?:my|our|the)\s+)?(?:"
    + _KIN
    + r")(?:\s+(?:and|&|n)\s+(?:my\s+)?(?:"
    + _KIN
    + r"))?\s+(?:arrive|arrives|arriving|land|lands|landing|fly\s+in|flies\s+in|flying\s+in"
    r"|get\s+in|gets\s+in|(?:are|is)\s+coming\s+to\s+stay|come\s+to\s+stay)(?![a-z])"
    # (not arriving somewhere else: "land in rome"; "arrive to stay" is with the user)
    r"(?!\s+(?:in|at|to)\s+(?!\d|stay(?![a-z])))"
)


def _eventful(sentence: str, mention: DateMention) -> bool:
    """Whether a sentence naming a day (`mention`) names an event or a plan on it."""
    lowered = sentence.lower()
    return bool(
        _scheduled(_without(sentence, mention.text))
        or _scheduled(_without(sentence[: _clause_end(lowered, mention.start)], mention.text))
        or _has_event(lowered)
        or _EVENT_ZH.search(sentence)
        or _PLAN_EN.search(lowered)
        or any(_DOING.match(lowered[at:]) for at in _clause_starts(lowered))
        or _PLAN_ZH.search(sentence)
        or _VISITORS.match(_without(lowered, mention.text.lower()))
        or _scheduled(
            _without(sentence[slice(*_clause_bounds(lowered, mention.start))], mention.text)
        )
    )


# A year, or months counted: "this year", "in six months", 半年后.
_A_YEAR = re.compile(
    r"(?<![a-z])(?:year|yr|years|months)(?![a-z])|(?<![a-z])in\s+a\s+month(?![a-z])|今年|本年|年后"
    r"|个月后"
)


def _no_day(mention: DateMention, when: str, now: datetime) -> bool:
    """Whether what a follow-up would be asked after is no day to come: a span of a month or
    longer ("next month", "in the summer": a plan without its day) or a year, or today at an hour
    or a part of the day already come (今天下午三点的会好无聊, said at three: under way or over,
    told as it is)."""
    if mention.first is not None and mention.day - mention.first >= LONGEST_SPAN:
        return True
    if _A_YEAR.search(mention.text.lower()):
        return True  # "this year" said in December is short, and names no day all the same
    if mention.day != now.date():
        return False
    if mention.hours is not None and mention.hours[1] <= now.hour:
        return True  # 今天早上, "this morning" said in the afternoon: over, told as it is
    clock = clock_time(when, mention.hours)
    return clock is not None and clock.at <= now.time().replace(tzinfo=None)


def _named_event(sentence: str, lowered: str) -> bool:
    return _has_event(lowered) or _EVENT_ZH.search(sentence) is not None


# Signed up for what is to come: done, its event not ("ok I did it, I signed up for the 10k").
_SIGNED_UP = re.compile(
    r"(?<![a-z])(?:signed\s+up|registered|entered|enrolled|booked\s+(?:in|myself|a\s+place))"
    r"(?:\s+\w+)?\s+(?:for|in)(?![a-z])|报了?名|报了个"
)


def _own_event(sentence: str, lowered: str) -> bool:
    """Whether a sentence naming no day tells of an event of the user's (whose day a sentence
    after it may say): named, theirs, neither denied nor someone else's, nor told as done
    ("got" aside: "GOT THE INTERVIEW"), a habit or imagined."""
    if not _named_event(sentence, lowered):
        return False
    own = (
        _FIRST_PERSON.search(lowered)
        or _IMPLIED_I.match(lowered)
        or (CHINESE.search(sentence) and not _OTHERS_ZH.search(sentence))
        or _impersonal(lowered)
    )
    if not own or _NEGATED.search(lowered) or _NOT_GOING.search(lowered):
        return False
    if _THEIRS.search(lowered) or _KIN_OWN.search(lowered):
        return False
    done = any(m.group() != "got" for m in _PAST_EN.finditer(lowered)) or _PAST_ZH.search(sentence)
    if done and not _SIGNED_UP.search(lowered):
        return False
    return not (_HABIT.search(lowered) or _UNREAL.search(lowered) or _UNSURE.search(lowered))


# A sentence that begins with its day, saying when the event before it is: "friday 7.30 at
# the ramen place", "it's monday at 2pm".
_BACK_LEAD = re.compile(
    r"(?:(?:and|so|ok|okay)[\s,]+)*(?:it['\u2019]?s|it\s+is|that['\u2019]?s)?\s*"
)
_ON = re.compile(r"on\s+")  # "it's on may 17": a date's "on" is not its mention's


def _refers_back(lowered: str, mention: DateMention) -> bool:
    """Whether a sentence (`lowered`) begins with its day (`mention`), with no one doing
    anything else in its first clause ("tomorrow I'm off" says something of its own)."""
    lead = _BACK_LEAD.match(lowered)
    if lead is None:
        return False
    on = _ON.match(lowered, lead.end())
    if mention.start not in (lead.end(), lead.end() if on is None else on.end()):
        return False
    return _FIRST_PERSON.search(_clause(lowered, mention.start)) is None


def _its_hour(sentence: str, after: str, now: datetime) -> str:
    """The clock time the sentence after an event's says of it, when the event's own says none
    ("concert tmrw night!!! doors around 7"): words that start with no day of their own, told
    as neither past nor habit; else nothing."""
    if clock_time(sentence) is not None:
        return ""
    after = normalised(after.strip(), now)
    clock = clock_time(after)
    if clock is None or future_spans(after, now) or _REMIND.search(after.lower()):
        return ""
    lowered = after.lower()
    if _PAST_EN.search(lowered) or _HABIT.search(lowered):
        return ""
    if _NOW_IS.search(lowered[: clock.start]) and not _AT_WORD.match(lowered, clock.start):
        return ""  # "it's 3pm now", not "it's at 2"
    if not _STARTS_AT.search(lowered[: clock.start]):
        return ""
    # The user's own slot, said after the doors': "doors at 7, we're on at 8pm".
    slot = _SLOT.search(lowered, clock.end)
    if slot is not None:
        own = clock_time(after[slot.end() :])
        if own is not None and own.start == 0:
            clock = ClockTime(own.at, slot.end(), slot.end() + own.end)
    # An evening's event's hour is the evening's ("party on saturday! starts at 8"), a race's
    # the morning's ("marathon tomorrow. 6:45 start").
    told = waking(evening(f"{sentence} {after[clock.start : clock.end]}"))
    return told[len(sentence) + 1 :]


# "Got" as received, or as chat's "have" when an event is named ("got a test today at 4").
_GOT = re.compile(r"(?<![a-z])(?<!'s\s)(?<!'ve\s)(?<!have\s)(?<!has\s)got(?![a-z])")


def _told_done(lowered: str) -> bool:
    """Whether a sentence tells of something done, "got" aside, with nothing to come."""
    return any(m.group() != "got" for m in _PAST_EN.finditer(lowered)) and all(
        m.group() == "got" for m in _FUTURE_EN.finditer(lowered)
    )


def _on_that_day(asked: Spotted, day: str, timed: Spotted) -> Spotted:
    """The reminder asked for just before (`asked`, on `day`'s words) at the time a sentence
    after it asks for on "that day" ("...it's due the 10th. remind me that day at noon")."""
    at = timed.when
    at = at if re.match(r"[^a-z0-9]|at\s", at, re.IGNORECASE) else f"at {at}"
    return Spotted("reminder", asked.what, f"{day} {at}")


def _timed_reminder(sentence: str, remind: re.Match[str]) -> list[Spotted]:
    """A reminder asked for at a clock time, in some hours or "in the morning" (the next one),
    with no day named."""
    later = IN_HOURS.search(sentence)
    clock = clock_time(sentence)
    morning = MORNING_ALONE.search(sentence)
    if later is not None:
        words = later.group()
    elif clock is not None:
        words = sentence[clock.start : clock.end]
    elif morning is not None:
        asked = sentence[remind.start("en" if remind.group("en") else "zh") :]
        what = _clean_what(_without(asked, morning.group()))
        return [Spotted("reminder", what or _asked(remind), morning.group())]
    else:
        return []
    asked = sentence[remind.start("en" if remind.group("en") else "zh") :]
    what = _clean_what(_without(asked, words))
    return [Spotted("reminder", what or _asked(remind), words)]


def _asked(remind: re.Match[str]) -> str:
    """A reminder's words when nothing follows the asking (明早7点叫醒我: 叫醒我)."""
    said = remind.group("en") if remind.group("en") is not None else remind.group("zh")
    asking = remind.group()[: len(remind.group()) - len(said)]
    return clipped(asking.strip(_STRIP), WHAT_CHARS)


def _timed_plan(sentence: str, lowered: str, now: datetime) -> list[Spotted]:
    """An event at a clock time or in some hours with no day named, told as the user's plan
    (下午四点要去银行, "I'm meeting Sam at 7", "exam in 2 hours"): today's, or tomorrow's once
    the hour is gone; none when a day gone by is named (昨天晚上8点的比赛) or only the time now is
    ("it's almost midnight", 三点了还在开会)."""
    clock = _plan_clock(sentence)
    later = IN_HOURS.search(sentence) if clock is None else None
    if (clock is None and later is None) or _HABIT.search(lowered):
        return []
    clause = _clause(lowered, clock.start if clock is not None else later.start())  # type: ignore[union-attr]
    if _NEGATED.search(clause) or _NOT_GOING.search(lowered) or _UNREAL.search(clause):
        return []
    if _UNSURE.search(lowered):
        return []
    if _PAST_EN.search(lowered) and not _FUTURE_EN.search(lowered):
        return []
    if _OVERRAN_ZH.search(sentence):
        return []  # 早上八点的会拖到十点半: today's, gone on past its hour
    if _CLOSES.search(lowered):
        return []  # "visiting hours are 3 to 5pm": a place's hours
    chinese = CHINESE.search(sentence) is not None
    own = (
        _FIRST_PERSON.search(lowered)
        or _IMPLIED_I.match(lowered)
        or (chinese and not _OTHERS_ZH.search(sentence))
    )
    if clock is not None:
        start, end = clock.start, clock.end
    elif later is not None:
        start, end = later.span()
    words = sentence[start:end]
    if chinese:
        planned = bool(_PLAN_ZH.search(sentence) or _EVENT_ZH.search(sentence))
    else:  # an event named, or a plan told ("meeting at 3", "exam in 2 hours")
        own = own or _impersonal(_without(sentence, words).lower())
        planned = bool(_PLAN_EN.search(lowered)) or _has_event(lowered)
    if not own or not planned or _THEIRS.search(lowered):
        return []
    if any(m.day < now.date() for m in find_dates(sentence, now)):
        return []
    what = _clean_what(_without(sentence, words))
    return [Spotted("follow_up", what, words)] if what else []


# What went on past its hour: today's, not a plan.
_OVERRAN_ZH = re.compile(r"拖到|拖了|拖堂|延长到|超时|一直开到|开到了")
_AT_WORD = re.compile(r"(?:at|around|by|from)\s")
_SLOT = re.compile(
    r"(?<![a-z])(?:(?:we|i)['\u2019]?(?:re|m)?|we\s+are|i\s+am|(?:we|i)\s+go)\s+on(?:\s+stage)?"
    r"\s+(?:at\s+|@\s*|around\s+)"
)
# Words that give an event's hour in a sentence of its own: "doors around 7", "starts at 8",
# "it's at 3", 两点开始.
_STARTS_AT = re.compile(
    r"(?:^|(?<![a-z]))(?:(?:doors|starts?|starting|kick-?off|it'?s|is|at|around|from|by|@)\s*)$"
    r"|^\s*$"
)

# Where a clause ends: "the funeral is on tuesday, i don't know how i'll cope" denies nothing
# of the funeral.
_CLAUSE_END = re.compile(
    r"[,，;；\u2014\u2600-\u27bf\U0001f300-\U0001faff]|(?<!\d):|:(?!\d)|\s[-\u2013]\s|\s(?:but|though|although|because|cos|cuz|coz)\s|\s(?:and|so)\s(?=(?:i|we|my|it|then|yeah|ya|don['\u2019]?t|dont|pls|please)(?![a-z]))"
    r"|但是|不过|可是"
    # a run-on Chinese message's next clause, its 我 after 了: 大后天交论文了我还有两章没写
    r"|(?<=了)(?=我)"
)


def _clause_end(lowered: str, at: int) -> int:
    """Where the clause of the sentence (`lowered`) that position `at` is in ends."""
    end = next((m for m in _CLAUSE_END.finditer(lowered, at)), None)
    return len(lowered) if end is None else end.start()


def _clause_starts(lowered: str) -> list[int]:
    """Where each clause of the sentence (`lowered`) begins, its spaces skipped: a doing may
    begin any ("tomorrow's the big day — defending my phd at 10")."""
    return [
        0,
        *(len(lowered) - len(lowered[m.end() :].lstrip()) for m in _CLAUSE_END.finditer(lowered)),
    ]


def _clause_bounds(lowered: str, at: int) -> tuple[int, int]:
    """Where the clause of the sentence (`lowered`) that position `at` is in begins and ends."""
    start = 0
    for end in _CLAUSE_END.finditer(lowered):
        if end.start() >= at:
            return start, end.start()
        start = end.end()
    return start, len(lowered)


def _clause(lowered: str, at: int) -> str:
    """The clause of the sentence (`lowered`) that position `at` is in."""
    start = 0
    for end in _CLAUSE_END.finditer(lowered):
        if end.start() >= at:
            return lowered[start : end.start()]
        start = end.end()
    return lowered[start:]


def _impersonal(rest: str) -> bool:
    """Whether an English sentence naming no one, its day's words taken out (`rest`), tells of
    an event to come: it begins with the event, names no one else, and is not told as past."""
    if _OTHERS_EN.search(rest) or _PAST_EN.search(rest) or _PUBLIC.search(rest):
        return False
    stripped = rest.strip(_STRIP)
    if _scheduled(stripped):
        return True
    lead = _EVENT_FIRST.match(stripped)
    words = _WORD_EN.findall(stripped[lead.end() if lead else 0 :])[:5]
    at = _event_among(words)
    if at is None or _SEASON.search(" ".join(words[: at + 1])):
        return False  # "black friday sales start tomorrow": the calendar's
    return not _NOT_NOUN.intersection(words[:at])


# A holiday or a day of the calendar, or money due, is no one's event: "can't believe christmas
# is in three weeks", "thanksgiving is next thursday", "my phone bill is due on the 20th".
_SEASON = re.compile(
    r"(?<![a-z])(?:christmas|xmas|easter|halloween|thanksgiving|hanukkah|diwali|eid|new\s+year"
    r"|payday|weekend|holidays?|winter|summer|spring|autumn|fall|term|semester|strikes?"
    r"|elections?|referendum|eclipse|fireworks|parade|black\s+friday|cyber\s+monday"
    r"|meteor\s+shower|rent|mortgage|bills?|salary|wages|paycheck|licen[cs]e|fees?"
    r"|subscription|invoice|premium|instal+ments?|payments?|(?<!bake\s)(?<!yard\s)(?<!garage\s)(?<!boot\s)sales?)(?![a-z])"
)


def _scheduled(rest: str) -> bool:
    """Whether the sentence, its day's words taken out (`rest`), is an event told by its shape:
    a noun, "is", and the clock time at most ("the bake sale is at 3")."""
    clock = clock_time(rest)
    if clock is not None:
        rest = f"{rest[: clock.start]} {rest[clock.end :]}"
    said = " ".join(rest.lower().split()).strip(_STRIP)
    return _SCHEDULED.fullmatch(said) is not None and not _SEASON.search(said)


def _my_event(lowered: str) -> bool:
    """Whether the sentence names the speaker's own event ("what should I wear to my
    interview on Monday?")."""
    return any(
        _event_among(_WORD_EN.findall(lowered, m.end(), m.end() + 40)[:2]) is not None
        for m in _MY.finditer(lowered)
    )


# Before a clock time that bounds something else, not the event's hour: "from midnight" (no
# food), "until 10", 十点以后.
# A clause with its own subject, between a clock time and a later day.
_NEW_SUBJECT = re.compile(
    r"\s(?:and|but|so|then)\s+(?:i|we)(?:['\u2019](?:m|re|ll|ve))?(?![a-z])"
    # the subject changed ("up at 6 every day, btw my test is sunday", 六点起床 对了周日考驾照)
    r"|(?<![a-z])(?:btw|by\s+the\s+way|anyway|oh\s+and|also)(?![a-z])|对了|另外|顺便说"
)
# The part of the day the day's event is at, in a short clause of its own after it ("exam on
# friday, in the morning", "driving test friday, morning slot", 明天去他家吃饭 中午到).
_PART_AFTER = re.compile(
    r"[,，]\s*(?:(?:in\s+the\s+)?(?P<en>morning|afternoon|evening)(?:\s+(?:slot|appointment|session"
    r"|one|start))?|(?P<zh>上午|中午|下午|傍晚|晚上)(?:开饭|开考|开始|出发|集合|进场|到|考|见)?)"
    r"\s*(?:[,，.。!！~]|$)",
    re.IGNORECASE,
)
_BOUND_BEFORE = re.compile(r"(?<![a-z])(?:until|till|til|after|since|before|from)\s+$")
_BOUND_AFTER = re.compile(r"\s*(?:以后|之后|以前|之前)")
_IT_STARTS = re.compile(r"(?<![a-z])it\s+(?:starts?|begins?|kicks\s+off|is\s+at)(?![a-z])")
# The day's own hour it starts from, said right after it: "the training on 15 dec from 10 am".
_FROM_THEN = re.compile(r"\s*from\s+")


def _theirs_clock(sentence: str, gap: str, at: int) -> bool:
    """Whether a clock time (at `at`) is in a clause after the day's, told of someone else:
    "ping me saturday morning abt the market, they sell out by 10"."""
    if not _CLAUSE_END.search(gap.lower()):
        return False
    clause = _clause(sentence.lower(), at)
    if _IT_STARTS.search(clause):
        return False  # told by someone of the event: "they say it starts at 10:30"
    return bool(_OTHERS_EN.search(clause) or _OTHERS_ZH.search(clause))


def _plan_clock(sentence: str) -> ClockTime | None:
    """The first clock time a sentence names that is not the time now told ("快十二点了还在改稿，
    明天上午九点开会": nine)."""
    offset = 0
    lowered = sentence.lower()
    while (clock := clock_time(sentence[offset:])) is not None:
        start, end = offset + clock.start, offset + clock.end
        # ("it's at 4:30" is an event's hour, not the time now)
        now = (
            _NOW_IS.search(lowered[:start]) and not lowered.startswith(("at", "@"), start)
        ) or _NOW_ZH.match(sentence, end)
        opening = _NIGHT_LEAD.fullmatch(sentence, 0, start) is not None and (
            _NOW_AND.match(lowered, end) or _NOW_STILL_ZH.match(sentence, end)
        )
        if not (now or opening):
            return ClockTime(clock.at, start, end)
        offset = end
    return None


def _when_words(sentence: str, start: int, end: int, others: Sequence[DateMention] = ()) -> str:
    """The words saying when: the date's, with a clock time said in the sentence, unless the
    clock time is another day's (后天体检，今晚十点以后...) or bounds something else ("blood
    test tmrw, no food from midnight"; not the hour the day's event starts from, said right
    after its day: "the training on 15 dec from 10 am")."""
    clock = _plan_clock(sentence)
    if clock is None:
        part = _PART_AFTER.search(sentence, end)
        if part is None or any(end <= m.start < part.start() for m in others):
            return sentence[start:end]
        words = part.group("zh") or part.group("en").lower()
        return f"{sentence[start:end]}{'' if part.group('zh') else ' '}{words}"
    if _NEW_SUBJECT.search(sentence[clock.end : start].lower()):
        return sentence[start:end]  # "flight's at 1:40 and we're back on the 9th": the flight's
    gap = sentence[end : clock.start] if clock.start >= end else ""
    if gap and (
        any(end <= m.start <= clock.start for m in others)
        or (_BOUND_BEFORE.search(gap.lower()) and not _FROM_THEN.fullmatch(gap.lower()))
        or _BOUND_AFTER.match(sentence, clock.end)
        or _theirs_clock(sentence, gap, clock.start)
    ):
        return sentence[start:end]
    if clock.start <= end or _JOINED.fullmatch(gap):  # "tomorrow at 3pm", 明天下午3点: one phrase
        return sentence[min(start, clock.start) : max(end, clock.end)]
    return f"{sentence[start:end]} {sentence[clock.start : clock.end]}"
