"""bot/runtime.py: putting the bot together."""

from __future__ import annotations

import gc
from pathlib import Path

from bot.config import Config, EngineConfig
from bot.runtime import open_runtime
from tests.fakes.factories import make_persona, no_ollama


async def test_settle_sets_what_start_up_made_aside_from_garbage_collection(
    tmp_path: Path,
) -> None:
    config = Config(data_dir=str(tmp_path), engine=EngineConfig(timezone="UTC"))
    runtime = await open_runtime(
        config, {"pip": make_persona("pip")}, {}, platforms=["console"], probe=no_ollama
    )
    try:
        before = gc.get_freeze_count()
        await runtime.settle()
        assert runtime.warming is None or not runtime.warming.is_alive()  # the segmenter too
        assert gc.get_freeze_count() > before  # the runtime's objects among them
    finally:
        gc.unfreeze()  # (this process is the test run's, not Kizuna's alone)
        await runtime.close()
