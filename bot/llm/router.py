"""Model tiers: which model answers chat, tools, summary, intent and vision calls (pictures
described in words), which one hears voice notes (`hearing`, `ModelRouter.transcribe`), which
one speaks replies aloud (`speech`, `ModelRouter.speak`), and what they cost.

`build_router` turns the [models] configuration into one `ChatModel` per tier. With no
providers configured it looks around: OPENAI_API_KEY (or OPENAI_BASE_URL) -> OpenAI; else an
Ollama answering on localhost:11434 -> that; else the offline model, with a notice saying how
to connect a real one. `eco_mode` sends every tier to the one `eco` model, and has no speech tier.
A tier the provider cannot serve is absent (`ModelRouter.models` lacks it): an Ollama found on
its own has no transcription or speech endpoint. The offline model hears nothing and murmurs
what it says aloud (bot.llm.murmur).

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

from bot.chat_model import ChatModel, Completion, Hearer, Message, ModelError, Speaker, Tool
from bot.config import TIERS, ModelsConfig, ProviderConfig, TierConfig
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
# The speech tier's model when [models.speech] names none, on the kind's own endpoint only:
# another server (vLLM, a local one) or kind (Zhipu has no OpenAI-compatible /audio/speech)
# has no speech tier unless [models.speech] names its model.
SPEECH_MODELS = {"openai": "gpt-4o-mini-tts", "offline": "offline"}  # (offline: a murmur)
DEFAULT_VOICE = "alloy"  # a persona's voice when its [voice] names none (OpenAI's first)
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
    cached_tokens: int = 0  # of prompt_tokens, from the provider's prompt cache (cheaper)
    images: int = 0  # pictures sent (priced per picture by most providers)
    recordings: int = 0  # voice notes and audio sent to be transcribed
    audio_bytes: int = 0  # their size (providers price them by the minute); or spoken
    characters: int = 0  # of the texts spoken aloud (providers price speech by the character)


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
    def hears(self) -> bool:
        """Whether voice notes can be transcribed: a hearing tier whose model transcribes."""
        return isinstance(self.models.get("hearing"), Hearer)

    @property
    def speaks(self) -> bool:
        """Whether replies can be spoken aloud: a speech tier whose model speaks, and not in
        eco mode (which turns voice out off)."""
        return not self.eco_mode and isinstance(self.models.get("speech"), Speaker)

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
            counter.cached_tokens += completion.usage.cached_tokens
        return completion

    async def transcribe(self, name: str, audio: bytes) -> str:
        """What the recording `audio` says, by the hearing tier's model; ModelError when it
        cannot (a model that does not transcribe, a recording it cannot decode)."""
        counters = (self.usage["hearing"], self.purposes.setdefault("hearing", TierUsage()))
        for counter in counters:
            counter.calls += 1
            counter.recordings += 1
            counter.audio_bytes += len(audio)
        model = self.models.get("hearing")
        try:
            if not isinstance(model, Hearer):
                what = "no hearing tier" if model is None else f"{model.name} cannot transcribe"
                raise ModelError(f"{what}: set [models.hearing]")
            return await model.transcribe(name, audio)
        except ModelError:
            for counter in counters:
                counter.failures += 1
            raise

    async def speak(self, text: str, voice: str = "") -> bytes:
        """`text` said aloud by the speech tier's model in `voice` (DEFAULT_VOICE if empty):
        the audio bytes as the server sent them; ModelError when it cannot (see `speaks`)."""
        counters = (self.usage["speech"], self.purposes.setdefault("speech", TierUsage()))
        for counter in counters:
            counter.calls += 1
            counter.characters += len(text)
        model = self.models.get("speech")
        try:
            if not self.speaks or not isinstance(model, Speaker):
                raise ModelError("no speech tier (eco mode, or no [models.speech])")
            audio = await model.speak(text, voice or DEFAULT_VOICE)
        except ModelError:
            for counter in counters:
                counter.failures += 1
            raise
        for counter in counters:
            counter.audio_bytes += len(audio)
        return audio

    def describe(self) -> str:
        """ "gpt-4o-mini on every tier, hearing=whisper-1, speech=gpt-4o-mini-tts" or each
        tier's model; hearing and speech are named apart when they differ (models of their
        own, never the chat model), and only where they are."""
        voices = ("hearing", "speech")
        names = {self.models[t].name for t in TIERS if t not in voices}
        apart = [(t, self.models[t].name) for t in voices if t in self.models]
        if len(names) == 1:
            text = f"{next(iter(names))} on every tier"
            text += "".join(f", {t}={name}" for t, name in apart if name not in names)
        else:
            text = ", ".join(f"{t}={self.models[t].name}" for t in TIERS if t in self.models)
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
) -> tuple[dict[str, ProviderConfig], str, str | None, bool]:
    """Providers when none are configured: (providers, default model, notice, whether the
    provider found has the audio endpoints: Ollama has neither /audio/transcriptions nor
    /audio/speech)."""
    if environ.get("OPENAI_API_KEY") or environ.get("OPENAI_BASE_URL"):
        provider = ProviderConfig(kind="openai", base_url=environ.get("OPENAI_BASE_URL", ""))
        return {"openai": provider}, DEFAULT_MODELS["openai"], None, True
    host = ollama_url(environ.get("OLLAMA_HOST", ""))
    if host is None:
        log.warning(
            "OLLAMA_HOST=%r is not a host[:port]; not looking for Ollama", environ["OLLAMA_HOST"]
        )
    served = await probe(host) if host else []
    if host and served:
        provider = ProviderConfig(kind="openai", base_url=f"{host}/v1")
        return {"ollama": provider}, served[0], None, False
    return {"offline": ProviderConfig(kind="offline")}, "offline", OFFLINE_NOTICE, True


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
        cache_key=_cache_key(provider, environ),
    )


def _cache_key(provider: ProviderConfig, environ: Mapping[str, str]) -> bool:
    """Whether `prompt_cache_key` goes with the provider's requests: as configured, else only
    to OpenAI's own endpoint."""
    if provider.cache_key is not None:
        return provider.cache_key
    chosen = provider.base_url or (
        environ.get("OPENAI_BASE_URL", "") if provider.kind == "openai" else ""
    )
    own = not chosen or urlsplit(chosen).hostname == "api.openai.com"
    return provider.kind == "openai" and own


async def build_router(
    config: ModelsConfig,
    environ: Mapping[str, str],
    *,
    rng: random.Random,
    probe: OllamaProbe = probe_ollama,
) -> ModelRouter:
    providers = dict(config.providers)
    default_model, notice, audio = "", None, True
    if not providers:
        providers, default_model, notice, audio = await _detect(environ, probe)
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
        if key == "speech":
            provider = providers[provider_name]
            own = not (provider.base_url or (kind == "openai" and environ.get("OPENAI_BASE_URL")))
            return provider_name, tier.model or (SPEECH_MODELS.get(kind, "") if own else "")
        return provider_name, tier.model or default_model or DEFAULT_MODELS[kind]

    chat = config.chat or TierConfig()
    chat_tiers = [t for t in TIERS if t not in ("hearing", "speech")]
    settings: dict[str, TierConfig] = {t: getattr(config, t) or chat for t in chat_tiers}
    # Not the chat model's name: a transcription model of the chat tier's provider (in eco
    # mode, of the eco model's), unless [models.hearing] says; the same for speech.
    hearing = config.hearing or TierConfig(provider=chat.provider)
    speech = config.speech or TierConfig(provider=chat.provider)
    if config.eco_mode:
        eco_tier = config.eco or TierConfig(provider=settings["chat"].provider)
        hearing = config.hearing or TierConfig(provider=eco_tier.provider)
        settings = dict.fromkeys(chat_tiers, eco_tier)
        wanted = dict.fromkeys(chat_tiers, resolve("eco", eco_tier))
    else:
        wanted = {t: resolve(t, settings[t]) for t in chat_tiers}
    # A detected Ollama serves neither: no hearing or speech tier (what they are asked says
    # so). Eco mode speaks nothing aloud: its speech tier is not built.
    if audio or config.hearing is not None:
        settings["hearing"] = hearing
        wanted["hearing"] = resolve("hearing", hearing)
    if (audio or config.speech is not None) and not config.eco_mode:
        provider_name, model = resolve("speech", speech)
        if model:
            settings["speech"] = speech
            wanted["speech"] = provider_name, model

    built: dict[tuple[str, str], ChatModel] = {}
    clients: dict[str, AsyncOpenAI] = {}
    for provider_name, model in wanted.values():
        if (provider_name, model) not in built:
            built[provider_name, model] = _make_model(
                provider_name, providers[provider_name], model, environ, rng, clients
            )
    models = {tier: built[where] for tier, where in wanted.items()}
    return ModelRouter(models, eco_mode=config.eco_mode, notice=notice, settings=settings)
