"""memory/encoding/emotion.py: sentiment of memory texts (VADER for English, the built-in lexicon
for
Chinese, both for mixed text) and how it blends with the model's emotion and importance."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.encoding import emotion
from memory.encoding.emotion import (
    STRONG_FEELING,
    SentimentScorer,
    blend_importance,
    blend_sentiment,
)


@pytest.fixture(scope="module")
def scorer() -> SentimentScorer:
    return SentimentScorer()


# The hypothesis test cannot take a function-scoped fixture; one shared scorer is fine (stateless).
_SHARED = SentimentScorer()


# --- English: VADER ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "I got the job today, I am so happy!",
        "Had a wonderful dinner with Jun, we laughed all night.",
        "I love the new kitten, she is adorable.",
    ],
)
def test_english_positive(scorer: SentimentScorer, text: str) -> None:
    assert scorer.score(text) > 0.5


@pytest.mark.parametrize(
    "text",
    [
        "My cat died and I am very sad.",
        "I failed the exam and I feel terrible.",
        "He lied to me again, I am so angry!",
    ],
)
def test_english_negative(scorer: SentimentScorer, text: str) -> None:
    assert scorer.score(text) < -0.5


@pytest.mark.parametrize("text", ["I ate rice today.", "The meeting is on Tuesday at 3.", ""])
def test_english_neutral(scorer: SentimentScorer, text: str) -> None:
    assert abs(scorer.score(text)) < 0.1


def test_english_is_vader_compound(scorer: SentimentScorer) -> None:
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer  # type: ignore[import-untyped]

    text = "The concert was great but the train home was awful"
    expected = SentimentIntensityAnalyzer().polarity_scores(text)["compound"]
    assert scorer.score(text) == pytest.approx(expected)


# --- Chinese: the lexicon ---------------------------------------------------------------------


def test_chinese_positive(scorer: SentimentScorer) -> None:
    assert scorer.score("今天面试通过了，好开心！") > 0.6


def test_chinese_negative(scorer: SentimentScorer) -> None:
    assert scorer.score("我的猫去世了，我很难过") < -0.6


def test_negation_flips(scorer: SentimentScorer) -> None:
    assert scorer.score("我不开心") < -0.2
    assert scorer.score("一点也不开心") < -0.2
    assert scorer.score("我不难过") > 0
    assert scorer.score("不用担心") > 0


def test_soft_negation_softens(scorer: SentimentScorer) -> None:
    not_very_sad = scorer.score("不太难过")
    very_sad = scorer.score("很难过")
    assert very_sad < not_very_sad <= 0
    assert not_very_sad > -0.3  # mildly
    assert -0.4 < scorer.score("不太开心") < 0  # "not very happy" is a little unhappy


def test_degree_adverbs_scale(scorer: SentimentScorer) -> None:
    assert scorer.score("非常开心") > scorer.score("开心") > scorer.score("有点开心") > 0
    assert scorer.score("特别难过") < scorer.score("难过") < scorer.score("有点难过") < 0


def test_good_before_an_emotion_word_is_a_degree_adverb(scorer: SentimentScorer) -> None:
    assert scorer.score("好开心") == pytest.approx(scorer.score("很开心"))
    assert scorer.score("很好") > 0
    assert scorer.score("不好") < 0


def test_exclamation_intensifies(scorer: SentimentScorer) -> None:
    assert scorer.score("好开心！") > scorer.score("好开心")
    assert scorer.score("好难过！！") < scorer.score("好难过")


def test_contrast_weighs_what_follows(scorer: SentimentScorer) -> None:
    assert scorer.score("虽然很累，但是很开心") > 0
    assert scorer.score("虽然很开心，但是很累") < 0


@pytest.mark.parametrize(
    "text",
    ["我今天吃了米饭", "明天下午三点开会", "积累了很多经验", "最近在学习音乐", "不过是一本书"],
)
def test_chinese_neutral(scorer: SentimentScorer, text: str) -> None:
    assert scorer.score(text) == pytest.approx(0.0, abs=0.05)


def test_longer_words_shadow_shorter_ones(scorer: SentimentScorer) -> None:
    assert scorer.score("今天玩得很痛快") > 0  # 痛快 is not 痛
    assert scorer.score("笑死我了") > 0  # 笑死 is not 死
    assert scorer.score("我很不安") < 0  # 不安 is a word, not 不 + 安


def test_traditional_characters(scorer: SentimentScorer) -> None:
    assert scorer.score("開心") == pytest.approx(scorer.score("开心"))
    assert scorer.score("我很難過") == pytest.approx(scorer.score("我很难过"))


# --- mixed script -----------------------------------------------------------------------------


def test_mixed_chinese_feeling_not_diluted_by_english(scorer: SentimentScorer) -> None:
    mixed = scorer.score("Lunch with Tom at the station, 好开心！")
    assert mixed > 0.6
    assert mixed == pytest.approx(scorer.score("好开心！"))


def test_mixed_english_feeling_counts_in_chinese_text(scorer: SentimentScorer) -> None:
    assert scorer.score("今天见到了Tom, he was so rude and awful") < -0.4
    assert scorer.score("我今天 😭") < 0  # VADER reads the emoji


def test_mixed_both_languages_add_up(scorer: SentimentScorer) -> None:
    both = scorer.score("I am so happy today, 好开心")
    assert both > scorer.score("I am so happy today")
    assert both > scorer.score("好开心")
    opposed = scorer.score("I am so happy today, 但是很难过")
    assert opposed < scorer.score("I am so happy today")


# --- range ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "非常非常非常非常开心！！！！！！" * 20,
        "痛苦绝望崩溃心碎去世" * 50 + "!!!!!!!!",
        "LOVE LOVE LOVE!!!! best best best :) :) :D " * 20 + "开心" * 50,
        "不不不不不不",
        "！！！！",
    ],
)
def test_extremes_stay_in_range(scorer: SentimentScorer, text: str) -> None:
    value = scorer.score(text)
    assert -1.0 <= value <= 1.0
    assert not math.isnan(value)


_PIECES = st.one_of(
    st.text(max_size=3),
    st.sampled_from([*sorted(emotion._KINDS), "！", "!", " ", "，", "😭", ":)", "VERY", "not"]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_score_always_in_range(text: str) -> None:
    value = _SHARED.score(text)
    assert isinstance(value, float)
    assert -1.0 <= value <= 1.0


# --- the lexicon itself -----------------------------------------------------------------------


def test_lexicon_is_well_formed() -> None:
    assert 150 <= len(emotion._POSITIVE) + len(emotion._NEGATIVE) <= 300
    assert all(w > 0 for w in emotion._POSITIVE.values())
    assert all(w > 0 for w in emotion._NEGATIVE.values())
    assert all(w > 0 for w in emotion._DEGREE.values())
    assert not set(emotion._POSITIVE) & set(emotion._NEGATIVE)
    with pytest.raises(TypeError):
        emotion._POSITIVE["好"] = 0.0  # type: ignore[index]


def test_traditional_table_maps_only_traditional_characters() -> None:
    simplified_used = set("".join(emotion._KINDS))
    assert all(chr(t) not in simplified_used for t in emotion._TRADITIONAL)


# --- blend_sentiment --------------------------------------------------------------------------


def test_blend_without_model_is_our_score() -> None:
    assert blend_sentiment(0.42, None) == pytest.approx(0.42)
    assert blend_sentiment(-0.7, None) == pytest.approx(-0.7)
    assert blend_sentiment(0.3, math.nan) == pytest.approx(0.3)


def test_blend_agreeing_averages() -> None:
    assert blend_sentiment(0.4, 0.8) == pytest.approx(0.6)
    assert blend_sentiment(-0.4, -0.8) == pytest.approx(-0.6)


def test_blend_disagreeing_takes_model_sign_and_keeps_intensity() -> None:
    # "great, another Monday": the words read positive, the model knows better.
    assert blend_sentiment(0.6, -0.8) == pytest.approx(-0.7)
    assert blend_sentiment(-0.6, 0.8) == pytest.approx(0.7)


def test_blend_model_neutral_keeps_our_sign() -> None:
    assert blend_sentiment(-0.8, 0.0) == pytest.approx(-0.4)
    assert blend_sentiment(0.0, 0.0) == 0.0
    assert blend_sentiment(0.0, -0.6) == pytest.approx(-0.3)


@given(
    st.floats(min_value=-1, max_value=1),
    st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)),
)
def test_blend_sentiment_in_range(scored: float, model: float | None) -> None:
    value = blend_sentiment(scored, model)
    assert -1.0 <= value <= 1.0


# --- blend_importance -------------------------------------------------------------------------


@pytest.mark.parametrize("sentiment", [STRONG_FEELING, 0.8, 1.0, -STRONG_FEELING, -0.8, -1.0])
def test_strong_feeling_of_either_sign_raises(sentiment: float) -> None:
    assert blend_importance(1, sentiment) == 2
    assert blend_importance(2, sentiment) == 3


@pytest.mark.parametrize("sentiment", [0.8, -0.8, 1.0, -1.0])
def test_importance_capped_at_three(sentiment: float) -> None:
    assert blend_importance(3, sentiment) == 3


@pytest.mark.parametrize("sentiment", [0.0, 0.3, -0.3, 0.59, -0.59])
def test_weak_feeling_leaves_importance(sentiment: float) -> None:
    for importance in (1, 2, 3):
        assert blend_importance(importance, sentiment) == importance


@given(st.integers(min_value=1, max_value=3), st.floats(allow_nan=True))
def test_importance_never_lowered(importance: int, sentiment: float) -> None:
    result = blend_importance(importance, sentiment)
    assert importance <= result <= 3
    assert result - importance <= 1


def test_end_to_end_sad_memory_is_not_weak(scorer: SentimentScorer) -> None:
    sentiment = blend_sentiment(scorer.score("我的猫去世了，我很难过"), -0.9)
    assert sentiment < -STRONG_FEELING
    assert blend_importance(2, sentiment) == 3
