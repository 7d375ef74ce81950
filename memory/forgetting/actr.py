"""The `actr` policy (the default), ACT-R forgetting: a memory's retention is the probability
that it can be retrieved, a logistic of its base-level activation (Anderson & Lebiere's
ACT-R), with the activation-dependent decay of Pavlik & Anderson that gives the spacing effect
(benchmarks/README.md cites both).

Exact ACT-R sums a power-law trace for the encoding and for every recall:

    m(t) = b + ln(sum_i (t - t_i) ** -d_i)         p(t) = 1 / (1 + exp((TAU - m(t)) / NOISE))
    d_i = ALPHA + DECAY_SCALE * exp(m(t_i-) - TAU)  (the activation just before trace i)

so a recall made while the memory is still strong (massed) leaves a trace that fades fast, and
one made after a gap (spaced) a trace that lasts. The encoding decays at ALPHA. b is the
memory's intercept (an item's intercept in Pavlik & Anderson): importance and emotion raise it.
It lifts p but not the decays, so a more important memory is never weaker.

A memory keeps the times of its latest recalls (memory.records.RECENT_RECALLS of them, on the
memory itself, so ranking and pruning read no recall log) and how many recalls it had in all,
and the sum runs over their traces exactly, each with the decay the traces before it give.
The recalls older than the kept ones are put back as traces spread evenly between the
memory's making and its oldest kept recall (those recalls happened in that stretch, and a
steady rhythm is the plainest guess), each with the decay the traces before it give, at most
RECENT_RECALLS of them, each then standing for as many recalls as it must:

    sum = t ** -ALPHA + sum over the earlier recalls k of w_k (t - t_k) ** -d_k
                      + sum over the recent recalls i of (t - t_i) ** -d_i

so an old massed recall keeps the fast decay it had, and the spacing effect holds past the
kept recalls (at most twice RECENT_RECALLS traces: a recall's cost stays bounded). Ages are in
seconds (as Pavlik & Anderson's), at least MIN_AGE. With up to RECENT_RECALLS recalls the sum
is exact ACT-R, and with recalls as evenly spaced as a schedule's up to twice as many
(benchmarks/forgetting_fit.py compares the two). `strength` is not read: a memory is as strong
as its recalls.

ALPHA and TAU are fitted to Ebbinghaus's savings curve and the three replications Murre & Dros
tabulate (theirs, Mack's and Seitz's) together, by benchmarks/forgetting_fit.py; NOISE and
DECAY_SCALE are Pavlik & Anderson's, their decay scale taken as the scale on the odds
e**(m - TAU), which keeps it independent of the time unit and of TAU (benchmarks/README.md
gives the fit and the derivation).

Pruning: a memory goes once its retrieval probability is below the floor (`ActRParams`), a
little under what the fitted curve keeps of an unrecalled importance-1 item after a week. No
memory starts weaker than an unrecalled importance-1, unfelt one, and recalls only add, so
nothing falls below the floor before that memory would: that time is the grace period,
computed, not chosen (benchmarks/README.md gives the lifetimes).

Retrieval failure (memory/recall/ranking.py's `surfaces`) is drawn from the same probability, the
retention: a memory that made the cut fails to come to mind with probability
MAX_FAILURE * (1 - p) ** 2. It is damped rather than 1 - p because the cue's match, which ACT-R
would add to the activation as spreading activation, is not in p.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import ClassVar

from memory.forgetting.base import DAY, FloorPolicy, doc
from memory.records import RECENT_RECALLS, Memory

__all__ = ["ALPHA", "DECAY_SCALE", "NOISE", "TAU", "ActR", "ActRParams", "retrieval_probability"]

# Fitted by benchmarks/forgetting_fit.py to Ebbinghaus and the three replications of Murre &
# Dros together (benchmarks/README.md gives the error on each).
ALPHA = 0.0467  # the encoding's decay
TAU = -0.3066  # retrieval threshold, for ages in seconds
# Pavlik & Anderson's.
NOISE = 0.255
DECAY_SCALE = 0.107
MIN_AGE = 1.0  # seconds: a trace's age is never taken as less


@dataclass(slots=True)
class ActRParams:
    # The grace period follows from the floor (the module says how, and why this default).
    floor: float = field(
        default=0.22,
        metadata=doc(
            "A memory is forgotten once its chance of coming to mind falls below this; how long "
            "an unrecalled importance-1 memory stays above it is the grace period (0.22: about "
            "eight days)."
        ),
    )

    def __post_init__(self) -> None:
        if not 0 < self.floor < 1:
            raise ValueError("floor must be more than 0 and less than 1")


def _logistic(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def retrieval_probability(activation: float) -> float:
    """ACT-R's retrieval probability of a chunk with this activation."""
    return _logistic((activation - TAU) / NOISE)


def _decay(trace_sum: float) -> float:
    """Pavlik & Anderson's decay of a trace laid down when the traces summed to `trace_sum`."""
    return ALPHA + DECAY_SCALE * trace_sum * math.exp(-TAU)


def _recent(memory: Memory) -> list[tuple[float, float, float]]:
    """(seconds after the memory's making, decay, weight) of each of its recalls' traces: the
    earlier ones put back as the module says, then the recent ones."""
    created = memory.created_at
    kept = [(when - created).total_seconds() for when in memory.recall_times]
    history = [(t, 1.0) for t in kept]
    earlier = max(memory.recall_count - len(kept), 0)
    if earlier and kept:
        count = min(earlier, RECENT_RECALLS)
        weight = earlier / count
        span = max(kept[0], 0.0)
        history = [(span * k / (count + 1), weight) for k in range(1, count + 1)] + history
    traces: list[tuple[float, float, float]] = []
    for t, weight in history:
        before = math.pow(max(t, MIN_AGE), -ALPHA)
        for ti, d, wi in traces:
            before += wi * math.pow(max(t - ti, MIN_AGE), -d)
        traces.append((t, _decay(before), weight))
    return traces


def _traces(memory: Memory, now: datetime) -> float:
    """The sum of the memory's power-law traces at `now`."""
    t = (now - memory.created_at).total_seconds()
    total = math.pow(max(t, MIN_AGE), -ALPHA)
    for ti, d, weight in _recent(memory):
        total += weight * math.pow(max(t - ti, MIN_AGE), -d)
    return total


class ActR(FloorPolicy):
    """ACT-R base-level activation with Pavlik & Anderson's spacing decay (see the module).

    A memory's recalls are its recent recall times and its recall count (`strength` is not
    read). Importance and |sentiment| add to the intercept. The boosts are chosen, not
    fitted (no data set grades a chat's importance); benchmarks/forgetting_fit.py prints the
    lifetime they give an unrecalled memory of each importance.
    """

    __slots__ = ("floor", "grace", "params")
    IMPORTANCE_BOOST: ClassVar[Mapping[int, float]] = MappingProxyType({1: 0.0, 2: 0.2, 3: 0.5})
    EMOTION_BOOST = 0.15  # at |sentiment| 1
    FLOOR = ActRParams().floor

    def __init__(self, params: ActRParams | None = None) -> None:
        self.params = params or ActRParams()
        self.floor = self.params.floor
        self.grace = self.lifetime(1, 0.0)

    name = "actr"

    def lifetime(self, importance: int, sentiment: float) -> timedelta:
        """How long an unrecalled memory stays above the floor: b - ALPHA ln t reaches
        TAU + NOISE * logit(floor). For importance 1 and no feeling, the grace period."""
        threshold = TAU + NOISE * math.log(self.floor / (1.0 - self.floor))
        exponent = (self.intercept(importance, sentiment) - threshold) / ALPHA
        return timedelta(seconds=math.exp(min(exponent, math.log(timedelta.max.total_seconds()))))

    def intercept(self, importance: int, sentiment: float) -> float:
        boost = self.IMPORTANCE_BOOST.get(importance, self.IMPORTANCE_BOOST[3])
        return boost + self.EMOTION_BOOST * min(abs(sentiment), 1.0)

    def initial_strength(self, importance: int, sentiment: float) -> float:
        return 1.0

    def activation(self, memory: Memory, now: datetime) -> float:
        intercept = self.intercept(memory.importance, memory.sentiment)
        return intercept + math.log(_traces(memory, now))

    def retention(self, memory: Memory, now: datetime) -> float:
        return retrieval_probability(self.activation(memory, now))

    def reinforced(self, memory: Memory, now: datetime) -> float:
        return memory.strength  # the recalls are counted and kept on the memory itself

    def prunable(self, memories: Sequence[Memory], now: datetime) -> Sequence[Memory]:
        """All of them: the grace follows from the floor, nothing younger is under it."""
        return memories

    def reason(self, memory: Memory, retention: float, now: datetime) -> str:
        return (
            f"not retrievable: probability {retention:.3f} < {self.floor:g} at "
            f"{(now - memory.created_at).total_seconds() / DAY:.0f} days old, recalled "
            f"{memory.recall_count} times ({self.name})"
        )
