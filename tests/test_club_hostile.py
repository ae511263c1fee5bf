"""The club app and the logger's command line under hostile input: out-of-range numbers and
days on every route and option, the PIN guessed, a forged Host header, connections that
send nothing or too much, more connections than descriptors (docs/club.md, "Under
attack"). Browser-facing parts are in tests/test_club_web_hostile.py."""

import os
import subprocess
import sys

import pytest
from club_helpers import client_for

from tools.club.app import create_app
from tools.logger.store import Store

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HUGE = "9" * 20
OUT_OF_RANGE = [HUGE, "-" + HUGE, "9223372036854775808", "-1", "0", "1e5", "+5", "5_0",
                "\u0664", "\u00b2", "%ff", "%00", "x" * 3000]
DAYS = ["9999-12-31", "0001-01-01", "2026-02-30", "2026-1-1", "\u0662\u0660\u0662\u0666-01-01",
        "%00", "x" * 3000]


def _db(tmp_path):
    db = str(tmp_path / "games.db")
    Store(db).close()
    return db


def _urls():
    for value in OUT_OF_RANGE:
        yield "/game/" + value
        yield "/export.json?game=" + value
        yield "/export.csv?game=" + value
        yield "/table/" + value
        yield "/overlay/" + value
        yield "/results?table=" + value
        yield "/results?player=" + value
    for day in DAYS:
        yield "/results?day=" + day
        yield "/export.json?day=" + day
        yield "/export.csv?day=%s&player=x" % day


def test_every_route_answers_out_of_range_input_with_4xx(tmp_path, hostile_report):
    app = create_app(_db(tmp_path), pin="4711")
    statuses = {}
    with client_for(app, raise_server_exceptions=False) as client:
        for url in _urls():
            got = client.get(url)
            statuses[url] = got.status_code
            assert got.status_code < 500, (url, got.status_code, got.text[:300])
            if got.status_code >= 400:
                assert "Internal Server Error" not in got.text
        # the writes too: a game's number out of range is "no such game", PIN or not
        for value in OUT_OF_RANGE[:4]:
            got = client.post("/game/%s/names" % value, data={"name1": "A", "pin": "4711"})
            assert got.status_code in (403, 404), (value, got.status_code)
    # what the issue measured as 500s, now answered with a reason
    assert statuses["/game/" + HUGE] == 404
    assert statuses["/export.json?game=-" + HUGE] == 400
    assert statuses["/results?day=9999-12-31"] == 400
    assert statuses["/export.json?day=9999-12-31"] == 400
    hostile_report("club: out-of-range input on every route", requests=len(statuses),
                   server_errors=0)


def _logger(*args):
    return subprocess.run([sys.executable, "-m", "tools.logger", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("args,message", [
    (["export", "--day", "9999-12-31"], "past the days"),
    (["export", "--game", HUGE], "game's number"),
    (["export", "--game", "-" + HUGE], "game's number"),
    (["export", "--game", "\u0664"], "game's number"),
    (["export", "--day", "\u0662\u0660\u0662\u0666-01-01"], "YYYY-MM-DD"),
    (["export", "--player", "x" * 300], "at most"),
    (["--port", "/dev/null", "--baud", HUGE], "baud"),
    (["--port", "/dev/null", "--timeout", "nan"], "seconds"),
])
def test_logger_options_out_of_range_exit_2_with_a_message(tmp_path, args, message):
    db = _db(tmp_path)
    head = args[:1] if args[0] == "export" else []
    done = _logger(*head, "--db", db, *args[len(head):])
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize("args,message", [
    (["--demo-speed", "nan"], "--demo-speed"),
    (["--demo-speed", "-1"], "--demo-speed"),
    (["--baud", "0"], "baud"),
    (["--listen", "127.0.0.1:" + HUGE], "HOST:PORT"),
])
def test_club_options_out_of_range_exit_2_with_a_message(tmp_path, args, message):
    done = subprocess.run([sys.executable, "-m", "tools.club", "--db", _db(tmp_path), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
