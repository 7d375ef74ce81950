"""Writing first: the scheduler runs `Outreach.tick` once a minute. For each persona that
opted in and each bot (bot.outreach.courier.Courier) that speaks as it: due intentions become
follow-ups, reminders and special-day greetings (only those of their user's own words,
memory.records.Intention.own; only a reminder they asked for themself is solicited), those
past their `until` are missed, and a person silent for the persona's checkin_days gets one
check-in per absence.

Each message goes: the gates (bot.outreach.policy, no model call) -> a claim in the store's
ledger (one process wins the key, whatever the others do) -> one chat-tier call -> `dropped`
if the person wrote meanwhile (their conversation brings it up), else `sending`
-> the courier -> `sent` (the intention done, the message joining the person's private
conversation, so the next turn sees it), `refused` (remembered on the contact), or
`unreachable` (left claimed: claimable again once stale). A process that dies after
`sending` never sends that message again: once at most, never twice."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo
from typing import Protocol

from bot.chat_model import Message, ModelError
from bot.conversation.sessions import SessionManager, Turn, is_private, private_place
from bot.events import Reply
from bot.llm.router import ModelRouter
from bot.outreach.courier import Courier, Delivery
from bot.outreach.policy import WEEK, may_write
from bot.persona.cards import resolve_placeholders
from bot.persona.file import Persona
from bot.prompts import Occasion, outreach_messages, parse_emotion
from bot.spoken import Spoken
from memory.clock import Clock
from memory.recall.ranking import Recalled
from memory.records import Contact, Intention
from memory.records import Outreach as OutreachEntry
from memory.scopes import Scope
from memory.storage.protocols import ContactStore, IntentionStore

__all__ = ["COMPOSED_PER_ROUND", "STALE", "Memories", "Outreach", "OutreachStore", "Topic"]

log = logging.getLogger(__name__)

# A claim older than this whose process never moved it on (it died, or the platform was
# unreachable) may be taken over.
STALE = timedelta(minutes=10)
DUE_BATCH = 200  # intentions looked at per persona per round
# Messages a persona's round composes at most (one model call each): a backlog (after a
# restart) goes out oldest first over the next minutes, never in one long round.
COMPOSED_PER_ROUND = 20
MEMORIES = 4  # memories of the person in the prompt
SETTLED_KEPT = 100_000  # final ledger keys remembered in memory, at most


class OutreachStore(IntentionStore, ContactStore, Protocol):
    """What outreach reads and writes: intentions, contacts and the ledger."""


class Memories(Protocol):
    """The memory bank, as outreach reads it (memory.bank.MemoryBank)."""

    async def memories(
        self, scope: str, query: str | None = None, *, limit: int = 20, now: datetime | None = None
    ) -> list[Recalled]: ...


@dataclass(slots=True, frozen=True)
class Topic:
    """What one message is about: its ledger key and why the persona writes."""

    key: str
    occasion: Occasion
    what: str = ""
    ask: str = ""
    days: int = 0
    intention: Intention | None = None  # closed done once it is sent


def _topic(intention: Intention) -> Topic:
    """Its ledger key says whether it was asked for (bot.outreach.policy.solicited): a
    reminder its user asked for themself, not one another member's words made theirs."""
    if intention.kind == "special_day":
        key = f"special:{intention.id}:{intention.due_at.year}"
    elif intention.solicited:
        key = f"reminder:{intention.id}"
    else:
        key = f"intention:{intention.id}"
    occasion: Occasion = intention.kind
    return Topic(key, occasion, intention.what, intention.ask, intention=intention)


@dataclass(slots=True)
class _Known:
    """A round's reads of the people it may write to on one platform: their contacts and
    this week's ledgers. `users`: those read, and not written to since."""

    users: set[str]
    contacts: dict[str, Contact] = field(default_factory=dict)
    ledgers: dict[str, list[OutreachEntry]] = field(default_factory=dict)


@dataclass(slots=True)
class _Budget:
    """The messages one persona's round may still compose."""

    most: int
    composed: int = 0

    @property
    def spent(self) -> bool:
        return self.composed >= self.most


@dataclass(slots=True, eq=False, kw_only=True)
class Outreach:
    """Writes first for the personas of one process. `name` tells this process's claims
    apart in the ledger (several processes may share one store)."""

    store: OutreachStore
    personas: Mapping[str, Persona]
    models: ModelRouter
    sessions: SessionManager
    clock: Clock
    tz: tzinfo
    name: str
    memories: Memories | None = None
    _couriers: list[Courier] = field(init=False, default_factory=list)
    # Messages whose ledger entry is final (sent, sending, refused, dropped): never
    # written again, so never looked up again (a check-in's key stays due all through
    # the absence). Final states do not change: this memo cannot go stale.
    _settled: set[tuple[str, str, str, str]] = field(init=False, default_factory=set)

    def add(self, courier: Courier) -> None:
        """A bot this process runs that may write first (adapters.command.host, once it started)."""
        self._couriers.append(courier)

    @property
    def couriers(self) -> Sequence[Courier]:
        return tuple(self._couriers)

    async def tick(self) -> int:
        """One round: the due messages of every persona a courier speaks as (of one not
        opted in, only reminders a user asked for). Returns how many went out."""
        sent = 0
        for persona in self.personas.values():
            # The first bot added of each platform that speaks as the persona.
            couriers = {c.platform: c for c in reversed(self._couriers) if c.hosts(persona.key)}
            if not couriers:
                continue
            budget = _Budget(COMPOSED_PER_ROUND)
            try:
                sent += await self._intentions(persona, couriers, budget)
                if persona.outreach.enabled and persona.outreach.checkin_days > 0:
                    sent += await self._checkins(persona, couriers, budget)
            except Exception:
                log.exception("outreach for %s failed; trying again next round", persona.key)
        return sent

    async def _intentions(
        self, persona: Persona, couriers: Mapping[str, Courier], budget: _Budget
    ) -> int:
        now = self.clock.now()
        # Those whose window passed with no chance to bring them up, all at once: a follow-up
        # weeks late is no friend's (a yearly one rolls on to next year, below).
        await self.store.miss_intentions(persona.key, now)
        due: dict[str, list[tuple[str, Topic]]] = {}  # by platform: (user id, topic)
        # A persona not opted in reads only what it may write (or must close), so that what
        # it never writes does not fill the batch each round.
        for intention in await self.store.due_intentions(
            persona.key, now, limit=DUE_BATCH, asked_only=not persona.outreach.enabled
        ):
            if now > intention.until:
                await self.store.close_intention(intention.scope, intention.id, "missed", now)
                continue
            if not intention.own:
                continue  # another member's words: never written to them as theirs
            asked = intention.solicited  # a persona not opted in keeps these only
            if not persona.outreach.enabled and not asked:
                continue
            place = Scope.parse(intention.scope).place
            if not is_private(place) and not persona.outreach.groups and not asked:
                continue  # brought up in the group's conversation, if at all (bot.turn.recall)
            platform = place.split(":", 1)[0]
            if platform not in couriers:
                continue  # a console or web conversation: nobody to write to
            due.setdefault(platform, []).append((intention.user_id, _topic(intention)))
        sent = 0
        for platform, topics in due.items():
            known = await self._known(persona, platform, [u for u, _ in topics], now)
            for user_id, topic in topics:
                if budget.spent:
                    return sent
                if await self._write(persona, couriers[platform], user_id, topic, known, budget):
                    sent += 1
        return sent

    async def _checkins(
        self, persona: Persona, couriers: Mapping[str, Courier], budget: _Budget
    ) -> int:
        sent = 0
        now = self.clock.now()
        absence = timedelta(days=persona.outreach.checkin_days)
        for platform, courier in couriers.items():
            # Through an index: a contact whose check-in of this absence is settled is not
            # read again until heard from again.
            contacts = [
                c
                for c in await self.store.checkins_due(
                    persona.key, platform, heard_before=now - absence, limit=DUE_BATCH
                )
                if c.last_heard is not None
            ]
            known = await self._known(persona, platform, [c.user_id for c in contacts], now)
            known.contacts.update((c.user_id, c) for c in contacts)
            for contact in contacts:
                if budget.spent:
                    return sent
                assert contact.last_heard is not None
                days = (now - contact.last_heard).days
                # One per absence: the key is the last message heard, so the next absence
                # (after they wrote again) is a new key.
                topic = Topic(f"checkin:{contact.last_heard.isoformat()}", "checkin", days=days)
                if await self._write(persona, courier, contact.user_id, topic, known, budget):
                    sent += 1
                if (persona.key, platform, contact.user_id, topic.key) in self._settled:
                    await self.store.settle_checkin(
                        persona.key, platform, contact.user_id, contact.last_heard
                    )
        return sent

    async def _known(
        self, persona: Persona, platform: str, user_ids: Sequence[str], now: datetime
    ) -> _Known:
        """The contacts and this week's ledgers of the people a round may write to on one
        platform, in two reads rather than two a person."""
        ids = sorted(set(user_ids))
        store = self.store
        known = _Known(set(ids))
        for contact in await store.contacts_of(persona.key, platform, ids):
            known.contacts[contact.user_id] = contact
        for entry in await store.ledgers(persona.key, platform, ids, since=now - WEEK):
            known.ledgers.setdefault(entry.user_id, []).append(entry)
        return known

    async def _write(
        self,
        persona: Persona,
        courier: Courier,
        user_id: str,
        topic: Topic,
        known: _Known,
        budget: _Budget,
    ) -> bool:
        """Gates, claim, compose, send, record. True when the message went out. `known`: the
        round's reads of the person, used until anything is claimed for them."""
        store, platform = self.store, courier.platform
        settled = (persona.key, platform, user_id, topic.key)
        if settled in self._settled:
            return False
        now = self.clock.now()
        stale_before = now - STALE

        def verdict(contact: Contact | None, ledger: Sequence[OutreachEntry]) -> bool:
            found = may_write(
                persona.outreach,
                contact,
                ledger,
                now,
                key=topic.key,
                fallback=self.tz,
                stale_before=stale_before,
            )
            if not found.ok:
                log.debug("%s does not write first now: %s", persona.key, found.reason)
            return found.ok

        async def allowed(fresh: bool) -> bool:
            # The person's own gates first, from one read (at night nothing more is read).
            if not fresh and user_id in known.users:
                contact = known.contacts.get(user_id)
                if not verdict(contact, ()):
                    return False
                ledger: Sequence[OutreachEntry] = known.ledgers.get(user_id, ())
            else:
                contact = await store.contact(persona.key, platform, user_id)
                if not verdict(contact, ()):
                    return False
                ledger = await store.outreach(persona.key, platform, user_id, since=now - WEEK)
            written = next((e for e in ledger if e.key == topic.key and e.state != "claimed"), None)
            if written is not None:  # written (or given up) already
                self._remember(settled)
                if written.state in ("sending", "sent") and topic.intention is not None:
                    # It went, or may have (a process died handing it over): closed, so the
                    # conversation never brings it up again either.
                    intention = topic.intention
                    await store.close_intention(intention.scope, intention.id, "done", now)
                return False
            return verdict(contact, ledger)

        if not await allowed(fresh=False):
            return False
        # From here the round's reads of them are out of date: read afresh for anything else.
        known.users.discard(user_id)
        if not await store.claim_outreach(
            persona.key,
            platform,
            user_id,
            topic.key,
            by=self.name,
            at=now,
            stale_before=stale_before,
        ):
            return False
        # Another process may have claimed another message to the same person meanwhile: with
        # our claim written, whoever reads the ledger second sees both, and backs off. Ours
        # stays claimed, to be taken over once stale.
        if not await allowed(fresh=True):
            return False
        budget.composed += 1
        try:
            reply = await self._compose(persona, platform, user_id, topic, now)
        except ModelError as e:
            log.warning("%s could not write first (%s); trying again later", persona.key, e)
            return False
        if await self._overtaken(persona, platform, user_id, topic, now):
            # They wrote meanwhile: the conversation brings it up (or the absence is over).
            dropped = self.clock.now()
            await store.outreach_state(
                persona.key, platform, user_id, topic.key, "dropped", dropped
            )
            self._remember(settled)
            return False
        await store.outreach_state(persona.key, platform, user_id, topic.key, "sending", now)
        # The courier knows whether its bot hosts several personas, and signs then.
        delivery: Delivery = await courier.write_first(user_id, Spoken(persona, reply, False))
        done = self.clock.now()
        if delivery == "unreachable":
            # It did not go: claimed again, so a later round (here or elsewhere) tries anew.
            await store.outreach_state(persona.key, platform, user_id, topic.key, "claimed", done)
            return False
        await store.outreach_state(persona.key, platform, user_id, topic.key, delivery, done)
        self._remember(settled)
        if delivery == "refused":
            await store.set_contact(persona.key, platform, user_id, refused_at=done, at=done)
            return False
        if topic.intention is not None:
            await store.close_intention(topic.intention.scope, topic.intention.id, "done", done)
        await self._join(persona, platform, user_id, reply, done)
        return True

    async def _overtaken(
        self, persona: Persona, platform: str, user_id: str, topic: Topic, since: datetime
    ) -> bool:
        """Whether the person wrote since `since` (while the message was being composed), or
        its intention is no longer pending (brought up in their conversation)."""
        contact = await self.store.contact(persona.key, platform, user_id)
        if contact is not None and contact.last_heard is not None and contact.last_heard > since:
            return True
        intention = topic.intention
        if intention is None:
            return False
        return not await self.store.is_pending(intention.scope, intention.id)

    def _remember(self, settled: tuple[str, str, str, str]) -> None:
        if len(self._settled) >= SETTLED_KEPT:
            self._settled.clear()  # only a saving: the ledger still says no
        self._settled.add(settled)

    async def _compose(
        self, persona: Persona, platform: str, user_id: str, topic: Topic, now: datetime
    ) -> Reply:
        """One chat-tier call: the message, in the persona's voice, from its memories of the
        person in their private chat (never another scope's)."""
        scope = str(Scope(persona.key, private_place(platform, user_id)))
        recalled: list[Recalled] = []
        if self.memories is not None:
            cue = topic.what or None  # a check-in: the newest memories
            recalled = await self.memories.memories(scope, cue, limit=MEMORIES, now=now)
        session = await self.sessions.get(persona.key, Scope.parse(scope).place)
        recap = await self.sessions.recap(session, now)
        local = now.astimezone(self.tz)
        messages = outreach_messages(
            persona,
            local,
            topic.occasion,
            what=topic.what,
            ask=topic.ask,
            days=topic.days,
            memories=recalled,
            recap=recap,
        )
        system = resolve_placeholders(messages[0].content, persona.identity.name, persona.user.name)
        messages[0] = Message("system", system)
        completion = await self.models.complete("chat", messages, purpose="outreach")
        tag, text = parse_emotion(completion.text)
        if not text:
            raise ModelError("the model wrote nothing")
        # No chunks: the courier splits the message within its platform's limit.
        return Reply(text, persona.emotion(tag))

    async def _join(
        self, persona: Persona, platform: str, user_id: str, reply: Reply, at: datetime
    ) -> None:
        """The message joins their private conversation, saved: the next turn sees what the
        persona said, as if it had said it in a turn."""
        session = await self.sessions.get(persona.key, private_place(platform, user_id))
        async with session.lock:
            session.add(
                Turn("assistant", persona.identity.name, reply.text, at, emotion=reply.emotion)
            )
            await self.sessions.save(session)
