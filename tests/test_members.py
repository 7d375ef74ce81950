"""Who said what, in groups: members by stable id under the names they go by, nicknames and
renames kept as aliases, recall by person ("what did Ana say about the trip?", 我上次说了什么),
and the walls between members of a user-scoped persona. Encoding and chat by the offline
model, on a fake clock."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.chat_model import Completion, Message
from bot.commands import table as commands
from bot.conversation.recollect import by_person, meant, with_present
from bot.events import ChatEvent
from bot.llm.offline import OfflineChatModel
from bot.prompts import MEMORY_HEADING, MEMORY_HEADING_AGAIN, PEOPLE_HEADING, PROFILE_HEADING
from memory.people import aliases_of, mentions, named_members, nicknames, speaks_of_self
from memory.recall.ranking import Recalled
from memory.records import Member, Profile
from tests.fakes.factories import Bot, make_event, make_persona, open_bot
from tests.fakes.models import ScriptedChatModel

AT = datetime(2026, 1, 1, tzinfo=UTC)
ANA, BOB, TWIN = "u1", "u2", "u3"


def profile(user_id: str, name: str, *aliases: str, text: str = "") -> Profile:
    return Profile("s", user_id, name, text, AT, aliases)


# --- names: nicknames asked for, aliases, whom a cue names --------------------------------------


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Call me Nana from now on", ["Nana"]),
        ("you can call me Nana Smith.", ["Nana Smith"]),
        ("My nickname is Bee", ["Bee"]),
        ("call me later", []),
        ("don't call me Nana", []),
        ("以后就叫我娜娜吧", ["娜娜"]),
        ("叫我小波，谢谢", ["小波"]),
        ("别叫我娜娜", []),
        ("你叫我什么？", []),
        ("我叫了外卖", []),
    ],
)
def test_the_names_a_speaker_asks_for(text: str, names: list[str]) -> None:
    assert nicknames(text) == names


def test_aliases_are_the_other_names_most_recent_first() -> None:
    assert aliases_of("Annie", ["Ana", "annie", "Nana", "Annie"]) == ("Nana", "Ana")
    assert aliases_of("Bob", ["Bob"]) == ()


def test_a_cue_names_members_by_their_names_never_by_a_part_of_a_word() -> None:
    members = [profile(ANA, "Annie", "Nana", "Ana"), profile(BOB, "Bob"), profile(TWIN, "小波")]
    assert named_members("what did Ana say about the trip?", members) == [ANA]
    assert named_members("What does bob like?", members) == [BOB]
    assert named_members("小波上次说了什么", members) == [TWIN]
    assert named_members("I ate a banana", members) == []  # "ana" inside a word is no name
    assert mentions("Annie told me: my trip", ["Bo", "annie"])
    assert mentions("Bo's trip", ["Bo"]) and not mentions("bananas", ["ana", "A", "I"])
    assert mentions("Ask Nana Smith", ["nana smith"]) and not mentions(
        "Nana Smithers", ["Nana Smith"]
    )
    assert speaks_of_self("what did I tell you about my cat?") and speaks_of_self("我的猫呢")
    assert not speaks_of_self("我们去哪") and not speaks_of_self("what did Ana say?")


def test_a_shared_name_means_the_asker_if_theirs_else_everyone_who_has_it() -> None:
    # Newest profile first: two members go by Alice now; Mallory went by Alice once.
    members = [profile(TWIN, "Alice"), profile(ANA, "Alice"), profile(BOB, "Mallory", "Alice")]
    assert named_members("what did Alice say?", members) == [TWIN, ANA]
    assert named_members("what did Alice say?", members, asker=ANA) == [ANA]
    # A current name before an alias: Mallory's old name is not a claim on theirs.
    assert BOB not in named_members("what did Alice say?", members)
    assert named_members("what did Mallory say?", members) == [BOB]


def test_who_a_message_is_about_only_where_several_people_share_the_scope() -> None:
    two = [profile(ANA, "Ana"), profile(BOB, "Bob")]
    assert meant("what did Ana say?", two, BOB) == [ANA]
    assert meant("what did I tell you about Ana and my cat?", two, BOB) == [ANA, BOB]
    assert meant("tell me what Ana said, I forgot", two, BOB) == [ANA]
    assert meant("安娜跟我说了什么？", [profile(ANA, "安娜"), profile(BOB, "小波")], BOB) == [ANA]
    assert meant("我的猫和安娜的猫", [profile(ANA, "安娜"), profile(BOB, "小波")], BOB) == [
        ANA,
        BOB,
    ]
    assert meant("what did I tell you?", two, BOB) == [BOB]
    assert meant("what did I tell you, Ana?", [profile(ANA, "Ana")], ANA) == []


def test_the_conversations_speakers_join_the_members_known() -> None:
    known = [Member(ANA, "Ana", ("Nana",)), Member(BOB, "Bob")]
    present = {ANA: "Rin", BOB: "Bob", TWIN: "Tw"}
    # Each by the name they speak under now: the profile's, if another, an alias.
    assert with_present(known, present) == [
        Member(ANA, "Rin", ("Ana", "Nana")),
        Member(BOB, "Bob"),
        Member(TWIN, "Tw"),
    ]
    assert with_present(known, {ANA: "Nana"})[0] == Member(ANA, "Nana", ("Ana",))


def recalled(memory_id: int, score: float, speaker_id: str | None, text: str) -> Recalled:
    return Recalled(memory_id, text, AT, None, score, score, 1.0, 2, speaker_id=speaker_id)


def test_by_person_tilts_their_memories_up_and_filters_nothing() -> None:
    memories = [
        recalled(1, 0.9, BOB, "Bob told me about Paris"),
        recalled(2, 0.7, ANA, "She told me about Kyoto"),
        recalled(3, 0.65, None, "The party talked about Nana's trip"),
        recalled(4, 0.2, BOB, "Bob likes hiking"),
    ]
    ana = [profile(ANA, "Annie", "Nana")]
    assert [m.id for m in by_person(memories, [ANA], ana)] == [2, 3, 1, 4]
    # A member with no profile yet (nor any name to go by) still has their words.
    assert [m.id for m in by_person(memories, [ANA])] == [2, 1, 3, 4]
    assert [m.id for m in by_person(memories, [])] == [1, 2, 3, 4]


# --- end to end: a channel-scoped persona, and a user-scoped one, in one server ---------------


async def offline(messages: Sequence[Message]) -> Completion:
    return await OfflineChatModel().complete(messages)


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[Bot]:
    personas = [
        make_persona("dm", name="Dungeon", scope="channel"),
        make_persona("pip", name="Pip"),
        make_persona("mao", name="Mao", scope="channel", language="zh"),
    ]
    bot = await open_bot(tmp_path / "k.sqlite3", personas, model=ScriptedChatModel(default=offline))
    try:
        yield bot
    finally:
        await bot.close()


def said(persona: str, user: str, name: str, text: str) -> ChatEvent:
    return make_event(text, user_id=user, user_name=name, is_dm=False, persona=persona)


async def talk(bot: Bot, persona: str, lines: Sequence[tuple[str, str, str]]) -> None:
    """`lines` (who, the name they go by then, what they say) in channel c1, then the
    conversation closed and encoded."""
    for user, name, text in lines:
        await bot.engine.handle(said(persona, user, name, text))
    assert await bot.desk.end(said(persona, lines[0][0], lines[0][1], ""))
    assert await bot.lifecycle.encode_pending()


async def asked(bot: Bot, persona: str, user: str, name: str, text: str) -> str:
    """The system prompt the chat model got for `text`."""
    await bot.engine.handle(said(persona, user, name, text))
    return bot.model.calls[-1].note  # (what came to mind for the turns before stays before them)


def remembered(system: str) -> list[str]:
    """The memory lines of a system prompt, in their order."""
    heading = MEMORY_HEADING if MEMORY_HEADING in system else MEMORY_HEADING_AGAIN
    section = system.split(heading, 1)[1].split("\n\n", 1)[0]
    return [line for line in section.splitlines() if line.startswith("- ")]


def first_of(lines: list[str], *words: str) -> str:
    """Which of `words` the first line holding any of them holds."""
    for line in lines:
        for word in words:
            if word in line:
                return word
    return ""


async def test_a_channel_persona_knows_each_member_by_id_under_the_name_they_go_by(
    bot: Bot,
) -> None:
    await talk(
        bot,
        "dm",
        [
            (ANA, "Ana", "My trip to Kyoto was wonderful."),
            (BOB, "Bob", "My trip to Paris got cancelled."),
            (ANA, "Annie", "Call me Nana from now on."),
            (BOB, "Bob", "I like hiking in the mountains."),
        ],
    )
    channel = bot.desk.event_scope(said("dm", ANA, "Annie", ""))
    profiles = {p.user_id: (p.name, p.aliases) for p in await bot.store.profiles(channel)}
    assert profiles == {ANA: ("Annie", ("Nana", "Ana")), BOB: ("Bob", ())}
    mine = await commands.run(bot.services, said("dm", ANA, "Annie", ""), "profile")
    assert mine.text.endswith("\nDungeon also knows you as: Nana, Ana")
    whose = {m.text.split(": ", 2)[-1]: m.speaker_id for m in await bot.bank.memories(channel)}
    assert whose["My trip to Kyoto was wonderful."] == ANA
    assert whose["My trip to Paris got cancelled."] == BOB
    assert whose["I like hiking in the mountains."] == BOB

    # By any name she is known by, her memory first; the asker's "my" means the asker.
    for cue in ("What did Nana say about the trip?", "what did Ana say about the trip?"):
        system = await asked(bot, "dm", BOB, "Bob", cue)
        assert first_of(remembered(system), "Kyoto", "Paris") == "Kyoto", cue
        # Her memories in the channel are everyone's there; her profile stays hers.
        assert PROFILE_HEADING.format(name='"Annie"') not in system
    system = await asked(bot, "dm", BOB, "Bob", "What did I tell you about my trip?")
    assert first_of(remembered(system), "Kyoto", "Paris") == "Paris"
    system = await asked(bot, "dm", ANA, "Annie", "What did I tell you about my trip?")
    assert first_of(remembered(system), "Kyoto", "Paris") == "Kyoto"
    # Shown as she goes by now, with the names she is known by.
    assert f'{PEOPLE_HEADING}\n- "Annie": also "Nana", "Ana"' in system


async def test_a_name_taken_in_the_conversation_at_hand_is_known_before_it_is_encoded(
    bot: Bot,
) -> None:
    await talk(
        bot,
        "dm",
        [
            (ANA, "Ana", "My trip to Kyoto was wonderful."),
            (BOB, "Bob", "My trip, the long trip to Paris, my trip of the year, got cancelled."),
        ],
    )
    question = "What did Rin say about the trip?"
    system = await asked(bot, "dm", BOB, "Bob", question)
    assert first_of(remembered(system), "Kyoto", "Paris") == "Paris"  # by words alone
    await asked(bot, "dm", ANA, "Rin", "hello again, everyone")  # renamed, not yet encoded
    system = await asked(bot, "dm", BOB, "Bob", question)
    assert first_of(remembered(system), "Kyoto", "Paris") == "Kyoto"


async def test_recall_by_person_in_chinese(bot: Bot) -> None:
    await talk(
        bot,
        "mao",
        [
            (ANA, "安娜", "我的猫叫咪咪。"),
            (BOB, "小波", "我的狗叫旺财。"),
            (ANA, "安娜", "以后叫我娜娜吧。"),
        ],
    )
    channel = bot.desk.event_scope(said("mao", ANA, "安娜", ""))
    profiles = {p.user_id: (p.name, p.aliases) for p in await bot.store.profiles(channel)}
    assert profiles == {ANA: ("安娜", ("娜娜",)), BOB: ("小波", ())}
    mine = await commands.run(bot.services, said("mao", ANA, "安娜", ""), "profile")
    assert mine.text.endswith("\nMao也知道你叫：娜娜")
    system = await asked(bot, "mao", BOB, "小波", "娜娜上次说了什么？")
    assert first_of(remembered(system), "咪咪", "旺财") == "咪咪"
    system = await asked(bot, "mao", BOB, "小波", "我上次跟你说过什么？")
    assert first_of(remembered(system), "咪咪", "旺财") == "旺财"
    system = await asked(bot, "mao", ANA, "安娜", "我的宠物叫什么？")
    assert first_of(remembered(system), "咪咪", "旺财") == "咪咪"


async def test_a_user_scoped_persona_keeps_each_member_to_themselves(bot: Bot) -> None:
    """Pip in a server keeps one conversation and one memory per member: nothing of Ana's
    (memory, profile, nickname, diary page, recap) reaches Bob, by name or nickname. The
    dungeon master's channel memory is shared by everyone there, by design."""
    await talk(bot, "pip", [(ANA, "Ana", "My trip to Kyoto was wonderful. Call me Nana.")])
    await talk(bot, "pip", [(BOB, "Bob", "I like hiking in the mountains.")])
    await talk(bot, "dm", [(ANA, "Ana", "My cousin lives in Kyoto.")])
    for cue in ("What did Ana say about the trip?", "What did Nana tell you?", "Kyoto?"):
        system = await asked(bot, "pip", BOB, "Bob", cue)  # memories, profiles, diary, recap
        assert "Kyoto" not in system and "Nana" not in system, cue
    bobs = bot.desk.event_scope(said("pip", BOB, "Bob", ""))
    assert [p.user_id for p in await bot.store.profiles(bobs)] == [BOB]
    # The channel's memory is everyone's there: Bob hears of Ana's cousin from the dungeon
    # master (and only from the channel-scoped persona).
    system = await asked(bot, "dm", BOB, "Bob", "What did Ana say about Kyoto?")
    assert any("cousin lives in Kyoto" in line for line in remembered(system))
