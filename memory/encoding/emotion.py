"""Emotion of a memory: a signed sentiment in [-1, 1] read from its text, blended with the
summary model's own emotion value and with its importance (1-3).

Emotion protects a memory whatever its sign: a sad memory is not a weak memory. So only the
magnitude of the sentiment ever raises importance (:func:`blend_importance`), and a disagreement
about the sign between the model and the text never cancels the intensity
(:func:`blend_sentiment`).

How text is read (:class:`SentimentScorer`):

* Text without Han characters goes to VADER (``vaderSentiment``), whose ``compound`` is already
  in [-1, 1]. It is offline (the lexicon ships in the package), deterministic and cheap.
* VADER cannot read Chinese, so Chinese is read with the small hand-made lexicon below (about
  290 emotion words with VADER-scale weights, negators, "not very" softeners, degree adverbs,
  contrast words and exclamation marks), matched by longest match over the lexicon, with no
  segmenter. Why a lexicon and not a model call or jieba: it is offline, free, deterministic,
  fast (no jieba dictionary to build) and costs no model call per memory; a longest-match scan
  over our own entries also lets a longer word shadow a shorter one ("痛快" is not "痛",
  "积累" is not "累", "不过" is not "不"), which a segmenter's dictionary would not guarantee.
  Its blind spots (irony, context) are what the model's own emotion value, when given, corrects
  in :func:`blend_sentiment`.
* Mixed text: the Chinese raw valence and VADER's raw valence of the rest (its compound mapped
  back through the normalisation) are added and normalised once, like VADER does within one
  sentence. A strong feeling in one language is then not diluted by neutral words in the other
  ("Lunch with Tom, 好开心！" is as positive as "好开心！"), and opposite feelings offset each
  other as they would in one language.

The raw Chinese valence is normalised like VADER's: x / sqrt(x*x + 15).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Final, Literal

from vaderSentiment.vaderSentiment import (  # type: ignore[import-untyped]
    SentimentIntensityAnalyzer,
)

__all__ = [
    "STRONG_FEELING",
    "SentimentScorer",
    "blend_importance",
    "blend_sentiment",
]

STRONG_FEELING: Final = 0.6
"""|sentiment| from which :func:`blend_importance` raises importance by one.

On VADER's scale a single plain emotion word stays below it ("nice" 0.42, "I am sad" -0.48,
"开心" 0.54, "very sad" -0.53), while a strong or intensified feeling reaches it ("great" 0.62,
"I love you" 0.64, "I am so happy!" 0.72, "我很难过" -0.64, "好开心！" 0.68): every memory has
some feeling, and only a marked one should outrank what the model judged. Sentiment still
strengthens every memory in the forgetting policy; this threshold is only for the +1.
"""

_MAX_IMPORTANCE: Final = 3
_ALPHA: Final = 15.0  # VADER's normalisation constant
_NEGATION: Final = -0.74  # VADER's N_SCALAR: "not happy" is a bit less than "unhappy"
# "Not very": a positive word turns mildly negative ("不太开心"); a negative word keeps its sign
# but weakens ("不太难过" is still a little sad, less than "难过").
_SOFT_NEGATION_POSITIVE: Final = -0.4
_SOFT_NEGATION_NEGATIVE: Final = 0.3
_EMPHASIS: Final = 0.292  # VADER's raw bump per exclamation mark...
_MAX_EMPHASIS_MARKS: Final = 4  # ...counted up to four times, as VADER does
_BEFORE_CONTRAST: Final = 0.5  # VADER's "but": what comes before counts half...
_AFTER_CONTRAST: Final = 1.5  # ...and what comes after one and a half
_WINDOW: Final = 3  # unmatched characters a negator or degree adverb may reach across
_MAX_COMPOUND: Final = 0.9999  # VADER rounds to 4 places; keep its inverse finite

# Emotion words, weights on VADER's scale (its "good" is 1.9, "happy" 2.7, "sad" -2.1).
_POSITIVE: Final[Mapping[str, float]] = MappingProxyType(
    {
        "开心": 2.5, "高兴": 2.5, "快乐": 2.6, "幸福": 2.9, "喜欢": 2.0, "爱": 2.8, "热爱": 2.8,
        "喜爱": 2.4, "爱上": 2.4, "恋爱": 1.8, "亲爱": 2.0, "疼爱": 2.2, "感动": 2.3,
        "兴奋": 2.4, "激动": 2.0, "期待": 1.8, "放心": 1.5, "安心": 1.7, "满意": 2.0,
        "满足": 2.0, "骄傲": 2.0, "自豪": 2.2, "成功": 2.4, "顺利": 2.0, "生日快乐": 3.0,
        "恭喜": 2.6, "祝贺": 2.4, "庆祝": 2.2, "喜悦": 2.8, "愉快": 2.5, "欢乐": 2.6,
        "欣慰": 2.2, "温暖": 2.0, "甜蜜": 2.5, "美好": 2.5, "美丽": 2.2, "漂亮": 2.0,
        "可爱": 2.2, "好看": 1.8, "好吃": 1.9, "好玩": 1.9, "有趣": 1.8, "棒": 2.2,
        "厉害": 1.8, "优秀": 2.2, "完美": 2.7, "精彩": 2.3, "轻松": 1.6, "舒服": 1.8,
        "舒适": 1.7, "自在": 1.5, "惬意": 2.0, "痛快": 2.0, "快活": 2.2, "平静": 1.2,
        "感谢": 2.0, "谢谢": 1.5, "感激": 2.2, "感恩": 2.3, "享受": 2.0, "惊喜": 2.5,
        "笑": 1.5, "微笑": 1.8, "大笑": 2.0, "笑死": 1.8, "哈哈": 1.5, "嘻嘻": 1.2,
        "通过": 1.5, "录取": 2.4, "考上": 2.3, "升职": 2.4, "加薪": 2.3, "赢": 2.2,
        "胜利": 2.5, "获奖": 2.5, "中奖": 2.6, "毕业": 1.6, "结婚": 2.2, "订婚": 2.2,
        "康复": 2.2, "痊愈": 2.2, "好转": 1.8, "团聚": 2.2, "重逢": 2.2, "放假": 1.8,
        "希望": 1.3, "梦想": 1.3, "珍惜": 1.8, "乐观": 1.8, "积极": 1.5, "勇敢": 1.8,
        "自信": 1.8, "善良": 1.8, "友好": 1.6, "温柔": 1.8, "体贴": 1.8, "关心": 1.6,
        "支持": 1.4, "鼓励": 1.8, "称赞": 2.0, "赞美": 2.2, "赞": 2.0, "夸": 1.6,
        "欣赏": 1.9, "佩服": 1.9, "酷": 1.5, "爽": 1.8, "开朗": 1.8, "好运": 2.0,
        "幸运": 2.3, "庆幸": 1.9, "如愿": 2.2, "圆满": 2.4, "心动": 2.0, "浪漫": 2.0,
        "健康": 1.8, "治愈": 2.0, "兴高采烈": 3.0, "心满意足": 2.8, "开开心心": 2.8,
        "不错": 1.8, "好": 1.9,
    }
)  # fmt: skip

_NEGATIVE: Final[Mapping[str, float]] = MappingProxyType(
    {
        "难过": 2.5, "伤心": 2.7, "痛苦": 3.0, "害怕": 2.3, "可怕": 2.2, "怕": 1.6,
        "担心": 1.9, "担忧": 2.0, "忧虑": 2.0, "忧郁": 2.3, "焦虑": 2.3, "紧张": 1.7,
        "生气": 2.3, "愤怒": 2.8, "恼火": 2.3, "火大": 2.2, "暴躁": 2.0, "失望": 2.4,
        "孤独": 2.2, "孤单": 2.0, "寂寞": 2.1, "累": 1.5, "心累": 2.2, "累死": 2.2,
        "疲惫": 1.8, "疲倦": 1.7, "劳累": 1.7, "辛苦": 1.5, "哭": 2.0, "哭泣": 2.3,
        "流泪": 2.0, "眼泪": 1.8, "呜呜": 1.8, "唉": 1.2, "叹气": 1.4, "哭笑不得": 1.2,
        "去世": 3.0, "过世": 3.0, "离世": 3.0, "死": 2.6, "死亡": 2.8, "死去": 2.8,
        "葬礼": 2.6, "分手": 2.5, "离婚": 2.6, "吵架": 2.2, "争吵": 2.2, "骂": 2.0,
        "失业": 2.6, "裁员": 2.4, "辞退": 2.3, "开除": 2.3, "失败": 2.3, "输": 1.6,
        "挂科": 2.0, "落榜": 2.4, "批评": 1.5, "生病": 2.0, "病": 1.8, "住院": 2.2,
        "手术": 1.5, "癌": 2.8, "感冒": 1.3, "发烧": 1.5, "头疼": 1.8, "头痛": 1.8,
        "失眠": 1.8, "噩梦": 2.2, "痛": 2.0, "疼": 1.8, "压力": 1.6, "压抑": 2.2,
        "窒息": 2.2, "悲伤": 2.8, "悲痛": 3.1, "悲哀": 2.6, "伤感": 2.2, "凄凉": 2.4,
        "难受": 2.3, "郁闷": 2.0, "抑郁": 2.8, "沮丧": 2.5, "失落": 2.2, "空虚": 2.0,
        "烦": 1.8, "烦躁": 2.0, "烦恼": 1.9, "烦心": 1.9, "烦人": 1.9, "烦死": 2.3,
        "讨厌": 2.4, "恨": 2.8, "厌恶": 2.6, "恶心": 2.2, "受够": 2.3, "受不了": 2.2,
        "委屈": 2.2, "无聊": 1.5, "无奈": 1.6, "无助": 2.3, "绝望": 3.1, "崩溃": 2.8,
        "心碎": 3.0, "受伤": 2.2, "伤害": 2.2, "后悔": 2.2, "遗憾": 1.9, "可惜": 1.7,
        "惋惜": 1.8, "内疚": 2.0, "愧疚": 2.0, "自责": 2.0, "惭愧": 1.7, "尴尬": 1.5,
        "丢脸": 1.9, "羞愧": 2.0, "嫉妒": 1.8, "恐惧": 2.8, "恐慌": 2.6, "惊慌": 2.2,
        "慌": 1.6, "惊吓": 2.0, "吓死": 2.2, "吓": 1.6, "气死": 2.5, "不安": 1.8,
        "不爽": 2.0, "不满": 2.0, "不耐烦": 1.8, "不幸": 2.5, "舍不得": 1.6, "不舍": 1.5,
        "想念": 1.0, "思念": 1.2, "想家": 1.5, "迷茫": 1.7, "困惑": 1.3, "着急": 1.6,
        "忐忑": 1.6, "艰难": 2.0, "困难": 1.5, "麻烦": 1.5, "倒霉": 2.2, "悲剧": 2.4,
        "灾难": 2.6, "事故": 2.2, "车祸": 2.8, "危险": 1.8, "冷漠": 1.8, "冷落": 1.8,
        "拒绝": 1.6, "忽视": 1.6, "欺负": 2.2, "背叛": 2.8, "欺骗": 2.4, "撒谎": 2.0,
        "丢失": 1.6, "糟糕": 2.3, "糟": 1.8, "坏": 1.8, "惨": 2.3, "可怜": 1.8,
        "心疼": 1.8, "残酷": 2.3, "爽约": 1.6, "嘲笑": 1.8, "可笑": 1.0, "加班": 1.2,
    }
)  # fmt: skip

# Full negators flip the next emotion word (times _NEGATION).
_NEGATORS: Final = frozenset(
    {
        "不", "没", "没有", "别", "别再", "未", "并不", "并没", "并没有", "从不", "从没",
        "从来不", "从来没有", "绝不", "毫不", "毫无", "无法", "难以", "不会", "不再", "不是",
        "不要", "不用", "不必", "再也不", "一点也不", "一点都不", "甭", "勿", "莫",
    }
)  # fmt: skip

# "Not very": soften rather than flip (see _SOFT_NEGATION_*).
_SOFT_NEGATORS: Final = frozenset(
    {
        "不太", "不大", "不很", "不是很", "不是太", "不怎么", "不那么", "没那么", "没有那么",
        "没太", "不算", "不算太", "不算很", "并不太", "并不是很",
    }
)  # fmt: skip

# Degree adverbs scale the next emotion word.
_DEGREE: Final[Mapping[str, float]] = MappingProxyType(
    {
        "极其": 1.8, "极度": 1.8, "极为": 1.7, "万分": 1.7, "无比": 1.7, "最": 1.6,
        "超级": 1.6, "非常": 1.5, "特别": 1.5, "十分": 1.5, "格外": 1.5, "超": 1.5,
        "太": 1.5, "简直": 1.5, "多么": 1.5, "相当": 1.4, "尤其": 1.4, "很": 1.3,
        "真": 1.3, "真的": 1.3, "真是": 1.3, "实在": 1.3, "如此": 1.3, "更加": 1.3,
        "越来越": 1.3, "挺": 1.2, "蛮": 1.2, "更": 1.2, "这么": 1.2, "那么": 1.2,
        "比较": 1.1, "有点": 0.7, "有点儿": 0.7, "有些": 0.7, "有一点": 0.6, "有点点": 0.6,
        "稍微": 0.6, "略微": 0.6, "些许": 0.6, "微微": 0.6,
    }
)  # fmt: skip

# "好" is "good" on its own but "so" before an emotion word ("好开心"): this is its weight then.
_GOOD_AS_DEGREE: Final = 1.3

# Contrast: what follows the last one outweighs what precedes it (VADER's "but").
_CONTRASTS: Final = frozenset({"但是", "但", "可是", "不过", "然而", "却", "只是"})

# Words that contain an entry above but mean something else; matched first (longest match) and
# ignored, so they shadow it: "积累" is not "累", "最近" is not "最", "不过" is handled above.
_NEUTRAL: Final = frozenset(
    {
        "积累", "累计", "累积", "爱好", "好像", "好多", "好几", "好久", "只好", "正好", "刚好",
        "恰好", "最好", "好吧", "好的", "好奇", "不好意思", "不仅", "不但", "不管", "不论",
        "不久", "不同", "不少", "不断", "不停", "不得不", "差不多", "要不", "不然", "不如",
        "不一定", "不知道", "没想到", "没关系", "没事", "没什么", "音乐", "娱乐", "俱乐部",
        "乐队", "夸张", "输入", "输出", "运输", "传输", "恐怕", "哪怕", "超市", "超过", "太太",
        "太阳", "认真", "真正", "真相", "最近", "最后", "最终", "最初", "更新", "无论", "无数",
        "帮忙", "笑话", "但愿", "病毒", "只是因为",
    }
)  # fmt: skip

# Traditional forms of characters used above, so that 開心 reads as 开心. Only characters that
# are never simplified forms themselves are mapped.
_TRADITIONAL: Final[Mapping[int, str]] = MappingProxyType(
    {
        ord(t): s
        for t, s in zip(
            "開興樂難過傷擔憂慮緊張氣憤獨憊業壓歡愛動滿驕順懼鬱煩惱還沒並極點讓謝熱輸較輕鬆"
            "適勵讚悶厭噁戀嗚嘆醫車禍喪絕慘憐碎潰這麼罵離婚勝獎畢訂團聚職錄幸運慶圓奮親"
            "誇與兒見夢願溫柔體貼無聊奈斷導殘腦痛頭燒術癌狀劇災險漠騙謊蠻稱讚優厲",
            "开兴乐难过伤担忧虑紧张气愤独惫业压欢爱动满骄顺惧郁烦恼还没并极点让谢热输较轻松"
            "适励赞闷厌恶恋呜叹医车祸丧绝惨怜碎溃这么骂离婚胜奖毕订团聚职录幸运庆圆奋亲"
            "夸与儿见梦愿温柔体贴无聊奈断导残脑痛头烧术癌状剧灾险漠骗谎蛮称赞优厉",
            strict=True,
        )
        if t != s
    }
)

_Kind = Literal["positive", "negative", "negator", "soft", "degree", "contrast", "neutral"]


def _kinds() -> Mapping[str, _Kind]:
    table: dict[str, _Kind] = {}
    groups: Iterable[tuple[Iterable[str], _Kind]] = (
        (_POSITIVE, "positive"),
        (_NEGATIVE, "negative"),
        (_NEGATORS, "negator"),
        (_SOFT_NEGATORS, "soft"),
        (_DEGREE, "degree"),
        (_CONTRASTS, "contrast"),
        (_NEUTRAL, "neutral"),
    )
    for words, kind in groups:
        for word in words:
            if word in table:
                raise ValueError(f"{word!r} is both {table[word]} and {kind}")
            table[word] = kind
    return MappingProxyType(table)


_KINDS: Final = _kinds()
_LONGEST: Final = max(map(len, _KINDS))

_HAN_RE: Final = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")
# Where a negator's or degree adverb's reach ends.
_CLAUSE_BREAK: Final = frozenset('，。！？；：、,.!?;:\n…\uff5e~（）()「」“”"')
_EXCLAMATIONS: Final = frozenset("!！")


def _normalise(raw: float) -> float:
    return raw / math.sqrt(raw * raw + _ALPHA)


def _raw(compound: float) -> float:
    """The inverse of :func:`_normalise`: VADER's compound back to a raw valence."""
    c = max(-_MAX_COMPOUND, min(_MAX_COMPOUND, compound))
    return c * math.sqrt(_ALPHA / (1.0 - c * c))


def _tokens(text: str) -> list[tuple[str, _Kind | None]]:
    """Longest match over the lexicon; an unmatched character is a token of kind None."""
    out: list[tuple[str, _Kind | None]] = []
    i, n = 0, len(text)
    while i < n:
        for length in range(min(_LONGEST, n - i), 0, -1):
            piece = text[i : i + length]
            kind = _KINDS.get(piece)
            if kind is not None:
                out.append((piece, kind))
                i += length
                break
        else:
            out.append((text[i], None))
            i += 1
    return out


def _chinese_valence(text: str) -> tuple[float, int]:
    """Raw valence of the Chinese in `text` (no exclamation emphasis) and its number of
    exclamation marks."""
    tokens = _tokens(text.translate(_TRADITIONAL))
    segments: list[float] = [0.0]
    scale = 1.0
    negation: Literal["full", "soft"] | None = None
    gap = 0

    def reset() -> None:
        nonlocal scale, negation, gap
        scale, negation, gap = 1.0, None, 0

    for index, (piece, kind) in enumerate(tokens):
        if kind is None:
            if piece in _CLAUSE_BREAK:
                reset()
            elif not piece.isspace():
                gap += 1
                if gap > _WINDOW:
                    reset()
        elif kind == "degree":
            scale *= _DEGREE[piece]
            gap = 0
        elif kind in ("negator", "soft"):
            negation = "full" if kind == "negator" else "soft"
            gap = 0
        elif kind == "contrast":
            segments.append(0.0)
            reset()
        elif kind == "neutral":
            gap += len(piece)
            if gap > _WINDOW:
                reset()
        else:
            following = tokens[index + 1][1] if index + 1 < len(tokens) else None
            if piece == "好" and following in ("positive", "negative"):
                scale *= _GOOD_AS_DEGREE  # "好开心": "so happy", not "good" + "happy"
                gap = 0
                continue
            value = _POSITIVE[piece] if kind == "positive" else -_NEGATIVE[piece]
            value *= scale
            if negation == "full":
                value *= _NEGATION
            elif negation == "soft":
                value *= _SOFT_NEGATION_POSITIVE if value > 0 else _SOFT_NEGATION_NEGATIVE
            segments[-1] += value
            reset()

    if len(segments) == 1:
        raw = segments[0]
    else:
        raw = _BEFORE_CONTRAST * sum(segments[:-1]) + _AFTER_CONTRAST * segments[-1]
    marks = sum(1 for ch in text if ch in _EXCLAMATIONS)
    return raw, marks


def _emphasised(raw: float, marks: int) -> float:
    if raw == 0.0:
        return 0.0
    return math.copysign(abs(raw) + _EMPHASIS * min(marks, _MAX_EMPHASIS_MARKS), raw)


class SentimentScorer:
    """Scores text in [-1, 1]: VADER's compound for text without Han characters; the built-in
    Chinese lexicon (with negators, softeners, degree adverbs and contrast) for Chinese; for
    mixed text, both raw valences added, then normalised once.

    Stateless after construction (VADER's analyser only reads its lexicon), so one instance can
    be shared between tasks and threads.
    """

    def __init__(self) -> None:
        self._vader = SentimentIntensityAnalyzer()

    def _vader_compound(self, text: str) -> float:
        return float(self._vader.polarity_scores(text)["compound"])

    def score(self, text: str) -> float:
        if not _HAN_RE.search(text):
            return _clamp(self._vader_compound(text))
        chinese, marks = _chinese_valence(text)
        rest = _HAN_RE.sub(" ", text)
        english = self._vader_compound(rest) if rest.strip() else 0.0
        if english == 0.0:
            raw = _emphasised(chinese, marks)
        else:
            # VADER already counted the ASCII "!" of the rest (when its own words carried
            # feeling); add only the full-width ones, which it does not know.
            raw = _emphasised(_raw(english) + chinese, text.count("！"))
        return _clamp(_normalise(raw))


def _clamp(value: float) -> float:
    if math.isnan(value):
        return 0.0
    return max(-1.0, min(1.0, value))


def blend_sentiment(scored: float, model: float | None) -> float:
    """Our score combined with the model's own signed emotion value (None when it gave none).

    Magnitude: the mean of the two magnitudes; both are noisy estimates of how strong the
    feeling is, and since emotion protects a memory whatever its sign, a disagreement about the
    sign must not cancel the intensity (a plain average of +0.7 and -0.7 would say "no
    feeling"). Sign: the model's, when it gave a non-zero value. It wrote the memory and read the
    whole conversation, so it sees irony, context and negation across sentences that a word list
    cannot ("great, another Monday"); our score only decides the sign when the model said 0.
    A missing or non-finite model value leaves our score as it is. Result in [-1, 1].
    """
    ours = _clamp(scored)
    if model is None or not math.isfinite(model):
        return ours
    theirs = _clamp(model)
    magnitude = (abs(ours) + abs(theirs)) / 2.0
    sign = theirs if theirs != 0.0 else ours
    if sign == 0.0:
        return 0.0
    return math.copysign(magnitude, sign)


def blend_importance(model_importance: int, sentiment: float) -> int:
    """Importance after emotion: a strong feeling (|sentiment| >= :data:`STRONG_FEELING`, of
    either sign) raises it by one, capped at 3; it is never lowered. The caller has already
    clamped `model_importance` to 1-3.
    """
    if abs(sentiment) >= STRONG_FEELING and model_importance < _MAX_IMPORTANCE:
        return model_importance + 1
    return model_importance
