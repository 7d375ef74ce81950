"""`kizuna init`: asks a new host a few questions and writes kizuna.toml.

Which personas, on which platforms (Discord, Telegram, the web page), the names of the
environment variables that hold the tokens (never a token: secrets live in the environment),
and the model provider (detected: an OpenAI key, a local Ollama, else the offline model). The
file is checked by loading it before it replaces anything (the one it replaces is kept as
`.bak`); then each bot's token is checked against its platform as `kizuna doctor` does, and
what to switch on in each platform's settings is said. Every question has a flag, so scripts
run it without a terminal; run again, it offers the answers of the file it finds, edits that
file in place (tomlkit: what it does not ask about, and the comments, stay) and shows what
will change before writing.

    plan = ask_plan(answers, library, environ, previous, await detect(environ, probe), ask=...)
    text = drafted(plan, path, previous)
    print("\n".join(changes(path, text)))
    write_config(text, path)
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import tomlkit
from tomlkit.items import AoT, Table

from adapters.kinds import RULES
from bot.config import ENV_NAME, BotConfig, Config, load_config
from memory.errors import KizunaError
from memory.private import write_private

# Every `kizuna` reads PROVIDERS for its options: what only `kizuna init` runs is imported
# where it is used.
if TYPE_CHECKING:
    from adapters.command.doctor import Finding
    from bot.llm.router import OllamaProbe
    from bot.persona.file import PersonaLibrary

__all__ = [
    "PROVIDERS",
    "Answers",
    "Detected",
    "Plan",
    "WizardError",
    "ask_plan",
    "changes",
    "check_tokens",
    "detect",
    "drafted",
    "guidance",
    "is_yes",
    "render",
    "write_config",
]

Provider = Literal["auto", "openai", "ollama", "zhipu", "offline"]
PROVIDERS: tuple[Provider, ...] = ("auto", "openai", "ollama", "zhipu", "offline")
OLLAMA = "http://localhost:11434"

# Asks one question with a default and returns the answer ("" keeps the default).
Ask = Callable[[str, str], str]


class WizardError(KizunaError):
    """An answer that cannot be used, said in one line."""


@dataclass(slots=True)
class Plan:
    """What the file will say."""

    personas: list[str]
    discord_env: str = ""  # the variable holding the Discord token; "" = no Discord bot
    telegram_env: str = ""
    web: bool = False
    provider: Provider = "auto"
    model: str = ""  # the chat model ("" = the provider's default)
    notes: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Answers:
    """What flags said; None asks (or, without a terminal, takes the default)."""

    personas: str | None = None
    discord_env: str | None = None
    telegram_env: str | None = None
    web: bool | None = None
    provider: str | None = None
    model: str | None = None


def ask_plan(
    given: Answers,
    library: PersonaLibrary,
    environ: Mapping[str, str],
    previous: Config | None,
    found: Detected,
    *,
    ask: Ask | None,
) -> Plan:
    """The plan from the flags, the questions the flags left open (None `ask`: the defaults,
    for scripts), and the file found before (its answers are the defaults)."""
    known = library.names()

    def answer(flag: str | None, question: str, default: str) -> str:
        if flag is not None:
            return flag.strip()
        if ask is None:
            return default
        return ask(question, default).strip() or default

    before = _previous(previous)
    personas = [
        p.strip()
        for p in answer(
            given.personas, f"Personas ({', '.join(known)})", before.get("personas", "monikai")
        ).split(",")
        if p.strip()
    ]
    unknown = [p for p in personas if p not in known]
    if unknown or not personas:
        named = ", ".join(unknown) or "(none)"
        raise WizardError(f"--personas: no persona named {named} (known: {', '.join(known)})")
    discord_env = answer(
        given.discord_env,
        "Discord: the variable holding the bot token (none: no Discord bot)",
        before.get("discord", "none"),
    )
    telegram_env = answer(
        given.telegram_env,
        "Telegram: the variable holding the bot token (none: no Telegram bot)",
        before.get("telegram", "none"),
    )
    web = (
        given.web
        if given.web is not None
        else is_yes(answer(None, "The web page too (yes/no)", before.get("web", "yes")))
    )
    detected, served = found.said, found.ollama
    provider = answer(
        given.provider,
        f"Model provider ({'/'.join(PROVIDERS)}; found: {detected})",
        before.get("provider", "auto"),
    )
    if provider not in PROVIDERS:
        raise WizardError(f"--provider must be one of {', '.join(PROVIDERS)}, not {provider!r}")
    default_model = served[0] if provider == "ollama" and served else ""
    model = answer(given.model, "Chat model (empty: the provider's default)", default_model)
    plan = Plan(
        personas=personas,
        discord_env=_variable(discord_env, "--discord"),
        telegram_env=_variable(telegram_env, "--telegram"),
        web=web,
        provider=provider,
        model=model,
    )
    if provider == "ollama" and not served:
        plan.notes.append(f"No Ollama answers at {OLLAMA} yet: start it (ollama serve).")
    if provider in ("openai", "zhipu"):
        key = "OPENAI_API_KEY" if provider == "openai" else "ZHIPUAI_API_KEY"
        if not environ.get(key):
            plan.notes.append(f"Set {key} in the environment before starting Kizuna.")
    return plan


def is_yes(text: str) -> bool:
    return text.strip().lower() in ("y", "yes", "true", "1", "on")


def _variable(value: str, flag: str) -> str:
    """An environment variable's name, or "" for none; a token pasted by mistake is refused
    without being repeated."""
    if value.lower() in ("", "none", "no", "-"):
        return ""
    if not ENV_NAME.fullmatch(value):
        raise WizardError(
            f"{flag}: the NAME of an environment variable (like DISCORD_TOKEN), not a token"
        )
    return value


@dataclass(slots=True, frozen=True)
class Detected:
    """What Kizuna would use by itself, said for the question, and what Ollama serves."""

    said: str
    ollama: list[str]


async def detect(environ: Mapping[str, str], probe: OllamaProbe) -> Detected:
    from bot.llm.router import ollama_url

    host = ollama_url(environ.get("OLLAMA_HOST", "")) or OLLAMA
    served = await probe(host)
    if environ.get("OPENAI_API_KEY"):
        return Detected("an OpenAI key", served)
    if served:
        return Detected(f"Ollama with {', '.join(served[:3])}", served)
    return Detected("nothing, so the offline model", served)


def _previous(config: Config | None) -> dict[str, str]:
    """The answers a file written before gives, as defaults."""
    if config is None:
        return {}
    found: dict[str, str] = {}
    personas: list[str] = []
    for bot in config.bots:
        personas += bot.hosted
        if bot.platform in ("discord", "telegram"):
            found[bot.platform] = bot.token_env
        if bot.platform == "web":
            found["web"] = "yes"
    if personas:
        found["personas"] = ",".join(dict.fromkeys(personas))
        found.setdefault("web", "no")
    providers = list(config.models.providers.values())
    if providers:
        kind = providers[0].kind
        local = providers[0].base_url.startswith(OLLAMA)
        found["provider"] = "ollama" if local else kind
    return found


def render(plan: Plan) -> str:
    """The configuration file: the plan, and comments that say where the rest is."""
    q = json.dumps  # a TOML basic string is a JSON string
    first, *others = plan.personas
    lines = [
        "# Written by `kizuna init` (run it again to change these answers). Every other",
        "# setting, with its default, is in config.example.toml.",
        "# Secrets never live here: `*_env` keys name the environment variables holding them.",
        "",
    ]
    provider = _provider_table(plan)
    if provider:
        lines += ["[models]", *provider, ""]
    bots: list[tuple[str, str]] = []
    if plan.discord_env:
        bots.append(("discord", plan.discord_env))
    if plan.telegram_env:
        bots.append(("telegram", plan.telegram_env))
    for platform, env in bots:
        lines += ["[[bots]]", f"platform = {q(platform)}", f"persona = {q(first)}"]
        if others:
            lines.append(f"personas = {json.dumps(others)}")
        lines += [f"token_env = {q(env)}", ""]
    if plan.web:
        lines += ["[[bots]]", 'platform = "web"', f"persona = {q(first)}"]
        if others:
            lines.append(f"personas = {json.dumps(others)}")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def _provider_table(plan: Plan) -> list[str]:
    q = json.dumps
    model = [f"[models.chat]\nmodel = {q(plan.model)}"] if plan.model else []
    if plan.provider == "openai":
        return ["[models.providers.openai]", 'kind = "openai"', *model]
    if plan.provider == "ollama":
        return [
            "[models.providers.ollama]",
            'kind = "openai"',
            f"base_url = {q(OLLAMA + '/v1')}",
            "timeout = 120.0",
            *model,
        ]
    if plan.provider == "zhipu":
        return ["[models.providers.zhipu]", 'kind = "zhipu"', *model]
    if plan.provider == "offline":
        return ["[models.providers.offline]", 'kind = "offline"']
    return model


def drafted(plan: Plan, path: Path, previous: Config | None) -> str:
    """The file's new text: a new file rendered from the plan; a file already there edited in
    place, changing only what the questions are about and keeping everything else (keys added
    by hand, such as base_url or admin_ids, other bots, comments, the order)."""
    if not path.is_file():
        return render(plan)
    text = path.read_text(encoding="utf-8-sig")
    doc = tomlkit.parse(text)
    _edit_bots(doc, plan)
    before = _previous(previous)
    model = previous.models.chat.model if previous and previous.models.chat else ""
    if plan.provider != before.get("provider", "auto") or (plan.model and plan.model != model):
        _edit_models(doc, plan)
    return tomlkit.dumps(doc)


def _edit_bots(doc: tomlkit.TOMLDocument, plan: Plan) -> None:
    """The first bot of each platform the plan names gets its personas (and token variable);
    a platform answered "none" loses its bots; one not in the file yet gets a new table."""
    wanted: dict[str, str] = {}
    if plan.discord_env:
        wanted["discord"] = plan.discord_env
    if plan.telegram_env:
        wanted["telegram"] = plan.telegram_env
    if plan.web:
        wanted["web"] = ""
    bots = doc.get("bots")
    if not isinstance(bots, AoT):
        bots = tomlkit.aot()
        doc.append("bots", bots)
    first, *others = plan.personas
    done: set[str] = set()
    for i in reversed(range(len(bots))):  # from the end: deleting keeps earlier indexes
        platform = str(bots[i].get("platform", ""))
        if platform in ("discord", "telegram", "web") and platform not in wanted:
            del bots[i]
    for table in bots:
        platform = str(table.get("platform", ""))
        if platform in wanted and platform not in done:
            done.add(platform)
            _set_bot(table, first, others, wanted[platform])
    for platform, env in wanted.items():
        if platform not in done:
            if len(bots):  # a blank line before the new table, as before the others
                bots[-1].add(tomlkit.nl())
            table = tomlkit.table()
            table["platform"] = platform
            _set_bot(table, first, others, env)
            bots.append(table)


def _set_bot(table: Table, first: str, others: list[str], env: str) -> None:
    table["persona"] = first
    if others:
        table["personas"] = others
    elif "personas" in table:
        del table["personas"]
    if env:
        table["token_env"] = env


def _edit_models(doc: tomlkit.TOMLDocument, plan: Plan) -> None:
    """The provider the plan chose replaces the file's providers; the chat model is set if
    one was given. The tiers and every other [models] key stay."""
    new = tomlkit.parse("[models]\n" + "\n".join(_provider_table(plan)) + "\n")["models"]
    assert isinstance(new, Table)
    models = doc.get("models")
    if not isinstance(models, Table):
        if not _provider_table(plan):
            return
        doc["models"] = new
        return
    if "providers" in new:
        models["providers"] = new["providers"]
    elif "providers" in models:
        del models["providers"]
    if "chat" in new:
        chat = models.get("chat")
        if isinstance(chat, Table):
            chat["model"] = new["chat"]["model"]
        else:
            models["chat"] = new["chat"]


def changes(path: Path, text: str) -> list[str]:
    """What writing `text` would change in the file at `path` (a unified diff; empty when
    nothing would, or the file is new)."""
    if not path.is_file():
        return []
    old = path.read_text(encoding="utf-8-sig")
    return [
        line.rstrip("\n")
        for line in difflib.unified_diff(
            old.splitlines(keepends=True),
            text.splitlines(keepends=True),
            fromfile=f"{path} (now)",
            tofile=f"{path} (after)",
        )
    ]


def write_config(text: str, path: Path) -> Path | None:
    """Write the file, checked by loading it first (a TomlError, and nothing written, if it
    does not load); the file it replaces is kept as `<name>.bak` (returned)."""
    draft = path.with_name(f".{path.name}.init")
    write_private(draft, text.encode())
    try:
        load_config(draft, {}, RULES)
        kept = None
        if path.exists():
            kept = path.with_name(path.name + ".bak")
            os.replace(path, kept)
        os.replace(draft, path)
    finally:
        draft.unlink(missing_ok=True)
    return kept


async def check_tokens(config: Config, environ: Mapping[str, str]) -> list[Finding]:
    """Each Discord and Telegram bot's token, as `kizuna doctor` checks it."""
    from adapters.command.doctor import check_bot

    return [
        await check_bot(i, bot, environ)
        for i, bot in enumerate(config.bots)
        if bot.platform in ("discord", "telegram")
    ]


def guidance(bots: Sequence[BotConfig]) -> list[str]:
    """What to do in each platform's own settings, for the platforms the file uses."""
    said: list[str] = []
    platforms = {bot.platform for bot in bots}
    if "discord" in platforms:
        env = next(b.token_env for b in bots if b.platform == "discord")
        said += [
            "Discord (docs/setup-discord.md):",
            "  1. https://discord.com/developers/applications: New Application, then Bot,",
            f"     Reset Token; put the token in the environment: export {env}=...",
            "  2. Bot, Privileged Gateway Intents: switch on Message Content Intent.",
            "  3. Invite the bot with the address `kizuna doctor` prints (scopes bot and",
            "     applications.commands). Slash commands appear when the bot starts (global",
            "     ones can take up to an hour; guild_ids registers them in a server at once).",
        ]
    if "telegram" in platforms:
        env = next(b.token_env for b in bots if b.platform == "telegram")
        said += [
            "Telegram (docs/setup-telegram.md):",
            f"  1. Talk to @BotFather: /newbot; put the token in the environment: export {env}=...",
            "  2. In groups a bot hears only commands, mentions and replies until its group",
            "     privacy mode is off: @BotFather, /setprivacy, Disable (then add it again).",
            "  3. Kizuna registers its commands (the / menu) when the bot starts.",
        ]
    if "web" in platforms:
        said.append("The web page: `kizuna run` serves it at http://127.0.0.1:3000.")
    if platforms:
        said.append("Then: kizuna doctor (checks everything), kizuna run (starts the bots).")
    else:
        said.append("Then: kizuna chat --persona NAME talks in this terminal.")
    return said
