"""`kizuna doctor`: checks an installation and says what to do about each problem.

The configuration; the persona files, each as `kizuna run` loads it (its sprites folder, its
tools imported, its MCP servers asked for their tools), and each bot's personas; the data
folder (writable, the owner's only), the store and its embeddings, the model endpoints, web
search, and each bot's token against its platform, by its kind (adapters.kinds) through the
platform's own client library (so a token the platform refuses is refused here, and what must
be switched on there is read from it). Each finding is one
line; nothing a user wrote and no secret is printed. What `kizuna run` refuses to start with,
this finds first.

    findings = await examine(config, os.environ, cwd)
"""

from __future__ import annotations

import asyncio
import os
import random
import stat
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from adapters.command.host import hosted_personas
from adapters.kinds import Level, kind_of
from bot import redact
from bot.chat_model import ModelError
from bot.config import BotConfig, Config, storage_dsn
from bot.llm.embedding import build_embedder
from bot.llm.router import (
    ModelRouter,
    ModelSetupError,
    OllamaProbe,
    build_router,
    probe_ollama,
)
from bot.persona.file import Persona, PersonaLibrary
from bot.tomlfile import TomlError
from bot.tools import Toolbox
from bot.tools.builtin import build_search
from memory.clock import SystemClock
from memory.private import FILE_MODE, FOLDER_MODE
from memory.storage import DATABASE, StoreError, open_store
from memory.storage.sqlite import Store

__all__ = ["Finding", "check_bot", "examine"]

PLATFORM_TIMEOUT = 15.0  # seconds for a platform or model endpoint to answer


@dataclass(slots=True, frozen=True)
class Finding:
    level: Level
    subject: str
    text: str

    def __str__(self) -> str:
        return f"{self.level:<4}  {self.subject}: {self.text}"


async def examine(
    config: Config,
    environ: Mapping[str, str],
    library: PersonaLibrary,
    *,
    probe: OllamaProbe = probe_ollama,
) -> AsyncIterator[Finding]:
    """Every finding, in the order a host would fix them."""
    source = str(config.source) if config.source is not None else "built-in defaults"
    yield Finding("ok", "configuration", source)
    async for finding in _personas(config, library, environ):
        yield finding
    async for finding in _data(config, environ):
        yield finding
    async for finding in _models(config, environ, probe):
        yield finding
    for i, bot in enumerate(config.bots):
        finding = await check_bot(i, bot, environ)
        own_token = kind_of(bot.platform).own_token if finding.level == "ok" else None
        if own_token is not None:
            try:
                own_token(config, environ)
            except TomlError as e:
                finding = Finding("fail", finding.subject, str(e))
        yield finding


async def _personas(
    config: Config, library: PersonaLibrary, environ: Mapping[str, str]
) -> AsyncIterator[Finding]:
    """Every persona file, as `kizuna chat` and `kizuna run` would load it (its sprites
    folder, its tools imported, its MCP servers asked for their tools), then the personas
    the bots host."""
    usable: list[Persona] = []
    broken: list[Finding] = []
    for name in library.names():
        try:
            usable.append(library.load(name))
        except TomlError as e:
            broken.append(Finding("fail", f"persona {name}", str(e)))
    shown = ", ".join(p.key for p in usable) or "none"
    yield Finding("ok" if usable else "fail", "personas", f"{len(usable)} usable ({shown})")
    for finding in broken:
        yield finding
    for persona in usable:
        async for finding in _tools(config, persona, environ):
            yield finding
    reported = {f.subject for f in broken}
    for name, loaded in hosted_personas(config, library):
        subject = f"persona {name.lower()}"
        if isinstance(loaded, TomlError) and subject not in reported:
            reported.add(subject)  # a broken file is said once, an unknown name too
            yield Finding("fail", subject, str(loaded))


async def _tools(
    config: Config, persona: Persona, environ: Mapping[str, str]
) -> AsyncIterator[Finding]:
    if not (persona.custom_tools or persona.mcp_servers or persona.tools):
        return
    subject = f"persona {persona.key} tools"
    try:
        toolbox = Toolbox(
            {persona.key: persona},
            clock=SystemClock(),
            tz=config.engine.tz(),
            rng=random.Random(0),
            environ=environ,
            eco_mode=config.models.eco_mode,
        )
    except TomlError as e:
        yield Finding("fail", subject, str(e))
        return
    try:
        reachable = await asyncio.wait_for(toolbox.probe(persona), PLATFORM_TIMEOUT)
    except TimeoutError:
        reachable = {s.name: f"no answer in {PLATFORM_TIMEOUT:.0f} s" for s in persona.mcp_servers}
    finally:
        await toolbox.close()
    for server, said in reachable.items():
        level: Level = "ok" if said.startswith("reachable") else "fail"
        yield Finding(level, f"persona {persona.key} MCP server {server}", said)
    names = [t.name for t, _ in toolbox.python_tools(persona)]
    if names:
        yield Finding("ok", subject, f"importable: {', '.join(names)}")


async def _data(config: Config, environ: Mapping[str, str]) -> AsyncIterator[Finding]:
    folder = config.resolve(config.data_dir)
    dsn = storage_dsn(config, environ)
    if not folder.exists():
        yield Finding("note", "data folder", f"{folder} does not exist yet (made on first use)")
    else:
        yield _writable(folder)
        exposed = _exposed(folder)
        if exposed:
            yield Finding(
                "fail",
                "data folder",
                f"{len(exposed)} file(s) others may read, e.g. {exposed[0]}: "
                f"chmod -R go-rwx {folder}",
            )
    database = folder / DATABASE
    if not dsn and not database.is_file():
        yield Finding("note", "store", "no memories yet (the database is made on first use)")
        try:  # `kizuna run` builds it all the same
            build_embedder(config.memory, config.models, environ)
        except (ModelSetupError, ValueError) as e:
            yield Finding("fail", "embedder", str(e))
        return
    try:
        store = await open_store(folder, dsn) if dsn else await Store.open(database, read_only=True)
    except (StoreError, OSError) as e:
        yield Finding("fail", "store", f"cannot open it: {e}")
        return
    try:
        scopes = await store.scopes()
        where = "PostgreSQL" if dsn else str(database)
        yield Finding(
            "ok",
            "store",
            f"{where}, schema {await store.schema_version()}, {len(scopes)} memory scope(s)",
        )
        try:
            embedder = build_embedder(config.memory, config.models, environ)
        except (ModelSetupError, ValueError) as e:
            yield Finding("fail", "embedder", str(e))
            return
        behind = 0
        for scope in scopes:
            behind += len(await store.unembedded(scope, embedder.name))
        if behind:
            yield Finding(
                "note",
                "embeddings",
                f"{behind} memories are not embedded with {embedder.name} yet: a running bot "
                "does it in the background (recall works by words meanwhile), or run "
                "`kizuna memories reindex`",
            )
        else:
            yield Finding("ok", "embeddings", f"every memory is embedded with {embedder.name}")
    finally:
        await store.close()


def _writable(folder: Path) -> Finding:
    probe = folder / f".doctor-{os.getpid()}"
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
        probe.unlink()
    except OSError as e:
        return Finding("fail", "data folder", f"{folder} is not writable ({e.strerror or e})")
    return Finding("ok", "data folder", f"{folder}, writable")


def _exposed(folder: Path) -> list[Path]:
    """What in the data folder a group or others may read or enter."""
    found = []
    for path in [folder, *sorted(folder.rglob("*"))]:
        try:
            mode = stat.S_IMODE(path.lstat().st_mode)
        except OSError:
            continue
        if mode & ~(FOLDER_MODE if path.is_dir() else FILE_MODE) & 0o077:
            found.append(path)
    return found


async def _models(
    config: Config, environ: Mapping[str, str], probe: OllamaProbe
) -> AsyncIterator[Finding]:
    try:
        build_search(config.tools, config.models, environ)
    except ModelSetupError as e:
        yield Finding("fail", "web search", str(config.error(tuple(e.key.split(".")), e.message)))
    try:
        router = await build_router(config.models, environ, rng=random.Random(0), probe=probe)
    except ModelSetupError as e:
        yield Finding("fail", "models", str(config.error(tuple(e.key.split(".")), e.message)))
        return
    if router.offline:
        yield Finding(
            "note",
            "models",
            "the built-in offline model answers (no OPENAI_API_KEY, no Ollama found): set a "
            "key, start Ollama, or configure [models.providers]",
        )
        return
    yield Finding("ok", "models", router.describe())
    async for finding in _model_endpoints(router):
        yield finding


async def _model_endpoints(router: ModelRouter) -> AsyncIterator[Finding]:
    from bot.llm.openai_chat import OpenAIChatModel  # the openai SDK: slow to import, so here

    checked: set[str] = set()
    for model in router.models.values():
        if isinstance(model, OpenAIChatModel) and model.name not in checked:
            checked.add(model.name)
            try:
                served = await asyncio.wait_for(model.served(), PLATFORM_TIMEOUT)
            except (ModelError, TimeoutError) as e:
                said = f"not reachable at {model.endpoint}: {e}"
                yield Finding("fail", f"model {model.name}", said)
                continue
            if served is not None and model.model not in served:
                yield Finding(
                    "fail",
                    f"model {model.name}",
                    f"the endpoint answers but does not serve {model.model!r} "
                    f"({len(served)} models there)",
                )
            else:
                yield Finding("ok", f"model {model.name}", "reachable")


async def check_bot(i: int, bot: BotConfig, environ: Mapping[str, str]) -> Finding:
    """The `i`th bot's token against its platform, by its kind (the web client has none)."""
    subject = f"bots[{i}] {bot.platform} {bot.name or bot.persona}"
    try:
        kind = kind_of(bot.platform)
    except ImportError:
        return Finding("fail", subject, f"pip install 'kizuna[{bot.platform}]'")
    token = ""
    if kind.own_token is None:
        token = environ.get(bot.token_env, "").strip()
        if not token:
            said = f"the environment variable {bot.token_env} is not set"
            return Finding("todo", subject, said)
        redact.hide(token)  # the client libraries log their request addresses, token and all
    try:
        level, said = await asyncio.wait_for(kind.check(bot, token), PLATFORM_TIMEOUT)
    except TimeoutError:
        return Finding(
            "fail", subject, f"no answer from {bot.platform} in {PLATFORM_TIMEOUT:.0f} s"
        )
    return Finding(level, subject, said)
