"""When a persona speaks in a group (bot.groups.floor): called on, it speaks; uninvited, as its
settings, the room and chance allow; a bot, never."""

from __future__ import annotations

import asyncio
import random
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.catalogue import say
from bot.commands import table as commands
from bot.events import ChatEvent
from bot.groups.floor import ChannelFloor, Floor, FloorDecision, called, is_question
from bot.llm.offline import OfflineChatModel
from bot.persona.file import GroupPolicy, Identity, Persona, load_persona
from bot.prompts import FLOOR_TASK, floor_messages
from bot.tomlfile import TomlError
from memory.clock import FakeClock
from memory.storage.postgres import PgStore
from tests.fakes.factories import make_event, make_persona, open_bot
from tests.fakes.models import ScriptedChatModel, make_router
from tests.fakes.postgres import StoreOpener, cut_listening


def group(text: str, user: str = "u1", channel: str = "c1") -> ChatEvent:
    """A group's message the platform says nothing of (no mention, no reply)."""
    return make_event(text, is_dm=False, user_id=user, channel_id=channel, addressed=())


def persona(**policy: Any) -> Persona:
    made = make_persona("miao", name="Miao", nickname="Mimi")
    made.group = GroupPolicy(names=["喵喵"], **policy)
    return made


def floor(clock: FakeClock | None = None, seed: int = 0) -> Floor:
    return Floor(clock or FakeClock(), random.Random(seed))


@pytest.mark.parametrize(
    ("text", "names", "expected"),
    [
        ("hey Miao, look", ["Miao"], True),
        ("MIAO!", ["Miao"], True),
        ("miaomiao is a cat", ["Miao"], False),  # a word of its own
        ("the pipeline broke", ["Pip"], False),
        ("pip_install failed", ["Pip"], False),
        ("Pip你好", ["Pip"], True),  # no space before Chinese
        ("喵喵你在吗", ["喵喵"], True),  # a Chinese name anywhere
        ("hey pip_bot", ["pip_bot"], True),
        ("@Miao look", ["Miao"], False),  # a mention: the platform says whose
        ("nobody here", ["Miao", ""], False),
    ],
)
def test_a_name_is_called_as_a_word_in_any_case(
    text: str, names: list[str], expected: bool
) -> None:
    assert called(text, names) is expected


def test_questions_in_english_and_chinese() -> None:
    assert is_question("are you there?") and is_question("你在吗") and is_question("真的吗？")
    assert not is_question("I am here.") and not is_question("吗啡")


async def test_called_on_it_speaks_in_listen_mode_too() -> None:
    miao, room = persona(mode="listen"), floor()
    for event, why in (
        (replace(group("hi"), addressed=frozenset({"mention"})), "mention"),
        (replace(group("hi"), addressed=frozenset({"reply"})), "reply"),
        (replace(group("hi"), addressed=frozenset({"bound"})), "bound"),
        (group("Mimi, are you awake"), "name"),
        (group("喵喵早上好"), "name"),
        (replace(group("hey kizuna_bot"), names=("kizuna_bot",)), "name"),
    ):
        heard = room.hear(miao, event)
        assert heard is not None and heard.call == why
        verdict = await room.decide(miao, event, [heard])
        assert verdict.speak and verdict.why == why
    said = group("nice weather today")
    heard = room.hear(miao, said)
    assert heard is not None and heard.call is None
    assert (await room.decide(miao, said, [heard])).why == "listen"


async def test_a_question_right_after_its_answer_by_the_same_person_is_for_it() -> None:
    clock = FakeClock()
    miao, room = persona(), floor(clock)
    first = group("Miao, what is for dinner")
    room.hear(miao, first)
    room.spoke(miao, first)
    follow = room.hear(miao, group("and for dessert?"))
    assert follow is not None and follow.call == "question"
    # Someone else spoke in between: the question may be theirs to answer.
    room.spoke(miao, first)
    room.hear(miao, group("I'm hungry", user="u2"))
    later = room.hear(miao, group("and for dessert?"))
    assert later is not None and later.call is None
    # Not a question, or asked by another: not for it either.
    room.spoke(miao, first)
    assert (h := room.hear(miao, group("ok thanks"))) is not None and h.call is None
    room.spoke(miao, first)
    assert (h := room.hear(miao, group("what?", user="u2"))) is not None and h.call is None


async def test_uninvited_it_joins_by_chance_after_its_cooldown() -> None:
    clock = FakeClock()
    miao = persona(talkativeness=0.5, cooldown_seconds=60)
    room = floor(clock, seed=3)
    draws = random.Random(3)
    spoke = 0
    for n in range(40):
        clock.advance(seconds=61)  # past the cool-down each time, and no crowd
        event = group(f"talking about tea {n}", user=f"u{n % 2}")
        heard = room.hear(miao, event)
        assert heard is not None
        verdict = await room.decide(miao, event, [heard])
        assert verdict.speak is (draws.random() < 0.5)  # the injected generator decides
        if verdict.speak:
            spoke += 1
            room.spoke(miao, event)
    assert 0 < spoke < 40
    clock.advance(seconds=61)
    event = group("more tea")
    heard = room.hear(miao, event)
    assert heard is not None
    room.spoke(miao, event)
    clock.advance(seconds=30)
    assert (await room.decide(miao, event, [heard])).why == "cooldown"


async def test_never_uninvited_when_quiet_by_default_or_people_talk_fast() -> None:
    clock = FakeClock()
    assert (await _uninvited(persona(), floor(clock))).why == "quiet"
    chatty, room = persona(talkativeness=1.0, cooldown_seconds=0), floor(clock)
    for n in range(4):  # two people, four messages within the minute
        room.hear(chatty, group(f"line {n}", user=f"u{n % 2}"))
        clock.advance(seconds=5)
    assert (await _uninvited(chatty, room)).why == "crowd"
    clock.advance(seconds=120)
    assert (await _uninvited(chatty, room)).speak


async def _uninvited(miao: Persona, room: Floor) -> FloorDecision:
    event = group("so anyway")
    heard = room.hear(miao, event)
    assert heard is not None
    return await room.decide(miao, event, [heard])


async def test_past_its_ceiling_it_answers_when_called_but_never_joins_in() -> None:
    clock = FakeClock()
    miao = persona(max_per_minute=3, talkativeness=1.0, cooldown_seconds=0)
    room = floor(clock)
    called_on = replace(group("Miao!"), addressed=frozenset({"mention"}))
    for _ in range(4):
        heard = room.hear(miao, called_on)
        assert heard is not None and (await room.decide(miao, called_on, [heard])).speak
        room.spoke(miao, called_on)
        clock.advance(seconds=5)
    assert (await _uninvited(miao, room)).why == "ceiling"
    clock.advance(seconds=60)  # a minute since: its messages no longer count
    assert (await _uninvited(miao, room)).speak


async def test_a_channels_settings_change_the_personas_there_only() -> None:
    miao, room = persona(), floor()
    here, there = group("so anyway"), group("so anyway", channel="c2")
    await room.set_channel(miao, here, ChannelFloor(mode="listen", talkativeness=1.0))
    assert (await room.policy(miao, here)).mode == "listen"
    assert (await room.policy(miao, here)).talkativeness == 1.0
    assert await room.policy(miao, there) == miao.group
    await room.set_channel(miao, here, ChannelFloor())
    assert await room.policy(miao, here) == miao.group


def test_a_channels_settings_are_kept_as_json_and_checked() -> None:
    assert ChannelFloor().to_json() is None
    changed = ChannelFloor().changed("talkativeness", "0.25")
    assert changed == ChannelFloor(talkativeness=0.25)
    assert ChannelFloor.from_json(changed.to_json() or "") == changed
    assert ChannelFloor().changed("talkativeness", "2") is None
    assert ChannelFloor().changed("mode", "shout") is None
    assert ChannelFloor().changed("max_per_minute", "0.5") is None
    odd = '{"mode": "shout", "max_per_minute": 5, "cooldown_seconds": -1}'
    assert ChannelFloor.from_json(odd) == ChannelFloor(max_per_minute=5)
    assert ChannelFloor.from_json("not json") == ChannelFloor()


async def test_asking_the_model_lets_it_decide_and_the_offline_model_declines() -> None:
    clock = FakeClock()
    miao = persona(talkativeness=1.0, cooldown_seconds=0, ask_model=True)
    model = ScriptedChatModel()
    model.push('{"answer": true}', '{"answer": false}', "no idea")
    room = Floor(clock, random.Random(0), models=make_router(model))
    assert (await _uninvited(miao, room)).speak
    assert (await _uninvited(miao, room)).why == "model"
    assert (await _uninvited(miao, room)).why == "model"  # an unclear answer is no
    assert model.calls[0].messages[0].content == FLOOR_TASK
    assert '"so anyway"' in model.calls[0].messages[1].content
    offline = await OfflineChatModel().complete(floor_messages("Miao", [("Ann", "hi")]))
    assert offline.text == '{"answer": false}'


async def test_another_persona_is_answered_by_name_only_and_so_many_times_in_a_row() -> None:
    miao, room = persona(talkativeness=1.0, cooldown_seconds=0, persona_exchanges=1), floor()

    def said_by_pip(text: str) -> ChatEvent:
        return replace(group(text, user="persona:pip"), persona="miao", from_persona=True)

    unnamed = room.hear(miao, said_by_pip("nice weather"))
    assert unnamed is not None and unnamed.persona
    assert await room.decide(miao, said_by_pip("nice weather"), [unnamed]) == FloorDecision(
        False, "persona"
    )  # never joined uninvited, however talkative
    named = said_by_pip("Miao, right?")
    assert room.call(miao, named) == "name"
    room.spoke(miao, named)  # one reply to a persona: the bound
    assert room.call(miao, said_by_pip("Miao, right?")) is None
    # A person speaks: the count starts again, once for their message however many bots
    # of the process hear it.
    person = replace(group("hi all", user="u2"), message_id="41")
    room.hear(miao, person)
    assert room.call(miao, named) == "name"
    room.spoke(miao, named)
    room.hear(miao, person)  # (the same message, heard by another bot)
    assert room.call(miao, named) is None


def test_a_persona_files_group_table_is_checked_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "miao.toml"
    path.write_text(
        '[identity]\nname = "Miao"\npersonality = "a cat"\n\n'
        '[group]\nmode = "listen"\ntalkativeness = 1.5\n',
        encoding="utf-8",
    )
    with pytest.raises(TomlError) as caught:
        load_persona(path)
    assert str(caught.value).startswith(f"{path}:7: group.talkativeness")
    path.write_text(
        '[identity]\nname = "Miao"\npersonality = "a cat"\n\n[group]\npersona_exchanges = -1\n',
        encoding="utf-8",
    )
    with pytest.raises(TomlError) as caught:
        load_persona(path)
    assert str(caught.value).startswith(f"{path}:6: group.persona_exchanges")
    path.write_text(
        '[identity]\nname = "Miao"\npersonality = "a cat"\n\n'
        '[group]\nmode = "listen"\nnames = ["喵喵"]\nmax_per_minute = 4\n',
        encoding="utf-8",
    )
    loaded = load_persona(path)
    assert loaded.group == GroupPolicy(mode="listen", names=["喵喵"], max_per_minute=4)
    assert isinstance(loaded.identity, Identity)
    assert timedelta(seconds=loaded.group.cooldown_seconds) == timedelta(minutes=2)


async def test_a_channels_settings_are_kept_in_the_store(
    open_store: StoreOpener, tmp_path: Path
) -> None:
    path = tmp_path / "kizuna.sqlite3"
    miao, here = persona(), group("so anyway")
    store = await open_store(path)
    try:
        await Floor(FakeClock(), random.Random(0), rooms=store).set_channel(
            miao, here, ChannelFloor(mode="listen")
        )
        assert await store.channel_floor("miao", "discord:c1") == '{"mode": "listen"}'
        later = Floor(FakeClock(), random.Random(0), rooms=store)  # another process, or a restart
        assert (await later.policy(miao, here)).mode == "listen"
        await later.set_channel(miao, here, ChannelFloor())
        assert await store.channel_floor("miao", "discord:c1") is None
    finally:
        await store.close()


async def test_group_shows_and_an_admin_changes_when_the_persona_speaks(tmp_path: Path) -> None:
    miao = persona(talkativeness=0.0)
    bot = await open_bot(tmp_path / "k.sqlite3", [miao])
    try:
        member = replace(group("", user="u2"), persona="miao")
        admin = replace(member, admin=True)
        shown = (await commands.run(bot.services, member, "group")).text
        assert shown.startswith("Miao here: mode speak") and "talkativeness 0 " in shown
        refused = await commands.run(bot.services, member, "group", "mode listen")
        assert refused.text == say("en", "group_admins_only", name="Miao")
        said = await commands.run(bot.services, admin, "group", "mode listen")
        assert said.text.startswith("Miao here: mode listen")
        bad = await commands.run(bot.services, admin, "group", "talkativeness lots")
        assert bad.text == say("en", "group_bad_value", setting="talkativeness", allowed="0-1")
        await commands.run(bot.services, admin, "group", "cooldown 30")
        policy = await bot.engine.floor.policy(miao, member)
        assert (policy.mode, policy.cooldown_seconds) == ("listen", 30.0)
        private = await commands.run(bot.services, replace(admin, is_dm=True), "group", "reset")
        assert private.text == say("en", "group_private", name="Miao")
        await commands.run(bot.services, admin, "group", "reset")
        assert await bot.engine.floor.policy(miao, member) == miao.group
    finally:
        await bot.close()


def test_others_since_a_message_say_its_answer_should_thread() -> None:
    clock = FakeClock()
    room, miao = floor(clock), persona()
    asked = clock.now()
    room.hear(miao, group("Miao, what tea?", user="ann"))
    clock.advance(seconds=1)
    room.hear(miao, group("and cake", user="ann"))
    assert not room.others_since(miao, group("x", user="ann"), asked, {"ann"})  # only her
    room.hear(miao, group("I like coffee", user="bob", channel="c2"))  # another channel
    assert not room.others_since(miao, group("x", user="ann"), asked, {"ann"})
    room.hear(miao, group("I like coffee", user="bob"))
    assert room.others_since(miao, group("x", user="ann"), asked, {"ann"})
    assert not room.others_since(
        miao, group("x", user="ann"), clock.now() + timedelta(seconds=1), {"ann"}
    )
    private = make_event("hi", user_id="ann")  # a private chat never threads
    assert not room.others_since(miao, private, asked, {"ann"})


@pytest.mark.parametrize("open_store", ["postgres"], indirect=True)
async def test_a_change_in_another_process_is_seen_without_a_restart(
    open_store: StoreOpener, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes on one PostgreSQL database: one's /group change reaches the other's
    kept settings through the server's notification."""
    path = tmp_path / "kizuna.sqlite3"
    miao, here = persona(), group("so anyway")
    first, second = await open_store(path), await open_store(path)
    try:
        one = Floor(FakeClock(), random.Random(0), rooms=first)
        other = Floor(FakeClock(), random.Random(0), rooms=second)
        heard = asyncio.Event()

        def changed(persona: str, room: str) -> None:
            Floor.changed_elsewhere(other, persona, room)
            heard.set()

        monkeypatch.setattr(other, "changed_elsewhere", changed)
        assert (await other.policy(miao, here)).mode != "listen"  # read, and kept
        await one.set_channel(miao, here, ChannelFloor(mode="listen"))
        async with asyncio.timeout(10):  # the notification comes from the server
            await heard.wait()
        assert (await other.policy(miao, here)).mode == "listen"
    finally:
        await first.close()
        await second.close()


@pytest.mark.parametrize("open_store", ["postgres"], indirect=True)
async def test_a_change_made_while_the_listening_connection_was_lost_is_seen(
    open_store: StoreOpener, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The connection on which a process hears of /group changes is cut (a server restart):
    what it kept is read again, and it hears again on a new connection."""
    path = tmp_path / "kizuna.sqlite3"
    miao, here, there = persona(), group("so anyway"), group("hm", channel="c2")
    first, second = await open_store(path), await open_store(path)
    try:
        one = Floor(FakeClock(), random.Random(0), rooms=first)
        other = Floor(FakeClock(), random.Random(0), rooms=second)
        # Told twice: when the connection is lost, and when it listens again on a new one.
        missed, back, heard = asyncio.Event(), asyncio.Event(), asyncio.Event()

        def lost() -> None:
            Floor.missed(other)
            (back if missed.is_set() else missed).set()

        def changed(persona: str, room: str) -> None:
            Floor.changed_elsewhere(other, persona, room)
            heard.set()

        monkeypatch.setattr(other, "missed", lost)
        monkeypatch.setattr(other, "changed_elsewhere", changed)
        assert (await other.policy(miao, here)).mode != "listen"  # read, and kept
        assert isinstance(second, PgStore)
        await cut_listening(await open_store.dsn(path), second.instance)
        async with asyncio.timeout(10):
            await missed.wait()
        await one.set_channel(miao, here, ChannelFloor(mode="listen"))
        assert (await other.policy(miao, here)).mode == "listen"
        await one.set_channel(miao, there, ChannelFloor(mode="listen"))
        assert (await other.policy(miao, there)).mode == "listen"  # read after the change
        heard.clear()
        async with asyncio.timeout(10):
            await back.wait()
        await one.set_channel(miao, there, ChannelFloor())
        async with asyncio.timeout(10):  # heard on the connection got back
            await heard.wait()
        assert (await other.policy(miao, there)).mode != "listen"
    finally:
        await first.close()
        await second.close()
