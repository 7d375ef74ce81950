"""Try a setup before registering any bot: a fake Discord server, a fake Telegram, and a model
that uses tools, all on this machine, with a prompt to speak in them as several people.

    python -m tests.fakes              # prints what to add to kizuna.toml, then waits for lines
    kizuna run                         # in another terminal, once kizuna.toml has those lines

What the bots send is printed as it arrives ("[discord] Miao: ..."), buttons and all. Type:

    user N [NAME]           who speaks from now on: a member's id and name (default 42 Ann)
    discord TEXT            a line in the server's #general; "@bot" in it mentions the bot
    discord-dm TEXT         a direct message to the bot
    discord /NAME k=v ...   a slash command, e.g. `discord /remember text=my cat is Mochi`
    telegram TEXT           a private chat (commands as typed: `telegram /diary`)
    telegram-group TEXT     the group; "@bot" in it mentions the bot, "/cmd" is a command
    press LABEL             press the button LABEL (or the Nth: press 2) under the newest
                            message that had buttons
    discord-photo PATH      a picture sent privately (telegram-photo: a Telegram photo)
    discord-voice PATH      a voice message (telegram-voice: a Telegram voice note)
    help                    this list

Lines without "@bot" in the server or the group are people talking among themselves: a persona
answers them only when they call it by name, reply to it, or by chance (`talkativeness`).
The model (`[models.chat] provider = "playground"`) calls a persona's tool when a message names
it ("dice 2d6"), then says what the tool answered; otherwise it answers as the offline model.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fakes.discord_server import FakeDiscord
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.playground import ToolUsingModel
from tests.fakes.telegram_server import FakeTelegram

GROUP = -1001
# What the model endpoint serves: the chat model, and the hearing and speech tiers' defaults.
MODELS = ("fake-chat", "fake-embedding", "whisper-1", "gpt-4o-mini-tts")
COMMANDS = (
    "user N [NAME] | discord TEXT | discord-dm TEXT | discord /NAME k=v | telegram TEXT | "
    "telegram-group TEXT | press LABEL | discord-photo | telegram-photo | discord-voice | "
    "telegram-voice PATH | help"
)


@dataclass(slots=True)
class Playground:
    """The fakes, who speaks, and the newest message with buttons (to `press`)."""

    discord: FakeDiscord
    telegram: FakeTelegram
    user: int = 42
    name: str = "Ann"

    def __post_init__(self) -> None:
        self.discord.names[self.user] = self.name

    buttons: tuple[str, dict[str, Any]] | None = None
    shown: list[str] = field(default_factory=list)  # what was printed, for the tests


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


async def say(line: str, play: Playground) -> None:
    """Do what one typed line says."""
    discord, telegram = play.discord, play.telegram
    where, _, text = line.strip().partition(" ")
    text = text.strip()
    if where == "user" and text.split(" ")[0].isdigit():
        number, _, name = text.partition(" ")
        play.user, play.name = int(number), name.strip() or f"User{number}"
        play.discord.names[play.user] = play.name
    elif where == "discord" and text.startswith("/"):
        name, *words = text[1:].split()
        await discord.slash(name, _options(words), user_id=play.user)
    elif where == "discord":
        mentions = "@bot" in text
        content = text.replace("@bot", f"<@{discord.bot_id}>")
        await discord.dispatch_message(
            discord.channel_id, play.user, content, mentions_bot=mentions
        )
    elif where == "discord-dm":
        await discord.dispatch_message(discord.channel_id + 1, play.user, text, guild=False)
    elif where == "telegram":
        telegram.send_text(play.user, play.user, text, first_name=play.name)
    elif where == "telegram-group":
        content = text.replace("@bot", f"@{telegram.username}")
        telegram.send_text(GROUP, play.user, content, chat_type="group", first_name=play.name)
    elif where == "press":
        await _press(text, play)
    elif where in ("discord-photo", "telegram-photo", "discord-voice", "telegram-voice"):
        await _file(where, Path(text), play)
    elif where == "help":
        print(__doc__.split("Type:\n", 1)[1].split("\n\n", 1)[0])
    elif line.strip():
        print(f"? say: {COMMANDS}")


async def _press(label: str, play: Playground) -> None:
    if play.buttons is None:
        print("? no message with buttons yet")
        return
    platform, message = play.buttons
    labels = _labels(platform, message)
    if label not in labels and label.isdigit() and 1 <= int(label) <= len(labels):
        label = labels[int(label) - 1]  # "press 2": the second button
    try:
        if platform == "discord":  # (the buttons of a slash command's answer, in the server)
            await play.discord.click(message, label, user_id=play.user)
        else:
            play.telegram.press(message, label, play.user)
    except ValueError:
        print(f"? no button {label!r} there")


def _labels(platform: str, message: dict[str, Any]) -> list[str]:
    """The labels of the buttons under a message the bot sent."""
    if platform == "discord":
        rows = message["_message"].get("components", [])
        return [str(c.get("label")) for row in rows for c in row.get("components", [])]
    rows = (message.get("reply_markup") or {}).get("inline_keyboard") or []
    return [str(b.get("text")) for row in rows for b in row]


async def _file(where: str, path: Path, play: Playground) -> None:
    """A picture or a recording from `path`, sent privately as `where` says."""
    try:
        content = await asyncio.to_thread(path.read_bytes)
    except OSError as e:
        print(f"? {path}: {e.strerror or e}")
        return
    user = play.user
    if where == "telegram-photo":
        play.telegram.send_photo(user, user, content)
    elif where == "telegram-voice":
        play.telegram.send_voice(user, user, content)
    else:
        voice = where == "discord-voice"
        kind = "audio/ogg" if voice else "image/jpeg"
        sent = play.discord.attachment(path.name, content, content_type=kind)
        await play.discord.dispatch_message(
            play.discord.channel_id + 1,
            user,
            "",
            guild=False,
            attachments=[sent],
            flags=(1 << 13) if voice else 0,  # IS_VOICE_MESSAGE
        )


def _print(play: Playground, line: str) -> None:
    play.shown.append(line)
    print(line, flush=True)


async def show(play: Playground) -> None:
    """Print what the bots send, their buttons and the reactions they add, as they come."""
    discord, telegram = play.discord, play.telegram
    shown_reactions = 0
    while True:
        for queue in (discord.messages, discord.responses):
            while not queue.empty():
                sent = queue.get_nowait()
                name = sent.get("username") or "bot"
                data = sent.get("data") or {}
                text = sent.get("content") or data.get("content")
                if text:
                    _print(play, f"[discord] {name}: {text}")
                labels = _labels("discord", sent) if "_message" in sent else []
                if labels:
                    play.buttons = ("discord", sent)
                    _print(play, f"[discord] buttons: {' | '.join(labels)} (press LABEL)")
                for file, content in (sent.get("_files") or {}).items():  # said aloud
                    _print(play, f"[discord] {name}: file {file}, {len(content)} bytes")
        while not discord.reactions.empty():
            _print(play, f"[discord] reacted {discord.reactions.get_nowait()['emoji']}")
        for reaction in telegram.reactions[shown_reactions:]:
            emoji = " ".join(r.get("emoji", "") for r in reaction["reaction"])
            _print(play, f"[telegram] reacted {emoji}")
        shown_reactions = len(telegram.reactions)
        with contextlib.suppress(TimeoutError):
            for sent in await telegram.next_messages(within=0.1):
                where = "group" if sent["chat"]["id"] == GROUP else "private"
                if "voice" in sent:  # a reply said aloud
                    _print(play, f"[telegram {where}] voice note, {len(sent['_bytes'])} bytes")
                else:
                    said = sent.get("text") or sent.get("document", "")
                    _print(play, f"[telegram {where}] {said}")
                labels = _labels("telegram", sent)
                if labels:
                    play.buttons = ("telegram", sent)
                    _print(play, f"[telegram] buttons: {' | '.join(labels)} (press LABEL)")


def setup_lines(discord: FakeDiscord, telegram: FakeTelegram, model: FakeOpenAI) -> str:
    """What to add to kizuna.toml to use the fakes."""
    return (
        "Add to kizuna.toml (`kizuna init` writes the [[bots]] tables), then run `kizuna run`:\n"
        "  in the discord [[bots]] table:   base_url = "
        f'"{discord.api_base}"   (any token will do)\n'
        f'  in the telegram [[bots]] table:  base_url = "{telegram.base_url}"\n'
        f"    and its token variable set to: {telegram.token}\n"
        "  a model that uses tools:\n"
        "    [models.providers.playground]\n"
        '    kind = "openai"\n'
        f'    base_url = "{model.base_url}"\n'
        "    [models.chat]\n"
        '    provider = "playground"\n'
        '    model = "fake-chat"\n'
        f"Then type lines here ({COMMANDS}); `help` says more."
    )


async def _main(discord_port: int, telegram_port: int, model_port: int) -> None:
    async with (
        FakeDiscord(port=discord_port) as discord,
        FakeTelegram(port=telegram_port) as telegram,
        FakeOpenAI(respond=ToolUsingModel(), port=model_port, models=MODELS) as model,
    ):
        telegram.chat(GROUP, "group", "The Tea Room")
        print(setup_lines(discord, telegram, model), flush=True)
        play = Playground(discord, telegram)
        shower = asyncio.create_task(show(play))
        loop = asyncio.get_running_loop()
        try:
            while line := await loop.run_in_executor(None, sys.stdin.readline):
                try:
                    await say(line, play)
                except TimeoutError:
                    print("(no Discord bot is connected yet)", flush=True)
        finally:
            shower.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fakes",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--discord-port", type=int, default=8001)
    parser.add_argument("--telegram-port", type=int, default=8002)
    parser.add_argument("--model-port", type=int, default=8003)
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_main(args.discord_port, args.telegram_port, args.model_port))


if __name__ == "__main__":
    main()
