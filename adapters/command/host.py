"""`kizuna run`: every configured bot in one process, over one runtime (one store, one memory
bank, one scheduler), until asked to stop.

    stop = asyncio.Event()
    await host(config, personas, os.environ, stop=stop)   # returns once stop is set

Tokens are checked before anything opens: a missing one is one line naming the configuration
key and the variable. A bot that cannot start (a rejected token, no network) stops the others
and the runtime cleanly, and says which bot and why. Each bot is started by its kind
(adapters.kinds), whose platforms make the engine's registry. The started bots that can write
first to a person are `couriers_of(started)`: the runtime's outreach writes through them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping

from adapters.command.progress import embedding_bar
from adapters.kinds import Adapter, Kind, kind_of, unset
from adapters.surface import CourierSurface
from bot import redact
from bot.config import BotConfig, Config
from bot.llm.router import OllamaProbe, probe_ollama
from bot.outreach.courier import Courier
from bot.persona.file import Persona, PersonaLibrary
from bot.platforms import Platforms
from bot.runtime.assemble import open_runtime
from bot.tomlfile import TomlError
from memory.clock import Clock
from memory.errors import KizunaError

__all__ = [
    "BotStartError",
    "bot_tokens",
    "couriers_of",
    "host",
    "hosted_personas",
]

log = logging.getLogger(__name__)


class BotStartError(KizunaError):
    """A configured bot could not start; the message names it."""


def _describe(bot: BotConfig) -> str:
    return f"{bot.platform} bot {bot.name or bot.persona!r}"


def _up(config: Config, bot: BotConfig) -> str:
    up = _kind(bot).up
    if up is not None:
        return up(config, bot)
    return f"{_describe(bot)} is up: {', '.join(bot.hosted)}"


def couriers_of(started: Iterable[Adapter]) -> tuple[Courier, ...]:
    """The bots among `started` that can write first to a person (bot.outreach.courier): not
    the web client, say, which has no way to reach someone who is not on the page."""
    return tuple(a for a in started if isinstance(a, CourierSurface))


def bot_tokens(config: Config, environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """Each bot's (token, webhook secret) from the environment (for a kind with a token of
    its own, such as the web client's inspector token, that one); raises the configuration's
    one-line error, naming the key and its line, for a variable that is not set, or a web
    client on an open address without a token; BotStartError for a platform whose extra is
    not installed."""
    found: list[tuple[str, str]] = []
    for i, bot in enumerate(config.bots):
        own_token = _kind(bot).own_token
        if own_token is not None:
            found.append((own_token(config, environ), ""))
            continue
        token = environ.get(bot.token_env, "").strip()
        if not token:
            what = f"the {bot.platform} token for {bot.persona}"
            raise unset(config, ("bots", i, "token_env"), bot.token_env, what)
        secret = ""
        if bot.webhook_secret_env:
            secret = environ.get(bot.webhook_secret_env, "").strip()
            if not secret:
                key = ("bots", i, "webhook_secret_env")
                what = f"the webhook secret for {bot.persona}"
                raise unset(config, key, bot.webhook_secret_env, what)
        found.append((token, secret))
    return found


def hosted_personas(
    config: Config, library: PersonaLibrary
) -> Iterator[tuple[str, Persona | TomlError]]:
    """Each bot's personas, in order, loaded, or the one-line error that stops `kizuna run`:
    a name the library does not know (naming the configuration's key and line), a persona
    file with a mistake. `kizuna doctor` reports them all; `kizuna run` stops at the first."""
    for i, bot in enumerate(config.bots):
        keys: list[tuple[str | int, ...]] = [("bots", i, "persona")]
        keys += [("bots", i, "personas", j) for j in range(len(bot.personas))]
        for key, name in zip(keys, [bot.persona, *bot.personas], strict=True):
            if library.path(name) is None:
                known = ", ".join(library.names())
                yield name, config.error(key, f"no persona named {name!r} (known: {known})")
                continue
            try:
                yield name, library.load(name)
            except TomlError as e:
                yield name, e


def _kind(bot: BotConfig) -> Kind:
    """The kind of `bot`; BotStartError when its platform's extra is not installed."""
    try:
        return kind_of(bot.platform)
    except ImportError as e:
        raise BotStartError(
            f"{_describe(bot)} needs the {bot.platform} extra: pip install 'kizuna[{bot.platform}]'"
            f" ({e})"
        ) from None


async def host(
    config: Config,
    personas: Mapping[str, Persona],
    environ: Mapping[str, str],
    *,
    stop: asyncio.Event,
    clock: Clock | None = None,
    probe: OllamaProbe = probe_ollama,
    announce: Callable[[str], None] = log.info,
    settle: bool = False,
) -> None:
    """Start every bot, serve until `stop` is set, then close them and the runtime.
    `announce` gets one line per bot as it comes up. `settle`: the process is this host's
    alone (`kizuna run`), so what start-up made is set aside from garbage collection
    (Runtime.settle)."""
    secrets = bot_tokens(config, environ)
    kinds = [_kind(bot) for bot in config.bots]
    platforms = Platforms(kind.platform for kind in kinds)
    runtime = await open_runtime(
        config, personas, environ, platforms=platforms, clock=clock, probe=probe
    )
    started: list[Adapter] = []
    try:
        if runtime.engine.models.notice:
            log.warning("%s", runtime.engine.models.notice)
        for i, (bot, kind, (token, secret)) in enumerate(
            zip(config.bots, kinds, secrets, strict=True)
        ):
            bot_id = bot.name or f"{bot.platform}-{bot.persona}-{i}"
            adapter = kind.start(runtime, config, bot, token, secret, bot_id)
            try:
                await adapter.start()
            except Exception as e:
                # Libraries put the token in their errors ("The token `...` was rejected").
                said = redact.redact(str(e))
                raise BotStartError(f"{_describe(bot)} could not start: {said}") from None
            started.append(adapter)
            announce(_up(config, bot))
        for courier in couriers_of(started):
            runtime.outreach.add(courier)
        runtime.scheduler.start(embedding_bar(runtime.bank.embedder.name))
        if settle:
            await runtime.settle()
        await stop.wait()
    finally:
        # Stop taking messages first, then let the runtime finish and save.
        for adapter in reversed(started):
            try:
                await adapter.close()
            except Exception:
                log.exception("closing a bot failed")
        await runtime.close()
