"""Tools a host adds to a persona without touching Kizuna's code: Python functions (installed
under the `kizuna.tools` entry points, or named by module path in the persona file) and the
tools of MCP servers, offered to the chat model beside the built-in ones (bot/tools/builtin.py).

`python` derives a tool's schema from its signature and checks the model's arguments with
it; `box` runs calls within each tool's limits; `mcp` keeps the servers; `dice` and
`reminder` are the tools Kizuna ships.
"""

from __future__ import annotations

from bot.tools.box import Sender, Toolbox, ToolOutcome
from bot.tools.python import (
    CommonContext,
    PythonTool,
    Reminders,
    ToolContext,
    ToolLoadError,
    load_tool,
)

__all__ = [
    "CommonContext",
    "PythonTool",
    "Reminders",
    "Sender",
    "ToolContext",
    "ToolLoadError",
    "ToolOutcome",
    "Toolbox",
    "load_tool",
]
