"""A club night in a real headless Chromium: find your table, keep your names, see the sets,
hear the score (docs/club.md).

One Chromium and one served app over eight FakeBoards (board-shaped frames into the real
logger) serve the whole module; each test plays its own tables. Where Chromium or
chromedriver is missing every test here is skipped with the reason.
"""

import os
import shutil
import struct
import subprocess
import tempfile
import time

import pytest
from club_helpers import (
    browser,  # noqa: F401  (the module's Chromium, a fixture)
    card_text,
    club,
    wait_until,
)

from rules_core import Game
from tools.logger import frames
from tools.testing.browser import viewport

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.long(13)]

PIN = "2468"


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    """Eight tables T01..T08 on the logger, the app served with the PIN."""
    with club(tmp_path_factory.mktemp("night"), boards=8, pin=PIN) as c:
        for board in c.boards:  # a new game is asked of the players, as on a board with
            # a game on it (ok at the table starts it)
            board.answers[frames.CMD_NEW_GAME] = frames.linkcodes.ERR_ASKED
        # as `--public-url`: the address phones reach the app at (here the test's own
        # loopback one; without it a TV opened on a loopback address shows no codes)
        c.app.state.public_url = c.url("/").rstrip("/")
        yield c


def _board(c, label):
    return next(b for b in c.boards if b.board_id.decode() == label)


def _show(c, label, game):
    board = _board(c, label)
    board.send_state(game)
    return c.wait_live(board, game)


def _show_new(c, label, game, before):
    """Start ``game`` as the board's next game (after the game numbered ``before``)."""
    board = _board(c, label)
    board.new_game()
    board.send_state(game)
    assert wait_until(lambda: (c.hub.current.get(board.key) or {}).get("game") != before,
                      timeout=20)
    return c.wait_live(board, game)


def _shots(game, masks, carom=0):
    for mask in masks:
        game.shot(pins=mask, carom=carom)
    return game


def _text(driver, label, field):
    return card_text(driver, "label", label, field, hidden_blank=True)


def _send_new_game(driver, button=None, **fields):
    """Fill the table page's new-game form (the club's PIN too) and send it: with its plain
    submit button, or the one whose value is `button` ("same", "rematch")."""
    driver.execute_script(
        "const f = document.getElementById('new-game');"
        "for (const [k, v] of Object.entries(arguments[0])) f[k].value = v;"
        "f.querySelector(arguments[1]).click()", dict(fields, pin=PIN),
        "button[value=%s]" % button if button else "button[type=submit]:not([name])")


def _calls_on(driver, lang):
    """The page's spoken calls switched on, in language `lang` (en, da, ru)."""
    driver.execute_script(
        "const l = document.getElementById('calls-lang'); l.value = arguments[0];"
        "l.dispatchEvent(new Event('change'));"
        "const c = document.getElementById('calls'); if (!c.checked) c.click();", lang)


def _live(driver):
    return wait_until(lambda: driver.execute_script(
        "return window.clubLive && window.clubLive.events > 0"), timeout=10)


def _name(c, game_number, names):
    from tools.records import Records

    store = Records.open(c.db)
    try:
        store.set_names(game_number, names)
    finally:
        store.close()
    # the live tables have it (when the game is a table's current one)
    wait_until(lambda: all(t["names"] == names for t in c.hub.current.values()
                           if t["game"] == game_number), timeout=10)


def _new_games(board):
    return [struct.unpack("<BHHBBB", p) for k, _, p in board.commands
            if k == frames.CMD_NEW_GAME]


# -- 1. tables by the name people use, and their QR codes -----------------------------------------


def test_a_table_is_found_by_its_name_everywhere_and_by_its_qr_code(night, browser):  # noqa: F811
    game = _shots(Game("ddbu", (40, 40)), [0b00110])
    table = _show(night, "T01", game)
    viewport(browser, 1920, 1080)
    browser.get(night.url("/"))
    assert _live(browser)
    card = browser.execute_script(
        "const c = document.querySelector('.card[data-label=\"T01\"]');"
        "const q = c.querySelector('img.qr');"
        "return [c.querySelector('a.table-name').getAttribute('href'), q.getAttribute('src'),"
        " q.complete && q.naturalWidth > 0]")
    assert card == ["/table/T01", "/qr/T01.svg", True]
    for path in ("/table/T01", "/overlay/T01"):
        browser.get(night.url(path))
        assert _live(browser)
        assert _text(browser, "T01", "table") == "Table T01"
    # the results link the table by its name, and a game by its number
    browser.get(night.url("/results?table=T01"))
    row = browser.execute_script(
        "const r = document.querySelector('tr[data-game=\"%d\"]');"
        "return [r.querySelector('td.table a').textContent,"
        " r.querySelector('td.game-no a').textContent,"
        " r.querySelector('td.game-no a').getAttribute('href'),"
        " [...document.querySelectorAll('select[name=table] option')].map(o => o.textContent)"
        "]" % table["game"])
    assert row[:3] == ["T01", "Game %d" % table["game"], "/game/%d" % table["game"]]
    assert "T01 · 1 game" in row[3] and not any("543031" in o for o in row[3])
    # the printed sheet: each code, read back from the picture, is the table's address
    zbarimg = shutil.which("zbarimg")
    if zbarimg is None:
        pytest.skip("zbarimg is not installed (Debian: apt-get install zbar-tools)")
    viewport(browser, 1000, 800)
    browser.get(night.url("/tables/print"))
    assert wait_until(lambda: browser.execute_script(
        "return [...document.images].every(i => i.complete && i.naturalWidth > 0)"))
    shot = browser.find_element("css selector", '.qr-card[data-label="T01"] img')
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "qr.png")
        shot.screenshot(path)
        read = subprocess.run([zbarimg, "--quiet", "--raw", path], capture_output=True,
                              text=True, timeout=30)
    assert read.stdout.strip() == night.url("/table/T01"), read


# -- 2. players follow the table ------------------------------------------------------------------


def test_a_new_game_on_a_table_keeps_its_names_and_the_phone_can_rematch(night, browser):  # noqa: F811
    board = _board(night, "T02")
    first = _show(night, "T02", _shots(Game("ddbu", (30, 30), first=1), [0b00001]))
    _name(night, first["game"], ["Anna", "Bert"])
    # the board starts the next game (its own menu): the names stay at the table
    second = _show_new(night, "T02", Game("ddbu", (30, 30)), first["game"])
    assert wait_until(lambda: night.hub.current[board.key]["names"] == ["Anna", "Bert"])
    viewport(browser, 390, 844)
    browser.get(night.url("/table/T02"))
    assert _live(browser)
    assert (_text(browser, "T02", "name1"), _text(browser, "T02", "name2")) == ("Anna", "Bert")
    # the new-game form carries the names, offers the known players, and rematches
    form = browser.execute_script(
        "const f = document.getElementById('new-game');"
        "return [f.name1.value, f.name2.value, f.name1.getAttribute('list'),"
        " [...document.getElementById(f.name1.getAttribute('list')).options]"
        ".map(o => o.value)]")
    assert form[:2] == ["Anna", "Bert"] and "Anna" in form[3] and "Bert" in form[3]
    _send_new_game(browser, "rematch")
    assert wait_until(lambda: _new_games(board), timeout=10)
    rules, d1, d2, sets, first_player, _ = _new_games(board)[-1]
    assert (frames.linkcodes.RULES[rules], d1, d2, sets, first_player) == ("ddbu", 30, 30, 1, 2)
    # new names typed into the form go with the new game the board then starts
    browser.get(night.url("/table/T02"))
    _send_new_game(browser, name1="Carla", name2="Anna")
    assert wait_until(lambda: len(_new_games(board)) == 2, timeout=10)
    third = _show_new(night, "T02", Game("ddbu", (30, 30)), second["game"])
    assert wait_until(lambda: night.hub.current[board.key]["names"] == ["Carla", "Anna"])
    # "same players": the names of the game on the table, whatever the name fields say,
    # and the settings of the form
    browser.get(night.url("/table/T02"))
    _send_new_game(browser, "same", name1="Xaver", name2="Yrsa", distance="50")
    assert wait_until(lambda: len(_new_games(board)) == 3, timeout=10)
    assert _new_games(board)[-1][1:3] == (50, 50)
    _show_new(night, "T02", Game("ddbu", (50, 50)), third["game"])
    assert wait_until(lambda: night.hub.current[board.key]["names"] == ["Carla", "Anna"])


# -- 3. matches read as matches -------------------------------------------------------------------


def test_a_match_shows_its_sets_on_the_tv_the_game_page_and_its_shots(night, browser):  # noqa: F811
    game = Game("ceb", (20, 20), sets=3, first=1, teams=1)
    while sum(game.state()["sets"]) == 0:
        game.shot(pins=0b00100)  # the red alone: 4 points to the shooter's side
    state = game.state()
    winner = state["sets"].index(1) + 1
    assert "set:%d" % winner in state["announce"]
    table = _show(night, "T03", game)
    _name(night, table["game"], ["Anna & Bo", "Cy & Di"])
    results = wait_until(lambda: night.hub.current[_board(night, "T03").key]["set_results"])
    won = results[0]["score"]
    assert max(won) == 20 and state["score"] == [0, 0]
    viewport(browser, 1920, 1080)
    browser.get(night.url("/"))
    assert _live(browser)
    name = ["Anna & Bo", "Cy & Di"][winner - 1]
    assert _text(browser, "T03", "announce") == "Set to %s, %d : %d" % (name, *won)
    assert _text(browser, "T03", "setresults") == "sets %d : %d" % tuple(won)
    assert _text(browser, "T03", "sets%d" % winner) == "1"
    assert _text(browser, "T03", "member1") == "player %d at the table" % state["members"][0]
    # a shot more, then the game's page: sets first, then the set being played
    game.shot(pins=0b00010)
    _show(night, "T03", game)
    browser.get(night.url("/game/%d" % table["game"]))
    heading = browser.find_element("css selector", "h1.game-title").text
    sets = game.state()["sets"]
    score = game.state()["score"]
    assert heading == "Anna & Bo %d : %d in sets (%d : %d in set 2) Cy & Di" % (
        *sets, *score)
    row = browser.execute_script(
        "return [...document.querySelectorAll('table.shots tr[data-shot]')]"
        ".map(r => r.querySelector('td.score').textContent)")
    assert row[len(row) - 2] == "%d : %d, set 1 to %s" % (*won, name)
    members = browser.execute_script(
        "return [...document.querySelectorAll('table.shots .member')].length")
    assert members == len(row)  # a team match: who of the team played each shot


# -- 4. live pages that behave --------------------------------------------------------------------


def test_the_seventh_live_page_in_one_tab_does_not_stall(night, browser):  # noqa: F811
    # Chromium allows six connections per host; a left page kept in the back/forward cache
    # with its stream open would hold one each, and the seventh page would wait for one
    _show(night, "T04", _shots(Game("ddbu", (40, 40)), [0b00001]))
    viewport(browser, 1280, 900)
    pages = ["/", "/table/T04", "/overlay/T04", "/table/T01", "/overlay/T01", "/",
             "/table/T04", "/overlay/T04"]
    browser.get(night.url("/results"))
    for path in pages:
        # a link followed in the page (a renderer navigation, as a person's tap)
        browser.execute_script("location.href = arguments[0]", night.url(path))
        assert wait_until(lambda p=path: browser.execute_script(
            "return location.pathname") == p, timeout=10)
        took = time.monotonic()
        assert wait_until(lambda: browser.execute_script(
            "return !!(window.clubLive && window.clubLive.events > 0)"), timeout=8), \
            "%s got no event: the page stalled" % path
        assert time.monotonic() - took < 5
    # back to a page kept in the cache: it opens its stream again
    browser.back()
    assert wait_until(lambda: browser.execute_script(
        "return location.pathname") == "/table/T04", timeout=10)
    assert wait_until(lambda: night.hub.clients and len(night.hub.clients) <= 2, timeout=10)


def test_a_page_that_loses_the_app_is_dimmed_and_marked(tmp_path, browser):  # noqa: F811
    with club(tmp_path) as c:
        (board,) = c.boards
        game = _shots(Game("ddbu", (40, 40)), [0b00001])
        board.send_state(game)
        c.wait_live(board, game)
        browser.get(c.url("/"))
        assert _live(browser)
        assert browser.execute_script(
            "return document.getElementById('connection').hidden && "
            "getComputedStyle(document.querySelector('.card')).opacity === '1'")
        c.served.stop()  # the club PC goes away
        c.served = None
        assert wait_until(lambda: browser.execute_script(
            "return document.body.classList.contains('stale') && "
            "!document.getElementById('connection').hidden"), timeout=10)
        looks = browser.execute_script(
            "const b = document.getElementById('connection').getBoundingClientRect();"
            "return [parseFloat(getComputedStyle(document.querySelector('.card')).opacity),"
            " b.height, b.width, document.getElementById('connection').textContent,"
            " parseFloat(getComputedStyle(document.getElementById('connection')).fontSize)]")
        assert looks[0] < 0.6 and looks[1] > 30 and looks[4] >= 24
        assert "Connection lost" in looks[3]


def test_no_band_paints_empty_before_the_first_event(night, browser):  # noqa: F811
    game = Game("ddbu", (30, 30))
    while "20-remaining:1" not in game.state()["announce"]:
        game.shot(pins=0b00001 if game.state()["turn"] == 1 else 0)
    _show(night, "T05", game)
    _name(night, night.hub.current[_board(night, "T05").key]["game"], ["Anna", "Bert"])
    assert wait_until(lambda: night.hub.current[_board(night, "T05").key]["names"][0])
    first = {}
    browser.execute_cdp_cmd("Network.enable", {})
    try:
        browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*live.js*"]})
        for path in ("/", "/table/T05", "/overlay/T05"):
            browser.get(night.url(path))
            assert browser.execute_script("return window.clubLive === undefined")
            first[path] = browser.execute_script(
                "return [...document.querySelectorAll('.announce, .pending, .set-results')]"
                ".filter(e => !e.hidden).map(e => e.textContent.trim())")
            assert all(first[path]), "a band painted empty on %s: %s" % (path, first[path])
    finally:
        browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
    assert "20 remaining: Anna" in first["/table/T05"]
    for path in ("/", "/table/T05"):  # the live page says the same words
        browser.get(night.url(path))
        assert _live(browser)
        assert _text(browser, "T05", "announce") == "20 remaining: Anna"


# -- 5. a TV that fills the screen, phones without a sideways scroll ------------------------------


def _tv_figures(driver):
    return driver.execute_script("""
        const main = document.querySelector('main').getBoundingClientRect();
        const cards = [...document.querySelectorAll('.card')];
        const area = cards.reduce((a, c) => { const r = c.getBoundingClientRect();
            return a + r.width * r.height; }, 0);
        const small = [...document.querySelectorAll(
            '.card .detail, .card .card-foot, .card .set-results, .card .card-head .rules')]
            .map(e => parseFloat(getComputedStyle(e).fontSize));
        return {share: area / (main.width * main.height), cut: cards.map(
            c => c.scrollHeight - c.clientHeight), small: Math.min(...small),
            bottom: Math.max(...cards.map(c => c.getBoundingClientRect().bottom)),
            count: cards.length};""")


def test_the_tv_fills_the_screen_for_one_to_eight_tables_with_words_readable_across_the_room(
        tmp_path, browser):  # noqa: F811
    # the tables come one by one while the TV shows them (live.js lays the grid out anew),
    # then the page is loaded afresh with all eight (the server's first paint)
    with club(tmp_path, boards=8) as c:
        viewport(browser, 1920, 1080)
        seen = {}
        for i, board in enumerate(c.boards):
            game = _shots(Game(("ddbu", "ceb", "russian")[i % 3], (60, 60),
                               sets=3 if i % 3 == 1 else 1), [0b00011, 0b00100])
            board.send_state(game)
            c.wait_live(board, game)
            if i == 0:
                browser.get(c.url("/"))
                assert _live(browser)
            assert wait_until(lambda n=i + 1: browser.execute_script(
                "return document.querySelectorAll('.card').length") == n)
            seen[i + 1] = _tv_figures(browser)
        browser.get(c.url("/"))
        assert _live(browser)
        first_paint = _tv_figures(browser)
    assert first_paint == seen[8]
    for count, got in seen.items():
        assert got["count"] == count
        assert got["share"] > 0.9, got  # the cards fill the screen below the menu
        assert got["bottom"] <= 1080 and max(got["cut"]) <= 1, got  # all of every card shows
        # secondary words (to go, innings, sets, last shot): 32 px up to four tables, 24 px
        # up to eight (docs/club.md, "The club TV")
        assert got["small"] >= (32 if count <= 4 else 24), got


def test_no_page_scrolls_sideways_on_a_phone(night, browser):  # noqa: F811
    game = Game("ceb", (30, 30), sets=3)
    while sum(game.state()["sets"]) == 0:
        game.shot(pins=0b00110, carom=1)
    table = _show(night, "T06", game)
    _name(night, table["game"], ["Alexandra Konstantinopolskaya", "Bartholomew Featherstone"])
    viewport(browser, 390, 844)
    for path in ("/", "/table/T06", "/results", "/game/%d" % table["game"], "/players",
                 "/tables/print"):
        browser.get(night.url(path))
        wide = browser.execute_script(
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert wide[0] <= wide[1], "%s is %d px wide on a 390 px phone" % (path, wide[0])


# -- 6. the score, spoken -------------------------------------------------------------------------


# Anna 4, a miss, Bert's foul, Anna 14, Anna 2 (20 left: the referee's "20 remaining")
STEPS = [dict(pins=0b00011), dict(), dict(fouls=("foul",)), dict(pins=0b11111, carom=1),
         dict(pins=0b00001)]
CALLS = {
    "en": ["Anna, 4 — 36 to go", "Anna, no score", "Foul, Bert", "Anna, 14 — 22 to go",
           "Anna, 2 — 20 to go. 20 remaining"],
    "da": ["Anna, 4 — 36 tilbage", "Anna, ingen points", "Fejl, Bert",
           "Anna, 14 — 22 tilbage", "Anna, 2 — 20 tilbage. 20 tilbage"],
    "ru": ["Anna, 4 очка — осталось 36", "Anna, без очков", "Штраф, Bert",
           "Anna, 14 очков — осталось 22", "Anna, 2 очка — осталось 20. Осталось 20"],
}


@pytest.mark.parametrize("lang", ["da", "en", "ru"])
def test_the_calls_say_each_shot_and_the_milestones(night, browser, lang):  # noqa: F811
    board = _board(night, "T07")
    board.new_game()
    game = Game("ddbu", (40, 40), first=1)
    table = _show(night, "T07", game)
    _name(night, table["game"], ["Anna", "Bert"])
    assert wait_until(lambda: night.hub.current[board.key]["names"] == ["Anna", "Bert"])
    viewport(browser, 390, 844)
    browser.get(night.url("/table/T07"))
    assert _live(browser)
    _calls_on(browser, lang)
    for step in STEPS:
        game.shot(**step)
        board.send_state(game)
        night.wait_live(board, game)
        count = len(game.history) // 4
        assert wait_until(lambda n=count: browser.execute_script(
            "const t = window.clubLive.tables[arguments[0]];"
            "return t && t.state.shots", board.key) == n)
    got = browser.execute_script("return window.clubLive.calls.map(c => c.text)")
    assert got == CALLS[lang]
    langs = browser.execute_script("return [...new Set(window.clubLive.calls.map(c => c.lang))]")
    assert langs == [{"da": "da-DK", "en": "en-GB", "ru": "ru-RU"}[lang]]
    # switched off, the page says nothing
    browser.execute_script("document.getElementById('calls').click()")
    game.shot(pins=0b10000)
    board.send_state(game)
    night.wait_live(board, game)
    assert wait_until(lambda: browser.execute_script(
        "return window.clubLive.tables[arguments[0]].state.shots", board.key) == game.shots)
    assert browser.execute_script("return window.clubLive.calls.length") == len(CALLS[lang])


def test_the_calls_of_a_set_and_of_the_game(tmp_path, browser):  # noqa: F811
    with club(tmp_path) as c:
        (board,) = c.boards
        game = Game("ceb", (10, 10), sets=3, first=1)
        board.send_state(game)
        c.wait_live(board, game)
        viewport(browser, 1920, 1080)
        browser.get(c.url("/"))
        assert _live(browser)
        _calls_on(browser, "en")
        sets = []
        while not game.finished:
            game.shot(pins=0b00100)  # the red alone: 10, a set each time
            board.send_state(game)
            table = c.wait_live(board, game)
            sets = table["set_results"] or sets
            assert wait_until(lambda: browser.execute_script(
                "return window.clubLive.tables[arguments[0]].state.shots", board.key)
                == game.shots)
        calls = browser.execute_script("return window.clubLive.calls.map(c => c.text)")
    state = game.state()
    winner = state["winner"]
    first = sets[0]
    assert any("Set to Player %d, %d to %d" % (first["winner"], *first["score"]) in t
               for t in calls), calls
    assert calls[-1].endswith("Game and match. Player %d wins, %d sets to %d" % (
        winner, state["sets"][winner - 1], state["sets"][2 - winner])), calls
    assert all(t.startswith("Table T01. ") for t in calls)  # the TV says which table


# -- 7. averages and a fair distance --------------------------------------------------------------


def test_the_new_game_form_suggests_a_distance_each_from_the_averages(night, browser):  # noqa: F811
    from tools.records import Records

    board = _board(night, "T08")
    # two finished games: Anna's average is higher than Bert's
    for masks in ([0b11111, 0b11111, 0, 0b00001, 0b00011], [0b00111, 0b00111, 0, 0b11111]):
        board.new_game()
        game = Game("ddbu", (20, 20), first=1)
        while not game.finished:
            game.shot(pins=masks[game.shots % len(masks)] if game.state()["turn"] == 1
                      else (0b00001 if game.shots % 3 else 0))
        table = _show(night, "T08", game)
        _name(night, table["game"], ["Anna", "Bert"])
    store = Records.open(night.db)
    try:
        stats = {(e["name"], e["rules"]): e for e in store.player_stats()}
    finally:
        store.close()
    anna, bert = stats[("Anna", "ddbu")]["average"], stats[("Bert", "ddbu")]["average"]
    assert anna > bert > 0
    board.new_game()
    _show(night, "T08", Game("ddbu", (20, 20)))
    viewport(browser, 390, 844)
    browser.get(night.url("/table/T08"))
    browser.execute_script(
        "const f = document.getElementById('new-game'); f.name1.value = 'Anna';"
        "f.name2.value = 'Bert'; f.rules.value = 'ddbu'; f.distance.value = '60';"
        "f.distance.dispatchEvent(new Event('input'))")
    innings = 60 / max(anna, bert)
    want = [round(anna * innings), round(bert * innings)]
    assert browser.execute_script("return window.clubSuggested") == want
    assert "Anna %d, Bert %d" % tuple(want) in browser.find_element("id", "suggestion").text
    # the averages are the rules system's own: none in Russian yet, so no suggestion
    browser.execute_script("const f = document.getElementById('new-game');"
                           "f.rules.value = 'russian'; f.rules.dispatchEvent(new Event('change'))")
    assert browser.execute_script("return window.clubSuggested") is None
    assert "no average in Russian" in browser.find_element("id", "suggestion").text
    browser.execute_script("const f = document.getElementById('new-game');"
                           "f.rules.value = 'ddbu'; f.rules.dispatchEvent(new Event('change'));"
                           "document.getElementById('use-suggestion').click();"
                           "f.pin.value = arguments[0];"
                           "f.querySelector('button[type=submit]:not([name])').click()", PIN)
    assert wait_until(lambda: any(g[1:3] == tuple(want) for g in _new_games(board)),
                      timeout=10), _new_games(board)


# -- 8. a new game that waits for the board -------------------------------------------------------


def test_a_new_game_waiting_for_ok_is_shown_until_the_board_answers(night, browser, monkeypatch):  # noqa: F811,E501
    board = _board(night, "T04")
    _show(night, "T04", _shots(Game("ddbu", (40, 40)), [0b00001, 0b00011]))
    viewport(browser, 390, 844)
    browser.get(night.url("/table/T04"))
    _send_new_game(browser, rules="ceb", distance="50", sets="3")
    assert wait_until(lambda: "Sent to the board, which asks the players to confirm"
                      in browser.page_source, timeout=10)
    assert _new_games(board)
    # the phone: the card says the board waits for ok, and the form kept its values
    assert wait_until(lambda: (_text(browser, "T04", "pending") or "").startswith(
        "New game waiting for ok on the board: CEB five-pins to 50, best of 3"), timeout=10)
    kept = browser.execute_script(
        "const f = document.getElementById('new-game');"
        "return [f.rules.value, f.distance.value, f.sets.value]")
    assert kept == ["ceb", "50", "3"]
    # the TV says so too
    other = browser.current_window_handle
    browser.switch_to.new_window("tab")
    try:
        viewport(browser, 1920, 1080)
        browser.get(night.url("/"))
        assert _live(browser)
        assert "waiting for ok" in _text(browser, "T04", "pending")
        # the players press ok: the board starts the new game, and the wait is over
        board.new_game()
        _show(night, "T04", Game("ceb", (50, 50), sets=3))
        assert wait_until(lambda: _text(browser, "T04", "pending") == "", timeout=10)
    finally:
        browser.close()
        browser.switch_to.window(other)
    # the players refuse it on the board: the wait is over as soon as the board says so
    browser.get(night.url("/table/T04"))
    _send_new_game(browser)
    assert wait_until(lambda: "waiting for ok" in (_text(browser, "T04", "pending") or ""),
                      timeout=10)
    seq = [s for k, s, _ in board.commands if k == frames.CMD_NEW_GAME][-1]
    board.answer(seq, frames.linkcodes.ERR_REFUSED)
    assert wait_until(lambda: _text(browser, "T04", "pending") == "", timeout=10)
    assert board.key not in night.hub.pending
    # a board that never answers: the wait ends on its own
    import tools.club.live as live

    monkeypatch.setattr(live, "PENDING_S", 1.0)
    browser.get(night.url("/table/T04"))
    _send_new_game(browser)
    assert wait_until(lambda: "waiting for ok" in (_text(browser, "T04", "pending") or ""),
                      timeout=10)
    assert wait_until(lambda: _text(browser, "T04", "pending") == "", timeout=10)


# -- 10. the Russian game past the distance -------------------------------------------------------


def test_a_russian_game_past_the_distance_by_a_carambole_reads_as_going_on(night, browser):  # noqa: F811
    # RULES.md 3 (seed 004): "Одним карамболем, без последующего сбивания кеглей, партия не
    # кончается": 58 and a lone carambole is 61, the game goes on and player 2 plays. The
    # rules core says so (distance:1 announced, status playing: tests/test_rules_russian.py);
    # the page once read it as a finished game ("0 to go, reached the distance").
    board = _board(night, "T01")
    board.new_game()
    game = Game("russian", (10, 10), first=1)
    game.shot(pins=0b11011)  # the four outer pins: 8
    game.shot(carom=1)  # a lone carambole: 11, past 10, the turn passes
    state = game.state()
    assert (state["status"], state["score"], state["turn"]) == ("playing", [11, 0], 2)
    assert state["announce"] == ["distance:1"]
    _show(night, "T01", game)
    viewport(browser, 1920, 1080)
    browser.get(night.url("/"))
    assert _live(browser)
    band = _text(browser, "T01", "announce")
    assert band == "Player 1 is past the distance with a lone carambole: the game goes on"
    assert _text(browser, "T01", "remaining1") == "past the distance"
    assert browser.execute_script(
        "return document.querySelector('.card[data-label=\"T01\"] .player.p2')"
        ".classList.contains('at-table')")
    # then a pin of player 1 ends it
    game.shot()  # player 2 misses
    game.shot(pins=0b00001)
    _show(night, "T01", game)
    assert wait_until(lambda: _text(browser, "T01", "announce") == "Winner: Player 1")


def test_readme_says_how_to_write(tmp_path):
    # `make club` as the README gives it can write: its first commands name the PIN, and it
    # says what the app does without one
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        text = f.read()
    first = text[:text.index("## ", text.index("make club"))] if "make club" in text else ""
    assert "make club PIN=" in first
    assert "read only" in first.lower() or "read-only" in first.lower()


def test_stats_of_the_logger_never_mix_rules_systems(tmp_path):
    # `tools.logger stats`: a line per table, player and rules system (the store test
    # checks the figures; here the command's lines)
    import sys

    from club_games import logged_club

    db = tmp_path / "games.db"
    logged_club(db, [("543031", [("ddbu", (20, 20), 1, 3), ("russian", (20, 20), 1, 4)])])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-m", "tools.logger", "stats", "--db", str(db)],
                         cwd=root, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    rows = [line.split()[:3] for line in out.stdout.splitlines()[1:] if line.strip()]
    assert rows == [["T01", "1", "ddbu"], ["T01", "1", "russian"], ["T01", "2", "ddbu"],
                    ["T01", "2", "russian"]], out.stdout
