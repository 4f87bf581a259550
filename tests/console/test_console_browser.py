"""The console in a real browser (issue 17): headless Chromium, driven by Selenium, against
`tutor-memory serve --console-listen` on a seeded data directory. Each test checks what a person
sees; the screenshots go to $CONSOLE_SCREENSHOTS when set (`make console-screenshots` writes the
README's, in bench/results/console/)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlencode

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.expected_conditions import staleness_of
from selenium.webdriver.support.wait import WebDriverWait

from tests.helpers.harness import TOKEN_A, TOKEN_B, start_harness, stop_harness, write_tokens_file
from tests.helpers.seeded import B_SECRET, B_STUDENT, STUDENT, seed
from tests.helpers.server_process import START_TIMEOUT, ServerProcess
from tutor_memory.app.config import ServerConfig
from tutor_memory.models.embedder import UseOnnxEmbedder

CHAIN = {"student": STUDENT, "subject": "biology"}
# The browser window: wide enough for the inspector's two columns.
WINDOW = (1440, 1100)
# The tallest screenshot: a long page is cut there (the inspector lists hundreds of candidates).
SHOT_MAX_HEIGHT = 2200
# Seconds the browser waits for an element to appear.
IMPLICIT_WAIT = 5.0


class Served(NamedTuple):
    base: str
    database: Path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, embedder: UseOnnxEmbedder) -> Iterator[Served]:
    """The seeded data directory served by a child `tutor-memory serve` with the console; yields
    the console's address."""
    root = tmp_path_factory.mktemp("console")
    tokens = write_tokens_file(root / "tokens.toml")
    config = ServerConfig(listen="127.0.0.1:0", data_dir=root / "data", tokens_file=tokens)

    async def seeded() -> None:
        h = await start_harness(config, embedder)
        try:
            await seed(h)
        finally:
            await stop_harness(h)

    asyncio.run(seeded())
    server = ServerProcess(root / "data", tokens, "--console-listen", "127.0.0.1:0")
    try:
        server.wait_ready()
        yield Served(f"http://127.0.0.1:{_console_port(server)}", config.database_path)
    finally:
        assert server.terminate() == 0


def _console_port(server: ServerProcess) -> int:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        for line in list(server.lines):
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("msg") == "console serving":
                return int(entry["port"])
        time.sleep(0.05)
    raise RuntimeError("the console did not start:\n" + "".join(server.lines))


@pytest.fixture
def browser() -> Iterator[WebDriver]:
    binary, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if binary is None or driver is None:
        pytest.fail("headless Chromium is missing: run `make console-tools`")
    options = Options()
    options.binary_location = binary
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    options.add_argument(f"--window-size={WINDOW[0]},{WINDOW[1]}")
    chrome = webdriver.Chrome(options=options, service=Service(executable_path=driver))
    chrome.implicitly_wait(IMPLICIT_WAIT)
    try:
        yield chrome
    finally:
        chrome.quit()


def shoot(browser: WebDriver, name: str, tmp_path: Path) -> None:
    """A screenshot of the whole page (the window grown to the page's height)."""
    folder = Path(os.environ.get("CONSOLE_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(WINDOW[0], min(max(int(height), WINDOW[1]), SHOT_MAX_HEIGHT))
    assert browser.save_screenshot(str(folder / f"{name}.png"))
    browser.set_window_size(*WINDOW)


def sign_in(browser: WebDriver, base: str, token: str) -> None:
    browser.get(base + "/")
    browser.find_element(By.ID, "token").send_keys(token)
    click_through(browser, browser.find_element(By.ID, "signin"))
    assert browser.find_element(By.ID, "viewer").is_displayed()


def click_through(browser: WebDriver, element: WebElement) -> None:
    """Clicks a link or button and waits until the browser has left the page it was on."""
    page = browser.find_element(By.TAG_NAME, "html")
    element.click()
    WebDriverWait(browser, IMPLICIT_WAIT).until(staleness_of(page))


def visit(browser: WebDriver, base: str, page: str, **params: str) -> None:
    browser.get(f"{base}/{page}?{urlencode({**CHAIN, **params})}")


def test_a_visitor_without_a_token_sees_only_the_sign_in_page(
    served: Served, browser: WebDriver, tmp_path: Path
) -> None:
    for page in ("timeline", "inspector", "map", "beliefs", "chain"):
        visit(browser, served.base, page, q="osmosis", run="1")
        assert browser.find_element(By.ID, "token").is_displayed()
        assert "Osmosis" not in browser.page_source
    browser.find_element(By.ID, "token").send_keys("tm_wrong")
    click_through(browser, browser.find_element(By.ID, "signin"))
    assert browser.find_element(By.ID, "signin-error").text == "Unknown token."
    shoot(browser, "signin", tmp_path)


def test_the_timeline_shows_days_and_pages_through_them(
    served: Served, browser: WebDriver, tmp_path: Path
) -> None:
    sign_in(browser, served.base, TOKEN_A)
    click_through(browser, browser.find_element(By.CSS_SELECTOR, "a.chain-link"))
    first = [a.get_attribute("id") for a in browser.find_elements(By.CSS_SELECTOR, "article")]
    assert len(first) == 50
    days = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "section.day h2")]
    assert days[0] == "Monday 2026-03-02"
    shoot(browser, "timeline", tmp_path)
    click_through(browser, browser.find_element(By.ID, "next-page"))
    second = [a.get_attribute("id") for a in browser.find_elements(By.CSS_SELECTOR, "article")]
    assert second
    assert not set(first) & set(second)
    click_through(browser, browser.find_element(By.ID, "previous-page"))
    back = [a.get_attribute("id") for a in browser.find_elements(By.CSS_SELECTOR, "article")]
    assert back == first
    assert not browser.find_elements(By.ID, "previous-page")
    # Only checks, by ticking the box.
    browser.find_element(By.CSS_SELECTOR, "input[name=kind][value=check]").click()
    click_through(browser, browser.find_element(By.ID, "filter"))
    kinds = {a.get_attribute("class") for a in browser.find_elements(By.CSS_SELECTOR, "article")}
    assert kinds == {"episode kind-check"}
    outcomes = browser.find_elements(By.CSS_SELECTOR, "article .outcome")
    assert len(outcomes) == 6


def test_the_inspector_shows_the_block_and_every_candidates_reasons(
    served: Served, browser: WebDriver, tmp_path: Path
) -> None:
    sign_in(browser, served.base, TOKEN_A)
    visit(browser, served.base, "inspector")
    question = browser.find_element(By.ID, "question")
    question.send_keys("Is osmosis a kind of diffusion?")
    budget = browser.find_element(By.ID, "budget")
    budget.clear()
    budget.send_keys("400")
    browser.find_element(By.ID, "now").send_keys("2026-03-17T10:00")
    click_through(browser, browser.find_element(By.ID, "build"))
    text = browser.find_element(By.ID, "block-text").text
    assert text.startswith("=== YOUR MEMORY OF THIS STUDENT ===")
    rows = browser.find_elements(By.CSS_SELECTOR, "#reasons tbody tr")
    shown = [r for r in rows if r.get_attribute("class") == "outcome-shown"]
    assert shown
    for row in shown:
        assert row.find_element(By.CSS_SELECTOR, ".summary").text in text
    outcomes = {r.find_element(By.CSS_SELECTOR, "td.outcome b").text for r in rows}
    assert "shown" in outcomes
    assert outcomes & {"collapse", "budget", "filter"}
    sources = " ".join(r.find_element(By.CSS_SELECTOR, "td.sources").text for r in rows)
    assert "lexical" in sources
    assert "dense" in sources
    shoot(browser, "inspector", tmp_path)


def test_the_map_draws_the_course_and_opens_a_concept(
    served: Served, browser: WebDriver, tmp_path: Path
) -> None:
    sign_in(browser, served.base, TOKEN_A)
    visit(browser, served.base, "map")
    names = {n.text for n in browser.find_elements(By.CSS_SELECTOR, "#concept-map a.node text")}
    assert {"Diffusion", "Osmosis", "Mitochondria"} <= names
    assert browser.find_elements(By.CSS_SELECTOR, "#concept-map line.edge")
    order = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#teaching-order li")]
    assert order.index("Diffusion") < order.index("Osmosis")
    osmosis = next(
        n
        for n in browser.find_elements(By.CSS_SELECTOR, "#concept-map a.node")
        if n.find_element(By.TAG_NAME, "text").text == "Osmosis"
    )
    click_through(browser, osmosis.find_element(By.TAG_NAME, "circle"))
    detail = browser.find_element(By.ID, "concept-detail")
    assert detail.find_element(By.TAG_NAME, "h2").text == "Osmosis"
    assert "cells.md" in browser.find_element(By.ID, "provenance").text
    assert "semi-permeable membrane" in browser.find_element(By.ID, "taught").text
    assert "Osmosis" in detail.text
    shoot(browser, "map", tmp_path)


def test_beliefs_show_each_change_and_the_calibration(
    served: Served, browser: WebDriver, tmp_path: Path
) -> None:
    sign_in(browser, served.base, TOKEN_A)
    visit(browser, served.base, "beliefs")
    concepts = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "article.history h3")]
    assert "Osmosis" in concepts
    steps = browser.find_elements(By.CSS_SELECTOR, "article.history li")
    assert len(steps) > len(concepts)  # some concept changed its mind
    assert browser.find_element(By.ID, "ece").text.startswith("ECE ")
    assert "6 checks" in browser.find_element(By.ID, "ece").text
    assert browser.find_elements(By.CSS_SELECTOR, "#calibration-chart circle.bin")
    shoot(browser, "beliefs", tmp_path)


def test_the_chain_page_verifies_and_shows_the_nightly_runs(
    served: Served, browser: WebDriver, tmp_path: Path
) -> None:
    sign_in(browser, served.base, TOKEN_A)
    visit(browser, served.base, "chain")
    assert browser.find_element(By.ID, "verify-status").text.startswith("Verified: all ")
    assert browser.find_element(By.ID, "checkpoint").is_displayed()
    assert "UTC" in browser.find_element(By.ID, "nightly-state").text
    runs = browser.find_elements(By.CSS_SELECTOR, "#nightly-runs tbody tr.run-start")
    assert runs
    assert "episode #" in browser.find_element(By.CSS_SELECTOR, "#nightly-runs tbody").text
    assert "UTC" in runs[0].text
    shoot(browser, "chain", tmp_path)


def test_a_script_in_an_episode_is_shown_as_text(served: Served, browser: WebDriver) -> None:
    sign_in(browser, served.base, TOKEN_A)
    title = browser.title
    visit(browser, served.base, "timeline", **{"from": "2026-03-15"})
    assert (
        "<script>document.title='pwned'</script>" in browser.find_element(By.TAG_NAME, "main").text
    )
    assert browser.title != "pwned"
    assert browser.title.startswith("Timeline")
    assert title != "pwned"


def test_tenant_b_sees_nothing_of_tenant_a_in_the_browser(
    served: Served, browser: WebDriver
) -> None:
    sign_in(browser, served.base, TOKEN_B)
    students = browser.find_element(By.ID, "students").text
    assert B_STUDENT in students
    assert STUDENT not in students.replace(B_STUDENT, "")
    for page in ("timeline", "inspector", "map", "beliefs", "chain"):
        visit(browser, served.base, page, q="osmosis", run="1")
        body = browser.find_element(By.TAG_NAME, "main").text
        assert "Osmosis" not in body, page
        assert "osmosis a kind" not in body.lower(), page
        assert browser.find_elements(By.CSS_SELECTOR, ".empty"), page
    visit(browser, served.base, "timeline", student=B_STUDENT)
    assert B_SECRET in browser.find_element(By.TAG_NAME, "main").text


def test_clicking_through_every_page_changes_nothing_stored(
    served: Served, browser: WebDriver
) -> None:
    before = _dump(served.database)
    sign_in(browser, served.base, TOKEN_A)
    click_through(browser, browser.find_element(By.CSS_SELECTOR, "a.chain-link"))
    for page in ("inspector", "map", "beliefs", "chain", "timeline"):
        click_through(browser, browser.find_element(By.ID, f"nav-{page}"))
        assert browser.find_element(By.TAG_NAME, "h1").is_displayed()
    click_through(browser, browser.find_element(By.ID, "nav-inspector"))
    browser.find_element(By.ID, "question").send_keys("how am I doing?")
    click_through(browser, browser.find_element(By.ID, "build"))
    assert browser.find_element(By.ID, "block-text").text
    click_through(browser, browser.find_element(By.ID, "nav-map"))
    click_through(browser, browser.find_elements(By.CSS_SELECTOR, "#concept-map a.node circle")[0])
    assert browser.find_element(By.ID, "concept-detail").is_displayed()
    click_through(browser, browser.find_element(By.ID, "signout"))
    assert browser.find_element(By.ID, "token").is_displayed()
    assert _dump(served.database) == before


def _dump(database: Path) -> list[str]:
    db = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        return list(db.iterdump())
    finally:
        db.close()
