"""A pytest plugin: no fake secret (tests/fakes/secrets.py) may appear in any log record of
the whole run, nor in anything a subprocess the tests start writes to stdout or stderr.

A handler on the root logger at DEBUG sees every record of every logger, libraries' too (httpx
logs each request's URL, and a Telegram URL carries the bot token), but aiosqlite's DEBUG
(each SQL statement, twice: the scan's main cost, and never a secret). Python subprocesses load
tests/fakes/subprocess_site/sitecustomize.py, which copies their output into a folder of this
session. At the end, any leak fails the run with a report naming the test and the logger (or
the subprocess); the secret itself is named, never printed."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.secrets import FAKE_SECRETS

__all__ = ["Leak", "SecretScan", "leaks_in", "scan_output"]

SITE = Path(__file__).with_name("subprocess_site")
OUTPUT_ENV = "KIZUNA_TEST_OUTPUT"


@dataclass(slots=True, frozen=True)
class Leak:
    test: str
    where: str  # "logger NAME" or "subprocess ARGV"
    secret: str  # the secret's name
    line: str  # the line with every secret replaced by its name

    def __str__(self) -> str:
        return f"{self.test}: {self.secret} in {self.where}: {self.line[:300]}"


def leaks_in(text: str, secrets: Mapping[str, str] = FAKE_SECRETS) -> list[str]:
    """The names of the secrets `text` holds."""
    return [name for name, value in secrets.items() if value in text]


def _masked(text: str, secrets: Mapping[str, str] = FAKE_SECRETS) -> str:
    for name, value in secrets.items():
        text = text.replace(value, f"<{name}>")
    return text


class SecretScan(logging.Handler):
    """Looks at every record it is given; keeps only those holding a secret."""

    def __init__(self, secrets: Mapping[str, str] = FAKE_SECRETS) -> None:
        super().__init__(logging.DEBUG)
        self.secrets = dict(secrets)
        self.test = "(outside any test)"
        self.leaks: list[Leak] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception:  # a record whose arguments do not fit its message: scan both
            text = f"{record.msg} {record.args}"
        if record.exc_text:  # what every handler prints for the traceback, once set
            text += "\n" + record.exc_text
        elif record.exc_info:
            text += "\n" + logging.Formatter().formatException(record.exc_info)
        if record.stack_info:
            text += "\n" + record.stack_info
        for name in leaks_in(text, self.secrets):
            line = next((li for li in text.splitlines() if self.secrets[name] in li), text)
            self.leaks.append(Leak(self.test, f"logger {record.name!r}", name, _masked(line)))


def scan_output(folder: Path, secrets: Mapping[str, str] = FAKE_SECRETS) -> list[Leak]:
    """Leaks in the subprocess output copied into `folder` (first line: the test, second:
    the command)."""
    found: list[Leak] = []
    for file in sorted(folder.glob("*.out")):
        test, _, rest = file.read_text(encoding="utf-8", errors="replace").partition("\n")
        command, _, output = rest.partition("\n")
        for line in output.splitlines():
            for name in leaks_in(line, secrets):
                where = f"subprocess {_masked(command)[:120]!r}"
                found.append(Leak(test.removesuffix(" (call)"), where, name, _masked(line)))
    return found


WORKER_LEAKS = "kizuna_secret_leaks"  # xdist's workeroutput key


def _report(leaks: Iterable[Leak]) -> list[str]:
    return [str(leak) for leak in leaks]


class _Plugin:
    def __init__(self) -> None:
        self.scan = SecretScan()
        self.folder = Path(tempfile.mkdtemp(prefix="kizuna-secret-scan-"))
        self.saved_env = {k: os.environ.get(k) for k in (OUTPUT_ENV, "PYTHONPATH")}
        self.saved_level = logging.getLogger().level
        self.saved_sqlite = logging.NOTSET
        self.leaks: list[str] = []  # reported, this process's and (xdist) its workers'

    def start(self) -> None:
        root = logging.getLogger()
        root.addHandler(self.scan)
        root.setLevel(logging.DEBUG)
        # aiosqlite's DEBUG lines, two for every SQL statement with its parameters, are most
        # of the scan's cost and never hold a token or key: its INFO and up are still seen.
        self.saved_sqlite = logging.getLogger("aiosqlite").level
        logging.getLogger("aiosqlite").setLevel(logging.INFO)
        os.environ[OUTPUT_ENV] = str(self.folder)
        paths = [str(SITE), *filter(None, [os.environ.get("PYTHONPATH")])]
        os.environ["PYTHONPATH"] = os.pathsep.join(paths)

    def stop(self) -> None:
        root = logging.getLogger()
        root.removeHandler(self.scan)
        root.setLevel(self.saved_level)
        logging.getLogger("aiosqlite").setLevel(self.saved_sqlite)
        for key, value in self.saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self.scan.test = nodeid

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        """The product's scrubbing (bot/redact.py) is process-wide: what one test's adapter
        or `kizuna` run hid stays hidden. Each test starts without it, so each is judged by
        what the product hid in that test alone."""
        factory = logging.getLogRecordFactory()
        yield
        logging.setLogRecordFactory(factory)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.stop()
        self.leaks += _report([*self.scan.leaks, *scan_output(self.folder)])
        shutil.rmtree(self.folder, ignore_errors=True)
        output = getattr(session.config, "workeroutput", None)
        if output is not None:  # an xdist worker: its controller reports them, and fails
            output[WORKER_LEAKS] = self.leaks
        elif self.leaks:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """(xdist, in the controller) What a worker found, before the session finishes."""
        self.leaks.extend(getattr(node, "workeroutput", {}).get(WORKER_LEAKS, []))

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.leaks:
            return
        terminalreporter.section("fake secrets leaked", sep="!", red=True, bold=True)
        for line in self.leaks:
            terminalreporter.line(line, red=True)
        terminalreporter.line(f"{len(self.leaks)} leak(s): the run fails.", red=True, bold=True)


def pytest_configure(config: pytest.Config) -> None:
    # The root logger goes down to DEBUG for the scan; reports and caplog keep showing what
    # they showed before (WARNING and up) unless a test or the command line asks for more.
    if config.getoption("log_level", None) is None and not config.getini("log_level"):
        config.option.log_level = "WARNING"
    plugin = _Plugin()
    plugin.start()
    config.pluginmanager.register(plugin, "kizuna-secret-scan")
