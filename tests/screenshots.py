"""Regenerate the screenshots of the README and docs/setup-web.md (docs/chat.png,
docs/chat-phone.png, docs/inspector.png) from the browser tests, which take them as they drive
the pages in Chromium:

    python -m tests.screenshots

Needs Debian's chromium and chromedriver (tests/test_web_browser.py); the tests must pass, or
no picture is kept half-made: each is written only where its test reached it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["SHOTS", "main"]

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ("chat.png", "chat-phone.png", "inspector.png")


def main() -> int:
    env = dict(os.environ, KIZUNA_SCREENSHOTS="1", KIZUNA_BROWSER_REQUIRED="1")
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"  # chromedriver is on loopback
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run([*command, "tests/test_web_browser.py"], cwd=ROOT, env=env, check=False)
    if done.returncode == 0:
        print("written: " + ", ".join(f"docs/{name}" for name in SHOTS))
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
