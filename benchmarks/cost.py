"""What a month of conversation costs in model calls and tokens, and what memory keeps.

    python benchmarks/cost.py [--users 5] [--days 30] [--persona miao] [--all] [--seed 1]

Scripted users talk to a persona for `--days` simulated days (a FakeClock), each one to two
conversations a day of 4-10 messages, 20-60 s apart: small talk, facts about themselves (a
job interview, a sister's birthday, a pet) and now and then (~5%) a question about the past.
Between conversations the clock passes the persona's idle time and the scheduler ticks, so
conversations close and are encoded; each day a tick after prune_hour (04:00) runs the prune.

The models are the fake OpenAI server of the tests (tests/fakes/openai_server.py) answering
each kind of request plausibly: a ~30-word chat reply, an encoding JSON object built from the
transcript (what is coming in it read as memory.encoding.intentions.spot reads it), a running
summary, intent queries, a state tool call. Token counts are estimated as Kizuna estimates
them (bot/llm/tokens.py), tool definitions included.

The users talk in Telegram private chats; a recording courier (tests/fakes/courier.py) takes
what the persona writes first (bot.outreach, run every hour of the day here: a persona whose
[outreach] table opts in follows up what users said was coming, and checks in after an
absence).

It prints model calls and tokens per user message by tier and by purpose (diary pages are
written by the encoding call, so "diary" has no calls of its own), the memory block's size in
the chat prompt, memories kept and forgotten per day, and the messages the persona wrote
first. The last line is one JSON object: {"calls_per_message", "tokens_per_message",
"memory_block_tokens_p95", "tool_calls_per_message", "unsolicited_per_user_per_week",
"outreach_calls_per_user_per_week", "cached_share"} for `--persona`, and "media": the media
share's figures; tool calls are also shown per tool.

The prompt cache: the fake server caches prompts as OpenAI does (a prefix seen before, of 1,024
tokens and more in 128-token steps, counted as Kizuna estimates tokens) and reports
`cached_tokens`; per persona it prints the mean share of each chat prompt that begins as the
previous chat prompt of its conversation did, the mean share the cache reused (all chat
prompts, and those over 2,000 tokens; `cached_share` in the last line), and the month's price
of every call at gpt-4o-mini's prices with and without the cache (and with it where cached
input costs a tenth of the price, as DeepSeek's does).

The media share is a run of its own, so the month's figures above stay as they were: each user
sends `--media-messages` messages through the front (bot.front, as Telegram's adapter does),
one in five a photo and one in five a voice note, to the persona with its [voice] speak set to
"when_spoken_to"; it prints the vision, hearing and speech tiers' calls per message (and their
pictures, recordings, audio bytes and characters spoken), and all calls per message there.
Target in the default configuration: at most 1.2 calls per user message, a memory block of at
most 1,500 tokens. Never run by CI.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from unittest.mock import patch

from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.fakes, from anywhere

from adapters.telegram import PLATFORM as TELEGRAM
from bot.config import Config, EngineConfig, ModelsConfig, ProviderConfig, TierConfig
from bot.conversation.recollect import about_the_past, memory_section
from bot.events import Attachment, ChatEvent
from bot.front import Front
from bot.llm.router import TierUsage
from bot.llm.tokens import MESSAGE_OVERHEAD, estimate_tokens, pieces
from bot.persona.file import Persona, PersonaLibrary
from bot.platforms import Platforms
from bot.runtime.assemble import Runtime, load_personas, open_runtime
from memory.clock import FakeClock
from memory.encoding.intentions import spot
from tests.fakes.courier import RecordingCourier
from tests.fakes.factories import make_picture
from tests.fakes.openai_server import (
    FakeOpenAI,
    FakeToolCall,
    Reply,
    Text,
    ToolCalls,
    prompt_tokens,
)

START = datetime(2026, 11, 1, tzinfo=UTC)
PURPOSES = ("chat", "encoding", "diary", "state", "intent", "compression", "outreach")
DEFAULT_PERSONAS = ("miao", "monikai")  # plain personas: the default-configuration target
TARGET_CALLS = 1.2
# The month's price, per million tokens: OpenAI's gpt-4o-mini (input, input read from the
# prompt cache, output), in US dollars.
PRICE_INPUT, PRICE_CACHED, PRICE_OUTPUT = 0.15, 0.075, 0.60
# Where cached input costs a tenth of the price (DeepSeek's context cache, say).
PRICE_CACHED_TENTH = PRICE_INPUT / 10
TARGET_CACHED = 0.6  # of each chat prompt's tokens, a 1,024-token / 128-step cache reuses
TARGET_CACHED_LONG = 0.8  # of those of the prompts over 2,000 tokens
TARGET_MEMORY_TOKENS = 1500
PAST_RATE = 0.05
FACT_RATE = 0.3
CHINESE_RATE = 0.3  # of a miao user's lines

# -- what the users say -------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class User:
    user_id: str
    name: str
    sister: str
    pet: str
    pet_kind: str
    job: str
    city: str


NAMES = ["Alex", "Bea", "Chen", "Dana", "Eli", "Fumi", "Gus", "Hana", "Ivo", "June"]
SISTERS = ["Aiko", "Maya", "Lena", "Sora", "Ines", "Nora", "Yui", "Clara", "Rin", "Tess"]
PETS = [("Mochi", "cat"), ("Biscuit", "dog"), ("Pickle", "hamster"), ("Tofu", "rabbit")]
JOBS = ["a design studio", "a bank", "a game company", "a hospital", "a bakery", "a school"]
CITIES = ["Osaka", "Lyon", "Taipei", "Denver", "Porto", "Leeds"]

SMALL_TALK = [
    "hi! how's your day going?",
    "it's raining again here, I didn't bring an umbrella",
    "I just had ramen for lunch, it was so good",
    "ugh, I'm so tired today",
    "what do you think about summer versus winter?",
    "I watched a really weird movie last night, not sure if I liked it",
    "do you like music? I've been listening to a lot of jazz lately",
    "my coffee went cold while I was answering emails, classic",
    "haha that's funny",
    "ok I should probably get back to work soon",
    "what would you do on a lazy Sunday?",
    "the sunset today was really pretty",
    "I'm thinking about learning to cook something new this week",
    "good morning!",
    "I can't decide what to have for dinner, any ideas?",
    "tell me something that made you happy recently",
    "I'm back, sorry, got distracted",
    "lol yes exactly",
]
FACTS = [
    "I have a job interview at {job} on Friday and I'm really nervous about it",
    "my sister {sister}'s birthday is next week, I need a gift idea",
    "my {pet_kind} {pet} knocked over my plant again this morning",
    "I've lived in {city} for three years now, it still feels new sometimes",
    "{sister} called me today, we talked for almost two hours",
    "I'm allergic to peanuts, so I always have to check the labels",
    "I started running in the mornings, only two kilometres but still",
    "{pet} has a vet appointment on Tuesday, I hope it's nothing serious",
    "the interview at {job} went ok I think, they said they'd call back",
    "I'm planning a trip to the mountains next month with some friends",
    "I finally finished that book about the lighthouse keeper, the ending made me cry",
    "my favourite food is my grandmother's dumplings, nobody makes them like her",
    "I got the job at {job}! I start on the first of the month",
    "{sister} and I used to fight a lot as kids, but we're close now",
]
PAST = [
    "what did I tell you yesterday?",
    "do you remember my sister's name?",
    "do you remember what my pet is called?",
    "did I tell you about my interview last week?",
    "what was that book I mentioned before?",
    "remember what I said about my trip?",
]
ZH_SMALL = [
    "喵喵，今天好累啊",
    "你今天吃了什么呀？",
    "外面下雨了，好想睡觉",
    "我刚喝了一杯奶茶，好甜",
    "晚安啦，明天见",
    "今天天气真好，想出去走走",
]
ZH_FACTS = [
    "我下周要去面试，有点紧张",
    "我妹妹{sister}下个月过生日，我想给她买礼物",
    "我家的{pet}今天又把杯子打翻了",
    "我最近开始学做饭了，昨天做了番茄炒蛋",
]
ZH_PAST = ["你还记得我妹妹叫什么吗？", "我昨天跟你说了什么？", "你还记得我上次说的面试吗？"]


def make_users(count: int, rng: random.Random) -> list[User]:
    users = []
    for i in range(count):
        pet, kind = rng.choice(PETS)
        users.append(
            User(
                user_id=f"user-{i + 1}",
                name=NAMES[i % len(NAMES)] + ("" if i < len(NAMES) else str(i)),
                sister=rng.choice(SISTERS),
                pet=pet,
                pet_kind=kind,
                job=rng.choice(JOBS),
                city=rng.choice(CITIES),
            )
        )
    return users


def user_line(user: User, rng: random.Random, chinese: bool) -> tuple[str, str]:
    """(kind, text): kind is "past", "fact" or "small"."""
    roll = rng.random()
    kind = "past" if roll < PAST_RATE else "fact" if roll < PAST_RATE + FACT_RATE else "small"
    zh = chinese and rng.random() < CHINESE_RATE
    pools = {
        "past": ZH_PAST if zh else PAST,
        "fact": ZH_FACTS if zh else FACTS,
        "small": ZH_SMALL if zh else SMALL_TALK,
    }
    template = rng.choice(pools[kind])
    return kind, template.format(
        sister=user.sister, pet=user.pet, pet_kind=user.pet_kind, job=user.job, city=user.city
    )


# -- the model -------------------------------------------------------------------------------

EN_TEXT = (
    "that sounds really nice and I am glad you told me about it because I was wondering how "
    "your day went and honestly it makes me smile to hear from you again so tell me more about "
    "what happened next and how you felt when it was over and whether you want to do it again"
)
ZH_REPLY = [
    "喵~听起来真不错呢，",
    "主人今天辛苦啦，",
    "喵喵一直在等你哦，",
    "要记得好好吃饭喵，",
    "下次也要告诉喵喵哦，",
    "喵喵觉得你做得很好，",
    "尾巴都开心得摇起来了，",
]


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def _section(text: str, start: str, end: str) -> str:
    match = re.search(re.escape(start) + r"(.*?)" + (re.escape(end) if end else r"\Z"), text, re.S)
    return match.group(1).strip() if match else ""


def _unquoted(text: str) -> str:
    """A quoted string of a prompt (memory.quoting.quote) as it was; other text as it is."""
    if text.startswith('"'):
        try:
            value = json.loads(text)
        except ValueError:
            return text
        return value if isinstance(value, str) else text
    return text


def _words(text: str, limit: int) -> str:
    """At most `limit` words (a CJK character counting as one) of `text`, from its end."""
    words = text.split()
    return " ".join(words[-limit:])


class SimulatedModel(FakeOpenAI):
    """The fake server answering every chat completion by what the request asks for."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        self.rng = random.Random(seed)
        self.recall_rate = 0.5  # of questions about the past, the chat model searches memory
        self.dice_rate = 0.1  # of messages to a persona with dice, the chat model rolls
        self.tool_calls: dict[str, int] = {}  # chat replies that were a tool call, by tool
        # The prompt cache counts the tokens Kizuna estimates (bot.llm.tokens).
        self.tokenize = pieces
        # Whose conversation the chat calls are of (set while a user's message is answered),
        # the last chat prompt of each, and each chat call's figures as the cache saw them.
        self.speaker: str | None = None
        self._last: dict[str, list[str]] = {}
        self._asked: tuple[str, list[str]] | None = None
        self.chat_prompts: list[PromptSeen] = []

    async def _take(
        self, request: web.Request, script: Any
    ) -> tuple[dict[str, Any], Reply | None, web.Response | None]:
        body, reply, response = await super()._take(request, script)
        if response is None and reply is None and request.path.endswith("/chat/completions"):
            reply = self.answer(body)
        return body, reply, response

    def answer(self, body: dict[str, Any]) -> Reply:
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        system = _content(messages[0]) if messages and messages[0].get("role") == "system" else ""
        users = [_content(m) for m in messages if m.get("role") == "user"]
        last_user = users[-1] if users else ""
        tools = body.get("tools") or []
        tool_names = {t.get("function", {}).get("name") for t in tools if isinstance(t, dict)}
        prompt = sum(estimate_tokens(_content(m)) + MESSAGE_OVERHEAD for m in messages)
        prompt += estimate_tokens(json.dumps(tools)) if tools else 0
        if "A conversation you had has just ended" in system:
            return _usage(self.encoding(system, last_user), prompt)
        if "running summary" in system:
            return _usage(self.summary(last_user), prompt)
        if "Split the user's question" in system:
            words = [w for w in re.findall(r"\w+", last_user) if len(w) > 3][:6]
            queries = [" ".join(words[i : i + 2]) for i in range(0, len(words), 2)][:3]
            return _usage(json.dumps({"queries": queries or [last_user]}), prompt)
        if "update_state" in tool_names:
            return self.state(tools, last_user, prompt)
        if self.speaker is not None:  # a chat call of the conversation with `speaker`
            self._asked = self.speaker, prompt_tokens(body, self.tokenize)
        last = messages[-1] if messages else {}
        if (
            "recall_memory" in tool_names
            and last.get("role") == "user"
            and about_the_past(last_user)
            and self.rng.random() < self.recall_rate
        ):
            return self.call("recall_memory", {"query": last_user[:80]}, prompt)
        rolls = "dice" in tool_names and last.get("role") == "user"
        if rolls and self.rng.random() < self.dice_rate:
            return self.call("dice", {"notation": "d20", "mode": "advantage"}, prompt)
        return _usage(self.chat(system), prompt)

    def _cache(self, body: dict[str, Any]) -> int:
        cached = super()._cache(body)
        if self._asked is not None:
            speaker, tokens = self._asked
            self._asked = None
            before = self._last.get(speaker, [])
            same = next(
                (i for i, (a, b) in enumerate(zip(before, tokens, strict=False)) if a != b),
                min(len(before), len(tokens)),
            )
            self.chat_prompts.append(PromptSeen(len(tokens), same, cached))
            self._last[speaker] = tokens
        return cached

    def call(self, name: str, arguments: dict[str, Any], prompt: int) -> ToolCalls:
        self.tool_calls[name] = self.tool_calls.get(name, 0) + 1
        return _usage_calls(ToolCalls((FakeToolCall(name, arguments),)), prompt)

    def chat(self, system: str) -> str:
        tags = re.findall(r"\[([A-Z][A-Z0-9_]+)\]", _section(system, "emotion tag", "\n"))
        tag = self.rng.choice(tags) if tags else "NEUTRAL"
        if "Always reply in Chinese" in system:
            return f"[{tag}] " + "".join(self.rng.sample(ZH_REPLY, 4)) + "喵！"
        words = EN_TEXT.split()
        start = self.rng.randrange(len(words) - 35)
        return f"[{tag}] " + " ".join(words[start : start + self.rng.randint(22, 35)]) + "."

    def encoding(self, system: str, user: str) -> str:
        day = _section(system, "starting with the date ", ",")[:10]
        labels = re.findall(r"U\d+", _section(system, "from each user's label (", ")"))
        people = _section(user, "the names they went by):\n", "\n\nYour diary")
        names = {
            line.split(" ", 1)[0]: _unquoted(line.split(" ", 1)[1].split(", then ")[-1])
            for line in people.splitlines()
            if " " in line
        }
        diary = _unquoted(_section(user, "so far:\n", "\n\nWhat you knew of them:"))
        known = _section(user, "What you knew of them:\n", "\n\nThe conversation:")
        transcript = _section(user, "The conversation:\n", "")
        said = []
        for line in transcript.splitlines():
            match = re.match(r"\[\d\d:\d\d\] (U\d+): (\".*\")$", line)
            if match and match.group(1) in labels:
                said.append(_unquoted(match.group(2)))
        label = labels[0] if labels else ""
        who = names.get(label, "they")
        zh = "Write every text in Chinese" in system
        # The lines worth keeping: the longer statements (small talk and questions are not).
        worth = [s for s in said if len(s) >= 30 and not s.rstrip().endswith(("?", "？"))]
        worth = [s for s in worth if s not in SMALL_TALK and s not in ZH_SMALL]
        chosen = self.rng.sample(worth, min(len(worth), self.rng.randint(2, 3)))
        memories = []
        for text in chosen:
            weighty = re.search(r"birthday|interview|job|vet|allergic|生日|面试", text)
            memories.append(
                {
                    "text": f"{day}：{who}告诉喵喵：{text}"
                    if zh
                    else f"{day}: {who} told me {text}",
                    "category": "special" if weighty else "personal_daily",
                    "importance": 3 if weighty else 2,
                    "emotion": round(self.rng.uniform(-0.3, 0.7), 2),
                }
            )
        gist = "; ".join(s[:60] for s in said[:3]) or "small talk"
        page = "" if diary == "(empty)" else diary
        entry = (
            f"今天和{who}聊天了，{who}说起：{gist}。喵喵很开心。"
            if zh
            else f"Talked with {who} today. They told me about {gist}. I enjoyed it."
        )
        page = _words(f"{page} {entry}".strip(), 230)
        profiles = {}
        if chosen:
            old = "" if known == "(nothing yet)" else _unquoted(known.split(": ", 1)[-1])
            profiles[label] = f"{old} {' '.join(s[:80] for s in chosen)}".strip()[-1400:]
        recap = (
            f"{who}最后说：{said[-1][:80] if said else ''}"
            if zh
            else f"We left off with {who} saying: {said[-1][:80] if said else ''}"
        )
        # What is coming, as a model would read it (memory.encoding.intentions.spot is that
        # reading).
        noon = datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC) if day else START
        intentions, special_days = [], []
        for text in said:
            for spotted in spot(text, noon):
                item = {"user": label, "what": spotted.what}
                if spotted.kind == "special_day":
                    special_days.append({**item, "date": spotted.when})
                else:
                    intentions.append({**item, "kind": spotted.kind, "when": spotted.when})
        value = {
            "memories": memories,
            "diary": page,
            "profiles": profiles,
            "recap": recap,
            "intentions": intentions[:4],
            "special_days": special_days[:2],
        }
        return json.dumps(value, ensure_ascii=False)

    def summary(self, user: str) -> str:
        return "So far: " + _words(" ".join(user.split()), 120)

    def state(self, tools: list[Any], user: str, prompt: int) -> Reply:
        if self.rng.random() < 0.3:
            return _usage("no change", prompt)
        current = dict(
            line.split(": ", 1)
            for line in _section(user, "Current notes:\n", "\n\nLatest exchange:").splitlines()
            if ": " in line
        )
        exchange = " ".join(_section(user, "Latest exchange:\n", "").split())
        properties: dict[str, Any] = next(
            (
                t["function"].get("parameters", {}).get("properties", {})
                for t in tools
                if t.get("function", {}).get("name") == "update_state"
            ),
            {},
        )
        arguments = {}
        for name in properties:
            old = current.get(name, "(empty)")
            old = "" if old == "(empty)" else _unquoted(old)
            arguments[name] = _words(f"{old} {exchange[:200]}".strip(), 250)
        return _usage_calls(ToolCalls((FakeToolCall("update_state", arguments),)), prompt)


def _usage(text: str, prompt: int) -> Text:
    return Text(text, usage=(prompt, estimate_tokens(text)))


def _usage_calls(reply: ToolCalls, prompt: int) -> ToolCalls:
    args = sum(
        estimate_tokens(c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments))
        for c in reply.calls
    )
    return ToolCalls(reply.calls, text=reply.text, usage=(prompt, args + 5 * len(reply.calls)))


# -- the simulation --------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class PromptSeen:
    """A chat prompt as a prompt cache sees it, in tokens: its length, how much of it begins
    as the previous chat prompt of the same conversation began, and how much a 1,024-token /
    128-step cache of every earlier prompt reused."""

    tokens: int
    same: int
    cached: int


@dataclass(slots=True)
class DayRow:
    day: int
    messages: int
    new: int
    forgotten: int
    kept: int


@dataclass(slots=True)
class Result:
    persona: str
    messages: int
    kinds: dict[str, int]
    usage: dict[str, TierUsage]
    purposes: dict[str, TierUsage]
    memory_tokens: list[int]
    shown: list[int] = field(default_factory=list)  # memories in each chat prompt
    errors: dict[str, int] = field(default_factory=dict)  # logged errors, by message
    days: list[DayRow] = field(default_factory=list)
    conversations: int = 0
    tool_calls: dict[str, int] = field(default_factory=dict)  # chat replies calling a tool
    seconds: float = 0.0
    users: int = 0
    weeks: float = 1.0
    unsolicited: int = 0  # messages the persona wrote first
    prompts: list[PromptSeen] = field(default_factory=list)  # the chat prompts, in order


def _pct(values: list[int], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))])


async def _open(
    fake: FakeOpenAI,
    data_dir: Path,
    personas: dict[str, Persona],
    clock: FakeClock,
    seed: int,
    settings: EngineConfig,
    speech: TierConfig | None = None,
) -> Runtime:
    """A Telegram runtime of `personas` whose every tier is `fake`."""
    provider = ProviderConfig(kind="openai", base_url=fake.base_url, api_key_env="FAKE_KEY")
    config = Config(
        data_dir=str(data_dir),
        models=ModelsConfig(providers={"fake": provider}, speech=speech),
        engine=settings,
    )
    return await open_runtime(
        config,
        personas,
        {"FAKE_KEY": "k"},
        platforms=Platforms([TELEGRAM]),
        clock=clock,
        seed=seed,
        probe=_no_ollama,
    )


async def _no_ollama(host: str) -> list[str]:
    return []


async def _memory_counts(runtime: Runtime) -> int:
    store = runtime.bank.store
    return sum([await store.count_memories(scope) for scope in await store.scopes()])


def _plan_day(
    day_start: datetime, users: list[User], rng: random.Random
) -> list[tuple[datetime, User, int]]:
    """(start, user, messages) of the day's conversations: a user's first in the morning or
    early afternoon, a second (half the days) in the evening, so they never run together."""
    plan = []
    for user in users:
        windows = [(7 * 60, 14 * 60)]
        if rng.random() < 0.5:
            windows.append((15 * 60, 23 * 60))
        for low, high in windows:
            start = day_start + timedelta(minutes=rng.randrange(low, high))
            plan.append((start, user, rng.randint(4, 10)))
    return sorted(plan, key=lambda p: (p[0], p[1].user_id))


async def simulate(
    persona_name: str, users_count: int, days: int, seed: int, data_dir: Path
) -> Result:
    rng = random.Random(seed)
    model = SimulatedModel(seed)
    async with model as fake:
        personas = load_personas(PersonaLibrary.default(Path.cwd()), [persona_name])
        key = next(iter(personas))
        persona = personas[key]
        clock = FakeClock(START)
        settings = EngineConfig(timezone="UTC")
        runtime = await _open(fake, data_dir, personas, clock, seed, settings)
        sizes: list[int] = []

        def measured(*args: Any, **kwargs: Any) -> tuple[str, list[int]]:
            section, shown = memory_section(*args, **kwargs)
            sizes.append(estimate_tokens(section))
            result.shown.append(len(shown))
            return section, shown

        kinds = {"small": 0, "fact": 0, "past": 0}
        result = Result(key, 0, kinds, {}, {}, sizes)
        patcher = patch("bot.turn.recall.memory_section", measured)  # recall imports it by name
        patcher.start()
        errors = _ErrorCounter(result.errors)
        logging.getLogger().addHandler(errors)
        users = make_users(users_count, rng)
        chinese = persona.identity.language.startswith("zh")
        idle = runtime.engine.idle_time(key, "telegram:dm:cost")
        courier = RecordingCourier(personas=(key,))
        runtime.outreach.add(courier)
        started = time.perf_counter()
        try:
            engine, scheduler = runtime.engine, runtime.scheduler

            async def housekeeping() -> None:
                """A scheduler round, and the outreach round it began (if it did) done before
                the clock moves on, as the rounds once waited for it."""
                await scheduler.tick()
                if scheduler.writing is not None:
                    await asyncio.wait({scheduler.writing})

            kept_before = 0
            for day in range(days):
                day_start = START + timedelta(days=day)
                plan = _plan_day(day_start, users, rng)
                # Every message (1), a tick once each conversation has gone idle (0), and
                # each hour's look for messages to write first (2).
                events: list[tuple[datetime, int, User | None]] = []
                for start, user, count in plan:
                    at = start
                    for _ in range(count):
                        events.append((at, 1, user))
                        at += timedelta(seconds=rng.randint(20, 60))
                    events.append((at + idle + timedelta(minutes=1), 0, None))
                events.append((day_start + timedelta(hours=4, minutes=5), 0, None))
                # The persona's messages written first: looked for every hour.
                events.extend((day_start + timedelta(hours=h), 2, None) for h in range(24))
                events.sort(key=lambda e: (e[0], e[1]))
                messages_today = 0
                for at, what, speaker in events:
                    if at > clock.now():
                        clock.advance(at - clock.now())
                    if what == 2:
                        await runtime.outreach.tick()
                        continue
                    if what == 0 or speaker is None:
                        await housekeeping()
                        continue
                    kind, text = user_line(speaker, rng, chinese)
                    kinds[kind] += 1
                    messages_today += 1
                    await housekeeping()  # the snapshot and idle check of a live host
                    model.speaker = speaker.user_id
                    await engine.handle(
                        _private(key, speaker, text, clock.now(), f"bench-{speaker.user_id}")
                    )
                    model.speaker = None
                    await engine.drain()  # state updates and compression after the reply
                result.messages += messages_today
                result.conversations += len(plan)
                end_of_day = day_start + timedelta(hours=23, minutes=59)
                if end_of_day > clock.now():
                    clock.advance(end_of_day - clock.now())
                await housekeeping()
                kept = await _memory_counts(runtime)
                pruned = await runtime.bank.store.pruned_since(day_start, limit=1_000_000)
                forgotten = len(pruned)
                new = kept - kept_before + forgotten
                result.days.append(DayRow(day + 1, messages_today, new, forgotten, kept))
                kept_before = kept
            models = engine.models
            result.usage = {t: _copy(u) for t, u in models.usage.items()}
            result.purposes = {p: _copy(u) for p, u in models.purposes.items()}
            result.tool_calls = dict(model.tool_calls)
            result.prompts = list(model.chat_prompts)
            result.users, result.weeks = users_count, days / 7
            result.unsolicited = len(courier.sent)
            result.seconds = time.perf_counter() - started
        finally:
            patcher.stop()
            await runtime.close()
            logging.getLogger().removeHandler(errors)
    return result


MEDIA_TIERS = ("vision", "hearing", "speech")
VOICE_NOTE = b"OggS\x00\x02" + bytes(12_000)  # about 4 s of Opus, as a voice note's size


async def media_share(
    persona_name: str, users_count: int, per_user: int, seed: int, data_dir: Path
) -> dict[str, Any]:
    """Each user's `per_user` messages through the front, every fifth a photo and every
    fifth (offset) a voice note; the persona answers voice notes aloud. Returns the media
    tiers' figures per message (and every call per message of this workload)."""
    rng = random.Random(seed)
    async with SimulatedModel(seed) as fake:
        personas = load_personas(PersonaLibrary.default(Path.cwd()), [persona_name])
        key = next(iter(personas))
        personas[key].voice.speak = "when_spoken_to"
        clock = FakeClock(START)
        settings = EngineConfig(timezone="UTC", burst_seconds=0)
        # (The fake is not OpenAI's own endpoint: its speech model is named.)
        speech = TierConfig(model="gpt-4o-mini-tts")
        runtime = await _open(fake, data_dir, personas, clock, seed, settings, speech)
        front = Front(runtime.engine, runtime.services, "bench", key)
        chinese = personas[key].identity.language.startswith("zh")
        photo = make_picture(800, 600, (90, 140, 200), format="JPEG")
        messages = 0
        try:
            for user in make_users(users_count, rng):
                for n in range(per_user):
                    clock.advance(timedelta(seconds=rng.randint(20, 60)))
                    _, text = user_line(user, rng, chinese)
                    attachments: tuple[Attachment, ...] = ()
                    if n % 5 == 2:
                        attachments = (_attached("photo.jpg", "image/jpeg", photo),)
                    elif n % 5 == 4:
                        attachments = (_attached("voice note.ogg", "audio/ogg", VOICE_NOTE),)
                        text = ""
                    channel = f"media-{user.user_id}"
                    event = _private(key, user, text, clock.now(), channel, attachments)
                    await front.receive(replace(event, message_id=f"{user.user_id}-{n}"))
                    messages += 1
                    await runtime.engine.drain()
            usage = runtime.engine.models.usage
        finally:
            await runtime.close()
    m = max(messages, 1)
    figures: dict[str, Any] = {"messages": messages}
    for tier in MEDIA_TIERS:
        u = usage[tier]
        figures[tier] = {
            "calls_per_message": round(u.calls / m, 3),
            "failures": u.failures,
            "images_per_message": round(u.images / m, 3),
            "recordings_per_message": round(u.recordings / m, 3),
            "audio_bytes_per_message": round(u.audio_bytes / m),
            "characters_per_message": round(u.characters / m, 1),
        }
    figures["calls_per_message"] = round(sum(u.calls for u in usage.values()) / m, 3)
    return figures


def _private(
    persona: str,
    user: User,
    text: str,
    when: datetime,
    channel: str,
    attachments: tuple[Attachment, ...] = (),
) -> ChatEvent:
    """A Telegram private message of `user`'s to `persona`."""
    return ChatEvent(
        platform="telegram",
        bot_id="bench",
        persona=persona,
        chat_id="",
        channel_id=channel,
        user_id=user.user_id,
        user_name=user.name,
        is_dm=True,
        text=text,
        timestamp=when,
        attachments=attachments,
    )


def _attached(name: str, kind: str, data: bytes) -> Attachment:
    async def fetch() -> bytes:
        return data

    return Attachment(name, f"telegram-file:{name}", kind, len(data), fetch)


def report_media(persona: str, figures: dict[str, Any]) -> None:
    print(
        f"\nMedia share ({persona}: {figures['messages']} messages through the front, one in "
        "five a photo, one in five a voice note answered aloud; a run of its own):"
    )
    print("| tier | calls/msg | images/msg | recordings/msg | audio bytes/msg | characters/msg |")
    print("|---|---:|---:|---:|---:|---:|")
    for tier in MEDIA_TIERS:
        f = figures[tier]
        print(
            f"| {tier} | {f['calls_per_message']:.3f} | {f['images_per_message']:.3f} "
            f"| {f['recordings_per_message']:.3f} | {f['audio_bytes_per_message']} "
            f"| {f['characters_per_message']:.1f} |"
        )
    print(f"All calls per message of this workload: {figures['calls_per_message']}")


class _ErrorCounter(logging.Handler):
    """Counts the errors Kizuna logs (by message and exception) instead of printing them."""

    def __init__(self, counts: dict[str, int]) -> None:
        super().__init__(logging.ERROR)
        self.counts = counts

    def emit(self, record: logging.LogRecord) -> None:
        what = re.sub(r"\d+", "N", record.getMessage())
        if record.exc_info and record.exc_info[1] is not None:
            what += f" ({type(record.exc_info[1]).__name__}: {record.exc_info[1]})"
        self.counts[what] = self.counts.get(what, 0) + 1


def _copy(usage: TierUsage) -> TierUsage:
    return replace(usage)


# -- the report ------------------------------------------------------------------------------


def _table(title: str, rows: dict[str, TierUsage], messages: int, order: tuple[str, ...]) -> None:
    print(f"\n{title}")
    print("| | calls/msg | prompt tok/msg | completion tok/msg | tokens/msg | failures |")
    print("|---|---:|---:|---:|---:|---:|")
    names = [*order, *sorted(set(rows) - set(order))]
    total = TierUsage()
    for name in names:
        u = rows.get(name, TierUsage())
        for attr in ("calls", "failures", "prompt_tokens", "completion_tokens"):
            setattr(total, attr, getattr(total, attr) + getattr(u, attr))
        note = " (in encoding)" if name == "diary" else ""
        print(
            f"| {name}{note} | {u.calls / messages:.3f} | {u.prompt_tokens / messages:.0f} "
            f"| {u.completion_tokens / messages:.0f} "
            f"| {(u.prompt_tokens + u.completion_tokens) / messages:.0f} | {u.failures} |"
        )
    print(
        f"| **total** | {total.calls / messages:.3f} | {total.prompt_tokens / messages:.0f} "
        f"| {total.completion_tokens / messages:.0f} "
        f"| {(total.prompt_tokens + total.completion_tokens) / messages:.0f} "
        f"| {total.failures} |"
    )


def cache_figures(r: Result) -> dict[str, float]:
    """What a provider's prompt cache makes of the chat prompts: the mean share of each that
    begins as the previous chat prompt of its conversation began, the mean share a 1,024-token
    / 128-step cache reused (all of them, and those over 2,000 tokens), and the month's price
    of every call without and with the cache (PRICE_*; cached input at half the price and at a
    tenth)."""
    prompts, long = r.prompts, [p for p in r.prompts if p.tokens > 2000]
    prompt = sum(u.prompt_tokens for u in r.usage.values())
    cached = sum(u.cached_tokens for u in r.usage.values())
    completion = sum(u.completion_tokens for u in r.usage.values())
    plain = (prompt * PRICE_INPUT + completion * PRICE_OUTPUT) / 1e6

    def saved(price: float) -> float:
        return cached * (PRICE_INPUT - price) / 1e6

    def share(of: list[PromptSeen], part: str) -> float:
        return round(statistics.fmean(getattr(p, part) / p.tokens for p in of), 3) if of else 0.0

    return {
        "chat_prompt_tokens": round(statistics.fmean(p.tokens for p in prompts)) if prompts else 0,
        "prefix_share": share(prompts, "same"),
        "cached_share": share(prompts, "cached"),
        "cached_share_over_2000": share(long, "cached"),
        "prompts_over_2000": len(long),
        "cached_tokens_per_message": round(cached / max(r.messages, 1), 1),
        "month_usd": round(plain, 4),
        "month_usd_cached": round(plain - saved(PRICE_CACHED), 4),
        "month_usd_cached_tenth": round(plain - saved(PRICE_CACHED_TENTH), 4),
    }


def headline(r: Result) -> dict[str, float]:
    calls = sum(u.calls for u in r.usage.values())
    tokens = sum(u.prompt_tokens + u.completion_tokens for u in r.usage.values())
    return {
        "calls_per_message": round(calls / max(r.messages, 1), 3),
        "tokens_per_message": round(tokens / max(r.messages, 1), 1),
        "memory_block_tokens_p95": _pct(r.memory_tokens, 95),
        "tool_calls_per_message": round(sum(r.tool_calls.values()) / max(r.messages, 1), 3),
        "unsolicited_per_user_per_week": round(r.unsolicited / max(r.users, 1) / r.weeks, 3),
        "outreach_calls_per_user_per_week": round(
            r.purposes.get("outreach", TierUsage()).calls / max(r.users, 1) / r.weeks, 3
        ),
        "cached_share": cache_figures(r)["cached_share"],
    }


def report(r: Result, every: int) -> None:
    m = max(r.messages, 1)
    print(
        f"\n## {r.persona}: {r.messages} user messages in {r.conversations} conversations "
        f"({r.kinds['small']} small talk, {r.kinds['fact']} facts, {r.kinds['past']} about "
        f"the past), {r.seconds:.1f} s"
    )
    _table("By tier:", r.usage, m, ("chat", "tools", "summary", "intent"))
    _table("By purpose:", r.purposes, m, PURPOSES)
    calls = ", ".join(f"{n} {c / m:.3f}" for n, c in sorted(r.tool_calls.items())) or "none"
    print(
        f"Tool calls per message: {calls}; each is another chat round (at most 3 a turn). The "
        "fake calls recall_memory for half the questions about the past, dice (where the "
        "persona has it) for a tenth of the messages."
    )
    h = headline(r)
    print(
        f"Written first (bot.outreach): {r.unsolicited} messages, "
        f"{h['unsolicited_per_user_per_week']} per user per week, "
        f"{h['outreach_calls_per_user_per_week']} chat calls per user per week"
    )
    sizes = r.memory_tokens
    shown = [s for s in sizes if s]
    print(
        f"\nMemory block (tokens, over {len(sizes)} chat prompts; {len(shown)} not empty): "
        f"p50 {_pct(sizes, 50):.0f}, p95 {_pct(sizes, 95):.0f}, max {max(sizes, default=0)}, "
        f"mean {statistics.fmean(sizes) if sizes else 0:.0f}"
    )
    print(
        f"Memories shown per chat prompt: mean {statistics.fmean(r.shown) if r.shown else 0:.1f}"
        f", p95 {_pct(r.shown, 95):.0f} (each one is reinforced)"
    )
    print("\nMemories per day (new = written by encoding, after merges):")
    print("| day | messages | new | forgotten | kept at day end |")
    print("|---:|---:|---:|---:|---:|")
    for row in r.days:
        if row.day == 1 or row.day % every == 0 or row.day == len(r.days):
            print(f"| {row.day} | {row.messages} | {row.new} | {row.forgotten} | {row.kept} |")
    print(
        f"| all | {sum(d.messages for d in r.days)} | {sum(d.new for d in r.days)} "
        f"| {sum(d.forgotten for d in r.days)} | {r.days[-1].kept if r.days else 0} |"
    )
    c = cache_figures(r)
    print(
        f"\nPrompt cache ({len(r.prompts)} chat prompts, mean {c['chat_prompt_tokens']} tokens): "
        f"{c['prefix_share']:.1%} of each begins as the conversation's previous chat prompt did; "
        f"a 1,024-token / 128-step cache reuses {c['cached_share']:.1%} of each "
        f"({c['cached_share_over_2000']:.1%} of the {c['prompts_over_2000']} over 2,000 "
        f"tokens), {c['cached_tokens_per_message']:.0f} tokens a message. The month at "
        f"${PRICE_INPUT}/${PRICE_CACHED}/${PRICE_OUTPUT} a million tokens (input, cached input, "
        f"output: gpt-4o-mini): ${c['month_usd']:.4f} without the cache, "
        f"${c['month_usd_cached']:.4f} with it (${c['month_usd_cached_tenth']:.4f} where cached "
        f"input costs a tenth, ${PRICE_CACHED_TENTH:.3f})"
    )
    for what, count in sorted(r.errors.items(), key=lambda e: -e[1]):
        print(f"Logged error, {count} times: {what}")
    plain = r.persona in DEFAULT_PERSONAS
    calls_ok = h["calls_per_message"] <= TARGET_CALLS
    cached_ok = (
        c["cached_share"] >= TARGET_CACHED and c["cached_share_over_2000"] >= TARGET_CACHED_LONG
    )
    memory_ok = h["memory_block_tokens_p95"] <= TARGET_MEMORY_TOKENS
    if plain:
        print(
            f"\nTarget (default configuration): calls/msg {h['calls_per_message']} "
            f"<= {TARGET_CALLS}: {'ok' if calls_ok else 'MISSED'}; memory block p95 "
            f"{h['memory_block_tokens_p95']:.0f} <= {TARGET_MEMORY_TOKENS}: "
            f"{'ok' if memory_ok else 'MISSED'}; prompt cache {c['cached_share']:.3f} >= "
            f"{TARGET_CACHED} ({c['cached_share_over_2000']:.3f} >= {TARGET_CACHED_LONG} over "
            f"2,000 tokens): {'ok' if cached_ok else 'MISSED'}"
        )
        extra = sorted(set(r.purposes) & {"intent", "emotion", "cue"})
        if extra:
            print(f"Calls beyond chat/encoding on this persona's path: {', '.join(extra)}")
    else:
        print(
            "\n(Not a default-configuration persona: its state slots cost a state call per "
            "message by design; the 1.2 calls target does not apply.)"
        )


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--users", type=int, default=5)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--persona", default="miao")
    parser.add_argument("--all", action="store_true", help="miao, monikai and dungeon_master")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--every", type=int, default=5, help="show every Nth day's memories")
    parser.add_argument(
        "--media-messages", type=int, default=20, help="per user, in the media share's run"
    )
    args = parser.parse_args()
    os.environ["NO_PROXY"] = ",".join(
        p for p in (os.environ.get("NO_PROXY", ""), "127.0.0.1", "localhost") if p
    )
    os.environ["no_proxy"] = os.environ["NO_PROXY"]
    names = ["miao", "monikai", "dungeon_master"] if args.all else [args.persona]
    if args.persona not in names:
        names.insert(0, args.persona)
    print(f"{args.users} users, {args.days} days, fake model server, seed {args.seed}")
    results: dict[str, Result] = {}
    for name in names:
        with tempfile.TemporaryDirectory() as tmp:
            results[name] = await simulate(name, args.users, args.days, args.seed, Path(tmp))
        report(results[name], args.every)
    with tempfile.TemporaryDirectory() as tmp:
        media = await media_share(
            args.persona, args.users, args.media_messages, args.seed, Path(tmp)
        )
    report_media(args.persona, media)
    print(json.dumps({**headline(results[args.persona]), "media": media}))


if __name__ == "__main__":
    asyncio.run(main())
