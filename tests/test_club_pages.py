"""The club's record pages: results, one game, players, names at the table, exports.

The database is one the real logger wrote (tests/club_games.py); the app is tools.club's
own (create_app). Without a browser through Starlette's TestClient; in a real headless
Chromium (one for the module, tests/club_helpers.py) for what a person at the club does:
naming players with the PIN, a refusal without it, a name made of markup, the chart.
"""

import json
import re
import sqlite3

import pytest
from club_games import logged_club
from club_helpers import (
    Served,
    browser,  # noqa: F401  (the module's Chromium, a fixture)
    chart_points,
    client_for,
    no_alert,
    wait_until,
)

from tools.club.app import create_app
from tools.records import Records

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.long(6)]

PIN = "4711"
XSS = "<script>alert(1)</script>"
BOARDS = [("c1ab0001", [("ddbu", (30, 30), 1, 41), ("ceb", (30, 30), 3, 42)]),
          ("c1ab0002", [("russian", (30, 30), 1, 43), ("ddbu", (40, 40), 1, 44, False)])]


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    path = tmp_path_factory.mktemp("pages") / "logged.db"
    logged_club(path, BOARDS)
    return str(path)


@pytest.fixture
def db(logged, tmp_path):
    """A fresh copy of the logged database for each test."""
    path = str(tmp_path / "games.db")
    source, target = sqlite3.connect(logged), sqlite3.connect(path)
    source.backup(target)
    source.close()
    target.close()
    return path


def names_of(db, game):
    store = Records.open(db)
    try:
        return store.names(game)
    finally:
        store.close()


def token(page):
    return re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)


def post_names(client, game, name1, name2, pin=PIN):
    form = {"csrf": token(client.get("/game/%d" % game)), "name1": name1, "name2": name2,
            "back": "/game/%d" % game}
    if pin is not None:
        form["pin"] = pin
    return client.post("/game/%d/names" % game, data=form, follow_redirects=False)


def test_results_list_the_games_of_a_day_a_table_and_a_player(db):
    Records.open(db).set_names(1, ["Anna", "Ben"])
    with client_for(create_app(db, pin=PIN)) as client:
        every = client.get("/results")
        assert every.status_code == 200
        assert re.findall(r'<tr data-game="(\d+)"', every.text) == ["4", "3", "2", "1"]
        assert 'href="/game/1"' in every.text and ">Anna</a>" in every.text
        table = client.get("/results", params={"table": "c1ab0002"})
        assert re.findall(r'<tr data-game="(\d+)"', table.text) == ["4", "3"]
        player = client.get("/results", params={"player": "ben"})
        assert re.findall(r'<tr data-game="(\d+)"', player.text) == ["1"]
        other_day = client.get("/results", params={"day": "2001-01-01"})
        assert "No games for this choice" in other_day.text
        bad = client.get("/results", params={"day": "yesterday"})
        assert bad.status_code == 400 and "YYYY-MM-DD" in bad.text
        assert 'href="/export.csv"' in every.text and 'href="/export.json"' in every.text


def test_a_games_page_has_its_shots_series_and_chart(db):
    store = Records.open(db)
    game = store.game(2)
    with client_for(create_app(db)) as client:
        page = client.get("/game/2")
        assert page.status_code == 200
        assert len(re.findall(r"<tr data-shot=", page.text)) == game.final["shots"]
        assert len(re.findall(r'<tr data-player="\d">', page.text)) == len(game.series)
        assert page.text.count('<polyline class="score"') == 2
        assert 'href="/export.csv?game=2"' in page.text
        assert client.get("/game/99").status_code == 404
        assert client.get("/game/x").status_code == 404


def test_the_exports_are_the_loggers_bytes(db):
    store = Records.open(db)
    store.set_names(1, ["Anna", XSS])
    with client_for(create_app(db)) as client:
        for fmt in ("csv", "json"):
            for query, game in (("", None), ("?game=1", 1)):
                got = client.get("/export.%s%s" % (fmt, query))
                assert got.status_code == 200
                assert got.content == "".join(
                    line + "\n" for line in store.export_lines(game, fmt)).encode()
        assert client.get("/export.xml").status_code == 404
        narrowed = client.get("/export.csv", params={"table": "c1ab0002"})
        assert narrowed.content == "".join(
            line + "\n" for line in store.export_lines(None, "csv", table="c1ab0002")).encode()
        assert client.get("/export.json", params={"day": "x"}).status_code == 400
        page = client.get("/results", params={"table": "c1ab0002"}).text
        assert 'href="/export.csv?table=c1ab0002"' in page


def test_naming_with_the_pin_shows_everywhere(db):
    with client_for(create_app(db, pin=PIN)) as client:
        done = post_names(client, 2, "Carla", "Dieter")
        assert done.status_code == 303 and done.headers["location"] == "/game/2?saved=1"
        assert names_of(db, 2) == ["Carla", "Dieter"]
        assert "Names saved" in client.get("/game/2?saved=1").text
        assert ">Carla</a>" in client.get("/results").text
        players = client.get("/players").text
        assert ">Carla</a>" in players and ">Dieter</a>" in players
        # the names form offers the known players, and corrects a name
        assert '<option value="Carla">' in client.get("/game/1").text
        assert post_names(client, 2, "Carla", "Elif").status_code == 303
        assert names_of(db, 2) == ["Carla", "Elif"]


@pytest.mark.parametrize("pin, says, reason", [
    ("0000", "wrong PIN", "wrong_pin"), (None, "wrong PIN", "wrong_pin")])
def test_a_wrong_or_missing_pin_is_refused_counted_and_changes_nothing(db, pin, says, reason):
    app = create_app(db, pin=PIN)
    with client_for(app) as client:
        refused = post_names(client, 1, "Mallory", "Eve", pin=pin)
        assert refused.status_code == 403 and says in refused.text
        assert client.get("/status.json").json()["refusals"][reason] == 1
    assert names_of(db, 1) == [None, None]
    assert Records.open(db).players() == []


def test_without_a_pin_at_start_up_naming_is_refused(db):
    with client_for(create_app(db)) as client:
        page = client.get("/game/1")
        assert "--pin" in page.text  # the form says so before anyone tries
        refused = post_names(client, 1, "Anna", "Ben")
        assert refused.status_code == 403 and "--pin" in refused.text
    assert names_of(db, 1) == [None, None]


def test_a_form_from_elsewhere_is_refused(db):
    with client_for(create_app(db, pin=PIN)) as client:
        stale = client.post("/game/1/names", data={"csrf": "x", "pin": PIN, "name1": "A"})
        assert stale.status_code == 403 and "form expired" in stale.text
    assert names_of(db, 1) == [None, None]


def test_a_bad_name_is_refused_with_its_reason(db):
    with client_for(create_app(db, pin=PIN)) as client:
        bad = post_names(client, 1, "x" * 41, "Ben")
        assert bad.status_code == 400 and "at most 40" in bad.text
    assert names_of(db, 1) == [None, None]


def test_a_markup_name_is_text_on_every_page(db):
    Records.open(db).set_names(1, [XSS, "Ben"])
    with client_for(create_app(db, pin=PIN)) as client:
        for path in ("/results", "/game/1", "/players", "/results?player=" + XSS):
            text = client.get(path).text
            assert XSS not in text, path
            assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text, path


def test_the_back_link_never_leaves_the_app(db):
    with client_for(create_app(db, pin=PIN)) as client:
        form = {"csrf": token(client.get("/game/1")), "name1": "Anna", "name2": "",
                "pin": PIN, "back": "//evil.example/"}
        done = client.post("/game/1/names", data=form, follow_redirects=False)
        assert done.headers["location"] == "/game/1?saved=1"


# -- in a real browser ----------------------------------------------------------------------------

@pytest.fixture
def served(db):
    s = Served(create_app(db, pin=PIN))
    yield s
    s.stop()


def fill_names(driver, name1, name2, pin):
    from selenium.webdriver.common.by import By

    for field, value in (("name1", name1), ("name2", name2), ("pin", pin)):
        box = driver.find_element(By.NAME, field)
        box.clear()
        if value:
            box.send_keys(value)
    driver.find_element(By.CSS_SELECTOR, ".names-form button").click()


def body_text(driver):
    return driver.execute_script("return document.body.innerText")


def test_browser_naming_with_the_pin_shows_everywhere(served, db, browser):  # noqa: F811
    browser.get(served.url("/game/3"))
    fill_names(browser, "Anna", "Ben", PIN)
    assert wait_until(lambda: "Names saved" in body_text(browser))
    assert names_of(db, 3) == ["Anna", "Ben"]
    title = browser.execute_script("return document.querySelector('h1').innerText")
    assert title.startswith("Anna") and title.endswith("Ben")
    browser.get(served.url("/results"))
    row = browser.execute_script(
        "return document.querySelector('tr[data-game=\"3\"]').innerText")
    assert "Anna" in row and "Ben" in row
    browser.get(served.url("/players"))
    assert "Anna" in body_text(browser) and "Ben" in body_text(browser)


def test_browser_a_wrong_pin_is_refused_and_nothing_changes(served, db, browser):  # noqa: F811
    browser.get(served.url("/game/3"))
    fill_names(browser, "Mallory", "Eve", "0000")
    assert wait_until(lambda: "wrong PIN" in body_text(browser))
    browser.get(served.url("/game/3"))
    fill_names(browser, "Mallory", "Eve", "")
    assert wait_until(lambda: "wrong PIN" in body_text(browser))
    browser.get(served.url("/status.json"))
    assert json.loads(browser.find_element("tag name", "body").text)["refusals"][
        "wrong_pin"] == 2
    assert names_of(db, 3) == [None, None]
    browser.get(served.url("/results"))
    assert "Mallory" not in body_text(browser)


def test_browser_a_markup_name_is_text(served, db, browser):  # noqa: F811
    browser.get(served.url("/game/1"))
    fill_names(browser, XSS, "Ben", PIN)
    assert wait_until(lambda: "Names saved" in body_text(browser))
    for path in ("/results", "/game/1", "/players"):
        browser.get(served.url(path))
        assert no_alert(browser), path
        assert XSS in body_text(browser), path  # shown as the text it is
        injected = browser.execute_script(
            "return [...document.querySelectorAll('script')]"
            ".filter(s => s.textContent.includes('alert(1)')).length")
        assert injected == 0, path


def test_browser_the_chart_of_a_finished_game_is_the_stored_scores(served, db,
                                                                     browser):  # noqa: F811
    store = Records.open(db)
    for game in (2, 3):
        assert store.game(game).final["status"] == "finished"
        sent = {}
        for (text,) in store.con.execute("SELECT state FROM states WHERE game=? AND stale=0 "
                                        "ORDER BY rank", (game,)):
            state = json.loads(text)
            sent[state["shots"]] = state
        browser.get(served.url("/game/%d" % game))
        drawn = browser.execute_script("""
            const svg = document.querySelector('section.chart svg');
            const box = svg.getBoundingClientRect();
            const k = n => parseFloat(svg.dataset[n]);
            return {width: box.width, height: box.height, lines: [1, 2].map(p => {
                const line = svg.querySelector('polyline[data-player="' + p + '"]');
                return [...line.points].map(pt => [(pt.x - k('x0')) / k('dx'),
                                                   (k('y0') - pt.y) / k('dy')]);
            })};""")
        assert drawn["width"] > 100 and drawn["height"] > 100  # drawn, not just present
        for player, line in enumerate(drawn["lines"]):
            got = [(round(x), round(y)) for x, y in line]
            for (x, y), (n, score) in zip(line, got, strict=True):
                assert abs(x - n) < 0.01 and abs(y - score) < 0.01
            # the scores the board sent; at a set won, the set's points before the 0 : 0
            assert got == [(p[0], p[1 + player]) for p in chart_points(sent.values())]


def test_naming_at_the_table_reaches_the_live_tables(db):
    with client_for(create_app(db, pin=PIN)) as client:
        page = client.get("/table/c1ab0002")
        assert 'action="/game/4/names"' in page.text  # the table's current game
        form = {"csrf": token(page), "name1": "Greta", "name2": XSS, "pin": PIN,
                "back": "/table/c1ab0002"}
        done = client.post("/game/4/names", data=form, follow_redirects=False)
        assert done.headers["location"] == "/table/c1ab0002?saved=1"
        assert "Names saved" in client.get(done.headers["location"]).text

        def live_names():
            tables = client.get("/api/tables").json()["tables"]
            return [t["names"] for t in tables if t["board"] == "c1ab0002"] == [["Greta", XSS]]

        assert wait_until(live_names)
        tv = client.get("/").text
        assert "Greta" in tv and XSS not in tv and "&lt;script&gt;" in tv


def test_a_misspelt_name_is_corrected_in_every_game_with_the_pin(db):
    store = Records.open(db)
    store.set_names(1, ["Ana", "Ben"])
    store.set_names(3, ["Ben", "Ana"])
    with client_for(create_app(db, pin=PIN)) as client:
        page = client.get("/players")
        form = {"csrf": token(page), "old": "Ana", "new": "Anna", "pin": "0000"}
        refused = client.post("/players/rename", data=form, follow_redirects=False)
        assert refused.status_code == 403 and "wrong PIN" in refused.text
        assert names_of(db, 1) == ["Ana", "Ben"]
        done = client.post("/players/rename", data=dict(form, pin=PIN),
                           follow_redirects=False)
        assert done.status_code == 303
        assert "Name corrected" in client.get(done.headers["location"]).text
        assert (names_of(db, 1), names_of(db, 3)) == (["Anna", "Ben"], ["Ben", "Anna"])
        unknown = client.post("/players/rename", data=dict(form, old="Nobody", pin=PIN))
        assert unknown.status_code == 400 and "no player called Nobody" in unknown.text


def test_browser_the_same_player_on_both_sides_is_refused(served, db, browser):  # noqa: F811
    browser.get(served.url("/game/3"))
    fill_names(browser, "Иван", "иВАН", PIN)
    assert wait_until(lambda: "cannot play on both sides" in body_text(browser))
    assert names_of(db, 3) == [None, None]


def test_browser_names_fold_case_in_any_script(served, db, browser):  # noqa: F811
    browser.get(served.url("/game/1"))
    fill_names(browser, "Иван", "Ben", PIN)
    assert wait_until(lambda: "Names saved" in body_text(browser))
    browser.get(served.url("/game/3"))
    fill_names(browser, "Anna", "иван", PIN)
    assert wait_until(lambda: "Names saved" in body_text(browser))
    assert names_of(db, 3) == ["Anna", "Иван"]  # the name as first written
    browser.get(served.url("/players"))
    text = body_text(browser)
    assert "Иван" in text and "иван" not in text
    browser.get(served.url("/results?player=%D0%98%D0%92%D0%90%D0%9D"))  # ИВАН
    shown = browser.execute_script(
        "return [...document.querySelectorAll('tr[data-game]')].map(r => r.dataset.game)")
    assert sorted(shown) == ["1", "3"]


# -- the tables' QR codes: an address phones can reach --------------------------------------------


def _qr_title(client, label):
    svg = client.get("/qr/%s.svg" % label).text
    return re.search(r"<title>QR code: ([^<]+)</title>", svg).group(1)


def test_a_tv_opened_on_a_loopback_address_shows_no_code_a_phone_cannot_reach(db):
    app = create_app(db)
    with client_for(app, base_url="http://127.0.0.1:8080") as local:
        page = local.get("/")
        assert page.status_code == 200 and 'class="card tv' in page.text
        assert 'class="qr"' not in page.text
        assert 'id="local-address"' in local.get("/tables/print").text
    with client_for(app, base_url="http://192.168.1.20:8080") as lan:
        page = lan.get("/")
        assert 'class="qr"' in page.text
        label = re.search(r'src="/qr/([^".]+)\.svg"', page.text).group(1)
        assert _qr_title(lan, label) == "http://192.168.1.20:8080/table/" + label
        assert 'id="local-address"' not in lan.get("/tables/print").text


def test_the_codes_hold_the_public_url_whatever_address_the_browser_used(db):
    app = create_app(db, public_url="http://club-pc.local:8080")
    with client_for(app, base_url="http://127.0.0.1:8080") as local:
        page = local.get("/")
        label = re.search(r'src="/qr/([^".]+)\.svg"', page.text).group(1)
        assert _qr_title(local, label) == "http://club-pc.local:8080/table/" + label
        sheet = local.get("/tables/print").text
        assert "http://club-pc.local:8080/table/" + label in sheet
        assert 'id="local-address"' not in sheet
