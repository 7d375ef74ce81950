"""Short-term memory: one session per (persona, scope), holding the conversation at hand.

Each session has its own lock, so one conversation's turns stay in order while other sessions
run concurrently. Sessions are snapshotted to the store when dirty, restored on start, and
closed (archived for long-term memory) when idle or ended.

On a store several processes share (PostgreSQL), two of them may serve one conversation
(Telegram webhooks behind a load balancer, the console beside the web client): there the lock
is a TurnLock, which also takes the conversation's lease in the store, so the processes take
its turns one at a time, each starting from what the other wrote.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Collection, Coroutine, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from bot import redact
from bot.events import ChatEvent
from bot.persona.file import Persona
from memory.clock import Clock
from memory.encoding.encoder import last_exchange
from memory.groupcommit import GroupCommit
from memory.records import ArchivedConversation, ArchiveWrite, SessionRow, SessionSave
from memory.storage import LeaseStore, SessionStore

__all__ = [
    "HANDLED_KEPT",
    "LEASE_POLL",
    "RECAP_WITHIN",
    "SAVE_BATCH",
    "Reading",
    "Session",
    "SessionManager",
    "Turn",
    "TurnLock",
    "is_private",
    "is_shared",
    "member_places",
    "persona_place",
    "private_place",
    "scope_key",
    "server_place",
]

log = logging.getLogger(__name__)

HANDLED_KEPT = 64  # message ids a session remembers answering: more than a redelivered batch
SAVE_BATCH = 100  # sessions snapshotted in one transaction by autosave
# Characters of turns a session's own row carries before they move to rows of their own: a
# save then writes one page of the database, whether the conversation is short or long.
INLINE_CHARS = 1_500
# Seconds between tries for a conversation another process is taking a turn of: it wakes this
# one when it gives the lease back, but a holder that dies sends no word.
LEASE_POLL = 1.0
RECAP_WITHIN = timedelta(days=30)  # an older conversation is not "where we left off"


def scope_key(
    scope: Literal["user", "channel"], event: ChatEvent, *, share_channels: bool = False
) -> str:
    """The wall around a conversation and its memories.

    A private chat is always its own scope, so nothing said there surfaces in a group. In a
    group, `user` scope keeps one conversation per member in each place, a place being where
    the same people read: a channel (or thread) of a Discord server, each with its own
    readers, or a whole Telegram group, topics and all (`ChatEvent.same_readers`); so what a
    member said in #mods never comes up in #general, read by people who cannot read #mods.
    `share_channels` (the persona's `memory.share_channels`) makes a server's channels one
    place: one corner per member in the whole server. `channel` scope shares one among
    everyone in the channel (a dungeon master's table). An anonymous sender, one of several
    the platform cannot tell apart, gets the channel's scope whatever the persona's: what one
    of them says must never reach another as "your" memory. Another persona speaking in a
    group (bot.groups.relay) is heard per channel: a user-scoped persona keeps one conversation with
    it in each channel (`platform:chat:channel:ID:user:persona:KEY`), never one per chat.
    """
    if event.anonymous:
        return f"{event.platform}:{event.chat_id}:channel:{event.channel_id}"
    if event.from_persona:
        # Another persona of this process (bot.groups.relay): heard in one channel, its words stay
        # that channel's, whatever the hearer's scope; a chat's other channels have other
        # readers.
        channel = f"{event.platform}:{event.chat_id}:channel:{event.channel_id}"
        return channel if scope == "channel" else f"{channel}:user:{event.user_id}"
    if event.is_dm:
        # A platform may continue another's private chats (`ChatEvent.private_as`): the web
        # page and the console are both the host's own surfaces, where a user is the name
        # they type, so one name is one conversation on either.
        return private_place(event.private_as or event.platform, event.user_id)
    if scope == "channel":
        return f"{event.platform}:{event.chat_id}:channel:{event.channel_id}"
    if share_channels or event.same_readers:
        return server_place(event)
    return f"{event.platform}:{event.chat_id}:channel:{event.channel_id}:user:{event.user_id}"


def private_place(platform: str, user_id: str) -> str:
    """The place of `user_id`'s private chat on `platform` (`scope_key`'s, for a private
    chat's event), for what reaches that chat with no event (bot.outreach)."""
    return f"{platform}:dm:{user_id}"


def server_place(event: ChatEvent) -> str:
    """A member's corner of a whole server or group (every channel of it one place): a
    persona's that shares channels, and, in a Discord server, where all that was said before
    memories kept to their channel went, with no record of the channel."""
    return f"{event.platform}:{event.chat_id}:user:{event.user_id}"


def member_places(event: ChatEvent, places: Iterable[str]) -> list[str]:
    """Of `places`, the sender's own corners in the event's server or group: the whole
    server's (`server_place`) and each channel's, sorted."""
    server = server_place(event)
    where = [event.platform, event.chat_id, "channel"]
    mine = ["user", event.user_id]

    def theirs(place: str) -> bool:
        parts = place.split(":")
        return place == server or (len(parts) == 6 and parts[:3] == where and parts[4:] == mine)

    return sorted({r for r in places if theirs(r)})


def persona_place(persona: Persona, event: ChatEvent) -> str:
    """The scope's place of an event's conversation with `persona` (`scope_key`, by the
    persona's memory settings)."""
    memory = persona.memory
    return scope_key(memory.scope, event, share_channels=memory.share_channels)


def is_private(place: str) -> bool:
    """Whether `place` (a scope's place part, as scope_key makes it) is a private chat."""
    return place.split(":", 2)[1:2] == ["dm"]


def is_shared(scope: Literal["user", "channel"], event: ChatEvent) -> bool:
    """Whether the event's conversation and memories are the whole channel's, not the
    sender's own: changing them is then for the channel's admins."""
    return not event.is_dm and scope_key(scope, event) == scope_key("channel", event)


@dataclass(slots=True)
class Turn:
    role: Literal["user", "assistant"]
    speaker: str  # display name of whoever said it
    text: str
    at: datetime
    user_id: str = ""
    emotion: str = ""
    # Said about a document the user shared (document mode): not encoded into long-term memory.
    document: bool = False
    # Another persona's words (bot.groups.relay), or a reply made with them in the conversation:
    # what another persona said came from its own memories of someone, which go when theirs go, so
    # it is kept only while this conversation is open: never archived, never encoded.
    hearsay: bool = False
    # Pictures shown with it to a chat model that sees (bot.media.pictures.show): in memory until
    # then, never in its JSON form nor stored.
    images: tuple[bytes, ...] = field(default=(), repr=False, compare=False)
    # What came to mind as it was answered (memories, pages, results: bot.turn.compose's note of
    # the turn, without what changes every turn), shown before it in the prompts after, as
    # it was (a prompt cache reuses them). In memory only, like the pictures: never stored.
    note: str = field(default="", repr=False, compare=False)
    # Its JSON form, made once: every save snapshots every turn of the conversation again.
    _json: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        """The turn as JSON data (one dict, shared by every snapshot: never changed)."""
        if self._json is not None:
            return self._json
        data: dict[str, Any] = {
            "role": self.role,
            "speaker": self.speaker,
            "text": self.text,
            "at": self.at.isoformat(),
            "user_id": self.user_id,
            "emotion": self.emotion,
        }
        if self.document:
            data["document"] = True
        if self.hearsay:
            data["hearsay"] = True
        self._json = data
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Turn:
        return cls(
            role=data["role"],
            speaker=str(data.get("speaker", "")),
            text=str(data["text"]),
            at=datetime.fromisoformat(data["at"]),
            user_id=str(data.get("user_id", "")),
            emotion=str(data.get("emotion", "")),
            document=bool(data.get("document", False)),
            hearsay=bool(data.get("hearsay", False)),
        )


@dataclass(slots=True)
class Reading:
    """A document the user shared, open until they close it or the conversation ends. Its
    text stays in this process only: it is never saved, so it never becomes memory."""

    name: str
    summary: str
    text: str = ""  # "" after a restart: questions are answered from the summary

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "summary": self.summary}


@dataclass(slots=True)
class Session:
    persona: str
    scope: str
    turns: list[Turn] = field(default_factory=list)
    state: dict[str, str] = field(default_factory=dict)
    started_at: datetime | None = None
    last_active: datetime | None = None
    summary: str = ""  # the running summary of turns folded out of `turns` (compression)
    recap: str = ""  # where the conversation before this one left off
    reading: Reading | None = None  # document mode
    # The newest messages answered (ChatEvent.message_id), saved with the snapshot in the
    # same write as their turns: a message delivered again after a crash is known.
    handled: list[str] = field(default_factory=list)
    # Messages (message id, turn) that came while another turn held the lock, saved so a
    # crash during the wait keeps them: restored as said and unanswered. A turn takes its own.
    waiting: list[tuple[str, Turn]] = field(default_factory=list)
    # The memories `/forget QUERY` offered each user (by user id) for `/forget N`: kept with
    # the conversation, so the pick may reach another process, or come after a restart.
    offers: dict[str, list[int]] = field(default_factory=dict)
    # Another persona's words joined this conversation (bot.groups.relay): until it closes, they (or
    # a summary of them) are in view, so the persona's replies are hearsay too.
    hearsay: bool = False
    # Held for a whole turn (model calls included): one conversation's turns stay in order.
    lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False, compare=False)
    # Held only while the store is written, so autosave never waits for a model call and a
    # snapshot never lands on top of an archive or a wipe.
    write_lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False, compare=False)
    changes: int = field(default=0, compare=False)  # counts changes; `saved`: as of the store
    saved: int = field(default=0, compare=False)
    # Turns are numbered in the store, the first of `turns` `first`; those numbered below
    # `stored` have rows of their own there, never written again (SessionSave).
    first: int = field(default=0, compare=False)
    stored: int = field(default=0, compare=False)

    @property
    def is_open(self) -> bool:
        return bool(self.turns)

    @property
    def dirty(self) -> bool:
        return self.changes != self.saved

    def touch(self) -> None:
        """Note a change, for the next snapshot."""
        self.changes += 1

    def add(self, turn: Turn) -> None:
        if not self.turns:
            self.started_at = turn.at
        self.hearsay = self.hearsay or turn.hearsay
        self.turns.append(turn)
        self.last_active = turn.at
        self.touch()

    def speakers(self) -> dict[str, str]:
        """The conversation's speakers by id, each with the name of their latest turn."""
        return {t.user_id: t.speaker for t in self.turns if t.role == "user" and t.user_id}

    def wait(self, message_id: str, turn: Turn) -> tuple[str, Turn]:
        """Note a message waiting for the lock (see `waiting`); `taken` ends its wait."""
        waiting = (message_id, turn)
        self.waiting.append(waiting)
        self.touch()
        return waiting

    def taken(self, waiting: tuple[str, Turn]) -> None:
        """End a wait: in the same step as its turn joins `turns`, so no snapshot has
        neither."""
        if any(w is waiting for w in self.waiting):
            self.waiting = [w for w in self.waiting if w is not waiting]
            self.touch()

    def answered(self, message_id: str) -> bool:
        return bool(message_id) and message_id in self.handled

    def note_answered(self, message_id: str) -> None:
        if message_id and message_id not in self.handled:
            self.handled = [*self.handled[1 - HANDLED_KEPT :], message_id]
            self.touch()

    def take_from(self, fresh: Session) -> None:
        """Become the conversation as the store has it now (another process took turns of
        it), keeping the messages still waiting here."""
        self.turns, self.state = fresh.turns, fresh.state
        self.first, self.stored = fresh.first, fresh.stored
        self.started_at, self.last_active = fresh.started_at, fresh.last_active
        self.summary, self.recap, self.reading = fresh.summary, fresh.recap, fresh.reading
        self.handled, self.offers = fresh.handled, fresh.offers
        self.hearsay = fresh.hearsay
        if self.waiting:
            self.touch()
        else:
            self.saved = self.changes

    def idle_since(self, now: datetime, idle: timedelta) -> bool:
        return self.last_active is not None and self.is_open and now - self.last_active >= idle

    @property
    def end(self) -> int:
        """The number the next turn will have."""
        return self.first + len(self.turns)

    def snapshot(self) -> dict[str, Any]:
        return {
            "turns": [t.to_json() for t in self.turns],
            "first": self.first,
            "rows": own_rows(self.turns, self.stored - self.first),
            "state": dict(self.state),
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "last_active": self.last_active.isoformat() if self.last_active else None,
            "summary": self.summary,
            "recap": self.recap,
            "reading": self.reading.to_json() if self.reading else None,
            "handled": list(self.handled),
            "waiting": [{**turn.to_json(), "message_id": m} for m, turn in self.waiting],
            "offers": {user: list(ids) for user, ids in self.offers.items()},
            **({"hearsay": True} if self.hearsay else {}),
        }

    @classmethod
    def restore(cls, persona: str, scope: str, snapshot: dict[str, Any]) -> Session:
        def when(key: str) -> datetime | None:
            value = snapshot.get(key)
            return datetime.fromisoformat(value) if value else None

        session = cls(
            persona=persona,
            scope=scope,
            turns=[Turn.from_json(t) for t in snapshot.get("turns", [])],
            state=dict(snapshot.get("state", {})),
            started_at=when("started_at"),
            last_active=when("last_active"),
            summary=str(snapshot.get("summary", "")),
            recap=str(snapshot.get("recap", "")),
            reading=_reading(snapshot.get("reading")),
            handled=[str(m) for m in snapshot.get("handled", [])],
            offers={
                str(user): [int(i) for i in ids]
                for user, ids in dict(snapshot.get("offers", {})).items()
            },
            hearsay=bool(snapshot.get("hearsay", False)),
            first=int(snapshot.get("first", 0)),
        )
        session.stored = session.first + int(snapshot.get("rows", 0))
        for waited in snapshot.get("waiting", []):  # the process died while they waited
            message_id = str(waited.get("message_id", ""))
            if not session.answered(message_id):  # (not the turn of one answered already)
                session.add(Turn.from_json(waited))
                session.note_answered(message_id)
        return session


def _reading(data: Any) -> Reading | None:
    if not isinstance(data, dict) or not data.get("name"):
        return None
    return Reading(str(data["name"]), str(data.get("summary", "")))


class TurnLock(asyncio.Lock):
    """A conversation's turn lock on a shared store: this process's own lock, then the
    conversation's lease (waiting while another process takes a turn). Taking the lease brings
    in what another process wrote meanwhile; the lease is given back once the lock is free,
    unless another turn of this process has taken the lock by then.

    Without the lease a process writes nothing of the conversation, so the messages waiting
    for it are kept in the store's inbox instead (`keep`) until they are in a saved snapshot
    (`kept_in_snapshot`); the messages a process that died was keeping there are taken in
    with the lease, as said and unanswered."""

    def __init__(
        self, session: Session, leases: LeaseStore, fresh: Callable[[SessionRow], Session]
    ) -> None:
        super().__init__()
        self._session = session
        self._leases = leases
        self._fresh = fresh
        self._leasing = asyncio.Lock()  # taking and giving back, one at a time
        self._giving_back: asyncio.Task[None] | None = None
        self.leased = False
        self._kept: set[str] = set()  # ids of the waiting messages in the store's inbox

    async def acquire(self) -> Literal[True]:
        await super().acquire()
        try:
            await self._take()
        except BaseException:
            super().release()
            raise
        return True

    def release(self) -> None:
        super().release()
        if self.leased and self._giving_back is None:
            self._giving_back = asyncio.get_running_loop().create_task(self._give_back())

    async def _take(self) -> None:
        session = self._session
        async with self._leasing:
            while True:
                lease = await self._leases.take_conversation(session.persona, session.scope)
                if lease.held:
                    break
                await self.keep()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(LEASE_POLL):
                        await self._leases.conversation_returned(session.persona, session.scope)
            self.leased = True
        if lease.gone:
            session.take_from(Session(session.persona, session.scope))
        elif lease.newer is not None:
            session.take_from(self._fresh(lease.newer))
        for message_id, turn in lease.orphans:
            if not session.answered(message_id):
                session.add(Turn.from_json(turn))
                session.note_answered(message_id)

    async def keep(self) -> None:
        """Keep the messages waiting here in the store's inbox (those with an id: a
        platform's message, not the console's)."""
        session = self._session
        new = [(m, turn) for m, turn in session.waiting if m and m not in self._kept]
        if new:
            waiting = [(m, turn.to_json()) for m, turn in new]
            await self._leases.keep_waiting(session.persona, session.scope, waiting)
            self._kept.update(m for m, _ in new)

    async def kept_in_snapshot(self) -> None:
        """The snapshot just saved holds the waiting messages that left the inbox's list:
        the inbox keeps them no more."""
        session = self._session
        done = self._kept - {m for m, _ in session.waiting}
        if done:
            await self._leases.drop_waiting(session.persona, session.scope, sorted(done))
            self._kept -= done

    async def _give_back(self) -> None:
        session, delay = self._session, 1.0
        try:
            while True:
                # A snapshot being written lands first: after, it would overwrite the turns of
                # the process that takes the conversation next.
                async with self._leasing, session.write_lock:
                    if self.locked() or not self.leased:
                        return
                    try:
                        await self._leases.give_back_conversation(session.persona, session.scope)
                    except Exception as e:  # kept meanwhile: other processes wait for it
                        log.warning(
                            "could not give back the conversation of %s in %s (%s); retrying",
                            session.persona,
                            session.scope,
                            e,
                        )
                    else:
                        self.leased = False
                        return
                await asyncio.sleep(delay)
                delay = min(2 * delay, 60.0)
        finally:
            self._giving_back = None


class SessionManager:
    """Finds, saves, restores and closes sessions. The store is the truth; this is its cache."""

    def __init__(self, store: SessionStore, clock: Clock) -> None:
        self._store = store
        self._clock = clock
        self._sessions: dict[tuple[str, str], Session] = {}
        self._leases = store if isinstance(store, LeaseStore) else None
        self._loading = asyncio.Lock()
        # The group commit of snapshots (see `save`).
        self._saving: GroupCommit[Session] = GroupCommit(self._save_together)
        # Archives and folds under way: shielded from their callers' cancels, so they may
        # outlive them (`settle`).
        self._moving: set[asyncio.Task[int]] = set()

    def loaded(self, persona: str) -> list[Session]:
        """The persona's conversations in this process's memory."""
        return [s for (key, _), s in self._sessions.items() if key == persona]

    async def restore(self, personas: Collection[str], platforms: Collection[str]) -> int:
        """Load the sessions this process serves (after a restart): open conversations, and
        the state slots of closed ones. Sessions of other personas or platforms belong to
        other processes (a console beside a running bot) and are left alone. Returns how
        many sessions are loaded."""
        for row in await self._store.load_sessions(personas):
            key = (row.persona, row.scope)
            if row.scope.split(":", 1)[0] in platforms and key not in self._sessions:
                self._sessions[key] = self._adopt(self._restore(row))
        return len(self._sessions)

    def _restore(self, row: SessionRow) -> Session:
        persona, scope = row.persona, row.scope
        try:
            if row.damaged:
                raise ValueError("not a JSON object")
            return Session.restore(persona, scope, row.snapshot)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            # Only a damaged database gets here. Start afresh rather than refuse every
            # message of this user; the bad snapshot is replaced at the next save.
            log.error(
                "%s: unreadable session snapshot of %s in %s (%s: %s); starting afresh",
                self._store.where,
                persona,
                scope,
                type(e).__name__,
                e,
            )
            return Session(persona, scope)

    async def get(self, persona: str, scope: str) -> Session:
        key = (persona, scope)
        session = self._sessions.get(key)
        if session is None:
            async with self._loading:  # two first messages at once must share one session
                session = self._sessions.get(key)
                if session is None:
                    row = await self._store.load_session(persona, scope)
                    session = Session(persona, scope) if row is None else self._restore(row)
                    self._sessions[key] = session = self._adopt(session)
        return session

    async def of(self, persona: Persona, event: ChatEvent) -> Session:
        """The session an event belongs to: the persona's, in the scope its memory keeps."""
        return await self.get(persona.key, persona_place(persona, event))

    async def recap(self, session: Session, now: datetime) -> str:
        """Where the session's previous conversation left off, if it was recent enough to
        matter: its recap once encoded, else its last exchange ("" if unreadable now)."""
        try:
            last = await self._store.conversations(session.persona, session.scope, limit=1)
        except Exception:
            log.exception("could not read the previous conversation of %s", session.persona)
            return ""
        if not last or now - last[0].ended_at > RECAP_WITHIN:
            return ""
        return last[0].recap or last_exchange(last[0])

    async def archived(self, session: Session) -> tuple[int, ArchivedConversation | None]:
        """How many closed conversations of the session the archive holds, and the newest
        of them when none is open."""
        count = await self._store.count_conversations(session.persona, session.scope)
        last = None
        if not session.is_open and count:
            [last] = await self._store.conversations(session.persona, session.scope, limit=1)
        return count, last

    def _adopt(self, session: Session) -> Session:
        if self._leases is not None:
            session.lock = TurnLock(session, self._leases, self._restore)
        return session

    def all(self) -> list[Session]:
        return list(self._sessions.values())

    async def places(self, persona: str) -> set[str]:
        """The places where `persona` has a conversation, here or in the store."""
        places = {s.scope for s in self.all() if s.persona == persona}
        return places | set(await self._store.session_places(persona))

    async def save(self, session: Session) -> None:
        """Write the snapshot now; returns once the store has it. Needs no turn lock: the
        snapshot is taken in one step, and a change made while it is written keeps the
        session dirty for the next round.

        Saves asked for while a write is under way go together in the next one (a group
        commit): under load one transaction carries many turns' snapshots, where one each
        would queue every turn behind the others' commits."""
        await self._saving([session])

    async def _save_together(self, sessions: list[Session]) -> None:
        """The sessions asked to be saved meanwhile, each once (its latest snapshot is taken
        when written), SAVE_BATCH to a transaction."""
        once = list({(s.persona, s.scope): s for s in sessions}.values())
        for start in range(0, len(once), SAVE_BATCH):
            await self._save_batch(once[start : start + SAVE_BATCH])

    async def save_dirty(self) -> int:
        """Snapshot every changed session, busy ones included (a turn waiting on the model
        has the user's message in it already), SAVE_BATCH to a transaction."""
        dirty = [s for s in self.all() if s.dirty]
        saved = 0
        for start in range(0, len(dirty), SAVE_BATCH):
            saved += await self._save_batch(dirty[start : start + SAVE_BATCH])
        return saved

    async def _save_batch(self, batch: list[Session]) -> int:
        async with contextlib.AsyncExitStack() as held:
            # In one order, so two batches never wait on each other's locks; other writes
            # (archive, fold, wipe) take one session's at a time.
            for session in sorted(batch, key=lambda s: (s.persona, s.scope)):
                await held.enter_async_context(session.write_lock)
            # (Archived while we waited: saved. Without its lease, a conversation is another
            # process's to write: this one keeps its waiting messages in the inbox meanwhile,
            # and writes the rest once it has the lease back.)
            for session in batch:
                if isinstance(session.lock, TurnLock) and not session.lock.leased:
                    await session.lock.keep()
            batch = [s for s in batch if s.dirty and _writable(s)]
            if not batch:
                return 0
            now = self._clock.now()
            saves = [SessionSave(s.persona, s.scope, s.snapshot(), now, s.stored) for s in batch]
            versions = [s.changes for s in batch]
            await self._store.save_sessions(saves)
            for session, save, version in zip(batch, saves, versions, strict=True):
                session.saved = max(session.saved, version)
                session.stored = max(session.stored, save.snapshot["first"] + save.snapshot["rows"])
                if isinstance(session.lock, TurnLock):
                    await session.lock.kept_in_snapshot()
        return len(batch)

    async def close(self, session: Session, reason: str) -> int | None:
        """Archive the open conversation and start a fresh one; the caller holds the lock.
        State slots outlive the conversation (a game goes on). Returns the archive id.

        Shielded: once the archive is being written, a cancel (Ctrl-C) cannot separate it
        from clearing the turns, so a conversation is never both archived and still open."""
        if not session.is_open:
            return None
        return await self._shielded(self._archive(session, reason))

    async def _shielded(self, move: Coroutine[Any, Any, int]) -> int:
        task = asyncio.ensure_future(move)
        self._moving.add(task)
        task.add_done_callback(self._moving.discard)
        return await asyncio.shield(task)

    async def settle(self) -> None:
        """Wait for the archives and folds under way, those whose callers were cancelled
        too (a stop during an idle conversation's archive), before the store closes: each
        then either lands or leaves its conversation open, as a failed one does."""
        while self._moving:
            for failed in await asyncio.gather(*self._moving, return_exceptions=True):
                if isinstance(failed, Exception):
                    log.warning("a conversation could not be archived: %s", redact.failure(failed))

    async def _archive(self, session: Session, reason: str) -> int:
        assert session.started_at is not None
        async with session.write_lock:
            # Archive first: if the store fails, the conversation stays open; nothing is lost.
            fresh = {
                **session.snapshot(),
                "turns": [],
                "first": session.end,
                "rows": 0,
                "started_at": None,
                "summary": "",
                "recap": "",
                "reading": None,
                "hearsay": False,
            }
            conversation_id = await self._store.archive_conversation(
                ArchiveWrite(
                    session.persona,
                    session.scope,
                    started_at=session.started_at,
                    ended_at=self._clock.now(),
                    reason=reason,
                    turns=_kept(session.turns),
                    snapshot=fresh,
                )
            )
            session.first = session.stored = session.end
            session.turns.clear()
            session.started_at = None
            session.summary = session.recap = ""
            session.hearsay = False
            session.reading = None  # a document is read within one conversation
            session.saved = session.changes  # the store holds exactly this now
        return conversation_id

    async def fold(self, session: Session, count: int, summary: str) -> int | None:
        """Compression: archive the oldest `count` turns (long-term memory encodes them like
        any closed conversation) and keep `summary` in their place; the conversation goes
        on. The caller holds the lock. Shielded, like close()."""
        if not 0 < count < len(session.turns):
            return None
        return await self._shielded(self._fold(session, count, summary))

    async def _fold(self, session: Session, count: int, summary: str) -> int:
        async with session.write_lock:
            folded, kept = session.turns[:count], session.turns[count:]
            rest = {
                **session.snapshot(),
                "turns": [t.to_json() for t in kept],
                "first": session.first + count,
                "rows": own_rows(kept, 0),
                "started_at": kept[0].at.isoformat(),
                "summary": summary,
            }
            conversation_id = await self._store.archive_conversation(
                ArchiveWrite(
                    session.persona,
                    session.scope,
                    started_at=folded[0].at,
                    ended_at=folded[-1].at,
                    reason="compressed",
                    turns=_kept(folded),
                    snapshot=rest,
                )
            )
            session.turns = kept
            session.first += count
            session.stored = session.first + rest["rows"]
            session.started_at = kept[0].at
            session.summary = summary
            session.saved = session.changes
        return conversation_id

    async def close_idle(self, idle_for: Callable[[str, str], timedelta]) -> int:
        """Close every conversation idle past its idle time (`idle_for(persona, place)`)."""
        now = self._clock.now()
        closed = 0
        for session in self.all():
            idle = idle_for(session.persona, session.scope)
            # A session whose lock is held is taking a turn: not idle.
            if not session.lock.locked() and session.idle_since(now, idle):
                async with session.lock:
                    if session.idle_since(self._clock.now(), idle):
                        await self.close(session, "idle")
                        closed += 1
        return closed

    async def wipe(self, session: Session) -> None:
        """Forget the conversation, its state and its archive; the caller holds the lock."""
        async with session.write_lock:
            await self._store.wipe(session.persona, session.scope)
            session.turns.clear()
            session.stored = session.first
            session.state.clear()
            session.started_at = session.last_active = None
            session.summary = session.recap = ""
            session.hearsay = False
            session.saved = session.changes


def own_rows(turns: Sequence[Turn], stored: int) -> int:
    """How many of `turns` have rows of their own once saved, the first `stored` having them
    already: all, once those after outgrow INLINE_CHARS (kept in the session's row till then)."""
    stored = max(0, min(stored, len(turns)))
    inline = sum(len(t.text) for t in turns[stored:])
    return len(turns) if inline > INLINE_CHARS else stored


def _kept(turns: Sequence[Turn]) -> list[dict[str, Any]]:
    """What the archive keeps of a conversation's turns: all but hearsay (see Turn)."""
    return [t.to_json() for t in turns if not t.hearsay]


def _writable(session: Session) -> bool:
    return not isinstance(session.lock, TurnLock) or session.lock.leased
