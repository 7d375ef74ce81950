"""Draw the personas' face sprites: one SVG per emotion, and a SPEAKING variant with the mouth open.

For every persona drawn here, the emotion names are read from ``personas/<persona>.toml``
(``[emotions] names``) and two files are written per emotion::

    personas/assets/<persona>/<EMOTION>.svg          the resting face
    personas/assets/<persona>/<EMOTION>SPEAKING.svg  the same face with the mouth open

An emotion with no face of its own borrows one through a small keyword table (else NEUTRAL),
so an emotion added to a persona gets a sprite on the next run. The output is deterministic:
rerunning gives byte-identical files, which tests/test_sprites.py checks.

Run from any directory, standard library only:

    python personas/assets/make_sprites.py
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

HERE = Path(__file__).resolve().parent
SIZE = 256
MID = SIZE / 2

Value = str | float


def num(value: float) -> str:
    """A number as SVG text: at most two decimals, no trailing zeros, never "-0"."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def d(*parts: Value) -> str:
    """Path data from commands and numbers."""
    return " ".join(part if isinstance(part, str) else num(part) for part in parts)


def el(name: str, **attrs: Value) -> str:
    """One empty SVG element; underscores in attribute names become hyphens."""
    parts = [name]
    for key, value in attrs.items():
        text = value if isinstance(value, str) else num(value)
        parts.append(f"{key.replace('_', '-')}={quoteattr(text)}")
    return "<" + " ".join(parts) + "/>"


def group(children: list[str], **attrs: Value) -> list[str]:
    return [el("g", **attrs)[:-2] + ">", *("  " + child for child in children), "</g>"]


def stroke(colour: str, width: float) -> dict[str, Value]:
    """Attributes of an unfilled, round-ended line."""
    return {
        "fill": "none",
        "stroke": colour,
        "stroke_width": width,
        "stroke_linecap": "round",
        "stroke_linejoin": "round",
    }


def mirror(points: str) -> str:
    """Path data written as x,y pairs, reflected across the vertical centre line."""
    return re.sub(r"(-?[\d.]+),", lambda m: f"{num(SIZE - float(m[1]))},", points)


@dataclass(frozen=True)
class Face:
    """An expression, in words every persona's drawing understands."""

    brows: str  # flat, raised, frown, worried, low, quirk
    eyes: str  # open, wide, glance, half, happy, closed, squeeze
    mouth: str  # smile, grin, flat, frown, smirk, wavy, o, laugh, wail
    # blush, tear, streams, sweat, anger, question, zzz, sparkle, dots, shadow, tilt
    extras: tuple[str, ...] = ()


FACES: dict[str, Face] = {
    "NEUTRAL": Face("flat", "open", "smile"),
    "HAPPY": Face("raised", "happy", "grin"),
    "LAUGHING": Face("raised", "happy", "laugh", ("blush",)),
    "SAD": Face("worried", "open", "frown", ("tear",)),
    "CRYING": Face("worried", "squeeze", "wail", ("streams",)),
    "ANGRY": Face("frown", "open", "frown", ("anger",)),
    "SLEEPY": Face("low", "closed", "o", ("zzz",)),
    "CURIOUS": Face("quirk", "wide", "o", ("question", "tilt")),
    "SHY": Face("worried", "glance", "wavy", ("blush",)),
    "SURPRISED": Face("raised", "wide", "o"),
    "THOUGHTFUL": Face("quirk", "glance", "smirk", ("dots",)),
    "FLUSTERED": Face("worried", "wide", "wavy", ("blush", "sweat")),
    "CONCERNED": Face("worried", "open", "flat", ("sweat",)),
    "EXCITED": Face("raised", "wide", "grin", ("sparkle",)),
    "OMINOUS": Face("frown", "half", "smirk", ("shadow",)),
    "AMUSED": Face("quirk", "happy", "smirk"),
    "SOLEMN": Face("low", "closed", "flat"),
    "TENSE": Face("worried", "wide", "wavy", ("sweat",)),
    "TRIUMPHANT": Face("raised", "happy", "grin", ("sparkle",)),
}

# Emotions without a face of their own: the first stem found in the name picks one.
BORROWED: tuple[tuple[str, str], ...] = (
    ("LAUGH", "LAUGHING"),
    ("HAPP", "HAPPY"),
    ("JOY", "HAPPY"),
    ("GLAD", "HAPPY"),
    ("LOV", "HAPPY"),
    ("CRY", "CRYING"),
    ("WEEP", "CRYING"),
    ("SAD", "SAD"),
    ("LONEL", "SAD"),
    ("ANGR", "ANGRY"),
    ("ANNOY", "ANGRY"),
    ("SURPRIS", "SURPRISED"),
    ("SHOCK", "SURPRISED"),
    ("SCARE", "TENSE"),
    ("FEAR", "TENSE"),
    ("NERVOUS", "TENSE"),
    ("WORRI", "CONCERNED"),
    ("TIRED", "SLEEPY"),
    ("BORED", "SLEEPY"),
    ("EMBARRASS", "FLUSTERED"),
    ("THINK", "THOUGHTFUL"),
    ("PROUD", "TRIUMPHANT"),
    ("SMUG", "AMUSED"),
)


def face_for(emotion: str) -> Face:
    if emotion in FACES:
        return FACES[emotion]
    for stem, known in BORROWED:
        if stem in emotion:
            return FACES[known]
    return FACES["NEUTRAL"]


@dataclass(frozen=True)
class Rig:
    """Where a persona's features sit and how they are coloured."""

    eye_style: str  # cat (dark and glossy), human (white, iris, lashes) or glow
    eye_dx: float  # from the centre line to each eye
    eye_y: float
    eye_rx: float
    eye_ry: float
    iris: str
    lid: str  # a half-closed eyelid
    lash: str  # closed eyes and lid lines
    brow: str
    brow_width: float
    brow_len: float
    brow_gap: float  # from the eye centre up to the brow
    ink: str
    mouth_y: float
    mouth_scale: float
    cheek_dx: float
    cheek_y: float
    corner: tuple[float, float]  # where sweat, anger and question marks go


WHITE = "#FFFFFF"
MOUTH = "#7A2E3B"
TONGUE = "#EE8A99"
TEAR = "#9AD8F5"
TEAR_EDGE = "#4FA6D3"
GOLD = "#FFD54A"
RED_GLOW = "#FF5A4E"


def at(x: float, y: float, scale: float = 1) -> str:
    """A transform that moves a shape drawn around (0, 0) to (x, y), optionally scaled."""
    return f"translate({num(x)} {num(y)})" + (f" scale({num(scale)})" if scale != 1 else "")


def eye(rig: Rig, face: Face, side: int) -> list[str]:
    """One eye (side -1 on the left, 1 on the right), drawn around its centre."""
    rx, ry = rig.eye_rx, rig.eye_ry
    lash = RED_GLOW if rig.eye_style == "glow" and "shadow" in face.extras else rig.lash
    if face.eyes == "happy":
        shape = [
            el("path", d=d("M", -rx, ry * 0.3, "Q", 0, -ry * 1.1, rx, ry * 0.3), **stroke(lash, 4))
        ]
    elif face.eyes == "closed":
        shape = [el("path", d=d("M", -rx, 0, "Q", 0, ry * 0.8, rx, 0), **stroke(lash, 4))]
    elif face.eyes == "squeeze":
        # > < : the points face the nose
        arm, tip = side * rx * 0.8, -side * rx * 0.6
        chevron = d("M", arm, -ry * 0.6, "L", tip, 0, "L", arm, ry * 0.6)
        shape = [el("path", d=chevron, **stroke(lash, 4))]
    else:
        if face.eyes == "wide":
            rx, ry = rx * 1.2, ry * 1.25
        look = (rx * 0.2, -ry * 0.15) if face.eyes == "glance" else (0.0, 0.0)
        shape = open_eye(rig, face, rx, ry, look, side)
        if face.eyes == "half":
            w, top, edge, dip = rx + 3, -ry - 4, -ry * 0.1, ry * 0.2
            lid = d("M", -w, top, "H", w, "V", edge, "Q", 0, dip, -w, edge, "Z")
            line = d("M", 1 - w, edge, "Q", 0, dip, w - 1, edge)
            shape += [el("path", d=lid, fill=rig.lid), el("path", d=line, **stroke(lash, 3.5))]
    return group(shape, transform=at(MID + side * rig.eye_dx, rig.eye_y))


def open_eye(
    rig: Rig, face: Face, rx: float, ry: float, look: tuple[float, float], side: int
) -> list[str]:
    lx, ly = look
    if rig.eye_style == "glow":
        colour = RED_GLOW if "shadow" in face.extras else rig.iris
        return [
            el("ellipse", cx=0, cy=0, rx=rx * 1.6, ry=ry * 1.6, fill=colour, opacity=0.25),
            el("ellipse", cx=0, cy=0, rx=rx, ry=ry, fill=colour),
            el("ellipse", cx=lx, cy=ly, rx=rx * 0.45, ry=ry * 0.5, fill="#FFFBEA"),
        ]
    if rig.eye_style == "cat":
        return [
            el("ellipse", cx=lx, cy=ly, rx=rx, ry=ry, fill=rig.iris),
            el("circle", cx=lx - rx * 0.3, cy=ly - ry * 0.35, r=rx * 0.38, fill=WHITE),
            el("circle", cx=lx + rx * 0.35, cy=ly + ry * 0.4, r=rx * 0.16, fill=WHITE),
        ]
    iris = min(rx, ry) * 0.75
    lashes = d("M", -rx - 2, -ry * 0.15, "Q", 0, -ry * 1.8, rx + 2, -ry * 0.15)
    out = [
        el("ellipse", cx=0, cy=0, rx=rx, ry=ry, fill=WHITE),
        el("circle", cx=lx, cy=ly, r=iris, fill=rig.iris),
        el("circle", cx=lx, cy=ly, r=iris * 0.5, fill="#1F2A22"),
        el("circle", cx=lx - iris * 0.35, cy=ly - iris * 0.35, r=iris * 0.32, fill=WHITE),
        el("path", d=lashes, **stroke(rig.lash, 3.5)),
    ]
    if face.eyes != "half":
        corner = side * (rx + 1)
        flick = d("M", corner, -ry * 0.3, "L", corner + side * 5, -ry * 0.7)
        out.append(el("path", d=flick, **stroke(rig.lash, 3)))
    return out


def eyes(rig: Rig, face: Face) -> list[str]:
    return eye(rig, face, -1) + eye(rig, face, 1)


# How far (inner end, outer end) each brow moves up (-) or down (+).
BROWS: dict[str, tuple[float, float]] = {
    "flat": (0, 0),
    "raised": (-8, -5),
    "frown": (7, -4),
    "worried": (-7, 4),
    "low": (4, 4),
}


def brows(rig: Rig, face: Face) -> list[str]:
    out = []
    for side in (-1, 1):
        kind = face.brows
        if kind == "quirk":
            kind = "raised" if side == 1 else "flat"
        inner, outer = BROWS[kind]
        half = rig.brow_len / 2
        arch = d("M", side * half, outer, "Q", 0, (inner + outer) / 2 - 4, -side * half, inner)
        place = at(MID + side * rig.eye_dx, rig.eye_y - rig.brow_gap)
        out.append(el("path", d=arch, transform=place, **stroke(rig.brow, rig.brow_width)))
    return out


# Mouths drawn as a line, around the mouth's centre.
MOUTH_LINES: dict[str, str] = {
    "smile": "M-14 -2 Q0 10 14 -2",
    "grin": "M-18 -4 Q0 16 18 -4",
    "flat": "M-10 1 Q0 3 10 1",
    "frown": "M-12 6 Q0 -5 12 6",
    "smirk": "M-12 2 Q4 6 14 -4",
    "wavy": "M-14 2 Q-10.5 -3 -7 2 T0 2 T7 2 T14 2",
}
# Open mouths: shape, half width, depth. D is a smile, cap a frown, oval an "o".
MOUTH_OPEN: dict[str, tuple[str, float, float]] = {
    "laugh": ("D", 18, 18),
    "wail": ("cap", 12, 10),
    "o": ("oval", 6, 7),
}
MOUTH_SPEAKING: dict[str, tuple[str, float, float]] = {
    "smile": ("D", 12, 12),
    "grin": ("D", 16, 15),
    "laugh": ("D", 20, 26),
    "flat": ("oval", 8, 7),
    "frown": ("cap", 11, 10),
    "smirk": ("D", 11, 10),
    "wavy": ("oval", 7, 6),
    "o": ("oval", 8, 12),
    "wail": ("cap", 14, 16),
}


def open_mouth(shape: str, w: float, h: float, ink: str) -> list[str]:
    if shape == "oval":
        return [
            el("ellipse", cx=0, cy=0, rx=w, ry=h, fill=MOUTH),
            el("ellipse", cx=0, cy=h * 0.5, rx=w * 0.55, ry=h * 0.35, fill=TONGUE),
            el("ellipse", cx=0, cy=0, rx=w, ry=h, **stroke(ink, 3)),
        ]
    if shape == "D":
        path = d("M", -w, 0, "Q", 0, 2 * h, w, 0, "Z")
        tongue = [el("ellipse", cx=0, cy=h * 0.68, rx=w * 0.4, ry=h * 0.28, fill=TONGUE)]
    else:
        path, tongue = d("M", -w, h, "Q", 0, -h, w, h, "Z"), []
    return [el("path", d=path, fill=MOUTH), *tongue, el("path", d=path, **stroke(ink, 3))]


def mouth(rig: Rig, face: Face, speaking: bool, lines: dict[str, str] | None = None) -> list[str]:
    """The mouth; `lines` lets a persona draw its own closed mouths (a cat's ω)."""
    shape = (MOUTH_SPEAKING if speaking else MOUTH_OPEN).get(face.mouth)
    if shape:
        inner = open_mouth(*shape, rig.ink)
    else:
        line = (lines or {}).get(face.mouth, MOUTH_LINES[face.mouth])
        inner = [el("path", d=line, **stroke(rig.ink, 3.5))]
    return group(inner, transform=at(MID, rig.mouth_y, rig.mouth_scale))


# Small marks, each drawn around (0, 0) at size 10.
DROP = "M0 0 C-2.5 5 -6 8 -6 11 A6 6 0 0 0 6 11 C6 8 2.5 5 0 0 Z"
STAR = "M0 -10 Q0 0 10 0 Q0 0 0 10 Q0 0 -10 0 Q0 0 0 -10 Z"
VEIN = "M-10 -3 Q-3 -3 -3 -10 M3 -10 Q3 -3 10 -3 M10 3 Q3 3 3 10 M-3 10 Q-3 3 -10 3"
QUESTION = "M-8 -6 Q-8 -16 0 -16 Q9 -16 9 -7 Q9 0 0 3 V8"
ZED = "M-5 -5 H5 L-5 5 H5"
HATCH = "M-8 3 l4 -6 M-2 3 l4 -6 M4 3 l4 -6"
STREAM = "M0 0 Q7 30 3 58"


def drop(x: float, y: float, size: float) -> list[str]:
    """A teardrop hanging from its point at (x, y)."""
    shape = [
        el("path", d=DROP, fill=TEAR, stroke=TEAR_EDGE, stroke_width=1.5),
        el("ellipse", cx=-2, cy=10.5, rx=1.4, ry=2.2, fill=WHITE),
    ]
    return group(shape, transform=at(x, y, size / 10))


def sparkle(x: float, y: float, r: float) -> str:
    return el("path", d=STAR, fill=GOLD, transform=at(x, y, r / 10))


def blush(rig: Rig) -> list[str]:
    out = []
    for side in (-1, 1):
        cheek = [
            el("ellipse", cx=0, cy=0, rx=13, ry=7, fill="#F49AAE", opacity=0.6),
            el("path", d=HATCH, **stroke("#E0607E", 1.5)),
        ]
        out += group(cheek, transform=at(MID + side * rig.cheek_dx, rig.cheek_y))
    return out


def shadow(face: Face) -> list[str]:
    """A dark veil, drawn before the eyes so they shine through it."""
    if "shadow" not in face.extras:
        return []
    return [el("rect", width=SIZE, height=SIZE, fill="#120C24", opacity=0.35)]


def extras(rig: Rig, face: Face) -> list[str]:
    """The marks around a face: tears, sweat, anger, question, z's, sparkles, thought dots."""
    out: list[str] = []
    x, y = rig.corner
    ex, ey, rx, ry = rig.eye_dx, rig.eye_y, rig.eye_rx, rig.eye_ry
    if "tear" in face.extras:
        out += drop(MID - ex - rx * 0.4, ey + ry + 4, 9)
    if "streams" in face.extras:
        for side in (-1, 1):
            place = at(MID + side * (ex + rx * 0.2), ey + ry * 0.6) + f" scale({side} 1)"
            out.append(el("path", d=STREAM, transform=place, opacity=0.85, **stroke(TEAR, 7)))
            out += drop(MID + side * (ex + rx + 12), ey - 6, 7)
    if "sweat" in face.extras:
        out += drop(x, y, 14)
    if "anger" in face.extras:
        out.append(el("path", d=VEIN, transform=at(x, y), **stroke("#E0483E", 3.5)))
    if "question" in face.extras:
        out.append(el("path", d=QUESTION, transform=at(x, y), **stroke(rig.ink, 4.5)))
        out.append(el("circle", cx=x, cy=y + 16, r=2.8, fill=rig.ink))
    if "zzz" in face.extras:
        for i in range(3):
            place = at(x + 4 + i * 13, y + 4 - i * 18, 0.8 + i * 0.3)
            out.append(el("path", d=ZED, transform=place, **stroke("#6C6AA8", 3)))
    if "dots" in face.extras:
        for i, r in enumerate((3.0, 4.5, 6.5)):
            place = at(x + i * 12, y - i * 14)
            out.append(
                el("circle", r=r, transform=place, fill=WHITE, stroke=rig.ink, stroke_width=2)
            )
    if "sparkle" in face.extras:
        out += [sparkle(42, 78, 14), sparkle(216, 58, 18), sparkle(226, 122, 10)]
    return out


# --- Miao: a cream cat with a white tuft at the tail tip ---------------------------------------

FUR, FUR_INK = "#F8E7C8", "#7A5638"
MIAO = Rig(
    eye_style="cat",
    eye_dx=34,
    eye_y=140,
    eye_rx=12,
    eye_ry=15,
    iris="#3B2A20",
    lid=FUR,
    lash=FUR_INK,
    brow=FUR_INK,
    brow_width=3.5,
    brow_len=18,
    brow_gap=27,
    ink=FUR_INK,
    mouth_y=171,
    mouth_scale=0.8,
    cheek_dx=50,
    cheek_y=166,
    corner=(196, 98),
)
# A cat's closed mouth is an ω under the nose.
CAT_LINES = {"smile": "M-16 0 Q-8 9 0 0 Q8 9 16 0", "grin": "M-20 0 Q-10 12 0 0 Q10 12 20 0"}
TAIL = "M150 250 C192 240 218 220 222 190"
TAIL_TIP = "M222 190 C224 172 206 170 205 182"
EAR = "M62,112 L70,36 L120,78 Z"
INNER_EAR = "M76,98 L78,56 L108,80 Z"
WHISKERS = "M84,164 L38,154 M84,171 L36,172 M86,178 L42,192"
NOSE = "M120 157 Q128 154 136 157 Q132 165 128 166 Q124 165 120 157 Z"


def draw_miao(face: Face, speaking: bool) -> list[str]:
    outline: dict[str, Value] = {"stroke": FUR_INK, "stroke_width": 3, "stroke_linejoin": "round"}
    out = [
        el("ellipse", cx=MID, cy=262, rx=78, ry=56, fill=FUR, **outline),
        el("path", d=f"{TAIL} {TAIL_TIP}", **stroke(FUR_INK, 22)),
        el("path", d=TAIL, **stroke(FUR, 16)),
        el("path", d=TAIL_TIP, **stroke(WHITE, 16)),
        el("path", d=f"{EAR} {mirror(EAR)}", fill=FUR, **outline),
        el("path", d=f"{INNER_EAR} {mirror(INNER_EAR)}", fill="#F6B3C0"),
        el("ellipse", cx=MID, cy=142, rx=86, ry=70, fill=FUR, **outline),
        el("path", d="M118 80 L120 94 M128 76 V94 M138 80 L136 94", **stroke("#E8C995", 4.5)),
        el("ellipse", cx=114, cy=172, rx=18, ry=13, fill="#FFF7EA"),
        el("ellipse", cx=142, cy=172, rx=18, ry=13, fill="#FFF7EA"),
    ]
    if "blush" in face.extras:
        out += blush(MIAO)
    out.append(el("path", d=f"{WHISKERS} {mirror(WHISKERS)}", **stroke(FUR_INK, 2)))
    out += shadow(face) + eyes(MIAO, face) + brows(MIAO, face)
    out.append(el("path", d=NOSE, fill="#F28DA0", stroke="#D9707F", stroke_width=1.5))
    out.append(el("path", d="M128 166 V171", **stroke(FUR_INK, 2.5)))
    return out + mouth(MIAO, face, speaking, CAT_LINES) + extras(MIAO, face)


# --- Monikai: an original bookish young woman with round glasses -------------------------------

HAIR, HAIR_INK, SKIN = "#7B4A2D", "#4A2C1E", "#FCE3D2"
MONIKAI = Rig(
    eye_style="human",
    eye_dx=25,
    eye_y=140,
    eye_rx=10.5,
    eye_ry=12.5,
    iris="#3F9A63",
    lid=SKIN,
    lash="#3A2418",
    brow="#4A2A18",
    brow_width=3.5,
    brow_len=20,
    brow_gap=24,
    ink="#6A3A2A",
    mouth_y=172,
    mouth_scale=0.85,
    cheek_dx=40,
    cheek_y=162,
    corner=(194, 112),
)
HAIR_BACK = "M58 120 C54 60 90 34 128 34 C166 34 202 60 198 120 L212 256 L44 256 Z"
SHOULDERS = "M34 256 C38 214 78 198 128 198 C178 198 218 214 222 256 Z"
BANGS = (
    "M64 124 C58 72 90 44 128 44 C168 44 200 72 192 124 C186 104 180 92 174 84 "
    "C166 94 152 100 136 102 C146 94 150 88 150 80 C138 92 112 98 92 98 "
    "C98 92 100 86 100 80 C90 92 76 108 64 124 Z"
)
LOCK = "M64,108 C56,150 60,190 72,226 C82,192 84,150 88,112 Z"
BOW = "M72 74 L96 58 L92 90 Z M72 74 L48 56 L50 92 Z"
GLASSES = "M110 138 Q128 130 146 138 M89 136 L70 130 M167 136 L186 130"


def draw_monikai(face: Face, speaking: bool) -> list[str]:
    ink: dict[str, Value] = {"stroke": HAIR_INK, "stroke_width": 2.5, "stroke_linejoin": "round"}
    frame: dict[str, Value] = {"stroke": "#5B3A2C", "stroke_width": 2.5}
    out = [
        el("path", d=HAIR_BACK, fill=HAIR),
        el("path", d=SHOULDERS, fill="#E3A73F", **ink),
        el("path", d="M108 200 L128 232 L148 200 Z", fill="#FFF8EE", **ink),
        el("path", d="M113 170 V204 Q128 216 143 204 V170 Z", fill="#F0C4AA"),
        el("ellipse", cx=MID, cy=124, rx=60, ry=68, fill=SKIN, **ink),
    ]
    if "blush" in face.extras:
        out += blush(MONIKAI)
    out += shadow(face) + eyes(MONIKAI, face)
    for side in (-1, 1):
        lens = {"cx": MID + side * 25, "cy": 140, "r": 18}
        out.append(el("circle", **lens, fill=WHITE, fill_opacity=0.15, **frame))
    out += [
        el("path", d=GLASSES, **stroke("#5B3A2C", 2.5)),
        el("path", d=BANGS, fill=HAIR, **ink),
        el("path", d=f"{LOCK} {mirror(LOCK)}", fill=HAIR, **ink),
        el("path", d=BOW, fill="#2C8C8C", stroke="#1E6464", stroke_width=2.5),
        el("circle", cx=72, cy=74, r=6.5, fill="#3AA5A5", stroke="#1E6464", stroke_width=2.5),
        el("path", d="M128 150 Q124 159 130 160", **stroke("#D49A80", 2.5)),
    ]
    out += brows(MONIKAI, face)
    return out + mouth(MONIKAI, face, speaking) + extras(MONIKAI, face)


# --- The Dungeon Master: a hooded, bearded narrator with glowing eyes --------------------------

GLOOM, BEARD, BEARD_INK, SKIN_DM = "#221C3D", "#EEEAE2", "#C9C1B4", "#E9C3A0"
DUNGEON_MASTER = Rig(
    eye_style="glow",
    eye_dx=20,
    eye_y=116,
    eye_rx=8,
    eye_ry=6,
    iris="#FFD75E",
    lid=GLOOM,
    lash="#FFD75E",
    brow=BEARD,
    brow_width=7,
    brow_len=24,
    brow_gap=14,
    ink="#4A3A3A",
    mouth_y=174,
    mouth_scale=0.8,
    cheek_dx=30,
    cheek_y=146,
    corner=(178, 100),
)
HOOD = (
    "M18 256 C24 180 46 118 70 80 C90 46 110 22 132 14 C126 30 150 40 178 72 "
    "C206 112 230 180 238 256 Z"
)
HOOD_OPENING = "M76 256 C62 170 80 72 128 66 C176 72 194 170 180 256 Z"
# The hood's shadow over the top of the face, down to just under the eyes.
BROW_SHADE = "M85.1 130 A44 54 0 1 1 170.9 130 Q128 144 85.1 130 Z"
DM_NOSE = "M121 122 Q116 150 128 153 Q140 150 135 122 Z"
BEARD_SHAPE = (
    "M82 140 C84 190 106 236 128 248 C150 236 172 190 174 140 "
    "C160 160 146 166 128 166 C110 166 96 160 82 140 Z"
)
MOUSTACHE = (
    "M128 162 C116 152 98 154 88 172 C102 164 116 170 128 168 "
    "C140 170 154 164 168 172 C158 154 140 152 128 162 Z"
)


def draw_dungeon_master(face: Face, speaking: bool) -> list[str]:
    beard: dict[str, Value] = {"fill": BEARD, "stroke": BEARD_INK, "stroke_width": 2}
    out = [
        el("path", d=HOOD, fill="#4B3F8C", stroke="#2F2664", stroke_width=3),
        el("path", d=HOOD_OPENING, fill=GLOOM),
        el("ellipse", cx=MID, cy=142, rx=44, ry=54, fill=SKIN_DM),
        el("path", d=BROW_SHADE, fill=GLOOM, opacity=0.9),
        el("path", d=DM_NOSE, fill=SKIN_DM, stroke="#B98E6E", stroke_width=2),
        el("path", d=BEARD_SHAPE, stroke_linejoin="round", **beard),
        el("path", d="M108 196 Q112 214 120 226 M148 196 Q144 214 136 226", **stroke(BEARD_INK, 2)),
    ]
    if "blush" in face.extras:
        out += blush(DUNGEON_MASTER)
    out += mouth(DUNGEON_MASTER, face, speaking)
    out.append(el("path", d=MOUSTACHE, stroke_linejoin="round", **beard))
    out += [sparkle(58, 196, 6), sparkle(204, 178, 5), sparkle(84, 240, 4)]  # stars on the cloak
    out += shadow(face) + eyes(DUNGEON_MASTER, face) + brows(DUNGEON_MASTER, face)
    return out + extras(DUNGEON_MASTER, face)


@dataclass(frozen=True)
class Persona:
    title: str
    background: str
    draw: Callable[[Face, bool], list[str]]


PERSONAS: dict[str, Persona] = {
    "miao": Persona("Miao", "#FBE3EA", draw_miao),
    "monikai": Persona("Monikai", "#DCEBDD", draw_monikai),
    "dungeon_master": Persona("The Dungeon Master", "#D8D0EE", draw_dungeon_master),
}


def render(persona: Persona, emotion: str, speaking: bool) -> str:
    face = face_for(emotion)
    body = persona.draw(face, speaking)
    if "tilt" in face.extras:
        body = group(body, transform="rotate(-8 128 140)")
    title = f"{persona.title} — {emotion}" + (" (speaking)" if speaking else "")
    lines = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {SIZE} {SIZE}" '
        f'width="{SIZE}" height="{SIZE}" role="img">',
        f"  <title>{escape(title)}</title>",
        '  <defs><clipPath id="frame"><circle cx="128" cy="128" r="124"/></clipPath></defs>',
        "  " + el("circle", cx=MID, cy=MID, r=124, fill=persona.background),
        *("  " + line for line in group(body, clip_path="url(#frame)")),
        "</svg>",
    ]
    return "\n".join(lines) + "\n"


def write_sprites(personas_dir: Path, out_dir: Path) -> list[Path]:
    """Write every drawn persona's sprites under out_dir/<persona>/; return the files written."""
    written = []
    for name, persona in PERSONAS.items():
        with (personas_dir / f"{name}.toml").open("rb") as file:
            emotions: list[str] = tomllib.load(file)["emotions"]["names"]
        folder = out_dir / name
        folder.mkdir(parents=True, exist_ok=True)
        for emotion in (e.strip().upper() for e in emotions):
            for speaking in (False, True):
                path = folder / f"{emotion}{'SPEAKING' if speaking else ''}.svg"
                path.write_text(render(persona, emotion, speaking), encoding="utf-8", newline="\n")
                written.append(path)
    return written


def main() -> None:
    personas_dir = HERE.parent
    written = write_sprites(personas_dir, HERE)
    undrawn = sorted(p.stem for p in personas_dir.glob("*.toml") if p.stem not in PERSONAS)
    print(f"wrote {len(written)} sprites under {HERE}")
    if undrawn:
        print(f"no face drawn yet for: {', '.join(undrawn)} (add one to PERSONAS)", file=sys.stderr)


if __name__ == "__main__":
    main()
