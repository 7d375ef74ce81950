"""`dice`: fair rolls for a game master, in standard notation (2d6+3, d20, 4d6kh3), with
advantage or disadvantage. The randomness is the runtime's seeded generator (the tool
context's), so a seed replays a session's rolls; each roll is logged, its numbers only."""

from __future__ import annotations

import logging
import random
import re
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field

from bot.tools.python import CommonContext

__all__ = ["Roll", "dice", "parse", "roll"]

log = logging.getLogger(__name__)

MAX_DICE = 100
MAX_SIDES = 1000
MAX_MODIFIER = 1000
NOTATION = re.compile(r"(\d*)d(\d+)(?:k([hl])(\d+))?(?:([+-])(\d+))?")

Mode = Literal["normal", "advantage", "disadvantage"]


@dataclass(slots=True, frozen=True)
class Dice:
    count: int
    sides: int
    keep: int  # how many dice count: the highest ones (or lowest, when negative)
    modifier: int

    def __str__(self) -> str:
        kept = (
            ""
            if abs(self.keep) == self.count
            else f"k{'h' if self.keep > 0 else 'l'}{abs(self.keep)}"
        )
        plus = f"{self.modifier:+d}" if self.modifier else ""
        return f"{self.count}d{self.sides}{kept}{plus}"


@dataclass(slots=True, frozen=True)
class Roll:
    dice: Dice
    mode: Mode
    rolls: tuple[tuple[int, ...], ...]  # one set of dice; two with advantage or disadvantage
    kept: tuple[int, ...]  # the dice that count, of the chosen set
    total: int

    def __str__(self) -> str:
        sets = " and ".join(f"[{', '.join(map(str, r))}]" for r in self.rolls)
        said = f"{self.dice}" + (f" with {self.mode}" if self.mode != "normal" else "")
        shown = len(self.rolls) > 1 or self.kept != self.rolls[0]
        kept = f", kept [{', '.join(map(str, self.kept))}]" if shown else ""
        modifier = self.dice.modifier
        sign = "+" if modifier > 0 else "-"
        total = f"{sum(self.kept)} {sign} {abs(modifier)} = " if modifier else ""
        return f"{said}: rolled {sets}{kept}; total {total}{self.total}"


def parse(notation: str) -> Dice | None:
    """The dice `notation` names ("2d6+3", "d20", "4d6kh3", "2d20kl1"), or None if it names
    none within the limits."""
    m = NOTATION.fullmatch(notation.strip().lower().replace(" ", ""))
    if m is None:
        return None
    count = int(m.group(1) or 1)
    sides = int(m.group(2))
    keep = int(m.group(4)) if m.group(4) else count
    modifier = int(m.group(6) or 0) * (-1 if m.group(5) == "-" else 1)
    if not (1 <= count <= MAX_DICE and 2 <= sides <= MAX_SIDES and 1 <= keep <= count):
        return None
    if abs(modifier) > MAX_MODIFIER:
        return None
    return Dice(count, sides, -keep if m.group(3) == "l" else keep, modifier)


def roll(rng: random.Random, dice: Dice, mode: Mode = "normal") -> Roll:
    """Roll `dice` with `rng`: twice with advantage (the higher total counts) or
    disadvantage (the lower)."""
    sets = [_one(rng, dice) for _ in range(1 if mode == "normal" else 2)]
    totals = [sum(_kept(dice, s)) for s in sets]
    chosen = sets[0]
    if mode == "advantage":
        chosen = sets[totals.index(max(totals))]
    elif mode == "disadvantage":
        chosen = sets[totals.index(min(totals))]
    kept = _kept(dice, chosen)
    return Roll(dice, mode, tuple(sets), kept, sum(kept) + dice.modifier)


def _one(rng: random.Random, dice: Dice) -> tuple[int, ...]:
    return tuple(rng.randint(1, dice.sides) for _ in range(dice.count))


def _kept(dice: Dice, rolled: tuple[int, ...]) -> tuple[int, ...]:
    if abs(dice.keep) == dice.count:
        return rolled
    ordered = sorted(rolled, reverse=dice.keep > 0)
    return tuple(ordered[: abs(dice.keep)])


async def dice(
    context: CommonContext,
    notation: Annotated[
        str, Field(description="standard dice notation: 2d6+3, d20, d20-1, 4d6kh3 (keep highest 3)")
    ],
    mode: Annotated[
        Mode, Field(description="advantage or disadvantage: roll twice, keep the better or worse")
    ] = "normal",
) -> str:
    """Roll dice fairly for the game when a roll is called for or a player asks you to roll.
    Tell the players what was rolled and the total, exactly as this answers."""
    parsed = parse(notation)
    if parsed is None:
        return (
            f"Not rolled: {notation[:40]!r} is not dice notation this understands (like 2d6+3, "
            f"d20, 4d6kh3; at most {MAX_DICE} dice of at most {MAX_SIDES} sides)."
        )
    result = roll(context.rng, parsed, mode)
    log.info("dice for %s: %s", context.persona, result)
    return str(result)
