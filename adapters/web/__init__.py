"""The local web client: a chat page and a memory inspector (adapters/web/server.py)."""

from adapters.web.server import WebServer, WebSetupError

__all__ = ["WebServer", "WebSetupError"]
