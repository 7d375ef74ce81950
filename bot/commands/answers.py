"""What a command answers, platform-free: text, perhaps a file, perhaps buttons. Each surface
renders it its own way: Discord as an ephemeral message with buttons, Telegram with an inline
keyboard (in the asker's private chat when the answer is private), the console as a prompt.

A button is a command with its argument, run as whoever presses it when it is pressed, so a
press is checked like a typed command and needs nothing kept in the process that asked (a
Telegram webhook may take the press in another one)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Answer", "Button", "File"]


@dataclass(slots=True, frozen=True)
class Button:
    label: str
    command: str
    argument: str = ""
    danger: bool = False  # it deletes something


@dataclass(slots=True, frozen=True)
class File:
    filename: str
    data: bytes


@dataclass(slots=True, frozen=True)
class Answer:
    text: str
    private: bool = False  # it shows someone's memories: for the asker's eyes only
    buttons: tuple[Button, ...] = ()
    file: File | None = None
