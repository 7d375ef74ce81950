"""`storage = "postgres"`: the runtime keeps conversations and memories in PostgreSQL, so a
second process (here: a runtime on another data folder) finds them; the FAISS indexes beside
each process are rebuilt from what PostgreSQL holds."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from adapters.console import PLATFORM as CONSOLE
from adapters.kinds import RULES
from bot.commands import memory as memory_commands
from bot.config import Config, EngineConfig, load_config, storage_dsn
from bot.events import ChatEvent
from bot.platforms import Platforms
from bot.runtime.assemble import open_runtime
from bot.tomlfile import TomlError
from memory.storage import DATABASE
from tests.fakes.factories import make_event, make_persona, no_ollama

PIP = {"pip": make_persona("pip", name="Pip")}


def said(text: str = "") -> ChatEvent:
    """Ann, in the console."""
    return make_event(text, platform="console", user_id="ann", user_name="ann")


async def test_two_runtimes_share_one_postgres_database(tmp_path: Path, postgres_dsn: str) -> None:
    environ = {"KIZUNA_DATABASE_URL": postgres_dsn}
    first_dir, second_dir = tmp_path / "one", tmp_path / "two"

    def config(data_dir: Path) -> Config:
        return Config(
            data_dir=str(data_dir), storage="postgres", engine=EngineConfig(timezone="UTC")
        )

    one = await open_runtime(
        config(first_dir), PIP, environ, platforms=Platforms([CONSOLE]), probe=no_ollama
    )
    try:
        await one.engine.handle(said("hello from the first process"))
        kept = await memory_commands.remember(one.services, said(), "Ann's cat is called Mochi")
        assert kept.id is not None
    finally:
        await one.close()
    assert not (first_dir / DATABASE).exists()  # nothing went to SQLite

    two = await open_runtime(
        config(second_dir), PIP, environ, platforms=Platforms([CONSOLE]), probe=no_ollama
    )
    try:
        session = await two.engine.session(said())
        assert session.turns[0].text == "hello from the first process"
        found = await memory_commands.closest(two.services, said(), "what is the cat called?")
        assert found is not None and "Mochi" in found.text
    finally:
        await two.close()


def test_postgres_needs_its_connection_string(tmp_path: Path) -> None:
    path = tmp_path / "kizuna.toml"
    path.write_text('storage = "postgres"\ndsn_env = "MY_DB"\n', encoding="utf-8")
    config = load_config(path, {}, RULES)
    with pytest.raises(TomlError, match=r"kizuna.toml:2: dsn_env: .*MY_DB"):
        storage_dsn(config, {})
    assert storage_dsn(config, {"MY_DB": "postgresql://x/y"}) == "postgresql://x/y"
    assert storage_dsn(Config(), {"KIZUNA_DATABASE_URL": "postgresql://x/y"}) is None


async def test_a_change_in_one_process_refreshes_the_others_index(
    tmp_path: Path, postgres_dsn: str
) -> None:
    environ = {"KIZUNA_DATABASE_URL": postgres_dsn}
    config = Config(data_dir=str(tmp_path / "a"), storage="postgres")
    other = Config(data_dir=str(tmp_path / "b"), storage="postgres")
    one = await open_runtime(config, PIP, environ, platforms=Platforms([CONSOLE]), probe=no_ollama)
    two = await open_runtime(other, PIP, environ, platforms=Platforms([CONSOLE]), probe=no_ollama)
    try:
        scope = one.services.desk.event_scope(said())
        await memory_commands.remember(one.services, said(), "Ann's cat is called Mochi")
        assert await memory_commands.closest(one.services, said(), "cat") is not None  # index open
        name = one.bank.embedder.name
        index = one.bank.derived.indexes.open_index(scope, name)
        assert index is not None and index.size == 1
        await memory_commands.remember(two.services, said(), "Ann's dog is called Biscuit")
        for _ in range(200):  # the notification comes on its own connection
            if index.size == 2:
                break
            await asyncio.sleep(0.01)
        # The other's memory read into the index, not the index rebuilt.
        assert one.bank.derived.indexes.open_index(scope, name) is index and index.size == 2
        found = await memory_commands.closest(one.services, said(), "dog Biscuit")
        assert found is not None and "Biscuit" in found.text
        # Its own writes do not make a process throw its index away.
        await memory_commands.remember(one.services, said(), "Ann plays the cello")
        await asyncio.sleep(0.2)
        assert one.bank.derived.indexes.open_index(scope, name) is not None
    finally:
        await two.close()
        await one.close()
