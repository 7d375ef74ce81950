"""Discord: one bot token hosting one persona or several, through discord.py 2.x.

The adapter only translates: a Discord message becomes a `ChatEvent`, the engine's `Reply`
becomes messages (already split at Discord's 2,000 characters). It answers in DMs, when
mentioned, when one of its own messages is replied to, and in channels bound to it; anything
else in a server is other people's conversation. Memory commands are slash commands whose
answers are ephemeral, because a user's memories are theirs and should not show to the channel.

`/forget QUERY` lists the closest memories with a button for each; a press asks once more
(Forget / Cancel) before deleting. `/wipe` asks for the same confirmation.

A bot hosting several personas lets bot.routing pick who answers (a name at the start of the
message, else the channel's binding, else the first persona); the persona speaks through the
channel's webhook under its own name and avatar, or, where the bot lacks Manage Webhooks,
signs its message with its name in bold. `/persona set NAME` binds a channel; in a server it
needs the Manage Channels permission (or a configured admin id). The same permission, or
Manage Server, is what the engine asks of whoever wipes, exports, forgets from or changes the
state of a channel-scoped persona's memory (`ChatEvent.admin`).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import discord
import yarl
from discord import app_commands

from bot import commands, redact
from bot.access import NotAllowed
from bot.documents import DocumentError, is_document, precheck
from bot.engine import Engine
from bot.events import PLATFORM_LIMITS, Attachment, ChatEvent, Reply, split_chunks
from bot.routing import PersonaRouter
from memory.recall import Recalled

__all__ = ["DiscordAdapter"]

log = logging.getLogger(__name__)
LIMIT = PLATFORM_LIMITS["discord"]
Interaction = discord.Interaction[discord.Client]
READY_TIMEOUT = 60.0  # seconds from login to the gateway's READY
NOT_ALLOWED = "You can't use this bot here."
WEBHOOK_NAME = "Kizuna"  # the channel webhook personas speak through


def _client(shard_ids: Sequence[int], shard_count: int | None, **options: Any) -> discord.Client:
    """A client with the intents the adapter needs; an AutoShardedClient running those shards
    when a shard count is given (a bot in thousands of servers, split over processes)."""
    intents = discord.Intents.none()
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


class DiscordAdapter:
    """Runs one Discord bot speaking as `persona` (a persona key known to `engine`, or
    several: the first is the default)."""

    def __init__(
        self,
        engine: Engine,
        persona: str | Sequence[str],
        token: str,
        *,
        bot_id: str,
        guild_ids: Sequence[int] = (),
        channel_ids: Sequence[int] = (),
        admin_ids: Sequence[str] = (),
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
        self.engine = engine
        self.router = PersonaRouter(
            engine, bot_id, [persona] if isinstance(persona, str) else persona
        )
        self.persona = self.router.default
        self.admin_ids = frozenset(admin_ids)
        self._webhooks: dict[int, discord.Webhook | None] = {}
        self.bot_id = bot_id
        self.guild_ids = tuple(guild_ids)
        self.channel_ids = frozenset(channel_ids)
        self._token = token
        self.api_base = api_base
        self.client = _client(
            shard_ids,
            shard_count,
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

    def _addressed(self, message: discord.Message) -> bool:
        """Whether `message` is someone speaking to the persona. Never a webhook's: anyone
        holding its URL posts under any name, and a proxy (PluralKit) speaks for many people
        through one, re-posting what each already sent as themselves; never another bot's
        (two bots answering each other never stop); never a system message (a member joined,
        a thread opened: Discord telling of an event, its text a thread's name at most).
        Slash commands need no such care: Discord runs them for the user who used them."""
        me = self.client.user
        if me is None or message.author.bot or message.author.id == me.id:
            return False
        if message.webhook_id is not None or message.author.system:
            return False
        if message.type not in (discord.MessageType.default, discord.MessageType.reply):
            return False
        if message.guild is None or message.channel.id in self.channel_ids:
            return True
        if me in message.mentions:
            return True
        replied = message.reference.resolved if message.reference else None
        return isinstance(replied, discord.Message) and replied.author.id == me.id

    def _strip_mention(self, text: str) -> str:
        me = self.client.user
        if me is None:
            return text.strip()
        return re.sub(rf"<@!?{me.id}>", "", text).strip()

    def message_event(self, message: discord.Message, persona: str | None = None) -> ChatEvent:
        replied = message.reference.resolved if message.reference else None
        return ChatEvent(
            platform="discord",
            bot_id=self.bot_id,
            persona=persona or self.persona,
            chat_id=str(message.guild.id) if message.guild else "",
            channel_id=str(message.channel.id),
            user_id=str(message.author.id),
            user_name=message.author.display_name,
            is_dm=message.guild is None,
            text=self._strip_mention(message.content),
            timestamp=message.created_at,
            attachments=tuple(
                Attachment(a.filename, a.url, a.content_type or "", a.size)
                for a in message.attachments
            ),
            reply_to=replied.content if isinstance(replied, discord.Message) else None,
            roles=_roles(message.author),
        )

    async def on_message(self, message: discord.Message) -> None:
        if not self._addressed(message):
            return
        try:
            text = self._strip_mention(message.content)
            persona = await self.router.choose(str(message.channel.id), text)
            event = self.message_event(message, persona)
            if event.is_empty:
                return
            async with message.channel.typing():
                document = next((a for a in message.attachments if is_document(a.filename)), None)
                if document is not None:
                    reply = await self._read(event, document)
                else:
                    reply = await self.engine.handle(event)
            await self._send(message.channel, persona, reply.text, reply.chunks)
        except Exception as e:
            log.error("answering Discord message %s failed: %s", message.id, redact.failure(e))

    async def _read(self, event: ChatEvent, attachment: discord.Attachment) -> Reply:
        """Document mode with a file the user attached: refused by its declared size before
        any download, else fetched and read."""
        neutral = self.engine.persona(event).emotions.neutral
        try:
            precheck(attachment.filename, attachment.size, limit_bytes=self.engine.document_limit)
        except DocumentError as e:
            return Reply.build(str(e), neutral, LIMIT)
        try:
            data = await attachment.read()
        except discord.HTTPException as e:  # gone (deleted, its link expired) or refused
            log.warning("could not download attachment %s: %s", attachment.id, e)
            refusal = DocumentError(attachment.filename, "could not be downloaded; send it again")
            return Reply.build(str(refusal), neutral, LIMIT)
        return await self.engine.read_document(event, attachment.filename, data)

    async def _send(self, channel: Any, persona: str, text: str, chunks: Sequence[str]) -> None:
        """A bot of one persona just sends. One of several speaks through the channel's
        webhook, under the persona's own name and avatar; where the bot may not manage
        webhooks (or in a DM), it signs the message with the name in bold instead."""
        if not self.router.several or not text:
            for chunk in chunks:
                await channel.send(chunk)
            return
        identity = self.router.persona(persona).identity
        hook = await self._webhook(channel)
        if hook is not None:
            for chunk in chunks:
                await hook.send(
                    chunk,
                    username=identity.name[:80],
                    avatar_url=identity.avatar_url or discord.utils.MISSING,
                    allowed_mentions=discord.AllowedMentions.none(),
                )
            return
        for chunk in split_chunks(f"**{identity.name}**: {text}", LIMIT):
            await channel.send(chunk)

    async def _webhook(self, channel: Any) -> discord.Webhook | None:
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

    # -- slash commands

    async def interaction_event(self, interaction: Interaction, text: str = "") -> ChatEvent:
        """The event a slash command acts on: the persona of the channel it was used in."""
        user = interaction.user
        persona = await self.router.choose(str(interaction.channel_id or ""))
        return ChatEvent(
            platform="discord",
            bot_id=self.bot_id,
            persona=persona,
            chat_id=str(interaction.guild_id) if interaction.guild_id else "",
            channel_id=str(interaction.channel_id or ""),
            user_id=str(user.id),
            user_name=user.display_name,
            is_dm=interaction.guild_id is None,
            text=text,
            timestamp=interaction.created_at,
            roles=_roles(user),
            admin=self._admin(interaction),
        )

    async def _answer(
        self, interaction: Interaction, work: Callable[[ChatEvent], Awaitable[Answer]]
    ) -> None:
        """Defer (the model or memory may take longer than Discord's 3 s), do the work, send
        the answer ephemerally. Failures are logged and told to the user, never raised."""
        try:
            await interaction.response.defer(ephemeral=True, thinking=True)
            event = await self.interaction_event(interaction)
            verdict = self.engine.admit(event)
            if verdict == "admit":
                answer = await work(event)
            elif verdict == "blocked":
                answer = NOT_ALLOWED
            else:  # ephemeral, so saying it again spams no one
                answer = self.engine.slow_down(event)
        except NotAllowed as refusal:
            answer = str(refusal)
        except Exception as e:
            name = interaction.command.name if interaction.command else "?"
            log.error("/%s failed: %s", name, redact.failure(e))
            answer = "Something went wrong."
        text, extra = (answer, None) if isinstance(answer, str) else answer
        try:
            if isinstance(extra, _Buttons):
                await interaction.followup.send(_fit(text), view=extra, ephemeral=True)
            elif isinstance(extra, discord.File):
                await interaction.followup.send(_fit(text), file=extra, ephemeral=True)
            else:
                await interaction.followup.send(_fit(text), ephemeral=True)
        except Exception as e:
            log.error("answering an interaction failed: %s", redact.failure(e))

    def _add_commands(self) -> None:
        tree, engine = self.tree, self.engine

        @tree.command(name="remember", description=_describe("remember"))
        @app_commands.describe(text="what to remember")
        async def remember(interaction: Interaction, text: str) -> None:
            async def work(event: ChatEvent) -> str:
                return (await commands.remember(engine, event, text)).message

            await self._answer(interaction, work)

        @tree.command(name="recall", description=_describe("recall"))
        @app_commands.describe(query="what to recall")
        async def recall(interaction: Interaction, query: str) -> None:
            async def work(event: ChatEvent) -> str:
                hit = await commands.closest(engine, event, query)
                return commands.format_memory(hit, engine) if hit else "Nothing comes to mind."

            await self._answer(interaction, work)

        @tree.command(name="memories", description=_describe("memories"))
        @app_commands.describe(query="show the best matches of this instead of the newest")
        async def memories(interaction: Interaction, query: str = "") -> None:
            async def work(event: ChatEvent) -> str:
                found = await commands.list_memories(engine, event, query)
                lines = [commands.format_memory(m, engine) for m in found]
                return "\n".join(lines) or "No memories yet."

            await self._answer(interaction, work)

        @tree.command(name="forget", description=_describe("forget"))
        @app_commands.describe(query="what to forget")
        async def forget(interaction: Interaction, query: str) -> None:
            async def work(event: ChatEvent) -> Answer:
                found = await commands.forget_candidates(engine, event, query)
                if not found:
                    return "No memory matches that."
                lines = [
                    commands.format_memory(m, engine, number=i) for i, m in enumerate(found, 1)
                ]
                text = "\n".join([*lines, "Which one should be forgotten?"])
                choices = [
                    (str(i), discord.ButtonStyle.secondary, self._confirm_forget(event, m))
                    for i, m in enumerate(found, 1)
                ]
                return text, _Buttons(interaction.user.id, choices)

            await self._answer(interaction, work)

        @tree.command(name="end", description=_describe("end"))
        async def end(interaction: Interaction) -> None:
            async def work(event: ChatEvent) -> str:
                closed = await engine.end(event)
                return "Conversation ended." if closed else "No conversation is open."

            await self._answer(interaction, work)

        @tree.command(name="wipe", description=_describe("wipe"))
        async def wipe(interaction: Interaction) -> None:
            async def work(event: ChatEvent) -> Answer:
                async def wipe_now() -> Answer:
                    return await commands.wipe(engine, event)

                engine.check_may_change(event)  # refused before asking, not after
                question = commands.wipe_question(engine, event)
                return question, _Buttons(interaction.user.id, _yes_no("Wipe", wipe_now))

            await self._answer(interaction, work)

        @tree.command(name="state", description=_describe("state"))
        @app_commands.describe(
            slot="a slot to change (like characters); leave empty to see them all",
            value="the slot's new value",
        )
        async def state(interaction: Interaction, slot: str = "", value: str = "") -> None:
            async def work(event: ChatEvent) -> str:
                if slot:
                    return await commands.set_state(engine, event, f"{slot} {value}")
                return await commands.show_state(engine, event)

            await self._answer(interaction, work)

        @tree.command(name="diary", description=_describe("diary"))
        @app_commands.describe(day="yesterday, 2026-09-03, last Monday...; empty: the newest")
        async def diary(interaction: Interaction, day: str = "") -> None:
            async def work(event: ChatEvent) -> str:
                return await commands.diary(engine, event, day)

            await self._answer(interaction, work)

        @tree.command(name="dm_memories", description=_describe("dm_memories"))
        @app_commands.describe(choice="on or off; leave empty to see the current choice")
        @app_commands.choices(choice=[app_commands.Choice(name=c, value=c) for c in ("on", "off")])
        async def dm_memories(interaction: Interaction, choice: str = "") -> None:
            async def work(event: ChatEvent) -> str:
                return await commands.dm_memories(engine, event, choice)

            await self._answer(interaction, work)

        @tree.command(name="profile", description=_describe("profile"))
        async def profile(interaction: Interaction) -> None:
            async def work(event: ChatEvent) -> str:
                return await commands.profile(engine, event)

            await self._answer(interaction, work)

        @tree.command(name="export", description=_describe("export"))
        async def export(interaction: Interaction) -> None:
            async def work(event: ChatEvent) -> Answer:
                said, data = await commands.export(engine, event)
                return said, discord.File(io.BytesIO(data), filename="memories.json")

            await self._answer(interaction, work)

        @tree.command(name="persona", description=_describe("persona"))
        @app_commands.describe(
            action="leave empty to see who talks here, or `set`", name="the persona to bind"
        )
        async def persona(interaction: Interaction, action: str = "", name: str = "") -> None:
            async def work(event: ChatEvent) -> str:
                channel = event.channel_id
                if action.strip().lower() != "set":
                    return await self.router.describe(channel)
                if not event.admin:
                    return "Only someone who can manage this channel can choose its persona."
                return await self.router.bind(channel, name, event.user_id)

            await self._answer(interaction, work)

        # Registered on the tree by the decorators.
        del remember, recall, memories, forget, end, wipe, state, diary, profile, export
        del persona, dm_memories

    def _admin(self, interaction: Interaction) -> bool:
        """Whether the user may change what the channel shares (its memory, its persona): a DM
        is the user's own; in a server it takes Manage Server or Manage Channels (in this
        channel), or a configured admin id."""
        if interaction.guild_id is None or str(interaction.user.id) in self.admin_ids:
            return True
        permissions = interaction.permissions
        return bool(permissions.manage_guild or permissions.manage_channels)

    def _confirm_forget(self, event: ChatEvent, memory: Recalled) -> Step:
        """The step after picking a memory: ask once more, then delete it."""
        engine = self.engine

        async def forget_now() -> Answer:
            gone = await commands.forget(engine, event, memory.id)
            return f"Forgotten: {gone.text}" if gone else "That memory is already gone."

        async def ask() -> Answer:
            said = commands.format_memory(memory, engine)
            return f"Forget this?\n{said}", _Buttons(
                int(event.user_id), _yes_no("Forget", forget_now)
            )

        return ask


# Text, and buttons or a file to go with it.
Answer = str | tuple[str, "_Buttons"] | tuple[str, discord.File]
Step = Callable[[], Awaitable[Answer]]  # what pressing a button does


# Where Discord's options differ from the shared `state set NAME VALUE` syntax.
_OPTIONS_SYNTAX = {
    "state": "what is kept track of here; give a slot and a value to change one",
    "persona": "who talks here; action `set` and a name change it (Manage Channels)",
}


def _describe(command: str) -> str:
    """A shared command's description, as Discord's menu shows it (capitalised)."""
    what = _OPTIONS_SYNTAX.get(command) or commands.DESCRIPTIONS[command]
    return what[0].upper() + what[1:]


def _roles(user: discord.User | discord.Member) -> tuple[str, ...]:
    """The member's role ids in this server (none in a DM), for the access lists."""
    if not isinstance(user, discord.Member):
        return ()
    return tuple(str(role.id) for role in user.roles if not role.is_default())


def _yes_no(verb: str, yes: Step) -> list[tuple[str, discord.ButtonStyle, Step]]:
    async def cancel() -> Answer:
        return "Cancelled."

    return [
        (verb, discord.ButtonStyle.danger, yes),
        ("Cancel", discord.ButtonStyle.secondary, cancel),
    ]


class _Buttons(discord.ui.View):
    """A row of buttons under an ephemeral answer; a press runs its step and replaces the
    message with the step's answer. Only the user who ran the command may press them."""

    def __init__(self, user_id: int, choices: Sequence[tuple[str, discord.ButtonStyle, Step]]):
        super().__init__(timeout=300)
        self.user_id = user_id
        for label, style, step in choices:
            self.add_item(_StepButton(label, style, step))

    async def interaction_check(self, interaction: Interaction, /) -> bool:
        if interaction.user.id == self.user_id:
            return True
        log.info(
            "refused a button press by user %s: the buttons are user %s's",
            interaction.user.id,
            self.user_id,
        )
        try:
            await interaction.response.send_message("These buttons are not yours.", ephemeral=True)
        except Exception as e:
            log.error("refusing a button press failed: %s", redact.failure(e))
        return False


class _StepButton(discord.ui.Button[_Buttons]):
    def __init__(self, label: str, style: discord.ButtonStyle, step: Step) -> None:
        super().__init__(label=label, style=style)
        self.step = step

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        if self.view is not None:
            self.view.stop()
        try:
            answer = await self.step()
        except NotAllowed as refusal:
            answer = str(refusal)
        except Exception as e:
            log.error("a button step failed: %s", redact.failure(e))
            answer = "Something went wrong."
        text, extra = (answer, None) if isinstance(answer, str) else answer
        view = extra if isinstance(extra, _Buttons) else None
        try:
            await interaction.response.edit_message(content=_fit(text), view=view)
        except Exception as e:
            log.error("answering a button failed: %s", redact.failure(e))


def _fit(text: str) -> str:
    """One Discord message: the first chunk of a long text."""
    return (split_chunks(text, LIMIT) or ("…",))[0]
