"""Model tiers: build_router's provider detection and configuration, eco mode, and the router's
per-tier defaults and usage counts. No real Ollama or OpenAI is touched: the Ollama probe is
injected, and the one end-to-end test talks to the loopback fake."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

import bot.llm.openai_chat as openai_chat_module
import bot.llm.router as router_module
from adapters.kinds import RULES
from bot.chat_model import ChatModel, Completion, Message, ModelError, Tool, Usage
from bot.config import TIERS, ModelsConfig, ProviderConfig, TierConfig, load_config
from bot.llm.offline import OfflineChatModel
from bot.llm.openai_chat import OpenAIChatModel, make_client
from bot.llm.router import OFFLINE_NOTICE, ModelRouter, ModelSetupError, build_router
from tests.fakes.models import ScriptedChatModel
from tests.fakes.openai_server import FakeOpenAI, HttpError, ogg_opus

HELLO = [Message("system", "You are Pip."), Message("user", "hello")]


class Probe:
    """An Ollama probe that answers `served` and records the hosts it was asked about."""

    def __init__(self, served: Sequence[str] = ()) -> None:
        self.served = list(served)
        self.hosts: list[str] = []

    async def __call__(self, host: str) -> list[str]:
        self.hosts.append(host)
        return list(self.served)


async def no_probe(host: str) -> list[str]:
    raise AssertionError(f"Ollama probed at {host} although providers are configured")


@pytest.fixture
def clients(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every SDK client the router makes, as {base_url, api_key, timeout}."""
    made: list[dict[str, Any]] = []
    real = make_client

    def recording(base_url: str | None, api_key: str, timeout: float) -> Any:
        made.append({"base_url": base_url, "api_key": api_key, "timeout": timeout})
        return real(base_url, api_key, timeout)

    monkeypatch.setattr(openai_chat_module, "make_client", recording)  # (router imports it late)
    return made


async def build(
    config: ModelsConfig, environ: Mapping[str, str], probe: Any = no_probe
) -> ModelRouter:
    return await build_router(config, environ, rng=random.Random(0), probe=probe)


CHAT_TIERS = tuple(t for t in TIERS if t not in ("hearing", "speech"))


def names(router: ModelRouter) -> dict[str, str]:
    """The chat tiers' models (hearing and speech, models of their own, are tested apart)."""
    return {tier: router.models[tier].name for tier in CHAT_TIERS}


# -- auto-detection (no [models.providers]) ---------------------------------------------------


async def test_openai_key_picks_openai_with_its_default_model(clients) -> None:
    probe = Probe(["llama3.2"])
    router = await build(ModelsConfig(), {"OPENAI_API_KEY": "sk-env"}, probe)
    assert names(router) == dict.fromkeys(CHAT_TIERS, "openai:gpt-4o-mini")
    assert all(isinstance(m, OpenAIChatModel) for m in router.models.values())
    assert len({id(router.models[t]) for t in CHAT_TIERS}) == 1  # one model shared by the tiers
    assert router.models["hearing"].name == "openai:whisper-1"  # a transcription model
    assert router.models["speech"].name == "openai:gpt-4o-mini-tts"  # and a voice
    assert router.hears and router.speaks
    assert router.describe() == (
        "openai:gpt-4o-mini on every tier, hearing=openai:whisper-1, speech=openai:gpt-4o-mini-tts"
    )
    # One client per provider, whatever its models.
    assert clients == [{"base_url": None, "api_key": "sk-env", "timeout": 60.0}]
    assert probe.hosts == []  # a key wins: no need to look for Ollama
    assert router.notice is None
    assert not router.offline


async def test_openai_base_url_alone_picks_that_endpoint(clients) -> None:
    url = "http://127.0.0.1:8000/v1"
    router = await build(ModelsConfig(), {"OPENAI_BASE_URL": url}, Probe(["llama3.2"]))
    assert names(router) == dict.fromkeys(CHAT_TIERS, "openai:gpt-4o-mini")
    # A local server needs no key, but the SDK wants one: a placeholder is sent.
    assert clients == [{"base_url": url, "api_key": "unused", "timeout": 60.0}]
    assert router.notice is None
    assert "speech" not in router.models  # not OpenAI's own: its speech model is not known


async def test_a_configured_openai_provider_takes_openai_base_url_from_the_environment(
    clients,
) -> None:
    url = "http://127.0.0.1:8000/v1"
    config = ModelsConfig(providers={"openai": ProviderConfig(kind="openai")})
    await build(config, {"OPENAI_BASE_URL": url})
    assert clients == [{"base_url": url, "api_key": "unused", "timeout": 60.0}]


async def test_ollama_detected_when_no_openai(clients) -> None:
    probe = Probe(["llama3.2", "qwen2.5:7b"])
    router = await build(ModelsConfig(), {}, probe)
    assert probe.hosts == ["http://localhost:11434"]
    assert names(router) == dict.fromkeys(CHAT_TIERS, "openai/ollama:llama3.2")  # the first served
    assert clients == [
        {"base_url": "http://localhost:11434/v1", "api_key": "unused", "timeout": 60.0}
    ]
    assert router.notice is None
    # Ollama has no /audio/transcriptions or /audio/speech: no hearing or speech tier.
    assert "hearing" not in router.models and "speech" not in router.models
    assert not router.hears and not router.speaks
    assert router.describe() == "openai/ollama:llama3.2 on every tier"


async def test_a_detected_ollama_hears_when_the_hearing_tier_is_configured(clients) -> None:
    config = ModelsConfig(hearing=TierConfig(model="whisper-large"))
    router = await build(config, {}, Probe(["llama3.2"]))
    assert router.models["hearing"].name == "openai/ollama:whisper-large"
    assert "speech" not in router.models


async def test_a_hearing_tier_absent_says_so_without_a_call(clients) -> None:
    router = await build(ModelsConfig(), {}, Probe(["llama3.2"]))
    with pytest.raises(ModelError, match="no hearing tier"):
        await router.transcribe("voice.ogg", b"OggS")
    with pytest.raises(ModelError, match="no speech tier"):
        await router.speak("hello")
    assert (router.usage["hearing"].failures, router.usage["speech"].failures) == (1, 1)


@pytest.mark.parametrize(
    ("host", "probed", "base_url"),
    [
        ("http://10.0.0.5:11500", "http://10.0.0.5:11500", "http://10.0.0.5:11500/v1"),
        ("10.0.0.5:11500", "http://10.0.0.5:11500", "http://10.0.0.5:11500/v1"),  # no scheme
        ("https://ollama.lan/", "https://ollama.lan", "https://ollama.lan/v1"),
        ("0.0.0.0", "http://127.0.0.1:11434", "http://127.0.0.1:11434/v1"),  # Ollama's own form
        ("ollama.lan", "http://ollama.lan:11434", "http://ollama.lan:11434/v1"),
    ],
)
async def test_ollama_host_honoured(clients, host: str, probed: str, base_url: str) -> None:
    probe = Probe(["llama3.2"])
    router = await build(ModelsConfig(), {"OLLAMA_HOST": host}, probe)
    assert probe.hosts == [probed]
    assert [c["base_url"] for c in clients] == [base_url]
    assert router.models["chat"].name == "openai/ollama:llama3.2"


@pytest.mark.parametrize("host", ["http://host:notaport", "localhost:99999", "ftp://x"])
async def test_a_malformed_ollama_host_is_not_probed(clients, host: str) -> None:
    probe = Probe(["llama3.2"])
    router = await build(ModelsConfig(), {"OLLAMA_HOST": host}, probe)
    assert probe.hosts == [] and router.offline and router.notice == OFFLINE_NOTICE


async def test_the_real_probe_says_no_for_anything_that_goes_wrong() -> None:
    assert await router_module.probe_ollama("http://127.0.0.1:9") == []  # refused
    assert await router_module.probe_ollama("http://[bad") == []  # not even a URL


async def test_nothing_found_means_offline_with_a_notice(clients) -> None:
    probe = Probe([])
    router = await build(ModelsConfig(), {}, probe)
    assert probe.hosts == ["http://localhost:11434"]
    assert all(isinstance(router.models[t], OfflineChatModel) for t in TIERS)
    assert router.speaks  # a murmur (bot/llm/murmur.py)
    assert names(router) == dict.fromkeys(CHAT_TIERS, "offline:offline")
    assert router.describe() == "offline:offline on every tier"  # hearing too: the stub
    assert router.offline
    assert router.notice == OFFLINE_NOTICE
    assert "OPENAI_API_KEY" in OFFLINE_NOTICE and "Ollama" in OFFLINE_NOTICE
    assert clients == []  # no network client at all
    completion = await router.complete("chat", HELLO)
    assert "offline" in completion.text


# -- configured providers and tiers -------------------------------------------------------------


async def test_pictures_go_to_a_chat_model_marked_vision_unless_in_eco_mode(clients) -> None:
    config = ModelsConfig(
        providers={"openai": ProviderConfig()},
        chat=TierConfig(model="gpt-4.1", vision=True),
        vision=TierConfig(model="gpt-4.1-mini"),
    )
    router = await build(config, {"OPENAI_API_KEY": "sk-env"})
    assert router.sees and names(router)["vision"] == "openai:gpt-4.1-mini"
    config.eco_mode = True
    eco = await build(config, {"OPENAI_API_KEY": "sk-env"})
    assert not eco.sees  # eco mode describes them, with the eco model
    config.eco_mode, config.chat = False, TierConfig(model="gpt-4.1")
    assert not (await build(config, {"OPENAI_API_KEY": "sk-env"})).sees


async def test_configured_tiers_use_their_providers_and_models(clients) -> None:
    config = ModelsConfig(
        providers={
            "openai": ProviderConfig(timeout=30.0),
            "local": ProviderConfig(base_url="http://127.0.0.1:8000/v1", timeout=120.0),
        },
        chat=TierConfig(provider="openai", model="gpt-4.1"),
        tools=TierConfig(provider="local", model="qwen2.5:7b"),
        summary=TierConfig(model="gpt-4.1-mini"),  # no provider: the first one configured
        intent=TierConfig(provider="openai", model="gpt-4.1"),
    )
    router = await build(config, {"OPENAI_API_KEY": "sk-env"})
    assert names(router) == {
        "chat": "openai:gpt-4.1",
        "tools": "openai/local:qwen2.5:7b",
        "summary": "openai:gpt-4.1-mini",
        "intent": "openai:gpt-4.1",
        "vision": "openai:gpt-4.1",  # left out: the chat tier's
    }
    assert router.models["hearing"].name == "openai:whisper-1"  # the chat tier's provider's
    assert router.models["intent"] is router.models["chat"]  # same provider and model: shared
    assert clients == [
        {"base_url": None, "api_key": "sk-env", "timeout": 30.0},
        {"base_url": "http://127.0.0.1:8000/v1", "api_key": "sk-env", "timeout": 120.0},
    ]
    assert router.notice is None
    assert not router.eco_mode and "eco" not in router.describe()


async def test_tier_without_config_falls_back_to_chat(clients) -> None:
    chat = TierConfig(provider="local", model="qwen2.5:7b", temperature=0.5, max_tokens=300)
    config = ModelsConfig(
        providers={"local": ProviderConfig(base_url="http://127.0.0.1:8000/v1")},
        chat=chat,
        intent=TierConfig(model="tiny", temperature=0.0),
    )
    router = await build(config, {})
    assert router.models["tools"] is router.models["chat"]
    assert router.models["summary"] is router.models["chat"]
    assert router.models["intent"].name == "openai/local:tiny"
    assert router.settings["tools"] is chat and router.settings["summary"] is chat
    assert router.settings["intent"].temperature == 0.0
    assert router.models["hearing"].name == "openai/local:whisper-1"
    assert len(clients) == 1  # the provider's, for all its models


async def test_no_model_anywhere_means_the_kinds_default(clients) -> None:
    config = ModelsConfig(
        providers={"zhipu": ProviderConfig(kind="zhipu", api_key_env="GLM_KEY")},
    )
    router = await build(config, {"GLM_KEY": "id.secret"})
    assert names(router) == dict.fromkeys(CHAT_TIERS, "zhipu:glm-4-flash")
    assert "speech" not in router.models  # no OpenAI-compatible /audio/speech there
    assert clients == [
        {
            "base_url": "https://open.bigmodel.cn/api/paas/v4/",
            "api_key": "id.secret",
            "timeout": 60.0,
        }
    ]


async def test_offline_provider_configured_has_no_notice(clients) -> None:
    config = ModelsConfig(providers={"offline": ProviderConfig(kind="offline")})
    router = await build(config, {})
    assert router.offline and router.notice is None
    assert names(router) == dict.fromkeys(CHAT_TIERS, "offline:offline")


# -- eco mode -----------------------------------------------------------------------------------


def full_config(eco_mode: bool, eco: TierConfig | None) -> ModelsConfig:
    return ModelsConfig(
        eco_mode=eco_mode,
        providers={
            "openai": ProviderConfig(),
            "local": ProviderConfig(base_url="http://127.0.0.1:8000/v1"),
        },
        chat=TierConfig(provider="local", model="big", temperature=0.8, max_tokens=800),
        tools=TierConfig(provider="openai", model="gpt-4.1-mini"),
        summary=TierConfig(provider="openai", model="gpt-4.1"),
        intent=TierConfig(provider="openai", model="gpt-4.1-nano"),
        eco=eco,
    )


async def test_eco_mode_sends_every_tier_to_the_eco_model(clients) -> None:
    eco = TierConfig(provider="local", model="small", temperature=0.1)
    # No OPENAI_API_KEY: the tiers eco mode replaces are not even built.
    router = await build(full_config(True, eco), {})
    model = router.models["chat"]
    assert all(router.models[t] is model for t in CHAT_TIERS)
    assert model.name == "openai/local:small"
    assert all(router.settings[t] is eco for t in CHAT_TIERS)
    assert router.models["hearing"].name == "openai/local:whisper-1"  # (eco's provider's)
    assert "speech" not in router.models and not router.speaks  # eco mode speaks nothing
    assert len(clients) == 1
    assert router.eco_mode
    assert router.describe().endswith("(eco mode)")


async def test_eco_mode_without_eco_table_uses_chat_providers_default(clients) -> None:
    router = await build(full_config(True, None), {})
    assert names(router) == dict.fromkeys(CHAT_TIERS, "openai/local:gpt-4o-mini")
    assert router.settings["chat"].temperature is None  # chat's sampling settings don't apply


async def test_eco_mode_with_detected_ollama_uses_the_served_model(clients) -> None:
    router = await build(ModelsConfig(eco_mode=True), {}, Probe(["llama3.2"]))
    assert names(router) == dict.fromkeys(CHAT_TIERS, "openai/ollama:llama3.2")


async def test_eco_mode_drops_paid_tools(clients) -> None:
    wanted = ["recall_memory", "web_search", "roll_dice"]
    on = await build(full_config(True, TierConfig(provider="local", model="s")), {})
    off = await build(full_config(False, None), {"OPENAI_API_KEY": "sk-env"})
    assert on.tools_allowed(wanted) == ["recall_memory", "roll_dice"]
    assert off.tools_allowed(wanted) == wanted
    assert off.models["chat"] is not off.models["tools"]


async def test_eco_mode_env_override_reaches_the_router(tmp_path: Path, clients) -> None:
    path = tmp_path / "kizuna.toml"
    path.write_text(
        '[models]\neco_mode = false\n\n[models.providers.offline]\nkind = "offline"\n',
        encoding="utf-8",
    )
    router = await build(load_config(path, {"ECO_MODE": "1"}, RULES).models, {})
    assert router.eco_mode and "(eco mode)" in router.describe()
    path.write_text(path.read_text().replace("false", "true"), encoding="utf-8")
    router = await build(load_config(path, {"ECO_MODE": "0"}, RULES).models, {})
    assert not router.eco_mode


# -- configuration mistakes ---------------------------------------------------------------------


@pytest.mark.parametrize("tier", ["chat", "tools", "summary", "intent"])
async def test_unknown_provider_names_the_tier(tier: str) -> None:
    config = ModelsConfig(providers={"openai": ProviderConfig(), "local": ProviderConfig()})
    setattr(config, tier, TierConfig(provider="nope", model="m"))
    with pytest.raises(ModelSetupError) as info:
        await build(config, {"OPENAI_API_KEY": "sk-env"})
    assert info.value.key == f"models.{tier}.provider"
    assert "'nope'" in info.value.message
    assert "openai, local" in info.value.message
    assert str(info.value).startswith(f"models.{tier}.provider: ")


async def test_unknown_eco_provider_names_the_eco_tier() -> None:
    config = ModelsConfig(
        eco_mode=True,
        providers={"openai": ProviderConfig()},
        eco=TierConfig(provider="cheap"),
    )
    with pytest.raises(ModelSetupError) as info:
        await build(config, {"OPENAI_API_KEY": "sk-env"})
    assert info.value.key == "models.eco.provider"


@pytest.mark.parametrize(
    ("provider", "variable"),
    [
        (ProviderConfig(), "OPENAI_API_KEY"),
        (ProviderConfig(api_key_env="TEAM_OPENAI_KEY"), "TEAM_OPENAI_KEY"),
        (ProviderConfig(kind="zhipu"), "ZHIPUAI_API_KEY"),
    ],
)
async def test_missing_api_key_names_api_key_env(provider: ProviderConfig, variable: str) -> None:
    config = ModelsConfig(providers={"main": provider})
    # Another variable being set does not help.
    with pytest.raises(ModelSetupError) as info:
        await build(config, {"SOME_OTHER_KEY": "x"})
    assert info.value.key == "models.providers.main.api_key_env"
    assert variable in info.value.message and "not set" in info.value.message


async def test_missing_key_with_a_base_url_sends_a_placeholder(clients) -> None:
    config = ModelsConfig(
        providers={
            "vllm": ProviderConfig(base_url="http://127.0.0.1:8000/v1", api_key_env="VLLM_KEY")
        }
    )
    await build(config, {})
    assert [c["api_key"] for c in clients] == ["unused"]


# -- ModelRouter.complete -----------------------------------------------------------------------


class FixedModel:
    """A ChatModel answering `text` with fixed token counts, or raising `error`."""

    def __init__(self, name: str, usage: Usage, error: Exception | None = None) -> None:
        self._name = name
        self.usage = usage
        self.error = error
        self.calls = 0

    @property
    def name(self) -> str:
        return self._name

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Tool] = (),
        json_mode: bool = False,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Completion:
        self.calls += 1
        if self.error is not None:
            raise self.error
        return Completion("[NEUTRAL] ok", usage=self.usage, model=self._name)


async def test_complete_counts_calls_tokens_and_failures_per_tier() -> None:
    big = FixedModel("big", Usage(100, 20, cached_tokens=64))
    small = FixedModel("small", Usage(7, 1))
    router = ModelRouter({"chat": big, "tools": big, "summary": big, "intent": small})
    assert isinstance(big, ChatModel)
    await router.complete("chat", HELLO)
    await router.complete("chat", HELLO)
    await router.complete("tools", HELLO)
    await router.complete("intent", HELLO)
    big.error = ModelError("down", retryable=True)
    with pytest.raises(ModelError, match="down"):
        await router.complete("chat", HELLO)

    chat, tools, summary, intent, vision, _, _ = (router.usage[t] for t in TIERS)
    assert (chat.calls, chat.failures, chat.prompt_tokens, chat.completion_tokens) == (
        3,
        1,
        200,
        40,
    )
    assert (tools.calls, tools.failures, tools.prompt_tokens, tools.completion_tokens) == (
        1,
        0,
        100,
        20,
    )
    assert (chat.cached_tokens, tools.cached_tokens) == (128, 64)  # of their prompts' tokens
    assert (summary.calls, summary.failures, summary.prompt_tokens) == (0, 0, 0)
    assert (intent.calls, intent.prompt_tokens, intent.completion_tokens) == (1, 7, 1)
    assert router.purposes["chat"].cached_tokens == 128
    assert (vision.calls, vision.images) == (0, 0)
    assert (big.calls, small.calls) == (4, 1)


async def test_complete_applies_tier_defaults_unless_the_call_gives_them() -> None:
    chat_model = ScriptedChatModel()
    intent_model = ScriptedChatModel()
    router = ModelRouter(
        {"chat": chat_model, "tools": chat_model, "summary": chat_model, "intent": intent_model},
        settings={
            "chat": TierConfig(temperature=0.8, max_tokens=800),
            "tools": TierConfig(temperature=0.2),
            "intent": TierConfig(temperature=0.5, max_tokens=100),
        },
    )
    tool = Tool("recall_memory", "look back")
    await router.complete("chat", HELLO)
    await router.complete("chat", HELLO, max_tokens=600)
    await router.complete("chat", HELLO, temperature=0.0)  # 0.0 is a value, not "unset"
    await router.complete("tools", HELLO, tools=[tool], json_mode=True)
    await router.complete("summary", HELLO)  # no settings for the tier: the model's defaults
    await router.complete("intent", HELLO, max_tokens=5, temperature=1.0)

    seen = [(c.temperature, c.max_tokens) for c in chat_model.calls]
    assert seen == [(0.8, 800), (0.8, 600), (0.0, 800), (0.2, None), (None, None)]
    assert chat_model.calls[3].json_mode and chat_model.calls[3].tools == (tool,)
    assert [(c.temperature, c.max_tokens) for c in intent_model.calls] == [(1.0, 5)]


async def test_built_router_passes_configured_sampling_to_the_model(clients) -> None:
    config = ModelsConfig(
        providers={"offline": ProviderConfig(kind="offline")},
        chat=TierConfig(temperature=0.8, max_tokens=800),
        intent=TierConfig(temperature=0.0, max_tokens=100),
    )
    router = await build(config, {})
    assert router.settings["chat"].max_tokens == 800
    assert router.settings["tools"].temperature == 0.8  # falls back to chat
    assert router.settings["intent"].temperature == 0.0
    recorder = ScriptedChatModel()
    router.models = {**router.models, "intent": recorder}
    await router.complete("intent", HELLO)
    assert (recorder.calls[0].temperature, recorder.calls[0].max_tokens) == (0.0, 100)


# -- end to end through the openai SDK -----------------------------------------------------------


async def test_router_from_config_talks_to_the_provider(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    path = tmp_path / "kizuna.toml"
    path.write_text(
        f"""
[models.providers.vllm]
kind = "openai"
base_url = "{fake_openai.base_url}"
api_key_env = "VLLM_API_KEY"
max_retries = 1
retry_base_delay = 0.001
extra_body = {{ top_k = 40, repetition_penalty = 1.05 }}

[models.chat]
model = "served-chat"
temperature = 0.7
max_tokens = 256

[models.intent]
provider = "vllm"
model = "served-nano"
""",
        encoding="utf-8",
    )
    environ = {"VLLM_API_KEY": "vk-e2e-123"}
    router = await build(load_config(path, environ, RULES).models, environ)
    assert router.models["chat"].name == "openai/vllm:served-chat"

    fake_openai.fail(503).reply_text("[HAPPY] hi there", usage=(12, 4))
    completion = await router.complete("chat", HELLO)
    assert completion.text == "[HAPPY] hi there"
    fake_openai.reply_text('{"intent": "chat"}', usage=(5, 3))
    await router.complete("intent", HELLO, json_mode=True)

    chat_retry, chat, intent = fake_openai.chat_requests
    assert chat_retry == chat  # the 503 was retried with the same request
    assert chat["model"] == "served-chat"
    assert (chat["temperature"], chat["max_tokens"]) == (0.7, 256)
    assert (chat["top_k"], chat["repetition_penalty"]) == (40, 1.05)  # extra_body, as is
    assert chat["messages"] == [
        {"role": "system", "content": "You are Pip."},
        {"role": "user", "content": "hello"},
    ]
    assert intent["model"] == "served-nano"
    assert intent["response_format"] == {"type": "json_object"}
    assert intent["top_k"] == 40
    assert "temperature" not in intent and "max_tokens" not in intent
    assert {r.headers["Authorization"] for r in fake_openai.requests} == {"Bearer vk-e2e-123"}

    assert router.usage["chat"].calls == 1  # one call, however many attempts
    assert (router.usage["chat"].prompt_tokens, router.usage["chat"].completion_tokens) == (12, 4)
    assert (router.usage["intent"].prompt_tokens, router.usage["intent"].completion_tokens) == (
        5,
        3,
    )


async def test_speech_goes_through_the_sdk_and_is_counted(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    path = tmp_path / "kizuna.toml"
    path.write_text(
        f"""
[models.providers.openai]
base_url = "{fake_openai.base_url}"
max_retries = 0

[models.speech]
model = "tts-1"
""",
        encoding="utf-8",
    )
    router = await build(load_config(path, {}, RULES).models, {"OPENAI_API_KEY": "k"})
    audio = await router.speak("Hello, Ana!", "nova")
    assert audio == ogg_opus()
    assert fake_openai.speeches == [
        {"model": "tts-1", "voice": "nova", "input": "Hello, Ana!", "response_format": "opus"}
    ]
    await router.speak("Hi")  # no voice named: the default one
    assert fake_openai.speeches[-1]["voice"] == "alloy"
    fake_openai.voices.append(HttpError(500))
    with pytest.raises(ModelError):
        await router.speak("Bye")
    speech = router.usage["speech"]
    assert (speech.calls, speech.failures, speech.characters) == (3, 1, 16)
    assert speech.audio_bytes == 2 * len(ogg_opus())
    assert router.purposes["speech"].calls == 3


async def test_a_speech_tier_elsewhere_than_openais_own_endpoint_is_named(clients) -> None:
    local = ProviderConfig(base_url="http://127.0.0.1:8000/v1")
    router = await build(ModelsConfig(providers={"local": local}), {})
    assert "speech" not in router.models and not router.speaks
    named = ModelsConfig(providers={"local": local}, speech=TierConfig(model="kokoro"))
    router = await build(named, {})
    assert router.models["speech"].name == "openai/local:kokoro" and router.speaks


async def test_an_unknown_speech_provider_is_the_files_line(tmp_path: Path) -> None:
    config = ModelsConfig(
        providers={"openai": ProviderConfig()}, speech=TierConfig(provider="voicebox")
    )
    with pytest.raises(ModelSetupError) as info:
        await build(config, {"OPENAI_API_KEY": "k"})
    assert info.value.key == "models.speech.provider"
    assert "'voicebox'" in info.value.message


async def test_router_failure_reaches_the_caller_as_model_error(fake_openai: FakeOpenAI) -> None:
    config = ModelsConfig(
        providers={
            "local": ProviderConfig(
                base_url=fake_openai.base_url, max_retries=1, retry_base_delay=0.001
            )
        }
    )
    router = await build(config, {})
    fake_openai.fail(500).fail(500)
    with pytest.raises(ModelError) as info:
        await router.complete("summary", HELLO)
    assert info.value.retryable
    assert len(fake_openai.chat_requests) == 2
    assert fake_openai.requests[0].headers["Authorization"] == "Bearer unused"
    assert (router.usage["summary"].calls, router.usage["summary"].failures) == (1, 1)


@pytest.mark.parametrize(
    ("provider", "environ", "sent"),
    [
        (ProviderConfig(kind="openai"), {"OPENAI_API_KEY": "k"}, True),  # OpenAI's own
        (
            ProviderConfig(kind="openai", base_url="https://api.openai.com/v1"),
            {"OPENAI_API_KEY": "k"},
            True,
        ),
        (
            ProviderConfig(kind="openai", base_url="http://localhost:11434/v1"),
            {},
            False,  # another server may refuse a field it does not know
        ),
        (
            ProviderConfig(kind="openai", base_url="http://localhost:8000/v1", cache_key=True),
            {},
            True,
        ),
        (ProviderConfig(kind="openai", cache_key=False), {"OPENAI_API_KEY": "k"}, False),
        (ProviderConfig(kind="zhipu"), {"ZHIPUAI_API_KEY": "id.secret"}, False),
        (
            ProviderConfig(kind="openai"),
            {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://localhost:8000/v1"},
            False,
        ),
    ],
)
async def test_the_prompt_cache_key_goes_to_openais_own_endpoint_unless_configured(
    provider: ProviderConfig, environ: dict[str, str], sent: bool
) -> None:
    router = await build(ModelsConfig(providers={"p": provider}), environ)
    chat = router.models["chat"]
    assert isinstance(chat, OpenAIChatModel)
    assert chat.cache_key is sent


async def test_a_zhipu_provider_speaks_openai_on_zhipus_path(fake_openai: FakeOpenAI) -> None:
    config = ModelsConfig(
        providers={
            "glm": ProviderConfig(
                kind="zhipu",
                base_url=fake_openai.zhipu_base_url,
                extra_body={"thinking": {"type": "disabled"}},
            )
        }
    )
    router = await build(config, {"ZHIPUAI_API_KEY": "id.secret"})
    fake_openai.reply_text("[HAPPY] 喵！")

    completion = await router.complete("chat", HELLO)

    assert completion.text == "[HAPPY] 喵！"
    [request] = fake_openai.requests
    assert request.path == "/api/paas/v4/chat/completions"
    assert request.headers["Authorization"] == "Bearer id.secret"
    assert request.json["model"] == "glm-4-flash"
    assert request.json["thinking"] == {"type": "disabled"}  # a Zhipu-only option, as is
