"""Retrying a flaky async call: exponential backoff with full jitter, honouring Retry-After."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

__all__ = ["MAX_DELAY", "call_with_retries", "retry_after"]

T = TypeVar("T")

MAX_DELAY = 30.0  # seconds: no wait is longer; a server asking for more is not retried

log = logging.getLogger(__name__)


def retry_after(exc: BaseException) -> float | None:
    """The server's wait hint in seconds, if the exception carries an HTTP response with
    `retry-after-ms` or a numeric `retry-after` header (an HTTP date is ignored)."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            value = float(headers.get(name, "")) * scale
        except (TypeError, ValueError):
            continue
        if value >= 0:
            return value
    return None


async def call_with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    attempts: int,
    base_delay: float,
    rng: random.Random,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    retryable: Callable[[BaseException], bool],
) -> T:
    """Await `call()` up to `attempts` times (max_retries + 1), retrying only the exceptions
    `retryable` accepts. Before retry n (0-based) it waits rng.uniform(0, base_delay * 2**n)
    (capped at MAX_DELAY), or the Retry-After hint if longer; a hint over MAX_DELAY ends the
    retries. The last exception propagates."""
    if attempts < 1:
        raise ValueError("attempts must be at least 1")
    n = 0
    while True:
        try:
            return await call()
        except Exception as exc:
            if n + 1 >= attempts or not retryable(exc):
                raise
            delay = rng.uniform(0.0, min(MAX_DELAY, base_delay * 2.0 ** min(n, 60)))
            hint = retry_after(exc)
            if hint is not None:
                if hint > MAX_DELAY:  # the server wants longer than anyone should wait
                    raise
                delay = max(delay, hint)
            log.warning(
                "attempt %d/%d failed (%s); retrying in %.2fs",
                n + 1,
                attempts,
                type(exc).__name__,
                delay,
            )
            await sleep(delay)
            n += 1
