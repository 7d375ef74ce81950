"""What reading a document costs: the time to extract its text, and the summary-tier calls and
tokens its map-reduce summary takes, by size, at the default context.

    python benchmarks/documents.py [--context 16000] [--sizes 20000,200000,1000000]

Each document is synthetic English prose of the given number of characters (paragraphs of
varied sentences), read as a .txt file and as a PDF made of the same text (pypdf writes the
pages); the model behind the summary answers at once with a short summary, so the figures are
Kizuna's own work and the number of calls a real model would be sent.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import random
import time

from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

from bot.chat_model import Message
from bot.llm.tokens import estimate_tokens
from bot.media.documents import extract_text, summarise
from bot.prompts import MAP_TASK, REDUCE_TASK

VOCABULARY = (
    "the village keeps goats and grows barley on terraced hills while the river runs cold "
    "from the glacier every spring the ferry carries wool and cheese down to the harbour "
    "where traders from the south buy salt fish and tell stories of storms"
)
WORDS = VOCABULARY.split()


def prose(chars: int, rng: random.Random) -> str:
    paragraphs, size = [], 0
    while size < chars:
        sentences = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20))).capitalize() + "."
            for _ in range(rng.randint(3, 7))
        ]
        paragraph = " ".join(sentences)
        paragraphs.append(paragraph)
        size += len(paragraph) + 2
    return "\n\n".join(paragraphs)[:chars]


def pdf_of(text: str, lines_per_page: int = 45) -> bytes:
    """A PDF with `text` as Helvetica lines (what pypdf can extract back)."""
    writer = PdfWriter()
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    lines = [text[i : i + 90] for i in range(0, len(text), 90)]
    for start in range(0, len(lines), lines_per_page):
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
        body = ["BT /F1 10 Tf 12 TL 40 760 Td"]
        for line in lines[start : start + lines_per_page]:
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            body.append(f"({escaped}) Tj T*")
        body.append("ET")
        stream = DecodedStreamObject()
        stream.set_data("\n".join(body).encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


async def measure(chars: int, context: int, rng: random.Random) -> dict[str, float]:
    text = prose(chars, rng)
    started = time.perf_counter()
    document = extract_text("doc.txt", text.encode())
    read_txt = time.perf_counter() - started
    pdf = pdf_of(text)
    started = time.perf_counter()
    extract_text("doc.pdf", pdf, limit_bytes=50 * 1024 * 1024)
    read_pdf = time.perf_counter() - started

    calls: list[str] = []
    tokens = 0

    async def complete(messages: list[Message]) -> str:
        nonlocal tokens
        kind = messages[0].content.split("\n")[0]
        calls.append(kind)
        tokens += sum(estimate_tokens(m.content) for m in messages)
        return "A short summary of this part: goats, barley, a ferry, traders and storms."

    started = time.perf_counter()
    await summarise(document, complete, context_tokens=context, count_tokens=estimate_tokens)
    own = time.perf_counter() - started
    return {
        "chars": chars,
        "tokens": estimate_tokens(text),
        "read_txt_ms": round(read_txt * 1000, 1),
        "read_pdf_ms": round(read_pdf * 1000, 1),
        "pdf_kb": round(len(pdf) / 1024),
        "calls": len(calls),
        "map_calls": calls.count(MAP_TASK),
        "reduce_calls": calls.count(REDUCE_TASK),
        "prompt_tokens": tokens,
        "summarise_ms": round(own * 1000, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--context", type=int, default=16_000)
    parser.add_argument("--sizes", default="20000,200000,1000000")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    rows = [asyncio.run(measure(int(size), args.context, rng)) for size in args.sizes.split(",")]
    print(
        "| chars | tokens | read .txt ms | read .pdf ms (KB) | summary calls (map/reduce) "
        "| prompt tokens | Kizuna's own ms |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['chars']:,} | {r['tokens']:,} | {r['read_txt_ms']} | {r['read_pdf_ms']} "
            f"({r['pdf_kb']}) | {r['calls']} ({r['map_calls']}/{r['reduce_calls']}) "
            f"| {r['prompt_tokens']:,} | {r['summarise_ms']} |"
        )
    print(json.dumps({"documents": rows}))


if __name__ == "__main__":
    main()
