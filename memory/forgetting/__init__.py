"""How memories fade: a forgetting policy gives each memory a retention in [0, 1] from its age,
the time since it was last recalled, its recall count, its importance and its emotion, and
decides once a day which of a scope's memories to forget.

`base` says what every policy is; each policy has a module of its own (`actr`, the default,
`ebbinghaus`, `trace_decay`, `half_life`, `stochastic`, `never`), with its parameters as one
dataclass a persona file can set; `registry` names them. `recalls` is what a recall and a merge
do to a memory under any policy, `curve` a memory's retention over time.
"""

from memory.forgetting.base import ForgettingPolicy, Forgotten
from memory.forgetting.recalls import absorbed, merge_targets, recalled
from memory.forgetting.registry import POLICIES, make_policy

__all__ = [
    "POLICIES",
    "ForgettingPolicy",
    "Forgotten",
    "absorbed",
    "make_policy",
    "merge_targets",
    "recalled",
]
