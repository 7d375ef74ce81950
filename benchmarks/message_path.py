"""The modules a plain Discord message passes through: one private message (no media, no
tools) from discord.py's `on_message` to the send, through the real discord.py against the
loopback Discord (tests/fakes/discord_server.py) and the offline model, after one message to
warm up. A module is on the path when one of its functions is handed the message: the
`ChatEvent` or what a stage of the turn makes of it (bot.turn's `Admitted`, `Perceived`,
`Settled`, `InMind`, `Composed`, `Replied`), traced with `sys.setprofile`; the event's own
class (bot.events) is not counted, the adapter that made it and sends the reply is. The
modules print in the order the message first reaches them; the last line is JSON.

    python benchmarks/message_path.py
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from types import FrameType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.fakes, from anywhere

import discord

from adapters.discord import DiscordAdapter
from bot.events import ChatEvent
from bot.turn.admit import Admitted
from bot.turn.after import Replied
from bot.turn.compose import Composed
from bot.turn.recall import InMind
from bot.turn.senses import Perceived
from bot.turn.settle import Settled
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.factories import open_bot
from tests.fakes.secrets import DISCORD_TOKEN

CARRIED = (ChatEvent, Admitted, Perceived, Settled, InMind, Composed, Replied)
PARTS = ("adapters", "bot", "memory")
ADAPTER = "adapters.discord"


async def plain_path() -> list[str]:
    """The modules one plain private Discord message is handed to, in the order it reaches
    them, its adapter first and last."""
    os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")
    with tempfile.TemporaryDirectory() as folder:
        bot = await open_bot(Path(folder) / "k.sqlite3")
        async with FakeDiscord() as fake:
            socket = discord.gateway.DiscordWebSocket
            route, gateway = discord.http.Route.BASE, socket.DEFAULT_GATEWAY
            discord.http.Route.BASE = fake.api_base
            socket.DEFAULT_GATEWAY = fake.gateway_url
            adapter = DiscordAdapter(
                bot.engine, bot.services, "pip", DISCORD_TOKEN, bot_id="d", guild_ready_timeout=0.05
            )
            await adapter.start()
            try:
                await fake.dispatch_message(5555, 42, "hello there", guild=False)
                await fake.next_message()
                reached: dict[str, None] = {}

                def profile(frame: FrameType, event: str, arg: Any) -> None:
                    if event != "call":
                        return
                    module = frame.f_globals.get("__name__", "")
                    if (
                        module.split(".")[0] in PARTS
                        and module != "bot.events"
                        and any(isinstance(v, CARRIED) for v in frame.f_locals.values())
                    ):
                        reached.setdefault(module)

                sys.setprofile(profile)
                try:
                    await fake.dispatch_message(5555, 42, "how was your day?", guild=False)
                    await fake.next_message()
                finally:
                    sys.setprofile(None)
            finally:
                await adapter.close()
                await bot.close()
                discord.http.Route.BASE = route
                socket.DEFAULT_GATEWAY = gateway
    return [ADAPTER, *reached, ADAPTER]


def main() -> None:
    path = asyncio.run(plain_path())
    for module in path:
        print(module)
    print(json.dumps({"modules": len(set(path)), "path": path}))


if __name__ == "__main__":
    main()
