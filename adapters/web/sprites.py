"""Which picture shows a persona's emotion, resting or speaking.

A persona's sprites are in its sprite folder (`assets/<persona>/` beside its file, or the
folder `emotions.sprites` names) as EMOTION.png and EMOTIONSPEAKING.png (.svg and .webp also
do). A missing speaking picture falls back to the resting one, a missing emotion to neutral,
and a persona with no pictures at all to a drawn initial: the page never shows a broken image.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from bot.persona.file import Persona

__all__ = ["EXTENSIONS", "placeholder", "sprite_file"]

EXTENSIONS = (".png", ".svg", ".webp")


def _candidates(emotion: str, neutral: str, speaking: bool) -> list[str]:
    names = [f"{emotion}SPEAKING", emotion] if speaking else [emotion]
    if emotion != neutral:
        names += [f"{neutral}SPEAKING", neutral] if speaking else [neutral]
    return names


def sprite_file(persona: Persona, emotion: str, *, speaking: bool) -> Path | None:
    """The picture for `emotion` (an unknown one means neutral), or None if the persona has
    none to fall back on."""
    folder = persona.sprite_dir
    if folder is None or not folder.is_dir():
        return None
    emotion = persona.emotion(emotion)
    for name in _candidates(emotion, persona.emotions.neutral, speaking):
        for extension in EXTENSIONS:
            path = folder / f"{name}{extension}"
            if path.is_file():
                return path
    return None


def placeholder(persona: Persona, *, speaking: bool) -> str:
    """An SVG of the persona's initial, for a persona without pictures."""
    initial = escape((persona.identity.nickname or persona.identity.name or "?")[:1].upper())
    mouth = (
        '<ellipse cx="128" cy="196" rx="18" ry="12" fill="#3b2f4a"/>'
        if speaking
        else '<path d="M108 194 q20 14 40 0" stroke="#3b2f4a" stroke-width="6" fill="none"/>'
    )
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 256 256">'
        f"<title>{escape(persona.identity.name)}</title>"
        '<circle cx="128" cy="128" r="120" fill="#e8e0f5"/>'
        '<text x="128" y="150" font-size="96" text-anchor="middle" font-family="sans-serif"'
        f' fill="#3b2f4a">{initial}</text>{mouth}</svg>'
    )
