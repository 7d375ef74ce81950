"""A busy group, simulated: does the persona behave like a good member of it, at what cost?

    PYTHONPATH=. python benchmarks/group.py [--days 7] [--per-day 2000] [--members 20] [--seed 7]
        [--room 500]

One Discord channel, `--members` people (two of them share a display name, three change theirs
midweek), `--per-day` messages a day between 08:00 and 24:00 for `--days` days, and two personas,
each its own bot hearing everything in the channel: Monikai (user-scoped, may join in uninvited:
talkativeness 0.05, cool-down 5 minutes, at most 4 messages a minute) and a dungeon master
(channel-scoped, `listen` mode: remembers everything, speaks when addressed). The talk is scripted
and seeded: mostly people talking among themselves (each line holds a fact about its speaker with a
token unique to them), mentions of either persona, its name called ("Kai, ..."), and bursts (one
person typing in two to four pieces a second apart, some of them addressed). Everything runs through
the real engine (bot.groups.floor, bot.turn.settle, sessions, the store, the encoder) on a fake
clock, with the offline model, whose encoder writes "NAME told me: ..." memories by the transcript's
labels. Each night the quiet conversations close and are encoded.

Then personas in one room (bot.groups.relay), `--room` messages: the same two personas, both allowed
to answer each other (`persona_exchanges` 2), each seated in the channel and hearing the other's
replies through the engine's relay, each person's message calling one of them by name, and a model
whose every reply names the other persona: the worst case for a loop between them.

Figures (last line JSON): model calls per human message (every tier: replies, encoding,
summaries); of the messages that address a persona, the share answered (a reply from it within
a burst's longest wait); of the others, the share it answered uninvited; bursts addressed to a
persona and the replies they got (one each is the target); the most replies a persona gave in
one minute; and attribution: of the memories the encoder wrote and the transcripts it read,
the share whose speaker id is the member whose token the text holds. Under "room": calls per
person's message, the share of them answered by the persona they called, the replies between
personas, and the longest run of those after one person's message (never past the bound).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.chat_model import Completion, Message
from bot.config import TIERS, EngineConfig
from bot.events import Addressed, ChatEvent, Reply
from bot.llm.offline import OfflineChatModel
from bot.llm.router import ModelRouter
from bot.persona.file import GroupPolicy
from bot.prompts import parse_emotion
from memory.clock import FakeClock
from tests.fakes.factories import Bot, make_event, make_persona, open_bot

CHANNEL = "c1"
SETTINGS = EngineConfig(timezone="UTC", burst_seconds=2.0, burst_longest_seconds=8.0)
ANSWERED_WITHIN = timedelta(seconds=SETTINGS.burst_longest_seconds + 2)
THINGS = ["kayak", "violin", "garden", "bicycle", "camera", "aquarium", "telescope", "loom"]


@dataclass(slots=True)
class Said:
    """One human message of the script."""

    at: datetime
    member: int
    text: str
    to: str = ""  # the persona it addresses ("" none)
    how: Addressed | None = None  # "mention", or None when by name / a follow-up
    burst: int = 0  # the burst it belongs to (0 none)


@dataclass(slots=True)
class Result:
    persona: str
    said: Said
    task: asyncio.Task[Reply]


def script(
    rng: random.Random, days: int, per_day: int, members: int, start: datetime
) -> list[Said]:
    """The week's talk, in order of time."""
    said: list[Said] = []
    bursts = 0
    for day in range(days):
        t = start + timedelta(days=day, hours=8)
        end = start + timedelta(days=day, hours=24)
        gap = 16 * 3600 / per_day
        count = 0
        while count < per_day and t < end:
            t += timedelta(seconds=rng.expovariate(1 / gap))
            who = rng.randrange(members)
            token = f"{THINGS[who % len(THINGS)]}-{who}-{count}-{day}"
            roll = rng.random()
            if roll < 0.04:
                said.append(
                    Said(
                        t, who, f"I just bought a {token}, what do you think?", "monikai", "mention"
                    )
                )
            elif roll < 0.06:
                said.append(
                    Said(t, who, f"I roll to open the chest with my {token}", "dm", "mention")
                )
            elif roll < 0.09:
                said.append(
                    Said(t, who, f"Kai, I named my {token} after you. Do you like it?", "monikai")
                )
            elif roll < 0.10:
                said.append(
                    Said(t, who, f"Dungeon Master, my character wields a {token}. Can I?", "dm")
                )
            elif roll < 0.20:  # a burst: typed in pieces
                bursts += 1
                to = rng.choice(["", "", "monikai"])
                pieces = rng.randint(2, 4)
                for n in range(pieces):
                    text = f"and my {token} piece {n}" if n else f"so I fixed my {token}"
                    if to and n == pieces - 1:
                        text = f"Kai, what do you say about my {token}?"
                    said.append(
                        Said(t, who, text, to if to and n == pieces - 1 else "", None, bursts)
                    )
                    t += timedelta(seconds=rng.uniform(0.4, 1.2))
                count += pieces - 1
            else:
                said.append(Said(t, who, f"I keep my {token} in the shed these days"))
            count += 1
    return said


def name_of(member: int, at: datetime, renamed_from: datetime) -> str:
    if member in (1, 2):
        return "Alex"  # two people, one name
    if member in (3, 4, 5) and at >= renamed_from:
        return f"Member {member} (new name)"
    return f"Member {member}"


async def run(days: int, per_day: int, members: int, seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    kai = make_persona("monikai", name="Monikai", nickname="Kai", scope="user")
    kai.group = GroupPolicy(talkativeness=0.05, cooldown_seconds=300, max_per_minute=4)
    dm = make_persona("dm", name="Dungeon Master", nickname="DM", scope="channel")
    dm.group = GroupPolicy(mode="listen")
    clock = FakeClock()
    start = clock.now().replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    lines = script(rng, days, per_day, members, start)
    author = {s.text: s.member for s in lines}
    router = ModelRouter(dict.fromkeys(TIERS, OfflineChatModel("offline")))
    with tempfile.TemporaryDirectory() as folder:
        bot = await open_bot(
            Path(folder) / "k.sqlite3", [kai, dm], clock=clock, settings=SETTINGS, router=router
        )
        try:
            started = time.perf_counter()
            results = await play(bot, lines, start, days)
            elapsed = time.perf_counter() - started
            attribution = await attributed(bot, author)
        finally:
            await bot.close()
    figures = measure(lines, results, router, kai.group)
    figures |= {"attribution": attribution, "seconds": round(elapsed, 1)}
    return figures


async def play(bot: Bot, lines: list[Said], start: datetime, days: int) -> list[Result]:
    timer = bot.timer
    assert timer is not None
    results: list[Result] = []
    pending: list[asyncio.Task[Reply]] = []
    night = start + timedelta(days=1)
    renamed_from = start + timedelta(days=days / 2)
    for n, said in enumerate(lines):
        if said.at >= night:
            await settle(bot, pending, night + timedelta(hours=7) - bot.clock.now())
            night += timedelta(days=1)
        ahead = (said.at - bot.clock.now()).total_seconds()
        if ahead > 0:
            await timer.advance(ahead)
            pending[:] = await quiesce(bot, pending)
        for persona in ("monikai", "dm"):
            addressed: frozenset[Addressed] = frozenset()
            if said.to == persona and said.how is not None:
                addressed = frozenset((said.how,))
            event = make_event(
                said.text,
                persona=persona,
                user_id=f"m{said.member}",
                user_name=name_of(said.member, said.at, renamed_from),
                is_dm=False,
                channel_id=CHANNEL,
                timestamp=said.at,
                message_id=f"{n}",
                bot_id=f"bot-{persona}",
                addressed=addressed,
            )
            task = asyncio.create_task(bot.engine.handle(event, settle=True))
            pending.append(task)
            results.append(Result(persona, said, task))
        pending[:] = await quiesce(bot, pending)
    await settle(bot, pending, timedelta(hours=9))
    return results


async def quiesce(bot: Bot, pending: list[asyncio.Task[Reply]]) -> list[asyncio.Task[Reply]]:
    """Let every turn the clock woke run until it is done or waits for the clock again (a
    burst's window): in real time a turn takes milliseconds, long before the next message, and
    its saves go through the store's thread, which a fake clock does not wait for."""
    assert bot.timer is not None
    live = [t for t in pending if not t.done()]
    for _ in range(5000):
        if len(live) <= bot.timer.sleeping:
            break
        await asyncio.sleep(0.0005)
        live = [t for t in live if not t.done()]
    return live


async def settle(bot: Bot, pending: list[asyncio.Task[Reply]], quiet: timedelta) -> None:
    """The night: every burst's wait ends, every turn finishes, quiet conversations close and
    are encoded."""
    assert bot.timer is not None
    for _ in range(3):
        await bot.timer.advance(SETTINGS.burst_longest_seconds + 1)
    await asyncio.gather(*pending)
    pending.clear()
    await bot.timer.advance(max(quiet.total_seconds(), 0))
    await bot.sessions.close_idle(bot.engine.idle_time)
    while await bot.lifecycle.encode_pending():
        pass


def measure(
    lines: list[Said], results: list[Result], router: ModelRouter, policy: GroupPolicy
) -> dict[str, object]:
    replies: dict[str, list[datetime]] = defaultdict(list)
    # Monikai is user-scoped: each member's talk with it is a conversation of its own.
    to_member: dict[int, list[datetime]] = defaultdict(list)
    for result in results:
        if result.task.result().text:
            replies[result.persona].append(result.said.at)
            if result.persona == "monikai":
                to_member[result.said.member].append(result.said.at)
    for times in [*replies.values(), *to_member.values()]:
        times.sort()

    def answered(persona: str, at: datetime) -> bool:
        times = replies[persona]
        return any(at <= t <= at + ANSWERED_WITHIN for t in times)

    addressed = [(s.to, s) for s in lines if s.to]
    answered_share = sum(answered(to, s.at) for to, s in addressed) / max(len(addressed), 1)
    calls = sum(u.calls for u in router.usage.values())
    # Replies not within a burst's wait of an addressed message: joined in uninvited.
    asked = defaultdict(list)
    for to, s in addressed:
        asked[to].append(s.at)
    uninvited = [
        t
        for t in replies["monikai"]
        if not any(a <= t <= a + ANSWERED_WITHIN for a in asked["monikai"])
    ]
    unaddressed = sum(1 for s in lines if s.to != "monikai")
    by_burst: dict[int, list[Said]] = defaultdict(list)
    for s in lines:
        if s.burst:
            by_burst[s.burst].append(s)
    burst_replies = []
    for pieces in by_burst.values():
        if any(p.to == "monikai" for p in pieces):  # (the script addresses bursts to it only)
            first, last = pieces[0].at, pieces[-1].at + ANSWERED_WITHIN
            said_to = to_member[pieces[0].member]
            burst_replies.append(sum(1 for t in said_to if first <= t <= last))
    peak = max(
        (
            sum(1 for u in times if t <= u < t + timedelta(minutes=1))
            for times in replies.values()
            for t in times
        ),
        default=0,
    )
    peak_uninvited = max(
        (sum(1 for u in uninvited if t <= u < t + timedelta(minutes=1)) for t in uninvited),
        default=0,
    )
    return {
        "messages": len(lines),
        "calls": calls,
        "calls_per_message": round(calls / max(len(lines), 1), 3),
        "calls_by_purpose": {p: u.calls for p, u in sorted(router.purposes.items())},
        "addressed": len(addressed),
        "addressed_answered": round(answered_share, 4),
        "uninvited_answers": len(uninvited),
        "uninvited_share": round(len(uninvited) / max(unaddressed, 1), 4),
        "talkativeness": policy.talkativeness,
        "bursts_addressed": len(burst_replies),
        "bursts_one_reply": round(
            sum(r == 1 for r in burst_replies) / max(len(burst_replies), 1), 4
        ),
        "peak_replies_per_minute": peak,
        "peak_uninvited_per_minute": peak_uninvited,
        "max_per_minute": policy.max_per_minute,
    }


async def attributed(bot: Bot, author: dict[str, int]) -> dict[str, object]:
    """Memories and encoded transcripts whose speaker id is the member whose token the text
    holds (a token: the thing, the member's number, the line's number and day)."""
    by_token = {}
    for text, member in author.items():
        for word in text.replace("?", " ").replace(",", " ").split():
            if word.count("-") == 3:
                by_token[word] = member
    checked = right = 0
    lines_checked = lines_right = 0
    conversations: set[int] = set()
    for scope in await bot.store.scopes():
        for memory in await bot.store.list_memories(scope):
            if memory.conversation_id is not None:
                conversations.add(memory.conversation_id)
            tokens = [w.strip(".,!?\"'") for w in memory.text.split()]
            owners = {by_token[t] for t in tokens if t in by_token}
            if len(owners) == 1:
                checked += 1
                right += memory.speaker_id == f"m{owners.pop()}"
    for conversation_id in sorted(conversations):
        archived = await bot.store.conversation(conversation_id)
        for turn in archived.turns if archived else []:
            if turn.get("role") != "user":
                continue
            owners = {by_token[w] for w in str(turn.get("text", "")).split() if w in by_token}
            if len(owners) == 1:
                lines_checked += 1
                lines_right += turn.get("user_id") == f"m{owners.pop()}"
    return {
        "memories_checked": checked,
        "memories_right": round(right / max(checked, 1), 4),
        "transcript_lines_checked": lines_checked,
        "transcript_lines_right": round(lines_right / max(lines_checked, 1), 4),
    }


class Naming:
    """The offline model, whose every chat reply begins with the other persona's name (the
    persona is told by its system prompt's "You are NAME")."""

    def __init__(self, inner: OfflineChatModel, others: dict[str, str]) -> None:
        self.inner = inner
        self.others = others  # a persona's name -> the name it calls the other by

    @property
    def name(self) -> str:
        return self.inner.name

    async def complete(
        self, messages: Sequence[Message], *, json_mode: bool = False, **options: Any
    ) -> Completion:
        """The offline model's reply, the other persona's name first; `options` go to it."""
        done = await self.inner.complete(messages, json_mode=json_mode, **options)
        system = messages[0].content if messages else ""
        other = next((o for me, o in self.others.items() if f"You are {me}" in system), None)
        if json_mode or other is None or done.tool_calls:
            return done
        tag, text = parse_emotion(done.text)
        return replace(done, text=f"[{tag or 'NEUTRAL'}] {other}, {text}")


async def room(count: int, seed: int) -> dict[str, object]:
    """Two personas in one room answering each other (see the module's docstring)."""
    rng = random.Random(seed)
    kai = make_persona("monikai", name="Monikai", nickname="Kai", scope="user")
    dm = make_persona("dm", name="Dungeon Master", nickname="DM", scope="channel")
    model = Naming(OfflineChatModel("offline"), {"Monikai": "DM", "Dungeon Master": "Kai"})
    router = ModelRouter(dict.fromkeys(TIERS, model))
    clock = FakeClock()
    calling = {"monikai": "Kai", "dm": "DM"}
    runs: dict[int, int] = defaultdict(int)  # a person's message -> replies between personas
    answered: set[int] = set()
    with tempfile.TemporaryDirectory() as folder:
        settings = EngineConfig(timezone="UTC", burst_seconds=0)
        bot = await open_bot(
            Path(folder) / "k.sqlite3", [kai, dm], clock=clock, settings=settings, router=router
        )
        now = 0

        async def deliver(heard: ChatEvent) -> tuple[str, str] | None:
            reply = await bot.engine.handle(heard)
            if not reply.text:
                return None
            runs[now] += 1
            return bot.engine.personas[heard.persona].identity.name, reply.text

        try:
            for n in range(count):
                now = n
                clock.advance(seconds=rng.randint(20, 120))
                to = rng.choice(["monikai", "dm"])
                member = rng.randint(1, 20)
                text = f"{calling[to]}, what about the {rng.choice(THINGS)}?"
                events = {
                    persona: make_event(
                        text,
                        persona=persona,
                        user_id=f"m{member}",
                        user_name=f"Member {member}",
                        is_dm=False,
                        channel_id=CHANNEL,
                        timestamp=clock.now(),
                        message_id=f"r{n}",
                        bot_id=f"bot-{persona}",
                        addressed=(),
                    )
                    for persona in ("monikai", "dm")
                }
                for persona, event in events.items():
                    bot.engine.relay.seat(event, f"bot-{persona}", (persona,), deliver)
                # The one not called hears it first; the one called answers, and is heard.
                for persona in sorted(events, key=lambda p: p == to):
                    reply = await bot.engine.handle(events[persona])
                    if reply.text:
                        if persona == to:
                            answered.add(n)
                        name = bot.engine.personas[persona].identity.name
                        await bot.engine.relay.said(events[persona], persona, name, reply.text)
        finally:
            await bot.close()
    calls = sum(u.calls for u in router.usage.values())
    longest = max(runs.values(), default=0)
    bound = kai.group.persona_exchanges
    return {
        "messages": count,
        "calls": calls,
        "calls_per_message": round(calls / max(count, 1), 3),
        "addressed_answered": round(len(answered) / max(count, 1), 4),
        "persona_replies": sum(runs.values()),
        "longest_run": longest,
        "persona_exchanges": bound,
        "runs_at_the_bound": round(sum(r == bound for r in runs.values()) / max(count, 1), 4),
        "runs_stop_at_the_bound": longest <= bound,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--per-day", type=int, default=2000)
    parser.add_argument("--members", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--room", type=int, default=500, help="messages in the personas' room")
    args = parser.parse_args()
    figures = asyncio.run(run(args.days, args.per_day, args.members, args.seed))
    figures["room"] = asyncio.run(room(args.room, args.seed))
    for key, value in figures.items():
        print(f"{key}: {value}")
    print(json.dumps(figures, ensure_ascii=False))


if __name__ == "__main__":
    main()
