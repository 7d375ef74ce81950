"""Putting the bot together: configuration -> personas, models, store, memory bank, sessions,
engine (its collaborators and the stages of a turn: `build_engine`), what the commands work
with, scheduler (and the personas' writing first, which the host gives its couriers). Adapters
start a `Runtime`, feed its engine and its commands, and close it."""

from __future__ import annotations

import asyncio
import functools
import gc
import os
import random
import shutil
import socket
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.access import Gate
from bot.commands.services import Services
from bot.config import Config, EngineConfig, storage_dsn
from bot.conversation.desk import Desk
from bot.conversation.lifecycle import Lifecycle, scope_policies
from bot.conversation.recollect import Recollector
from bot.conversation.sessions import SessionManager
from bot.conversation.slots import StateSlots
from bot.groups.floor import Floor
from bot.groups.relay import Relay
from bot.groups.welcome import Welcomes
from bot.llm.embedding import build_embedder
from bot.llm.router import ModelRouter, OllamaProbe, build_router, probe_ollama
from bot.media.document_mode import DocumentMode
from bot.media.hearing import Hearing
from bot.media.pictures import Pictures
from bot.media.speech import Speech
from bot.outreach import Outreach
from bot.persona.file import Persona, PersonaLibrary
from bot.platforms import Platforms
from bot.runtime.scheduler import Scheduler
from bot.tools import Toolbox
from bot.tools.builtin import SearchBackend, build_search
from bot.tools.reminder import StoredReminders
from bot.turn.admit import Admission
from bot.turn.after import After
from bot.turn.answer import Answering
from bot.turn.calls import ToolCalls
from bot.turn.engine import Engine
from bot.turn.recall import Recall
from bot.turn.senses import Senses
from bot.turn.settle import Bursts, Settling, Sleep
from memory.bank import Capacity, MemoryBank
from memory.clock import Clock, SystemClock
from memory.storage import Storage, open_store
from memory.text import warm_up

__all__ = ["Runtime", "build_engine", "load_personas", "open_runtime"]

# Seconds a shutdown waits for state updates still running after a reply before cancelling
# them (the next turn's update covers the same exchange).
SHUTDOWN_GRACE = 3.0
# memory.large_scopes as Capacity.copy_large (None: as the store prefers).
COPY_LARGE: dict[str, bool | None] = {"auto": None, "copied": True, "served": False}


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
    services: Services  # what the commands work with
    store: Storage
    bank: MemoryBank
    scheduler: Scheduler
    data_dir: Path
    # The word segmenter loading in the background: a daemon thread, so that a short chat
    # does not wait at exit for a dictionary it never needed.
    warming: threading.Thread | None = None

    @property
    def outreach(self) -> Outreach:
        """Where the host adds its bots' couriers once their platforms started
        (`runtime.outreach.add(courier)`): the personas write first through them."""
        if self.scheduler.outreach is None:
            raise RuntimeError("this runtime's scheduler does not write first")
        return self.scheduler.outreach

    async def settle(self) -> None:
        """Once started, in a process that is Kizuna's alone: what is alive now (modules,
        personas, the word segmenter's dictionary, restored sessions) lives as long as the
        process, so it is moved out of the garbage collector's sight (gc.freeze). A full
        collection then walks only what came since: the event loop's longest stalls under
        load were these collections."""
        if self.warming is not None:
            await asyncio.to_thread(self.warming.join)
        gc.collect()
        gc.freeze()

    async def close(self) -> None:
        """Give the work after replies a moment to finish, stop the MCP servers, save, then
        close the store."""
        try:
            await self.engine.drain(grace=SHUTDOWN_GRACE)
        finally:
            try:
                if self.engine.calls.toolbox is not None:
                    await self.engine.calls.toolbox.close()
            finally:
                try:
                    await self.scheduler.stop()  # the final save
                finally:
                    try:
                        await self.bank.close()  # writes changed indexes
                    finally:
                        await self.store.close()


async def open_runtime(
    config: Config,
    personas: Mapping[str, Persona],
    environ: Mapping[str, str],
    *,
    platforms: Platforms,
    clock: Clock | None = None,
    seed: int | None = None,
    probe: OllamaProbe = probe_ollama,
) -> Runtime:
    """Open everything and restore the open conversations of these personas on these
    platforms (those of the adapters the caller starts); the scheduler is not started yet."""
    clock = clock or SystemClock()
    rng = random.Random(seed)
    models = await build_router(config.models, environ, rng=rng, probe=probe)
    search = build_search(config.tools, config.models, environ)
    embedder = build_embedder(config.memory, config.models, environ)
    # The Chinese word segmenter is slow to load: for a Chinese persona before the
    # first message; for others in the background (any message may hold Chinese).
    warming = None
    if any(p.identity.language.startswith("zh") for p in personas.values()):
        await asyncio.to_thread(warm_up)
    else:
        warming = threading.Thread(target=warm_up, name="kizuna-segmenter", daemon=True)
        warming.start()
    data_dir = config.resolve(config.data_dir)
    store = await open_store(data_dir, storage_dsn(config, environ))
    try:
        # The personas' own tools load now: a tool that cannot is a TomlError naming its
        # line. The reminder tool keeps its reminders in the store, as intentions.
        toolbox = Toolbox(
            personas,
            clock=clock,
            tz=config.engine.tz(),
            # Its own generator, so the other seeded draws stay as they were.
            rng=random.Random(None if seed is None else f"{seed}:tools"),
            environ=environ,
            eco_mode=config.models.eco_mode,
            reminders=functools.partial(StoredReminders, store, clock),
        )
        bank = await MemoryBank.open(
            data_dir,
            embedder,
            clock,
            seed=rng.randrange(2**32),
            store=store,
            policy=scope_policies(personas),
            capacity=Capacity(
                index_capacity=config.memory.open_indexes,
                cache_bytes=config.memory.index_memory_mb << 20,
                copy_large=COPY_LARGE[config.memory.large_scopes],
            ),
        )
        sessions = SessionManager(store, clock)
        await sessions.restore(personas.keys(), platforms.places())
    except BaseException:
        await store.close()
        raise
    recollector = Recollector(bank, models, config.memory, random.Random(rng.randrange(2**32)))
    engine = build_engine(
        personas=personas,
        platforms=platforms,
        models=models,
        sessions=sessions,
        store=store,
        clock=clock,
        settings=config.engine,
        memory=recollector,
        gate=Gate(config.access),
        search=search,
        toolbox=toolbox,
        rng=random.Random(rng.randrange(2**32)),
        ffmpeg=shutil.which("ffmpeg"),
    )
    services = build_services(engine, store, bank, recollector)
    lifecycle = Lifecycle(
        bank=bank,
        store=store,
        personas=personas,
        models=models,
        clock=clock,
        tz=engine.tz,
        seed=rng.randrange(2**32),
        prune_hour=config.memory.prune_hour,
    )
    outreach = Outreach(
        store=store,
        personas=personas,
        models=models,
        sessions=sessions,
        clock=clock,
        tz=engine.tz,
        # Its claims in the ledger, told apart from other processes' on a shared store.
        name=f"{socket.gethostname()}:{os.getpid()}",
        memories=bank,
    )
    scheduler = Scheduler(
        sessions,
        engine.idle_time,
        interval=config.engine.snapshot_seconds,
        flush=bank.flush,
        flush_seconds=config.memory.index_save_seconds,
        lifecycle=lifecycle,
        outreach=outreach,
    )
    return Runtime(config, engine, services, store, bank, scheduler, data_dir, warming)


def build_services(
    engine: Engine, store: Storage, bank: MemoryBank, recollector: Recollector
) -> Services:
    """What the commands work with, beside `engine` (whose floor keeps its channels' settings
    in this process, so the commands change the same one)."""
    desk = Desk(
        personas=engine.personas,
        sessions=engine.sessions,
        clock=engine.clock,
        memory=bank,
        scopes=store,
    )
    return Services(
        desk=desk,
        platforms=engine.platforms,
        clock=engine.clock,
        tz=engine.tz,
        contacts=store,
        sharing=store,
        intentions=store,
        floors=engine.floor,
        voices=engine.models,
        memories=bank,
        recollections=recollector,
        diary=recollector.diary,
    )


def build_engine(
    *,
    personas: Mapping[str, Persona],
    platforms: Platforms,
    models: ModelRouter,
    sessions: SessionManager,
    store: Storage,
    clock: Clock,
    settings: EngineConfig,
    memory: Recollector | None,
    rng: random.Random,
    ffmpeg: str | None,
    gate: Gate | None = None,
    search: SearchBackend | None = None,
    toolbox: Toolbox | None = None,
    sleep: Sleep = asyncio.sleep,
) -> Engine:
    """The engine and everything a turn goes through. `rng` draws whether a persona joins a
    group's conversation uninvited (bot.groups.floor); `sleep` waits out a burst
    (bot.turn.settle), both injected so tests decide; `ffmpeg`: the converter speech uses
    where a platform plays only its own audio format (None: there is none)."""
    tz = settings.tz()
    floor = Floor(clock, rng, models=models, rooms=store)
    documents = DocumentMode(
        personas=personas,
        platforms=platforms,
        models=models,
        sessions=sessions,
        clock=clock,
        settings=settings,
    )
    pictures = Pictures(models, clock, settings)  # (one count per user)
    hearing = Hearing(models, pictures.count, pictures.refund, settings)  # (counted with them)
    speech = Speech(models, store, platforms, pictures.count, ffmpeg)
    slots = StateSlots(models)
    calls = ToolCalls(models, clock, memory=memory, search=search, toolbox=toolbox)
    bursts = Bursts(
        clock, window=settings.burst_seconds, longest=settings.burst_longest_seconds, sleep=sleep
    )
    return Engine(
        personas=personas,
        platforms=platforms,
        sessions=sessions,
        clock=clock,
        tz=tz,
        settings=settings,
        models=models,
        memory=memory,
        rooms=store,
        contacts=store,
        intentions=store,
        floor=floor,
        relay=Relay(clock),
        welcomes=Welcomes(clock, models),
        documents=documents,
        slots=slots,
        admission=Admission(personas, platforms, sessions, floor, store, clock, gate),
        senses=Senses(personas, platforms, pictures, hearing, speech),
        settling=Settling(sessions, platforms, clock, bursts, documents),
        recall=Recall(
            calls,
            documents,
            store,
            store,
            clock,
            tz,
            memory=memory,
            intent_by_model=settings.intent == "model",
        ),
        answering=Answering(calls, platforms, store, clock, memory=memory),
        after=After(models, sessions, slots, store, clock, fold_tokens=settings.fold_tokens),
        calls=calls,
    )
