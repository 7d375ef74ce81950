"""The Toolbox: the Python and MCP tools of each persona, offered and run within their limits.

Every call passes the same gates in order: the tool is the persona's; eco mode leaves only
cheap tools; an admin-only tool needs the sender to be an admin of the chat; the sender is
within the tool's rate (calls a minute, by the injected clock); the arguments fit the
schema. It then runs within its timeout, its answer is cut to its size, and one log line
says the tool, the persona, how it ended, how long it took and what it cost — never the
arguments (they are user text) nor the answer.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo

from bot.llm.base import Tool
from bot.persona import Persona
from bot.prompts.tools import (
    MCP_DOWN,
    MCP_UNAVAILABLE,
    TOOL_ADMINS_ONLY,
    TOOL_BAD_ARGUMENTS,
    TOOL_FAILED,
    TOOL_NOT_IN_ECO,
    TOOL_RATE_LIMITED,
    TOOL_TIMED_OUT,
    TOOL_TRUNCATED,
)
from bot.tomlfile import TomlError, dotted, locate
from bot.toolkit.mcp import McpConnection, McpDown
from bot.toolkit.python import PythonTool, Reminders, ToolContext, ToolLoadError, load_tool
from bot.toolspec import BUILTIN_TOOLS, CustomTool, McpServer, tool_entry_points
from memory.clock import Clock

__all__ = ["Limits", "Sender", "ToolOutcome", "Toolbox"]

log = logging.getLogger(__name__)

RATE_WINDOW = timedelta(minutes=1)
MCP_SEPARATOR = "__"  # the model calls a server's tool SERVER__TOOL


@dataclass(slots=True, frozen=True)
class Sender:
    """Who a turn's tool calls are for."""

    user_id: str
    admin: bool = False  # an admin of the chat (bot/events.py ChatEvent.admin), not in a DM


@dataclass(slots=True, frozen=True)
class Limits:
    timeout: float
    max_output_chars: int
    cheap: bool
    admin_only: bool
    rate_per_minute: int

    @classmethod
    def of(cls, spec: CustomTool | McpServer) -> Limits:
        return cls(
            spec.timeout, spec.max_output_chars, spec.cheap, spec.admin_only, spec.rate_per_minute
        )


@dataclass(slots=True, frozen=True)
class ToolOutcome:
    """A call's answer for the model, and how it ended (for the log and the tests)."""

    text: str
    status: str  # "ok", "error", "refused", "invalid", "timeout", "down"


@dataclass(slots=True)
class _Kit:
    """One persona's own tools."""

    python: dict[str, tuple[PythonTool, Limits]] = field(default_factory=dict)
    servers: dict[str, tuple[McpConnection, Limits]] = field(default_factory=dict)


class Toolbox:
    """The personas' Python and MCP tools. Loading them checks every persona's tools at
    start: a tool that cannot be loaded is a TomlError naming the persona file's key and line."""

    def __init__(
        self,
        personas: Mapping[str, Persona],
        *,
        clock: Clock,
        tz: tzinfo,
        rng: random.Random,
        environ: Mapping[str, str],
        eco_mode: bool = False,
        installed: Mapping[str, str] | None = None,
        reminders: Callable[[str, str], Reminders] | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.clock = clock
        self.tz = tz
        self.rng = rng
        self.eco_mode = eco_mode
        self._reminders = reminders  # (scope, user id) -> that conversation's reminders
        self._calls: dict[tuple[str, str, str], deque[datetime]] = {}
        installed = tool_entry_points() if installed is None else installed
        self._kits = {
            key: _load_kit(persona, installed, environ, monotonic)
            for key, persona in personas.items()
        }

    def python_tools(self, persona: Persona) -> list[tuple[PythonTool, Limits]]:
        return list(self._kits.get(persona.key, _Kit()).python.values())

    def servers(self, persona: Persona) -> list[tuple[McpServer, Limits]]:
        kit = self._kits.get(persona.key, _Kit())
        return [(conn.spec, limits) for conn, limits in kit.servers.values()]

    def tools(self, persona: Persona, sender: Sender) -> list[Tool]:
        """What the persona may offer this sender now: eco mode keeps the cheap tools only,
        admin-only tools are for admins. A server not started (or down) shows its allowed
        tools with an open schema: calling one says the server is not there."""
        kit = self._kits.get(persona.key, _Kit())
        offered = [
            tool.tool for tool, limits in kit.python.values() if self._may(limits, sender) is None
        ]
        for server, (conn, limits) in kit.servers.items():
            if self._may(limits, sender) is not None:
                continue
            for name in conn.spec.tools:
                listed = conn.tools.get(name)
                if listed is not None:
                    description, schema = listed.description, listed.schema
                elif conn.up:  # the server does not have it
                    continue
                else:
                    description = MCP_UNAVAILABLE.format(server=server)
                    schema = {"type": "object", "additionalProperties": True}
                offered.append(Tool(_mcp_name(server, name), description, schema))
        return offered

    async def prepare(self, persona: Persona) -> None:
        """Start the persona's MCP servers that are not up (each within its timeout), so
        `tools` can show what they offer; one that cannot start is left for a later turn."""
        kit = self._kits.get(persona.key)
        if kit is None or not kit.servers:
            return
        await asyncio.gather(
            *(c.ensure() for c, _ in kit.servers.values()), return_exceptions=True
        )  # (McpDown: a failed start is logged where it failed)

    async def probe(self, persona: Persona) -> dict[str, str]:
        """Each MCP server of the persona: "reachable (N of M tools)" or why not."""
        kit = self._kits.get(persona.key, _Kit())
        out: dict[str, str] = {}
        for server, (conn, _) in kit.servers.items():
            try:
                await conn.ensure()
            except McpDown as e:
                out[server] = f"not reachable: {e}"
                continue
            missing = [t for t in conn.spec.tools if t not in conn.tools]
            shown = f"reachable ({len(conn.tools)} of {len(conn.spec.tools)} tools"
            out[server] = shown + (f"; missing: {', '.join(missing)})" if missing else ")")
        return out

    async def run(
        self, persona: Persona, scope: str, sender: Sender, name: str, arguments: str
    ) -> ToolOutcome | None:
        """Run one of the persona's tools for the sender, in the conversation's scope; None
        when `name` is not one of this box's tools for the persona."""
        kit = self._kits.get(persona.key)
        if kit is None:
            return None
        started = time.perf_counter()
        python = kit.python.get(name)
        if python is not None:
            tool, limits = python
            refusal = self._refusal(limits, sender, persona, name)
            outcome = (
                ToolOutcome(refusal, "refused")
                if refusal is not None
                else await self._python(tool, limits, persona, scope, sender, arguments)
            )
        else:
            server, _, remote = name.partition(MCP_SEPARATOR)
            found = kit.servers.get(server)
            if found is None or remote not in found[0].spec.tools:
                return None
            conn, limits = found
            refusal = self._refusal(limits, sender, persona, name)
            outcome = (
                ToolOutcome(refusal, "refused")
                if refusal is not None
                else await self._mcp(conn, limits, remote, arguments)
            )
        called = python is None and outcome.status in ("ok", "error", "timeout")
        elapsed = (time.perf_counter() - started) * 1000
        log.info(
            "tool %s for %s: %s in %.0f ms, cost %s",
            name,
            persona.key,
            outcome.status,
            elapsed,
            "1 MCP call" if called else "no model call",
        )
        return outcome

    def _refusal(self, limits: Limits, sender: Sender, persona: Persona, name: str) -> str | None:
        return self._may(limits, sender) or self._rate(limits, sender, persona, name)

    def _may(self, limits: Limits, sender: Sender) -> str | None:
        if self.eco_mode and not limits.cheap:
            return TOOL_NOT_IN_ECO
        if limits.admin_only and not sender.admin:
            return TOOL_ADMINS_ONLY
        return None

    def _rate(self, limits: Limits, sender: Sender, persona: Persona, name: str) -> str | None:
        if limits.rate_per_minute == 0:
            return None
        now = self.clock.now()
        if len(self._calls) > 4096:  # forget senders with no call in the window
            for key in [k for k, q in self._calls.items() if q[-1] <= now - RATE_WINDOW]:
                del self._calls[key]
        calls = self._calls.setdefault((persona.key, name, sender.user_id), deque())
        while calls and calls[0] <= now - RATE_WINDOW:
            calls.popleft()
        if len(calls) >= limits.rate_per_minute:
            return TOOL_RATE_LIMITED.format(count=limits.rate_per_minute)
        calls.append(now)
        return None

    async def _python(
        self,
        tool: PythonTool,
        limits: Limits,
        persona: Persona,
        scope: str,
        sender: Sender,
        arguments: str,
    ) -> ToolOutcome:
        checked = tool.validate(arguments)
        if isinstance(checked, str):
            return ToolOutcome(checked, "invalid")
        context = ToolContext(
            scope=scope,
            persona=persona.key,
            language=persona.identity.language,
            user_id=sender.user_id,
            admin=sender.admin,
            clock=self.clock,
            tz=self.tz,
            rng=self.rng,
            reminders=self._reminders(scope, sender.user_id) if self._reminders else None,
        )
        try:
            async with asyncio.timeout(limits.timeout):
                answer = await tool.function(context, **checked)
        except TimeoutError:
            return ToolOutcome(TOOL_TIMED_OUT, "timeout")
        except Exception as e:  # a host's tool may fail in any way; the turn goes on
            log.warning("tool %s for %s raised %s", tool.name, persona.key, type(e).__name__)
            return ToolOutcome(TOOL_FAILED, "error")
        return ToolOutcome(_capped(str(answer), limits.max_output_chars), "ok")

    async def _mcp(
        self, conn: McpConnection, limits: Limits, remote: str, arguments: str
    ) -> ToolOutcome:
        try:
            value = json.loads(arguments or "{}")
        except ValueError:
            value = None
        if not isinstance(value, dict):
            problems = "they must be a JSON object"
            return ToolOutcome(TOOL_BAD_ARGUMENTS.format(problems=problems), "invalid")
        try:
            text, failed = await conn.call(remote, value)
        except McpDown as e:
            status = "timeout" if "in time" in str(e) else "down"
            return ToolOutcome(MCP_DOWN.format(reason=e), status)
        return ToolOutcome(_capped(text, limits.max_output_chars), "error" if failed else "ok")

    async def close(self) -> None:
        """Stop every MCP server (each within its grace), whatever the others do."""
        conns = [c for kit in self._kits.values() for c, _ in kit.servers.values()]
        await asyncio.gather(*(c.close() for c in conns), return_exceptions=True)


def _capped(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + "\n" + TOOL_TRUNCATED.format(count=limit)


def _mcp_name(server: str, tool: str) -> str:
    return f"{server}{MCP_SEPARATOR}{tool}"


def _load_kit(
    persona: Persona,
    installed: Mapping[str, str],
    environ: Mapping[str, str],
    monotonic: Callable[[], float],
) -> _Kit:
    kit = _Kit()
    declared = {t.name: (i, t) for i, t in enumerate(persona.custom_tools)}
    wanted = [n for n in persona.tools if n not in BUILTIN_TOOLS and n not in declared]
    for name in [*declared, *dict.fromkeys(wanted)]:
        if name in declared:
            i, spec = declared[name]
            key: tuple[str | int, ...] = ("custom_tools", i, "module" if spec.module else "name")
            target = spec.module or installed.get(name, "")
        else:
            spec = CustomTool(name)
            key = ("tools", persona.tools.index(name))
            target = installed.get(name, "")
        try:
            if not target:
                raise ToolLoadError(f"no installed tool named {name!r}")
            beside = persona.path.parent if spec.module and persona.path is not None else None
            kit.python[name] = (load_tool(name, target, beside), Limits.of(spec))
        except ToolLoadError as e:
            raise _persona_error(persona, key, str(e)) from None
    for server in persona.mcp_servers:
        conn = McpConnection(server, environ, monotonic)
        kit.servers[server.name] = (conn, Limits.of(server))
    return kit


def _persona_error(persona: Persona, key: tuple[str | int, ...], message: str) -> TomlError:
    path = persona.path
    line = None
    if path is not None:
        try:
            line = locate(path.read_text(encoding="utf-8-sig"), key)
        except (OSError, UnicodeDecodeError):
            line = None
    return TomlError(str(path or persona.key), dotted(key), line, message)
