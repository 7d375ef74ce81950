"""What a persona file says of its own tools: `[[custom_tools]]` (Python functions and their
limits) and `[[mcp_servers]]`, validated as the rest of the file is (bot/tomlfile.py); the
tools themselves are bot/tools's. Kept apart from bot/persona/file.py, which holds them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points

from bot.config import ENV_NAME

__all__ = [
    "BUILTIN_TOOLS",
    "TOOL_ENTRY_POINTS",
    "CustomTool",
    "McpServer",
    "check_tools",
    "tool_entry_points",
]

# The tools the engine answers itself (bot/tools/builtin.py); web_search is left out in eco mode. A
# persona's other tools come from the `kizuna.tools` entry points and its own tables
# (bot/tools).
BUILTIN_TOOLS = ("recall_memory", "web_search", "translate")
TOOL_ENTRY_POINTS = "kizuna.tools"
# What a model may call a tool: OpenAI's rule for function names.
TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
MODULE_PATH = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


@dataclass(slots=True)
class CustomTool:
    """A Python tool the persona may call, and its limits (bot/tools)."""

    name: str  # what the model calls it; the `kizuna.tools` entry point of that name by default
    module: str = ""  # "package.module:function" (an async function) instead of an entry point
    timeout: float = 10.0  # seconds a call may take before it is given up
    max_output_chars: int = 2000  # of its answer, what the model sees
    cheap: bool = False  # still offered in eco mode
    admin_only: bool = False  # offered only to a chat's admins (never in a private chat)
    rate_per_minute: int = 10  # calls one user may make a minute; 0: no limit

    def __post_init__(self) -> None:
        if not TOOL_NAME.fullmatch(self.name) or self.name in BUILTIN_TOOLS:
            raise ValueError(
                f"name {self.name!r} is not a tool name: letters, digits, _ and -, "
                "and not a built-in tool's"
            )
        if self.module and not MODULE_PATH.fullmatch(self.module):
            raise ValueError(f'module {self.module!r} is not "package.module:function"')
        _check_limits(self.timeout, self.max_output_chars, self.rate_per_minute)


@dataclass(slots=True)
class McpServer:
    """An MCP server whose tools the persona may call (bot/tools/mcp.py): a command run
    over stdio, or a streamable HTTP address."""

    name: str  # its tools reach the model as NAME__TOOL
    tools: list[str]  # the server's tools the persona may call, by the server's names
    command: str = ""  # the program that starts it, spoken to over stdio
    args: list[str] = field(default_factory=list)  # the command's arguments
    env: list[str] = field(default_factory=list)  # environment variables passed on, by name
    url: str = ""  # a streamable HTTP server instead of a command
    timeout: float = 15.0  # seconds to start, or to answer one call
    max_output_chars: int = 2000  # of an answer, what the model sees
    cheap: bool = False  # its tools still offered in eco mode
    admin_only: bool = False  # its tools offered only to a chat's admins
    rate_per_minute: int = 10  # calls one user may make a minute, per tool; 0: no limit

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z0-9-]{1,24}", self.name):
            raise ValueError(f"name {self.name!r} must be 1-24 letters, digits or -")
        if bool(self.command) == bool(self.url):
            raise ValueError("command must be given, or a url instead (one of them)")
        if self.url and not self.url.startswith(("https://", "http://")):
            raise ValueError(f"url must start with https:// or http://, got {self.url[:60]!r}")
        for i, tool in enumerate(self.tools):
            if not TOOL_NAME.fullmatch(f"{self.name}__{tool}"):
                raise ValueError(f"tools[{i}] {tool!r} is not a tool name a model can call")
        for i, name in enumerate(self.env):
            if not ENV_NAME.fullmatch(name):
                raise ValueError(f"env[{i}] {name!r} is not an environment variable's name")
        _check_limits(self.timeout, self.max_output_chars, self.rate_per_minute)


def _check_limits(timeout: float, max_output_chars: int, rate_per_minute: int) -> None:
    if not 0 < timeout <= 600:
        raise ValueError("timeout must be more than 0 and at most 600 seconds")
    if not 100 <= max_output_chars <= 100_000:
        raise ValueError("max_output_chars must be between 100 and 100000")
    if rate_per_minute < 0:
        raise ValueError("rate_per_minute must be 0 (no limit) or more")


def tool_entry_points() -> dict[str, str]:
    """The installed tools (`kizuna.tools` entry points): name -> "module:function"."""
    return {ep.name: ep.value for ep in entry_points(group=TOOL_ENTRY_POINTS)}


def check_tools(
    tools: Sequence[str], custom_tools: Sequence[CustomTool], mcp_servers: Sequence[McpServer]
) -> None:
    """A persona's tools are known and its tables' names unique; ValueError names the key."""
    custom = [t.name for t in custom_tools]
    for i, name in enumerate(custom):
        if name in custom[:i]:
            raise ValueError(f"custom_tools[{i}].name {name!r} is used by an earlier tool")
    # Installed tools are looked up only for names that need them.
    wanted = [t.name for t in custom_tools if not t.module]
    wanted += [n for n in tools if n not in BUILTIN_TOOLS and n not in custom]
    installed = tool_entry_points() if wanted else {}
    for i, tool in enumerate(custom_tools):
        if not tool.module and tool.name not in installed:
            raise ValueError(
                f"custom_tools[{i}].name {tool.name!r} is no installed tool: give its module"
            )
    known = {*BUILTIN_TOOLS, *custom, *installed}
    for i, name in enumerate(tools):
        if name not in known:
            raise ValueError(
                f"tools[{i}] {name!r} is no tool here (known: {', '.join(sorted(known))}; "
                "declare others in [[custom_tools]])"
            )
    servers = [s.name for s in mcp_servers]
    for i, server in enumerate(servers):
        if server in servers[:i]:
            raise ValueError(f"mcp_servers[{i}].name {server!r} is used by an earlier server")
