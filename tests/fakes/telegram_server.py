"""A Telegram Bot API server on 127.0.0.1 for tests, so the real python-telegram-bot client
runs end to end without the internet.

    async with FakeTelegram() as fake:
        app = ApplicationBuilder().token(fake.token).base_url(fake.base_url)...
        fake.send_text(42, 7, "hello")                 # a user writes to the bot
        [sent] = await fake.next_messages()            # what the bot said back

Routes are `/bot{token}/{method}`. Every request is recorded in `requests` (method and params:
form strings as sent, JSON-text values parsed). getUpdates long-polls: it holds the request up
to its `timeout` when nothing is queued (answering [] at once makes the client spin), drops
updates below `offset`, and `aclose()` wakes any poll still waiting.

A message to a user is refused (403) unless they started the bot (wrote to it, or `chat(id,
"private")`) and are not in `blocked`; `fail(method, how)` makes the next calls of a method
fail as a network does (`Fault`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from aiohttp import web
from telegram.constants import ReactionEmoji

from tests.fakes.secrets import TELEGRAM_TOKEN

__all__ = [
    "ANONYMOUS_ADMIN",
    "CHANNEL_BOT",
    "SERVICE",
    "FakeTelegram",
    "Fault",
    "RecordedCall",
]

# How a call fails on demand. outage: the server answers 502 and does nothing. drop: it does
# what was asked, then closes the connection without an answer. hang: it does what was asked
# and holds the answer until the client gives up (or the fake closes).
Fault = Literal["outage", "drop", "hang"]

# Parameters that are text whatever they look like ("5" stays "5", not the number 5).
RAW_PARAMS = frozenset({"text", "caption", "action", "parse_mode", "query", "description"})
# The stand-ins Telegram puts in `from` of a message sent on behalf of a chat: a channel, a
# group's anonymous admin, and a linked channel's post copied into its discussion group.
CHANNEL_BOT = {"id": 136817688, "is_bot": True, "first_name": "Channel", "username": "Channel_Bot"}
ANONYMOUS_ADMIN = {
    "id": 1087968824,
    "is_bot": True,
    "first_name": "Group",
    "username": "GroupAnonymousBot",
}
# The emoji a bot may react with (setMessageReaction refuses others).
ALLOWED = frozenset(emoji.value for emoji in ReactionEmoji)
SERVICE = {"id": 777000, "is_bot": False, "first_name": "Telegram"}


@dataclass(frozen=True)
class RecordedCall:
    method: str
    params: dict[str, Any]


def _decode(key: str, value: str) -> Any:
    """PTB sends strings raw and everything else as JSON text: parse what parses."""
    if key in RAW_PARAMS:
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


class FakeTelegram:
    def __init__(
        self,
        *,
        token: str = TELEGRAM_TOKEN,
        bot_id: int = 123456,
        username: str = "pip_bot",
        first_name: str = "Pip",
        port: int = 0,
    ) -> None:
        self.token = token
        self.bot_user: dict[str, Any] = {
            "id": bot_id,
            "is_bot": True,
            "first_name": first_name,
            "username": username,
            "can_read_all_group_messages": False,  # group privacy mode on, as BotFather makes it
        }
        self.requests: list[RecordedCall] = []
        self.sent: list[dict[str, Any]] = []  # Messages the bot sent, in order
        self.commands: list[dict[str, Any]] = []  # as set by setMyCommands
        self.admins: set[tuple[int, int]] = set()  # (chat id, user id): the chat's admins
        self.answered: list[dict[str, Any]] = []  # answerCallbackQuery calls (button presses)
        self.reactions: list[dict[str, Any]] = []  # setMessageReaction calls, in order
        self.webhook: dict[str, Any] = {}  # as set by setWebhook (url, secret_token)
        self.files: dict[str, bytes] = {}  # file id -> content, for getFile and downloads
        self.blocked: set[int] = set()  # users who blocked the bot: messages to them are refused
        self._faults: dict[str, list[Fault | None]] = {}  # method -> how its next calls fail
        self.port = port  # 0: any free port
        # Seconds a getUpdates takes to reach Telegram, as over a real network: its offset
        # confirms the updates before it only then, and not at all if the bot dies first.
        self.latency = 0.0
        self.confirmed: list[dict[str, Any]] = []  # updates the bot confirmed, never given again
        self._updates: list[dict[str, Any]] = []
        self._update_ids = itertools.count(1)
        self._message_ids = itertools.count(1)
        self._chats: dict[int, dict[str, Any]] = {}
        self._wake = asyncio.Event()  # set (and replaced) on each update, message or close
        self._read = 0  # how many of `sent` next_messages has handed out
        self._closing = False
        self._runner: web.AppRunner | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/bot"

    @property
    def base_file_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/file/bot"

    @property
    def username(self) -> str:
        return str(self.bot_user["username"])

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> FakeTelegram:
        app = web.Application()
        app.router.add_post("/bot{token}/{method}", self._handle)
        app.router.add_get("/bot{token}/{method}", self._handle)
        app.router.add_get("/file/bot{token}/{path:.*}", self._download)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def aclose(self) -> None:
        self._closing = True
        self._poke()  # wake waiting polls: aiohttp does not cancel them for us
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeTelegram:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- what tests do -------------------------------------------------------------------------

    def send_text(
        self,
        chat_id: int,
        user_id: int,
        text: str,
        *,
        chat_type: str = "private",
        first_name: str = "Alice",
        username: str | None = None,
        reply_to: dict[str, Any] | None = None,
        sender: dict[str, Any] | None = None,
        kind: str = "message",
        **fields: Any,
    ) -> dict[str, Any]:
        """Queue a text message from a user as an update; returns the Message. Commands get
        their bot_command entity, @mentions their mention entity, as Telegram adds them.
        `reply_to` is a Message (e.g. one from `sent`) this one replies to. `sender`: the
        `from` User instead of user `user_id`; `kind`: the update's field (edited_message,
        business_message...); `fields`: more Message fields (sender_chat, forward_origin,
        via_bot, is_automatic_forward, message_thread_id...)."""
        chat = self.chat(chat_id, chat_type, first_name if chat_type == "private" else "")
        user: dict[str, Any] = {"id": user_id, "is_bot": False, "first_name": first_name}
        if username:
            user["username"] = username
        message: dict[str, Any] = {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": chat,
            "from": sender or user,
            "text": text,
            **fields,
        }
        entities = _entities(text)
        if entities:
            message["entities"] = entities
        if reply_to is not None:
            message["reply_to_message"] = reply_to
        self._updates.append({"update_id": next(self._update_ids), kind: message})
        self._poke()
        return message

    def chat(self, chat_id: int, chat_type: str = "supergroup", name: str = "") -> dict[str, Any]:
        """The Chat `chat_id` (made on first use: a private chat is named `name`, a group
        "group ID")."""
        if chat_id not in self._chats:
            chat: dict[str, Any] = {"id": chat_id, "type": chat_type}
            if chat_type == "private":
                chat["first_name"] = name or "Alice"
            else:
                chat["title"] = name or f"group {chat_id}"
            self._chats[chat_id] = chat
        return self._chats[chat_id]

    def send_as_channel(
        self, chat_id: int, channel_id: int, text: str, *, title: str = "", **fields: Any
    ) -> dict[str, Any]:
        """Queue a message a channel's admin wrote in group `chat_id` as channel `channel_id`
        (from the channel stand-in bot, with `sender_chat` the channel)."""
        channel = {"id": channel_id, "type": "channel", "title": title or f"channel {channel_id}"}
        return self.send_text(
            chat_id,
            0,
            text,
            chat_type="supergroup",
            sender=CHANNEL_BOT,
            sender_chat=channel,
            **fields,
        )

    def join(self, chat_id: int, *people: tuple[int, str]) -> dict[str, Any]:
        """Queue the service message of `people` ((user id, first name) each) joining group
        `chat_id`, added by the first of them, as Telegram sends it (no text)."""
        joined = [{"id": uid, "is_bot": False, "first_name": name} for uid, name in people]
        message: dict[str, Any] = {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": self.chat(chat_id),
            "from": joined[0],
            "new_chat_members": joined,
        }
        self._updates.append({"update_id": next(self._update_ids), "message": message})
        self._poke()
        return message

    def send_as_anonymous_admin(
        self, chat_id: int, text: str, *, signature: str = "", **fields: Any
    ) -> dict[str, Any]:
        """Queue a message an admin of group `chat_id` wrote anonymously: from the anonymous
        admin stand-in bot, with `sender_chat` the group itself (and the admin's title, if
        they have one, as `author_signature`)."""
        group = self.chat(chat_id)
        if signature:
            fields["author_signature"] = signature
        return self.send_text(
            chat_id,
            0,
            text,
            chat_type=group["type"],
            sender=ANONYMOUS_ADMIN,
            sender_chat=group,
            **fields,
        )

    def press(
        self, message: dict[str, Any], label: str, user_id: int, *, data: str | None = None
    ) -> None:
        """Queue user `user_id` pressing the inline button `label` under `message` (one the
        bot sent, from `sent`); `data` sends other callback data for it, as a modified client
        can."""
        rows = message["reply_markup"]["inline_keyboard"]
        [button] = [b for row in rows for b in row if b["text"] == label]
        query = {
            "id": str(next(self._update_ids)),
            "from": {"id": user_id, "is_bot": False, "first_name": f"user {user_id}"},
            "message": message,
            "chat_instance": str(message["chat"]["id"]),
            "data": button["callback_data"] if data is None else data,
        }
        self._updates.append({"update_id": next(self._update_ids), "callback_query": query})
        self._poke()

    async def until_answered(self, *, within: float = 3.0) -> None:
        """Wait until the bot answers one more button press (call it right after `press`)."""
        before = len(self.answered)
        await self._until(lambda: len(self.answered) > before, within)

    async def until_confirmed(self, *, within: float = 3.0) -> None:
        """Wait until the bot has taken every update queued (a bot stopped with some still
        to take logs that it stopped unexpectedly)."""
        await self._until(lambda: not self._updates, within)

    def deliver_again(self, message: dict[str, Any]) -> None:
        """Queue `message` once more, as Telegram gives a restarted bot the updates its
        crashed predecessor had not confirmed."""
        self._updates.append({"update_id": next(self._update_ids), "message": message})
        self._poke()

    def update_for(self, message: dict[str, Any]) -> dict[str, Any]:
        """Take back the update queued for `message` (from send_text), to deliver it by
        webhook instead of long polling."""
        [update] = [u for u in self._updates if any(v is message for v in u.values())]
        self._updates.remove(update)
        return update

    def send_document(
        self,
        chat_id: int,
        user_id: int,
        file_name: str,
        *,
        caption: str = "",
        mime_type: str = "text/plain",
        size: int | None = None,
        chat_type: str = "private",
        content: bytes = b"",
    ) -> dict[str, Any]:
        """Queue a document from a user (with an optional caption) as an update; `content`
        is what getFile and the file download give (`size` defaults to its length)."""
        message = self.send_text(chat_id, user_id, caption, chat_type=chat_type)
        del message["text"]
        message.pop("entities", None)
        if caption:
            message["caption"] = caption
            entities = _entities(caption)
            if entities:
                message["caption_entities"] = entities
        file_id = f"doc-{message['message_id']}"
        self.files[file_id] = content
        message["document"] = {
            "file_id": file_id,
            "file_unique_id": f"u-{file_id}",
            "file_name": file_name,
            "mime_type": mime_type,
            "file_size": len(content) if size is None else size,
        }
        return message

    def send_photo(
        self,
        chat_id: int,
        user_id: int,
        content: bytes,
        *,
        caption: str = "",
        size: int | None = None,
        chat_type: str = "private",
    ) -> dict[str, Any]:
        """Queue a photo from a user as an update, in the sizes Telegram makes of one (a
        thumbnail, then the photo itself, which getFile and the download give as `content`;
        `size` is the declared size of the largest, its length by default)."""
        message = self.send_document(
            chat_id, user_id, "photo", caption=caption, chat_type=chat_type, content=content
        )
        document = message.pop("document")
        file_id = document["file_id"]
        self.files[f"{file_id}-thumb"] = content[:100]
        message["photo"] = [
            {"file_id": f"{file_id}-thumb", "file_unique_id": "t", "width": 90, "height": 90},
            {
                "file_id": file_id,
                "file_unique_id": f"u-{file_id}",
                "width": 1280,
                "height": 960,
                "file_size": len(content) if size is None else size,
            },
        ]
        return message

    def send_voice(
        self,
        chat_id: int,
        user_id: int,
        content: bytes,
        *,
        size: int | None = None,
        chat_type: str = "private",
    ) -> dict[str, Any]:
        """Queue a voice note from a user (OGG/Opus, as Telegram's apps record them) as an
        update; getFile and the download give `content`, declared as `size` bytes (its length
        by default)."""
        message = self.send_document(chat_id, user_id, "", chat_type=chat_type, content=content)
        document = message.pop("document")
        message["voice"] = {
            "file_id": document["file_id"],
            "file_unique_id": document["file_unique_id"],
            "duration": 3,
            "mime_type": "audio/ogg",
            "file_size": len(content) if size is None else size,
        }
        return message

    def send_sticker(
        self, chat_id: int, user_id: int, emoji: str, set_name: str, *, chat_type: str = "private"
    ) -> dict[str, Any]:
        """Queue a sticker from a user (a static one, of the set `set_name`) as an update."""
        message = self.send_text(chat_id, user_id, "", chat_type=chat_type)
        del message["text"]
        message.pop("entities", None)
        file_id = f"sticker-{message['message_id']}"
        self.files[file_id] = b"RIFF....WEBP"
        message["sticker"] = {
            "file_id": file_id,
            "file_unique_id": f"u-{file_id}",
            "type": "regular",
            "width": 512,
            "height": 512,
            "is_animated": False,
            "is_video": False,
            "emoji": emoji,
            "set_name": set_name,
            "file_size": 12,
        }
        return message

    def send_animation(
        self, chat_id: int, user_id: int, file_name: str, *, chat_type: str = "private"
    ) -> dict[str, Any]:
        """Queue a GIF from a user as an update (an MP4, as Telegram sends GIFs; with the
        `document` Telegram sets beside `animation` for older clients)."""
        message = self.send_document(
            chat_id, user_id, file_name, mime_type="video/mp4", chat_type=chat_type, content=b"mp4"
        )
        message["animation"] = {
            **message["document"],
            "width": 320,
            "height": 240,
            "duration": 3,
        }
        return message

    async def next_messages(self, count: int = 1, *, within: float = 3.0) -> list[dict[str, Any]]:
        """The next `count` messages the bot sends (after those already handed out), waiting
        at most `within` seconds for them (TimeoutError)."""
        want = self._read + count
        await self._until(lambda: len(self.sent) >= want, within)
        found = self.sent[self._read : want]
        self._read = want
        return found

    def fail(self, method: str, how: Fault, times: int = 1, *, after: int = 0) -> None:
        """`times` calls of `method` fail `how` (see `Fault`), once `after` more succeeded."""
        self._faults.setdefault(method, []).extend([None] * after + [how] * times)

    def calls(self, method: str) -> list[RecordedCall]:
        return [r for r in self.requests if r.method == method]

    @property
    def unconfirmed(self) -> int:
        """Updates the bot has not confirmed yet (by asking for updates past them): a bot
        that restarts is given these again, as Telegram does."""
        return len(self._updates)

    @property
    def queued(self) -> list[dict[str, Any]]:
        """The updates users sent that the bot has not fetched yet."""
        return list(self._updates)

    @property
    def unread(self) -> list[dict[str, Any]]:
        """Messages sent that `next_messages` has not handed out yet."""
        return self.sent[self._read :]

    # -- the Bot API ---------------------------------------------------------------------------

    def _poke(self) -> None:
        self._wake.set()
        self._wake = asyncio.Event()

    async def _until(self, ready: Callable[[], bool], seconds: float) -> None:
        """Wait until `ready()` holds, at most `seconds` (TimeoutError)."""
        async with asyncio.timeout(seconds):
            while not ready():
                await self._wake.wait()

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        form = await request.post()
        params = {k: _decode(k, v) for k, v in form.items() if isinstance(v, str)}
        # Uploaded files (sendDocument, sendVoice) arrive as multipart parts: kept as bytes.
        params |= {k: v.file.read() for k, v in form.items() if isinstance(v, web.FileField)}
        self.requests.append(RecordedCall(method, params))
        if request.match_info["token"] != self.token:
            return _error(401, "Unauthorized")
        handler = getattr(self, f"_api_{method}", None)
        if handler is None:
            return _error(404, "Not Found: method not found")
        fault = self._faults[method].pop(0) if self._faults.get(method) else None
        if fault == "outage":
            return _error(502, "Bad Gateway")
        if method == "getUpdates" and self.latency:
            await asyncio.sleep(self.latency)
            if request.transport is None or request.transport.is_closing():
                # The bot died before its request arrived: its offset confirmed nothing.
                return web.json_response({"ok": True, "result": []})
        try:
            result = await handler(params)
        except LookupError as e:  # a request about something the fake does not have
            return _error(400, str(e.args[0]))
        if isinstance(result, web.Response):  # the method refused
            return result
        if fault == "hang":
            with contextlib.suppress(TimeoutError):
                await self._until(lambda: self._closing, 60)
        if fault is not None and request.transport is not None:
            request.transport.close()  # done, but the client never hears so
        return web.json_response({"ok": True, "result": result})

    async def _api_getFile(self, params: dict[str, Any]) -> Any:
        file_id = str(params.get("file_id", ""))
        if file_id not in self.files:
            raise LookupError("Bad Request: invalid file_id")
        content = self.files[file_id]
        path = f"documents/{file_id}"
        return {
            "file_id": file_id,
            "file_unique_id": f"u-{file_id}",
            "file_size": len(content),
            "file_path": path,
        }

    async def _download(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.token:
            return web.Response(status=401)
        file_id = request.match_info["path"].rpartition("/")[2]
        if file_id not in self.files:
            return web.Response(status=404)
        return web.Response(body=self.files[file_id])

    async def _api_getMe(self, params: dict[str, Any]) -> Any:
        return self.bot_user

    async def _api_deleteWebhook(self, params: dict[str, Any]) -> Any:
        self.webhook = {}
        return True

    async def _api_setWebhook(self, params: dict[str, Any]) -> Any:
        self.webhook = dict(params)
        return True

    async def _api_setMyCommands(self, params: dict[str, Any]) -> Any:
        self.commands = list(params.get("commands") or [])
        return True

    async def _api_getMyCommands(self, params: dict[str, Any]) -> Any:
        return self.commands

    async def _api_sendChatAction(self, params: dict[str, Any]) -> Any:
        return True

    def _unreachable(self, chat_id: int) -> web.Response | None:
        """Telegram's refusal of a message to a chat the bot is not in: a user who blocked it
        or never started a private chat with it (403), or no such chat (400)."""
        if chat_id in self.blocked:
            return _error(403, "Forbidden: bot was blocked by the user")
        if chat_id in self._chats:
            return None
        if chat_id > 0:
            return _error(403, "Forbidden: bot can't initiate conversation with a user")
        return _error(400, "Bad Request: chat not found")

    async def _api_sendDocument(self, params: dict[str, Any]) -> Any:
        chat_id = int(params["chat_id"])
        if (refused := self._unreachable(chat_id)) is not None:
            return refused
        document = params["document"]
        message: dict[str, Any] = {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": self._chats.get(chat_id, {"id": chat_id, "type": "private"}),
            "from": self.bot_user,
            "caption": str(params.get("caption", "")),
            "document": {"file_id": "sent", "file_unique_id": "sent"},
            "_bytes": document if isinstance(document, bytes) else b"",  # for tests to read
        }
        self.sent.append(message)
        self._poke()
        return {k: v for k, v in message.items() if k != "_bytes"}

    async def _api_sendVoice(self, params: dict[str, Any]) -> Any:
        """A voice note the bot sent (OGG/Opus, as Telegram wants), recorded in `sent` with
        its bytes in `_bytes`; Telegram refuses a voice note that is no Ogg stream."""
        chat_id = int(params["chat_id"])
        if (refused := self._unreachable(chat_id)) is not None:
            return refused
        audio = params["voice"]
        if not isinstance(audio, bytes) or not audio.startswith(b"OggS"):
            return _error(400, "Bad Request: wrong file identifier/HTTP URL specified")
        message: dict[str, Any] = {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": self._chats.get(chat_id, {"id": chat_id, "type": "private"}),
            "from": self.bot_user,
            "voice": {"file_id": "sent", "file_unique_id": "sent", "duration": 1},
            "_bytes": audio,  # for tests to read
        }
        if "reply_parameters" in params:
            message["_reply_parameters"] = params["reply_parameters"]
        self.sent.append(message)
        self._poke()
        return {k: v for k, v in message.items() if not k.startswith("_")}

    async def _api_getChatMember(self, params: dict[str, Any]) -> Any:
        chat_id, user_id = int(params["chat_id"]), int(params["user_id"])
        user = {"id": user_id, "is_bot": False, "first_name": f"user {user_id}"}
        if (chat_id, user_id) in self.admins:
            return {"status": "creator", "user": user, "is_anonymous": False}
        return {"status": "member", "user": user}

    async def _api_getUpdates(self, params: dict[str, Any]) -> Any:
        offset = int(params.get("offset") or 0)
        timeout = float(params.get("timeout") or 0)
        self.confirmed.extend(u for u in self._updates if u["update_id"] < offset)
        self._updates = [u for u in self._updates if u["update_id"] >= offset]
        if not self._updates and timeout > 0 and not self._closing:
            with contextlib.suppress(TimeoutError):
                await self._until(lambda: bool(self._updates) or self._closing, timeout)
        limit = int(params.get("limit") or 100)
        return self._updates[:limit]

    async def _api_sendMessage(self, params: dict[str, Any]) -> Any:
        chat_id = int(params["chat_id"])
        if (refused := self._unreachable(chat_id)) is not None:
            return refused
        message: dict[str, Any] = {
            "message_id": next(self._message_ids),
            "date": int(time.time()),
            "chat": self._chats.get(chat_id, {"id": chat_id, "type": "private"}),
            "from": self.bot_user,
            "text": str(params["text"]),
        }
        reply = params.get("reply_parameters")
        if isinstance(reply, dict) and "message_id" in reply:
            message["reply_to_message_id"] = reply["message_id"]  # for tests to read
        if isinstance(params.get("reply_markup"), dict):
            message["reply_markup"] = params["reply_markup"]
        self.sent.append(message)
        self._poke()
        return message

    async def _api_setMessageReaction(self, params: dict[str, Any]) -> Any:
        """Recorded as Telegram keeps it: the chat, the message, its reaction types."""
        reaction = params.get("reaction") or []
        if any(r.get("type") == "emoji" and r.get("emoji") not in ALLOWED for r in reaction):
            return _error(400, "Bad Request: REACTION_INVALID")
        self.reactions.append(
            {
                "chat_id": int(params["chat_id"]),
                "message_id": int(params["message_id"]),
                "reaction": reaction,
            }
        )
        self._poke()
        return True

    async def until_reacted(self, count: int = 1, *, within: float = 3.0) -> list[dict[str, Any]]:
        """Wait until the bot has set `count` reactions in all; they, in order."""
        await self._until(lambda: len(self.reactions) >= count, within)
        return self.reactions[:count]

    async def _api_answerCallbackQuery(self, params: dict[str, Any]) -> Any:
        self.answered.append(dict(params))
        self._poke()
        return True

    async def _api_editMessageText(self, params: dict[str, Any]) -> Any:
        """The edited message, recorded again in `sent` (with its `edit_date`)."""
        chat_id, message_id = int(params["chat_id"]), int(params["message_id"])
        [old] = [
            m for m in self.sent if m["chat"]["id"] == chat_id and m["message_id"] == message_id
        ]
        edited = {k: v for k, v in old.items() if k != "reply_markup"}
        edited |= {"text": str(params["text"]), "edit_date": int(time.time())}
        if isinstance(params.get("reply_markup"), dict):
            edited["reply_markup"] = params["reply_markup"]
        self.sent.append(edited)
        self._poke()
        return edited


def _entities(text: str) -> list[dict[str, Any]]:
    entities: list[dict[str, Any]] = []
    if text.startswith("/"):
        command = text.split(maxsplit=1)[0]
        entities.append({"type": "bot_command", "offset": 0, "length": len(command)})
    at = text.find("@", 1 if entities else 0)
    while at != -1:
        end = at + 1
        while end < len(text) and (text[end].isalnum() or text[end] == "_"):
            end += 1
        inside_command = bool(entities) and at < entities[0]["length"]
        if end > at + 1 and not inside_command:
            entities.append({"type": "mention", "offset": at, "length": end - at})
        at = text.find("@", end)
    return entities


def _error(code: int, description: str) -> web.Response:
    return web.json_response(
        {"ok": False, "error_code": code, "description": description}, status=code
    )
