"""The seam through which a persona writes first (bot.outreach): a platform's adapter that can
open a private chat with a person by their stable id and send a persona's message there."""

from __future__ import annotations

from typing import Literal, Protocol

from bot.spoken import Spoken

__all__ = ["Courier", "Delivery"]

# sent: it went out. refused: the platform will not deliver to this person (they blocked the
# bot, closed their DMs, never started it): remembered, not tried again soon. unreachable: the
# platform could not be reached now (network, outage): tried again later.
Delivery = Literal["sent", "refused", "unreachable"]


class Courier(Protocol):
    """One bot on one platform, as outreach sees it."""

    @property
    def platform(self) -> str: ...

    @property
    def bot_id(self) -> str: ...

    def hosts(self, persona: str) -> bool:
        """Whether this bot speaks as `persona` (its default or one it routes to)."""
        ...

    async def write_first(self, user_id: str, spoken: Spoken) -> Delivery:
        """Send `spoken` to `user_id` in a private chat, the bot writing first. Never raises:
        a failure is one of the deliveries."""
        ...
