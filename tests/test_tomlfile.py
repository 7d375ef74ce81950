"""Typed TOML loading (bot/tomlfile.py) and the host config (bot/config.py)."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from adapters.kinds import RULES
from bot import tomlfile
from bot.config import TIERS, Config, load_config
from bot.tomlfile import TomlError
from tests.fakes.factories import example_config_with_bots

ROOT = Path(__file__).resolve().parent.parent


def toml(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def marked_line(text: str) -> int:
    """The 1-based line of `text` ending in the marker comment `# <-`."""
    lines = text.splitlines()
    return next(n for n, line in enumerate(lines, start=1) if line.rstrip().endswith("# <-"))


def write(tmp_path: Path, text: str, name: str = "kizuna.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- config.example.toml ---------------------------------------------------------------------


def test_config_example_loads() -> None:
    config = tomlfile.load(ROOT / "config.example.toml", Config)
    # No provider is pinned, so the file runs anywhere (OpenAI, Ollama or offline, detected).
    assert config.models.providers == {}
    assert config.models.chat is not None and config.models.chat.provider == ""
    assert config.models.eco_mode is False
    assert config.bots == []  # bots are shown commented out


def test_config_example_models_uncommented_load(tmp_path: Path) -> None:
    """Every commented provider table and tier choice is valid once uncommented, and each tier
    then names a provider the file declares."""
    text = (ROOT / "config.example.toml").read_text(encoding="utf-8")
    head, _, rest = text.partition("\n[models]\n")
    models, _, tail = rest.partition("\n[engine]\n")
    models = re.sub(r"(?m)^# (\[models\.|[a-z_]+ = )", r"\1", models)
    path = tmp_path / "kizuna.toml"
    path.write_text(f"{head}\n[models]\n{models}\n[engine]\n{tail}", encoding="utf-8")
    config = tomlfile.load(path, Config)
    providers = config.models.providers
    assert set(providers) == {"openai", "ollama", "vllm", "zhipu", "offline"}
    assert providers["openai"].api_key_env == "OPENAI_API_KEY"
    for tier in (*TIERS, "eco"):
        settings = getattr(config.models, tier)
        assert settings is not None and settings.provider in providers and settings.model, tier


def test_config_example_bots_uncommented_load(tmp_path: Path) -> None:
    path = tmp_path / "kizuna.toml"
    path.write_text(example_config_with_bots(), encoding="utf-8")
    config = tomlfile.load(path, Config)
    discord, telegram, web = config.bots
    assert (discord.platform, discord.hosted) == ("discord", ["monikai", "miao"])
    assert (telegram.platform, telegram.persona) == ("telegram", "dungeon_master")
    assert (web.platform, web.hosted) == ("web", ["monikai", "miao", "dungeon_master"])


def test_config_example_through_load_config() -> None:
    path = ROOT / "config.example.toml"
    config = load_config(path, environ={}, kinds=RULES)
    assert config.source == path
    assert config.resolve(config.data_dir) == ROOT / "data"


def test_admin_ids_may_be_numbers_or_strings(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[[bots]]\nplatform = "telegram"\npersona = "miao"\ntoken_env = "T"\n'
        'admin_ids = [42, "1234"]\n',
    )
    assert load_config(path, environ={}, kinds=RULES).bots[0].admin_ids == ["42", "1234"]
    bad = write(
        tmp_path,
        '[[bots]]\nplatform = "telegram"\npersona = "miao"\ntoken_env = "T"\nadmin_ids = [true]\n',
    )
    with pytest.raises(
        TomlError, match=r"kizuna.toml:5: bots\[0\].admin_ids\[0\]: expected a string"
    ):
        load_config(bad, environ={}, kinds=RULES)


def test_defaults_without_a_file() -> None:
    config = load_config(None, environ={}, kinds=RULES)
    assert config.source is None
    assert config.data_dir == "data"
    assert config.models.providers == {}
    assert config.bots == []
    assert config.resolve("data") == Path("data")


# --- errors name the file, the key and the line ----------------------------------------------


def test_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    text = toml(
        """
        data_dir = "data"

        [models]
        eco_mode = false

        [engine]
        context_tokens = = 6000
        """
    )
    path = write(tmp_path, text)
    with pytest.raises(TomlError) as info:
        tomlfile.load(path, Config)
    assert info.value.line == 7
    assert info.value.key == "engine.context_tokens"
    assert str(info.value).startswith(f"{path}:7: engine.context_tokens: TOML syntax error")


def test_a_syntax_error_names_the_table_it_is_in(tmp_path: Path) -> None:
    path = write(tmp_path, 'data_dir = "data"\n[engine\n')
    with pytest.raises(TomlError) as info:
        tomlfile.load(path, Config)
    assert (info.value.line, info.value.key) == (2, "")  # top level: no table to name
    path = write(tmp_path, '[models]\neco_mode = false\n"unterminated\n')
    with pytest.raises(TomlError) as info:
        tomlfile.load(path, Config)
    assert (info.value.line, info.value.key) == (3, "models")


def test_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "missing.toml"
    with pytest.raises(TomlError) as info:
        tomlfile.load(path, Config)
    assert str(info.value).startswith(f"{path}: cannot read")
    assert info.value.line is None


def test_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes('data_dir = "caf\xe9"\n'.encode("latin-1"))
    with pytest.raises(TomlError, match="not UTF-8"):
        tomlfile.load(path, Config)


CONFIG_ERRORS = {
    "unknown top-level key": (
        """
        data_dir = "data"
        datadir = "x" # <-
        """,
        "datadir",
        "unknown key",
    ),
    "unknown key in a table": (
        """
        [engine]
        context_tokens = 6000
        reply_tokns = 500 # <-
        """,
        "engine.reply_tokns",
        "unknown key (known keys: audio_max_kb, burst_longest_seconds, burst_seconds,"
        " context_tokens,"
        " document_max_kb, document_tokens, intent, media_per_hour, picture_max_kb,"
        " picture_side, reply_tokens, short_term_tokens, snapshot_seconds, timezone)",
    ),
    "wrong type": (
        """
        [engine]
        context_tokens = 6000
        snapshot_seconds = "soon" # <-
        """,
        "engine.snapshot_seconds",
        "expected a number, got a string",
    ),
    "a string for a boolean": (
        """
        [models]
        eco_mode = "yes" # <-
        """,
        "models.eco_mode",
        "expected true or false, got a string",
    ),
    "a float for an integer, in an optional tier": (
        """
        [models.chat]
        provider = "openai"
        max_tokens = 1.5 # <-
        """,
        "models.chat.max_tokens",
        "expected an integer, got a number",
    ),
    "bad literal in a provider": (
        """
        [models]
        eco_mode = false

        [models.providers.local]
        base_url = "http://localhost:11434/v1"
        kind = "llama" # <-
        """,
        "models.providers.local.kind",
        "expected one of 'openai', 'zhipu', 'offline', got 'llama'",
    ),
    "an item of an array": (
        """
        data_dir = "data"
        persona_paths = ["mine", 3] # <-
        """,
        "persona_paths[1]",
        "expected a string, got an integer",
    ),
    "a table where a value belongs": (
        """
        [engine.reply_tokens] # <-
        size = 3
        """,
        "engine.reply_tokens",
        "expected an integer, got a table",
    ),
    "dotted keys": (
        """
        data_dir = "data"
        engine.context_tokens = "many" # <-
        """,
        "engine.context_tokens",
        "expected an integer, got a string",
    ),
    "a field check points at its key": (
        """
        data_dir = "data"

        [engine]
        context_tokens = 100 # <-
        """,
        "engine.context_tokens",
        "context_tokens must be at least 500",
    ),
    "bad literal in the second [[bots]]": (
        """
        [[bots]]
        platform = "discord"
        persona = "monikai"
        token_env = "DISCORD_TOKEN"

        [[bots]]
        persona = "miao"
        platform = "irc" # <-
        """,
        "bots[1].platform",
        "expected one of 'discord', 'telegram', 'web', got 'irc'",
    ),
    "missing required key in [[bots]]": (
        """
        [[bots]]
        platform = "discord"
        persona = "monikai"
        token_env = "DISCORD_TOKEN"

        [[bots]] # <-
        platform = "telegram"
        token_env = "TELEGRAM_TOKEN"

        [engine]
        reply_tokens = 500
        """,
        "bots[1].persona",
        "missing required key",
    ),
    "unknown key in [[bots]]": (
        """
        [[bots]]
        platform = "telegram"
        persona = "miao"
        token = "123:abc" # <-
        """,
        "bots[0].token",
        "unknown key",
    ),
    "a key of another platform's bots": (
        """
        [[bots]]
        platform = "telegram"
        persona = "miao"
        token_env = "TELEGRAM_TOKEN"
        channel_ids = [1] # <-
        """,
        "bots[0].channel_ids",
        "guild_ids and channel_ids are for discord bots",
    ),
}


@pytest.mark.parametrize(
    ("text", "key", "message"), CONFIG_ERRORS.values(), ids=list(CONFIG_ERRORS)
)
def test_config_errors_name_key_and_line(tmp_path: Path, text: str, key: str, message: str) -> None:
    text = toml(text)
    path = write(tmp_path, text)
    with pytest.raises(TomlError) as info:
        load_config(path, environ={}, kinds=RULES)
    error = info.value
    line = marked_line(text)
    assert (error.file, error.key, error.line) == (str(path), key, line)
    assert message in error.message
    assert str(error) == f"{path}:{line}: {key}: {error.message}"


# --- load_config: the environment and the cross-checks ---------------------------------------


@pytest.mark.parametrize(
    ("in_file", "environ", "expected"),
    [
        (False, {}, False),
        (True, {}, True),
        (False, {"ECO_MODE": "1"}, True),
        (True, {"ECO_MODE": "0"}, False),
        (False, {"ECO_MODE": "true"}, True),
        (True, {"ECO_MODE": "off"}, False),
        (True, {"ECO_MODE": ""}, True),  # empty: the file decides
    ],
)
def test_eco_mode_from_the_environment(
    tmp_path: Path, in_file: bool, environ: dict[str, str], expected: bool
) -> None:
    path = write(tmp_path, f"[models]\neco_mode = {str(in_file).lower()}\n")
    assert load_config(path, environ=environ, kinds=RULES).models.eco_mode is expected


def test_eco_mode_from_the_environment_without_a_file() -> None:
    assert load_config(None, environ={"ECO_MODE": "1"}, kinds=RULES).models.eco_mode is True


def test_discord_bot_needs_token_env(tmp_path: Path) -> None:
    text = toml(
        """
        [[bots]]
        platform = "telegram"
        persona = "miao"
        token_env = "TELEGRAM_TOKEN"

        [[bots]] # <-
        platform = "discord"
        persona = "monikai"
        """
    )
    path = write(tmp_path, text)
    with pytest.raises(TomlError) as info:
        load_config(path, environ={}, kinds=RULES)
    assert info.value.key == "bots[1].token_env"
    assert info.value.line == marked_line(text)
    assert f"{path}:{marked_line(text)}: bots[1].token_env:" in str(info.value)
    assert "token_env" in info.value.message


def test_web_bot_needs_no_token(tmp_path: Path) -> None:
    path = write(tmp_path, '[[bots]]\nplatform = "web"\npersona = "miao"\n')
    (bot,) = load_config(path, environ={}, kinds=RULES).bots
    assert (bot.platform, bot.persona, bot.token_env) == ("web", "miao", "")


def test_paths_resolve_relative_to_the_file(tmp_path: Path) -> None:
    theirs = tmp_path / "elsewhere" / "theirs"
    (tmp_path / "mine").mkdir()
    theirs.mkdir(parents=True)
    path = write(tmp_path, f'data_dir = "state"\npersona_paths = ["mine", "{theirs}"]\n')
    config = load_config(path, environ={}, kinds=RULES)
    assert config.resolve(config.data_dir) == tmp_path / "state"
    assert [config.resolve(p) for p in config.persona_paths] == [tmp_path / "mine", theirs]


def test_a_missing_persona_folder_names_its_entry(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    path = write(tmp_path, 'data_dir = "state"\npersona_paths = ["mine", "gone"]\n')
    with pytest.raises(TomlError, match="no such folder") as info:
        load_config(path, environ={}, kinds=RULES)
    assert (info.value.key, info.value.line) == ("persona_paths[1]", 2)


def test_an_unclear_eco_mode_is_an_error_not_ignored() -> None:
    with pytest.raises(TomlError, match="ECO_MODE: expected 1 or 0"):
        load_config(None, environ={"ECO_MODE": "2"}, kinds=RULES)


@pytest.mark.parametrize("value", ["inf", "nan", "-inf"])
def test_non_finite_numbers_are_rejected(tmp_path: Path, value: str) -> None:
    path = write(tmp_path, f"[models.providers.a]\ntimeout = {value}\n")
    with pytest.raises(TomlError, match="finite") as info:
        load_config(path, environ={}, kinds=RULES)
    assert (info.value.key, info.value.line) == ("models.providers.a.timeout", 2)


def test_extra_body_keeps_any_values(tmp_path: Path) -> None:
    text = toml(
        """
        [models.providers.zhipu]
        kind = "zhipu"
        base_url = "https://open.bigmodel.cn/api/paas/v4/"
        api_key_env = "ZHIPUAI_API_KEY"
        extra_body = { thinking = { type = "disabled" }, do_sample = false }
        """
    )
    provider = load_config(write(tmp_path, text), environ={}, kinds=RULES).models.providers["zhipu"]
    assert provider.extra_body == {"thinking": {"type": "disabled"}, "do_sample": False}


# --- locate ----------------------------------------------------------------------------------


def test_locate_follows_headers_dotted_and_quoted_keys() -> None:
    text = toml(
        """
        top = 1
        [a]
        b.c = 2
        "quoted key" = 3
        [[list]]
        x = 1
        [[list]]
        x = 2
        """
    )
    assert tomlfile.locate(text, ["top"]) == 1
    assert tomlfile.locate(text, ["a"]) == 2
    assert tomlfile.locate(text, ["a", "b", "c"]) == 3
    assert tomlfile.locate(text, ["a", "quoted key"]) == 4
    assert tomlfile.locate(text, ["list", 1, "x"]) == 8
    assert tomlfile.locate(text, ["list", 1, "missing"]) == 7  # nearest defined parent
    assert tomlfile.locate(text, ["nowhere"]) is None


def test_locate_skips_multiline_strings() -> None:
    text = toml(
        '''
        [p]
        prose = """
        scope = "this is prose, not a key"
        [not_a_table]
        """
        literal = \'\'\'
        scope = "nor is this"
        \'\'\'
        scope = "real"
        '''
    )
    assert tomlfile.locate(text, ["p", "scope"]) == 9
    assert tomlfile.locate(text, ["not_a_table"]) is None


def test_a_base_url_without_a_scheme_is_caught_at_load(tmp_path: Path) -> None:
    path = write(tmp_path, '[models.providers.ollama]\nbase_url = "localhost:11434/v1"\n')
    with pytest.raises(TomlError, match="must start with http") as info:
        load_config(path, environ={}, kinds=RULES)
    assert (info.value.key, info.value.line) == ("models.providers.ollama.base_url", 2)


@dataclass(slots=True)
class _Colour:
    red: int = 0
    blue: int = 0


@dataclass(slots=True)
class _Brush:
    width: int = 1
    colour: _Colour = field(default_factory=_Colour, metadata={"spread": True})


def test_a_spread_fields_keys_are_its_tables_own() -> None:
    """A field marked spread has no key: its dataclass's keys sit in the same table, in the
    reference too (keys_of), and a mistake in one names it there."""
    brush = tomlfile.loads("width = 3\nred = 2\n", _Brush, "brush.toml")
    assert brush == _Brush(3, _Colour(red=2))
    assert list(tomlfile.keys_of(_Brush)) == ["width", "red", "blue"]
    with pytest.raises(TomlError, match=r"brush.toml:2: blue: expected an integer"):
        tomlfile.loads('width = 3\nblue = "x"\n', _Brush, "brush.toml")
    with pytest.raises(TomlError, match=r"unknown key \(known keys: blue, red, width\)"):
        tomlfile.loads("green = 1\n", _Brush, "brush.toml")
