"""Kizuna's runtime: configuration, events, the engine and its sessions, prompts and models."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("kizuna")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

__all__ = ["__version__"]
