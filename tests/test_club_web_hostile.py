"""The club app under attack, in a real headless Chromium: the PIN's lockout on the page,
and a page of another site that gets the browser to the app by DNS rebinding (Chromium's
resolver told that the attacker's name is 127.0.0.1)."""

import json

import pytest
from club_helpers import Served, chromium, quit_chromium, sim_board_on_broker, wait_until

from tools.club.app import create_app
from tools.logger.store import Store

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.long(7)]
PIN = "2468"


def _app(tmp_path):
    db = str(tmp_path / "games.db")
    Store(db).close()
    return create_app(db, pin=PIN)


def _body(driver):
    return driver.execute_script("return document.body.innerText")


def test_the_lockout_is_shown_on_the_page_and_counted(tmp_path):
    from selenium.webdriver.common.by import By

    from tools.records import Records

    app = _app(tmp_path)
    served = Served(app)
    driver = chromium()
    try:
        db = app.state.database.path
        store = Records.open(db)  # a name to correct: the Players page shows its form
        store.database.writer.execute("INSERT INTO club_players (name, created, fold) "
                                      "VALUES ('Ana', 0, 'ana')")
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
        assert Records.open(db).players() == ["Ana"]
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


def test_a_club_app_without_keys_is_refused(tmp_path):
    """`python -m tools.club --mqtt ...` without --keys (or with a keys file naming no board)
    could neither prove a board's frames nor sign a command: it is refused at start-up with
    the reason, exit status 2, before it listens or connects."""
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    (tmp_path / "empty.txt").write_text("# no boards yet\n")
    for extra, said in (([], "--mqtt needs --keys FILE"),
                        (["--keys", str(tmp_path / "empty.txt")], "names no board")):
        out = subprocess.run(
            [sys.executable, "-m", "tools.club", "--db", str(tmp_path / "games.db"),
             "--mqtt", "mqtt://logger:logger-pw@127.0.0.1:1", "--listen", "127.0.0.1:1",
             *extra], cwd=root, capture_output=True, text=True, timeout=60)
        assert out.returncode == 2, out.stderr
        assert said in out.stderr and "sealed with its key" in out.stderr, out.stderr


def test_a_club_app_that_cannot_sign_says_so_and_sends_nothing(tmp_path, hostile_report):
    """`python -m tools.club --mqtt ... --keys ...`: the real firmware on the simulated board
    plays over a real Mosquitto; then the broker goes away. The table's page says that no
    command can be signed and sent now, and a new game asked for with the right PIN is
    refused with the reason: nothing is said to be sent, and the game on the board is kept."""
    import os
    import signal
    import subprocess
    import sys
    import urllib.request

    from selenium.webdriver.common.by import By

    from tools.board import broker as broker_tool

    why = broker_tool.available()
    if why is not None:
        pytest.skip(str(why))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    users = {"logger": "logger-pw", "t1": "t1-pw"}
    key = bytes(range(32))
    (tmp_path / "keys.txt").write_text("t1 %s\n" % key.hex())
    with broker_tool.Mosquitto(str(tmp_path / "broker"), users, ("t1",)) as mosquitto:
        port = broker_tool.free_port()
        club = subprocess.Popen(
            [sys.executable, "-m", "tools.club", "--db", str(tmp_path / "games.db"),
             "--mqtt", "mqtt://logger:logger-pw@127.0.0.1:%d" % mosquitto.port,
             "--keys", str(tmp_path / "keys.txt"), "--listen", "127.0.0.1:%d" % port,
             "--pin", PIN], cwd=root, stderr=subprocess.PIPE, start_new_session=True)
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
            mosquitto.stop()  # the broker goes away: nothing can reach the board now
            page = "http://127.0.0.1:%d/table/%s" % (port, table()["board"])

            def notice():
                driver.get(page)
                found = driver.find_elements(By.ID, "cannot-command")
                return found[0].text if found else ""

            assert wait_until(lambda: "not connected" in notice(), timeout=30), notice()
            form = driver.find_element(By.CSS_SELECTOR, "form.form")
            form.find_element(By.NAME, "pin").send_keys(PIN)
            form.find_element(By.NAME, "replace").click()
            form.submit()
            assert wait_until(lambda: "Nothing was sent to the board" in _body(driver))
            assert "Sent to the board" not in _body(driver)
            assert table()["state"]["rules"] == "ddbu"  # the same game is kept
        finally:
            quit_chromium(driver)
            if board.poll() is None:
                board.kill()
                board.wait(10)
            os.killpg(club.pid, signal.SIGINT)
            _, said = club.communicate(timeout=30)
        assert club.returncode == 0, said.decode()
        hostile_report("club: new game asked of an app that cannot sign", published=0,
                       said_sent=0)
