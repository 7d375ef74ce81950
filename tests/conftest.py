"""Shared test setup: loopback fakes, and no proxy between the tests and them."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest

# httpx (openai, python-telegram-bot) honours HTTP_PROXY / ALL_PROXY: keep loopback direct.
os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"

from tests.fakes.openai_server import FakeOpenAI

pytest_plugins = [
    "pytester",  # tests of the secret scan run a pytest of their own
    "tests.fakes.postgres",  # postgres_dsn, open_store (both stores): a real PostgreSQL
    "tests.fakes.secret_scan",  # no fake secret in any log line or subprocess output
]


@pytest.fixture
async def fake_openai() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as fake:
        yield fake
