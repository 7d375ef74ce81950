"""Every command a user can give, platform-free, in one table (`COMMANDS`): its name, its options,
where it is offered, and what it does. A command returns an `Answer` (bot/commands/answers.py) that
each surface renders its own way, in the persona's language (bot/catalogue.py); a button in an
answer is this table's command again, run as whoever presses it. Each command works in the event's
memory scope only. Those that change or take away a memory (forget, wipe, export, state set) are
refused (`NotAllowed`, said as the answer) when that memory is a channel's shared one and the sender
is not its admin.

The functions before the table are its parts, which tests and the console's own commands
use directly."""

from __future__ import annotations

import json
import zoneinfo
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, tzinfo

from bot.catalogue import say
from bot.commands.answers import Answer, Button, File
from bot.events import ChatEvent
from bot.groups.floor import ChannelFloor
from bot.groups.routing import PersonaRouter
from bot.platforms import Platform
from bot.turn.access import NotAllowed
from bot.turn.engine import Engine
from bot.turn.recollect import memory_text
from memory.bank import BankError
from memory.dates import find_dates
from memory.recall import Recalled
from memory.records import Intention, IntentionKind, Memory

__all__ = [
    "COMMANDS",
    "EXPORT_LIMIT",
    "FORGET_CHOICES",
    "INTENTIONS_SHOWN",
    "Command",
    "Invocation",
    "Option",
    "Remembered",
    "cancel_intention",
    "closest",
    "describe",
    "diary",
    "dm_memories",
    "export",
    "forget",
    "forget_candidates",
    "format_intention",
    "format_memory",
    "group",
    "intentions",
    "list_memories",
    "named_now",
    "offered_on",
    "profile",
    "quiet",
    "remember",
    "run",
    "set_state",
    "show_state",
    "timezone",
    "voice",
    "wipe",
    "wipe_question",
]

EXPORT_LIMIT = 10_000  # memories in one export
FORGET_CHOICES = 5  # matches shown by `forget QUERY`, to pick the one to delete
INTENTIONS_SHOWN = 10  # pending intentions `intentions` lists, each with its cancel button
_INTENTION_LINES: Mapping[IntentionKind, str] = {
    "follow_up": "intention_follow_up",
    "reminder": "intention_reminder",
    "special_day": "intention_special_day",
}


@dataclass(slots=True, frozen=True)
class Remembered:
    id: int | None  # None: refused, `message` says why
    message: str


def _say(engine: Engine, event: ChatEvent, key: str, **values: str) -> str:
    """The catalogue's sentence `key` in the event's persona's language, its name filled in."""
    identity = engine.persona(event).identity
    language = event.language or identity.language
    return say(language, key, **({"name": identity.name} | values))


def format_memory(
    memory: Recalled, engine: Engine, *, number: int | None = None, language: str = "en"
) -> str:
    """One line: "[3 days ago, strength 0.72] text" (numbered for a choice), its age and
    strength said in `language`."""
    age = memory_age(language, memory.when, engine.clock.now())
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


async def remember(engine: Engine, event: ChatEvent, text: str) -> Remembered:
    """Store an explicit memory (importance 3) of what the user asked to be remembered."""
    if engine.memory is None:
        return Remembered(None, _say(engine, event, "memory_off"))
    try:
        memory_id = await engine.memory.bank.remember(
            engine.event_scope(event),
            text,
            speaker=event.user_name or None,
            speaker_id=event.user_id,
            importance=3,
            kind="explicit",
            when=engine.clock.now(),
        )
    except BankError as e:
        return Remembered(None, _say(engine, event, "not_remembered", why=str(e)))
    return Remembered(memory_id, _say(engine, event, "remembered"))


async def closest(engine: Engine, event: ChatEvent, cue: str) -> Recalled | None:
    """The memory closest to `cue`, looked up on purpose (no retrieval failure), under its
    speaker's name now."""
    if engine.memory is None or not cue.strip():
        return None
    hits = await engine.memory.bank.recall(engine.event_scope(event), cue, k=1, fail=False)
    return (await named_now(engine, event, hits))[0] if hits else None


async def named_now(engine: Engine, event: ChatEvent, memories: list[Recalled]) -> list[Recalled]:
    """`memories` of the event's scope each under its speaker's name now, by their id: the
    sender's as they write now, the conversation's speakers' as they last spoke, else their
    profile's (bot.turn.recollect.under_names)."""
    if engine.memory is None or not memories:
        return memories
    present = (await engine.session(event)).speakers()
    if event.user_id and event.user_name:
        present[event.user_id] = event.user_name
    return await engine.memory.named(engine.event_scope(event), memories, present)


async def list_memories(
    engine: Engine, event: ChatEvent, query: str = "", *, limit: int = 20
) -> list[Recalled]:
    """The user's memories: the best matches of `query`, or the newest."""
    if engine.memory is None:
        return []
    return await engine.memory.bank.memories(engine.event_scope(event), query, limit=limit)


async def forget_candidates(engine: Engine, event: ChatEvent, query: str) -> list[Recalled]:
    """What `forget QUERY` offers to delete."""
    engine.check_may_change(event)
    if engine.memory is None or not query.strip():
        return []
    found = await engine.memory.bank.recall(
        engine.event_scope(event), query, k=FORGET_CHOICES, fail=False
    )
    return await named_now(engine, event, found)


async def forget(engine: Engine, event: ChatEvent, memory_id: int) -> Memory | None:
    """Delete one of the user's memories by id; None if it is not theirs or not there."""
    engine.check_may_change(event)
    if engine.memory is None:
        return None
    gone = await engine.memory.bank.forget(engine.event_scope(event), memory_id)
    if gone:
        engine.forget_notes(event)
    return gone[0] if gone else None


async def diary(engine: Engine, event: ChatEvent, day: str = "") -> str:
    """The persona's diary page for a day ("yesterday", "2026-09-03", "上周三"...; a day
    without a year: of the most recent year that has a page), the pages of a span of days
    ("last week", 上个月初...) newest first, or, with no day, the newest page."""
    if engine.memory is None:
        return _say(engine, event, "memory_off")
    scope = engine.event_scope(event)
    pages = engine.memory.diary
    now = engine.clock.now().astimezone(engine.tz)
    if not day.strip():
        newest = await pages.pages(scope, limit=1)
        if not newest:
            return _say(engine, event, "diary_empty")
        return _page(engine, event, newest[0].day, newest[0].text)
    # A bare weekday means the last one ("/diary tuesday"); in chat only "on Tuesday" does.
    mentioned = find_dates(day, now) or find_dates(f"on {day.strip()}", now)
    if not mentioned:
        return _say(engine, event, "diary_which_day", day=repr(day.strip()))
    today = now.date()
    first, last = mentioned[0].days
    if first > today:
        return _say(engine, event, "diary_not_yet", day=_day(engine, event, first))
    named = await pages.read(scope, mentioned[0], today, tz=engine.tz)
    found = [] if named is None else named.pages
    if not found:
        said = _day(engine, event, first)
        if first != last:
            until = _day(engine, event, min(last, today))
            said = _say(engine, event, "days", first=said, last=until)
        return _say(engine, event, "diary_no_page", day=said)
    return "\n\n".join(_page(engine, event, entry.day, entry.text) for entry in found)


def _day(engine: Engine, event: ChatEvent, day: date) -> str:
    """A day as the persona says it: "Tuesday 2026-09-01", "2026-09-01（星期二）"."""
    weekdays = _say(engine, event, "weekdays").split(",")
    return _say(engine, event, "day", weekday=weekdays[day.weekday()], date=day.isoformat())


def _page(engine: Engine, event: ChatEvent, day: date, text: str) -> str:
    return _say(engine, event, "diary_page", day=_day(engine, event, day), text=text)


async def profile(engine: Engine, event: ChatEvent) -> str:
    """What the persona knows of the user (written when conversations are encoded)."""
    if engine.memory is None:
        return _say(engine, event, "memory_off")
    if event.anonymous:
        return _say(engine, event, "anonymous")
    found = await engine.memory.profile(engine.event_scope(event), event.user_id)
    if found is None or not (found.text or found.aliases):
        return _say(engine, event, "profile_none")
    lines = [_say(engine, event, "profile", text=found.text)] if found.text else []
    if found.aliases:  # the other names they go by here (earlier names, nicknames)
        lines.append(_say(engine, event, "profile_aliases", aliases=", ".join(found.aliases)))
    return "\n".join(lines)


async def show_state(engine: Engine, event: ChatEvent) -> str:
    """The persona's state slots in this scope (a dungeon master's party and game)."""
    persona = engine.persona(event)
    if not persona.state:
        return _say(engine, event, "no_state")
    state = (await engine.info(event)).state
    unset = _say(engine, event, "not_set")
    return "\n".join(
        f"{slot.name} ({slot.update}):\n{slot.value(state) or unset}" for slot in persona.state
    )


async def set_state(engine: Engine, event: ChatEvent, argument: str) -> str:
    """`state set NAME VALUE`: the user changes a slot themselves (the way to change a slot
    updated `once`, such as the party's characters)."""
    persona = engine.persona(event)
    name, _, value = argument.strip().partition(" ")
    names = [slot.name for slot in persona.state]
    if not names:
        return _say(engine, event, "no_state")
    if name not in names:
        return _say(engine, event, "no_slot", slot=repr(name), slots=", ".join(names))
    if not value.strip():
        return _say(engine, event, "give_value", slot=name)
    stored = await engine.set_state(event, name, value)
    return _say(engine, event, "slot_now", slot=name, value=stored)


async def export(engine: Engine, event: ChatEvent) -> tuple[str, bytes]:
    """The user's memories with this persona, and what it means to bring up with them here
    (their own pending intentions in this scope, as `intentions` lists them: never another
    person's, even in a channel's shared memory), as a JSON file {"memories", "intentions"}:
    (a line saying how many memories, the file's bytes)."""
    engine.check_may_change(event)
    found = await list_memories(engine, event, limit=EXPORT_LIMIT)
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
    pending = [
        {
            "id": i.id,
            "kind": i.kind,
            "what": i.what,
            "ask": i.ask,
            "due_at": i.due_at.isoformat(),
            "until": i.until.isoformat(),
            "yearly": i.yearly,
        }
        for i in await intentions(engine, event)
    ]
    if len(rows) == 1:
        said = _say(engine, event, "export_one")
    else:
        said = _say(engine, event, "export_many", count=str(len(rows)))
    data = {"memories": rows, "intentions": pending}
    return said, json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8")


def wipe_question(engine: Engine, event: ChatEvent) -> str:
    """What a wipe asks before it forgets: what will really be lost."""
    key = "wipe_question_channel" if engine.shares(event) else "wipe_question_you"
    return _say(engine, event, key)


async def wipe(engine: Engine, event: ChatEvent) -> str:
    """Forget the conversation and every memory of the event's scope; says what is gone."""
    await engine.wipe(event)
    return _say(engine, event, "wiped_channel" if engine.shares(event) else "wiped_you")


async def dm_memories(engine: Engine, event: ChatEvent, argument: str) -> str:
    """`dm_memories on|off`: whether the persona may bring what the user said in private into
    the user's own conversations with it in groups. Off unless the user turns it on."""
    persona = engine.persona(event)
    if event.anonymous:  # no private chat of theirs to share from
        return _say(engine, event, "anonymous")
    store = engine.rooms
    user = f"{event.platform}:{event.user_id}"
    choice = argument.strip().lower()
    if choice in ("on", "off"):
        await store.set_dm_sharing(persona.key, user, choice == "on", engine.clock.now())
        if choice == "off":  # what came to mind from private is not shown again from a note
            engine.forget_notes(event)
    shared = await store.dm_sharing(persona.key, user)
    if persona.memory.scope != "user":
        return _say(engine, event, "dm_channel")
    return _say(engine, event, "dm_on" if shared else "dm_off")


# What `group` takes, as an admin types it (cooldown: its seconds).
_GROUP_WORDS: Mapping[str, str] = {
    "mode": "mode",
    "talkativeness": "talkativeness",
    "cooldown": "cooldown_seconds",
    "cooldown_seconds": "cooldown_seconds",
    "max_per_minute": "max_per_minute",
}


async def group(engine: Engine, event: ChatEvent, argument: str) -> str:
    """`group`: when the persona speaks in this channel (bot.groups.floor); `group SETTING VALUE`,
    an admin's, changes one setting here (mode, talkativeness, cooldown, max_per_minute), and
    `group reset` brings back the persona's own."""
    if event.is_dm:
        return _say(engine, event, "group_private")
    persona, floor = engine.persona(event), engine.floor
    word, _, value = argument.strip().partition(" ")
    word = word.lower()
    if word:
        if not event.admin:
            return _say(engine, event, "group_admins_only")
        if word == "reset":
            await floor.set_channel(persona, event, ChannelFloor())
        elif (setting := _GROUP_WORDS.get(word)) is None:
            return _say(engine, event, "group_which")
        else:
            changed = (await floor.channel(persona, event)).changed(setting, value)
            if changed is None:
                allowed = {
                    "mode": "speak, listen",
                    "talkativeness": "0-1",
                    "cooldown_seconds": "0-86400",
                    "max_per_minute": "1-60",
                }[setting]
                return _say(engine, event, "group_bad_value", setting=word, allowed=allowed)
            await floor.set_channel(persona, event, changed)
    policy = await floor.policy(persona, event)
    return _say(
        engine,
        event,
        "group_now",
        mode=policy.mode,
        talkativeness=f"{policy.talkativeness:g}",
        cooldown=f"{policy.cooldown_seconds:g}",
        most=str(policy.max_per_minute),
    )


async def intentions(engine: Engine, event: ChatEvent) -> list[Intention]:
    """The sender's own intentions still pending in the event's scope, soonest due first."""
    if event.anonymous:
        return []
    return await engine.intentions.intentions(engine.event_scope(event), event.user_id)


async def cancel_intention(engine: Engine, event: ChatEvent, intention_id: int) -> Intention | None:
    """Cancel one of the sender's own pending intentions here (whoever presses a button runs
    it as themselves: another's is not theirs); None if it is not theirs or not pending."""
    mine = {i.id: i for i in await intentions(engine, event)}
    found = mine.get(intention_id)
    if found is None:
        return None
    at = engine.clock.now()
    return (
        found
        if await engine.intentions.close_intention(found.scope, found.id, "cancelled", at)
        else None
    )


async def _zone(engine: Engine, event: ChatEvent) -> tuple[str | None, tzinfo]:
    """The sender's time zone here: the one they set (its name), else the bot's (None)."""
    contact = await engine.contacts.contact(
        engine.persona(event).key, event.platform, event.user_id
    )
    if contact is not None and contact.timezone:
        try:
            return contact.timezone, zoneinfo.ZoneInfo(contact.timezone)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):  # gone from this system's tzdata
            pass
    return None, engine.tz


def format_intention(
    engine: Engine, event: ChatEvent, intention: Intention, number: int, tz: tzinfo
) -> str:
    """One numbered line: what, what will be asked, from when (in the sender's time zone)."""
    due = intention.due_at.astimezone(tz)
    when = f"{_day(engine, event, due.date())} {due:%H:%M}"
    if intention.kind == "special_day":
        when = due.strftime("%m-%d")
    return _say(
        engine,
        event,
        _INTENTION_LINES[intention.kind],
        number=str(number),
        what=intention.what,
        ask=intention.ask,
        when=when,
    )


async def quiet(engine: Engine, event: ChatEvent, argument: str) -> str:
    """`quiet on|off`: whether the persona may write to the sender first (bot.outreach); alone,
    what they chose (may, unless they said otherwise)."""
    if event.anonymous:  # no one in particular to leave alone
        return _say(engine, event, "anonymous")
    persona, choice = engine.persona(event), argument.strip().lower()
    if choice and choice not in ("on", "off"):
        return _say(engine, event, "quiet_which")
    if choice:
        await engine.contacts.set_contact(
            persona.key, event.platform, event.user_id, quiet=choice == "on", at=engine.clock.now()
        )
        return _say(engine, event, f"quiet_{choice}")
    contact = await engine.contacts.contact(persona.key, event.platform, event.user_id)
    return _say(engine, event, "quiet_on" if contact is not None and contact.quiet else "quiet_off")


async def voice(engine: Engine, event: ChatEvent, argument: str) -> str:
    """`voice on|off`: whether the persona's replies to the sender are said aloud too
    (bot.media.speech): off is text only, on even to what they type; alone, what is chosen now.
    Where the persona has no voice (its [voice] speak is "never", no speech tier, eco mode),
    it says so and keeps nothing."""
    if event.anonymous:
        return _say(engine, event, "anonymous")
    persona, choice = engine.persona(event), argument.strip().lower()
    if choice and choice not in ("on", "off"):
        return _say(engine, event, "voice_which")
    if not engine.models.speaks or persona.voice.speak == "never":
        return _say(engine, event, "voice_none")
    if choice:
        await engine.contacts.set_contact(
            persona.key, event.platform, event.user_id, voice=choice == "on", at=engine.clock.now()
        )
        return _say(engine, event, f"voice_{choice}")
    contact = await engine.contacts.contact(persona.key, event.platform, event.user_id)
    if contact is not None and contact.voice is not None:
        return _say(engine, event, "voice_on" if contact.voice else "voice_off")
    return _say(
        engine, event, "voice_always" if persona.voice.speak == "always" else "voice_default"
    )


async def timezone(engine: Engine, event: ChatEvent, argument: str) -> str:
    """`timezone NAME`: the sender's time zone (an IANA name, checked), for their waking
    hours; alone, the one set, if any."""
    if event.anonymous:
        return _say(engine, event, "anonymous")
    name = argument.strip()
    if not name:
        chosen, _ = await _zone(engine, event)
        if chosen is None:
            return _say(engine, event, "timezone_none")
        return _say(engine, event, "timezone_now", timezone=chosen)
    known = _zone_name(name)
    if known is None:
        return _say(engine, event, "timezone_unknown", timezone=repr(name[:64]))
    persona = engine.persona(event)
    await engine.contacts.set_contact(
        persona.key, event.platform, event.user_id, timezone=known, at=engine.clock.now()
    )
    return _say(engine, event, "timezone_set", timezone=known)


def _zone_name(name: str) -> str | None:
    """The IANA name `name` means (its case as the database spells it), or None."""
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        pass
    else:
        if name in zoneinfo.available_timezones():  # not a path the system happens to have
            return name
    lowered = name.lower()
    return next((z for z in sorted(zoneinfo.available_timezones()) if z.lower() == lowered), None)


# -- the table -------------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class Invocation:
    """One use of a command: by whom and where (`event`), with what argument. `router` is
    the bot's, where one hosts several personas (not in the console)."""

    engine: Engine
    event: ChatEvent
    argument: str
    router: PersonaRouter | None = None

    def say(self, key: str, **values: str) -> str:
        return _say(self.engine, self.event, key, **values)

    @property
    def language(self) -> str:
        """The language of what the bot says here (the bot's, else the persona's)."""
        return self.event.language or self.engine.persona(self.event).identity.language


@dataclass(slots=True, frozen=True)
class Option:
    """A named part of a command's argument, where a surface asks for each (Discord); typed,
    the options are the argument's words in this order."""

    name: str
    required: bool = False
    choices: tuple[str, ...] = ()


@dataclass(slots=True, frozen=True)
class Command:
    name: str
    run: Callable[[Invocation], Awaitable[Answer]]
    options: tuple[Option, ...] = ()
    # The platforms it is offered on, by what they can do (None: everywhere); `listed`: in
    # menus and /help.
    where: Callable[[Platform], bool] | None = None
    listed: bool = True

    def offered_on(self, platform: Platform) -> bool:
        return self.where is None or self.where(platform)


async def _remember(call: Invocation) -> Answer:
    if not call.argument:
        return Answer(call.say("remember_what"))
    return Answer((await remember(call.engine, call.event, call.argument)).message)


async def _recall(call: Invocation) -> Answer:
    if not call.argument:
        return Answer(call.say("recall_what"))
    found = await closest(call.engine, call.event, call.argument)
    if found is None:
        return Answer(call.say("nothing_comes_to_mind"), private=True)
    return Answer(format_memory(found, call.engine, language=call.language), private=True)


async def _memories(call: Invocation) -> Answer:
    found = await list_memories(call.engine, call.event, call.argument)
    if not found:
        key = "no_memories_match" if call.argument else await _why_none(call)
        return Answer(call.say(key), private=True)
    found = await named_now(call.engine, call.event, found)
    said = (format_memory(m, call.engine, language=call.language) for m in found)
    return Answer("\n".join(said), private=True)


async def _why_none(call: Invocation) -> str:
    """What to say when nothing is remembered yet: the conversation going on, or the one that
    just ended, is not written into long-term memory yet."""
    info = await call.engine.info(call.event)
    if info.turns:
        return "memories_after_conversation"
    last = info.last_closed
    if last is not None and last.encoded_at is None and last.turns:
        return "memories_being_written"
    return "no_memories_yet"


async def _forget(call: Invocation) -> Answer:
    """`forget QUERY` lists what matches, with a button per memory; a pick (its button, which
    is `forget !ID`, or a typed `forget N` after the list) forgets it."""
    engine, event, argument = call.engine, call.event, call.argument
    if argument.startswith("!") and argument[1:].isdecimal():
        return _forgotten(call, await forget(engine, event, int(argument[1:])))
    pending = await engine.offered(event)
    if pending and argument.isdecimal():  # "²" is a digit, not a number
        number = int(argument)
        if not 1 <= number <= len(pending):  # still theirs to pick from
            return Answer(call.say("forget_pick_range", count=str(len(pending))))
        await engine.offer(event, [])
        return _forgotten(call, await forget(engine, event, pending[number - 1]))
    if not argument:
        await engine.offer(event, [])
        return Answer(call.say("forget_what"))
    choices = await forget_candidates(engine, event, argument)
    await engine.offer(event, [memory.id for memory in choices])
    if not choices:
        return Answer(call.say("no_memory_matches"), private=True)
    lines = [
        format_memory(m, engine, number=n, language=call.language)
        for n, m in enumerate(choices, start=1)
    ]
    picks = tuple(Button(str(n), "forget", f"!{m.id}") for n, m in enumerate(choices, start=1))
    said = "\n".join([*lines, call.say("forget_which")])
    return Answer(said, private=True, buttons=picks)


def _forgotten(call: Invocation, gone: Memory | None) -> Answer:
    said = call.say("forgotten", text=gone.text) if gone else call.say("already_gone")
    return Answer(said, private=True)


async def _diary(call: Invocation) -> Answer:
    return Answer(await diary(call.engine, call.event, call.argument), private=True)


async def _profile(call: Invocation) -> Answer:
    return Answer(await profile(call.engine, call.event), private=True)


async def _state(call: Invocation) -> Answer:
    word, _, rest = call.argument.partition(" ")
    if word == "set":
        return Answer(await set_state(call.engine, call.event, rest))
    if call.argument:  # the slot and value given as options
        return Answer(await set_state(call.engine, call.event, call.argument))
    return Answer(await show_state(call.engine, call.event))


async def _persona(call: Invocation) -> Answer:
    router, event = call.router, call.event
    assert router is not None  # offered only where a router chooses the persona
    word, _, name = call.argument.partition(" ")
    language = event.language or call.engine.persona(event).identity.language
    if word.lower() != "set":
        return Answer(await router.describe(event.channel_id, language))
    if not event.admin:
        return Answer(call.say("persona_admins_only"))
    return Answer(await router.bind(event.channel_id, name, event.user_id, language))


async def _export(call: Invocation) -> Answer:
    said, data = await export(call.engine, call.event)
    return Answer(said, private=True, file=File("memories.json", data))


async def _dm_memories(call: Invocation) -> Answer:
    return Answer(await dm_memories(call.engine, call.event, call.argument))


async def _group(call: Invocation) -> Answer:
    return Answer(await group(call.engine, call.event, call.argument))


async def _intentions(call: Invocation) -> Answer:
    """Lists the sender's pending intentions here, with a button to cancel each (`intentions
    !ID`); typed, `intentions cancel N` cancels the Nth of the list."""
    engine, event = call.engine, call.event
    if event.anonymous:
        return Answer(call.say("anonymous"))
    argument = call.argument.lower().removeprefix("cancel").strip()
    if argument.startswith("!") and argument[1:].isdecimal():
        return _cancelled(call, await cancel_intention(engine, event, int(argument[1:])))
    listed = (await intentions(engine, event))[:INTENTIONS_SHOWN]
    if argument.isdecimal():  # "²" is a digit, not a number
        number = int(argument)
        if not listed:  # nothing to pick from: not "a number from 1 to 0"
            return Answer(call.say("intentions_none"), private=True)
        if not 1 <= number <= len(listed):
            return Answer(call.say("forget_pick_range", count=str(len(listed))), private=True)
        return _cancelled(call, await cancel_intention(engine, event, listed[number - 1].id))
    if argument:
        return Answer(call.say("intentions_cancel_how"), private=True)
    if not listed:
        return Answer(call.say("intentions_none"), private=True)
    _, tz = await _zone(engine, event)
    lines = [format_intention(engine, event, i, n, tz) for n, i in enumerate(listed, start=1)]
    buttons = tuple(
        Button(call.say("button_cancel_number", number=str(n)), "intentions", f"!{i.id}", True)
        for n, i in enumerate(listed, start=1)
    )
    said = "\n".join([*lines, call.say("intentions_cancel_how")])
    return Answer(said, private=True, buttons=buttons)


def _cancelled(call: Invocation, gone: Intention | None) -> Answer:
    if gone is None:
        return Answer(call.say("intention_gone"), private=True)
    return Answer(call.say("intention_cancelled", what=gone.what), private=True)


async def _quiet(call: Invocation) -> Answer:
    return Answer(await quiet(call.engine, call.event, call.argument))


async def _voice(call: Invocation) -> Answer:
    return Answer(await voice(call.engine, call.event, call.argument))


async def _timezone(call: Invocation) -> Answer:
    return Answer(await timezone(call.engine, call.event, call.argument))


async def _end(call: Invocation) -> Answer:
    return Answer(call.say("ended" if await call.engine.end(call.event) else "not_open"))


async def _wipe(call: Invocation) -> Answer:
    """Asks first (what will really be lost); `wipe yes`, its button, wipes."""
    if call.argument == "yes":
        return Answer(await wipe(call.engine, call.event))
    call.engine.check_may_change(call.event)  # refused before asking, not after
    buttons = (
        Button(call.say("button_wipe"), "wipe", "yes", danger=True),
        Button(call.say("button_cancel"), "cancel"),
    )
    return Answer(wipe_question(call.engine, call.event), buttons=buttons)


async def _cancel(call: Invocation) -> Answer:
    return Answer(call.say("cancelled"))


async def _start(call: Invocation) -> Answer:
    return Answer(call.say("start"))


async def _help(call: Invocation) -> Answer:
    language = call.event.language or call.engine.persona(call.event).identity.language
    platform = call.engine.platforms[call.event.platform]
    lines = [
        f"/{c.name} - {describe(c.name, language)}"
        for c in COMMANDS.values()
        if c.listed and c.offered_on(platform)
    ]
    return Answer("\n".join(lines))


def _groups(platform: Platform) -> bool:
    return platform.groups


def _typed(platform: Platform) -> bool:
    return platform.typed_commands


def _voiced(platform: Platform) -> bool:
    return bool(platform.voice)


def _started(platform: Platform) -> bool:
    return platform.start


_GROUP_CHOICES = ("mode", "talkativeness", "cooldown", "max_per_minute", "reset")

COMMANDS: Mapping[str, Command] = {
    c.name: c
    for c in (
        Command("remember", _remember, (Option("text", required=True),)),
        Command("recall", _recall, (Option("query", required=True),)),
        Command("memories", _memories, (Option("query"),)),
        Command("forget", _forget, (Option("query", required=True),)),
        Command("diary", _diary, (Option("day"),)),
        Command("profile", _profile),
        Command("state", _state, (Option("slot"), Option("value"))),
        Command("persona", _persona, (Option("action"), Option("name")), where=_groups),
        Command("export", _export, where=_groups),
        Command("dm_memories", _dm_memories, (Option("choice", choices=("on", "off")),), _groups),
        Command(
            "group", _group, (Option("setting", choices=_GROUP_CHOICES), Option("value")), _groups
        ),
        Command("intentions", _intentions, (Option("cancel"),)),
        Command("quiet", _quiet, (Option("choice", choices=("on", "off")),)),
        Command("timezone", _timezone, (Option("name"),)),
        Command("voice", _voice, (Option("choice", choices=("on", "off")),), _voiced),
        Command("end", _end),
        Command("wipe", _wipe),
        Command("help", _help, where=_typed),
        Command("start", _start, where=_started, listed=False),
        Command("cancel", _cancel, listed=False),
    )
}


def describe(name: str, language: str) -> str:
    """What command `name` does, in `language`: one line for menus and /help."""
    return say(language, f"help_{name}")


def offered_on(platform: Platform) -> list[Command]:
    """The commands a surface lists in its menu and help."""
    return [c for c in COMMANDS.values() if c.listed and c.offered_on(platform)]


async def run(
    engine: Engine,
    event: ChatEvent,
    name: str,
    argument: str = "",
    *,
    router: PersonaRouter | None = None,
) -> Answer:
    """Run command `name` as `event`'s sender; a refusal is the answer. KeyError for a name
    not in the table (or not offered on the event's platform)."""
    command = COMMANDS[name]
    if not command.offered_on(engine.platforms[event.platform]):
        raise KeyError(name)
    try:
        return await command.run(Invocation(engine, event, argument.strip(), router))
    except NotAllowed as refusal:
        return Answer(str(refusal))
