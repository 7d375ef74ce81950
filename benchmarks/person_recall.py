"""Recall by person in a shared room: does "what did Ana say about her trip?" bring Ana's
memory first, when every member of the channel told the persona something like it?

    python benchmarks/person_recall.py [--embedder auto]

A channel-scoped persona's scope holds, for each of MEMBERS (English and Chinese names, each
with a nickname), one memory per TOPIC, written as the encoder writes them (dated, naming
who, with the member's id as speaker_id), and a profile per member with the nickname as an
alias. Questions name a member by their display name, by their nickname, or say "I"/"my"/我
(asked by that member); a question is answered when the first memory recalled is that
member's on that topic. Two ways are compared on the same bank: the cue alone
(`MemoryBank.recall` on the turn's key phrase, what recall did before it knew people) and the
engine's way (`Recollector.gather`: names resolved to member ids, the tilt of
bot.conversation.recollect).
No model call either way. The last line is JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.config import TIERS, MemoryConfig
from bot.conversation.recollect import Recollector
from bot.llm.offline import OfflineChatModel
from bot.llm.router import ModelRouter
from memory.bank import MemoryBank
from memory.clock import FakeClock
from memory.records import ArchiveWrite, EncodingWrite
from memory.storage.sqlite import Store
from memory.text import key_phrase

SCOPE = "dm/discord:g1:channel:c1"
START = datetime(2026, 3, 2, 20, 0, tzinfo=UTC)
# (id, display name, nickname, language)
MEMBERS = [
    ("u1", "Ana", "Nana", "en"),
    ("u2", "Bob", "Bobby", "en"),
    ("u3", "Carla", "Cece", "en"),
    ("u4", "Dmitri", "Dima", "en"),
    ("u5", "安娜", "娜娜", "zh"),
    ("u6", "小波", "波波", "zh"),
    ("u7", "李明", "明明", "zh"),
    ("u8", "王芳", "芳芳", "zh"),
]
# topic -> (English memory, Chinese memory, English question word, Chinese question word),
# each member's value picked from the topic's list.
TOPICS = {
    "cat": (
        "{name} told me their cat is called {value}.",
        "{name}说他的猫叫{value}。",
        ["Mochi", "Luna", "Tofu", "Pixel", "Biscuit", "Nori", "Mango", "Pepper"],
        ("What is {who} cat called?", "{who}的猫叫什么？"),
    ),
    "trip": (
        "{name} told me about their trip to {value} last month.",
        "{name}跟我讲了上个月去{value}的旅行。",
        ["Kyoto", "Lisbon", "Oslo", "Cairo", "Lima", "Hanoi", "Quebec", "Tbilisi"],
        ("What did {who} say about the trip?", "{who}说的旅行是去哪儿？"),
    ),
    "job": (
        "{name} said they work as a {value}.",
        "{name}说他的工作是{value}。",
        ["nurse", "baker", "pilot", "teacher", "plumber", "lawyer", "chemist", "farmer"],
        ("What does {who} do for work?", "{who}做什么工作？"),
    ),
    "food": (
        "{name} said their favourite food is {value}.",
        "{name}说最喜欢吃{value}。",
        ["ramen", "tacos", "paella", "dumplings", "curry", "pizza", "sushi", "pho"],
        ("What food does {who} like best?", "{who}最喜欢吃什么？"),
    ),
}
ZH_VALUES = {
    "cat": ["年糕", "月亮", "豆腐", "像素", "饼干", "海苔", "芒果", "胡椒"],
    "trip": ["京都", "里斯本", "奥斯陆", "开罗", "利马", "河内", "魁北克", "第比利斯"],
    "job": ["护士", "面包师", "飞行员", "老师", "水管工", "律师", "化学家", "农民"],
    "food": ["拉面", "塔可", "海鲜饭", "饺子", "咖喱", "披萨", "寿司", "米粉"],
}


async def build(bank: MemoryBank, store: Store) -> dict[int, tuple[str, str]]:
    """The room's memories and profiles; memory id -> (member id, topic)."""
    owner: dict[int, tuple[str, str]] = {}
    at = START
    for n, (user_id, name, _, language) in enumerate(MEMBERS):
        for topic, (en, zh, values, _) in TOPICS.items():
            value = (ZH_VALUES[topic] if language == "zh" else values)[n]
            said = (zh if language == "zh" else en).format(name=name, value=value)
            at += timedelta(minutes=7)
            memory_id = await bank.remember(
                SCOPE, f"{at.date().isoformat()}: {said}", speaker_id=user_id, when=at
            )
            owner[memory_id] = (user_id, topic)
    conversation = await store.archive_conversation(
        ArchiveWrite(
            "dm",
            SCOPE.partition("/")[2],
            started_at=at,
            ended_at=at,
            reason="idle",
            turns=[],
            snapshot={},
        )
    )
    await store.commit_encoding(
        EncodingWrite(
            conversation_id=conversation,
            scope=SCOPE,
            at=at,
            memories=[],
            sibling_links=[],
            merges=[],
            diary=None,
            profiles=[(user_id, name, "") for user_id, name, _, _ in MEMBERS],
            recap="",
            aliases={user_id: (nick,) for user_id, _, nick, _ in MEMBERS},
        )
    )
    return owner


def questions() -> list[tuple[str, str, str, str, str]]:
    """(how the member is named, asker id, member id, topic, question)."""
    out = []
    for user_id, name, nick, language in MEMBERS:
        zh = language == "zh"
        for topic, (_, _, _, (en_q, zh_q)) in TOPICS.items():
            template = zh_q if zh else en_q
            for how, who in (("name", name), ("nickname", nick)):
                shown = who if zh else (f"{who}'s" if "{who} cat" in template else who)
                out.append((how, "", user_id, topic, template.format(who=shown)))
            mine = {
                "cat": ("What is my cat called?", "我的猫叫什么？"),
                "trip": ("What did I tell you about my trip?", "我上次跟你说的旅行是去哪儿？"),
                "job": ("What do I do for work?", "我做什么工作来着？"),
                "food": ("What food do I like best?", "我最喜欢吃什么？"),
            }[topic]
            out.append(("I / 我", user_id, user_id, topic, mine[1] if zh else mine[0]))
    return out


async def run(embedder: str) -> dict[str, dict[str, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        clock = FakeClock(START + timedelta(days=1))
        store = await Store.open(Path(tmp) / "k.sqlite3")
        bank = await MemoryBank.open(Path(tmp), embedder, clock, deterministic=True, store=store)
        try:
            owner = await build(bank, store)
            router = ModelRouter(dict.fromkeys(TIERS, OfflineChatModel()))
            memory = Recollector(bank, router, MemoryConfig(), random.Random(0))
            now = clock.now()
            counts: dict[str, dict[str, int]] = {}
            for how, asker, member, topic, question in questions():
                row = counts.setdefault(how, {"questions": 0, "cue_alone": 0, "by_person": 0})
                row["questions"] += 1
                plain = await bank.recall(SCOPE, key_phrase(question), k=5, now=now)
                found = await memory.gather(
                    SCOPE, question, now, flashback_rate=0.0, user_id=asker, deep=False
                )
                for key, hits in (("cue_alone", plain), ("by_person", found.memories)):
                    if hits and owner.get(hits[0].id) == (member, topic):
                        row[key] += 1
            return {
                how: {
                    "questions": row["questions"],
                    "cue_alone": round(row["cue_alone"] / row["questions"], 3),
                    "by_person": round(row["by_person"] / row["questions"], 3),
                }
                for how, row in counts.items()
            }
        finally:
            await bank.close()
            await store.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", default="auto", help="auto (default), hash, e5, ...")
    args = parser.parse_args()
    figures = await run(args.embedder)
    print(f"embedder: {args.embedder}; {len(MEMBERS)} members, {len(TOPICS)} topics each")
    print("| named by | questions | first memory right: cue alone | by person |")
    print("|---|---:|---:|---:|")
    for how, row in figures.items():
        print(f"| {how} | {row['questions']} | {row['cue_alone']:.3f} | {row['by_person']:.3f} |")
    print(json.dumps(figures, ensure_ascii=False))


if __name__ == "__main__":
    asyncio.run(main())
