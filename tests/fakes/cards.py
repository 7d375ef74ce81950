"""Character cards made in code, for tests: card dicts, PNG files assembled chunk by chunk
(a valid 1x1 image with the card in a text chunk), and CHARX archives (a zip with card.json)."""

from __future__ import annotations

import base64
import io
import json
import struct
import zipfile
import zlib
from typing import Any

__all__ = [
    "PNG_SIGNATURE",
    "b64",
    "charx",
    "chunk",
    "encode",
    "itxt_chunk",
    "png",
    "text_chunk",
    "v2",
]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def v2(**data: Any) -> dict[str, Any]:
    return {"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": "Miao", **data}}


def encode(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode("utf-8")


def chunk(ctype: bytes, body: bytes) -> bytes:
    crc = zlib.crc32(ctype + body)
    return struct.pack(">I", len(body)) + ctype + body + struct.pack(">I", crc)


def png(*chunks: bytes) -> bytes:
    """A valid 1x1 grayscale PNG with `chunks` between IHDR and IDAT."""
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)  # width, height, depth, gray, ...
    idat = zlib.compress(b"\x00\x80")  # filter byte, one gray pixel
    return (
        PNG_SIGNATURE
        + chunk(b"IHDR", ihdr)
        + b"".join(chunks)
        + chunk(b"IDAT", idat)
        + chunk(b"IEND", b"")
    )


def b64(obj: Any) -> bytes:
    return base64.b64encode(encode(obj))


def text_chunk(keyword: str, payload: bytes) -> bytes:
    return chunk(b"tEXt", keyword.encode("latin-1") + b"\0" + payload)


def itxt_chunk(keyword: str, payload: bytes, *, compressed: bool) -> bytes:
    text = zlib.compress(payload) if compressed else payload
    flag = b"\x01\x00" if compressed else b"\x00\x00"
    return chunk(b"iTXt", keyword.encode("latin-1") + b"\0" + flag + b"en\0\0" + text)


def charx(files: dict[str, bytes]) -> bytes:
    """A CHARX card: a zip of `files` (card.json and its assets) by their paths."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()
