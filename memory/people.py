"""The people of a scope by the names they are known by: the nicknames a speaker asks for, the
aliases a profile keeps, and which members a cue speaks of.

A name is never who someone is (two members may share one, and a name changes): it only leads
to the member ids whose profiles know it, in this scope. Everything here is local and cheap
(no model call): it runs on every turn's cue.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Protocol

from memory.quoting import flat

__all__ = [
    "MAX_ALIASES",
    "NICKNAME_CHARS",
    "Named",
    "aliases_of",
    "mentions",
    "named_members",
    "nicknames",
    "speaks_of_self",
]

MAX_ALIASES = 8  # names a profile keeps besides the current one
NICKNAME_CHARS = 24

# "call me Nana", "you can call me Nana", "I go by Nana", "my nickname is Nana": the name
# capitalised, so "call me later" names no one; "don't call me X" is no wish to be called X.
_ASKED_EN = re.compile(
    r"(?<![\w'])(?i:(?<!don't )(?<!do not )(?<!never )call me|i go by|my nickname is"
    r"|everyone calls me|my name is)\s+"
    r"((?:[A-Z][\w'-]*|[\u4e00-\u9fff]{1,4})(?: [A-Z][\w'-]*)?)"
)
# 叫我娜娜 / 就叫我娜娜吧 / 你可以叫我娜娜 / 我的昵称是娜娜; not 别叫我 / 不要叫我, not 叫我什么.
_ASKED_ZH = re.compile(
    r"(?<![别不要许])(?:叫我|喊我|我叫|我的名字是|我的昵称是|我的外号是)\s*"
    r"([\u4e00-\u9fffA-Za-z0-9]{1,6}?)(?=吧|就好|就行|好了|啦|呀|哦|呢|[，。！？,.!?~\uff5e\s]|$)"
)
_NOT_A_NAME = re.compile(
    r"^(?:[了过着他她你它]|什么|啥|怎么|谁|哪|一声|一下|过来|起来|出去|回家|吃饭|干嘛)"
)

# The asker, in a cue: "I", "my", "me", 我, 我的 (not 我们, "we": that is more than the asker).
_SELF_EN = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself)\b", re.IGNORECASE)
_SELF_ZH = re.compile(r"我(?!们)")
_MINE_EN = re.compile(r"\b(?:my|mine|myself)\b", re.IGNORECASE)
_MINE_ZH = re.compile(r"我(?:的|家|自己)")
_WORD = re.compile(r"\w+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
# Names too like ordinary words to lead anywhere when a cue holds them.
_TOO_COMMON = frozenset({"i", "me", "my", "you", "we", "he", "she", "it", "they", "a", "an"})


class Named(Protocol):
    """A member by their names (memory.records' Member and Profile both are)."""

    @property
    def user_id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def aliases(self) -> tuple[str, ...]: ...


def nicknames(text: str) -> list[str]:
    """The names the speaker of `text` asks to be called ("call me Nana", "叫我娜娜"), in order."""
    found: list[str] = []
    for match in (*_ASKED_EN.finditer(text), *_ASKED_ZH.finditer(text)):
        name = flat(match.group(1), NICKNAME_CHARS)
        if name and not _NOT_A_NAME.match(name) and name not in found:
            found.append(name)
    return found


def aliases_of(current: str, names: Iterable[str]) -> tuple[str, ...]:
    """`names` (oldest first) as a profile keeps them: most recent first, each once (ignoring
    case), the `current` name left out, at most MAX_ALIASES."""
    seen = {current.casefold()}
    out: list[str] = []
    for name in reversed(list(names)):
        shown = flat(name)
        if shown and shown.casefold() not in seen:
            seen.add(shown.casefold())
            out.append(shown)
    return tuple(out[:MAX_ALIASES])


def speaks_of_self(cue: str, *, owning: bool = False) -> bool:
    """Whether a cue speaks of the asker ("what did I tell you about my cat?", 我的猫).
    `owning`: only of what is theirs ("my", "mine", 我的): beside another's name, "tell me
    what Ana said" and 娜娜跟我说了什么 ask about Ana, not the asker."""
    if owning:
        return bool(_MINE_EN.search(cue) or _MINE_ZH.search(cue))
    return bool(_SELF_EN.search(cue) or _SELF_ZH.search(cue))


def mentions(text: str, names: Iterable[str]) -> bool:
    """Whether one of `names` stands in `text` as a name: whole words for a spaced script,
    the characters for Chinese, Japanese or Korean (two at least: one is a word, not a name)."""
    prepared = _Text(text)
    return any(_mentions(prepared, name) for name in names)


class _Text:
    """A text prepared once for many names: folded, and its words spaced ("ana s trip")."""

    __slots__ = ("folded", "spaced")

    def __init__(self, text: str) -> None:
        self.folded = text.casefold()
        self.spaced = _spaced(self.folded)


def _spaced(folded: str) -> str:
    return f" {' '.join(_WORD.findall(folded))} "


def _mentions(text: _Text, name: str) -> bool:
    # A substring test, not a regular expression per name: a busy channel's members have
    # hundreds of names, and this runs on every turn.
    key = name.casefold()
    if not key or key in _TOO_COMMON:
        return False
    if _CJK.search(key):
        return len(key) >= 2 and key in text.folded
    words = _spaced(key)
    return len(words.strip()) > 1 and words in text.spaced  # one letter is no name


def named_members(cue: str, members: Sequence[Named], asker: str = "") -> list[str]:
    """The member ids a cue names, by the names their profiles know (the current one before
    aliases). When several members go by a name the cue uses, the asker is meant if among
    them; else all of them, most recently seen first (`members` are newest first)."""
    text = _Text(cue)
    chosen: list[str] = []
    for use_aliases in (False, True):
        by_name: dict[str, list[str]] = {}
        for member in members:
            names = member.aliases if use_aliases else (member.name,)
            for name in names:
                if _mentions(text, name):
                    by_name.setdefault(name.casefold(), []).append(member.user_id)
        for ids in by_name.values():
            picked = [asker] if asker in ids else ids
            chosen.extend(i for i in picked if i not in chosen)
        if chosen:
            break
    return chosen
