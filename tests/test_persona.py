"""Personas: the shipped files, the schema's checks and errors, and the library of personas."""

from __future__ import annotations

import textwrap
from datetime import timedelta
from pathlib import Path

import pytest

from bot.conversation.lifecycle import scope_policies
from bot.persona.file import Persona, PersonaLibrary, load_persona
from bot.tomlfile import TomlError
from memory.forgetting.actr import ActR
from memory.forgetting.ebbinghaus import Ebbinghaus, EbbinghausParams
from memory.forgetting.half_life import HalfLife
from memory.forgetting.never import Never

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted((ROOT / "personas").glob("*.toml"))

MINIMAL = """
[identity]
name = "Pip"
personality = "A test persona."
"""


def toml(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def marked_line(text: str) -> int:
    """The 1-based line of `text` ending in the marker comment `# <-`."""
    lines = text.splitlines()
    return next(n for n, line in enumerate(lines, start=1) if line.rstrip().endswith("# <-"))


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.toml"
    path.write_text(toml(text), encoding="utf-8")
    return path


# --- the shipped personas --------------------------------------------------------------------


def test_the_three_personas_ship() -> None:
    assert {"miao", "monikai", "dungeon_master"} <= {p.stem for p in SHIPPED}


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_persona_loads(path: Path) -> None:
    persona = load_persona(path)
    assert persona.key == path.stem
    assert persona.path == path
    identity = persona.identity
    for text in (identity.personality, identity.brief, identity.example_memory, identity.apology):
        assert text.strip()
    assert identity.notices
    assert persona.emotions.neutral in persona.emotions.names
    assert persona.emotion(None) == persona.emotions.neutral
    assert "recall_memory" in persona.tools
    assert persona.sprite_dir == ROOT / "personas" / "assets" / persona.key


def test_miao() -> None:
    miao = load_persona(ROOT / "personas" / "miao.toml")
    assert miao.identity.name == "喵"
    assert miao.identity.language == "zh"
    assert "喵" in miao.identity.language_style
    assert miao.user.name == "主人"
    assert miao.memory.scope == "user"
    assert miao.memory.forgetting == "ebbinghaus"
    assert miao.tools == ["recall_memory", "web_search", "translate"]
    expected = {"NEUTRAL", "HAPPY", "SAD", "ANGRY", "SLEEPY", "CURIOUS", "SHY"}
    assert expected <= set(miao.emotions.names)
    # She writes first, and checks in after three days of silence.
    assert miao.outreach.enabled and miao.outreach.checkin_days == 3
    assert miao.outreach.quiet == (22, 9)


def test_monikai() -> None:
    monikai = load_persona(ROOT / "personas" / "monikai.toml")
    assert monikai.identity.language == "en"
    expected = {"NEUTRAL", "SAD", "CRYING", "LAUGHING", "CONCERNED"}
    assert expected <= set(monikai.emotions.names)


def test_dungeon_master() -> None:
    dm = load_persona(ROOT / "personas" / "dungeon_master.toml")
    assert dm.memory.scope == "channel"
    slots = {slot.name: slot for slot in dm.state}
    assert slots["characters"].update == "once"
    assert slots["game"].update == "every_turn"
    assert all(slot.instructions.strip() for slot in dm.state)
    assert {"NEUTRAL", "EXCITED", "OMINOUS"} <= set(dm.emotions.names)
    assert not dm.outreach.enabled  # the table meets when the players call it


# --- emotions --------------------------------------------------------------------------------


def test_emotion_tags_fall_back_to_neutral(tmp_path: Path) -> None:
    text = MINIMAL + '[emotions]\nnames = ["calm", " happy ", "Sad", ""]\nneutral = "Calm"\n'
    persona = load_persona(write(tmp_path, "pip", text))
    assert persona.emotions.names == ["CALM", "HAPPY", "SAD"]
    assert persona.emotions.neutral == "CALM"
    assert persona.emotion("happy") == "HAPPY"
    assert persona.emotion(" SAD ") == "SAD"
    assert persona.emotion("FURIOUS") == "CALM"
    assert persona.emotion("") == "CALM"
    assert persona.emotion(None) == "CALM"


def test_default_emotions_and_sprites(tmp_path: Path) -> None:
    persona = load_persona(write(tmp_path, "pip", MINIMAL))
    assert persona.emotions.names == ["NEUTRAL"]
    assert persona.emotion("HAPPY") == "NEUTRAL"
    assert persona.sprite_dir == tmp_path / "assets" / "pip"  # the default place
    (tmp_path / "art" / "pop").mkdir(parents=True)
    with_sprites = load_persona(
        write(tmp_path, "pop", MINIMAL + '[emotions]\nsprites = "art/pop"\n')
    )
    assert with_sprites.sprite_dir == tmp_path / "art" / "pop"


def test_a_sprites_folder_not_there_is_named_with_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "pop", MINIMAL + '[emotions]\nsprites = "art/popp"\n')
    with pytest.raises(TomlError) as info:
        load_persona(path)
    assert str(info.value).startswith(f"{path}:5: emotions.sprites: no folder ")
    assert str(tmp_path / "art" / "popp") in str(info.value)


def test_a_forgetting_policys_table_the_persona_does_not_use_is_named(tmp_path: Path) -> None:
    text = MINIMAL + '[memory]\nforgetting = "trace_decay"\n\n[memory.half_life]\ndays = 3\n'
    path = write(tmp_path, "pop", text)
    with pytest.raises(TomlError) as info:
        load_persona(path)
    assert str(info.value).startswith(f"{path}:7: memory.half_life: these settings are for ")
    assert "memory.forgetting is 'trace_decay'" in str(info.value)
    used = MINIMAL + '[memory]\nforgetting = "half_life"\n\n[memory.half_life]\ndays = 3\n'
    assert load_persona(write(tmp_path, "pip", used)).memory.forgetting == "half_life"


def test_neutral_must_be_one_of_the_emotions(tmp_path: Path) -> None:
    text = toml(
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [emotions]
        names = ["HAPPY", "SAD"]
        neutral = "NEUTRAL" # <-
        """
    )
    path = write(tmp_path, "pip", text)
    with pytest.raises(TomlError) as info:
        load_persona(path)
    assert info.value.key == "emotions.neutral"
    assert info.value.line == marked_line(text)
    assert str(info.value).startswith(f"{path}:{marked_line(text)}: emotions.neutral: ")
    assert "emotions.neutral 'NEUTRAL' is not in emotions.names" in info.value.message


# --- errors name the key and the line --------------------------------------------------------


PERSONA_ERRORS = {
    "unknown key in [identity]": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."
        nmae = "Pip" # <-
        """,
        "identity.nmae",
        "unknown key",
    ),
    "loader-set fields are not TOML keys": (
        """
        key = "other" # <-
        [identity]
        name = "Pip"
        personality = "A test persona."
        """,
        "key",
        "unknown key (known keys: card, custom_tools, emotions, group, identity, lorebook, "
        "mcp_servers, memory, outreach, state, tools, user, voice)",
    ),
    "wrong type": (
        """
        tools = "recall_memory" # <-
        [identity]
        name = "Pip"
        personality = "A test persona."
        """,
        "tools",
        "expected an array, got a string",
    ),
    "wrong type after a multi-line string": (
        '''
        [identity]
        name = "Pip"
        personality = """
        flashback_rate = "this line is prose"
        """

        [memory]
        scope = "user"
        flashback_rate = "often" # <-
        ''',
        "memory.flashback_rate",
        "expected a number, got a string",
    ),
    "bad literal": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [memory]
        scope = "server" # <-
        """,
        "memory.scope",
        "expected one of 'user', 'channel', got 'server'",
    ),
    "missing required key": (
        """
        tools = []

        [identity] # <-
        name = "Pip"
        """,
        "identity.personality",
        "missing required key",
    ),
    "a check in a table points at its key": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [memory]
        flashback_rate = 1.5 # <-
        """,
        "memory.flashback_rate",
        "memory.flashback_rate must be between 0 and 1",
    ),
    "bad literal in the second [[state]]": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [[state]]
        name = "characters"
        update = "once"
        instructions = "Who plays whom."

        [[state]]
        name = "game"
        instructions = "Where the party is."
        update = "sometimes" # <-
        """,
        "state[1].update",
        "expected one of 'once', 'every_turn', got 'sometimes'",
    ),
    "missing required key in [[state]]": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [[state]]
        name = "characters"
        instructions = "Who plays whom."

        [[state]] # <-
        name = "game"
        update = "every_turn"

        [memory]
        scope = "channel"
        """,
        "state[1].instructions",
        "missing required key",
    ),
    "unknown key in [[state]]": (
        '''
        [identity]
        name = "Pip"
        personality = "A test persona."

        [[state]]
        name = "game"
        instructions = """
        Keep it short.
        """
        intial = "" # <-
        ''',
        "state[0].intial",
        "unknown key",
    ),
    "a state slot's bound below 0": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [[state]]
        name = "game"
        instructions = "Where the party is."
        tokens = -5 # <-
        """,
        "state[0].tokens",
        "tokens must be 0 (no bound) or more",
    ),
    "an avatar that is not an address": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."
        avatar_url = "pip.png" # <-
        """,
        "identity.avatar_url",
        "avatar_url must start with https:// or http://, got 'pip.png'",
    ),
    "the default policy's floor out of range": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [memory.actr]
        floor = 0 # <-
        """,
        "memory.actr.floor",
        "floor must be more than 0 and less than 1",
    ),
    "a forgetting floor out of range": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [memory]
        forgetting = "half_life"

        [memory.half_life]
        days = 30
        floor = 1.5 # <-
        """,
        "memory.half_life.floor",
        "floor must be at least 0 and less than 1",
    ),
    "strength that falls as importance rises": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [memory.ebbinghaus]
        grace_days = 5
        strength_days = [2, 1, 20] # <-
        """,
        "memory.ebbinghaus.strength_days",
        "strength_days must not fall as importance rises",
    ),
    "a policy's unknown parameter": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [memory.trace_decay]
        half_life = 3 # <-
        """,
        "memory.trace_decay.half_life",
        "unknown key (known keys: grace_days, lifetime_days)",
    ),
    "a policy's parameter of the wrong type": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [memory.stochastic]
        grace_days = "three" # <-
        """,
        "memory.stochastic.grace_days",
        "expected a number, got a string",
    ),
    "a category weight for a category never forgotten": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [memory.stochastic.importance_2] # <-
        personal_daily = 3
        special = 2
        """,
        "memory.stochastic.importance_2",
        "importance_2 names 'special'; the categories are personal_daily, work_study, "
        "social_emotional",
    ),
    "a tool that is neither built in, installed nor declared": (
        """
        tools = ["recall_memory", "weather"] # <-
        [identity]
        name = "Pip"
        personality = "A test persona."
        """,
        "tools[1]",
        "'weather' is no tool here",
    ),
    "a custom tool's module path": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [[custom_tools]]
        name = "weather"
        module = "weather.forecast" # <-
        """,
        "custom_tools[0].module",
        'is not "package.module:function"',
    ),
    "a custom tool named as a built-in one": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [[custom_tools]]
        name = "web_search" # <-
        module = "mine:search"
        """,
        "custom_tools[0].name",
        "not a built-in tool's",
    ),
    "a second custom tool of the same name": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [[custom_tools]]
        name = "weather"
        module = "mine:weather"

        [[custom_tools]]
        name = "weather" # <-
        module = "mine:other"
        """,
        "custom_tools[1].name",
        "used by an earlier tool",
    ),
    "a custom tool's timeout": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [[custom_tools]]
        name = "weather"
        module = "mine:weather"
        timeout = 0 # <-
        """,
        "custom_tools[0].timeout",
        "timeout must be more than 0",
    ),
    "an MCP server with both a command and a url": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [[mcp_servers]]
        name = "files"
        command = "mcp-files" # <-
        url = "https://example.com/mcp"
        tools = ["read"]
        """,
        "mcp_servers[0].command",
        "or a url instead",
    ),
    "an MCP server's allowed tool": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [[mcp_servers]]
        name = "files"
        command = "mcp-files"
        tools = ["read file"] # <-
        """,
        "mcp_servers[0].tools[0]",
        "not a tool name a model can call",
    ),
    "an MCP server's environment variable": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [[mcp_servers]]
        name = "files"
        command = "mcp-files"
        tools = ["read"]
        env = ["FILES_TOKEN", "A-B"] # <-
        """,
        "mcp_servers[0].env[1]",
        "not an environment variable's name",
    ),
    "outreach quiet hours": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [outreach]
        enabled = true
        quiet_hours = "22:00-09:00" # <-
        """,
        "outreach.quiet_hours",
        'must be "HH-HH"',
    ),
    "voice speak": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [voice]
        speak = "sometimes" # <-
        """,
        "voice.speak",
        "'never', 'when_spoken_to', 'always'",
    ),
    "voice name": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [voice]
        voice = "a soft voice" # <-
        """,
        "voice.voice",
        "must be one word",
    ),
    "outreach per week": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [outreach]
        per_week = 40 # <-
        """,
        "outreach.per_week",
        "between 0 and 14",
    ),
    "an MCP server without its tools": (
        """
        [identity]
        name = "Pip"
        personality = "A test persona."

        [[mcp_servers]] # <-
        name = "files"
        command = "mcp-files"
        """,
        "mcp_servers[0].tools",
        "missing required key",
    ),
}


@pytest.mark.parametrize(
    ("text", "key", "message"), PERSONA_ERRORS.values(), ids=list(PERSONA_ERRORS)
)
def test_persona_errors_name_key_and_line(
    tmp_path: Path, text: str, key: str, message: str
) -> None:
    path = write(tmp_path, "pip", text)
    with pytest.raises(TomlError) as info:
        load_persona(path)
    error = info.value
    line = marked_line(toml(text))
    assert (error.file, error.key, error.line) == (str(path), key, line)
    assert message in error.message
    assert str(error) == f"{path}:{line}: {key}: {error.message}"


def test_missing_identity_table(tmp_path: Path) -> None:
    path = write(tmp_path, "pip", 'tools = ["recall_memory"]\n')
    with pytest.raises(TomlError) as info:
        load_persona(path)
    assert str(info.value) == f"{path}: identity: missing required key"


def test_state_slot_names_are_unique(tmp_path: Path) -> None:
    slot = '[[state]]\nname = "game"\ninstructions = "x"\n'
    text = MINIMAL + slot + slot
    path = write(tmp_path, "pip", text)
    with pytest.raises(TomlError, match="used by an earlier slot") as info:
        load_persona(path)
    lines = path.read_text().splitlines()
    assert info.value.key == "state[1].name"
    assert info.value.line == len(lines) - 1  # the second slot's name line


@pytest.mark.parametrize("name", ["开心", "very happy", "2SAD", "X"])
def test_emotion_names_must_be_tags_a_model_can_write(tmp_path: Path, name: str) -> None:
    path = write(tmp_path, "pip", MINIMAL + f'[emotions]\nnames = ["NEUTRAL", "{name}"]\n')
    with pytest.raises(TomlError, match="not a tag a model can write") as info:
        load_persona(path)
    assert info.value.key == "emotions.names[1]"
    assert info.value.line == len(path.read_text().splitlines())  # the names line, last


@pytest.mark.parametrize("value", ["inf", "nan", "1e300", "0"])
def test_idle_minutes_must_be_a_sensible_time(tmp_path: Path, value: str) -> None:
    path = write(tmp_path, "pip", MINIMAL + f"[memory]\nidle_minutes = {value}\n")
    with pytest.raises(TomlError) as info:
        load_persona(path)
    assert info.value.key == "memory.idle_minutes"


def test_a_personas_forgetting_parameters_reach_its_policy(tmp_path: Path) -> None:
    text = MINIMAL + toml(
        """
        [memory]
        forgetting = "half_life"

        [memory.half_life]
        days = 30
        floor = 0.1
        grace_days = 2
        """
    )
    persona = load_persona(write(tmp_path, "pip", text))
    policy = persona.memory.policy()
    assert isinstance(policy, HalfLife)
    assert (policy.days, policy.floor, policy.grace) == (30.0, 0.1, timedelta(days=2))
    bank_policy = scope_policies({"pip": persona})("pip/console:dm:ann")
    assert isinstance(bank_policy, HalfLife) and bank_policy.params == policy.params
    persona.memory.forgetting = "ebbinghaus"  # only the chosen policy's table is used
    persona.memory.params.ebbinghaus = EbbinghausParams(floor=0.2)
    chosen = persona.memory.policy()
    assert isinstance(chosen, Ebbinghaus) and chosen.floor == 0.2
    persona.memory.forgetting = "never"
    assert isinstance(persona.memory.policy(), Never)


def test_the_default_policys_floor_can_be_set_and_its_grace_follows(tmp_path: Path) -> None:
    default = load_persona(write(tmp_path, "pip", MINIMAL)).memory.policy()
    stricter = load_persona(
        write(tmp_path, "kit", MINIMAL + toml("\n[memory.actr]\nfloor = 0.3\n"))
    ).memory.policy()
    assert isinstance(default, ActR) and isinstance(stricter, ActR)
    assert (default.floor, stricter.floor) == (ActR.FLOOR, 0.3)
    assert stricter.grace < default.grace  # a higher floor: trivia goes sooner


def test_shipped_personas_use_the_default_parameters_unless_they_set_them() -> None:
    for path in SHIPPED:
        memory = load_persona(path).memory
        assert memory.policy().name == memory.forgetting


# --- the library -----------------------------------------------------------------------------


def test_library_has_the_shipped_personas(tmp_path: Path) -> None:
    library = PersonaLibrary.default(tmp_path)  # a working directory without personas/
    assert {"miao", "monikai", "dungeon_master"} <= set(library.names())
    persona = library.load("Miao")  # names are case-insensitive
    assert isinstance(persona, Persona)
    assert persona.key == "miao"


def test_cwd_personas_add_and_override(tmp_path: Path) -> None:
    folder = tmp_path / "personas"
    write(folder, "pip", MINIMAL)
    write(folder, "miao", '[identity]\nname = "Not the shipped cat"\npersonality = "x"\n')
    library = PersonaLibrary.default(tmp_path)
    assert "pip" in library.names()
    assert library.load("pip").identity.name == "Pip"
    assert library.path("miao") == folder / "miao.toml"
    assert library.load("miao").identity.name == "Not the shipped cat"
    assert library.load("monikai").identity.name == "Monikai"  # the others stay shipped


def test_configured_paths_override_cwd(tmp_path: Path) -> None:
    write(tmp_path / "personas", "pip", MINIMAL)
    extra = tmp_path / "more"
    write(extra, "pip", '[identity]\nname = "Pip Two"\npersonality = "x"\n')
    library = PersonaLibrary.default(tmp_path, extra=[extra, tmp_path / "does-not-exist"])
    assert library.load("pip").identity.name == "Pip Two"


def test_unknown_persona(tmp_path: Path) -> None:
    library = PersonaLibrary([tmp_path])
    assert library.names() == []
    assert library.path("nobody") is None
    with pytest.raises(KeyError, match="no persona named 'nobody' \\(known: none\\)"):
        library.load("nobody")
