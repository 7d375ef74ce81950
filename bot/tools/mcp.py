"""MCP servers a persona lists (`[[mcp_servers]]`), through the official `mcp` SDK's client.

A server starts when a conversation first needs its tools, not before. Its connection lives
in a task of its own (the SDK's transports are entered and left in one task); calls are made
from the turn's task, each within the server's timeout. A call that fails because the
server went away marks it down; it is started again on a later turn, after a backoff that
doubles from 1 s to 5 minutes. A server that is down or slow is a sentence for the model to
pass on, never a wait without end. Only the environment variables the persona names reach a
stdio server, besides the few the SDK passes to any (PATH, HOME, USER and the like).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bot.persona.toolspec import McpServer
from memory.errors import KizunaError

if TYPE_CHECKING:  # the SDK is an extra: imported when a server is first started
    from mcp import Client, StdioServerParameters

__all__ = ["McpConnection", "McpDown", "McpTool"]

log = logging.getLogger(__name__)

FIRST_BACKOFF = 1.0
MAX_BACKOFF = 300.0
CLOSE_GRACE = 5.0  # seconds a server is given to stop before its task is cancelled


class McpDown(KizunaError):
    """The server is not there or did not answer in time; the message says which."""


@dataclass(slots=True, frozen=True)
class McpTool:
    name: str  # the server's name for it
    description: str
    schema: dict[str, Any]


@dataclass(slots=True)
class McpConnection:
    """One MCP server of one persona."""

    spec: McpServer
    environ: Mapping[str, str]
    monotonic: Callable[[], float] = time.monotonic
    tools: dict[str, McpTool] = field(default_factory=dict)  # allowed ones, once listed
    _client: Client | None = None
    _task: asyncio.Task[None] | None = None
    _stop: asyncio.Event | None = None
    _starting: asyncio.Lock = field(default_factory=asyncio.Lock)
    _retry_at: float = 0.0
    _backoff: float = FIRST_BACKOFF

    @property
    def up(self) -> bool:
        return self._client is not None and self._task is not None and not self._task.done()

    def _target(self) -> StdioServerParameters | str:
        from mcp import StdioServerParameters

        if self.spec.url:
            return self.spec.url
        passed = {name: self.environ[name] for name in self.spec.env if name in self.environ}
        return StdioServerParameters(command=self.spec.command, args=self.spec.args, env=passed)

    async def ensure(self) -> None:
        """Start the server and list its tools, unless it is up; McpDown if it cannot be
        started now (or is waiting out its backoff)."""
        if self.up:
            return
        async with self._starting:
            if self.up:
                return
            if self.monotonic() < self._retry_at:
                raise McpDown(f"MCP server {self.spec.name} is down; retrying later")
            await self._stop_task()
            try:
                await self._start()
            except McpDown:
                self._retry_at = self.monotonic() + self._backoff
                self._backoff = min(self._backoff * 2, MAX_BACKOFF)
                raise
            self._backoff = FIRST_BACKOFF

    async def _start(self) -> None:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._serve(ready, self._stop))
        try:
            async with asyncio.timeout(self.spec.timeout):
                await asyncio.shield(ready)
        except TimeoutError:
            ready.cancel()
            await self._stop_task()
            log.warning("MCP server %s did not start in %g s", self.spec.name, self.spec.timeout)
            raise McpDown(f"MCP server {self.spec.name} did not start in time") from None
        except Exception as e:
            await self._stop_task()
            log.warning("MCP server %s failed to start: %s", self.spec.name, type(e).__name__)
            raise McpDown(f"MCP server {self.spec.name} failed to start") from None
        log.info("MCP server %s up with %d allowed tools", self.spec.name, len(self.tools))

    async def _serve(self, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        from mcp import Client

        try:
            async with Client(self._target()) as client:
                listed = await client.list_tools()
                allowed = set(self.spec.tools)
                self.tools = {
                    t.name: McpTool(t.name, t.description or t.name, dict(t.input_schema))
                    for t in listed.tools
                    if t.name in allowed
                }
                self._client = client
                if ready.done():  # the start was given up meanwhile
                    return
                ready.set_result(None)
                await stop.wait()
        except BaseException as e:
            if not ready.done():
                ready.set_exception(e if isinstance(e, Exception) else McpDown("cancelled"))
            if isinstance(e, Exception):
                log.warning("MCP server %s stopped: %s", self.spec.name, type(e).__name__)
                return
            raise
        finally:
            self._client = None

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """The server's answer as text, and whether it reports an error; McpDown if it is
        not there or too slow (a server that went away is started again later)."""
        await self.ensure()
        client = self._client
        if client is None:
            raise McpDown(f"MCP server {self.spec.name} is down")
        try:
            async with asyncio.timeout(self.spec.timeout):
                result = await client.call_tool(tool, arguments)
        except TimeoutError:
            raise McpDown(f"MCP server {self.spec.name} did not answer in time") from None
        except Exception as e:
            log.warning("MCP server %s failed a call: %s", self.spec.name, type(e).__name__)
            await self._stop_task()  # a lost connection: started again on a later turn
            self._retry_at = self.monotonic() + self._backoff
            self._backoff = min(self._backoff * 2, MAX_BACKOFF)
            raise McpDown(f"MCP server {self.spec.name} went away") from None
        parts = []
        for block in result.content:
            text = getattr(block, "text", None)
            parts.append(text if isinstance(text, str) else f"[{block.type}]")
        return "\n".join(parts), bool(result.is_error)

    async def _stop_task(self) -> None:
        task, stop = self._task, self._stop
        self._task = self._stop = None
        self._client = None
        if task is None:
            return
        if stop is not None:
            stop.set()
        done, _ = await asyncio.wait({task}, timeout=CLOSE_GRACE)
        if not done:
            task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    async def close(self) -> None:
        await self._stop_task()
