"""The Toolbox: the Python and MCP tools of each persona, offered and run within their limits.

Every call passes the same gates in order: the tool is the persona's; eco mode leaves only
cheap tools; an admin-only tool needs everyone whose words the turn answers to be an admin of
the chat; a tool that acts for a person (a Python tool taking a `ToolContext`) needs the turn
to answer one person only, for whom it acts; each of them is within the tool's rate (calls a
minute, by the injected clock); the arguments fit the schema. It then runs within its
timeout, its answer is cut to its size and quoted (outside text, data to the model as user
text is: bot.prompts.tool_answer), and one log line says the tool, the persona, how it ended,
how long it took and what it cost — never the arguments (they are user text) nor the answer.
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

from bot.chat_model import Tool
from bot.persona.file import Persona
from bot.persona.toolspec import BUILTIN_TOOLS, CustomTool, McpServer, tool_entry_points
from bot.prompts.tools import (
    MCP_DOWN,
    MCP_UNAVAILABLE,
    TOOL_ADMINS_ONLY,
    TOOL_BAD_ARGUMENTS,
    TOOL_FAILED,
    TOOL_FOR_ONE,
    TOOL_NOT_IN_ECO,
    TOOL_RATE_LIMITED,
    TOOL_TIMED_OUT,
    tool_answer,
)
from bot.tomlfile import TomlError, dotted, locate
from bot.tools.mcp import McpConnection, McpDown
from bot.tools.python import (
    CommonContext,
    PythonTool,
    Reminders,
    ToolContext,
    ToolLoadError,
    load_tool,
)
from memory.clock import Clock

__all__ = ["Limits", "Sender", "ToolOutcome", "Toolbox"]

log = logging.getLogger(__name__)

RATE_WINDOW = timedelta(minutes=1)
MCP_SEPARATOR = "__"  # the model calls a server's tool SERVER__TOOL


@dataclass(slots=True, frozen=True)
class Sender:
    """Whom a turn's tool calls act for: everyone whose words the turn answers, since any of
    them may have asked for a call (bot.turn.settle makes it)."""

    speakers: tuple[str, ...]  # their ids, each once (a person's, a persona's, a chat's)
    # Every one of them is an admin of the chat (bot/events.py ChatEvent.admin), not in a DM.
    admin: bool = False
    # The one person they all are, for whom a tool that acts for a person acts; "" when the
    # turn answers several speakers, or one who is no one in particular.
    person: str = ""

    @classmethod
    def of(cls, user_id: str, *, admin: bool = False) -> Sender:
        """One person's turn."""
        return cls((user_id,), admin, user_id)


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
        """What the persona may offer this turn now: eco mode keeps the cheap tools only,
        admin-only tools are for admins, tools acting for a person for a turn of one person.
        A server not started (or down) shows its allowed tools with an open schema: calling
        one says the server is not there."""
        kit = self._kits.get(persona.key, _Kit())
        offered = [
            tool.tool
            for tool, limits in kit.python.values()
            if self._may(limits, sender, personal=tool.personal) is None
        ]
        for server, (conn, limits) in kit.servers.items():
            if self._may(limits, sender, personal=False) is not None:
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

    def asks_admins(self, persona: Persona) -> bool:
        """Whether one of the persona's tools is for admins only: then an adapter tells
        whether the sender of a group message is an admin (`ChatEvent.admin`)."""
        kit = self._kits.get(persona.key, _Kit())
        limits = [*kit.python.values(), *kit.servers.values()]
        return any(limit.admin_only for _, limit in limits)

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
        """Run one of the persona's tools for the turn's `sender`, in the conversation's
        scope; None when `name` is not one of this box's tools for the persona."""
        kit = self._kits.get(persona.key)
        if kit is None:
            return None
        started = time.perf_counter()
        python = kit.python.get(name)
        if python is not None:
            tool, limits = python
            refusal = self._refusal(limits, sender, persona, name, personal=tool.personal)
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
            # An MCP server is never told who asked: it acts for no one in particular.
            refusal = self._refusal(limits, sender, persona, name, personal=False)
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

    def _refusal(
        self, limits: Limits, sender: Sender, persona: Persona, name: str, *, personal: bool
    ) -> str | None:
        return self._may(limits, sender, personal=personal) or self._rate(
            limits, sender, persona, name
        )

    def _may(self, limits: Limits, sender: Sender, *, personal: bool) -> str | None:
        if self.eco_mode and not limits.cheap:
            return TOOL_NOT_IN_ECO
        if limits.admin_only and not sender.admin:
            return TOOL_ADMINS_ONLY
        if personal and not sender.person:
            return TOOL_FOR_ONE
        return None

    def _rate(self, limits: Limits, sender: Sender, persona: Persona, name: str) -> str | None:
        """Within the rate of each speaker (any of them may have asked), and counted for
        each; refused for all when one of them is at it."""
        if limits.rate_per_minute == 0:
            return None
        now = self.clock.now()
        if len(self._calls) > 4096:  # forget senders with no call in the window
            for key in [k for k, q in self._calls.items() if not q or q[-1] <= now - RATE_WINDOW]:
                del self._calls[key]
        queues = [
            self._calls.setdefault((persona.key, name, speaker), deque())
            for speaker in sender.speakers or ("",)  # (no one known: one rate for them all)
        ]
        for calls in queues:
            while calls and calls[0] <= now - RATE_WINDOW:
                calls.popleft()
        if any(len(calls) >= limits.rate_per_minute for calls in queues):
            return TOOL_RATE_LIMITED.format(count=limits.rate_per_minute)
        for calls in queues:
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
        context: CommonContext
        if tool.personal:  # (the gates let it run for one person only)
            context = ToolContext(
                scope=scope,
                persona=persona.key,
                language=persona.identity.language,
                clock=self.clock,
                tz=self.tz,
                rng=self.rng,
                user_id=sender.person,
                admin=sender.admin,
                reminders=self._reminders(scope, sender.person) if self._reminders else None,
            )
        else:
            context = CommonContext(
                scope, persona.key, persona.identity.language, self.clock, self.tz, self.rng
            )
        try:
            async with asyncio.timeout(limits.timeout):
                answer = await tool.function(context, **checked)
        except TimeoutError:
            return ToolOutcome(TOOL_TIMED_OUT, "timeout")
        except Exception as e:  # a host's tool may fail in any way; the turn goes on
            log.warning("tool %s for %s raised %s", tool.name, persona.key, type(e).__name__)
            return ToolOutcome(TOOL_FAILED, "error")
        return ToolOutcome(tool_answer(str(answer), limits.max_output_chars), "ok")

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
        return ToolOutcome(tool_answer(text, limits.max_output_chars), "error" if failed else "ok")

    async def close(self) -> None:
        """Stop every MCP server (each within its grace), whatever the others do."""
        conns = [c for kit in self._kits.values() for c, _ in kit.servers.values()]
        await asyncio.gather(*(c.close() for c in conns), return_exceptions=True)


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
