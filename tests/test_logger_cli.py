"""The logger's command line on bad input: checked before any port is opened, refused
without creating or changing a file, and wire text never printed raw to a terminal."""

import os
import sqlite3
import subprocess
import sys
import time

import pytest

from tools import linkcodes
from tools.logger import frames, report
from tools.logger.core import Logger
from tools.logger.store import Store
from tools.port.linkpipe import LinkPipe

pytestmark = pytest.mark.long(4)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def logger_cli(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "tools.logger", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("value, says", [
    ("ddbu:99999", "9999"), ("-1", "expected RULES"), ("ceb:40:300", "sets"),
    ("ddbu:40:3", "set"), ("ddbu:0", "9999"), ("snooker:40", "rules"),
    ("ddbu:40:1:3", "first"), ("ddbu:\u0664\u0660", "expected RULES"),
    ("ddbu:40:1:teams", "ceb only"), ("ceb:1000:teams", "999"), ("ceb:60:3:1:2:teams", "expected"),
])
def test_new_game_checked_before_any_port_is_opened(tmp_path, value, says):
    db = tmp_path / "games.db"
    out = logger_cli("--port", str(tmp_path / "no-such-port"), "--db", str(db),
                     "--new-game=" + value, "--timeout", "5")
    assert out.returncode == 2, out.stderr
    assert "--new-game" in out.stderr and says in out.stderr, out.stderr
    assert "Traceback" not in out.stderr
    assert not db.exists()


@pytest.mark.parametrize("value, settings", [
    ("ceb:60:3:teams", ("ceb", (60, 60), 3, 1, 1)),
    ("ceb:60,50:1:2:teams", ("ceb", (60, 50), 1, 2, 1)),
    ("ceb:60:3:singles", ("ceb", (60, 60), 3, 1, 0)),
    ("ddbu:40", ("ddbu", (40, 40), 1, 1, 0)),
])
def test_new_game_names_singles_or_teams(value, settings):
    from tools.logger.__main__ import _new_game

    assert _new_game(value) == settings


def test_replace_needs_new_game(tmp_path):
    out = logger_cli("--port", "x", "--db", str(tmp_path / "g.db"), "--replace")
    assert out.returncode == 2 and "--replace goes with --new-game" in out.stderr


@pytest.mark.parametrize("command", ["export", "stats", "view"])
def test_reports_refuse_a_mistyped_path_and_create_nothing(tmp_path, command):
    missing = tmp_path / "gmaes.db"
    args = [command, "--db", str(missing)] + (["--once"] if command == "view" else [])
    out = logger_cli(*args)
    assert out.returncode == 2 and "no such database" in out.stderr, out.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["export", "stats", "view"])
def test_reports_refuse_a_foreign_sqlite_file_and_change_nothing(tmp_path, command):
    foreign = tmp_path / "accounts.db"
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE money (who TEXT, amount INTEGER)")
    con.execute("INSERT INTO money VALUES ('club', 100)")
    con.commit()
    con.close()
    before = foreign.read_bytes()
    args = [command, "--db", str(foreign)] + (["--once"] if command == "view" else [])
    out = logger_cli(*args)
    assert out.returncode == 2 and "not a pinboard logger database" in out.stderr
    assert foreign.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["accounts.db"]
    (tmp_path / "text.db").write_text("hello\n")
    args[2] = str(tmp_path / "text.db")
    out = logger_cli(*args)
    assert out.returncode == 2 and "text.db" in out.stderr and "Traceback" not in out.stderr


def test_logging_into_a_foreign_file_is_refused(tmp_path):
    foreign = tmp_path / "accounts.db"
    sqlite3.connect(foreign).execute("CREATE TABLE money (x)").connection.commit()
    before = foreign.read_bytes()
    out = logger_cli("--port", str(tmp_path / "p"), "--db", str(foreign), "--timeout", "1")
    assert out.returncode == 2 and "not a pinboard logger database" in out.stderr
    assert foreign.read_bytes() == before


def test_a_missing_port_is_reported_and_tried_again(tmp_path):
    said = []
    path = str(tmp_path / "ttyUSB9")
    lg = Logger([path], str(tmp_path / "games.db"), say=said.append)
    lg.run(timeout=0.7)
    assert len(said) == 1 and path in said[0] and "trying again" in said[0]
    with LinkPipe() as pipe:
        os.symlink(pipe.host_path, path)  # the adapter is plugged in
        # tried again once a second (REOPEN_S): waited for, however slow the machine
        assert lg.run(timeout=30, stop_when=lambda lg: lg.ports[0].serial is not None)
        assert said[-1] == path + ": open"
    lg.close()
    out = logger_cli("--port", path + "x", "--db", str(tmp_path / "g2.db"), "--timeout", "1.2")
    assert out.returncode == 0
    assert out.stderr.count("cannot open") == 1 and "trying again" in out.stderr


def test_wire_text_is_never_printed_raw(tmp_path):
    evil = "\x1b]0;pwned\x07\x1b[2J\x9b"
    db = str(tmp_path / "games.db")
    with LinkPipe() as pipe:
        lg = Logger([pipe.host_path], db)
        lg.step(0.05)
        hello = (bytes([linkcodes.PROTOCOL_VERSION]) + b"BOOT" + b"\x03t\x1bb" + b"\x03PWR"
                 + evil.encode("latin-1"))
        pipe.inject(frames.encode(frames.HELLO, 0, hello))
        pipe.inject(frames.encode(frames.ERROR, 1, b"\x13\xff\xff" + evil.encode("latin-1")))
        lg.run(timeout=1.0, stop_when=lambda lg: lg.store.db.execute(
            "SELECT COUNT(*) FROM errors").fetchone()[0] == 1)
        live = report.view_text(lg.store.db)  # what --live draws
        lg.close()
    view = logger_cli("view", "--db", db, "--once").stdout
    for text in (view, live):
        assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text
        assert "\\x1b]0;pwned\\x07" in text
    # the stored text is what came: nothing is lost by the escaping
    store = Store(db, create=False)
    assert store.db.execute("SELECT detail FROM errors").fetchone()[0] == evil
    store.close()


def test_export_keeps_its_contract_face(tmp_path):
    db = str(tmp_path / "games.db")
    Store(db).close()
    out = logger_cli("export", "--db", db)
    assert out.returncode == 0 and out.stdout == ""
    started = time.time()
    assert logger_cli("export", "--db", db, "--format", "csv").stdout.startswith("game,board")
    assert time.time() - started < 60
