"""The kinds of bot `kizuna run` hosts (a `[[bots]]` table's `platform`), one per adapter
module, which declares its `Platform` (bot.platforms) and its `KIND`: how to start its bot
from the configuration, and how `kizuna doctor` checks its token.

    kind = kind_of("telegram")   # ImportError without the platform's extra
    adapter = kind.start(runtime, config, bot, token, secret, bot_id)

A new platform is its adapter module, declaring `PLATFORM` and `KIND`, and its lines in
`MODULES` and `RULES` here (what its `[[bots]]` tables may hold is declared here, not in its
module, because the configuration is checked as it loads, before any adapter is imported).
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from bot.config import ENV_NAME, BotConfig, BotRules, Config
from bot.platforms import Platform
from bot.tomlfile import TomlError

if TYPE_CHECKING:  # the runtime is all of bot/: a command that starts no bot need not load it
    from bot.runtime.assemble import Runtime

__all__ = ["MODULES", "RULES", "Adapter", "Kind", "Level", "kind_of", "unset"]

# Every kind of bot, by its platform's name: the module of its adapter, imported only when
# a bot of its kind is configured (its client library is an extra).
MODULES: Mapping[str, str] = {
    "discord": "adapters.discord",
    "telegram": "adapters.telegram",
    "web": "adapters.web.server",
}

# What the `[[bots]]` tables of each kind may hold: `load_config(path, environ, RULES)`.
RULES: Mapping[str, BotRules] = {
    "discord": BotRules(
        keys=(("guild_ids", "channel_ids"), ("shard_ids", "shard_count"), ("base_url",)),
        # discord.py keeps its API address process-wide.
        alike=(
            "base_url",
            "every discord bot in one process talks to the same API server: "
            "give them all the same base_url (or none)",
        ),
    ),
    "telegram": BotRules(keys=(("base_url",), ("webhook_url",))),
    "web": BotRules(
        token=False,  # its token is [web]'s inspector_token_env
        alone="one web client per process (its address is [web]): list every persona it "
        "shows in one web bot's personas",
    ),
}

# ok; note: worth knowing; todo: a step the host has not taken yet (a token variable unset);
# fail: something is wrong.
Level = Literal["ok", "note", "todo", "fail"]


class Adapter(Protocol):
    async def start(self) -> None: ...

    async def close(self) -> None: ...


@dataclass(slots=True, frozen=True)
class Kind:
    platform: Platform
    # Its bot over the runtime: (runtime, config, the bot's table, token, webhook secret, bot id).
    start: Callable[[Runtime, Config, BotConfig, str, str, str], Adapter]
    # `kizuna doctor`: the bot's token (its table, the token) asked of the platform; what is
    # found, in a line.
    check: Callable[[BotConfig, str], Awaitable[tuple[Level, str]]]
    # Its bot's token where it is not in `token_env` (the configuration, the environment):
    # the web client's, for its inspector. Raises the configuration's one-line error.
    own_token: Callable[[Config, Mapping[str, str]], str] | None = None
    # What `kizuna run` says once it is up (config, the bot's table); None: its personas.
    up: Callable[[Config, BotConfig], str] | None = None


def kind_of(platform: str) -> Kind:
    """The kind of bot of `platform` (a name in `MODULES`); ImportError when its adapter's
    client library is not installed."""
    found = importlib.import_module(MODULES[platform]).KIND
    if not isinstance(found, Kind) or found.platform.name != platform:
        raise TypeError(f"{MODULES[platform]}.KIND is not the {platform} kind")
    return found


def unset(config: Config, key: tuple[str | int, ...], name: str, what: str) -> TomlError:
    """The error for a secret's variable that is not set. A value that cannot be a variable's
    name is likely the secret itself, pasted there: it is not repeated."""
    if ENV_NAME.fullmatch(name):
        return config.error(key, f"the environment variable {name} ({what}) is not set")
    return config.error(
        key,
        f"names the environment variable holding {what}: letters, digits and _ (this looks "
        "like the secret itself; put it in the environment instead)",
    )
