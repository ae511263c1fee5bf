"""The club web app without a browser: pages, events, writes and their refusals.

Board-shaped frames go over ptys into the real logger (tools.testing.fakeboards), the app
reads what the logger stored; requests go through Starlette's TestClient or, for the
server-sent events, through uvicorn on 127.0.0.1.
"""

import json
import os
import struct
import subprocess
import sys
import time
import urllib.request

import httpx
import pytest
from club_helpers import client_for, club, sim_board_on_broker, wait_until
from helpers import descendants

from rules_core import Game
from tools.club import security
from tools.logger import frames

pytestmark = [pytest.mark.long(15), pytest.mark.waits]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def api_tables(port):
    """The app's /api/tables list, or None while the app does not answer yet."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/api/tables" % port, timeout=5) as r:
            return json.loads(r.read())["tables"]
    except OSError:
        return None


def _played(shots=3, rules="ddbu", distance=(40, 40)):
    game = Game(rules, distance)
    for i in range(shots):
        game.shot(pins=0b10101 if i % 2 else 0b00010, carom=i % 2)
    return game


def test_pages_show_what_the_board_sent(tmp_path):
    with club(tmp_path, boards=2, serve=False) as c:
        game = _played()
        c.boards[0].send_state(game)
        c.wait_stored(c.boards[0], game)
        with client_for(c.app) as client:
            wait_until(lambda: c.hub.current.get(c.boards[0].key))
            page = client.get("/")
            assert page.status_code == 200
            assert "Table T01" in page.text
            state = game.state()
            assert ">%d</span>" % state["score"][0] in page.text
            assert ">%d</span>" % state["score"][1] in page.text
            tables = client.get("/api/tables").json()["tables"]
            assert [t["board"] for t in tables] == [c.boards[0].key]
            assert tables[0]["state"] == state
            for path in ("/table/", "/overlay/"):
                one = client.get(path + c.boards[0].key)
                assert one.status_code == 200 and "Table T01" in one.text
            missing = client.get("/table/nosuchboard")
            assert missing.status_code == 404 and "nosuchboard" in missing.text


def export_games(db):
    """The logger's JSON export of `db`: one dict a game."""
    out = subprocess.run([sys.executable, "-m", "tools.logger", "export", "--db", str(db)],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def _form(client, board, **fields):
    page = client.get("/table/" + board)
    token = page.text.split('name="csrf" value="')[1].split('"')[0]
    form = {"csrf": token, "rules": "russian", "distance": "60", "sets": "1", "first": "2"}
    form.update(fields)
    return form


def _new_game_commands(board):
    return [struct.unpack("<BHHBBB", p) for k, _, p in board.commands
            if k == frames.CMD_NEW_GAME]


def test_a_new_game_needs_the_pin_and_the_form_token(tmp_path):
    with club(tmp_path, pin="4711", serve=False) as c:
        board = c.boards[0]
        c.boards[0].send_state(_played(1))
        with client_for(c.app, base_url="http://localhost") as client:
            wait_until(lambda: c.hub.current.get(board.key))
            url = "/table/%s/new-game" % board.key
            guard = c.app.state.guard

            wrong = client.post(url, data=_form(client, board.key, pin="1234"))
            assert wrong.status_code == 403 and security.WRONG_PIN in wrong.text
            assert guard.refusals["wrong_pin"] == 1

            no_token = _form(client, board.key, pin="4711")
            del no_token["csrf"]
            stale = client.post(url, data=no_token)
            assert stale.status_code == 403 and security.EXPIRED in stale.text
            forged = client.post(url, data=dict(no_token, csrf="0" * 64))
            assert forged.status_code == 403 and guard.refusals["csrf"] == 2

            cross = client.post(url, data=_form(client, board.key, pin="4711"),
                                headers={"Origin": "http://evil.test"})
            assert cross.status_code == 403 and guard.refusals["cross_origin"] == 1

            time.sleep(0.3)  # a refused write must not have reached the logger
            assert _new_game_commands(board) == []
            assert client.get("/status.json").json()["refusals"] == guard.refusals

            done = client.post(url, data=_form(client, board.key, pin="4711"),
                               headers={"Origin": "http://localhost"}, follow_redirects=False)
            assert done.status_code == 303, done.text
            assert wait_until(lambda: _new_game_commands(board), timeout=10)
            # russian (index in the link's rules list), 60 each, one set, player 2 first
            rules, d1, d2, sets, first, flags = _new_game_commands(board)[0]
            assert frames.linkcodes.RULES[rules] == "russian"
            assert (d1, d2, sets, first, flags) == (60, 60, 1, 2, 0)


def test_without_a_pin_nothing_can_be_written(tmp_path):
    with club(tmp_path, serve=False) as c:
        board = c.boards[0]
        board.send_state(_played(1))
        with client_for(c.app) as client:
            wait_until(lambda: c.hub.current.get(board.key))
            page = client.get("/table/" + board.key)
            assert "--pin" in page.text
            refused = client.post("/table/%s/new-game" % board.key,
                                  data=_form(client, board.key, pin=""))
            assert refused.status_code == 403 and "--pin" in refused.text
            assert c.app.state.guard.refusals["no_pin_set"] == 1
            time.sleep(0.3)
            assert _new_game_commands(board) == []


def test_every_template_is_escaped(tmp_path):
    from tools.club.app import make_templates

    env = make_templates().env
    for name in env.list_templates():
        assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"
        assert env.get_template(name).environment.autoescape is True


def _events(url, count, timeout=20.0):
    """The first ``count`` `tables` events of /events, as dicts."""
    got = []
    with httpx.stream("GET", url, timeout=timeout) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("data: "):
                got.append(json.loads(line[6:]))
                if len(got) >= count:
                    break
    return got


def test_a_new_state_reaches_an_event_stream_client(tmp_path):
    import threading

    with club(tmp_path) as c:
        game = _played(2)
        c.boards[0].send_state(game)
        c.wait_live(c.boards[0], game)
        out = []
        reader = threading.Thread(target=lambda: out.extend(_events(c.url("/events"), 2)))
        reader.start()
        assert wait_until(lambda: c.hub.clients, timeout=10)
        game.shot(pins=0b11111, carom=1)
        c.boards[0].send_state(game)
        reader.join(timeout=20)
        first, change = out
        assert first["all"] and first["tables"][0]["state"] == _played(2).state()
        assert [t["state"] for t in change["tables"]] == [game.state()]


def test_command_line_refuses_bad_options(tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "tools.club", *args], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)

    bad = run("--db", str(tmp_path / "x.db"), "--listen", "nowhere")
    assert bad.returncode == 2 and "HOST:PORT" in bad.stderr
    bad = run("--db", str(tmp_path / "x.db"), "--demo", "0")
    assert bad.returncode == 2 and "1 to 32" in bad.stderr
    missing = run("--db", str(tmp_path / "none.db"))
    assert missing.returncode == 2 and "no such database" in missing.stderr
    assert not (tmp_path / "none.db").exists()


@pytest.mark.parametrize("pin", ["", "   "])
def test_an_empty_pin_is_an_error(tmp_path, pin):
    done = subprocess.run([sys.executable, "-m", "tools.club", "--db", str(tmp_path / "x.db"),
                           "--pin", pin], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--pin" in done.stderr


def test_the_demo_tables_play_and_stop_with_the_app(tmp_path):
    # `make club`: the real firmware on a simulated board, through the logger, on the page
    import signal

    with __import__("socket").socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    db = tmp_path / "demo.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tools.club", "--db", str(db), "--demo", "1", "--demo-speed",
         "10", "--listen", "127.0.0.1:%d" % port], cwd=ROOT, stderr=subprocess.PIPE,
        start_new_session=True)

    def shots():
        tables = api_tables(port)
        return tables[0]["state"]["shots"] if tables else None

    try:
        first = wait_until(lambda: shots(), timeout=90, step=0.2)
        assert first, "no shot of the simulated table reached the app"
        assert wait_until(lambda: (shots() or 0) > first, timeout=60, step=0.2), \
            "the simulated table stopped playing"
        with urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=5) as r:
            assert "Table T01" in r.read().decode()
        boards = descendants(proc.pid)
        assert boards, "no simulated board process"
    finally:
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in the terminal: the whole group
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err.decode()
    assert wait_until(lambda: not any(os.path.exists("/proc/%d" % p) for p in boards),
                      timeout=10), "simulated boards left running"


def test_a_board_on_the_clubs_broker_shows_on_the_tables_and_takes_a_new_game(tmp_path):
    # python -m tools.club --mqtt: the real firmware and umqtt on the simulated board,
    # a real Mosquitto on 127.0.0.1, the logger inside the club app; a new game started
    # from the web with the PIN reaches the board as a signed command over the broker
    import signal

    from tools.board import broker as broker_tool

    why = broker_tool.available()
    if why is not None:
        pytest.skip(str(why))
    users = {"logger": "logger-pw", "t1": "t1-pw"}
    key = bytes(range(32))
    (tmp_path / "keys.txt").write_text("t1 %s\n" % key.hex())
    with broker_tool.Mosquitto(str(tmp_path / "broker"), users, ("t1",)) as mosquitto:
        with __import__("socket").socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        club_proc = subprocess.Popen(
            [sys.executable, "-m", "tools.club", "--db", str(tmp_path / "games.db"),
             "--mqtt", "mqtt://logger:logger-pw@127.0.0.1:%d" % mosquitto.port,
             "--keys", str(tmp_path / "keys.txt"), "--listen", "127.0.0.1:%d" % port,
             "--pin", "1357"],
            cwd=ROOT, stderr=subprocess.PIPE, start_new_session=True)
        board = None
        try:
            # at four times real time, so that the game is still on when the club starts
            # the new one
            board = sim_board_on_broker(tmp_path, mosquitto.port, key, seed=7, length=12)

            def table():
                tables = api_tables(port)
                return next((t for t in tables if t["label"] == "t1"), None) if tables else None

            def state():
                return (table() or {}).get("state") or {}

            assert wait_until(lambda: state().get("shots"), timeout=60), table()
            assert state()["rules"] == "ddbu"
            base = "http://127.0.0.1:%d" % port
            with httpx.Client(base_url=base) as client:
                form = _form(client, table()["board"], pin="1357", replace="1")
                done = client.post("/table/%s/new-game" % table()["board"], data=form,
                                   follow_redirects=True)
                assert done.status_code == 200 and "Sent to the board" in done.text, done.text
            # russian, 60 each, player 2 first (the form): played by the board, logged
            assert wait_until(lambda: state().get("rules") == "russian", timeout=30), table()
            new = state()
            assert (new["distance"], new["first"]) == ([60, 60], 2)
            out, err = board.communicate(timeout=300)
            assert board.returncode == 0, err
            final = json.loads(out.splitlines()[-1])
            assert final["rules"] == "russian"
            assert wait_until(lambda: state() == final, timeout=60), table()
        finally:
            if board is not None and board.poll() is None:
                board.kill()
            os.killpg(club_proc.pid, signal.SIGINT)
            _, err = club_proc.communicate(timeout=30)
        assert club_proc.returncode == 0, err.decode()
        games = export_games(tmp_path / "games.db")  # the replaced game kept apart
        assert [(g["board"], g["final"]["rules"]) for g in games] == [
            (b"t1".hex(), "ddbu"), (b"t1".hex(), "russian")]


def test_a_sent_message_is_only_shown_for_what_was_sent(tmp_path):
    # a made-up link (?sent=...) shows nothing; what the logger did send is said once,
    # to the browser that asked; a board that has gone away: "Nothing was sent"
    with club(tmp_path, pin="4711", serve=False) as c:
        board = c.boards[0]
        board.send_state(_played(1))
        with client_for(c.app) as client:
            wait_until(lambda: c.hub.current.get(board.key))
            for made_up in ("1", "x", "../../etc"):
                page = client.get("/table/%s?sent=%s" % (board.key, made_up))
                assert "Sent to the board" not in page.text
            done = client.post("/table/%s/new-game" % board.key,
                               data=_form(client, board.key, pin="4711"),
                               follow_redirects=False)
            where = done.headers["location"]
            assert "Sent to the board; it has not answered yet" in client.get(where).text
            assert "Sent to the board" not in client.get(where).text  # once
            # another browser on the same server (its own cookies; the app's lifespan, and
            # with it the live hub, is the first client's: one server runs one)
            other = client_for(c.app)
            assert "Sent to the board" not in other.get(where).text
            c.logger.stop()  # the logger stops: its ports stay as they were
            c.bridge.thread.join(10)
            late = client.post("/table/%s/new-game" % board.key,
                               data=_form(client, board.key, pin="4711"))
            assert late.status_code == 409 and "Nothing was sent" in late.text
