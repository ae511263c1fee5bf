"""Shared pieces of the club web app's tests: a served app, boards, a headless Chromium.

    with club(tmp_path, boards=2, pin="4711") as c:   # logger + app over FakeBoards
        c.boards[0].send_state(game); c.wait_stored(game)
        c.url("/")                                     # the app served on 127.0.0.1:free
    driver = chromium()                                # or pytest.skip with the reason
    browser                                            # module-scoped fixture: one Chromium
    board = sim_board_on_broker(tmp_path, broker_port, key)   # the real firmware, board t1

Chromium is Debian's /usr/bin/chromium with /usr/bin/chromedriver (`.ci/run` installs
them); where either is missing the browser tests are skipped and say why.
"""

import contextlib
import json
import os
import subprocess
import sys
import time

import pytest
from helpers import wait_until  # noqa: F401  (the club tests take it from here)

from tools.testing import browser as web
from tools.testing.browser import Served, chromium_missing, quit_chromium  # noqa: F401


def card_text(driver, attribute, value, field, hidden_blank=False):
    """The text of field `field` (data-f) on the live page's card whose data-ATTRIBUTE
    ("board": its key, "label": its table) is `value`: None where there is no such card or
    field, "" for a hidden one when `hidden_blank`."""
    return driver.execute_script(
        "const c = document.querySelector('.card[data-' + arguments[0] + '=\"' + arguments[1]"
        " + '\"]'); if (!c) return null;"
        "const e = c.querySelector('[data-f=\"' + arguments[2] + '\"]');"
        "return e ? (e.hidden && arguments[3] ? '' : e.textContent) : null;",
        attribute, value, field, hidden_blank)


def client_for(app, **options):
    """Starlette's TestClient (its import warns that httpx may be replaced one day)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    options.setdefault("base_url", "http://localhost")  # a Host the app answers to
    return TestClient(app, **options)


class Club:
    """FakeBoards, the logger on their ptys in a thread, the app served over the database."""

    def __init__(self, db, boards, pin=None):
        from tools.club.app import create_app
        from tools.club.live import LiveHub
        from tools.logger.bridge import LoggerBridge
        from tools.logger.core import Logger
        from tools.testing.fakeboards import FakeBoard

        self.db = db
        self.boards = [FakeBoard(b"T%02d" % (i + 1)) for i in range(boards)]
        self.logger = Logger([b.path for b in self.boards], db)
        self.hub = LiveHub(db)
        self.bridge = LoggerBridge(self.logger, on_commit=self.hub.notify).start()
        self.app = create_app(db, pin=pin, commands=self.bridge, hub=self.hub)
        self.served = None

    def serve(self):
        self.served = Served(self.app)
        return self

    def url(self, path):
        return self.served.url(path)

    def wait_stored(self, board, game, timeout=20.0):
        """Wait until the logger stored ``game``'s state as ``board``'s latest."""
        import json
        import sqlite3

        want = game.state()
        deadline = time.monotonic() + timeout
        db = sqlite3.connect(self.db)
        try:
            while time.monotonic() < deadline:
                row = db.execute(
                    "SELECT g.final FROM games g JOIN boards b ON b.id=g.board "
                    "WHERE b.key=? ORDER BY g.updated DESC LIMIT 1", (board.key,)).fetchone()
                if row and row[0] and json.loads(row[0]) == want:
                    return
                time.sleep(0.02)
        finally:
            db.close()
        raise AssertionError("the logger did not store the state of board %s" % board.key)

    def wait_live(self, board, game, timeout=20.0):
        """Wait until the hub holds ``game``'s state for ``board`` (what the pages show)."""
        want = game.state()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            table = self.hub.current.get(board.key)
            if table is not None and table["state"] == want:
                return table
            time.sleep(0.02)
        raise AssertionError("the live tables never showed board %s's state" % board.key)

    def close(self):
        if self.served is not None:
            self.served.stop()
        self.bridge.stop()
        for board in self.boards:
            board.close()


@contextlib.contextmanager
def club(tmp_path, boards=1, pin=None, serve=True):
    c = Club(str(tmp_path / "games.db"), boards, pin)
    try:
        if serve:
            c.serve()
        yield c
    finally:
        c.close()


def chromium(width=1280, height=900, flags=()):
    """A fresh headless Chromium (selenium), its own profile folder, or pytest.skip."""
    reason = chromium_missing()
    if reason:
        pytest.skip(reason)
    return web.chromium(width, height, flags)


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for a whole test module (skipped, with the reason, without)."""
    driver = chromium()
    try:
        yield driver
    finally:
        quit_chromium(driver)


def no_alert(driver):
    """True if the page opened no alert box (one that did is dismissed: False)."""
    from selenium.common.exceptions import NoAlertPresentException

    try:
        driver.switch_to.alert.dismiss()
    except NoAlertPresentException:
        return True
    return False


def sim_board_on_broker(tmp_path, broker_port, key, seed=5, length=10):
    """`python -m tools.sim` playing a random ddbu game to 30 at four times real time, the
    real firmware on the simulated board `t1` (password t1-pw, command ``key``) joined to
    the broker on 127.0.0.1:``broker_port``; a Popen (text stdout: the final state)."""
    from tools.sim.timelines import build, random_game

    events = random_game("ddbu", seed, length=length, distance=(30, 30))
    timeline, _ = build("ddbu", events, distance=(30, 30))
    (tmp_path / "g.timeline").write_text(timeline)
    (tmp_path / "board.cfg").write_text(json.dumps({"net": {
        "ssid": "club", "password": "pinboard", "host": "127.0.0.1", "port": broker_port,
        "user": "t1", "pass": "t1-pw", "key": key.hex(), "id": "t1"}}))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return subprocess.Popen(
        [sys.executable, "-m", "tools.sim", "--timeline", str(tmp_path / "g.timeline"),
         "--config", str(tmp_path / "board.cfg"), "--rules", "ddbu", "--distance", "30",
         "--speed", "4"], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)


def chart_points(states):
    """What a game's chart must draw, worked out from the board states the board sent
    (their shots counts, one state a shot): [(shot, score 1, score 2)]; at a shot that won
    a set the match goes on after, first the points that won it (the score before the shot
    plus the shot's points, from the state's `last`), then the new set's 0 : 0."""
    out, before = [], None
    for state in sorted(states, key=lambda s: s["shots"]):
        n = state["shots"]
        if before is not None and sum(state["sets"]) > sum(before["sets"]) \
                and state["status"] != "finished":
            last = state["last"]
            won = list(before["score"])
            won[last["to"] - 1] += last["points"]
            out.append((n, *won))
        out.append((n, *state["score"]))
        before = state
    return out
