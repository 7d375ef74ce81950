"""Discord: one bot token hosting one persona or several, through discord.py 2.x.

The adapter only translates: a Discord message becomes a `ChatEvent`, the engine's `Reply` becomes
messages (already split within Discord's length limit, `PLATFORM.limit`). Every message a person
writes where the bot can read it goes to the bot, with what Discord tells of whom it is for (the
bot mentioned, one of its messages replied to, a channel bound to it: `ChatEvent.addressed`); the
bot decides whether the persona answers (bot.groups.floor: always in DMs, when addressed or called
by name, now and then uninvited as the persona's settings allow). Reading server messages needs the
Message Content intent, switched on in the Developer Portal. Memory commands are slash commands
whose answers are ephemeral, because a user's memories are theirs and should not show to the
channel.

The slash commands are the table of `bot.commands.table`, each answer's buttons a row under it:
`/forget QUERY` lists the closest memories with a button for each, and `/wipe` asks first
(Wipe / Cancel).

A bot hosting several personas lets bot.groups.routing pick who answers (a name at the start of the
message, else the channel's binding, else the first persona); the persona speaks through the
channel's webhook under its own name and avatar, or, where the bot lacks Manage Webhooks,
signs its message with its name in bold. `/persona set NAME` binds a channel; in a server it
needs the Manage Channels permission (or a configured admin id). The same permission, or
Manage Server, is what the engine asks of whoever wipes, exports, forgets from or changes the
state of a channel-scoped persona's memory (`ChatEvent.admin`), and, for an ordinary
message, whether its author may have the persona use an `admin_only` tool: from the
permissions discord.py works out from the server's roles and the channel's overwrites, with
no request.

It is also a courier (`write_first`, bot.outreach.courier): a persona writes first in a user's DM,
opened by id. Discord delivers a bot's DM only to someone who shares a server with it and
allows DMs from its members (Forbidden: refused).

`PLATFORM` is what the bot may do on Discord (bot.platforms); `KIND` starts a `[[bots]]`
table's bot and checks its token for `kizuna doctor` (adapters.kinds).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import io
import logging
import re
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

import aiohttp
import discord
import yarl
from discord import app_commands

from adapters.kinds import Kind, Level
from adapters.surface import CourierSurface, attachment
from bot import redact
from bot.catalogue import say
from bot.commands import table as commands
from bot.commands.answers import Answer, Button
from bot.commands.command import Command
from bot.commands.services import Services
from bot.config import BotConfig, Config
from bot.events import Addressed, Attachment, ChatEvent, Voice
from bot.front import Front
from bot.outreach.courier import Delivery
from bot.platforms import Platform
from bot.runtime.assemble import Runtime
from bot.spoken import Spoken
from bot.turn.engine import Engine

__all__ = ["KIND", "PERMISSIONS", "PLATFORM", "DiscordAdapter", "invite"]

log = logging.getLogger(__name__)
# Each channel (or thread) has its own readers, by permissions that change at any time: what
# is said in one is no other's. Commands are slash commands, in Discord's own menu.
PLATFORM = Platform(
    "discord", limit=2000, reactions=True, voice="audio/ogg", groups=True, bursts=True
)
# What a persona does in a channel: read and answer (in threads too), read what came before a
# reply, speak as several personas through a webhook, send exports as files, react.
PERMISSIONS = (
    "view_channel",
    "send_messages",
    "send_messages_in_threads",
    "read_message_history",
    "manage_webhooks",
    "attach_files",
    "add_reactions",
)
Interaction = discord.Interaction[discord.Client]
# Where an answer goes: a message's channel, or the interaction of a slash command.
Where = discord.abc.Messageable | Interaction
READY_TIMEOUT = 60.0  # seconds from login to the gateway's READY
WEBHOOK_NAME = "Kizuna"  # the channel webhook personas speak through
# Discord's codes for a DM no one will receive: 50007 cannot send messages to this user (DMs
# closed, no shared server, the bot blocked), 50033 invalid recipient, 10013 unknown user.
NO_DM = frozenset({50007, 50033, 10013})
# Failures after a request left for Discord (it may have acted on it); the others (connecting,
# a refused connection) mean it never arrived.
_LEFT = (aiohttp.ServerDisconnectedError, aiohttp.SocketTimeoutError, aiohttp.ClientPayloadError)


def _client(
    shard_ids: Sequence[int], shard_count: int | None, *, members: bool, **options: Any
) -> discord.Client:
    """A client with the intents the adapter needs (`members`, privileged, only where a persona
    greets new members); an AutoShardedClient running those shards when a shard count is given
    (a bot in thousands of servers, split over processes)."""
    intents = discord.Intents.none()
    intents.members = members
    intents.guilds = True
    intents.guild_messages = True
    intents.dm_messages = True
    intents.message_content = True
    # The model writes the replies: never let it ping @everyone, roles or users.
    options |= {"intents": intents, "allowed_mentions": discord.AllowedMentions.none()}
    # Personas do not speak in voice channels: no warnings about voice libraries.
    discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False
    if shard_count is None:
        return discord.Client(**options)
    ids = list(shard_ids) or list(range(shard_count))
    return discord.AutoShardedClient(shard_ids=ids, shard_count=shard_count, **options)


class DiscordAdapter(CourierSurface[Where, discord.DMChannel]):
    """Runs one Discord bot speaking as `persona` (a persona key known to `engine`, or
    several: the first is the default)."""

    platform = PLATFORM.name
    signature = "**{name}**: "

    def __init__(
        self,
        engine: Engine,
        services: Services,
        persona: str | Sequence[str],
        token: str,
        *,
        bot_id: str,
        guild_ids: Sequence[int] = (),
        channel_ids: Sequence[int] = (),
        admin_ids: Sequence[str] = (),
        language: str = "",
        api_base: str | None = None,
        shard_ids: Sequence[int] = (),
        shard_count: int | None = None,
        guild_ready_timeout: float = 2.0,
    ) -> None:
        """`guild_ids`: sync the slash commands to these guilds only (instant, for
        development) instead of globally. `channel_ids`: channels where the bot answers every
        message, not only mentions and replies. `admin_ids`: users who may bind personas to
        channels anywhere. `api_base`: another Discord-compatible REST API (such as a test
        fake, "http://127.0.0.1:P/api/v10"); discord.py keeps that address process-wide, so
        it applies to every Discord client in the process. `shard_count`: run the shards
        `shard_ids` (all, if empty) of that many; other processes run the others."""
        redact.hide(token)
        super().__init__(Front(engine, services, bot_id, persona, language=language), bot_id)
        self.admin_ids = frozenset(admin_ids)
        self._webhooks: dict[int, discord.Webhook | None] = {}
        self.guild_ids = tuple(guild_ids)
        self.channel_ids = frozenset(channel_ids)
        self._token = token
        self.api_base = api_base
        self.client = _client(
            shard_ids,
            shard_count,
            members=self.front.greets,
            guild_ready_timeout=guild_ready_timeout,
            chunk_guilds_at_startup=False,
        )
        # Slash commands sync once logged in: the application id is only known then.
        self.client.setup_hook = self._sync_commands  # type: ignore[method-assign]
        self.tree = app_commands.CommandTree(self.client)
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.client.event(self.on_ready)
        self.client.event(self.on_message)
        if self.front.greets:
            self.client.event(self.on_member_join)
        self._add_commands()

    # -- lifecycle

    async def start(self) -> None:
        """Log in, connect and return once the gateway says READY; raises, with the client
        closed, if login fails or no READY comes within READY_TIMEOUT seconds."""
        if self.api_base:
            discord.http.Route.BASE = self.api_base.rstrip("/")
        ready = asyncio.create_task(self._ready.wait())
        try:
            await self.client.login(self._token)
            if self.api_base:  # that server's gateway, not Discord's
                _, url, _ = await self.client.http.get_bot_gateway()
                discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(url)
            self._task = asyncio.create_task(self.client.connect())
            done, _ = await asyncio.wait(
                {self._task, ready}, timeout=READY_TIMEOUT, return_when=asyncio.FIRST_COMPLETED
            )
            if ready not in done:
                if self._task in done:
                    self._task.result()  # raises why it stopped
                    raise RuntimeError("the Discord client stopped before it was ready")
                raise RuntimeError(f"no READY from the Discord gateway in {READY_TIMEOUT:.0f} s")
        except BaseException:
            ready.cancel()
            await self.close()
            raise

    async def close(self) -> None:
        await self.client.close()
        if self._task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await self._task
            self._task = None

    async def on_ready(self) -> None:
        self._ready.set()

    async def _sync_commands(self) -> None:
        """Guild sync is instant (for development); global sync can take an hour to show."""
        if not self.guild_ids:
            await self.tree.sync()
            return
        for guild_id in self.guild_ids:
            guild = discord.Object(id=guild_id)
            self.tree.copy_global_to(guild=guild)
            await self.tree.sync(guild=guild)

    # -- messages

    def _heard(self, message: discord.Message) -> bool:
        """Whether `message` is someone speaking where the persona can hear. Never a webhook's:
        anyone holding its URL posts under any name, and a proxy (PluralKit) speaks for many
        people through one, re-posting what each already sent as themselves; never another
        bot's (two bots answering each other never stop); never a system message (a member
        joined, a thread opened: Discord telling of an event, its text a thread's name at
        most). Slash commands need no such care: Discord runs them for the user who used
        them. Whether the persona answers is the bot's to decide (bot.groups.floor)."""
        me = self.client.user
        if me is None or message.author.bot or message.author.id == me.id:
            return False
        if message.webhook_id is not None or message.author.system:
            return False
        return message.type in (discord.MessageType.default, discord.MessageType.reply)

    def _addressed(self, message: discord.Message) -> frozenset[Addressed]:
        """What Discord tells of whom a server message is for: the bot mentioned, one of its
        messages (or of its personas' webhook) replied to, a channel bound to it."""
        me = self.client.user
        if me is None or message.guild is None:
            return frozenset()
        facts: set[Addressed] = set()
        if message.channel.id in self.channel_ids:
            facts.add("bound")
        if me in message.mentions:
            facts.add("mention")
        replied = message.reference.resolved if message.reference else None
        if isinstance(replied, discord.Message):
            hook = self._webhooks.get(message.channel.id)
            if replied.author.id == me.id or (hook is not None and replied.webhook_id == hook.id):
                facts.add("reply")
        return frozenset(facts)

    def _names(self, message: discord.Message) -> tuple[str, ...]:
        """The bot's names here: its user name, and its nickname in the server."""
        me = self.client.user
        if me is None:
            return ()
        member = message.guild.me if message.guild is not None else None
        names = {me.name, me.display_name, member.display_name if member else ""}
        return tuple(sorted(n for n in names if n))

    def _text(self, message: discord.Message) -> str:
        """The message's text without the bot's own mention, and others' mentions as their
        names: what the persona hears of it."""
        me = self.client.user
        text = message.content
        for user in message.mentions:
            said = "" if me is not None and user.id == me.id else f"@{user.display_name}"
            text = text.replace(f"<@{user.id}>", said).replace(f"<@!{user.id}>", said)
        if me is not None:  # (mentioned without being in `mentions`: a hand-made event)
            text = re.sub(rf"<@!?{me.id}>", "", text)
        return text.strip()

    def message_event(self, message: discord.Message) -> ChatEvent:
        replied = message.reference.resolved if message.reference else None
        return self.event(
            str(message.channel.id),
            str(message.author.id),
            message.author.display_name,
            self._text(message),
            chat_id=str(message.guild.id) if message.guild else "",
            is_dm=message.guild is None,
            timestamp=message.created_at,
            attachments=(
                *(_attachment(a) for a in message.attachments),
                *(_sticker(sticker) for sticker in message.stickers),
            ),
            reply_to=replied.content if isinstance(replied, discord.Message) else None,
            roles=_roles(message.author),
            message_id=str(message.id),
            admin=self._author_admin(message),
            addressed=self._addressed(message),
            names=self._names(message),
        )

    async def on_message(self, message: discord.Message) -> None:
        if self._heard(message):
            await self.receive(message.channel, self.message_event(message))

    async def on_member_join(self, member: discord.Member) -> None:
        """Someone joined a server: greeted in its system channel where a persona greets."""
        channel = member.guild.system_channel
        if member.bot or channel is None:
            return
        event = self.event(
            str(channel.id), str(member.id), member.display_name, chat_id=str(member.guild.id)
        )
        await self.welcome(channel, event)

    def typing(self, where: Where) -> AbstractAsyncContextManager[object]:
        if isinstance(where, discord.Interaction):
            return contextlib.nullcontext()
        return where.typing()

    async def send(self, where: Where, chunks: Sequence[str]) -> None:
        for chunk in chunks:
            if isinstance(where, discord.Interaction):
                await where.followup.send(chunk, ephemeral=True)
            else:
                await where.send(chunk)

    async def react(self, where: Where, event: ChatEvent, emoji: str) -> None:
        """The emoji on the user's message (Add Reaction; the message is not fetched)."""
        channels = (
            discord.TextChannel,
            discord.Thread,
            discord.DMChannel,
            discord.VoiceChannel,
            discord.PartialMessageable,
        )
        if not isinstance(where, channels) or not event.message_id.isdigit():
            await super().react(where, event, emoji)
            return
        await where.get_partial_message(int(event.message_id)).add_reaction(emoji)

    async def speak(self, where: Where, spoken: Spoken) -> None:
        """A bot of one persona just sends. One of several speaks through the channel's
        webhook, under the persona's own name and avatar; where the bot may not manage
        webhooks (or in a DM), it signs the message with the name in bold instead."""
        hook = await self._webhook(where) if spoken.several and spoken.reply.text else None
        threads = (discord.TextChannel, discord.Thread, discord.VoiceChannel)
        if hook is None and spoken.reply.answers and isinstance(where, threads):
            # Others spoke since: the first chunk is a reply to the message it answers (a
            # webhook cannot reply, so a persona speaking through one does not thread).
            answered = discord.MessageReference(
                message_id=int(spoken.reply.answers),
                channel_id=where.id,
                fail_if_not_exists=False,
            )
            for number, chunk in enumerate(self.signed(spoken)):
                await where.send(
                    chunk,
                    reference=answered if number == 0 else discord.utils.MISSING,
                    allowed_mentions=discord.AllowedMentions.none(),
                )
            return
        if hook is None:
            await super().speak(where, spoken)
            return
        identity = spoken.persona.identity
        for chunk in spoken.reply.chunks:
            await hook.send(
                chunk,
                username=identity.name[:80],
                avatar_url=identity.avatar_url or discord.utils.MISSING,
                allowed_mentions=discord.AllowedMentions.none(),
            )

    async def voice(self, where: Where, spoken: Spoken, voice: Voice) -> None:
        """The reply said aloud, as an audio file (`reply.ogg`, which Discord plays in place) on
        a message of its own right after the text, so the text never waits for nor fails with
        it; through the persona's webhook where one bot hosts several."""
        file = discord.File(io.BytesIO(voice.data), filename=voice.name)
        if isinstance(where, discord.Interaction):
            await where.followup.send(file=file, ephemeral=True)
            return
        hook = await self._webhook(where) if spoken.several else None
        if hook is None:
            await where.send(file=file)
            return
        identity = spoken.persona.identity
        await hook.send(
            file=file,
            username=identity.name[:80],
            avatar_url=identity.avatar_url or discord.utils.MISSING,
        )

    async def _webhook(self, channel: Where) -> discord.Webhook | None:
        """This bot's webhook in a server text channel (made on first use), or None where
        there is none to be had. A refusal is remembered; other failures are tried again."""
        if not isinstance(channel, discord.TextChannel):
            return None
        if channel.id in self._webhooks:
            return self._webhooks[channel.id]
        me = self.client.user
        try:
            hooks = await channel.webhooks()
            hook = next(
                (h for h in hooks if h.token and h.user is not None and me and h.user.id == me.id),
                None,
            ) or await channel.create_webhook(name=WEBHOOK_NAME)
        except discord.Forbidden:
            log.info("no Manage Webhooks in channel %s: personas sign their messages", channel.id)
            hook = None
        except discord.HTTPException as e:
            log.warning("could not get a webhook in channel %s: %s", channel.id, e)
            return None
        self._webhooks[channel.id] = hook
        return hook

    # -- writing first (bot.outreach.courier)

    async def private(self, user_id: str) -> discord.DMChannel:
        """The user's DM with the bot (cached by discord.py once opened): no need to fetch
        the user first, their id is enough."""
        return await self.client.create_dm(discord.Object(id=int(user_id)))

    async def deliver(self, chat: discord.DMChannel, text: str) -> None:
        await chat.send(text)

    def verdict(self, error: Exception) -> Delivery | None:
        """Forbidden, or a code saying no one is there to receive it: refused. A connection
        lost after the request left: sent (it may have been delivered). Any other failure of
        Discord or the network: unreachable."""
        if isinstance(error, discord.Forbidden):
            return "refused"
        if isinstance(error, discord.HTTPException):
            return "refused" if error.code in NO_DM else "unreachable"
        if isinstance(error, discord.DiscordException):  # rate limited past waiting, ...
            return "unreachable"
        if isinstance(error, _LEFT):
            return "sent"
        if isinstance(error, aiohttp.ClientError | TimeoutError | OSError):
            return "unreachable"
        return None

    # -- slash commands

    def interaction_event(self, interaction: Interaction) -> ChatEvent:
        """The event a slash command (or a press of one's button) acts on."""
        user = interaction.user
        return self.event(
            str(interaction.channel_id or ""),
            str(user.id),
            user.display_name,
            chat_id=str(interaction.guild_id) if interaction.guild_id else "",
            is_dm=interaction.guild_id is None,
            timestamp=interaction.created_at,
            roles=_roles(user),
            admin=self._admin(interaction),
        )

    async def acknowledge(self, where: Where) -> None:
        """Defer: the model or memory may take longer than Discord waits for a first answer."""
        if isinstance(where, discord.Interaction):
            await where.response.defer(ephemeral=True, thinking=True)

    async def show(self, where: Where, event: ChatEvent, answer: Answer) -> None:
        """Ephemerally, in one message, with the answer's buttons or file."""
        if not isinstance(where, discord.Interaction):
            await self.say(where, answer.text)
        elif answer.file is not None:
            file = discord.File(io.BytesIO(answer.file.data), filename=answer.file.filename)
            await where.followup.send(self.fit(answer.text), file=file, ephemeral=True)
        elif answer.buttons:
            view = _Buttons(self, where.user.id, answer.buttons)
            await where.followup.send(self.fit(answer.text), view=view, ephemeral=True)
        else:
            await where.followup.send(self.fit(answer.text), ephemeral=True)

    async def answer(self, event: ChatEvent, name: str, argument: str = "") -> Answer:
        """A deferred command must be answered: a blocked sender is told so."""
        answer = await super().answer(event, name, argument)
        return Answer(say(self.language, "not_allowed_here")) if answer is None else answer

    def _add_commands(self) -> None:
        for command in commands.offered_on(PLATFORM):
            self.tree.add_command(self._slash(command, self.language))

    def _slash(self, command: Command, language: str) -> app_commands.Command[Any, ..., None]:
        """The slash command of one of the table's: its options become Discord's, and their
        values, in order, the argument."""
        names = [option.name for option in command.options]

        async def callback(interaction: Interaction, **values: str) -> None:
            argument = " ".join(value for n in names if (value := values.get(n, "").strip()))
            event = self.interaction_event(interaction)
            await self.command(interaction, event, command.name, argument)

        first = inspect.Parameter(
            "interaction", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Interaction
        )
        options = [
            inspect.Parameter(
                o.name,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=str,
                default=inspect.Parameter.empty if o.required else "",
            )
            for o in command.options
        ]
        choices = {
            o.name: [app_commands.Choice(name=c, value=c) for c in o.choices]
            for o in command.options
            if o.choices
        }
        # What discord.py reads of a callback: its signature, and what the decorators set.
        callback.__dict__.update(
            __signature__=inspect.Signature([first, *options]),
            __discord_app_commands_param_description__={
                n: say(language, f"option_{command.name}_{n}") for n in names
            },
            __discord_app_commands_param_choices__=choices,
        )
        what = commands.describe(command.name, language)
        return app_commands.Command(
            name=command.name, description=what[0].upper() + what[1:], callback=callback
        )

    def _admin(self, interaction: Interaction) -> bool:
        """Whether the user may change what the channel shares (its memory, its persona): a DM
        is the user's own; in a server it takes Manage Server or Manage Channels (in this
        channel), or a configured admin id."""
        if interaction.guild_id is None or str(interaction.user.id) in self.admin_ids:
            return True
        return _manages(interaction.permissions)

    def _author_admin(self, message: discord.Message) -> bool:
        """The rule of `_admin` for the author of a message (for its tool calls): their
        permissions in the channel as discord.py computes them from the cached roles and
        overwrites (a server's owner and an Administrator have all), no request."""
        author = message.author
        if message.guild is None or str(author.id) in self.admin_ids:
            return True
        if not isinstance(author, discord.Member):
            return False
        channel = message.channel
        if isinstance(channel, discord.abc.GuildChannel | discord.Thread):
            return _manages(channel.permissions_for(author))
        return _manages(author.guild_permissions)  # (a channel discord.py has not cached)


def _manages(permissions: discord.Permissions) -> bool:
    return bool(permissions.manage_guild or permissions.manage_channels)


def _attachment(file: discord.Attachment) -> Attachment:
    """Fetched by the client; an HTTP error is the file gone (deleted, its link expired) or
    refused. A GIF is told by its name, never fetched (bot.media.pictures)."""
    if (file.content_type or "").startswith("image/gif"):
        return Attachment(file.filename, file.url, "image/gif", file.size, sticker=file.filename)
    return attachment(
        file.filename,
        file.url,
        file.read,
        (discord.HTTPException,),
        content_type=file.content_type or "",
        size=file.size,
        what=f"attachment {file.id}",
    )


def _sticker(sticker: discord.StickerItem) -> Attachment:
    """A sticker is told by its name (bot.media.pictures), never fetched."""
    return Attachment(sticker.name, sticker.url, "image/png", sticker=sticker.name or "sticker")


def _roles(user: discord.User | discord.Member) -> tuple[str, ...]:
    """The member's role ids in this server (none in a DM), for the access lists."""
    if not isinstance(user, discord.Member):
        return ()
    return tuple(str(role.id) for role in user.roles if not role.is_default())


class _Buttons(discord.ui.View):
    """An answer's buttons under it; a press runs the button's command as the one who
    pressed, and the message becomes its answer. Only the user who ran the command may
    press them."""

    def __init__(self, adapter: DiscordAdapter, user_id: int, buttons: Sequence[Button]):
        super().__init__(timeout=300)
        self.user_id = user_id
        self.language = adapter.language
        for button in buttons:
            self.add_item(_Press(adapter, button))

    async def interaction_check(self, interaction: Interaction, /) -> bool:
        if interaction.user.id == self.user_id:
            return True
        log.info(
            "refused a button press by user %s: the buttons are user %s's",
            interaction.user.id,
            self.user_id,
        )
        try:
            said = say(self.language, "not_your_buttons")
            await interaction.response.send_message(said, ephemeral=True)
        except Exception as e:
            log.error("refusing a button press failed: %s", redact.failure(e))
        return False


class _Press(discord.ui.Button[_Buttons]):
    def __init__(self, adapter: DiscordAdapter, button: Button) -> None:
        style = discord.ButtonStyle.danger if button.danger else discord.ButtonStyle.secondary
        super().__init__(label=button.label, style=style)
        self.adapter = adapter
        self.button = button

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        if self.view is not None:
            self.view.stop()
        event = self.adapter.interaction_event(interaction)
        answer = await self.adapter.answer(event, self.button.command, self.button.argument)
        view = (
            _Buttons(self.adapter, self.view.user_id, answer.buttons)
            if answer.buttons and self.view
            else None
        )
        try:
            await interaction.response.edit_message(
                content=self.adapter.fit(answer.text), view=view
            )
        except Exception as e:
            log.error("answering a button failed: %s", redact.failure(e))


def invite(application_id: int) -> str:
    """The address that adds the bot to a server with the scopes and permissions it needs."""
    permissions = discord.Permissions(**dict.fromkeys(PERMISSIONS, True))
    return discord.utils.oauth_url(
        application_id, permissions=permissions, scopes=("bot", "applications.commands")
    )


def _start(
    runtime: Runtime, config: Config, bot: BotConfig, token: str, secret: str, bot_id: str
) -> DiscordAdapter:
    return DiscordAdapter(
        runtime.engine,
        runtime.services,
        bot.hosted,
        token,
        bot_id=bot_id,
        guild_ids=bot.guild_ids,
        channel_ids=bot.channel_ids,
        admin_ids=bot.admin_ids,
        language=bot.language,
        api_base=bot.base_url or None,
        shard_ids=bot.shard_ids,
        shard_count=bot.shard_count or None,
    )


async def _check(bot: BotConfig, token: str) -> tuple[Level, str]:
    """The token logged in with, and the application's Message Content intent read."""
    if bot.base_url:  # process-wide in discord.py; `kizuna doctor` is a process of its own
        discord.http.Route.BASE = bot.base_url.rstrip("/")
    discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False  # no voice here
    client = discord.Client(intents=discord.Intents(guilds=True))
    try:
        try:
            await client.login(token)
            app = await client.application_info()
        except discord.LoginFailure:
            return (
                "fail",
                f"Discord refused the token in {bot.token_env}: reset it (Developer Portal, "
                "your application, Bot, Reset Token) and set the variable again",
            )
        except (discord.HTTPException, aiohttp.ClientError, OSError) as e:
            return "fail", f"cannot reach Discord ({type(e).__name__})"
        address = invite(app.id)
        if not (app.flags.gateway_message_content or app.flags.gateway_message_content_limited):
            return (
                "fail",
                "the Message Content intent is off, so the bot cannot read messages: switch it "
                "on (Developer Portal, Bot, Privileged Gateway Intents). Invite: " + address,
            )
        return "ok", f"logged in as {client.user}. Invite: {address}"
    finally:
        await client.close()


KIND = Kind(PLATFORM, _start, _check)
