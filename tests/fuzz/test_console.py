"""The console REPL fed fuzzed lines on stdin: invalid UTF-8, control characters, NUL, odd
commands and paths. Every line said to the persona gets a reply, the REPL reads to the end of
its input, and nothing raises or logs an error."""

from __future__ import annotations

import io
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from adapters.console import PLATFORM as CONSOLE
from adapters.console import ConsoleChat
from bot.config import Config, EngineConfig
from bot.platforms import Platforms
from bot.runtime.assemble import Runtime, open_runtime
from tests.fakes.factories import make_persona, no_ollama
from tests.fakes.fuzz import NASTY_PIECES, fuzzed

pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")

PIP = make_persona("pip", name="Pip")
COMMAND_WORDS = [
    "",
    "/remember ",
    "/forget ",
    "/memories ",
    "/diary ",
    "/get ",
    "/state set ",
    "/read ",
    "read ",
    "/nosuch ",
    "log",
    "save",
    "end",
    "help",
    "profile",
]
PATHS = ["~nosuchuser/notes.txt", "a\x00b.txt", "/", ".", "/nonexistent.pdf", "~", "''", '"']


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[Runtime]:
    config = Config(data_dir=str(tmp_path / "data"), engine=EngineConfig(timezone="UTC"))
    opened = await open_runtime(
        config, {"pip": PIP}, {}, platforms=Platforms([CONSOLE]), probe=no_ollama
    )
    yield opened
    await opened.close()


def line_bytes() -> st.SearchStrategy[bytes]:
    piece = st.one_of(
        st.binary(max_size=12),
        st.sampled_from(NASTY_PIECES).map(lambda t: t.encode("utf-8", "surrogatepass")),
        st.sampled_from(PATHS).map(str.encode),
    )
    text = st.lists(piece, max_size=6).map(b"".join)
    return st.tuples(st.sampled_from(COMMAND_WORDS).map(str.encode), text).map(b"".join)


async def chat(runtime: Runtime, lines: list[bytes]) -> str:
    # A strict decoder, as Python sets up stdin under a UTF-8 locale other than C.UTF-8
    # (or with PYTHONIOENCODING=utf-8): there an undecodable byte raised UnicodeDecodeError.
    stdin = io.TextIOWrapper(
        io.BytesIO(b"".join(line.replace(b"\n", b" ") + b"\n" for line in lines)),
        encoding="utf-8",
        errors="strict",
    )
    stdout = io.StringIO()
    console = ConsoleChat(runtime, PIP, "ann", stdin=stdin, stdout=stdout, interactive=False)
    await console.run()
    return stdout.getvalue()


@fuzzed(40)
@given(lines=st.lists(line_bytes(), min_size=1, max_size=5))
@example(lines=[b"hi \xff there", b"hello again"])  # ended the chat: UnicodeDecodeError
@example(lines=[b"read ~nosuchuser/notes.txt", b"hello"])  # RuntimeError: no such user
@example(lines=[b"/read a\x00b.txt", b"hello"])  # ValueError: embedded null byte
@example(lines=[b"/read ~\x00"])  # ValueError from expanduser
@example(lines=[b"/remember caf\xe9 \x00", b"/forget caf", b"1", b"/memories"])
async def test_every_line_is_read_and_answered(
    runtime: Runtime, caplog: pytest.LogCaptureFixture, lines: list[bytes]
) -> None:
    caplog.set_level(logging.INFO)
    # Blank lines answer whatever prompt a command left open (/forget asks which one).
    out = await chat(runtime, [*lines, b"", b"", b"", b"last words"])
    # The REPL read up to the end: the last line, said to Pip, got its answer.
    assert out.rstrip().splitlines()[-1].startswith("Pip ["), out
    assert "last words" in out.splitlines()[-1]
    await runtime.engine.drain()
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    caplog.clear()
    assert not bad, [f"{r.name}: {r.getMessage()}" for r in bad]
