"""Who may talk to the personas, and how fast: allow and block lists of users, chats (Discord
servers, Telegram groups), channels and Discord roles, and a per-user rate limit.
Platform-free: every message goes through the engine's admission (bot.turn.admit), and every
command through `Admission.admit`, to this gate.

Over the limit a user is told once, in the persona's voice, then the persona stays quiet until
the minute has passed; those messages are not kept (a flood is not a conversation).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from bot.config import AccessConfig
from bot.events import ChatEvent
from memory.errors import KizunaError

__all__ = ["WINDOW", "Admittance", "Gate", "NotAllowed"]

WINDOW = timedelta(minutes=1)
Admittance = Literal["admit", "blocked", "slow_down", "quiet"]


class NotAllowed(KizunaError):
    """The sender may not do this here (change a channel's shared memory without being one of
    its admins); the message says so to them, in the persona's language."""


@dataclass(slots=True)
class _Pace:
    times: deque[datetime] = field(default_factory=deque)
    told: bool = False  # the user was told to slow down in this stretch


class Gate:
    def __init__(self, settings: AccessConfig) -> None:
        self.settings = settings
        self._allow_roles = frozenset(settings.allow_roles)
        self._block_roles = frozenset(settings.block_roles)
        self._pace: dict[tuple[str, str], _Pace] = {}
        self._swept: datetime | None = None

    def allowed(self, event: ChatEvent) -> bool:
        """Whether the lists let this user, chat and channel in (a block always wins)."""
        s = self.settings
        if (
            event.user_id in s.block_users
            or (event.chat_id and event.chat_id in s.block_chats)
            or (event.channel_id and event.channel_id in s.block_channels)
            or not self._block_roles.isdisjoint(event.roles)
        ):
            return False
        if s.allow_users and event.user_id not in s.allow_users:
            return False
        # A private chat is in no server or group: lists of those (and of a server's roles)
        # do not shut it out.
        if not event.is_dm:
            if s.allow_chats and event.chat_id not in s.allow_chats:
                return False
            if s.allow_channels and event.channel_id not in s.allow_channels:
                return False
            if self._allow_roles and self._allow_roles.isdisjoint(event.roles):
                return False
        return True

    def admit(self, event: ChatEvent, now: datetime) -> Admittance:
        if event.host:  # the host's own terminal (`Platform.host`)
            return "admit"
        if not self.allowed(event):
            return "blocked"
        limit = self.settings.messages_per_minute
        if limit <= 0:
            return "admit"
        pace = self._pace.setdefault((event.platform, event.user_id), _Pace())
        while pace.times and now - pace.times[0] >= WINDOW:
            pace.times.popleft()
        if len(pace.times) >= limit:
            if pace.told:
                return "quiet"
            pace.told = True
            return "slow_down"
        pace.told = False
        pace.times.append(now)
        self._forget_idle(now)
        return "admit"

    def _forget_idle(self, now: datetime) -> None:
        """Drop the pace of users quiet for a whole window, so the table stays small; at most
        once a window, so a crowd does not pay for a sweep on every message."""
        if len(self._pace) > 1024 and (self._swept is None or now - self._swept >= WINDOW):
            self._swept = now
            for key in [
                k for k, p in self._pace.items() if not p.times or now - p.times[-1] >= WINDOW
            ]:
                del self._pace[key]
