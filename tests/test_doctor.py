"""`kizuna doctor` (adapters/command/doctor.py): what it finds in an installation, against the
loopback fakes of Discord, Telegram and an OpenAI-compatible server, and what it tells the
host to do."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import discord
import pytest

from adapters.command.doctor import Finding, examine
from adapters.discord import PERMISSIONS as DISCORD_PERMISSIONS
from adapters.discord import invite as discord_invite
from adapters.kinds import RULES
from bot.config import (
    BotConfig,
    Config,
    ModelsConfig,
    ProviderConfig,
    TierConfig,
    load_config,
)
from bot.persona.file import PersonaLibrary
from memory.bank import MemoryBank
from memory.clock import FakeClock
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.factories import no_ollama
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import FakeTelegram

SHIPPED = PersonaLibrary.default(Path("/nonexistent"))


async def findings(config: Config, environ: dict[str, str] | None = None) -> list[Finding]:
    library = SHIPPED
    return [f async for f in examine(config, environ or {}, library, probe=no_ollama)]


def by_subject(found: list[Finding]) -> dict[str, Finding]:
    return {f.subject: f for f in found}


@pytest.fixture
async def discord_fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeDiscord]:
    """The fake; discord.py's process-wide API address, which the doctor sets, is put back."""
    monkeypatch.setattr(discord.http.Route, "BASE", discord.http.Route.BASE)
    async with FakeDiscord() as server:
        yield server


async def test_a_fresh_install_has_nothing_to_fix(tmp_path: Path) -> None:
    found = await findings(Config(data_dir=str(tmp_path / "data")))
    assert not [f for f in found if f.level == "fail"]
    subjects = by_subject(found)
    assert subjects["configuration"].text == "built-in defaults"
    assert "miao" in subjects["personas"].text and "monikai" in subjects["personas"].text
    assert "does not exist yet" in subjects["data folder"].text
    assert subjects["models"].level == "note" and "offline model" in subjects["models"].text


async def test_the_data_folder_its_privacy_and_its_embeddings(tmp_path: Path) -> None:
    data = tmp_path / "data"
    bank = await MemoryBank.open(data, "hash", FakeClock())
    await bank.remember("pip/console:dm:ann", "ann likes green tea", speaker="ann")
    await bank.close()
    config = Config(data_dir=str(data))
    subjects = by_subject(await findings(config))
    assert subjects["data folder"] == Finding("ok", "data folder", f"{data}, writable")
    assert "schema" in subjects["store"].text and "1 memory scope(s)" in subjects["store"].text
    # The default embedder is not the one these memories were made with: re-embedded later.
    assert subjects["embeddings"].level == "note"
    assert "1 memories are not embedded with" in subjects["embeddings"].text

    leaked = data / "kizuna.sqlite3"
    os.chmod(leaked, 0o644)
    subjects = by_subject(await findings(config))
    assert subjects["data folder"].level == "fail"
    assert f"chmod -R go-rwx {data}" in subjects["data folder"].text
    assert "ann" not in str(subjects)  # nothing anyone wrote


async def test_a_broken_persona_file_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "personas"
    folder.mkdir()
    (folder / "bad.toml").write_text('[identity\nname = "x"\n', encoding="utf-8")
    library = PersonaLibrary.default(tmp_path)
    config = Config(data_dir=str(tmp_path / "data"))
    found = [f async for f in examine(config, {}, library, probe=no_ollama)]
    [broken] = [f for f in found if f.level == "fail"]
    assert broken.subject == "persona bad" and "bad.toml:1: TOML syntax error" in broken.text


async def test_model_endpoints_are_asked_what_they_serve(tmp_path: Path) -> None:
    async with FakeOpenAI() as fake:

        def models(chat: str) -> ModelsConfig:
            provider = ProviderConfig(kind="openai", base_url=fake.base_url)
            return ModelsConfig(providers={"local": provider}, chat=TierConfig(model=chat))

        good = by_subject(
            await findings(Config(data_dir=str(tmp_path / "data"), models=models("fake-chat")))
        )
        assert good["model openai/local:fake-chat"] == Finding(
            "ok", "model openai/local:fake-chat", "reachable"
        )
        wrong = by_subject(
            await findings(Config(data_dir=str(tmp_path / "data"), models=models("nope")))
        )
        assert wrong["model openai/local:nope"].level == "fail"
        assert "does not serve 'nope'" in wrong["model openai/local:nope"].text
        port = fake.port
    gone = by_subject(
        await findings(Config(data_dir=str(tmp_path / "data"), models=models("fake-chat")))
    )
    assert gone["model openai/local:fake-chat"].level == "fail"
    assert "not reachable" in gone["model openai/local:fake-chat"].text and str(port) in str(gone)


async def test_bots_are_checked_against_their_platforms(
    tmp_path: Path, discord_fake: FakeDiscord
) -> None:
    async with FakeTelegram() as telegram:
        config = Config(
            data_dir=str(tmp_path / "data"),
            bots=[
                BotConfig("discord", "pip", token_env="KZ_D", base_url=discord_fake.api_base),
                BotConfig("telegram", "bo", token_env="KZ_T", base_url=telegram.base_url),
                BotConfig("telegram", "miao", token_env="KZ_MISSING", name="other"),
            ],
        )
        environ = {"KZ_D": "discord-token", "KZ_T": telegram.token}
        subjects = by_subject(await findings(config, environ))
        on_discord = subjects["bots[0] discord pip"]
        assert on_discord.level == "ok" and discord_invite(discord_fake.app_id) in on_discord.text
        on_telegram = subjects["bots[1] telegram bo"]
        assert on_telegram.level == "ok" and "Group privacy mode is on" in on_telegram.text
        assert subjects["bots[2] telegram other"] == Finding(
            "todo", "bots[2] telegram other", "the environment variable KZ_MISSING is not set"
        )
        assert all(secret not in str(subjects) for secret in environ.values())

        discord_fake.app_flags = 0
        telegram.bot_user["can_read_all_group_messages"] = True
        subjects = by_subject(await findings(config, environ))
        assert subjects["bots[0] discord pip"].level == "fail"
        assert "Message Content intent is off" in subjects["bots[0] discord pip"].text
        assert subjects["bots[1] telegram bo"].text == f"@{telegram.bot_user['username']}"

        refused = by_subject(await findings(config, {**environ, "KZ_T": "999:wrong"}))
        assert refused["bots[1] telegram bo"].level == "fail"
        assert "Telegram refused the token in KZ_T" in refused["bots[1] telegram bo"].text


def test_the_invite_asks_for_the_scopes_and_permissions_the_bot_needs() -> None:
    invite = discord_invite(1234)
    assert "client_id=1234" in invite and "scope=bot+applications.commands" in invite
    permissions = discord.Permissions(**dict.fromkeys(DISCORD_PERMISSIONS, True))
    assert f"permissions={permissions.value}" in invite


async def test_doctor_finds_what_run_refuses_and_counts_only_usable_personas(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "personas"
    folder.mkdir()
    (folder / "bad.toml").write_text('[identity\nname = "x"\n', encoding="utf-8")
    (folder / "tooly.toml").write_text(
        '[identity]\nname = "Tooly"\npersonality = "x"\n\n'
        '[[custom_tools]]\nname = "lookup"\nmodule = "kizuna_no_such_module:lookup"\n',
        encoding="utf-8",
    )
    (folder / "serv.toml").write_text(
        '[identity]\nname = "Serv"\npersonality = "x"\n\n'
        '[[mcp_servers]]\nname = "gone"\ncommand = "/nonexistent/kizuna-mcp"\ntools = ["x"]\n',
        encoding="utf-8",
    )
    source = tmp_path / "kizuna.toml"
    source.write_text(
        '[[bots]]\nplatform = "web"\npersona = "tooly"\npersonas = ["nobody"]\n',
        encoding="utf-8",
    )
    config = load_config(source, {}, RULES)
    config.data_dir = str(tmp_path / "data")
    library = PersonaLibrary.default(tmp_path)
    found = [
        f async for f in examine(config, {"PATH": os.environ["PATH"]}, library, probe=no_ollama)
    ]
    subjects = by_subject(found)
    usable = subjects["personas"].text
    count = len(SHIPPED.names()) + 2  # tooly and serv load; their tools are checked after
    assert usable.startswith(f"{count} usable (") and "bad" not in usable
    assert subjects["persona bad"].level == "fail"
    tools = subjects["persona tooly tools"]
    assert tools.level == "fail"
    assert f"{folder / 'tooly.toml'}:7: custom_tools[0].module: cannot import" in tools.text
    gone = subjects["persona serv MCP server gone"]
    assert gone.level == "fail" and "not reachable" in gone.text
    nobody = subjects["persona nobody"]
    assert nobody.level == "fail" and f"{source}:4: bots[0].personas[0]" in nobody.text
