"""A small MCP server over stdio, for the tests of bot/toolkit/mcp.py: run as
`python -m tests.fakes.mcp_server`.

Tools: `add` (two integers), `echo_env` (whether an environment variable reached the
server), `sleep` (for timeouts) and `crash` (the process exits, as a crashed server would).
"""

from __future__ import annotations

import asyncio
import os

from mcp.server.mcpserver import MCPServer

__all__ = ["server"]

server = MCPServer("kizuna-test")


@server.tool()
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@server.tool()
def echo_env(name: str) -> str:
    """Whether the environment variable `name` is set here, and its value."""
    return f"{name}={os.environ[name]}" if name in os.environ else f"{name} is not set"


@server.tool()
async def sleep(seconds: float) -> str:
    """Wait, then answer."""
    await asyncio.sleep(seconds)
    return "awake"


@server.tool()
def pid() -> str:
    """This process's id."""
    return str(os.getpid())


@server.tool()
def crash() -> str:
    """Exit the process at once."""
    os._exit(3)


if __name__ == "__main__":
    server.run("stdio")
