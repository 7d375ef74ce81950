"""The web client and its memory inspector (adapters/web/server.py): without the token, every
page, API call and socket is refused; a page of another site may not drive it; the inspector
deletes or charts a memory only in the scope named with it; scope strings and ids of every
shape are a "not here", never a crash. Each refusal is logged with its reason, and the log
holds no token and no memory."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from adapters.web import WebServer, WebSetupError
from tests.fakes.secrets import INSPECTOR_TOKEN
from tests.security.conftest import ALICE, BOB, World, leaked
from tests.security.test_scopes import SCOPES

Client = TestClient[Any, Any]
BEARER = {"Authorization": f"Bearer {INSPECTOR_TOKEN}"}
PATHS = [
    ("GET", "/"),
    ("GET", "/inspect"),
    ("GET", "/api/personas"),
    ("GET", "/api/inspect/scopes?persona=pip"),
    ("GET", "/api/inspect/memories?scope=pip/discord:dm:u1"),
    ("GET", "/api/inspect/curve/1?scope=pip/discord:dm:u1"),
    ("GET", "/api/inspect/diary?scope=pip/discord:dm:u1"),
    ("GET", "/api/inspect/profile?scope=pip/discord:dm:u1"),
    ("DELETE", "/api/inspect/memories/1?scope=pip/discord:dm:u1"),
    ("POST", "/api/document?persona=pip&user=bob&name=a.txt"),
    ("GET", "/ws?persona=pip&user=bob"),
    ("GET", "/sprite/pip/NEUTRAL"),
]


async def serve(world: World, **options: Any) -> AsyncIterator[Client]:
    client: Client = TestClient(
        TestServer(
            WebServer(
                world.bot.engine,
                world.bot.services,
                world.bot.store,
                world.bot.bank,
                ["pip"],
                **options,
            ).app()
        )
    )
    await client.start_server()
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
async def guarded(world: World) -> AsyncIterator[Client]:
    async for client in serve(world, host="0.0.0.0", token=INSPECTOR_TOKEN):
        yield client


@pytest.fixture
async def local(world: World) -> AsyncIterator[Client]:
    async for client in serve(world):
        yield client


def refusals(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "adapters.web.server"]


@pytest.mark.parametrize(("method", "path"), PATHS)
@pytest.mark.parametrize(
    ("given", "reason"),
    [({}, "no token"), ({"Authorization": "Bearer wrong-token"}, "a wrong token")],
    ids=["none", "wrong"],
)
async def test_without_the_token_everything_is_refused_and_logged(
    guarded: Client,
    caplog: pytest.LogCaptureFixture,
    method: str,
    path: str,
    given: dict[str, str],
    reason: str,
) -> None:
    with caplog.at_level(logging.INFO, logger="adapters.web.server"):
        response = await guarded.request(method, path, headers=given)
        body = await response.text()
    assert response.status == 401
    assert leaked(body) == [] and "zebraquokka" not in body
    [line] = refusals(caplog)
    assert line.startswith(f"refused {method} {path.partition('?')[0]} from ")
    assert line.endswith(f": {reason}")
    assert INSPECTOR_TOKEN not in line and "wrong-token" not in line


async def test_with_the_token_the_inspector_answers(guarded: Client, world: World) -> None:
    found = await guarded.get(f"/api/inspect/memories?scope={world.scope(ALICE)}", headers=BEARER)
    assert found.status == 200 and [m["id"] for m in await found.json()] == [world.dm_id]


@pytest.mark.parametrize(("method", "path"), [p for p in PATHS if p[0] != "GET"])
async def test_another_sites_page_is_refused_and_logged(
    local: Client, world: World, caplog: pytest.LogCaptureFixture, method: str, path: str
) -> None:
    with caplog.at_level(logging.INFO, logger="adapters.web.server"):
        response = await local.request(method, path, headers={"Origin": "https://evil.example"})
    assert response.status == 403
    [line] = refusals(caplog)
    assert line.endswith("cross-site, Origin 'https://evil.example'")
    assert await world.bot.bank.count(world.scope(ALICE)) == 1


async def test_a_socket_from_another_site_is_refused(local: Client) -> None:
    response = await local.get(
        "/ws?persona=pip&user=bob",
        headers={
            "Origin": "https://evil.example",
            "Connection": "Upgrade",
            "Upgrade": "websocket",
            "Sec-WebSocket-Version": "13",
            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        },
    )
    assert response.status == 403


async def test_the_inspector_deletes_and_charts_only_in_the_scope_named(
    local: Client, world: World, caplog: pytest.LogCaptureFixture
) -> None:
    bob, alice = world.scope(BOB), world.scope(ALICE)
    with caplog.at_level(logging.INFO):
        for memory_id in [*world.alice_ids, 0, 2**63, 2**64, 10**30]:
            gone = await local.delete(f"/api/inspect/memories/{memory_id}?scope={bob}")
            assert gone.status == 404, memory_id
            curve = await local.get(f"/api/inspect/curve/{memory_id}?scope={bob}")
            assert curve.status == 404, memory_id
    assert [m.id for m in await world.bot.bank.get(alice, world.alice_ids)] == [world.dm_id]
    lines = [r.getMessage() for r in caplog.records]
    assert f"forget refused: no memory {world.dm_id} in scope {bob}" in lines
    assert f"curve refused: no memory {world.dm_id} in scope {bob}" in lines
    assert leaked("\n".join(lines)) == []


@pytest.mark.parametrize("scope", SCOPES, ids=repr)
@pytest.mark.parametrize(
    "path",
    ["/api/inspect/memories", "/api/inspect/diary", "/api/inspect/profile", "/api/inspect/curve/1"],
)
async def test_any_scope_string_is_not_here_or_empty_never_a_crash(
    local: Client, world: World, caplog: pytest.LogCaptureFixture, scope: str, path: str
) -> None:
    with caplog.at_level(logging.INFO, logger="adapters.web.server"):
        response = await local.get(path, params={"scope": scope, "q": scope, "day": ""})
        body = await response.text()
        assert response.status in (200, 404), body
        assert leaked(body) == []
        deleted = await local.delete(
            f"/api/inspect/memories/{world.dm_id}", params={"scope": scope}
        )
    assert deleted.status == 404
    assert await world.bot.bank.count(world.scope(ALICE)) == 1
    # A scope asked for is whatever the visitor typed: the log says how long, not what.
    for line in refusals(caplog):
        assert re.fullmatch(
            r"inspector: refused /[/a-z0-9]+: no such scope here \(\d+ characters\)", line
        ), line


@pytest.mark.parametrize(
    "header",
    [b"Authorization: Bearer \xff\xfe" + INSPECTOR_TOKEN.encode(), b"Cookie: kizuna_token=\xff"],
    ids=["bearer", "cookie"],
)
async def test_a_token_that_is_not_utf8_is_only_wrong(
    world: World, caplog: pytest.LogCaptureFixture, header: bytes
) -> None:
    """Raw bytes no client library would send: refused like any wrong token, not a server
    error with a traceback in the log."""
    server = WebServer(
        world.bot.engine,
        world.bot.services,
        world.bot.store,
        world.bot.bank,
        ["pip"],
        host="0.0.0.0",
        port=0,
        token=INSPECTOR_TOKEN,
    )
    await server.start()
    try:
        with caplog.at_level(logging.INFO):
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(
                b"GET /api/personas HTTP/1.1\r\nHost: kizuna.example\r\n"
                + header
                + b"\r\nConnection: close\r\n\r\n"
            )
            answer = await reader.read()
            writer.close()
            await writer.wait_closed()
    finally:
        await server.close()
    assert answer.startswith(b"HTTP/1.1 401 ")
    # The server's and aiohttp's own (a handler that failed on the bytes would be logged
    # there); not what the garbage collector reports of other tests' clients meanwhile.
    assert [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.WARNING and r.name.startswith(("adapters.", "aiohttp."))
    ] == ["refused GET /api/personas from 127.0.0.1: a wrong token"]


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1"])
def test_a_token_short_enough_to_guess_is_refused_at_start(world: World, host: str) -> None:
    with pytest.raises(WebSetupError) as refused:
        WebServer(
            world.bot.engine,
            world.bot.services,
            world.bot.store,
            world.bot.bank,
            ["pip"],
            host=host,
            token="hunter2",
        )
    assert str(refused.value).startswith(
        "the web client's token is 7 characters; it needs at least 16"
    )
    assert "hunter2" not in str(refused.value)
    WebServer(
        world.bot.engine,
        world.bot.services,
        world.bot.store,
        world.bot.bank,
        ["pip"],
        host=host,
        token="x" * 16,
    )


@pytest.mark.parametrize("user", ["../u1", "a:dm:u1", "a/b", "x\\y", "\x00", "", "a" * 41])
async def test_a_page_user_name_cannot_steer_into_another_scope(
    local: Client, user: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="adapters.web.server"):
        response = await local.get("/ws", params={"persona": "pip", "user": user})
        document = await local.post(
            "/api/document", params={"persona": "pip", "user": user, "name": "a.txt"}, data=b"x"
        )
    assert response.status == document.status == 400
    # What was typed stays out of the log: it may be anything a visitor wrote.
    assert [line.partition(": ")[2] for line in refusals(caplog)] == [
        f"not a user name ({len(user)} characters)"
    ] * 2


async def test_an_unknown_persona_is_refused_and_logged(
    local: Client, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="adapters.web.server"):
        response = await local.get("/api/inspect/scopes", params={"persona": "../tavern"})
    assert response.status == 404
    assert refusals(caplog) == ["refused: no such persona here (a name of 9 characters)"]


@pytest.mark.parametrize("host", ["evil.example", "evil.example:3000", "10.0.0.5:3000", "[::2]:80"])
async def test_a_rebound_name_is_refused_without_a_token_and_logged(
    local: Client, world: World, caplog: pytest.LogCaptureFixture, host: str
) -> None:
    """DNS rebinding: a site's own name pointed at 127.0.0.1 makes its page same-origin with
    the inspector; its requests carry its own Host, which a loopback server refuses."""
    with caplog.at_level(logging.INFO, logger="adapters.web.server"):
        for method, path in PATHS:
            response = await local.request(method, path, headers={"Host": host})
            assert response.status == 403, path
            assert leaked(await response.text()) == []
    lines = refusals(caplog)
    assert len(lines) == len(PATHS) and lines[0].endswith(f"Host {host!r} is not this machine")


@pytest.mark.parametrize("host", ["127.0.0.1:3000", "localhost:3000", "LOCALHOST", "[::1]:3000"])
async def test_this_machines_names_are_let_in(local: Client, world: World, host: str) -> None:
    response = await local.get(
        f"/api/inspect/memories?scope={world.scope(ALICE)}", headers={"Host": host}
    )
    assert response.status == 200
