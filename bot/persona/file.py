"""Personas: one TOML file each, read and validated into dataclasses, and found by name.

The shipped personas live in the `personas` package (found wherever Kizuna is installed); a
personas/ folder in the working directory and any configured persona paths add to them and
override them by name, in that order.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from bot import tomlfile
from bot.catalogue import say
from bot.config import Config
from bot.persona.toolspec import CustomTool, McpServer, check_tools
from memory.forgetting import ForgettingPolicy
from memory.forgetting.registry import DEFAULT_POLICY, POLICIES, ForgettingParams, PolicyName

__all__ = [
    "EMOTION_NAME",
    "REACTIONS",
    "Card",
    "Emotions",
    "FloorMode",
    "GroupPolicy",
    "Identity",
    "LoreEntry",
    "Lorebook",
    "MemoryPolicy",
    "OutreachPolicy",
    "Persona",
    "PersonaLibrary",
    "StateSlot",
    "UserAddress",
    "VoicePolicy",
    "load_persona",
    "persona_library",
]

# What the reply parser recognises as an emotion tag: [HAPPY], [VERY_HAPPY], [MOOD2].
EMOTION_NAME = re.compile(r"[A-Z][A-Z0-9_]{1,23}")
MAX_IDLE_MINUTES = 7 * 24 * 60
MAX_PERSONA_EXCHANGES = 20  # replies personas may make to one another between people's words
# In a group: "speak" (answers when addressed, may join in uninvited as `talkativeness` lets
# it), or "listen" (remembers what is said, speaks only when addressed).
FloorMode = Literal["speak", "listen"]


# The emoji a persona may react with: those every platform with reactions takes (Telegram lets a
# bot react with these, python-telegram-bot's ReactionEmoji; Discord takes any).
_EVERYWHERE = (
    "👍 👎 ❤ 🔥 🥰 👏 😁 🤔 🤯 😱 🤬 😢 🎉 🤩 🤮 💩 🙏 👌 🕊 🤡 🥱 🥴 😍 🐳 ❤️‍🔥 🌚 🌭 💯 🤣 ⚡ "
    "🍌 🏆 💔 🤨 😐 🍓 🍾 💋 🖕 😈 😴 😭 🤓 👻 👨‍💻 👀 🎃 🙈 😇 😨 🤝 ✍ 🤗 🫡 🎅 🎄 ☃ 💅 🤪 🗿 "
    "🆒 💘 🙉 🦄 😘 💊 🙊 😎 👾 🤷‍♂️ 🤷 🤷‍♀️ 😡"
)
REACTIONS = frozenset(_EVERYWHERE.split())


@dataclass(slots=True)
class Identity:
    name: str
    personality: str
    nickname: str = ""
    language: str = "en"  # the language the persona speaks: "en", "zh", ...
    language_style: str = ""
    notices: list[str] = field(default_factory=list)  # rules it keeps in mind
    brief: str = ""
    example_memory: str = ""
    apology: str = ""  # said, in character, when the model cannot be reached
    avatar_url: str = ""  # an image a chat platform can show (a Discord webhook's avatar)

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ValueError("identity.name must not be empty")
        if self.avatar_url and not self.avatar_url.startswith(("https://", "http://")):
            raise ValueError(
                f"avatar_url must start with https:// or http://, got {self.avatar_url[:60]!r}"
            )


@dataclass(slots=True)
class UserAddress:
    """How the persona addresses its user when it knows nothing better."""

    name: str = "friend"
    identity: str = ""
    info: str = ""


@dataclass(slots=True)
class Emotions:
    names: list[str] = field(default_factory=lambda: ["NEUTRAL"])
    neutral: str = "NEUTRAL"
    # Folder of EMOTION.png and EMOTIONSPEAKING.png (or .svg, .webp), relative to the persona
    # file; "" means assets/<persona name> beside it.
    sprites: str = ""
    # The emoji it reacts with, by emotion, to a message that only acknowledges its reply
    # ("thanks!", "ok"), instead of replying (bot.turn.reactions); empty: it always replies.
    reactions: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.names = [n.strip().upper() for n in self.names if n.strip()]
        self.neutral = self.neutral.strip().upper()
        for i, name in enumerate(self.names):
            if not EMOTION_NAME.fullmatch(name):
                raise ValueError(
                    f"emotions.names[{i}] {name!r} is not a tag a model can write: use letters, "
                    "digits and _ (like HAPPY or VERY_HAPPY), starting with a letter"
                )
        if self.neutral not in self.names:
            raise ValueError(f"emotions.neutral {self.neutral!r} is not in emotions.names")
        self.reactions = {k.strip().upper(): v.strip() for k, v in self.reactions.items()}
        for name, emoji in self.reactions.items():
            if name not in self.names:
                raise ValueError(f"emotions.reactions.{name} is not in emotions.names")
            if emoji not in REACTIONS:
                raise ValueError(
                    f"emotions.reactions.{name} {emoji!r} is not an emoji Telegram lets a bot "
                    f"react with (such as {' '.join(sorted(REACTIONS)[:8])})"
                )


@dataclass(slots=True)
class MemoryPolicy:
    scope: Literal["user", "channel"] = "user"
    forgetting: PolicyName = DEFAULT_POLICY  # memory.forgetting.registry names them
    flashback_rate: float = 0.05
    idle_minutes: float = 5.0
    # A user-scoped persona keeps one corner per member in each channel of a server (channels have
    # different readers); on, one per member across the whole server (bot.conversation.sessions).
    share_channels: bool = False
    # Each policy's parameters, as [memory.<policy>] tables of [memory] itself; only the chosen
    # one's may be given.
    params: ForgettingParams = field(default_factory=ForgettingParams, metadata={"spread": True})

    def __post_init__(self) -> None:
        if not 0.0 <= self.flashback_rate <= 1.0:
            raise ValueError("memory.flashback_rate must be between 0 and 1")
        if not 0 < self.idle_minutes <= MAX_IDLE_MINUTES:
            raise ValueError(
                f"memory.idle_minutes must be more than 0 and at most {MAX_IDLE_MINUTES} (a week)"
            )

    def policy(self) -> ForgettingPolicy:
        """The forgetting policy chosen, with its parameters from this section."""
        return self.params.policy(self.forgetting)


@dataclass(slots=True)
class GroupPolicy:
    """When the persona speaks in a group (bot.groups.floor): it always may when addressed (a
    mention, a reply to it, its name called, a question right after its own message); these
    say how often it joins a conversation among others uninvited, and how much it says at most.
    An admin may change them for one channel (`/group`)."""

    mode: FloorMode = "speak"
    # The chance it joins in when nobody addressed it (0: never; 1: whenever the cool-down,
    # the ceiling and the room allow).
    talkativeness: float = 0.0
    cooldown_seconds: float = 120.0  # since it last spoke, before it joins in uninvited
    # Past this many of its messages in a channel in the last minute (addressed or not), it
    # does not join in uninvited.
    max_per_minute: int = 12
    names: list[str] = field(default_factory=list)  # what else it answers to ("喵喵", "Mi")
    # Ask the intent tier "should I answer?" before joining in uninvited (one call each time
    # the local rules would let it); off, the local rules decide alone, for free.
    ask_model: bool = False
    # A group conversation closes (and is written into memory) after this many quiet minutes,
    # or memory.idle_minutes if longer: a busy room's talk comes in spurts, and each close
    # costs an encoding.
    idle_minutes: float = 30.0
    # Where several personas share a room (bot.groups.relay), how many replies they may make to one
    # another before a person speaks again: never an endless loop between them.
    persona_exchanges: int = 2
    # Greet a member who joins the group (one chat-tier call; once in 5 minutes a channel).
    greet: bool = False

    def __post_init__(self) -> None:
        self.names = [n.strip() for n in self.names if n.strip()]
        if not 0 <= self.persona_exchanges <= MAX_PERSONA_EXCHANGES:
            raise ValueError(
                f"group.persona_exchanges must be between 0 and {MAX_PERSONA_EXCHANGES}"
            )
        if not 0.0 <= self.talkativeness <= 1.0:
            raise ValueError("group.talkativeness must be between 0 and 1")
        if not 0.0 <= self.cooldown_seconds <= 24 * 3600:
            raise ValueError("group.cooldown_seconds must be between 0 and 86400 (a day)")
        if not 1 <= self.max_per_minute <= 60:
            raise ValueError("group.max_per_minute must be between 1 and 60")
        if not 0 < self.idle_minutes <= MAX_IDLE_MINUTES:
            raise ValueError(
                f"group.idle_minutes must be more than 0 and at most {MAX_IDLE_MINUTES} (a week)"
            )


# When a persona's reply is spoken aloud too (bot.media.speech): never, to a message the user spoke
# (a voice note), or always.
SpeakWhen = Literal["never", "when_spoken_to", "always"]


@dataclass(slots=True)
class VoicePolicy:
    """Whether the persona answers with a voice note as well as its text (bot.media.speech): off
    unless the host turns it on; a user turns it off for themselves, or on for typed messages
    too, with /voice."""

    speak: SpeakWhen = "never"
    voice: str = ""  # the speech provider's voice ("nova", "alloy"...); "" its default

    def __post_init__(self) -> None:
        self.voice = self.voice.strip()
        if len(self.voice) > 64 or any(c.isspace() for c in self.voice):
            raise ValueError(
                f"voice.voice must be one word, the provider's name for a voice (like "
                f'"nova"), got {self.voice[:40]!r}'
            )


# "HH-HH": the hours a persona never writes first, in the user's time zone (from the first
# hour to the second, across midnight when the first is later).
_HOURS = re.compile(r"([01]?\d|2[0-3])-([01]?\d|2[0-3])")


@dataclass(slots=True)
class OutreachPolicy:
    """Whether and how often the persona writes first (bot.outreach): follow-ups on what a
    user said was coming, their special days, check-ins after an absence. Off unless the host
    opts in; a user opts out with /quiet."""

    enabled: bool = False
    per_week: int = 2  # unsolicited messages to one person in any 7 days, at most
    checkin_days: float = 0.0  # days of a user's silence before it checks in (0: never)
    quiet_hours: str = "22-09"  # never writes in these local hours
    groups: bool = False  # may follow up what was said in a group (in the private chat)

    def __post_init__(self) -> None:
        if not 0 <= self.per_week <= 14:
            raise ValueError("outreach.per_week must be between 0 and 14")
        if not 0 <= self.checkin_days <= 365:
            raise ValueError("outreach.checkin_days must be between 0 (never) and 365")
        match = _HOURS.fullmatch(self.quiet_hours.replace(" ", ""))
        if match is None or match.group(1) == match.group(2):
            raise ValueError(
                f'outreach.quiet_hours must be "HH-HH" with two different hours 0-23 (like '
                f'"22-09"), got {self.quiet_hours[:20]!r}'
            )
        self.quiet_hours = f"{int(match.group(1)):02d}-{int(match.group(2)):02d}"

    @property
    def quiet(self) -> tuple[int, int]:
        """The quiet hours as (first, end): first <= hour < end, across midnight if first > end."""
        first, end = self.quiet_hours.split("-")
        return int(first), int(end)


@dataclass(slots=True)
class StateSlot:
    """A piece of state the persona keeps up to date (a dungeon master's party, the game)."""

    name: str
    instructions: str
    update: Literal["once", "every_turn"] = "every_turn"
    initial: str = ""
    tokens: int = 0  # what a revision by the model keeps at most; 0: VALUE_LIMIT only

    def __post_init__(self) -> None:
        if self.tokens < 0:
            raise ValueError("tokens must be 0 (no bound) or more")

    def value(self, state: Mapping[str, str]) -> str:
        """This slot's value in a session's state, or its initial value."""
        return state.get(self.name) or self.initial.strip()

    def settled(self, state: Mapping[str, str]) -> bool:
        """Set once and gathered: it stays as it is unless the user changes it."""
        return self.update == "once" and bool(state.get(self.name))


@dataclass(slots=True)
class Card:
    """What a character card brings beyond the identity (`kizuna persona import`). Text may
    hold {{char}} and {{user}}, filled in when the prompt is built."""

    scenario: str = ""
    first_message: str = ""
    example_messages: str = ""  # <START>-separated sample exchanges
    system_prompt: str = ""  # the card author's instructions, before everything else
    post_history_instructions: str = ""  # said to the model after the conversation
    alternate_greetings: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    creator: str = ""
    character_version: str = ""
    # The card's other fields and extensions, as JSON text: kept so an export loses nothing.
    kept: str = ""


@dataclass(slots=True)
class LoreEntry:
    """Knowledge that enters the prompt when one of its keys comes up (a card's lorebook)."""

    keys: list[str]
    content: str
    secondary_keys: list[str] = field(default_factory=list)
    selective: bool = False  # also needs one of the secondary keys
    constant: bool = False  # always in
    case_sensitive: bool = False
    enabled: bool = True
    insertion_order: int = 100
    priority: int = 0  # over the budget, the lowest go first
    use_regex: bool = False
    name: str = ""
    kept: str = ""  # the entry's other fields, as JSON text


@dataclass(slots=True)
class Lorebook:
    entries: list[LoreEntry] = field(default_factory=list)
    scan_depth: int = 4  # how many recent messages are searched for keys
    token_budget: int = 500
    recursive_scanning: bool = False
    name: str = ""
    kept: str = ""  # the book's other fields, as JSON text

    def __post_init__(self) -> None:
        if self.scan_depth < 1 or self.token_budget < 0:
            raise ValueError("lorebook.scan_depth must be 1 or more, token_budget 0 or more")


@dataclass(slots=True)
class Persona:
    identity: Identity
    user: UserAddress = field(default_factory=UserAddress)
    emotions: Emotions = field(default_factory=Emotions)
    memory: MemoryPolicy = field(default_factory=MemoryPolicy)
    group: GroupPolicy = field(default_factory=GroupPolicy)
    outreach: OutreachPolicy = field(default_factory=OutreachPolicy)
    voice: VoicePolicy = field(default_factory=VoicePolicy)
    # What it may call: built-in tools, installed ones and its [[custom_tools]], by name.
    tools: list[str] = field(default_factory=list)
    custom_tools: list[CustomTool] = field(default_factory=list)  # Python tools and their limits
    mcp_servers: list[McpServer] = field(default_factory=list)  # MCP servers and their tools
    state: list[StateSlot] = field(default_factory=list)
    card: Card = field(default_factory=Card)
    lorebook: Lorebook = field(default_factory=Lorebook)
    # Set by the loader, not TOML keys: the persona's name (its file's stem) and its file.
    key: str = field(default="", metadata={"toml": False})
    path: Path | None = field(default=None, metadata={"toml": False})

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for i, slot in enumerate(self.state):
            if slot.name in seen:
                raise ValueError(f"state[{i}].name {slot.name!r} is used by an earlier slot")
            seen.add(slot.name)
        check_tools(self.tools, self.custom_tools, self.mcp_servers)

    @property
    def sprite_dir(self) -> Path | None:
        if self.path is None:
            return None
        return self.path.parent / (self.emotions.sprites or f"assets/{self.key}")

    def emotion(self, tag: str | None) -> str:
        """The persona's emotion for a tag the model gave; unknown or missing means neutral."""
        tag = (tag or "").strip().upper()
        return tag if tag in self.emotions.names else self.emotions.neutral

    def apology(self) -> str:
        """What the persona says when the model cannot be reached: its own line, or the
        catalogue's in its language."""
        return self.identity.apology or say(self.identity.language, "apology")


def load_persona(path: Path) -> Persona:
    """The persona in `path`, or a TomlError naming the file, the key and the line: for a
    mistake in a value, and for what would be silently ignored (a `[memory.<policy>]` table
    of a policy the persona does not use) or missed later (a sprites folder not there)."""
    try:
        text = path.read_text(encoding="utf-8-sig")  # the BOM Windows Notepad may write
    except OSError as e:
        raise tomlfile.TomlError(str(path), "", None, f"cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise tomlfile.TomlError(str(path), "", None, "not UTF-8 text") from None
    persona = tomlfile.loads(text, Persona, str(path))
    persona.key = path.stem.lower()
    persona.path = path
    _check_unused(persona, text)
    return persona


def _check_unused(persona: Persona, text: str) -> None:
    def error(key: tuple[str | int, ...], message: str) -> tomlfile.TomlError:
        line = tomlfile.locate(text, key)
        return tomlfile.TomlError(str(persona.path), tomlfile.dotted(key), line, message)

    memory = tomllib.loads(text).get("memory", {})
    chosen = persona.memory.forgetting
    for policy in POLICIES:
        if policy != chosen and isinstance(memory.get(policy), dict):
            raise error(
                ("memory", policy),
                f"these settings are for the {policy!r} forgetting policy, but memory.forgetting "
                f"is {chosen!r}: set forgetting = {policy!r}, or remove this table",
            )
    folder = persona.sprite_dir
    if persona.emotions.sprites and folder is not None and not folder.is_dir():
        raise error(
            ("emotions", "sprites"),
            f"no folder {folder} (relative to the persona file): make it and put the sprites "
            "there (EMOTION.png, EMOTIONSPEAKING.png), or remove the key for assets/<persona>",
        )


class PersonaLibrary:
    """Persona files by name: shipped ones first, then each folder given, later ones winning."""

    def __init__(self, folders: Iterable[Path]) -> None:
        self._files: dict[str, Path] = {}
        for folder in folders:
            if folder.is_dir():
                for file in sorted(folder.glob("*.toml")):
                    self._files[file.stem.lower()] = file

    @classmethod
    def default(cls, cwd: Path, extra: Iterable[Path] = ()) -> PersonaLibrary:
        # Beside this package, installed or in a checkout: not `import personas`, which a
        # personas/ folder in the working directory shadows when run as `python -m`.
        shipped = Path(__file__).resolve().parents[2] / "personas"
        return cls([shipped, cwd / "personas", *extra])

    def names(self) -> list[str]:
        return sorted(self._files)

    def path(self, name: str) -> Path | None:
        return self._files.get(name.lower())

    def load(self, name: str) -> Persona:
        path = self.path(name)
        if path is None:
            known = ", ".join(self.names()) or "none"
            raise KeyError(f"no persona named {name!r} (known: {known})")
        return load_persona(path)


def persona_library(config: Config, cwd: Path) -> PersonaLibrary:
    """The personas the configuration can reach: shipped, ./personas, its persona_paths."""
    return PersonaLibrary.default(cwd, [config.resolve(p) for p in config.persona_paths])
