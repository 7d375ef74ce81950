"""Documents (bot/media/documents.py): reading text, Markdown and PDF files (every PDF is built
here,
by hand or with pypdf), chunking, the map-reduce summary against a fake model, and excerpts."""

from __future__ import annotations

import asyncio
import io
import logging
import re
from pathlib import Path
from typing import IO, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pypdf import PdfReader, PdfWriter
from pypdf.errors import DependencyError

from bot.chat_model import Message, ModelError
from bot.llm.tokens import estimate_tokens
from bot.media import documents
from bot.media.documents import (
    MAX_CONCURRENT,
    Document,
    DocumentError,
    chunks,
    excerpts,
    extract_text,
    precheck,
    read_document,
    summarise,
)
from bot.prompts import MAP_TASK, REDUCE_TASK, WHOLE_TASK


def words(text: str) -> int:
    return len(text.split())


def make_pdf(*texts: str) -> bytes:
    """A minimal PDF, one page per text (an empty text makes a page with nothing on it): Type1
    Helvetica, one content stream a page, and an xref table with the true offsets."""
    page_ids = [4 + 2 * i for i in range(len(texts))]
    kids = b" ".join(b"%d 0 R" % page for page in page_ids)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(texts)),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for page, text in zip(page_ids, texts, strict=True):
        content = b"BT /F1 12 Tf 72 712 Td (%s) Tj ET" % text.encode() if text else b""
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (page + 1)
        )
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def encrypted(pdf: bytes, user_password: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    writer.encrypt(user_password, "owner secret")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def refusal(name: str, data: bytes, **kwargs: Any) -> str:
    with pytest.raises(DocumentError) as caught:
        extract_text(name, data, **kwargs)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{name}: ")
    return message


# --- reading text ----------------------------------------------------------------------------


def test_utf8_text() -> None:
    doc = extract_text("notes.txt", "Hello, world.\nSecond line — ok.".encode())
    assert doc == Document("notes.txt", "text", "Hello, world.\nSecond line — ok.", None, 31)


def test_markdown_with_bom_and_windows_newlines() -> None:
    doc = extract_text("README.MD", b"\xef\xbb\xbf# Title\r\n\r\nBody\rend")
    assert doc.kind == "markdown"
    assert doc.text == "# Title\n\nBody\nend"
    assert doc.chars == len(doc.text)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-16-le"])
def test_utf16_with_bom(encoding: str) -> None:
    text = "喵 says hi\r\nbye"
    data = ("\ufeff" + text if encoding != "utf-16" else text).encode(encoding)
    assert extract_text("a.log", data).text == "喵 says hi\nbye"


def test_gb18030_chinese() -> None:
    text = "这是一份会议纪要。预算为三百万元！"
    data = text.encode("gb18030")
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    assert extract_text("纪要.txt", data).text == text


def test_kind_from_contents_when_the_name_has_no_extension() -> None:
    assert extract_text("upload", b"plain words").kind == "text"
    pdf = extract_text("upload", make_pdf("Hello PDF"))
    assert (pdf.kind, pdf.text) == ("pdf", "Hello PDF")


def test_binary_is_not_text() -> None:
    message = refusal("photo", bytes(range(256)) * 8)
    assert "not a text file" in message


def test_unsupported_extension_names_the_supported_ones() -> None:
    message = refusal("report.docx", b"PK\x03\x04 whatever")
    assert ".docx" in message
    assert all(kind in message for kind in (".txt", ".md", ".pdf"))


@pytest.mark.parametrize("data", [b"", b" \r\n\t\n"])
def test_empty_file(data: bytes) -> None:
    assert refusal("empty.txt", data) == "empty.txt: is empty"


def test_too_big_says_both_sizes() -> None:
    message = refusal("big.txt", b"x" * 3 * 1024 * 1024, limit_bytes=1024 * 1024)
    assert "3 MB" in message
    assert "1 MB" in message
    assert "2.5 KB" in refusal("big.md", b"y" * 2560, limit_bytes=2048)


def test_too_much_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(documents, "MAX_CHARS", 10)
    assert "(11 characters; the most is 10)" in refusal("long.txt", b"eleven char")
    assert extract_text("ok.txt", b"ten chars!").chars == 10


def test_precheck_refuses_before_download() -> None:
    precheck("a.pdf", 1000)
    precheck("no extension", documents.DEFAULT_LIMIT)
    with pytest.raises(DocumentError, match=r"^huge\.pdf: is too big \(6 MB\).* 5 MB$"):
        precheck("huge.pdf", 6 * 1024 * 1024)
    with pytest.raises(DocumentError, match=r"\.exe files are not supported"):
        precheck("setup.exe", 10)


# --- reading files ---------------------------------------------------------------------------


class _Recorder:
    """A file that records how much was asked of `read`."""

    def __init__(self, file: IO[Any], reads: list[int]) -> None:
        self.file, self.reads = file, reads

    def __enter__(self) -> _Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.file.close()

    def fileno(self) -> int:
        return self.file.fileno()

    def read(self, size: int = -1) -> Any:
        self.reads.append(size)
        return self.file.read(size)


def test_read_document_reads_nothing_past_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small, big = tmp_path / "small.txt", tmp_path / "big.txt"
    small.write_text("hello")
    big.write_bytes(b"z" * 100_000)
    reads: list[int] = []
    real_open = Path.open
    monkeypatch.setattr(
        Path, "open", lambda self, *a, **k: _Recorder(real_open(self, *a, **k), reads)
    )

    assert read_document(small, limit_bytes=1000).text == "hello"
    assert reads == [1001]
    reads.clear()
    with pytest.raises(DocumentError, match=r"^big\.txt: is too big"):
        read_document(big, limit_bytes=1000)
    assert reads == []  # refused from the size alone


def test_read_document_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match=r"^gone\.md: cannot be read \("):
        read_document(tmp_path / "gone.md")


# --- reading PDFs ----------------------------------------------------------------------------


def test_pdf_pages_joined_by_blank_lines() -> None:
    doc = extract_text("slides.pdf", make_pdf("Hello PDF", "", "Page three"))
    assert doc == Document("slides.pdf", "pdf", "Hello PDF\n\nPage three", 3, 21)


def test_pdf_without_text_is_refused() -> None:
    writer = PdfWriter()
    writer.add_blank_page(612, 792)
    out = io.BytesIO()
    writer.write(out)
    assert "no text" in refusal("scan.pdf", out.getvalue())
    assert "no text" in refusal("blank.pdf", make_pdf("", ""))


@pytest.mark.parametrize(
    "data",
    [b"not a pdf at all", b"%PDF-1.7\n\x00\xff garbage", make_pdf("Hello PDF")[:200]],
)
def test_garbage_pdf_is_refused(data: bytes) -> None:
    assert "not a PDF I can read" in refusal("broken.pdf", data)


def test_encrypted_pdf_needing_a_password_is_refused() -> None:
    assert "password" in refusal("secret.pdf", encrypted(make_pdf("Hello PDF"), "hunter2"))


def test_encrypted_pdf_with_an_empty_password_opens() -> None:
    assert extract_text("open.pdf", encrypted(make_pdf("Hello PDF"), "")).text == "Hello PDF"


def test_pdf_encrypted_beyond_what_pypdf_alone_opens(monkeypatch: pytest.MonkeyPatch) -> None:
    data = encrypted(make_pdf("Hello PDF"), "")

    def needs_cryptography(self: PdfReader, password: str | bytes) -> None:
        raise DependencyError("cryptography>=3.1 is required for AES algorithm")

    monkeypatch.setattr(PdfReader, "decrypt", needs_cryptography)
    assert refusal("aes.pdf", data) == "aes.pdf: is encrypted in a way I cannot open"


def test_pypdf_warnings_go_to_debug(caplog: pytest.LogCaptureFixture) -> None:
    # A wrong startxref pointer: pypdf recovers, with a warning on its logger.
    damaged = make_pdf("Hello PDF").replace(b"startxref\n", b"startxref\n9")
    propagate = logging.getLogger("pypdf").propagate
    with caplog.at_level(logging.DEBUG):
        assert extract_text("damaged.pdf", damaged).text == "Hello PDF"
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert any(
        r.name == "bot.media.documents" and r.message.startswith("pypdf: ") for r in caplog.records
    )
    assert logging.getLogger("pypdf").propagate == propagate  # restored afterwards
    assert not logging.getLogger("pypdf").handlers


# --- chunking --------------------------------------------------------------------------------


def squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


_PIECES = st.sampled_from(
    ["word ", "Longerwordwithoutspaces", ". ", "! ", "\n", "\n\n", "  ", "。", "你好", "？", "x"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=60).map("".join), st.integers(1, 40))
def test_chunks_fit_cover_and_keep_order(text: str, max_tokens: int) -> None:
    for count in (words, estimate_tokens):
        pieces = chunks(text, max_tokens, count_tokens=count)
        assert all(piece.strip() and count(piece) <= max_tokens for piece in pieces)
        assert squeezed("".join(pieces)) == squeezed(text)


def test_chunks_prefer_paragraphs_then_sentences() -> None:
    text = "One two three.\n\nFour five six.\n\nSeven eight nine. Ten eleven twelve thirteen."
    assert chunks(text, 6, count_tokens=words) == [
        "One two three.\n\nFour five six.",
        "Seven eight nine.",
        "Ten eleven twelve thirteen.",
    ]
    assert chunks(text, 100, count_tokens=words) == [text]


def test_chunks_split_chinese_at_sentence_ends() -> None:
    sentences = ["我们今天开会。", "预算是三百万元！", "谁负责这个项目？", "小王负责。"] * 5
    pieces = chunks("".join(sentences), 20, count_tokens=estimate_tokens)
    assert len(pieces) > 1
    assert all(estimate_tokens(piece) <= 20 for piece in pieces)
    assert all(piece[-1] in "。！？" for piece in pieces)
    assert "".join(pieces) == "".join(sentences)


def test_chunks_hard_cut_at_spaces_when_possible() -> None:
    assert chunks("a b c d e f g", 3, count_tokens=words) == ["a b c", "d e f", "g"]
    unbroken = "x" * 50
    pieces = chunks(unbroken, 5, count_tokens=estimate_tokens)
    assert all(estimate_tokens(piece) <= 5 for piece in pieces)
    assert "".join(pieces) == unbroken


def test_chunks_of_nothing() -> None:
    assert chunks(" \n\n ", 10, count_tokens=words) == []
    with pytest.raises(ValueError):
        chunks("text", 0, count_tokens=words)


# --- summarising -----------------------------------------------------------------------------


class FakeModel:
    """Answers by call kind: MAP with the part's number, REDUCE with how many summaries it
    got; `padding` words make every answer longer (a model that will not be brief)."""

    def __init__(self, padding: int = 0) -> None:
        self.calls: list[list[Message]] = []
        self.padding = " filler" * padding
        self.in_flight = self.most_in_flight = 0

    async def __call__(self, messages: list[Message]) -> str:
        self.calls.append(messages)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        await asyncio.sleep(0)
        self.in_flight -= 1
        system, user = messages[0].content, messages[1].content
        if system.startswith(WHOLE_TASK):
            return "  The whole summary.  "
        if system.startswith(MAP_TASK):
            part = re.search(r"part (\d+) of (\d+)", user)
            assert part
            return f"map-output-{part[1]}{self.padding}"
        assert system.startswith(REDUCE_TASK)
        return f"reduced {user.count('Summary of part')} summaries{self.padding}"

    def of(self, task: str) -> list[list[Message]]:
        return [call for call in self.calls if call[0].content.startswith(task)]


def document(text: str) -> Document:
    return Document("book.txt", "text", text, None, len(text))


def long_text(paragraphs: int) -> str:
    return "\n\n".join(
        f"Paragraph {i} says something about topic {i} at some length." for i in range(paragraphs)
    )


async def test_short_document_takes_one_whole_call() -> None:
    model = FakeModel()
    summary = await summarise(
        document("A short note."),
        model,
        context_tokens=8000,
        count_tokens=estimate_tokens,
        language="zh",
    )
    assert summary == "The whole summary."
    [call] = model.calls
    assert call[0].role == "system"
    assert call[0].content.startswith(WHOLE_TASK)
    assert "Chinese" in call[0].content
    assert "not invent" in call[0].content
    assert call[1].content.endswith("A short note.")


async def test_long_document_maps_then_reduces() -> None:
    model = FakeModel()
    text = long_text(300)
    summary = await summarise(document(text), model, context_tokens=2000, count_tokens=words)
    maps, reduces = model.of(MAP_TASK), model.of(REDUCE_TASK)
    assert len(maps) + len(reduces) == len(model.calls)
    assert len(maps) > 1
    numbers = [re.search(r"part (\d+) of (\d+)", call[1].content) for call in maps]
    assert sorted(int(m[1]) for m in numbers if m) == list(range(1, len(maps) + 1))
    assert {int(m[2]) for m in numbers if m} == {len(maps)}
    for call in maps:
        assert words(call[1].content) <= 1000
        assert "English" in call[0].content
    # Every paragraph went to exactly one part.
    sent = "".join(call[1].content for call in maps)
    assert all(sent.count(f"topic {i} ") == 1 for i in range(300))
    # One reduce, made of all the map outputs in order.
    [reduce] = reduces
    outputs = re.findall(r"map-output-(\d+)", reduce[1].content)
    assert outputs == [str(i) for i in range(1, len(maps) + 1)]
    assert summary == f"reduced {len(maps)} summaries"


async def test_reduce_recurses_when_the_partials_do_not_fit() -> None:
    model = FakeModel(padding=20)  # each map output ~27 words; a call holds 100
    await summarise(document(long_text(200)), model, context_tokens=200, count_tokens=words)
    maps, reduces = model.of(MAP_TASK), model.of(REDUCE_TASK)
    assert len(maps) > 20
    assert len(reduces) > 2
    assert all(words(call[1].content) <= 100 for call in model.calls)
    # The final call combines the outputs of the level before it.
    assert re.search(r"Summary of part 1 of \d+:\nreduced \d+ summaries", reduces[-1][1].content)


async def test_a_model_that_will_not_shorten_still_ends() -> None:
    model = FakeModel(padding=200)  # every answer is longer than a whole call
    summary = await summarise(
        document(long_text(100)), model, context_tokens=400, count_tokens=words
    )
    assert summary.startswith("reduced ")
    maps, reduces = model.of(MAP_TASK), model.of(REDUCE_TASK)
    assert len(maps) + len(reduces) == len(model.calls)
    assert all(words(call[1].content) <= 200 for call in model.calls)
    # One level made things longer, so the last call gets the map outputs, each cut to fit.
    final = reduces[-1][1].content
    assert re.findall(r"map-output-(\d+) filler", final) == [
        str(i) for i in range(1, len(maps) + 1)
    ]


async def test_map_calls_run_concurrently_but_bounded() -> None:
    model = FakeModel()
    await summarise(document(long_text(400)), model, context_tokens=400, count_tokens=words)
    assert len(model.of(MAP_TASK)) > MAX_CONCURRENT
    assert model.most_in_flight == MAX_CONCURRENT


async def test_model_errors_propagate_and_stop_the_other_calls() -> None:
    calls = 0

    async def failing(messages: list[Message]) -> str:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0)
        raise ModelError("rate limited", retryable=True)

    with pytest.raises(ModelError, match="rate limited"):
        await summarise(document(long_text(400)), failing, context_tokens=400, count_tokens=words)
    assert calls < 10  # the queued parts never reached the model


async def test_context_too_small() -> None:
    with pytest.raises(ValueError):
        await summarise(document("x"), FakeModel(), context_tokens=100, count_tokens=words)


# --- excerpts --------------------------------------------------------------------------------


def test_excerpts_whole_document_when_it_fits() -> None:
    text = "  Short document.\n\nTwo paragraphs.\n"
    assert excerpts(text, "anything", budget_tokens=100, count_tokens=words) == [text.strip()]
    assert excerpts(" ", "anything", budget_tokens=100, count_tokens=words) == []


def test_excerpts_find_the_passage_with_the_question_words() -> None:
    filler = [f"Paragraph {i} talks about the weather and the harvest." for i in range(200)]
    filler[137] = "The secret launch code is stored with the Zephyr project archive."
    text = "\n\n".join(filler)
    found = excerpts(
        text, "Where is the Zephyr launch code stored?", budget_tokens=30, count_tokens=words
    )
    [passage] = found  # passages are packed up to the budget: here three paragraphs each
    assert filler[137] in passage
    assert words(passage) <= 30
    many = excerpts(text, "Zephyr harvest", budget_tokens=250, count_tokens=words)
    assert sum(words(passage) for passage in many) <= 250
    assert any("Zephyr" in passage for passage in many)
    positions = [text.index(passage) for passage in many]
    assert positions == sorted(positions)  # document order


def test_excerpts_in_chinese() -> None:
    filler = [f"第{i}段讲的是天气和收成的情况。" for i in range(300)]
    filler[42] = "会议决定把项目预算定为三百万元。"
    text = "\n\n".join(filler)
    found = excerpts(text, "项目预算是多少？", budget_tokens=40, count_tokens=estimate_tokens)
    assert any("三百万元" in passage for passage in found)
    assert sum(estimate_tokens(passage) for passage in found) <= 40


def test_excerpts_without_common_words_start_at_the_beginning() -> None:
    text = "\n\n".join(f"Section {i} content here." for i in range(100))
    found = excerpts(text, "unrelated question", budget_tokens=20, count_tokens=words)
    assert found and found[0].startswith("Section 0 ")
    assert sum(words(passage) for passage in found) <= 20
