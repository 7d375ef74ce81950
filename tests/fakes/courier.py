"""A courier (bot.outreach.courier.Courier) that records what it is given to write first and answers
as told: the real ones (adapters) are tested through their platforms' libraries in
tests/test_couriers.py; this one lets bot.outreach be tested without a platform."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.outreach.courier import Delivery
from bot.spoken import Spoken

__all__ = ["RecordingCourier"]


@dataclass(slots=True)
class RecordingCourier:
    platform: str = "telegram"
    bot_id: str = "bot"
    personas: tuple[str, ...] = ("pip",)
    # What the platform says to a message for each user id (unset: it goes out).
    answers: dict[str, Delivery] = field(default_factory=dict)
    sent: list[tuple[str, Spoken]] = field(default_factory=list)  # (user id, message)
    tried: int = 0  # every message handed over, delivered or not

    def hosts(self, persona: str) -> bool:
        return persona in self.personas

    async def write_first(self, user_id: str, spoken: Spoken) -> Delivery:
        self.tried += 1
        delivery = self.answers.get(user_id, "sent")
        if delivery == "sent":
            self.sent.append((user_id, spoken))
        return delivery

    def texts(self, user_id: str) -> list[str]:
        return [s.reply.text for u, s in self.sent if u == user_id]
