"""FAISS indexes, one per (scope, embedder): the dense half of recall, derived from SQLite.

An index is exact inner product (`IndexIDMap2` over `IndexFlatIP`; the vectors are unit
length, so that is cosine) until a scope holds `HNSW_FROM` memories, then `IndexIDMap2` over
HNSW, whose search time hardly grows with size (benchmarks/recall_latency.py measured where the
two cross). HNSW cannot delete, so deleted ids are kept as tombstones and filtered from results
until the next rebuild; their vectors are overwritten with zeros, so a deleted memory's
vector is in no file.

A graph takes tens of seconds to build (benchmarks/README.md), so no recall waits for one: while
a worker thread builds it from the vectors read from the store, the scope is searched exactly
over those same vectors (`_Read`), memories added meanwhile go into a small exact index beside
them and deleted ones are marked dead (and zeroed); when the graph is ready it takes the
changes and takes over, in the same `ScopeIndex`. One build at a time per scope.

Indexes live in `<data>/index/`, one file each, written to a temporary file and renamed so a
crash never leaves half a file. The store is the truth: on load an index is checked against the
store's count and checksum of ids, and a missing, stale or unreadable file is rebuilt from the
embeddings in SQLite (logged). Open indexes sit in an LRU bounded by count and by the process's
byte budget for its copies of scopes (memory/recall/budget.py); an evicted one is saved first.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import logging
import os
import struct
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import BinaryIO, ParamSpec, TypeVar

import faiss
import numpy as np
import numpy.typing as npt

from memory.errors import KizunaError
from memory.private import private_folder, write_private
from memory.recall.budget import Budget
from memory.records import IdDigest, Vectors, id_digest
from memory.storage import MemoryStore

__all__ = ["HNSW_FROM", "FaissSearch", "IndexCache", "IndexFileError", "ScopeIndex", "index_path"]

log = logging.getLogger(__name__)

HNSW_FROM = 20_000  # memories in one scope; below this exact search is as fast (measured)
HNSW_M = 32
HNSW_EF_SEARCH = 256  # candidates looked at: most of the exact top 100 (benchmarks/README.md)
HNSW_EF_CONSTRUCTION = 80
# Exact searches over this many vectors leave the event loop for a thread; an HNSW search is
# quick enough to stay on it: under load the hop back cost more than the search.
THREAD_FROM = 5_000
_MAGIC = b"KZIDX1\n"
_P = ParamSpec("_P")
_T = TypeVar("_T")

_TEMPORARY = ".tmp"  # the suffix of an index file being written
_CACHE = "index"  # its name in the budget

Ids = npt.NDArray[np.int64]
# Makes a scope's index from its ids and vectors (in a worker thread): `_build_alone`; a test
# passes one it controls.
Builder = Callable[[int, Ids, Vectors | None], "ScopeIndex"]


class IndexFileError(KizunaError):
    """An index file that is not whole, or stored vectors of another size than the
    embedder's: the index is rebuilt from the store, or the memories re-embedded."""


def _name(scope: str, embedder: str) -> str:
    """An index's name in the budget (an embedder's name holds no NUL)."""
    return f"{embedder}\0{scope}"


def index_path(folder: Path, scope: str, embedder: str) -> Path:
    """A file name that no scope string can steer out of `folder`."""
    digest = hashlib.blake2b(f"{embedder}\0{scope}".encode("utf-8", "replace"), digest_size=16)
    return folder / f"{digest.hexdigest()}.faiss"


@dataclass(slots=True, eq=False)
class _Read:
    """A large scope's vectors as read from the store, searched exactly (one product with all
    of them) while its graph is built from them. The rows of memories deleted or embedded again
    since are dead, and zeroed: the build's thread may still be reading them, and the graph
    takes the deletions before it takes over."""

    ids: Ids  # ascending, as the store returns them
    matrix: Vectors
    alive: npt.NDArray[np.bool_]

    def rows(self, ids: Sequence[int]) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.intp]]:
        """Which of `ids` are live here, and their rows."""
        wanted = np.asarray(ids, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.ids, wanted), len(self.ids) - 1)  # never empty
        found = (self.ids[at] == wanted) & self.alive[at]
        return found, at[found]

    def kill(self, ids: Sequence[int]) -> None:
        _, rows = self.rows(ids)
        self.alive[rows] = False
        self.matrix[rows] = 0

    def search(self, query: Vectors, k: int) -> list[tuple[int, float]]:
        scores = self.matrix @ np.asarray(query, dtype=np.float32).reshape(-1)
        scores[~self.alive] = -np.inf
        k = min(k, int(self.alive.sum()))
        if k <= 0:
            return []
        best = np.argpartition(-scores, k - 1)[:k]
        best = best[np.argsort(-scores[best], kind="stable")]
        return list(zip(self.ids[best].tolist(), scores[best].tolist(), strict=True))


@dataclass(slots=True, eq=False)
class ScopeIndex:
    """One scope's vectors by memory id."""

    dimension: int
    index: faiss.IndexIDMap2
    live: set[int] = field(default_factory=set)
    tombstones: set[int] = field(default_factory=set)  # deleted but still inside an HNSW graph
    dirty: bool = False
    # Whether the index is a graph (HNSW): asked once, since every call into FAISS on the event
    # loop's thread lets the GIL go, and getting it back under load can take milliseconds.
    hnsw: bool = field(init=False)
    # While the scope's graph is built: the vectors it is built from, searched exactly beside
    # `index` (then exact too, holding what was added since).
    read: _Read | None = None

    def __post_init__(self) -> None:
        self.hnsw = isinstance(faiss.downcast_index(self.index.index), faiss.IndexHNSW)

    @classmethod
    def build(cls, dimension: int, ids: Ids, vectors: Vectors | None) -> ScopeIndex:
        hnsw = len(ids) >= HNSW_FROM
        if hnsw:
            graph = faiss.IndexHNSWFlat(dimension, HNSW_M, faiss.METRIC_INNER_PRODUCT)
            graph.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
            graph.hnsw.efSearch = HNSW_EF_SEARCH
            index = faiss.IndexIDMap2(graph)
        else:
            index = faiss.IndexIDMap2(faiss.IndexFlatIP(dimension))
        built = cls(dimension, index, dirty=True)
        if vectors is not None and len(ids):
            built.add(ids, vectors)
        return built

    @classmethod
    def while_built(cls, dimension: int, ids: Ids, vectors: Vectors) -> ScopeIndex:
        """The index of a scope whose graph is being built from `ids` and `vectors` (which it
        searches meanwhile, without a copy): `adopt` the graph when it is ready. Not saved
        until then: a file of it would be rebuilt anyway."""
        read = _Read(ids, vectors, np.ones(len(ids), dtype=np.bool_))
        empty = faiss.IndexIDMap2(faiss.IndexFlatIP(dimension))
        return cls(dimension, empty, set(ids.tolist()), read=read)

    @property
    def building(self) -> bool:
        return self.read is not None

    @property
    def size(self) -> int:
        return len(self.live)

    @property
    def nbytes(self) -> int:
        """About how much memory the index holds: its vectors, and an HNSW graph's links;
        while its graph is built, the vectors read and the graph too."""
        per_vector = self.dimension * 4 + (HNSW_M * 2 * 8 if self.hnsw else 8)
        held = int(self.index.ntotal) * per_vector
        if self.read is not None:
            graph = len(self.read.ids) * (self.dimension * 4 + HNSW_M * 2 * 8)
            held += self.read.matrix.nbytes + self.read.ids.nbytes + graph
        return held

    def adopt(self, graph: ScopeIndex) -> None:
        """The graph built from `read` takes over, once it has what changed since: the
        memories deleted (or embedded again) go, those added come in."""
        assert self.read is not None
        graph.remove(self.read.ids[~self.read.alive].tolist())
        if self.index.ntotal:
            added = faiss.vector_to_array(self.index.id_map).astype(np.int64)
            graph.add(added, self.index.reconstruct_batch(added))
        self.index, self.hnsw = graph.index, graph.hnsw
        self.live, self.tombstones = graph.live, graph.tombstones
        self.read = None
        self.dirty = True

    def digest(self) -> IdDigest:
        return id_digest(self.live)

    def add(self, ids: Ids, vectors: Vectors) -> None:
        ids = np.asarray(ids, dtype=np.int64)
        fresh = [i for i, x in enumerate(ids.tolist()) if x not in self.live]
        if len(fresh) < len(ids):  # re-adding an id (a new embedding) replaces it
            self.remove([int(x) for x in ids.tolist() if x in self.live])
        matrix = np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(ids), -1)
        self.index.add_with_ids(matrix, ids)
        self.live.update(ids.tolist())
        self.tombstones.difference_update(ids.tolist())
        self.dirty = True

    def remove(self, ids: Sequence[int]) -> None:
        present = [int(i) for i in ids if int(i) in self.live]
        if not present:
            return
        if self.read is not None:
            self.read.kill(present)
        if self.hnsw:
            self.tombstones.update(present)
            self._zero(present)
        else:
            self.index.remove_ids(faiss.IDSelectorBatch(np.asarray(present, dtype=np.int64)))
        self.live.difference_update(present)
        self.dirty = True

    def _zero(self, ids: Sequence[int]) -> None:
        """Overwrite the stored vectors of `ids` (inside the HNSW graph) with zeros."""
        graph = faiss.downcast_index(self.index.index)
        assert isinstance(graph, faiss.IndexHNSW)
        storage = faiss.downcast_index(graph.storage)
        assert isinstance(storage, faiss.IndexFlatCodes)
        stored = faiss.vector_to_array(self.index.id_map)
        rows = np.nonzero(np.isin(stored, np.asarray(ids, dtype=np.int64)))[0]
        codes = faiss.rev_swig_ptr(storage.codes.data(), storage.ntotal * storage.code_size)
        matrix = codes.reshape(storage.ntotal, storage.code_size)
        matrix[rows] = 0

    def search(self, query: Vectors, k: int) -> list[tuple[int, float]]:
        """The k nearest live ids with their inner product, best first."""
        if not self.live or k <= 0:
            return []
        hits: list[tuple[int, float]] = []
        want = min(k + len(self.tombstones), self.index.ntotal)
        if want:
            scores, ids = self.index.search(
                np.ascontiguousarray(query, dtype=np.float32).reshape(1, -1), want
            )
            hits = [
                (int(i), float(s))
                for i, s in zip(ids[0].tolist(), scores[0].tolist(), strict=True)
                if i >= 0 and i not in self.tombstones
            ]
        if self.read is not None:  # both exact: the best of the two are the best of all
            hits = sorted(hits + self.read.search(query, k), key=lambda hit: -hit[1])
        return hits[:k]

    def vectors(self, ids: Sequence[int]) -> dict[int, Vectors]:
        """The stored vectors of those `ids` that are live here."""
        wanted = [int(i) for i in ids if int(i) in self.live]
        return dict(zip(wanted, self._matrix(wanted), strict=True))

    def scores(self, query: Vectors, ids: Sequence[int]) -> dict[int, float]:
        """The inner product with `query` of the stored vectors of those `ids` that are live
        here, in one product."""
        wanted = [i for i in dict.fromkeys(int(i) for i in ids) if i in self.live]
        products = self._matrix(wanted) @ np.asarray(query, dtype=np.float32).reshape(-1)
        return dict(zip(wanted, products.tolist(), strict=True))

    def _matrix(self, ids: list[int]) -> Vectors:
        """The stored vectors of `ids` (live here), in order: from the vectors read while the
        graph is built, and from `index`."""
        matrix = np.zeros((len(ids), self.dimension), dtype=np.float32)
        rest = np.arange(len(ids))
        if self.read is not None and ids:
            inside, rows = self.read.rows(ids)
            matrix[inside] = self.read.matrix[rows]
            rest = rest[~inside]
        if len(rest):
            wanted = np.asarray(ids, dtype=np.int64)[rest]
            matrix[rest] = self.index.reconstruct_batch(wanted)
        return matrix

    def serialize(self) -> bytes:
        written = io.BytesIO()
        self.write(written)
        return written.getvalue()

    def write(self, file: BinaryIO) -> None:
        """Write the index file into `file`, FAISS's part as FAISS writes it: a save holds no
        copy of the index in memory (at 100k memories a graph is a quarter of a gigabyte)."""
        header = json.dumps(
            {"dimension": self.dimension, "tombstones": sorted(self.tombstones)}
        ).encode()
        file.write(_MAGIC + struct.pack("<I", len(header)) + header)
        writer = faiss.PyCallbackIOWriter(file.write)  # type: ignore[attr-defined]  # (SWIG's)
        faiss.write_index(self.index, writer)

    @classmethod
    def deserialize(cls, data: bytes) -> ScopeIndex:
        """Raises `IndexFileError` if `data` is not a whole index file."""
        if not data.startswith(_MAGIC):
            raise IndexFileError("not a Kizuna index file")
        offset = len(_MAGIC)
        try:
            (size,) = struct.unpack_from("<I", data, offset)
            header = json.loads(data[offset + 4 : offset + 4 + size])
            body = np.frombuffer(data, dtype=np.uint8, offset=offset + 4 + size)  # no copy
            index = faiss.deserialize_index(body)
            dimension = int(header["dimension"])
            tombstones = {int(t) for t in header["tombstones"]}
        except (struct.error, ValueError, KeyError, TypeError, RuntimeError) as e:
            raise IndexFileError(f"damaged index file: {e}") from None
        if index.d != dimension:
            raise IndexFileError("damaged index file: dimension mismatch")
        if not isinstance(index, faiss.IndexIDMap2):
            raise IndexFileError("damaged index file: not an id-mapped index")
        stored = faiss.vector_to_array(index.id_map).astype(np.int64)
        live = set(stored.tolist()) - tombstones
        return cls(dimension, index, live, tombstones)


@dataclass(slots=True, eq=False)
class FaissSearch:
    """A scope's open index as memory.recall.dense.ScopeSearch: searched under the index's lock,
    in a worker thread when it is a large exact index (an HNSW search is cheap at any size)."""

    cache: IndexCache
    scope: str
    embedder: str
    index: ScopeIndex

    async def search(self, query: Vectors, k: int) -> list[tuple[int, float]]:
        async with self.cache.lock(self.scope, self.embedder):
            if self.index.size >= THREAD_FROM and not self.index.hnsw:
                return await _whole_in_thread(self.index.search, query, k)
            return self.index.search(query, k)

    async def scores(self, query: Vectors, ids: Sequence[int]) -> dict[int, float]:
        return self.index.scores(query, ids)

    async def vectors(self, ids: Sequence[int]) -> dict[int, Vectors]:
        return self.index.vectors(ids)


class IndexCache:
    """The open indexes, at most `capacity` of them, within the process's byte `budget` shared
    with the other copies of scopes (memory/recall/budget.py): the least recently used are
    closed, saved first.

    Each (scope, embedder) has one lock, held to load, change, search and save its index, so a
    save never serialises an index mid-change and a change made while the index loads is
    applied to it once loaded (see `lock` and `open_index`). A graph being built is not held
    under it: its scope is searched exactly meanwhile, and the lock is taken for it to take
    over (see `ScopeIndex.while_built`).
    """

    def __init__(
        self,
        folder: Path,
        store: MemoryStore,
        *,
        capacity: int = 10_000,
        budget: Budget | None = None,
        builder: Builder | None = None,
    ) -> None:
        # Searches on this (the event loop's) thread are single queries over small indexes:
        # too little work for OpenMP's team, which costs them 5-30x on 2 busy cores. This sets
        # the calling thread's value only, so large searches, sent to worker threads, keep the
        # whole team (index builds do not: `_build_alone`).
        faiss.omp_set_num_threads(1)
        self.folder = folder
        self.store = store
        self.capacity = capacity
        self._budget = budget or Budget()
        self._budget.register(_CACHE, self._close)
        self._open: OrderedDict[tuple[str, str], ScopeIndex] = OrderedDict()
        # Closed with changes not saved yet: still their scope's index, so changed and reopened
        # as such until the save (`_saving`) is done.
        self._closing: dict[tuple[str, str], ScopeIndex] = {}
        self._saving: set[asyncio.Task[None]] = set()
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        self._builder = builder or _build_alone
        # The graph under way of each scope (the last one started: one waits for the one before).
        self._builds: dict[tuple[str, str], asyncio.Task[None]] = {}
        # One graph built at a time in the process: each holds its graph beside the vectors
        # and takes a core, and the scopes waiting are searched exactly meanwhile.
        self._building = asyncio.Semaphore(1)
        self.rebuilds = 0  # counted for tests and benchmarks
        # A process killed while writing an index leaves its temporary file: never read,
        # so remove it (the index it was becoming is stale or rebuilt on load).
        for leftover in folder.glob(f"*{_TEMPORARY}"):
            leftover.unlink(missing_ok=True)

    def __contains__(self, key: tuple[str, str]) -> bool:
        return key in self._open

    def lock(self, scope: str, embedder: str) -> asyncio.Lock:
        return self._locks.setdefault((scope, embedder), asyncio.Lock())

    def open_index(self, scope: str, embedder: str) -> ScopeIndex | None:
        """The index if it is open (call holding its lock: after a load in progress has
        finished, the loaded index is open)."""
        return self._current((scope, embedder))

    async def searcher(self, scope: str, embedder: str, dimension: int) -> FaissSearch:
        return FaissSearch(self, scope, embedder, await self.get(scope, embedder, dimension))

    async def added(
        self, scope: str, embedder: str, ids: Sequence[int], vectors: Sequence[Vectors | None]
    ) -> None:
        """Memories were stored: an open index gets them (an index not open is brought up to
        date from the store when next loaded; one that was loading has finished once the lock
        is ours). Without every vector it is dropped: reopened, it embeds what has none."""
        async with self.lock(scope, embedder):
            index = self._current((scope, embedder))
            if index is None or not ids:
                return
            present = [v for v in vectors if v is not None]
            if len(present) < len(ids):
                self.drop(scope, embedder)
                return
            index.add(
                np.asarray(ids, dtype=np.int64),
                np.stack([np.asarray(v, dtype=np.float32).reshape(-1) for v in present]),
            )
            if (scope, embedder) in self._open:
                name = _name(scope, embedder)
                self._budget.keep(_CACHE, name, index.nbytes, pinned=index.building)

    async def removed(self, scope: str, embedder: str, ids: Sequence[int]) -> None:
        """Memories were deleted: out of the open index and out of its file at once, so a
        forgotten memory's vector stays on no disk (a file not open is deleted: it is stale
        anyway, and rebuilt from the store when next loaded)."""
        key = (scope, embedder)
        async with self.lock(scope, embedder):
            index = self._current(key)
            if index is not None:
                index.remove(ids)
            if index is None or index.building:  # (its graph is written once it takes over)
                index_path(self.folder, scope, embedder).unlink(missing_ok=True)
                return
            await self._save(key, index)

    async def stored_elsewhere(self, scope: str, embedder: str, ids: Sequence[int]) -> None:
        """Another process stored vectors for the memories `ids` (new ones, or embedded again):
        an open index reads them from the store, and is dropped if one there has none from
        this embedder (stored while the embedder was out: reopened, it embeds what has none,
        as for the bank's own). Its file is stale (a vector embedded again has the same id, which
        the check on load misses): it goes, and the index is written again when saved."""
        key = (scope, embedder)
        async with self.lock(scope, embedder):
            index_path(self.folder, scope, embedder).unlink(missing_ok=True)
            index = self._current(key)
            if index is None:
                return
            index.dirty = True  # (its file is gone)
            if not ids:
                return
            # Read under the lock: a forget here meanwhile waits, and takes out what is read.
            found = await self.store.stored_vectors(scope, embedder, ids)
            missing = [i for i in dict.fromkeys(ids) if i not in found]
            if missing and await self.store.get_memories(scope, missing):
                self.drop(scope, embedder)
                return
            # (Those missing are deleted since: their notice follows, or came.)
            index.remove(missing)
            stored = sorted(found)
            if not stored:
                return
            index.add(np.asarray(stored, dtype=np.int64), np.stack([found[i] for i in stored]))
            if key in self._open:
                name = _name(scope, embedder)
                self._budget.keep(_CACHE, name, index.nbytes, pinned=index.building)

    async def removed_elsewhere(self, scope: str, embedder: str, ids: Sequence[int]) -> None:
        """Another process deleted the memories `ids`: out of the open index, and its file goes
        at once (rather than written again for each such notice: a large scope's file is
        hundreds of MB; the index is written again when saved)."""
        key = (scope, embedder)
        async with self.lock(scope, embedder):
            index_path(self.folder, scope, embedder).unlink(missing_ok=True)
            index = self._current(key)
            if index is not None:
                index.remove(ids)
                index.dirty = True  # (its file is gone)

    async def get(self, scope: str, embedder: str, dimension: int) -> ScopeIndex:
        """The scope's index for this embedder: open, loaded from its file, or rebuilt."""
        key = (scope, embedder)
        found = self._open.get(key)
        if found is None:
            async with self.lock(scope, embedder):
                found = self._open.get(key)
                if found is None:
                    found = self._closing.pop(key, None) or await self._load(
                        scope, embedder, dimension
                    )
                    self._open[key] = found
        self._open.move_to_end(key)
        # Charged as of its last use (or change here): summing every index on each recall
        # would cost more than the drift. One whose graph is being built stays until the graph
        # takes over (the build's thread holds its vectors until it ends: closing it would
        # give nothing back).
        self._budget.keep(_CACHE, _name(scope, embedder), found.nbytes, pinned=found.building)
        while len(self._open) > self.capacity:
            older = islice(self._open.items(), len(self._open) - 1)
            oldest = next((k for k, index in older if not index.building), None)
            if oldest is None:
                break
            self._budget.release(_CACHE, _name(*oldest))
            self._close(_name(*oldest))
        return found

    @property
    def open_bytes(self) -> int:
        """About how much memory the open indexes hold (as of their last use)."""
        return sum(self._budget.held(_CACHE, _name(*key)) for key in self._open)

    def _current(self, key: tuple[str, str]) -> ScopeIndex | None:
        """The scope's index if it is open or closing (its save not done)."""
        return self._open.get(key) or self._closing.get(key)

    async def _load(self, scope: str, embedder: str, dimension: int) -> ScopeIndex:
        path = index_path(self.folder, scope, embedder)
        why = "no index file"
        # The digest checks a file: with none, a first sight costs one trip less.
        if path.exists():
            expected = await self.store.embedding_digest(scope, embedder)
            try:
                data = await asyncio.to_thread(path.read_bytes)
                loaded = await asyncio.to_thread(ScopeIndex.deserialize, data)
            except (OSError, IndexFileError) as e:
                why = f"unreadable index ({e})"
            else:
                if loaded.dimension != dimension:
                    why = f"dimension {loaded.dimension}, expected {dimension}"
                elif loaded.digest() != expected:
                    why = f"stale index ({loaded.size} memories, the store has {expected.count})"
                else:
                    return loaded
        ids, vectors = await self.store.embeddings(scope, embedder)
        if vectors is not None and vectors.shape[1] != dimension:
            raise IndexFileError(
                f"stored embeddings of {embedder} have dimension {vectors.shape[1]}, "
                f"expected {dimension}"
            )
        if len(ids) or path.exists():
            log.info("rebuilt the memory index of a scope from the store: %s", why)
        self.rebuilds += 1
        if vectors is None or len(ids) < HNSW_FROM:
            return await asyncio.to_thread(_build_alone, dimension, ids, vectors)
        # The file is stale: it goes now, since it may hold what is forgotten before the
        # graph takes over (and is written).
        path.unlink(missing_ok=True)
        index = ScopeIndex.while_built(dimension, ids, vectors)
        self._start_build((scope, embedder), index)
        return index

    def _start_build(self, key: tuple[str, str], index: ScopeIndex) -> None:
        task = asyncio.ensure_future(self._build(key, index, self._builds.get(key)))
        self._builds[key] = task
        task.add_done_callback(lambda done: self._built(key, done))

    async def _build(
        self, key: tuple[str, str], index: ScopeIndex, before: asyncio.Task[None] | None
    ) -> None:
        """Build the graph of `index` in a worker thread and let it take over, unless the
        index was dropped meanwhile (it is stale then). One build of a scope at a time: the
        thread of one dropped runs on, and a build waits for it."""
        read = index.read
        assert read is not None
        if before is not None:
            await asyncio.wait({before})
            if self._open.get(key) is not index:
                return
        try:
            async with self._building:
                if self._open.get(key) is not index:
                    return  # dropped while it waited its turn
                graph = await asyncio.to_thread(
                    self._builder, index.dimension, read.ids, read.matrix
                )
        except Exception:
            # Dropped, the scope is read again by its next recall, which tries again.
            log.exception("could not build the memory index of a scope")
            async with self.lock(*key):
                if self._open.get(key) is index:
                    self.drop(*key)
            return
        async with self.lock(*key):
            if self._open.get(key) is not index:
                return
            index.adopt(graph)
            # Its graph's size now, in its place among the others: it may go first.
            self._budget.keep(_CACHE, _name(*key), index.nbytes, used=False)

    def _built(self, key: tuple[str, str], task: asyncio.Task[None]) -> None:
        if self._builds.get(key) is task:
            del self._builds[key]
        if not task.cancelled() and task.exception() is not None:
            log.error("a memory index's graph could not take over: %r", task.exception())

    async def built(self) -> None:
        """Wait for the graphs under way to be built and take over (the threads building them
        cannot be stopped, and what they build is saved with the rest)."""
        while self._builds:
            await asyncio.wait(set(self._builds.values()))

    def _close(self, name: str) -> None:
        """The budget (or the count) lets the index named `name` go: saved first, in the
        background, if it changed."""
        embedder, _, scope = name.partition("\0")
        key = (scope, embedder)
        index = self._open.pop(key, None)
        if index is None or not index.dirty:
            return
        self._closing[key] = index
        task = asyncio.ensure_future(self._save_closed(key, index))
        self._saving.add(task)
        task.add_done_callback(self._saved)

    async def _save_closed(self, key: tuple[str, str], index: ScopeIndex) -> None:
        async with self.lock(*key):
            if self._closing.get(key) is not index:
                return  # reopened, or dropped, meanwhile
            try:
                await self._save(key, index)
            finally:
                del self._closing[key]  # unsaved, its file is stale: rebuilt when next loaded

    def _saved(self, task: asyncio.Task[None]) -> None:
        self._saving.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("could not save a closed memory index: %r", task.exception())

    async def _save(self, key: tuple[str, str], index: ScopeIndex) -> None:
        """Write a changed index (holding its lock); one whose graph is being built is written
        once the graph takes over."""
        if not index.dirty or index.building:
            return
        path = index_path(self.folder, *key)
        await _whole_in_thread(_write_atomically, path, index.write)
        index.dirty = False

    def drop(self, scope: str, embedder: str) -> None:
        """Forget an open index without saving it, and its file, which is stale (another
        process may have deleted memories that it still holds): rebuilt when next used. A
        graph being built for it is thrown away when done."""
        self._open.pop((scope, embedder), None)
        self._closing.pop((scope, embedder), None)
        self._budget.release(_CACHE, _name(scope, embedder))
        index_path(self.folder, scope, embedder).unlink(missing_ok=True)

    def drop_all(self) -> None:
        """`drop` every index open or being saved. The files of those not open stay: each is
        checked against the store's count and checksum of ids when loaded."""
        for key in set(self._open) | set(self._closing):
            self.drop(*key)

    async def flush(self) -> int:
        """Save every changed index; returns how many were written."""
        written = 0
        changed = [key for key, index in self._open.items() if index.dirty and not index.building]
        if changed:
            log.info("saving %d changed memory indexes", len(changed))
        for key, index in list(self._open.items()):
            async with self.lock(*key):
                if index.dirty and not index.building:
                    await self._save(key, index)
                    written += 1
        if self._saving:  # those closed meanwhile, saving on their own
            await asyncio.wait(set(self._saving))
        return written

    async def delete_file(self, scope: str, embedder: str) -> None:
        async with self.lock(scope, embedder):
            self.drop(scope, embedder)


def _build_alone(dimension: int, ids: Ids, vectors: Vectors | None) -> ScopeIndex:
    """`ScopeIndex.build` on one OpenMP thread (the worker thread's own setting): a large
    scope's HNSW graph takes tens of seconds to build, and a team of threads spinning at its
    locks takes the core that the event loop and the database need meanwhile, for no gain
    on a busy machine (benchmarks/README.md). The thread's setting is put back after."""
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        return ScopeIndex.build(dimension, ids, vectors)
    finally:
        faiss.omp_set_num_threads(threads)


async def _whole_in_thread(work: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
    """`asyncio.to_thread` for work on an index under its lock. Cancelled (as a stop cancels
    a save, or a timeout a search), it still returns only once the thread is done: a thread
    can't be stopped, and the lock must not pass to a change or a second save of the same
    file while it runs (two writers of one temporary file lose the rename)."""
    running = asyncio.ensure_future(asyncio.to_thread(work, *args, **kwargs))
    try:
        return await asyncio.shield(running)
    except asyncio.CancelledError:
        await asyncio.wait({running})
        raise


def _write_atomically(path: Path, data: Callable[[BinaryIO], object]) -> None:
    """Write then rename: a crash leaves the old file or the new one, never part of one."""
    private_folder(path.parent)
    temporary = path.with_name(path.name + _TEMPORARY)
    write_private(temporary, data)
    os.replace(temporary, path)
    if os.name == "posix":  # the rename itself reaches the disk with its folder's entry
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
