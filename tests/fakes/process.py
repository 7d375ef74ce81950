"""Running `kizuna` as a real subprocess in tests: a free port for its web client, its
stderr read line by line, and the start of `kizuna run` up to the line saying it is up."""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["ROOT", "free_port", "lines_until", "start_run"]

ROOT = Path(__file__).resolve().parents[2]
LINE_WAIT = 30.0  # seconds for each line: generous; a start takes about two


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def lines_until(stream: asyncio.StreamReader, *wanted: str) -> list[str]:
    """Lines read from `stream` until each of `wanted` has appeared in one."""
    seen: list[str] = []
    missing = set(wanted)
    while missing:
        line = (await asyncio.wait_for(stream.readline(), LINE_WAIT)).decode()
        assert line, f"kizuna ended early: {''.join(seen)}"
        seen.append(line)
        missing -= {w for w in missing if w in line}
    return seen


async def start_run(
    config: Path, env: Mapping[str, str], *options: str, stdout: int = asyncio.subprocess.PIPE
) -> asyncio.subprocess.Process:
    """`kizuna run --config CONFIG [OPTIONS]` (from the repository, as `python -m`), with
    its stderr piped (and stdout, unless told otherwise)."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "adapters.command.cli",
        "run",
        "--config",
        str(config),
        *options,
        cwd=ROOT,
        env=dict(env),
        stdout=stdout,
        stderr=asyncio.subprocess.PIPE,
    )
