"""The `kizuna` command, run as a real subprocess in a temporary folder: the console chat on the
offline model and on the loopback OpenAI fake, its commands, persistence across runs, Ctrl-C,
and the one-line errors for bad persona and configuration files.

No real model is reached: OPENAI_* are removed and OLLAMA_HOST points at a closed port."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from bot import __version__
from bot.llm.router import OFFLINE_NOTICE
from bot.persona import load_persona
from tests.fakes.openai_server import FakeOpenAI

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted((ROOT / "personas").glob("*.toml"))
APOLOGY = load_persona(ROOT / "personas" / "monikai.toml").identity.apology
TIMEOUT = 15  # seconds: a generous bound; each run takes about one


def base_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "KIZUNA_CONFIG", "ECO_MODE"):
        env.pop(name, None)
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env["OLLAMA_HOST"] = "http://127.0.0.1:9"  # closed: no real Ollama is probed
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


def kizuna(
    cwd: Path, *args: str, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "adapters.cli", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=env or base_env(),
        timeout=TIMEOUT,
    )


def chat(cwd: Path, stdin: str, *args: str, **kw) -> subprocess.CompletedProcess[str]:
    result = kizuna(cwd, "chat", "--persona", "monikai", "--user", "ann", *args, stdin=stdin, **kw)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    """The error of a run that failed with exit status 2: exactly one line on stderr."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def replies(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("Monikai [")]


# -- the console chat, offline ---------------------------------------------------------------------


def test_chat_offline_and_conversation_survives_restarts(tmp_path: Path) -> None:
    first = kizuna(
        tmp_path,
        "chat",
        "--persona",
        "monikai",
        stdin="hello\nmy cat is called Mochi\n",
    )
    assert first.returncode == 0, first.stderr
    said = replies(first.stdout)
    assert len(said) == 2
    assert first.stdout.splitlines() == said  # nothing but the conversation
    assert all("offline" in line for line in said)
    assert 'You said: "my cat is called Mochi"' in said[1]
    assert 'In mind from this conversation: "hello"' in said[1]
    assert "> " not in first.stdout and "Talking with" not in first.stdout  # no prompt, banner
    assert OFFLINE_NOTICE in first.stderr
    assert "No model configured" not in first.stdout
    assert "Traceback" not in first.stderr
    assert (tmp_path / "data" / "kizuna.sqlite3").is_file()

    log = kizuna(tmp_path, "chat", "--persona", "monikai", stdin="log\n")
    assert log.returncode == 0, log.stderr
    assert "conversation: 4 turns" in log.stdout
    assert ": my cat is called Mochi" in log.stdout
    assert ": hello" in log.stdout
    assert "archived conversations: 0" in log.stdout

    # quit leaves at once (what follows is not said), and the conversation is still there.
    third = kizuna(tmp_path, "chat", "--persona", "monikai", stdin="I drink tea\nquit\nunsaid\n")
    assert third.returncode == 0, third.stderr
    assert len(replies(third.stdout)) == 1
    assert 'In mind from this conversation: "hello"; "my cat is called Mochi"' in third.stdout
    again = kizuna(tmp_path, "chat", "--persona", "monikai", stdin="/log\n")
    assert "conversation: 6 turns" in again.stdout
    assert ": I drink tea" in again.stdout
    assert "unsaid" not in again.stdout


def test_end_archives_the_conversation(tmp_path: Path) -> None:
    result = chat(tmp_path, "hello\nend\nend\nlog\n")
    lines = result.stdout.splitlines()
    assert "Conversation ended; it is archived for long-term memory." in lines
    assert "No conversation is open." in lines  # the second end
    assert any(line.startswith("conversation: none open; the last one ended") for line in lines)
    assert any(line.endswith("ann: hello") for line in lines)  # the archived turns are shown
    assert "archived conversations: 1" in lines
    # The archive is on disk: a new run still counts it.
    assert "archived conversations: 1" in chat(tmp_path, "log\n").stdout


def test_save_exports_the_session(tmp_path: Path) -> None:
    result = chat(tmp_path, "hello there\nmy name is Ann\nsave\n")
    (reply1, reply2) = replies(result.stdout)
    exports = list((tmp_path / "data" / "exports").glob("*.json"))
    assert len(exports) == 1
    assert exports[0].name.startswith("monikai-ann-")
    assert f"session exported to {Path('data', 'exports', exports[0].name)}" in result.stdout
    export = json.loads(exports[0].read_text(encoding="utf-8"))
    assert export["persona"] == "monikai"
    assert export["scope"] == "console:dm:ann"
    turns = export["turns"]
    assert [(t["role"], t["speaker"]) for t in turns] == [
        ("user", "ann"),
        ("assistant", "Monikai"),
        ("user", "ann"),
        ("assistant", "Monikai"),
    ]
    assert turns[0]["text"] == "hello there" and turns[2]["text"] == "my name is Ann"
    for turn, shown in ((turns[1], reply1), (turns[3], reply2)):
        assert shown == f"Monikai [{turn['emotion']}]: {turn['text']}"


def test_wipe_forgets_everything(tmp_path: Path) -> None:
    result = chat(tmp_path, "hello\nend\nmy secret is 42\nwipe\nlog\n")
    assert "Wiped: Monikai remembers nothing of you now." in result.stdout
    after = result.stdout.split("Wiped:", 1)[1]
    assert "conversation: none open" in after
    assert "archived conversations: 0" in after
    assert "secret" not in after
    later = chat(tmp_path, "log\n").stdout
    assert "conversation: none open" in later and "archived conversations: 0" in later
    assert "secret" not in later and "hello" not in later


def test_get_reads_the_next_line_as_a_cue(tmp_path: Path) -> None:
    result = chat(tmp_path, "get\nmy cat\n")
    assert result.stdout == "Nothing comes to mind.\n"  # the cue is not said to the persona
    assert "conversation: none open" in chat(tmp_path, "log\n").stdout


def test_remember_get_memories_and_forget_across_runs(tmp_path: Path) -> None:
    result = chat(tmp_path, "/remember my cat is called Mochi\n/remember I work at a bakery\n")
    assert result.stdout == "Monikai will remember that.\n" * 2
    found = chat(tmp_path, "get\nwhat is my cat called?\n/get bakery\n").stdout.splitlines()
    assert re.fullmatch(r"\[just now, strength 1\.00\] ann: my cat is called Mochi", found[0])
    assert found[1].endswith("ann: I work at a bakery")
    listed = chat(tmp_path, "memories\n").stdout.splitlines()
    assert [line.split("] ", 1)[1] for line in listed] == [
        "ann: I work at a bakery",
        "ann: my cat is called Mochi",
    ]
    result = chat(tmp_path, "/forget cat\n1\n/forget cat\n")
    assert result.stdout.splitlines() == [
        found[0].replace("[", "1. [", 1),
        "Forgotten: my cat is called Mochi",
        "No memory matches that.",
    ]
    assert "Nothing forgotten." in chat(tmp_path, "/forget bakery\nno\n").stdout
    assert chat(tmp_path, "memories\n").stdout.count("\n") == 1
    assert "No command /recal" in chat(tmp_path, "/recal x\n").stdout
    # "remember ..." without the slash is said to the persona, not stored.
    assert replies(chat(tmp_path, "remember the lake?\n").stdout)


def test_commands_with_a_slash_and_help(tmp_path: Path) -> None:
    result = chat(tmp_path, "/log\n/HELP\nhelp\n")
    lines = result.stdout.splitlines()
    assert lines[0] == "persona: monikai (Monikai)"
    assert "scope: console:dm:ann" in lines
    listed = [line.split()[0] for line in lines if line.startswith("  ")]
    commands = ["wipe", "save", "end", "log", "get", "remember", "forget", "memories", "diary"]
    commands += ["profile", "state", "help", "quit"]
    assert listed == commands * 2
    assert replies(result.stdout) == []  # no command reached the persona


# -- persona files ---------------------------------------------------------------------------------


def test_persona_validate_shipped_personas(tmp_path: Path) -> None:
    result = kizuna(tmp_path, "persona", "validate", *map(str, SHIPPED))
    assert result.returncode == 0, result.stderr
    assert len(SHIPPED) == 3
    for path in SHIPPED:
        assert f"ok {path}: " in result.stdout
    assert result.stderr == ""


def test_persona_validate_bad_files(tmp_path: Path) -> None:
    syntax = tmp_path / "broken.toml"
    syntax.write_text(
        '[identity]\nname = "Pip"\npersonality = "A test."\n\n'
        '[emotions]\nnames = ["NEUTRAL"]\nneutral = = "NEUTRAL"\n',
        encoding="utf-8",
    )
    unknown = tmp_path / "unknown.toml"
    unknown.write_text(
        '[identity]\nname = "Pip"\npersonality = "A test."\nfavourite_colour = "red"\n',
        encoding="utf-8",
    )
    line = one_line(kizuna(tmp_path, "persona", "validate", "broken.toml"))
    assert line.startswith("broken.toml:7: ")
    assert "syntax" in line
    line = one_line(kizuna(tmp_path, "persona", "validate", str(unknown)))
    assert line.startswith(f"{unknown}:4: ")
    assert "identity.favourite_colour" in line and "unknown key" in line

    # A good file next to a bad one: the good one is reported ok, the status is still 2.
    both = kizuna(tmp_path, "persona", "validate", str(SHIPPED[0]), "broken.toml")
    assert one_line(both).startswith("broken.toml:7: ")
    assert f"ok {SHIPPED[0]}" in both.stdout


def test_unknown_persona(tmp_path: Path) -> None:
    line = one_line(kizuna(tmp_path, "chat", "--persona", "nosuch", stdin="hi\n"))
    assert "--persona" in line and "nosuch" in line and "monikai" in line
    assert not (tmp_path / "data").exists()


# -- configuration ---------------------------------------------------------------------------------


def test_bad_config_by_flag_and_by_environment(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text(
        '# engine settings\n[engine]\ncontext_tokens = "big"\n', encoding="utf-8"
    )
    flag = one_line(kizuna(tmp_path, "chat", "--persona", "monikai", "--config", "bad.toml"))
    assert flag.startswith("bad.toml:3: engine.context_tokens: ")
    assert "integer" in flag
    env = base_env(KIZUNA_CONFIG=str(tmp_path / "bad.toml"))
    by_env = one_line(kizuna(tmp_path, "chat", "--persona", "monikai", env=env))
    assert by_env.startswith(f"{tmp_path / 'bad.toml'}:3: engine.context_tokens: ")
    missing = one_line(kizuna(tmp_path, "run", "--config", "nowhere.toml"))
    assert "nowhere.toml" in missing


def test_config_from_environment_and_eco_mode(tmp_path: Path) -> None:
    folder = tmp_path / "conf"
    folder.mkdir()
    (folder / "k.toml").write_text(
        'data_dir = "state"\n\n[models.providers.offline]\nkind = "offline"\n', encoding="utf-8"
    )
    env = base_env(KIZUNA_CONFIG=str(folder / "k.toml"), ECO_MODE="1")
    result = chat(tmp_path, "hi\nlog\n", env=env)
    assert "(eco mode)" in result.stdout
    assert OFFLINE_NOTICE not in result.stderr  # offline was asked for: nothing to explain
    assert (folder / "state" / "kizuna.sqlite3").is_file()  # relative to the config file
    assert not (tmp_path / "data").exists()
    # Without ECO_MODE (and with the same file) eco mode is off.
    env.pop("ECO_MODE")
    assert "eco mode" not in chat(tmp_path, "log\n", env=env).stdout


def test_model_setup_error_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "kizuna.toml").write_text(
        '[models.providers.openai]\nkind = "openai"\n\n[models.chat]\nprovider = "gone"\n',
        encoding="utf-8",
    )
    line = one_line(kizuna(tmp_path, "chat", "--persona", "monikai", stdin="hi\n"))
    assert ":5: models.chat.provider: " in line and "'gone'" in line


# -- version, help, run ----------------------------------------------------------------------------


def test_version_and_help(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("kizuna")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "adapters.cli"]
    runs = {
        args: subprocess.Popen(
            [*command, *args],
            cwd=tmp_path,
            env=base_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for args in [
            ("--version",),
            ("chat", "--help"),
            ("run", "--help"),
            ("persona", "validate", "--help"),
        ]
    }
    out = {}
    for args, process in runs.items():
        stdout, stderr = process.communicate(timeout=TIMEOUT)
        assert process.returncode == 0, (args, stderr)
        out[args] = stdout
    assert out[("--version",)].strip() == f"kizuna {__version__}"
    assert "--persona" in out[("chat", "--help")] and "--user" in out[("chat", "--help")]
    assert "--config" in out[("run", "--help")]
    assert "FILE" in out[("persona", "validate", "--help")]


def test_run_without_bots(tmp_path: Path) -> None:
    result = kizuna(tmp_path, "run")
    assert result.returncode == 1
    assert "No bots configured" in result.stderr and "[[bots]]" in result.stderr
    assert "Traceback" not in result.stderr


def test_run_with_a_telegram_bot(tmp_path: Path) -> None:
    (tmp_path / "kizuna.toml").write_text(
        '[[bots]]\nplatform = "telegram"\npersona = "miao"\ntoken_env = "TELEGRAM_TOKEN"\n',
        encoding="utf-8",
    )
    result = kizuna(tmp_path, "run")
    assert result.returncode == 1
    assert "telegram" in result.stderr and "not available yet" in result.stderr
    assert "Traceback" not in result.stderr


def test_run_config_mistakes_name_key_and_line(tmp_path: Path) -> None:
    (tmp_path / "kizuna.toml").write_text(
        '[[bots]]\nplatform = "discord"\npersona = "nosuch"\ntoken_env = "DISCORD_TOKEN"\n',
        encoding="utf-8",
    )
    line = one_line(kizuna(tmp_path, "run"))
    assert line.startswith(f"{tmp_path / 'kizuna.toml'}:3: bots[0].persona: ")
    assert "'nosuch'" in line
    (tmp_path / "other.toml").write_text(
        'data_dir = "d"\n\n[[bots]]\nplatform = "discord"\npersona = "miao"\n', encoding="utf-8"
    )
    line = one_line(kizuna(tmp_path, "run", "--config", "other.toml"))
    assert line.startswith("other.toml:3: bots[0].token_env: ")


# -- a real model: the loopback OpenAI fake --------------------------------------------------------


def write_openai_config(cwd: Path, max_retries: int = 3) -> None:
    (cwd / "kizuna.toml").write_text(
        "[models.providers.openai]\n"
        'kind = "openai"\n'
        f"max_retries = {max_retries}\n"
        "retry_base_delay = 0.01\n\n"
        "[models.chat]\n"
        'model = "fake-chat"\n'
        "temperature = 0.8\n",
        encoding="utf-8",
    )


def test_chat_with_openai_retries_a_rate_limit(tmp_path: Path) -> None:
    write_openai_config(tmp_path)
    with FakeOpenAI() as fake:
        fake.fail(429).reply_text("[HAPPY] Hello from the fake")
        env = base_env(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="test-key")
        result = chat(tmp_path, "hi\n", env=env)
        bodies = fake.chat_requests
        headers = [r.headers for r in fake.requests]
    assert result.stdout == "Monikai [HAPPY]: Hello from the fake\n"
    assert OFFLINE_NOTICE not in result.stderr
    assert len(bodies) == 2 and bodies[0] == bodies[1]  # the 429 was retried
    assert {h["Authorization"] for h in headers} == {"Bearer test-key"}
    body = bodies[1]
    assert body["model"] == "fake-chat"
    assert body["temperature"] == 0.8
    assert body["messages"][0]["role"] == "system" and "Monikai" in body["messages"][0]["content"]
    assert body["messages"][-1] == {"role": "user", "content": "hi"}
    assert "test-key" not in result.stdout + result.stderr


def test_chat_when_the_model_keeps_failing(tmp_path: Path) -> None:
    write_openai_config(tmp_path, max_retries=2)
    with FakeOpenAI() as fake:
        # The last error repeats the key, as careless servers do: it is logged redacted.
        fake.fail(500).fail(500).fail(500, message="upstream broke for key test-key")
        env = base_env(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="test-key")
        result = chat(tmp_path, "please remember the blue door\n", env=env)
        attempts = len(fake.chat_requests)
        log = chat(tmp_path, "log\n", env=env)
        assert len(fake.chat_requests) == attempts  # `log` asks no model
    assert attempts == 3
    assert result.stdout == f"Monikai [SAD]: {APOLOGY}\n"
    assert "HTTP 500: upstream broke for key *** after 3 attempts" in result.stderr
    assert "test-key" not in result.stdout + result.stderr
    assert "conversation: 1 turns" in log.stdout
    assert ": please remember the blue door" in log.stdout


# -- Ctrl-C ----------------------------------------------------------------------------------------


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child is POSIX")
def test_ctrl_c_saves_and_exits_cleanly(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "adapters.cli", "chat", "--persona", "monikai", "--user", "ann"],
        cwd=tmp_path,
        env=base_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    watchdog = threading.Timer(TIMEOUT, process.kill)  # never hang the suite on a stuck read
    watchdog.start()
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write("my dog is called Rex\n")
        process.stdin.flush()
        reply = process.stdout.readline()
        assert reply.startswith("Monikai [") and "Rex" in reply
        process.send_signal(signal.SIGINT)  # stdin stays open: only the signal ends it
        stdout, stderr = process.communicate(timeout=TIMEOUT)
    finally:
        watchdog.cancel()
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, stderr
    assert "Traceback" not in stderr
    assert stdout == ""
    log = chat(tmp_path, "log\n").stdout
    assert "conversation: 2 turns" in log
    assert ": my dog is called Rex" in log


def test_bytes_that_are_not_utf8_are_kept_as_replacement_characters(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "adapters.cli", "chat", "--persona", "monikai", "--user", "ann"],
        cwd=tmp_path,
        input=b"first\ncaf\xe9 au lait\n",
        capture_output=True,
        env=base_env(),
        timeout=TIMEOUT,
    )
    assert result.returncode == 0, result.stderr
    log = chat(tmp_path, "log\n").stdout
    assert ": first" in log and ": caf\ufffd au lait" in log


def test_an_export_that_cannot_be_written_says_so_and_goes_on(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "exports").write_text("a file where the folder would go")
    result = chat(tmp_path, "save\nstill here?\n")
    assert "the export could not be written" in result.stdout
    assert len(replies(result.stdout)) == 1


def test_a_second_chat_on_the_same_data_is_refused_in_one_line(tmp_path: Path) -> None:
    first = subprocess.Popen(
        [sys.executable, "-m", "adapters.cli", "chat", "--persona", "monikai", "--user", "ann"],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=base_env(),
    )
    try:
        assert first.stdin is not None and first.stdout is not None
        first.stdin.write("hello\n")
        first.stdin.flush()
        assert first.stdout.readline().startswith("Monikai [")  # the first one is up
        second = kizuna(tmp_path, "chat", "--persona", "monikai", stdin="hi\n")
        assert second.returncode == 1
        assert "in use by another Kizuna process" in second.stderr
        assert "Traceback" not in second.stderr
    finally:
        first.communicate(input="", timeout=TIMEOUT)
    assert first.returncode == 0


# -- long-term memory ------------------------------------------------------------------------------


def test_memories_reindex_after_changing_embedder(tmp_path: Path) -> None:
    chat(tmp_path, "/remember my cat is called Mochi\n/remember I work at a bakery\n")
    (tmp_path / "kizuna.toml").write_text(
        '[memory]\nembedder = "openai"\nmodel = "fake-embedding"\n', encoding="utf-8"
    )
    with FakeOpenAI() as fake:
        env = base_env(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="test-key")
        result = kizuna(tmp_path, "memories", "reindex", env=env)
        assert result.returncode == 0, result.stderr
        assert result.stdout == "2 memories embedded with openai:fake-embedding.\n"
        assert "2/2" in result.stderr  # the progress bar
        again = kizuna(tmp_path, "memories", "reindex", env=env)
        assert again.stdout == "0 memories embedded with openai:fake-embedding.\n"
        found = chat(tmp_path, "/get bakery\n", env=env).stdout
    assert found.endswith("ann: I work at a bakery\n")


def test_memories_reindex_with_an_unreachable_embedder(tmp_path: Path) -> None:
    chat(tmp_path, "/remember my cat is called Mochi\n")
    (tmp_path / "kizuna.toml").write_text(
        '[memory]\nembedder = "openai"\nmodel = "m"\ndimensions = 8\n'
        '[models.providers.down]\nbase_url = "http://127.0.0.1:9/v1"\nmax_retries = 0\n',
        encoding="utf-8",
    )
    result = kizuna(tmp_path, "memories", "reindex")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "reindex stopped, what was done is kept" in result.stderr
    (tmp_path / "kizuna.toml").write_text('[memory]\nembedder = "openai"\n', encoding="utf-8")
    assert "OPENAI_API_KEY" in one_line(kizuna(tmp_path, "memories", "reindex"))


def test_the_offline_model_shows_what_recall_brought(tmp_path: Path) -> None:
    chat(tmp_path, "/remember my cat is called Mochi\n")
    [reply] = replies(chat(tmp_path, "Mochi knocked over a glass today\n").stdout)
    assert 'From before, I remember: "ann: my cat is called Mochi".' in reply
    [reply] = replies(chat(tmp_path, "the weather is lovely\n").stdout)
    assert "From before" not in reply  # nothing relevant, nothing recalled
