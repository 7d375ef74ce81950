"""A process that writes first and hangs at one step, for a test to kill it there
(tests/test_outreach_sender.py): `python -m tests.fakes.outreach_child DB STEP ISO_TIME`.

It opens the SQLite store at DB, runs one round of Outreach for pip on Telegram at ISO_TIME
(a fake clock) and hangs: STEP "compose" in the model call (the message claimed, not yet
handed over), "send" in the courier (the message handed to the platform: `sending`). It
prints "hanging" on stdout when it is there."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from bot.chat_model import Message
from bot.config import TIERS
from bot.conversation.sessions import SessionManager
from bot.llm.router import ModelRouter
from bot.outreach import Outreach
from bot.outreach.courier import Delivery
from bot.persona.file import OutreachPolicy
from bot.spoken import Spoken
from memory.clock import FakeClock
from memory.storage.sqlite import Store
from tests.fakes.factories import make_persona
from tests.fakes.models import ScriptedChatModel

__all__ = ["main"]


async def hang() -> None:
    print("hanging", flush=True)
    await asyncio.Event().wait()  # until killed


class HangingCourier:
    platform = "telegram"
    bot_id = "tg1"

    def hosts(self, persona: str) -> bool:
        return persona == "pip"

    async def write_first(self, user_id: str, spoken: Spoken) -> Delivery:
        await hang()
        return "sent"


async def main(database: Path, step: str, now: datetime) -> None:
    async def compose(messages: Sequence[Message]) -> str:
        if step == "compose":
            await hang()
        return "[NEUTRAL] How did the exam go?"

    persona = make_persona()
    persona.outreach = OutreachPolicy(enabled=True)
    store = await Store.open(database)
    clock = FakeClock(now)
    outreach = Outreach(
        store=store,
        personas={"pip": persona},
        models=ModelRouter(dict.fromkeys(TIERS, ScriptedChatModel(default=compose))),
        sessions=SessionManager(store, clock),
        clock=clock,
        tz=UTC,
        name="child",
    )
    outreach.add(HangingCourier())
    await outreach.tick()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2], datetime.fromisoformat(sys.argv[3])))
