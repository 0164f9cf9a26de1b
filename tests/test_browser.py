"""The explorer in a real browser: Debian's Chromium, headless, driven by Selenium through Debian's chromedriver.

A person's path: the home page, a graph, its start, a roll, a decision whose
best move is highlighted, a click on a move; and Can't Stop's advisor: a roll
typed into the form, the board drawn, the best way to play it. The values on
screen are checked against the page's JSON. Screenshots go to the test's folder, or to
``$DICEGRAPH_SCREENSHOTS`` (the README's come from there: ``docs/``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from dicegraph.graphs import get_game
from dicegraph.store.db import open_database
from dicegraph.store.report import game_report
from tests.processes import served

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
BOARD = "2:x,4:3,6:4>6,7:6>8,9:>5,12:x"  # runners in 7, 9 and 6, two columns claimed (1.4 s to build and solve)
_missing = [what for what, there in (("selenium", importlib.util.find_spec("selenium") is not None),
                                     ("flask", importlib.util.find_spec("flask") is not None),
                                     (CHROMIUM, Path(CHROMIUM).exists()), (CHROMEDRIVER, Path(CHROMEDRIVER).exists()))
            if not there]
if _missing:  # CI installs Chromium and its driver (.ci/run) and the test extra: there, a missing one fails
    if os.environ.get("CI"):
        raise RuntimeError(f"CI must test the explorer in a browser; missing: {', '.join(_missing)}")
    pytest.skip(f"the browser tests need {', '.join(_missing)} (apt-get install chromium chromium-driver; "
                "pip install -e '.[test]')", allow_module_level=True)

from selenium import webdriver  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions  # noqa: E402
from selenium.webdriver.support.wait import WebDriverWait  # noqa: E402


@pytest.fixture(scope="module")
def browsed(tmp_path_factory: pytest.TempPathFactory) -> str:
    """URL of a database holding Jackpot (6 cells, graph 1) and a turn of Can't Stop on a board (graph 2), every
    policy evaluated."""
    url = f"sqlite:///{tmp_path_factory.mktemp('browse') / 'browse.db'}"
    engine = open_database(url, create=True)
    game_report(engine, get_game("jackpot"), {"cells": 6})
    game_report(engine, get_game("cant-stop-board"), {"board": BOARD, "objective": "progress", "prune": True})
    engine.dispose()
    return url


@pytest.fixture(scope="module")
def address(browsed: str) -> Iterator[str]:
    """The address of ``dicegraph serve`` over :func:`browsed`'s database."""
    with served(browsed) as found:
        yield found


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,800"):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=CHROMEDRIVER))
    driver.implicitly_wait(5)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the screenshots go."""
    chosen = os.environ.get("DICEGRAPH_SCREENSHOTS")
    folder = Path(chosen) if chosen else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def as_json(url: str) -> dict:
    """Return the JSON of the page at ``url`` (its address plus ``.json``)."""
    path, _, query = url.partition("?")
    with urllib.request.urlopen(f"{path}.json" + (f"?{query}" if query else ""), timeout=10) as answer:
        return json.load(answer)


def follow(browser: webdriver.Chrome, by: str, value: str) -> str:
    """Click the element found by ``by`` and ``value``, wait until the browser has left the page, and return the
    new address (a click that submits a form or follows a link can return before the browser navigates)."""
    before = browser.current_url
    browser.find_element(by, value).click()
    WebDriverWait(browser, 10).until(expected_conditions.url_changes(before))
    WebDriverWait(browser, 10).until(lambda driver: driver.execute_script("return document.readyState") == "complete")
    return browser.current_url


def test_a_person_goes_from_the_home_page_to_a_move_and_sees_its_values(address, browser, shots) -> None:
    browser.get(address + "/")
    assert "Graphs stored" in browser.page_source
    browser.save_screenshot(str(shots / "explorer-home.png"))
    graph = as_json(follow(browser, By.CSS_SELECTOR, "#graphs a[href='/graphs/1']"))
    optimal = next(p for p in graph["policies"] if p["name"] == "optimal")
    rows = {row.find_elements(By.TAG_NAME, "td")[0].text: row.find_elements(By.TAG_NAME, "td")[3].text
            for row in browser.find_elements(By.CSS_SELECTOR, "#policies tr")[1:]}
    assert rows["optimal"] == f"{optimal['value']:.10g}"

    start = as_json(follow(browser, By.ID, "root"))
    assert start["kind"] == "chance"
    roll = next(edge for edge in start["edges"] if edge["label"] == "roll 1-2")
    decision = as_json(follow(browser, By.LINK_TEXT, roll["to_label"]))
    assert decision["key"] == roll["to"] and decision["kind"] == "decision"
    best = browser.find_element(By.CSS_SELECTOR, "#edges tr.best")
    cells = best.find_elements(By.TAG_NAME, "td")
    assert cells[0].text == decision["best"]
    best_edge = next(edge for edge in decision["edges"] if edge["label"] == decision["best"])
    assert f"{best_edge['values']['optimal']:.6g}" in [cell.text for cell in cells]
    browser.save_screenshot(str(shots / "explorer-position.png"))

    worse = next(edge for edge in decision["edges"] if edge["label"] != decision["best"])
    landed = as_json(follow(browser, By.LINK_TEXT, worse["to_label"]))
    assert landed["key"] == worse["to"]
    assert landed["policies"]["optimal"]["value"] == pytest.approx(worse["values"]["optimal"], rel=1e-12)


def test_a_person_asks_the_advisor_how_to_play_a_roll_on_the_board(address, browser, shots) -> None:
    browser.get(address + "/graphs/2")
    follow(browser, By.ID, "advisor")
    browser.find_element(By.ID, "roll").send_keys("1,2,5,6")
    advice = as_json(follow(browser, By.ID, "advise"))["advice"]
    assert browser.find_element(By.ID, "situation").text == advice["situation"]
    assert browser.find_element(By.CSS_SELECTOR, "#picture svg title").get_attribute("textContent").endswith(BOARD)
    best = browser.find_element(By.CSS_SELECTOR, "#alternatives tr.best").find_elements(By.TAG_NAME, "td")
    assert [cell.text for cell in best[:2]] == [advice["decision"], f"{advice['alternatives'][0]['value']:.6f}"]
    browser.save_screenshot(str(shots / "explorer-advice.png"))
    node = as_json(follow(browser, By.ID, "position"))
    assert node["key"] == advice["position"] and node["best"] == advice["decision"]


def test_a_missing_position_offers_a_search_that_finds_it(address, browser) -> None:
    browser.get(address + "/graphs/1/positions/nowhere")
    assert "no position with key 'nowhere'" in browser.find_element(By.ID, "message").text
    box = browser.find_element(By.NAME, "q")
    box.send_keys("roll 1-2")
    follow(browser, By.CSS_SELECTOR, "form button")
    found = browser.find_elements(By.CSS_SELECTOR, "#found a")
    assert found and all("roll 1-2" in link.find_element(By.XPATH, "../..").text for link in found)


def test_the_sql_console_runs_a_statement_typed_in_the_page(address, browser) -> None:
    browser.get(address + "/sql")
    area = browser.find_element(By.NAME, "sql")
    area.send_keys("SELECT graph, key, value FROM positions WHERE graph = 1 AND policy = 'optimal' AND layer = 0")
    follow(browser, By.TAG_NAME, "button")
    links = browser.find_elements(By.CSS_SELECTOR, "#rows a")
    assert [link.text for link in links] == ["0"]
    assert follow(browser, By.CSS_SELECTOR, "#rows a").endswith("/graphs/1/positions/0")


def test_chromium_is_the_systems(browser) -> None:
    """No browser was downloaded: the one driven is Debian's."""
    assert shutil.which("chromium") == CHROMIUM
    assert browser.capabilities["browserName"] in ("chrome", "chromium")


def test_a_person_plays_a_whole_game_by_clicks_and_reads_its_analysis(address, browsed, browser, shots) -> None:
    """Jackpot from the graph's page: hints shown, the best move clicked at each decision until the game is over
    (the dice rolled from the seed in the address), the chart drawn, then the analysis page: the same numbers as
    the analysis of the record through the Python API; playing and analysing wrote nothing."""
    import hashlib

    import dicegraph

    stored = Path(browsed.removeprefix("sqlite:///"))
    before = hashlib.sha256(stored.read_bytes()).hexdigest()
    browser.get(address + "/graphs/1")
    follow(browser, By.ID, "play")
    assert "seed=" in browser.current_url  # the dice's seed is in the address: a reload loses nothing
    follow(browser, By.ID, "hints")
    while not browser.find_elements(By.ID, "over"):
        follow(browser, By.CSS_SELECTOR, "#options tr.best a.option")
    playing = as_json(browser.current_url)
    assert playing["finished"] and all(step["loss"] == 0 for step in playing["analysis"]["steps"]
                                       if step["kind"] == "move")
    WebDriverWait(browser, 10).until(lambda driver: driver.execute_script(
        "return document.getElementById('chart').naturalWidth") > 0)
    browser.save_screenshot(str(shots / "explorer-play.png"))
    follow(browser, By.ID, "analyse")
    expected = dicegraph.open(browsed).analyse(playing["record"])
    assert browser.find_element(By.ID, "start-value").text == f"{expected['start_value']:.6f}"
    assert browser.find_element(By.ID, "outcome").text == f"{expected['outcome']:.6f}"
    assert expected["steps"] == [{key: value for key, value in step.items() if key != "href"}  # the page links them
                                 for step in playing["analysis"]["steps"]]
    WebDriverWait(browser, 10).until(lambda driver: driver.execute_script(
        "return document.getElementById('chart').naturalWidth") > 0)
    assert hashlib.sha256(stored.read_bytes()).hexdigest() == before
