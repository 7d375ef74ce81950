"""Several personas in one room: where one process hosts several personas in one channel (one
bot speaking as several through Discord webhooks, or several bots of one process, Telegram's
several tokens), each hears what the others say, relayed here in-process, never through the
platform (whose bots' messages the adapters keep ignoring, so no bot outside can start a loop).

A persona's reply said in a group room becomes a `ChatEvent` for every other persona seated in that
room: its speaker `persona:<key>`, under the persona's name, `from_persona` set. Each hears it as a
member of the conversation, in that channel only (bot.conversation.sessions.scope_key: a user-scoped
persona's conversation with another persona is one per channel, so what was said where some cannot
read never reaches a reply where they can). It is hearsay (bot.conversation.sessions.Turn): derived
from the speaker's own memories of someone, it is kept while the conversation is open, never
archived nor encoded into the hearer's long-term memory, and neither is what the hearer says with it
in view. A persona answers another only when called by name, and the personas' replies to one
another are bounded by `group.persona_exchanges` since a person last spoke there (bot.groups.floor
counts them), so there is never an endless loop. Whatever a persona answers is relayed in turn.

An adapter seats its bot's personas in a room as it hears a message there, with a way to
deliver a relayed message to one of them (answer it through the front, and speak the answer in
that room); a seat is kept for the room's latest `where`, and rooms quiet for a day are
dropped.

    relay = Relay(clock)
    relay.seat(event, "tg-miao", ("miao",), deliver)     # as the bot hears a group message
    await relay.said(event, "miao", "Miao", reply_text)  # once miao has spoken there
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.events import ChatEvent
from memory.clock import Clock

__all__ = ["PERSONA_SPEAKER", "Deliver", "Relay", "is_persona_speaker", "speaker_id"]

log = logging.getLogger(__name__)

PERSONA_SPEAKER = "persona:"  # the start of a persona's speaker id in a room
ROOM_IDLE = timedelta(days=1)  # a room's seats are forgotten after this long without a word
ROOMS_KEPT = 4096  # rooms kept before the idle ones are dropped

# Hands a relayed message to one persona of a seat; returns the name it spoke under and what it
# said back there, or None for nothing.
Deliver = Callable[[ChatEvent], Awaitable[tuple[str, str] | None]]


def speaker_id(persona: str) -> str:
    """A persona's id as a speaker in a room."""
    return PERSONA_SPEAKER + persona


def is_persona_speaker(user_id: str) -> bool:
    return user_id.startswith(PERSONA_SPEAKER)


@dataclass(slots=True)
class _Seat:
    bot_id: str
    personas: tuple[str, ...]
    deliver: Deliver
    seen: datetime


def _room(event: ChatEvent) -> tuple[str, str, str]:
    return (event.platform, event.chat_id, event.channel_id)


class Relay:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._rooms: dict[tuple[str, str, str], dict[str, _Seat]] = {}

    def seat(
        self, event: ChatEvent, bot_id: str, personas: Sequence[str], deliver: Deliver
    ) -> None:
        """Bot `bot_id`'s `personas` are in the event's room (a group's channel), reached by
        `deliver`."""
        if event.is_dm or event.from_persona:
            return
        now = self.clock.now()
        key = _room(event)
        if key not in self._rooms and len(self._rooms) >= ROOMS_KEPT:
            self._sweep(now)
        seats = self._rooms.setdefault(key, {})
        seats[bot_id] = _Seat(bot_id, tuple(personas), deliver, now)

    def others(self, event: ChatEvent, persona: str) -> list[tuple[str, _Seat]]:
        """The personas seated in the event's room besides `persona`, each once, with its
        seat."""
        found: dict[str, _Seat] = {}
        for seat in self._rooms.get(_room(event), {}).values():
            for key in seat.personas:
                if key != persona:
                    found.setdefault(key, seat)
        return list(found.items())

    async def said(self, event: ChatEvent, persona: str, name: str, text: str) -> None:
        """Persona `persona` (called `name`) said `text` in the event's room: every other
        persona seated there hears it, and what each answers is heard in turn. The floor stops
        the chain (by name only, `persona_exchanges` at most). A failure to deliver to one is
        logged; the others still hear."""
        if event.is_dm or not text.strip():
            return
        for key, seat in self.others(event, persona):
            heard = ChatEvent(
                platform=event.platform,
                bot_id=seat.bot_id,
                persona=key,
                chat_id=event.chat_id,
                channel_id=event.channel_id,
                user_id=speaker_id(persona),
                user_name=name,
                is_dm=False,
                text=text,
                timestamp=self.clock.now(),
                from_persona=True,
            )
            try:
                answer = await seat.deliver(heard)
            except Exception:  # (the deliverer logs what failed; never what was said)
                log.exception("relaying to %s in %s failed", key, event.platform)
                continue
            if answer is not None:
                await self.said(heard, key, *answer)

    def _sweep(self, now: datetime) -> None:
        for key, seats in list(self._rooms.items()):
            if all(now - s.seen >= ROOM_IDLE for s in seats.values()):
                del self._rooms[key]
