"""Model tiers: which model answers chat, tools, summary, intent and vision calls (pictures
described in words), which one hears voice notes (`hearing`, `ModelRouter.transcribe`), and
what they cost.

`build_router` turns the [models] configuration into one `ChatModel` per tier. With no
providers configured it looks around: OPENAI_API_KEY (or OPENAI_BASE_URL) -> OpenAI; else an
Ollama answering on localhost:11434 -> that; else the offline model, with a notice saying how
to connect a real one. `eco_mode` sends every tier to the one `eco` model.

Zhipu is reached through its OpenAI-compatible endpoint with the openai SDK, not the zhipuai
SDK: that SDK is synchronous (a thread per call), edits the caller's message list in place, and
would need timeouts and retries of its own; the compatible endpoint takes the same request with
the same `Bearer id.secret` key, and Zhipu-only options travel in `extra_body`.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpx

from bot.config import TIERS, ModelsConfig, ProviderConfig, TierConfig
from bot.llm.base import ChatModel, Completion, Hearer, Message, ModelError, Tool
from bot.llm.offline import OfflineChatModel
from memory.errors import KizunaError

if TYPE_CHECKING:  # the SDK loads with the first provider that needs it (offline: never)
    from openai import AsyncOpenAI

__all__ = [
    "ModelRouter",
    "ModelSetupError",
    "OllamaProbe",
    "TierUsage",
    "build_router",
    "ollama_url",
    "probe_ollama",
    "provider_client",
]

ZHIPU_BASE_URL = "https://open.bigmodel.cn/api/paas/v4/"
DEFAULT_MODELS = {"openai": "gpt-4o-mini", "zhipu": "glm-4-flash", "offline": "offline"}
# The hearing tier's model when [models.hearing] names none: a transcription model, never the
# chat model (which cannot transcribe).
HEARING_MODELS = {"openai": "whisper-1", "zhipu": "glm-asr", "offline": "offline"}
DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "zhipu": "ZHIPUAI_API_KEY"}
OFFLINE_NOTICE = (
    "No model configured, so personas answer with the built-in offline model. To connect a real "
    "one, set OPENAI_API_KEY, start Ollama, or see config.example.toml."
)
# Tools that cost money per call beyond tokens; eco mode turns them off.
PAID_TOOLS = frozenset({"web_search"})

OllamaProbe = Callable[[str], Awaitable[list[str]]]

log = logging.getLogger(__name__)


class ModelSetupError(KizunaError):
    """The model configuration cannot work (unknown provider, missing API key...)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key, self.message = key, message


@dataclass(slots=True)
class TierUsage:
    calls: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    images: int = 0  # pictures sent (priced per picture by most providers)
    recordings: int = 0  # voice notes and audio sent to be transcribed
    audio_bytes: int = 0  # their size (providers price them by the minute)


@dataclass(slots=True)
class ModelRouter:
    """Routes each call to its tier's model and counts calls and tokens per tier."""

    models: Mapping[str, ChatModel]
    eco_mode: bool = False
    notice: str | None = None  # shown once to whoever starts Kizuna
    settings: Mapping[str, TierConfig] = field(default_factory=dict)  # per-tier defaults
    usage: dict[str, TierUsage] = field(default_factory=lambda: {t: TierUsage() for t in TIERS})
    # The same counts by what the call was for (chat, encoding, state, intent, ...).
    purposes: dict[str, TierUsage] = field(default_factory=dict)

    @property
    def offline(self) -> bool:
        return all(isinstance(m, OfflineChatModel) for m in self.models.values())

    @property
    def sees(self) -> bool:
        """Whether pictures go to the chat tier as they are (its model is marked `vision`);
        otherwise the vision tier describes them. Eco mode always describes, cheaply."""
        chat = self.settings.get("chat")
        return not self.eco_mode and chat is not None and chat.vision

    def tools_allowed(self, names: Sequence[str]) -> list[str]:
        return [n for n in names if not (self.eco_mode and n in PAID_TOOLS)]

    async def complete(
        self,
        tier: str,
        messages: Sequence[Message],
        *,
        tools: Sequence[Tool] = (),
        json_mode: bool = False,
        max_tokens: int | None = None,
        temperature: float | None = None,
        purpose: str = "",
    ) -> Completion:
        counters = (self.usage[tier], self.purposes.setdefault(purpose or tier, TierUsage()))
        images = sum(len(m.images) for m in messages)
        for counter in counters:
            counter.calls += 1
            counter.images += images
        setting = self.settings.get(tier)
        if setting is not None:
            max_tokens = max_tokens if max_tokens is not None else setting.max_tokens
            temperature = temperature if temperature is not None else setting.temperature
        try:
            completion = await self.models[tier].complete(
                messages,
                tools=tools,
                json_mode=json_mode,
                max_tokens=max_tokens,
                temperature=temperature,
            )
        except ModelError:
            for counter in counters:
                counter.failures += 1
            raise
        for counter in counters:
            counter.prompt_tokens += completion.usage.prompt_tokens
            counter.completion_tokens += completion.usage.completion_tokens
        return completion

    async def transcribe(self, name: str, audio: bytes) -> str:
        """What the recording `audio` says, by the hearing tier's model; ModelError when it
        cannot (a model that does not transcribe, a recording it cannot decode)."""
        counters = (self.usage["hearing"], self.purposes.setdefault("hearing", TierUsage()))
        for counter in counters:
            counter.calls += 1
            counter.recordings += 1
            counter.audio_bytes += len(audio)
        model = self.models["hearing"]
        try:
            if not isinstance(model, Hearer):
                raise ModelError(f"{model.name} cannot transcribe: set [models.hearing]")
            return await model.transcribe(name, audio)
        except ModelError:
            for counter in counters:
                counter.failures += 1
            raise

    def describe(self) -> str:
        """ "gpt-4o-mini on every tier, hearing=whisper-1" or each tier's model; hearing is
        named apart when it differs (a transcription model, never the chat model)."""
        tiers = [t for t in TIERS if t != "hearing"]
        names = {self.models[t].name for t in tiers}
        hearing = self.models["hearing"].name
        if len(names) == 1:
            text = f"{next(iter(names))} on every tier"
            text += f", hearing={hearing}" if hearing not in names else ""
        else:
            text = ", ".join(f"{t}={self.models[t].name}" for t in TIERS)
        return text + (" (eco mode)" if self.eco_mode else "")


async def probe_ollama(host: str) -> list[str]:
    """The models an Ollama at `host` serves, or [] when none answers quickly."""
    try:
        async with httpx.AsyncClient(timeout=0.5) as client:
            response = await client.get(f"{host.rstrip('/')}/api/tags")
            response.raise_for_status()
            return [m["name"] for m in response.json().get("models", []) if m.get("name")]
    except Exception as e:  # a best-effort look: anything wrong means "no Ollama here"
        log.info("no Ollama at %s (%s)", host, type(e).__name__)
        return []


def ollama_url(value: str) -> str | None:
    """The base URL for $OLLAMA_HOST, read as Ollama reads it: without a scheme, http and
    port 11434 by default; with one, that scheme's own port. 0.0.0.0 (a server's "listen
    everywhere") means this machine. None if it is not a host at all."""
    value = value.strip() or "localhost"
    has_scheme = "://" in value
    try:
        url = urlsplit(value if has_scheme else f"http://{value}")
        port = url.port or (None if has_scheme else 11434)
    except ValueError:
        return None
    host = url.hostname
    if url.scheme not in ("http", "https") or not host:
        return None
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port else host
    return f"{url.scheme}://{netloc}{url.path.rstrip('/')}"


async def _detect(
    environ: Mapping[str, str], probe: OllamaProbe
) -> tuple[dict[str, ProviderConfig], str, str | None]:
    """Providers when none are configured: (providers, default model, notice)."""
    if environ.get("OPENAI_API_KEY") or environ.get("OPENAI_BASE_URL"):
        provider = ProviderConfig(kind="openai", base_url=environ.get("OPENAI_BASE_URL", ""))
        return {"openai": provider}, DEFAULT_MODELS["openai"], None
    host = ollama_url(environ.get("OLLAMA_HOST", ""))
    if host is None:
        log.warning(
            "OLLAMA_HOST=%r is not a host[:port]; not looking for Ollama", environ["OLLAMA_HOST"]
        )
    served = await probe(host) if host else []
    if host and served:
        provider = ProviderConfig(kind="openai", base_url=f"{host}/v1")
        return {"ollama": provider}, served[0], None
    return {"offline": ProviderConfig(kind="offline")}, "offline", OFFLINE_NOTICE


def provider_client(
    name: str, provider: ProviderConfig, environ: Mapping[str, str], *, max_retries: int = 0
) -> AsyncOpenAI:
    """An SDK client for an openai or zhipu provider. `max_retries` 0 leaves retrying to the
    caller (chat models retry themselves); embedders let the SDK retry."""
    # The endpoint the user chose: in the file, else (for "openai") $OPENAI_BASE_URL.
    chosen = provider.base_url or (
        environ.get("OPENAI_BASE_URL", "") if provider.kind == "openai" else ""
    )
    base_url = chosen or (ZHIPU_BASE_URL if provider.kind == "zhipu" else "")
    key_env = provider.api_key_env or DEFAULT_KEY_ENV[provider.kind]
    api_key = environ.get(key_env, "")
    if not api_key:
        # Only an endpoint the user chose may go without a key (Ollama, vLLM); the kinds'
        # own endpoints (OpenAI, Zhipu) always need one.
        if not chosen:
            raise ModelSetupError(
                f"models.providers.{name}.api_key_env",
                f"the environment variable {key_env} is not set",
            )
        api_key = "unused"  # local servers (Ollama, vLLM) ignore it, but the SDK wants one
    from bot.llm.openai_chat import make_client

    client = make_client(base_url or None, api_key, provider.timeout)
    return client.with_options(max_retries=max_retries) if max_retries else client


def _make_model(
    name: str,
    provider: ProviderConfig,
    model: str,
    environ: Mapping[str, str],
    rng: random.Random,
    clients: dict[str, AsyncOpenAI],
) -> ChatModel:
    """`model` of provider `name`; its SDK client is the provider's one in `clients` (made
    once: the tiers' models of a provider share its connections)."""
    if provider.kind == "offline":
        return OfflineChatModel(model)
    from bot.llm.openai_chat import OpenAIChatModel

    if name not in clients:
        clients[name] = provider_client(name, provider, environ)
    return OpenAIChatModel(
        clients[name],
        model,
        label=provider.kind if name == provider.kind else f"{provider.kind}/{name}",
        timeout=provider.timeout,
        max_retries=provider.max_retries,
        retry_base_delay=provider.retry_base_delay,
        rng=rng,
        extra_body=provider.extra_body or None,
    )


async def build_router(
    config: ModelsConfig,
    environ: Mapping[str, str],
    *,
    rng: random.Random,
    probe: OllamaProbe = probe_ollama,
) -> ModelRouter:
    providers = dict(config.providers)
    default_model, notice = "", None
    if not providers:
        providers, default_model, notice = await _detect(environ, probe)
    first = next(iter(providers))

    def resolve(key: str, tier: TierConfig) -> tuple[str, str]:
        provider_name = tier.provider or first
        if provider_name not in providers:
            known = ", ".join(providers)
            raise ModelSetupError(
                f"models.{key}.provider", f"no provider named {provider_name!r} (known: {known})"
            )
        kind = providers[provider_name].kind
        if key == "hearing":
            return provider_name, tier.model or HEARING_MODELS[kind]
        return provider_name, tier.model or default_model or DEFAULT_MODELS[kind]

    chat = config.chat or TierConfig()
    settings: dict[str, TierConfig] = {t: getattr(config, t) or chat for t in TIERS}
    # Not the chat model's name: a transcription model of the chat tier's provider (in eco
    # mode, of the eco model's), unless [models.hearing] says.
    hearing = config.hearing or TierConfig(provider=chat.provider)
    if config.eco_mode:
        eco_tier = config.eco or TierConfig(provider=settings["chat"].provider)
        hearing = config.hearing or TierConfig(provider=eco_tier.provider)
        settings = dict.fromkeys(TIERS, eco_tier)
        wanted = dict.fromkeys(TIERS, resolve("eco", eco_tier))
    else:
        wanted = {t: resolve(t, settings[t]) for t in TIERS}
    settings["hearing"] = hearing
    wanted["hearing"] = resolve("hearing", hearing)

    built: dict[tuple[str, str], ChatModel] = {}
    clients: dict[str, AsyncOpenAI] = {}
    for provider_name, model in wanted.values():
        if (provider_name, model) not in built:
            built[provider_name, model] = _make_model(
                provider_name, providers[provider_name], model, environ, rng, clients
            )
    models = {tier: built[wanted[tier]] for tier in TIERS}
    return ModelRouter(models, eco_mode=config.eco_mode, notice=notice, settings=settings)
