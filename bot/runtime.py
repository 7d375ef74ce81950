"""Putting the bot together: configuration -> personas, models, store, sessions, engine,
scheduler. Adapters start a `Runtime`, feed its engine, and close it."""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.config import Config
from bot.engine import Engine
from bot.events import Platform
from bot.llm.router import OllamaProbe, build_router, probe_ollama
from bot.persona import Persona, PersonaLibrary
from bot.scheduler import Scheduler
from bot.sessions import SessionManager
from memory.clock import Clock, SystemClock
from memory.store import Store

__all__ = ["Runtime", "load_personas", "open_runtime", "persona_library"]

DATABASE = "kizuna.sqlite3"
# Seconds a shutdown waits for state updates still running after a reply before cancelling
# them (the next turn's update covers the same exchange).
SHUTDOWN_GRACE = 3.0


def persona_library(config: Config, cwd: Path) -> PersonaLibrary:
    return PersonaLibrary.default(cwd, [config.resolve(p) for p in config.persona_paths])


def load_personas(library: PersonaLibrary, names: Iterable[str]) -> dict[str, Persona]:
    """Load the named personas (raises KeyError for an unknown name, TomlError for a bad file)."""
    personas: dict[str, Persona] = {}
    for name in names:
        persona = library.load(name)
        personas[persona.key] = persona
    return personas


@dataclass(slots=True)
class Runtime:
    config: Config
    engine: Engine
    store: Store
    scheduler: Scheduler
    data_dir: Path

    async def close(self) -> None:
        """Give the work after replies a moment to finish, save, then close the store."""
        try:
            await self.engine.drain(grace=SHUTDOWN_GRACE)
        finally:
            try:
                await self.scheduler.stop()  # the final save
            finally:
                await self.store.close()


async def open_runtime(
    config: Config,
    personas: Mapping[str, Persona],
    environ: Mapping[str, str],
    *,
    platforms: Collection[Platform],
    clock: Clock | None = None,
    seed: int | None = None,
    probe: OllamaProbe = probe_ollama,
) -> Runtime:
    """Open everything and restore the open conversations of these personas on these
    platforms; the scheduler is not started yet."""
    clock = clock or SystemClock()
    models = await build_router(config.models, environ, rng=random.Random(seed), probe=probe)
    data_dir = config.resolve(config.data_dir)
    store = await Store.open(data_dir / DATABASE)
    sessions = SessionManager(store, clock)
    try:
        await sessions.restore(personas.keys(), platforms)
    except BaseException:
        await store.close()
        raise
    engine = Engine(
        personas=personas, models=models, sessions=sessions, clock=clock, settings=config.engine
    )
    scheduler = Scheduler(sessions, engine.idle_time, interval=config.engine.snapshot_seconds)
    return Runtime(config, engine, store, scheduler, data_dir)
