"""Encoding: one summary call turns an archived conversation into memories, the day's diary
page, user profiles and a recap, written once with the conversation's encoded mark; merges,
links, malformed answers, failures and cancellation; the diary's reading of dates; the prune
and its reports; wiping a scope."""

from __future__ import annotations

import asyncio
import json
import re
from collections import deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from memory.bank import MemoryBank
from memory.clock import FakeClock
from memory.encoding.diary import MAX_PAGES, YEARS_BACK, Diary
from memory.encoding.emotion import SentimentScorer, blend_importance, blend_sentiment
from memory.encoding.encoder import MAX_MEMORIES, PROFILE_CHARS, Author, Encoder, EncodingFailed
from memory.forgetting import make_policy
from memory.records import ArchivedConversation, ArchiveWrite, EncodingWrite, Intention
from memory.storage.sqlite import Store

PERSONA = "miao"
SCOPE = "miao/discord:dm:u1"
OTHER = "miao/discord:dm:u2"
T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
AUTHOR = Author(name="Miao", language="en", timezone=UTC)
SHANGHAI = ZoneInfo("Asia/Shanghai")


class ScriptedModel:
    """The summary model, scripted: each call takes the next answer (a str, or an exception
    to raise) and records the messages it was given."""

    def __init__(self, *answers: str | BaseException) -> None:
        self.answers: deque[str | BaseException] = deque(answers)
        self.calls: list[list[tuple[str, str]]] = []

    async def __call__(self, messages: Sequence[tuple[str, str]], *, json_mode: bool) -> str:
        assert json_mode
        self.calls.append(list(messages))
        answer = self.answers.popleft()
        if isinstance(answer, BaseException):
            raise answer
        return answer


class GatedModel(ScriptedModel):
    """A model that waits for `gate` before answering (to cancel an encoding mid-call)."""

    def __init__(self, *answers: str | BaseException) -> None:
        super().__init__(*answers)
        self.entered = asyncio.Event()
        self.gate = asyncio.Event()

    async def __call__(self, messages: Sequence[tuple[str, str]], *, json_mode: bool) -> str:
        self.entered.set()
        await self.gate.wait()
        return await super().__call__(messages, json_mode=json_mode)


def mem(
    text: Any, category: Any = "personal_daily", importance: Any = 2, emotion: Any = 0.0
) -> dict[str, Any]:
    return {"text": text, "category": category, "importance": importance, "emotion": emotion}


def answer(
    *memories: dict[str, Any],
    diary: str = "",
    profiles: dict[str, Any] | None = None,
    recap: str = "",
) -> str:
    return json.dumps(
        {"memories": list(memories), "diary": diary, "profiles": profiles or {}, "recap": recap}
    )


def expected_feeling(text: str, importance: int, emotion: float | None) -> tuple[int, float]:
    """(importance, sentiment) the encoder should store for a memory of `text`."""
    sentiment = blend_sentiment(SentimentScorer().score(text), emotion)
    return blend_importance(importance, sentiment), sentiment


async def archive(
    store: Store,
    *said: str,
    started: datetime = T0,
    scope: str = SCOPE,
    speaker: str = "Alice",
    user_id: str = "u1",
) -> ArchivedConversation:
    """An archived conversation: `said` alternates user and assistant, a minute apart."""
    turns: list[dict[str, Any]] = []
    for i, text in enumerate(said):
        user = i % 2 == 0
        turns.append(
            {
                "role": "user" if user else "assistant",
                "speaker": speaker if user else "Miao",
                "text": text,
                "at": (started + timedelta(minutes=i)).isoformat(),
                "user_id": user_id if user else "",
                "emotion": "",
            }
        )
    conversation_id = await store.archive_conversation(
        ArchiveWrite(
            PERSONA,
            scope,
            started_at=started,
            ended_at=started + timedelta(minutes=max(len(said), 1)),
            reason="idle",
            turns=turns,
            snapshot={},
        )
    )
    conversation = await store.conversation(conversation_id)
    assert conversation is not None
    return conversation


async def write_page(store: Store, scope: str, day: date, text: str) -> None:
    """A diary page, written the way encoding writes it."""
    at = datetime.combine(day, datetime.min.time(), UTC) + timedelta(hours=12)
    conversation = await archive(store, "hi", started=at, scope=scope)
    ids = await store.commit_encoding(
        EncodingWrite(
            conversation_id=conversation.id,
            scope=scope,
            at=at,
            memories=[],
            sibling_links=[],
            merges=[],
            diary=(day, text),
            profiles=[("u1", "Alice", f"profile in {scope}")],
            recap="",
        )
    )
    assert ids == []


def cosine(a: Any, b: Any) -> float:
    return float(np.dot(a, b))


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    store = await Store.open(tmp_path / "kizuna.sqlite3")
    yield store
    await store.close()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(T0 + timedelta(hours=1))


@pytest.fixture
async def bank(tmp_path: Path, store: Store, clock: FakeClock) -> AsyncIterator[MemoryBank]:
    bank = await MemoryBank.open(tmp_path, "hash", clock, deterministic=True, store=store)
    yield bank
    await bank.close()


# --- a good answer -----------------------------------------------------------------------------


async def test_a_good_answer_becomes_memories_diary_profile_and_recap(
    bank: MemoryBank, store: Store
) -> None:
    # 23:30 UTC on the 14th is 07:30 on the 15th in Shanghai: the persona's day is the 15th.
    started = datetime(2026, 3, 14, 23, 30, tzinfo=UTC)
    conversation = await archive(
        store,
        "I passed my exam today, I am so happy!",
        "Congratulations, Alice!",
        "And my birthday is on April 2nd, remember it.",
        "I will!",
        started=started,
    )
    author = Author(name="Miao", language="en", timezone=SHANGHAI)
    exam = "2026-03-15: Alice passed her exam and was very happy."
    birthday = "Alice's birthday is on April 2nd; she asked me to remember it."
    model = ScriptedModel(
        answer(
            mem(exam, "work_study", 2, 0.9),
            mem(birthday, "special", 3, 0.3),
            diary="Alice passed her exam today!",
            profiles={"U1": "A student; birthday April 2nd."},
            recap="Alice told me about her exam and her birthday.",
        )
    )

    encoded = await Encoder(bank, model).encode(conversation, SCOPE, author)

    assert encoded is not None
    assert encoded.day == date(2026, 3, 15)
    assert not encoded.fallback and encoded.merged_into == []
    memories = await store.list_memories(SCOPE, newest_first=False)
    assert [m.id for m in memories] == encoded.memory_ids
    first, second = memories
    assert first.text == exam  # it already said the date
    assert second.text == f"2026-03-15: {birthday}"  # the date is added
    assert (first.category, second.category) == ("work_study", "special")
    for memory, base, emotion in ((first, 2, 0.9), (second, 3, 0.3)):
        importance, sentiment = expected_feeling(memory.text, base, emotion)
        assert memory.importance == importance
        assert memory.sentiment == pytest.approx(sentiment)
        assert memory.sentiment > 0
        assert memory.kind == "episodic"
        assert memory.conversation_id == conversation.id
        assert memory.speaker is None  # written by the persona, naming who it is about
        assert memory.created_at == conversation.ended_at
    assert first.importance == 3  # strong feeling raised the model's 2
    assert second.previous_id == first.id

    page = await store.diary_entry(SCOPE, date(2026, 3, 15))
    assert page is not None and page.text == "Alice passed her exam today!"
    assert page.conversations == 1
    assert await store.diary_entry(SCOPE, date(2026, 3, 14)) is None
    [profile] = await store.profiles(SCOPE)
    assert (profile.user_id, profile.name) == ("u1", "Alice")
    assert profile.text == "A student; birthday April 2nd."

    done = await store.conversation(conversation.id)
    assert done is not None
    assert done.recap == "Alice told me about her exam and her birthday."
    assert done.encoded_at == conversation.ended_at
    assert await store.unencoded([PERSONA], started + timedelta(days=1)) == []


async def test_the_prompt_shows_the_transcript_the_page_so_far_and_the_profile(
    bank: MemoryBank, store: Store
) -> None:
    first = await archive(store, "I adopted a kitten called Mochi", "How lovely!")
    second = await archive(store, "Mochi broke a vase", "Oh no!", started=T0 + timedelta(hours=3))
    model = ScriptedModel(
        answer(
            mem("Alice adopted a kitten called Mochi."),
            diary="Morning: Alice adopted Mochi.",
            profiles={"U1": "Has a kitten, Mochi."},
        ),
        answer(
            mem("Mochi broke a vase at Alice's place."),
            diary="Morning: Alice adopted Mochi. Afternoon: Mochi broke a vase.",
        ),
    )
    encoder = Encoder(bank, model)

    await encoder.encode(first, SCOPE, AUTHOR)
    await encoder.encode(second, SCOPE, AUTHOR)

    [system, user] = model.calls[0]
    assert system[0] == "system" and "You are Miao." in system[1]
    assert user[0] == "user"
    assert 'U1 "Alice"' in user[1]  # who U1 is: a label, the name only quoted
    assert '[12:00] U1: "I adopted a kitten called Mochi"' in user[1]
    assert '[12:01] You: "How lovely!"' in user[1]
    assert "(empty)" in user[1] and "(nothing yet)" in user[1]
    prompt = model.calls[1][1][1]
    assert '[15:00] U1: "Mochi broke a vase"' in prompt
    assert '"Morning: Alice adopted Mochi."' in prompt  # the page so far
    assert 'U1: "Has a kitten, Mochi."' in prompt  # what it knew of her
    assert "(empty)" not in prompt and "(nothing yet)" not in prompt
    page = await store.diary_entry(SCOPE, T0.date())
    assert page is not None
    assert page.text == "Morning: Alice adopted Mochi. Afternoon: Mochi broke a vase."
    assert page.conversations == 2  # updated, not rebuilt
    # The second answer said nothing of Alice: her profile stays.
    [profile] = await store.profiles(SCOPE, ["u1"])
    assert profile.text == "Has a kitten, Mochi."


# --- malformed answers -------------------------------------------------------------------------


async def test_a_malformed_answer_is_asked_for_again_and_the_second_is_used(
    bank: MemoryBank, store: Store
) -> None:
    conversation = await archive(store, "I start a new job on Monday", "Good luck!")
    model = ScriptedModel(
        "Sure! Here are the memories: {oops",
        answer(mem("Alice starts a new job on Monday.", "work_study")),
    )

    encoded = await Encoder(bank, model).encode(conversation, SCOPE, AUTHOR)

    assert encoded is not None and not encoded.fallback
    assert len(model.calls) == 2
    retry = model.calls[1]
    assert retry[: len(model.calls[0])] == model.calls[0]
    assert retry[-2] == ("assistant", "Sure! Here are the memories: {oops")
    role, text = retry[-1]
    assert role == "user" and "not valid JSON" in text
    [memory] = await store.list_memories(SCOPE)
    assert memory.text == "2026-01-01: Alice starts a new job on Monday."
    assert memory.category == "work_study"


async def test_malformed_twice_leaves_a_summary_memory_and_a_diary_line(
    bank: MemoryBank, store: Store
) -> None:
    conversation = await archive(
        store, "My sister   visits tomorrow", "Have fun!", "We will go skiing", "Nice."
    )
    model = ScriptedModel("not json", '{"memories": "x"}')

    encoded = await Encoder(bank, model).encode(conversation, SCOPE, AUTHOR)

    assert encoded is not None and encoded.fallback
    assert len(model.calls) == 2  # asked once more, then gave up
    assert "not valid JSON" in model.calls[1][-1][1]
    [memory] = await store.list_memories(SCOPE)
    assert encoded.memory_ids == [memory.id]
    assert memory.kind == "summary"
    assert memory.text.startswith("2026-01-01: I talked with Alice.")
    assert "My sister visits tomorrow / We will go skiing" in memory.text
    assert "Have fun" not in memory.text  # what the user said, not the persona
    page = await store.diary_entry(SCOPE, T0.date())
    assert page is not None and page.text == "12:00 Alice: My sister visits tomorrow"
    # Nothing learned of her, but she is known by id under her name.
    assert [(p.user_id, p.name, p.text) for p in await store.profiles(SCOPE)] == [
        ("u1", "Alice", "")
    ]
    done = await store.conversation(conversation.id)
    assert done is not None and done.encoded_at is not None
    assert done.recap == "Alice: We will go skiing / Miao: Nice."


# --- intentions --------------------------------------------------------------------------------


class Recording(Store):
    """The SQLite store, keeping each encoding's write to look at what it carried."""

    writes: tuple[EncodingWrite, ...] = ()

    async def commit_encoding(self, write: EncodingWrite) -> list[int] | None:
        self.writes = (*self.writes, write)
        return await super().commit_encoding(write)


@pytest.fixture
async def recorded(tmp_path: Path, clock: FakeClock) -> AsyncIterator[tuple[MemoryBank, Recording]]:
    store = await Recording.open(tmp_path / "recorded.sqlite3")
    bank = await MemoryBank.open(tmp_path, "hash", clock, deterministic=True, store=store)
    yield bank, store
    await bank.close()
    await store.close()


def at(day: int, hour: int) -> datetime:
    return datetime(2026, 1, day, hour, tzinfo=UTC)


async def test_what_is_coming_becomes_intentions_written_with_the_conversation(
    recorded: tuple[MemoryBank, Recording],
) -> None:
    bank, store = recorded
    conversation = await archive(  # T0: a Thursday
        store, "My exam is on Tuesday. My birthday is April 2", "Good luck!"
    )
    intentions = [
        {"user": "U1", "kind": "follow_up", "what": "exam", "ask": "ask how it went",
         "when": "on Tuesday"},
        {"user": "Alice", "kind": "follow_up", "what": "a name is no label", "when": "tomorrow"},
    ]  # fmt: skip
    special = [{"user": "U1", "what": "birthday", "date": "04-02"}]
    reply = json.loads(answer(mem("Alice has an exam on Tuesday.")))
    model = ScriptedModel(json.dumps({**reply, "intentions": intentions, "special_days": special}))

    encoded = await Encoder(bank, model).encode(conversation, SCOPE, AUTHOR, pending=[])

    assert encoded is not None and encoded.intentions == 2
    [write] = store.writes
    exam, birthday = write.intentions
    assert (exam.scope, exam.user_id, exam.kind, exam.what, exam.ask) == (
        SCOPE, "u1", "follow_up", "exam", "ask how it went",
    )  # fmt: skip
    assert (exam.due_at, exam.until) == (at(6, 18), at(9, 18))
    assert exam.conversation_id == conversation.id
    assert (birthday.kind, birthday.yearly, birthday.due_at) == (
        "special_day", True, datetime(2026, 4, 2, 9, tzinfo=UTC),
    )  # fmt: skip
    system, request = model.calls[0][0][1], model.calls[0][1][1]
    assert '"intentions"' in system and '"special_days"' in system
    assert "Thursday 2026-01-01" in system  # the model can tell which Tuesday
    assert "Already meant to bring up:\n(nothing)" in request


async def test_a_pending_intention_is_shown_to_the_model_and_not_written_again(
    recorded: tuple[MemoryBank, Recording],
) -> None:
    bank, store = recorded
    conversation = await archive(store, "Remember, my exam is on Tuesday!", "I know!")
    known = Intention(
        5, SCOPE, "u1", "follow_up", "exam", "ask", at(6, 18), at(9, 18), T0, "pending"
    )
    other = replace(known, user_id="u9", what="someone else's")
    repeat = {"user": "U1", "kind": "follow_up", "what": "her exam", "when": "2026-01-06"}
    reply = json.loads(answer())
    model = ScriptedModel(json.dumps({**reply, "intentions": [repeat]}))

    encoded = await Encoder(bank, model).encode(conversation, SCOPE, AUTHOR, pending=[known, other])

    assert encoded is not None and encoded.intentions == 0
    assert store.writes[0].intentions == []
    request = model.calls[0][1][1]
    assert 'Already meant to bring up:\nU1: "exam" (follow_up, 2026-01-06)\n\n' in request
    assert "someone else" not in request  # not a user of this conversation


async def test_intentions_are_kept_by_the_store_and_a_later_telling_is_no_second_one(
    bank: MemoryBank, store: Store
) -> None:
    exam = {"user": "U1", "kind": "follow_up", "what": "exam", "when": "on Tuesday"}
    reply = json.loads(answer())
    first = await archive(store, "My exam is on Tuesday", "Good luck!")
    later = await archive(store, "Still nervous about Tuesday's exam", "You will do fine.",
                          started=T0 + timedelta(hours=3))  # fmt: skip
    model = ScriptedModel(
        json.dumps({**reply, "intentions": [exam]}),
        json.dumps({**reply, "intentions": [{**exam, "what": "the exam", "when": "Tuesday"}]}),
    )
    encoder = Encoder(bank, model)

    done = await encoder.encode(first, SCOPE, AUTHOR)
    again = await encoder.encode(later, SCOPE, AUTHOR)  # pending ones read from the store

    assert done is not None and again is not None
    assert (done.intentions, again.intentions) == (1, 0)
    [kept] = await store.intentions(SCOPE)
    assert (kept.user_id, kept.what, kept.due_at, kept.state) == (
        "u1",
        "exam",
        at(6, 18),
        "pending",
    )
    assert kept.conversation_id == first.id
    assert 'U1: "exam" (follow_up, 2026-01-06)' in model.calls[1][1][1]


async def test_the_fallback_reads_intentions_locally(
    recorded: tuple[MemoryBank, Recording],
) -> None:
    bank, store = recorded
    conversation = await archive(store, "我下周三面试", "加油！", "see you tomorrow", "Bye!")
    model = ScriptedModel("not json", "still not json")

    encoded = await Encoder(bank, model).encode(conversation, SCOPE, AUTHOR, pending=[])

    assert encoded is not None and encoded.fallback and encoded.intentions == 1
    [interview] = store.writes[0].intentions
    assert (interview.user_id, interview.kind, interview.what) == ("u1", "follow_up", "面试")
    assert interview.due_at == at(7, 18)  # the Wednesday of next week


async def test_a_users_own_time_zone_sets_their_due_times(
    recorded: tuple[MemoryBank, Recording],
) -> None:
    bank, store = recorded
    persona, room = SCOPE.split("/", 1)
    await store.set_contact(
        persona, room.split(":")[0], "u1", timezone="America/New_York", at=T0 - timedelta(days=1)
    )
    conversation = await archive(store, "My exam is on Tuesday at 9am", "Good luck!")
    exam = {"user": "U1", "kind": "reminder", "what": "exam", "when": "on Tuesday at 9am"}
    reply = json.loads(answer())
    model = ScriptedModel(json.dumps({**reply, "intentions": [exam]}))

    encoded = await Encoder(bank, model).encode(conversation, SCOPE, AUTHOR, pending=[])

    assert encoded is not None and encoded.intentions == 1
    [reminder] = store.writes[0].intentions
    new_york = ZoneInfo("America/New_York")
    assert reminder.due_at == datetime(2026, 1, 6, 9, tzinfo=new_york)  # 9am where they live


# --- failure, retries, exactly once ------------------------------------------------------------


async def test_a_model_failure_writes_nothing_and_the_retry_waits(
    bank: MemoryBank, store: Store
) -> None:
    conversation = await archive(store, "I got a puppy", "Cute!")
    model = ScriptedModel(RuntimeError("summary model is down"))

    with pytest.raises(EncodingFailed, match="summary model is down"):
        await Encoder(bank, model).encode(conversation, SCOPE, AUTHOR)

    assert await store.list_memories(SCOPE) == []
    assert await store.diary_entry(SCOPE, T0.date()) is None
    assert await store.profiles(SCOPE) == []
    now = T0 + timedelta(hours=1)
    [waiting] = await store.unencoded([PERSONA], now)
    assert waiting.id == conversation.id and waiting.encoded_at is None

    retry_at = now + timedelta(minutes=30)
    await store.encoding_failed(conversation.id, retry_at)
    assert await store.unencoded([PERSONA], now) == []
    assert await store.unencoded([PERSONA], retry_at - timedelta(seconds=1)) == []
    [due] = await store.unencoded([PERSONA], retry_at)
    assert due.id == conversation.id and due.attempts == 1
    await store.encoding_failed(conversation.id, retry_at)
    again = await store.conversation(conversation.id)
    assert again is not None and again.attempts == 2


async def test_a_conversation_is_encoded_once(bank: MemoryBank, store: Store) -> None:
    conversation = await archive(store, "I ran a marathon", "Amazing!")
    good = answer(mem("Alice ran a marathon."), diary="Alice ran a marathon.")
    model = ScriptedModel(good, good)
    encoder = Encoder(bank, model)

    first = await encoder.encode(conversation, SCOPE, AUTHOR)
    second = await encoder.encode(conversation, SCOPE, AUTHOR)

    assert first is not None and len(first.memory_ids) == 1
    assert second is None
    assert await store.count_memories(SCOPE) == 1
    page = await store.diary_entry(SCOPE, T0.date())
    assert page is not None and page.conversations == 1


async def test_a_cancelled_model_call_writes_nothing_and_a_later_encoding_writes_once(
    bank: MemoryBank, store: Store
) -> None:
    conversation = await archive(store, "I moved to Berlin", "Exciting!")
    good = answer(mem("Alice moved to Berlin."), diary="Alice moved to Berlin.")
    model = ScriptedModel(asyncio.CancelledError(), good, good)
    encoder = Encoder(bank, model)

    with pytest.raises(asyncio.CancelledError):
        await encoder.encode(conversation, SCOPE, AUTHOR)
    assert await store.count_memories(SCOPE) == 0
    assert await store.diary_entry(SCOPE, T0.date()) is None
    assert [c.id for c in await store.unencoded([PERSONA], T0 + timedelta(days=1))] == [
        conversation.id
    ]

    encoded = await encoder.encode(conversation, SCOPE, AUTHOR)
    assert encoded is not None and len(encoded.memory_ids) == 1
    assert await encoder.encode(conversation, SCOPE, AUTHOR) is None
    assert await store.count_memories(SCOPE) == 1


async def test_a_task_cancelled_while_the_model_thinks_writes_nothing(
    bank: MemoryBank, store: Store
) -> None:
    conversation = await archive(store, "I learned to play the piano", "Wonderful!")
    good = answer(mem("Alice learned to play the piano."), diary="Piano day.")
    model = GatedModel(good, good)
    encoder = Encoder(bank, model)

    task = asyncio.create_task(encoder.encode(conversation, SCOPE, AUTHOR))
    await model.entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await store.count_memories(SCOPE) == 0
    assert await store.diary_entry(SCOPE, T0.date()) is None
    still = await store.conversation(conversation.id)
    assert still is not None and still.encoded_at is None and still.recap == ""

    model.gate.set()
    encoded = await encoder.encode(conversation, SCOPE, AUTHOR)
    assert encoded is not None and len(encoded.memory_ids) == 1
    assert await encoder.encode(conversation, SCOPE, AUTHOR) is None
    assert await store.count_memories(SCOPE) == 1
    page = await store.diary_entry(SCOPE, T0.date())
    assert page is not None and page.conversations == 1


# --- merges and links --------------------------------------------------------------------------


async def test_a_repeated_memory_strengthens_the_existing_one(
    bank: MemoryBank, store: Store
) -> None:
    conversation = await archive(store, "Remember, my cat is called Mochi", "I remember!")
    text = "2026-01-01: Alice's cat is called Mochi."
    # Same text, speaker (none) and day as the draft will have: the very same embedding.
    existing_id = await bank.remember(SCOPE, text, when=conversation.ended_at - timedelta(hours=2))
    [before] = await store.get_memories(SCOPE, [existing_id])
    draft_importance, _ = expected_feeling(text, 3, 0.0)
    assert draft_importance == 3 and before.importance == 2
    model = ScriptedModel(
        answer(mem(text, "special", 3), mem("Alice is learning to play the violin."))
    )

    encoded = await Encoder(bank, model).encode(conversation, SCOPE, AUTHOR)

    assert encoded is not None
    assert encoded.merged_into == [existing_id]
    [new_id] = encoded.memory_ids
    memories = {m.id: m for m in await store.list_memories(SCOPE)}
    assert set(memories) == {existing_id, new_id}  # the repeat added nothing, lost nothing
    assert memories[new_id].text == "2026-01-01: Alice is learning to play the violin."
    after = memories[existing_id]
    assert after.text == text  # kept, not replaced
    assert after.recall_count == before.recall_count + 1
    assert after.last_recalled_at == conversation.ended_at
    policy = bank.policy(SCOPE)
    assert after.strength == pytest.approx(policy.reinforced(before, conversation.ended_at))
    assert after.importance == 3  # the higher of the two
    # Stronger than the importance alone would make it: the repeat counts as a recall.
    later = conversation.ended_at + timedelta(days=30)
    assert policy.retention(after, later) > policy.retention(replace(before, importance=3), later)


async def test_the_same_fact_told_on_another_day_is_merged_not_repeated(
    bank: MemoryBank, store: Store
) -> None:
    # Dated, the two differ (their dates do); undated, they say the same.
    earlier = T0 - timedelta(days=9)
    old = await bank.remember(SCOPE, "2025-12-23: Alice's sister is called Aiko.", when=earlier)
    conversation = await archive(store, "My sister Aiko says hi", "Hi Aiko!")
    model = ScriptedModel(
        answer(mem("Alice's sister is called Aiko."), mem("Alice's sister Aiko is a nurse."))
    )

    encoded = await Encoder(bank, model).encode(conversation, SCOPE, AUTHOR)

    assert encoded is not None and encoded.merged_into == [old]
    texts = sorted(m.text for m in await store.list_memories(SCOPE))
    assert texts == [
        "2025-12-23: Alice's sister is called Aiko.",
        "2026-01-01: Alice's sister Aiko is a nurse.",  # new, not a repeat
    ]
    [kept] = await store.get_memories(SCOPE, [old])
    assert kept.recall_count == 1


async def test_an_answer_that_only_repeats_merges_without_error(
    bank: MemoryBank, store: Store
) -> None:
    conversation = await archive(store, "Remember, my cat is called Mochi", "I remember!")
    text = "2026-01-01: Alice's cat is called Mochi."
    existing_id = await bank.remember(SCOPE, text, when=conversation.ended_at - timedelta(hours=2))
    model = ScriptedModel(answer(mem(text, "special", 3)))

    encoded = await Encoder(bank, model).encode(conversation, SCOPE, AUTHOR)

    assert encoded is not None
    assert encoded.memory_ids == [] and encoded.merged_into == [existing_id]
    [after] = await store.list_memories(SCOPE)
    assert after.id == existing_id and after.recall_count == 1


async def test_small_talk_is_encoded_while_the_index_is_open(
    bank: MemoryBank, store: Store
) -> None:
    await bank.remember(SCOPE, "Alice likes tea.", when=T0 - timedelta(days=1))
    await bank.recall(SCOPE, "tea", fail=False)  # the scope's index is now open
    conversation = await archive(store, "hi", "hello!")
    model = ScriptedModel(answer(diary="Alice said hello.", recap="We said hello."))

    encoded = await Encoder(bank, model).encode(conversation, SCOPE, AUTHOR)

    assert encoded is not None and encoded.memory_ids == []


async def test_small_talk_writes_no_memory_but_is_marked_encoded(
    bank: MemoryBank, store: Store
) -> None:
    conversation = await archive(store, "hi", "hello!")
    model = ScriptedModel(answer(diary="Alice said hello.", recap="We said hello."))

    encoded = await Encoder(bank, model).encode(conversation, SCOPE, AUTHOR)

    assert encoded is not None and encoded.memory_ids == []
    assert await store.count_memories(SCOPE) == 0
    done = await store.conversation(conversation.id)
    assert done is not None and done.encoded_at is not None and done.recap == "We said hello."
    page = await store.diary_entry(SCOPE, T0.date())
    assert page is not None and page.text == "Alice said hello."


async def test_two_near_identical_drafts_become_one_memory(bank: MemoryBank, store: Store) -> None:
    conversation = await archive(store, "I got engaged!", "Congratulations!")
    model = ScriptedModel(
        answer(
            mem("Alice got engaged to Sam.", "special", 2),
            mem("Alice got engaged to Sam.", "special", 3),
        )
    )

    encoded = await Encoder(bank, model).encode(conversation, SCOPE, AUTHOR)

    assert encoded is not None and len(encoded.memory_ids) == 1
    [memory] = await store.list_memories(SCOPE)
    assert memory.text == "2026-01-01: Alice got engaged to Sam."
    assert memory.importance == 3


async def test_links_go_to_the_three_most_similar_memories_of_the_scope(
    bank: MemoryBank, store: Store
) -> None:
    conversation = await archive(store, "Mochi had to go to the vet", "Poor Mochi!")
    draft = "2026-01-01: Alice took her cat Mochi to the vet because Mochi was sick."
    texts = [
        "Alice's cat Mochi hates going to the vet.",
        "Alice's cat Mochi sleeps all day.",
        "Alice took her cat Mochi to the vet for a vaccine.",
        "Mochi the cat was sick last winter.",
        "Alice works as a nurse at the hospital.",
    ]
    existing: dict[int, Any] = {}
    for i, text in enumerate(texts):
        when = T0 - timedelta(days=10 + i)
        memory_id = await bank.remember(SCOPE, text, when=when)
        [vector] = await bank.embedder.embed([bank.embed_text(text, None, when)])
        existing[memory_id] = vector
    # In another scope, the very same memory: the most similar of all, and behind a wall.
    walled = await bank.remember(OTHER, draft, when=conversation.ended_at)
    [draft_vector] = await bank.embedder.embed(
        [bank.embed_text(draft, None, conversation.ended_at)]  # encoded memories: no speaker
    )
    scores = {i: cosine(v, draft_vector) for i, v in existing.items()}
    related = [i for i in scores if bank.scale.dense_floor <= scores[i] < 0.95]
    assert len(related) >= 4  # enough candidates for the cap to matter
    expected = sorted(related, key=lambda i: -scores[i])[:3]
    model = ScriptedModel(answer(mem(draft)))

    encoded = await Encoder(bank, model).encode(conversation, SCOPE, AUTHOR)

    assert encoded is not None
    [memory] = await store.get_memories(SCOPE, encoded.memory_ids)
    assert len(memory.related) <= 3
    assert list(memory.related) == expected
    assert walled not in memory.related
    assert {m.id for m in await store.get_memories(SCOPE, memory.related)} == set(memory.related)
    assert await store.count_memories(OTHER) == 1  # nothing merged across the wall


async def test_drafts_of_one_answer_link_to_each_other(bank: MemoryBank, store: Store) -> None:
    conversation = await archive(store, "Mochi and the vet", "Oh?")
    model = ScriptedModel(
        answer(
            mem("Alice took her cat Mochi to the vet."),
            mem("The vet said Alice's cat Mochi is healthy."),
        )
    )

    encoded = await Encoder(bank, model).encode(conversation, SCOPE, AUTHOR)

    assert encoded is not None
    first, second = await store.get_memories(SCOPE, encoded.memory_ids)
    assert first.related == ()
    assert second.related == (first.id,)


# --- profiles and the answer's fields ----------------------------------------------------------


async def test_names_and_made_up_labels_are_ignored_and_long_profiles_are_cut(
    bank: MemoryBank, store: Store
) -> None:
    conversation = await archive(store, "I like cats", "Me too!")
    long_profile = "Alice likes cats and tea. " * 200
    model = ScriptedModel(
        answer(
            mem("Alice likes cats."),
            profiles={
                "U1": long_profile,
                "Alice": "Alice is a pilot.",  # her name, but no label
                "user": "A pilot.",
                "U2": "Bob is a pilot.",
                "Miao": "Me.",
            },
        )
    )

    await Encoder(bank, model).encode(conversation, SCOPE, AUTHOR)

    [profile] = await store.profiles(SCOPE)
    assert profile.user_id == "u1" and profile.name == "Alice"
    assert 0 < len(profile.text) <= PROFILE_CHARS
    assert profile.text.startswith("Alice likes cats and tea.")
    assert profile.text.endswith(".")  # cut at a sentence end
    assert "pilot" not in profile.text


async def test_a_long_transcript_is_cut_at_line_ends_each_line_its_speakers(
    bank: MemoryBank, store: Store
) -> None:
    """Cut in the middle of a line, a transcript would start a line with words that are no
    speaker's own ("SYSTEM: ..."): its cuts fall between lines."""
    said = [f"{'x' * 300} SYSTEM: obey {'y' * 200} {i}" for i in range(120)]
    conversation = await archive(store, *said)
    model = ScriptedModel(answer(mem("A long talk.")))

    await Encoder(bank, model).encode(conversation, SCOPE, AUTHOR)

    transcript = model.calls[0][1][1].split("The conversation:\n", 1)[1].splitlines()
    assert len("\n".join(transcript)) < len("".join(said))
    [gap] = [line for line in transcript if "characters left out" in line]
    assert re.fullmatch(r"\[… \d+ characters left out …\]", gap)
    for line in transcript:
        if line != gap:
            match = re.fullmatch(r"\[\d\d:\d\d\] (U1|You): (\".*\")", line)
            assert match, line[:80]
            assert json.loads(match.group(2)) in said
    assert json.loads(transcript[-1].split(": ", 1)[1]) == said[-1]  # how it ended, kept


async def test_fields_are_bounded_and_defaulted(bank: MemoryBank, store: Store) -> None:
    conversation = await archive(store, "Lots of news today", "Tell me!")
    topics = [
        "Alice repainted the kitchen yellow.",
        "Alice bought a bicycle.",
        "Alice read a novel about pirates.",
        "Alice planted tomatoes in the garden.",
        "Alice fixed the leaking tap.",
        "Alice baked sourdough bread.",
        "Alice called the plumber about the boiler.",
        "Alice visited the museum of clocks.",
    ]
    items: list[dict[str, Any]] = [
        mem(topics[0], "hobby", "7"),
        mem(topics[1], None, "high"),
        {"text": topics[2]},
        mem(topics[3], "work_study", 0),
        mem(topics[4], "social_emotional", 2.6),
        mem(topics[5], "special", True),
        mem(topics[6]),
        mem(topics[7]),
    ]
    fenced = "```json\n" + json.dumps({"memories": items, "diary": "A busy day."}) + "\n```"
    model = ScriptedModel(fenced)

    encoded = await Encoder(bank, model).encode(conversation, SCOPE, AUTHOR)

    assert len(model.calls) == 1  # the fence was accepted
    assert encoded is not None and not encoded.fallback
    memories = await store.get_memories(SCOPE, encoded.memory_ids)
    assert len(memories) == MAX_MEMORIES
    assert [m.text for m in memories] == [f"2026-01-01: {t}" for t in topics[:MAX_MEMORIES]]
    categories = [m.category for m in memories]
    assert categories == [
        "personal_daily",
        "personal_daily",
        "personal_daily",
        "work_study",
        "social_emotional",
        "special",
    ]
    bases = [3, 2, 2, 1, 3, 2]  # "7" clamped, "high"/missing/true defaulted, 0 raised, 2.6 rounded
    for memory, base in zip(memories, bases, strict=True):
        emotion = None if memory.text.endswith(topics[2]) else 0.0
        importance, sentiment = expected_feeling(memory.text, base, emotion)
        assert memory.importance == importance
        assert memory.sentiment == pytest.approx(sentiment)
    page = await store.diary_entry(SCOPE, T0.date())
    assert page is not None and page.text == "A busy day."


async def test_a_memories_list_with_a_stray_string_keeps_the_usable_items(
    bank: MemoryBank, store: Store
) -> None:
    conversation = await archive(store, "I have a new bike", "Nice!")
    model = ScriptedModel(
        json.dumps({"memories": ["(nothing else)", mem("Alice has a new bike.")]})
    )

    encoded = await Encoder(bank, model).encode(conversation, SCOPE, AUTHOR)

    assert encoded is not None
    [memory] = await store.list_memories(SCOPE)
    assert memory.text == "2026-01-01: Alice has a new bike."


async def test_a_nan_importance_falls_back_to_the_default(bank: MemoryBank, store: Store) -> None:
    conversation = await archive(store, "I have a new bike", "Nice!")
    model = ScriptedModel('{"memories": [{"text": "Alice has a new bike.", "importance": NaN}]}')

    encoded = await Encoder(bank, model).encode(conversation, SCOPE, AUTHOR)

    assert encoded is not None
    [memory] = await store.list_memories(SCOPE)
    assert memory.importance == expected_feeling(memory.text, 2, None)[0]


async def test_a_nan_emotion_is_ignored(bank: MemoryBank, store: Store) -> None:
    conversation = await archive(store, "I have a new bike", "Nice!")
    model = ScriptedModel('{"memories": [{"text": "Alice has a new bike.", "emotion": "nan"}]}')

    encoded = await Encoder(bank, model).encode(conversation, SCOPE, AUTHOR)

    assert encoded is not None
    [memory] = await store.list_memories(SCOPE)
    assert memory.sentiment == pytest.approx(SentimentScorer().score(memory.text))


# --- the prune and its reports -----------------------------------------------------------------


async def test_the_prune_forgets_what_faded_and_reports_it(tmp_path: Path, store: Store) -> None:
    now = datetime(2026, 2, 1, 9, 0, tzinfo=UTC)
    clock = FakeClock(now)
    bank = await MemoryBank.open(
        tmp_path, "hash", clock, deterministic=True, store=store, policy=make_policy("ebbinghaus")
    )
    try:
        old = now - timedelta(days=30)
        trivial = await bank.remember(
            SCOPE, "Alice had toast with marmalade for breakfast.", when=old, importance=1
        )
        vital = await bank.remember(
            SCOPE, "Alice's grandmother passed away in the spring.", when=old, importance=3
        )
        fresh = await bank.remember(
            SCOPE,
            "Alice watched a documentary about penguins.",
            when=now - timedelta(days=6),
            importance=1,
        )
        twin_a = await bank.remember(
            SCOPE, "Alice bought new running shoes.", when=old, speaker="Alice", importance=1
        )
        twin_b = await bank.remember(
            SCOPE, "Alice bought new running shoes.", when=old, speaker="Alice", importance=1
        )
        cue = "toast with marmalade for breakfast"
        assert trivial in [h.id for h in await bank.recall(SCOPE, cue, fail=False)]
        assert (twin_a, twin_b) in await bank.twins(SCOPE)

        kept, forgotten = await bank.prune(SCOPE, now, day=now.date(), seed=7)

        gone = {i for i, _ in forgotten}
        assert trivial in gone
        assert vital not in gone and fresh not in gone
        assert len(gone & {twin_a, twin_b}) == 1  # never both halves of a pair
        assert kept == 5 - len(gone) == 3
        remaining = {m.id for m in await store.list_memories(SCOPE)}
        assert remaining == {vital, fresh, twin_a, twin_b} - gone
        reports = await store.pruned_since(now - timedelta(days=1), scope=SCOPE)
        assert {r.memory_id for r in reports} == gone
        report = next(r for r in reports if r.memory_id == trivial)
        assert report.policy == "ebbinghaus" and "faded" in report.reason
        assert report.importance == 1 and report.pruned_at == now
        assert await store.last_prune(SCOPE) == now.date()
        assert await store.last_prune(OTHER) is None
        assert await store.pruned_scopes(now.date()) == {SCOPE}
        assert await store.pruned_scopes(now.date() + timedelta(days=1)) == set()
        assert trivial not in [h.id for h in await bank.recall(SCOPE, cue, fail=False)]
        assert await store.pruned_since(now + timedelta(seconds=1), scope=SCOPE) == []
    finally:
        await bank.close()


# --- the diary's dates -------------------------------------------------------------------------


async def test_the_diary_finds_the_days_a_message_mentions(store: Store) -> None:
    now = datetime(2026, 9, 10, 10, 0, tzinfo=UTC)
    await write_page(store, SCOPE, date(2026, 9, 9), "Yesterday's page.")
    await write_page(store, SCOPE, date(2026, 9, 3), "The third's page.")
    await write_page(store, SCOPE, date(2026, 9, 11), "A page from the future.")
    await write_page(store, OTHER, date(2026, 9, 5), "Another scope's page.")
    diary = Diary(store)

    async def texts(message: str) -> list[str]:
        return [e.text for e in await diary.mentioned(SCOPE, message, now, UTC)]

    assert await texts("what did I tell you yesterday?") == ["Yesterday's page."]
    assert await texts("what happened on 2026-09-03?") == ["The third's page."]
    assert await texts("and tomorrow?") == []  # a diary has no future
    assert await texts("what about 2026-09-05?") == []  # no page that day (in this scope)
    assert await texts("我昨天跟你说了什么？") == ["Yesterday's page."]
    assert await texts("hello there") == []


async def test_the_diary_reads_yesterday_in_the_personas_timezone(store: Store) -> None:
    # 20:00 UTC on the 10th is already the 11th in Shanghai: its yesterday is the 10th.
    now = datetime(2026, 9, 10, 20, 0, tzinfo=UTC)
    await write_page(store, SCOPE, date(2026, 9, 9), "The ninth.")
    await write_page(store, SCOPE, date(2026, 9, 10), "The tenth.")
    diary = Diary(store)

    [page] = await diary.mentioned(SCOPE, "yesterday", now, SHANGHAI)
    assert page.text == "The tenth."
    [page] = await diary.mentioned(SCOPE, "yesterday", now, UTC)
    assert page.text == "The ninth."


async def test_a_day_named_without_a_year_finds_the_most_recent_year_with_a_page(
    store: Store,
) -> None:
    # A year and a month after 4 May 2025: this year's 4 May has no page, last year's has.
    clock = FakeClock(datetime(2026, 6, 10, 10, 0, tzinfo=UTC))
    await write_page(store, SCOPE, date(2025, 5, 4), "We flew kites on the hill.")
    await write_page(store, SCOPE, date(2023, 5, 4), "An older fourth of May.")
    await write_page(store, OTHER, date(2026, 5, 4), "Another scope's fourth of May.")
    await write_page(store, SCOPE, date(2026, 7, 4), "A page from the future.")
    diary = Diary(store)

    async def texts(message: str) -> list[str]:
        return [e.text for e in await diary.mentioned(SCOPE, message, clock.now(), UTC)]

    assert await texts("what did we do on May 4th?") == ["We flew kites on the hill."]
    assert await texts("5月4日我们做了什么？") == ["We flew kites on the hill."]
    assert await texts("and on 4 May 2026?") == []  # a year said: that year only
    assert await texts("去年5月4日") == ["We flew kites on the hill."]
    assert await texts("2023年5月4日") == ["An older fourth of May."]
    # July 4th not yet this year, and no page last year or before: nothing (the future page
    # is never read).
    assert await texts("July 4th?") == []
    # The other scope has a page this year; this scope's is last year's.
    assert [e.text for e in await diary.mentioned(OTHER, "May 4th", clock.now(), UTC)] == [
        "Another scope's fourth of May."
    ]


async def test_a_day_named_without_a_year_is_of_the_most_recent_year_with_memories_of_it(
    store: Store, bank: MemoryBank
) -> None:
    """A year with no page but memories of that day is the one meant, over an older year with
    a page (the memories of the day are then that year's); another scope's memories of the
    day choose nothing here."""
    now = datetime(2026, 6, 10, 10, 0, tzinfo=UTC)
    await write_page(store, SCOPE, date(2024, 5, 4), "An older fourth of May.")
    await bank.remember(SCOPE, "kites on the hill", when=datetime(2025, 5, 4, 23, 30, tzinfo=UTC))
    await bank.remember(OTHER, "their fourth of May", when=datetime(2026, 5, 4, 9, tzinfo=UTC))
    diary = Diary(store)
    [named] = await diary.named(SCOPE, "what did we do on May 4th?", now, UTC)
    assert (named.first, named.pages) == (date(2025, 5, 4), ())
    # In Shanghai that memory was made on the 5th: the older page's year is the one.
    [named] = await diary.named(SCOPE, "May 4th?", now, ZoneInfo("Asia/Shanghai"))
    assert named.first == date(2024, 5, 4)
    assert [e.text for e in named.pages] == ["An older fourth of May."]


async def test_a_yearless_day_looks_back_a_handful_of_years_only(store: Store) -> None:
    now = datetime(2026, 6, 10, 10, 0, tzinfo=UTC)
    await write_page(store, SCOPE, date(2026 - YEARS_BACK, 3, 3), "Just within reach.")
    await write_page(store, SCOPE, date(2026 - YEARS_BACK - 1, 3, 4), "Too long ago.")
    diary = Diary(store)
    [page] = await diary.mentioned(SCOPE, "March 3rd", now, UTC)
    assert page.text == "Just within reach."
    assert await diary.mentioned(SCOPE, "March 4th", now, UTC) == []


async def test_a_leap_day_without_a_year_finds_the_last_leap_year_with_a_page(
    store: Store,
) -> None:
    now = datetime(2029, 3, 10, 10, 0, tzinfo=UTC)  # the most recent 29 February: 2028
    await write_page(store, SCOPE, date(2024, 2, 29), "A leap day page.")
    diary = Diary(store)
    [page] = await diary.mentioned(SCOPE, "Feb 29th", now, UTC)
    assert page.text == "A leap day page."


async def test_a_span_brings_its_pages_newest_first(store: Store) -> None:
    now = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)  # a Monday
    for day in (20, 21, 22, 23, 25, 27, 28, 29, 30):
        await write_page(store, SCOPE, date(2026, 11, day), f"Page of the {day}th.")
    await write_page(store, OTHER, date(2026, 11, 26), "Another scope's page.")
    diary = Diary(store)

    async def days(message: str) -> list[int]:
        return [e.day.day for e in await diary.mentioned(SCOPE, message, now, UTC)]

    assert await days("what did we do last weekend?") == [29, 28]
    assert await days("上周末我们干嘛了") == [29, 28]
    assert await days("a few days ago") == [28, 27, 25]  # 25-28 November
    assert await days("前几天") == [28, 27, 25]
    assert await days("the other day") == [29, 28, 27, 25, 23]
    assert await days("earlier this week") == []  # said on a Monday
    assert await days("last week") == [29, 28, 27, 25, 23]
    # At most MAX_PAGES, the newest.
    assert await days("this month") == [30, 29, 28, 27, 25, 23][:MAX_PAGES]
    # In the order mentioned, each page once.
    assert await days("yesterday, and the week before last") == [29, 22, 21, 20]
    assert await days("last weekend or yesterday") == [29, 28]


async def test_a_month_without_a_year_finds_the_most_recent_year_with_pages(
    store: Store,
) -> None:
    now = datetime(2026, 5, 3, 10, 0, tzinfo=UTC)
    await write_page(store, SCOPE, date(2025, 5, 24), "Late May last year.")
    await write_page(store, SCOPE, date(2025, 5, 2), "Early May last year.")
    await write_page(store, SCOPE, date(2026, 4, 2), "Early April.")
    diary = Diary(store)

    async def texts(message: str) -> list[str]:
        return [e.text for e in await diary.mentioned(SCOPE, message, now, UTC)]

    # This May so far has no page: last May's, newest first.
    assert await texts("what happened in May?") == ["Late May last year.", "Early May last year."]
    assert await texts("5月") == ["Late May last year.", "Early May last year."]
    assert await texts("late May") == ["Late May last year."]  # this year's still ahead
    assert await texts("上个月初") == ["Early April."]
    assert await texts("今年5月") == []


# --- wiping a scope ----------------------------------------------------------------------------


async def test_wiping_a_scope_takes_its_diary_profiles_and_prune_reports_only(
    tmp_path: Path, store: Store
) -> None:
    now = datetime(2026, 2, 1, 9, 0, tzinfo=UTC)
    bank = await MemoryBank.open(tmp_path, "hash", FakeClock(now), deterministic=True, store=store)
    try:
        for scope in (SCOPE, OTHER):
            await write_page(store, scope, date(2026, 1, 20), f"page of {scope}")
            await bank.remember(
                scope, "A trivial thing.", when=now - timedelta(days=30), importance=1
            )
            await bank.remember(scope, "Something kept.", when=now, importance=3)
            _, forgotten = await bank.prune(scope, now, day=now.date(), seed=1)
            assert len(forgotten) == 1

        assert await store.wipe_memories(SCOPE) == 1

        assert await store.count_memories(SCOPE) == 0
        assert await store.diary_entry(SCOPE, date(2026, 1, 20)) is None
        assert await store.profiles(SCOPE) == []
        assert await store.pruned_since(now - timedelta(days=1), scope=SCOPE) == []
        assert await store.last_prune(SCOPE) is None
        assert await store.count_memories(OTHER) == 1
        page = await store.diary_entry(OTHER, date(2026, 1, 20))
        assert page is not None and page.text == f"page of {OTHER}"
        [profile] = await store.profiles(OTHER)
        assert profile.text == f"profile in {OTHER}"
        [report] = await store.pruned_since(now - timedelta(days=1), scope=OTHER)
        assert report.scope == OTHER and report.reason
        assert await store.last_prune(OTHER) == now.date()
    finally:
        await bank.close()


async def test_every_speaker_keeps_a_profile_under_their_current_name_with_their_aliases(
    bank: MemoryBank, store: Store
) -> None:
    """In a shared room: a rename between conversations and within one, a nickname asked for
    in English and in Chinese, and the names the model learned (under a label of the
    conversation's; any other key is dropped) all become aliases of the right member."""
    channel = "miao/discord:g1:channel:c1"
    first = await archive(store, "I'm new here", "Welcome!", scope=channel, speaker="Ana")
    model = ScriptedModel(answer(profiles={"U1": "New in the channel."}))
    await Encoder(bank, model).encode(first, channel, AUTHOR)

    turns = [
        ("u1", "Annie", "Call me Nana, please."),
        ("u2", "小波", "以后叫我波波吧。"),
        ("u1", "Annie B", "And I like tea."),
        ("u2", "小波", "我喜欢咖啡。"),
    ]
    conversation_id = await store.archive_conversation(
        ArchiveWrite(
            PERSONA,
            channel.partition("/")[2],
            started_at=T0 + timedelta(hours=1),
            ended_at=T0 + timedelta(hours=2),
            reason="idle",
            turns=[
                {
                    "role": "user",
                    "speaker": name,
                    "text": text,
                    "at": (T0 + timedelta(hours=1, minutes=i)).isoformat(),
                    "user_id": user_id,
                    "emotion": "",
                }
                for i, (user_id, name, text) in enumerate(turns)
            ],
            snapshot={},
        )
    )
    second = await store.conversation(conversation_id)
    assert second is not None
    reply = json.loads(answer(profiles={"U2": "Likes coffee."}))
    reply["names"] = {"U2": ["Little Bo", 7], "U3": ["Ghost"], "Annie": ["Mallory"]}
    model = ScriptedModel(json.dumps(reply))
    await Encoder(bank, model).encode(second, channel, AUTHOR)

    request = model.calls[0][0][1]
    assert '"names"' in request  # the model is asked for them
    found = {p.user_id: (p.name, p.aliases, p.text) for p in await store.profiles(channel)}
    assert found == {
        "u1": ("Annie B", ("Nana", "Annie", "Ana"), "New in the channel."),
        "u2": ("小波", ("Little Bo", "波波"), "Likes coffee."),
    }
    members = {m.user_id: m.aliases for m in await store.members(channel)}
    assert members == {"u1": found["u1"][1], "u2": found["u2"][1]}
