"""Building blocks for tests: a persona made in code, chat events, a whole bot (store,
sessions, engine, what the commands work with) on a temporary database with a fake clock and a
scripted model, and the `kizuna` command run as a subprocess."""

from __future__ import annotations

import functools
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from io import BytesIO
from pathlib import Path
from typing import Literal

from PIL import Image

from adapters.console import PLATFORM as CONSOLE
from adapters.discord import PLATFORM as DISCORD
from adapters.telegram import PLATFORM as TELEGRAM
from adapters.web.server import PLATFORM as WEB
from bot.commands.services import Services
from bot.config import EngineConfig, MemoryConfig, ModelsConfig, ProviderConfig, TierConfig
from bot.conversation.desk import Desk
from bot.conversation.lifecycle import Lifecycle, scope_policies
from bot.conversation.recollect import Recollector
from bot.conversation.sessions import SessionManager
from bot.events import Addressed, Attachment, ChatEvent
from bot.llm.router import ModelRouter, build_router
from bot.outreach import Outreach
from bot.outreach.courier import Courier
from bot.persona.file import Emotions, Identity, MemoryPolicy, Persona, StateSlot, VoicePolicy
from bot.persona.toolspec import CustomTool
from bot.platforms import Platforms
from bot.runtime.assemble import build_engine, build_services
from bot.tools import Toolbox
from bot.tools.reminder import StoredReminders
from bot.turn.engine import Engine
from memory.bank import MemoryBank
from memory.clock import FakeClock
from memory.embeddings import Embedder
from memory.records import ArchiveWrite, EncodingWrite
from memory.storage import Storage
from memory.storage.sqlite import Store
from tests.fakes.models import ScriptedChatModel, make_router
from tests.fakes.timer import FakeTimer

__all__ = [
    "KIZUNA_TIMEOUT",
    "Bot",
    "base_env",
    "example_config_with_bots",
    "kizuna",
    "make_event",
    "make_persona",
    "make_picture",
    "no_ollama",
    "open_bot",
    "speaking_router",
    "tool_persona",
    "with_tools",
]

EXAMPLE_CONFIG = Path(__file__).resolve().parents[2] / "config.example.toml"

DEFAULT_EMOTIONS = ("NEUTRAL", "HAPPY", "SAD")
# A test bot serves every platform, as its adapter declares it.
PLATFORMS = Platforms([CONSOLE, DISCORD, TELEGRAM, WEB])


KIZUNA_TIMEOUT = 15  # seconds: a generous bound on one `kizuna` run; each takes about one


KIZUNA = (sys.executable, "-m", "adapters.command.cli")  # the command, as a test starts it


def kizuna(
    cwd: Path, *args: str, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`kizuna ARGS` run in `cwd` with `base_env()` (or `env`)."""
    return subprocess.run(
        [*KIZUNA, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=env or base_env(),
        timeout=KIZUNA_TIMEOUT,
    )


async def no_ollama(host: str) -> list[str]:
    """An Ollama probe that finds none: runtimes in tests fall back to the offline model."""
    return []


def base_env(**extra: str) -> dict[str, str]:
    """The environment for a `kizuna` subprocess: no model keys, tokens, database, config or
    eco mode from the developer's shell (a test that needs one passes a fake from
    tests/fakes/secrets.py), no proxy for loopback, and no real Ollama probed."""
    env = dict(os.environ)
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ZHIPUAI_API_KEY",
        "DISCORD_TOKEN",
        "TELEGRAM_TOKEN",
        "KIZUNA_DATABASE_URL",
        "KIZUNA_CONFIG",
        "ECO_MODE",
        # Each `kizuna` a test starts would compile the project's modules again without their
        # bytecode cache (__pycache__, ignored by git): a quarter of a second a start.
        "PYTHONDONTWRITEBYTECODE",
    ):
        env.pop(name, None)
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env["OLLAMA_HOST"] = "http://127.0.0.1:9"  # closed
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


def example_config_with_bots() -> str:
    """config.example.toml with its example [[bots]] tables uncommented."""
    text = EXAMPLE_CONFIG.read_text(encoding="utf-8")
    head, _, bots = text.partition("# [[bots]]")
    return (
        head
        + "[[bots]]"
        + "\n".join(line.removeprefix("# ").removeprefix("#") for line in bots.splitlines())
        + "\n"
    )


def outreach_of(
    bot: Bot, courier: Courier, *, name: str = "p1", memories: bool = False
) -> Outreach:
    """The bot's outreach in UTC writing through `courier`, as process `name`; `memories`:
    it recalls from the bot's bank what it writes from."""
    outreach = Outreach(
        store=bot.store,
        personas=bot.personas,
        models=bot.router,
        sessions=bot.sessions,
        clock=bot.clock,
        tz=UTC,
        name=name,
        memories=bot.bank if memories else None,
    )
    outreach.add(courier)
    return outreach


def make_persona(
    key: str = "pip",
    *,
    name: str = "Pip",
    nickname: str = "",
    personality: str = "A cheerful test persona.",
    language: str = "en",
    apology: str = "",
    emotions: Iterable[str] = DEFAULT_EMOTIONS,
    neutral: str = "NEUTRAL",
    scope: Literal["user", "channel"] = "user",
    idle_minutes: float = 5.0,
    state: Iterable[StateSlot] = (),
    flashback_rate: float = 0.0,
    tools: Iterable[str] = (),
    reactions: Mapping[str, str] | None = None,
    voice: VoicePolicy | None = None,
) -> Persona:
    """A minimal persona, built in code (no TOML file); `reactions`: its emoji by emotion
    (bot.turn.reactions); `voice`: whether it speaks its replies aloud (bot.media.speech; never)."""
    return Persona(
        identity=Identity(
            name=name,
            nickname=nickname,
            personality=personality,
            language=language,
            apology=apology,
        ),
        emotions=Emotions(names=list(emotions), neutral=neutral, reactions=dict(reactions or {})),
        memory=MemoryPolicy(scope=scope, idle_minutes=idle_minutes, flashback_rate=flashback_rate),
        tools=list(tools),
        state=list(state),
        voice=voice or VoicePolicy(),
        key=key,
    )


def make_event(
    text: str = "hello",
    *,
    persona: str = "pip",
    platform: str = "discord",
    user_id: str = "u1",
    user_name: str = "Alice",
    is_dm: bool = True,
    chat_id: str = "g1",
    channel_id: str = "c1",
    timestamp: datetime | None = None,
    attachments: tuple[Attachment, ...] = (),
    reply_to: str | None = None,
    bot_id: str = "bot1",
    roles: tuple[str, ...] = (),
    message_id: str = "",
    admin: bool = False,
    addressed: Iterable[Addressed] | None = None,
) -> ChatEvent:
    """A chat event; by default Alice (u1) writing to Pip in a Discord DM. A group's message
    is said to the bot (a mention) unless `addressed` says otherwise. What the platform sets
    on every event (`host`, `private_as`) is its adapter's, as a surface sets it."""
    where = PLATFORMS[platform]
    return ChatEvent(
        platform=platform,
        bot_id=bot_id,
        persona=persona,
        chat_id="" if is_dm else chat_id,
        channel_id=channel_id,
        user_id=user_id,
        user_name=user_name,
        is_dm=is_dm,
        text=text,
        timestamp=timestamp or FakeClock().now(),
        attachments=attachments,
        reply_to=reply_to,
        roles=roles,
        message_id=message_id,
        admin=admin,
        addressed=frozenset(("mention",) if addressed is None and not is_dm else addressed or ()),
        host=where.host,
        private_as=where.private_as,
    )


def make_picture(
    width: int = 64,
    height: int = 48,
    colour: tuple[int, ...] = (200, 30, 30),
    *,
    format: str = "PNG",
    mode: str = "RGB",
) -> bytes:
    """A picture of one colour, encoded as `format` (Pillow's name: "PNG", "JPEG", "GIF"...)."""
    out = BytesIO()
    Image.new(mode, (width, height), colour).save(out, format)
    return out.getvalue()


@dataclass(slots=True)
class Bot:
    """Everything behind `Engine.handle` and the commands, wired together for a test."""

    engine: Engine
    services: Services
    sessions: SessionManager
    store: Storage
    clock: FakeClock
    model: ScriptedChatModel
    bank: MemoryBank
    lifecycle: Lifecycle
    personas: dict[str, Persona] = field(default_factory=dict)
    timer: FakeTimer | None = None  # what the engine sleeps on (a burst's window)

    @property
    def router(self) -> ModelRouter:
        return self.engine.models

    @property
    def desk(self) -> Desk:
        return self.services.desk

    async def close(self) -> None:
        await self.engine.drain()
        await self.bank.close()
        await self.store.close()


def tool_persona(*tools: CustomTool, scope: Literal["user", "channel"] = "channel") -> Persona:
    """Pip with host tools (by default `where`, which acts for a person: it takes a
    ToolContext, and says whom it was called for), the shipped `dice` (for no one in
    particular) and `reminder`; a channel-scoped persona by default (one conversation for a
    whole group, so a burst may be several people's)."""
    persona = make_persona(scope=scope)
    return replace(
        persona,
        custom_tools=list(tools) or [CustomTool("where", module="tests.fakes.tools:where")],
        tools=["recall_memory", "dice", "reminder"],
    )


def with_tools(bot: Bot) -> Toolbox:
    """Give the bot's engine the runtime's toolbox for its personas: reminders kept in the
    store, for the person a call acts for."""
    toolbox = Toolbox(
        bot.personas,
        clock=bot.clock,
        tz=UTC,
        rng=random.Random(3),
        environ={},
        installed={"dice": "bot.tools.dice:dice", "reminder": "bot.tools.reminder:reminder"},
        reminders=functools.partial(StoredReminders, bot.store, bot.clock),
    )
    bot.engine.calls.toolbox = toolbox
    return toolbox


async def speaking_router(base_url: str, *, eco: bool = False, chat_model: str = "") -> ModelRouter:
    """Real OpenAI providers at `base_url` (a FakeOpenAI's) with a speech tier, "tts-1": a
    server of one's own names its speech model."""
    config = ModelsConfig(
        eco_mode=eco,
        providers={"openai": ProviderConfig(base_url=base_url, max_retries=0)},
        chat=TierConfig(model=chat_model) if chat_model else None,
        speech=TierConfig(model="tts-1"),
    )
    return await build_router(config, {"OPENAI_API_KEY": "k"}, rng=random.Random(0))


async def open_bot(
    path: Path,
    personas: Iterable[Persona] | Mapping[str, Persona] = (),
    *,
    model: ScriptedChatModel | None = None,
    clock: FakeClock | None = None,
    settings: EngineConfig | None = None,
    memory: MemoryConfig | None = None,
    router: ModelRouter | None = None,
    embedder: Embedder | str = "hash",
    open_store: Callable[[Path], Awaitable[Storage]] = Store.open,
) -> Bot:
    """Open a store at `path` (SQLite, unless `open_store` opens another: the `open_store`
    fixture of tests/fakes/postgres.py) and an engine over it, with a memory bank (hash
    embedder unless told, no retrieval failure) beside it; close with `await bot.close()`.
    `router` replaces the scripted model's (e.g. real providers on FakeOpenAI; `model` then
    goes unused)."""
    if isinstance(personas, Mapping):
        by_key = dict(personas)
    else:
        by_key = {p.key: p for p in personas} or {"pip": make_persona()}
    clock = clock or FakeClock()
    model = model or ScriptedChatModel()
    store = await open_store(path)
    sessions = SessionManager(store, clock)
    await sessions.restore(by_key.keys(), PLATFORMS.places())
    bank = await MemoryBank.open(
        path.parent,
        embedder,
        clock,
        deterministic=True,
        store=store,
        policy=scope_policies(by_key),
    )
    router = router or make_router(model)
    timer = FakeTimer(clock)
    recollector = Recollector(bank, router, memory or MemoryConfig(), random.Random(0))
    engine = build_engine(
        personas=by_key,
        platforms=PLATFORMS,
        models=router,
        sessions=sessions,
        store=store,
        clock=clock,
        # Answered at once unless a test sets a burst window (and moves `timer`).
        settings=settings or EngineConfig(timezone="UTC", burst_seconds=0),
        memory=recollector,
        rng=random.Random(0),
        ffmpeg=shutil.which("ffmpeg"),
        sleep=timer.sleep,
    )
    services = build_services(engine, store, bank, recollector)
    lifecycle = Lifecycle(
        bank=bank, store=store, personas=by_key, models=router, clock=clock, tz=engine.tz, seed=0
    )
    return Bot(engine, services, sessions, store, clock, model, bank, lifecycle, by_key, timer)


async def write_page(
    store: Storage, scope: str, day: date, text: str, profiles: Iterable[tuple[str, str, str]]
) -> None:
    """A diary page and profiles, written the way encoding writes them."""
    at = datetime.combine(day, datetime.min.time(), UTC) + timedelta(hours=12)
    persona = scope.partition("/")[0]
    conversation = await store.archive_conversation(
        ArchiveWrite(
            persona,
            scope.partition("/")[2],
            started_at=at,
            ended_at=at + timedelta(minutes=5),
            reason="idle",
            turns=[],
            snapshot={},
        )
    )
    await store.commit_encoding(
        EncodingWrite(
            conversation_id=conversation,
            scope=scope,
            at=at,
            memories=[],
            sibling_links=[],
            merges=[],
            diary=(day, text),
            profiles=list(profiles),
            recap="",
        )
    )
