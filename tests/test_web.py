"""The web client's server (adapters/web): the chat socket, sprites, the inspector's API, and its
guard (token, origin), through aiohttp's test client; the pages themselves are driven in
Chromium by test_web_browser.py."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer

from adapters.console import PLATFORM as CONSOLE
from adapters.web import WebServer, WebSetupError
from adapters.web.server import MAX_FRAME, scope_label
from adapters.web.server import PLATFORM as WEB
from adapters.web.sprites import sprite_file
from bot.chat_model import Message
from bot.commands import table as commands
from bot.config import Config
from bot.conversation.recollect import Recollector
from bot.persona.file import load_persona
from bot.platforms import Platforms
from bot.runtime.assemble import open_runtime
from memory.encoding.encoder import ENCODING_TASK
from memory.records import NewIntention
from tests.fakes.factories import (
    KIZUNA,
    PLATFORMS,
    Bot,
    base_env,
    make_event,
    make_persona,
    make_picture,
    no_ollama,
    open_bot,
)
from tests.fakes.models import ScriptedChatModel, encoding
from tests.fakes.secrets import INSPECTOR_TOKEN

ROOT = Path(__file__).resolve().parent.parent
ANN = "pip/console:dm:ann"  # the bank scope of Ann's conversation with Pip, page or console


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[Bot]:
    personas = [make_persona("pip", name="Pip"), make_persona("bo", name="Bo")]
    opened = await open_bot(tmp_path / "k.sqlite3", personas)
    try:
        yield opened
    finally:
        await opened.close()


async def serve(server: WebServer) -> TestClient[Any, Any]:
    client: TestClient[Any, Any] = TestClient(TestServer(server.app()))
    await client.start_server()
    return client


@pytest.fixture
async def web(bot: Bot) -> AsyncIterator[TestClient[Any, Any]]:
    client = await serve(WebServer(bot.engine, bot.services, bot.store, bot.bank, ["pip"]))
    try:
        yield client
    finally:
        await client.close()


async def receive(ws: aiohttp.ClientWebSocketResponse, kind: str) -> dict[str, Any]:
    """The next message of `kind` (skipping "thinking")."""
    while True:
        message: dict[str, Any] = await asyncio.wait_for(ws.receive_json(), 5)
        if message["type"] == kind:
            return message
        assert message["type"] == "thinking", message


# --- chat ---------------------------------------------------------------------------------------


async def test_a_message_gets_a_reply_in_the_consoles_conversation(
    bot: Bot, web: TestClient[Any, Any]
) -> None:
    bot.model.push("[HAPPY] Lovely to see you, Ann!")
    async with web.ws_connect("/ws?persona=pip&user=ann") as ws:
        history = await receive(ws, "history")
        assert history["turns"] == [] and history["emotion"] == "NEUTRAL"
        assert history["hello"] == "Say hello to Pip. Type help for the commands."
        await ws.send_json({"text": "hello Pip"})
        assert (await ws.receive_json())["type"] == "thinking"
        reply = await receive(ws, "reply")
    assert reply == {
        "type": "reply",
        "text": "Lovely to see you, Ann!",
        "emotion": "HAPPY",
        "failed": False,
    }
    # The console's Ann is the page's Ann: one conversation.
    console = await bot.engine.session(make_event(platform="console", user_id="ann"))
    assert [t.text for t in console.turns] == ["hello Pip", "Lovely to see you, Ann!"]
    async with web.ws_connect("/ws?persona=pip&user=ann") as ws:
        again = await receive(ws, "history")
    assert [t["text"] for t in again["turns"]] == ["hello Pip", "Lovely to see you, Ann!"]
    assert again["emotion"] == "HAPPY"


async def test_a_cards_greeting_opens_the_very_first_conversation(tmp_path: Path) -> None:
    inn = make_persona("inn", name="Keeper")
    inn.card.first_message = "Welcome to the inn, {{user}}! I am {{char}}."
    bot = await open_bot(tmp_path / "k.sqlite3", [inn])
    client = await serve(WebServer(bot.engine, bot.services, bot.store, bot.bank, ["inn"]))
    try:
        for _ in range(2):  # opened again: said once
            async with client.ws_connect("/ws?persona=inn&user=ann") as ws:
                history = await receive(ws, "history")
                assert [(t["role"], t["text"]) for t in history["turns"]] == [
                    ("assistant", "Welcome to the inn, ann! I am Keeper.")
                ]
    finally:
        await client.close()
        await bot.close()


async def test_a_closed_socket_mid_reply_loses_nothing(bot: Bot) -> None:
    server = WebServer(bot.engine, bot.services, bot.store, bot.bank, ["pip"])
    client = await serve(server)
    asked, answer = asyncio.Event(), asyncio.Event()

    async def slow(messages: Sequence[Message]) -> str:
        asked.set()
        await answer.wait()
        return "[SAD] Sorry, I was miles away."

    bot.model.push(slow)
    try:
        # The server answers no close while it is busy with the turn: the page gives up on
        # the handshake at once and drops the connection.
        timeout = aiohttp.ClientWSTimeout(ws_close=0.1)
        ws = await client.ws_connect("/ws?persona=pip&user=ann", timeout=timeout)
        await receive(ws, "history")
        await ws.send_json({"text": "are you there?"})
        await asyncio.wait_for(asked.wait(), 5)
        await ws.close()  # the page goes away while the persona is still answering
        answer.set()
    finally:
        await client.close()
        await server.close()  # waits for the turn
    session = await bot.engine.session(make_event(platform="web", user_id="ann"))
    assert [t.text for t in session.turns] == ["are you there?", "Sorry, I was miles away."]


async def test_size_names_and_personas_are_checked(bot: Bot, web: TestClient[Any, Any]) -> None:
    async with web.ws_connect("/ws?persona=pip&user=ann") as ws:
        history = await receive(ws, "history")
        # The page is told the limit, and why a message over it is refused, before it sends.
        assert history["limit"] == 4000
        assert history["too_long"] == (
            "Messages here are limited to 4000 characters: shorten this one and send it again."
        )
        await ws.send_json({"text": "x" * 4001})
        error = await receive(ws, "error")
        # Refused, not said: the page puts the text back in the box.
        assert error == {"type": "error", "text": history["too_long"], "refused": True}
        bot.model.push("[HAPPY] So many accents!")
        await ws.send_json({"text": "é" * 4000})  # characters, not bytes: this one fits
        assert (await receive(ws, "reply"))["text"] == "So many accents!"
        await ws.send_str("x" * (MAX_FRAME + 1))  # over the frame limit: the socket closes
        closed = await asyncio.wait_for(ws.receive(), 5)
        assert closed.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
    assert [c.messages[-1].content for c in bot.model.calls] == ["é" * 4000]  # refused unsaid
    for query, status in (
        ("persona=pip&user=", 400),
        ("persona=pip&user=a/b", 400),
        ("persona=nobody&user=ann", 404),
        ("persona=bo&user=ann", 404),  # Bo exists but this page does not host him
    ):
        response = await web.get(f"/ws?{query}")
        assert response.status == status, query


async def test_page_commands_are_the_command_tables(bot: Bot, web: TestClient[Any, Any]) -> None:
    async with web.ws_connect("/ws?persona=pip&user=ann") as ws:
        # The page is told which words alone are commands (it shows no "thinking" for them).
        offered = (await receive(ws, "history"))["commands"]
        assert offered == sorted(c.name for c in commands.offered_on(PLATFORMS["web"]))

        async def command(text: str) -> dict[str, Any]:
            await ws.send_json({"text": text})
            return await receive(ws, "note")

        assert "remember" in (await command("/remember I keep bees"))["text"]
        assert "I keep bees" in (await command("/memories"))["text"]
        assert (await command("/dance"))["text"] == "There is no /dance command; /help lists them."
        listed = (await command("/help"))["text"]
        assert all(f"/{c.name} " in listed for c in commands.offered_on(PLATFORMS["web"]))
        # As on the console, a command word alone is the command; with more it is talk.
        assert (await command("help"))["text"] == listed
        assert (await command("  Help "))["text"] == listed
        assert "I keep bees" in (await command("memories"))["text"]
        # A choice comes with buttons; pressing one types its command.
        offered = await command("/forget bees")
        assert "I keep bees" in offered["text"] and offered["buttons"][0]["label"] == "1"
        assert "Forgotten" in (await command(offered["buttons"][0]["text"]))["text"]
        asked = await command("/wipe")
        assert [b["text"] for b in asked["buttons"]] == ["/wipe yes", "/cancel"]
        assert asked["buttons"][0]["danger"] and not asked["buttons"][1]["danger"]
        bot.model.push("[HAPPY] Of course I can help!")
        await ws.send_json({"text": "help me with my bees"})
        assert (await receive(ws, "reply"))["text"] == "Of course I can help!"
    assert len(bot.model.calls) == 1  # commands are not said to the persona; the last line is


async def test_another_site_may_not_open_the_socket(web: TestClient[Any, Any]) -> None:
    response = await web.get(
        "/ws?persona=pip&user=ann",
        headers={"Origin": "https://evil.example", "Upgrade": "websocket", "Connection": "Upgrade"},
    )
    assert response.status == 403
    deleted = await web.delete(f"/api/inspect/memories/1?scope={ANN}", headers={"Origin": "null"})
    assert deleted.status == 403


async def test_pages_carry_a_strict_content_security_policy(web: TestClient[Any, Any]) -> None:
    for path in ("/", "/inspect", "/api/personas"):
        response = await web.get(path)
        assert response.status == 200, path
        policy = response.headers["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "default-src 'none'" in policy
        assert response.headers["X-Content-Type-Options"] == "nosniff"


async def test_the_pages_have_an_icon_of_their_own(web: TestClient[Any, Any]) -> None:
    for page in ("/", "/inspect"):
        html = await (await web.get(page)).text()
        assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in html
    for path in ("/favicon.ico", "/static/favicon.svg"):
        response = await web.get(path)
        assert response.status == 200, path
        assert response.content_type == "image/svg+xml"
        assert (await response.text()).startswith("<svg ")


def test_inspector_names_conversations_for_people() -> None:
    """Each form of bot.conversation.sessions.scope_key, as the inspector labels it."""
    for room, label in (
        ("console:dm:ann", "private chat with ann (console or web page)"),
        ("discord:dm:42", "Discord private chat with user 42"),
        ("telegram:dm:7", "Telegram private chat with user 7"),
        ("discord:9:channel:12", "Discord server 9, channel 12, shared by everyone there"),
        ("telegram:-100:channel:-100", "Telegram group -100, shared by everyone there"),
        ("discord:9:user:42", "Discord server 9: user 42's own conversation"),
        ("telegram:-100:user:7", "Telegram group -100: user 7's own conversation"),
        (
            "discord:9:channel:12:user:42",
            "Discord server 9, channel 12: user 42's own conversation",
        ),
        ("matrix:room:odd", "matrix:room:odd"),  # a form it does not know: as written
    ):
        assert scope_label(room) == label


def test_kizuna_web_offers_the_configured_web_bots_personas(tmp_path: Path) -> None:
    """Without --persona, `kizuna web` serves the configured web bot's personas, its default
    first (the page opens on it); a persona there that does not exist is refused by name."""
    (tmp_path / "kizuna.toml").write_text(
        '[[bots]]\nplatform = "web"\npersona = "nosuch"\npersonas = ["monikai"]\n',
        encoding="utf-8",
    )
    result = subprocess.run(
        [sys.executable, "-m", "adapters.command.cli", "web"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=base_env(PYTHONPATH=str(ROOT)),  # this checkout's code, wherever it is installed
        timeout=30,
    )
    assert result.returncode == 2
    assert "no persona named 'nosuch'" in result.stderr


# --- the guard on an open address ---------------------------------------------------------------


async def test_an_open_address_needs_a_token(bot: Bot) -> None:
    with pytest.raises(WebSetupError, match="inspector_token_env"):
        WebServer(bot.engine, bot.services, bot.store, bot.bank, ["pip"], host="0.0.0.0")
    client = await serve(
        WebServer(
            bot.engine,
            bot.services,
            bot.store,
            bot.bank,
            ["pip"],
            host="0.0.0.0",
            token=INSPECTOR_TOKEN,
        )
    )
    try:
        assert (await client.get("/api/personas")).status == 401
        assert (await client.get("/api/personas?token=wrong")).status == 401
        bearer = {"Authorization": f"Bearer {INSPECTOR_TOKEN}"}
        assert (await client.get("/api/personas", headers=bearer)).status == 200
        # ?token= on a page sets a cookie and drops the token from the address.
        opened = await client.get(f"/inspect?token={INSPECTOR_TOKEN}", allow_redirects=False)
        assert opened.status == 302 and opened.headers["Location"] == "/inspect"
        cookie = opened.cookies["kizuna_token"]
        assert cookie.value == INSPECTOR_TOKEN and cookie["httponly"]
        assert (await client.get("/api/personas")).status == 200  # the cookie now
        assert (await client.get("/static/style.css")).status in (200, 404)  # no token needed
        client.session.cookie_jar.clear()
        assert (await client.get("/favicon.ico")).status == 200  # asked before any token
        assert (await client.get("/api/personas")).status == 401
    finally:
        await client.close()


# --- sprites ------------------------------------------------------------------------------------


def test_sprites_fall_back_speaking_to_resting_then_to_neutral(tmp_path: Path) -> None:
    path = tmp_path / "pop.toml"
    path.write_text(
        '[identity]\nname = "Pop"\npersonality = "p"\nlanguage_style = "l"\n'
        '[emotions]\nnames = ["NEUTRAL", "HAPPY", "SAD"]\n',
        encoding="utf-8",
    )
    persona = load_persona(path)
    assert sprite_file(persona, "HAPPY", speaking=False) is None  # no folder: the placeholder
    folder = tmp_path / "assets" / "pop"
    folder.mkdir(parents=True)
    for name in ("NEUTRAL.png", "NEUTRALSPEAKING.svg", "HAPPY.webp"):
        (folder / name).write_bytes(b"picture")
    assert sprite_file(persona, "HAPPY", speaking=False) == folder / "HAPPY.webp"
    assert sprite_file(persona, "HAPPY", speaking=True) == folder / "HAPPY.webp"
    assert sprite_file(persona, "SAD", speaking=True) == folder / "NEUTRALSPEAKING.svg"
    assert sprite_file(persona, "SAD", speaking=False) == folder / "NEUTRAL.png"
    assert sprite_file(persona, "NO SUCH", speaking=False) == folder / "NEUTRAL.png"


async def test_a_persona_without_pictures_gets_a_drawn_initial(web: TestClient[Any, Any]) -> None:
    for query in ("", "?speaking=1"):
        response = await web.get(f"/sprite/pip/HAPPY{query}")
        assert response.status == 200
        assert response.content_type == "image/svg+xml"
        assert ">P</text>" in await response.text()
    assert (await web.get("/sprite/bo/HAPPY")).status == 404


# --- the inspector ------------------------------------------------------------------------------


async def remember(bot: Bot, text: str, **kwargs: Any) -> int:
    assert bot.engine.memory is not None
    return await bot.engine.memory.bank.remember(ANN, text, **kwargs)


async def test_inspector_lists_searches_plots_and_deletes(
    bot: Bot, web: TestClient[Any, Any]
) -> None:
    bees = await remember(bot, "Ann keeps bees on her roof", category="personal_daily")
    await remember(bot, "Ann's brother is a pilot", category="social_emotional", importance=3)
    bot.clock.advance(days=2)
    assert bot.engine.memory is not None
    await bot.engine.memory.bank.reinforce(ANN, [bees])
    bot.clock.advance(days=1)

    scopes = await (await web.get("/api/inspect/scopes?persona=pip")).json()
    label = "private chat with ann (console or web page)"  # the page's scopes are the console's
    assert scopes == {
        "policy": "actr",  # the default
        "scopes": [{"scope": ANN, "label": label, "memories": 2}],
    }
    listed = await (await web.get(f"/api/inspect/memories?scope={ANN}")).json()
    assert {m["text"] for m in listed} == {"Ann keeps bees on her roof", "Ann's brother is a pilot"}
    row = next(m for m in listed if m["id"] == bees)
    assert row["recalls"] == 1 and row["category"] == "personal_daily"
    assert 0 < row["retention"] <= 1 and row["age"] == "3 days ago"
    found = await (await web.get(f"/api/inspect/memories?scope={ANN}&q=bees")).json()
    assert [m["id"] for m in found] == [bees]

    curve = await (await web.get(f"/api/inspect/curve/{bees}?scope={ANN}")).json()
    assert curve["policy"] == "actr" and len(curve["recalls"]) == 1
    assert any(t > curve["now"] for t, _ in curve["points"])  # projected ahead
    assert [r for t, r in curve["points"] if t == curve["now"]] == [row["retention"]] or abs(
        next(r for t, r in curve["points"] if t == curve["now"]) - row["retention"]
    ) < 1e-3

    deleted = await web.delete(f"/api/inspect/memories/{bees}?scope={ANN}")
    assert (await deleted.json()) == {"deleted": [bees]}
    assert (await web.delete(f"/api/inspect/memories/{bees}?scope={ANN}")).status == 404
    assert await bot.engine.memory.bank.recall(ANN, "bees on the roof", fail=False) == []
    # Another persona's scope is not this page's to show.
    assert (await web.get("/api/inspect/memories?scope=bo/console:dm:ann")).status == 404


async def test_inspector_shows_the_diary_and_profile(tmp_path: Path) -> None:
    def model(messages: Sequence[Message]) -> str:
        if ENCODING_TASK in messages[0].content:
            return encoding(
                ("Ann got her first honey harvest.", "special", 3),
                diary="Ann came by beaming about honey.",
                profile="Keeps bees; brother flies planes.",
            )
        return "[HAPPY] How sweet!"

    bot = await open_bot(tmp_path / "k.sqlite3", model=ScriptedChatModel(default=model))
    client = await serve(WebServer(bot.engine, bot.services, bot.store, bot.bank, ["pip"]))
    try:
        event = make_event(
            "first honey today! Call me Annie.", platform="web", user_id="ann", user_name="Alice"
        )
        await bot.engine.handle(event)
        await bot.desk.end(event)
        await bot.lifecycle.encode_pending()
        diary = await (await client.get(f"/api/inspect/diary?scope={ANN}")).json()
        today = bot.clock.now().date().isoformat()
        assert diary == {
            "days": [today],
            "page": {"day": today, "text": "Ann came by beaming about honey."},
        }
        missing = await (await client.get(f"/api/inspect/diary?scope={ANN}&day=2001-01-01")).json()
        assert missing["page"] is None
        assert (await client.get(f"/api/inspect/diary?scope={ANN}&day=May")).status == 400
        [profile] = await (await client.get(f"/api/inspect/profile?scope={ANN}")).json()
        assert profile["text"] == "Keeps bees; brother flies planes."
        assert (profile["name"], profile["aliases"]) == ("Alice", ["Annie"])
        assert Recollector.scope("pip", "console:dm:ann") == ANN

        # What the persona means to bring up: pending ones, soonest first, named.
        now = bot.clock.now()
        exam = NewIntention(
            ANN,
            profile["user_id"],
            "follow_up",
            "her exam",
            "ask how the exam went",
            now + timedelta(days=2),
            now + timedelta(days=5),
            now,
        )
        later = await bot.store.add_intention(replace(exam, due_at=now + timedelta(days=3)))
        sooner = await bot.store.add_intention(exam)
        done = await bot.store.add_intention(replace(exam, what="the harvest"))
        await bot.store.close_intention(ANN, done, "done", now)
        await bot.store.add_intention(replace(exam, scope="pip/console:dm:bo"))
        listed = await (await client.get(f"/api/inspect/intentions?scope={ANN}")).json()
        assert [(i["id"], i["name"]) for i in listed] == [(sooner, "Alice"), (later, "Alice")]
        assert listed[0] == {
            "id": sooner,
            "user_id": profile["user_id"],
            "name": "Alice",
            "kind": "follow_up",
            "what": "her exam",
            "ask": "ask how the exam went",
            "due_at": exam.due_at.isoformat(),
            "until": exam.until.isoformat(),
            "yearly": False,
        }
        assert (await client.get("/api/inspect/intentions?scope=bo/console:dm:ann")).status == 404
    finally:
        await client.close()
        await bot.close()


# --- one conversation between the console and the page ------------------------------------------


def console(cwd: Path, typed: str) -> str:
    """`kizuna chat` as Ann with Monikai, in `cwd` (its data folder there); what it printed."""
    result = subprocess.run(
        [*KIZUNA, "chat", "--persona", "monikai", "--user", "ann"],
        cwd=cwd,
        input=typed,
        capture_output=True,
        text=True,
        env=base_env(),
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


async def test_the_console_and_the_page_share_one_conversation(tmp_path: Path) -> None:
    console(tmp_path, "I grow tomatoes on the balcony\n")
    monikai = load_persona(ROOT / "personas" / "monikai.toml")
    config = Config(data_dir=str(tmp_path / "data"))
    runtime = await open_runtime(
        config,
        {"monikai": monikai},
        base_env(),
        platforms=Platforms([CONSOLE, WEB]),
        probe=no_ollama,
    )
    client = await serve(
        WebServer(runtime.engine, runtime.services, runtime.store, runtime.bank, ["monikai"])
    )
    try:
        async with client.ws_connect("/ws?persona=monikai&user=ann") as ws:
            history = await receive(ws, "history")
            said = [t["text"] for t in history["turns"] if t["role"] == "user"]
            assert said == ["I grow tomatoes on the balcony"]
            await ws.send_json({"text": "and basil by the window"})
            assert "(offline model)" in (await receive(ws, "reply"))["text"]
    finally:
        await client.close()
        await runtime.close()
    log = console(tmp_path, "log\n")
    assert "I grow tomatoes on the balcony" in log and "and basil by the window" in log


async def test_a_document_from_the_page_opens_document_mode(
    bot: Bot, web: TestClient[Any, Any]
) -> None:
    bot.model.push("Notes about a ferry to Bergen.")
    query = "/api/document?persona=pip&user=ann&name=trip.txt"
    answer = await (await web.post(query, data=b"The ferry leaves at 7:40.")).json()
    assert answer["type"] == "reply" and answer["text"].startswith("I've read trip.txt.")
    session = await bot.engine.session(make_event(platform="web", user_id="ann"))
    assert session.reading is not None and session.reading.name == "trip.txt"
    unsupported = await web.post(query.replace("trip.txt", "song.mp3"), data=b"ID3")
    assert (await unsupported.json())["text"].startswith("song.mp3: .mp3 files are not supported")
    other_site = await web.post(query, data=b"x", headers={"Origin": "https://evil.example"})
    assert other_site.status == 403


async def test_a_picture_from_the_page_is_looked_at_and_kept_in_words(
    bot: Bot, web: TestClient[Any, Any]
) -> None:
    bot.model.push("A red square on white.", "[HAPPY] Striking!")
    query = "/api/document?persona=pip&user=ann&name=art.png"
    png = {"Content-Type": "image/png"}
    answer = await (await web.post(query, data=make_picture(1500, 1500), headers=png)).json()
    assert answer == {"type": "reply", "text": "Striking!", "emotion": "HAPPY", "failed": False}
    [jpeg] = bot.model.calls[0].messages[-1].images
    assert jpeg.startswith(b"\xff\xd8")  # shrunk to a JPEG
    session = await bot.engine.session(make_event(platform="web", user_id="ann"))
    assert session.turns[0].text == "[picture art.png, seen: A red square on white.]"
    broken = await web.post(query.replace("art.png", "x.jpg"), data=b"\xff\xd8 no", headers=png)
    assert (await broken.json())["text"].startswith("I couldn't open x.jpg")
