"""The live pages in a real headless Chromium (selenium with Debian's chromium-driver).

Board-shaped frames go over ptys into the real logger (tools.testing.fakeboards); the pages
must follow them by server-sent events, without reloading. One browser serves the whole
module; where Chromium or chromedriver is missing every test here is skipped with the
reason (club_helpers.chromium_missing).
"""

import struct
import time

import pytest
from club_helpers import (
    Served,
    browser,  # noqa: F401  (the module's Chromium, a fixture)
    card_text,
    club,
    no_alert,
    wait_until,
)

from rules_core import Game
from tools.logger import frames

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.long(8)]


def _shots(game, masks):
    for i, mask in enumerate(masks):
        game.shot(pins=mask, carom=i % 2)
    return game


def _text(driver, board, field):
    return card_text(driver, "board", board, field)


def _navigations(driver):
    return driver.execute_script(
        "return [performance.getEntriesByType('navigation').length, window.clubMarker,"
        " window.clubLive && window.clubLive.loadedAt]")


def test_a_shot_appears_on_the_tables_page_without_a_reload(tmp_path, browser):  # noqa: F811
    with club(tmp_path, boards=2) as c:
        first, second = c.boards
        game = _shots(Game("ddbu", (40, 40)), [0b00100, 0b10001])
        first.send_state(game)
        c.wait_live(first, game)
        browser.get(c.url("/"))
        assert wait_until(lambda: _text(browser, first.key, "score1") is not None)
        assert wait_until(lambda: browser.execute_script(
            "return window.clubLive && window.clubLive.events > 0"))
        browser.execute_script("window.clubMarker = 'still the same page'")
        before = _navigations(browser)

        game.shot(pins=0b11111, carom=1)
        sent = time.monotonic()
        first.send_state(game)
        want = game.state()
        shown = wait_until(lambda: _text(browser, first.key, "score1") == str(want["score"][0])
                           and _text(browser, first.key, "score2") == str(want["score"][1]),
                           timeout=5, step=0.01)
        took = time.monotonic() - sent
        assert shown, "the shot never reached the page"
        assert took < 1.0, "the shot took %.2f s to reach the page" % took
        # a table the page has never seen comes in as a new card, still without a reload
        other = _shots(Game("ceb", (60, 60), sets=3), [0b00001, 0b00110])
        second.send_state(other)
        assert wait_until(lambda: _text(browser, second.key, "score1")
                          == str(other.state()["score"][0]), timeout=10)
        assert _text(browser, second.key, "rules") == "CEB five-pins"
        marked = other.state()["marked"]
        assert browser.execute_script(
            "return document.querySelector('.card[data-board=\"%s\"] [data-f=\"marked%d\"]')"
            ".hidden" % (second.key, marked)) is False
        after = _navigations(browser)
        assert after == before and after[1] == "still the same page" and after[0] == 1


def test_the_winner_and_the_break_are_announced(tmp_path, browser):  # noqa: F811
    with club(tmp_path) as c:
        (board,) = c.boards
        game = Game("ddbu", (40, 40))
        board.send_state(game)
        c.wait_live(board, game)
        browser.get(c.url("/table/" + board.key))
        assert wait_until(lambda: _text(browser, board.key, "score1") == "0")
        shots = 0
        while game.state()["status"] == "playing":
            # two points, two points, a miss (the series ends): the break comes at a
            # series' end once half the distance is reached (Seed 000 4.1)
            game.shot(pins=0b00001 if shots % 3 != 2 else 0)
            shots += 1
            if "20-remaining:1" in game.state()["announce"]:
                board.send_state(game)
                assert wait_until(lambda: _text(browser, board.key, "announce")
                                  == "20 remaining: Player 1", timeout=10)
        assert game.state()["status"] == "break"
        board.send_state(game)
        assert wait_until(lambda: _text(browser, board.key, "announce")
                          in ("Break 5:00", "Break 4:59", "Break 4:58"), timeout=10), \
            _text(browser, board.key, "announce")
        assert browser.execute_script(
            "return document.querySelector('.card').classList.contains('break')")
        while not game.finished:
            game.shot(pins=0b00001)
        board.send_state(game)
        winner = game.state()["winner"]
        assert wait_until(lambda: _text(browser, board.key, "announce")
                          == "Winner: Player %d" % winner, timeout=10)


def test_the_overlay_has_a_transparent_background(tmp_path, browser):  # noqa: F811
    with club(tmp_path) as c:
        (board,) = c.boards
        game = _shots(Game("russian", (60, 60)), [0b01000])
        board.send_state(game)
        c.wait_live(board, game)
        browser.get(c.url("/overlay/" + board.key))
        assert wait_until(lambda: _text(browser, board.key, "score1") is not None)
        colours = browser.execute_script(
            "return [getComputedStyle(document.documentElement).backgroundColor,"
            " getComputedStyle(document.body).backgroundColor,"
            " getComputedStyle(document.querySelector('main')).backgroundColor]")
        assert colours == ["rgba(0, 0, 0, 0)"] * 3
        assert browser.execute_script("return document.querySelector('nav')") is None


def _new_games(board):
    return [struct.unpack("<BHHBBB", p) for k, _, p in board.commands
            if k == frames.CMD_NEW_GAME]


def _submit(driver, pin, drop_token=False):
    from selenium.webdriver.common.by import By

    form = driver.find_element(By.CSS_SELECTOR, "form.form")
    driver.execute_script("arguments[0].querySelector('[name=rules]').value = 'ceb';"
                          "arguments[0].querySelector('[name=distance]').value = '50';",
                          form)
    if drop_token:
        driver.execute_script("arguments[0].querySelector('[name=csrf]').remove()", form)
    form.find_element(By.NAME, "pin").send_keys(pin)
    form.submit()


def test_a_new_game_from_the_phone_page_needs_the_pin(tmp_path, browser):  # noqa: F811
    with club(tmp_path, pin="2468") as c:
        (board,) = c.boards
        board.send_state(Game("ddbu", (40, 40)))
        c.wait_live(board, Game("ddbu", (40, 40)))
        guard = c.app.state.guard
        browser.get(c.url("/table/" + board.key))
        _submit(browser, "1111")
        assert wait_until(lambda: "wrong PIN" in browser.page_source)
        assert guard.refusals["wrong_pin"] == 1

        browser.get(c.url("/table/" + board.key))
        _submit(browser, "2468", drop_token=True)
        assert wait_until(lambda: "form expired, reload the page" in browser.page_source)
        assert guard.refusals["csrf"] == 1
        time.sleep(0.3)
        assert _new_games(board) == [], "a refused write reached the board"

        browser.get(c.url("/table/" + board.key))
        _submit(browser, "2468")
        assert wait_until(lambda: "Sent to the board" in browser.page_source)
        assert wait_until(lambda: _new_games(board), timeout=10)
        rules, d1, d2, sets, first, flags = _new_games(board)[0]
        assert (frames.linkcodes.RULES[rules], d1, d2) == ("ceb", 50, 50)
        assert sum(guard.refusals.values()) == 2


def test_a_form_posted_from_another_site_is_refused(tmp_path, browser):  # noqa: F811
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    with club(tmp_path, pin="2468") as c:
        (board,) = c.boards
        board.send_state(Game("ddbu", (40, 40)))
        c.wait_live(board, Game("ddbu", (40, 40)))
        browser.get(c.url("/table/" + board.key))  # the browser holds a session cookie
        token = browser.execute_script("return document.querySelector('[name=csrf]').value")
        evil_form = (
            '<form method="post" action="%s"><input name="csrf" value="%s">'
            '<input name="pin" value="2468"><input name="rules" value="ddbu">'
            '<input name="distance" value="40"></form>'
            "<script>document.forms[0].submit()</script>"
            % (c.url("/table/%s/new-game" % board.key), token))
        evil = Served(Starlette(routes=[Route("/", lambda r: HTMLResponse(evil_form))]))
        try:
            browser.get(evil.url("/"))
            assert wait_until(lambda: "Refused" in browser.title or "refused" in
                              browser.page_source, timeout=10)
        finally:
            evil.stop()
        guard = c.app.state.guard
        assert guard.refusals["cross_origin"] + guard.refusals["csrf"] == 1
        time.sleep(0.3)
        assert _new_games(board) == []


XSS = ("<script>alert(1)</script>", "<img src=x onerror=window.pwned=1>")


def test_a_name_made_of_markup_shows_as_text_on_the_live_pages(tmp_path, browser):  # noqa: F811
    from tools.records import Records

    with club(tmp_path) as c:
        (board,) = c.boards
        game = _shots(Game("ddbu", (40, 40)), [0b00100])
        board.send_state(game)
        key = c.wait_live(board, game)["game"]
        store = Records.open(c.db)
        try:
            # named before the page is loaded: the server's first paint
            store.set_names(key, list(XSS))
            assert wait_until(lambda: c.hub.current[board.key]["names"] == list(XSS))
            for path in ("/", "/table/" + board.key, "/overlay/" + board.key):
                browser.get(c.url(path))
                assert wait_until(lambda: browser.execute_script(
                    "return window.clubLive && window.clubLive.events > 0"))
                assert _text(browser, board.key, "name1") == XSS[0]
                assert _text(browser, board.key, "name2") == XSS[1]
                assert no_alert(browser)
                assert browser.execute_script(
                    "return window.pwned === undefined && "
                    "document.querySelectorAll('.card img:not(.qr), .card .name script')"
                    ".length === 0")
            # named while the page is open: the live update puts it in as text too
            browser.get(c.url("/"))
            assert wait_until(lambda: _text(browser, board.key, "name1") == XSS[0])
            store.set_names(key, [XSS[1], XSS[0]])
            assert wait_until(lambda: _text(browser, board.key, "name1") == XSS[1], timeout=10)
            assert _text(browser, board.key, "name2") == XSS[0]
            assert no_alert(browser)
            assert browser.execute_script("return window.pwned === undefined")
        finally:
            store.close()


def test_shots_on_the_simulated_board_reach_the_tables_page_within_a_second(tmp_path, browser):  # noqa: F811,E501
    # The real firmware on the simulated board (`make club`'s demo table), through the
    # logger, to the page: each committed state shows on the open page within a second.
    from tools.club.app import create_app
    from tools.club.demo import Demo
    from tools.club.live import LiveHub
    from tools.logger.bridge import LoggerBridge
    from tools.logger.core import Logger

    db = str(tmp_path / "games.db")
    demo = Demo(1, speed=8.0, seed=5)
    logger = Logger(demo.host_paths, db)
    hub = LiveHub(db)
    commits = []

    def committed():
        commits.append((time.monotonic(), logger.last_state["shots"]))
        hub.notify()

    bridge = LoggerBridge(logger, on_commit=committed).start()
    served = Served(create_app(db, commands=bridge, hub=hub))
    demo.start()
    try:
        board = "T01".encode().hex()
        browser.get(served.url("/"))

        def shown():
            return browser.execute_script(
                "const t = window.clubLive && window.clubLive.tables[arguments[0]];"
                "return t ? t.state.shots : null;", board)

        assert wait_until(lambda: (shown() or 0) > 0, timeout=60), "no shot reached the page"
        browser.execute_script("window.clubMarker = 'the same page'")
        delays = []
        for _ in range(20):
            if len(delays) >= 3:
                break
            seen = len(commits)
            assert wait_until(lambda n=seen: len(commits) > n, timeout=30), "the table stopped"
            at, shots = commits[-1]
            count = len(commits)
            got = wait_until(lambda s=shots, n=count: shown() == s or len(commits) > n,
                             timeout=5, step=0.01)
            assert got, "a committed state never showed"
            if len(commits) == count:  # (a newer commit meanwhile: that one is measured next)
                delays.append(time.monotonic() - at)
        assert len(delays) >= 3, "the page never caught up with the board"
        assert max(delays) < 1.0, "from the logger's commit to the page: %s s" % delays
        assert browser.execute_script("return window.clubMarker") == "the same page"
    finally:
        demo.stop()
        served.stop()
        bridge.stop()


def test_the_hub_closes_its_connection_only_after_a_read_still_running_in_its_thread(tmp_path):
    # Stopping the hub cancels its task, not the thread a read of the database runs in:
    # the connection was closed under that read, and SQLite crashed the whole process.
    # Now the connection is closed once the read is done, and a read after gets nothing.
    import asyncio
    import threading

    from tools.club.live import LiveHub
    from tools.records import Database

    db = str(tmp_path / "games.db")
    Database(db).close()
    hub = LiveHub(db, poll_s=60)
    order = []
    inside = threading.Event()

    class Slow:
        def __init__(self, real):
            self.real = real

        def execute(self, *args):
            order.append("read")
            inside.set()
            time.sleep(0.5)
            order.append("read done")
            return self.real.execute(*args)

        def close(self):
            order.append("closed")
            self.real.close()

    async def scenario():
        await hub.start()
        hub.tables.db = Slow(hub.tables.db)
        reading = asyncio.ensure_future(asyncio.to_thread(hub.tables.data_version))
        await asyncio.to_thread(inside.wait, 5)
        await hub.stop()
        assert await reading is not None  # the read ran on an open connection
        return await asyncio.to_thread(hub.tables.data_version)

    assert asyncio.run(scenario()) is None
    assert order == ["read", "read done", "closed"]
