"""The forgetting policies by name: the one table the persona file (its `[memory] forgetting`
key and `[memory.<policy>]` tables), the persona format's reference and the inspector read.

A policy is listed three times here, and only here: in `POLICIES` (its class and its
parameters dataclass), in `PolicyName` (the values `forgetting` may take, the default first)
and, if it has parameters, as a field of `ForgettingParams` (its `[memory.<policy>]` table);
tests/test_forgetting.py checks the three agree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from memory.forgetting.actr import ActR, ActRParams
from memory.forgetting.base import ForgettingPolicy
from memory.forgetting.ebbinghaus import Ebbinghaus, EbbinghausParams
from memory.forgetting.half_life import HalfLife, HalfLifeParams
from memory.forgetting.never import Never
from memory.forgetting.stochastic import Stochastic, StochasticParams
from memory.forgetting.trace_decay import TraceDecay, TraceDecayParams

__all__ = [
    "DEFAULT_POLICY",
    "POLICIES",
    "Entry",
    "ForgettingParams",
    "PolicyName",
    "make_policy",
]


@dataclass(slots=True, frozen=True)
class Entry:
    policy: Callable[..., ForgettingPolicy]  # the class: takes its parameters, or none
    params: type[Any] | None  # its parameters dataclass; None for a policy with none


POLICIES: Mapping[str, Entry] = MappingProxyType(
    {
        "ebbinghaus": Entry(Ebbinghaus, EbbinghausParams),
        "trace_decay": Entry(TraceDecay, TraceDecayParams),
        "half_life": Entry(HalfLife, HalfLifeParams),
        "stochastic": Entry(Stochastic, StochasticParams),
        "never": Entry(Never, None),
        "actr": Entry(ActR, ActRParams),
    }
)

PolicyName = Literal["actr", "ebbinghaus", "trace_decay", "half_life", "stochastic", "never"]
DEFAULT_POLICY: PolicyName = "actr"


@dataclass(slots=True)
class ForgettingParams:
    """Every policy's parameters, by its name: a persona file's `[memory.<policy>]` tables."""

    actr: ActRParams = field(default_factory=ActRParams)
    ebbinghaus: EbbinghausParams = field(default_factory=EbbinghausParams)
    trace_decay: TraceDecayParams = field(default_factory=TraceDecayParams)
    half_life: HalfLifeParams = field(default_factory=HalfLifeParams)
    stochastic: StochasticParams = field(default_factory=StochasticParams)

    def policy(self, name: str) -> ForgettingPolicy:
        """The policy called `name`, with its parameters from here."""
        return make_policy(name, getattr(self, name, None))


def make_policy(name: str, params: Any = None) -> ForgettingPolicy:
    """The policy called `name` (one of POLICIES), with `params` (its parameters dataclass,
    as a persona file sets them) or its defaults."""
    entry = POLICIES.get(name)
    if entry is None:
        raise ValueError(
            f"unknown forgetting policy {name!r}; known policies: {', '.join(POLICIES)}"
        )
    return entry.policy() if params is None else entry.policy(params)
