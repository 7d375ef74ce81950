"""bot/runtime/assemble.py: putting the bot together."""

from __future__ import annotations

import gc
from datetime import UTC, datetime, timedelta
from pathlib import Path

from adapters.console import PLATFORM as CONSOLE
from adapters.telegram import PLATFORM as TELEGRAM
from bot.config import Config, EngineConfig
from bot.persona.file import OutreachPolicy
from bot.platforms import Platforms
from bot.runtime.assemble import open_runtime
from memory.clock import FakeClock
from memory.records import NewIntention
from tests.fakes.courier import RecordingCourier
from tests.fakes.factories import make_persona, no_ollama


async def test_settle_sets_what_start_up_made_aside_from_garbage_collection(
    tmp_path: Path,
) -> None:
    config = Config(data_dir=str(tmp_path), engine=EngineConfig(timezone="UTC"))
    runtime = await open_runtime(
        config, {"pip": make_persona("pip")}, {}, platforms=Platforms([CONSOLE]), probe=no_ollama
    )
    try:
        before = gc.get_freeze_count()
        await runtime.settle()
        assert runtime.warming is None or not runtime.warming.is_alive()  # the segmenter too
        assert gc.get_freeze_count() > before  # the runtime's objects among them
    finally:
        gc.unfreeze()  # (this process is the test run's, not Kizuna's alone)
        await runtime.close()


async def test_the_host_gives_the_runtime_its_couriers_and_the_scheduler_uses_them(
    tmp_path: Path,
) -> None:
    persona = make_persona("pip")
    persona.outreach = OutreachPolicy(enabled=True)
    clock = FakeClock(datetime(2026, 12, 9, 12, tzinfo=UTC))
    config = Config(data_dir=str(tmp_path), engine=EngineConfig(timezone="UTC"))
    runtime = await open_runtime(
        config, {"pip": persona}, {}, platforms=Platforms([TELEGRAM]), clock=clock, probe=no_ollama
    )
    try:
        courier = RecordingCourier()
        runtime.outreach.add(courier)
        assert runtime.scheduler.outreach is runtime.outreach
        assert list(runtime.outreach.couriers) == [courier]
        now = clock.now()
        await runtime.store.heard("pip", "telegram", "7", now - timedelta(days=1), private=True)
        await runtime.store.answered("pip", "telegram", "7", now - timedelta(days=1))
        await runtime.store.set_contact("pip", "telegram", "7", timezone="UTC", at=now)
        await runtime.store.add_intention(
            NewIntention(
                scope="pip/telegram:dm:7",
                user_id="7",
                kind="follow_up",
                what="the exam",
                ask="ask how it went",
                due_at=now - timedelta(hours=1),
                until=now + timedelta(days=1),
                created_at=now - timedelta(days=1),
            )
        )
        await runtime.scheduler.tick()
        assert runtime.scheduler.writing is not None
        await runtime.scheduler.writing  # the round runs beside the scheduler's
        [(user, spoken)] = courier.sent
        # The offline model (no key configured) writes it, in the persona's name.
        assert user == "7" and "Pip" in spoken.reply.text
    finally:
        await runtime.close()
