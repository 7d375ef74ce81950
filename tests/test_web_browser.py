"""The web client in a real browser: Debian's Chromium, driven by Selenium through chromedriver.

The server runs in a thread of its own, on its own event loop (Selenium blocks), over a test
engine speaking for the shipped persona Monikai (with her SVG sprites; the server's default) and
the Dungeon Master through a scripted model. Each test talks as a different user, so the tests
share one server and one browser.

Skipped without /usr/bin/chromium and /usr/bin/chromedriver, unless KIZUNA_BROWSER_REQUIRED=1.
With KIZUNA_SCREENSHOTS=1 the tests also write docs/chat.png, docs/chat-phone.png and
docs/inspector.png: `python -m tests.screenshots` runs them so.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Coroutine, Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.select import Select
from selenium.webdriver.support.ui import WebDriverWait

from adapters.web.server import WebServer
from bot.chat_model import Message
from bot.conversation.recollect import Recollector
from bot.persona.file import load_persona
from bot.prompts.pictures import DESCRIBE_TASK
from memory.records import ArchiveWrite, EncodingWrite, NewIntention
from tests.fakes.factories import Bot, make_event, make_picture, open_bot
from tests.fakes.models import ScriptedChatModel

pytestmark = pytest.mark.browser

# chromedriver is reached over loopback HTTP: never through a proxy.
os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
SCREENSHOTS = os.environ.get("KIZUNA_SCREENSHOTS") == "1"
PERSONA = "monikai"
# Served after Monikai, though before her alphabetically: the page opens on the server's first.
OTHER = "dungeon_master"
HOSTED = [PERSONA, OTHER]
# One way to write a date on the pages: ISO, local time.
ISO_MINUTE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d")
REPLY = (
    "Hello! It's lovely to see you again. Shall we put the kettle on and talk about books "
    "until it gets dark?"
)
XSS = '<img src=x onerror="window.__xss=1"><script>window.__xss=1</script>'
SHORT_REPLY = "Always."
XSS_REPLY = "Did you just hand me <script>window.__xss=1</script>? Cheeky."
T = TypeVar("T")


def answer(messages: Sequence[Message]) -> str:
    """Monikai's scripted reply (happy, long enough to watch her speak)."""
    last = messages[-1].content if messages else ""
    if messages and messages[0].content.startswith(DESCRIBE_TASK):
        return "An orange sunset over the sea."
    if "<script>" in last:
        return f"[SURPRISED] {XSS_REPLY}"
    if "quick:" in last:  # for tests that only need an answer, not to watch it typed out
        return f"[HAPPY] {SHORT_REPLY}"
    return f"[HAPPY] {REPLY}"


def need_browser() -> None:
    """Skip without Debian's Chromium and its driver (fail, if KIZUNA_BROWSER_REQUIRED=1)."""
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        reason = f"browser tests need Debian's chromium and chromedriver; missing: {missing}"
        if os.environ.get("KIZUNA_BROWSER_REQUIRED") == "1":
            pytest.fail(reason)
        pytest.skip(reason)


@dataclass(slots=True)
class Served:
    url: str
    bot: Bot
    loop: asyncio.AbstractEventLoop
    server: WebServer

    async def restart(self) -> None:
        """Stop the server (dropping every socket) and listen again on the same port."""
        port = self.server.port
        await self.server.close()
        self.server = WebServer(
            self.bot.engine, self.bot.services, self.bot.store, self.bot.bank, HOSTED, port=port
        )
        await self.server.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the server's loop (the store is bound to it) and wait for it."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=15)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    need_browser()  # no server started for nothing
    folder = tmp_path_factory.mktemp("web")
    ready = threading.Event()
    box: dict[str, Any] = {}

    async def main() -> None:
        personas = {key: load_persona(ROOT / "personas" / f"{key}.toml") for key in HOSTED}
        bot = await open_bot(
            folder / "kizuna.sqlite3", personas, model=ScriptedChatModel(default=answer)
        )
        served = Served(
            "",
            bot,
            asyncio.get_running_loop(),
            WebServer(bot.engine, bot.services, bot.store, bot.bank, HOSTED, port=0),
        )
        try:
            await served.server.start()
            served.url = served.server.url
            stop = asyncio.Event()
            box.update(served=served, stop=stop)
            ready.set()
            await stop.wait()
        finally:
            await served.server.close()
            await bot.close()

    def thread() -> None:
        try:
            asyncio.run(main())
        except BaseException as e:  # shown by the fixture, not lost in the thread
            box["error"] = e
            ready.set()

    worker = threading.Thread(target=thread, name="kizuna-web", daemon=True)
    worker.start()
    assert ready.wait(30), "the web server did not start"
    if "error" in box:
        raise box["error"]
    served: Served = box["served"]
    try:
        yield served
    finally:
        served.loop.call_soon_threadsafe(box["stop"].set)
        worker.join(15)
    if "error" in box:
        raise box["error"]


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    need_browser()
    profile = tempfile.mkdtemp(prefix="kizuna-chromium-")
    options = Options()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,900",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(argument)
    # Console errors are collected: a script or style the CSP refused shows up there.
    options.set_capability("goog:loggingPrefs", {"browser": "SEVERE"})
    # A fixed chromedriver: Selenium Manager never looks for (or downloads) one.
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def page(browser: webdriver.Chrome) -> Iterator[webdriver.Chrome]:
    """The browser at desktop size; the test fails on any console error (CSP refusals too)."""
    browser.set_window_size(1280, 900)
    console(browser)  # what earlier tests left
    yield browser
    assert not console(browser)


def console(driver: webdriver.Chrome) -> list[str]:
    """The console's errors since last asked, but for network noise that is no fault of the
    page: a socket is refused while the server restarts."""
    entries: list[dict[str, Any]] = driver.get_log("browser")  # type: ignore[no-untyped-call]
    noise = ("WebSocket connection to",)
    return [e["message"] for e in entries if not any(n in e["message"] for n in noise)]


def wait(driver: webdriver.Chrome, timeout: float = 10, poll: float = 0.05) -> WebDriverWait[Any]:
    # A row found in one poll may be re-rendered before it is read: look again next poll.
    return WebDriverWait(
        driver, timeout, poll_frequency=poll, ignored_exceptions=(StaleElementReferenceException,)
    )


def shot(driver: webdriver.Chrome, name: str) -> None:
    if SCREENSHOTS:
        DOCS.mkdir(exist_ok=True)
        assert driver.save_screenshot(str(DOCS / name))


def join(driver: webdriver.Chrome, url: str, user: str) -> None:
    driver.get(url + "/")
    wait(driver).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#persona option"))
    Select(driver.find_element(By.ID, "persona")).select_by_value(PERSONA)
    name = driver.find_element(By.ID, "user")
    name.clear()
    name.send_keys(user)
    driver.find_element(By.ID, "join").click()
    wait(driver).until(lambda d: d.find_element(By.ID, "text").is_enabled())


def signatures(driver: webdriver.Chrome) -> list[str]:
    return [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#log .msg.persona .who")]


def say(driver: webdriver.Chrome, text: str) -> WebElement:
    """Send `text` with Enter; the persona's message once fully revealed."""
    before = len(driver.find_elements(By.CSS_SELECTOR, "#log .msg.persona"))
    box = driver.find_element(By.ID, "text")
    box.send_keys(text)
    box.send_keys(Keys.ENTER)
    wait(driver).until(
        lambda d: len(d.find_elements(By.CSS_SELECTOR, '#log .msg.persona[data-done="1"]')) > before
    )
    return driver.find_elements(By.CSS_SELECTOR, "#log .msg.persona")[-1]


def test_chat_reply_is_typed_out_while_the_sprite_speaks(
    served: Served, page: webdriver.Chrome
) -> None:
    join(page, served.url, "bea")
    sprite = page.find_element(By.ID, "sprite")
    wait(page).until(lambda d: sprite.get_attribute("data-emotion") == "NEUTRAL")
    assert "speaking" not in (sprite.get_attribute("src") or "")

    box = page.find_element(By.ID, "text")
    box.send_keys("Hello there!")
    box.send_keys(Keys.SHIFT, Keys.ENTER)  # a new line, not a send
    box.send_keys("How are you?")
    assert not page.find_elements(By.CSS_SELECTOR, "#log .msg.user")
    box.send_keys(Keys.ENTER)
    mine = wait(page).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#log .msg.user"))
    assert "Hello there!\nHow are you?" in mine[0].text

    # While the reply is typed out, she speaks: the speaking picture of her new emotion.
    seen: dict[str, str] = {}

    def speaking(d: webdriver.Chrome) -> bool:
        if sprite.get_attribute("data-state") != "speaking":
            return False
        seen["src"] = sprite.get_attribute("src") or ""
        seen["partial"] = d.find_elements(By.CSS_SELECTOR, "#log .msg.persona")[-1].text
        return True

    wait(page, poll=0.02).until(speaking)
    assert seen["src"].endswith(f"/sprite/{PERSONA}/HAPPY?speaking=1")
    assert len(seen["partial"]) < len(REPLY)  # caught mid-reveal

    done = wait(page).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, '#log .msg.persona[data-done="1"]')
    )
    wait(page).until(lambda d: sprite.get_attribute("data-state") == "resting")
    assert REPLY in done[-1].text
    assert sprite.get_attribute("data-emotion") == "HAPPY"
    assert (sprite.get_attribute("src") or "").endswith(f"/sprite/{PERSONA}/HAPPY")
    assert page.find_element(By.ID, "text").is_enabled()
    assert page.execute_script("return arguments[0].naturalWidth", sprite) > 0  # a real picture

    # A command gets a note, not a reply.
    box.send_keys("/remember Bea likes her tea strong enough to stand a spoon in", Keys.ENTER)
    note = wait(page).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#log .msg.note"))
    assert note[0].text.strip()
    wait(page).until(lambda d: d.find_element(By.ID, "text").is_enabled())
    shot(page, "chat.png")

    live = signatures(page)
    assert live == ["Monikai"]  # her name, as the history signs her below

    # A reload joins the conversation again by itself, as bea: nothing is lost.
    page.refresh()
    texts: list[str] = wait(page).until(
        lambda d: [e.text for e in d.find_elements(By.CSS_SELECTOR, "#log .msg")] or False
    )
    assert page.find_element(By.ID, "user").get_attribute("value") == "bea"
    assert any("How are you?" in t for t in texts)
    assert any(REPLY in t for t in texts)
    assert signatures(page) == live
    assert page.find_element(By.ID, "sprite").get_attribute("data-emotion") == "HAPPY"
    wait(page).until(lambda d: d.find_element(By.ID, "text").is_enabled())


def test_untrusted_text_stays_text(served: Served, page: webdriver.Chrome) -> None:
    join(page, served.url, "cat")
    reply = say(page, XSS)
    mine = page.find_elements(By.CSS_SELECTOR, "#log .msg.user")[-1]
    assert XSS in mine.text
    assert XSS_REPLY in reply.text
    assert page.find_element(By.ID, "sprite").get_attribute("data-emotion") == "SURPRISED"
    assert page.execute_script("return window.__xss") is None
    assert not page.find_elements(By.CSS_SELECTOR, 'img[src="x"]')
    assert not page.find_elements(By.CSS_SELECTOR, "#log script, #log img")


def test_page_reconnects_and_shows_the_conversation_again(
    served: Served, page: webdriver.Chrome
) -> None:
    join(page, served.url, "eve")
    say(page, "quick: Remember me?")
    # Mark what is on the page now: after the reconnect the history replaces it.
    page.execute_script("document.querySelectorAll('#log .msg').forEach(m => m.dataset.old = 1)")
    served.run(served.restart())
    wait(page, timeout=15).until(
        lambda d: (
            not d.find_elements(By.CSS_SELECTOR, "#log .msg[data-old]")
            and len(d.find_elements(By.CSS_SELECTOR, "#log .msg")) == 2
            and d.find_element(By.ID, "text").is_enabled()
        )
    )
    texts = [e.text for e in page.find_elements(By.CSS_SELECTOR, "#log .msg")]
    assert "Remember me?" in texts[0] and SHORT_REPLY in texts[1]
    assert page.find_element(By.ID, "status").text == ""
    reply = say(page, "quick: Still there?")  # the new socket carries the conversation on
    assert SHORT_REPLY in reply.text


def open_inspector(driver: webdriver.Chrome, url: str, scope: str) -> None:
    """The inspector on Monikai's `scope`, whatever persona this browser last used."""
    driver.get(url + "/inspect")
    wait(driver).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#i-scope option"))
    picker = Select(driver.find_element(By.ID, "i-persona"))
    if picker.first_selected_option.get_attribute("value") != PERSONA:
        picker.select_by_value(PERSONA)
    wait(driver).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, f'#i-scope option[value="{scope}"]')
    )
    Select(driver.find_element(By.ID, "i-scope")).select_by_value(scope)


def header_widths(driver: webdriver.Chrome) -> list[float]:
    return [th.rect["width"] for th in driver.find_elements(By.CSS_SELECTOR, "#memories-head th")]


def remember_ann(served: Served) -> tuple[str, dict[str, int]]:
    """Ann's memories (one recalled once), diary page and profile, as encoding leaves them."""
    bot = served.bot
    scope = Recollector.scope(PERSONA, "console:dm:ann")
    now = bot.clock.now()

    async def write() -> dict[str, int]:
        ids = {}
        for key, text, days, importance, category in (
            (
                "tea",
                "Ann drinks tea strong enough to stand a spoon in.",
                9,
                2,
                "personal_daily",
            ),
            ("lisbon", "Ann's sister is moving to Lisbon in the spring.", 6, 3, "social_emotional"),
            ("script", "Ann typed <script>window.__xss=1</script> to test me.", 3, 1, "special"),
            ("exam", "Ann has a statistics exam on Friday and is nervous.", 2, 2, "work_study"),
        ):
            ids[key] = await bot.bank.remember(
                scope,
                text,
                when=now - timedelta(days=days),
                speaker="Ann",
                importance=importance,
                category=category,
            )
        await bot.bank.reinforce(scope, [ids["lisbon"]], now=now - timedelta(days=3))
        # A diary page and a profile, written the way encoding writes them (an archived
        # conversation of another persona carries them, so no session of Monikai changes).
        at = now - timedelta(days=1)
        conversation = await bot.store.archive_conversation(
            ArchiveWrite(
                "someone-else",
                "console:dm:ann",
                started_at=at,
                ended_at=at,
                reason="idle",
                turns=[],
                snapshot={},
            )
        )
        await bot.store.commit_encoding(
            EncodingWrite(
                conversation_id=conversation,
                scope=scope,
                at=at,
                memories=[],
                sibling_links=[],
                merges=[],
                diary=(at.date(), "Ann came by after class. <b>We</b> talked about Lisbon."),
                profiles=[("ann", "Ann", "Student; loves strong tea; sister moving abroad.")],
                recap="",
                intentions=[
                    NewIntention(
                        scope,
                        "ann",
                        "follow_up",
                        "her statistics exam",
                        "ask how the <i>exam</i> went",
                        now + timedelta(days=2),
                        now + timedelta(days=5),
                        at,
                    )
                ],
            )
        )
        return ids

    return scope, served.run(write())


def test_inspector_lists_plots_and_deletes_memories(served: Served, page: webdriver.Chrome) -> None:
    scope, ids = remember_ann(served)
    page.set_window_size(1280, 1040)  # room for the plot's legend in the screenshot
    open_inspector(page, served.url, scope)
    # The page's conversation is the console's: named so for people, not as the scope is.
    option = Select(page.find_element(By.ID, "i-scope")).first_selected_option
    assert option.text == "private chat with ann (console or web page) · 4 memories"
    assert option.get_attribute("title") == scope
    rows = wait(page).until(
        lambda d: (
            d.find_elements(By.CSS_SELECTOR, f'#memories tr[data-id="{ids["exam"]}"]')
            and d.find_elements(By.CSS_SELECTOR, "#memories tr[data-id]")
        )
    )
    assert {r.get_attribute("data-id") for r in rows} == {str(i) for i in ids.values()}

    # Memories are text: a <script> in one is shown, not run.
    script_row = page.find_element(By.CSS_SELECTOR, f'#memories tr[data-id="{ids["script"]}"]')
    assert "<script>window.__xss=1</script>" in script_row.text
    assert page.execute_script("return window.__xss") is None

    # The recalled memory: one recall listed, its curve drawn with the recall marked.
    lisbon = page.find_element(By.CSS_SELECTOR, f'#memories tr[data-id="{ids["lisbon"]}"]')
    assert "Lisbon" in lisbon.text
    lisbon.find_elements(By.TAG_NAME, "td")[1].click()
    series = wait(page).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#plot path.series"))
    assert len(series) == 1
    assert (series[0].get_attribute("d") or "").count("L") > 10
    assert page.find_elements(By.CSS_SELECTOR, "#plot .recall")
    assert page.find_elements(By.CSS_SELECTOR, "#plot path.projection")
    assert "selected" in (lisbon.get_attribute("class") or "")
    # A second memory is plotted beside it, in another colour.
    page.find_element(
        By.CSS_SELECTOR, f'#memories tr[data-id="{ids["tea"]}"] input[type="checkbox"]'
    ).click()
    wait(page).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#plot path.series")) == 2)
    colours = {
        p.get_attribute("stroke") for p in page.find_elements(By.CSS_SELECTOR, "#plot path.series")
    }
    assert len(colours) == 2

    # The diary and the profile, as text.
    day = (served.bot.clock.now() - timedelta(days=1)).date().isoformat()
    wait(page).until(lambda d: d.find_elements(By.CSS_SELECTOR, f'#diary-days [data-day="{day}"]'))
    assert "<b>We</b> talked about Lisbon." in page.find_element(By.ID, "diary-page").text
    assert "loves strong tea" in page.find_element(By.ID, "profile").text
    # What Monikai means to bring up, for whom, and when: as text too.
    wait(page).until(lambda d: "statistics exam" in d.find_element(By.ID, "intentions").text)
    brought = page.find_element(By.ID, "intentions").text
    assert "follow-up · Ann" in brought and "ask how the <i>exam</i> went" in brought
    assert ISO_MINUTE.search(brought)
    # Every date one way: ISO, local time.
    assert ISO_MINUTE.search(page.find_element(By.ID, "profile").text)
    assert ISO_MINUTE.fullmatch((lisbon.get_attribute("title") or "").removeprefix("created "))
    ticks = [t.text for t in page.find_elements(By.CSS_SELECTOR, "#plot text")]
    assert sum(bool(re.fullmatch(r"\d{4}-\d\d-\d\d", t)) for t in ticks) == 5, ticks
    shot(page, "inspector.png")
    columns = header_widths(page)

    # Searching narrows the table to what matches.
    page.find_element(By.ID, "i-search").send_keys("statistics exam")
    wait(page).until(
        lambda d: (
            (first := d.find_elements(By.CSS_SELECTOR, "#memories tr[data-id]"))
            and first[0].get_attribute("data-id") == str(ids["exam"])
        )
    )
    assert header_widths(page) == columns  # the columns stay put as the rows change
    page.find_element(By.ID, "i-search").send_keys(Keys.CONTROL, "a")
    page.find_element(By.ID, "i-search").send_keys("zqxj")
    wait(page).until(lambda d: "No memories match." in d.find_element(By.ID, "memories").text)
    assert header_widths(page) == columns
    page.find_element(By.ID, "i-search").send_keys(Keys.CONTROL, "a")
    page.find_element(By.ID, "i-search").send_keys(Keys.BACKSPACE)  # typed away: "input"
    wait(page).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#memories tr[data-id]")) == 4)

    # Delete asks first; then the row goes, and the memory is gone from the bank. (Both
    # searches above re-render the table: the button is looked up again until one holds.)
    delete = f'#memories tr[data-id="{ids["tea"]}"] .delete'
    wait(page).until(lambda d: d.find_element(By.CSS_SELECTOR, delete).click() or True)
    alert = wait(page).until(lambda d: d.switch_to.alert)
    assert "stand a spoon" in alert.text
    alert.accept()
    wait(page).until(
        lambda d: not d.find_elements(By.CSS_SELECTOR, f'#memories tr[data-id="{ids["tea"]}"]')
    )
    assert served.run(served.bot.bank.get(scope, [ids["tea"]])) == []
    assert served.run(served.bot.bank.count(scope)) == 3
    # Its curve left the plot with it.
    assert len(page.find_elements(By.CSS_SELECTOR, "#plot path.series")) == 1
    status = page.find_element(By.ID, "i-status")
    assert status.text == "Memory deleted."

    # The notice was about that conversation: it goes with a switch to another persona, whose
    # empty profile says so.
    Select(page.find_element(By.ID, "i-persona")).select_by_value(OTHER)
    wait(page).until(lambda d: d.find_element(By.ID, "profile").text.startswith("No profile yet."))
    assert status.text == ""


def fits_the_width(driver: webdriver.Chrome) -> None:
    """Nothing on the page scrolls sideways: not the page, not a box inside it."""
    width = driver.execute_script("return window.innerWidth")
    assert width <= 400
    assert driver.execute_script("return document.documentElement.scrollWidth") <= width
    sideways = driver.execute_script(
        "return [...document.querySelectorAll('body *')].filter(e =>"
        " ['auto', 'scroll'].includes(getComputedStyle(e).overflowX)"
        " && e.scrollWidth > e.clientWidth + 1).map(e => e.id || e.className)"
    )
    assert sideways == []


def test_phone_screen_fits(served: Served, page: webdriver.Chrome) -> None:
    page.set_window_size(390, 844)
    join(page, served.url, "dee")
    say(page, "Hi from my phone")
    fits_the_width(page)
    width = page.execute_script("return window.innerWidth")
    for element in ("sprite", "log", "text", "send"):
        box = page.find_element(By.ID, element)
        assert box.is_displayed(), element
        rect = box.rect
        assert rect["x"] >= 0 and rect["x"] + rect["width"] <= width + 0.5, element
        assert rect["height"] > 0, element
    # The face sits above the conversation.
    sprite, log = page.find_element(By.ID, "sprite").rect, page.find_element(By.ID, "log").rect
    assert sprite["y"] + sprite["height"] <= log["y"]
    shot(page, "chat-phone.png")


def test_pages_load_nothing_from_elsewhere() -> None:
    """The pages pull nothing from elsewhere: every script, style and image is this server's."""
    static = ROOT / "adapters" / "web" / "static"
    for name in ("chat.html", "inspect.html", "chat.js", "inspect.js", "page.js", "style.css"):
        text = (static / name).read_text(encoding="utf-8")
        assert "http://" not in text.replace("http://www.w3.org/2000/svg", ""), name
        assert "https://" not in text, name
        assert "innerHTML" not in text, name
        assert " style=" not in text and "<style" not in text, name
        assert " onclick=" not in text.lower() and "<script>" not in text, name


def test_a_document_is_sent_from_the_page(
    served: Served, page: webdriver.Chrome, tmp_path: Path
) -> None:
    join(page, served.url, "dora")
    notes = tmp_path / "trip.txt"
    notes.write_text("The ferry to Bergen leaves at 7:40 from pier 3.", encoding="utf-8")
    page.find_element(By.ID, "file").send_keys(str(notes))
    wait(page).until(
        lambda d: any(
            "I've read trip.txt" in m.text and m.get_attribute("data-done") == "1"
            for m in d.find_elements(By.CSS_SELECTOR, "#log .msg.persona")
        )
    )
    mine = page.find_elements(By.CSS_SELECTOR, "#log .msg.user")[-1]
    assert "[sent a document: trip.txt]" in mine.text
    assert page.find_element(By.ID, "text").is_enabled()  # ready for questions about it


def test_a_picture_is_sent_from_the_page(
    served: Served, page: webdriver.Chrome, tmp_path: Path
) -> None:
    join(page, served.url, "dora")
    picture = tmp_path / "sunset.png"
    picture.write_bytes(make_picture(800, 600, (240, 140, 30)))
    page.find_element(By.ID, "file").send_keys(str(picture))
    mine = page.find_elements(By.CSS_SELECTOR, "#log .msg.user")[-1]
    assert "[sent a picture: sunset.png]" in mine.text
    event = make_event(platform="web", user_id="dora", persona=HOSTED[0])
    wait(page).until(
        lambda d: any(
            t.text == "[picture sunset.png, seen: An orange sunset over the sea.]"
            for t in served.run(served.bot.engine.session(event)).turns
        )
    )


def test_the_page_opens_on_the_default_persona_then_the_last_used(
    served: Served, page: webdriver.Chrome
) -> None:
    # A browser that has never been here: its storage cleared where no page script runs.
    page.get(served.url + "/static/favicon.svg")
    page.execute_script("localStorage.clear()")
    page.get(served.url + "/")
    wait(page).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#persona option"))
    picker = Select(page.find_element(By.ID, "persona"))
    assert [o.get_attribute("value") for o in picker.options] == HOSTED  # not alphabetical
    assert picker.first_selected_option.get_attribute("value") == PERSONA
    assert not page.find_element(By.ID, "text").is_enabled()  # no name yet: nobody joined
    icon = page.find_element(By.CSS_SELECTOR, "link[rel=icon]").get_attribute("href") or ""
    assert icon.endswith("/static/favicon.svg")
    # The persona and name last joined with are this browser's next time, joined at once.
    Select(page.find_element(By.ID, "persona")).select_by_value(OTHER)
    page.find_element(By.ID, "user").send_keys("hal", Keys.ENTER)
    wait(page).until(lambda d: d.find_element(By.ID, "text").is_enabled())
    page.get(served.url + "/")
    wait(page).until(lambda d: d.find_element(By.ID, "text").is_enabled())
    chosen = Select(page.find_element(By.ID, "persona")).first_selected_option
    assert chosen.get_attribute("value") == OTHER
    assert page.find_element(By.ID, "who").text.startswith("The Dungeon Master")
    assert page.find_element(By.ID, "user").get_attribute("value") == "hal"


def test_help_without_the_slash_lists_the_commands(served: Served, page: webdriver.Chrome) -> None:
    join(page, served.url, "ivy")
    calls = len(served.bot.model.calls)
    box = page.find_element(By.ID, "text")
    for typed in ("help", "/help"):
        box.send_keys(typed, Keys.ENTER)
        wait(page).until(lambda d: d.find_element(By.ID, "text").is_enabled())
    notes = [n.text for n in page.find_elements(By.CSS_SELECTOR, "#log .msg.note")]
    assert len(notes) == 2 and notes[0] == notes[1]
    assert "/remember" in notes[0] and "/memories" in notes[0]
    assert not page.find_elements(By.CSS_SELECTOR, "#log .msg.persona")
    assert len(served.bot.model.calls) == calls  # not said to the persona


def test_a_pressed_button_shows_its_label_as_the_users_words(
    served: Served, page: webdriver.Chrome
) -> None:
    join(page, served.url, "jem")
    page.find_element(By.ID, "text").send_keys("/wipe", Keys.ENTER)
    wait(page).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#log .choices button"))
    [cancel] = [
        b for b in page.find_elements(By.CSS_SELECTOR, "#log .choices button") if b.text == "Cancel"
    ]
    cancel.click()
    wait(page).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#log .msg.note")) == 2)
    said = [m.text for m in page.find_elements(By.CSS_SELECTOR, "#log .msg.user .body")]
    assert said == ["/wipe", "Cancel"]  # not the command the button sends


def test_a_message_too_long_stays_in_the_box_with_the_reason(
    served: Served, page: webdriver.Chrome
) -> None:
    join(page, served.url, "jo")
    box = page.find_element(By.ID, "text")
    hint = page.find_element(By.ID, "hint")
    limit = served.server.max_message_chars
    # Over the limit the page does not send it: the text stays, the reason shows under it.
    long = "tea " * (limit // 4) + "!"
    page.execute_script(
        "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'))",
        box,
        long,
    )
    box.send_keys(Keys.END, Keys.ENTER)
    assert hint.is_displayed()
    assert hint.text == (
        f"Messages here are limited to {limit} characters: shorten this one and send it again."
        f" ({limit + 1}/{limit})"
    )
    assert box.get_attribute("value") == long
    assert not page.find_elements(By.CSS_SELECTOR, "#log .msg.user")
    box.send_keys(Keys.BACKSPACE)  # now it fits: the reason goes
    wait(page).until(lambda d: not hint.is_displayed())

    # Should the server refuse it all the same (here: the page's frames are padded past its
    # limit), the message is taken back from the log and its text put back in the box.
    page.execute_script(
        "const send = WebSocket.prototype.send;"
        "window.__send = send;"
        "WebSocket.prototype.send = function (data) {"
        "  const said = JSON.parse(data); said.text += 'x'.repeat(arguments[0]);"
        "  return send.call(this, JSON.stringify(said)); }".replace("arguments[0]", str(limit))
    )
    box.clear()
    box.send_keys("quick: a short one", Keys.ENTER)
    wait(page).until(lambda d: hint.is_displayed())
    assert hint.text.startswith(f"Messages here are limited to {limit} characters")
    assert box.get_attribute("value") == "quick: a short one"
    assert not page.find_elements(By.CSS_SELECTOR, "#log .msg.user")
    assert box.is_enabled()
    page.execute_script("WebSocket.prototype.send = window.__send")
    box.send_keys(Keys.ENTER)
    wait(page).until(lambda d: d.find_elements(By.CSS_SELECTOR, '#log .msg.persona[data-done="1"]'))
    assert [m.text for m in page.find_elements(By.CSS_SELECTOR, "#log .msg.user .body")] == [
        "quick: a short one"
    ]
    assert box.get_attribute("value") == "" and not hint.is_displayed()


def test_inspector_fits_a_phone(served: Served, page: webdriver.Chrome) -> None:
    bot = served.bot
    scope = Recollector.scope(PERSONA, "console:dm:gus")
    long_word = "Supercalifragilisticexpialidocious" * 3  # nowhere to break: must still fit

    async def write() -> None:
        for text in (f"Gus says {long_word} when he is happy.", "Gus walks his dog at six."):
            await bot.bank.remember(scope, text, speaker="Gus", category="personal_daily")

    served.run(write())
    page.set_window_size(390, 844)
    open_inspector(page, served.url, scope)
    wait(page).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#memories tr[data-id]")) == 2)
    fits_the_width(page)
    # Each memory is a card whose cells say what they are; nothing is cut off at the side.
    width = page.execute_script("return window.innerWidth")
    for row in page.find_elements(By.CSS_SELECTOR, "#memories tr[data-id]"):
        box = row.rect
        assert box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5
    assert page.find_element(By.ID, "memories-head").rect["height"] <= 1  # for screen readers
    recalls = page.find_element(By.CSS_SELECTOR, "#memories tr[data-id] td.recalls")
    assert recalls.get_attribute("data-label") == "Recalls"
    # A conversation with memories but no profile yet says so, rather than a blank card.
    profile = page.find_element(By.ID, "profile").text
    assert profile == "No profile yet. It is written when a conversation ends."
