"""A host's own tool for a Kizuna persona (docs/examples/librarian.toml names it by module
path). Put this module where Python can import it (installed, or on PYTHONPATH).

A tool is an async function: its first parameter is what Kizuna hands it, the others are what
the model fills in; their types (and Field descriptions) become the JSON schema the model
sees, and the docstring its description. A tool that acts for the person who asked takes a
`ToolContext` (with their `user_id`): it is offered only when the messages answered are that
one person's. One that acts for no one in particular, as this one, takes a `CommonContext`
and is offered whoever spoke.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from bot.tools import CommonContext

__all__ = ["reading_time"]


async def reading_time(
    context: CommonContext,
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
