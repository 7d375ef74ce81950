"""What the offline model can tell of a picture without understanding it: its shape, its size
and its main colours, by name. Pillow only; no model."""

from __future__ import annotations

from io import BytesIO

from PIL import Image, UnidentifiedImageError

__all__ = ["COLOURS", "glance"]

# Named colours the main ones are matched to, nearest in RGB.
COLOURS: dict[str, tuple[int, int, int]] = {
    "black": (0, 0, 0),
    "grey": (128, 128, 128),
    "white": (255, 255, 255),
    "red": (200, 30, 30),
    "orange": (240, 140, 30),
    "yellow": (240, 220, 40),
    "green": (40, 160, 60),
    "blue": (40, 80, 200),
    "sky blue": (130, 190, 240),
    "purple": (130, 60, 170),
    "pink": (240, 150, 190),
    "brown": (130, 80, 40),
    "beige": (220, 200, 160),
}
_SAMPLE = 48  # pixels a side the colours are counted on


def glance(data: bytes) -> str:
    """'a landscape picture, 640x480 pixels, mostly grey, white and brown', or what is wrong
    with `data` when it is no picture."""
    try:
        with Image.open(BytesIO(data)) as image:
            width, height = image.size
            image.draft("RGB", (_SAMPLE, _SAMPLE))  # a JPEG decodes at a fraction of its size
            sample = image.convert("RGB").resize((_SAMPLE, _SAMPLE))
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError):
        return "something that is not a picture I can open"
    shape = "square" if abs(width - height) <= min(width, height) // 20 else None
    shape = shape or ("landscape" if width > height else "portrait")
    counts: dict[str, int] = {}
    for count, pixel in sample.getcolors(_SAMPLE**2) or []:
        if not isinstance(pixel, tuple):  # (an RGB image's colours are tuples)
            continue
        name = _nearest(pixel)
        counts[name] = counts.get(name, 0) + count
    ranked = sorted(counts, key=lambda n: (-counts[n], n))
    # The first colour, and the next two if each covers a tenth of the picture.
    main = ranked[:1] + [n for n in ranked[1:3] if counts[n] * 10 >= _SAMPLE**2]
    colours = main[0] if len(main) == 1 else ", ".join(main[:-1]) + " and " + main[-1]
    return f"a {shape} picture, {width}x{height} pixels, mostly {colours}"


def _nearest(pixel: tuple[int, ...]) -> str:
    rgb = pixel[:3]
    return min(COLOURS, key=lambda n: _distance(COLOURS[n], rgb))


def _distance(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    return sum((x - y) ** 2 for x, y in zip(a, b, strict=True))
