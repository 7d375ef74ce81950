"""Documents a user sends (text, Markdown, PDF): reading their text (`extract_text`,
`read_document`, and `precheck` before a download), cutting text into pieces that fit a token
budget (`chunks`), a map-reduce summary by a chat model (`summarise`), and the passages most
relevant to a question (`excerpts`) for documents longer than a prompt can hold.

Platform-free: the adapters hand over a file's name and bytes, the engine a `Complete`.
Reading a PDF is CPU-bound and blocking: call `extract_text` in a thread (`asyncio.to_thread`).
"""

from __future__ import annotations

import asyncio
import codecs
import logging
import math
import os
import re
import threading
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path, PurePath
from typing import Literal

from bot.catalogue import say
from bot.chat_model import Message
from bot.prompts import (
    MAP_NOTE,
    MAP_TASK,
    REDUCE_NOTE,
    REDUCE_TASK,
    WHOLE_TASK,
    document_header,
    document_messages,
    length_note,
    numbered,
    summary_rules,
)
from bot.tomlfile import one_line
from memory.errors import KizunaError

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_CHARS",
    "MAX_CONCURRENT",
    "PASSAGE_TOKENS",
    "Complete",
    "Document",
    "DocumentError",
    "DocumentKind",
    "chunks",
    "excerpts",
    "extract_text",
    "is_document",
    "precheck",
    "read_document",
    "summarise",
    "too_big",
]

log = logging.getLogger(__name__)

DocumentKind = Literal["text", "markdown", "pdf"]
Complete = Callable[[list[Message]], Awaitable[str]]

DEFAULT_LIMIT = 5 * 1024 * 1024  # bytes of file
MAX_CHARS = 2_000_000  # characters of extracted text (a 5 MB text file can hold 5 million)

_KINDS: dict[str, DocumentKind] = {
    ".txt": "text",
    ".text": "text",
    ".log": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".pdf": "pdf",
}


@dataclass(slots=True, frozen=True)
class Document:
    name: str
    kind: DocumentKind
    text: str  # newlines normalised to "\n"; a PDF's pages separated by blank lines
    pages: int | None  # PDFs only
    chars: int


class DocumentError(KizunaError):
    """A file that cannot be read as a document: `said(language)` is the one line a user
    sees (the catalogue's sentence `key`, after the file's name); `str(error)` is it in
    English."""

    def __init__(self, name: str, key: str, **values: str) -> None:
        self.name, self.key, self.values = name, key, values
        super().__init__(self.said("en"))

    def said(self, language: str) -> str:
        kinds = say(language, "document_kinds")
        message = say(language, self.key, kinds=kinds, **self.values)
        return one_line(f"{self.name}: {message}")  # a file may be called "a\nb.txt"


# --- reading ---------------------------------------------------------------------------------


def is_document(name: str) -> bool:
    """Whether a file sent as `name` is one to read (text, Markdown, PDF), by its extension:
    other attachments (pictures, ...) are only mentioned to the persona."""
    return PurePath(name).suffix.lower() in _KINDS


def precheck(name: str, size: int, *, limit_bytes: int = DEFAULT_LIMIT) -> None:
    """Refuse a file by its name and declared size, before downloading it: raise
    `DocumentError` for an unsupported extension or a file over `limit_bytes`."""
    suffix = PurePath(name).suffix.lower()
    if suffix and suffix not in _KINDS:
        raise DocumentError(name, "document_unsupported", suffix=suffix)
    if size > limit_bytes:
        raise too_big(name, size, limit_bytes)


def too_big(name: str, size: int | None, limit_bytes: int) -> DocumentError:
    """The refusal of a file over `limit_bytes`, with its size when it is known."""
    if size is None:
        return DocumentError(name, "document_too_big_unknown", limit=_size(limit_bytes))
    return DocumentError(name, "document_too_big", size=_size(size), limit=_size(limit_bytes))


def read_document(path: Path, *, limit_bytes: int = DEFAULT_LIMIT) -> Document:
    """Read a local file (the console's `read PATH`); nothing past `limit_bytes` is read."""
    try:
        with path.open("rb") as file:
            precheck(path.name, os.fstat(file.fileno()).st_size, limit_bytes=limit_bytes)
            data = file.read(limit_bytes + 1)  # one byte more catches a file grown since
    except OSError as e:
        raise DocumentError(path.name, "document_unreadable", why=str(e.strerror or e)) from None
    except ValueError:  # open() refuses a path with a NUL in it
        raise DocumentError(path.name, "document_missing") from None
    return extract_text(path.name, data, limit_bytes=limit_bytes)


def extract_text(name: str, data: bytes, *, limit_bytes: int = DEFAULT_LIMIT) -> Document:
    """The text of a file sent as `name` with contents `data`, or `DocumentError`.

    The kind comes from the extension, or from the contents when there is none. Text is
    UTF-8 (a BOM is fine), UTF-16 with a BOM, or GB18030 (what Chinese Windows writes).
    """
    precheck(name, len(data), limit_bytes=limit_bytes)
    if not data:
        raise DocumentError(name, "document_empty")
    kind = _KINDS.get(PurePath(name).suffix.lower())
    if kind is None:
        kind = "pdf" if data.startswith(b"%PDF-") else "text"
    pages: int | None = None
    if kind == "pdf":
        text, pages = _pdf_text(name, data)
    else:
        text = _decode(name, data)
    text = _normalise_newlines(text)
    if len(text) > MAX_CHARS:
        raise DocumentError(
            name, "document_too_long", count=f"{len(text):,}", most=f"{MAX_CHARS:,}"
        )
    if not text.strip():
        raise DocumentError(name, "document_empty")
    return Document(name=name, kind=kind, text=text, pages=pages, chars=len(text))


def _size(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.1f}".removesuffix(".0") + " MB"
    if n >= 1024:
        return f"{n / 1024:.1f}".removesuffix(".0") + " KB"
    return f"{n} bytes"


# Control characters other than tab, newline, vertical tab, form feed and carriage return.
_CONTROL = re.compile("[\x00-\x08\x0e-\x1f\x7f]")


def _decode(name: str, data: bytes) -> str:
    if data.startswith(codecs.BOM_UTF8):
        encodings = ["utf-8-sig"]
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encodings = ["utf-16"]
    else:
        encodings = ["utf-8", "gb18030"]
    for encoding in encodings:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        # Binary data can decode as GB18030 (or, rarely, UTF-8); text has no NULs and few controls.
        if "\x00" not in text and len(_CONTROL.findall(text)) * 100 <= len(text):
            return text
    raise DocumentError(name, "document_not_text")


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _pdf_text(name: str, data: bytes) -> tuple[str, int]:
    # Imported here, by the first PDF read: most runs read none, and pypdf is slow to load.
    from pypdf import PasswordType, PdfReader
    from pypdf.errors import DependencyError

    with _pypdf_at_debug():
        try:
            reader = PdfReader(BytesIO(data))
            if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
                raise DocumentError(name, "document_password")
            texts: list[str] = []
            chars = 0
            for page in reader.pages:
                text = page.extract_text().strip()
                chars += len(text)
                if chars > MAX_CHARS:  # stop early: the rest would be refused anyway
                    raise DocumentError(name, "document_too_long_pdf", most=f"{MAX_CHARS:,}")
                if text:
                    texts.append(text)
            pages = len(reader.pages)
        except DocumentError:
            raise
        except DependencyError as e:  # AES encryption needs the `cryptography` package
            log.debug("%s: encrypted PDF we cannot open: %s", name, e)
            raise DocumentError(name, "document_encrypted") from None
        except Exception as e:  # pypdf raises all sorts on a damaged or fake PDF
            log.debug("%s: pypdf failed: %r", name, e)
            raise DocumentError(name, "document_bad_pdf") from None
    if not texts:
        raise DocumentError(name, "document_no_text")
    return "\n\n".join(texts), pages


class _DebugForwarder(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        try:
            log.debug("pypdf: %s", record.getMessage())
        except Exception:
            self.handleError(record)


_PYPDF_LOG = logging.getLogger("pypdf")
_forwarder = _DebugForwarder()
_quiet_lock = threading.Lock()
_quiet_readers = 0
_pypdf_propagated = True


@contextmanager
def _pypdf_at_debug() -> Iterator[None]:
    """While a PDF is read, pypdf's warnings about malformed files go to our debug log rather
    than to the application's handlers: a user's broken PDF is no news for the operator.
    Only pypdf's own logger changes, and only meanwhile (counted: reads may overlap in threads).
    """
    global _quiet_readers, _pypdf_propagated
    with _quiet_lock:
        if _quiet_readers == 0:
            _pypdf_propagated = _PYPDF_LOG.propagate
            _PYPDF_LOG.addHandler(_forwarder)
            _PYPDF_LOG.propagate = False
        _quiet_readers += 1
    try:
        yield
    finally:
        with _quiet_lock:
            _quiet_readers -= 1
            if _quiet_readers == 0:
                _PYPDF_LOG.removeHandler(_forwarder)
                _PYPDF_LOG.propagate = _pypdf_propagated


# --- chunking --------------------------------------------------------------------------------

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
# A sentence ends after . ! ? (then closing quotes or brackets) and whitespace, after 。！？
# (Chinese puts no space after them), or at a line break.
_CLOSERS = "\"'\u201d\u2019)\\]」』）"  # closing quotes and brackets
_SENTENCE_END = re.compile(f"[.!?]+[{_CLOSERS}]*\\s+|[。！？]+[{_CLOSERS}]*\\s*|\n\\s*")


def chunks(text: str, max_tokens: int, *, count_tokens: Callable[[str], int]) -> list[str]:
    """`text` cut into pieces of at most `max_tokens` each, in order: whole paragraphs where
    they fit, else sentences (English or Chinese), else hard cuts (at a space if one is near).
    Neighbouring pieces are packed together while they fit. Only whitespace is lost.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be positive, not {max_tokens}")
    units = list(_units(text, max_tokens, count_tokens))
    costs = [count_tokens(piece) for _, piece in units]
    separator_costs = {sep: count_tokens(sep) for sep, _ in units}
    result: list[str] = []
    start = 0
    while start < len(units):
        end, used = start + 1, costs[start]
        while end < len(units):
            more = separator_costs[units[end][0]] + costs[end]
            if used + more > max_tokens:
                break
            end, used = end + 1, used + more
        # Token counts are nearly additive, not exactly (a tokenizer may merge across a join):
        # confirm the joined chunk and give pieces back until it fits.
        chunk = _join(units[start:end])
        while end - start > 1 and count_tokens(chunk) > max_tokens:
            end -= 1
            chunk = _join(units[start:end])
        result.append(chunk)
        start = end
    return result


def _join(units: list[tuple[str, str]]) -> str:
    return units[0][1] + "".join(sep + piece for sep, piece in units[1:])


def _units(
    text: str, max_tokens: int, count_tokens: Callable[[str], int]
) -> Iterator[tuple[str, str]]:
    """Pieces of `text` that each fit, with the whitespace to put before each when joining."""
    for paragraph in _PARAGRAPH_BREAK.split(text):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        if count_tokens(paragraph) <= max_tokens:
            yield "\n\n", paragraph
            continue
        first = True  # the paragraph's first piece follows a paragraph break
        for sep, sentence in _sentences(paragraph):
            if count_tokens(sentence) <= max_tokens:
                fitting: Iterable[tuple[str, str]] = [(sep, sentence)]
            else:
                fitting = _hard_cuts(sentence, sep, max_tokens, count_tokens)
            for piece_sep, piece in fitting:
                yield "\n\n" if first else piece_sep, piece
                first = False


def _sentences(paragraph: str) -> Iterator[tuple[str, str]]:
    start, sep = 0, ""
    for match in _SENTENCE_END.finditer(paragraph):
        sentence = paragraph[start : match.end()]
        stripped = sentence.rstrip()
        if stripped:
            yield sep, stripped
        sep, start = sentence[len(stripped) :], match.end()
    if start < len(paragraph):
        yield sep, paragraph[start:]


def _hard_cuts(
    text: str, sep: str, max_tokens: int, count_tokens: Callable[[str], int]
) -> Iterator[tuple[str, str]]:
    while text:
        cut = _longest_fit(text, max_tokens, count_tokens)
        if cut < len(text):
            space = text.rfind(" ", cut // 2, cut + 1)  # a word boundary in the latter half
            if space > 0:
                cut = space
        piece, rest = text[:cut].rstrip(), text[cut:]
        yield sep, piece
        text = rest.lstrip()
        sep = rest[: len(rest) - len(text)]


def _longest_fit(text: str, max_tokens: int, count_tokens: Callable[[str], int]) -> int:
    """The length of the longest prefix of `text` within `max_tokens` (at least 1). Galloping,
    then bisection: the cost follows the prefix's size, not the text's."""
    fits, size = 0, max_tokens
    while True:
        size = min(size, len(text))
        if count_tokens(text[:size]) > max_tokens:
            break
        fits = size
        if size == len(text):
            return size
        size *= 2
    low, high = fits, size - 1  # text[:fits] fits, text[:size] does not
    while low < high:
        middle = (low + high + 1) // 2
        if count_tokens(text[:middle]) <= max_tokens:
            low = middle
        else:
            high = middle - 1
    return max(low, 1)


# --- summarising -----------------------------------------------------------------------------

MAX_CONCURRENT = 4  # model calls in flight at once
_MAX_LEVELS = 4  # reduce levels before the rest is cut to fit
_MIN_BUDGET = 100  # tokens of text per call, below which a summary is pointless
_MIN_SHARE = 20  # tokens of a partial summary cut to fit, below which it says nothing


async def summarise(
    document: Document,
    complete: Complete,
    *,
    context_tokens: int,
    count_tokens: Callable[[str], int],
    language: str = "en",
) -> str:
    """A summary of `document` in `language` ("en", "zh", ...) by the model behind `complete`.

    A document that fits about half of `context_tokens` (the rest is for instructions and the
    answer) takes one call. A longer one is summarised part by part (map, `MAX_CONCURRENT`
    calls at once), then the partial summaries are combined (reduce), in several levels when
    they are too long for one call. Errors from `complete` propagate.
    """
    budget = context_tokens // 2
    if budget < _MIN_BUDGET:
        raise ValueError(f"context_tokens={context_tokens} is too small to summarise in")
    rules = summary_rules(language)
    whole = _header(document) + document.text
    # Counting and cutting run off the event loop: a few MB of text takes them a second.
    if await asyncio.to_thread(count_tokens, whole) <= budget:
        return (await complete(document_messages(WHOLE_TASK, rules, whole))).strip()

    # Size the parts so that the largest header fits beside them.
    header_tokens = count_tokens(_header(document, 10**6, 10**6))
    parts = await asyncio.to_thread(
        chunks, document.text, budget - header_tokens, count_tokens=count_tokens
    )
    system = f"{rules}\n{MAP_NOTE} {length_note(budget, len(parts), language)}"
    partials = await _complete_all(
        complete,
        [
            document_messages(MAP_TASK, system, _header(document, i, len(parts)) + part)
            for i, part in enumerate(parts, 1)
        ],
    )
    return await _reduce(document, partials, complete, budget, count_tokens, rules, language)


async def _reduce(
    document: Document,
    partials: list[str],
    complete: Complete,
    budget: int,
    count_tokens: Callable[[str], int],
    rules: str,
    language: str,
) -> str:
    header = _header(document)
    space = budget - count_tokens(header)
    system = f"{rules}\n{REDUCE_NOTE}"
    text = numbered(partials)
    size = count_tokens(text)
    for _ in range(_MAX_LEVELS):
        if size <= space:
            break
        # One level: runs of partial summaries that fit a call are combined, concurrently.
        groups = chunks(text, space, count_tokens=count_tokens)
        shrink = f"{system} {length_note(budget, len(groups), language)}"
        merged = await _complete_all(
            complete, [document_messages(REDUCE_TASK, shrink, header + group) for group in groups]
        )
        shorter = numbered(merged)
        shorter_size = count_tokens(shorter)
        if shorter_size >= size:  # the model is not shortening: another level would not help
            break
        partials, text, size = merged, shorter, shorter_size
    if size > space:
        log.warning("%s: partial summaries too long even after reducing; cut", document.name)
        text = _squeeze(partials, space, count_tokens)
    return (await complete(document_messages(REDUCE_TASK, system, header + text))).strip()


def _squeeze(summaries: list[str], space: int, count_tokens: Callable[[str], int]) -> str:
    """The summaries numbered within `space`: each cut to an equal share, so that every part of
    the document is still heard, or, when the shares would be tiny, as many as fit."""
    labels = count_tokens(numbered([""] * len(summaries)))
    share = (space - labels) // len(summaries)
    if share >= _MIN_SHARE:
        summaries = [
            chunks(summary, share, count_tokens=count_tokens)[0] if summary.strip() else ""
            for summary in summaries
        ]
    # Token counts are not exactly additive: make sure.
    return chunks(numbered(summaries), space, count_tokens=count_tokens)[0]


def _header(document: Document, part: int = 0, parts: int = 0) -> str:
    return document_header(document.name, document.kind, document.pages, part, parts)


async def _complete_all(complete: Complete, requests: list[list[Message]]) -> list[str]:
    """`complete` on each request, at most `MAX_CONCURRENT` at once; the answers in order. On
    the first failure the other calls are cancelled and the error propagates."""
    gate = asyncio.Semaphore(MAX_CONCURRENT)

    async def one(messages: list[Message]) -> str:
        async with gate:
            return await complete(messages)

    tasks = [asyncio.create_task(one(messages)) for messages in requests]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


# --- answering -------------------------------------------------------------------------------

PASSAGE_TOKENS = 300

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# Runs of CJK characters (kana, ideographs), and words of other letters and digits.
_TERM = re.compile(f"(?P<cjk>[{_CJK}]+)|[^\\W_{_CJK}]+")


def excerpts(
    document_text: str,
    question: str,
    *,
    budget_tokens: int,
    count_tokens: Callable[[str], int],
) -> list[str]:
    """The passages of a document most relevant to `question`, in document order, together
    within `budget_tokens`; the whole text as one passage when it fits.

    Passages are scored by the question's terms they contain (lower-cased words; character
    bigrams for Chinese and Japanese), each weighted by its rarity in the document. With no
    term in common the beginning of the document is taken.
    """
    if not document_text.strip() or budget_tokens < 1:
        return []
    if count_tokens(document_text) <= budget_tokens:
        return [document_text.strip()]
    passages = chunks(document_text, min(PASSAGE_TOKENS, budget_tokens), count_tokens=count_tokens)
    passage_terms = [_terms(passage) for passage in passages]
    wanted = _terms(question)
    frequency = {term: sum(term in terms for terms in passage_terms) for term in wanted}
    weight = {
        term: math.log(1 + len(passages) / count) for term, count in frequency.items() if count
    }
    scores = [sum(weight.get(term, 0.0) for term in terms & wanted) for terms in passage_terms]
    chosen: list[int] = []
    used = 0
    for i in sorted(range(len(passages)), key=lambda i: (-scores[i], i)):
        cost = count_tokens(passages[i])
        if used + cost <= budget_tokens:
            chosen.append(i)
            used += cost
    return [passages[i] for i in sorted(chosen)]


def _terms(text: str) -> set[str]:
    terms: set[str] = set()
    for match in _TERM.finditer(text.casefold()):
        run = match[0]
        if match["cjk"]:
            # Character bigrams (most Chinese words are two characters); a lone one as it is.
            terms.update(run[i : i + 2] for i in range(max(len(run) - 1, 1)))
        elif len(run) > 1:  # single letters match everything
            terms.add(run)
    return terms
