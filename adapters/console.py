"""The console: a REPL where one person talks with one persona.

Anything that is not a command is said to the persona. A line that is just a command word
(wipe, save, end, log, get, memories, forget, help, quit) runs it; a command with an argument
takes a leading `/` (`/remember my cat is Mochi`, `/forget Mochi`, `/memories cat`), so that
"remember when we..." is still said to the persona. A command's choices (the matches `forget`
found, `wipe`'s Wipe / Cancel) are answered on the next line. Ctrl-D and Ctrl-C leave; closing
the runtime makes the final save. With piped stdin there is no prompt or banner, so the output
is just the conversation. `PLATFORM` is what a persona may do here (bot.platforms): whoever
types is the host.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import json
import re
import threading
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TextIO

from adapters.surface import Surface
from bot.catalogue import say
from bot.commands import table as commands
from bot.commands.answers import Answer
from bot.commands.memory import closest, format_memory
from bot.conversation.sessions import Turn
from bot.events import ChatEvent, Reply
from bot.front import Front
from bot.media.documents import DocumentError, read_document
from bot.persona.file import Persona
from bot.platforms import Platform
from bot.runtime.assemble import Runtime
from bot.spoken import Spoken
from memory.private import private_folder, write_private

__all__ = [
    "COMMANDS",
    "PLATFORM",
    "USER_NAME",
    "USER_NAME_RULE",
    "ConsoleChat",
    "readable",
    "usage",
]

PLATFORM = Platform("console", limit=4000, typed_commands=True, host=True)
# A user's name here (`kizuna chat --user`), which is also the web page's: one name, one
# conversation on either. No control characters, slashes or ":".
USER_NAME = re.compile(r"^[^\x00-\x1f\x7f/\\:]{1,40}$")
USER_NAME_RULE = "a user name is 1-40 characters, without control characters, / \\ or :"

# The console's own commands, beside the shared ones (bot/commands/table.py), and how each is typed.
_OWN = {
    "save": "save",
    "log": "log",
    "get": "/get [CUE]",
    "read": "read PATH",
    "help": "help",
    "quit": "quit",
}
COMMANDS = [
    *(c.name for c in commands.offered_on(PLATFORM) if c.name not in _OWN),
    *_OWN,
]


def usage(name: str) -> str:
    """How command `name` is typed: with its options it takes the leading slash (a bare word
    runs only alone), an optional one in brackets."""
    if name in _OWN:
        return _OWN[name]
    options = commands.COMMANDS[name].options
    if not options:
        return name
    words = [o.name.upper() for o in options]
    shown = " ".join(words) if options[0].required else "[" + " ".join(words) + "]"
    return f"/{name} {shown}"


class ConsoleChat(Surface[TextIO]):
    """Answers on its `stdout`."""

    platform = PLATFORM.name

    def __init__(
        self,
        runtime: Runtime,
        persona: Persona,
        user: str,
        *,
        stdin: TextIO,
        stdout: TextIO,
        interactive: bool,
    ) -> None:
        super().__init__(Front(runtime.engine, runtime.services, "console", persona.key), "console")
        self._runtime = runtime
        self._engine = runtime.engine
        self._services = runtime.services
        self._persona = persona
        self._user = user
        self._stdin = stdin
        self._stdout = stdout
        self._interactive = interactive

    def _event(self, text: str) -> ChatEvent:
        return self.event("console", self._user, self._user, text, is_dm=True)

    def _say(self, text: str = "") -> None:
        self._stdout.write(text + "\n")
        self._stdout.flush()

    async def send(self, where: TextIO, chunks: Sequence[str]) -> None:
        for chunk in chunks:
            where.write(chunk + "\n")
        where.flush()

    async def speak(self, where: TextIO, spoken: Spoken) -> None:
        self._show(spoken.reply)

    async def _read_line(self, prompt: str) -> str | None:
        """One line, or None at end of input. Read on a daemon thread so that Ctrl-C never
        waits for a blocked read to finish."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str | None] = loop.create_future()

        def deliver(value: str | None) -> None:
            if not future.done():
                future.set_result(value)

        def read() -> None:
            line: str | None
            try:
                if self._interactive:
                    line = input(prompt)
                else:
                    raw = self._stdin.readline()
                    line = raw.rstrip("\r\n") if raw else None
            except (EOFError, OSError, ValueError):
                line = None
            loop.call_soon_threadsafe(deliver, None if line is None else readable(line))

        threading.Thread(target=read, daemon=True, name="console-stdin").start()
        return await future

    async def run(self) -> None:
        name = self._persona.identity.name
        if isinstance(self._stdin, io.TextIOWrapper):
            # Under most UTF-8 locales stdin is strict, and one byte that is not UTF-8 (a
            # paste from a Latin-1 file) would end the chat; `readable` shows it as U+FFFD.
            self._stdin.reconfigure(errors="surrogateescape")
        if self._interactive:
            with contextlib.suppress(ImportError):  # line editing and history for input()
                import readline  # noqa: F401
            models = self._engine.models.describe()
            self._say(self._text("console_talking", name=name, user=self._user, models=models))
            listed = ", ".join(usage(c) for c in COMMANDS)
            self._say(self._text("console_commands", commands=listed))
        greeting = await self._engine.greet(self._event(""))
        if greeting is not None:  # a card's greeting opens the very first conversation
            self._show(greeting)
        prompt = f"{self._user}> "
        while True:
            line = await self._read_line(prompt)
            if line is None:
                break
            word, argument = _command(line)
            if word in ("quit", "exit"):
                break
            document = _document_path(line)
            if document is not None:
                await self._read(document)
                continue
            handler = self._commands().get(word)
            if handler is not None:
                await handler(argument)
            elif word and line.strip().startswith("/"):  # the front says there is no such one
                await self._run(word, argument)
            elif line.strip():
                await self.receive(self._stdout, self._event(line))

    def _show(self, reply: Reply) -> None:
        name = self._persona.identity.name
        for chunk in reply.chunks:
            self._say(f"{name} [{reply.emotion}]: {chunk}")

    def _commands(self) -> dict[str, Callable[[str], Awaitable[None]]]:
        own: dict[str, Callable[[str], Awaitable[None]]] = {
            "save": self._save,
            "log": self._log,
            "get": self._get,
            "help": self._help,
        }
        shared = {
            c.name: functools.partial(self._run, c.name) for c in commands.offered_on(PLATFORM)
        }
        return shared | own

    async def _run(self, name: str, argument: str) -> None:
        await self.command(self._stdout, self._event(""), name, argument)

    async def show(self, where: TextIO, event: ChatEvent, answer: Answer) -> None:
        """Its buttons become a question answered on the next line: the one picked runs, any
        other answer cancels."""
        await self.say(where, answer.text)
        if not answer.buttons:
            return
        labels = [button.label for button in answer.buttons]
        picked = (await self._read_line(" / ".join(labels) + "? ") or "").strip().casefold()
        button = next((b for b in answer.buttons if b.label.casefold() == picked), None)
        if button is None:
            await self._run("cancel", "")
        else:
            await self._run(button.command, button.argument)

    async def _read(self, path: Path) -> None:
        """Document mode with a local file: ask about it until `document close`."""
        try:
            document = await asyncio.to_thread(
                read_document, path, limit_bytes=self.front.document_limit
            )
        except DocumentError as e:
            self._say(e.said(self._persona.identity.language))
            return
        self._show(await self.front.open(self._event(""), document))

    async def _save(self, _: str) -> None:
        export = await self._services.desk.save(self._event(""))
        folder = self._runtime.data_dir / "exports"
        stamp = self._engine.clock.now().strftime("%Y%m%d-%H%M%S")
        path = _fresh(folder, f"{self._persona.key}-{_safe(self._user)}-{stamp}", ".json")
        try:
            private_folder(folder)
            write_private(path, json.dumps(export, ensure_ascii=False, indent=2).encode())
        except OSError as e:
            self._say(self._text("console_export_failed", path=str(path), why=str(e.strerror or e)))
            return
        self._say(self._text("console_exported", path=str(path)))

    def _text(self, key: str, **values: str) -> str:
        """The catalogue's sentence `key` in the persona's language."""
        return say(self._persona.identity.language, key, **values)

    async def _log(self, _: str) -> None:
        info = await self._services.desk.info(self._event(""))
        persona = self._persona
        text = self._text
        self._say(text("log_persona", persona=persona.key, name=persona.identity.name))
        self._say(text("log_scope", scope=info.scope))
        if info.turns:
            started = _when(info.turns[0].at)
            self._say(text("log_conversation", count=str(len(info.turns)), since=started))
            if info.summary:
                self._say(text("log_summary", summary=info.summary.replace("\n", "\n    ")))
            self._show_turns(info.turns)
        elif info.last_closed is not None:
            last = info.last_closed
            fate = "log_encoded" if last.encoded_at is not None else "log_waiting"
            ended = _when(last.ended_at)
            self._say(text("log_last_closed", ended=ended, reason=last.reason, fate=text(fate)))
            self._show_turns(Turn.from_json(t) for t in last.turns)
        else:
            self._say(text("log_none_open"))
        if persona.state:
            self._say(text("log_state"))
            for slot in persona.state:
                value = slot.value(info.state) or text("log_not_set")
                self._say(f"  {slot.name}: " + value.replace("\n", "\n    "))
        self._say(text("log_archived", count=str(info.archived)))
        usage = self._engine.models.usage
        spent = ", ".join(
            text(
                "log_tier_usage",
                tier=tier,
                calls=str(u.calls),
                tokens=str(u.prompt_tokens + u.completion_tokens),
            )
            + (text("log_pictures", count=str(u.images)) if u.images else "")
            + (text("log_recordings", count=str(u.recordings)) if u.recordings else "")
            for tier, u in usage.items()
            if u.calls
        )
        models = self._engine.models.describe() + (f"; {spent}" if spent else "")
        self._say(text("log_models", models=models))

    def _show_turns(self, turns: Iterable[Turn]) -> None:
        for turn in turns:
            who = turn.speaker + (f" [{turn.emotion}]" if turn.emotion else "")
            self._say(f"  {_when(turn.at)} {who}: {turn.text}")

    async def _get(self, cue: str) -> None:
        if not cue:
            cue = await self._read_line("cue> ") or ""
        if not cue.strip():
            return
        found = await closest(self._services, self._event(""), cue)
        if found is None:
            self._say(say(self._persona.identity.language, "nothing_comes_to_mind"))
        else:
            language = self._persona.identity.language
            self._say(format_memory(found, self._services, language=language))

    async def _help(self, _: str) -> None:
        language = self._persona.identity.language
        shown = {command: usage(command) for command in COMMANDS}
        width = max(map(len, shown.values()))
        for command, typed in shown.items():
            self._say(f"  {typed:<{width}}  {commands.describe(command, language)}")


def _document_path(line: str) -> Path | None:
    """The file of `read PATH` (or `/read PATH`): a line that names an existing file. "read
    the news" is said to the persona; `/read` of no such file is a path all the same, so the
    reading says it is not there."""
    stripped = line.strip()
    word, _, rest = stripped.partition(" ")
    if word.lower() not in ("read", "/read") or not rest.strip():
        return None
    path = Path(rest.strip().strip("'\""))
    with contextlib.suppress(RuntimeError, ValueError):  # "~nosuchuser", "~\0": left as is
        path = path.expanduser()
    return path if path.is_file() or word.startswith("/") else None


def _command(line: str) -> tuple[str, str]:
    """(command word, argument) for a command line, ("", "") for anything said to the persona.
    Bare words are commands only alone; arguments need the leading slash."""
    stripped = line.strip()
    if stripped.startswith("/"):
        word, _, argument = stripped[1:].partition(" ")
        return word.lower(), argument.strip()
    return (stripped.lower(), "") if " " not in stripped else ("", "")


def readable(text: str) -> str:
    """Text as typed, with bytes that were not UTF-8 (which Python keeps as lone surrogates,
    and no database or terminal takes) shown as U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _when(at: datetime) -> str:
    return at.astimezone().strftime("%Y-%m-%d %H:%M")


def _fresh(folder: Path, name: str, suffix: str) -> Path:
    """`folder/name+suffix`, or with -2, -3... if taken: two saves in one second keep both."""
    path, n = folder / f"{name}{suffix}", 1
    while path.exists():
        n += 1
        path = folder / f"{name}-{n}{suffix}"
    return path


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name) or "user"
