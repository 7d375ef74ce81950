"""Short-term memory: scope keys, session snapshots, and the session manager over the store."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pytest

from bot.conversation.sessions import (
    HANDLED_KEPT,
    INLINE_CHARS,
    SAVE_BATCH,
    Session,
    SessionManager,
    Turn,
    member_places,
    scope_key,
    server_place,
)
from memory.clock import FakeClock
from memory.records import SessionSave
from memory.storage import StoreError
from memory.storage.rows import session_parts
from memory.storage.sqlite import Store
from tests.fakes.factories import make_event

if TYPE_CHECKING:
    from memory.storage.postgres import PgStore

TOKYO = timezone(timedelta(hours=9))
SCOPES: tuple[Literal["user", "channel"], ...] = ("user", "channel")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    store = await Store.open(tmp_path / "kizuna.sqlite3")
    yield store
    await store.close()


@pytest.fixture
def manager(store: Store, clock: FakeClock) -> SessionManager:
    return SessionManager(store, clock)


def say(
    session: Session, text: str, at: datetime, role: Literal["user", "assistant"] = "user"
) -> None:
    speaker = "Alice" if role == "user" else "Pip"
    session.add(Turn(role, speaker, text, at, user_id="u1" if role == "user" else ""))


# --- scope keys ------------------------------------------------------------------------------


def test_a_dm_is_scoped_to_its_user() -> None:
    alice, bob = make_event(user_id="alice"), make_event(user_id="bob")
    assert scope_key("user", alice) != scope_key("user", bob)
    # In a DM the persona's scope setting does not matter: it is always the user's own.
    assert scope_key("user", alice) == scope_key("channel", alice)


def test_user_scope_in_a_group_keeps_one_conversation_per_member() -> None:
    alice = make_event(is_dm=False, user_id="alice")
    bob = make_event(is_dm=False, user_id="bob")
    assert scope_key("user", alice) != scope_key("user", bob)


def test_a_members_corner_is_a_place_where_the_same_people_read() -> None:
    """A Discord server's channels have their own readers: a member's corner in each; a
    Telegram group's topics are all read by its members (`same_readers`): one corner; a
    persona that shares a server's channels keeps one for the whole server."""
    mods = make_event(is_dm=False, user_id="alice", channel_id="mods")
    general = replace(mods, channel_id="general")
    assert scope_key("user", mods) != scope_key("user", general)
    assert scope_key("user", mods) == "discord:g1:channel:mods:user:alice"
    for event in (mods, general):
        assert scope_key("user", event, share_channels=True) == "discord:g1:user:alice"
    topic = make_event(is_dm=False, platform="telegram", user_id="7", chat_id="-100")
    topics = [replace(topic, channel_id=c, same_readers=True) for c in ("-100", "-100/5")]
    assert {scope_key("user", t) for t in topics} == {"telegram:-100:user:7"}


def test_a_members_rooms_in_a_server_are_theirs_alone() -> None:
    alice = make_event(is_dm=False, user_id="42", chat_id="g1", channel_id="c1")
    places = [
        "discord:g1:user:42",
        "discord:g1:channel:c1:user:42",
        "discord:g1:channel:c2:user:42",
        "discord:g1:channel:c2:user:142",  # another member
        "discord:g1:user:142",
        "discord:g2:channel:c1:user:42",  # another server
        "telegram:g1:channel:c1:user:42",  # another platform
        "discord:g1:channel:42",  # a channel's shared corner
        "discord:dm:42",  # a private chat
    ]
    assert member_places(alice, places) == [
        "discord:g1:channel:c1:user:42",
        "discord:g1:channel:c2:user:42",
        server_place(alice),
    ]


def test_channel_scope_in_a_group_is_shared_by_the_channel() -> None:
    alice = make_event(is_dm=False, user_id="alice", channel_id="c1")
    bob = make_event(is_dm=False, user_id="bob", channel_id="c1")
    elsewhere = make_event(is_dm=False, user_id="alice", channel_id="c2")
    assert scope_key("channel", alice) == scope_key("channel", bob)
    assert scope_key("channel", alice) != scope_key("channel", elsewhere)


def test_groups_on_different_servers_or_platforms_never_share() -> None:
    here = make_event(is_dm=False, chat_id="g1", channel_id="c1")
    other_guild = make_event(is_dm=False, chat_id="g2", channel_id="c1")
    other_platform = make_event(is_dm=False, chat_id="g1", channel_id="c1", platform="telegram")
    for scope in SCOPES:
        keys = {scope_key(scope, e) for e in (here, other_guild, other_platform)}
        assert len(keys) == 3


@pytest.mark.parametrize("scope", SCOPES)
def test_a_dm_never_shares_a_scope_with_a_group(scope: Literal["user", "channel"]) -> None:
    dm = make_event(is_dm=True, user_id="u1", channel_id="c1")
    group = make_event(is_dm=False, user_id="u1", channel_id="c1")
    group_keys = {scope_key("user", group), scope_key("channel", group)}
    assert scope_key(scope, dm) not in group_keys


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("is_dm", [False, True])
def test_an_anonymous_sender_has_the_channels_scope_never_a_personal_one(
    scope: Literal["user", "channel"], is_dm: bool
) -> None:
    """Anonymous senders (a Telegram group's anonymous admins) all come with one id: what
    one says goes to the channel's scope, the wall a channel-scoped persona keeps there."""
    one = replace(make_event(is_dm=is_dm, user_id="g1", channel_id="c1"), anonymous=True)
    member = make_event(is_dm=is_dm, user_id="g1", channel_id="c1")
    group = make_event(is_dm=False, user_id="g1", channel_id="c1")
    assert scope_key(scope, one) not in {scope_key("user", member), scope_key("user", group)}
    if not is_dm:
        assert scope_key(scope, one) == scope_key("channel", group)


def test_another_persona_is_heard_in_each_channel_apart() -> None:
    """Pip's words relayed to a persona of the same process (bot.groups.relay) stay in the channel
    they were said in, whatever the hearer's scope: a chat's channels have different readers."""
    mods = replace(
        make_event(is_dm=False, user_id="persona:pip", channel_id="mods"), from_persona=True
    )
    general = replace(mods, channel_id="general")
    for scope in SCOPES:
        assert scope_key(scope, mods) != scope_key(scope, general)
    # A user-scoped persona's conversation with Pip is neither the channel's nor a member's.
    member = make_event(is_dm=False, user_id="u1", channel_id="mods")
    assert scope_key("user", mods) not in {scope_key("channel", member), scope_key("user", member)}
    assert scope_key("channel", mods) == scope_key("channel", member)


# --- sessions --------------------------------------------------------------------------------


def test_a_session_opens_with_its_first_turn(clock: FakeClock) -> None:
    session = Session("pip", "s1")
    assert not session.is_open and not session.dirty
    first = clock.now()
    say(session, "hi", first)
    say(session, "hello", clock.advance(minutes=1), role="assistant")
    assert session.is_open and session.dirty
    assert session.started_at == first
    assert session.last_active == clock.now()


def test_idle_since_counts_from_the_last_turn(clock: FakeClock) -> None:
    session = Session("pip", "s1")
    assert not session.idle_since(clock.now() + timedelta(days=1), timedelta(minutes=5))
    say(session, "hi", clock.now())
    assert not session.idle_since(clock.advance(minutes=4), timedelta(minutes=5))
    assert session.idle_since(clock.advance(minutes=1), timedelta(minutes=5))


def test_snapshot_restore_round_trip_keeps_aware_datetimes() -> None:
    start = datetime(2026, 3, 1, 23, 30, tzinfo=TOKYO)
    session = Session("pip", "s1", state={"game": "round 2"})
    say(session, "こんにちは", start)
    say(session, "hi!", start + timedelta(seconds=30), role="assistant")
    session.turns[-1].emotion = "HAPPY"

    restored = Session.restore("pip", "s1", session.snapshot())

    assert restored.turns == session.turns
    assert restored.state == {"game": "round 2"}
    assert restored.started_at == start and restored.started_at.utcoffset() == timedelta(hours=9)
    assert restored.last_active == start + timedelta(seconds=30)
    assert all(t.at.tzinfo is not None for t in restored.turns)
    assert not restored.dirty


def test_answered_message_ids_are_saved_and_the_newest_kept() -> None:
    session = Session("pip", "s1")
    for number in range(HANDLED_KEPT + 5):
        session.note_answered(str(number))
    session.note_answered("")  # a surface with no message ids notes nothing

    restored = Session.restore("pip", "s1", session.snapshot())

    assert restored.handled == [str(n) for n in range(5, HANDLED_KEPT + 5)]
    assert restored.answered(str(HANDLED_KEPT + 4)) and not restored.answered("4")
    assert not restored.answered("")


def test_a_message_still_waiting_is_restored_as_said_and_answered() -> None:
    start = datetime(2026, 3, 1, 12, 0, tzinfo=TOKYO)
    session = Session("pip", "s1")
    say(session, "first", start)
    waiting = session.wait("m2", Turn("user", "Alice", "second", start + timedelta(seconds=5)))
    restored = Session.restore("pip", "s1", session.snapshot())
    assert [t.text for t in restored.turns] == ["first", "second"]
    assert restored.answered("m2") and restored.waiting == []
    assert restored.last_active == start + timedelta(seconds=5)

    session.taken(waiting)  # its turn took it: nothing waits in the next snapshot
    assert Session.restore("pip", "s1", session.snapshot()).turns == session.turns

    # Delivered again after a crash, an answered message never waits (or joins) a second time.
    session.add(waiting[1])
    session.note_answered("m2")
    session.wait("m2", Turn("user", "Alice", "second", start + timedelta(seconds=9)))
    restored = Session.restore("pip", "s1", session.snapshot())
    assert [t.text for t in restored.turns] == ["first", "second"]


def test_restore_of_an_empty_snapshot_is_a_fresh_session() -> None:
    restored = Session.restore("pip", "s1", {"turns": [], "state": {}, "started_at": None})
    assert not restored.is_open and restored.started_at is None and restored.last_active is None


# --- the manager -----------------------------------------------------------------------------


async def test_concurrent_first_calls_share_one_session(manager: SessionManager) -> None:
    sessions = await asyncio.gather(*(manager.get("pip", "s1") for _ in range(10)))
    assert all(s is sessions[0] for s in sessions)
    assert await manager.get("pip", "s1") is sessions[0]
    assert await manager.get("pip", "s2") is not sessions[0]
    assert await manager.get("miao", "s1") is not sessions[0]


async def test_get_loads_a_saved_session_from_the_store(
    store: Store, clock: FakeClock, manager: SessionManager
) -> None:
    saved = Session("pip", "s1")
    say(saved, "remember me", clock.now())
    await store.save_session("pip", "s1", saved.snapshot(), clock.now())

    session = await manager.get("pip", "s1")
    assert [t.text for t in session.turns] == ["remember me"]


async def test_a_session_busy_with_a_turn_is_saved_but_not_closed(
    store: Store, clock: FakeClock, manager: SessionManager
) -> None:
    session = await manager.get("pip", "busy")
    say(session, "hi", clock.now())
    clock.advance(hours=1)
    async with session.lock:  # a turn is waiting on the model
        assert await manager.save_dirty() == 1  # the user's message is safe already
        assert await manager.close_idle(lambda _, __: timedelta(minutes=5)) == 0
    assert not session.dirty and session.is_open
    row = await store.load_session("pip", "busy")
    assert row is not None and [t["text"] for t in row.snapshot["turns"]] == ["hi"]


async def test_a_change_made_while_saving_stays_dirty(
    store: Store, clock: FakeClock, manager: SessionManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = await manager.get("pip", "s1")
    say(session, "first", clock.now())
    real = store.save_sessions

    async def slow_save(*args: Any, **kwargs: Any) -> None:
        say(session, "second", clock.now())  # a turn lands while the write is in flight
        await real(*args, **kwargs)

    monkeypatch.setattr(store, "save_sessions", slow_save)
    await manager.save(session)
    monkeypatch.undo()

    assert session.dirty  # "second" is not in the store yet
    await manager.save_dirty()
    row = await store.load_session("pip", "s1")
    assert row is not None and [t["text"] for t in row.snapshot["turns"]] == ["first", "second"]


async def test_an_autosave_never_lands_on_top_of_an_archive(
    store: Store, clock: FakeClock, manager: SessionManager
) -> None:
    session = await manager.get("pip", "s1")
    say(session, "hi", clock.now())
    async with session.lock:
        closing = asyncio.create_task(manager.close(session, "end"))
        saving = asyncio.create_task(manager.save_dirty())
        await asyncio.gather(closing, saving)
    row = await store.load_session("pip", "s1")
    assert row is not None and row.snapshot["turns"] == []  # archived, not open as well
    assert await store.count_conversations("pip", "s1") == 1


async def test_a_cancel_during_the_archive_cannot_leave_it_half_done(
    store: Store, clock: FakeClock, manager: SessionManager
) -> None:
    session = await manager.get("pip", "s1")
    say(session, "hi", clock.now())
    closing = asyncio.create_task(manager.close(session, "end"))
    await asyncio.sleep(0)  # the archive has started
    closing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closing
    await manager.save_dirty()  # waits for the shielded archive, then has nothing to write
    assert not session.is_open
    assert await store.count_conversations("pip", "s1") == 1
    row = await store.load_session("pip", "s1")
    assert row is not None and row.snapshot["turns"] == []


async def test_save_dirty_saves_only_dirty_sessions(
    store: Store, clock: FakeClock, manager: SessionManager
) -> None:
    dirty = await manager.get("pip", "dirty")
    clean = await manager.get("pip", "clean")
    say(dirty, "hi", clock.now())

    assert await manager.save_dirty() == 1
    assert not dirty.dirty
    row = await store.load_session("pip", "dirty")
    assert row is not None and [t["text"] for t in row.snapshot["turns"]] == ["hi"]
    assert await store.load_session("pip", "clean") is None
    assert not clean.dirty

    assert await manager.save_dirty() == 0  # nothing changed since


async def test_close_archives_and_starts_fresh_but_keeps_state(
    store: Store, clock: FakeClock, manager: SessionManager
) -> None:
    session = await manager.get("pip", "s1")
    session.state["party"] = "Ann the bard"
    say(session, "hi", clock.now())
    say(session, "hello", clock.advance(seconds=5), role="assistant")
    clock.advance(minutes=1)

    conversation_id = await manager.close(session, "end")

    assert conversation_id is not None
    assert not session.is_open and session.turns == [] and session.started_at is None
    assert session.state == {"party": "Ann the bard"}
    assert not session.dirty
    [archived] = await store.conversations("pip", "s1")
    assert archived.id == conversation_id and archived.reason == "end"
    assert [t["text"] for t in archived.turns] == ["hi", "hello"]
    assert archived.ended_at == clock.now()
    row = await store.load_session("pip", "s1")
    assert row is not None
    assert row.snapshot["turns"] == [] and row.snapshot["state"] == {"party": "Ann the bard"}

    # The next turn opens a new conversation.
    say(session, "back again", clock.advance(minutes=1))
    assert session.started_at == clock.now()


async def test_hearsay_is_kept_while_open_and_never_archived(
    store: Store, clock: FakeClock, manager: SessionManager
) -> None:
    """Another persona's words, and the replies made with them in view, live in the open
    conversation only: a restart keeps them, a close or a fold leaves them out of the archive
    (so encoding never sees them), while the people's words go on to long-term memory."""
    session = await manager.get("pip", "s1")
    say(session, "Bob: a cider please", clock.now())
    say(session, "here you go", clock.advance(seconds=5), role="assistant")
    assert not session.hearsay
    session.add(Turn("user", "Bo", "Alice's cat is Mochi", clock.advance(seconds=5), hearsay=True))
    session.add(Turn("assistant", "Pip", "Mochi, cute", clock.advance(seconds=5), hearsay=True))
    say(session, "another one", clock.advance(seconds=5))
    await manager.save(session)
    restored = Session.restore("pip", "s1", session.snapshot())
    assert restored.turns == session.turns and restored.hearsay
    assert [t.hearsay for t in restored.turns] == [False, False, True, True, False]

    await manager.fold(session, 3, "they talked")
    assert session.hearsay  # (the summary holds what Bo said)
    await manager.close(session, "end")
    assert not session.hearsay
    archived = await store.conversations("pip", "s1")
    assert [[t["text"] for t in c.turns] for c in archived] == [
        ["another one"],
        ["Bob: a cider please", "here you go"],
    ]


async def test_closing_an_empty_session_does_nothing(store: Store, manager: SessionManager) -> None:
    session = await manager.get("pip", "s1")
    assert await manager.close(session, "end") is None
    assert await store.count_conversations("pip", "s1") == 0


async def test_close_with_a_failing_store_keeps_the_conversation_open(
    store: Store, clock: FakeClock, manager: SessionManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = await manager.get("pip", "s1")
    say(session, "don't lose me", clock.now())
    started = session.started_at

    async def broken(*args: object, **kwargs: object) -> int:
        raise StoreError("disk full")

    monkeypatch.setattr(store, "archive_conversation", broken)
    with pytest.raises(StoreError):
        await manager.close(session, "idle")

    assert [t.text for t in session.turns] == ["don't lose me"]
    assert session.started_at == started
    assert session.dirty  # still to be saved

    monkeypatch.undo()
    assert await manager.close(session, "idle") is not None
    [archived] = await store.conversations("pip", "s1")
    assert [t["text"] for t in archived.turns] == ["don't lose me"]


async def test_close_idle_waits_for_each_personas_idle_time(
    store: Store, clock: FakeClock, manager: SessionManager
) -> None:
    idle = {"quick": timedelta(minutes=5), "patient": timedelta(minutes=30)}
    quick = await manager.get("quick", "s1")
    patient = await manager.get("patient", "s1")
    empty = await manager.get("quick", "never-spoke")
    say(quick, "hi", clock.now())
    say(patient, "hi", clock.now())

    clock.advance(minutes=4, seconds=59)
    assert await manager.close_idle(lambda persona, _: idle[persona]) == 0

    clock.advance(seconds=1)
    assert await manager.close_idle(lambda persona, _: idle[persona]) == 1
    assert not quick.is_open and patient.is_open and not empty.is_open
    assert await store.count_conversations("quick", "s1") == 1

    clock.advance(minutes=25)
    assert await manager.close_idle(lambda persona, _: idle[persona]) == 1
    assert not patient.is_open
    assert await manager.close_idle(lambda persona, _: idle[persona]) == 0  # nothing left to close


async def test_recent_activity_keeps_a_conversation_open(
    clock: FakeClock, manager: SessionManager
) -> None:
    session = await manager.get("pip", "s1")
    say(session, "hi", clock.now())
    say(session, "still here", clock.advance(minutes=4))
    clock.advance(minutes=4)
    assert await manager.close_idle(lambda _, __: timedelta(minutes=5)) == 0
    assert session.is_open


async def test_restore_after_reopening_brings_back_open_conversations(
    tmp_path: Path, clock: FakeClock
) -> None:
    path = tmp_path / "restart.sqlite3"
    store = await Store.open(path)
    manager = SessionManager(store, clock)
    alice = await manager.get("pip", "discord:dm:alice")
    bob = await manager.get("miao", "telegram:dm:bob")
    say(alice, "hi from alice", clock.now())
    alice.state["mood"] = "sunny"
    say(bob, "hi from bob", clock.now())
    await manager.save_dirty()
    await store.close()

    store = await Store.open(path)
    try:
        manager = SessionManager(store, clock)
        assert await manager.restore(["pip", "miao"], ["discord", "telegram"]) == 2
        alice2 = await manager.get("pip", "discord:dm:alice")
        bob2 = await manager.get("miao", "telegram:dm:bob")
        assert [t.text for t in alice2.turns] == ["hi from alice"]
        assert alice2.turns == alice.turns
        assert alice2.state == {"mood": "sunny"}
        assert [t.text for t in bob2.turns] == ["hi from bob"]
        assert {(s.persona, s.scope) for s in manager.all()} == {
            ("pip", "discord:dm:alice"),
            ("miao", "telegram:dm:bob"),
        }
    finally:
        await store.close()


async def test_restore_leaves_other_processes_sessions_alone(
    clock: FakeClock, store: Store, manager: SessionManager
) -> None:
    for persona, scope in [
        ("pip", "console:dm:ann"),
        ("pip", "discord:dm:alice"),  # served by a running bot, not by this console
        ("miao", "console:dm:ann"),  # another persona
    ]:
        session = await manager.get(persona, scope)
        say(session, "hi", clock.now())
    await manager.save_dirty()

    console = SessionManager(store, clock)
    assert await console.restore(["pip"], ["console"]) == 1
    assert [(s.persona, s.scope) for s in console.all()] == [("pip", "console:dm:ann")]
    # Nothing else is closed by this process's idle sweeps.
    clock.advance(hours=1)
    assert await console.close_idle(lambda _, __: timedelta(minutes=5)) == 1
    assert await store.count_conversations("pip", "discord:dm:alice") == 0


async def test_wipe_forgets_turns_state_and_archive(
    store: Store, clock: FakeClock, manager: SessionManager
) -> None:
    session = await manager.get("pip", "s1")
    other = await manager.get("pip", "s2")
    say(session, "old", clock.now())
    await manager.close(session, "end")
    say(session, "new", clock.now())
    session.state["x"] = "1"
    say(other, "keep me", clock.now())
    await manager.save_dirty()

    await manager.wipe(session)

    assert session.turns == [] and session.state == {} and session.last_active is None
    assert await store.count_conversations("pip", "s1") == 0
    assert await store.load_session("pip", "s1") is None
    assert await store.load_session("pip", "s2") is not None


async def test_an_unreadable_snapshot_starts_afresh_instead_of_failing(
    store: Store, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    await store.save_session("pip", "console:dm:ann", {"turns": [{"role": "user"}]}, clock.now())
    manager = SessionManager(store, clock)
    assert await manager.restore(["pip"], ["console"]) == 1
    session = await manager.get("pip", "console:dm:ann")
    assert session.turns == [] and not session.is_open
    assert "unreadable session snapshot" in caplog.text


async def test_a_snapshot_that_is_not_json_starts_afresh(
    store: Store, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    await store.save_session("pip", "console:dm:ann", {"turns": []}, clock.now())
    # Damage it behind the store's back, as a disk error or a hand edit would.
    await store._db.execute("UPDATE sessions SET snapshot = '{not json'")
    await store._db.commit()
    manager = SessionManager(store, clock)
    session = await manager.get("pip", "console:dm:ann")
    assert session.turns == []
    assert "not a JSON object" in caplog.text


async def test_autosave_writes_many_sessions_a_batch_at_a_time(
    store: Store, clock: FakeClock, manager: SessionManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions = [await manager.get("pip", f"s{i}") for i in range(SAVE_BATCH + 5)]
    for session in sessions:
        say(session, "hello", clock.now())
    batches: list[int] = []
    real = store.save_sessions

    async def counted(snapshots: Any) -> None:
        batches.append(len(snapshots))
        say(sessions[0], "while saving", clock.now())  # a turn lands mid-write
        await real(snapshots)

    monkeypatch.setattr(store, "save_sessions", counted)
    assert await manager.save_dirty() == SAVE_BATCH + 5
    monkeypatch.undo()

    assert batches == [SAVE_BATCH, 5]
    assert [s for s in sessions if s.dirty] == [sessions[0]]  # its newest turn is not saved yet
    rows = await store.load_sessions(["pip"])
    assert len(rows) == SAVE_BATCH + 5
    await manager.save_dirty()
    row = await store.load_session("pip", "s0")
    assert row is not None
    assert [t["text"] for t in row.snapshot["turns"]] == ["hello", "while saving", "while saving"]


async def test_a_save_writes_the_session_s_row_and_each_older_turn_once(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The newest turns ride in the session's own row until they outgrow INLINE_CHARS, then
    get rows of their own, written once; through a fold, a close and a restart the store
    gives back the conversation as it is."""
    path = tmp_path / "turns.sqlite3"
    store = await Store.open(path)
    manager = SessionManager(store, clock)
    inline: list[list[str]] = []
    rows: list[list[str]] = []
    real = store.save_sessions

    async def recorded(saves: Sequence[SessionSave]) -> None:
        for save in saves:
            head, new = session_parts(save.snapshot, save.stored)
            inline.append([t["text"][:2] for t in head["turns"]])
            rows.append([t["text"][:2] for _, t in new])
        await real(saves)

    monkeypatch.setattr(store, "save_sessions", recorded)
    session = await manager.get("pip", "discord:dm:alice")
    third = INLINE_CHARS // 2 - 100  # three turns outgrow the session's row, two do not
    for n in range(3):
        say(session, f"q{n}" + "." * third, clock.now())
        await manager.save(session)
        say(session, f"a{n}" + "." * third, clock.now(), role="assistant")
        await manager.save(session)
    assert inline == [["q0"], ["q0", "a0"], [], ["a1"], ["a1", "q2"], []]
    assert rows == [[], [], ["q0", "a0", "q1"], [], [], ["a1", "q2", "a2"]]
    async with session.lock:
        await manager.fold(session, 4, "we said hello twice")
    say(session, "q3", clock.now())
    await manager.save(session)
    assert (inline[-1], rows[-1]) == (["q2", "a2", "q3"], [])
    row = await store.load_session("pip", "discord:dm:alice")
    assert row is not None and [t["text"][:2] for t in row.snapshot["turns"]] == ["q2", "a2", "q3"]
    await store.close()

    store = await Store.open(path)
    try:
        manager = SessionManager(store, clock)
        again = await manager.get("pip", "discord:dm:alice")
        assert again.turns == session.turns and again.summary == "we said hello twice"
        async with again.lock:
            await manager.close(again, "end")
        say(again, "new day", clock.now())
        await manager.save(again)
        row = await store.load_session("pip", "discord:dm:alice")
        assert row is not None and [t["text"] for t in row.snapshot["turns"]] == ["new day"]
        [closed, folded] = await store.conversations("pip", "discord:dm:alice")
        assert [t["text"][:2] for t in folded.turns] == ["q0", "a0", "q1", "a1"]
        assert [t["text"][:2] for t in closed.turns] == ["q2", "a2", "q3"]
    finally:
        await store.close()


async def test_a_snapshot_that_holds_every_turn_is_restored_and_saved_on(
    tmp_path: Path, clock: FakeClock
) -> None:
    """A session saved before turns had rows of their own (its row holds them all) is
    restored with them; its next save gives them rows, as it does any turns that outgrow
    the session's row."""
    store = await Store.open(tmp_path / "kizuna.sqlite3")
    try:
        old = Session("pip", "discord:dm:alice")
        for text in ("from before", "." * INLINE_CHARS):
            say(old, text, clock.now())
        snapshot = {k: v for k, v in old.snapshot().items() if k not in ("first", "rows")}
        await store._write(
            "INSERT INTO sessions VALUES ('pip', 'discord:dm:alice', ?, 0)",
            (json.dumps(snapshot),),
        )
        manager = SessionManager(store, clock)
        session = await manager.get("pip", "discord:dm:alice")
        assert session.turns == old.turns
        say(session, "and now", clock.now())
        await manager.save(session)
        assert await store._all("SELECT seq FROM session_turns") == [(0,), (1,), (2,)]
        row = await store.load_session("pip", "discord:dm:alice")
        assert row is not None
        assert [t["text"][:4] for t in row.snapshot["turns"]] == ["from", "....", "and "]
    finally:
        await store.close()


async def test_saves_asked_for_together_share_one_write(
    store: Store, clock: FakeClock, manager: SessionManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions = [await manager.get("pip", f"s{i}") for i in range(30)]
    for session in sessions:
        say(session, "hello", clock.now())
    writes: list[int] = []
    real = store.save_sessions

    async def counted(snapshots: Any) -> None:
        writes.append(len(snapshots))
        await real(snapshots)

    monkeypatch.setattr(store, "save_sessions", counted)
    await asyncio.gather(*(manager.save(s) for s in sessions))
    assert sum(writes) == 30 and len(writes) <= 2  # the first alone, the rest together
    assert not any(s.dirty for s in sessions)
    assert len(await store.load_sessions(["pip"])) == 30

    async def broken(snapshots: Any) -> None:
        raise StoreError("disk full")

    monkeypatch.setattr(store, "save_sessions", broken)
    say(sessions[0], "again", clock.now())
    say(sessions[1], "again", clock.now())
    results = await asyncio.gather(
        manager.save(sessions[0]), manager.save(sessions[1]), return_exceptions=True
    )
    assert [type(r) for r in results] == [StoreError, StoreError]  # each caller hears of it
    assert sessions[0].dirty and sessions[1].dirty  # autosave tries again


# --- one conversation, two processes (a shared PostgreSQL) ----------------------------------


@dataclass(slots=True)
class Processes:
    """Two processes' session managers on one database (two stores: two sets of connections,
    two process names), and each one's copy of one conversation."""

    a: SessionManager
    b: SessionManager
    in_a: Session
    in_b: Session
    stores: tuple[PgStore, PgStore]  # a's and b's connections to the database they share

    @property
    def store(self) -> PgStore:
        return self.stores[0]

    def __iter__(self) -> Iterator[Any]:
        return iter((self.a, self.b, self.in_a, self.in_b))


@pytest.fixture
async def processes(postgres_dsn: str, clock: FakeClock) -> AsyncIterator[Processes]:
    from memory.storage.postgres import PgStore

    first, second = await PgStore.open(postgres_dsn), await PgStore.open(postgres_dsn)
    a, b = SessionManager(first, clock), SessionManager(second, clock)
    in_a, in_b = await a.get("pip", "telegram:7"), await b.get("pip", "telegram:7")
    yield Processes(a, b, in_a, in_b, (first, second))
    await first.close()
    await second.close()


def waits(session: Session, message_id: str, text: str, at: datetime) -> tuple[str, Turn]:
    """A message from Alice that has to wait for the conversation."""
    return session.wait(message_id, Turn("user", "Alice", text, at, "u1"))


async def take_turn(manager: SessionManager, session: Session, text: str, at: datetime) -> None:
    async with session.lock:
        say(session, text, at)
        await manager.save(session)


def texts(session: Session) -> list[str]:
    return [t.text for t in session.turns]


@pytest.mark.parametrize(
    "pad", ["", "." * (INLINE_CHARS // 2)], ids=["in-its-row", "in-rows-of-their-own"]
)
async def test_two_processes_take_one_conversations_turns_in_order(
    processes: Processes, clock: FakeClock, pad: str
) -> None:
    """Short turns travel in the session's own row, long ones in rows of their own: either
    way the lease brings in what the other process said."""
    a, b, in_a, in_b = processes

    def said(session: Session) -> list[str]:
        return [t.text.removesuffix(pad) for t in session.turns]

    async with in_a.lock:
        say(in_a, "first" + pad, clock.now())
        await a.save(in_a)
        second = asyncio.create_task(take_turn(b, in_b, "second" + pad, clock.now()))
        with pytest.raises(TimeoutError):  # it waits while this process takes its turn
            await asyncio.wait_for(asyncio.shield(second), 0.3)
        say(in_a, "reply to first" + pad, clock.now(), role="assistant")
        await a.save(in_a)
    await second
    assert said(in_b) == ["first", "reply to first", "second"]
    await take_turn(a, in_a, "third" + pad, clock.now())  # and the first sees the second's
    assert said(in_a) == ["first", "reply to first", "second", "third"]
    assert in_a.stored == (4 if pad else 0)
    row = await processes.store.load_session("pip", "telegram:7")
    assert row is not None and [t["text"] for t in row.snapshot["turns"]] == texts(in_a)


async def test_a_snapshot_being_written_lands_before_the_lease_is_given_back(
    processes: Processes, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An autosave under way when the turn ends is written before the other process may
    take the conversation: written after, it would land on top of that process's turns."""
    a, b, in_a, in_b = processes
    writing, written = asyncio.Event(), asyncio.Event()
    real = processes.stores[0].save_sessions

    async def slow(saves: Sequence[SessionSave]) -> None:
        writing.set()
        await written.wait()
        await real(saves)

    async with in_a.lock:
        say(in_a, "first", clock.now())
        await a.save(in_a)
        say(in_a, "reply to first", clock.now(), role="assistant")
        monkeypatch.setattr(processes.stores[0], "save_sessions", slow)
        autosave = asyncio.create_task(a.save_dirty())
        await writing.wait()
    second = asyncio.create_task(take_turn(b, in_b, "second", clock.now()))
    with pytest.raises(TimeoutError):  # the lease waits for the snapshot
        await asyncio.wait_for(asyncio.shield(second), 0.3)
    written.set()
    assert await autosave == 1
    await asyncio.wait_for(second, 10)
    assert texts(in_b) == ["first", "reply to first", "second"]
    row = await processes.store.load_session("pip", "telegram:7")
    assert row is not None and [t["text"] for t in row.snapshot["turns"]] == texts(in_b)


async def test_a_process_that_dies_mid_turn_leaves_the_conversation_to_another(
    processes: Processes, clock: FakeClock
) -> None:
    a, b, in_a, in_b = processes
    await in_a.lock.acquire()
    say(in_a, "said before the crash", clock.now())
    await a.save(in_a)
    await processes.store.close()  # its connections go, and the lease with them; nothing given back
    await asyncio.wait_for(take_turn(b, in_b, "after", clock.now()), 10)
    assert texts(in_b) == ["said before the crash", "after"]


async def test_a_conversation_wiped_in_one_process_is_gone_in_the_other(
    processes: Processes, clock: FakeClock
) -> None:
    a, b, in_a, in_b = processes
    await take_turn(a, in_a, "secret", clock.now())
    await take_turn(b, in_b, "more", clock.now())
    async with in_a.lock:
        await a.wipe(in_a)
    async with in_b.lock:
        assert texts(in_b) == [] and in_b.state == {}


async def test_a_process_without_the_lease_writes_nothing_until_it_has_it(
    processes: Processes, clock: FakeClock
) -> None:
    a, b, in_a, in_b = processes
    async with in_a.lock:
        say(in_a, "first", clock.now())
        await a.save(in_a)
        # A message the other process keeps while it waits for the conversation.
        waits(in_b, "m2", "second", clock.now())
        assert await b.save_dirty() == 0 and in_b.dirty
        row = await processes.store.load_session("pip", "telegram:7")
        assert row is not None and row.snapshot["waiting"] == []
        assert [t["text"] for t in row.snapshot["turns"]] == ["first"]
    async with in_b.lock:  # taken: the other's turns come in, the waiting message stays
        assert texts(in_b) == ["first"] and [t.text for _, t in in_b.waiting] == ["second"]
        assert await b.save_dirty() == 1
    row = await processes.store.load_session("pip", "telegram:7")
    assert row is not None and [w["text"] for w in row.snapshot["waiting"]] == ["second"]


async def test_idle_closing_in_two_processes_archives_the_conversation_once(
    processes: Processes, clock: FakeClock
) -> None:
    a, b, in_a, in_b = processes
    await take_turn(a, in_a, "hello", clock.now())
    await take_turn(b, in_b, "anyone?", clock.now())
    clock.advance(hours=1)
    idle = lambda _, __: timedelta(minutes=5)  # noqa: E731
    assert await b.close_idle(idle) == 1
    assert await a.close_idle(idle) == 0  # its copy looked idle: taking it showed it closed
    assert await processes.store.count_conversations("pip", "telegram:7") == 1
    assert not in_a.is_open


async def inbox(store: PgStore) -> list[str]:
    """The message ids processes keep in the store's inbox while they wait."""
    rows = await store._pool.fetch("SELECT message_id FROM conversation_inbox ORDER BY seq")
    return [r[0] for r in rows]


async def test_a_message_waiting_for_another_process_is_kept_until_it_is_saved(
    processes: Processes, clock: FakeClock
) -> None:
    _, b, in_a, in_b = processes
    async with in_a.lock:
        waiting = waits(in_b, "m2", "second", clock.now())
        turn = asyncio.create_task(in_b.lock.acquire())
        assert await b.save_dirty() == 0  # its snapshot is not its to write...
        assert await inbox(processes.store) == ["m2"]  # ...but the message is kept
    await turn
    in_b.taken(waiting)
    in_b.add(waiting[1])
    in_b.note_answered("m2")
    in_b.lock.release()
    assert await b.save_dirty() == 1
    assert await inbox(processes.store) == []  # in the snapshot now


async def test_messages_a_process_kept_when_it_died_are_taken_in_by_the_next(
    processes: Processes, clock: FakeClock
) -> None:
    a, b, in_a, in_b = processes
    async with in_a.lock:
        say(in_a, "first", clock.now())
        await a.save(in_a)
        waits(in_b, "m2", "second", clock.now())
        waits(in_b, "m3", "third", clock.now())
        assert await b.save_dirty() == 0 and await inbox(processes.store) == ["m2", "m3"]
        await processes.stores[1].close()  # b dies waiting
    await take_turn(a, in_a, "fourth", clock.now())
    assert texts(in_a) == ["first", "second", "third", "fourth"]  # said, and unanswered
    assert in_a.answered("m2") and in_a.answered("m3") and await inbox(processes.store) == []
