"""The web client: a chat page with the persona's face, and a memory inspector, served by aiohttp
over the same Engine as every other adapter.

    server = WebServer(engine, services, store, bank, ["monikai", "miao"], port=3000)
    await server.start()          # http://127.0.0.1:3000/ and /inspect
    ...
    await server.close()          # waits for replies still being written

The page talks over one WebSocket per conversation (`/ws?persona=P&user=NAME`): the server
sends the conversation so far with what the page checks before sending (the length limit, and
the words that are commands), then a reply for each message. A reply is produced even when
the socket closes mid-turn: the turn is in the session, and the page shows it on return. The
user is the name typed on the page; the page and the console share one conversation per name
(bot/conversation/sessions.py), and take commands alike: `/help`, or a command word alone (`help`).
The personas are offered in the order given, the first the default.

Bound to a loopback address the server needs no token: only this machine reaches it,
cross-site pages are turned away by their Origin, and requests by any other name than this
machine's by their Host (a site's name re-pointed at 127.0.0.1, DNS rebinding). Bound
elsewhere it refuses to start without one, and every page, API call and socket must carry it
(`?token=` once sets a cookie).

`PLATFORM` is what a persona may do on the page (bot.platforms); `KIND` starts the web client
of a `platform = "web"` bot (adapters.kinds).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import aiohttp
from aiohttp import WSMsgType, web

from adapters.console import USER_NAME, USER_NAME_RULE
from adapters.kinds import Kind, Level, unset
from adapters.surface import Surface
from adapters.web.sprites import placeholder, sprite_file
from bot import redact
from bot.catalogue import say
from bot.commands import table as commands
from bot.commands.answers import Answer
from bot.commands.memory import intention_json
from bot.commands.services import Services
from bot.config import BotConfig, Config
from bot.events import Attachment, ChatEvent, FetchError, Reply
from bot.front import Front
from bot.media.documents import DocumentError, precheck, too_big
from bot.media.pictures import is_picture
from bot.persona.file import Persona
from bot.platforms import Platform
from bot.prompts import describe_age
from bot.runtime.assemble import Runtime
from bot.spoken import Spoken
from bot.turn.engine import Engine
from memory.bank import MAX_SCOPE
from memory.errors import KizunaError
from memory.forgetting import ForgettingPolicy
from memory.forgetting.curve import RetentionCurve
from memory.records import Intention, Memory
from memory.scopes import NotAScope, Scope
from memory.storage import JournalStore

__all__ = [
    "KIND",
    "MAX_FRAME",
    "MIN_TOKEN",
    "PLATFORM",
    "InspectorStore",
    "WebServer",
    "WebSetupError",
    "is_loopback",
    "scope_label",
    "weak_token",
    "web_token",
]

log = logging.getLogger(__name__)

# Commands are typed; a private chat here is the console's, by the name typed on either.
PLATFORM = Platform("web", limit=4000, typed_commands=True, private_as="console")
MAX_FRAME = 64 * 1024  # bytes in one WebSocket frame; a message is bounded in characters too
# Characters of the token at least: a word or a PIN is guessed; 16 random ones are not.
MIN_TOKEN = 16
COOKIE = "kizuna_token"
# The pages load their own scripts and styles and talk to this server only.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self';"
    " connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
# Commands typed without the slash, as on the console: a line that is one of these words alone.
BARE_COMMANDS = frozenset(c.name for c in commands.offered_on(PLATFORM))
# What the browser asks for on its own, before any page could hand it a token.
OPEN_PATHS = ("/static/", "/favicon.ico")


class InspectorStore(JournalStore, Protocol):
    """What the inspector reads beside the memory bank: every scope of a persona (with
    memories, or a conversation), how many memories each holds, diary pages, profiles, and
    what the persona means to bring up (IntentionStore's reading)."""

    async def intentions(
        self, scope: str, user_id: str | None = None, *, open_only: bool = True
    ) -> list[Intention]: ...

    async def scopes(self) -> list[str]: ...

    async def session_places(self, persona: str) -> list[str]: ...

    async def count_memories(self, scope: str) -> int: ...


class InspectedMemory(Protocol):
    """What the inspector asks of the memory bank (memory.bank.MemoryBank): a scope's
    memories with their retention, one deleted, one's forgetting curve, the scope's policy."""

    async def inspect(
        self, scope: str, query: str | None = None, *, limit: int = ...
    ) -> list[tuple[Memory, float]]: ...

    async def forget(self, scope: str, target: int | str) -> list[Memory]: ...

    async def curve(self, scope: str, memory_id: int) -> RetentionCurve | None: ...

    def policy(self, scope: str) -> ForgettingPolicy: ...


class WebSetupError(KizunaError):
    """The server cannot start as configured; the message says why."""


def weak_token(length: int) -> str:
    """What is wrong with a token too short, without repeating it."""
    return (
        f"the web client's token is {length} characters; it needs at least {MIN_TOKEN} "
        "(random ones: python3 -c 'import secrets; print(secrets.token_urlsafe())')"
    )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _static() -> Path:
    return Path(str(resources.files("adapters.web") / "static"))


class WebServer:
    def __init__(
        self,
        engine: Engine,
        services: Services,
        store: InspectorStore,
        memory: InspectedMemory | None,
        personas: Sequence[str],
        *,
        host: str = "127.0.0.1",
        port: int = 3000,
        token: str = "",
        max_message_chars: int = 4000,
        bot_id: str = "web",
    ) -> None:
        if not is_loopback(host) and not token:
            raise WebSetupError(
                f"the web client will not listen on {host} without a token: set "
                "[web] inspector_token_env to a variable holding one (the inspector shows and "
                "deletes everyone's memories)"
            )
        if token and len(token) < MIN_TOKEN:
            raise WebSetupError(weak_token(len(token)))
        if not personas:
            raise WebSetupError("the web client needs at least one persona")
        self.engine = engine
        self.store = store  # what the inspector reads
        self.memory = memory  # and deletes (None: long-term memory is off)
        self.personas = list(dict.fromkeys(personas))
        # The page picks whom the user talks to: one front per persona, so none is chosen
        # for it.
        self._chats = {
            key: _Chat(Front(engine, services, bot_id, key), bot_id) for key in self.personas
        }
        self.host, self.port = host, port
        self.max_message_chars = max_message_chars
        self.bot_id = bot_id
        self._token = token
        redact.hide(token)
        self._runner: web.AppRunner | None = None
        self._turns: set[asyncio.Task[Any]] = set()
        self._sockets: set[web.WebSocketResponse] = set()

    # -- lifecycle

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def app(self) -> web.Application:
        # Request bodies are documents or pictures at most (chat goes over the socket, in
        # small frames).
        body_limit = max(self.engine.documents.limit, self.engine.senses.pictures.limit) + MAX_FRAME
        app = web.Application(middlewares=[self._guard], client_max_size=body_limit)
        static = _static()
        routes = [
            web.get("/", self._page("chat.html")),
            web.get("/inspect", self._page("inspect.html")),
            web.get("/ws", self._socket),
            web.get("/sprite/{persona}/{emotion}", self._sprite),
            web.get("/favicon.ico", self._favicon),
            web.get("/api/personas", self._api_personas),
            web.post("/api/document", self._api_document),
            web.get("/api/inspect/scopes", self._api_scopes),
            web.get("/api/inspect/memories", self._api_memories),
            web.delete("/api/inspect/memories/{id:\\d+}", self._api_delete),
            web.get("/api/inspect/curve/{id:\\d+}", self._api_curve),
            web.get("/api/inspect/diary", self._api_diary),
            web.get("/api/inspect/profile", self._api_profile),
            web.get("/api/inspect/intentions", self._api_intentions),
            web.static("/static", static),
        ]
        app.add_routes(routes)
        return app

    async def start(self) -> None:
        """Listen; raises OSError (with the address) if the port is taken."""
        self._runner = web.AppRunner(self.app(), access_log=None, shutdown_timeout=2.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        try:
            await site.start()
        except OSError as e:
            await self._runner.cleanup()
            self._runner = None
            raise OSError(e.errno, f"cannot listen on {self.host}:{self.port}: {e.strerror}") from e
        if self.port == 0:  # tests ask for any free port
            self.port = int(self._runner.addresses[0][1])

    async def close(self) -> None:
        # Say goodbye on open sockets first: else the server waits out its shutdown timeout.
        for ws in list(self._sockets):
            await ws.close(code=aiohttp.WSCloseCode.GOING_AWAY, message=b"server stopping")
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._turns:  # replies still being written go into their sessions first
            await asyncio.gather(*self._turns, return_exceptions=True)

    # -- guard: token, origin, headers

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if not self._token and not is_loopback(_hostname(request.host).lower()):
            # Without a token only this machine may ask, and by this machine's name: a page
            # whose own name was re-pointed at 127.0.0.1 (DNS rebinding) sends its own Host,
            # and would otherwise read the inspector as a same-origin page.
            log.warning(
                "refused %s %s from %s: Host %r is not this machine",
                request.method,
                request.path,
                request.remote,
                request.host[:200],
            )
            raise web.HTTPForbidden(text="this Kizuna answers to 127.0.0.1 and localhost only")
        if self._token and not request.path.startswith(OPEN_PATHS):
            given = request.query.get("token") or request.cookies.get(COOKIE, "")
            bearer = request.headers.get("Authorization", "").removeprefix("Bearer ")
            if not (_same(given, self._token) or _same(bearer, self._token)):
                log.warning(
                    "refused %s %s from %s: %s",
                    request.method,
                    request.path,
                    request.remote,
                    "a wrong token" if given or bearer else "no token",
                )
                raise web.HTTPUnauthorized(text="This Kizuna needs its token: open ?token=...")
            if "token" in request.query and request.path in ("/", "/inspect"):
                found = web.HTTPFound(request.path)  # keep the token out of the address bar
                found.set_cookie(COOKIE, self._token, httponly=True, samesite="Strict")
                raise found
        if request.method != "GET" or request.path == "/ws":
            # A page of another site may not drive this one (a socket is not covered by CORS).
            origin = request.headers.get("Origin")
            if origin is not None and origin != f"{request.scheme}://{request.host}":
                log.warning(
                    "refused %s %s from %s: cross-site, Origin %r",
                    request.method,
                    request.path,
                    request.remote,
                    origin[:200],
                )
                raise web.HTTPForbidden(text="cross-site request refused")
        response = await handler(request)
        response.headers.setdefault("Content-Security-Policy", CSP)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        return response

    # -- pages and pictures

    def _page(self, name: str) -> Handler:
        async def page(request: web.Request) -> web.StreamResponse:
            return web.FileResponse(_static() / name, headers={"Cache-Control": "no-cache"})

        return page

    def _persona(self, key: str) -> Persona:
        if key not in self.personas:
            log.info("refused: no such persona here (a name of %d characters)", len(key))
            raise web.HTTPNotFound(text=f"no persona {key[:100]!r} here")
        return self.engine.personas[key]

    async def _sprite(self, request: web.Request) -> web.StreamResponse:
        persona = self._persona(request.match_info["persona"])
        speaking = request.query.get("speaking") == "1"
        path = sprite_file(persona, request.match_info["emotion"], speaking=speaking)
        headers = {"Cache-Control": "max-age=300"}
        if path is None:
            svg = placeholder(persona, speaking=speaking)
            return web.Response(text=svg, content_type="image/svg+xml", headers=headers)
        return web.FileResponse(path, headers=headers)

    async def _favicon(self, request: web.Request) -> web.StreamResponse:
        # The pages link the icon; this is for a browser that asks for /favicon.ico anyway.
        return web.FileResponse(
            _static() / "favicon.svg",
            headers={"Content-Type": "image/svg+xml", "Cache-Control": "max-age=86400"},
        )

    async def _api_personas(self, request: web.Request) -> web.StreamResponse:
        return web.json_response(
            [
                {
                    "key": key,
                    "name": p.identity.name,
                    "nickname": p.identity.nickname,
                    "language": p.identity.language,
                    "emotions": p.emotions.names,
                    "neutral": p.emotions.neutral,
                }
                for key in self.personas
                for p in [self.engine.personas[key]]
            ]
        )

    # -- chat

    def _event(self, persona: str, user: str, text: str) -> ChatEvent:
        return self._chats[persona].event("web", user, user, text, is_dm=True)

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        persona = self._persona(request.query.get("persona", ""))
        user = request.query.get("user", "").strip()
        if not USER_NAME.fullmatch(user):
            log.info("refused %s: not a user name (%d characters)", request.path, len(user))
            raise web.HTTPBadRequest(text=USER_NAME_RULE)
        ws = web.WebSocketResponse(max_msg_size=MAX_FRAME, heartbeat=30)
        await ws.prepare(request)
        self._sockets.add(ws)
        try:
            await self._converse(ws, persona, user)
        finally:
            self._sockets.discard(ws)
        return ws

    async def _converse(self, ws: web.WebSocketResponse, persona: Persona, user: str) -> None:
        chat = self._chats[persona.key]
        # A card's greeting opens the very first conversation: the history shows it.
        await self.engine.greet(self._event(persona.key, user, ""))
        await ws.send_json(await self._history(persona, user))
        async for frame in ws:
            if frame.type != WSMsgType.TEXT:
                continue
            try:
                said = frame.json()
                text = str(said.get("text", "")) if isinstance(said, dict) else ""
            except (ValueError, RecursionError):  # not JSON, or "[[[[..." nested too deeply
                text = ""
            if not text.strip():
                continue
            if len(text) > self.max_message_chars:
                # "refused": the page puts the text back in the box, to be shortened.
                await ws.send_json(
                    {"type": "error", "text": self._too_long(persona), "refused": True}
                )
                continue
            command = _command(text)
            if command is not None:
                # A command typed on the page, or a button of one pressed, which types it.
                name, argument = command
                await chat.command(ws, self._event(persona.key, user, ""), name, argument)
                continue
            # The turn runs on, into the session, even if the page goes away meanwhile.
            turn = asyncio.ensure_future(chat.receive(ws, self._event(persona.key, user, text)))
            self._turns.add(turn)
            turn.add_done_callback(self._turns.discard)
            await asyncio.shield(turn)

    async def _api_document(self, request: web.Request) -> web.StreamResponse:
        """A document or picture the page sends (the file as the body, its name in `name`):
        read or looked at like a file sent on a chat platform; answered like a message."""
        persona = self._persona(request.query.get("persona", ""))
        user = request.query.get("user", "").strip()
        name = request.query.get("name", "").strip()[:200] or "document"
        if not USER_NAME.fullmatch(user):
            log.info("refused %s: not a user name (%d characters)", request.path, len(user))
            raise web.HTTPBadRequest(text=USER_NAME_RULE)
        if is_picture(Attachment(name, "", request.content_type)):
            return await self._picture(request, persona, user, name)
        try:
            precheck(name, request.content_length or 0, limit_bytes=self.engine.documents.limit)
        except DocumentError as e:
            said = e.said(persona.identity.language)
            return web.json_response({"type": "error", "text": said})
        try:
            data = await request.read()
        except web.HTTPRequestEntityTooLarge:  # sent without a Content-Length: found reading
            error = too_big(name, None, self.engine.documents.limit)
            said = error.said(persona.identity.language)
            return web.json_response({"type": "error", "text": said})
        event = self._event(persona.key, user, "")
        turn = asyncio.ensure_future(self._chats[persona.key].front.read(event, name, data))
        self._turns.add(turn)
        turn.add_done_callback(self._turns.discard)
        reply = await asyncio.shield(turn)
        return web.json_response(_reply(reply))

    async def _picture(
        self, request: web.Request, persona: Persona, user: str, name: str
    ) -> web.StreamResponse:
        """A picture the page sends: looked at like a photo sent on a chat platform (refused
        by its declared size before it is read), answered like a message."""
        declared = request.content_length or 0

        async def fetch() -> bytes:
            try:
                return await request.read()
            except web.HTTPRequestEntityTooLarge:  # sent without a Content-Length
                raise FetchError(
                    f"a picture over {self.engine.senses.pictures.limit} bytes"
                ) from None

        kind = request.content_type if request.content_type.startswith("image/") else ""
        picture = Attachment(name, "", kind, declared, fetch)
        event = replace(self._event(persona.key, user, ""), attachments=(picture,))
        turn = asyncio.ensure_future(self._chats[persona.key].front.receive(event))
        self._turns.add(turn)
        turn.add_done_callback(self._turns.discard)
        spoken = await asyncio.shield(turn)
        return web.json_response(_reply(spoken.reply if spoken else Reply("", "")))

    def _too_long(self, persona: Persona) -> str:
        limit = str(self.max_message_chars)
        return say(persona.identity.language, "message_too_long", limit=limit)

    async def _history(self, persona: Persona, user: str) -> dict[str, Any]:
        session = await self.engine.session(self._event(persona.key, user, ""))
        async with session.lock:
            turns = [
                {
                    "role": t.role,
                    "speaker": t.speaker,
                    "text": t.text,
                    "emotion": t.emotion,
                    "at": t.at.isoformat(),
                }
                for t in session.turns
            ]
            recap = session.summary or session.recap
        emotion = next((t["emotion"] for t in reversed(turns) if t["emotion"]), "")
        return {
            "type": "history",
            "turns": turns,
            "recap": recap,
            "emotion": persona.emotion(emotion),
            # What the page checks before sending, so nothing it shows as sent is refused.
            "limit": self.max_message_chars,
            "too_long": self._too_long(persona),
            "hello": say(persona.identity.language, "page_hello", name=persona.identity.name),
            "commands": sorted(BARE_COMMANDS),
        }

    # -- inspector

    def _scope(self, request: web.Request) -> str:
        scope = request.query.get("scope", "")
        try:
            persona = Scope.parse(scope).persona
        except NotAScope:
            persona = ""
        if persona not in self.personas or len(scope) > MAX_SCOPE:
            log.info(
                "inspector: refused %s: no such scope here (%d characters)",
                request.path,
                len(scope),
            )
            raise web.HTTPNotFound(text=f"no scope {scope[:200]!r} here")
        if self.memory is None:
            raise web.HTTPConflict(text="long-term memory is off")
        return scope

    async def _api_scopes(self, request: web.Request) -> web.StreamResponse:
        persona = self._persona(request.query.get("persona", ""))
        store = self.store
        prefix = f"{persona.key}/"
        found = {s for s in await store.scopes() if s.startswith(prefix)}
        found |= {prefix + place for place in await store.session_places(persona.key)}
        scopes = []
        for scope in sorted(found):
            count = await store.count_memories(scope)
            label = scope_label(scope.removeprefix(prefix))
            scopes.append({"scope": scope, "label": label, "memories": count})
        return web.json_response({"policy": persona.memory.forgetting, "scopes": scopes})

    def _memory_json(self, memory: Memory, retention: float) -> dict[str, Any]:
        now = self.engine.clock.now()
        return {
            "id": memory.id,
            "text": memory.text,
            "speaker": memory.speaker,
            "kind": memory.kind,
            "category": memory.category,
            "importance": memory.importance,
            "sentiment": round(memory.sentiment, 2),
            "created_at": memory.created_at.isoformat(),
            "age": describe_age(memory.created_at, now),
            "recalls": memory.recall_count,
            "retention": round(retention, 3),
        }

    async def _api_memories(self, request: web.Request) -> web.StreamResponse:
        scope = self._scope(request)
        assert self.memory is not None
        query = request.query.get("q", "")[:200]
        found = await self.memory.inspect(scope, query or None, limit=500)
        return web.json_response([self._memory_json(m, r) for m, r in found])

    async def _api_delete(self, request: web.Request) -> web.StreamResponse:
        scope = self._scope(request)
        assert self.memory is not None
        gone = await self.memory.forget(scope, int(request.match_info["id"]))
        if not gone:
            raise web.HTTPNotFound(text="no such memory in this scope")
        log.info("inspector deleted memory %s of %s", gone[0].id, scope)
        return web.json_response({"deleted": [m.id for m in gone]})

    async def _api_curve(self, request: web.Request) -> web.StreamResponse:
        scope = self._scope(request)
        assert self.memory is not None
        curve = await self.memory.curve(scope, int(request.match_info["id"]))
        if curve is None:
            raise web.HTTPNotFound(text="no such memory in this scope")
        return web.json_response(
            {
                "now": curve.now.isoformat(),
                "points": [[t.isoformat(), r] for t, r in curve.points],
                "recalls": [t.isoformat() for t in curve.recalls],
                "policy": self.memory.policy(scope).name,
            }
        )

    async def _api_diary(self, request: web.Request) -> web.StreamResponse:
        scope = self._scope(request)
        store = self.store
        pages = await store.diary_entries(scope, limit=366)
        wanted = request.query.get("day", "")
        try:
            day = date.fromisoformat(wanted) if wanted else None
        except ValueError:
            raise web.HTTPBadRequest(text="day is YYYY-MM-DD") from None
        page = next((p for p in pages if p.day == day), pages[0] if pages and day is None else None)
        return web.json_response(
            {
                "days": [p.day.isoformat() for p in pages],
                "page": None if page is None else {"day": page.day.isoformat(), "text": page.text},
            }
        )

    async def _api_profile(self, request: web.Request) -> web.StreamResponse:
        scope = self._scope(request)
        profiles = await self.store.profiles(scope)
        return web.json_response(
            [
                {
                    "user_id": p.user_id,
                    "name": p.name,
                    "aliases": list(p.aliases),
                    "text": p.text,
                    "updated_at": p.updated_at.isoformat(),
                }
                for p in profiles
            ]
        )

    async def _api_intentions(self, request: web.Request) -> web.StreamResponse:
        """The scope's pending intentions, soonest first, named by their user's profile."""
        scope = self._scope(request)
        names = {p.user_id: p.name for p in await self.store.profiles(scope)}
        return web.json_response(
            [
                {**intention_json(i), "user_id": i.user_id, "name": names.get(i.user_id, "")}
                for i in await self.store.intentions(scope)
            ]
        )


_PLATFORMS = {"discord": ("Discord", "server"), "telegram": ("Telegram", "group")}


def scope_label(place: str) -> str:
    """A scope's place (bot.conversation.sessions.scope_key) as the inspector names it for
    people: the console's private chats are the web page's too. A place of another form is
    shown as is."""
    parts = place.split(":")
    if len(parts) == 3 and parts[1] == "dm":
        surface, _, user = parts
        if surface == "console":
            return f"private chat with {user} (console or web page)"
        if surface in _PLATFORMS:
            return f"{_PLATFORMS[surface][0]} private chat with user {user}"
    if len(parts) == 4 and parts[0] in _PLATFORMS:
        platform, where = _PLATFORMS[parts[0]]
        surface, chat, kind, who = parts
        if kind == "channel":
            named = f"{where} {chat}, channel {who}" if chat != who else f"{where} {chat}"
            return f"{platform} {named}, shared by everyone there"
        if kind == "user":
            return f"{platform} {where} {chat}: user {who}'s own conversation"
    if len(parts) == 6 and parts[0] in _PLATFORMS and parts[2:5:2] == ["channel", "user"]:
        platform, where = _PLATFORMS[parts[0]]
        surface, chat, _, channel, _, who = parts
        return f"{platform} {where} {chat}, channel {channel}: user {who}'s own conversation"
    return place


def _command(text: str) -> tuple[str, str] | None:
    """(name, argument) of a command: `/name argument`, or a command word alone (as the
    console takes them: "remember when we..." is said to the persona); None for a message."""
    word, _, argument = text.strip().partition(" ")
    if word.startswith("/"):
        return word[1:].lower(), argument.strip()
    if not argument and word.lower() in BARE_COMMANDS:
        return word.lower(), ""
    return None


def _hostname(host: str) -> str:
    """The name in a Host header, without its port ("[::1]:3000" -> "::1")."""
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rpartition(":")[0] if host.count(":") == 1 else host


def _same(given: str, token: str) -> bool:
    """Whether `given` is the token, in constant time. A header that was not UTF-8 arrives
    with lone surrogates, which the codec must let through to be merely wrong."""
    return bool(given) and hmac.compare_digest(
        given.encode("utf-8", "surrogatepass"), token.encode("utf-8", "surrogatepass")
    )


class _Chat(Surface[web.WebSocketResponse]):
    """One persona's conversations on the page, a socket each. The page waits for an answer
    to everything it sends: a reply (or an error) to a message, a note to a command. A
    reply for a page gone meanwhile is only kept in the session."""

    platform = PLATFORM.name

    async def _send_json(self, ws: web.WebSocketResponse, said: dict[str, Any]) -> None:
        if not ws.closed:
            await ws.send_json(said)

    async def send(self, where: web.WebSocketResponse, chunks: Sequence[str]) -> None:
        for chunk in chunks:
            await self._send_json(where, _note(Answer(chunk)))

    @contextlib.asynccontextmanager
    async def _thinking(self, ws: web.WebSocketResponse) -> AsyncIterator[None]:
        await self._send_json(ws, {"type": "thinking"})
        yield

    def typing(self, where: web.WebSocketResponse) -> AbstractAsyncContextManager[object]:
        return self._thinking(where)

    async def speak(self, where: web.WebSocketResponse, spoken: Spoken) -> None:
        await self._send_json(where, _reply(spoken.reply))

    async def apologise(self, where: web.WebSocketResponse) -> None:
        apology = self.engine.personas[self.persona].apology()
        await self._send_json(where, {"type": "error", "text": apology})

    async def answer(self, event: ChatEvent, name: str, argument: str = "") -> Answer:
        return await super().answer(event, name, argument) or Answer("")

    async def show(self, where: web.WebSocketResponse, event: ChatEvent, answer: Answer) -> None:
        """A note, not the persona's reply, with the answer's buttons."""
        await self._send_json(where, _note(answer))


def _reply(reply: Reply) -> dict[str, Any]:
    return {"type": "reply", "text": reply.text, "emotion": reply.emotion, "failed": reply.failed}


def _note(answer: Answer) -> dict[str, Any]:
    """A command's answer as the page shows it; a button types its command when pressed."""
    buttons = [
        {
            "label": b.label,
            "text": f"/{b.command} {b.argument}".strip(),
            "danger": b.danger,
        }
        for b in answer.buttons
    ]
    return {"type": "note", "text": answer.text, "buttons": buttons}


def _start(
    runtime: Runtime, config: Config, bot: BotConfig, token: str, secret: str, bot_id: str
) -> WebServer:
    web = config.web
    return WebServer(
        runtime.engine,
        runtime.services,
        runtime.store,
        runtime.bank,
        bot.hosted,
        host=web.host,
        port=web.port,
        token=token,
        max_message_chars=web.max_message_chars,
        bot_id=bot_id,
    )


def web_token(config: Config, environ: Mapping[str, str]) -> str:
    """The web client's inspector token, or the configuration's one-line error: a variable
    that is not set, a token short enough to guess, an open address without one."""
    web = config.web
    token = environ.get(web.inspector_token_env, "").strip() if web.inspector_token_env else ""
    if web.inspector_token_env and not token:
        what = "the web client's token"
        raise unset(config, ("web", "inspector_token_env"), web.inspector_token_env, what)
    if token and len(token) < MIN_TOKEN:
        raise config.error(("web", "inspector_token_env"), weak_token(len(token)))
    if not token and not is_loopback(web.host):
        raise config.error(
            ("web", "host"),
            f"the web client would show everyone's memories on {web.host}: set "
            "inspector_token_env to a variable holding a token, or listen on 127.0.0.1",
        )
    return token


async def _check(bot: BotConfig, token: str) -> tuple[Level, str]:
    return "ok", "served by `kizuna run` on this machine"


def _up(config: Config, bot: BotConfig) -> str:
    web = config.web
    host = f"[{web.host}]" if ":" in web.host else web.host
    where = f"http://{host}:{web.port}/ (inspector: /inspect)"
    return f"web client is up at {where}: {', '.join(bot.hosted)}"


KIND = Kind(PLATFORM, _start, _check, own_token=web_token, up=_up)
