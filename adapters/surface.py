"""What every chat surface does alike, once: a platform's adapter is a `Surface` that supplies
a few hooks, and the skeleton runs the rest.

What the platform can do is its `Platform` (bot.platforms), which the adapter's module
declares as `PLATFORM` and the engine's registry holds; the surface finds it there by name.

A message: `receive(where, event)` hands it to the front (which decides whether the persona
speaks, after the rest of a burst where the platform has them: `Platform.bursts`), shows typing
while the persona answers, sends the reply in chunks within the platform's length limit (signed
with the persona's name where one bot hosts several), and apologises if the turn fails; in a
group, what a persona says is relayed to the other personas of the process in the room
(bot.groups.relay), and their answers spoken here. A command: `command(where, event, name,
argument)` asks the platform whether the sender is an admin, runs it through the front and
renders its `Answer`; a failure becomes the apology, said where the command was given. A button
pressed is the same command run again as the presser (`answer`). Failures are logged by the
platform's own logger with what failed, never with what the user wrote.

    class Shout(Surface[list[str]]):        # where an answer goes: here, a list
        platform = "web"                    # its name in the engine's bot.platforms.Platforms

        async def send(self, where: list[str], chunks: Sequence[str]) -> None:
            where.extend(chunk.upper() for chunk in chunks)

    shout = Shout(Front(engine, services, "shout", "pip"), "shout")
    await shout.receive(said, shout.event("room", "ann", "Ann", "hello"))

The hooks a platform may supply besides `send`: `typing` (shown while a turn runs; see
`typing_every` for platforms whose indicator fades), `speak` (a reply, where a persona shows
its own name and face), `voice` (a reply said aloud, after its text), `show` (a command's
answer with its buttons and file), `acknowledge` (before a command runs), `admin`,
`apologise`. `attachment` makes an attachment whose
download failures are `FetchError`s, as the front expects.

A platform whose bot can write first to a person (bot.outreach.courier.Courier, for bot.outreach) is
a `CourierSurface`: it opens the person's private chat (`private`), sends a piece there (`deliver`)
and says what its errors mean (`verdict`); `write_first` signs, splits, sends and never raises."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from datetime import datetime
from typing import ClassVar, Generic, TypedDict, TypeVar, Unpack

from bot import redact
from bot.catalogue import say
from bot.commands.answers import Answer
from bot.events import Addressed, Attachment, ChatEvent, FetchError, Voice, split_chunks
from bot.front import Front
from bot.outreach.courier import Delivery
from bot.spoken import Spoken
from bot.turn.engine import Engine

__all__ = ["CourierSurface", "EventDetails", "Surface", "attachment", "typing_every"]

Where = TypeVar("Where")  # where an answer goes: a channel, a message replied to, a socket
Private = TypeVar("Private")  # a person's private chat with the bot, as the platform names it


class EventDetails(TypedDict, total=False):
    """What some platforms tell of a message besides who said what where (`ChatEvent`'s)."""

    attachments: tuple[Attachment, ...]
    reply_to: str | None
    roles: tuple[str, ...]
    message_id: str
    admin: bool
    anonymous: bool
    addressed: frozenset[Addressed]
    names: tuple[str, ...]


class Surface(ABC, Generic[Where]):
    """A chat platform's adapter over one `Front`."""

    platform: ClassVar[str]  # its name in the engine's registry (bot.platforms)
    # How a persona signs its reply where one bot hosts several and the platform has no other
    # way to show who speaks.
    signature: ClassVar[str] = "{name}: "

    def __init__(self, front: Front, bot_id: str) -> None:
        self.front = front
        self.bot_id = bot_id
        self.described = front.engine.platforms[self.platform]  # what the platform can do
        self.limit = self.described.limit
        # The platform's own logger (adapters.telegram, ...): its records say where they are from.
        self.log = logging.getLogger(type(self).__module__)

    @property
    def engine(self) -> Engine:
        return self.front.engine

    @property
    def persona(self) -> str:
        """The bot's default persona."""
        return self.front.persona

    @property
    def language(self) -> str:
        """The language of what the bot itself says (its menus, its apology): its default
        persona's, unless the host set one for the bot."""
        return self.front.language()

    @property
    def apology(self) -> str:
        return say(self.language, "failed_here")

    # -- hooks

    @abstractmethod
    async def send(self, where: Where, chunks: Sequence[str]) -> None:
        """Send text, a message for each chunk (each within `limit`)."""

    def typing(self, where: Where) -> AbstractAsyncContextManager[object]:
        """Shown while a turn runs (none by default)."""
        return contextlib.nullcontext()

    async def speak(self, where: Where, spoken: Spoken) -> None:
        """Send a persona's reply."""
        await self.send(where, self.signed(spoken))

    async def voice(self, where: Where, spoken: Spoken, voice: Voice) -> None:
        """Send a reply said aloud (bot.media.speech), after its text: a voice note where `voice`
        is one (`Voice.note`), else an audio file. Nothing by default: the front says
        nothing aloud on a platform with no `Platform.voice`."""

    async def react(self, where: Where, event: ChatEvent, emoji: str) -> None:
        """Put `emoji` on the message of `event` (bot.turn.reactions: only a platform with
        `Platform.reactions` is given one); by default it is sent as a message."""
        await self.send(where, (emoji,))

    async def acknowledge(self, where: Where) -> None:
        """Tell the platform a command is taken, before it runs (nothing by default)."""

    async def admin(self, where: Where, event: ChatEvent) -> bool:
        """Whether the sender of a command may change what the chat shares (`ChatEvent.admin`),
        asked of the platform when the command runs: by default, as the event says. A message
        carries the same flag for its tool calls (`admin_only`): the adapter sets it as it
        makes the event, by the same rule, where it is cheap to know (`Front.asks_admins`)."""
        return event.admin

    async def show(self, where: Where, event: ChatEvent, answer: Answer) -> None:
        """Render a command's answer (by default its text alone: a platform with buttons or
        files renders those)."""
        await self.say(where, answer.text)

    async def apologise(self, where: Where) -> None:
        """Say that answering failed; a failure to say so is only logged."""
        try:
            await self.say(where, self.apology)
        except Exception as e:
            self.log.warning("could not apologise: %s", redact.failure(e))

    # -- shared

    def event(
        self,
        channel_id: str,
        user_id: str,
        user_name: str,
        text: str = "",
        *,
        is_dm: bool = False,
        chat_id: str = "",
        persona: str = "",
        timestamp: datetime | None = None,
        **more: Unpack[EventDetails],
    ) -> ChatEvent:
        """An event of this platform and bot; `persona` the bot's default unless named (the
        front chooses who is addressed), `timestamp` now unless the platform dated it."""
        return ChatEvent(
            platform=self.platform,
            bot_id=self.bot_id,
            persona=persona or self.persona,
            chat_id=chat_id,
            channel_id=channel_id,
            user_id=user_id,
            user_name=user_name,
            is_dm=is_dm,
            text=text,
            timestamp=timestamp or self.engine.clock.now(),
            same_readers=self.described.same_readers,
            host=self.described.host,
            private_as=self.described.private_as,
            **more,
        )

    def split(self, text: str) -> tuple[str, ...]:
        """`text` in chunks within the platform's limit."""
        return split_chunks(text, self.limit)

    def fit(self, text: str) -> str:
        """One message: the first chunk of a long text."""
        return (self.split(text) or ("…",))[0]

    def signed(self, spoken: Spoken) -> tuple[str, ...]:
        """A reply's chunks, signed with the persona's name where the bot hosts several."""
        reply = spoken.reply
        if not spoken.several or not reply.text:
            return reply.chunks
        return self.split(self._sign(spoken) + reply.text)

    def _sign(self, spoken: Spoken) -> str:
        return self.signature.format(name=spoken.persona.identity.name)

    async def say(self, where: Where, text: str) -> None:
        await self.send(where, self.split(text))

    async def receive(self, where: Where, event: ChatEvent) -> None:
        """Hand a message the bot heard to the front: typing while the persona answers, then
        the reply (in a group it may keep quiet); an apology if that fails. Never raises."""
        if event.is_empty:
            return
        if not event.is_dm:  # the bot's personas are in this room, to hear the others
            self.engine.relay.seat(
                event, self.bot_id, self.front.router.personas, lambda h: self._relayed(where, h)
            )
        try:
            spoken = await self.front.receive(
                event, settle=self.described.bursts, typing=lambda: self.typing(where)
            )
            if spoken is not None and spoken.reply.reaction:
                await self.react(where, event, spoken.reply.reaction)
            elif spoken is not None:
                await self.speak(where, spoken)
                await self._voice(where, spoken)
                await self._relay(event, spoken)
        except Exception as e:
            self.log.error(
                "answering a message in %s %s failed: %s",
                self.platform,
                event.channel_id,
                redact.failure(e),
            )
            await self.apologise(where)

    async def welcome(self, where: Where, event: ChatEvent) -> None:
        """`event`'s sender just joined the group: greeted where a persona greets
        (bot.groups.welcome). Never raises: a failure is only logged."""
        try:
            spoken = await self.front.welcome(event)
            if spoken is not None:
                await self.speak(where, spoken)
        except Exception as e:
            failure = redact.failure(e)
            self.log.error("greeting in %s %s failed: %s", self.platform, event.channel_id, failure)

    async def _voice(self, where: Where, spoken: Spoken) -> None:
        """The reply's voice note, if it has one; a failure is logged (the text went)."""
        if spoken.reply.voice is None:
            return
        try:
            await self.voice(where, spoken, spoken.reply.voice)
        except Exception as e:
            self.log.warning(
                "could not send a voice note in %s: %s", self.platform, redact.failure(e)
            )

    async def _relay(self, event: ChatEvent, spoken: Spoken) -> None:
        """What a persona said in a group is heard by the other personas there
        (bot.groups.relay)."""
        if not event.is_dm and not spoken.reply.failed:
            persona, text = spoken.persona, spoken.reply.text
            await self.engine.relay.said(event, persona.key, persona.identity.name, text)

    async def _relayed(self, where: Where, heard: ChatEvent) -> tuple[str, str] | None:
        """Another persona's words for one of this bot's: its answer, spoken in `where`."""
        spoken = await self.front.receive(heard, typing=lambda: self.typing(where))
        if spoken is None or spoken.reply.failed:
            return None
        await self.speak(where, spoken)
        return spoken.persona.identity.name, spoken.reply.text

    async def answer(self, event: ChatEvent, name: str, argument: str = "") -> Answer | None:
        """Command `name` for `event` (a press of a button is its command, as the presser); a
        failure is logged and answered with the apology. None: nothing to say (the sender is
        blocked, or told to slow down already)."""
        try:
            return await self.front.command(event, name, argument)
        except Exception as e:
            self._failed(name, event, e)
            return Answer(self.apology)

    async def command(self, where: Where, event: ChatEvent, name: str, argument: str = "") -> None:
        """Run a command given in `where` and show its answer there. Never raises."""
        try:
            await self.acknowledge(where)
            event = replace(event, admin=await self.admin(where, event))
        except Exception as e:
            self._failed(name, event, e)
            answer: Answer | None = Answer(self.apology)
        else:
            answer = await self.answer(event, name, argument)
        if answer is None:
            return
        try:
            await self.show(where, event, answer)
        except Exception as e:
            self.log.error("answering /%s failed: %s", name, redact.failure(e))

    def _failed(self, name: str, event: ChatEvent, error: Exception) -> None:
        self.log.error(
            "command /%s failed in %s %s: %s",
            name,
            self.platform,
            event.channel_id,
            redact.failure(error),
        )


class CourierSurface(Surface[Where], Generic[Where, Private]):
    """A surface whose bot writes first to a person, by their stable id, in their private
    chat with it: a `bot.outreach.courier.Courier`."""

    @abstractmethod
    async def private(self, user_id: str) -> Private:
        """The private chat with `user_id`, opened if need be; raises the platform's error."""

    @abstractmethod
    async def deliver(self, chat: Private, text: str) -> None:
        """Send one message (within `limit`) there; raises the platform's error."""

    @abstractmethod
    def verdict(self, error: Exception) -> Delivery | None:
        """What an error of `private` or `deliver` means: refused (the platform will not
        deliver to this person), unreachable (try again later), or sent (the request left and
        may have been delivered, so it must not go again). None: no platform error (a bug)."""

    def hosts(self, persona: str) -> bool:
        return persona in self.front.router.personas

    async def write_first(self, user_id: str, spoken: Spoken) -> Delivery:
        """Send `spoken` to `user_id` privately (bot.outreach.courier.Courier). Signed with the
        persona's name where this bot hosts several, whatever `spoken.several` says: the
        sender does not know the bot. Nothing to say is not sent (unreachable: the sender
        composes again later). Never raises."""
        text = spoken.reply.text.strip()
        if text and self.front.router.several:
            text = self._sign(spoken) + text
        chunks = self.split(text)
        if not chunks:
            self.log.warning("nothing to write first to %s user %s", self.platform, user_id)
            return "unreachable"
        try:
            chat = await self.private(user_id)
        except Exception as e:
            # Nothing of the message left yet: a doubt while opening the chat is no message.
            return self._judged(user_id, e, left=False)
        for number, chunk in enumerate(chunks):
            try:
                await self.deliver(chat, chunk)
            except Exception as e:
                if not number:
                    return self._judged(user_id, e, left=True)
                # Once a part went out, the message is sent: never again from its start.
                self.log.warning(
                    "writing first to %s user %s: sent %d of %d parts (%s)",
                    self.platform,
                    user_id,
                    number,
                    len(chunks),
                    redact.failure(e),
                )
                return "sent"
        self.log.info("wrote first to %s user %s", self.platform, user_id)
        return "sent"

    def _judged(self, user_id: str, error: Exception, *, left: bool) -> Delivery:
        """What `error` means for the message (`verdict`); `left`: the message was on its
        way (else a doubt is nothing sent). Logged without the error's message."""
        found = self.verdict(error)
        said = redact.failure(error)
        if found is None:
            self.log.error("writing first to %s user %s failed: %s", self.platform, user_id, said)
            return "unreachable"
        if found == "sent" and not left:
            found = "unreachable"
        self.log.info("writing first to %s user %s: %s (%s)", self.platform, user_id, found, said)
        return found


def attachment(
    filename: str,
    url: str,
    download: Callable[[], Awaitable[bytes]],
    failures: tuple[type[Exception], ...],
    *,
    content_type: str = "",
    size: int = 0,
    what: str = "",
) -> Attachment:
    """An attachment fetched by `download`, whose `failures` (the platform client's errors: the
    file gone, too large, the network) become a `FetchError` naming `what`, so the front says
    the file could not be downloaded instead of failing the turn."""

    async def fetch() -> bytes:
        try:
            return await download()
        except failures as e:
            raise FetchError(f"{what or filename}: {e}") from None

    return Attachment(filename, url, content_type, size, fetch)


@contextlib.asynccontextmanager
async def typing_every(
    show: Callable[[], Awaitable[object]], seconds: float, log: logging.Logger
) -> AsyncIterator[None]:
    """Show typing now and again every `seconds` until the block ends, for a platform whose
    indicator fades by itself. A failure to show it is logged, never costs the answer."""

    async def once() -> None:
        try:
            await show()
        except Exception as e:  # typing is a nicety
            log.warning("could not show typing: %s", redact.failure(e))

    async def refresh() -> None:
        while True:
            await asyncio.sleep(seconds)
            await once()

    await once()
    task = asyncio.create_task(refresh())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
