"""The commands about what the persona remembers of the user: /remember, /recall, /memories,
/forget, /diary, /profile, /export and /dm_memories (whether private memories come along into
groups). Each works in the event's memory scope only; /forget and /export are refused
(`NotAllowed`, said as the answer) when that memory is a channel's shared one and the sender is
not its admin.

The functions before the commands are their parts, which tests and the console use directly."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from bot.catalogue import say
from bot.commands.answers import Answer, Button, File
from bot.commands.command import Command, Invocation, Option, in_groups
from bot.commands.contact import intentions
from bot.commands.services import Services
from bot.conversation.recollect import memory_text
from bot.events import ChatEvent
from memory.bank import BankError
from memory.dates import find_dates
from memory.recall.ranking import Recalled
from memory.records import Intention, Memory

__all__ = [
    "COMMANDS",
    "EXPORT_LIMIT",
    "FORGET_CHOICES",
    "Remembered",
    "closest",
    "diary",
    "dm_memories",
    "export",
    "forget",
    "forget_candidates",
    "format_memory",
    "intention_json",
    "list_memories",
    "memory_age",
    "named_now",
    "profile",
    "remember",
]

EXPORT_LIMIT = 10_000  # memories in one export
FORGET_CHOICES = 5  # matches shown by `forget QUERY`, to pick the one to delete


@dataclass(slots=True, frozen=True)
class Remembered:
    id: int | None  # None: refused, `message` says why
    message: str


def format_memory(
    memory: Recalled, services: Services, *, number: int | None = None, language: str = "en"
) -> str:
    """One line: "[3 days ago, strength 0.72] text" (numbered for a choice), its age and
    strength said in `language`."""
    age = memory_age(language, memory.when, services.clock.now())
    said = memory_text(memory)
    head = f"{number}. " if number is not None else ""
    strength = f"{memory.retention:.2f}"
    return head + say(language, "memory_line", age=age, strength=strength, text=said)


def memory_age(language: str, then: datetime, now: datetime) -> str:
    """How long ago, in the catalogue's words ("3 days ago", "3天前")."""
    seconds = max((now - then).total_seconds(), 0.0)
    minutes, hours, days = seconds / 60, seconds / 3600, seconds / 86400
    if minutes < 2:
        return say(language, "age_just_now")
    if hours < 1:
        return say(language, "age_minutes", count=str(int(minutes)))
    if days < 1:
        if hours < 2:
            return say(language, "age_an_hour")
        return say(language, "age_hours", count=str(int(hours)))
    if days < 2:
        return say(language, "age_yesterday")
    if days < 14:
        return say(language, "age_days", count=str(int(days)))
    if days < 60:
        return say(language, "age_weeks", count=str(int(days // 7)))
    if days < 730:
        return say(language, "age_months", count=str(int(days // 30)))
    return say(language, "age_years", count=str(int(days // 365)))


async def remember(services: Services, event: ChatEvent, text: str) -> Remembered:
    """Store an explicit memory (importance 3) of what the user asked to be remembered."""
    if services.memories is None:
        return Remembered(None, services.say(event, "memory_off"))
    try:
        memory_id = await services.memories.remember(
            services.desk.event_scope(event),
            text,
            speaker=event.user_name or None,
            speaker_id=event.user_id,
            importance=3,
            kind="explicit",
            when=services.clock.now(),
        )
    except BankError as e:
        return Remembered(None, services.say(event, "not_remembered", why=str(e)))
    return Remembered(memory_id, services.say(event, "remembered"))


async def closest(services: Services, event: ChatEvent, cue: str) -> Recalled | None:
    """The memory closest to `cue`, looked up on purpose (no retrieval failure), under its
    speaker's name now."""
    if services.memories is None or not cue.strip():
        return None
    scope = services.desk.event_scope(event)
    hits = await services.memories.recall(scope, cue, k=1, fail=False)
    return (await named_now(services, event, hits))[0] if hits else None


async def named_now(
    services: Services, event: ChatEvent, memories: list[Recalled]
) -> list[Recalled]:
    """`memories` of the event's scope each under its speaker's name now, by their id: the
    sender's as they write now, the conversation's speakers' as they last spoke, else their
    profile's (bot.conversation.recollect.under_names)."""
    if services.recollections is None or not memories:
        return memories
    present = (await services.desk.session(event)).speakers()
    if event.user_id and event.user_name:
        present[event.user_id] = event.user_name
    scope = services.desk.event_scope(event)
    return await services.recollections.named(scope, memories, present)


async def list_memories(
    services: Services, event: ChatEvent, query: str = "", *, limit: int = 20
) -> list[Recalled]:
    """The user's memories: the best matches of `query`, or the newest."""
    if services.memories is None:
        return []
    return await services.memories.memories(services.desk.event_scope(event), query, limit=limit)


async def forget_candidates(services: Services, event: ChatEvent, query: str) -> list[Recalled]:
    """What `forget QUERY` offers to delete."""
    services.desk.check_may_change(event)
    if services.memories is None or not query.strip():
        return []
    scope = services.desk.event_scope(event)
    found = await services.memories.recall(scope, query, k=FORGET_CHOICES, fail=False)
    return await named_now(services, event, found)


async def forget(services: Services, event: ChatEvent, memory_id: int) -> Memory | None:
    """Delete one of the user's memories by id; None if it is not theirs or not there."""
    services.desk.check_may_change(event)
    if services.memories is None:
        return None
    gone = await services.memories.forget(services.desk.event_scope(event), memory_id)
    if gone:
        services.desk.forget_notes(event)
    return gone[0] if gone else None


async def diary(services: Services, event: ChatEvent, day: str = "") -> str:
    """The persona's diary page for a day ("yesterday", "2026-09-03", "上周三"...; a day
    without a year: of the most recent year that has a page), the pages of a span of days
    ("last week", 上个月初...) newest first, or, with no day, the newest page."""
    pages = services.diary
    if pages is None:
        return services.say(event, "memory_off")
    scope = services.desk.event_scope(event)
    now = services.clock.now().astimezone(services.tz)
    if not day.strip():
        newest = await pages.pages(scope, limit=1)
        if not newest:
            return services.say(event, "diary_empty")
        return _page(services, event, newest[0].day, newest[0].text)
    # A bare weekday means the last one ("/diary tuesday"); in chat only "on Tuesday" does.
    mentioned = find_dates(day, now) or find_dates(f"on {day.strip()}", now)
    if not mentioned:
        return services.say(event, "diary_which_day", day=repr(day.strip()))
    today = now.date()
    first, last = mentioned[0].days
    if first > today:
        return services.say(event, "diary_not_yet", day=services.day(event, first))
    named = await pages.read(scope, mentioned[0], today, tz=services.tz)
    found = [] if named is None else named.pages
    if not found:
        said = services.day(event, first)
        if first != last:
            until = services.day(event, min(last, today))
            said = services.say(event, "days", first=said, last=until)
        return services.say(event, "diary_no_page", day=said)
    return "\n\n".join(_page(services, event, entry.day, entry.text) for entry in found)


def _page(services: Services, event: ChatEvent, day: date, text: str) -> str:
    return services.say(event, "diary_page", day=services.day(event, day), text=text)


async def profile(services: Services, event: ChatEvent) -> str:
    """What the persona knows of the user (written when conversations are encoded)."""
    if services.recollections is None:
        return services.say(event, "memory_off")
    if event.anonymous:
        return services.say(event, "anonymous")
    scope = services.desk.event_scope(event)
    found = await services.recollections.profile(scope, event.user_id)
    if found is None or not (found.text or found.aliases):
        return services.say(event, "profile_none")
    lines = [services.say(event, "profile", text=found.text)] if found.text else []
    if found.aliases:  # the other names they go by here (earlier names, nicknames)
        aliases = ", ".join(found.aliases)
        lines.append(services.say(event, "profile_aliases", aliases=aliases))
    return "\n".join(lines)


async def export(services: Services, event: ChatEvent) -> tuple[str, bytes]:
    """The user's memories with this persona, and what it means to bring up with them here
    (their own pending intentions in this scope, as `intentions` lists them: never another
    person's, even in a channel's shared memory), as a JSON file {"memories", "intentions"}:
    (a line saying how many memories, the file's bytes)."""
    services.desk.check_may_change(event)
    found = await list_memories(services, event, limit=EXPORT_LIMIT)
    rows = [
        {
            "id": m.id,
            "text": m.text,
            "when": m.when.isoformat(),
            "speaker": m.speaker,
            "speaker_id": m.speaker_id,
            "importance": m.importance,
            "kind": m.kind,
            "strength": round(m.retention, 3),
        }
        for m in found
    ]
    pending = [intention_json(i) for i in await intentions(services, event)]
    if len(rows) == 1:
        said = services.say(event, "export_one")
    else:
        said = services.say(event, "export_many", count=str(len(rows)))
    data = {"memories": rows, "intentions": pending}
    return said, json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8")


def intention_json(intention: Intention) -> dict[str, Any]:
    """An intention as /export writes it, and the web inspector shows it."""
    return {
        "id": intention.id,
        "kind": intention.kind,
        "what": intention.what,
        "ask": intention.ask,
        "due_at": intention.due_at.isoformat(),
        "until": intention.until.isoformat(),
        "yearly": intention.yearly,
    }


async def dm_memories(services: Services, event: ChatEvent, argument: str) -> str:
    """`dm_memories on|off`: whether the persona may bring what the user said in private into
    the user's own conversations with it in groups. Off unless the user turns it on."""
    persona = services.persona(event)
    if event.anonymous:  # no private chat of theirs to share from
        return services.say(event, "anonymous")
    sharing = services.sharing
    user = f"{event.platform}:{event.user_id}"
    choice = argument.strip().lower()
    if choice in ("on", "off"):
        await sharing.set_dm_sharing(persona.key, user, choice == "on", services.clock.now())
        if choice == "off":  # what came to mind from private is not shown again from a note
            services.desk.forget_notes(event)
    shared = await sharing.dm_sharing(persona.key, user)
    if persona.memory.scope != "user":
        return services.say(event, "dm_channel")
    return services.say(event, "dm_on" if shared else "dm_off")


async def _remember(call: Invocation) -> Answer:
    if not call.argument:
        return Answer(call.say("remember_what"))
    return Answer((await remember(call.services, call.event, call.argument)).message)


async def _recall(call: Invocation) -> Answer:
    if not call.argument:
        return Answer(call.say("recall_what"))
    found = await closest(call.services, call.event, call.argument)
    if found is None:
        return Answer(call.say("nothing_comes_to_mind"), private=True)
    return Answer(format_memory(found, call.services, language=call.language), private=True)


async def _memories(call: Invocation) -> Answer:
    found = await list_memories(call.services, call.event, call.argument)
    if not found:
        key = "no_memories_match" if call.argument else await _why_none(call)
        return Answer(call.say(key), private=True)
    found = await named_now(call.services, call.event, found)
    said = (format_memory(m, call.services, language=call.language) for m in found)
    return Answer("\n".join(said), private=True)


async def _why_none(call: Invocation) -> str:
    """What to say when nothing is remembered yet: the conversation going on, or the one that
    just ended, is not written into long-term memory yet."""
    info = await call.services.desk.info(call.event)
    if info.turns:
        return "memories_after_conversation"
    last = info.last_closed
    if last is not None and last.encoded_at is None and last.turns:
        return "memories_being_written"
    return "no_memories_yet"


async def _forget(call: Invocation) -> Answer:
    """`forget QUERY` lists what matches, with a button per memory; a pick (its button, which
    is `forget !ID`, or a typed `forget N` after the list) forgets it."""
    services, event, argument = call.services, call.event, call.argument
    desk = services.desk
    if argument.startswith("!") and argument[1:].isdecimal():
        return _forgotten(call, await forget(services, event, int(argument[1:])))
    pending = await desk.offered(event)
    if pending and argument.isdecimal():  # "²" is a digit, not a number
        number = int(argument)
        if not 1 <= number <= len(pending):  # still theirs to pick from
            return Answer(call.say("forget_pick_range", count=str(len(pending))))
        await desk.offer(event, [])
        return _forgotten(call, await forget(services, event, pending[number - 1]))
    if not argument:
        await desk.offer(event, [])
        return Answer(call.say("forget_what"))
    choices = await forget_candidates(services, event, argument)
    await desk.offer(event, [memory.id for memory in choices])
    if not choices:
        return Answer(call.say("no_memory_matches"), private=True)
    lines = [
        format_memory(m, services, number=n, language=call.language)
        for n, m in enumerate(choices, start=1)
    ]
    picks = tuple(Button(str(n), "forget", f"!{m.id}") for n, m in enumerate(choices, start=1))
    said = "\n".join([*lines, call.say("forget_which")])
    return Answer(said, private=True, buttons=picks)


def _forgotten(call: Invocation, gone: Memory | None) -> Answer:
    said = call.say("forgotten", text=gone.text) if gone else call.say("already_gone")
    return Answer(said, private=True)


async def _diary(call: Invocation) -> Answer:
    return Answer(await diary(call.services, call.event, call.argument), private=True)


async def _profile(call: Invocation) -> Answer:
    return Answer(await profile(call.services, call.event), private=True)


async def _export(call: Invocation) -> Answer:
    said, data = await export(call.services, call.event)
    return Answer(said, private=True, file=File("memories.json", data))


async def _dm_memories(call: Invocation) -> Answer:
    return Answer(await dm_memories(call.services, call.event, call.argument))


COMMANDS = (
    Command("remember", _remember, (Option("text", required=True),)),
    Command("recall", _recall, (Option("query", required=True),)),
    Command("memories", _memories, (Option("query"),)),
    Command("forget", _forget, (Option("query", required=True),)),
    Command("diary", _diary, (Option("day"),)),
    Command("profile", _profile),
    Command("export", _export, where=in_groups),
    Command("dm_memories", _dm_memories, (Option("choice", choices=("on", "off")),), in_groups),
)
