"""A fake of Discord's REST API and gateway on 127.0.0.1, for the real discord.py client.

    async with FakeDiscord() as fake:
        monkeypatch.setattr(discord.http.Route, "BASE", fake.api_base)
        monkeypatch.setattr(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", fake.gateway_url)
        ...start a client with token "t"...
        await fake.dispatch_message(fake.channel_id, 42, "<@bot> hi", mentions_bot=True)
        sent = await fake.next_message()                 # what the bot posted
        await fake.slash("recall", {"query": "cat"}, user_id=42)
        deferred, followup = await fake.next_response(), await fake.next_response()
        await fake.click(followup, "Cancel", user_id=42)  # press a button under it

The gateway speaks text frames (no zlib): HELLO, heartbeat ACKs, and READY + GUILD_CREATE (one
guild with one text channel and @everyone) after IDENTIFY. REST answers what the bot needs to
log in, send messages, show typing, sync application commands and answer interactions. Every
request is recorded in `requests`; sent messages and interaction responses (callbacks and
follow-ups, with `_message`: the message as the fake stored it, and `_files`: uploaded files by
name) are also queued so a test can await them. Synced commands are kept in `commands`.

More bots join the guild through `bots` (token -> user id; any other token is `bot_id`), so
several clients in one process each log in as their own bot; a message a bot posted carries
`_bot`, that bot's user id.

Sharding as Discord does it: each IDENTIFY names its `shard: [id, count]` (none: shard 0 of
1), and a guild's events (GUILD_CREATE, MESSAGE_CREATE, INTERACTION_CREATE, GUILD_MEMBER_ADD)
go only to the session whose shard id is `(guild_id >> 22) % count`, a DM's to shard 0. More
guilds come with `add_guild`; `delivered` says which shard got each event; GET /gateway/bot
recommends `recommended_shards`.

A bot opens a user's DM by id (one DM channel per user, in `dms`); a message there is refused
(403, code 50007) to a user in `closed_dms` (DMs closed, no shared server, the bot blocked).
`fail("POST /channels/*/messages", how)` makes the next requests matching a pattern fail as a
network does (`Fault`).
"""

from __future__ import annotations

import asyncio
import fnmatch
import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Literal
from urllib.parse import quote, unquote

import yarl
from aiohttp import WSMsgType, web

__all__ = ["FakeDiscord", "Fault", "RecordedRequest"]

JSON = "application/json"  # exactly: discord.py reads "...; charset=utf-8" as text
# How a request fails on demand. outage: the server answers 503 and does nothing (503: the
# 5xx discord.py does not retry by itself). drop: it does what was asked, then closes the
# connection without an answer.
Fault = Literal["outage", "drop"]


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    body: Any  # decoded JSON (payload_json for multipart), or None


GUILD_MEMBERS = 1 << 1  # the privileged intent of member joins
VIEW_CHANNEL = 1 << 10


def _json(data: Any, status: int = 200) -> web.Response:
    body = json.dumps(data).encode()
    return web.Response(body=body, status=status, headers={"Content-Type": JSON})


ALL_PERMISSIONS = 2147483647  # what the fake grants unless a test says otherwise


class FakeDiscord:
    """One guild, one text channel, one bot user; users are made up from their ids."""

    def __init__(self, *, bot_id: int = 1000, app_id: int = 1000, port: int = 0) -> None:
        self.bot_id = bot_id
        # More bots in the same guild, by token (any other token is `bot_id`): several
        # clients in one process each log in as their own bot.
        self.bots: dict[str, int] = {}
        self.app_id = app_id
        # The application's flags: the Message Content intent switched on in the portal (the
        # "limited" flag, as for a bot in fewer than 100 servers).
        self.app_flags = 1 << 19
        self.guild_id = 2000
        self.channel_id = 3000
        self.mods_channel_id = 3001  # a second channel of the guild, "mods"
        # The guild's other text channels, as GUILD_CREATE gives them (`add_channel`).
        self.channels: list[dict[str, Any]] = []
        # More guilds, by id -> their one text channel (`add_guild`): a bot split into shards
        # hears each guild on the shard owning it.
        self.guilds: dict[int, int] = {}
        self.recommended_shards = 1  # how many shards GET /gateway/bot tells a bot to run
        self.roles = {2100: "Regular", 2200: "Muted"}  # the guild's roles besides @everyone
        self.nicks: dict[int, str] = {}  # members' nicknames in the guild, by user id
        # What @everyone may do, and what each role adds (none unless a test says so): the
        # guild's roles as the client caches them at connection.
        self.everyone_permissions = ALL_PERMISSIONS
        self.role_permissions: dict[int, int] = {}
        self.names: dict[int, str] = {}  # users' display names (default "User<id>")
        self.requests: list[RecordedRequest] = []
        self.messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        # Channel webhooks the bot made, by channel id; without Manage Webhooks it may not.
        self.webhooks: dict[str, list[dict[str, Any]]] = {}
        self.manage_webhooks = True
        self.responses: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        # Reactions the bots added: {"channel_id", "message_id", "emoji", "_bot"}, in order.
        self.reactions: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.commands: dict[str, list[dict[str, Any]]] = {}  # route path -> synced commands
        self._ids = itertools.count(10_000)
        self._seq = itertools.count(1)
        self._sockets: list[web.WebSocketResponse] = []
        self.shards: dict[web.WebSocketResponse, tuple[int, int]] = {}  # (shard id, count)
        # Each gateway event sent: (its type, its payload's id, the (shard id, count) of the
        # session it went to), in order.
        self.delivered: list[tuple[str, str, tuple[int, int]]] = []
        self._socket_bots: dict[web.WebSocketResponse, int] = {}  # whose connection it is
        self.intents: dict[web.WebSocketResponse, int] = {}  # the intents each identified with
        self._channels: dict[str, str] = {}  # interaction id -> its channel id
        self._pressed: dict[str, str] = {}  # component interaction id -> its message id
        self._identified = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._files: dict[str, bytes] = {}  # attachment id -> content, served on its url
        self.dms: dict[str, int] = {}  # DM channel id -> the user it is with
        self.closed_dms: set[int] = set()  # users who receive no DM from the bot
        # (request pattern, how: None to succeed), the next first
        self._faults: list[tuple[str, Fault | None]] = []
        self.port = port  # 0: any free port

    # -- lifecycle

    async def __aenter__(self) -> FakeDiscord:
        app = web.Application()
        app.router.add_get("/", self._gateway)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._rest)
        app.router.add_get("/attachments/{id}/{name}", self._attachment_file)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = int(self._runner.addresses[0][1])
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for ws in list(self._sockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> yarl.URL:
        return yarl.URL(f"ws://127.0.0.1:{self.port}/")

    # -- payloads

    def _id(self) -> str:
        return str(next(self._ids))

    def user(self, user_id: int, *, bot: bool = False) -> dict[str, Any]:
        name = "kizuna" if bot else f"user{user_id}"
        return {
            "id": str(user_id),
            "username": name,
            "global_name": self.names.get(user_id, name.title()),
            "discriminator": "0",
            "avatar": None,
            "bot": bot,
        }

    def _member(
        self, user_id: int, permissions: int = ALL_PERMISSIONS, roles: Sequence[int] = ()
    ) -> dict[str, Any]:
        return {
            "user": self.user(user_id),
            "nick": self.nicks.get(user_id),
            "roles": [str(r) for r in roles],
            "flags": 0,
            "joined_at": datetime.now(UTC).isoformat(),
            "permissions": str(permissions),
        }

    def _message(
        self, channel_id: int | str, author: dict[str, Any], content: str, **extra: Any
    ) -> dict[str, Any]:
        return {
            "id": self._id(),
            "channel_id": str(channel_id),
            "type": 0,
            "content": content,
            "author": author,
            "timestamp": datetime.now(UTC).isoformat(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": False,
            **extra,
        }

    def attachment(
        self,
        filename: str,
        content: bytes,
        *,
        content_type: str = "text/plain",
        size: int | None = None,
    ) -> dict[str, Any]:
        """An attachment for `dispatch_message` whose url this fake serves; `size` is what
        Discord declares (its length unless given)."""
        attachment_id = self._id()
        self._files[attachment_id] = content
        # Quoted, as Discord's CDN links are: a name may hold "?", "#", "{".
        name = quote(filename, errors="replace")
        url = f"http://127.0.0.1:{self.port}/attachments/{attachment_id}/{name}"
        return {
            "id": attachment_id,
            "filename": filename,
            "size": len(content) if size is None else size,
            "url": url,
            "proxy_url": url,
            "content_type": content_type,
        }

    def sticker(self, name: str) -> dict[str, Any]:
        """A sticker item for `dispatch_message(..., sticker_items=[...])` (a PNG sticker)."""
        return {"id": str(self._id()), "name": name, "format_type": 1}

    async def _attachment_file(self, request: web.Request) -> web.Response:
        self.requests.append(RecordedRequest("GET", request.path, None))
        content = self._files.get(request.match_info["id"])
        return web.Response(status=404) if content is None else web.Response(body=content)

    # -- gateway

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._sockets.append(ws)
        await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 41250}}))
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                frame = json.loads(msg.data)
                if frame["op"] == 1:
                    await ws.send_str(json.dumps({"op": 11}))
                elif frame["op"] == 2:
                    me = self.bots.get(frame["d"]["token"], self.bot_id)
                    shard_id, shard_count = frame["d"].get("shard") or (0, 1)
                    self.shards[ws] = (int(shard_id), int(shard_count))
                    self._socket_bots[ws] = me
                    self.intents[ws] = int(frame["d"].get("intents", 0))
                    ours = [
                        (guild, channel)
                        for guild, channel in self._all_guilds().items()
                        if self._shard_of(str(guild), shard_count) == shard_id
                    ]
                    ready = self._ready(me, [g for g, _ in ours])
                    await self._send(ws, "READY", ready | {"shard": [shard_id, shard_count]})
                    for guild, channel in ours:
                        await self._send(ws, "GUILD_CREATE", self._guild(me, guild, channel))
                    self._identified.set()
        finally:
            self._sockets.remove(ws)
            self.shards.pop(ws, None)
            self._socket_bots.pop(ws, None)
            self.intents.pop(ws, None)
        return ws

    @staticmethod
    def _shard_of(guild_id: str | None, shard_count: int) -> int:
        """Discord's rule: a guild's events go to shard (id >> 22) % count; DMs to shard 0."""
        return (int(guild_id) >> 22) % shard_count if guild_id else 0

    def add_guild(self, guild_id: int, channel_id: int) -> None:
        """Another guild with the bots in it, its one text channel `channel_id`; its events go
        to the shard `(guild_id >> 22) % shard_count` of each bot. Before the bots connect."""
        self.guilds[guild_id] = channel_id

    def _all_guilds(self) -> dict[int, int]:
        return {self.guild_id: self.channel_id} | self.guilds

    def _guild_of(self, channel_id: int | str) -> int:
        """The guild a text channel is in (the first guild's, for a channel not listed)."""
        found = [g for g, c in self._all_guilds().items() if str(c) == str(channel_id)]
        return found[0] if found else self.guild_id

    def _ready(self, me: int, guilds: Sequence[int]) -> dict[str, Any]:
        return {
            "v": 10,
            "user": self.user(me, bot=True),
            "guilds": [{"id": str(g), "unavailable": True} for g in guilds],
            "session_id": "session",
            "resume_gateway_url": str(self.gateway_url),
            "application": {"id": str(self.app_id), "flags": 0},
        }

    def _guild(self, me: int, guild_id: int, channel_id: int) -> dict[str, Any]:
        return {
            "id": str(guild_id),
            "name": "Test Guild",
            "owner_id": "1",
            "member_count": 2,
            "system_channel_id": str(channel_id),  # where Discord tells of joins
            "channels": [
                {"id": str(channel_id), "type": 0, "name": "general", "position": 0},
                *(
                    [
                        {"id": str(self.mods_channel_id), "type": 0, "name": "mods", "position": 1},
                        *self.channels,
                    ]
                    if guild_id == self.guild_id
                    else []
                ),
            ],
            "roles": [
                {
                    "id": str(guild_id),
                    "name": "@everyone",
                    "permissions": str(self.everyone_permissions),
                },
                *(
                    {
                        "id": str(i),
                        "name": name,
                        "permissions": str(self.role_permissions.get(i, 0)),
                        "position": n,
                    }
                    for n, (i, name) in enumerate(self.roles.items(), 1)
                ),
            ],
            "members": [self._member(me) | {"user": self.user(me, bot=True)}],
        }

    def add_channel(self, channel_id: int, name: str, readers: Sequence[int] = ()) -> None:
        """Another text channel in the guild, before the bots connect; with `readers`, only
        they may see it (a private channel: @everyone is denied View Channel)."""
        overwrites = [
            {"id": str(self.guild_id), "type": 0, "allow": "0", "deny": str(VIEW_CHANNEL)},
            *({"id": str(r), "type": 1, "allow": str(VIEW_CHANNEL), "deny": "0"} for r in readers),
        ]
        self.channels.append(
            {
                "id": str(channel_id),
                "type": 0,
                "name": name,
                "position": len(self.channels) + 1,
                "permission_overwrites": overwrites if readers else [],
            }
        )

    async def _send(self, ws: web.WebSocketResponse, event: str, data: dict[str, Any]) -> None:
        await ws.send_str(json.dumps({"op": 0, "t": event, "s": next(self._seq), "d": data}))

    async def dispatch(self, event: str, data: dict[str, Any], *, bot: int | None = None) -> None:
        """Send one gateway event to every connected client (or only to bot `bot`'s): to the
        shard of each that owns the event's guild (shard 0 for a DM)."""
        await asyncio.wait_for(self._identified.wait(), 5)
        for ws in list(self._sockets):
            if bot is not None and self._socket_bots.get(ws, self.bot_id) != bot:
                continue
            shard = self.shards.get(ws, (0, 1))
            if self._shard_of(data.get("guild_id"), shard[1]) == shard[0]:
                self.delivered.append((event, str(data.get("id", "")), shard))
                await self._send(ws, event, data)

    async def dispatch_message(
        self,
        channel_id: int,
        author_id: int,
        content: str,
        *,
        guild: bool = True,
        mentions_bot: bool | int = False,
        reply_to: dict[str, Any] | None = None,
        attachments: list[dict[str, Any]] | None = None,
        roles: Sequence[int] = (),
        to_bot: int | None = None,
        author: dict[str, Any] | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """MESSAGE_CREATE from a user, in the guild of `channel_id` (see `add_guild`); without
        `guild` it is a DM (no guild_id). `roles`: the
        author's, in the guild. `mentions_bot`: True for the bot, or another bot's id. A DM
        goes to `to_bot` (the bot by default). `author`: the author User instead of user
        `author_id` (a webhook's or a bot's, who are no guild members); `fields`: more
        Message fields (type, webhook_id...)."""
        extra: dict[str, Any] = {}
        if guild:
            extra["guild_id"] = str(self._guild_of(channel_id))
            if author is None:
                member = self._member(author_id, roles=roles)
                extra["member"] = {k: v for k, v in member.items() if k != "user"}
        if mentions_bot:
            mentioned = self.bot_id if mentions_bot is True else int(mentions_bot)
            extra["mentions"] = [self.user(mentioned, bot=True)]
        if reply_to is not None:
            extra["referenced_message"] = reply_to
            extra["message_reference"] = {
                "message_id": reply_to["id"],
                "channel_id": reply_to["channel_id"],
            }
            extra["type"] = 19
        if attachments:
            extra["attachments"] = attachments
        extra |= fields
        data = self._message(channel_id, author or self.user(author_id), content, **extra)
        # Every bot in the guild sees a guild message; a DM goes to the bot it is sent to.
        await self.dispatch("MESSAGE_CREATE", data, bot=None if guild else (to_bot or self.bot_id))
        return data

    async def dispatch_join(self, user_id: int) -> None:
        """GUILD_MEMBER_ADD: user `user_id` joined the guild (sent only to clients that asked
        for the members intent, as Discord does, on the guild's shard)."""
        await asyncio.wait_for(self._identified.wait(), 5)
        data = self._member(user_id) | {"guild_id": str(self.guild_id)}
        for ws in list(self._sockets):
            shard_id, shard_count = self.shards.get(ws, (0, 1))
            ours = self._shard_of(data["guild_id"], shard_count) == shard_id
            if ours and self.intents.get(ws, 0) & GUILD_MEMBERS:
                await self._send(ws, "GUILD_MEMBER_ADD", data)

    async def dispatch_webhook_message(
        self, channel_id: int, webhook_id: int, name: str, content: str, **options: Any
    ) -> dict[str, Any]:
        """MESSAGE_CREATE posted through a channel webhook under the name `name`, as a proxy
        such as PluralKit posts for each of its users: the author is the webhook, flagged a
        bot as Discord does. `options` go to dispatch_message."""
        author = self.user(webhook_id, bot=True) | {"username": name, "global_name": None}
        return await self.dispatch_message(
            channel_id, webhook_id, content, author=author, webhook_id=str(webhook_id), **options
        )

    async def slash(
        self,
        name: str,
        options: dict[str, Any] | None = None,
        *,
        user_id: int,
        guild: bool = True,
        channel_id: int | None = None,
        permissions: int = ALL_PERMISSIONS,
        roles: Sequence[int] = (),
    ) -> str:
        """INTERACTION_CREATE for a chat-input command; returns the interaction id.
        `permissions` and `roles`: the member's, in a guild (permissions a bit set, as Discord
        sends it)."""
        opts = [
            {"name": k, "type": _option_type(v), "value": v} for k, v in (options or {}).items()
        ]
        command = {"id": self._id(), "name": name, "type": 1, "options": opts}
        return await self._interact(
            2, command, user_id, guild, channel_id, permissions=permissions, roles=roles
        )

    async def click(
        self, response: dict[str, Any], label: str, *, user_id: int, guild: bool = True
    ) -> str:
        """Press the button labelled `label` under a message the bot sent as `response` (a
        follow-up or message update from `next_response`); returns the interaction id."""
        message = response["_message"]
        buttons = [c for row in message.get("components", []) for c in row["components"]]
        [button] = [b for b in buttons if b.get("label") == label]
        component = {"custom_id": button["custom_id"], "component_type": 2}
        channel = int(message["channel_id"])
        return await self._interact(3, component, user_id, guild, channel, message=message)

    async def _interact(
        self,
        kind: int,
        data: dict[str, Any],
        user_id: int,
        guild: bool,
        channel_id: int | None,
        permissions: int = ALL_PERMISSIONS,
        roles: Sequence[int] = (),
        **extra: Any,
    ) -> str:
        interaction_id = self._id()
        payload: dict[str, Any] = {
            "id": interaction_id,
            "application_id": str(self.app_id),
            "type": kind,
            "token": f"itoken{interaction_id}",
            "version": 1,
            "attachment_size_limit": 8_000_000,
            "locale": "en-US",
            "app_permissions": "2147483647",
            "entitlements": [],
            "authorizing_integration_owners": {},
            "context": 0 if guild else 1,
            "data": data,
            **extra,
        }
        if guild:
            payload["channel_id"] = str(channel_id or self.channel_id)
            payload["guild_id"] = str(self._guild_of(payload["channel_id"]))
            payload["channel"] = {
                "id": payload["channel_id"],
                "type": 0,
                "guild_id": payload["guild_id"],
            }
            payload["member"] = self._member(user_id, permissions, roles)
            payload["guild_locale"] = "en-US"
        else:
            dm = str(channel_id or self._id())
            payload["channel_id"] = dm
            payload["channel"] = {"id": dm, "type": 1}
            payload["user"] = self.user(user_id)
        self._channels[interaction_id] = payload["channel_id"]
        if "message" in extra:
            self._pressed[interaction_id] = extra["message"]["id"]
        await self.dispatch("INTERACTION_CREATE", payload, bot=self.bot_id)  # the app's own
        return interaction_id

    # -- awaiting what the bot sent

    async def next_message(self, wait: float = 5.0) -> dict[str, Any]:
        """The next message body the bot posted to a channel (recorded payload + channel_id)."""
        return await asyncio.wait_for(self.messages.get(), wait)

    async def next_reaction(self, wait: float = 5.0) -> dict[str, Any]:
        """The next reaction a bot added to a message."""
        return await asyncio.wait_for(self.reactions.get(), wait)

    async def next_response(self, wait: float = 5.0) -> dict[str, Any]:
        """The next interaction callback or follow-up body the bot sent."""
        return await asyncio.wait_for(self.responses.get(), wait)

    async def answer(self, wait: float = 5.0) -> dict[str, Any]:
        """The follow-up of a slash command the bot deferred ephemerally, as the adapter
        answers every one."""
        deferred = await self.next_response(wait)
        assert deferred["type"] == 5 and deferred["data"]["flags"] & 64, deferred
        return await self.next_response(wait)

    async def no_message(self, wait: float = 0.3) -> bool:
        """True if the bot posts nothing within `wait` seconds."""
        try:
            await asyncio.wait_for(self.messages.get(), wait)
        except TimeoutError:
            return True
        return False

    def fail(self, pattern: str, how: Fault, times: int = 1, *, after: int = 0) -> None:
        """`times` requests matching `pattern` ("METHOD /path", * for any part, as
        "POST /channels/*/messages") fail `how` (see `Fault`), once `after` more succeeded."""
        self._faults.extend([(pattern, None)] * after + [(pattern, how)] * times)

    def _fault(self, request: str) -> Fault | None:
        for n, (pattern, how) in enumerate(self._faults):
            if fnmatch.fnmatchcase(request, pattern):
                del self._faults[n]
                return how
        return None

    # -- REST

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        body = await _body(request)
        path = "/" + request.match_info["tail"]
        self.requests.append(RecordedRequest(request.method, path, body))
        fault = self._fault(f"{request.method} {path}")
        if fault == "outage":
            return _json({"message": "Service Unavailable", "code": 0}, status=503)
        answer = await self._answer(request, path, body)
        if fault == "drop" and request.transport is not None:
            request.transport.close()  # done, but the client never hears so
        return answer

    async def _answer(self, request: web.Request, path: str, body: Any) -> web.StreamResponse:
        parts = path.strip("/").split("/")
        method = request.method
        token = request.headers.get("Authorization", "").removeprefix("Bot ")
        me = self.bots.get(token, self.bot_id)
        if method == "GET" and path == "/users/@me":
            return _json(self.user(me, bot=True))
        if method == "GET" and path == "/oauth2/applications/@me":
            return _json(
                {
                    "id": str(self.app_id),
                    "name": "kizuna",
                    "description": "",
                    "icon": None,
                    "bot_public": True,
                    "bot_require_code_grant": False,
                    "owner": self.user(1),
                    "verify_key": "0" * 64,
                    "flags": self.app_flags,
                }
            )
        if method == "GET" and path == "/gateway/bot":
            return _json(
                {
                    "url": str(self.gateway_url),
                    "shards": self.recommended_shards,
                    "session_start_limit": {
                        "total": 1000,
                        "remaining": 1000,
                        "reset_after": 0,
                        "max_concurrency": 1,
                    },
                }
            )
        if parts[0] == "channels" and len(parts) == 3 and method == "POST":
            if parts[2] == "typing":
                return web.Response(status=204)
            if parts[2] == "messages":
                if self.dms.get(parts[1]) in self.closed_dms:
                    refusal = {"message": "Cannot send messages to this user", "code": 50007}
                    return _json(refusal, status=403)
                content = (body or {}).get("content", "")
                sent = self._message(parts[1], self.user(me, bot=True), content)
                uploaded = (body or {}).get("attachments", [])  # files sent with it, listed
                sent["attachments"] = [_attachment(a, self._id()) for a in uploaded]
                await self.messages.put({**(body or {}), "channel_id": parts[1], "_bot": me})
                return _json(sent)
        reacting = len(parts) == 7 and parts[0] == "channels" and parts[2] == "messages"
        if reacting and parts[4] == "reactions" and parts[6] == "@me" and method == "PUT":
            emoji = unquote(parts[5])  # (aiohttp decoded the path already, unless escaped twice)
            reaction = {"channel_id": parts[1], "message_id": parts[3], "emoji": emoji, "_bot": me}
            await self.reactions.put(reaction)
            return web.Response(status=204)
        if parts[0] == "channels" and len(parts) == 3 and parts[2] == "webhooks":
            if not self.manage_webhooks:
                return _json({"message": "Missing Permissions", "code": 50013}, status=403)
            if method == "GET":
                return _json(self.webhooks.get(parts[1], []))
            hook_id = self._id()
            hook = {
                "id": hook_id,
                "type": 1,
                "channel_id": parts[1],
                "guild_id": str(self._guild_of(parts[1])),
                "name": (body or {}).get("name", "hook"),
                "avatar": None,
                "token": f"wtoken{hook_id}",
                "application_id": str(self.app_id),
                "user": self.user(self.bot_id, bot=True),
            }
            self.webhooks.setdefault(parts[1], []).append(hook)
            return _json(hook)
        if parts[0] == "webhooks" and len(parts) == 3 and parts[2].startswith("wtoken"):
            [channel] = [
                c for c, hooks in self.webhooks.items() if any(h["id"] == parts[1] for h in hooks)
            ]
            author = self.user(int(parts[1]), bot=True) | {"username": (body or {}).get("username")}
            sent = self._message(channel, author, (body or {}).get("content", ""))
            sent["webhook_id"] = parts[1]
            await self.messages.put({**(body or {}), "channel_id": channel, "webhook_id": parts[1]})
            return _json(sent)
        if parts[0] == "channels" and len(parts) == 2 and method == "GET":
            return _json({"id": parts[1], "type": 1, "recipients": []})
        if path == "/users/@me/channels" and method == "POST":
            recipient = int((body or {}).get("recipient_id", 1))
            dm = next((c for c, u in self.dms.items() if u == recipient), None) or self._id()
            self.dms[dm] = recipient
            return _json({"id": dm, "type": 1, "recipients": [self.user(recipient)]})
        if parts[0] == "applications" and method == "PUT" and parts[-1] == "commands":
            items = [
                {
                    **cmd,
                    "id": self._id(),
                    "application_id": str(self.app_id),
                    "version": "1",
                    "default_member_permissions": None,
                    "type": cmd.get("type", 1),
                }
                for cmd in (body or [])
            ]
            self.commands[path] = items
            return _json(items)
        if parts[0] == "interactions" and parts[-1] == "callback":
            channel = self._channels.get(parts[1], str(self.channel_id))
            data = (body or {}).get("data") or {}
            sent = self._message(channel, self.user(self.bot_id, bot=True), "") | data
            if parts[1] in self._pressed:  # a message update keeps the pressed message's id
                sent["id"] = self._pressed[parts[1]]
            await self.responses.put({**(body or {}), "_message": sent})
            return _json({"interaction": {"id": parts[1], "type": 2}})
        if parts[0] == "webhooks" and method in {"POST", "PATCH"}:
            channel = self._channels.get(parts[2][len("itoken") :], str(self.channel_id))
            sent = self._message(channel, self.user(self.bot_id, bot=True), "") | (body or {})
            sent["webhook_id"] = parts[1]
            sent["attachments"] = [_attachment(a, self._id()) for a in sent.get("attachments", [])]
            await self.responses.put({**(body or {}), "_message": sent})
            return _json(sent)
        return _json({"message": f"fake has no route {method} {path}", "code": 0}, status=404)


def _attachment(sent: dict[str, Any], attachment_id: str) -> dict[str, Any]:
    """A sent file as Discord lists it on the message."""
    name = sent.get("filename", "file")
    url = f"https://cdn.example/attachments/{attachment_id}/{name}"
    return {"id": attachment_id, "filename": name, "size": 0, "url": url, "proxy_url": url}


def _option_type(value: Any) -> int:
    if isinstance(value, bool):
        return 5
    if isinstance(value, int):
        return 4
    return 3


def _file_content(data: bytes) -> str | bytes:
    """An uploaded file: its text (an export's JSON), or its bytes (audio, a picture)."""
    try:
        return data.decode()
    except UnicodeDecodeError:
        return data


async def _body(request: web.Request) -> Any:
    """Decode a JSON body, or the payload_json part of a multipart one."""
    if not request.can_read_body:
        return None
    if request.content_type.startswith("multipart/"):
        form = await request.post()
        raw = form.get("payload_json")
        body = json.loads(str(raw)) if raw is not None else {}
        files = {
            part.filename: _file_content(part.file.read())
            for part in form.values()
            if isinstance(part, web.FileField)
        }
        return {**body, "_files": files} if files else body
    text = await request.text()
    return json.loads(text) if text else None
