"""A persona greets a new member of a group, only where its `group.greet` is on: at most once in
`WELCOME_EVERY` per channel (a raid of joins is greeted once), one chat-tier call, and the
catalogue's line in the persona's language if the model fails. Platform-free: an adapter tells
the front who joined (Telegram's new_chat_members; Discord's member join, with the members
intent asked for only when a persona of the bot greets).

    welcomes = Welcomes(clock, models)
    reply = await welcomes.welcome(persona, event)   # event: the member, in the channel
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from bot.catalogue import say
from bot.chat_model import ModelError
from bot.events import ChatEvent, Reply
from bot.llm.router import ModelRouter
from bot.persona.cards import resolve_placeholders
from bot.persona.file import Persona
from bot.prompts import EMOTION_INSTRUCTION, QUOTED, parse_emotion, system_text, welcome_messages
from memory.clock import Clock

__all__ = ["WELCOME_EVERY", "Welcomes"]

log = logging.getLogger(__name__)

WELCOME_EVERY = timedelta(minutes=5)  # per channel: one greeting, however many join
CHANNELS_KEPT = 4096  # channels remembered before those greeted long ago are dropped


class Welcomes:
    def __init__(self, clock: Clock, models: ModelRouter) -> None:
        self.clock = clock
        self.models = models
        self._last: dict[tuple[str, str, str], datetime] = {}

    async def welcome(self, persona: Persona, event: ChatEvent) -> Reply | None:
        """The persona's welcome to `event`'s sender, who just joined its channel; None where
        it does not greet (off, a private chat, or greeted there within `WELCOME_EVERY`). Its
        text in one piece: the front splits it within the platform's limit."""
        if event.is_dm or event.from_bot or not persona.group.greet:
            return None
        now = self.clock.now()
        key = (event.platform, event.chat_id, event.channel_id)
        last = self._last.get(key)
        if last is not None and now - last < WELCOME_EVERY:
            return None
        if len(self._last) >= CHANNELS_KEPT:
            self._last = {k: t for k, t in self._last.items() if now - t < WELCOME_EVERY}
        self._last[key] = now
        emotions = " ".join(f"[{name}]" for name in persona.emotions.names)
        character = resolve_placeholders(
            system_text(persona, True, now), persona.identity.name, event.user_name
        )
        system = "\n".join([character, f"{EMOTION_INSTRUCTION} {emotions}", QUOTED])
        neutral = persona.emotions.neutral
        try:
            completion = await self.models.complete(
                "chat", welcome_messages(system, event.user_name), purpose="welcome"
            )
        except ModelError as e:
            log.info("the chat model failed (%s); %s welcomes with its line", e, persona.key)
            said = say(persona.identity.language, "welcome", name=event.user_name[:100])
            return Reply(said, neutral)
        tag, text = parse_emotion(completion.text)
        emotion = tag if tag in persona.emotions.names else neutral
        return Reply(text, emotion) if text else None
