"""The fake secrets every test uses for tokens, API keys and passwords: one place, so the
secret scan (tests/fakes/secret_scan.py) knows what must never show in a log line, an export
or an error message. Each looks like the real thing, so a pattern that redacts real secrets
redacts these too."""

from __future__ import annotations

__all__ = [
    "DISCORD_TOKEN",
    "FAKE_SECRETS",
    "INSPECTOR_TOKEN",
    "OPENAI_API_KEY",
    "OTHER_DISCORD_TOKEN",
    "OTHER_TELEGRAM_TOKEN",
    "POSTGRES_PASSWORD",
    "TELEGRAM_TOKEN",
    "WEBHOOK_SECRET",
    "ZHIPU_API_KEY",
]

DISCORD_TOKEN = "MTAxNzE2.fake-DISCORD-secret.Gq0123456789abcdefXYZ"
OTHER_DISCORD_TOKEN = "MTAxNzE3.fake-DISCORD-secret.Gq9876543210fedcbaZYX"  # a second bot
TELEGRAM_TOKEN = "987654321:AAfakeTELEGRAMsecret0123456789abcde"
OTHER_TELEGRAM_TOKEN = "987654322:AAfakeTELEGRAMsecret9876543210edcba"  # a second bot
OPENAI_API_KEY = "sk-fake-OPENAI-secret-0123456789abcdef"
ZHIPU_API_KEY = "fakezhipuid.fake-ZHIPU-secret-0123"
INSPECTOR_TOKEN = "fake-INSPECTOR-secret-0123456789"
WEBHOOK_SECRET = "fake-WEBHOOK-secret-0123456789"
POSTGRES_PASSWORD = "fake-POSTGRES-secret-0123456789"

# Name -> value, for the scan and its report (which names a secret, never prints it).
FAKE_SECRETS: dict[str, str] = {
    "DISCORD_TOKEN": DISCORD_TOKEN,
    "OTHER_DISCORD_TOKEN": OTHER_DISCORD_TOKEN,
    "TELEGRAM_TOKEN": TELEGRAM_TOKEN,
    "OTHER_TELEGRAM_TOKEN": OTHER_TELEGRAM_TOKEN,
    "OPENAI_API_KEY": OPENAI_API_KEY,
    "ZHIPU_API_KEY": ZHIPU_API_KEY,
    "INSPECTOR_TOKEN": INSPECTOR_TOKEN,
    "WEBHOOK_SECRET": WEBHOOK_SECRET,
    "POSTGRES_PASSWORD": POSTGRES_PASSWORD,
}
