"""Which embedder [memory] builds, and how it reaches its provider (the loopback fake)."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.kinds import RULES
from bot.config import MemoryConfig, ModelsConfig, ProviderConfig, load_config
from bot.llm.embedding import build_embedder
from bot.llm.router import ModelSetupError
from bot.tomlfile import TomlError
from memory.embeddings import E5Embedder, HashEmbedder, LocalEmbedder, OpenAIEmbedder
from tests.fakes.openai_server import FakeOpenAI


def test_the_default_is_e5_where_installed_else_hash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(E5Embedder, "available", staticmethod(lambda: True))
    assert isinstance(build_embedder(MemoryConfig(), ModelsConfig(), {}), E5Embedder)
    monkeypatch.setattr(E5Embedder, "available", staticmethod(lambda: False))
    assert isinstance(build_embedder(MemoryConfig(), ModelsConfig(), {}), HashEmbedder)


def test_local_is_built_without_loading_anything() -> None:
    embedder = build_embedder(MemoryConfig(embedder="local"), ModelsConfig(), {})
    assert isinstance(embedder, LocalEmbedder) and embedder.dimension == 384


async def test_openai_through_a_configured_provider(fake_openai: FakeOpenAI) -> None:
    models = ModelsConfig(
        providers={"local": ProviderConfig(kind="openai", base_url=fake_openai.base_url)}
    )
    memory = MemoryConfig(embedder="openai", model="nomic-embed-text", dimensions=8)
    embedder = build_embedder(memory, models, {})
    assert isinstance(embedder, OpenAIEmbedder)
    vectors = await embedder.embed(["hello there"])
    assert vectors.shape == (1, 8)
    [request] = fake_openai.embedding_requests
    assert request["model"] == "nomic-embed-text"
    assert request["encoding_format"] == "float"


async def test_openai_from_the_environment(fake_openai: FakeOpenAI) -> None:
    memory = MemoryConfig(embedder="openai", model="fake-embedding")
    environ = {"OPENAI_BASE_URL": fake_openai.base_url, "OPENAI_API_KEY": "sk-env"}
    embedder = build_embedder(memory, ModelsConfig(), environ)
    await embedder.start()  # learns the dimension from the server
    assert embedder.dimension == fake_openai.embedding_dim
    assert fake_openai.requests[0].headers["Authorization"] == "Bearer sk-env"


async def test_zhipu_on_zhipus_path(fake_openai: FakeOpenAI) -> None:
    models = ModelsConfig(
        providers={"glm": ProviderConfig(kind="zhipu", base_url=fake_openai.zhipu_base_url)}
    )
    memory = MemoryConfig(embedder="zhipu", dimensions=256)
    embedder = build_embedder(memory, models, {"ZHIPUAI_API_KEY": "id.secret"})
    assert (await embedder.embed(["喵"])).shape == (1, 256)
    [request] = fake_openai.requests
    assert request.path == "/api/paas/v4/embeddings"
    assert request.json["model"] == "embedding-3" and request.json["dimensions"] == 256


def test_openai_with_no_endpoint_anywhere_says_what_to_set() -> None:
    with pytest.raises(ModelSetupError) as info:
        build_embedder(MemoryConfig(embedder="openai"), ModelsConfig(), {})
    assert info.value.key == "memory.embedder" and "OPENAI_API_KEY" in info.value.message


def test_a_provider_of_the_wrong_kind_is_refused() -> None:
    models = ModelsConfig(providers={"glm": ProviderConfig(kind="zhipu")})
    with pytest.raises(ModelSetupError) as info:
        build_embedder(MemoryConfig(embedder="openai", provider="glm"), models, {})
    assert info.value.key == "memory.provider"


def test_zhipu_without_its_key_names_the_variable() -> None:
    with pytest.raises(ModelSetupError, match="ZHIPUAI_API_KEY"):
        build_embedder(MemoryConfig(embedder="zhipu"), ModelsConfig(), {})


def test_memory_section_errors_point_at_their_line(tmp_path: Path) -> None:
    path = tmp_path / "kizuna.toml"
    path.write_text('[memory]\nembedder = "openai"\nprovider = "nope"\n', encoding="utf-8")
    with pytest.raises(TomlError) as info:
        load_config(path, {}, RULES)
    assert (info.value.key, info.value.line) == ("memory.provider", 3)
    path.write_text("[memory]\nrecall_k = 50\n", encoding="utf-8")
    with pytest.raises(TomlError, match="recall_k") as info:
        load_config(path, {}, RULES)
    assert info.value.line == 2
    path.write_text('[memory]\nembedder = "word2vec"\n', encoding="utf-8")
    with pytest.raises(TomlError, match="embedder"):
        load_config(path, {}, RULES)
