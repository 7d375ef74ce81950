"""The `kizuna` command, run as a real subprocess in a temporary folder: the console chat on the
offline model and on the loopback OpenAI fake, its commands, persistence across runs, Ctrl-C,
and the one-line errors for bad persona and configuration files.

No real model is reached: OPENAI_* are removed and OLLAMA_HOST points at a closed port."""

from __future__ import annotations

import asyncio
import json
import math
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot import __version__
from bot.llm.router import OFFLINE_NOTICE
from bot.persona.file import load_persona
from memory.encoding.encoder import ENCODING_TASK
from memory.records import NewMemory, PruneWrite
from memory.storage.sqlite import Store
from tests.fakes.factories import KIZUNA, base_env, kizuna
from tests.fakes.factories import KIZUNA_TIMEOUT as TIMEOUT
from tests.fakes.openai_server import FakeOpenAI, echo_reply
from tests.fakes.secrets import OPENAI_API_KEY

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted((ROOT / "personas").glob("*.toml"))
APOLOGY = load_persona(ROOT / "personas" / "monikai.toml").identity.apology


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


# A scheduler round every 0.2 s, so a conversation that ends is encoded at once; days in UTC.
FAST_ENGINE = '[engine]\nsnapshot_seconds = 0.2\ntimezone = "UTC"\n'


@contextmanager
def running_chat(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[str]]:
    """`kizuna chat` as a live process to talk to line by line; killed if still running at the
    end, and by a watchdog if it hangs."""
    process = subprocess.Popen(
        [*KIZUNA, "chat", *args],
        cwd=cwd,
        env=env or base_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    watchdog = threading.Timer(2 * TIMEOUT, process.kill)  # never hang the suite on a read
    watchdog.start()
    try:
        yield process
    finally:
        watchdog.cancel()
        if process.poll() is None:
            process.kill()
            process.communicate()


def say(process: subprocess.Popen[str], line: str) -> str:
    """Send one line to a running chat and read the one line it answers."""
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(line + "\n")
    process.stdin.flush()
    return process.stdout.readline().rstrip("\n")


def query(cwd: Path, sql: str, *params: object) -> list[tuple[Any, ...]]:
    """Rows from the data folder's database, read beside the running process."""
    db = sqlite3.connect(cwd / "data" / "kizuna.sqlite3", timeout=5)
    try:
        return db.execute(sql, params).fetchall()
    finally:
        db.close()


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def all_encoded(cwd: Path) -> bool:
    rows = query(cwd, "SELECT encoded_at FROM conversations")
    return bool(rows) and all(at is not None for (at,) in rows)


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
    assert "Conversation ended; it goes to long-term memory." in lines
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
    # Saved again (within the same second, as like as not): the first export is kept.
    chat(tmp_path, "end\nsave\nsave\n")
    assert len(list((tmp_path / "data" / "exports").glob("*.json"))) == 3
    assert exports[0].read_text(encoding="utf-8") == json.dumps(
        export, ensure_ascii=False, indent=2
    )


def test_wipe_asks_then_forgets_everything(tmp_path: Path) -> None:
    kept = chat(tmp_path, "hello\nwipe\nno\nlog\n").stdout
    assert "Forget this conversation and everything Monikai remembers of you?\nCancelled." in kept
    assert "conversation: 2 turns" in kept
    result = chat(tmp_path, "end\nmy secret is 42\nwipe\nwipe\nlog\n")
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
        "Which one should be forgotten?",
        "Forgotten: my cat is called Mochi",
        "No memory matches that.",
    ]
    assert "Cancelled." in chat(tmp_path, "/forget bakery\nno\n").stdout
    assert chat(tmp_path, "memories\n").stdout.count("\n") == 1
    assert "There is no /recal command" in chat(tmp_path, "/recal x\n").stdout
    # "remember ..." without the slash is said to the persona, not stored.
    assert replies(chat(tmp_path, "remember the lake?\n").stdout)


def test_doctor_on_a_fresh_folder_then_a_missing_token(tmp_path: Path) -> None:
    fresh = kizuna(tmp_path, "doctor")
    assert fresh.returncode == 0, fresh.stderr
    assert fresh.stdout.splitlines()[0] == "ok    configuration: built-in defaults"
    assert fresh.stdout.endswith("Everything looks fine.\n")
    (tmp_path / "kizuna.toml").write_text(
        '[[bots]]\nplatform = "telegram"\npersona = "miao"\ntoken_env = "KZ_NO_SUCH"\n',
        encoding="utf-8",
    )
    missing = kizuna(tmp_path, "doctor")
    assert missing.returncode == 1
    assert "todo  bots[0] telegram miao: the environment variable KZ_NO_SUCH is not set" in (
        missing.stdout
    )
    assert missing.stdout.endswith("1 problem(s) to fix.\n")


def test_data_dir_flag_picks_the_data_folder(tmp_path: Path) -> None:
    chat(tmp_path, "/remember my cat is called Mochi\n", "--data-dir", "elsewhere")
    assert (tmp_path / "elsewhere" / "kizuna.sqlite3").is_file()
    assert not (tmp_path / "data").exists()
    found = chat(tmp_path, "memories\n", "--data-dir", str(tmp_path / "elsewhere")).stdout
    assert "my cat is called Mochi" in found
    assert "No memories yet." in chat(tmp_path, "memories\n").stdout


def test_commands_with_a_slash_and_help(tmp_path: Path) -> None:
    result = chat(tmp_path, "/log\n/HELP\nhelp\n")
    lines = result.stdout.splitlines()
    assert lines[0] == "persona: monikai (Monikai)"
    assert "scope: console:dm:ann" in lines
    listed = [line.split()[0] for line in lines if line.startswith("  ")]
    # A command that takes something is shown with the slash it needs then.
    commands = ["/remember", "/recall", "/memories", "/forget", "/diary", "profile", "/state"]
    commands += [
        "/intentions",
        "/quiet",
        "/timezone",
        "end",
        "wipe",
        "save",
        "log",
        "/get",
        "read",
        "help",
        "quit",
    ]
    assert listed == commands * 2
    assert "  /remember TEXT " in result.stdout and "  /memories [QUERY] " in result.stdout
    assert replies(result.stdout) == []  # no command reached the persona


# -- persona files ---------------------------------------------------------------------------------


def test_persona_validate_shipped_personas(tmp_path: Path) -> None:
    result = kizuna(tmp_path, "persona", "validate", *map(str, SHIPPED))
    assert result.returncode == 0, result.stderr
    assert len(SHIPPED) == 3
    for path in SHIPPED:
        assert f"ok {path}: " in result.stdout
    assert result.stderr == ""


def test_persona_list_marks_a_file_that_cannot_be_used(tmp_path: Path) -> None:
    (tmp_path / "personas").mkdir()
    (tmp_path / "personas" / "bad.toml").write_text('[identity\nname = "x"\n', encoding="utf-8")
    listed = kizuna(tmp_path, "persona", "list")
    assert listed.returncode == 2, listed.stderr
    rows = dict(line.split("\t", 1) for line in listed.stdout.splitlines())
    assert rows["bad"].endswith("bad.toml\tcannot be used (see below)")
    assert {"miao", "monikai", "dungeon_master"} <= rows.keys()
    assert "bad.toml:1: TOML syntax error" in listed.stderr


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
    command = [str(script)] if script.exists() else list(KIZUNA)
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
    described = " ".join(out[("chat", "--help")].split())
    assert all(f" {c}" in described for c in ("/remember TEXT", "/diary [DAY]", "read PATH"))
    assert "--config" in out[("run", "--help")]
    assert "FILE" in out[("persona", "validate", "--help")]


def test_run_without_bots(tmp_path: Path) -> None:
    result = kizuna(tmp_path, "run")
    assert result.returncode == 1
    assert "No bots configured" in result.stderr and "[[bots]]" in result.stderr
    assert "Traceback" not in result.stderr


def test_run_without_the_token_says_which_variable_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "kizuna.toml").write_text(
        '[[bots]]\nplatform = "telegram"\npersona = "miao"\ntoken_env = "KZ_TEST_TOKEN"\n',
        encoding="utf-8",
    )
    result = kizuna(tmp_path, "run")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"{tmp_path / 'kizuna.toml'}:4: bots[0].token_env: the environment variable "
        "KZ_TEST_TOKEN (the telegram token for miao) is not set"
    )


def test_a_web_client_on_an_open_address_needs_a_token(tmp_path: Path) -> None:
    (tmp_path / "kizuna.toml").write_text(
        '[web]\nhost = "0.0.0.0"\n\n[[bots]]\nplatform = "web"\npersona = "miao"\n',
        encoding="utf-8",
    )
    line = one_line(kizuna(tmp_path, "run"))
    assert line.startswith(f"{tmp_path / 'kizuna.toml'}:2: web.host: ")
    assert "inspector_token_env" in line
    line = one_line(kizuna(tmp_path, "web", "--host", "0.0.0.0", "--persona", "nosuch"))
    assert "no persona named 'nosuch'" in line
    assert not (tmp_path / "data").exists()  # refused before anything opened


def test_a_web_token_short_enough_to_guess_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "kizuna.toml").write_text(
        '[web]\nhost = "0.0.0.0"\ninspector_token_env = "KZ_WEB_TOKEN"\n\n'
        '[[bots]]\nplatform = "web"\npersona = "miao"\n',
        encoding="utf-8",
    )
    line = one_line(kizuna(tmp_path, "run", env=base_env(KZ_WEB_TOKEN="hunter2")))
    assert line.startswith(
        f"{tmp_path / 'kizuna.toml'}:3: web.inspector_token_env: the web client's token is 7 "
        "characters; it needs at least 16 (random ones: "
    )
    assert "hunter2" not in line
    assert not (tmp_path / "data").exists()  # refused before anything opened


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
    (tmp_path / "more.toml").write_text(
        '[[bots]]\nplatform = "discord"\npersona = "miao"\ntoken_env = "T"\n'
        'personas = ["monikai", "nosuch"]\n',
        encoding="utf-8",
    )
    line = one_line(kizuna(tmp_path, "run", "--config", "more.toml"))
    assert line.startswith("more.toml:5: bots[0].personas[1]: ") and "'nosuch'" in line


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
        env = base_env(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY=OPENAI_API_KEY)
        result = chat(tmp_path, "hi\n", env=env)
        bodies = fake.chat_requests
        headers = [r.headers for r in fake.requests]
    assert result.stdout == "Monikai [HAPPY]: Hello from the fake\n"
    assert OFFLINE_NOTICE not in result.stderr
    assert len(bodies) == 2 and bodies[0] == bodies[1]  # the 429 was retried
    assert {h["Authorization"] for h in headers} == {f"Bearer {OPENAI_API_KEY}"}
    body = bodies[1]
    assert body["model"] == "fake-chat"
    assert body["temperature"] == 0.8
    assert body["messages"][0]["role"] == "system" and "Monikai" in body["messages"][0]["content"]
    assert body["messages"][-1] == {"role": "user", "content": "hi"}
    assert OPENAI_API_KEY not in result.stdout + result.stderr


def test_chat_when_the_model_keeps_failing(tmp_path: Path) -> None:
    write_openai_config(tmp_path, max_retries=2)
    with FakeOpenAI() as fake:
        # The last error repeats the key, as careless servers do: it is logged redacted.
        fake.fail(500).fail(500).fail(500, message=f"upstream broke for key {OPENAI_API_KEY}")
        env = base_env(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY=OPENAI_API_KEY)
        result = chat(tmp_path, "please remember the blue door\n", env=env)
        attempts = len(fake.chat_requests)
        log = chat(tmp_path, "log\n", env=env)
        assert len(fake.chat_requests) == attempts  # `log` asks no model
    assert attempts == 3
    assert result.stdout == f"Monikai [SAD]: {APOLOGY}\n"
    assert "HTTP 500: upstream broke for key *** after 3 attempts" in result.stderr
    assert OPENAI_API_KEY not in result.stdout + result.stderr
    assert "conversation: 1 turns" in log.stdout
    assert ": please remember the blue door" in log.stdout


# -- Ctrl-C ----------------------------------------------------------------------------------------


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child is POSIX")
def test_ctrl_c_saves_and_exits_cleanly(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [*KIZUNA, "chat", "--persona", "monikai", "--user", "ann"],
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
        [*KIZUNA, "chat", "--persona", "monikai", "--user", "ann"],
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
        [*KIZUNA, "chat", "--persona", "monikai", "--user", "ann"],
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


def words_vector(text: str, dim: int) -> list[float]:
    """A unit vector of the text's words, hashed into `dim` buckets (stable across runs)."""
    vector = [0.0] * dim
    for word in re.findall(r"[a-z]{3,}", text.lower()):
        vector[zlib.crc32(word.encode()) % dim] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def test_memories_reindex_after_changing_embedder(tmp_path: Path) -> None:
    chat(tmp_path, "/remember my cat is called Mochi\n/remember I work at a bakery\n")
    (tmp_path / "kizuna.toml").write_text(
        '[memory]\nembedder = "openai"\nmodel = "fake-embedding"\n', encoding="utf-8"
    )
    with FakeOpenAI() as fake:
        fake.embed_fn = words_vector  # meaning by shared words: whatever the date stamp says
        env = base_env(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY=OPENAI_API_KEY)
        result = kizuna(tmp_path, "memories", "reindex", env=env)
        assert result.returncode == 0, result.stderr
        assert result.stdout == "2 memories embedded with openai:fake-embedding.\n"
        assert "2/2" in result.stderr  # the progress bar
        again = kizuna(tmp_path, "memories", "reindex", env=env)
        assert again.stdout == (
            "Every memory is embedded with openai:fake-embedding already; nothing to do.\n"
        )
        found = chat(tmp_path, "/get bakery\n", env=env).stdout
    assert found.endswith("ann: I work at a bakery\n")


def test_chat_without_a_persona_lists_them_and_a_log_file_is_kept(tmp_path: Path) -> None:
    listed = kizuna(tmp_path, "chat")
    assert listed.returncode == 2
    assert "--persona: which persona? (found: dungeon_master, miao, monikai;" in listed.stderr
    said = kizuna(
        tmp_path,
        "chat",
        "--persona",
        "miao",
        "--user",
        "ann",
        "-v",
        "--log-file",
        "k.log",
        stdin="hello\n",
    )
    assert said.returncode == 0, said.stderr
    log = (tmp_path / "k.log").read_text(encoding="utf-8")
    assert " INFO " in log and "hello" not in log
    assert oct((tmp_path / "k.log").stat().st_mode & 0o777) == "0o600"


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
    # Nothing relevant, nothing recalled (a flashback, now and then, is another line).
    assert "From before" not in reply


def is_encoding(body: dict[str, Any]) -> bool:
    """Is this chat completion request the encoding of a conversation that ended?"""
    messages = body.get("messages") or [{}]
    return ENCODING_TASK in str(messages[0].get("content"))


ENCODING = json.dumps(
    {
        "memories": [
            {
                "text": "Ann told me her cat Mochi is afraid of thunderstorms.",
                "category": "personal_daily",
                "importance": 2,
                "emotion": 0,
            },
            {
                "text": "Ann starts a new job at the harbour office next Monday.",
                "category": "work_study",
                "importance": 3,
                "emotion": 0.6,
            },
        ],
        "diary": "Ann told me about Mochi and her new job.",
        "profiles": {"U1": "Has a cat, Mochi; starts at the harbour office on Monday."},
        "recap": "We talked about Mochi and the new job.",
    }
)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_killed_mid_encoding_the_conversation_is_encoded_exactly_once(tmp_path: Path) -> None:
    (tmp_path / "kizuna.toml").write_text(FAST_ENGINE, encoding="utf-8")
    release = threading.Event()  # until set, the fake hangs on encoding requests

    def answer(body: dict[str, Any]) -> str:
        if is_encoding(body):
            if not release.is_set():
                release.wait(TIMEOUT)  # blocks the fake's loop: the request stays unanswered
            return ENCODING
        return echo_reply(body)

    def encodings(fake: FakeOpenAI) -> int:
        return sum(is_encoding(body) for body in fake.chat_requests)

    with FakeOpenAI(default_reply=answer) as fake:
        env = base_env(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY=OPENAI_API_KEY)
        try:
            with running_chat(tmp_path, "--persona", "monikai", "--user", "ann", env=env) as first:
                assert say(first, "my cat Mochi hates thunder") == (
                    "Monikai [NEUTRAL]: echo: my cat Mochi hates thunder"
                )
                assert say(first, "I start at the harbour office on Monday").startswith(
                    "Monikai [NEUTRAL]: echo: "
                )
                assert say(first, "end") == ("Conversation ended; it goes to long-term memory.")
                wait_until(lambda: encodings(fake) == 1, "the encoding request")
                first.kill()  # SIGKILL while the summary call is in flight
                first.communicate(timeout=TIMEOUT)
            assert first.returncode == -signal.SIGKILL
            [(conversation, encoded_at)] = query(
                tmp_path, "SELECT id, encoded_at FROM conversations"
            )
            assert encoded_at is None
            assert query(tmp_path, "SELECT count(*) FROM memories") == [(0,)]
            assert query(tmp_path, "SELECT count(*) FROM diary") == [(0,)]
        finally:
            release.set()

        with running_chat(tmp_path, "--persona", "monikai", "--user", "ann", env=env) as second:
            wait_until(lambda: all_encoded(tmp_path), "the conversation to be encoded")
            stdout, stderr = second.communicate("profile\n", timeout=TIMEOUT)
        assert second.returncode == 0, stderr
        assert "Traceback" not in stderr
        assert encodings(fake) == 2  # the one killed, and the one that finished
    assert stdout == (
        "What Monikai knows of you:\nHas a cat, Mochi; starts at the harbour office on Monday.\n"
    )
    assert query(tmp_path, "SELECT count(*) FROM conversations") == [(1,)]
    texts = query(
        tmp_path, "SELECT text FROM memories WHERE conversation_id = ? ORDER BY id", conversation
    )
    assert [text.split(": ", 1)[1] for (text,) in texts] == [
        "Ann told me her cat Mochi is afraid of thunderstorms.",
        "Ann starts a new job at the harbour office next Monday.",
    ]
    assert query(tmp_path, "SELECT count(*) FROM memories") == [(2,)]
    [(text, conversations)] = query(tmp_path, "SELECT text, conversations FROM diary")
    assert (text, conversations) == ("Ann told me about Mochi and her new job.", 1)
    [(recap,)] = query(tmp_path, "SELECT recap FROM conversations")
    assert recap == "We talked about Mochi and the new job."


def test_diary_profile_and_state_commands_with_the_offline_model(tmp_path: Path) -> None:
    (tmp_path / "kizuna.toml").write_text(FAST_ENGINE, encoding="utf-8")
    today = datetime.now(UTC).date()
    first = chat(
        tmp_path,
        "diary\nprofile\nI have a job interview on Tuesday.\nMy sister Ana lives in Lisbon.\nend\n",
    )
    assert first.stdout.splitlines()[:2] == [
        "The diary is empty so far.",
        "Monikai knows nothing about you yet: a profile is written after a conversation.",
    ]
    with running_chat(tmp_path, "--persona", "monikai", "--user", "ann") as later:
        wait_until(lambda: all_encoded(tmp_path), "the conversation to be encoded")
        commands = [
            "diary",
            "profile",
            "/diary yesterday",
            "/diary nonsense",
            f"/diary {today.isoformat()}",
            "/diary 2099-01-01",
            "state",
            "/state set mood happy",
        ]
        stdout, stderr = later.communicate("\n".join(commands) + "\n", timeout=TIMEOUT)
    assert later.returncode == 0, stderr
    [(day,)] = query(tmp_path, "SELECT day FROM diary")
    assert day in (today.isoformat(), (today + timedelta(days=1)).isoformat())  # near midnight
    page_day = datetime.fromisoformat(day).date()
    page = [
        f"Diary, {page_day:%A %Y-%m-%d}:",
        stdout.splitlines()[1],  # the offline model's line: "HH:MM talked with ann: ..."
    ]
    assert re.fullmatch(
        r"\d\d:\d\d talked with ann: I have a job interview on Tuesday\.", page[1]
    ), stdout
    yesterday = page_day - timedelta(days=1)
    asked_today = [*page] if page_day == today else [f"No diary page for {today:%A %Y-%m-%d}."]
    assert stdout.splitlines() == [
        *page,
        "What Monikai knows of you:",
        "I have a job interview on Tuesday. My sister Ana lives in Lisbon.",
        f"No diary page for {yesterday:%A %Y-%m-%d}.",
        "Which day is 'nonsense'? Try a date like 2026-09-03, or yesterday.",
        *asked_today,
        "Thursday 2099-01-01 has not happened yet.",
        "Monikai keeps no state.",
        "Monikai keeps no state.",
    ]
    assert replies(stdout) == []  # none of it was said to the persona

    result = kizuna(
        tmp_path,
        "chat",
        "--persona",
        "dungeon_master",
        "--user",
        "sam",
        stdin="/state set characters Sam: Brannoc, dwarf fighter; HP 12\n"
        "state\n/state set weather rain\n/state set characters\n/state bogus\n",
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("characters is now:\nSam: Brannoc, dwarf fighter; HP 12\n")
    shown = out.split("characters (once):\n", 1)[1]
    assert shown.startswith("Sam: Brannoc, dwarf fighter; HP 12\ngame (every_turn):\n")
    assert "No state slot 'weather'; the slots are: characters, game.\n" in out
    assert "Give the new value: state set characters VALUE\n" in out
    assert out.endswith("No state slot 'bogus'; the slots are: characters, game.\n")
    # The slot is kept: a later run shows it too.
    again = kizuna(
        tmp_path, "chat", "--persona", "dungeon_master", "--user", "sam", stdin="state\n"
    )
    assert "characters (once):\nSam: Brannoc, dwarf fighter; HP 12\n" in again.stdout


async def prune_one(database: Path, scope: str, text: str, reason: str, at: datetime) -> int:
    """Add a memory to `scope` and have the daily prune of `at` forget it; its id."""
    store = await Store.open(database)
    try:
        memory_id = await store.add_memory(
            NewMemory(
                scope=scope,
                text=text,
                speaker=None,
                kind="episodic",
                category="personal_daily",
                importance=1,
                sentiment=0.0,
                created_at=at - timedelta(days=40),
                strength=1.0,
            )
        )
        [memory] = await store.get_memories(scope, [memory_id])
        await store.prune(PruneWrite(scope, at.date(), [(memory, reason)], "ebbinghaus", at))
    finally:
        await store.close()
    return memory_id


def counted(stdout: str) -> str:
    """The last line of `memories pruned`, "N memories forgotten since DATE.", as "N since DATE"
    (either "memory" or "memories" for one)."""
    lines = stdout.splitlines()
    match = re.fullmatch(r"(\d+) memor(?:y|ies) forgotten since (\S+)\.", lines[-1])
    assert match, stdout
    assert len(lines) == 1 + int(match[1])  # a line per memory, then the count
    return f"{match[1]} since {match[2]}"


def test_memories_pruned_lists_what_the_prune_forgot(tmp_path: Path) -> None:
    (tmp_path / "kizuna.toml").write_text(FAST_ENGINE, encoding="utf-8")
    week_ago = (datetime.now(UTC) - timedelta(days=7)).date()
    empty = kizuna(tmp_path, "memories", "pruned")
    assert empty.returncode == 0, empty.stderr
    assert empty.stdout == f"Nothing was forgotten since {week_ago.isoformat()}.\n"
    assert empty.stderr == ""

    database = tmp_path / "data" / "kizuna.sqlite3"
    recent = datetime.now(UTC).replace(microsecond=0) - timedelta(days=2)
    old = datetime(2026, 3, 14, 4, 30, tzinfo=UTC)
    ann, bob = "monikai/console:dm:ann", "miao/console:dm:bob"
    faded = asyncio.run(
        prune_one(database, ann, "ann said the bus was late", "retention 0.02 < 0.05", recent)
    )
    older = asyncio.run(
        prune_one(database, bob, "bob had toast for breakfast", "retention 0.01 < 0.05", old)
    )
    recent_line = f"{recent:%Y-%m-%d %H:%M}  {ann}  #{faded} (ebbinghaus): retention 0.02 < 0.05\n"
    old_line = f"2026-03-14 04:30  {bob}  #{older} (ebbinghaus): retention 0.01 < 0.05\n"

    last_week = kizuna(tmp_path, "memories", "pruned")  # the last 7 days: the old one is out
    assert last_week.returncode == 0, last_week.stderr
    assert last_week.stdout.startswith(recent_line)
    assert counted(last_week.stdout) == f"1 since {week_ago.isoformat()}"
    both = kizuna(tmp_path, "memories", "pruned", "--since", "2026-03-14")  # the day counts
    assert both.stdout == old_line + recent_line + "2 memories forgotten since 2026-03-14.\n"
    one = kizuna(tmp_path, "memories", "pruned", "--since", "2026-03-14", "--scope", bob)
    assert one.stdout.startswith(old_line) and counted(one.stdout) == "1 since 2026-03-14"
    after = (recent + timedelta(days=1)).date().isoformat()
    later = kizuna(tmp_path, "memories", "pruned", "--since", after, "--scope", ann)
    assert later.returncode == 0, later.stderr
    assert later.stdout == f"Nothing was forgotten since {after}.\n"

    # A day as /diary takes it.
    three_days_ago = (datetime.now(UTC) - timedelta(days=3)).date().isoformat()
    said = kizuna(tmp_path, "memories", "pruned", "--since", "3 days ago", "--scope", ann)
    assert (
        said.stdout.startswith(recent_line) and counted(said.stdout) == f"1 since {three_days_ago}"
    )

    for bad_day in ("2026-13-01", "tomorrow", "soon"):
        bad = kizuna(tmp_path, "memories", "pruned", "--since", bad_day)
        assert bad.returncode == 2 and bad.stdout == "" and "Traceback" not in bad.stderr
        assert f"--since: not a past day: {bad_day!r}" in bad.stderr


def test_read_a_document_in_the_console(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text(
        "The zephyrine festival starts on Friday.\n\nBring lanterns.\n", encoding="utf-8"
    )
    result = chat(
        tmp_path,
        "read notes.txt\nwhen does it start?\ndocument close\n/read missing.txt\n"
        "read the news today\n",
    )
    said = replies(result.stdout)
    assert "I've read notes.txt" in said[0]
    [answer] = [line for line in said if 'You said: "when does it start?"' in line]
    assert "I found the parts of the document about that" in answer
    assert "put notes.txt away" in result.stdout
    assert "missing.txt: cannot be read" in result.stdout  # /read of no such file
    assert 'You said: "read the news today"' in result.stdout  # plain chat, not a path
    for file in (tmp_path / "data").rglob("*"):
        if file.is_file():
            assert b"festival starts on Friday" not in file.read_bytes(), file


def test_shard_options_are_checked(tmp_path: Path) -> None:
    (tmp_path / "kizuna.toml").write_text(
        '[[bots]]\nplatform = "discord"\npersona = "miao"\ntoken_env = "DISCORD_TOKEN"\n',
        encoding="utf-8",
    )
    line = one_line(kizuna(tmp_path, "run", "--shard-ids", "0,5", "--shard-count", "4"))
    assert "shard_ids must be between 0 and shard_count - 1" in line
    line = one_line(kizuna(tmp_path, "run", "--shard-ids", "zero"))
    assert "--shard-ids takes numbers" in line


# -- paths given to the commands -----------------------------------------------------------------


def failed_in_one_line(result: subprocess.CompletedProcess[str], status: int = 1) -> str:
    """The one line on stderr of a run that failed with `status`, nothing on stdout."""
    assert result.returncode == status, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_the_documented_backup_cron_line_works_night_after_night(tmp_path: Path) -> None:
    """`kizuna backup backups/` with no backups folder yet, run twice: two dated files (the
    second run, within the same second, numbered), and only the one line for cron's mail."""
    chat(tmp_path, "/remember my cat is called Mochi\n")
    for _ in range(2):
        result = kizuna(tmp_path, "backup", "backups/")
        assert result.returncode == 0 and result.stderr == "", result.stderr
        assert re.fullmatch(
            r"Backed up 1 memory and 0 conversations to backups/kizuna-\d{8}-\d{6}(-2)?"
            r"\.sqlite3 \(0\.\d MB, \d+\.\d s\)\.\n",
            result.stdout,
        ), result.stdout
    made = sorted(p.name for p in (tmp_path / "backups").iterdir())
    assert len(made) == 2 and all(re.fullmatch(r"kizuna-[-\d]+\.sqlite3", n) for n in made)


def test_backup_and_restore_refuse_unusable_paths_in_one_line(tmp_path: Path) -> None:
    chat(tmp_path, "/remember my cat is called Mochi\n")
    (tmp_path / "notes.txt").write_text("a file, not a folder")
    long = "x" * 300
    for args, said in [
        (("backup", "notes.txt/"), "notes.txt: cannot write there: notes.txt is a file"),
        (("backup", "notes.txt/new/"), "notes.txt/new: cannot write there: notes.txt is a file"),
        (("backup", long), f"{long}: cannot write there: File name too long"),
        (("restore", long), f"{long}: cannot read it: File name too long"),
        (("restore", "nowhere.sqlite3"), "nowhere.sqlite3: no such backup"),
        (("restore", "data"), "data: a folder, with no backup"),
    ]:
        assert failed_in_one_line(kizuna(tmp_path, *args)) == said
    said = failed_in_one_line(kizuna(tmp_path, "restore", "notes.txt"))
    assert said.startswith("notes.txt: not a Kizuna database")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "notes.txt"]


def test_a_user_name_the_web_page_would_refuse_is_one_line(tmp_path: Path) -> None:
    """`--user` is the user's id in memory and their name on the web page: one too long for a
    memory scope, or with control characters (which a terminal would act on) or ":", is
    refused before anything opens, and not repeated."""
    rule = "--user: a user name is 1-40 characters, without control characters, / \\ or :"
    for user, length in [("x" * 600, 600), ("ann\x1b[2J", 7), ("a:b", 3), ("   ", 0)]:
        line = one_line(kizuna(tmp_path, "chat", "--persona", "monikai", "--user", user))
        assert line == f"{rule} (this one: {length} characters)"
    assert not (tmp_path / "data").exists()
    said = chat(tmp_path, "/remember I drink tea\nmemories\n", "--user", "  " + "A" * 40 + " ")
    assert said.stdout.splitlines()[1].endswith(f"] {'A' * 40}: I drink tea")


def test_persona_import_and_export_paths(tmp_path: Path) -> None:
    """A folder (existing, or DIR/) gets the file inside it; an existing file is replaced only
    with --force; a place that cannot be written is one line naming it and why, and leaves
    no partial file."""
    (tmp_path / "notes.txt").write_text("a file, not a folder")
    assert kizuna(tmp_path, "persona", "export", "monikai").stdout == "monikai.card.json\n"
    said = one_line(kizuna(tmp_path, "persona", "export", "monikai"))
    assert said == "monikai.card.json exists: pass --force to replace it"
    assert kizuna(tmp_path, "persona", "export", "monikai", "--force").returncode == 0
    out = kizuna(tmp_path, "persona", "export", "monikai", "--out", "cards/")
    assert out.stdout == f"{Path('cards', 'monikai.card.json')}\n"
    out = kizuna(tmp_path, "persona", "export", "miao", "--out", "cards")  # exists: a folder
    assert out.stdout == f"{Path('cards', 'miao.card.json')}\n"
    imported = kizuna(tmp_path, "persona", "import", "cards/monikai.card.json", "--out", "mine")
    assert imported.stdout == f"{Path('mine', 'monikai.toml')}  (kizuna chat --persona monikai)\n"
    before = sorted(tmp_path.rglob("*"))

    long = "x" * 300
    for args, said in [
        (("export", "monikai", "--out", "notes.txt/"), "notes.txt is a file"),
        (("export", "monikai", "--out", "notes.txt/c.json"), "notes.txt is a file"),
        (("export", "monikai", "--out", long), "File name too long"),
        (("import", "cards/monikai.card.json", "--out", "notes.txt"), "notes.txt is a file"),
        (("import", "cards/monikai.card.json", "--out", long), "File name too long"),
    ]:
        line = one_line(kizuna(tmp_path, "persona", *args))
        assert ": cannot write there: " in line and line.endswith(said), line
    assert one_line(kizuna(tmp_path, "persona", "import", long)).endswith(
        ": cannot read (File name too long)"
    )
    assert one_line(kizuna(tmp_path, "persona", "import", "cards")) == (
        "cards: cannot read (Is a directory)"
    )
    assert sorted(tmp_path.rglob("*")) == before


def test_a_name_too_long_for_the_file_system_is_one_line_wherever_a_path_is_taken(
    tmp_path: Path,
) -> None:
    long = "x" * 300
    too_long = f"{long}: cannot read (File name too long)"
    assert one_line(kizuna(tmp_path, "persona", "list", "--config", long)) == too_long
    assert one_line(kizuna(tmp_path, "persona", "list", env=base_env(KIZUNA_CONFIG=long))) == (
        too_long
    )
    said = one_line(kizuna(tmp_path, "migrate", "--from", f"sqlite:{long}", "--to", "postgres"))
    assert said == f"--from: {too_long}"
    (tmp_path / "kizuna.toml").write_text(f'data_dir = "{long}"\n', encoding="utf-8")
    database = tmp_path / long / "kizuna.sqlite3"  # relative to the configuration file
    said = failed_in_one_line(kizuna(tmp_path, "backup", "copy.sqlite3"))
    assert said == f"{database}: cannot read it: File name too long"
    said = one_line(kizuna(tmp_path, "memories", "pruned"))
    assert said == f"{database}: cannot read (File name too long)"
