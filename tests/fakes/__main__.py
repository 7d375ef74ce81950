"""Both platform fakes as a standalone server, to try `kizuna run` by hand without the internet.

    python -m tests.fakes                      # prints the base_url lines and the token to use
    kizuna run --config my.toml                # in another terminal, with those lines added

Then type lines here; each is said to the bot by user 42, and what the bot sends back is
printed as it arrives:

    discord TEXT            a message in the server's #general that mentions the bot
    discord-dm TEXT         a direct message
    discord /NAME k=v ...   a slash command, e.g. `discord /remember text=my cat is Mochi`
    telegram TEXT           a private chat (commands as typed: `telegram /diary`)
    telegram-group TEXT     a group chat (mention the bot with @pip_bot, or use a command)
    discord-photo PATH      a picture file sent in a direct message (telegram-photo: a photo)
    discord-voice PATH      an audio file sent as a voice message (telegram-voice: a voice note)
    user N                  who speaks from now on (a platform user id)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from pathlib import Path
from typing import Any

from tests.fakes.discord_server import FakeDiscord
from tests.fakes.telegram_server import FakeTelegram

GROUP = -1001


def _options(words: list[str]) -> dict[str, Any]:
    """`k=v` words as slash-command options; a word without `=` continues the last value."""
    options: dict[str, Any] = {}
    last = ""
    for word in words:
        key, eq, value = word.partition("=")
        if eq:
            last = key
            options[key] = value
        elif last:
            options[last] += " " + word
    return options


async def _say(line: str, discord: FakeDiscord, telegram: FakeTelegram, user: list[int]) -> None:
    where, _, text = line.strip().partition(" ")
    if where == "user" and text.strip().isdigit():
        user[0] = int(text)
    elif where == "discord" and text.startswith("/"):
        name, *words = text[1:].split()
        await discord.slash(name, _options(words), user_id=user[0])
    elif where == "discord":
        mention = f"<@{discord.bot_id}> {text}"
        await discord.dispatch_message(discord.channel_id, user[0], mention, mentions_bot=True)
    elif where == "discord-dm":
        await discord.dispatch_message(discord.channel_id + 1, user[0], text, guild=False)
    elif where == "telegram":
        telegram.send_text(user[0], user[0], text)
    elif where == "telegram-group":
        telegram.send_text(GROUP, user[0], text, chat_type="group")
    elif where in ("discord-photo", "telegram-photo", "discord-voice", "telegram-voice"):
        await _file(where, Path(text), discord, telegram, user[0])
    elif line.strip():
        print(
            "? say: discord | discord-dm | telegram | telegram-group TEXT, "
            "discord-photo | telegram-photo | discord-voice | telegram-voice PATH, or user N"
        )


async def _file(
    where: str, path: Path, discord: FakeDiscord, telegram: FakeTelegram, user: int
) -> None:
    """A picture or a recording from `path`, sent privately as `where` says."""
    try:
        content = await asyncio.to_thread(path.read_bytes)
    except OSError as e:
        print(f"? {path}: {e.strerror or e}")
        return
    if where == "telegram-photo":
        telegram.send_photo(user, user, content)
    elif where == "telegram-voice":
        telegram.send_voice(user, user, content)
    else:
        voice = where == "discord-voice"
        kind = "audio/ogg" if voice else "image/jpeg"
        sent = discord.attachment(path.name, content, content_type=kind)
        await discord.dispatch_message(
            discord.channel_id + 1,
            user,
            "",
            guild=False,
            attachments=[sent],
            flags=(1 << 13) if voice else 0,  # IS_VOICE_MESSAGE
        )


async def _show(discord: FakeDiscord, telegram: FakeTelegram) -> None:
    """Print what the bots send, and the reactions they add, as they come."""
    shown_reactions = 0
    while True:
        for queue in (discord.messages, discord.responses):
            while not queue.empty():
                sent = queue.get_nowait()
                name = sent.get("username") or "bot"
                text = sent.get("content") or (sent.get("data") or {}).get("content")
                if text:
                    print(f"[discord] {name}: {text}", flush=True)
                for file, data in (sent.get("_files") or {}).items():  # a reply said aloud
                    print(f"[discord] {name}: file {file}, {len(data)} bytes", flush=True)
        while not discord.reactions.empty():
            print(f"[discord] reacted {discord.reactions.get_nowait()['emoji']}", flush=True)
        for reaction in telegram.reactions[shown_reactions:]:
            emoji = " ".join(r.get("emoji", "") for r in reaction["reaction"])
            print(f"[telegram] reacted {emoji}", flush=True)
        shown_reactions = len(telegram.reactions)
        with contextlib.suppress(TimeoutError):
            for sent in await telegram.next_messages(within=0.1):
                if "voice" in sent:  # a reply said aloud
                    print(f"[telegram] voice note, {len(sent['_bytes'])} bytes", flush=True)
                else:
                    print(f"[telegram] {sent.get('text') or sent.get('document', '')}", flush=True)


async def _main(discord_port: int, telegram_port: int) -> None:
    async with (
        FakeDiscord(port=discord_port) as discord,
        FakeTelegram(port=telegram_port) as telegram,
    ):
        print(
            "Add to each [[bots]] table of your config:\n"
            f'  discord:  base_url = "{discord.api_base}"   (any token will do)\n'
            f'  telegram: base_url = "{telegram.base_url}"   (token: {telegram.token})\n'
            "Then type: discord TEXT | discord-dm TEXT | discord /NAME k=v | telegram TEXT | "
            "telegram-group TEXT | user N",
            flush=True,
        )
        shower = asyncio.create_task(_show(discord, telegram))
        user = [42]
        loop = asyncio.get_running_loop()
        try:
            while line := await loop.run_in_executor(None, sys.stdin.readline):
                try:
                    await _say(line, discord, telegram, user)
                except TimeoutError:
                    print("(no Discord bot is connected yet)", flush=True)
        finally:
            shower.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.fakes", description=__doc__)
    parser.add_argument("--discord-port", type=int, default=8001)
    parser.add_argument("--telegram-port", type=int, default=8002)
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_main(args.discord_port, args.telegram_port))


if __name__ == "__main__":
    main()
