"""Commands about a user's own memories, platform-free: the console uses them now, and the
Discord and Telegram slash commands reuse them. Each works in the event's memory scope only."""

from __future__ import annotations

from dataclasses import dataclass

from bot.engine import Engine
from bot.events import ChatEvent
from bot.recollect import describe_age
from memory.bank import MemoryError
from memory.recall import Recalled
from memory.records import Memory

__all__ = [
    "FORGET_CHOICES",
    "Remembered",
    "closest",
    "forget",
    "forget_candidates",
    "format_memory",
    "list_memories",
    "remember",
]

FORGET_CHOICES = 5  # matches shown by `forget QUERY`, to pick the one to delete
REMEMBERED = {"en": "{name} will remember that.", "zh": "{name}会记住的。"}


@dataclass(slots=True, frozen=True)
class Remembered:
    id: int | None  # None: refused, `message` says why
    message: str


def format_memory(memory: Recalled, engine: Engine, *, number: int | None = None) -> str:
    """One line: "[3 days ago, strength 0.72] text" (numbered for a choice)."""
    age = describe_age(memory.when, engine.clock.now())
    said = f"{memory.speaker}: {memory.text}" if memory.speaker else memory.text
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
    if engine.memory is None or not query.strip():
        return []
    return await engine.memory.bank.recall(
        engine.event_scope(event), query, k=FORGET_CHOICES, fail=False
    )


async def forget(engine: Engine, event: ChatEvent, memory_id: int) -> Memory | None:
    """Delete one of the user's memories by id; None if it is not theirs or not there."""
    if engine.memory is None:
        return None
    gone = await engine.memory.bank.forget(engine.event_scope(event), memory_id)
    return gone[0] if gone else None
