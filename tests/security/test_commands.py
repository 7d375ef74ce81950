"""The memory commands every surface shares (bot/commands/table.py) and the console that runs them:
Bob, an impostor with Alice's display name, and Alice herself in a server channel ask for
Alice's private memories, diary and profile by every command, by her ids and by words that
match them. Nothing of hers comes back, nothing of hers is deleted, nothing crashes."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar, cast

import pytest

from adapters.console import ConsoleChat
from bot.access import NotAllowed
from bot.commands import conversation as conversation_commands
from bot.commands import memory as memory_commands
from bot.commands import table as commands
from bot.runtime.assemble import Runtime
from bot.runtime.scheduler import Scheduler
from memory.records import NewIntention
from tests.security.conftest import (
    ALICE,
    ALLERGY,
    BOB,
    CRIED,
    DM_MEMORY,
    GROUP_MEMORY,
    HUMS,
    PASSWORD,
    PIN,
    STRANGERS,
    World,
    event,
    leaked,
)

T = TypeVar("T")
# What people type to reach what is not theirs: her words, her name, injections.
QUERIES = [
    "zebraquokka bank pin",
    "Alice",
    "marmosetfjord narwhalpumpkin axolotlbrioche quetzalmango",
    "' OR 1=1 --",
    '" OR scope LIKE "%',
    "*",
    "scope:pip/discord:dm:u1",
    "pip/discord:dm:u1",
    "NEAR(zebraquokka pin)",
    "../../u1",
    "\x00",
]
# (who asks, where, persona) and which of Alice's words they may see there (her own, there).
ASKERS = [
    *STRANGERS,
    pytest.param(
        ALICE,
        "group",
        "pip",
        (HUMS, CRIED, ALLERGY),
        id="alice-in-the-server",
    ),
    pytest.param(BOB, "group", "tavern", (), id="bob-in-the-tavern-channel"),
    pytest.param(ALICE, "group", "tavern", (ALLERGY,), id="alice-in-the-tavern-channel"),
]


async def refused_or(work: Awaitable[T]) -> T | None:
    """What a command gives, or None where it is refused (a member, not an admin, of a channel
    whose memory is shared)."""
    try:
        return await work
    except NotAllowed:
        return None


async def everything_said(world: World, user: str, where: str, persona: str) -> str:
    """Every command's answer to `user`, for every query and every one of Alice's ids."""
    services = world.bot.services
    asking = event(user, where=where, persona=persona)
    said: list[str] = []
    for query in QUERIES:
        hit = await memory_commands.closest(services, asking, query)
        said.append(memory_commands.format_memory(hit, services) if hit else "")
        said += [
            memory_commands.format_memory(m, services)
            for m in await memory_commands.list_memories(services, asking, query)
        ]
        offered = await refused_or(memory_commands.forget_candidates(services, asking, query))
        said += [m.text for m in offered or []]
        said.append(await memory_commands.diary(services, asking, query))
    said += [
        memory_commands.format_memory(m, services)
        for m in await memory_commands.list_memories(services, asking)
    ]
    for memory_id in world.alice_ids:
        gone = await refused_or(memory_commands.forget(services, asking, memory_id))
        said.append(gone.text if gone else "")
    for day in ("", "2026-01-01", "today", "yesterday", "last monday"):
        said.append(await memory_commands.diary(services, asking, day))
    said.append(await memory_commands.profile(services, asking))
    said.append(await conversation_commands.show_state(services, asking))
    said.append(await memory_commands.dm_memories(services, asking, ""))
    exported = await refused_or(memory_commands.export(services, asking))
    said.append(exported[1].decode("utf-8") if exported else "")
    said.append(json.dumps(await services.desk.save(asking), ensure_ascii=False))
    return "\n".join(said)


@pytest.mark.parametrize(("user", "where", "persona", "allowed"), ASKERS)
async def test_no_command_reaches_what_is_not_the_askers(
    world: World, user: str, where: str, persona: str, allowed: tuple[str, ...]
) -> None:
    said = await everything_said(world, user, where, persona)
    assert [m for m in leaked(said) if m not in allowed] == []
    # Her memories are all still there (but those in the asker's own scope: hers to forget).
    asking = world.scope(user, where, persona)
    for memory_id, scope in zip(
        world.alice_ids,
        [world.scope(ALICE), world.scope(ALICE, "group"), world.scope(ALICE, persona="tavern")],
        strict=True,
    ):
        if scope != asking:
            assert [m.id for m in await world.bot.bank.get(scope, [memory_id])] == [memory_id]


async def test_alice_herself_gets_her_own_in_her_dm(world: World) -> None:
    """The walls are not simply closed doors: in her DM, Alice's commands find her things."""
    services, mine = world.bot.services, event(ALICE)
    assert DM_MEMORY in (await memory_commands.export(services, mine))[1].decode()
    assert "axolotlbrioche" in await memory_commands.profile(services, mine)
    assert "narwhalpumpkin" in await memory_commands.diary(services, mine, "2026-01-01")
    hit = await memory_commands.closest(services, event(ALICE, where="group"), "marmosetfjord")
    assert hit is not None and hit.text == GROUP_MEMORY


async def test_a_refused_forget_by_id_is_logged(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="memory.bank.bank"):
        assert await memory_commands.forget(world.bot.services, event(BOB), world.dm_id) is None
    [line] = [r.getMessage() for r in caplog.records if r.name == "memory.bank.bank"]
    assert line == f"forget refused: no memory {world.dm_id} in scope {world.scope(BOB)}"


# -- the console ------------------------------------------------------------------------------


async def console(world: World, tmp_path: Path, user: str, typed: str) -> str:
    """What the console prints to `user` typing `typed` (one command a line)."""
    out = io.StringIO()
    runtime = Runtime(
        config=cast("object", None),  # type: ignore[arg-type]  # the console reads none
        engine=world.bot.engine,
        services=world.bot.services,
        store=world.bot.store,
        bank=world.bot.bank,
        scheduler=cast(Scheduler, None),  # started and stopped by the caller, not the console
        data_dir=tmp_path,
    )
    persona = world.bot.personas["pip"]
    chat = ConsoleChat(
        runtime, persona, user, stdin=io.StringIO(typed), stdout=out, interactive=False
    )
    await chat.run()
    return out.getvalue()


async def test_the_console_shows_bob_nothing_of_alices(world: World, tmp_path: Path) -> None:
    bank = world.bot.bank
    alice = await bank.remember("pip/console:dm:alice", DM_MEMORY, speaker="alice")
    await bank.remember("pip/console:dm:bob", "Bob's bank is the kite bank", speaker="bob")
    typed = "\n".join(
        [
            "memories",
            *(f"/memories {q}" for q in QUERIES),
            *(f"/get {q}" for q in QUERIES),
            "/forget bank",
            "²",  # a digit to isdigit(), not to int(): once a crash
            "/forget bank",
            "99999999999999999999999",
            "/forget zebraquokka bank pin",
            "1",  # Bob's own bank memory, the only match
            "diary",
            "/diary 2026-01-01",
            "profile",
            "log",
            "save",
        ]
    )
    printed = await console(world, tmp_path, "bob", typed + "\n")
    exports = "".join(p.read_text() for p in (tmp_path / "exports").glob("*.json"))
    assert leaked(printed + exports) == []
    assert printed.count("Cancelled.") == 2
    assert "Forgotten: Bob's bank is the kite bank" in printed
    assert [m.id for m in await bank.get("pip/console:dm:alice", [alice])] == [alice]


@pytest.mark.parametrize(("user", "where", "persona", "allowed"), ASKERS)
async def test_no_one_lists_or_cancels_alices_intentions_but_where_they_are_hers(
    world: World, user: str, where: str, persona: str, allowed: tuple[str, ...]
) -> None:
    """What Alice said is coming, in each of her scopes (and in the tavern channel's, shared):
    the asker's `/intentions` and `/export` show only their own there, and cancelling each of
    hers by id (a forged button) cancels none but their own."""
    services, store = world.bot.services, world.bot.store
    now = services.clock.now()
    hers = {
        world.scope(ALICE): PIN,
        world.scope(ALICE, "group"): HUMS,
        world.scope(ALICE, persona="tavern"): PASSWORD,
        world.scope(ALICE, "group", "tavern"): ALLERGY,
    }
    ids = {
        await store.add_intention(
            NewIntention(scope, ALICE, "follow_up", what, f"ask about {what}", now, now, now)
        ): scope
        for scope, what in hers.items()
    }
    asking = event(user, where=where, persona=persona)
    listed = await commands.run(services, asking, "intentions")
    exported = await refused_or(memory_commands.export(services, asking))
    in_export = json.loads(exported[1])["intentions"] if exported else []
    cancelled = [
        (await commands.run(services, asking, "intentions", f"!{number}")).text for number in ids
    ]
    shown = "\n".join([listed.text, json.dumps(in_export), *cancelled])
    mine = user == ALICE  # (Bob shares the tavern channel's scope with her, not her intentions)
    own = {hers[world.scope(user, where, persona)]} if mine else set()
    assert {m for m in leaked(shown) if m not in allowed} <= own
    still = {i.id for scope in hers for i in await store.intentions(scope, ALICE)}
    assert {ids[i] for i in set(ids) - still} == (
        {world.scope(user, where, persona)} if mine else set()
    )
