"""The built-in offline model: no network, deterministic, for watching the engine work.

It does not understand anything. It answers in the persona's name, shows what it has in mind
(earlier turns of the conversation it was given, and the long-term memories recall put in its
prompt) and what it would keep (the user's sentences about themselves), and says it is the offline
model, so nobody mistakes it for a real one. Asked to encode a conversation, it keeps exactly those
sentences as memories (and notes them in the diary and the user's profile), and what they said is
coming as intentions and special days, read as memory.encoding.intentions reads them without a
model; asked for a running summary, it strings the user's messages together; asked whether a persona
should join a group's conversation uninvited, it says no; asked to write first (bot.outreach), it
says why it writes. Shown a picture, it says what it can tell without understanding it: its shape,
size and main colours (bot.llm.sight). Sent a recording, it says it cannot hear it; asked to say a
reply aloud, it murmurs it (bot.llm.murmur)."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Sequence
from datetime import date, datetime, time

from bot.catalogue import say
from bot.chat_model import Completion, Message, Tool, Usage
from bot.llm.murmur import murmur
from bot.llm.sight import glance
from bot.llm.tokens import estimate_messages, estimate_tokens
from bot.prompts import (
    BRING_UP,
    FLASHBACK_HEADING,
    FLOOR_TASK,
    MAP_TASK,
    OUTREACH_TASK,
    OUTREACH_WHY,
    PASSAGES_HEADING,
    REDUCE_TASK,
    REMIND,
    STATE_TOOL,
    SUMMARY_TASK,
    WHOLE_TASK,
    parse_emotion_instruction,
)
from bot.prompts.pictures import DESCRIBE_TASK, SEEN_NOTE
from memory.encoding.encoder import ENCODING_TASK
from memory.encoding.intentions import MAX_INTENTIONS, MAX_SPECIAL, ask_for, taken

__all__ = ["OfflineChatModel"]

_NAME = re.compile(r"^You are (.+?)(?: \(|\.$)", re.MULTILINE)
_SENTENCES = re.compile(r"[^.!?。！？\n]+[.!?。！？]*")
_ABOUT_SELF = re.compile(r"\b(i|i'm|i've|i'll|my|me|mine|we|our)\b|我", re.IGNORECASE)
_SAD = re.compile(r"sad|cry|lonely|tired|miss|sorry|hurt|难过|伤心|哭|累|孤单|想你", re.IGNORECASE)
# A recalled memory's line in the system prompt (bot.prompts.recall writes them).
_MEMORY_LINE = re.compile(r"^- \[[^\]]*, strength [0-9.]+\] (.+)$", re.MULTILINE)
# A transcript line as memory.encoding.encoder writes it: '[HH:MM] U1: "text"' (the persona is
# "You").
_TRANSCRIPT_LINE = re.compile(r'^\[(\d\d:\d\d)\] (U\d+|You): (".*")$', re.MULTILINE)
# A quoted name, maybe numbered, then what was said, quoted: a group's line, a memory's.
_QUOTED_LINE = re.compile(r'^("(?:[^"\\]|\\.)*")(?: \(#\d+\))?: (".*")$')
# The conversation's day, as the encoder's request names it (its diary page's).
_DIARY_DAY = re.compile(r"^Your diary page for (\d{4}-\d\d-\d\d) so far:$", re.MULTILINE)
# Something due to bring up (bot.prompts.followup): the line, up to its quoted note.
_DUE = re.compile(
    "^(?:"
    + "|".join(re.escape(line.partition("{")[0]) for line in (BRING_UP, REMIND))
    + r')(".*")$',
    re.MULTILINE,
)
_HAPPY = re.compile(r"haha|lol|great|love|yay|happy|funny|哈哈|开心|喜欢|太好", re.IGNORECASE)

_EN = {
    "quote": '"{}"',
    "join": " ",
    "intro": "(offline model) {name} here.",
    "heard": "You said: {text}.",
    "recall": "In mind from this conversation: {items}.",
    "nothing_recalled": "This is the start of our conversation.",
    "memories": "From before, I remember: {items}.",
    "flashback": "A passing thought: {items}.",
    "bring_up": "Something I meant to bring up: {items}.",
    "keep": "I will remember: {items}.",
    "nothing_kept": "Nothing about you to remember in that yet.",
    "document": "I found the parts of the document about that ({words} words).",
    "outreach": "I am writing first. {why}",
}
_ZH = {
    "quote": "「{}」",
    "join": "",
    "intro": "（离线模型）我是{name}。",
    "heard": "你说：{text}。",
    "recall": "我记得这次聊天里的：{items}。",
    "nothing_recalled": "我们的聊天刚刚开始。",
    "memories": "我还记得以前的：{items}。",
    "flashback": "忽然想起：{items}。",
    "bring_up": "我本来就想跟你说：{items}。",
    "keep": "我会记住：{items}。",
    "nothing_kept": "这句话里还没有关于你的事要记。",
    "document": "我在文档里找到了相关的部分（{words}个词）。",
    "outreach": "我先来找你啦。{why}",
}


def _unquoted(text: str) -> str:
    """A quoted string of a prompt (memory.quoting.quote) as it was written; anything else
    as it is."""
    if not text.startswith('"'):
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, str) else text


def _plain(line: str) -> str:
    """'"Name": "text"' as "Name: text"; a quoted string as its text."""
    match = _QUOTED_LINE.match(line)
    if match:
        return f"{_unquoted(match.group(1))}: {_unquoted(match.group(2))}"
    return _unquoted(line)


def _quote(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _pick(emotions: list[str], *wanted: str) -> str:
    for name in wanted:
        if name in emotions:
            return name
    return emotions[0] if emotions else "NEUTRAL"


class OfflineChatModel:
    """A `ChatModel` that needs nothing but the prompt it is given."""

    def __init__(self, model: str = "offline") -> None:
        self._model = model

    @property
    def name(self) -> str:
        return f"offline:{self._model}"

    async def transcribe(self, name: str, audio: bytes) -> str:
        """No transcript, clearly marked as such: it cannot hear. Says how long the recording
        is in bytes, so the path can be tried end to end."""
        return f"(offline model: a recording of {max(len(audio) // 1024, 1)} KB, not transcribed)"

    async def speak(self, text: str, voice: str) -> bytes:
        """A murmur of `text`, one hummed note a word, as WAV: not speech, but a voice note
        all the same, so the path can be tried end to end."""
        return murmur(text, voice)

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Tool] = (),
        json_mode: bool = False,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Completion:
        system = messages[0].content if messages and messages[0].role == "system" else ""
        if ENCODING_TASK in system:
            # (in a thread: its veto encodes each message with a find, and its admit each with a
            # loose reading's candidate, milliseconds each)
            language = "zh" if "in Chinese." in system else "en"
            text = await asyncio.to_thread(_encode, messages[-1].content, language)
        elif system.startswith(SUMMARY_TASK):
            text = _summarise(messages[-1].content)
        elif system.startswith((WHOLE_TASK, MAP_TASK, REDUCE_TASK)):
            text = _outline(messages[-1].content)
        elif OUTREACH_TASK in system:
            text = _outreach(system)
        elif system.startswith(DESCRIBE_TASK):
            text = f"(offline model) {_glances(messages[-1])}."
        elif system.startswith(FLOOR_TASK):
            text = '{"answer": false}'  # it cannot tell what would be welcome: it keeps quiet
        elif any(t.name == STATE_TOOL for t in tools):
            text = "no change"  # it cannot tell what changed: it declines
        elif json_mode:
            text = "{}"
        else:
            text = self._reply(messages)
            shown = messages[-1] if messages else None
            if shown is not None and shown.images and SEEN_NOTE in shown.content:
                text = f"[saw: {_glances(shown)}] {text}"
        usage = Usage(estimate_messages(messages), estimate_tokens(text))
        return Completion(text=text, usage=usage, model=self._model)

    def _reply(self, messages: Sequence[Message]) -> str:
        # The system messages newest first: the card's words after the history, the newest
        # turn's note (bot.turn.compose: the memories recalled, the time, what is due), the notes
        # of the turns before it, the persona's system prompt.
        system = "\n\n".join(m.content for m in reversed(messages) if m.role == "system")
        name_match = _NAME.search(system)  # a card's own instructions may come first
        name = name_match.group(1) if name_match else "your companion"
        lang = _ZH if "Always reply in Chinese" in system else _EN
        emotions = parse_emotion_instruction(system) or ["NEUTRAL"]
        said = [_plain(m.content) for m in messages if m.role == "user"]
        current = said[-1] if said else ""

        if _SAD.search(current):
            emotion = _pick(emotions, "CONCERNED", "SAD", "NEUTRAL")
        elif _HAPPY.search(current):
            emotion = _pick(emotions, "LAUGHING", "HAPPY", "AMUSED", "NEUTRAL")
        else:
            emotion = _pick(emotions, "NEUTRAL")

        quote = lang["quote"].format
        parts = [lang["intro"].format(name=name), lang["heard"].format(text=quote(_quote(current)))]
        earlier = [quote(_quote(s, 40)) for s in said[:-1][-3:]]
        if earlier:
            parts.append(lang["recall"].format(items="; ".join(earlier)))
        else:
            parts.append(lang["nothing_recalled"])
        # Recalled memories, then a flashback (which follows its own heading).
        recalled, _, passing = system.partition(FLASHBACK_HEADING)
        memories = [quote(_quote(_plain(m), 60)) for m in _MEMORY_LINE.findall(recalled)[:3]]
        if memories:
            parts.append(lang["memories"].format(items="; ".join(memories)))
        thoughts = [quote(_quote(_plain(m), 60)) for m in _MEMORY_LINE.findall(passing)[:2]]
        if thoughts:
            parts.append(lang["flashback"].format(items="; ".join(thoughts)))
        due = _DUE.search(system)  # (bot.prompts.followup's line, its note quoted last)
        if due is not None:
            parts.append(lang["bring_up"].format(items=quote(_quote(_unquoted(due.group(1))))))
        _, _, passages = system.partition(PASSAGES_HEADING)
        if passages.strip():  # said without quoting: answers are kept, the document is not
            parts.append(lang["document"].format(words=len(passages.split())))
        kept = _about_self(current)
        if kept:
            parts.append(lang["keep"].format(items="; ".join(quote(_quote(k)) for k in kept)))
        else:
            parts.append(lang["nothing_kept"])
        return f"[{emotion}] " + lang["join"].join(parts)


def _outreach(system: str) -> str:
    """A message written first: who writes, and the prompt's reason, as it was given."""
    name_match = _NAME.search(system)
    name = name_match.group(1) if name_match else "your companion"
    lang = _ZH if "Always reply in Chinese" in system else _EN
    emotion = _pick(parse_emotion_instruction(system) or ["NEUTRAL"], "HAPPY", "NEUTRAL")
    why = next(
        (line for line in system.splitlines() if line.startswith(OUTREACH_WHY)), OUTREACH_WHY
    )
    parts = [lang["intro"].format(name=name), lang["outreach"].format(why=why)]
    return f"[{emotion}] " + lang["join"].join(parts)


def _glances(message: Message) -> str:
    """What it can tell of the pictures shown with `message`."""
    return "; ".join(glance(image) for image in message.images)


def _outline(text: str) -> str:
    """A document "summary" it can make without understanding it: its length and its most
    frequent longer words (never its sentences: a summary is not a copy)."""
    words = re.findall(r"[^\W\d_]{5,}|[\u4e00-\u9fff]{2,4}", text.lower())
    common = [w for w, _ in Counter(words).most_common(8)]
    return (
        f"(offline model: an outline, not a summary) About {len(text.split())} words in "
        f"{text.count(chr(10) * 2) + 1} parts; frequent words: {', '.join(common) or 'none'}."
    )


def _about_self(text: str) -> list[str]:
    """The sentences in which the user says something about themselves."""
    return [
        s.strip()
        for s in _SENTENCES.findall(text)
        if _ABOUT_SELF.search(s) and not s.strip().endswith(("?", "？"))
    ]


def _section(text: str, heading: str, end: str) -> str:
    start = text.find(heading)
    if start < 0:
        return ""
    start += len(heading)
    stop = text.find(end, start)
    return text[start : stop if stop >= 0 else len(text)].strip()


def _encode(request: str, language: str) -> str:
    """An encoding (memory.encoding.encoder's JSON) of the transcript in `request`: each sentence a
    user said about themselves becomes a memory and a line of their profile; what they said
    is coming, an intention (memory.encoding.intentions.taken: what the rules find, less what
    the learned veto drops, or the loose reading's candidate it admits; the encoder resolves
    its words)."""
    transcript = [
        (at, label, _unquoted(text))
        for at, label, text in _TRANSCRIPT_LINE.findall(
            _section(request, "The conversation:\n", "\x00")
        )
    ]
    said = [(at, label, text) for at, label, text in transcript if label != "You"]
    # Who each label is: the last name they went by ('U2 "Alice", then "Mallory"').
    people = _section(request, "the names they went by):\n", "\n\n")
    names = {
        label: _unquoted(listed.rpartition(", then ")[2])
        for label, _, listed in (line.partition(" ") for line in people.splitlines())
    }
    diary = _unquoted(_section(request, "so far:\n", "\n\nWhat you knew of them:"))
    known = _section(request, "What you knew of them:\n", "\n\nThe conversation:")
    profiles: dict[str, str] = {}
    for line in known.splitlines():
        label, _, text = line.partition(": ")
        if text:
            profiles[label] = _unquoted(text)
    memories: list[dict[str, object]] = []
    for _, label, text in said:
        for sentence in _about_self(text):
            memories.append(
                {
                    "text": say(
                        language,
                        "offline_told_me",
                        name=names.get(label) or say(language, "offline_someone"),
                        sentence=sentence,
                    ),
                    "category": "personal_daily",
                    "importance": 2,
                    "emotion": 0,
                    "speaker": label,
                }
            )
            if sentence not in profiles.get(label, ""):
                profiles[label] = f"{profiles.get(label, '')} {sentence}".strip()[-1400:]
    intentions: list[dict[str, str]] = []
    special_days: list[dict[str, str]] = []
    named = _DIARY_DAY.search(request)
    day = date.fromisoformat(named.group(1)) if named is not None else None
    for at, label, text in said:
        if day is None:
            break
        # The transcript's times are of the conversation's day (past midnight: the day after,
        # which the offline model does not try to tell).
        for found in taken(text, datetime.combine(day, _time(at))):
            item = {"user": label, "said_by": label, "what": found.what}
            if found.kind == "special_day":
                special_days.append({**item, "date": found.when})
            else:
                ask = ask_for(found.kind, found.what, language)
                intentions.append({**item, "kind": found.kind, "ask": ask, "when": found.when})
    line = ""
    if said:
        first = names.get(said[0][1]) or say(language, "offline_someone")
        quoted = _quote(said[0][2], 80)
        line = say(language, "offline_talked_with", at=said[0][0], name=first, quote=quoted)
    answer = {
        "memories": memories[:5],
        "diary": f"{'' if diary == '(empty)' else diary}\n{line}".strip(),
        "profiles": profiles,
        "recap": _quote(transcript[-1][2], 120) if transcript else "",
        "intentions": intentions[:MAX_INTENTIONS],
        "special_days": special_days[:MAX_SPECIAL],
    }
    return json.dumps(answer, ensure_ascii=False)


def _time(hh_mm: str) -> time:
    hours, minutes = hh_mm.split(":")
    return time(int(hours), int(minutes))


def _summarise(request: str) -> str:
    before = _unquoted(_section(request, "Summary so far:\n", "\n\nMessages to add:"))
    before = "" if before == "(none yet)" else before
    added = _section(request, "Messages to add:\n", "\x00")
    lines = [_quote(_plain(line), 80) for line in added.splitlines() if line.strip()]
    return f"{before} {' / '.join(lines)}".strip()[-3000:]
