"""Tokens, API keys and database passwords never reach a log line, an export or an error
message: the scrubbing of log records (bot/redact.py), the secrets the configuration names,
httpx's request lines for Telegram (the token is in the URL), a rejected bot token, a
connection string with a password, and the files `kizuna` writes (a persona card, a session
export)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.command.cli import main
from adapters.command.host import BotStartError, bot_tokens, host
from adapters.telegram import TelegramAdapter, Webhook, webhook_secret
from bot import redact
from bot.config import (
    BotConfig,
    Config,
    EngineConfig,
    ModelsConfig,
    ProviderConfig,
    WebConfig,
)
from bot.tomlfile import TomlError
from memory.storage import StoreError
from memory.storage.postgres import PgStore
from tests.fakes.factories import make_persona, no_ollama, open_bot
from tests.fakes.logs import logged_errors
from tests.fakes.process import free_port
from tests.fakes.secrets import (
    DISCORD_TOKEN,
    FAKE_SECRETS,
    INSPECTOR_TOKEN,
    OPENAI_API_KEY,
    POSTGRES_PASSWORD,
    TELEGRAM_TOKEN,
    WEBHOOK_SECRET,
    ZHIPU_API_KEY,
)
from tests.fakes.telegram_server import FakeTelegram

DSN = f"postgresql://kizuna:{POSTGRES_PASSWORD}@127.0.0.1:9/kizuna"


def none_of_the_secrets(text: str) -> list[str]:
    return [name for name, value in FAKE_SECRETS.items() if value in text]


@pytest.fixture
def scrubbing() -> Iterator[redact.Redactor]:
    """A Redactor installed as the product installs it, the logging record factory put back
    afterwards (it is process-wide)."""
    factory = logging.getLogRecordFactory()
    logging.setLogRecordFactory(logging.LogRecord)
    try:
        yield redact.install()
    finally:
        logging.setLogRecordFactory(factory)


def test_records_are_scrubbed_of_hidden_values_and_telegram_tokens(
    scrubbing: redact.Redactor, caplog: pytest.LogCaptureFixture
) -> None:
    redact.hide(OPENAI_API_KEY, "on")  # "on" is too short to be a secret: left alone
    log = logging.getLogger("httpx")
    with caplog.at_level(logging.DEBUG):
        log.info('HTTP Request: POST http://127.0.0.1:1/bot%s/getUpdates "200 OK"', TELEGRAM_TOKEN)
        log.info("HTTP Request: POST http://127.0.0.1:1/bot123:short-test/getMe")
        log.warning("key %s, switch on", OPENAI_API_KEY)
        log.debug("bare token %s in a message", TELEGRAM_TOKEN)
        try:
            raise RuntimeError(f"The token `{TELEGRAM_TOKEN}` was rejected; key {OPENAI_API_KEY}")
        except RuntimeError:
            log.exception("start failed")
        log.warning("stack", stack_info=True, extra={})
    text = caplog.text
    assert none_of_the_secrets(text) == [] and "short-test" not in text
    messages = [r.getMessage() for r in caplog.records]
    assert messages[:4] == [
        'HTTP Request: POST http://127.0.0.1:1/bot[redacted]/getUpdates "200 OK"',
        "HTTP Request: POST http://127.0.0.1:1/bot[redacted]/getMe",
        "key [redacted], switch on",
        "bare token [redacted] in a message",
    ]
    assert "The token `[redacted]` was rejected; key [redacted]" in text
    assert redact.install() is scrubbing  # installed once, however often asked


def test_the_secrets_the_configuration_names_are_found() -> None:
    config = Config(
        dsn_env="PG",
        models=ModelsConfig(providers={"team": ProviderConfig(api_key_env="TEAM_LLM")}),
        web=WebConfig(inspector_token_env="LOOK"),
        bots=[
            BotConfig("discord", "pip", token_env="DBOT"),
            BotConfig(
                "telegram",
                "bo",
                token_env="TBOT",
                webhook_url="https://x.example/h",
                webhook_secret_env="HOOK",
            ),
        ],
    )
    environ = {
        "PG": DSN,
        "TEAM_LLM": OPENAI_API_KEY,
        "LOOK": INSPECTOR_TOKEN,
        "DBOT": DISCORD_TOKEN,
        "TBOT": TELEGRAM_TOKEN,
        "HOOK": WEBHOOK_SECRET,
        "ZHIPUAI_API_KEY": ZHIPU_API_KEY,
        "HOME": "/home/someone",
        "ECO_MODE": "1",
    }
    found = set(redact.secrets_in_use(config, environ))
    assert found >= {DSN, POSTGRES_PASSWORD, OPENAI_API_KEY, INSPECTOR_TOKEN, DISCORD_TOKEN}
    assert found >= {TELEGRAM_TOKEN, WEBHOOK_SECRET, ZHIPU_API_KEY}
    assert "/home/someone" not in found and "1" not in found
    # A key=value connection string's password, and a variable named like a secret.
    other = {"KIZUNA_DATABASE_URL": f"host=db password={POSTGRES_PASSWORD} dbname=k"}
    assert POSTGRES_PASSWORD in redact.secrets_in_use(Config(), other)
    assert DISCORD_TOKEN in redact.secrets_in_use(Config(), {"MY_DISCORD_TOKEN": DISCORD_TOKEN})


async def test_httpx_lines_of_a_telegram_bot_hold_no_token(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """PTB puts the token in every URL, and httpx logs each request at INFO (`kizuna -v`)."""
    bot = await open_bot(tmp_path / "k.sqlite3")
    try:
        async with FakeTelegram() as fake:
            adapter = TelegramAdapter(
                bot.engine,
                bot.services,
                "pip",
                fake.token,
                bot_id="tg",
                base_url=fake.base_url,
                poll_timeout=1,
            )
            with caplog.at_level(logging.DEBUG):
                await adapter.start()
                fake.send_text(7, 7, "hello")
                await fake.next_messages()
                await adapter.close()
    finally:
        await bot.close()
    requests = [r.getMessage() for r in caplog.records if r.name == "httpx"]
    assert any("/bot[redacted]/getUpdates" in line for line in requests)
    assert none_of_the_secrets(caplog.text) == []


async def test_a_derived_webhook_secret_is_never_logged(
    tmp_path: Path, scrubbing: redact.Redactor, caplog: pytest.LogCaptureFixture
) -> None:
    """PTB logs each Bot API call's parameters at DEBUG, setWebhook's secret_token too."""
    bot = await open_bot(tmp_path / "k.sqlite3")
    hook = Webhook("https://bots.example/hook", port=free_port())
    try:
        async with FakeTelegram() as fake:
            adapter = TelegramAdapter(
                bot.engine,
                bot.services,
                "pip",
                fake.token,
                bot_id="tg",
                base_url=fake.base_url,
                webhook=hook,
            )
            with caplog.at_level(logging.DEBUG):
                await adapter.start()
                await adapter.close()
            assert fake.webhook["secret_token"] == webhook_secret(TELEGRAM_TOKEN)
    finally:
        await bot.close()
    assert any("setWebhook" in r.getMessage() for r in caplog.records)
    assert webhook_secret(TELEGRAM_TOKEN) not in caplog.text
    assert none_of_the_secrets(caplog.text) == []


async def test_a_rejected_token_is_not_in_the_error_nor_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = Config(
        data_dir=str(tmp_path / "data"),
        engine=EngineConfig(timezone="UTC"),
        bots=[BotConfig("telegram", "bo", token_env="KZ_TELEGRAM")],
    )
    async with FakeTelegram(token="111:the-one-it-knows") as telegram:
        config.bots[0].base_url = telegram.base_url
        with logged_errors("telegram", "adapters") as errors, caplog.at_level(logging.DEBUG):
            with pytest.raises(BotStartError) as raised:
                await host(
                    config,
                    {"bo": make_persona("bo")},
                    {"KZ_TELEGRAM": TELEGRAM_TOKEN},
                    stop=asyncio.Event(),
                    probe=no_ollama,
                )
            errors.clear()  # PTB logs the rejection; what matters is what it says
    assert "was rejected" in str(raised.value)
    assert none_of_the_secrets(str(raised.value) + caplog.text) == []


@pytest.mark.parametrize(
    "dsn",
    [
        DSN,
        f"postgresql://kizuna:{POSTGRES_PASSWORD}@127.0.0.1:notaport/kizuna",
        f"postgresql://kizuna:{POSTGRES_PASSWORD}@[::1/kizuna",
        f"host=127.0.0.1 port=9 password={POSTGRES_PASSWORD} dbname=kizuna",
        f"postgresql://127.0.0.1:9/kizuna?password={POSTGRES_PASSWORD}",
    ],
    ids=["url", "bad-port", "bad-host", "key-value", "in-query"],
)
async def test_a_connection_error_names_the_server_not_the_password(dsn: str) -> None:
    with pytest.raises(StoreError) as raised:
        await asyncio.wait_for(PgStore.open(dsn), 30)
    assert "cannot open the database" in str(raised.value)
    assert POSTGRES_PASSWORD not in str(raised.value)


def test_kizuna_prints_no_password_when_the_database_is_unreachable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KIZUNA_CONFIG", raising=False)
    (tmp_path / "kizuna.toml").write_text('storage = "postgres"\n')
    monkeypatch.setenv("KIZUNA_DATABASE_URL", f"host=db password={POSTGRES_PASSWORD}")
    assert main(["memories", "pruned"]) == 1
    said = capsys.readouterr()
    assert "cannot open the database" in said.err
    assert POSTGRES_PASSWORD not in said.out + said.err


def test_exports_hold_no_secret(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A persona card written by `kizuna persona export`, with every secret in the
    environment (the session export, `save`, is checked with the console's commands)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KIZUNA_CONFIG", raising=False)
    for name, value in FAKE_SECRETS.items():
        monkeypatch.setenv(name, value)
    card = tmp_path / "miao.card.json"
    assert main(["persona", "export", "miao", "--out", str(card)]) == 0
    assert json.loads(card.read_text())["data"]["name"]
    assert none_of_the_secrets(card.read_text() + capsys.readouterr().out) == []


@pytest.mark.parametrize(
    "bot",
    [
        BotConfig("discord", "pip", token_env=DISCORD_TOKEN),
        BotConfig("telegram", "pip", token_env=TELEGRAM_TOKEN),
        BotConfig(
            "telegram",
            "pip",
            token_env="KZ_SET",
            webhook_url="https://x.example/h",
            webhook_secret_env=WEBHOOK_SECRET,
        ),
    ],
    ids=["discord", "telegram", "webhook"],
)
def test_a_secret_pasted_where_its_variable_belongs_is_not_repeated(bot: BotConfig) -> None:
    with pytest.raises(TomlError) as raised:
        bot_tokens(Config(bots=[bot]), {"KZ_SET": "set"})
    assert "looks like the secret itself" in str(raised.value)
    assert none_of_the_secrets(str(raised.value)) == []
    web = Config(web=WebConfig(inspector_token_env=INSPECTOR_TOKEN), bots=[BotConfig("web", "p")])
    with pytest.raises(TomlError, match="looks like the secret itself") as raised:
        bot_tokens(web, {})
    assert INSPECTOR_TOKEN not in str(raised.value)
