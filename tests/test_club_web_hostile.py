"""The club app under attack, in a real headless Chromium: the PIN's lockout on the page,
and a page of another site that gets the browser to the app by DNS rebinding (Chromium's
resolver told that the attacker's name is 127.0.0.1)."""

import json

import pytest
from club_helpers import Served, chromium, quit_chromium, wait_until

from tools.club.app import create_app
from tools.logger.store import Store

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
PIN = "2468"


def _app(tmp_path):
    db = str(tmp_path / "games.db")
    Store(db).close()
    return create_app(db, pin=PIN)


def _body(driver):
    return driver.execute_script("return document.body.innerText")


def test_the_lockout_is_shown_on_the_page_and_counted(tmp_path):
    from selenium.webdriver.common.by import By

    from tools.club.store import ClubStore

    app = _app(tmp_path)
    served = Served(app)
    driver = chromium()
    try:
        db = app.state.db_path
        store = ClubStore(db)  # a name to correct: the Players page shows its form
        store.db.execute("INSERT INTO club_players (name, created, fold) VALUES ('Ana', 0, "
                         "'ana')")
        store.close()
        for attempt in range(4):
            driver.get(served.url("/players"))
            form = driver.find_element(By.CSS_SELECTOR, "form.rename-form")
            form.find_element(By.NAME, "new").send_keys("Anna")
            form.find_element(By.NAME, "pin").send_keys("1111")
            form.submit()
            assert wait_until(lambda: "wrong PIN" in _body(driver)), attempt
        driver.get(served.url("/players"))
        assert wait_until(lambda: "writing is locked for 1 min" in _body(driver))
        banner = driver.find_element(By.ID, "lockout")
        assert banner.is_displayed()
        form = driver.find_element(By.CSS_SELECTOR, "form.rename-form")
        form.find_element(By.NAME, "new").send_keys("Anna")
        form.find_element(By.NAME, "pin").send_keys(PIN)  # even the right PIN waits
        form.submit()
        assert wait_until(lambda: "Too many wrong PINs" in _body(driver))
        driver.get(served.url("/status.json"))
        status = json.loads(driver.find_element(By.TAG_NAME, "body").text)
        assert status["pin"]["wrong"] == 4 and status["pin"]["clients_locked"] == 1
        assert status["refusals"]["locked"] == 1 and status["refusals"]["wrong_pin"] == 4
        assert ClubStore(db).players() == ["Ana"]
    finally:
        quit_chromium(driver)
        served.stop()


def test_a_page_on_a_rebound_name_cannot_reach_the_app(tmp_path, hostile_report):
    """evil.test resolves to 127.0.0.1 in this browser, as an attacker's DNS would answer
    once the page is loaded: the browser then takes http://evil.test:PORT for one origin
    with the attacker's page, so same-origin rules allow it to read the app's pages and
    post its forms. The Host header still says evil.test: refused."""
    from selenium.webdriver.common.by import By

    app = _app(tmp_path)
    served = Served(app)
    driver = chromium(flags=["--host-resolver-rules=MAP evil.test 127.0.0.1"])
    try:
        driver.get("http://evil.test:%d/api/tables" % served.port)
        text = driver.find_element(By.TAG_NAME, "body").text
        assert "does not answer to the name" in text and "tables" not in text
        # the attacker's script on that origin: fetch() reads what the app answers
        got = driver.execute_async_script(
            "const done = arguments[0]; fetch('/status.json').then(r => r.text()"
            ".then(t => done([r.status, t]))).catch(e => done([0, String(e)]));")
        assert got[0] == 421 and "refusals" not in got[1]
        driver.get(served.url("/status.json"))  # the app itself, by its address: fine
        status = json.loads(driver.find_element(By.TAG_NAME, "body").text)
        refused = status["refusals"]["host"]
        assert refused >= 2  # the page, the script's fetch (and the browser's favicon)
        hostile_report("club: DNS rebinding (Chromium)", refused=refused, read=0)
    finally:
        quit_chromium(driver)
        served.stop()
