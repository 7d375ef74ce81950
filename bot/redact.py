"""Secrets never reach a log line: every record's message, arguments and traceback are
scrubbed of the secrets in use (tokens, API keys, database passwords) and of Telegram bot
tokens, which python-telegram-bot puts in every request URL that httpx logs.

    redact.install()                         # once, where logging is configured
    redact.hide(token)                       # each secret, where it is taken into use
    print(redact.redact(str(error)))         # text shown outside logging

The scrubbing runs where records are made (the logging record factory), so it covers every
logger and every handler, libraries' included, however the host configured logging. The
secrets to hide are process-wide, as logging itself is: they live on the one installed
`Redactor`.
"""

from __future__ import annotations

import logging
import re
import threading
import traceback
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any

from bot.config import Config

__all__ = [
    "MIN_SECRET",
    "REDACTED",
    "Redactor",
    "failure",
    "hide",
    "install",
    "redact",
    "secrets_in_use",
]

REDACTED = "[redacted]"
MIN_SECRET = 6  # shorter values ("1", "on") are settings, not secrets; hiding them garbles logs
# A Telegram bot token (digits, a colon, 30-odd URL-safe characters), alone or in a URL.
TELEGRAM_TOKEN = re.compile(r"\b\d{5,}:[A-Za-z0-9_-]{30,}")
# The same in a Bot API URL, whatever its length (a self-hosted server's test tokens).
TELEGRAM_URL = re.compile(r"(/bot)\d+:[^/\s\"']+")
# Variables holding secrets by their name, configured or not (DISCORD_TOKEN, OPENAI_API_KEY).
SECRET_NAME = re.compile(r"(TOKEN|API_KEY|SECRET|PASSWORD|PASSWD)$|_KEY$|_DSN$|DATABASE_URL$")
DSN_PASSWORD = re.compile(r"\bpassword\s*=\s*('[^']*'|\S+)", re.IGNORECASE)


class Redactor(logging.Filter):
    """Blanks the secrets it was given, and Telegram tokens, in text and in log records."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._secrets: tuple[str, ...] = ()
        self.hide(secrets)

    def hide(self, secrets: Iterable[str]) -> None:
        fresh = {s.strip() for s in secrets if s and len(s.strip()) >= MIN_SECRET}
        with self._lock:  # longest first: a secret holding another goes whole
            self._secrets = tuple(sorted(set(self._secrets) | fresh, key=len, reverse=True))

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        if ":" in text:
            text = TELEGRAM_URL.sub(rf"\1{REDACTED}", text)
            text = TELEGRAM_TOKEN.sub(REDACTED, text)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        """Scrub the record in place (its message with the arguments put in, its traceback);
        never drops it."""
        try:
            message = record.getMessage()
        except Exception:  # arguments that do not fit the message: keep both, as text
            message = f"{record.msg} {record.args}"
        clean = self.redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            text = logging.Formatter().formatException(record.exc_info)
            clean = self.redact(text)
            if clean != text:  # handlers print exc_text when it is set
                record.exc_text = clean
        elif record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True


def _installed() -> Redactor | None:
    factory = logging.getLogRecordFactory()
    found = getattr(factory, "redactor", None)
    return found if isinstance(found, Redactor) else None


def install(secrets: Iterable[str] = ()) -> Redactor:
    """Scrub every log record from now on (idempotent); returns the Redactor in use."""
    redactor = _installed()
    if redactor is None:
        redactor = Redactor()
        previous = logging.getLogRecordFactory()

        def make_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            redactor.filter(record)
            return record

        make_record.redactor = redactor  # type: ignore[attr-defined]
        logging.setLogRecordFactory(make_record)
    redactor.hide(secrets)
    return redactor


def hide(*secrets: str) -> None:
    """Keep these values out of every log record (installing the scrubbing if need be)."""
    install(secrets)


def redact(text: str) -> str:
    """`text` without the secrets in use, for messages shown outside logging."""
    redactor = _installed()
    return redactor.redact(text) if redactor is not None else Redactor().redact(text)


def failure(error: BaseException, frames: int = 6) -> str:
    """An error for a log line without its message, which may quote what a user typed (a
    name, a query, a file's text): its type and where it was raised, innermost frame first,
    for each error in its chain ("KeyError at commands.py:80 forget < telegram.py:371
    callback")."""
    parts = []
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        stack = traceback.extract_tb(current.__traceback__)[-frames:]
        where = " < ".join(
            f"{'/'.join(frame.filename.rsplit('/', 2)[-2:])}:{frame.lineno} {frame.name}"
            for frame in reversed(stack)
        )
        parts.append(f"{type(current).__qualname__} at {where or '?'}")
        current = current.__cause__ or current.__context__
    return "; from ".join(parts)


def secrets_in_use(config: Config, environ: Mapping[str, str]) -> list[str]:
    """The values of the environment variables the configuration names for secrets (bot
    tokens, webhook secrets, API keys, the inspector's token, the database's connection
    string and its password), and of any variable whose name says it holds one."""
    names = {config.dsn_env, config.web.inspector_token_env, "OPENAI_API_KEY", "ZHIPUAI_API_KEY"}
    names |= {p.api_key_env for p in config.models.providers.values()}
    names |= {b.token_env for b in config.bots} | {b.webhook_secret_env for b in config.bots}
    names |= {name for name in environ if SECRET_NAME.search(name.upper())}
    values = [environ[name] for name in names if name and environ.get(name)]
    return [*values, *(p for v in values for p in _passwords(v))]


def _passwords(value: str) -> list[str]:
    """The password inside a connection string (a URL's, or a `password=` pair's)."""
    found = [m.group(1).strip("'") for m in DSN_PASSWORD.finditer(value)]
    if "://" in value:
        try:
            password = urllib.parse.urlsplit(value.strip()).password
        except ValueError:
            password = None
        if password:
            found += [password, urllib.parse.unquote(password)]
    return found
