"""The `kizuna` command. It lives with the adapters because it starts them; bot/ builds the
runtime they share.

Exit status: 0 done, 1 nothing could run, 2 bad configuration or persona (one line on stderr
naming the file, the key and the line).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import importlib.util
import logging
import os
import random
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Never

from adapters.kinds import RULES
from bot import __version__, redact
from bot.config import BotConfig, Config, find_config, load_config, storage_dsn
from bot.tomlfile import TomlError
from memory.errors import KizunaError
from memory.private import FILE_MODE

# Each command imports what it works with when it runs (its imports are in its function): a
# command pays for its own modules only, and `kizuna --version` for none.
if TYPE_CHECKING:
    from tqdm import tqdm

    from bot.persona.file import Persona
    from bot.tools.box import Limits

__all__ = ["main", "tools_listing"]


class UsageError(KizunaError):
    """A mistake the user can fix; its message is the one line they see (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    """A parser whose description may be written only when its help is shown (`describe`):
    what it names can be costly to import, and most runs never show it."""

    def __init__(self, *args: Any, describe: Callable[[], str] | None = None, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._describe = describe

    def format_help(self) -> str:
        if self._describe is not None:
            self.description = self._describe()
        return super().format_help()


def _chat_description() -> str:
    from adapters.console import COMMANDS, usage

    return "Talk with a persona. Commands: " + ", ".join(usage(c) for c in COMMANDS) + "."


def _parser() -> argparse.ArgumentParser:
    from adapters.command.wizard import PROVIDERS

    common = _Parser(add_help=False)
    common.add_argument(
        "--config",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="configuration file (default: $KIZUNA_CONFIG, else ./kizuna.toml, else built-in)",
    )
    common.add_argument(
        "--data-dir",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="the data folder (default: the configuration's data_dir, else ./data)",
    )
    common.add_argument(
        "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="log more"
    )
    common.add_argument(
        "--log-file",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="also append the log to this file (owner-only; default: standard error only)",
    )
    parser = _Parser(
        prog="kizuna",
        description="Persona chat bots that remember their users.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"kizuna {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    chat = sub.add_parser(
        "chat",
        parents=[common],
        help="talk with a persona in this terminal",
        describe=_chat_description,
    )
    chat.add_argument(
        "--persona", help="persona name, e.g. miao or monikai (without it: the ones found)"
    )
    chat.add_argument(
        "--user", help="your name in the conversation and in memory (default: your login)"
    )

    run = sub.add_parser(
        "run",
        parents=[common],
        help="start every bot in the configuration",
        description="Start every bot listed under [[bots]] in the configuration (Discord, "
        "Telegram and the web client) in this one process, and serve until Ctrl-C or "
        "SIGTERM, then save and stop.",
    )
    run.add_argument(
        "--shard-ids",
        metavar="IDS",
        help="Discord: run only these shards (comma-separated, e.g. 0,1) of --shard-count; "
        "other processes on the same PostgreSQL run the rest",
    )
    run.add_argument(
        "--shard-count", type=int, metavar="N", help="Discord: how many shards the bots have"
    )

    web = sub.add_parser(
        "web",
        parents=[common],
        help="the chat page and memory inspector in your browser",
        description="Serve the web client: a chat page (/) and the memory inspector "
        "(/inspect), on [web] host and port (default http://127.0.0.1:3000/), until Ctrl-C. "
        "A name typed on the page is the same conversation as `kizuna chat --user NAME`.",
    )
    web.add_argument(
        "--persona",
        action="append",
        metavar="NAME",
        help="a persona to offer, the first the page opens on (repeatable; default: the "
        "personas of the configured web bot, else every persona Kizuna can find)",
    )
    web.add_argument("--host", help="address to listen on (default: [web] host, 127.0.0.1)")
    web.add_argument("--port", type=int, help="port to listen on (default: [web] port, 3000)")

    tools = sub.add_parser("tools", help="what a persona can call")
    tools_sub = tools.add_subparsers(dest="tools_command", metavar="ACTION", required=True)
    listing = tools_sub.add_parser(
        "list",
        parents=[common],
        help="a persona's tools, and whether each MCP server answers",
        description="List the tools a persona can call (built in, installed, its own and its "
        "MCP servers'), with their limits; each MCP server is started to see if it answers.",
    )
    listing.add_argument("--persona", required=True, help="persona name, e.g. dungeon_master")

    persona = sub.add_parser("persona", help="work with persona files")
    persona_sub = persona.add_subparsers(dest="persona_command", metavar="ACTION", required=True)
    validate = persona_sub.add_parser(
        "validate", help="check persona files", description="Check persona TOML files."
    )
    validate.add_argument("files", nargs="+", type=Path, metavar="FILE")
    persona_sub.add_parser("list", parents=[common], help="list the personas Kizuna can find")
    importing = persona_sub.add_parser(
        "import",
        help="make a persona from a character card",
        description="Make a persona file from a SillyTavern / Character Card V1, V2 or V3 "
        "(JSON, or PNG carrying the card). A PNG card's picture becomes the persona's face.",
    )
    importing.add_argument("card", type=Path, metavar="CARD")
    importing.add_argument(
        "--out", type=Path, default=Path("personas"), help="folder to write to (./personas)"
    )
    importing.add_argument("--force", action="store_true", help="replace a persona file there")
    exporting = persona_sub.add_parser(
        "export",
        parents=[common],
        help="write a persona as a character card",
        description="Write a persona as a Character Card V2 JSON file.",
    )
    exporting.add_argument("name", metavar="NAME")
    exporting.add_argument(
        "--out",
        metavar="PATH",
        help="file to write, or a folder to put NAME.card.json in: one that exists, or DIR/ "
        "(default: ./NAME.card.json)",
    )
    exporting.add_argument("--force", action="store_true", help="replace an existing file")

    memories = sub.add_parser("memories", help="work with long-term memory")
    memories_sub = memories.add_subparsers(dest="memories_command", metavar="ACTION", required=True)
    memories_sub.add_parser(
        "reindex",
        parents=[common],
        help="embed every memory with the configured embedder",
        description="Embed every memory that has no embedding from the configured [memory] "
        "embedder (after changing embedder, or an outage), and rebuild the indexes.",
    )
    pruned = memories_sub.add_parser(
        "pruned",
        parents=[common],
        help="show what the daily prune forgot, and why",
        description="List the memories the daily prune let go since a date, with the "
        "forgetting policy and the reason for each.",
    )
    pruned.add_argument(
        "--since",
        default=None,
        metavar="DATE",
        help="a day as /diary takes it: YYYY-MM-DD, yesterday, last week, May 4th... "
        "(default: the last 7 days)",
    )
    pruned.add_argument("--scope", default=None, help="only this memory scope")

    init = sub.add_parser(
        "init",
        parents=[common],
        help="write kizuna.toml by answering a few questions",
        description="Ask which personas, platforms, token variables and model provider to use, "
        "write kizuna.toml (never a token: the names of the variables holding them), check each "
        "token against its platform and say what to switch on there. Run again to change the "
        "answers (the file replaced is kept as .bak). Every question has a flag; without a "
        "terminal, or with --yes, the rest take their defaults.",
    )
    init.add_argument("--personas", metavar="NAMES", help="comma-separated, the first the default")
    init.add_argument(
        "--discord", metavar="ENV", help="the variable holding the Discord token (none: no bot)"
    )
    init.add_argument(
        "--telegram", metavar="ENV", help="the variable holding the Telegram token (none: no bot)"
    )
    init.add_argument(
        "--web", action=argparse.BooleanOptionalAction, default=None, help="the web page too"
    )
    init.add_argument(
        "--provider",
        choices=PROVIDERS,
        help="the model provider (auto: detected when Kizuna starts)",
    )
    init.add_argument("--model", help="the chat model (default: the provider's)")
    init.add_argument(
        "--yes", action="store_true", help="ask nothing: defaults for what no flag says"
    )
    init.add_argument(
        "--out",
        type=Path,
        default=Path("kizuna.toml"),
        metavar="PATH",
        help="default: ./kizuna.toml",
    )

    sub.add_parser(
        "doctor",
        parents=[common],
        help="check this installation and say what to fix",
        description="Check the configuration, persona files, data folder, store, model "
        "endpoints and each bot's token against its platform; one line each, then what to do.",
    )

    backing_up = sub.add_parser(
        "backup",
        parents=[common],
        help="copy the database while Kizuna runs",
        description="Copy the SQLite database (memories, conversations, sessions, the diary, "
        "profiles...) to PATH, consistently, even while a bot is running on it; the copy is "
        "checked before it is kept. Indexes are not copied: they are rebuilt from it.",
    )
    backing_up.add_argument(
        "path",
        metavar="PATH",
        help="a file, or a folder to put a dated file in: one that exists, or DIR/ (made if "
        "missing)",
    )
    backing_up.add_argument("--force", action="store_true", help="replace an existing file")
    restoring = sub.add_parser(
        "restore",
        parents=[common],
        help="put a backup back in place (Kizuna stopped)",
        description="Replace the database with a backup made by `kizuna backup`. The "
        "database it replaces is kept beside it; indexes are rebuilt on the next start.",
    )
    restoring.add_argument("path", metavar="BACKUP")

    migrate = sub.add_parser(
        "migrate",
        parents=[common],
        help="copy an embedded store into PostgreSQL",
        description="Copy every table of a SQLite store (memories with their ids and "
        "embeddings, conversations, sessions, the diary, profiles...) into PostgreSQL, then "
        "check that counts and checksums match. Safe to rerun: rows already there are left "
        "alone or brought back to the SQLite store's, never duplicated.",
    )
    migrate.add_argument(
        "--from",
        dest="source",
        required=True,
        metavar="sqlite:PATH",
        help="the kizuna.sqlite3 file, or the data folder holding it",
    )
    migrate.add_argument(
        "--to",
        dest="target",
        required=True,
        metavar="postgres[:ENV]",
        help="PostgreSQL at the connection string in the configured dsn_env variable "
        "(default KIZUNA_DATABASE_URL), or in the variable ENV",
    )
    return parser


def _many(count: int, one: str, several: str) -> str:
    return f"{count:,} {one if count == 1 else several}"


def _since(value: str, now: datetime) -> date:
    """The first day `value` names, as /diary reads it ("yesterday", "last week", "May 4th",
    "2026-09-03"); a day to come is refused."""
    from memory.dates import find_dates

    mentioned = find_dates(value, now) or find_dates(f"on {value.strip()}", now)
    if not mentioned or mentioned[0].days[0] > now.date():
        raise UsageError(f"--since: not a past day: {value[:40]!r}")
    return mentioned[0].days[0]


def _config(args: argparse.Namespace) -> Config:
    path = find_config(getattr(args, "config", None), os.environ, Path.cwd())
    try:
        missing = path is not None and not path.is_file()
    except OSError as e:  # a name too long for the file system...
        raise UsageError(f"{path}: cannot read ({e.strerror or e})") from None
    if missing:
        raise UsageError(f"{path}: no such configuration file")
    config = load_config(path, os.environ, RULES)
    redact.hide(*redact.secrets_in_use(config, os.environ))
    if getattr(args, "data_dir", None):  # relative to where it is typed, not to the file
        config.data_dir = str(Path(args.data_dir).expanduser().absolute())
    return config


def _user(args: argparse.Namespace) -> str:
    """The console user's name: their id in memory, and the same person on the web page."""
    from adapters.console import USER_NAME, USER_NAME_RULE, readable

    if args.user is not None:
        user = readable(str(args.user)).strip()
        if not USER_NAME.fullmatch(user):
            # Not repeated: it may be huge, or move the terminal's cursor.
            raise UsageError(f"--user: {USER_NAME_RULE} (this one: {len(user)} characters)")
        return user
    try:
        login = getpass.getuser()
    except (OSError, KeyError):
        return "you"
    return login if USER_NAME.fullmatch(login) else "you"


async def _chat(args: argparse.Namespace) -> int:
    from adapters.command.progress import embedding_bar
    from adapters.console import PLATFORM as CONSOLE
    from adapters.console import ConsoleChat
    from bot.llm.router import ModelSetupError
    from bot.persona.file import persona_library
    from bot.platforms import Platforms
    from bot.runtime.assemble import load_personas, open_runtime

    user = _user(args)  # a name that cannot be used is refused before anything opens
    config = _config(args)
    library = persona_library(config, Path.cwd())
    if not args.persona:
        raise UsageError(
            f"--persona: which persona? (found: {', '.join(library.names()) or 'none'}; "
            "`kizuna persona list` says more)"
        )
    try:
        personas = load_personas(library, [args.persona])
    except KeyError as e:
        raise UsageError(f"--persona: {e.args[0]}") from None
    try:
        platforms = Platforms([CONSOLE])
        runtime = await open_runtime(config, personas, os.environ, platforms=platforms)
    except ModelSetupError as e:
        raise config.error(tuple(e.key.split(".")), e.message) from None
    if runtime.engine.models.notice:
        print(runtime.engine.models.notice, file=sys.stderr)
    persona = next(iter(personas.values()))
    interactive = sys.stdin.isatty()
    if interactive and args.user is None:
        print(f"You are {user!r} here (your login); --user NAME talks as someone else.")
    restore_terminal = _terminal_keeper() if interactive else (lambda: None)
    runtime.scheduler.start(embedding_bar(runtime.bank.embedder.name, lines=interactive))
    try:
        console = ConsoleChat(
            runtime,
            persona,
            user,
            stdin=sys.stdin,
            stdout=sys.stdout,
            interactive=interactive,
        )
        await console.run()
    finally:  # also on Ctrl-C, which cancels this task: the final save happens here
        if interactive:
            print("\nSaving…", flush=True)
        try:
            await runtime.close()
        finally:
            restore_terminal()
        if interactive:
            print(f"Saved. {persona.identity.name} will be here.")
    return 0


def _terminal_keeper() -> Callable[[], None]:
    """Remember the terminal's settings; the returned function puts them back. readline's
    input() may still be waiting on its thread when Ctrl-C ends the chat, and would leave the
    terminal without echo."""
    try:
        import termios

        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
    except (ImportError, OSError, ValueError):  # not a POSIX terminal: nothing to keep
        return lambda: None

    def restore() -> None:
        with contextlib.suppress(OSError):
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)

    return restore


def _run(args: argparse.Namespace) -> int:
    config = _config(args)
    _shard(config, args.shard_ids, args.shard_count)
    if not config.bots:
        where = config.source or "kizuna.toml"
        print(
            f"No bots configured: add [[bots]] to {where} (see config.example.toml), "
            "or talk to a persona here with `kizuna chat --persona miao`.",
            file=sys.stderr,
        )
        return 1
    return _host(config)


def _shard(config: Config, ids: str | None, count: int | None) -> None:
    """--shard-ids and --shard-count, for every Discord bot of this process."""
    if ids is None and count is None:
        return
    try:
        shard_ids = [int(i) for i in (ids or "").split(",") if i.strip()]
    except ValueError:
        raise UsageError(f"--shard-ids takes numbers separated by commas, not {ids!r}") from None
    for i, bot in enumerate(config.bots):
        if bot.platform != "discord":
            continue
        try:
            config.bots[i] = replace(bot, shard_ids=shard_ids, shard_count=count or 0)
        except ValueError as e:
            raise UsageError(f"--shard-ids/--shard-count: {e}") from None


def _web(args: argparse.Namespace) -> int:
    config = _config(args)
    if args.host:
        config.web.host = args.host
    if args.port is not None:
        if not 0 < args.port < 65536:
            raise UsageError(f"--port must be 1-65535, not {args.port}")
        config.web.port = args.port
    from bot.persona.file import persona_library

    library = persona_library(config, Path.cwd())
    # The page opens on the first (unless this browser last used another): the one named
    # first, else the configured web bot's default, else the first found.
    configured = next((bot.hosted for bot in config.bots if bot.platform == "web"), None)
    names = list(dict.fromkeys(args.persona or configured or library.names()))
    for name in names:
        if library.path(name) is None:
            raise UsageError(f"no persona named {name!r} (known: {', '.join(library.names())})")
    config.bots = [BotConfig("web", names[0], personas=names[1:], name="web")]
    return _host(config)


def _host(config: Config) -> int:
    """Check every bot's personas and tokens (one line each, before anything opens), then
    serve them all."""
    from adapters.command.host import BotStartError, bot_tokens, hosted_personas
    from bot.persona.file import persona_library

    library = persona_library(config, Path.cwd())
    personas: dict[str, Persona] = {}
    for _, loaded in hosted_personas(config, library):
        if isinstance(loaded, TomlError):
            raise loaded
        personas[loaded.key] = loaded
    try:
        bot_tokens(config, os.environ)  # a missing token: one line, before anything opens
    except BotStartError as e:  # a platform's extra not installed
        print(redact.redact(str(e)), file=sys.stderr)
        return 1
    return asyncio.run(_serve(config, personas))


async def _serve(config: Config, personas: Mapping[str, Persona]) -> int:
    """Host the bots until SIGINT or SIGTERM."""
    from adapters.command.host import BotStartError, host
    from bot.llm.router import ModelSetupError

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):  # not on Windows: Ctrl-C still works
            loop.add_signal_handler(sig, stop.set)
    names = ", ".join(f"{b.persona} on {b.platform}" for b in config.bots)
    print(f"Kizuna is starting: {names}. Ctrl-C (or SIGTERM) stops it.", file=sys.stderr)
    try:
        await host(
            config,
            personas,
            os.environ,
            stop=stop,
            announce=lambda line: print(line, file=sys.stderr, flush=True),
            settle=True,
        )
    except BotStartError as e:
        print(redact.redact(str(e)), file=sys.stderr)
        return 1
    except ModelSetupError as e:
        raise config.error(tuple(e.key.split(".")), e.message) from None
    print("Kizuna stopped; everything is saved.", file=sys.stderr)
    return 0


def _import_card(card_path: Path, out: Path, *, force: bool) -> int:
    """Write the card's persona file (checked by loading it back) and the card's picture (a
    PNG card's, a CHARX card's icon) as the persona's neutral face; nothing is written if
    anything is wrong."""
    from bot.persona import cards
    from bot.persona.card_file import persona_key, persona_toml
    from bot.persona.file import load_persona

    try:
        raw = card_path.read_bytes()
        card = cards.parse_card(raw, str(card_path))
    except OSError as e:
        raise UsageError(f"{card_path}: cannot read ({e.strerror or e})") from None
    except cards.CardError as e:
        raise UsageError(str(e)) from None
    key = persona_key(card.name) or persona_key(card_path.stem) or "card"
    target = out / f"{key}.toml"
    if _exists(target) and not force:
        raise UsageError(f"{target} exists: pass --force to replace it")
    draft = out / f".{key}.toml.importing"
    try:
        _write(draft, persona_toml(card).encode(), named=target)
        try:
            load_persona(draft)
        except TomlError as e:  # a bug of ours, not the card's: say so plainly
            raise UsageError(f"{card_path}: the persona made from it does not load: {e}") from None
        picture = cards.card_picture(raw, str(card_path))
        if picture is not None:
            _write(out / "assets" / key / "NEUTRAL.png", picture)
        draft.replace(target)
    finally:
        with contextlib.suppress(OSError):
            draft.unlink(missing_ok=True)
    print(f"{target}  (kizuna chat --persona {key})")
    return 0


def _export_card(args: argparse.Namespace) -> int:
    from bot.persona import cards
    from bot.persona.card_file import persona_card
    from bot.persona.file import persona_library

    library = persona_library(_config(args), Path.cwd())
    try:
        persona = library.load(args.name)
    except KeyError as e:
        raise UsageError(str(e.args[0])) from None
    name = f"{persona.key}.card.json"
    out = os.path.expanduser(args.out) if args.out else name
    target = Path(out)
    if out.endswith(("/", os.sep)) or _is_dir(target):
        target = target / name
    if _exists(target) and not args.force:
        raise UsageError(f"{target} exists: pass --force to replace it")
    _write(target, (cards.card_to_v2_json(persona_card(persona)) + "\n").encode())
    print(target)
    return 0


def _write(path: Path, data: bytes, *, named: Path | None = None) -> None:
    """`data` in the file `path`, whole or not at all (written beside it, then renamed), in
    a folder made if missing; or a UsageError naming the path (or `named`, the file the
    user will know) and why it cannot be."""
    partial = path.with_name(f".{path.name}.partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(data)
        partial.replace(path)
    except OSError as e:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
        raise UsageError(f"{named or path}: cannot write there: {_reason(path, e)}") from None


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError as e:  # a name too long for the file system, a loop of links...
        raise UsageError(f"{path}: cannot write there: {_reason(path, e)}") from None


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError as e:
        raise UsageError(f"{path}: cannot write there: {_reason(path, e)}") from None


def _reason(path: Path, e: OSError) -> str:
    """Why `path` cannot be used, said for people: mkdir and open say "File exists" or "Not a
    directory" where a file stands in the way of a folder."""
    if isinstance(e, FileExistsError | NotADirectoryError):
        file = next((p for p in (path, *path.parents) if p.is_file()), None)
        if file is not None:
            return f"{file} is a file"
    return e.strerror or str(e)


def _validate(files: Sequence[Path]) -> int:
    from bot.persona.file import load_persona

    failed = 0
    for file in files:
        try:
            persona = load_persona(file)
            _check_tools(persona)
        except TomlError as e:
            print(redact.redact(str(e)), file=sys.stderr)
            failed += 1
            continue
        slots = ", ".join(s.name for s in persona.state) or "none"
        print(
            f"ok {file}: {persona.identity.name} ({len(persona.emotions.names)} emotions, "
            f"memory scope {persona.memory.scope}, state slots: {slots})"
        )
    return 2 if failed else 0


def _check_tools(persona: Persona) -> None:
    """Load the persona's Python tools as a start would (TomlError on the line of one that
    cannot be loaded); its MCP servers are not started."""
    from bot.tools import Toolbox
    from memory.clock import SystemClock

    Toolbox(
        {persona.key: persona},
        clock=SystemClock(),
        tz=UTC,
        rng=random.Random(),
        environ={},
    )


def _list(args: argparse.Namespace) -> int:
    """Every persona found, each loaded as a chat would load it: one that cannot be used is
    marked, and its error said on stderr."""
    from bot.persona.file import persona_library

    library = persona_library(_config(args), Path.cwd())
    broken = 0
    for name in library.names():
        try:
            library.load(name)
        except TomlError as e:
            print(f"{name}\t{library.path(name)}\tcannot be used (see below)")
            print(redact.redact(str(e)), file=sys.stderr)
            broken += 1
            continue
        print(f"{name}\t{library.path(name)}")
    return 2 if broken else 0


async def tools_listing(persona: Persona, config: Config, environ: Mapping[str, str]) -> list[str]:
    """What `kizuna tools list` says of the persona: one line a tool (an MCP server's tools
    indented under it), each with what limits it or keeps it away."""
    from bot.llm.router import ModelSetupError
    from bot.persona.toolspec import BUILTIN_TOOLS
    from bot.tools import Toolbox
    from bot.tools.builtin import build_search
    from memory.clock import SystemClock

    eco = config.models.eco_mode
    lines = []
    for name in (n for n in persona.tools if n in BUILTIN_TOOLS):
        note = "built in"
        if name == "web_search":
            try:
                search = build_search(config.tools, config.models, environ)
            except ModelSetupError as e:
                search, note = None, f"built in; {e}"
            if search is None and note == "built in":
                note = "built in; no search backend is configured ([tools] search)"
            elif eco:
                note = "built in; off in eco mode"
        lines.append(f"{name}\t{note}")
    toolbox = Toolbox(
        {persona.key: persona},
        clock=SystemClock(),
        tz=config.engine.tz(),
        rng=random.Random(),
        environ=environ,
        eco_mode=eco,
    )
    try:
        for tool, limits in toolbox.python_tools(persona):
            # (a ToolContext: never offered to a turn of several people's messages)
            whom = ", for the one person who asked" if tool.personal else ""
            lines.append(f"{tool.name}\t{tool.source}; {_limits(limits, eco)}{whom}")
        reachable = await toolbox.probe(persona)
        for server, limits in toolbox.servers(persona):
            how = f"stdio: {server.command}" if server.command else server.url
            lines.append(
                f"{server.name}\tMCP server ({how}): {reachable[server.name]}; "
                f"{_limits(limits, eco)}"
            )
            lines.extend(f"  {server.name}__{tool}" for tool in server.tools)
    finally:
        await toolbox.close()
    return lines


def _limits(limits: Limits, eco: bool) -> str:
    said = [f"timeout {limits.timeout:g} s", f"at most {limits.max_output_chars} characters"]
    if limits.rate_per_minute:
        said.append(f"{limits.rate_per_minute} calls a minute per user")
    if limits.admin_only:
        said.append("admins only")
    if eco and not limits.cheap:
        said.append("off in eco mode")
    elif limits.cheap:
        said.append("cheap (kept in eco mode)")
    return ", ".join(said)


async def _tools(args: argparse.Namespace) -> int:
    from bot.persona.file import persona_library

    config = _config(args)
    try:
        persona = persona_library(config, Path.cwd()).load(args.persona)
    except KeyError as e:
        raise UsageError(str(e.args[0])) from None
    for line in await tools_listing(persona, config, os.environ):
        print(redact.redact(line))
    return 0


def _init(args: argparse.Namespace) -> int:
    from adapters.command.wizard import (
        Answers,
        WizardError,
        ask_plan,
        changes,
        check_tokens,
        detect,
        drafted,
        guidance,
        is_yes,
        write_config,
    )
    from bot.llm.router import probe_ollama
    from bot.persona.file import persona_library

    target = Path(os.path.expanduser(args.out))
    previous = load_config(target, os.environ, RULES) if target.is_file() else None
    config = previous or _config(args)
    interactive = sys.stdin.isatty() and not args.yes

    def ask(question: str, default: str) -> str:
        return input(f"{question} [{default}]: ")

    given = Answers(args.personas, args.discord, args.telegram, args.web, args.provider, args.model)
    try:
        plan = ask_plan(
            given,
            persona_library(config, Path.cwd()),
            os.environ,
            previous,
            asyncio.run(detect(os.environ, probe_ollama)),
            ask=ask if interactive else None,
        )
    except WizardError as e:
        raise UsageError(str(e)) from None
    text = drafted(plan, target, previous)
    changed = changes(target, text)
    if previous is not None and not changed:
        print(f"{target} already says this; nothing to write.")
    else:
        if changed:  # what the edit in place will change, before it is made
            print("\n".join(changed))
            if interactive and not is_yes(ask("Write these changes (yes/no)", "yes")):
                print(f"Nothing written; {target} is as it was.")
                return 1
        kept = write_config(text, target)
        print(f"Wrote {target}" + (f" (the one before is {kept})" if kept else "") + ".")
    for note in plan.notes:
        print(note)
    written = load_config(target, os.environ, RULES)
    for finding in asyncio.run(check_tokens(written, os.environ)):  # said; `doctor` re-checks
        print(redact.redact(str(finding)))
    for line in guidance(written.bots):
        print(line)
    return 0


async def _doctor(args: argparse.Namespace) -> int:
    from adapters.command.doctor import examine
    from bot.persona.file import persona_library

    config = _config(args)
    failed = 0
    async for finding in examine(config, os.environ, persona_library(config, Path.cwd())):
        print(redact.redact(str(finding)), flush=True)
        failed += finding.level in ("fail", "todo")
    print(f"{failed} problem(s) to fix." if failed else "Everything looks fine.")
    return 1 if failed else 0


async def _reindex(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from bot.llm.embedding import build_embedder
    from bot.llm.router import ModelSetupError
    from memory.bank import MemoryBank
    from memory.embeddings import EmbeddingError
    from memory.storage import open_store

    config = _config(args)
    try:
        embedder = build_embedder(config.memory, config.models, os.environ)
    except ModelSetupError as e:
        raise config.error(tuple(e.key.split(".")), e.message) from None
    except ValueError as e:
        raise config.error(("memory",), str(e)) from None
    data_dir = config.resolve(config.data_dir)
    dsn = storage_dsn(config, os.environ)
    store = await open_store(data_dir, dsn) if dsn else None
    bank = await MemoryBank.open(data_dir, embedder, store=store)
    bar = tqdm(unit="memory", desc=f"embedding with {config.memory.embedder}", leave=True)

    def progress(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()

    try:
        count = await bank.reindex(progress)
    except EmbeddingError as e:
        bar.close()
        said = redact.redact(str(e))
        print(
            f"reindex stopped, what was done is kept (run it again later): {said}", file=sys.stderr
        )
        return 1
    finally:
        await bank.close()
        if store is not None:  # the bank closes only a store it opened itself
            await store.close()
    bar.close()
    if count:
        print(f"{_many(count, 'memory', 'memories')} embedded with {embedder.name}.")
    else:
        print(f"Every memory is embedded with {embedder.name} already; nothing to do.")
    return 0


async def _pruned(args: argparse.Namespace) -> int:
    from memory.storage import DATABASE, open_store
    from memory.storage.sqlite import Store

    config = _config(args)
    tz = config.engine.tz()
    now = datetime.now(tz)
    since = (now - timedelta(days=7)).date() if args.since is None else _since(args.since, now)
    start = datetime.combine(since, time(), tz)
    database = config.resolve(config.data_dir) / DATABASE
    dsn = storage_dsn(config, os.environ)
    reports = []
    try:
        present = database.is_file()
    except OSError as e:  # a data_dir name too long for the file system...
        raise UsageError(f"{database}: cannot read ({e.strerror or e})") from None
    if dsn or present:
        # Read-only on SQLite: it may look while a bot is running on the same data folder.
        store = (
            await open_store(database.parent, dsn)
            if dsn
            else await Store.open(database, read_only=True)
        )
        try:
            reports = await store.pruned_since(start, scope=args.scope)
        finally:
            await store.close()
    if not reports:
        print(f"Nothing was forgotten since {since.isoformat()}.")
        return 0
    for report in reports:
        when = report.pruned_at.astimezone(tz).strftime("%Y-%m-%d %H:%M")
        print(f"{when}  {report.scope}  #{report.memory_id} ({report.policy}): {report.reason}")
    count = _many(len(reports), "memory", "memories")
    print(f"{count} forgotten since {since.isoformat()}.")
    return 0


def _database(args: argparse.Namespace, doing: str) -> Path:
    from memory.storage import DATABASE

    config = _config(args)
    if config.storage == "postgres":
        raise UsageError(
            f"storage is postgres: {doing} with PostgreSQL's own tools (pg_dump, pg_restore)"
        )
    return config.resolve(config.data_dir) / DATABASE


def _backup(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from memory.storage.backup import backup

    database = _database(args, "back it up")
    # Made once the copy has begun (none before an error), on a terminal only (a cron job's
    # mail has the one line saying what was done).
    bars: list[tqdm[Never]] = []

    def progress(done: int, total: int) -> None:
        if not bars:
            bar = tqdm(total=total, unit="page", desc="backing up", leave=False, disable=None)
            bars.append(bar)
        bars[0].n = done
        bars[0].refresh()

    # The path as typed (a trailing slash says it is a folder); os.path leaves "~nosuchuser"
    # as it is, where Path.expanduser raises.
    target = os.path.expanduser(args.path)
    try:
        made = backup(database, target, overwrite=args.force, progress=progress)
    finally:
        for bar in bars:
            bar.close()
    print(
        f"Backed up {_many(made.memories, 'memory', 'memories')} and "
        f"{_many(made.conversations, 'conversation', 'conversations')} to "
        f"{made.path} ({made.bytes / 1e6:.1f} MB, {made.seconds:.1f} s)."
    )
    return 0


def _restore(args: argparse.Namespace) -> int:
    from memory.bank import INDEX_FOLDER
    from memory.storage.backup import restore

    database = _database(args, "restore it")
    kept = restore(Path(os.path.expanduser(args.path)), database, database.parent / INDEX_FOLDER)
    print(f"Restored {database} from {args.path}.")
    if kept is not None:
        print(f"The database it replaced is kept as {kept}.")
    return 0


def _migrate(args: argparse.Namespace) -> int:
    from memory.storage import DATABASE

    kind, _, path = str(args.source).partition(":")
    if kind != "sqlite" or not path:
        raise UsageError("--from must be sqlite:PATH (the kizuna.sqlite3 file or its folder)")
    source = Path(os.path.expanduser(path))
    try:
        if source.is_dir():
            source = source / DATABASE
        found = source.is_file()
    except OSError as e:
        raise UsageError(f"--from: {source}: cannot read ({e.strerror or e})") from None
    if not found:
        raise UsageError(f"--from: no SQLite database at {source}")
    kind, _, variable = str(args.target).partition(":")
    if kind != "postgres":
        raise UsageError("--to must be postgres or postgres:ENV_VARIABLE")
    variable = variable or _config(args).dsn_env
    dsn = os.environ.get(variable, "").strip()
    if not dsn:
        raise UsageError(
            f"--to postgres: the environment variable {variable} (the PostgreSQL connection "
            "string) is not set"
        )
    if importlib.util.find_spec("asyncpg") is None:
        print(
            "kizuna migrate needs the postgres extra: pip install 'kizuna[postgres]'",
            file=sys.stderr,
        )
        return 1
    return asyncio.run(_copy_store(source, dsn))


async def _copy_store(source: Path, dsn: str) -> int:
    """Copy with a progress bar per table; one line per table, then the verdict."""
    from tqdm import tqdm

    from memory.storage.migrate import CopyReport, MigrationError, copy_store  # the postgres extra

    bars: dict[str, tqdm[Never]] = {}

    def progress(table: str, done: int, total: int) -> None:
        if table not in bars:
            for bar in bars.values():
                bar.close()
            bars[table] = tqdm(total=total, unit="row", desc=table, leave=False)
        bars[table].n = done
        bars[table].refresh()

    report: CopyReport | None
    failure: MigrationError | None = None
    try:
        report = await copy_store(source, dsn, progress=progress)
    except MigrationError as e:
        report, failure = e.report, e
    finally:
        for bar in bars.values():
            bar.close()
    for table in report.tables if report is not None else ():
        check = "ok" if table.checksum_ok else "DIFFERS"
        print(
            f"{table.name}: {table.source_rows:,} rows, {table.inserted:,} new, "
            f"{table.updated:,} updated; {table.destination_rows:,} there; checksum {check}"
        )
    if failure is not None or report is None:
        print(redact.redact(str(failure)), file=sys.stderr)
        return 1
    new = sum(t.inserted for t in report.tables)
    updated = sum(t.updated for t in report.tables)
    print(
        f"Copied {report.source_rows:,} rows in {len(report.tables)} tables into "
        f"{report.destination} ({new:,} new, {updated:,} updated); counts and checksums match."
    )
    return 0


def _log_file(path: Path) -> logging.Handler:
    """A handler appending to `path`, made the owner's only: logs name people's ids."""
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE))
    return logging.FileHandler(path, encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    handlers: list[logging.Handler] = [logging.StreamHandler()]
    log_file = getattr(args, "log_file", None)
    if log_file:
        try:
            handlers.append(_log_file(Path(log_file).expanduser()))
        except OSError as e:
            print(f"--log-file: cannot write {log_file} ({e.strerror or e})", file=sys.stderr)
            return 2
    logging.basicConfig(
        level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        if log_file
        else "%(levelname)s %(name)s: %(message)s",
        handlers=handlers,
    )
    # Secrets stay out of every log line (and of the errors printed below): those of the
    # environment now, the ones the configuration names once it is read.
    redact.install(redact.secrets_in_use(Config(), os.environ))
    try:
        if args.command == "chat":
            return asyncio.run(_chat(args))
        if args.command == "run":
            return _run(args)
        if args.command == "web":
            return _web(args)
        if args.command == "memories" and args.memories_command == "pruned":
            return asyncio.run(_pruned(args))
        if args.command == "memories":
            return asyncio.run(_reindex(args))
        if args.command == "init":
            return _init(args)
        if args.command == "doctor":
            return asyncio.run(_doctor(args))
        if args.command == "migrate":
            return _migrate(args)
        if args.command == "backup":
            return _backup(args)
        if args.command == "restore":
            return _restore(args)
        if args.command == "tools":
            return asyncio.run(_tools(args))
        if args.persona_command == "import":
            return _import_card(args.card, args.out, force=args.force)
        if args.persona_command == "export":
            return _export_card(args)
        if args.persona_command == "validate":
            return _validate(args.files)
        return _list(args)
    except (TomlError, UsageError) as e:
        print(redact.redact(str(e)), file=sys.stderr)
        return 2
    except KizunaError as e:
        from memory.storage import StoreError
        from memory.storage.backup import BackupError

        if not isinstance(e, StoreError | BackupError):
            raise
        print(redact.redact(str(e)), file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C: the runtime has saved on its way out
        return 0
    except BrokenPipeError:  # the reader went away (`kizuna chat ... | head`); saved already
        # Point stdout at nothing so the interpreter's final flush does not complain.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
