"""A real PostgreSQL for tests: Debian's server, started once per test session in a temporary
directory on a free port of 127.0.0.1 (trust auth, no fsync), and a fresh database per test.

A pytest plugin (registered in tests/conftest.py): ask for `postgres_dsn`, a new, empty
database dropped after the test. A fixture parametrised over both stores opens each with
`open_store`, which starts the server only for PostgreSQL. Skipped where the server's binaries
are missing, unless KIZUNA_POSTGRES_REQUIRED=1 (CI): then that fails instead. PostgreSQL
refuses to run as root: as root, initdb and the server run as the `postgres` user.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import pytest

from memory.pgstore import PgStore
from memory.store import Store

__all__ = [
    "PostgresServer",
    "fresh_database",
    "open_store",
    "postgres_dsn",
    "postgres_server",
]


@dataclass(frozen=True, slots=True)
class PostgresServer:
    host: str
    port: int

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@{self.host}:{self.port}/{database}"


def _bin_dir() -> Path | None:
    """Where initdb and pg_ctl are: Debian's newest /usr/lib/postgresql/N/bin, else PATH."""
    debian = [Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/pg_ctl")]
    versions = [d for d in debian if d.parent.name.isdigit()]
    if versions:
        return max(versions, key=lambda d: int(d.parent.name))
    pg_ctl, initdb = shutil.which("pg_ctl"), shutil.which("initdb")
    if pg_ctl and initdb and Path(pg_ctl).parent == Path(initdb).parent:
        return Path(pg_ctl).parent
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(command: list[str], as_postgres: bool, cwd: Path) -> None:
    if as_postgres:
        command = ["runuser", "-u", "postgres", "--", *command]
    subprocess.run(command, check=True, capture_output=True, timeout=60, cwd=cwd)


def _stop(bin_dir: Path, data: Path, as_postgres: bool) -> None:
    """Stop the server at once (its data is thrown away); kill it if pg_ctl cannot."""
    try:
        _run(
            [str(bin_dir / "pg_ctl"), "stop", "-w", "-D", str(data), "-m", "immediate"],
            as_postgres,
            data.parent,
        )
    except (OSError, subprocess.SubprocessError):
        pid_file = data / "postmaster.pid"
        if pid_file.exists():
            with contextlib.suppress(ValueError, ProcessLookupError):
                os.kill(int(pid_file.read_text().split()[0]), signal.SIGKILL)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    bin_dir = _bin_dir()
    if bin_dir is None:
        reason = "PostgreSQL not installed (apt-get install postgresql)"
        if os.environ.get("KIZUNA_POSTGRES_REQUIRED") == "1":
            pytest.fail(reason + " and KIZUNA_POSTGRES_REQUIRED=1")
        pytest.skip(reason)
    as_postgres = os.geteuid() == 0
    # Under /tmp as root: a directory the postgres user can reach, wherever TMPDIR points.
    root = Path(tempfile.mkdtemp(prefix="kizuna-pg-", dir="/tmp" if as_postgres else None))
    data = root / "data"
    log = root / "server.log"
    try:
        if as_postgres:
            root.chmod(0o755)  # mkdtemp's 0700 would keep the postgres user out
            shutil.chown(root, "postgres")
        port = _free_port()
        _run(
            [
                str(bin_dir / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
                "--no-sync",
            ],
            as_postgres,
            root,
        )
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories=''"
            " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        _run(
            [
                str(bin_dir / "pg_ctl"),
                "start",
                "-w",
                "-D",
                str(data),
                "-l",
                str(log),
                "-o",
                options,
            ],
            as_postgres,
            root,
        )
    except (OSError, subprocess.SubprocessError) as e:
        detail = (
            e.stderr.decode(errors="replace")
            if isinstance(e, subprocess.CalledProcessError)
            else ""
        )
        server_log = log.read_text(errors="replace") if log.exists() else ""
        if data.exists():
            _stop(bin_dir, data, as_postgres)
        shutil.rmtree(root, ignore_errors=True)
        pytest.fail(f"PostgreSQL did not start: {e}\n{detail}\n{server_log}")
    try:
        yield PostgresServer("127.0.0.1", port)
    finally:
        _stop(bin_dir, data, as_postgres)
        shutil.rmtree(root, ignore_errors=True)


_databases = itertools.count()


@contextlib.asynccontextmanager
async def fresh_database(server: PostgresServer) -> AsyncIterator[str]:
    """The DSN of a new, empty database, dropped on exit (for fixtures that pick a store by
    parameter: they take `postgres_server` with request.getfixturevalue, then this)."""
    name = f"kizuna_test_{os.getpid()}_{next(_databases)}"
    admin = await asyncpg.connect(server.dsn())
    try:
        # FILE_COPY: with fsync off, copying the small template is quicker than WAL-logging it.
        await admin.execute(f"CREATE DATABASE {name} STRATEGY FILE_COPY")
        try:
            yield server.dsn(name)
        finally:
            await admin.execute(f"DROP DATABASE {name} WITH (FORCE)")
    finally:
        await admin.close()


@contextlib.asynccontextmanager
async def open_store(
    kind: str, request: pytest.FixtureRequest, folder: Path
) -> AsyncIterator[Store | PgStore]:
    """A new store of `kind` ("sqlite": in `folder`; "postgres": in a fresh database),
    closed on exit: for fixtures parametrised over both."""
    async with contextlib.AsyncExitStack() as stack:
        opened: Store | PgStore
        if kind == "sqlite":
            opened = await Store.open(folder / "kizuna.sqlite3")
        else:
            server = request.getfixturevalue("postgres_server")
            opened = await PgStore.open(await stack.enter_async_context(fresh_database(server)))
        stack.push_async_callback(opened.close)
        yield opened


@pytest.fixture
async def postgres_dsn(postgres_server: PostgresServer) -> AsyncIterator[str]:
    """The DSN of a new, empty database, dropped after the test."""
    async with fresh_database(postgres_server) as dsn:
        yield dsn
