"""The club app under attack, in a real headless Chromium: the PIN's lockout on the page,
and a page of another site that gets the browser to the app by DNS rebinding (Chromium's
resolver told that the attacker's name is 127.0.0.1)."""

import json

import pytest
from club_helpers import Served, chromium, quit_chromium, sim_board_on_broker, wait_until

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


def test_a_club_app_without_keys_says_it_cannot_sign_and_sends_nothing(tmp_path,
                                                                       hostile_report):
    """`python -m tools.club --mqtt ...` without --keys: the real firmware on the simulated
    board plays over a real Mosquitto; the app says at start-up and on the table's page
    that it cannot sign commands, and a new game asked for with the right PIN is refused
    with the reason: nothing reaches the broker's cmd topic, the board plays on."""
    import os
    import signal
    import subprocess
    import sys
    import threading
    import urllib.request

    import paho.mqtt.client as paho
    from selenium.webdriver.common.by import By

    from tools import broker as broker_tool

    why = broker_tool.available()
    if why is not None:
        pytest.skip(str(why))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    users = {"logger": "logger-pw", "t1": "t1-pw", "spy": "spy-pw"}
    acl = broker_tool.acl_text(["t1"]) + "\nuser spy\ntopic read pinboard/#\n"
    key = bytes(range(32))
    with broker_tool.Mosquitto(str(tmp_path / "broker"), users, ("t1",), acl=acl) as mosquitto:
        commands, subscribed = [], threading.Event()
        spy = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id="spy")
        spy.username_pw_set("spy", "spy-pw")
        spy.on_connect = lambda c, *a: c.subscribe("pinboard/+/cmd")
        spy.on_subscribe = lambda *a: subscribed.set()
        spy.on_message = lambda c, u, m: commands.append(m.topic)
        spy.connect("127.0.0.1", mosquitto.port)
        spy.loop_start()
        assert subscribed.wait(10)
        port = broker_tool.free_port()
        club = subprocess.Popen(
            [sys.executable, "-m", "tools.club", "--db", str(tmp_path / "games.db"),
             "--mqtt", "mqtt://logger:logger-pw@127.0.0.1:%d" % mosquitto.port,
             "--listen", "127.0.0.1:%d" % port, "--pin", PIN],
            cwd=root, stderr=subprocess.PIPE, start_new_session=True)
        board = sim_board_on_broker(tmp_path, mosquitto.port, key)
        driver = chromium()
        try:
            def table():
                try:
                    with urllib.request.urlopen(
                            "http://127.0.0.1:%d/api/tables" % port, timeout=5) as r:
                        tables = json.loads(r.read())["tables"]
                except OSError:
                    return None
                return next((t for t in tables if t["label"] == "t1"), None)

            assert wait_until(lambda: (table() or {}).get("state"), timeout=90), table()
            driver.get("http://127.0.0.1:%d/table/%s" % (port, table()["board"]))
            notice = driver.find_element(By.ID, "cannot-command").text
            assert "no command key for board t1" in notice and "--keys" in notice
            form = driver.find_element(By.CSS_SELECTOR, "form.form")
            form.find_element(By.NAME, "pin").send_keys(PIN)
            form.find_element(By.NAME, "replace").click()
            form.submit()
            assert wait_until(lambda: "Nothing was sent to the board" in _body(driver))
            assert "Sent to the board" not in _body(driver)
            shots = table()["state"]["shots"]
            assert wait_until(lambda: table()["state"]["shots"] > shots, timeout=60)
            assert table()["state"]["rules"] == "ddbu"  # the same game, played on
        finally:
            quit_chromium(driver)
            if board.poll() is None:
                board.kill()
            os.killpg(club.pid, signal.SIGINT)
            _, said = club.communicate(timeout=30)
            spy.loop_stop()
            spy.disconnect()
        assert club.returncode == 0, said.decode()
        assert "club: no --keys: commands to the boards on the broker cannot be signed" in (
            said.decode())
        assert commands == []  # nothing was published to any board
        hostile_report("club: new game asked of an app without keys", published=0,
                       said_sent=0)
