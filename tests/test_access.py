"""The gate in front of the engine: allow and block lists, and the per-user rate limit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from adapters.kinds import RULES
from bot.access import Gate
from bot.catalogue import say
from bot.config import AccessConfig, load_config
from tests.fakes.factories import Bot, make_event, open_bot


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[Bot]:
    opened = await open_bot(tmp_path / "k.sqlite3")
    opened.engine.admission.gate = Gate(AccessConfig(messages_per_minute=3, block_users=["u666"]))
    try:
        yield opened
    finally:
        await opened.close()


async def test_over_the_limit_the_persona_says_so_once_then_stays_quiet(bot: Bot) -> None:
    answers = []
    for i in range(6):
        bot.clock.advance(seconds=5)
        answers.append((await bot.engine.handle(make_event(f"message {i}"))).text)
    assert answers[:3] == ["ok", "ok", "ok"]
    assert answers[3] == say("en", "slow_down")
    assert answers[4:] == ["", ""]
    assert len(bot.model.calls) == 3  # nothing over the limit reached the model
    session = await bot.engine.session(make_event())
    assert [t.text for t in session.turns if t.role == "user"] == [
        "message 0",
        "message 1",
        "message 2",
    ]
    # Another user is not slowed down by Alice.
    other = make_event("hi", user_id="u2", user_name="Bo")
    assert (await bot.engine.handle(other)).text == "ok"
    # A minute after her first message, Alice may talk again (and would be told again).
    bot.clock.advance(minutes=1)
    assert (await bot.engine.handle(make_event("back"))).text == "ok"


async def test_a_blocked_user_gets_silence_and_leaves_no_trace(bot: Bot) -> None:
    reply = await bot.engine.handle(make_event("let me in", user_id="u666"))
    assert reply.text == "" and not reply.chunks
    assert bot.model.calls == []
    session = await bot.engine.session(make_event(user_id="u666"))
    assert session.turns == []


@pytest.mark.parametrize(
    ("settings", "event", "allowed"),
    [
        (AccessConfig(allow_users=["u1"]), make_event(user_id="u1"), True),
        (AccessConfig(allow_users=["u1"]), make_event(user_id="u2"), False),
        (AccessConfig(allow_chats=["g1"]), make_event(is_dm=False, chat_id="g1"), True),
        (AccessConfig(allow_chats=["g1"]), make_event(is_dm=False, chat_id="g2"), False),
        # An allow list of servers does not shut out private chats, which are in none.
        (AccessConfig(allow_chats=["g1"]), make_event(is_dm=True), True),
        (AccessConfig(allow_channels=["c1"]), make_event(is_dm=False, channel_id="c2"), False),
        (AccessConfig(block_channels=["c1"]), make_event(is_dm=False, channel_id="c1"), False),
        (AccessConfig(block_chats=["g1"]), make_event(is_dm=False, chat_id="g1"), False),
        # A block wins over an allow.
        (AccessConfig(allow_users=["u1"], block_users=["u1"]), make_event(user_id="u1"), False),
        # Discord roles: in a server a blocked role shuts out, an allow list needs one of its
        # roles; a DM is in no server, so it has no roles to judge.
        (AccessConfig(block_roles=["r9"]), make_event(is_dm=False, roles=("r1", "r9")), False),
        (AccessConfig(allow_roles=["r1"]), make_event(is_dm=False, roles=("r1",)), True),
        (AccessConfig(allow_roles=["r1"]), make_event(is_dm=False, roles=("r2",)), False),
        (AccessConfig(allow_roles=["r1"]), make_event(is_dm=False), False),
        (AccessConfig(allow_roles=["r1"]), make_event(is_dm=True), True),
        (AccessConfig(), make_event(), True),
    ],
)
def test_allow_and_block_lists(settings: AccessConfig, event, allowed: bool) -> None:
    assert Gate(settings).allowed(event) is allowed


def test_the_hosts_console_is_never_held_back() -> None:
    gate = Gate(AccessConfig(messages_per_minute=1, block_users=["me"]))
    event = make_event(platform="console", user_id="me")
    assert [gate.admit(event, event.timestamp) for _ in range(3)] == ["admit"] * 3


def test_no_limit_admits_everything() -> None:
    gate = Gate(AccessConfig(messages_per_minute=0))
    event = make_event()
    assert all(gate.admit(event, event.timestamp) == "admit" for _ in range(100))
    late = event.timestamp + timedelta(seconds=1)
    assert gate.admit(event, late) == "admit"


def test_access_settings_from_the_file(tmp_path: Path) -> None:
    path = tmp_path / "kizuna.toml"
    path.write_text(
        '[access]\nmessages_per_minute = 10\nblock_users = ["123"]\nallow_chats = ["-100"]\n',
        encoding="utf-8",
    )
    access = load_config(path, {}, RULES).access
    assert (access.messages_per_minute, access.block_users, access.allow_chats) == (
        10,
        ["123"],
        ["-100"],
    )
