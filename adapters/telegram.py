"""Telegram: one bot token, one persona, through python-telegram-bot 22.

Private chats always get an answer. In groups every message a person writes that the bot sees goes
to the bot, with what Telegram tells of whom it is for (an @mention of the bot, a reply to one of
its messages: `ChatEvent.addressed`), and the bot decides whether the persona answers
(bot.groups.floor); a command (`/cmd@botname` included) is always answered. A bot sees a group's
other messages only with its privacy mode off (BotFather, /setprivacy), or as the group's admin.
While the persona answers the chat shows "typing". Replies come already split within Telegram's
length limit (`PLATFORM.limit`, `Reply.chunks`).

The commands are the table of `bot.commands.table`; this module only turns Telegram messages into
`ChatEvent`s and answers into messages, their buttons into an inline keyboard. Who is an
admin (`ChatEvent.admin`) is asked of Telegram for a command, and for a group message only
where a persona of the bot has a tool for admins (kept a few minutes per member). In a
group, the answers that show memories (`Answer.private`) go to the sender's private chat with
the bot, as Discord's are ephemeral; their buttons still act in the group they were asked in.
`start()`/`stop()` run the bot inside the caller's event loop (no `run_polling`, which would
own the loop and the signals), so one process can host several bots.

It is also a courier (`write_first`, bot.outreach.courier): a persona writes first to a user's
private chat, whose id is the user's. Telegram lets a bot write only to users who started it and
have not blocked it (Forbidden: refused); a failure once the request left (a timeout waiting for the
answer, a connection dropped) counts as sent, since Telegram may have delivered it.

`PLATFORM` is what the bot may do on Telegram (bot.platforms); `KIND` starts a `[[bots]]`
table's bot and checks its token for `kizuna doctor` (adapters.kinds)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import hashlib
import hmac
import logging
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx
from telegram import (
    Bot,
    BotCommand,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InputFile,
    Message,
    Update,
)
from telegram.constants import ChatAction, ChatMemberStatus, ChatType
from telegram.error import BadRequest, Forbidden, InvalidToken, NetworkError, TelegramError
from telegram.ext import (
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    filters,
)

from adapters.kinds import Kind, Level
from adapters.surface import CourierSurface, attachment, typing_every
from bot import redact
from bot.catalogue import say
from bot.commands import table as commands
from bot.commands.answers import Answer, Button
from bot.commands.services import Services
from bot.config import BotConfig, Config
from bot.events import Addressed, Attachment, ChatEvent, Voice
from bot.front import Front
from bot.outreach.courier import Delivery
from bot.platforms import Platform
from bot.runtime.assemble import Runtime
from bot.spoken import Spoken
from bot.turn.engine import Engine
from memory.clock import Clock

__all__ = ["KIND", "PLATFORM", "TelegramAdapter", "Webhook", "file_url", "webhook_secret"]

log = logging.getLogger(__name__)
# Every member of a group reads all its topics; commands are typed, and a person opening the
# bot sends /start.
PLATFORM = Platform(
    "telegram",
    limit=4096,
    reactions=True,
    voice="audio/ogg",
    groups=True,
    typed_commands=True,
    start=True,
    same_readers=True,
    bursts=True,
)


def file_url(base_url: str) -> str:
    """Where a Bot API server at `base_url` (".../bot", as the platform's own and a
    self-hosted telegram-bot-api have it) serves files: ".../file/bot"."""
    return base_url.rstrip("/").removesuffix("/bot") + "/file/bot"


TYPING_EVERY = 4.5  # seconds; just under how long Telegram shows "typing" for one chat action
# How long a group member's being an admin is kept for their messages' tool calls (a
# command asks afresh), and for how many members at most.
ADMIN_SECONDS = 300.0
ADMINS_KEPT = 4096
# Seconds between a standby process's asks whether the process polling its bot is gone.
STANDBY_SECONDS = 5.0

CALLBACK_BYTES = 64  # Telegram's limit on a button's callback data
# Seconds to wait for Telegram's answer to a message written first; past them it may have been
# delivered, so it counts as sent.
WRITE_FIRST_TIMEOUT = 20.0
# Failures after a request left for Telegram (it may have acted on it), as httpx names them;
# the others (connecting, a full pool, writing the request) mean it never arrived.
_LEFT = (httpx.ReadTimeout, httpx.ReadError, httpx.RemoteProtocolError, httpx.DecodingError)
# Bad requests that mean there is no such person to write to.
_NO_CHAT = re.compile(r"chat not found|user not found|peer_id_invalid", re.IGNORECASE)


@dataclass(slots=True, frozen=True)
class Webhook:
    """Where Telegram posts updates (`url`, public, https) and where this process listens for
    them (behind a reverse proxy, usually); `secret` is checked on every update ("": the one
    `webhook_secret` derives from the bot's token)."""

    url: str
    listen: str = "127.0.0.1"
    port: int = 8443
    secret: str = ""


def webhook_secret(token: str) -> str:
    """The secret Telegram is told to send with every update when none is configured: an
    HMAC of the bot's token, so every process serving the bot and every restart agree on it
    with nothing to store or share, and it is known only to who holds the token (who could
    point the webhook elsewhere anyway). 43 characters of Telegram's A-Z a-z 0-9 _ -."""
    digest = hmac.new(token.encode(), b"kizuna telegram webhook secret", hashlib.sha256)
    return base64.urlsafe_b64encode(digest.digest()).decode().rstrip("=")


class TelegramAdapter(CourierSurface[Message, int]):
    """Answers where it was asked: each message and command is replied to. Writes first to a
    user's private chat, by id."""

    platform = PLATFORM.name

    def __init__(
        self,
        engine: Engine,
        services: Services,
        persona: str | Sequence[str],
        token: str,
        *,
        bot_id: str,
        base_url: str | None = None,
        base_file_url: str | None = None,
        poll_timeout: int = 10,
        admin_ids: Sequence[str] = (),
        language: str = "",
        webhook: Webhook | None = None,
        leads: Callable[[str], Awaitable[bool]] | None = None,
        standby_seconds: float = STANDBY_SECONDS,
        write_first_timeout: float = WRITE_FIRST_TIMEOUT,
    ) -> None:
        """`persona`: the persona key, or several (the first is the default; the others are
        addressed by name or bound to a chat with /persona set). `admin_ids`: users who may
        bind personas and wipe shared memories in any chat, besides the chat's admins.
        `webhook`: receive updates by webhook (for servers) instead of long polling, always
        with a secret.
        `leads(job)`: whether this process leads a job among the processes sharing its store
        (Store.leads); Telegram lets one process poll a bot, so the others stand by, asking
        every `standby_seconds`, and take over when it dies. `write_first_timeout`: seconds
        to wait for Telegram's answer to a message written first (`write_first`)."""
        if webhook is not None and not webhook.secret:
            # Never a webhook anyone who finds its port can post forged updates to.
            webhook = replace(webhook, secret=webhook_secret(token))
        # The token is in every Bot API URL the library and httpx log; the library logs the
        # secret with its setWebhook call (DEBUG).
        redact.hide(token, webhook.secret if webhook else "")
        super().__init__(Front(engine, services, bot_id, persona, language=language), bot_id)
        self._press = _Press(token)
        self.poll_timeout = poll_timeout
        self.webhook = webhook
        self._leads = leads
        self._standby_seconds = standby_seconds
        self.write_first_timeout = write_first_timeout
        self._lead_watch: asyncio.Task[None] | None = None
        # Updates run concurrently: one slow model call must not hold up every other chat.
        # The engine's per-session lock keeps each conversation's turns in order.
        builder = ApplicationBuilder().token(token).concurrent_updates(True)
        if base_url is not None:
            builder = builder.base_url(base_url)
            builder = builder.base_file_url(base_file_url or file_url(base_url))
        elif base_file_url is not None:
            builder = builder.base_file_url(base_file_url)
        self.app: Application[Any, Any, Any, Any, Any, Any] = builder.build()
        self._admins = _Admins(self.app.bot, admin_ids, engine.clock)
        only_new = filters.UpdateType.MESSAGE
        for command in commands.COMMANDS.values():
            if command.offered_on(PLATFORM):
                callback = self._command_callback(command.name)
                self.app.add_handler(CommandHandler(command.name, callback, filters=only_new))
        self.app.add_handler(
            MessageHandler(
                (
                    filters.TEXT & ~filters.COMMAND
                    | filters.Document.ALL
                    | filters.PHOTO
                    | filters.Sticker.ALL
                    | filters.ANIMATION
                    | filters.VOICE
                    | filters.AUDIO
                )
                & only_new,
                self._on_message,
            )
        )
        self.app.add_handler(MessageHandler(filters.COMMAND & only_new, self._on_unknown))
        joined = filters.StatusUpdate.NEW_CHAT_MEMBERS & only_new
        self.app.add_handler(MessageHandler(joined, self._on_joined))
        self.app.add_handler(CallbackQueryHandler(self._on_button))
        self.app.add_error_handler(self._on_error)

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect (getMe), register the commands, and start long-polling in the background."""
        try:
            await self.app.initialize()
        except BaseException:
            # A rejected token fails after the HTTP clients opened; Application.shutdown
            # skips a bot that never finished initializing, so close them here.
            await self.app.bot.shutdown()
            raise
        try:
            language = self.language
            await self.app.bot.set_my_commands(
                [
                    BotCommand(c.name, commands.describe(c.name, language))
                    for c in commands.offered_on(PLATFORM)
                ]
            )
            await self.app.start()
            assert self.app.updater is not None  # built by ApplicationBuilder by default
            hook = self.webhook
            if hook is None:
                await self._follow_lead()
                if self._leads is not None:
                    self._lead_watch = asyncio.create_task(
                        self._keep_following(), name="kizuna-lead"
                    )
            else:
                await self.app.updater.start_webhook(
                    listen=hook.listen,
                    port=hook.port,
                    url_path=urlsplit(hook.url).path.lstrip("/"),
                    webhook_url=hook.url,
                    secret_token=hook.secret,
                )
        except BaseException:
            await self.close()
            raise
        log.info("telegram bot @%s serves persona %s", self.app.bot.username, self.persona)

    async def _follow_lead(self) -> None:
        """Poll while this process leads polling the bot; stand by while another does."""
        updater = self.app.updater
        assert updater is not None
        name = self.app.bot.username
        leads = self._leads is None or await self._leads(f"telegram-poll:{self.app.bot.id}")
        if leads and not updater.running:
            await updater.start_polling(timeout=self.poll_timeout)
            if self._lead_watch is not None:
                log.info("telegram bot @%s: the process polling it is gone; this one polls", name)
        elif not leads and updater.running:  # its lead went with a lost connection
            await updater.stop()
            log.warning("telegram bot @%s: another process polls it now; standing by", name)
        elif not leads and self._lead_watch is None:
            log.info("telegram bot @%s is polled by another process; standing by", name)

    async def _keep_following(self) -> None:
        while True:
            await asyncio.sleep(self._standby_seconds)
            try:
                await self._follow_lead()
            except Exception as e:  # the store is out: ask again next time
                log.warning("telegram bot @%s: cannot ask who polls (%s)", self.app.bot.username, e)

    async def close(self) -> None:
        """Stop polling, finish the updates in hand, and close the HTTP client."""
        if self._lead_watch is not None:
            self._lead_watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._lead_watch
        updater = self.app.updater
        if updater is not None and updater.running:
            await updater.stop()
        if self.app.running:
            await self.app.stop()
        await self.app.shutdown()

    # -- events --------------------------------------------------------------------------------

    def _event(self, message: Message, sender: _Sender, text: str) -> ChatEvent:
        is_dm = _is_dm(message)
        replied = message.reply_to_message
        return self.event(
            _room(message),  # a forum topic is its own room
            # The platform id, never the display name: names change and collide.
            sender.id,
            sender.name,
            text,
            anonymous=sender.anonymous,
            is_dm=is_dm,
            chat_id="" if is_dm else str(message.chat.id),
            timestamp=message.date,
            attachments=_attachments(message, self.app.bot),
            reply_to=(replied.text or replied.caption) if replied else None,
            message_id=str(message.message_id),  # unique in its chat, as sessions are
        )

    def _addressed(self, message: Message) -> tuple[frozenset[Addressed], str]:
        """(what Telegram tells of whom a group message is for: the bot @mentioned, one of its
        messages replied to; the text with the bot's @mention removed). A document's caption
        is its text."""
        text = message.text or message.caption or ""
        username = self.app.bot.username
        mention = re.compile(rf"@{re.escape(username)}\b", re.IGNORECASE) if username else None
        mentioned = bool(mention and mention.search(text))
        if mention is not None:
            text = mention.sub("", text)
        text = re.sub(r"[ \t]{2,}", " ", text).strip()
        if message.chat.type == ChatType.PRIVATE:
            return frozenset(), text  # (a forward there is the user showing the persona something)
        facts: set[Addressed] = set()
        # A forward's @mention was its author's, written to another chat: not this sender
        # calling the persona.
        if mentioned and message.forward_origin is None:
            facts.add("mention")
        replied = message.reply_to_message
        # In a forum topic an ordinary message "replies" to the topic's opening: that is no
        # reply to the bot, even in a topic the bot opened.
        if (
            replied
            and replied.from_user
            and replied.from_user.id == self.app.bot.id
            and replied.forum_topic_created is None
        ):
            facts.add("reply")
        return frozenset(facts), text

    async def _on_joined(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """People joined a group: the first of them greeted where a persona greets (the
        others, who came with them, within its rate: bot.groups.welcome)."""
        message = update.message
        people = [u for u in message.new_chat_members if not u.is_bot] if message else []
        if message is None or not people:
            return
        member = people[0]
        event = self.event(
            _room(message),
            str(member.id),
            member.full_name,
            chat_id=str(message.chat.id),
            timestamp=message.date,
        )
        await self.welcome(message, event)

    async def _on_message(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Every message of a person the bot can see (in a group, all of them once its privacy
        mode is off, else those addressed to it); the bot decides whether the persona answers."""
        message = update.message
        if message is None or not (
            message.text is not None
            or message.document
            or message.photo
            or message.sticker
            or message.animation
            or message.voice
            or message.audio
        ):
            return
        sender = _sender(message)
        if sender is None:
            return
        addressed, text = self._addressed(message)
        event = replace(
            self._event(message, sender, text),
            addressed=addressed,
            names=tuple(n for n in (self.app.bot.username, self.app.bot.first_name) if n),
            admin=await self._message_admin(message),
        )
        await self.receive(message, event)

    def typing(self, where: Message) -> AbstractAsyncContextManager[object]:
        """Telegram shows "typing" a few seconds per chat action: sent again until the turn
        ends."""
        action = functools.partial(
            where.chat.send_action, ChatAction.TYPING, message_thread_id=where.message_thread_id
        )
        return typing_every(action, TYPING_EVERY, log)

    async def voice(self, where: Message, spoken: Spoken, voice: Voice) -> None:
        """A voice note (sendVoice: OGG/Opus) where the message came from, or, for other
        audio, a file (sendDocument: Telegram plays only OGG/Opus as a voice note)."""
        upload = InputFile(voice.data, filename=voice.name)
        if voice.note:
            await where.reply_voice(upload, do_quote=False)
        else:
            await where.reply_document(upload, do_quote=False)

    async def react(self, where: Message, event: ChatEvent, emoji: str) -> None:
        """The emoji on the user's message (setMessageReaction; bot.turn.reactions keeps to those
        Telegram allows)."""
        await where.set_reaction(emoji)

    async def send(
        self, where: Message, chunks: Sequence[str], keyboard: InlineKeyboardMarkup | None = None
    ) -> None:
        """Replies to `where` (quoting it in a group), the keyboard under the last chunk."""
        for number, chunk in enumerate(chunks):
            await where.reply_text(
                chunk,
                do_quote=number == 0 and not _is_dm(where),
                reply_markup=keyboard if number == len(chunks) - 1 else None,
            )

    # -- writing first (bot.outreach.courier) ---------------------------------------------

    async def private(self, user_id: str) -> int:
        """A user's private chat with the bot has the user's id: nothing to open."""
        return int(user_id)

    async def deliver(self, chat: int, text: str) -> None:
        await self.app.bot.send_message(chat, text, read_timeout=self.write_first_timeout)

    def verdict(self, error: Exception) -> Delivery | None:
        """Forbidden: the user never started the bot, blocked it, or is gone (refused; so is
        a chat Telegram does not know). A timeout or a network failure after the request
        left: sent (it may have been delivered). Any other Telegram error (the network
        before it left, an outage, flood control): unreachable."""
        if isinstance(error, Forbidden):
            return "refused"
        if isinstance(error, BadRequest):
            return "refused" if _NO_CHAT.search(error.message) else "unreachable"
        if isinstance(error, NetworkError):  # TimedOut among them
            return "sent" if isinstance(error.__cause__, _LEFT) else "unreachable"
        return "unreachable" if isinstance(error, TelegramError) else None

    async def _on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Errors PTB caught outside our handlers (network, parsing): log, keep running. The
        update itself is not logged: it holds what the user wrote."""
        update_id = update.update_id if isinstance(update, Update) else None
        error = context.error
        said = redact.failure(error) if error is not None else "unknown"
        log.warning("telegram error (update %s): %s", update_id, said)

    # -- commands ------------------------------------------------------------------------------

    def _command_callback(
        self, name: str
    ) -> Callable[[Update, ContextTypes.DEFAULT_TYPE], Coroutine[Any, Any, None]]:
        async def callback(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
            message = update.message
            sender = _commander(message)
            if message is None or message.text is None or sender is None:
                return
            event = self._event(message, sender, "")
            await self.command(message, event, name, _argument(message.text))

        return callback

    async def show(self, where: Message, event: ChatEvent, answer: Answer) -> None:
        """In the chat it was asked in, with its buttons as an inline keyboard; an answer that
        shows memories, or a file, in private (`_privately`)."""
        if answer.private or answer.file is not None:
            await self._privately(where, event, answer)
        else:
            await self._reply(where, answer, self._keyboard(answer, event, where))

    def _keyboard(
        self, answer: Answer, event: ChatEvent, message: Message
    ) -> InlineKeyboardMarkup | None:
        return self._press.keyboard(answer, event.user_id, _room(message))

    async def _on_button(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A press of an answer's button: its command, run as the presser in the chat where it
        was asked (a private answer's buttons name that chat). Only the one who asked may
        press (for a question asked as the chat or a channel, any of the chat's admins), and
        whether they may do what it does is decided again, as for a typed command."""
        query = update.callback_query
        if query is None or not isinstance(query.message, Message) or not query.data:
            return
        message, presser = query.message, query.from_user
        pressed = self._press.parse(query.data)
        if pressed is None:
            log.warning(
                "refused a button press with data this bot did not sign, by user %s",
                query.from_user.id,
            )
            with contextlib.suppress(TelegramError):
                await query.answer()  # the client stops waiting; nothing is done
            return
        name, argument, owner, room = pressed
        chat_id = int(room.partition("/")[0])
        as_chat = owner.startswith("-")  # asked as the chat or a channel: chat ids are negative
        try:
            persona = await self.front.persona_of(room)
            language = self.front.language(persona)
            if str(presser.id) != owner and not (
                as_chat and await self._admins.member(chat_id, presser.id)
            ):
                log.info(
                    "refused a button press by user %s: the buttons are %s's", presser.id, owner
                )
                await query.answer(say(language, "not_your_buttons"), show_alert=True)
                return
            await query.answer()
            in_dm = chat_id == presser.id
            admin = (
                in_dm
                or as_chat  # and pressed by one of the chat's admins
                or str(presser.id) in self._admins.ids
                or await self._admins.member(chat_id, presser.id)
            )
            event = self.event(
                room,
                owner,
                presser.first_name,
                persona=persona,
                chat_id="" if in_dm else str(chat_id),
                anonymous=as_chat and owner == str(chat_id),
                is_dm=in_dm,
                admin=admin,
            )
            answer = await self.answer(event, name, argument)
            if answer is None:
                return
            keyboard = self._press.keyboard(answer, owner, room)
            await query.edit_message_text(self.fit(answer.text), reply_markup=keyboard)
        except Exception as e:
            log.error("a button press failed in chat %s: %s", message.chat.id, redact.failure(e))

    async def _privately(self, message: Message, event: ChatEvent, answer: Answer) -> None:
        """Deliver an answer that shows someone's memories: where asked in a private chat; in a
        group, in the sender's private chat with the bot (Telegram lets a bot write there only
        once the user has started it), and the group hears only that it was sent."""
        user = message.from_user
        keyboard = self._keyboard(answer, event, message)
        if _is_dm(message) or user is None or user.is_bot or message.sender_chat is not None:
            # Asked privately; or as a channel or an anonymous admin, who have no private chat
            # and whose memory holds only what they said in this group as it, for all to see.
            await self._reply(message, answer, keyboard)
            return
        language = self.engine.persona(event).identity.language
        title = message.chat.title or str(message.chat.id)
        header = say(language, "asked_in", chat=title)
        try:
            await self._send_to(user.id, answer, header, keyboard)
        except Forbidden:
            link = f"https://t.me/{self.app.bot.username}"
            await self.say(message, say(language, "start_private_first", link=link))
            return
        await self.say(message, say(language, "sent_privately"))

    async def _send_to(
        self, chat_id: int, answer: Answer, header: str, keyboard: InlineKeyboardMarkup | None
    ) -> None:
        bot = self.app.bot
        if answer.file is not None:
            document = InputFile(answer.file.data, filename=answer.file.filename)
            await bot.send_document(chat_id, document, caption=f"{header}\n{answer.text}")
            return
        chunks = self.split(f"{header}\n{answer.text}")
        for number, chunk in enumerate(chunks, start=1):
            markup = keyboard if number == len(chunks) else None
            await bot.send_message(chat_id, chunk, reply_markup=markup)

    async def _reply(
        self, message: Message, answer: Answer, keyboard: InlineKeyboardMarkup | None
    ) -> None:
        if answer.file is not None:
            document = InputFile(answer.file.data, filename=answer.file.filename)
            await message.reply_document(document, caption=answer.text)
        else:
            await self.send(message, self.split(answer.text), keyboard)

    async def _on_unknown(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A command we do not have: the front says so, in private or when it names this bot;
        a bare `/cmd` in a group may be for another bot there."""
        message = update.message
        sender = _commander(message)
        if message is None or not message.text or sender is None:
            return
        word, _, target = message.text.split(maxsplit=1)[0].partition("@")
        username = self.app.bot.username or ""
        if _is_dm(message) or (target and target.lower() == username.lower()):
            await self.command(message, self._event(message, sender, ""), word[1:])

    async def admin(self, where: Message, event: ChatEvent) -> bool:
        """Whether the sender of a command may change the chat for everyone (`_Admins`),
        asked of Telegram afresh."""
        return await self._admins.of(where, fresh=True)

    async def _message_admin(self, message: Message) -> bool:
        """`ChatEvent.admin` for a message, by the rule of commands, for its tool calls: asked
        of Telegram only in a group where one of the bot's personas has a tool for admins
        (else False: nothing needs it), and kept a few minutes. Not knowing is no admin."""
        if not _is_dm(message) and not self.front.asks_admins:
            return False
        try:
            return await self._admins.of(message, fresh=False)
        except TelegramError as e:
            log.warning(
                "could not ask whether a sender is an admin of chat %s: %s",
                message.chat.id,
                redact.failure(e),
            )
            return False


class _Admins:
    """Who is an admin of a Telegram chat: the user in their own private chat, a configured
    admin id, the group's administrators (asked of Telegram), or the group itself (an anonymous
    admin, whom only admins can be). What Telegram said is kept ADMIN_SECONDS for messages."""

    def __init__(self, bot: Bot, admin_ids: Sequence[str], clock: Clock) -> None:
        self._bot = bot
        self.ids = frozenset(admin_ids)
        self._clock = clock
        # (chat, user) -> whether an admin, and when Telegram said so: for messages only.
        self._kept: OrderedDict[tuple[int, int], tuple[bool, datetime]] = OrderedDict()

    async def of(self, message: Message, *, fresh: bool) -> bool:
        """Whether the message's sender is the chat's admin. `fresh`: ask Telegram now, else
        as it said within ADMIN_SECONDS."""
        user = message.from_user
        if _is_dm(message) or (user is not None and str(user.id) in self.ids):
            return True
        sender_chat = message.sender_chat
        if sender_chat is not None:
            return sender_chat.id == message.chat.id
        if user is None:
            return False
        if fresh:
            return await self.member(message.chat.id, user.id)
        return await self._kept_admin(message.chat.id, user.id)

    async def _kept_admin(self, chat_id: int, user_id: int) -> bool:
        """`member`, as Telegram said within ADMIN_SECONDS (at most ADMINS_KEPT kept)."""
        now = self._clock.now()
        key = (chat_id, user_id)
        kept = self._kept.get(key)
        if kept is not None and now - kept[1] < timedelta(seconds=ADMIN_SECONDS):
            return kept[0]
        admin = await self.member(chat_id, user_id)
        self._kept[key] = (admin, now)
        self._kept.move_to_end(key)
        while len(self._kept) > ADMINS_KEPT:
            self._kept.popitem(last=False)
        return admin

    async def member(self, chat_id: int, user_id: int) -> bool:
        """Whether the user is one of the group's administrators."""
        member = await self._bot.get_chat_member(chat_id, user_id)
        return member.status in (ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER)


class _Press:
    """Buttons' callback data: the command and argument, who may press, and the room it acts
    in ("|"-separated), signed: a Telegram client may send any data for a button, so data
    this bot did not write is refused. Within Telegram's 64 bytes, or no keyboard at all (the
    answer's text says what to type)."""

    def __init__(self, token: str) -> None:
        self._key = hmac.new(token.encode(), b"kizuna telegram buttons", hashlib.sha256).digest()

    def _mac(self, payload: str) -> str:
        digest = hmac.new(self._key, payload.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest[:9]).decode()

    def data(self, button: Button, owner: str, room: str) -> str:
        payload = "|".join((button.command, button.argument, owner, room))
        return f"{payload}|{self._mac(payload)}"

    def parse(self, data: str) -> tuple[str, str, str, str] | None:
        """(command, argument, owner, room); None for data this bot did not sign."""
        payload, _, mac = data.rpartition("|")
        parts = payload.split("|")
        if not hmac.compare_digest(mac.encode(), self._mac(payload).encode()) or len(parts) != 4:
            return None
        name, argument, owner, room = parts
        return name, argument, owner, room

    def keyboard(self, answer: Answer, owner: str, room: str) -> InlineKeyboardMarkup | None:
        """An answer's buttons in one row, for `owner` to press in `room`; None if it has
        none or their data would not fit."""
        row = [
            InlineKeyboardButton(b.label, callback_data=self.data(b, owner, room))
            for b in answer.buttons
        ]
        if not row or any(len(str(b.callback_data).encode()) > CALLBACK_BYTES for b in row):
            return None
        return InlineKeyboardMarkup([row])


@dataclass(slots=True, frozen=True)
class _Sender:
    """Who said a message, as memory knows them: `id` a user's id, or a chat's (negative, so
    never a user's); `anonymous`: one of several the platform cannot tell apart."""

    id: str
    name: str
    anonymous: bool = False


def _sender(message: Message) -> _Sender | None:
    """Who said `message`, or None for a message no one in the chat said to the persona (it
    is not answered). Telegram puts a stand-in bot in `from_user` for messages sent on behalf
    of a chat, so those are known by `sender_chat`. A message sent through an inline bot
    (`via_bot`) is still its sender's, and a forward is the forwarder's (they chose to show
    it). Edited messages and business messages never get here: the handlers take new
    messages of the bot's own chats only (an edit answered again would double the turn; in a
    business chat the bot would speak as its owner, to the owner's customers)."""
    chat, user, on_behalf = message.chat, message.from_user, message.sender_chat
    if message.is_automatic_forward:
        # A linked channel's post, copied into its discussion group by Telegram: written to
        # the channel's readers, not said to the persona by anyone in the group.
        return None
    if on_behalf is not None and on_behalf.id == chat.id:
        # An anonymous admin: every admin writing anonymously comes as the group itself.
        return _Sender(str(chat.id), chat.title or "", anonymous=True)
    if on_behalf is not None:
        # Written as a channel (one's own, or the group's linked one): the channel is who
        # speaks, whichever of its admins typed it.
        name = on_behalf.title or on_behalf.username or str(on_behalf.id)
        return _Sender(str(on_behalf.id), name)
    if user is None or user.is_bot:
        # Another bot is no one to remember, and two bots answering each other never stop.
        return None
    return _Sender(str(user.id), user.first_name or user.username or str(user.id))


def _commander(message: Message | None) -> _Sender | None:
    """Who gave a command, or None: a forwarded `/cmd` was typed by someone else, to another
    chat, and does nothing here."""
    if message is None or message.forward_origin is not None:
        return None
    return _sender(message)


def _argument(text: str) -> str:
    """What follows the command word (`/cmd@bot`), newlines kept."""
    parts = text.split(maxsplit=1)
    return parts[1].strip() if len(parts) > 1 else ""


def _room(message: Message) -> str:
    """The chat (or forum topic) a persona is bound to."""
    if message.is_topic_message and message.message_thread_id is not None:
        return f"{message.chat.id}/{message.message_thread_id}"
    return str(message.chat.id)


def _is_dm(message: Message) -> bool:
    return message.chat.type == ChatType.PRIVATE


def _attachments(message: Message, bot: Bot) -> tuple[Attachment, ...]:
    """A document, a photo, a voice note or audio, handed on by reference:
    `telegram-file:<file_id>` (a download URL would carry the bot's token, which must never
    reach the engine or the logs), fetched through the Bot API when it is read (a failure:
    gone, over the Bot API's 20 MB, the network). A sticker or GIF is told by its emoji or
    name, never fetched."""
    if message.sticker is not None:
        sticker = message.sticker
        told = " ".join(filter(None, (sticker.emoji, sticker.set_name and f"({sticker.set_name})")))
        return (Attachment("sticker", "", "image/webp", sticker=told or "sticker"),)
    if message.animation is not None:  # (Telegram sets `document` to it as well)
        gif = message.animation
        title = gif.file_name or "GIF"
        return (Attachment(title, "", gif.mime_type or "video/mp4", sticker=title),)
    if message.photo:  # the sizes Telegram made of it, smallest first
        largest = message.photo[-1]
        name, file_id, mime, size = (
            "photo.jpg",
            largest.file_id,
            "image/jpeg",
            largest.file_size,
        )
    elif message.voice is not None:  # a voice note: OGG/Opus, never named
        voice = message.voice
        name, file_id = "voice note.ogg", voice.file_id
        mime, size = voice.mime_type or "audio/ogg", voice.file_size
    elif message.audio is not None:
        audio = message.audio
        name, file_id = audio.file_name or "audio", audio.file_id
        mime, size = audio.mime_type or "audio/mpeg", audio.file_size
    elif message.document is not None:
        document = message.document
        name, file_id = document.file_name or "document", document.file_id
        mime, size = document.mime_type or "", document.file_size
    else:
        return ()

    async def download() -> bytes:
        file = await bot.get_file(file_id)
        return bytes(await file.download_as_bytearray())

    return (
        attachment(
            name,
            f"telegram-file:{file_id}",
            download,
            (TelegramError,),
            content_type=mime,
            size=size or 0,
            what=f"file {file_id}",
        ),
    )


def _start(
    runtime: Runtime, config: Config, bot: BotConfig, token: str, secret: str, bot_id: str
) -> TelegramAdapter:
    webhook = None
    if bot.webhook_url:
        host, _, port = bot.webhook_listen.rpartition(":")
        webhook = Webhook(bot.webhook_url, host, int(port), secret)
    return TelegramAdapter(
        runtime.engine,
        runtime.services,
        bot.hosted,
        token,
        bot_id=bot_id,
        base_url=bot.base_url or None,
        admin_ids=bot.admin_ids,
        language=bot.language,
        webhook=webhook,
        leads=runtime.store.leads,
    )


async def _check(bot: BotConfig, token: str) -> tuple[Level, str]:
    """The token asked of Telegram (getMe), and whether the bot hears whole groups."""
    if bot.base_url:
        client = Bot(token, base_url=bot.base_url, base_file_url=file_url(bot.base_url))
    else:
        client = Bot(token)
    try:
        async with client:  # asks getMe
            me = client.bot
    except InvalidToken:
        return (
            "fail",
            f"Telegram refused the token in {bot.token_env}: ask @BotFather for it again "
            "(/mybots, your bot, API Token) and set the variable again",
        )
    except TelegramError as e:
        return "fail", f"cannot reach Telegram ({type(e).__name__})"
    said = f"@{me.username}"
    if not me.can_read_all_group_messages:
        said += (
            ". Group privacy mode is on: in groups it hears only commands, mentions and "
            "replies to it (to let it hear the whole group: @BotFather, /setprivacy, Disable, "
            "then add it to the group again)"
        )
    return "ok", said


KIND = Kind(PLATFORM, _start, _check)
