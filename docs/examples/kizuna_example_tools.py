"""A host's own tool for a Kizuna persona (docs/examples/librarian.toml names it by module
path). Put this module where Python can import it (installed, or on PYTHONPATH).

A tool is an async function: its first parameter is the `ToolContext` Kizuna hands it, the
others are what the model fills in; their types (and Field descriptions) become the JSON
schema the model sees, and the docstring its description.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from bot.toolkit import ToolContext

__all__ = ["reading_time"]


async def reading_time(
    context: ToolContext,
    words: Annotated[int, Field(ge=1, le=2_000_000, description="how many words the text has")],
    pace: Annotated[int, Field(ge=50, le=1000, description="words a minute")] = 230,
) -> str:
    """How long a text takes to read, when someone asks how long a book or article will
    take them."""
    minutes = round(words / pace)
    hours, rest = divmod(minutes, 60)
    return (
        f"About {hours} h {rest} min at {pace} words a minute."
        if hours
        else f"About {minutes} min."
    )
