"""How memories come to mind during a turn, and how they are shown to the chat model.

Five ways, as people remember:
- subconscious: every turn, the message (or, when long, a key phrase taken from it locally,
  with no model call) is the cue;
- by date: the days a message names ("yesterday", "last weekend", 上个月初, "May 4th": of the
  most recent year with a diary page; "last summer", 去年, "recently", "since May") bring
  their diary pages and the memories made on them, newest first, those begun only (a
  message about next Tuesday brings nothing by date; memory/dates.py parses them locally);
- keyword (deep) recall: a question about the past that brings nothing to mind is split by
  the intent tier into a few sub-questions; each brings its best memories and the memories
  linked to them; the best DEEP_KEEP are kept (one extra model call, only then);
- flashback: now and then (the persona's flashback_rate) the most and the least related memory
  pass through the persona's mind;
- conscious: the chat model may call `recall_memory(query)` itself.

By person, in a scope shared by several members (a channel-scoped persona's): a message that
names a member ("what did Ana say about the trip?", by any name their profile knows: memory.people)
or speaks of the asker ("what did I tell you about my cat?", 我的) recalls with the names that
member goes by added to the cue (the asker's only in a question: "I" is in most messages), from
a deeper pool, and tilts up the memories of their words or naming them (`by_person`), with no
model call. A profile stays its person's: another member's never enters the prompt (the
channel's memories are everyone's there; what the persona knows of one member is not).

Each memory is shown under the name its speaker goes by now, found by their stable id
(`under_names`), never the name they had when it was said, which is one of their aliases.

Memories enter the system prompt with their age and strength, inside a token budget, with the
instruction to use them as a friend would: implicitly, never talking about a memory system.
What they say, and the profile and diary, are quoted (memory.quoting): a memory holding a
newline and "What you know of ..." stays one quoted line, it opens no section.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, tzinfo

from bot.chat_model import ModelError
from bot.config import MemoryConfig
from bot.llm.router import ModelRouter
from bot.llm.tokens import estimate_tokens
from bot.prompts import (
    DIARY_HEADING,
    FLASHBACK_HEADING,
    MEMORY_HEADING,
    NOTHING_FOUND,
    PROFILE_HEADING,
    RECALL_NEEDS_QUERY,
    memory_line,
    sub_question_messages,
)
from memory.bank import MemoryBank
from memory.encoding.diary import Diary, NamedDays, pages_of
from memory.people import Named, mentions, named_members, speaks_of_self
from memory.quoting import flat, quote
from memory.recall.ranking import Recalled
from memory.records import DiaryEntry, Member, Profile
from memory.scopes import Scope
from memory.text import key_phrase

__all__ = [
    "DIARY_PAGE_TOKENS",
    "Recollection",
    "Recollector",
    "about_the_past",
    "by_person",
    "meant",
    "memory_section",
    "memory_text",
    "under_names",
    "with_present",
]

log = logging.getLogger(__name__)

DEEP_QUESTIONS = 3  # sub-questions asked of memory for one question about the past
DEEP_K = 3  # memories per sub-question
DEEP_KEEP = 6
LINK_WEIGHT = 0.8  # of its link's score, for a memory brought along by a link
TOOL_K = 5
PERSON_POOL = 3  # times k: the memories recalled for a message about someone, before the tilt
PERSON_BOOST = 0.3  # of a memory of the person asked about (scores run about 0..1.5)
DIARY_PAGE_TOKENS = 100  # the least of a diary page worth showing

# A question about the past: these words in a message that asks something.
_PAST_EN = re.compile(
    r"\b(remember|recall|forgot|forget|last (time|week|weekend|month|year|night|summer|winter)|"
    r"yesterday|ago|earlier|the other day|used to|back (when|then)|told you|mentioned|said)\b",
    re.IGNORECASE,
)
_PAST_ZH = re.compile(
    r"记得|还记|忘了|上次|上回|以前|之前|昨天|前天|那天|当时|说过|提过|去年|上周|上个月"
    r"|前几天|前两天|前些|前阵子|前段时间|几天前"
)
_QUESTION = re.compile(
    r"[?？]|\b(do|did|does|what|when|where|who|which|how|why)\b|吗|呢|什么|哪|谁|怎么|多少", re.I
)


def about_the_past(text: str) -> bool:
    """Whether a message asks about something from before (a cheap local test that decides
    whether deep recall's model call is worth making)."""
    return bool((_PAST_EN.search(text) or _PAST_ZH.search(text)) and _QUESTION.search(text))


def with_present(members: Sequence[Member], present: Mapping[str, str]) -> list[Member]:
    """The scope's members with the conversation's speakers: each by the name they speak
    under now (a newcomer too), the name their profile has, if another, among their
    aliases."""
    known = {m.user_id: m for m in members}
    for user_id, name in present.items():
        member = known.get(user_id)
        if not name:  # (no name to go by: the profile's stands)
            continue
        if member is None:
            known[user_id] = Member(user_id, name)
        elif name != member.name:
            aliases = tuple(a for a in (member.name, *member.aliases) if a != name)
            known[user_id] = Member(user_id, name, aliases)
    return list(known.values())


def under_names(
    memories: Sequence[Recalled], members: Sequence[Member]
) -> tuple[list[Recalled], list[Member]]:
    """`memories` each shown under its speaker's name now, by their stable id (the members'
    names, or the name of their newest memory at hand), never the name they had when it was
    said; and `members` with those speakers' earlier names among their aliases."""
    known = {m.user_id: m for m in members}
    newest: dict[str, Recalled] = {}
    for memory in memories:
        if memory.speaker_id and memory.speaker and memory.speaker_id not in known:
            held = newest.get(memory.speaker_id)
            if held is None or memory.when > held.when:
                newest[memory.speaker_id] = memory
    for user_id, memory in newest.items():
        known[user_id] = Member(user_id, memory.speaker or "")
    shown: list[Recalled] = []
    for memory in memories:
        member = known.get(memory.speaker_id or "")
        said = memory.speaker
        if member is None or not member.name or not said or said == member.name:
            shown.append(memory)
            continue
        if said not in member.aliases:
            member = Member(member.user_id, member.name, (*member.aliases, said))
            known[member.user_id] = member
        shown.append(replace(memory, speaker=member.name))
    return shown, list(known.values())


def meant(text: str, members: Sequence[Named], asker: str) -> list[str]:
    """The member ids a message asks about, in a scope the persona shares with several people:
    those it names (by any name their profiles know; memory.people), and the asker when it says
    "I", "my", 我 (beside a name, only "my", 我的: "tell me what Ana said" is about Ana). None
    in a scope of one person: there, every memory is about them already."""
    if len(members) < 2:
        return []
    about = named_members(text, members, asker)
    if asker and asker not in about and speaks_of_self(text, owning=bool(about)):
        about.append(asker)
    return about


def by_person(
    memories: Sequence[Recalled], ids: Collection[str], people: Sequence[Named] = ()
) -> list[Recalled]:
    """`memories` re-ranked for a message about the members `ids`: a memory of their words
    (its speaker id) or naming them (by any name `people`, their profiles, know) gains
    PERSON_BOOST. A boost, not a filter: what else matches the message still comes if
    nothing of theirs does."""
    if not ids:
        return list(memories)
    names = [n for p in people if p.user_id in ids for n in (p.name, *p.aliases)]

    def score(memory: Recalled) -> float:
        if memory.speaker_id in ids or mentions(memory.text, names):
            return memory.score + PERSON_BOOST
        return memory.score

    return sorted(memories, key=lambda m: (-score(m), m.id))


def memory_text(memory: Recalled) -> str:
    """A memory as the persona holds it: what someone said, prefixed with who said it (a
    memory the persona wrote itself, from a conversation, has no speaker: it says who)."""
    return f"{memory.speaker}: {memory.text}" if memory.speaker else memory.text


def memory_section(
    recollection: Recollection, now: datetime, budget: int, *, user_name: str = ""
) -> tuple[str, list[int]]:
    """The prompt's memory text within `budget` tokens, and the ids of the memories it holds
    (to be reinforced when the reply is made). In order: what the persona knows of the user,
    the diary of the days the message mentions (at most half the budget, in the order the
    recollection has them), the memories of those days, the memories that came to mind (best
    first), and a flashback."""
    parts: list[str] = []
    used = 0
    profile = recollection.profile
    if profile is not None and profile.text:
        name = quote(flat(user_name or profile.name))
        text = _quoted_within(PROFILE_HEADING.format(name=name), profile.text, budget // 3)
        if text:
            parts.append(text)
            used += estimate_tokens(text)
    # The diary's space is shared by its pages in order, what a short page leaves going to the
    # next; pages that would get less than DIARY_PAGE_TOKENS are left out.
    space = min(budget // 2, budget - used)
    for i, entry in enumerate(recollection.diary):
        share = min(space, max(space // (len(recollection.diary) - i), DIARY_PAGE_TOKENS))
        if share < DIARY_PAGE_TOKENS:
            break
        heading = DIARY_HEADING.format(day=f"{entry.day:%A %Y-%m-%d}")
        text = _quoted_within(heading, entry.text, share)
        if text:
            parts.append(text)
            cost = estimate_tokens(text)
            used += cost
            space -= cost
    shown: list[int] = []
    groups = (
        (MEMORY_HEADING, [*recollection.dated, *recollection.memories]),
        (FLASHBACK_HEADING, recollection.flashback),
    )
    for heading, group in groups:
        lines: list[str] = []
        cost = estimate_tokens(heading)
        for memory in group:
            if memory.id in shown:
                continue
            line = memory_line(memory, now)
            tokens = estimate_tokens(line)
            if used + cost + tokens > budget:
                break
            lines.append(line)
            shown.append(memory.id)
            cost += tokens
        if lines:
            parts.append("\n".join([heading, *lines]))
            used += cost
    return "\n\n".join(parts), shown


def _quoted_within(heading: str, text: str, tokens: int) -> str:
    """`heading`, then `text` quoted, within about `tokens` ("" if hardly anything fits): the
    text is cut before it is quoted, so the quote is whole."""
    space = tokens - estimate_tokens(heading) - 2
    body = _within(text, space)
    while body and estimate_tokens(quote(body)) > space:  # escapes take a little more
        body = _within(body, estimate_tokens(body) * 9 // 10)
    return f"{heading}\n{quote(body)}" if body else ""


def _within(text: str, tokens: int) -> str:
    """`text` cut (at a line end where it can) to about `tokens`; "" if hardly anything fits."""
    if estimate_tokens(text) <= tokens:
        return text
    if tokens < 20:
        return ""
    keep = len(text)
    while keep > 0 and estimate_tokens(text[:keep]) > tokens - 2:
        keep = keep * 4 // 5
    cut = text[:keep]
    line_end = cut.rfind("\n")
    return (cut[:line_end] if line_end > keep // 2 else cut) + " …"


@dataclass(slots=True)
class Recollection:
    memories: list[Recalled] = field(default_factory=list)
    flashback: list[Recalled] = field(default_factory=list)
    # The days the message mentions: in the order mentioned, a span's newest first.
    diary: list[DiaryEntry] = field(default_factory=list)
    profile: Profile | None = None  # what the persona knows of the user
    # Memories of the days the message names: in the order named, a span's newest first.
    dated: list[Recalled] = field(default_factory=list)
    # The other names each member of the scope is known by (user id -> aliases).
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)


class Recollector:
    """The engine's link to the memory bank."""

    def __init__(
        self,
        bank: MemoryBank,
        models: ModelRouter,
        settings: MemoryConfig,
        rng: random.Random,
    ) -> None:
        self.bank = bank
        self.diary = Diary(bank.store)
        self.models = models
        self.settings = settings
        self._rng = rng

    async def profile(self, scope: str, user_id: str) -> Profile | None:
        """What the persona knows of a user of the scope, if encoding wrote anything."""
        found = await self.bank.store.profiles(scope, [user_id])
        return found[0] if found else None

    @staticmethod
    def scope(persona: str, session_scope: str) -> str:
        """The bank's scope: a persona's memories of one user (or channel) on one platform."""
        return str(Scope(persona, session_scope))

    async def gather(
        self,
        scope: str,
        text: str,
        now: datetime,
        *,
        flashback_rate: float,
        user_id: str = "",
        tz: tzinfo | None = None,
        also: str | None = None,
        deep: bool | None = None,
        present: Mapping[str, str] | None = None,
    ) -> Recollection:
        """What comes to mind for a message: the user's profile, the diary of any day it
        mentions, memories by subconscious or deep recall, and the odd flashback. `also`: a
        second scope recalled from by cue (the user's private one, when they allow it).
        `deep`: whether to recall by keyword too (the intent model's call); None decides
        here, for a question about the past that brought nothing to mind. `present`: the
        conversation's speakers by id with their names now, known before any encoding has
        written their profiles."""
        k = self.settings.recall_k
        # The days the message names (their diary pages, their memories) are read beside the
        # recall by cue: neither waits for the other's trips.
        days = asyncio.ensure_future(self._days(scope, text, now, tz, k))
        try:
            # The names of the scope's members tell whom the message speaks of; the asker's
            # own profile is read (another member's stays theirs).
            store = self.bank.store
            stored, known = await store.members_and_profile(scope, user_id)
            members = with_present(stored, present or {})
            about = meant(text, members, user_id)
            known = known if user_id else None
            # Off the loop unless plain ASCII: jieba's tagger is slow on Chinese, and a long
            # message would hold every conversation up (benchmarks/README.md,
            # fts_tokenizers.py).
            if text.isascii():
                cue = key_phrase(text)
            else:
                cue = await asyncio.to_thread(key_phrase, text)
            # Asked about someone: the names they go by join the cue (memories name whom they
            # are about), and their memories are tilted up within a deeper pool. The asker's
            # own names join only a question ("what is my cat called?"): "I" is in most
            # messages, and their names in the cue would bring their every memory.
            people = [p for p in members if p.user_id in about]
            asks = _QUESTION.search(text) is not None
            names = [
                n for p in people if asks or p.user_id != user_id for n in (p.name, *p.aliases)
            ]
            if names:
                cue = " ".join([cue, *names])
            pool = k * PERSON_POOL if about else k
            memories = await self.bank.recall(scope, cue, k=pool, now=now)
            if also is not None:  # the user's private memories, by their choice
                private = await self.bank.recall(also, cue, k=pool, now=now)
                memories = sorted([*memories, *private], key=lambda m: (-m.score, m.id))
            memories = by_person(memories, about, people)[:k]
            named, dated = await days
        finally:
            days.cancel()  # (done by now, unless the recall failed)
        diary = pages_of(named)
        # A question about the past that brings nothing to mind is worth trying harder, with
        # one intent-tier call; not one the days it names answer, nor when something came
        # already.
        if deep is None:
            deep = not memories and not diary and not dated and about_the_past(text)
        if deep and not diary and not dated and await self.bank.count(scope):
            found = {m.id: m for m in memories} | {
                m.id: m for m in await self.deep(scope, text, now)
            }
            memories = sorted(found.values(), key=lambda m: (-m.score, m.id))[:DEEP_KEEP]
        flashback: list[Recalled] = []
        if flashback_rate > 0 and self._rng.random() < flashback_rate:
            exclude = {m.id for m in memories} | {m.id for m in dated}
            flashback = await self.flashback(scope, text, now, exclude=exclude)
        # Each under its speaker's name now: a line says who said it, not who they were then.
        every, members = under_names([*memories, *dated, *flashback], members)
        memories, rest = every[: len(memories)], every[len(memories) :]
        dated, flashback = rest[: len(dated)], rest[len(dated) :]
        return Recollection(
            memories,
            flashback,
            diary,
            known,
            dated,
            {p.user_id: p.aliases for p in members if p.aliases},
        )

    async def named(
        self, scope: str, memories: Sequence[Recalled], present: Mapping[str, str]
    ) -> list[Recalled]:
        """`memories` of `scope` each under its speaker's name now (`under_names`), by the
        scope's profiles and `present`, the conversation's speakers by id with their names
        now."""
        members = with_present(await self.bank.store.members(scope), present)
        return under_names(memories, members)[0]

    async def _days(
        self, scope: str, text: str, now: datetime, tz: tzinfo | None, k: int
    ) -> tuple[list[NamedDays], list[Recalled]]:
        """The days `text` names, with their diary pages, and their memories (`_dated`)."""
        named = await self.diary.named(scope, text, now, tz)
        return named, await self._dated(scope, named, now, tz, k)

    async def _dated(
        self, scope: str, named: list[NamedDays], now: datetime, tz: tzinfo | None, k: int
    ) -> list[Recalled]:
        """The memories of the days a message names: in the order named, a span's newest
        first, at most k."""
        out: dict[int, Recalled] = {}
        for days in named:
            if len(out) >= k:
                break
            left = k - len(out)
            for memory in await self.bank.dated(scope, days.first, days.last, tz, k=left, now=now):
                out.setdefault(memory.id, memory)
        return list(out.values())

    async def deep(self, scope: str, text: str, now: datetime) -> list[Recalled]:
        """Keyword recall: sub-questions from the intent tier, k hits each, widened by each
        hit's related memories, best DEEP_KEEP kept. [] if the model cannot help."""
        questions = await self._sub_questions(text)
        if not questions:
            return []
        found: dict[int, Recalled] = {}
        for question in questions:
            for hit in await self.bank.recall(scope, question, k=DEEP_K, now=now):
                if hit.id not in found or hit.score > found[hit.id].score:
                    found[hit.id] = hit
        link_score: dict[int, float] = {}
        for hit in found.values():
            for linked in hit.related:
                if linked not in found:
                    link_score[linked] = max(link_score.get(linked, 0.0), hit.score * LINK_WEIGHT)
        for memory in await self.bank.get(scope, sorted(link_score), now=now):
            # A linked memory comes along a little behind the memory that brought it.
            score = link_score[memory.id]
            found[memory.id] = replace(memory, score=score, relevance=score)
        ranked = sorted(found.values(), key=lambda r: (-r.score, r.id))
        return ranked[:DEEP_KEEP]

    async def _sub_questions(self, text: str) -> list[str]:
        messages = sub_question_messages(text, DEEP_QUESTIONS)
        try:
            completion = await self.models.complete(
                "intent", messages, json_mode=True, purpose="intent"
            )
            value = json.loads(completion.text)
        except (ModelError, ValueError) as e:
            log.info("deep recall skipped, the intent model gave nothing usable: %s", e)
            return []
        queries = value.get("queries") if isinstance(value, dict) else None
        if not isinstance(queries, list):
            return []
        return [q.strip()[:200] for q in queries if isinstance(q, str) and q.strip()][
            :DEEP_QUESTIONS
        ]

    async def flashback(
        self, scope: str, text: str, now: datetime, *, exclude: set[int]
    ) -> list[Recalled]:
        """The most and the least related memory to the message."""
        return [m for m in await self.bank.flashback(scope, text, now=now) if m.id not in exclude]

    async def reinforce(self, scope: str, ids: list[int], now: datetime) -> None:
        """The memories `ids` of `scope` came to mind and were shown: each is recalled once
        more, as its forgetting policy counts a recall."""
        await self.bank.reinforce(scope, ids, now)

    async def tool(self, scope: str, arguments: str, now: datetime) -> tuple[str, list[int]]:
        """Run a `recall_memory` call: the text handed back to the model, and the ids shown."""
        try:
            query = json.loads(arguments).get("query", "")
        except (ValueError, AttributeError):
            query = ""
        if not isinstance(query, str) or not query.strip():
            return RECALL_NEEDS_QUERY, []
        hits = await self.bank.recall(scope, query, k=TOOL_K, now=now)
        if not hits:
            return NOTHING_FOUND, []
        hits = await self.named(scope, hits, {})
        return "\n".join(memory_line(h, now) for h in hits), [h.id for h in hits]
