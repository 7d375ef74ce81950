"""Which embedder long-term memory uses: [memory] embedder, reaching its provider the way the
chat tiers do (the same [models.providers] tables, keys from the environment)."""

from __future__ import annotations

from collections.abc import Mapping

from bot.config import MemoryConfig, ModelsConfig, ProviderConfig
from bot.llm.router import ModelSetupError, provider_client
from memory.embeddings import Embedder, make_embedder

__all__ = ["build_embedder"]


def _provider(
    memory: MemoryConfig, models: ModelsConfig, environ: Mapping[str, str]
) -> tuple[str, ProviderConfig]:
    kind = memory.embedder
    if memory.provider:
        provider = models.providers[memory.provider]
        if provider.kind != kind:
            raise ModelSetupError(
                "memory.provider",
                f"provider {memory.provider!r} is of kind {provider.kind!r}, "
                f"but embedder {kind!r} needs one of kind {kind!r}",
            )
        return memory.provider, provider
    for name, provider in models.providers.items():
        if provider.kind == kind:
            return name, provider
    if kind == "openai" and not (environ.get("OPENAI_API_KEY") or environ.get("OPENAI_BASE_URL")):
        raise ModelSetupError(
            "memory.embedder",
            'embedder "openai" needs an endpoint: set OPENAI_API_KEY (or OPENAI_BASE_URL), or '
            "name a [models.providers] table in memory.provider",
        )
    return kind, ProviderConfig(kind="zhipu" if kind == "zhipu" else "openai")


def build_embedder(
    memory: MemoryConfig, models: ModelsConfig, environ: Mapping[str, str]
) -> Embedder:
    """The configured embedder (not started: remote ones learn their dimension on start)."""
    if memory.embedder in ("auto", "hash", "e5", "local"):
        return make_embedder(memory.embedder)
    name, provider = _provider(memory, models, environ)
    # Embeddings are retried by the SDK itself (they have no apology to make meanwhile).
    client = provider_client(name, provider, environ, max_retries=provider.max_retries)
    return make_embedder(
        memory.embedder,
        client=client,
        model=memory.model or None,
        dimension=memory.dimensions or None,
    )
