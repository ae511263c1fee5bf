"""The club app and the logger's command line under hostile input: out-of-range numbers and
days on every route and option, the PIN guessed, a forged Host header, connections that
send nothing or too much, more connections than descriptors (docs/club.md, "Under
attack"). Browser-facing parts are in tests/test_club_web_hostile.py."""

import os
import subprocess
import sys

import pytest
from club_helpers import client_for, wait_until

from tools.club.app import create_app
from tools.logger.store import Store

pytestmark = pytest.mark.long(9)

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
    # what used to be answered 500, now answered with a reason
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
    (["--public-url", "ftp://club-pc.local"], "--public-url"),
    (["--public-url", "http://club-pc.local:8080/tables?x=1"], "--public-url"),
    (["--public-url", "http://club-pc.local:" + HUGE], "--public-url"),
])
def test_club_options_out_of_range_exit_2_with_a_message(tmp_path, args, message):
    done = subprocess.run([sys.executable, "-m", "tools.club", "--db", _db(tmp_path), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


# -- the PIN --------------------------------------------------------------------------------------

class Clock:
    def __init__(self):
        self.now = 1_800_000_000.0

    def __call__(self):
        return self.now


def test_a_four_digit_pin_holds_for_a_season(hostile_report):
    """An attacker who tries a PIN whenever no lockout stops them, from many addresses
    (every try from a new one), for 300 days: few enough tries that a 4-digit PIN stands."""
    from tools.club.security import PinLimiter

    clock = Clock()
    limiter = PinLimiter(clock=clock)
    season = clock.now + 300 * 86400
    tries = 0
    while clock.now < season:
        client = "10.%d.%d.%d" % (tries >> 16 & 255, tries >> 8 & 255, tries & 255)
        wait = limiter.locked_for(client)
        if wait:
            clock.now += wait
            continue
        limiter.wrong(client)
        tries += 1
    # 10 free, then lockouts doubling from a minute to a day: about 22 on the first day
    # and one a day after (one wrong PIN forgiven a day, which the day's lockout uses up)
    assert tries <= 22 + 300
    odds = tries / 10000
    hostile_report("club: PIN guessing for a season (300 days)", tries=tries,
                   chance_in_10000_of_a_4_digit_pin=tries)
    assert odds < 0.04


def test_one_address_is_locked_after_three_wrong_pins_and_a_right_one_clears_it():
    from tools.club.security import PinLimiter

    clock = Clock()
    limiter = PinLimiter(clock=clock)
    for _ in range(3):
        assert limiter.locked_for("10.0.0.1") == 0
        limiter.wrong("10.0.0.1")
    limiter.wrong("10.0.0.1")
    assert limiter.locked_for("10.0.0.1") == 60  # the fourth: a minute
    assert limiter.locked_for("10.0.0.2") == 0  # others write on
    clock.now += 60
    limiter.wrong("10.0.0.1")
    assert limiter.locked_for("10.0.0.1") == 120  # then two, four, ... up to a day
    clock.now += 120
    limiter.right("10.0.0.1")
    assert limiter.locked_for("10.0.0.1") == 0
    status = limiter.status()
    assert status["wrong"] == 5 and status["strikes"] == 0 and status["clients_locked"] == 0


def test_a_club_with_typos_is_never_locked_out():
    """Ten members, each typing the PIN twice a day, one in five of them wrong first."""
    from tools.club.security import PinLimiter

    clock = Clock()
    limiter = PinLimiter(clock=clock)
    for day in range(60):
        for member in range(10):
            client = "192.168.1.%d" % (10 + member)
            for _ in range(2):
                clock.now += 1800
                assert limiter.locked_for(client) == 0, (day, member)
                if (day + member) % 5 == 0:
                    limiter.wrong(client)
                limiter.right(client)


def test_the_lockout_survives_a_restart_of_the_app(tmp_path):
    from tools.club import security

    db = _db(tmp_path)
    app = create_app(db, pin="4711")
    for n in range(12):  # past the ten everybody gets, from twelve addresses
        with client_for(app, client=("10.0.0.%d" % n, 5000)) as client:
            wrong = client.post("/game/1/names", data=_names_form(app, client, "0000"))
            assert wrong.status_code == (403 if n < 11 else 429), (n, wrong.text)
    with client_for(app, client=("10.0.1.1", 5000)) as client:
        status = client.get("/status.json").json()["pin"]
    assert status["strikes"] == 11 and status["locked_s"] > 0 and status["wrong"] == 11
    again = create_app(db, pin="4711")  # the club PC switched off and on
    with client_for(again, client=("10.0.1.2", 5000)) as client:
        refused = client.post("/game/1/names", data=_names_form(again, client, "4711"))
        assert refused.status_code == 429 and "locked" in refused.text
        assert int(refused.headers["Retry-After"]) > 0
        assert again.state.guard.refusals["locked"] == 1
        assert client.get("/status.json").json()["pin"]["strikes"] == 11
        assert "writing is locked for" in client.get("/").text  # every page says so
    assert security.PinLimiter.GLOBAL_FREE == 10


def _names_form(app, client, pin):
    """A names form for game 1 as the app's page would give it (its token)."""
    client.get("/")  # the session cookie
    token = app.state.guard.token(client.cookies["club_session"])
    return {"csrf": token, "name1": "A", "name2": "B", "pin": pin}


# -- the Host header ------------------------------------------------------------------------------

@pytest.mark.parametrize("host,allowed", [
    ("localhost", True), ("localhost:8080", True), ("127.0.0.1:8080", True),
    ("192.168.1.10:8080", True), ("[::1]:8080", True), ("[fe80::1]", True),
    ("club-pc.local:8080", True), ("CLUB-PC.local", True),
    ("evil.example:8080", False), ("evil.example", False), ("localhost.evil.example", False),
    ("127.0.0.1.nip.io:8080", False), ("", False), ("localhost:80x", False),
    ("[::1]x", False), ("club-pc.local.:8080", False)])
def test_the_host_header_names_this_app(tmp_path, host, allowed):
    app = create_app(_db(tmp_path), pin="4711", allowed_hosts=["club-pc.local"])
    with client_for(app) as client:
        got = client.get("/api/tables", headers={"Host": host})
    assert (got.status_code == 200) == allowed, (host, got.status_code, got.text)
    if not allowed:
        assert got.status_code == 421 and "--allow-host" in got.text
        assert app.state.guard.refusals["host"] == 1


def test_a_members_right_pin_takes_back_only_their_own_typos():
    from tools.club.security import PinLimiter

    limiter = PinLimiter(clock=Clock())
    for i in range(8):
        limiter.wrong("10.6.6.%d" % i)  # an attacker, never right
    limiter.wrong("192.168.1.20")  # a member's typo ...
    limiter.wrong("192.168.1.20")
    assert limiter.status()["strikes"] == 10
    limiter.right("192.168.1.20")  # ... then the PIN
    assert limiter.status()["strikes"] == 8
    limiter.right("10.6.7.1")  # an address with no wrong PIN: nothing to take back
    assert limiter.status()["strikes"] == 8


# -- connections ----------------------------------------------------------------------------------

@pytest.fixture
def guarded(tmp_path):
    """The app served by uvicorn with the club's limits, made small and quick: 4 connections
    an address, a whole request within 0.5 s; what it says is kept in ``said``."""
    from tools.club.serving import Limits
    from tools.testing.browser import Served

    said = []
    limits = Limits(per_client=4, request_timeout_s=0.5, say=said.append)
    served = Served(create_app(_db(tmp_path), pin="4711", limits=limits))
    served.said = said
    yield served
    served.stop()


def _connect(served, source="127.0.0.1"):
    import socket

    s = socket.socket()
    s.bind((source, 0))
    s.settimeout(5)
    s.connect(("127.0.0.1", served.port))
    return s


def _closed_within(sock, seconds):
    """What the server sent before closing the connection, if it closed within seconds."""
    import time

    sock.settimeout(seconds)
    got = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(4096)
        except TimeoutError:
            return None
        except ConnectionResetError:
            return got
        if not chunk:
            return got
        got += chunk
    return None


def _get(served, path, source="127.0.0.1"):
    s = _connect(served, source)
    s.sendall(b"GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n" % path)
    answer = _closed_within(s, 5)
    s.close()
    return answer


def test_idle_half_sent_and_trickled_requests_are_closed(guarded):
    import time

    idle = _connect(guarded)
    half = _connect(guarded)
    half.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n")
    trickle = _connect(guarded)
    started = time.monotonic()
    for byte in b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"[:12]:
        try:
            trickle.sendall(bytes([byte]))
        except OSError:
            break
        time.sleep(0.1)
    for sock in (idle, half, trickle):
        assert _closed_within(sock, 3) is not None
        sock.close()
    assert time.monotonic() - started < 3
    assert guarded.app.state.limits.counts["timed_out"] == 3
    assert _get(guarded, b"/api/tables").startswith(b"HTTP/1.1 200")  # the app answers on
    assert sum("no whole request" in line for line in guarded.said) == 1  # said once


def test_an_event_stream_outlives_the_request_timeout(guarded):
    s = _connect(guarded)
    s.sendall(b"GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
    assert _closed_within(s, 1.5) is None  # still open: the request came whole
    s.close()


def test_more_connections_than_an_address_may_keep_are_refused_cleanly(guarded,
                                                                     hostile_report):
    held = [_connect(guarded) for _ in range(4)]
    for sock in held:
        sock.sendall(b"GET / HTTP/1.1\r\n")  # each holds half a request
    refused = []
    for _ in range(20):
        answer = _closed_within(_connect(guarded), 3)
        refused.append(answer)
    assert all(a is not None and a.startswith(b"HTTP/1.1 503") and b"too many connections"
               in a for a in refused), refused[:2]
    assert _get(guarded, b"/api/tables", source="127.0.0.2").startswith(b"HTTP/1.1 200")
    counts = guarded.app.state.limits.counts
    assert counts["refused_client"] == 20
    assert sum("refusing connections from 127.0.0.1" in line for line in guarded.said) == 1
    for sock in held:
        sock.close()
    hostile_report("club: connections past an address's limit", refused=20, logged=1)


def test_a_body_larger_than_a_form_is_refused(guarded):
    s = _connect(guarded)
    s.sendall(b"POST /players/rename HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000000"
              b"\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\n" + b"x" * 1000)
    answer = _closed_within(s, 3)
    s.close()
    assert answer.startswith(b"HTTP/1.1 413")
    s = _connect(guarded)
    s.sendall(b"POST /players/rename HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked"
              b"\r\n\r\n" + b"8000\r\n" + b"x" * 0x8000 + b"\r\n")
    answer = _closed_within(s, 3)
    s.close()
    assert answer.startswith(b"HTTP/1.1 413")
    assert guarded.app.state.limits.counts["too_large"] == 2


def test_a_flood_of_half_sent_requests_under_1024_descriptors(tmp_path, hostile_report):
    """The measurement the limits were made for: `python -m tools.club --demo 1` with 1024
    file descriptors, then thousands of connections from sixty addresses that each send
    half a request and hold it. The app must answer everyone cleanly (200 or 503) all
    along, be itself again once the held requests time out, keep its demo table playing,
    and say each kind of trouble once on stderr: no traceback."""
    import json
    import resource
    import signal
    import socket
    import time
    import urllib.error
    import urllib.request

    from tools.board.broker import free_port

    port = free_port()
    err = open(tmp_path / "club.err", "wb")

    def limited():
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))

    proc = subprocess.Popen(
        [sys.executable, "-m", "tools.club", "--db", str(tmp_path / "demo.db"), "--demo", "1",
         "--demo-speed", "10", "--listen", "127.0.0.1:%d" % port],
        cwd=ROOT, stderr=err, stdout=subprocess.DEVNULL, preexec_fn=limited,
        start_new_session=True)

    def get(path, timeout=5.0):
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path),
                                        timeout=timeout) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()
        except OSError:
            return None, b""

    def shots():
        status, body = get("/api/tables")
        if status != 200:
            return None
        tables = json.loads(body)["tables"]
        return tables[0]["state"]["shots"] if tables else None

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    # The attacker keeps descriptors for the legitimate requests and the checks: with all
    # of its own taken by held sockets (a fast loop on a loaded machine got there), its
    # every request failed and the app looked as if it never came back.
    most_held = min(hard, 8192) - 256
    held, attempts, answers = [], 0, []
    try:
        before = wait_until(shots, 90, 0.2)
        assert before, "the demo table never played"
        started = time.monotonic()
        next_legit = started
        while time.monotonic() - started < 6.0:
            source = "127.0.0.%d" % (2 + attempts % 60)
            attempts += 1
            try:
                if len(held) < most_held:
                    s = socket.create_connection(("127.0.0.1", port), timeout=2,
                                                 source_address=(source, 0))
                    s.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n")  # never the rest
                    held.append(s)
            except OSError:
                pass
            if attempts % 300 == 0:
                time.sleep(0.05)
            if time.monotonic() >= next_legit:
                asked = time.monotonic()
                status, _ = get("/api/tables", timeout=10)
                answers.append((status, time.monotonic() - asked))
                next_legit = time.monotonic() + 0.5
        # the attacker stops opening but keeps holding what it has
        # the last held requests time out REQUEST_TIMEOUT_S (10 s) after they came; the app,
        # busy closing thousands of them on a loaded machine, may take a while longer
        back = wait_until(lambda: get("/")[0] == 200, 45, 0.2)
        after_attack = time.monotonic() - started
        if not back:  # what the app said, and whether it still runs, for the report
            err.flush()
            said = (tmp_path / "club.err").read_text(errors="replace")[-3000:]
            raise AssertionError("the app did not come back while the half-sent requests were "
                                 "held (%d opened, app exit code %s, %d legitimate answers "
                                 "%s); it said:\n%s" % (len(held), proc.poll(), len(answers),
                                                        answers[-5:], said))
        assert wait_until(lambda: (shots() or 0) > before, 60, 0.2), "the demo table stopped"
        status = json.loads(get("/status.json")[1])["connections"]
    finally:
        for s in held:
            s.close()
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(30)
        err.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    said = (tmp_path / "club.err").read_text(errors="replace")
    assert proc.returncode == 0, said[-2000:]
    assert "Traceback" not in said and len(said.splitlines()) < 20, said[-2000:]
    # everyone asking during the attack got an answer, quickly: the page or a clean 503
    assert answers and all(s in (200, 503) and t < 5 for s, t in answers), answers
    assert status["timed_out"] > 0 and status["refused_client"] + status["refused_total"] > 0
    assert status["accept_errors"] == 0  # the descriptors never ran out
    hostile_report("club: half-sent requests under 1024 descriptors", attempts=attempts,
                   timed_out=status["timed_out"],
                   refused=status["refused_client"] + status["refused_total"],
                   stderr_lines=len(said.splitlines()), tracebacks=said.count("Traceback"),
                   seconds_until_back=int(after_attack))


# -- a hostile pass beyond the guards' own tests (docs/hostile.md) --------------------------------

def test_a_hostile_pass_over_the_wire(guarded, hostile_report, capfd, caplog):
    import logging
    import random

    rnd = random.Random(18)
    big = b"x" * 20000
    cases = {
        "header over 16 KB": b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: " + big + b"\r\n\r\n",
        "URL over 16 KB": b"GET /results?player=" + big + b" HTTP/1.1\r\nHost: localhost\r\n\r\n",
        "no Host header": b"GET / HTTP/1.1\r\n\r\n",
        "two Host headers": b"GET / HTTP/1.1\r\nHost: localhost\r\nHost: evil.test\r\n\r\n",
        "HTTP/0.9": b"GET /\r\n\r\n",
        "bad method": b"G\x00T / HTTP/1.1\r\nHost: localhost\r\n\r\n",
        "TRACE": b"TRACE / HTTP/1.1\r\nHost: localhost\r\n\r\n",
        "DELETE a game": b"DELETE /game/1 HTTP/1.1\r\nHost: localhost\r\n\r\n",
        "static traversal": b"GET /static/../../../../etc/passwd HTTP/1.1\r\nHost: "
                            b"localhost\r\n\r\n",
        "static traversal, encoded": b"GET /static/%2e%2e/%2e%2e/app.py HTTP/1.1\r\nHost: "
                                     b"localhost\r\n\r\n",
        "a garbled cookie": b"GET / HTTP/1.1\r\nHost: localhost\r\nCookie: club_session=\"\\\x7f;"
                            b";=;" + b"a" * 4000 + b"\r\n\r\n",
        "not UTF-8 in a form": b"POST /players/rename HTTP/1.1\r\nHost: localhost\r\nContent-Type:"
                               b" application/x-www-form-urlencoded\r\nContent-Length: 18\r\n\r\n"
                               b"old=%ff%fe&new=%c3",
        "a file in a form": b"POST /game/1/names HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
                            b"multipart/form-data; boundary=b\r\nContent-Length: 78\r\n\r\n"
                            b"--b\r\nContent-Disposition: form-data; name=\"pin\"; filename=\"x"
                            b"\"\r\n\r\n1234\r\n--b--\r\n",
        "half a form, then silence": b"POST /game/1/names HTTP/1.1\r\nHost: localhost\r\n"
                                     b"Content-Type: application/x-www-form-urlencoded\r\n"
                                     b"Content-Length: 500\r\n\r\nname1=A&pi",
        "upgrade to a websocket": b"GET /events HTTP/1.1\r\nHost: localhost\r\nConnection: "
                                  b"Upgrade\r\nUpgrade: websocket\r\n\r\n",
        "chunked lies": b"POST /players/rename HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding:"
                        b" chunked\r\n\r\nzz\r\n",
    }
    for n in range(40):
        cases["noise %d" % n] = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 300)))
    sent = {}
    for n, (name, data) in enumerate(cases.items()):  # all at once, each from its address
        sent[name] = _connect(guarded, source="127.0.0.%d" % (10 + n))
        try:
            sent[name].sendall(data)
        except OSError:
            pass
    statuses = {}
    for name, sock in sent.items():
        answer = _closed_within(sock, 5) or b""
        sock.close()
        status = answer[9:12] if answer.startswith(b"HTTP/1.1 ") else b""
        statuses[name] = status
        assert not status.startswith(b"5"), (name, answer[:200])
        assert b"root:" not in answer and b"import " not in answer, name
    assert statuses["static traversal"] in (b"404", b"400")
    assert statuses["static traversal, encoded"] in (b"404", b"400")
    assert statuses["two Host headers"] in (b"400", b"421")
    assert statuses["DELETE a game"] == b"405" and statuses["TRACE"] == b"405"
    assert _get(guarded, b"/api/tables").startswith(b"HTTP/1.1 200")
    said = guarded.said
    assert len(said) <= 4, said  # each kind of trouble once
    logged = capfd.readouterr().err
    assert "Traceback" not in logged and "Exception" not in logged, logged[-2000:]
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == []
    hostile_report("club: hostile requests over the wire", requests=len(cases),
                   server_errors=0, lines_said=len(said),
                   bad_requests=guarded.app.state.limits.counts["bad_requests"])


def test_names_that_hide_or_fake_text_are_refused():
    from tools.records.names import RecordError, clean_name

    hiding = ["Anna\u202eneB", "An\u200bna", "\u2066Anna\u2069", "Anna\x00", "Anna\ufeff",
              "\u0300" * 41]
    for name in hiding:
        with pytest.raises(RecordError):
            clean_name(name)
    assert clean_name("Anna\u00a0 Lund") == "Anna Lund"  # a no-break space is a space
