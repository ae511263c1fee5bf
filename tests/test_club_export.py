"""Exports carry the names given at the table: `tools.logger export` and the records the
club's pages read (their export links) give the same bytes."""

import contextlib
import csv
import io
import json
import os
import subprocess
import sys

import pytest
from club_games import logged_club

from tools.records import Records

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ODD = 'J. "Big", <script>alert(1)</script>'


def export_cli(*args):
    """What `python -m tools.logger export ARGS` prints, run in this process (its own
    command line, tools.logger.__main__; test_the_command_itself runs it as a program)."""
    from tools.logger.__main__ import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["export", *args]) == 0
    return out.getvalue().encode()


def test_the_command_itself(named):
    path, _ = named
    for fmt in ("json", "csv"):
        out = subprocess.run([sys.executable, "-m", "tools.logger", "export", "--db", path,
                              "--format", fmt], cwd=ROOT, capture_output=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout == export_cli("--db", path, "--format", fmt)


@pytest.fixture(scope="module")
def named(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("export") / "games.db")
    logged_club(path, [("c1ab0001", [("ddbu", (30, 30), 1, 31), ("ceb", (30, 30), 3, 32)]),
                       ("c1ab0002", [("russian", (30, 30), 1, 33)])])
    store = Records.open(path)
    store.set_names(1, ["Anna", ODD])
    store.set_names(3, ["Ben", None])  # slot 2 never named
    yield path, store
    store.close()


@pytest.mark.parametrize("fmt", ["json", "csv"])
@pytest.mark.parametrize("game", [None, 1, 2])
def test_the_cli_and_the_club_give_the_same_bytes(named, fmt, game):
    path, store = named
    args = ["--db", path, "--format", fmt] + ([] if game is None else ["--game", str(game)])
    lines = store.export_lines(game, fmt)
    assert export_cli(*args) == "".join(line + "\n" for line in lines).encode()


def test_json_carries_the_names(named):
    path, _ = named
    records = {r["game"]: r for r in map(json.loads, export_cli("--db", path).splitlines())}
    assert records[1]["names"] == ["Anna", ODD]
    assert records[2]["names"] == [None, None]
    assert records[3]["names"] == ["Ben", None]


def test_csv_carries_the_names_in_their_own_columns(named):
    path, _ = named
    rows = list(csv.DictReader(io.StringIO(export_cli("--db", path, "--format", "csv")
                                           .decode())))
    got = {int(r["game"]): (r["name1"], r["name2"]) for r in rows}
    assert got == {1: ("Anna", ODD), 2: ("", ""), 3: ("Ben", "")}
    assert list(rows[0])[-2:] == ["name1", "name2"]  # the earlier columns keep their places


def test_a_database_the_club_never_opened_exports_without_names(tmp_path):
    path = str(tmp_path / "plain.db")
    logged_club(path, [("c1ab0001", [("ddbu", (20, 20), 1, 34)])])
    (record,) = map(json.loads, export_cli("--db", path).splitlines())
    assert record["names"] == [None, None]
    tables = Records.reading(path).con.execute(
        "SELECT name FROM sqlite_master WHERE name LIKE 'club%'").fetchall()
    assert tables == []  # exporting made nothing


def test_logger_stats_add_the_players_by_name_and_change_nothing(named):
    path, store = named
    before = os.path.getmtime(path), os.path.getsize(path)
    out = subprocess.run([sys.executable, "-m", "tools.logger", "stats", "--db", path],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    table = lines[lines.index("") + 3:]
    want = [(e["name"], e["rules"], e["games"], e["won"], e["points"], e["innings"],
             "%.3f" % e["average"], e["high"]) for e in store.player_stats()]
    got = []
    for line in table:
        *name, rules, games, won, points, innings, average, high = line.split()
        got.append((" ".join(name), rules, int(games), int(won), int(points), int(innings),
                    average, int(high)))
    assert got == want and any(name == ODD for name, *_ in got)
    assert (os.path.getmtime(path), os.path.getsize(path)) == before


@pytest.mark.parametrize("filters", [{"table": "c1ab0001"}, {"player": "anna"},
                                     {"player": "Nobody"}, {"table": "c1ab0002",
                                                            "player": "Ben"}])
def test_an_export_narrowed_as_the_results_page_is(named, filters):
    path, store = named
    args = ["--db", path, "--format", "csv"]
    for key, value in filters.items():
        args += ["--" + key, value]
    rows = list(csv.DictReader(io.StringIO(export_cli(*args).decode())))
    want = sorted(g.game for g in store.games(**filters))
    assert [int(r["game"]) for r in rows] == want
    assert export_cli(*args) == "".join(
        line + "\n" for line in store.export_lines(None, "csv", **filters)).encode()


def test_an_export_of_a_day_and_a_day_not_so_written(named):
    path, store = named
    import datetime

    today = datetime.date.today().isoformat()
    assert len(export_cli("--db", path, "--day", today).splitlines()) == 3
    assert export_cli("--db", path, "--day", "2001-01-01") == b""
    from tools.logger.__main__ import main

    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        assert main(["export", "--db", path, "--day", "1.1.2001"]) == 2
    assert "YYYY-MM-DD" in err.getvalue() and out.getvalue() == ""


def test_an_export_by_player_folds_case_in_any_script(named, tmp_path):
    import sqlite3

    path = str(tmp_path / "copy.db")
    source, target = sqlite3.connect(named[0]), sqlite3.connect(path)
    source.backup(target)
    source.close()
    target.close()
    store = Records.open(path)
    store.set_names(2, ["Иван", "Jos\u00e9e"])
    store.close()
    for spelling, want in (("иВАН", [2]), ("JOSE\u0301E", [2]), ("ANNA", [1])):
        rows = list(csv.DictReader(io.StringIO(export_cli(
            "--db", path, "--format", "csv", "--player", spelling).decode())))
        assert [int(r["game"]) for r in rows] == want, spelling
