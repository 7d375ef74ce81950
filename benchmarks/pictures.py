"""What looking at a picture costs the host: shrinking a phone photo to what a model is sent
(bot.media.pictures.shrink), with and without JPEG's reduced-scale decode, and the bytes sent.

    python benchmarks/pictures.py [--runs 10] [--side 1024]

The photos are made here (a gradient with grain, so they compress like photos do): a 12 MP
JPEG (4000x3000, what a phone sends as a file), a 3 MP JPEG and a 12 MP PNG (a screenshot-like
file, which has no reduced-scale decode). The offline model's glance (bot.llm.sight) is timed
on the shrunk JPEG. Never run by CI. The last line is JSON.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
import time
from collections.abc import Callable
from io import BytesIO
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.llm.sight import glance
from bot.media.pictures import shrink


def photo(width: int, height: int, fmt: str) -> bytes:
    gradient = Image.linear_gradient("L").resize((width, height))
    grain = Image.effect_noise((width, height), 40)
    image = Image.merge("RGB", (gradient, grain, Image.blend(gradient, grain, 0.5)))
    out = BytesIO()
    image.save(out, fmt, **({"quality": 90} if fmt == "JPEG" else {}))
    return out.getvalue()


def timed(function: Callable[[], object], runs: int) -> float:
    """The median milliseconds of `function()` over `runs`."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def full_decode(data: bytes, side: int) -> bytes:
    """What shrink does, without the reduced-scale decode (the comparison)."""
    with Image.open(BytesIO(data)) as opened:
        image = opened.convert("RGB")
        image.thumbnail((side, side), Image.Resampling.BICUBIC)
        out = BytesIO()
        image.save(out, "JPEG", quality=85, optimize=True)
        return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--side", type=int, default=1024)
    args = parser.parse_args()
    results: dict[str, float] = {}
    print(f"median of {args.runs} runs, side {args.side} px")
    print("| picture | file KB | shrink ms | without draft ms | sent KB |")
    print("|---|---:|---:|---:|---:|")
    for name, (width, height, fmt) in {
        "12mp_jpeg": (4000, 3000, "JPEG"),
        "3mp_jpeg": (2000, 1500, "JPEG"),
        "12mp_png": (4000, 3000, "PNG"),
    }.items():
        data = photo(width, height, fmt)
        shrunk = shrink(name, data, args.side)
        ms = timed(functools.partial(shrink, "photo", data, args.side), args.runs)
        full = timed(functools.partial(full_decode, data, args.side), args.runs)
        print(
            f"| {name} | {len(data) // 1024} | {ms:.1f} | {full:.1f} | {len(shrunk.jpeg) // 1024} |"
        )
        results[f"{name}_shrink_ms"] = round(ms, 1)
        results[f"{name}_full_decode_ms"] = round(full, 1)
        results[f"{name}_sent_kb"] = len(shrunk.jpeg) // 1024
    jpeg = shrink("x", photo(4000, 3000, "JPEG"), args.side).jpeg
    results["glance_ms"] = round(timed(lambda: glance(jpeg), args.runs), 1)
    print(f"offline glance: {results['glance_ms']} ms")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
