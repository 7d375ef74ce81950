"""A small MCP server over stdio, for the tests of bot/tools/mcp.py: run as
`python -m tests.fakes.mcp_server` (stdio), or with `--http PORT` over streamable HTTP.

Tools: `add` (two integers), `echo_env` (whether an environment variable reached the
server), `pid`, `sleep` (for timeouts) and `crash` (the process exits, as a crashed server would).
"""

from __future__ import annotations

import asyncio
import os
import sys

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
    if len(sys.argv) > 1:  # --http PORT: streamable HTTP on 127.0.0.1:PORT/mcp
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
