"""Fuzzed attachments: any file name and bytes (binary as text, invalid UTF-8, damaged PDFs)
is read into a `Document` or refused with one `DocumentError` line, never a traceback; a
20 MB file is refused before it is downloaded, also when the web page sends it unannounced."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from hypothesis import example, given
from hypothesis import strategies as st

from adapters.web import WebServer
from bot.media.documents import (
    DEFAULT_LIMIT,
    MAX_CHARS,
    Document,
    DocumentError,
    extract_text,
    precheck,
)
from bot.tomlfile import one_line
from tests.fakes.factories import Bot, open_bot
from tests.fakes.fuzz import fuzzed, nasty_text
from tests.test_documents import make_pdf

pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")

MB = 1024 * 1024
EXTENSIONS = [
    "",
    ".txt",
    ".TXT",
    ".md",
    ".markdown",
    ".log",
    ".pdf",
    ".PDF",
    ".exe",
    ".",
    ".tar.gz",
]
names = st.tuples(
    st.one_of(st.just("notes"), nasty_text(max_size=3)), st.sampled_from(EXTENSIONS)
).map("".join)


@st.composite
def contents(draw: st.DrawFn) -> bytes:
    """Bytes a file may hold: binary, text in some encoding, a PDF, each maybe damaged."""
    kind = draw(st.sampled_from(["binary", "text", "pdf", "pdf"]))
    if kind == "binary":
        data = draw(st.binary(max_size=600))
    elif kind == "text":
        text = draw(nasty_text())
        encoding = draw(st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "gb18030", "latin-1"]))
        data = text.encode(encoding, "surrogatepass" if "utf" in encoding else "replace")
    else:
        pages = draw(st.lists(st.text("abc xyz().\\\n", max_size=30), min_size=1, max_size=3))
        data = make_pdf(*pages)
    buffer = bytearray(data)
    for _ in range(draw(st.integers(0, 3))):  # damage
        at = draw(st.integers(0, len(buffer)))
        if draw(st.booleans()) and at < len(buffer):
            buffer[at] = draw(st.integers(0, 255))
        else:
            buffer[at:at] = draw(st.binary(min_size=1, max_size=6))
    return bytes(buffer)


def no_errors_logged(caplog: pytest.LogCaptureFixture) -> None:
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    caplog.clear()
    assert not bad, [f"{r.name}: {r.getMessage()}" for r in bad]


@fuzzed(150)
@given(name=names, data=contents())
@example(name="a\nb.txt", data=b"hello")  # the name in a refusal: one line all the same
@example(name="x.txt", data=b"\xff\xfe\x00")  # a UTF-16 BOM and half a character
@example(name="x.txt", data=b"caf\xe9 \xc3\x28 \xed\xa0\x80")  # invalid UTF-8, a surrogate
@example(name="x.pdf", data=b"%PDF-1.4\n" + b"[" * 10_000)  # nested too deeply
@example(name="x", data=b"%PDF-")
@example(name="\udcff.md", data=b"# title")
def test_any_file_is_read_or_refused_in_one_line(
    caplog: pytest.LogCaptureFixture, name: str, data: bytes
) -> None:
    caplog.set_level(logging.DEBUG)
    try:
        document = extract_text(name, data)
    except DocumentError as e:
        message = str(e)
        assert message.startswith(one_line(f"{name}: ")) and e.key, message
        assert "\n" not in message and "\r" not in message, message
    else:
        assert isinstance(document, Document) and document.kind in ("text", "markdown", "pdf")
        assert document.text.strip() and "\r" not in document.text
        assert document.chars == len(document.text) <= MAX_CHARS
        document.text.encode("utf-8")  # storable: no lone surrogates
    no_errors_logged(caplog)


@fuzzed(100)
@given(name=names, size=st.integers(DEFAULT_LIMIT + 1, 2**63))
@example(name="big.pdf", size=20 * MB)
@example(name="big.txt", size=20 * MB)
def test_a_big_file_is_refused_by_its_declared_size(name: str, size: int) -> None:
    with pytest.raises(DocumentError) as refused:
        precheck(name, size, limit_bytes=DEFAULT_LIMIT)
    assert "\n" not in str(refused.value)
    assert "too big" in str(refused.value) or "not supported" in str(refused.value)


# --- the web client --------------------------------------------------------------------------


@pytest.fixture
async def bot(tmp_path: Path) -> AsyncIterator[Bot]:
    opened = await open_bot(tmp_path / "web.sqlite3")
    yield opened
    await opened.close()


@pytest.fixture
async def web(bot: Bot) -> AsyncIterator[TestClient[Any, Any]]:
    client: TestClient[Any, Any] = TestClient(
        TestServer(WebServer(bot.engine, bot.services, bot.store, bot.bank, ["pip"]).app())
    )
    await client.start_server()
    yield client
    await client.close()


async def upload(web: TestClient[Any, Any], name: str, body: Any) -> dict[str, Any]:
    response = await web.post(
        "/api/document", params={"persona": "pip", "user": "ann", "name": name}, data=body
    )
    assert response.status == 200, await response.text()
    answer: dict[str, Any] = await response.json()
    assert answer["type"] in ("reply", "error") and answer["text"].strip()
    assert "Traceback" not in answer["text"]
    return answer


async def test_20_mb_from_the_page_is_refused(web: TestClient[Any, Any]) -> None:
    announced = await upload(web, "big.pdf", b"%PDF-" + bytes(20 * MB))
    assert announced == {
        "type": "error",
        "text": "big.pdf: is too big (20 MB); the most I can read is 5 MB",
    }

    async def unannounced() -> AsyncIterator[bytes]:  # chunked: no Content-Length
        for _ in range(20):
            yield bytes(MB)

    # It was aiohttp's plain-text 413 the page could not show.
    refused = await upload(web, "big.txt", unannounced())
    assert refused == {"type": "error", "text": "big.txt: is too big; the most I can read is 5 MB"}


@fuzzed(25)
@given(name=names.map(lambda name: name[-120:]), data=contents())  # a file name's length
async def test_any_file_from_the_page_gets_an_answer(
    web: TestClient[Any, Any], caplog: pytest.LogCaptureFixture, name: str, data: bytes
) -> None:
    caplog.clear()
    caplog.set_level(logging.INFO)
    await upload(web, name, data)
    no_errors_logged(caplog)
