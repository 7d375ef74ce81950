"""What becomes of a conversation after it closes: it is encoded into long-term memory (with the
day's diary page and what the persona knows of each user), and each day every scope's memories
are pruned by its persona's forgetting policy, which never keeps another persona's words
(`hearsay`). The scheduler drives both.

Encoding reads the archive, not the sessions: a conversation closed before a crash, or whose
encoding failed (the model was out), is still waiting there and is encoded on a later round,
exactly once (memory.encoding.encoder).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, tzinfo
from typing import Protocol

from bot.chat_model import Message, Role
from bot.conversation.recollect import Recollector
from bot.groups.relay import is_persona_speaker
from bot.llm.router import ModelRouter
from bot.persona.file import Persona
from memory.bank import MemoryBank
from memory.clock import Clock
from memory.encoding.encoder import Author, Encoded, Encoder, EncodingFailed
from memory.forgetting import ForgettingPolicy, make_policy
from memory.forgetting.registry import DEFAULT_POLICY
from memory.records import ArchivedConversation, Memory
from memory.scopes import NotAScope, Scope
from memory.storage import ArchiveStore, Coordination, JournalStore

__all__ = [
    "PRUNE_BATCH",
    "PRUNE_ROUNDS",
    "Lifecycle",
    "LifecycleStore",
    "PruneReport",
    "hearsay",
    "persona_of",
    "prune_pace",
    "scope_policies",
]

log = logging.getLogger(__name__)

RETRY_FIRST = timedelta(minutes=1)  # after a failed encoding; doubled each time
RETRY_MAX = timedelta(hours=1)
ENCODE_BATCH = 20  # conversations encoded per scheduler round
# Scopes pruned per scheduler round: the day's prune is spread over the rounds, not run in one
# go beside the turns, which it would hold up (benchmarks/README.md, engine_load.py's
# --prune-in-run). More a round when the day's scopes would take more than PRUNE_ROUNDS rounds
# (six hours of the scheduler's 5-second rounds): 200,000 scopes at 10 a round would take 28
# hours, and the day's prune would never end.
PRUNE_BATCH = 10
PRUNE_ROUNDS = 4_320
# How long the prune's records, the outreach ledger's settled entries and encoded conversations
# (all but each scope's newest: its memories, diary and profiles are what the bot keeps) are kept
# (the gates read a week of the ledger; a refusal is kept on the contact).
HISTORY = timedelta(days=90)


def prune_pace(scopes: int, rounds: int = PRUNE_ROUNDS) -> int:
    """Scopes pruned a round, when the day's prune has `scopes` to prune."""
    return max(PRUNE_BATCH, -(-scopes // rounds))


def persona_of(scope: str) -> str:
    """The persona whose memory a bank scope is ("" for a string that is no scope)."""
    try:
        return Scope.parse(scope).persona
    except NotAScope:
        return ""


def hearsay(scope: str) -> Callable[[Memory], bool]:
    """Which of a scope's memories are another persona's words (bot.groups.relay), which no persona
    keeps: encoding never sees them (bot.conversation.sessions.Turn.hearsay), but a database written
    before may hold them, and the daily prune forgets them. In a persona's conversation with another
    persona, every memory is."""
    place = Scope.parse(scope).place
    if is_persona_speaker(place.rpartition(":user:")[2]):
        return lambda memory: True
    return lambda memory: is_persona_speaker(memory.speaker_id or "")


def _role(role: str) -> Role:
    return "system" if role == "system" else "assistant" if role == "assistant" else "user"


def scope_policies(personas: Mapping[str, Persona]) -> Callable[[str], ForgettingPolicy]:
    """The bank's forgetting policy of each scope: its persona's choice, with its parameters."""
    policies = {key: p.memory.policy() for key, p in personas.items()}
    default = make_policy(DEFAULT_POLICY)

    def policy(scope: str) -> ForgettingPolicy:
        return policies.get(persona_of(scope), default)

    return policy


class LifecycleStore(ArchiveStore, JournalStore, Coordination, Protocol):
    """What the lifecycle reads and marks: closed conversations to encode, the scopes to
    prune and when each was pruned last, and the locks it takes for either; the histories
    its daily upkeep bounds."""

    async def scopes(self) -> list[str]: ...

    async def trim_outreach(self, before: datetime) -> int: ...

    async def trim_intentions(self, before: datetime) -> int: ...


@dataclass(slots=True, frozen=True)
class PruneReport:
    scope: str
    day: date
    kept: int
    forgotten: list[tuple[int, str]]  # (memory id, reason)


@dataclass(slots=True, eq=False, kw_only=True)
class Lifecycle:
    bank: MemoryBank
    store: LifecycleStore
    personas: Mapping[str, Persona]
    models: ModelRouter
    clock: Clock
    tz: tzinfo
    seed: int
    prune_hour: int = 4
    prune_rounds: int = PRUNE_ROUNDS  # the rounds the day's prune is spread over, at most
    encoder: Encoder = field(init=False)
    # The scopes still to prune today, listed once a day (not read again every round), and
    # how many a round.
    _prune_day: date | None = field(init=False, default=None)
    _to_prune: list[str] = field(init=False, default_factory=list)
    _prune_pace: int = field(init=False, default=PRUNE_BATCH)

    def __post_init__(self) -> None:
        self.encoder = Encoder(self.bank, self._summarise)

    async def leads(self, job: str) -> bool:
        """Whether this process does `job` now (processes sharing a database take turns at
        the daily jobs; one on SQLite does them all)."""
        return await self.store.leads(job)

    def author(self, persona: Persona) -> Author:
        ident = persona.identity
        return Author(
            name=ident.name,
            language=ident.language,
            timezone=self.tz,
            voice=" ".join(ident.personality.split())[:600],
            example=ident.example_memory,
        )

    async def _summarise(self, messages: Sequence[tuple[str, str]], *, json_mode: bool) -> str:
        completion = await self.models.complete(
            "summary",
            [Message(_role(role), text) for role, text in messages],
            json_mode=json_mode,
            purpose="encoding",
        )
        return completion.text

    async def encode_pending(self, limit: int = ENCODE_BATCH) -> list[Encoded]:
        """Encode the conversations waiting in the archive, oldest first, one scope at a time
        under the scope's lock (its diary page and profiles are rewritten from what encoding
        read): a scope another process is encoding or pruning is left to it this round, and
        the round goes on to the next. When the model is out, the round stops and each
        conversation tried waits a little longer next time."""
        now = self.clock.now()
        done: list[Encoded] = []
        store = self.store
        busy: set[tuple[str, str]] = set()  # (persona, scope): locked elsewhere this round
        tried = 0
        while tried < limit:
            waiting = await store.unencoded(
                self.personas.keys(), now, limit=limit - tried, skip=busy
            )
            if not waiting:
                break
            by_scope: dict[tuple[str, str], list[ArchivedConversation]] = {}
            for conversation in waiting:  # the oldest conversation's scope first
                by_scope.setdefault((conversation.persona, conversation.scope), []).append(
                    conversation
                )
            for (persona_key, session_scope), conversations in by_scope.items():
                scope = Recollector.scope(persona_key, session_scope)
                async with store.scope_lock(scope) as held:
                    if not held:
                        busy.add((persona_key, session_scope))
                        continue
                    for conversation in conversations:
                        tried += 1
                        # Read again under the lock: another process may have encoded it
                        # since the list was read (and the model need not be asked twice).
                        fresh = await store.conversation(conversation.id)
                        if fresh is None or fresh.encoded_at is not None:
                            continue
                        if not await self._encode(fresh, scope, now, done):
                            return done
        return done

    async def _encode(
        self, conversation: ArchivedConversation, scope: str, now: datetime, done: list[Encoded]
    ) -> bool:
        """Encode one conversation (appending it to `done`); False when the model is out."""
        store = self.store
        persona = self.personas[conversation.persona]
        try:
            encoded = await self.encoder.encode(conversation, scope, self.author(persona))
        except EncodingFailed as e:
            delay = min(RETRY_FIRST * 2**conversation.attempts, RETRY_MAX)
            await store.encoding_failed(conversation.id, now + delay)
            log.warning(
                "conversation %d of %s waits %s to be encoded: %s",
                conversation.id,
                persona.key,
                delay,
                e,
            )
            return False
        except Exception:
            log.exception("encoding conversation %d failed; retrying later", conversation.id)
            await store.encoding_failed(conversation.id, now + RETRY_MAX)
            return True
        if encoded is not None:
            log.info(
                "conversation %d of %s: %d memories, %d merged%s",
                conversation.id,
                persona.key,
                len(encoded.memory_ids),
                len(encoded.merged_into),
                " (fallback summary)" if encoded.fallback else "",
            )
            done.append(encoded)
        return True

    async def prune_due(self, limit: int | None = None) -> list[PruneReport]:
        """Once a local day, from prune_hour on, prune each scope of these personas, `limit`
        scopes a round (one process at a time runs this: see Scheduler); by default
        PRUNE_BATCH, or as many as spread the day's over `prune_rounds`. The scopes due are
        listed once a day; one made later in the day has nothing old enough to prune yet."""
        now = self.clock.now()
        local = now.astimezone(self.tz)
        if local.hour < self.prune_hour:
            return []
        today = local.date()
        store = self.store
        if self._prune_day != today:
            done = await store.pruned_scopes(today)
            due = [
                scope
                for scope in await store.scopes()
                if persona_of(scope) in self.personas and scope not in done  # not another's
            ]
            self._prune_day, self._to_prune = today, due
            self._prune_pace = prune_pace(len(due), self.prune_rounds)
            if due:
                log.info("the daily prune of %d scopes begins", len(due))
            # Histories that would otherwise grow with the community for ever.
            trimmed = await store.trim_pruned(now - HISTORY)
            trimmed += await store.trim_outreach(now - HISTORY)
            trimmed += await store.trim_archive(now - HISTORY)
            trimmed += await store.trim_intentions(now - HISTORY)
            if trimmed:
                log.info(
                    "the daily upkeep deleted %d records of %d days ago", trimmed, HISTORY.days
                )
        reports: list[PruneReport] = []
        limit = self._prune_pace if limit is None else limit
        batch, self._to_prune = self._to_prune[:limit], self._to_prune[limit:]
        for scope in batch:
            # Under the scope's lock, never beside its encoding in another process; a scope
            # held elsewhere is tried again at the end of the list.
            async with store.scope_lock(scope) as held:
                last = await store.last_prune(scope) if held else None
                if not held:
                    self._to_prune.append(scope)
                if not held or (last is not None and last >= today):
                    continue
                kept, forgotten = await self.bank.prune(
                    scope, now, day=today, seed=self.seed, hearsay=hearsay(scope)
                )
            reports.append(PruneReport(scope, today, kept, forgotten))
            if forgotten:
                log.info("pruned %d memories of %s", len(forgotten), scope)
        return reports
