"""What every caller of an OpenAI-compatible server needs from the openai SDK's errors: whether
a failure is worth retrying, a one-line description of it, and the API key kept out of it.

It lives in memory/, the lowest layer, so the embedders here and the chat models in bot/llm
share one copy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import openai

__all__ = ["describe_error", "is_retryable", "redact"]

SNIPPET = 200  # characters of a server's error message kept in a description


def is_retryable(exc: BaseException) -> bool:
    """Transient failures, as the openai SDK itself judges them: the server's x-should-retry
    when it says; else 408, 409, 429 (but not an exhausted quota, which waiting won't fix),
    5xx, timeouts and network errors. Also a body that is not JSON at all (the SDK does not
    retry those): cut short by a server or proxy failing mid-reply, it is as passing as a
    dropped connection. A JSON body of the wrong shape is not: that server speaks another
    dialect."""
    if isinstance(exc, openai.APIConnectionError | TimeoutError | json.JSONDecodeError):
        return True  # (APIConnectionError includes APITimeoutError)
    if not isinstance(exc, openai.APIStatusError):
        return False
    should = exc.response.headers.get("x-should-retry", "").lower()
    if should in ("true", "false"):
        return should == "true"
    if exc.status_code == 429:
        return exc.code != "insufficient_quota"
    return exc.status_code in (408, 409) or exc.status_code >= 500


def describe_error(exc: BaseException, timeout: float) -> str:
    """A failed request in a few words: "timed out after 30s", "HTTP 500: <the server's
    message>", "malformed response (KeyError)"..."""
    if isinstance(exc, openai.APITimeoutError | TimeoutError):
        return f"timed out after {timeout:g}s"
    if isinstance(exc, openai.APIConnectionError):
        return "could not connect"
    if isinstance(exc, openai.APIStatusError):
        detail = ""
        body = exc.body
        if isinstance(body, Mapping) and isinstance(body.get("message"), str):
            detail = body["message"]
        elif isinstance(body, str):
            detail = body
        detail = " ".join(detail.split())[:SNIPPET]
        return f"HTTP {exc.status_code}" + (f": {detail}" if detail else "")
    if isinstance(
        exc,
        openai.APIResponseValidationError | ValueError | TypeError | AttributeError | KeyError,
    ):
        # a body that is not JSON, or JSON not shaped like the answer asked for
        return f"malformed response ({type(exc).__name__})"
    return f"request failed ({type(exc).__name__})"


def redact(text: str, client: openai.AsyncOpenAI) -> str:
    """`text` without the client's API key (servers sometimes repeat it in errors)."""
    key = getattr(client, "api_key", None)
    if isinstance(key, str) and key:
        text = text.replace(key, "***")
    return text
