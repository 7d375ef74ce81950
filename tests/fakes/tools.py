"""Python tools for the tests of bot/tools: a persona names them by module path
("tests.fakes.tools:where")."""

from __future__ import annotations

import asyncio
from typing import Annotated

from pydantic import Field

from bot.tools import CommonContext, ToolContext

__all__ = ["bell", "boom", "long", "not_async", "secretive", "slow", "untyped", "where"]


async def where(context: ToolContext, note: Annotated[str, Field(max_length=50)] = "") -> str:
    """Say which conversation and sender the call is for."""
    return f"scope={context.scope} user={context.user_id} admin={context.admin} note={note}"


async def slow(context: ToolContext, seconds: float) -> str:
    """Take a while."""
    await asyncio.sleep(seconds)
    return "done"


async def boom(context: ToolContext, secret: str) -> str:
    """Fail, with the argument in the error."""
    raise RuntimeError(f"failed on {secret}")


async def long(context: ToolContext, size: int) -> str:
    """Answer `size` characters."""
    return "x" * size


async def secretive(context: ToolContext) -> str:
    """No docstring problem here; used as an admin-only tool."""
    return "the vault is open"


def not_async(context: ToolContext) -> str:
    """A plain function."""
    return "no"


async def untyped(context: ToolContext, value) -> str:
    """A parameter without a type."""
    return str(value)


async def bell(context: CommonContext) -> str:
    """Ring the room's bell: for no one in particular (used as an admin-only tool)."""
    return f"the bell rings in {context.scope}"
