"""What the bot knows of a chat platform: a `Platform` each adapter declares of its own
(`PLATFORM` in its module), gathered in a `Platforms` registry that whoever starts the
adapters hands to the engine. The bot asks the registry, by an event's platform name, for
what it may do there (its message length, reactions, voice notes, commands) and never names
a platform itself.

    platforms = Platforms([console.PLATFORM, telegram.PLATFORM])
    limit = platforms[event.platform].limit
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

__all__ = ["Platform", "Platforms"]


@dataclass(slots=True, frozen=True)
class Platform:
    """One chat platform's limits and abilities, as its adapter declares them."""

    name: str  # as events, scopes and contacts name it
    limit: int  # the longest message it takes, in characters
    # It shows an emoji on a message, so an acknowledgement gets one instead of a reply
    # (bot.turn.reactions).
    reactions: bool = False
    # The format of its voice notes ("audio/ogg": OGG/Opus); "" where none is sent, so
    # nothing is said aloud there, nor paid for (bot.media.speech).
    voice: str = ""
    # It has groups or servers besides private chats (the group commands are offered).
    groups: bool = False
    # Commands are typed as text there, so /help lists them (not where the platform shows a
    # menu of its own).
    typed_commands: bool = False
    # It sends /start when a person first opens the bot.
    start: bool = False
    # Whoever types there is the host, on their own machine: never blocked nor slowed down
    # (`ChatEvent.host`).
    host: bool = False
    # The platform whose private conversations these are, where not its own: the web page
    # is a window onto the console (`ChatEvent.private_as`).
    private_as: str = ""
    # Every channel of a group has the same readers (`ChatEvent.same_readers`).
    same_readers: bool = False
    # Messages wait for the rest of their burst (bot.turn.bursts): where people type in
    # pieces, not where a person sends whole messages and waits for each answer.
    bursts: bool = False

    def __post_init__(self) -> None:
        if not self.name or ":" in self.name or "/" in self.name:
            raise ValueError(f"not a platform name: {self.name!r}")
        if self.limit < 1:
            raise ValueError(f"{self.name}: limit must be 1 or more")

    @property
    def places(self) -> str:
        """What the places of its conversations start with (bot.conversation.sessions)."""
        return self.private_as or self.name


class Platforms:
    """The platforms one process serves, by name; immutable once made."""

    __slots__ = ("_by_name",)

    def __init__(self, platforms: Iterable[Platform]) -> None:
        by_name: dict[str, Platform] = {}
        for platform in platforms:
            if by_name.setdefault(platform.name, platform) != platform:
                raise ValueError(f"two descriptions of platform {platform.name!r}")
        self._by_name = by_name

    def __getitem__(self, name: str) -> Platform:
        """KeyError for a platform not served here (an adapter's event always is)."""
        return self._by_name[name]

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[Platform]:
        return iter(self._by_name.values())

    def __len__(self) -> int:
        return len(self._by_name)

    def __repr__(self) -> str:
        return f"Platforms({', '.join(self._by_name)})"

    def places(self) -> frozenset[str]:
        """What the places of these platforms' conversations start with (`Platform.places`)."""
        return frozenset(p.places for p in self)
