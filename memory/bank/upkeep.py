"""The bank's daily upkeep of a scope: what its forgetting policy lets go is deleted, and a
forgotten memory with a near-duplicate that stays is merged into it (the survivor takes its
recalls and strength). The embeddings' catch-up is memory/recall/catchup.py."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime

import numpy as np
import numpy.typing as npt

from memory.dates import undated
from memory.forgetting import ForgettingPolicy, Forgotten, absorbed, merge_targets
from memory.forgetting.base import Twins, spare_twins
from memory.recall.catchup import CatchUp
from memory.recall.derived import Derived
from memory.records import Memory, PruneWrite, Vectors
from memory.storage import BankStore
from memory.text import restates

__all__ = ["HEARSAY", "TWIN_SCAN_LIMIT", "Upkeep"]

HEARSAY = "hearsay: words another speaker passed on, which the scope may not keep"
TWIN_BLOCK = 1_024  # memories compared with all the others at a time
TWIN_SCAN_LIMIT = 50_000  # memories of a scope compared pairwise by the daily prune, at most


@dataclass(slots=True, eq=False)
class Upkeep:
    """Prunes scopes by their forgetting policy (`policy(scope)`) and merges near-duplicates
    (cosine at least `duplicate`, on the embedder's scale)."""

    store: BankStore
    derived: Derived
    catchup: CatchUp
    policy: Callable[[str], ForgettingPolicy]
    duplicate: float

    async def prune(
        self,
        scope: str,
        now: datetime,
        *,
        day: date,
        seed: int,
        hearsay: Callable[[Memory], bool] | None = None,
    ) -> tuple[int, list[tuple[int, str]]]:
        """Let the scope's forgetting policy decide what is forgotten today; delete it, with
        a report of each kept in the store. Returns (memories kept, [(id, reason)]).
        `hearsay`: the memories the scope may not keep at all, by the caller's rule (words
        passed on by another speaker): forgotten whatever the policy says, never merged."""
        policy = self.policy(scope)
        memories = await self.store.list_memories(scope)
        heard = {m.id for m in memories if hearsay is not None and hearsay(m)}
        judged = [m for m in memories if m.id not in heard]
        # Off the event loop: the policy's look at a large scope takes a while. Twins only
        # spare (ForgettingPolicy.prune), so only pairs with one of its picks in them matter:
        # those are all the scan compares, not every pair of the scope.
        picked = await asyncio.to_thread(policy.prune, judged, now, seed=seed)
        twins = [
            t
            for t in await self.twins(scope, among={f.id for f in picked}, size=len(memories))
            if not heard.intersection(t)
        ]
        by_id = {m.id: m for m in memories}
        decisions, into = await asyncio.to_thread(_spared, policy, picked, twins, by_id, now)
        decided = {d.id: d.reason for d in decisions if d.id in by_id}
        # A forgotten memory with a near-duplicate that stays is merged into it: deleted like
        # any forgotten memory, its recalls and strength carried by the survivor.
        for twin, keep in into.items():
            decided[twin] = f"merged into near-duplicate {keep}; {decided[twin]}"
        decided.update(dict.fromkeys(sorted(heard), HEARSAY))
        forgotten = [(by_id[i], reason) for i, reason in decided.items()]
        gone = await self.store.prune(PruneWrite(scope, day, forgotten, policy.name, now, into))
        await self.derived.removed(scope, gone)
        if gone:
            await self.catchup.uncache([by_id[i] for i in gone])
        await self._absorb(scope, policy, by_id, {g: into[g] for g in gone if g in into}, now)
        return len(memories) - len(gone), [(i, decided[i]) for i in gone]

    async def _absorb(
        self,
        scope: str,
        policy: ForgettingPolicy,
        by_id: dict[int, Memory],
        into: dict[int, int],
        now: datetime,
    ) -> None:
        """Strengthen each survivor of a merge, which the prune gave the recalls of the
        deleted twins `into` it (at their own times): the repetition is one more recall,
        leaving the strength `absorbed` gives."""
        merged: dict[int, list[Memory]] = {}
        for twin, keep in into.items():
            merged.setdefault(keep, []).append(by_id[twin])
        for keep, twins in sorted(merged.items()):
            after = absorbed(policy, by_id[keep], twins, now)
            assert after.last_recalled_at is not None
            await self.store.reinforce(scope, [(keep, after.strength)], after.last_recalled_at)
            await self.derived.changed(scope, [keep])

    async def twins(
        self, scope: str, among: Collection[int] | None = None, *, size: int | None = None
    ) -> list[tuple[int, int]]:
        """Pairs of the scope's memories that say nearly the same (cosine >= `duplicate`, and
        neither saying what the other does not: memory.text.restates): a prune keeps one of
        each pair, merged. `among`: only the pairs with one of these ids in them. `size`: the
        scope's number of memories, when the caller has counted them."""
        if among is not None and not among:
            return []
        if size is None:
            size = await self.store.count_memories(scope)
        if size > TWIN_SCAN_LIMIT:  # known before any of its vectors is read
            return []
        embedder = self.catchup.embedder.name
        close: set[tuple[int, int]] = set()
        if among is None:  # every pair: the scope's vectors, read once, against themselves
            ids, vectors = await self.store.embeddings(scope, embedder)
            if vectors is not None:
                close = await asyncio.to_thread(_twins, ids, vectors, ids, vectors, self.duplicate)
        elif found := await self.store.stored_vectors(scope, embedder, sorted(among)):
            chosen = np.array(sorted(found), dtype=np.int64)
            vectors = np.stack([found[i] for i in chosen.tolist()])
            # Compared with the scope a slice at a time: only the chosen ones' vectors are held
            # whole, never the scope's.
            async for ids, others in self.store.embedding_slices(scope, embedder):
                close |= await asyncio.to_thread(
                    _twins, chosen, vectors, ids, others, self.duplicate
                )
        if not close:
            return []
        pairs = sorted(close)
        wanted = sorted({i for pair in pairs for i in pair})
        texts = {m.id: m.text for m in await self.store.get_memories(scope, wanted)}
        return await asyncio.to_thread(_restating, pairs, texts)


def _spared(
    policy: ForgettingPolicy,
    picked: Sequence[Forgotten],
    twins: Twins,
    by_id: Mapping[int, Memory],
    now: datetime,
) -> tuple[list[Forgotten], dict[int, int]]:
    """What a prune forgets of the policy's `picks`, one of each pair of `twins` spared, and
    what each forgotten twin is merged into; only the twins' retention is asked for."""
    retention = {i: policy.retention(by_id[i], now) for pair in twins for i in pair}
    decisions = spare_twins(picked, twins, retention)
    return decisions, merge_targets({d.id for d in decisions}, twins, retention)


def _twins(
    chosen: npt.NDArray[np.int64],
    vectors: Vectors,
    ids: npt.NDArray[np.int64],
    others: Vectors,
    threshold: float,
) -> set[tuple[int, int]]:
    """The pairs of a `chosen` memory and another of `ids` (a memory with itself excepted) at
    cosine `threshold` or more, each (smaller id, larger)."""
    found: set[tuple[int, int]] = set()
    for start in range(0, len(chosen), TWIN_BLOCK):
        block = vectors[start : start + TWIN_BLOCK] @ others.T
        for hit, col in zip(*np.nonzero(block >= threshold), strict=True):
            a, b = int(chosen[start + hit]), int(ids[col])
            if a != b:
                found.add((min(a, b), max(a, b)))
    return found


def _restating(pairs: list[tuple[int, int]], texts: Mapping[int, str]) -> list[tuple[int, int]]:
    """Those of `pairs` whose texts restate each other (both still there)."""
    return [
        (a, b)
        for a, b in pairs
        if a in texts and b in texts and restates(undated(texts[a]), undated(texts[b]))
    ]
