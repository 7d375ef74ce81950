"""Which persona a message is for, when one bot hosts several: a persona addressed by name at
the start of the message ("Miao, ...", "喵，...", "喵喵在吗"; its name, nickname, key or one of
its `[group] names`), else the persona bound to the channel
(`/persona set NAME`, kept in the store), else the bot's first persona. Platform-free: the
Discord and Telegram adapters ask it, then hand the engine an event for that persona.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from bot.catalogue import say
from bot.persona.file import Persona
from memory.clock import Clock
from memory.storage import RoomStore

__all__ = ["PersonaRouter"]

# What may follow a name that addresses a persona: punctuation, a space, the end, or (after
# a name in a script that does not space its words) anything ("喵喵在吗" calls 喵).
_AFTER_NAME = r"(?:\s*[,，:：!！~]|\s|$|(?<=[\u2e80-\u9fff\u3040-\u30ff\uac00-\ud7af]))"


class PersonaRouter:
    def __init__(
        self,
        known: Mapping[str, Persona],
        rooms: RoomStore,
        clock: Clock,
        bot_id: str,
        personas: Sequence[str],
    ) -> None:
        """`known`: every persona of the process, by key; `rooms`: where channels' bindings are
        kept; `personas`: the bot's own, the first its default."""
        if not personas:
            raise ValueError("a bot needs at least one persona")
        unknown = [p for p in personas if p not in known]
        if unknown:
            raise ValueError(f"no persona {unknown[0]!r}")
        self.known = known
        self.rooms = rooms
        self.clock = clock
        self.bot_id = bot_id
        self.personas = tuple(dict.fromkeys(personas))
        names: list[tuple[str, str]] = []
        for key in self.personas:
            persona = known[key]
            ident = persona.identity
            called = {key, ident.name, ident.nickname, *persona.group.names}
            names += [(n.strip(), key) for n in called if n.strip()]
        # Longest first, so "Miao Miao" is not taken for "Miao".
        names.sort(key=lambda pair: -len(pair[0]))
        self._names = names

    @property
    def default(self) -> str:
        return self.personas[0]

    @property
    def several(self) -> bool:
        return len(self.personas) > 1

    def persona(self, key: str) -> Persona:
        return self.known[key]

    def addressed(self, text: str) -> str | None:
        """The persona a message opens with the name of ("Miao, are you there?")."""
        if not self.several:
            return None
        start = text.lstrip()
        for name, key in self._names:
            if re.match(re.escape(name) + _AFTER_NAME, start, re.IGNORECASE):
                return key
        return None

    def find(self, name: str) -> str | None:
        """A persona of this bot by key, name or nickname."""
        wanted = name.strip().casefold()
        return next((key for n, key in self._names if n.casefold() == wanted), None)

    async def bound(self, channel_id: str) -> str | None:
        key = await self.rooms.channel_persona(self.bot_id, channel_id)
        return key if key in self.personas else None

    async def choose(self, channel_id: str, text: str = "") -> str:
        if not self.several:  # no one else to address or bind: no store read
            return self.default
        return self.addressed(text) or await self.bound(channel_id) or self.default

    async def describe(self, channel_id: str, language: str) -> str:
        """What `/persona` shows: who talks here, and who else this bot hosts."""
        key = await self.choose(channel_id)
        lines = [say(language, "persona_here", name=self.persona(key).identity.name, persona=key)]
        others = [k for k in self.personas if k != key]
        if others:
            listed = ", ".join(f"{self.persona(k).identity.name} ({k})" for k in others)
            lines.append(say(language, "persona_others", listed=listed))
        return "\n".join(lines)

    async def bind(self, channel_id: str, name: str, by: str, language: str) -> str:
        """Bind the channel to a persona; returns what to tell the user."""
        key = self.find(name)
        if key is None:
            known = ", ".join(self.personas)
            return say(language, "persona_unknown", name=repr(name.strip()), known=known)
        await self.rooms.bind_channel(self.bot_id, channel_id, key, by, self.clock.now())
        return say(language, "persona_bound", name=self.persona(key).identity.name)
