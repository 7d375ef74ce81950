"""A persona writing first to 100 users over 30 days: does each message go out once, on time,
never at night, and how often does it write unasked?

    python benchmarks/outreach.py [--users 100] [--days 30] [--seed 1] [--step 5]
                                  [--store postgres | sqlite] [--dsn postgresql://...]

Miao (personas/miao.toml: writing first on, 2 a week at most, a check-in after 3 days of silence,
quiet 22-09) on Telegram, with the offline model. Scripted users in four time zones (30% set theirs
with /timezone; the others' waking hours are learned from when they talk) talk privately on ~70% of
days, a few messages at a random local hour between 10:00 and 21:00. Now and then (12% of talking
days) one mentions something coming, in English or Chinese ("my exam is on Tuesday", 我下周三面试):
memory.encoding.intentions.local_reading (what the offline model answers the encoder, and the
encoder's fallback) makes the intentions, due and until by its rules, and the store keeps them (a
birthday party may be read as a special day). A tenth of the users have a birthday in the month (a
special day, due 09:00 local). A user who writes while one of their follow-ups is due has it brought
up in that conversation (closed done: bot.turn.answer's part).

Two Outreach instances (two processes: each its own sessions, model and courier) tick together
every `--step` minutes of a fake clock: on PostgreSQL (a throwaway local server, or `--dsn`'s)
each with its own connection to one database; on SQLite, which gives its file to one process,
sharing the one connection. Each bot's courier records what it delivers and when.

Prints: events mentioned and intentions found; follow-ups due, sent on time (between due and
until), brought up by the user first, missed; check-ins and greetings; duplicates (deliveries
beyond one per ledger key: must be 0); messages in the user's quiet hours (in their real zone:
must be 0), and of those to users who never set a zone; chat calls; unsolicited messages per
user per week. The last line is one JSON object. Never run by CI.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from recall_latency import fresh_database, postgres_server

from bot.config import TIERS
from bot.conversation.sessions import SessionManager
from bot.llm.offline import OfflineChatModel
from bot.llm.router import ModelRouter
from bot.outreach import Outreach
from bot.outreach.courier import Delivery
from bot.persona.file import PersonaLibrary
from bot.spoken import Spoken
from memory.clock import FakeClock
from memory.encoding.intentions import Reading, Said, local_reading
from memory.records import NewIntention
from memory.storage import Storage
from memory.storage.postgres import PgStore
from memory.storage.sqlite import Store

PERSONA = "miao"
PLATFORM = "telegram"
START = datetime(2026, 12, 1, 0, 0, tzinfo=UTC)  # a Tuesday
ZONES = (
    ("Asia/Shanghai", 0.5),
    ("Europe/London", 0.2),
    ("America/New_York", 0.2),
    ("Asia/Tokyo", 0.1),
)
# Something coming, as a user says it.
EVENTS = (
    "my exam is on Tuesday",
    "I have a job interview next Wednesday",
    "我下周三面试",
    "我后天要考驾照",
    "the dentist is tomorrow morning",
    "my presentation is on Monday",
    "我这周六要搬家",
    "I have a big match this weekend",
    "下周五我生日聚会",
    "周末要去爬山",
    "I start my new job next Monday",
    "my driving test is in two days",
)
MENTION_RATE = 0.12
TALK_RATE = 0.7
TIMEZONE_SET = 0.3
BIRTHDAYS = 0.1
QUIET = (22, 9)


@dataclass(slots=True)
class User:
    id: str
    zone: ZoneInfo
    sets_zone: bool
    talks: list[datetime] = field(default_factory=list)  # each message, UTC
    mentions: list[tuple[datetime, int]] = field(default_factory=list)  # (when, EVENTS index)


@dataclass(slots=True)
class Delivered:
    user: str
    at: datetime
    text: str


@dataclass(slots=True)
class TimedCourier:
    """A Telegram bot that delivers everything and notes when."""

    clock: FakeClock
    platform: str = PLATFORM
    bot_id: str = "miao-bot"
    delivered: list[Delivered] = field(default_factory=list)

    def hosts(self, persona: str) -> bool:
        return persona == PERSONA

    async def write_first(self, user_id: str, spoken: Spoken) -> Delivery:
        self.delivered.append(Delivered(user_id, self.clock.now(), spoken.reply.text))
        return "sent"


def make_users(count: int, days: int, rng: random.Random) -> list[User]:
    names = [name for name, _ in ZONES]
    weights = [weight for _, weight in ZONES]
    users = []
    for i in range(count):
        zone = ZoneInfo(rng.choices(names, weights)[0])
        user = User(f"{1000 + i}", zone, rng.random() < TIMEZONE_SET)
        for day in range(days):
            if rng.random() >= TALK_RATE:
                continue
            local = (START + timedelta(days=day)).astimezone(zone).date()
            at = datetime(
                local.year,
                local.month,
                local.day,
                rng.randint(10, 20),
                rng.randint(0, 59),
                tzinfo=zone,
            )
            messages = [at + timedelta(minutes=i) for i in range(rng.randint(2, 5))]
            user.talks.extend(m.astimezone(UTC) for m in messages)
            if rng.random() < MENTION_RATE:
                user.mentions.append((messages[0].astimezone(UTC), rng.randrange(len(EVENTS))))
        users.append(user)
    return users


def intentions_of(user: User, said_at: datetime, index: int) -> list[NewIntention]:
    """What the encoder's local reading finds in an event's sentence."""
    sentence = EVENTS[index]
    return local_reading(
        Reading(
            [Said(user.id, said_at, sentence)],
            scope=f"{PERSONA}/{PLATFORM}:dm:{user.id}",
            tz=user.zone,
            language="en" if sentence.isascii() else "zh",
            created_at=said_at,
            conversation_id=None,
        )
    )


def in_quiet(at: datetime, zone: ZoneInfo) -> bool:
    first, end = QUIET
    return (at.astimezone(zone).hour - first) % 24 < (end - first) % 24


async def open_stores(kind: str, server: str | None, folder: Path) -> list[Storage]:
    """Two processes' stores on one database (SQLite: one store, shared)."""
    if server is None:
        store = await Store.open(folder / "kizuna.sqlite3")
        return [store, store]
    return [await PgStore.open(server), await PgStore.open(server)]


async def simulate(
    users: int, days: int, seed: int, step: int, stores: list[Storage]
) -> dict[str, Any]:
    rng = random.Random(seed)
    people = make_users(users, days, rng)
    persona = PersonaLibrary.default(Path.cwd()).load(PERSONA)
    personas = {persona.key: persona}
    clock = FakeClock(START)
    routers = [ModelRouter(dict.fromkeys(TIERS, OfflineChatModel())) for _ in stores]
    couriers = [TimedCourier(clock) for _ in stores]
    processes = []
    for n, (store, router, courier) in enumerate(zip(stores, routers, couriers, strict=True)):
        outreach = Outreach(
            store=store,
            personas=personas,
            models=router,
            sessions=SessionManager(store, clock),
            clock=clock,
            tz=ZoneInfo("Asia/Shanghai"),  # the host's [engine] timezone
            name=f"process-{n + 1}",
        )
        outreach.add(courier)
        processes.append(outreach)
    store = stores[0]  # what the users' side (bot.turn.engine) writes through

    # Every user action in time order: (when, kind, user, detail).
    actions: list[tuple[datetime, int, User, int]] = []
    for user in people:
        actions.extend((at, 0, user, -1) for at in user.talks)
        actions.extend((at, 1, user, index) for at, index in user.mentions)
        if user.sets_zone:
            await store.set_contact(PERSONA, PLATFORM, user.id, timezone=user.zone.key, at=START)
    actions.sort(key=lambda a: (a[0], a[1]))
    birthdays = 0
    for user in people:
        if rng.random() < BIRTHDAYS:
            local = (START + timedelta(days=rng.randrange(2, days))).astimezone(user.zone).date()
            due = datetime(local.year, local.month, local.day, 9, tzinfo=user.zone)
            await store.add_intention(
                NewIntention(
                    scope=f"{PERSONA}/{PLATFORM}:dm:{user.id}",
                    user_id=user.id,
                    kind="special_day",
                    what="your birthday",
                    ask="wish them a happy birthday",
                    due_at=due.astimezone(UTC),
                    until=(due + timedelta(hours=14)).astimezone(UTC),
                    created_at=START,
                    yearly=True,
                )
            )
            birthdays += 1

    mentioned = found = brought_up = 0
    follow_ups: dict[int, NewIntention] = {}
    end = START + timedelta(days=days)
    started = time.perf_counter()
    next_action = 0
    while clock.now() < end:
        now = clock.now()
        while next_action < len(actions) and actions[next_action][0] <= now:
            at, kind, user, index = actions[next_action]
            next_action += 1
            scope = f"{PERSONA}/{PLATFORM}:dm:{user.id}"
            if kind == 0:
                await store.heard(PERSONA, PLATFORM, user.id, at, private=True)
                # They came back while something was due: the persona brings it up in this
                # conversation (bot.turn.engine) and it is done, so nobody writes it too.
                for pending in await store.intentions(scope, user.id):
                    owed = pending.due_at <= at <= pending.until and pending.kind == "follow_up"
                    if owed and await store.close_intention(scope, pending.id, "done", at):
                        brought_up += 1
                await store.answered(PERSONA, PLATFORM, user.id, at + timedelta(seconds=20))
            else:
                mentioned += 1
                intentions = intentions_of(user, at, index)
                found += bool(intentions)
                for intention in intentions:
                    ident = await store.add_intention(intention)
                    if intention.kind == "follow_up":
                        follow_ups[ident] = intention
        await asyncio.gather(*(p.tick() for p in processes))
        clock.advance(minutes=step)
        if clock.now().hour == 0 and clock.now().minute < step:
            day = (clock.now() - START).days
            print(f"day {day}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    elapsed = time.perf_counter() - started

    delivered = [d for c in couriers for d in c.delivered]
    zones = {u.id: u.zone for u in people}
    unset = {u.id for u in people if not u.sets_zone}
    ledger = []
    for user in people:
        ledger.extend(await store.outreach(PERSONA, PLATFORM, user.id, since=START))
    sent_keys = [e for e in ledger if e.state == "sent"]
    on_time = missed = due_in_month = 0
    for ident, intention in follow_ups.items():
        if intention.due_at >= end:
            continue
        due_in_month += 1
        [row] = [
            i for i in await store.intentions(intention.scope, open_only=False) if i.id == ident
        ]
        key = f"intention:{ident}"
        sent = [e for e in sent_keys if e.key == key and e.user_id == intention.user_id]
        if sent and intention.due_at <= sent[0].at <= intention.until:
            on_time += 1
        if row.state == "missed":
            missed += 1
    per_user = Counter(d.user for d in delivered)
    most_in_a_week = max(
        (
            sum(1 for d in delivered if d.user == u and start <= d.at < start + timedelta(days=7))
            for u in per_user
            for start in (d.at for d in delivered if d.user == u)
        ),
        default=0,
    )
    calls = sum(r.purposes["outreach"].calls for r in routers if "outreach" in r.purposes)
    weeks = days / 7
    result = {
        "users": users,
        "days": days,
        "events_mentioned": mentioned,
        "intentions_found": found,
        "follow_ups_due": due_in_month,
        "follow_ups_sent_on_time": on_time,
        "follow_ups_brought_up_by_user_first": brought_up,
        "follow_ups_missed": missed,
        "check_ins": sum(1 for e in sent_keys if e.key.startswith("checkin:")),
        "greetings": sum(1 for e in sent_keys if e.key.startswith("special:")),
        "birthdays": birthdays,
        "messages": len(delivered),
        "duplicates": len(delivered) - len(sent_keys),
        "in_quiet_hours": sum(1 for d in delivered if in_quiet(d.at, zones[d.user])),
        "in_quiet_hours_zone_unset": sum(
            1 for d in delivered if d.user in unset and in_quiet(d.at, zones[d.user])
        ),
        "to_zone_unset": sum(1 for d in delivered if d.user in unset),
        "chat_calls": calls,
        "unsolicited_per_user_per_week": round(len(delivered) / users / weeks, 3),
        "most_to_one_user_in_7_days": most_in_a_week,
        "by_process": [len(c.delivered) for c in couriers],
        "seconds": round(elapsed, 1),
    }
    return result


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--step", type=int, default=5, help="minutes between rounds")
    parser.add_argument("--store", choices=("postgres", "sqlite"), default="postgres")
    parser.add_argument("--dsn", help="a PostgreSQL server to make the database on")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        async with contextlib.AsyncExitStack() as stack:
            server = await stack.enter_async_context(postgres_server(args.store, args.dsn))
            if server is not None:
                server = await stack.enter_async_context(fresh_database(server))
            stores = await open_stores(args.store, server, Path(folder))
            for store in {id(s): s for s in stores}.values():
                stack.push_async_callback(store.close)
            result = await simulate(args.users, args.days, args.seed, args.step, stores)
            result["store"] = args.store
    width = max(map(len, result))
    for name, value in result.items():
        print(f"{name:<{width}}  {value}")
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main())
