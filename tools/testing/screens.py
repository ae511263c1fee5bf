"""Screenshots of the club app's pages for the docs: `python -m tools.testing.screens [DIR]`.

Four simulated tables (board-shaped frames into the real logger) are brought to moments
worth showing: a DDBU game at "20 remaining", a five-pins match of three sets with the
marked ball, a game in its break, a finished Russian game; players are named at the
tables where the club's store is there. The app is served on 127.0.0.1, a headless
Chromium opens each page and saves a PNG into DIR (default docs/club/): tables.png (the
club TV, 1920x1080), table.png (a phone), overlay.png (the 1920x200 stream strip, its
transparent background kept as alpha), and results.png, game.png, players.png where those
pages exist.
"""

import os
import sys
import tempfile
import time

from rules_core import Game

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DIR = os.path.join(HERE, "..", "..", "docs", "club")
NAMES = {"T01": ("Anna Berger", "Ben Okafor"), "T02": ("Carla Weiss", "Dieter Maas"),
         "T03": ("Elif Aydin", "Frank Roth"), "T04": ("Greta Lind", "Hans Vogel")}


def _until(game, done, shot):
    for _ in range(2000):
        if done(game):
            return game
        shot(game)
    raise RuntimeError("the scene never came about")


def scene():
    """[(board id, [Game, ...])]: each table's games, the last one being played now."""
    import random

    rng = random.Random(3)

    def play(game):
        game.shot(pins=sum(1 << s for s in range(5) if rng.random() < 0.3),
                  carom=1 if rng.random() < 0.25 else 0)

    def finished(rules, distance, sets=1):
        return _until(Game(rules, distance, sets), lambda g: g.finished, play)

    ddbu = _until(Game("ddbu", (40, 40)),
                  lambda g: "20-remaining:1" in g.state()["announce"]
                  or "20-remaining:2" in g.state()["announce"], play)
    ceb = _until(Game("ceb", (40, 40), sets=3),
                 lambda g: sum(g.state()["sets"]) == 1 and g.state()["shots"] % 7 == 3, play)
    pause = Game("ddbu", (60, 50))
    count = [0]

    def series(game):  # points, points, a miss: the break comes at a series' end
        count[0] += 1
        game.shot(pins=0b00011 if count[0] % 3 else 0)

    pause = _until(pause, lambda g: g.state()["status"] == "break", series)
    done = finished("russian", (60, 60))
    return [("T01", [finished("ddbu", (40, 40)), ddbu]),
            ("T02", [finished("ceb", (60, 60)), ceb]),
            ("T03", [finished("russian", (60, 60)), pause]),
            ("T04", [finished("ddbu", (60, 60)), done])]


def build(db):
    """Play the scene into ``db`` through the logger; returns (logger bridge, hub, boards)."""
    from tools.club.live import LiveHub
    from tools.logger.bridge import LoggerBridge
    from tools.logger.core import Logger
    from tools.testing.fakeboards import FakeBoard

    tables = scene()
    boards = [FakeBoard(key.encode()) for key, _ in tables]
    hub = LiveHub(db)
    bridge = LoggerBridge(Logger([b.path for b in boards], db), on_commit=hub.notify).start()
    for board, (_, games) in zip(boards, tables, strict=True):
        for number, game in enumerate(games):
            if number:
                board.new_game()
            board.send_state(game)
            _wait_stored(db, board, game)
    _name(db, boards)
    return bridge, hub, boards


def _wait_stored(db, board, game, timeout=30.0):
    import json
    import sqlite3

    want = game.state()
    deadline = time.monotonic() + timeout
    con = sqlite3.connect(db)
    try:
        while time.monotonic() < deadline:
            row = con.execute("SELECT g.final, g.complete FROM games g JOIN boards b "
                              "ON b.id=g.board WHERE b.key=? AND g.game_no=?",
                              (board.key, board.game_no)).fetchone()
            if row and row[0] and json.loads(row[0]) == want and row[1]:
                return  # the state, and every event it counts
            time.sleep(0.02)
    finally:
        con.close()
    raise RuntimeError("the logger did not store table %s's game" % board.board_id)


def _name(db, boards):
    import sqlite3

    from tools.records import Records

    store = Records.open(db)
    con = sqlite3.connect(db)
    try:
        for board in boards:
            names = NAMES[board.board_id.decode()]
            rows = con.execute("SELECT g.id FROM games g JOIN boards b ON b.id=g.board "
                               "WHERE b.key=? ORDER BY g.id", (board.key,)).fetchall()
            for i, (game,) in enumerate(rows):
                store.set_names(game, list(names if i % 2 == 0 else names[::-1]))
    finally:
        con.close()
        store.close()


def shoot(out_dir):
    from tools.club.app import create_app
    from tools.testing.browser import Served, chromium, chromium_missing, quit_chromium, viewport

    why = chromium_missing()
    if why:
        raise RuntimeError(why)
    os.makedirs(out_dir, exist_ok=True)
    saved = []
    with tempfile.TemporaryDirectory(prefix="club-screens-") as folder:
        db = os.path.join(folder, "games.db")
        bridge, hub, boards = build(db)
        served = Served(create_app(db, pin="0000", commands=bridge, hub=hub))
        driver = chromium(1920, 1080)
        try:
            deadline = time.monotonic() + 30
            while len(hub.current) < len(boards) and time.monotonic() < deadline:
                time.sleep(0.05)
            first_game = _first_finished(db)
            pages = [("tables.png", "/", 1920, 1080, False),
                     ("table.png", "/table/" + boards[0].key, 412, 915, False),
                     ("overlay.png", "/overlay/" + boards[1].key, 1920, 200, True),
                     ("results.png", "/results", 1440, 900, False),
                     ("game.png", "/game/%s" % first_game, 1440, 1100, False),
                     ("players.png", "/players", 1440, 900, False)]
            for name, path, width, height, transparent in pages:
                if not _exists(served.url(path)):
                    continue
                viewport(driver, width, height)
                driver.execute_cdp_cmd("Emulation.setDefaultBackgroundColorOverride",
                                       {"color": {"r": 0, "g": 0, "b": 0,
                                                  "a": 0 if transparent else 1}}
                                       if transparent else {})
                driver.get(served.url(path))
                _settle(driver)
                target = os.path.join(out_dir, name)
                driver.save_screenshot(target)
                saved.append(target)
        finally:
            quit_chromium(driver)
            served.stop()
            bridge.stop()
            for board in boards:
                board.close()
    return saved


def _first_finished(db):
    import sqlite3

    con = sqlite3.connect(db)
    try:
        row = con.execute("SELECT id FROM games WHERE status='finished' ORDER BY id "
                          "LIMIT 1").fetchone()
        return row[0] if row else 1
    finally:
        con.close()


def _exists(url):
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status == 200
    except urllib.error.HTTPError:
        return False


def _settle(driver):
    """Wait until the live page has taken its first event (or at once for other pages)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if driver.execute_script("return !document.getElementById('tables') || "
                                 "(window.clubLive && window.clubLive.events > 0)"):
            break
        time.sleep(0.05)
    time.sleep(0.3)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    out_dir = argv[0] if argv else os.path.normpath(DEFAULT_DIR)
    try:
        saved = shoot(out_dir)
    except RuntimeError as e:
        sys.stderr.write("club screens: %s\n" % e)
        return 2
    for path in saved:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
