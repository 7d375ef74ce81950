"""Commands about a user's own memories, diary, profile and state, platform-free: the console
uses them, and the Discord and Telegram slash commands reuse them. Each works in the event's
memory scope only. Those that change or take away a memory (forget, wipe, export, state set)
raise `NotAllowed` when that memory is a channel's shared one and the sender is not its admin."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date

from bot.catalogue import say
from bot.engine import Engine
from bot.events import ChatEvent
from bot.recollect import describe_age, memory_text
from memory.bank import MemoryError
from memory.dates import find_dates
from memory.recall import Recalled
from memory.records import Memory

__all__ = [
    "ANONYMOUS",
    "DESCRIPTIONS",
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
    "list_memories",
    "profile",
    "remember",
    "set_state",
    "show_state",
    "wipe",
    "wipe_question",
]

# What each shared command does, one line for every surface's help and command menu (Discord
# allows 100 characters); the adapters add only how their own syntax differs.
DESCRIPTIONS: dict[str, str] = {
    "remember": "remember TEXT for good",
    "recall": "the memory closest to QUERY",
    "memories": "what is remembered of you (or the best matches of QUERY)",
    "forget": "pick one of your memories matching QUERY to delete",
    "diary": "the diary page for a day (yesterday, 2026-09-03...), or the newest",
    "profile": "what is known of you",
    "state": "what is kept track of here; `state set NAME VALUE` changes it",
    "persona": "who talks here; `persona set NAME` changes it (admins)",
    "export": "your memories as a JSON file, sent to you privately",
    "dm_memories": "on/off: may what you say in private come up in groups (off by default)",
    "end": "end the conversation now (it goes to long-term memory)",
    "wipe": "forget this conversation and everything remembered of you",
}
EXPORT_LIMIT = 10_000  # memories in one export
FORGET_CHOICES = 5  # matches shown by `forget QUERY`, to pick the one to delete
REMEMBERED = {"en": "{name} will remember that.", "zh": "{name}会记住的。"}
# To a sender the platform cannot tell from others (bot.events.ChatEvent.anonymous): their
# memory commands act on the chat's shared memory (sessions.scope_key), and those about them
# as a person have no one to be about.
ANONYMOUS = (
    "You are writing anonymously here, so {name} cannot tell you from the others who do: "
    "{name} keeps no memory of you personally, only this chat's. Write under your own name "
    "(or to {name} privately) for that."
)


@dataclass(slots=True, frozen=True)
class Remembered:
    id: int | None  # None: refused, `message` says why
    message: str


def format_memory(memory: Recalled, engine: Engine, *, number: int | None = None) -> str:
    """One line: "[3 days ago, strength 0.72] text" (numbered for a choice)."""
    age = describe_age(memory.when, engine.clock.now())
    said = memory_text(memory)
    head = f"{number}. " if number is not None else ""
    return f"{head}[{age}, strength {memory.retention:.2f}] {said}"


async def remember(engine: Engine, event: ChatEvent, text: str) -> Remembered:
    """Store an explicit memory (importance 3) of what the user asked to be remembered."""
    if engine.memory is None:
        return Remembered(None, "Long-term memory is off.")
    try:
        memory_id = await engine.memory.bank.remember(
            engine.event_scope(event),
            text,
            speaker=event.user_name or None,
            importance=3,
            kind="explicit",
            when=engine.clock.now(),
        )
    except MemoryError as e:
        return Remembered(None, f"Nothing remembered: {e}.")
    identity = engine.persona(event).identity
    said = REMEMBERED.get(identity.language, REMEMBERED["en"])
    return Remembered(memory_id, said.format(name=identity.name))


async def closest(engine: Engine, event: ChatEvent, cue: str) -> Recalled | None:
    """The memory closest to `cue`, looked up on purpose (no retrieval failure)."""
    if engine.memory is None or not cue.strip():
        return None
    hits = await engine.memory.bank.recall(engine.event_scope(event), cue, k=1, fail=False)
    return hits[0] if hits else None


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
    return await engine.memory.bank.recall(
        engine.event_scope(event), query, k=FORGET_CHOICES, fail=False
    )


async def forget(engine: Engine, event: ChatEvent, memory_id: int) -> Memory | None:
    """Delete one of the user's memories by id; None if it is not theirs or not there."""
    engine.check_may_change(event)
    if engine.memory is None:
        return None
    gone = await engine.memory.bank.forget(engine.event_scope(event), memory_id)
    return gone[0] if gone else None


async def diary(engine: Engine, event: ChatEvent, day: str = "") -> str:
    """The persona's diary page for a day ("yesterday", "2026-09-03", "上周三"...), or, with
    no day, the newest page."""
    if engine.memory is None:
        return "Long-term memory is off."
    scope = engine.event_scope(event)
    pages = engine.memory.diary
    now = engine.clock.now().astimezone(engine.tz)
    if not day.strip():
        newest = await pages.pages(scope, limit=1)
        if not newest:
            return "The diary is empty so far."
        return _page(newest[0].day, newest[0].text)
    # A bare weekday means the last one ("/diary tuesday"); in chat only "on Tuesday" does.
    mentioned = find_dates(day, now) or find_dates(f"on {day.strip()}", now)
    if not mentioned:
        return f"Which day is {day.strip()!r}? Try a date like 2026-09-03, or yesterday."
    wanted = mentioned[0].day
    if wanted > now.date():
        return f"{wanted:%A %Y-%m-%d} has not happened yet."
    entry = await pages.page(scope, wanted)
    if entry is None:
        return f"No diary page for {wanted:%A %Y-%m-%d}."
    return _page(entry.day, entry.text)


def _page(day: date, text: str) -> str:
    return f"Diary, {day:%A %Y-%m-%d}:\n{text}"


async def profile(engine: Engine, event: ChatEvent) -> str:
    """What the persona knows of the user (written when conversations are encoded)."""
    if engine.memory is None:
        return "Long-term memory is off."
    if event.anonymous:
        return ANONYMOUS.format(name=engine.persona(event).identity.name)
    found = await engine.memory.bank.store.profiles(engine.event_scope(event), [event.user_id])
    name = engine.persona(event).identity.name
    if not found or not found[0].text:
        return f"{name} knows nothing about you yet: a profile is written after a conversation."
    return f"What {name} knows of you:\n{found[0].text}"


async def show_state(engine: Engine, event: ChatEvent) -> str:
    """The persona's state slots in this scope (a dungeon master's party and game)."""
    persona = engine.persona(event)
    if not persona.state:
        return f"{persona.identity.name} keeps no state."
    state = (await engine.info(event)).state
    return "\n".join(
        f"{slot.name} ({slot.update}):\n{slot.value(state) or '(not set)'}"
        for slot in persona.state
    )


async def set_state(engine: Engine, event: ChatEvent, argument: str) -> str:
    """`state set NAME VALUE`: the user changes a slot themselves (the way to change a slot
    updated `once`, such as the party's characters)."""
    persona = engine.persona(event)
    name, _, value = argument.strip().partition(" ")
    names = [slot.name for slot in persona.state]
    if not names:
        return f"{persona.identity.name} keeps no state."
    if name not in names:
        return f"No state slot {name!r}; the slots are: {', '.join(names)}."
    if not value.strip():
        return f"Give the new value: state set {name} VALUE"
    stored = await engine.set_state(event, name, value)
    return f"{name} is now:\n{stored}"


async def export(engine: Engine, event: ChatEvent) -> tuple[str, bytes]:
    """The user's memories with this persona as a JSON file: (a line saying how many, the
    file's bytes)."""
    engine.check_may_change(event)
    found = await list_memories(engine, event, limit=EXPORT_LIMIT)
    rows = [
        {
            "id": m.id,
            "text": m.text,
            "when": m.when.isoformat(),
            "speaker": m.speaker,
            "importance": m.importance,
            "kind": m.kind,
            "strength": round(m.retention, 3),
        }
        for m in found
    ]
    said = f"{len(rows)} memor{'y' if len(rows) == 1 else 'ies'}."
    return said, json.dumps(rows, ensure_ascii=False, indent=2).encode("utf-8")


def wipe_question(engine: Engine, event: ChatEvent) -> str:
    """What a wipe asks before it forgets: what will really be lost."""
    identity = engine.persona(event).identity
    key = "wipe_question_channel" if engine.shares(event) else "wipe_question_you"
    return say(identity.language, key, name=identity.name)


async def wipe(engine: Engine, event: ChatEvent) -> str:
    """Forget the conversation and every memory of the event's scope; says what is gone."""
    await engine.wipe(event)
    identity = engine.persona(event).identity
    key = "wiped_channel" if engine.shares(event) else "wiped_you"
    return say(identity.language, key, name=identity.name)


async def dm_memories(engine: Engine, event: ChatEvent, argument: str) -> str:
    """`dm_memories on|off`: whether the persona may bring what the user said in private into
    the user's own conversations with it in groups. Off unless the user turns it on."""
    persona = engine.persona(event)
    name = persona.identity.name
    if event.anonymous:  # no private chat of theirs to share from
        return ANONYMOUS.format(name=name)
    store = engine.sessions.store
    user = f"{event.platform}:{event.user_id}"
    choice = argument.strip().lower()
    if choice in ("on", "off"):
        await store.set_dm_sharing(persona.key, user, choice == "on", engine.clock.now())
    shared = await store.dm_sharing(persona.key, user)
    if persona.memory.scope != "user":
        return f"In groups {name} shares one memory with the whole channel; private ones stay out."
    if shared:
        return f"{name} may bring up what you said in private in your conversations in groups."
    return f"What you tell {name} in private stays private: it never comes up in groups."
