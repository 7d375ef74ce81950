"""`kizuna init` (adapters/command/wizard.py): the questions and their defaults, the file it writes
(loaded back, no token in it, the one replaced kept), and the guidance per platform."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from adapters.command.wizard import (
    Answers,
    Detected,
    Plan,
    WizardError,
    ask_plan,
    changes,
    drafted,
    guidance,
    render,
    write_config,
)
from adapters.kinds import RULES
from bot.config import load_config
from bot.persona.file import PersonaLibrary
from tests.fakes.factories import base_env, kizuna

LIBRARY = PersonaLibrary.default(Path("/nonexistent"))
NOTHING = Detected("nothing, so the offline model", [])


def scripted(*answers: str) -> tuple[list[str], object]:
    asked: list[str] = []
    replies = iter(answers)

    def ask(question: str, default: str) -> str:
        asked.append(f"{question} [{default}]")
        return next(replies)

    return asked, ask


def test_the_questions_their_defaults_and_the_file(tmp_path: Path) -> None:
    asked, ask = scripted("miao, monikai", "DISCORD_TOKEN", "", "yes", "ollama", "")
    found = Detected("Ollama with qwen2.5", ["qwen2.5"])
    plan = ask_plan(Answers(), LIBRARY, {}, None, found, ask=ask)  # type: ignore[arg-type]
    assert asked[0].startswith("Personas (") and asked[0].endswith("[monikai]")
    assert (
        asked[4]
        == "Model provider (auto/openai/ollama/zhipu/offline; found: Ollama with qwen2.5) [auto]"
    )
    assert plan == Plan(["miao", "monikai"], "DISCORD_TOKEN", "", True, "ollama", "qwen2.5")
    target = tmp_path / "kizuna.toml"
    assert write_config(drafted(plan, target, None), target) is None
    config = load_config(target, {}, RULES)
    assert [(b.platform, b.persona, b.personas, b.token_env) for b in config.bots] == [
        ("discord", "miao", ["monikai"], "DISCORD_TOKEN"),
        ("web", "miao", ["monikai"], ""),
    ]
    assert config.models.providers["ollama"].base_url == "http://localhost:11434/v1"
    assert config.models.chat is not None and config.models.chat.model == "qwen2.5"
    assert oct(os.stat(target).st_mode & 0o777) == "0o600"

    # Run again: the file's answers are the defaults, and the file replaced is kept.
    asked, ask = scripted("", "", "TELEGRAM_TOKEN", "", "", "")
    again = ask_plan(Answers(), LIBRARY, {}, config, found, ask=ask)  # type: ignore[arg-type]
    assert asked[0].endswith("[miao,monikai]") and asked[1].endswith("[DISCORD_TOKEN]")
    assert again == Plan(
        ["miao", "monikai"], "DISCORD_TOKEN", "TELEGRAM_TOKEN", True, "ollama", "qwen2.5"
    )
    kept = write_config(drafted(again, target, config), target)
    assert kept == tmp_path / "kizuna.toml.bak" and "TELEGRAM_TOKEN" not in kept.read_text()
    # Edited in place: the bots there stay where they are, a new one comes last.
    assert [b.platform for b in load_config(target, {}, RULES).bots] == [
        "discord",
        "web",
        "telegram",
    ]


HAND_EDITED = """\
# My bots. Keep this comment.
data_dir = "data"

[[bots]]
platform = "telegram"
persona = "miao"
token_env = "KZ_T"
base_url = "http://127.0.0.1:8081"  # my own Bot API server
admin_ids = [42]

[[bots]]
platform = "discord"
persona = "miao"
token_env = "KZ_D"
"""


def test_run_again_it_edits_the_file_in_place_and_says_what_changes(tmp_path: Path) -> None:
    target = tmp_path / "kizuna.toml"
    target.write_text(HAND_EDITED, encoding="utf-8")
    previous = load_config(target, {}, RULES)
    # Monikai too, no Discord, the web page, and Ollama.
    plan = Plan(["miao", "monikai"], "", "KZ_T", True, "ollama", "qwen2.5")
    text = drafted(plan, target, previous)
    diff = changes(target, text)
    assert '-platform = "discord"' in diff and '+personas = ["monikai"]' in diff
    changed = [line for line in diff if line[:1] in "+-" and line[:3] not in ("---", "+++")]
    assert not [line for line in changed if "8081" in line or "42" in line]  # (not the paths)
    write_config(text, target)
    written = target.read_text(encoding="utf-8")
    assert "# My bots. Keep this comment." in written and "# my own Bot API server" in written
    config = load_config(target, {}, RULES)
    telegram, web = config.bots
    assert (telegram.platform, telegram.hosted, telegram.token_env) == (
        "telegram",
        ["miao", "monikai"],
        "KZ_T",
    )
    assert telegram.base_url == "http://127.0.0.1:8081" and telegram.admin_ids == ["42"]
    assert (web.platform, web.hosted) == ("web", ["miao", "monikai"])
    assert config.models.providers["ollama"].base_url == "http://localhost:11434/v1"
    assert config.models.chat is not None and config.models.chat.model == "qwen2.5"
    # The same answers again: nothing to change.
    assert changes(target, drafted(plan, target, config)) == []


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (Answers(personas="nobody"), "--personas: no persona named nobody (known: "),
        (Answers(discord_env="123456:ABC-secret.part"), "--discord: the NAME of an environment"),
        (Answers(provider="openrouter"), "--provider must be one of auto, openai, ollama"),
    ],
)
def test_answers_that_cannot_be_used(given: Answers, said: str) -> None:
    with pytest.raises(WizardError) as refused:
        ask_plan(given, LIBRARY, {}, None, NOTHING, ask=None)
    assert str(refused.value).startswith(said)
    assert "secret" not in str(refused.value)


def test_without_a_terminal_the_defaults_and_notes() -> None:
    plan = ask_plan(Answers(provider="openai"), LIBRARY, {}, None, NOTHING, ask=None)
    assert plan == Plan(
        ["monikai"],
        "",
        "",
        True,
        "openai",
        "",
        ["Set OPENAI_API_KEY in the environment before starting Kizuna."],
    )


def test_guidance_names_what_to_switch_on(tmp_path: Path) -> None:
    plan = Plan(["miao"], "KZ_D", "KZ_T", False)
    write_config(render(plan), tmp_path / "k.toml")
    said = "\n".join(guidance(load_config(tmp_path / "k.toml", {}, RULES).bots))
    assert "export KZ_D=..." in said and "Message Content Intent" in said
    assert "export KZ_T=..." in said and "/setprivacy" in said
    assert "kizuna doctor" in said


def test_kizuna_init_for_a_script(tmp_path: Path) -> None:
    flags = ["--personas", "miao", "--telegram", "KZ_UNSET_TOKEN", "--no-web", "--yes"]
    done = kizuna(tmp_path, "init", *flags, "--provider", "offline", env=base_env())
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Wrote kizuna.toml."
    assert (
        "todo  bots[0] telegram miao: the environment variable KZ_UNSET_TOKEN is not set" in lines
    )
    assert "  2. In groups a bot hears only commands, mentions and replies until its group" in lines
    checked = kizuna(tmp_path, "doctor")
    assert "ok    configuration: " in checked.stdout and "kizuna.toml" in checked.stdout
    bad = kizuna(tmp_path, "init", "--personas", "nobody", "--yes")
    assert bad.returncode == 2 and "--personas: no persona named nobody" in bad.stderr
    assert (tmp_path / "kizuna.toml").read_text().count("[[bots]]") == 1  # left as it was
