"""What the commands work with: the user's own conversation (bot.conversation.desk), long-term
memory (the bank itself, memory.bank.MemoryBank, and what `profile`, `diary` and the speakers'
names ask of bot.conversation.recollect.Recollector), the channels' floor settings
(bot.groups.floor), whether the persona can speak, and the store's contacts, sharing choices and
intentions (by the store's own protocols, memory.storage, where their contract is written).
The runtime builds one `Services` for every surface of the process."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, tzinfo
from typing import Protocol

from bot.catalogue import say
from bot.conversation.desk import Desk
from bot.events import ChatEvent
from bot.groups.floor import ChannelFloor
from bot.persona.file import GroupPolicy, Persona
from bot.platforms import Platforms
from memory.bank import MemoryBank
from memory.clock import Clock
from memory.dates import DateMention
from memory.encoding.diary import NamedDays
from memory.recall.ranking import Recalled
from memory.records import DiaryEntry, Profile
from memory.storage import ContactStore, IntentionStore, RoomStore

__all__ = [
    "ChannelFloors",
    "DiaryPages",
    "Recollections",
    "Services",
    "Speaking",
]


class Recollections(Protocol):
    """What encoding wrote of the scope's people (Recollector): their profiles, and the names
    they go by now."""

    async def profile(self, scope: str, user_id: str) -> Profile | None: ...

    async def named(
        self, scope: str, memories: Sequence[Recalled], present: Mapping[str, str]
    ) -> list[Recalled]: ...


class DiaryPages(Protocol):
    """The persona's diary of a scope (memory.encoding.diary.Diary)."""

    async def pages(self, scope: str, *, limit: int = ...) -> list[DiaryEntry]: ...

    async def read(
        self, scope: str, mention: DateMention, today: date, *, tz: tzinfo | None = ...
    ) -> NamedDays | None: ...


class ChannelFloors(Protocol):
    """A channel's admins' settings of when the persona speaks there (bot.groups.floor.Floor)."""

    async def channel(self, persona: Persona, event: ChatEvent) -> ChannelFloor: ...

    async def set_channel(
        self, persona: Persona, event: ChatEvent, floor: ChannelFloor
    ) -> None: ...

    async def policy(self, persona: Persona, event: ChatEvent) -> GroupPolicy: ...


class Speaking(Protocol):
    """Whether replies can be said aloud at all (bot.llm.router.ModelRouter)."""

    @property
    def speaks(self) -> bool: ...


@dataclass(slots=True, frozen=True)
class Services:
    """`memories`, `recollections` and `diary` are None when long-term memory is off."""

    desk: Desk
    platforms: Platforms
    clock: Clock
    tz: tzinfo  # the bot's time zone
    contacts: ContactStore  # what each person chose about being reached
    sharing: RoomStore  # whether a user lets their private memories into groups
    intentions: IntentionStore  # what the persona means to bring up with each person
    floors: ChannelFloors
    voices: Speaking
    memories: MemoryBank | None = None
    recollections: Recollections | None = None
    diary: DiaryPages | None = None

    def persona(self, event: ChatEvent) -> Persona:
        return self.desk.persona(event)

    def language(self, event: ChatEvent) -> str:
        """The language of what the bot says to the event (the bot's, else the persona's)."""
        return event.language or self.persona(event).identity.language

    def say(self, event: ChatEvent, key: str, **values: str) -> str:
        """The catalogue's sentence `key` in the event's language, the persona's name in it."""
        name = self.persona(event).identity.name
        return say(self.language(event), key, **({"name": name} | values))

    def day(self, event: ChatEvent, day: date) -> str:
        """A day as the persona says it: "Tuesday 2026-09-01", "2026-09-01（星期二）"."""
        weekdays = self.say(event, "weekdays").split(",")
        return self.say(event, "day", weekday=weekdays[day.weekday()], date=day.isoformat())
