"""The persona file format, from the dataclasses that validate it: every key a persona file may
have, with its TOML type, whether it is required, its default and what it does, and the
reference section of docs/personas.md rendered from them.

The keys come from walking `Persona` as `bot.tomlfile` reads it (the same fields, the same type
hints), so a key the loader accepts cannot be missing here. What each key does is in `DOCS`,
by key path (a forgetting policy's parameters: their fields' "doc", through
memory.forgetting.registry); tests/test_persona_format.py fails when a key has no
description, when a description is for a key that does not exist, and when docs/personas.md
is not what `python -m bot.persona.reference docs/personas.md` writes.

Paths are written as in the text: "memory.half_life.days"; an array of tables' keys with "[]":
"state[].update", "lorebook.entries[].keys".
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import types
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from bot.persona.file import Persona
from bot.tomlfile import keys_of, required
from memory.forgetting.registry import DEFAULT_POLICY, POLICIES

__all__ = ["DOCS", "MARKER", "Key", "keys", "main", "reference", "updated"]


@dataclass(slots=True, frozen=True)
class Key:
    path: str  # "memory.half_life.days", "state[].update"
    type: str  # "string", "array of strings", "table", 'one of "user", "channel"', ...
    required: bool
    default: str  # the default as TOML writes it; "" for a required key or a table
    table: str  # the table it is in ("" the top level, "memory", "state[]")
    name: str  # its name in that table
    opens: Literal["", "table", "array"]  # a table or an array of tables: a section of its own


def _forgetting_docs() -> dict[str, str]:
    """The sentences of the `[memory.<policy>]` tables and their keys, from the registry of
    forgetting policies: a parameter's is its field's "doc"."""
    out: dict[str, str] = {}
    for name, entry in POLICIES.items():
        if entry.params is None:
            continue
        default = " (the default)" if name == DEFAULT_POLICY else ""
        out[f"memory.{name}"] = (
            f'The parameters of the "{name}" policy{default}, given only when `forgetting` '
            "chooses it (a table of another policy is a mistake)."
        )
        for f in dataclasses.fields(entry.params):
            out[f"memory.{name}.{f.name}"] = f.metadata["doc"]
    return out


# One short sentence per key. Keys are written in backticks (a bare name is a key of the same
# table), values in quotes.
DOCS: dict[str, str] = {
    "identity": "Who the persona is: the one table a persona file must have.",
    "identity.name": "The persona's name, as it introduces itself and as users address it.",
    "identity.personality": "Who the persona is, in prose: the heart of its system prompt.",
    "identity.nickname": "A shorter name it also answers to.",
    "identity.language": (
        'The language it speaks, and answers commands in: "en", "zh" or another language code.'
    ),
    "identity.language_style": "How it speaks: register, length of replies, habits.",
    "identity.notices": "Rules it keeps in mind, one string each.",
    "identity.brief": "Its background and situation, told to the model as what it is about.",
    "identity.example_memory": (
        "A memory as it would write one (dated, from its point of view): the model writes "
        "its memories like it."
    ),
    "identity.apology": (
        'Said, in character, when the model cannot be reached; "" says the built-in line in '
        "its `language`."
    ),
    "identity.avatar_url": (
        "An image address (https:// or http://) a chat platform shows as its picture, such as "
        "a Discord webhook's avatar."
    ),
    "user": "How the persona addresses a user it knows nothing better about.",
    "user.name": "What it calls the user.",
    "user.identity": "Who the user is to the persona.",
    "user.info": "What the persona knows of the user from the start.",
    "emotions": (
        "The emotion tags the model starts each reply with, and the faces that show them."
    ),
    "emotions.names": (
        "The tags a reply may start with (HAPPY for [HAPPY]): letters, digits and _, starting "
        "with a letter; written in capitals whatever the file says."
    ),
    "emotions.neutral": "The tag of a reply that gives none, or one not in `names`.",
    "emotions.sprites": (
        "The folder of EMOTION.png and EMOTIONSPEAKING.png (or .svg, .webp), relative to the "
        'persona file; "" means assets/<persona name> beside it. A folder named here must exist.'
    ),
    "emotions.reactions": (
        'Emoji by emotion tag (one Telegram allows: "🥰", "👌"...) put on a plain "thanks!" '
        "after its reply on Discord and Telegram instead of a reply; none by default."
    ),
    "group": (
        "When the persona speaks in a group chat besides when it is addressed (a mention, a "
        "reply to it, its name, a question right after its own message); `/group` changes "
        "these for one channel."
    ),
    "group.mode": (
        '"speak": it may join a conversation uninvited; "listen": it remembers what is said '
        "but speaks only when addressed."
    ),
    "group.talkativeness": (
        "The chance, 0 to 1, that it joins a conversation among others uninvited (0: never)."
    ),
    "group.cooldown_seconds": (
        "Seconds since it last spoke in a channel before it may join in uninvited again."
    ),
    "group.max_per_minute": (
        "Past this many of its messages in a channel in the last minute, it does not join in "
        "uninvited (it still answers whoever addresses it)."
    ),
    "group.names": (
        'Other names it answers to in a group, besides its name and nickname (e.g. "喵喵"); '
        'where a bot hosts several personas, a message opening with one ("Cap, ...") goes to it.'
    ),
    "group.idle_minutes": (
        "Quiet minutes after which a group conversation closes and is written into memory "
        "(memory.idle_minutes if that is longer; a private chat uses memory.idle_minutes)."
    ),
    "group.ask_model": (
        'Ask the intent model "should I answer?" before joining in uninvited: one call each '
        "time the local rules would let it; off, the local rules decide alone, for free."
    ),
    "group.persona_exchanges": (
        "Where several personas share a channel, how many replies they may make to one "
        "another (each only when addressed by name) before a person speaks again (0: they "
        "never answer each other)."
    ),
    "group.greet": (
        "Greet a member who joins the group: one chat-model call, at most once in five "
        "minutes a channel (off: it says nothing when someone joins)."
    ),
    "outreach": (
        "Whether it writes first in a user's private chat (follow-ups, special days, "
        "check-ins): off unless the host turns it on; a user stops it with `/quiet`."
    ),
    "outreach.enabled": (
        "Turn writing first on for this persona (true), where each platform allows it: "
        "Telegram users who started the bot, Discord users who share a server with it."
    ),
    "outreach.per_week": (
        "Messages it writes first to one person in any 7 days, at most (reminders they asked "
        "for do not count); at least 20 hours pass between two."
    ),
    "outreach.checkin_days": (
        "Days of a user's silence after which it writes once to check in, picking up something "
        "they cared about (0: never)."
    ),
    "outreach.quiet_hours": (
        'Local hours "HH-HH" it never writes first in: the user\'s time zone if they set one '
        "(`/timezone`), else the hours learned from when they talk, else the bot's."
    ),
    "outreach.groups": (
        "Follow up, in the private chat, what a user said in a group too (false: only what "
        "they said privately)."
    ),
    "voice": (
        "Whether it answers with a voice note as well as text (never in eco mode; offline, a "
        "murmur); "
        "a user says `/voice off` for text only, `/voice on` for typed messages too."
    ),
    "voice.speak": (
        '"never", "when_spoken_to" (a reply to a voice note the user sent is spoken too) or '
        '"always" (every reply, in a private chat or a group).'
    ),
    "voice.voice": (
        'The speech provider\'s name for the voice it speaks in (OpenAI: "alloy", "nova", '
        '"shimmer"...); empty: "alloy".'
    ),
    "memory": "How the persona remembers: whose memories, and how they fade.",
    "memory.scope": (
        'Whose memories: "user" keeps one memory per person, "channel" one per channel, '
        "shared by everyone in it."
    ),
    "memory.share_channels": (
        'With scope "user": true keeps one memory per person across all of a Discord server\'s '
        "channels, which have different readers; false (the default) keeps one per channel."
    ),
    "memory.forgetting": (
        "The forgetting policy, which fades memories and forgets the faded ones once a day "
        "(memory/forgetting/ has a module for each, which says how it works)."
    ),
    "memory.flashback_rate": (
        "The chance each turn, from 0 to 1, that old memories pass through the persona's mind "
        "unasked."
    ),
    "memory.idle_minutes": (
        "Minutes of quiet after which a conversation ends and is written to long-term memory "
        "(at most a week)."
    ),
    **_forgetting_docs(),
    "tools": (
        'What the model may call: "recall_memory", "web_search" (not in eco mode), '
        '"translate", installed tools ("dice", "reminder") and its `custom_tools`, by name.'
    ),
    "custom_tools": (
        "Python tools the persona may call, and their limits, one table each "
        "(docs/tools.md); a table also lets the model call its tool."
    ),
    "custom_tools[].name": (
        "What the model calls the tool; without `module`, the installed tool of that name."
    ),
    "custom_tools[].module": (
        '"package.module:function": an async function taking a ToolContext first (it acts '
        "for one person) or a CommonContext (for no one in particular)."
    ),
    "custom_tools[].timeout": "Seconds a call may take before it is given up.",
    "custom_tools[].max_output_chars": "How much of its answer the model sees, in characters.",
    "custom_tools[].cheap": "Still offered in eco mode, which turns the other tools off.",
    "custom_tools[].admin_only": "Offered only to a chat's admins, never in a private chat.",
    "custom_tools[].rate_per_minute": "Calls one user may make a minute; 0 for no limit.",
    "mcp_servers": (
        "MCP servers whose tools the persona may call, one table each: started when first "
        "needed, restarted after a crash, stopped with Kizuna."
    ),
    "mcp_servers[].name": "The server's name; the model calls its tools NAME__TOOL.",
    "mcp_servers[].tools": "The server's tools the persona may call, by the server's names.",
    "mcp_servers[].command": "The program that starts the server, spoken to over stdio.",
    "mcp_servers[].args": "The command's arguments.",
    "mcp_servers[].env": (
        "Environment variables passed to the command, by name; no other of yours reaches it."
    ),
    "mcp_servers[].url": "A streamable HTTP server's address, instead of a command.",
    "mcp_servers[].timeout": "Seconds the server has to start, and to answer each call.",
    "mcp_servers[].max_output_chars": "How much of an answer the model sees, in characters.",
    "mcp_servers[].cheap": "Its tools still offered in eco mode.",
    "mcp_servers[].admin_only": "Its tools offered only to a chat's admins.",
    "mcp_servers[].rate_per_minute": "Calls one user may make a minute, per tool; 0 for none.",
    "state": (
        "Pieces of state the persona keeps up to date and sees in every prompt (a dungeon "
        "master's party and game), one table each."
    ),
    "state[].name": "The slot's name, unique among the persona's slots (`/state set NAME`).",
    "state[].instructions": "What the model keeps in this slot, and in what form.",
    "state[].update": (
        '"every_turn" revises the slot after every reply; "once" fills it once, then only the '
        "user changes it."
    ),
    "state[].initial": "The slot's value before the model first fills it.",
    "state[].tokens": (
        "The most tokens (four letters or one Chinese character each) the model's revision "
        "keeps, the longest lines cut from their ends first; 0 for no bound but 2,000 characters."
    ),
    "card": (
        "What a character card brings beyond the identity (`kizuna persona import` writes it); "
        "text may hold {{char}} and {{user}}, filled in when the prompt is built."
    ),
    "card.scenario": "The situation the conversation takes place in.",
    "card.first_message": (
        "The persona's greeting: its first turn of a user's very first private conversation "
        "with it (shown when the console or the web page opens it, or before the answer to a "
        "first private message)."
    ),
    "card.example_messages": "Sample exchanges, separated by <START>, showing how it talks.",
    "card.system_prompt": "The card author's instructions, put before everything else.",
    "card.post_history_instructions": "Said to the model after the conversation.",
    "card.alternate_greetings": "The card's other greetings, kept for its export.",
    "card.tags": "The card's tags, kept for its export.",
    "card.creator": "Who made the card.",
    "card.character_version": "The card's version.",
    "card.kept": (
        "The card's other fields and extensions as JSON text, so an export loses nothing."
    ),
    "lorebook": (
        "Knowledge that enters the prompt when one of an entry's keys comes up in the recent "
        "messages (a card's character book)."
    ),
    "lorebook.entries": "The book's entries, one table each.",
    "lorebook.entries[].keys": (
        "Words that bring the entry into the prompt when one is in the last "
        "`lorebook.scan_depth` messages (any case, unless `case_sensitive`)."
    ),
    "lorebook.entries[].content": "What enters the prompt.",
    "lorebook.entries[].secondary_keys": (
        "Words one of which must come up too, when the entry is `selective`."
    ),
    "lorebook.entries[].selective": "Whether the entry also needs one of its `secondary_keys`.",
    "lorebook.entries[].constant": "Whether the entry is always in the prompt.",
    "lorebook.entries[].case_sensitive": "Whether `keys` match only in the same case.",
    "lorebook.entries[].enabled": "Whether the entry is used at all.",
    "lorebook.entries[].insertion_order": (
        "Where it goes among the entries brought in: lower is earlier."
    ),
    "lorebook.entries[].priority": (
        "Over `lorebook.token_budget`, the entries of lowest priority are left out first."
    ),
    "lorebook.entries[].use_regex": (
        "Whether `keys` are regular expressions (a pattern, or /pattern/flags)."
    ),
    "lorebook.entries[].name": "The entry's name, for people.",
    "lorebook.entries[].kept": "The entry's other fields as JSON text, for the card's export.",
    "lorebook.scan_depth": "How many recent messages are searched for keys (1 or more).",
    "lorebook.token_budget": "The most tokens the entries brought in may take in the prompt.",
    "lorebook.recursive_scanning": (
        "Whether the content of the entries brought in is searched for keys too."
    ),
    "lorebook.name": "The book's name.",
    "lorebook.kept": "The book's other fields as JSON text, for the card's export.",
}

MARKER = (
    "<!-- Generated from bot/persona/file.py and bot/persona/reference.py by "
    "`python -m bot.persona.reference docs/personas.md`: edit those, not what follows. -->"
)

_SCALARS = {str: "string", int: "integer", float: "float", bool: "boolean"}


def keys(cls: type = Persona) -> Iterator[Key]:
    """Every key of a file read into the dataclass `cls`, a table before its keys."""
    yield from _walk(cls, "")


def _walk(cls: type, table: str) -> Iterator[Key]:
    for name, (f, tp) in keys_of(cls).items():
        path = f"{table}.{name}" if table else name
        must = required(f)
        tp = _unwrapped(tp)
        nested = _dataclass(tp)
        if nested is not None:
            yield Key(path, "table", must, "", table, name, "table")
            yield from _walk(nested, path)
            continue
        origin = get_origin(tp)
        items = get_args(tp)[0] if origin is list and get_args(tp) else None
        element = _dataclass(items) if items is not None else None
        if element is not None:
            yield Key(path, "array of tables", must, "", table, name, "array")
            yield from _walk(element, f"{path}[]")
            continue
        default = "" if must else _default(f)
        yield Key(path, _type(tp), must, default, table, name, "")


def _unwrapped(tp: Any) -> Any:
    """X of `X | None`: a file has no none to write, so the key is an X (or left out)."""
    if get_origin(tp) in (Union, types.UnionType):
        options = [a for a in get_args(tp) if a is not type(None)]
        if len(options) == 1:
            return options[0]
    return tp


def _dataclass(tp: Any) -> type | None:
    return tp if dataclasses.is_dataclass(tp) and isinstance(tp, type) else None


def _type(tp: Any, plural: bool = False) -> str:
    """The TOML type of `tp`, as `bot.tomlfile` checks it."""
    origin = get_origin(tp)
    if tp is Any or tp is object:
        return "any values" if plural else "any value"
    if origin in (Union, types.UnionType):
        return " or ".join(_type(a, plural) for a in get_args(tp) if a is not type(None))
    if origin is Literal:
        values = ", ".join(json.dumps(a) for a in get_args(tp))
        return values if plural else f"one of {values}"
    if origin is list or tp is list:
        (item,) = get_args(tp) or (Any,)
        return "arrays" if plural else f"array of {_type(item, plural=True)}"
    if origin is dict or tp is dict:
        _, item = get_args(tp) or (str, Any)
        return "tables" if plural else f"table of {_type(item, plural=True)}"
    if tp in _SCALARS:
        return _SCALARS[tp] + ("s" if plural else "")
    raise TypeError(f"no TOML type for {tp!r}")


def _default(f: dataclasses.Field[Any]) -> str:
    """The default as TOML writes it; "" for none (left out, the key means nothing)."""
    if f.default is None:
        return ""
    if f.default is not dataclasses.MISSING:
        return _toml(f.default)
    factory: Any = f.default_factory
    return _toml(factory())


def _toml(value: Any) -> str:
    """`value` as TOML writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML for the default {value!r}")


def reference(cls: type = Persona) -> str:
    """The reference part of docs/personas.md: a section per table, a row per key."""
    found = list(keys(cls))
    missing = [k.path for k in found if k.path not in DOCS]
    if missing:
        raise ValueError(f"keys with no description in DOCS: {', '.join(missing)}")
    sections: dict[str, list[Key]] = {"": []}
    opened: dict[str, Key] = {}
    for key in found:
        if key.opens:
            inner = f"{key.path}[]" if key.opens == "array" else key.path
            sections[inner] = []
            opened[inner] = key
        sections[key.table].append(key)
    out = ["## Every key", ""]
    for table, rows in sections.items():
        owner = opened.get(table)
        out += [f"### {_heading(owner)}", ""]
        if owner is not None:
            out += [_sentence(owner), ""]
        out += ["| Key | Type | Default | What it does |", "| --- | --- | --- | --- |"]
        out += [_row(key) for key in rows]
        out.append("")
    return "\n".join(out)


def _heading(owner: Key | None) -> str:
    if owner is None:
        return "The top level"
    name = owner.path.replace("[]", "")
    return f"[[{name}]]" if owner.opens == "array" else f"[{name}]"


def _sentence(key: Key) -> str:
    required = " Required." if key.required else ""
    return _code_words(DOCS[key.path]) + required


def _row(key: Key) -> str:
    name = f"`{key.name}`"
    if key.opens:
        name = f"[{name}](#{_anchor(_heading(key))})"
    default = "required" if key.required else (f"`{key.default}`" if key.default else "none")
    if key.opens:
        default = "required" if key.required else ""
    cells = [name, _cell(key.type), default, _code_words(DOCS[key.path])]
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def _cell(kind: str) -> str:
    """A type with its quoted values as code: one of `"user"`, `"channel"`."""
    return re.sub(r'"[^"]*"', lambda m: f"`{m.group(0)}`", kind)


def _code_words(text: str) -> str:
    """Markdown would take <START>, <persona name> and {{char}} for markup: code them."""
    return re.sub(r"(<[^>]+>|\{\{\w+\}\})", r"`\1`", text)


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but - and _ dropped."""
    return re.sub(r"[^a-z0-9 _-]", "", heading.lower()).replace(" ", "-")


def updated(text: str) -> str:
    """docs/personas.md's `text` with everything after `MARKER` generated anew."""
    head, found, _ = text.partition(MARKER)
    if not found:
        raise ValueError("no marker line: the generated part starts after " + MARKER)
    return f"{head}{MARKER}\n\n{reference()}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bot.persona.reference",
        description="Print the persona format's reference, or rewrite FILE's generated part "
        "(everything after its marker line).",
    )
    parser.add_argument("file", nargs="?", type=Path, help="docs/personas.md")
    args = parser.parse_args(argv)
    if args.file is None:
        sys.stdout.write(reference())
        return 0
    path: Path = args.file
    path.write_text(updated(path.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
