"""The secret scan itself (tests/fakes/secret_scan.py): it catches a fake secret in a log
record of any logger and in a subprocess's output, names the test and the logger, never
prints the secret, and fails the run."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.secret_scan import OUTPUT_ENV, SITE, SecretScan, scan_output
from tests.fakes.secrets import FAKE_SECRETS, OPENAI_API_KEY, TELEGRAM_TOKEN


def test_a_secret_in_a_library_record_is_caught_with_its_test_and_logger() -> None:
    scan = SecretScan()
    scan.test = "tests/x.py::test_y"
    logger = logging.getLogger("httpx.scan-test")
    logger.addHandler(scan)
    logger.propagate = False  # the session's own scan must not see this deliberate leak
    try:
        logger.debug("HTTP Request: POST http://127.0.0.1/bot%s/getMe", TELEGRAM_TOKEN)
        logger.info("nothing secret here")
        try:
            raise RuntimeError(f"refused {OPENAI_API_KEY}")
        except RuntimeError:
            logger.exception("the model failed")
    finally:
        logger.removeHandler(scan)
        logger.propagate = True
    assert [(leak.test, leak.where, leak.secret) for leak in scan.leaks] == [
        ("tests/x.py::test_y", "logger 'httpx.scan-test'", "TELEGRAM_TOKEN"),
        ("tests/x.py::test_y", "logger 'httpx.scan-test'", "OPENAI_API_KEY"),
    ]
    report = "\n".join(str(leak) for leak in scan.leaks)
    assert "bot<TELEGRAM_TOKEN>/getMe" in report
    assert not any(value in report for value in FAKE_SECRETS.values())


def test_a_subprocess_writing_a_secret_is_caught(tmp_path: Path) -> None:
    env = dict(os.environ, **{OUTPUT_ENV: str(tmp_path), "PYTHONPATH": str(SITE)})
    env["PYTEST_CURRENT_TEST"] = "tests/x.py::test_z (call)"
    code = (
        "import logging, sys; logging.basicConfig();"
        f"logging.getLogger('kizuna.child').error('token %s', {TELEGRAM_TOKEN!r});"
        "print('all fine')"
    )
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
    [leak] = scan_output(tmp_path)
    assert (leak.test, leak.secret) == ("tests/x.py::test_z", "TELEGRAM_TOKEN")
    assert leak.where.startswith("subprocess") and "<TELEGRAM_TOKEN>" in leak.line


def test_a_leak_fails_the_whole_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    # The inner run's own subprocess output is its business, not this session's.
    monkeypatch.delenv(OUTPUT_ENV, raising=False)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[2]))
    pytester.makepyfile(
        test_leaky=f"""
        import logging

        def test_leaks():
            logging.getLogger("adapters.leaky").warning("key %s", {OPENAI_API_KEY!r})

        def test_clean():
            logging.getLogger("adapters.leaky").warning("nothing to see")
        """
    )
    result = pytester.runpytest_subprocess("-p", "tests.fakes.secret_scan", "-q")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    output = result.stdout.str()
    assert "2 passed" in output
    assert "test_leaky.py::test_leaks: OPENAI_API_KEY in logger 'adapters.leaky'" in output
    assert "test_clean" not in output.split("fake secrets leaked")[1]
    assert OPENAI_API_KEY not in output + result.stderr.str()
