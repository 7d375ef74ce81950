"""The stores' intentions, contacts and outreach ledger (memory.storage.IntentionStore and
ContactStore), on SQLite and on PostgreSQL: pending intentions deduplicated, yearly ones
rolling on, scope walls, contacts learning their hours, a message claimed once (across
processes on PostgreSQL), and a private chat's wipe taking its person's rows."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import pytest

from memory.records import ArchiveWrite, EncodingWrite, NewIntention, OutreachState
from memory.storage import Storage
from memory.storage.postgres import PgStore
from memory.storage.postgres.base import MIGRATIONS as PG_MIGRATIONS
from memory.storage.sqlite import Store
from memory.storage.sqlite.base import MIGRATIONS as SQLITE_MIGRATIONS
from tests.fakes.postgres import StoreOpener

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
DM = "miao/telegram:dm:7"  # user 7's private chat with miao
GROUP = "miao/telegram:-100:user:7"  # user 7's corner of a group


@pytest.fixture
async def store(open_store: StoreOpener, tmp_path: Path) -> AsyncIterator[Storage]:
    opened = await open_store(tmp_path / "kizuna.sqlite3")
    yield opened
    await opened.close()


def exam(
    scope: str = DM, *, due: datetime = T0 + timedelta(days=1), **fields: object
) -> NewIntention:
    intention = NewIntention(
        scope=scope,
        user_id="7",
        kind="follow_up",
        what="her exam",
        ask="ask how the exam went",
        due_at=due,
        until=due + timedelta(days=3),
        created_at=T0,
    )
    return replace(intention, **fields)  # type: ignore[arg-type]


def birthday(due: datetime) -> NewIntention:
    return exam(
        kind="special_day",
        what="her birthday",
        ask="wish her a happy birthday",
        due=due,
        until=due + timedelta(days=1),
        yearly=True,
    )


async def archive(store: Storage, scope: str = DM) -> int:
    persona, _, room = scope.partition("/")
    return await store.archive_conversation(
        ArchiveWrite(
            persona,
            room,
            started_at=T0 - timedelta(minutes=5),
            ended_at=T0,
            reason="idle",
            turns=[{"role": "user", "text": "my exam is tomorrow"}],
            snapshot={"turns": []},
        )
    )


def encoding(conversation_id: int, *intentions: NewIntention) -> EncodingWrite:
    return EncodingWrite(
        conversation_id=conversation_id,
        scope=DM,
        at=T0,
        memories=[],
        sibling_links=[],
        merges=(),
        diary=None,
        profiles=[],
        recap="an exam",
        intentions=intentions,
    )


# --- intentions ------------------------------------------------------------------------------


async def test_an_intention_is_kept_with_all_it_was_given(store: Storage) -> None:
    given = exam(conversation_id=None)
    new_id = await store.add_intention(given)
    [kept] = await store.intentions(DM)
    assert kept.id == new_id
    assert (kept.scope, kept.user_id, kept.kind, kept.what, kept.ask) == (
        DM,
        "7",
        "follow_up",
        "her exam",
        "ask how the exam went",
    )
    assert (kept.due_at, kept.until, kept.created_at) == (given.due_at, given.until, T0)
    assert (kept.state, kept.yearly, kept.done_at, kept.conversation_id) == (
        "pending",
        False,
        None,
        None,
    )


async def test_the_same_pending_intention_added_twice_is_one(store: Storage) -> None:
    first = await store.add_intention(exam())
    assert await store.add_intention(exam(ask="ask about the exam")) == first
    later = await store.add_intention(exam(due=T0 + timedelta(days=2)))
    other_user = await store.add_intention(exam(user_id="8"))
    assert len({first, later, other_user}) == 3
    assert len(await store.intentions(DM)) == 3


async def test_a_closed_intention_does_not_stop_a_new_one(store: Storage) -> None:
    first = await store.add_intention(exam())
    assert await store.close_intention(DM, first, "done", T0 + timedelta(days=1))
    again = await store.add_intention(exam())
    assert again != first
    assert [i.id for i in await store.intentions(DM)] == [again]


async def test_intentions_are_soonest_first_per_user_and_open_only(store: Storage) -> None:
    late = await store.add_intention(exam(due=T0 + timedelta(days=5), what="the move"))
    soon = await store.add_intention(exam(due=T0 + timedelta(days=1)))
    theirs = await store.add_intention(exam(user_id="8", what="his trip"))
    assert [i.id for i in await store.intentions(DM)] == [soon, theirs, late]
    assert [i.id for i in await store.intentions(DM, "7")] == [soon, late]
    await store.close_intention(DM, soon, "cancelled", T0)
    assert [i.id for i in await store.intentions(DM, "7")] == [late]
    every = await store.intentions(DM, "7", open_only=False)
    assert [(i.id, i.state, i.done_at) for i in every] == [
        (soon, "cancelled", T0),
        (late, "pending", None),
    ]


async def test_the_one_due_is_the_soonest_pending_in_its_window(store: Storage) -> None:
    now = T0 + timedelta(days=5)
    await store.add_intention(exam(due=T0, what="early"))  # its window closed two days ago
    due = await store.add_intention(exam(due=now - timedelta(hours=2), what="due"))
    sooner = await store.add_intention(exam(due=now - timedelta(hours=3), what="sooner"))
    await store.close_intention(DM, sooner, "done", now)
    await store.add_intention(exam(due=now + timedelta(hours=1), what="later"))  # not yet
    await store.add_intention(exam(due=now - timedelta(hours=4), user_id="8"))  # another's
    await store.add_intention(exam(GROUP, due=now - timedelta(hours=4)))  # another scope's
    found = await store.due_intention(DM, "7", now)
    assert found is not None and found.id == due
    assert await store.due_intention(DM, "7", now - timedelta(hours=3)) is None


async def test_an_intention_of_another_members_words_is_never_the_one_due(
    store: Storage,
) -> None:
    now = T0 + timedelta(days=1)
    await store.add_intention(exam(GROUP, due=now - timedelta(hours=3), said_by="8"))
    await store.add_intention(exam(GROUP, due=now - timedelta(hours=2), what="b", said_by=""))
    assert await store.due_intention(GROUP, "7", now) is None  # "": kept before it was known
    own = await store.add_intention(exam(GROUP, due=now - timedelta(hours=1), said_by="7"))
    found = await store.due_intention(GROUP, "7", now)
    assert found is not None and found.id == own


async def test_a_scope_is_a_wall_for_intentions(store: Storage) -> None:
    mine = await store.add_intention(exam(DM))
    await store.add_intention(exam(GROUP))
    assert [i.scope for i in await store.intentions(GROUP)] == [GROUP]
    assert not await store.close_intention(GROUP, mine, "done", T0)
    assert [i.state for i in await store.intentions(DM)] == ["pending"]


async def test_a_scope_that_is_not_one_is_refused(store: Storage) -> None:
    with pytest.raises(ValueError, match="not a scope"):
        await store.add_intention(exam("no-persona-here"))


async def test_due_intentions_are_the_personas_pending_ones_due_by_now(store: Storage) -> None:
    now = T0 + timedelta(days=2)
    first = await store.add_intention(exam(DM, due=T0 + timedelta(hours=1)))
    second = await store.add_intention(exam(GROUP, due=T0 + timedelta(days=1)))
    await store.add_intention(exam(DM, due=now + timedelta(seconds=1), what="later"))
    closed = await store.add_intention(exam(DM, due=T0, what="closed"))
    await store.close_intention(DM, closed, "done", T0)
    await store.add_intention(exam("pip/telegram:dm:7", due=T0))  # another persona's
    assert [i.id for i in await store.due_intentions("miao", now, limit=10)] == [first, second]
    assert [i.id for i in await store.due_intentions("miao", now, limit=1)] == [first]


async def test_due_intentions_asked_only_are_their_own_reminders_and_those_past_due(
    store: Storage,
) -> None:
    now = T0 + timedelta(days=5)
    await store.add_intention(exam(DM, due=T0 + timedelta(days=4)))  # a follow-up
    past = await store.add_intention(birthday(T0))  # past its until: to roll on
    asked = await store.add_intention(exam(DM, due=T0 + timedelta(days=4), kind="reminder"))
    theirs = exam(GROUP, due=T0 + timedelta(days=4), kind="reminder", said_by="8")
    await store.add_intention(theirs)  # another member's words
    found = await store.due_intentions("miao", now, limit=10, asked_only=True)
    assert [i.id for i in found] == [past, asked]
    assert len(await store.due_intentions("miao", now, limit=10)) == 4


async def test_intentions_past_their_window_are_missed_at_once_but_yearly_ones(
    store: Storage,
) -> None:
    now = T0 + timedelta(days=5)
    gone = await store.add_intention(exam(DM, due=T0))  # until T0 + 3 days: passed
    gone_too = await store.add_intention(exam(GROUP, due=T0, what="the move"))
    open_still = await store.add_intention(exam(DM, due=T0 + timedelta(days=3), what="later"))
    done = await store.add_intention(exam(DM, due=T0, what="done"))
    await store.close_intention(DM, done, "done", T0)
    yearly = await store.add_intention(birthday(T0))  # rolls on through close_intention
    await store.add_intention(exam("pip/telegram:dm:7", due=T0))  # another persona's
    assert await store.miss_intentions("miao", now) == 2
    assert await store.miss_intentions("miao", now) == 0
    states = {i.id: (i.state, i.done_at) for i in await store.intentions(DM, open_only=False)}
    states |= {i.id: (i.state, i.done_at) for i in await store.intentions(GROUP, open_only=False)}
    assert states[gone] == states[gone_too] == ("missed", now)
    assert states[done] == ("done", T0)
    assert states[open_still][0] == states[yearly][0] == "pending"
    assert [i.state for i in await store.intentions("pip/telegram:dm:7")] == ["pending"]
    assert await store.is_pending(DM, open_still) and await store.is_pending(DM, yearly)
    assert not await store.is_pending(DM, gone) and not await store.is_pending(DM, done)
    assert not await store.is_pending(GROUP, open_still)  # another scope's


async def test_whoever_closes_an_intention_first_wins(store: Storage) -> None:
    new_id = await store.add_intention(exam())
    at = T0 + timedelta(days=1)
    assert await store.close_intention(DM, new_id, "done", at)
    assert not await store.close_intention(DM, new_id, "missed", at)
    assert not await store.close_intention(DM, new_id + 1000, "done", at)
    [kept] = await store.intentions(DM, open_only=False)
    assert (kept.state, kept.done_at) == ("done", at)


async def test_a_yearly_intention_done_is_pending_again_a_year_on(store: Storage) -> None:
    due = datetime(2026, 12, 5, 9, 0, tzinfo=UTC)
    new_id = await store.add_intention(birthday(due))
    assert not await store.close_intention(DM, new_id, "done", due - timedelta(hours=1))
    assert await store.close_intention(DM, new_id, "done", due + timedelta(hours=2))
    [kept] = await store.intentions(DM)
    assert (kept.id, kept.state) == (new_id, "pending")
    assert (kept.due_at, kept.until) == (due.replace(year=2027), due.replace(year=2027, day=6))
    assert kept.done_at == due + timedelta(hours=2)
    # Closing it again the same day finds it not due: the greeting went once.
    assert not await store.close_intention(DM, new_id, "done", due + timedelta(hours=3))


async def test_a_missed_yearly_intention_rolls_on_too(store: Storage) -> None:
    due = datetime(2028, 2, 29, 9, 0, tzinfo=UTC)  # a leap day: the 28th in other years
    new_id = await store.add_intention(birthday(due))
    assert await store.close_intention(DM, new_id, "missed", due + timedelta(days=2))
    [kept] = await store.intentions(DM)
    assert (kept.state, kept.done_at) == ("pending", None)
    assert (kept.due_at, kept.until) == (
        datetime(2029, 2, 28, 9, 0, tzinfo=UTC),
        datetime(2029, 3, 1, 9, 0, tzinfo=UTC),
    )


async def test_a_yearly_intention_cancelled_stays_cancelled(store: Storage) -> None:
    due = datetime(2026, 12, 5, 9, 0, tzinfo=UTC)
    new_id = await store.add_intention(birthday(due))
    assert await store.close_intention(DM, new_id, "cancelled", T0)
    assert await store.intentions(DM) == []


async def test_a_yearly_intention_already_pending_next_year_is_simply_closed(
    store: Storage,
) -> None:
    due = datetime(2026, 12, 5, 9, 0, tzinfo=UTC)
    this_year = await store.add_intention(birthday(due))
    next_year = await store.add_intention(birthday(due.replace(year=2027)))
    assert await store.close_intention(DM, this_year, "done", due)
    assert [(i.id, i.state) for i in await store.intentions(DM, open_only=False)] == [
        (this_year, "done"),
        (next_year, "pending"),
    ]


async def test_encoding_writes_its_intentions_with_the_conversation(store: Storage) -> None:
    conversation = await archive(store)
    said = exam(conversation_id=conversation)
    written = encoding(conversation, said, replace(said, what="the move"))
    assert await store.commit_encoding(written) == []
    kept = await store.intentions(DM)
    assert [(i.what, i.conversation_id) for i in kept] == [
        ("her exam", conversation),
        ("the move", conversation),
    ]
    # Encoded already: nothing is written twice.
    assert await store.commit_encoding(written) is None
    assert len(await store.intentions(DM)) == 2


async def test_encoding_keeps_one_of_an_intention_already_pending(store: Storage) -> None:
    before = await store.add_intention(exam())
    conversation = await archive(store)
    await store.commit_encoding(encoding(conversation, exam(conversation_id=conversation)))
    assert [i.id for i in await store.intentions(DM)] == [before]


# --- contacts --------------------------------------------------------------------------------


async def test_an_unknown_contact_is_none(store: Storage) -> None:
    assert await store.contact("miao", "telegram", "7") is None


async def test_hearing_someone_counts_their_hours_and_remembers_privacy(store: Storage) -> None:
    await store.heard("miao", "telegram", "7", T0, private=False)
    first = await store.contact("miao", "telegram", "7")
    assert first is not None
    assert (first.private, first.last_heard, first.last_answered) == (False, T0, None)
    assert first.hours[12] == 1 and sum(first.hours) == 1
    assert first.unanswered
    await store.heard("miao", "telegram", "7", T0 + timedelta(minutes=5), private=True)
    await store.heard("miao", "telegram", "7", T0 + timedelta(hours=9), private=False)
    # An older message heard late does not move last_heard back.
    await store.heard("miao", "telegram", "7", T0 - timedelta(hours=1), private=False)
    later = await store.contact("miao", "telegram", "7")
    assert later is not None
    assert later.private  # once true, it stays
    assert later.last_heard == T0 + timedelta(hours=9)
    assert (later.hours[11], later.hours[12], later.hours[21], sum(later.hours)) == (1, 2, 1, 4)


async def test_contacts_noted_at_once_are_each_written_when_their_callers_return(
    store: Storage,
) -> None:
    """Many turns' notes at the same moment (committed together): each caller returns with
    its note written, and every one counts."""
    people = [str(n) for n in range(20)]
    await asyncio.gather(
        *(store.heard("miao", "telegram", p, T0, private=True) for p in people),
        *(store.answered("miao", "telegram", p, T0 + timedelta(seconds=1)) for p in people),
        store.heard("miao", "telegram", "0", T0 + timedelta(seconds=2), private=False),
    )
    for p in people:
        contact = await store.contact("miao", "telegram", p)
        assert contact is not None
        assert contact.last_answered == T0 + timedelta(seconds=1)
        assert sum(contact.hours) == (2 if p == "0" else 1)
    first = await store.contact("miao", "telegram", "0")
    assert first is not None and first.last_heard == T0 + timedelta(seconds=2)
    assert isinstance(store, Store | PgStore)
    assert store._soon._writer is None  # nothing left being written


async def test_a_failed_group_commit_fails_each_of_its_callers(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "kizuna.sqlite3")
    try:
        bad = store._soon([("INSERT INTO no_such_table VALUES (?)", (1,))])
        good = store.heard("miao", "telegram", "7", T0, private=True)
        results = await asyncio.gather(bad, good, return_exceptions=True)
        assert all(isinstance(r, sqlite3.OperationalError) for r in results)
        assert await store.contact("miao", "telegram", "7") is None  # rolled back together
        await store.heard("miao", "telegram", "7", T0, private=True)  # the next one is written
        assert await store.contact("miao", "telegram", "7") is not None
    finally:
        await store.close()


async def test_an_answer_is_remembered(store: Storage) -> None:
    await store.heard("miao", "telegram", "7", T0, private=True)
    await store.answered("miao", "telegram", "7", T0 + timedelta(seconds=3))
    contact = await store.contact("miao", "telegram", "7")
    assert contact is not None
    assert contact.last_answered == T0 + timedelta(seconds=3)
    assert not contact.unanswered


async def test_set_contact_changes_only_what_is_given(store: Storage) -> None:
    await store.set_contact("miao", "telegram", "7", timezone="Asia/Shanghai", at=T0)
    made = await store.contact("miao", "telegram", "7")
    assert made is not None
    assert (made.timezone, made.quiet, made.refused_at, made.private) == (
        "Asia/Shanghai",
        False,
        None,
        False,
    )
    assert made.hours == (0,) * 24 and made.last_heard is None
    await store.set_contact("miao", "telegram", "7", quiet=True, at=T0)
    await store.set_contact("miao", "telegram", "7", refused_at=T0 + timedelta(days=1), at=T0)
    changed = await store.contact("miao", "telegram", "7")
    assert changed is not None
    assert (changed.timezone, changed.quiet, changed.refused_at) == (
        "Asia/Shanghai",
        True,
        T0 + timedelta(days=1),
    )
    await store.set_contact("miao", "telegram", "7", quiet=False, at=T0)
    unquiet = await store.contact("miao", "telegram", "7")
    assert unquiet is not None and not unquiet.quiet


async def test_a_voice_choice_is_none_until_said_then_kept(store: Storage) -> None:
    await store.heard("miao", "telegram", "7", T0, private=True)
    heard = await store.contact("miao", "telegram", "7")
    assert heard is not None and heard.voice is None  # the persona's [voice] decides
    await store.set_contact("miao", "telegram", "7", voice=False, at=T0)
    await store.set_contact("miao", "telegram", "7", quiet=True, at=T0)  # leaves it
    off = await store.contact("miao", "telegram", "7")
    assert off is not None and (off.voice, off.quiet) == (False, True)
    await store.set_contact("miao", "telegram", "8", voice=True, at=T0)  # a new contact
    on = await store.contact("miao", "telegram", "8")
    assert on is not None and on.voice is True and not on.private


async def test_contacts_are_those_heard_before_a_time_privately_by_default(
    store: Storage,
) -> None:
    await store.heard("miao", "telegram", "1", T0 - timedelta(days=4), private=True)
    await store.heard("miao", "telegram", "2", T0 - timedelta(days=5), private=False)
    await store.heard("miao", "telegram", "3", T0, private=True)  # heard lately
    await store.heard("miao", "discord", "4", T0 - timedelta(days=4), private=True)
    await store.heard("pip", "telegram", "5", T0 - timedelta(days=4), private=True)
    await store.set_contact("miao", "telegram", "6", quiet=True, at=T0)  # never heard
    since = T0 - timedelta(days=3)
    private = await store.contacts("miao", "telegram", heard_before=since)
    assert [c.user_id for c in private] == ["1"]
    every = await store.contacts("miao", "telegram", private=False, heard_before=since)
    assert [c.user_id for c in every] == ["2", "1"]  # longest silent first


# --- the outreach ledger ---------------------------------------------------------------------


async def claim(store: Storage, key: str, at: datetime, *, by: str = "a") -> bool:
    return await store.claim_outreach(
        "miao", "telegram", "7", key, by=by, at=at, stale_before=at - timedelta(minutes=10)
    )


async def test_a_message_is_claimed_once(store: Storage) -> None:
    assert await claim(store, "intention:1", T0)
    assert not await claim(store, "intention:1", T0, by="b")
    assert await claim(store, "intention:2", T0, by="b")
    assert await store.claim_outreach(
        "miao", "telegram", "8", "intention:1", by="b", at=T0, stale_before=T0
    )
    [second, first] = await store.outreach("miao", "telegram", "7", since=T0)
    assert {(first.key, first.by), (second.key, second.by)} == {
        ("intention:1", "a"),
        ("intention:2", "b"),
    }
    assert first.state == second.state == "claimed"


async def test_a_stale_claim_may_be_taken_over_and_no_other_state(store: Storage) -> None:
    assert await claim(store, "intention:1", T0)
    assert not await claim(store, "intention:1", T0 + timedelta(minutes=9), by="b")
    later = T0 + timedelta(minutes=11)  # the claimer died before sending
    assert await claim(store, "intention:1", later, by="b")
    [taken] = await store.outreach("miao", "telegram", "7", since=T0)
    assert (taken.state, taken.at, taken.by) == ("claimed", later, "b")
    closed: tuple[OutreachState, ...] = ("sending", "sent", "refused", "dropped")
    for state in closed:
        key = f"checkin:{state}"
        assert await claim(store, key, T0)
        await store.outreach_state("miao", "telegram", "7", key, state, T0)
        assert not await claim(store, key, T0 + timedelta(days=30), by="b")


async def test_the_ledger_is_newest_first_since_a_time(store: Storage) -> None:
    await claim(store, "intention:1", T0)
    await claim(store, "intention:2", T0 + timedelta(days=1))
    await claim(store, "intention:3", T0 + timedelta(days=2))
    await store.outreach_state(
        "miao", "telegram", "7", "intention:1", "sent", T0 + timedelta(days=3)
    )
    found = await store.outreach("miao", "telegram", "7", since=T0 + timedelta(days=1))
    assert [(o.key, o.state) for o in found] == [
        ("intention:1", "sent"),
        ("intention:3", "claimed"),
        ("intention:2", "claimed"),
    ]
    assert await store.outreach("pip", "telegram", "7", since=T0) == []


async def test_many_peoples_contacts_and_ledgers_are_read_at_once(store: Storage) -> None:
    for user_id in ("7", "8", "9"):
        await store.heard("miao", "telegram", user_id, T0, private=True)
    await store.heard("pip", "telegram", "7", T0, private=True)
    await claim(store, "intention:1", T0)
    await claim(store, "intention:2", T0 + timedelta(days=1))
    await store.claim_outreach("miao", "telegram", "8", "checkin:x", by="a", at=T0, stale_before=T0)
    await store.claim_outreach("miao", "telegram", "9", "checkin:y", by="a", at=T0, stale_before=T0)
    found = await store.contacts_of("miao", "telegram", ["7", "8", "10"])
    assert sorted((c.persona, c.user_id) for c in found) == [("miao", "7"), ("miao", "8")]
    for contact in found:
        assert contact == await store.contact("miao", "telegram", contact.user_id)
    assert await store.contacts_of("miao", "telegram", []) == []
    ledgers = await store.ledgers("miao", "telegram", ["7", "8"], since=T0)
    assert [(o.user_id, o.key) for o in ledgers] == [  # newest first, as one's ledger
        ("7", "intention:2"),
        ("8", "checkin:x"),
        ("7", "intention:1"),
    ]
    one = await store.ledgers("miao", "telegram", ["7"], since=T0 + timedelta(hours=1))
    assert one == await store.outreach("miao", "telegram", "7", since=T0 + timedelta(hours=1))
    assert await store.ledgers("miao", "telegram", [], since=T0) == []


# --- wipes -----------------------------------------------------------------------------------


async def test_a_wipe_takes_the_scopes_intentions(store: Storage) -> None:
    await store.add_intention(exam(DM))
    await store.add_intention(exam(GROUP))
    await store.heard("miao", "telegram", "7", T0, private=False)
    await claim(store, "intention:1", T0)
    await store.wipe_memories(GROUP)
    assert await store.intentions(GROUP, open_only=False) == []
    assert len(await store.intentions(DM)) == 1
    # A group's wipe leaves the person's contact and ledger alone.
    assert await store.contact("miao", "telegram", "7") is not None
    assert len(await store.outreach("miao", "telegram", "7", since=T0)) == 1


async def test_a_private_chats_wipe_takes_its_persons_contact_and_ledger(store: Storage) -> None:
    await store.add_intention(exam(DM))
    for persona in ("miao", "pip"):
        await store.heard(persona, "telegram", "7", T0, private=True)
        await store.claim_outreach(
            persona, "telegram", "7", "checkin:x", by="a", at=T0, stale_before=T0
        )
    await store.heard("miao", "telegram", "8", T0, private=True)
    await store.wipe_memories(DM)
    assert await store.intentions(DM, open_only=False) == []
    assert await store.contact("miao", "telegram", "7") is None
    assert await store.outreach("miao", "telegram", "7", since=T0) == []
    # Another persona's and another person's stay.
    assert await store.contact("pip", "telegram", "7") is not None
    assert len(await store.outreach("pip", "telegram", "7", since=T0)) == 1
    assert await store.contact("miao", "telegram", "8") is not None


async def test_a_session_wipe_takes_them_too_with_memory_off(store: Storage) -> None:
    await store.add_intention(exam(DM))
    await store.add_intention(exam(GROUP))
    await store.heard("miao", "telegram", "7", T0, private=True)
    await store.wipe("miao", "telegram:-100:user:7")
    assert await store.intentions(GROUP, open_only=False) == []
    assert await store.contact("miao", "telegram", "7") is not None
    await store.wipe("miao", "telegram:dm:7")
    assert await store.intentions(DM, open_only=False) == []
    assert await store.contact("miao", "telegram", "7") is None


async def test_intention_ids_are_never_reused(store: Storage) -> None:
    first = await store.add_intention(exam())
    await store.wipe_memories(DM)
    assert await store.add_intention(exam()) > first


# --- several processes -----------------------------------------------------------------------


@pytest.mark.parametrize("open_store", ["postgres"], indirect=True)
async def test_two_processes_claiming_one_message_get_one_true(
    open_store: StoreOpener, tmp_path: Path
) -> None:
    path = tmp_path / "kizuna.sqlite3"
    first, second = await open_store(path), await open_store(path)
    try:
        for round_ in range(20):
            key = f"intention:{round_}"
            won = await asyncio.gather(
                claim(first, key, T0, by="a"),
                claim(second, key, T0, by="b"),
                claim(first, key, T0, by="a"),
                claim(second, key, T0, by="b"),
            )
            assert sorted(won) == [False, False, False, True]
        # A stale claim taken over at once by both: one of them.
        later = T0 + timedelta(hours=1)
        taken = await asyncio.gather(
            claim(first, "intention:0", later, by="a"), claim(second, "intention:0", later, by="b")
        )
        assert sorted(taken) == [False, True]
    finally:
        await first.close()
        await second.close()


@pytest.mark.parametrize("open_store", ["postgres"], indirect=True)
async def test_two_processes_closing_one_yearly_intention_roll_it_once(
    open_store: StoreOpener, tmp_path: Path
) -> None:
    path = tmp_path / "kizuna.sqlite3"
    first, second = await open_store(path), await open_store(path)
    try:
        due = datetime(2026, 12, 5, 9, 0, tzinfo=UTC)
        new_id = await first.add_intention(birthday(due))
        won = await asyncio.gather(
            first.close_intention(DM, new_id, "done", due),
            second.close_intention(DM, new_id, "done", due),
        )
        assert sorted(won) == [False, True]
        [kept] = await second.intentions(DM)
        assert kept.due_at == due.replace(year=2027)
    finally:
        await first.close()
        await second.close()


@pytest.mark.parametrize("open_store", ["postgres"], indirect=True)
async def test_two_processes_hearing_one_person_count_every_message(
    open_store: StoreOpener, tmp_path: Path
) -> None:
    path = tmp_path / "kizuna.sqlite3"
    first, second = await open_store(path), await open_store(path)
    try:
        await asyncio.gather(
            *(
                (first if n % 2 else second).heard(
                    "miao", "telegram", "7", T0 + timedelta(minutes=n), private=n == 7
                )
                for n in range(20)
            )
        )
        contact = await first.contact("miao", "telegram", "7")
        assert contact is not None
        assert (sum(contact.hours), contact.private) == (20, True)
        assert contact.last_heard == T0 + timedelta(minutes=19)
    finally:
        await first.close()
        await second.close()


@pytest.mark.parametrize("open_store", ["postgres"], indirect=True)
async def test_two_processes_noting_the_same_people_crosswise_never_deadlock(
    open_store: StoreOpener, tmp_path: Path
) -> None:
    """Each process's batch of notes touches the others' rows in another order of asking: the
    rows are locked in one order, so neither waits for the other for ever (nor fails)."""
    path = tmp_path / "kizuna.sqlite3"
    first, second = await open_store(path), await open_store(path)
    people = [str(n) for n in range(12)]
    try:
        for round_ in range(5):
            at = T0 + timedelta(minutes=round_)
            await asyncio.gather(
                *(first.heard("miao", "telegram", p, at, private=True) for p in people),
                *(first.answered("miao", "telegram", p, at) for p in reversed(people)),
                *(second.heard("miao", "telegram", p, at, private=True) for p in reversed(people)),
                *(second.answered("miao", "telegram", p, at) for p in people),
            )
        for p in people:
            contact = await first.contact("miao", "telegram", p)
            assert contact is not None and sum(contact.hours) == 10
    finally:
        await first.close()
        await second.close()


@pytest.mark.parametrize("open_store", ["postgres"], indirect=True)
async def test_two_processes_adding_one_intention_make_one(
    open_store: StoreOpener, tmp_path: Path
) -> None:
    path = tmp_path / "kizuna.sqlite3"
    first, second = await open_store(path), await open_store(path)
    try:
        ids = await asyncio.gather(
            *((first if n % 2 else second).add_intention(exam()) for n in range(8))
        )
        assert len(set(ids)) == 1
        assert [i.id for i in await second.intentions(DM)] == ids[:1]
    finally:
        await first.close()
        await second.close()


# --- whose words an intention kept before said_by came from ----------------------------------

_BEFORE = [  # (scope, user, conversation): the rows an older database holds
    (DM, "7", 5),  # a private chat: only they spoke
    ("miao/telegram:-100:channel:-100", "7", 6),  # a group's shared conversation: not known
    ("miao/telegram:-100:channel:-100", "8", None),  # the tool's: its sender's own
    (GROUP, "7", 7),  # their own corner of a group
]
_INSERT_BEFORE = (
    "INSERT INTO intentions (scope, persona, user_id, kind, what, ask, due_at, until,"
    " created_at, conversation_id) VALUES ({}, 'miao', {}, 'reminder', 'w', 'a', 1, 2, 0, {})"
)


def _said_by_migration(migrations: Sequence[str]) -> int:
    return next(i for i, m in enumerate(migrations) if "ADD COLUMN said_by" in m)


async def _said_by(store: Storage) -> list[tuple[str, bool, bool]]:
    found = []
    for scope in dict.fromkeys(s for s, _, _ in _BEFORE):
        found += [(i.said_by or "", i.own, i.solicited) for i in await store.intentions(scope)]
    return found


_EXPECTED = [("7", True, True), ("", False, False), ("8", True, True), ("7", True, True)]


async def test_an_older_sqlite_database_knows_whose_its_intentions_were(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    for number, script in enumerate(SQLITE_MIGRATIONS[: _said_by_migration(SQLITE_MIGRATIONS)]):
        db.executescript(f"BEGIN;\n{script}\nPRAGMA user_version = {number + 1};\nCOMMIT;")
    with db:
        for scope, user, conversation in _BEFORE:
            db.execute(_INSERT_BEFORE.format("?", "?", "?"), (scope, user, conversation))
    db.close()
    store = await Store.open(path)
    try:
        assert await _said_by(store) == _EXPECTED
    finally:
        await store.close()


async def test_an_older_postgres_database_knows_whose_its_intentions_were(
    postgres_dsn: str,
) -> None:
    conn = await asyncpg.connect(postgres_dsn)
    try:
        before = _said_by_migration(PG_MIGRATIONS)
        for script in PG_MIGRATIONS[:before]:
            await conn.execute(script)
        await conn.execute("CREATE TABLE kizuna_schema (version INTEGER)")
        await conn.execute("INSERT INTO kizuna_schema VALUES ($1)", before)
        for scope, user, conversation in _BEFORE:
            await conn.execute(_INSERT_BEFORE.format("$1", "$2", "$3"), scope, user, conversation)
    finally:
        await conn.close()
    store = await PgStore.open(postgres_dsn)
    try:
        assert await _said_by(store) == _EXPECTED
    finally:
        await store.close()


async def test_old_settled_entries_are_trimmed_and_what_could_come_due_again_is_kept(
    store: Storage,
) -> None:
    old, cutoff = T0 - timedelta(days=100), T0 - timedelta(days=90)
    await store.heard("miao", "telegram", "7", old - timedelta(days=30), private=True)
    states: dict[str, OutreachState | None] = {
        "intention:1": "sent",
        "reminder:2": "refused",
        "special:3:2026": "dropped",
        "intention:4": "sending",  # may have gone: kept, or it could go twice
        "intention:5": None,  # claimed
        "checkin:silent": "sent",  # they have not written since: the absence goes on
    }
    for key, state in states.items():
        assert await claim(store, key, old)
        if state is not None:
            await store.outreach_state("miao", "telegram", "7", key, state, old)
    assert await claim(store, "intention:6", T0)
    await store.outreach_state("miao", "telegram", "7", "intention:6", "sent", T0)
    assert await store.trim_outreach(cutoff) == 3
    left = await store.outreach("miao", "telegram", "7", since=old)
    assert sorted(e.key for e in left) == [
        "checkin:silent",
        "intention:4",
        "intention:5",
        "intention:6",
    ]
    await store.heard("miao", "telegram", "7", T0, private=True)  # they wrote again
    assert await store.trim_outreach(cutoff) == 1
    assert not await claim(store, "intention:4", T0 + timedelta(days=1), by="b")


async def test_intentions_closed_before_the_cutoff_are_trimmed_and_open_ones_kept(
    store: Storage,
) -> None:
    old, cutoff = T0 - timedelta(days=100), T0 - timedelta(days=90)
    closed = {
        state: await store.add_intention(exam(what=f"the {state} one"))
        for state in ("done", "cancelled", "missed")
    }
    for state, ident in closed.items():
        assert await store.close_intention(DM, ident, state, old)  # type: ignore[arg-type]
    recent = await store.add_intention(exam(what="the recent one"))
    assert await store.close_intention(DM, recent, "done", T0)
    pending = await store.add_intention(exam(what="the pending one", created_at=old))
    due = old - timedelta(days=1)
    yearly = await store.add_intention(birthday(due))
    assert await store.close_intention(DM, yearly, "done", due + timedelta(hours=1))  # rolls on
    assert await store.trim_intentions(cutoff) == 3
    left = {i.id for i in await store.intentions(DM, open_only=False)}
    assert left == {recent, pending, yearly}
    assert await store.trim_intentions(cutoff) == 0


async def test_check_ins_due_are_read_through_an_index_and_leave_it_once_settled(
    store: Storage,
) -> None:
    since = T0 - timedelta(days=3)
    await store.heard("miao", "telegram", "1", T0 - timedelta(days=4), private=True)
    await store.heard("miao", "telegram", "2", T0 - timedelta(days=5), private=True)
    await store.heard("miao", "telegram", "3", T0 - timedelta(days=5), private=False)
    await store.heard("miao", "telegram", "4", T0 - timedelta(days=6), private=True)
    await store.set_contact("miao", "telegram", "4", quiet=True, at=T0)  # asked for quiet
    await store.heard("miao", "telegram", "5", T0, private=True)  # heard lately

    async def due() -> list[str]:
        found = await store.checkins_due("miao", "telegram", heard_before=since, limit=10)
        return [c.user_id for c in found]

    assert await due() == ["2", "1"]  # longest silent first
    assert [
        c.user_id for c in await store.checkins_due("miao", "telegram", heard_before=since, limit=1)
    ] == ["2"]
    await store.settle_checkin("miao", "telegram", "2", T0 - timedelta(days=5))
    assert await due() == ["1"]
    await store.heard("miao", "telegram", "2", T0 - timedelta(days=4, hours=1), private=True)
    assert await due() == ["2", "1"]  # heard again, then silent again: a new absence
    if isinstance(store, Store):
        plan = await store._all(
            "EXPLAIN QUERY PLAN SELECT user_id FROM contacts WHERE persona = ?"
            " AND platform = ? AND last_heard < ? AND private = 1 AND quiet = 0"
            " AND (checked_in IS NULL OR checked_in < last_heard)",
            ("miao", "telegram", 0.0),
        )
        assert "contacts_checkin_due" in " ".join(str(row) for row in plan)
