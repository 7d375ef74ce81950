"""Whether a persona speaks in a group, decided here once for every platform, locally and for
free (the intent tier is asked only where a persona wants it).

Adapters pass every group message they can see, with what the platform knows
(`ChatEvent.addressed`: a mention, a reply to the bot, a bound channel; `ChatEvent.names`: the
bot's own names there). A private chat has no floor: the turn answers it without asking
here (`PRIVATE`). `hear` notes each message in its channel and says why it calls on the
persona, if it does: a mention, a reply, a bound channel, one of the persona's names called
(word-boundary aware, any case; a Chinese name anywhere in the text), or a question right
after the persona's own message by the one it answered. `decide` takes the messages of one
turn (a burst: bot.turn.settle) and says whether the persona speaks:

- called on: it speaks, in `listen` mode too;
- uninvited: in `speak` mode, by chance (`talkativeness`), unless it has said
  `max_per_minute` messages in this channel in the last minute (called on or not), once
  `cooldown_seconds` have passed since it last spoke here, never while several people are
  talking among themselves fast, and, with `ask_model`, only if the intent tier agrees.

Another persona of this process in the same room (relayed by bot.groups.relay, `from_persona`) calls
on the persona only by name, and only while the personas have made fewer than
`persona_exchanges` replies to one another since a person last spoke in the channel; it is
never joined uninvited. A message from a bot is never heard at all (adapters drop them;
bot.turn.admit is the second guard), so two bots never keep each other talking. What the
persona hears but does not answer still joins the conversation (the engine's), so it is
remembered.

    floor = Floor(clock, random.Random(7))
    heard = floor.hear(persona, event)       # a group message, not a bot's
    verdict = await floor.decide(persona, event, [heard])
    if verdict.speak:
        ...                                  # answer, then
        floor.spoke(persona, event)
"""

from __future__ import annotations

import json
import logging
import random
import re
from collections import deque
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Literal, get_args

from bot.chat_model import ModelError
from bot.events import ChatEvent
from bot.llm.router import ModelRouter
from bot.persona.file import FloorMode, GroupPolicy, Persona
from bot.prompts import floor_messages
from memory.clock import Clock
from memory.storage import RoomStore

__all__ = [
    "CROWD_MESSAGES",
    "CROWD_PEOPLE",
    "CROWD_WINDOW",
    "FOLLOW_UP_WITHIN",
    "PRIVATE",
    "SETTINGS",
    "Call",
    "ChannelFloor",
    "Floor",
    "FloorDecision",
    "Heard",
    "called",
    "is_question",
    "parse_setting",
]

log = logging.getLogger(__name__)

# Why a message is for the persona.
Call = Literal["private", "mention", "reply", "bound", "name", "question"]
MINUTE = timedelta(minutes=1)
# People talking among themselves: this many messages from at least CROWD_PEOPLE people
# within CROWD_WINDOW. The persona does not barge in on that uninvited.
CROWD_WINDOW = timedelta(seconds=60)
CROWD_MESSAGES = 4
CROWD_PEOPLE = 2
# A question by the person the persona just answered, with no one between, is for it.
FOLLOW_UP_WITHIN = timedelta(minutes=5)
ROOMS_KEPT = 1024  # channels remembered before the quiet ones are dropped
ROOM_IDLE = timedelta(hours=1)

_QUESTION = re.compile(r"[?？]|(?:吗|呢|么|嘛)\s*[。.!！~\uff5e]*\s*$")
# A name's edge: not next to a letter or digit of a script that spaces its words (a Chinese
# name has no such edge: it is found anywhere in the text). A name after "@" is a mention, of
# this bot or of someone else of that name: the platform tells which (`ChatEvent.addressed`).
_EDGE_BEFORE = r"(?<![^\W\u2e80-\u9fff\u3040-\u30ff\uac00-\ud7af])(?<!@)"
_EDGE_AFTER = r"(?![^\W\u2e80-\u9fff\u3040-\u30ff\uac00-\ud7af])"


def is_question(text: str) -> bool:
    """Whether `text` asks something: a question mark, or a Chinese question particle at
    its end."""
    return bool(_QUESTION.search(text))


def called(text: str, names: Sequence[str]) -> bool:
    """Whether one of `names` is said in `text`, as a word of its own, in any case."""
    wanted = sorted({n.strip() for n in names if n.strip()}, key=len, reverse=True)
    if not wanted:
        return False
    alternatives = "|".join(re.escape(n) for n in wanted)
    pattern = rf"{_EDGE_BEFORE}(?:{alternatives}){_EDGE_AFTER}"
    return re.search(pattern, text, re.IGNORECASE) is not None


# What an admin may change for a channel (`/group SETTING VALUE`), with its bounds.
SETTINGS = ("mode", "talkativeness", "cooldown_seconds", "max_per_minute")
BOUNDS: dict[str, tuple[float, float]] = {
    "talkativeness": (0.0, 1.0),
    "cooldown_seconds": (0.0, 24 * 3600.0),
    "max_per_minute": (1, 60),
}


def parse_setting(name: str, value: str) -> str | float | int | None:
    """A channel setting's value from what an admin typed; None if it is not one."""
    value = value.strip().lower()
    if name == "mode":
        return value if value in get_args(FloorMode) else None
    if name not in BOUNDS:
        return None
    low, high = BOUNDS[name]
    try:
        number: float | int = int(value) if name == "max_per_minute" else float(value)
    except ValueError:
        return None
    return number if low <= number <= high else None


@dataclass(slots=True, frozen=True)
class Heard:
    """One message as the floor heard it."""

    user_id: str
    user_name: str
    text: str
    call: Call | None  # why it is for the persona; None: said among others
    persona: bool = False  # said by another persona in the room (bot.groups.relay)


@dataclass(slots=True, frozen=True)
class FloorDecision:
    """Whether the persona speaks, and why (a `Call`, "uninvited"; or why not: "listen",
    "quiet", "ceiling", "cooldown", "crowd", "chance", "model", "persona": only other
    personas spoke, none calling it)."""

    speak: bool
    why: str


PRIVATE = FloorDecision(True, "private")  # a private chat's: it has no floor, and is answered


@dataclass(slots=True, frozen=True)
class ChannelFloor:
    """One channel's changes to a persona's `GroupPolicy` (set by an admin); None keeps the
    persona's own."""

    mode: FloorMode | None = None
    talkativeness: float | None = None
    cooldown_seconds: float | None = None
    max_per_minute: int | None = None

    def to_json(self) -> str | None:
        """As the store keeps it; None when it changes nothing."""
        changes = {
            name: getattr(self, name) for name in SETTINGS if getattr(self, name) is not None
        }
        return json.dumps(changes) if changes else None

    @classmethod
    def from_json(cls, text: str) -> ChannelFloor:
        """What the store kept; a value that is not one (an older or hand-edited row) is
        left out, so the persona's own applies."""
        try:
            data = json.loads(text)
        except ValueError:
            return cls()
        if not isinstance(data, dict):
            return cls()
        found: dict[str, Any] = {}
        for name in SETTINGS:
            value = data.get(name)
            if parse_setting(name, str(value)) == value and value is not None:
                found[name] = value
        return cls(**found)

    def changed(self, name: str, typed: str) -> ChannelFloor | None:
        """These settings with `name` set to what an admin typed; None if it is no value of
        it (see `parse_setting`)."""
        value = parse_setting(name, typed)
        if value is None:
            return None
        changes: dict[str, Any] = {name: value}
        return replace(self, **changes)

    def over(self, policy: GroupPolicy) -> GroupPolicy:
        """The persona's policy with this channel's changes."""
        changes = {name: value for name in SETTINGS if (value := getattr(self, name)) is not None}
        return replace(policy, **changes) if changes else policy


@dataclass(slots=True)
class _Room:
    """What the floor keeps of one persona in one channel."""

    said: deque[datetime] = field(default_factory=deque)  # its messages, the last minute
    heard: deque[tuple[datetime, str]] = field(default_factory=deque)  # people's, the crowd
    last_spoke: datetime | None = None
    spoke_to: str = ""  # whom it answered last
    since: set[str] = field(default_factory=set)  # who has spoken here since it did
    last_heard: datetime | None = None


@dataclass(slots=True)
class _Exchanges:
    """The personas' replies to one another in a channel since a person spoke there."""

    count: int = 0
    people: deque[str] = field(default_factory=lambda: deque(maxlen=64))  # their messages' ids


def _channel(event: ChatEvent) -> str:
    return f"{event.platform}:{event.channel_id}"


def _room_key(persona: Persona, event: ChatEvent) -> tuple[str, str, str, str]:
    return (persona.key, event.platform, event.chat_id, event.channel_id)


class Floor:
    def __init__(
        self,
        clock: Clock,
        rng: random.Random,
        *,
        models: ModelRouter | None = None,
        rooms: RoomStore | None = None,
    ) -> None:
        """`rng` draws the chance of joining in (seeded in tests); `models`: the intent tier,
        for personas that `ask_model`; `rooms`: where admins' settings for a channel are kept
        (read once a channel, kept here until another process changes them)."""
        self.clock = clock
        self.rng = rng
        self.models = models
        self.rooms = rooms
        self._channels: dict[tuple[str, str], ChannelFloor] = {}
        self._listening = False
        self._rooms: dict[tuple[str, str, str, str], _Room] = {}
        self._swept: datetime | None = None
        # Replies personas made to one another in a channel since a person last spoke there.
        self._exchanges: dict[str, _Exchanges] = {}

    async def channel(self, persona: Persona, event: ChatEvent) -> ChannelFloor:
        """The admins' settings for the persona in the event's channel."""
        key = (persona.key, _channel(event))
        found = self._channels.get(key)
        if found is None:
            kept = None
            if self.rooms is not None:
                try:
                    if not self._listening:  # before the first read: no change is missed
                        await self.rooms.listen_rooms(self.changed_elsewhere, self.missed)
                        self._listening = True
                    kept = await self.rooms.channel_floor(*key)
                except Exception:  # the persona's own settings meanwhile
                    log.exception("could not read a channel's group settings")
                    return ChannelFloor()
            found = self._channels[key] = (
                ChannelFloor() if kept is None else ChannelFloor.from_json(kept)
            )
        return found

    def changed_elsewhere(self, persona: str, room: str) -> None:
        """Another process changed the room's settings for the persona: read them again."""
        self._channels.pop((persona, room), None)

    def missed(self) -> None:
        """Other processes' changes to settings may have gone unheard: read every room's
        again."""
        self._channels.clear()

    async def policy(self, persona: Persona, event: ChatEvent) -> GroupPolicy:
        """The persona's group policy in the event's channel."""
        return (await self.channel(persona, event)).over(persona.group)

    async def set_channel(self, persona: Persona, event: ChatEvent, floor: ChannelFloor) -> None:
        """An admin's settings for the event's channel (all None: the persona's own again),
        kept in the store."""
        key = (persona.key, _channel(event))
        if self.rooms is not None:
            await self.rooms.set_channel_floor(
                *key, floor.to_json(), event.user_id, self.clock.now()
            )
        self._channels[key] = floor

    def hear(self, persona: Persona, event: ChatEvent) -> Heard:
        """Note a message said in the event's channel (a group's, not a bot's); why it calls
        on the persona."""
        heard = Heard(
            event.user_id,
            event.user_name,
            event.text,
            self.call(persona, event),
            persona=event.from_persona,
        )
        if not event.from_persona:  # a person spoke: the personas may answer each other anew
            self._person_spoke(event)
        now = self.clock.now()
        room = self._room(persona, event, now)
        room.heard.append((now, event.user_id))
        while room.heard and now - room.heard[0][0] >= CROWD_WINDOW:
            room.heard.popleft()
        room.since.add(event.user_id)
        room.last_heard = now
        return heard

    def others_since(
        self, persona: Persona, event: ChatEvent, since: datetime, speakers: Collection[str]
    ) -> bool:
        """Whether someone other than `speakers` has spoken in the event's channel since
        `since` (within the last minute the floor keeps): a reply then answers a message that
        is no longer the last one, and threads to it."""
        room = self._rooms.get(_room_key(persona, event))
        return room is not None and any(
            at >= since and who not in speakers for at, who in room.heard
        )

    def call(self, persona: Persona, event: ChatEvent) -> Call | None:
        """Why a group's event calls on the persona, if it does (notes nothing)."""
        if event.from_persona:  # another persona: by name only, and only so many in a row
            exchanges = self._exchanges.get(_channel(event))
            if exchanges is not None and exchanges.count >= persona.group.persona_exchanges:
                return None
            names = [persona.identity.name, persona.identity.nickname, *persona.group.names]
            return "name" if called(event.text, names) else None
        for fact in ("mention", "reply", "bound"):
            if fact in event.addressed:
                return fact
        identity = persona.identity
        names = [identity.name, identity.nickname, *persona.group.names, *event.names]
        if called(event.text, names):
            return "name"
        room = self._rooms.get(_room_key(persona, event))
        if (
            room is not None
            and room.last_spoke is not None
            and room.spoke_to == event.user_id
            and room.since <= {event.user_id}
            and self.clock.now() - room.last_spoke <= FOLLOW_UP_WITHIN
            and is_question(event.text)
        ):
            return "question"
        return None

    async def decide(
        self, persona: Persona, event: ChatEvent, heard: Sequence[Heard]
    ) -> FloorDecision:
        """Whether the persona speaks to the messages `heard` (one turn's, the newest last,
        `event` its newest) in the event's channel."""
        calls = [h.call for h in heard if h.call is not None]
        if calls:
            return FloorDecision(True, calls[0])
        if all(h.persona for h in heard):  # never joins in uninvited on personas alone
            return FloorDecision(False, "persona")
        policy = await self.policy(persona, event)
        now = self.clock.now()
        room = self._room(persona, event, now)
        while room.said and now - room.said[0] >= MINUTE:
            room.said.popleft()
        if policy.mode == "listen":
            return FloorDecision(False, "listen")
        if policy.talkativeness <= 0:
            return FloorDecision(False, "quiet")
        if len(room.said) >= policy.max_per_minute:
            return FloorDecision(False, "ceiling")
        cooldown = timedelta(seconds=policy.cooldown_seconds)
        if room.last_spoke is not None and now - room.last_spoke < cooldown:
            return FloorDecision(False, "cooldown")
        if self._crowded(room, now):
            return FloorDecision(False, "crowd")
        if self.rng.random() >= policy.talkativeness:
            return FloorDecision(False, "chance")
        if policy.ask_model and not await self._model_agrees(persona, heard):
            return FloorDecision(False, "model")
        return FloorDecision(True, "uninvited")

    def spoke(self, persona: Persona, event: ChatEvent) -> None:
        """The persona answered `event` in its channel."""
        now = self.clock.now()
        room = self._room(persona, event, now)
        room.said.append(now)
        room.last_spoke = now
        room.spoke_to = event.user_id
        room.since = set()
        if event.from_persona:
            self._exchanges.setdefault(_channel(event), _Exchanges()).count += 1

    def _person_spoke(self, event: ChatEvent) -> None:
        """A person's message starts the personas' count again, once: each bot of the process
        hears the same message, maybe while the personas are answering each other already."""
        channel = _channel(event)
        exchanges = self._exchanges.get(channel)
        if exchanges is None:
            if len(self._exchanges) >= ROOMS_KEPT:  # the channels where no persona answered
                self._exchanges = {k: e for k, e in self._exchanges.items() if e.count}
            exchanges = self._exchanges[channel] = _Exchanges()
        if event.message_id and event.message_id in exchanges.people:
            return
        exchanges.count = 0
        if event.message_id:
            exchanges.people.append(event.message_id)

    def _crowded(self, room: _Room, now: datetime) -> bool:
        recent = [user for at, user in room.heard if now - at < CROWD_WINDOW]
        return len(recent) >= CROWD_MESSAGES and len(set(recent)) >= CROWD_PEOPLE

    async def _model_agrees(self, persona: Persona, heard: Sequence[Heard]) -> bool:
        """The intent tier's "should I answer?"; a failure or an unclear answer is no."""
        if self.models is None:
            return False
        lines = [(h.user_name, h.text) for h in heard]
        messages = floor_messages(persona.identity.name, lines)
        try:
            completion = await self.models.complete(
                "intent", messages, json_mode=True, purpose="floor"
            )
        except ModelError as e:
            log.info("the intent model failed (%s); %s stays quiet", e, persona.key)
            return False
        match = re.search(r"\{.*\}", completion.text, re.DOTALL)
        try:
            answer = json.loads(match.group(0)) if match else None
        except ValueError:
            answer = None
        return isinstance(answer, dict) and answer.get("answer") is True

    def _room(self, persona: Persona, event: ChatEvent, now: datetime) -> _Room:
        key = _room_key(persona, event)
        room = self._rooms.get(key)
        if room is None:
            self._sweep(now)
            room = self._rooms[key] = _Room()
        return room

    def _sweep(self, now: datetime) -> None:
        """Drop the rooms quiet for an hour, so the table stays small; at most once a minute."""
        if len(self._rooms) < ROOMS_KEPT or (self._swept and now - self._swept < MINUTE):
            return
        self._swept = now
        for key, room in list(self._rooms.items()):
            last = max((t for t in (room.last_spoke, room.last_heard) if t), default=None)
            if last is None or now - last >= ROOM_IDLE:
                del self._rooms[key]
