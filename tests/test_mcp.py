"""MCP servers through the official SDK (bot/tools/mcp.py, bot/tools/box.py): a real
server over stdio (tests/fakes/mcp_server.py), started lazily, its allowed tools offered,
only the listed environment passed, timeouts and crashes turned into sentences, restarts
after a backoff, and a clean stop."""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import sys
import time
from dataclasses import replace
from datetime import UTC
from pathlib import Path

import pytest

from adapters.command.cli import tools_listing
from adapters.console import PLATFORM as CONSOLE
from bot.config import Config, EngineConfig
from bot.persona.file import Persona, load_persona
from bot.persona.toolspec import CustomTool, McpServer
from bot.platforms import Platforms
from bot.runtime.assemble import open_runtime
from bot.tools import Sender, Toolbox
from bot.tools.mcp import McpConnection, McpDown
from memory.clock import FakeClock
from tests.fakes.factories import make_event, make_persona, no_ollama, open_bot
from tests.fakes.models import ScriptedChatModel, calling

pytest.importorskip("mcp")

ROOT = Path(__file__).resolve().parent.parent
ALICE = Sender.of("u1")
ALLOWED = ["add", "echo_env", "sleep", "crash", "pid"]


class Ticker:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def server(**changes: object) -> McpServer:
    spec = McpServer(
        name="calc",
        tools=ALLOWED,
        command=sys.executable,
        args=["-m", "tests.fakes.mcp_server"],
        env=["KZ_PASSED"],
        timeout=10.0,
    )
    return replace(spec, **changes)  # type: ignore[arg-type]


def persona_with(*servers: McpServer) -> Persona:
    return replace(make_persona(), mcp_servers=list(servers))


def box(persona: Persona, ticker: Ticker | None = None) -> Toolbox:
    return Toolbox(
        {persona.key: persona},
        clock=FakeClock(),
        tz=UTC,
        rng=random.Random(0),
        environ={"KZ_PASSED": "yes", "KZ_SECRET": "hunter2", "PATH": os.environ["PATH"]},
        installed={"reminder": "bot.tools.reminder:reminder"},
        monotonic=ticker or Ticker(),
    )


@pytest.fixture(autouse=True)
def in_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # `python -m tests.fakes.mcp_server` runs from here


async def call(tools: Toolbox, persona: Persona, name: str, arguments: str) -> tuple[str, str]:
    """How a call ended, and what the server answered (its answer reaches the model quoted,
    one JSON string, as user text does; a sentence of Kizuna's, for a server down or slow, as
    it is)."""
    outcome = await tools.run(persona, "pip/discord:u1", ALICE, name, arguments)
    assert outcome is not None
    if outcome.status in ("ok", "error"):
        answer = json.loads(outcome.text)
        assert isinstance(answer, str) and "\n" not in outcome.text
        return outcome.status, answer
    return outcome.status, outcome.text


async def test_a_server_starts_when_needed_and_offers_its_allowed_tools() -> None:
    persona = persona_with(server(tools=["add", "pid"]))
    tools = box(persona)
    try:
        before = tools.tools(persona, ALICE)
        assert [t.name for t in before] == ["calc__add", "calc__pid"]
        assert all("not answering" in t.description for t in before)  # not started yet
        await tools.prepare(persona)
        [add, _] = tools.tools(persona, ALICE)
        assert add.description == "Add two integers."
        assert set(add.parameters["properties"]) == {"a", "b"}
        assert await call(tools, persona, "calc__add", '{"a": 2, "b": 3}') == ("ok", "5")
        assert await tools.run(persona, "s", ALICE, "calc__sleep", '{"seconds": 0}') is None
        assert await tools.probe(persona) == {"calc": "reachable (2 of 2 tools)"}
    finally:
        await tools.close()


async def test_only_the_environment_variables_listed_reach_the_server() -> None:
    persona = persona_with(server())
    tools = box(persona)
    try:
        passed = await call(tools, persona, "calc__echo_env", '{"name": "KZ_PASSED"}')
        assert passed == ("ok", "KZ_PASSED=yes")
        secret = await call(tools, persona, "calc__echo_env", '{"name": "KZ_SECRET"}')
        assert secret == ("ok", "KZ_SECRET is not set")
    finally:
        await tools.close()


async def test_a_slow_answer_is_a_sentence_within_the_timeout() -> None:
    persona = persona_with(server(timeout=4.0))
    tools = box(persona)
    try:
        await tools.prepare(persona)
        started = time.monotonic()
        status, text = await call(tools, persona, "calc__sleep", '{"seconds": 30}')
        assert time.monotonic() - started < 8
        assert status == "timeout"
        assert "did not answer in time" in text
        assert await call(tools, persona, "calc__add", '{"a": 1, "b": 1}') == ("ok", "2")
    finally:
        await tools.close()


async def test_a_crashed_server_is_started_again_after_a_backoff() -> None:
    ticker = Ticker()
    persona = persona_with(server())
    tools = box(persona, ticker)
    try:
        status, first = await call(tools, persona, "calc__pid", "{}")
        assert status == "ok"
        status, text = await call(tools, persona, "calc__crash", "{}")
        assert status == "down"
        assert "went away" in text
        status, text = await call(tools, persona, "calc__pid", "{}")
        assert (status, "retrying later" in text) == ("down", True)  # within the backoff
        ticker.now += 1.5
        status, second = await call(tools, persona, "calc__pid", "{}")
        assert status == "ok"
        assert second != first  # a new process
    finally:
        await tools.close()


async def test_a_server_that_cannot_start_is_a_sentence_and_backs_off() -> None:
    ticker = Ticker()
    persona = persona_with(server(command="/nonexistent/kizuna-mcp", args=[]))
    tools = box(persona, ticker)
    try:
        await tools.prepare(persona)  # no exception: the turn goes on
        status, text = await call(tools, persona, "calc__add", '{"a": 1, "b": 2}')
        assert status == "down"
        assert "Say that this service isn't answering" in text
        assert (await tools.probe(persona))["calc"].startswith("not reachable: ")
    finally:
        await tools.close()


async def test_closing_stops_the_server_process() -> None:
    persona = persona_with(server())
    tools = box(persona)
    _, pid = await call(tools, persona, "calc__pid", "{}")
    await tools.close()
    for _ in range(50):
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            break
        await asyncio.sleep(0.1)
    else:
        pytest.fail("the MCP server process is still running")


async def test_the_backoff_doubles_to_its_ceiling() -> None:
    ticker = Ticker()
    conn = McpConnection(server(command="/nonexistent/kizuna-mcp", args=[]), {}, ticker)
    waits = []
    for _ in range(12):
        with pytest.raises(McpDown):
            await conn.ensure()
        retry_at = conn._retry_at
        waits.append(retry_at - ticker.now)
        ticker.now = retry_at
    assert waits[:4] == [1.0, 2.0, 4.0, 8.0]
    assert max(waits) == 300.0


async def test_the_chat_model_calls_a_server_tool(tmp_path: Path) -> None:
    persona = persona_with(server())
    model = ScriptedChatModel([calling("calc__add", {"a": 20, "b": 22}), "[NEUTRAL] 42 it is"])
    bot = await open_bot(tmp_path / "kizuna.db", [persona], model=model)
    tools = bot.engine.calls.toolbox = box(persona)
    try:
        reply = await bot.engine.handle(make_event("what is 20 + 22?"))
        assert reply.text == "42 it is"
        offered = {t.name for t in model.calls[-2].tools}
        assert {"calc__add", "calc__crash"} <= offered
        assert model.calls[-1].messages[-1].content == '"42"'
    finally:
        await tools.close()
        await bot.close()


# --- kizuna tools list, and the example persona --------------------------------------------


async def test_tools_list_says_what_a_persona_can_call_and_if_its_servers_answer() -> None:
    persona = replace(
        make_persona(),
        tools=["recall_memory", "web_search", "dice"],
        custom_tools=[
            CustomTool("where", module="tests.fakes.tools:where", admin_only=True),
            CustomTool("dice", cheap=True),
        ],
        mcp_servers=[
            server(tools=["add", "nothing_such"]),
            server(name="gone", command="/nonexistent/kizuna-mcp", args=[], tools=["x"]),
        ],
    )
    config = Config()
    config.models.eco_mode = True
    lines = await tools_listing(persona, config, {"PATH": os.environ["PATH"]})
    assert lines[0] == "recall_memory\tbuilt in"
    assert lines[1] == "web_search\tbuilt in; no search backend is configured ([tools] search)"
    assert lines[2] == (
        "where\ttests.fakes.tools:where; timeout 10 s, at most 2000 characters, "
        "10 calls a minute per user, admins only, off in eco mode, for the one person who asked"
    )
    assert lines[3].startswith("dice\tbot.tools.dice:dice; ")
    assert lines[3].endswith("cheap (kept in eco mode)")
    assert lines[4].startswith(
        f"calc\tMCP server (stdio: {sys.executable}): reachable (1 of 2 tools; "
        "missing: nothing_such); "
    )
    assert lines[5:7] == ["  calc__add", "  calc__nothing_such"]
    assert lines[7].startswith(
        "gone\tMCP server (stdio: /nonexistent/kizuna-mcp): not reachable: "
        "MCP server gone failed to start; "
    )


async def test_the_example_persona_loads_with_its_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "docs" / "examples"))
    persona = load_persona(ROOT / "docs" / "examples" / "librarian.toml")
    assert [s.name for s in persona.mcp_servers] == ["catalogue"]
    tools = box(persona)
    try:
        offered = [t.name for t in tools.tools(persona, ALICE)]
        assert offered == [
            "reading_time",
            "catalogue__read_text_file",
            "catalogue__list_directory",
        ]
        assert await call(tools, persona, "reading_time", '{"words": 69000}') == (
            "ok",
            "About 5 h 0 min at 230 words a minute.",
        )
    finally:
        await tools.close()


async def test_the_runtime_stops_its_mcp_servers_when_it_closes(tmp_path: Path) -> None:
    config = Config(data_dir=str(tmp_path), engine=EngineConfig(timezone="UTC"))
    persona = persona_with(server())
    runtime = await open_runtime(
        config,
        {"pip": persona},
        {"PATH": os.environ["PATH"]},
        platforms=Platforms([CONSOLE]),
        probe=no_ollama,
    )
    try:
        toolbox = runtime.engine.calls.toolbox
        assert toolbox is not None
        _, pid = await call(toolbox, persona, "calc__pid", "{}")
    finally:
        await runtime.close()
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid), 0)


async def test_a_streamable_http_server_by_its_url() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.fakes.mcp_server",
        "--http",
        str(port),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    persona = persona_with(
        McpServer(name="web", url=f"http://127.0.0.1:{port}/mcp", tools=["add"], timeout=5.0)
    )
    tools = box(persona)
    try:
        for _ in range(100):  # until it listens
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(0.1)
                continue
            writer.close()
            break
        assert await call(tools, persona, "web__add", '{"a": 40, "b": 2}') == ("ok", "42")
        assert await tools.probe(persona) == {"web": "reachable (1 of 1 tools)"}
    finally:
        await tools.close()
        process.terminate()
        await process.wait()
