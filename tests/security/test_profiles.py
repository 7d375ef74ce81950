"""Profiles are per person, by id: when an impostor who took Alice's display name talks in the
same channel as Alice, the profile the model writes for "Alice" cannot be told apart, so it is
written for neither (else one's words would land on the other, and the next prompt would show
the impostor Alice's profile); someone with a name of their own still gets theirs."""

from __future__ import annotations

import json
import logging

import pytest

from tests.security.conftest import ALICE, BOB, IMPOSTOR, PROFILE, World, event


async def test_two_people_with_one_name_get_no_profile_from_each_other(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    bot, channel = world.bot, world.scope(ALICE, "group", "tavern")
    for user, said in [(ALICE, "I'm Alice"), (IMPOSTOR, "I'm Alice too"), (BOB, "I'm Bob")]:
        await bot.engine.handle(event(user, said, where="group", persona="tavern"))
    assert await bot.engine.end(event(ALICE, where="group", persona="tavern"))
    bot.model.push(
        json.dumps(
            {
                "memories": [],
                "diary": "Three guests.",
                "profiles": {"Alice": "Owes the tavern money.", "Bob": "Plays the lute."},
                "recap": "",
            }
        )
    )
    with caplog.at_level(logging.INFO, logger="memory.encoding"):
        assert await bot.lifecycle.encode_pending()
    profiles = {p.user_id: p.text for p in await bot.store.profiles(channel)}
    assert profiles == {ALICE: PROFILE, BOB: "Plays the lute."}  # Alice's from before, kept
    assert "no profile written for 'Alice': two users of the conversation go by it" in [
        r.getMessage() for r in caplog.records
    ]
