"""Fuzzed configuration files: every outcome is a loaded `Config` or one `TomlError` line
naming the file, the key and the line; no other exception escapes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from adapters.kinds import RULES
from bot.config import Config, load_config, storage_dsn
from bot.tomlfile import TomlError
from tests.fakes.factories import EXAMPLE_CONFIG, example_config_with_bots
from tests.fakes.fuzz import check_toml_error, fuzzed, mutated_toml, nasty_text

SEEDS = [
    EXAMPLE_CONFIG.read_text(encoding="utf-8"),
    example_config_with_bots(),
    "",
    '[engine]\ntimezone = "UTC"\n',
]
WEB_BOT = '[[bots]]\nplatform = "web"\npersona = "m"\n'


def load(tmp_path: Path, text: str) -> tuple[Config | TomlError, Path]:
    path = tmp_path / "kizuna.toml"
    # Lone surrogates can't be UTF-8: written as the invalid bytes a broken editor would leave.
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        return load_config(path, environ={}, kinds=RULES), path
    except TomlError as e:
        return e, path


@fuzzed(150)
@given(text=mutated_toml(SEEDS))
@example(text='[engine]\ntimezone = "America"\n')  # a tz folder: IsADirectoryError
@example(text='[engine]\ntimezone = "' + "x" * 300 + '"\n')  # OSError: name too long
@example(text='persona_paths = ["~nosuchuser/personas"]\n')  # RuntimeError: no home
@example(text=f'{WEB_BOT}webhook_listen = "h:²"\n')  # int("²"): ValueError
@example(text=f'{WEB_BOT}webhook_listen = "h:{"9" * 5000}"\n')  # int(): too many digits
@example(text="a = " + "[" * 2000 + "]" * 2000 + "\n")  # deep nesting
def test_mutated_config_loads_or_says_where(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    tmp_path = tmp_path_factory.mktemp("config")
    outcome, path = load(tmp_path, text)
    if isinstance(outcome, TomlError):
        check_toml_error(outcome, path, text)
    else:
        assert isinstance(outcome, Config) and outcome.source == path


@fuzzed(100)
@given(raw=st.one_of(st.binary(max_size=300), nasty_text()))
@example(raw=b"\xff\xfe[engine]\n")
@example(raw=b'data_dir = "\xc3\x28"\n')
def test_arbitrary_bytes_load_or_say_where(
    tmp_path_factory: pytest.TempPathFactory, raw: bytes | str
) -> None:
    tmp_path = tmp_path_factory.mktemp("config")
    path = tmp_path / "kizuna.toml"
    data = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
    path.write_bytes(data)
    try:
        config = load_config(path, environ={}, kinds=RULES)
    except TomlError as e:
        check_toml_error(e, path, data.decode("utf-8", "replace"))
    else:
        assert config.source == path


@fuzzed(60)
@given(eco=nasty_text(max_size=4), storage=st.sampled_from(["sqlite", "postgres"]))
@example(eco="\n", storage="postgres")
def test_environment_overrides_load_or_say_which(
    tmp_path_factory: pytest.TempPathFactory, eco: str, storage: str
) -> None:
    path = tmp_path_factory.mktemp("config") / "kizuna.toml"
    path.write_text(f'storage = "{storage}"\n', encoding="utf-8")
    environ = {"ECO_MODE": eco, "KIZUNA_DATABASE_URL": eco}
    try:
        config = load_config(path, environ, RULES)
        storage_dsn(config, environ)
    except TomlError as e:
        assert "\n" not in str(e) and e.key in ("ECO_MODE", "dsn_env"), str(e)
