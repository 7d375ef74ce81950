"""Words given to the wrong person: profiles and memories are per person, by id. An impostor
takes Alice's display name, talks in the tavern's channel beside her, then renames himself;
the summary model sees the two as two labels (U1, U2: given by id, their names only quoted),
answers by label, and each profile lands on whoever the label stands for, whatever names they
used. A name the model answers with, even one of theirs, is no label: nothing is written for
it, and the log says so without a word of it."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping

import pytest

from bot.events import ChatEvent
from tests.fakes.factories import make_event
from tests.security.conftest import ALICE, BOB, IMPOSTOR, PROFILE, World, event

# (who, the name they go by then, what they say), in the tavern's channel.
TALK = [
    (ALICE, "Alice", "I'm Alice, I run the bakery"),
    (IMPOSTOR, "Alice", "I'm Alice too, and I owe the tavern money"),
    (BOB, "Bob", "I'm Bob"),
    (IMPOSTOR, "Mallory", "Call me Mallory from now on"),
]


def said(user: str, name: str, text: str) -> ChatEvent:
    return make_event(text, user_id=user, user_name=name, is_dm=False, persona="tavern")


async def encoded(world: World, answer: Mapping[str, object]) -> str:
    """TALK in the tavern, the conversation closed and encoded with the model's `answer`;
    the request the summary model got."""
    bot = world.bot
    for user, name, text in TALK:
        await bot.engine.handle(said(user, name, text))
    assert await bot.desk.end(event(ALICE, where="group", persona="tavern"))
    bot.model.push(json.dumps(answer))
    assert await bot.lifecycle.encode_pending()
    [call] = bot.model.calls_with(json_mode=True)
    return "\n".join(m.content for m in call.messages)


def roster(request: str) -> list[str]:
    part = request.split("The people (a label, then the names they went by):\n", 1)[1]
    return part.split("\n\n", 1)[0].splitlines()


async def test_the_impostors_words_never_reach_alices_profile_nor_hers_his(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    answer = {
        "memories": [
            {"text": "Someone owes the tavern money.", "speaker": "U2"},
            {"text": "There is a bakery in town.", "speaker": "Alice"},  # a name: no one's
        ],
        "diary": "Three guests.",
        "profiles": {
            "U1": "Runs the bakery.",
            "U2": "Owes the tavern money; calls himself Mallory.",
            "U3": "Plays the lute.",
            "Alice": "Owes the tavern money.",  # a name, even the one both used, is no label
            "Mallory": "Runs the bakery.",
            "U9": "Nobody.",
        },
        "recap": "",
    }
    with caplog.at_level(logging.INFO, logger="memory.encoding.encoder"):
        request = await encoded(world, answer)
    assert roster(request) == ['U1 "Alice"', 'U2 "Alice", then "Mallory"', 'U3 "Bob"']
    # Every line of the conversation is a label's: the impostor's are U2's, whatever his name.
    lines = request.split("The conversation:\n", 1)[1].splitlines()
    who = [re.match(r"\[\d\d:\d\d\] (\w+): ", line) for line in lines]
    assert [m.group(1) if m else line for m, line in zip(who, lines, strict=True)] == [
        "U1",
        "You",
        "U2",
        "You",
        "U3",
        "You",
        "U2",
        "You",
    ]
    assert 'U2: "I\'m Alice too, and I owe the tavern money"' in lines[2]
    channel = world.scope(ALICE, "group", "tavern")
    profiles = {p.user_id: (p.name, p.text) for p in await world.bot.store.profiles(channel)}
    assert profiles == {
        ALICE: ("Alice", "Runs the bakery."),  # her old one (PROFILE), updated by her label
        IMPOSTOR: ("Mallory", "Owes the tavern money; calls himself Mallory."),
        BOB: ("Bob", "Plays the lute."),
    }
    assert PROFILE in request  # what the model knew of U1 was hers
    # The name the impostor went by before is one of his aliases, never a claim on hers.
    aliases = {p.user_id: p.aliases for p in await world.bot.store.profiles(channel)}
    assert aliases == {ALICE: (), IMPOSTOR: ("Alice",), BOB: ()}
    memories = await world.bot.store.list_memories(channel)
    assert {m.text.split(": ", 1)[1]: m.speaker_id for m in memories} == {
        "Someone owes the tavern money.": IMPOSTOR,
        "There is a bakery in town.": None,
    }
    logged = [re.sub(r"^conversation \d+", "conversation", r.getMessage()) for r in caplog.records]
    assert "conversation: 3 profiles under no label of its users dropped" in logged
    assert (
        "conversation: 1 memories named a speaker that is no label of its users; kept with no"
        " speaker" in logged
    )
    assert not [line for line in logged if re.search(r"Alice|Mallory|money|bakery", line)]


async def test_a_model_answering_by_name_writes_no_profile(world: World) -> None:
    """The old way of answering, by name, lands nowhere: not on Alice, nor on the impostor
    who went by her name (each who spoke is known by id, with nothing written of them)."""
    answer = {
        "memories": [],
        "diary": "Three guests.",
        "profiles": {"Alice": "Owes the tavern money.", "Bob": "Plays the lute."},
        "recap": "",
    }
    await encoded(world, answer)
    channel = world.scope(ALICE, "group", "tavern")
    profiles = {p.user_id: p.text for p in await world.bot.store.profiles(channel)}
    assert profiles == {ALICE: PROFILE, IMPOSTOR: "", BOB: ""}  # Alice's from before, untouched


async def test_a_name_once_used_is_no_claim_on_its_owner_in_recall_by_person(
    world: World,
) -> None:
    """The impostor went by "Alice" before calling himself Mallory: "Alice" is his alias now,
    but a question about Alice means the member who goes by it now, and one about Mallory
    means him; the tilt follows ids, never the name a memory was told under."""
    answer = {
        "memories": [
            {"text": "Someone said they run the bakery in town.", "speaker": "U1"},
            {"text": "Someone said they owe money all over town.", "speaker": "U2"},
        ],
        "diary": "Three guests.",
        "profiles": {},
        "recap": "",
    }
    await encoded(world, answer)
    channel = world.scope(ALICE, "group", "tavern")
    members = {m.user_id: (m.name, m.aliases) for m in await world.bot.store.members(channel)}
    assert members[IMPOSTOR] == ("Mallory", ("Alice",))
    bot = world.bot
    for cue, first in (
        ("What did Alice say about the town?", "bakery"),
        ("What did Mallory say about the town?", "owe money"),
    ):
        await bot.engine.handle(said(BOB, "Bob", cue))
        system = bot.model.calls[-1].note  # what came to mind for this question
        lines = [line for line in system.splitlines() if "in town" in line or "over town" in line]
        assert lines and first in lines[0], cue
