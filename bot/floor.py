"""Whether a persona speaks in a group, decided here once for every platform, locally and for
free (the intent tier is asked only where a persona wants it).

Adapters pass every group message they can see, with what the platform knows
(`ChatEvent.addressed`: a mention, a reply to the bot, a bound channel; `ChatEvent.names`: the
bot's own names there). `hear` notes each message in its channel and says why it calls on the
persona, if it does: a private chat, a mention, a reply, a bound channel, one of the persona's
names called (word-boundary aware, any case; a Chinese name anywhere in the text), or a
question right after the persona's own message by the one it answered. `decide` takes the
messages of one turn (a burst: bot.bursts) and says whether the persona speaks:

- called on: it speaks, in `listen` mode too, unless it has said `max_per_minute` messages in
  this channel in the last minute (the ceiling, which also ends any loop with another bot);
- uninvited: in `speak` mode, by chance (`talkativeness`), once `cooldown_seconds` have passed
  since it last spoke here, never while several people are talking among themselves fast,
  and, with `ask_model`, only if the intent tier agrees.

A message from a bot is never heard at all. What the persona hears but does not answer still
joins the conversation (the engine's), so it is remembered.

    floor = Floor(clock, random.Random(7))
    heard = floor.hear(persona, event)       # None: a bot's message, nothing to hear
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Literal

from bot.events import ChatEvent
from bot.llm.base import ModelError
from bot.llm.router import ModelRouter
from bot.persona import FloorMode, GroupPolicy, Persona
from bot.prompts import floor_messages
from memory.clock import Clock

__all__ = [
    "CROWD_MESSAGES",
    "CROWD_PEOPLE",
    "CROWD_WINDOW",
    "FOLLOW_UP_WITHIN",
    "Call",
    "ChannelFloor",
    "Floor",
    "Heard",
    "Verdict",
    "called",
    "is_question",
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
# name has no such edge: it is found anywhere in the text).
_EDGE_BEFORE = r"(?<![^\W_\u2e80-\u9fff\u3040-\u30ff\uac00-\ud7af])"
_EDGE_AFTER = r"(?![^\W_\u2e80-\u9fff\u3040-\u30ff\uac00-\ud7af])"


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


@dataclass(slots=True, frozen=True)
class Heard:
    """One message as the floor heard it."""

    user_id: str
    user_name: str
    text: str
    call: Call | None  # why it is for the persona; None: said among others


@dataclass(slots=True, frozen=True)
class Verdict:
    """Whether the persona speaks, and why (a `Call`, "uninvited"; or why not: "listen",
    "quiet", "ceiling", "cooldown", "crowd", "chance", "model")."""

    speak: bool
    why: str


@dataclass(slots=True, frozen=True)
class ChannelFloor:
    """One channel's changes to a persona's `GroupPolicy` (set by an admin); None keeps the
    persona's own."""

    mode: FloorMode | None = None
    talkativeness: float | None = None
    cooldown_seconds: float | None = None
    max_per_minute: int | None = None

    def over(self, policy: GroupPolicy) -> GroupPolicy:
        """The persona's policy with this channel's changes."""
        changes = {
            name: value
            for name in ("mode", "talkativeness", "cooldown_seconds", "max_per_minute")
            if (value := getattr(self, name)) is not None
        }
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


def _room_key(persona: Persona, event: ChatEvent) -> tuple[str, str, str, str]:
    return (persona.key, event.platform, event.chat_id, event.channel_id)


class Floor:
    def __init__(
        self,
        clock: Clock,
        rng: random.Random,
        *,
        models: ModelRouter | None = None,
        channels: Mapping[tuple[str, str, str], ChannelFloor] | None = None,
    ) -> None:
        """`rng` draws the chance of joining in (seeded in tests); `models`: the intent tier,
        for personas that `ask_model`; `channels`: admins' settings by (persona, platform,
        channel id)."""
        self.clock = clock
        self.rng = rng
        self.models = models
        self.channels: dict[tuple[str, str, str], ChannelFloor] = dict(channels or {})
        self._rooms: dict[tuple[str, str, str, str], _Room] = {}
        self._swept: datetime | None = None

    def policy(self, persona: Persona, event: ChatEvent) -> GroupPolicy:
        """The persona's group policy in the event's channel."""
        here = self.channels.get((persona.key, event.platform, event.channel_id))
        return persona.group if here is None else here.over(persona.group)

    def set_channel(self, persona: Persona, event: ChatEvent, floor: ChannelFloor) -> None:
        """An admin's settings for the event's channel (all None: the persona's own again)."""
        key = (persona.key, event.platform, event.channel_id)
        if floor == ChannelFloor():
            self.channels.pop(key, None)
        else:
            self.channels[key] = floor

    def channel(self, persona: Persona, event: ChatEvent) -> ChannelFloor:
        return self.channels.get((persona.key, event.platform, event.channel_id), ChannelFloor())

    def hear(self, persona: Persona, event: ChatEvent) -> Heard | None:
        """Note a message said in the event's channel; why it calls on the persona. None: a
        bot's message, which is never answered nor kept."""
        if event.from_bot:
            return None
        heard = Heard(event.user_id, event.user_name, event.text, self.call(persona, event))
        if event.is_dm:
            return heard
        now = self.clock.now()
        room = self._room(persona, event, now)
        room.heard.append((now, event.user_id))
        while room.heard and now - room.heard[0][0] >= CROWD_WINDOW:
            room.heard.popleft()
        room.since.add(event.user_id)
        room.last_heard = now
        return heard

    def call(self, persona: Persona, event: ChatEvent) -> Call | None:
        """Why the event calls on the persona, if it does (notes nothing)."""
        if event.is_dm:
            return "private"
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

    async def decide(self, persona: Persona, event: ChatEvent, heard: Sequence[Heard]) -> Verdict:
        """Whether the persona speaks to the messages `heard` (one turn's, the newest last,
        `event` its newest) in the event's channel."""
        calls = [h.call for h in heard if h.call is not None]
        if event.is_dm:
            return Verdict(True, "private")
        policy = self.policy(persona, event)
        now = self.clock.now()
        room = self._room(persona, event, now)
        while room.said and now - room.said[0] >= MINUTE:
            room.said.popleft()
        if len(room.said) >= policy.max_per_minute:
            return Verdict(False, "ceiling")
        if calls:
            return Verdict(True, calls[0])
        if policy.mode == "listen":
            return Verdict(False, "listen")
        if policy.talkativeness <= 0:
            return Verdict(False, "quiet")
        cooldown = timedelta(seconds=policy.cooldown_seconds)
        if room.last_spoke is not None and now - room.last_spoke < cooldown:
            return Verdict(False, "cooldown")
        if self._crowded(room, now):
            return Verdict(False, "crowd")
        if self.rng.random() >= policy.talkativeness:
            return Verdict(False, "chance")
        if policy.ask_model and not await self._model_agrees(persona, heard):
            return Verdict(False, "model")
        return Verdict(True, "uninvited")

    def spoke(self, persona: Persona, event: ChatEvent) -> None:
        """The persona answered `event` in its channel."""
        if event.is_dm:
            return
        now = self.clock.now()
        room = self._room(persona, event, now)
        room.said.append(now)
        room.last_spoke = now
        room.spoke_to = event.user_id
        room.since = set()

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
