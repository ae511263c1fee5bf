"""States believed only when the stored events give them, and stored records the rules
refuse (docs/protocol.md, "Believed states"): a board (or anyone holding its key) that
claims a score its events do not add up to, and an event record no game can take.

The board is boardlib.link on CPython with the rules core, on a real pty (as in
tests/test_hostile_link.py); the logger, its SQLite file, its command line and the club
app's pages are the real ones.
"""

import contextlib
import json
import os
import sqlite3
import subprocess
import sys

import pytest
from club_helpers import client_for
from test_hostile_link import Board, held_everything, run_both

from rules_core import Game, events
from rules_core.snapshot import pack_state
from tools.club.app import create_app
from tools.logger.core import Logger
from tools.logger.store import Store
from tools.port.linkpipe import LinkPipe

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.long(4)]


def logger_cli(*args):
    return subprocess.run([sys.executable, "-m", "tools.logger", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def exported(db):
    out = logger_cli("export", "--db", db)
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def forged_state(game, **changes):
    """A packed board state of `game`'s settings with other numbers (a lying board)."""
    other = Game(game.rules, tuple(game.distance), game.best_of, game.first)
    for pins in changes.get("shots", ()):
        other.shot(pins=pins)
    return pack_state(other)


@contextlib.contextmanager
def logged_board(db, shots):
    """A board on a pty that has played `shots` (pin masks), its logger holding every
    event: yields (board, logger, what the logger said); both closed at the end."""
    said = []
    with LinkPipe() as pipe:
        board = Board(pipe.device_path)
        lg = Logger([pipe.host_path], db, say=said.append)
        try:
            board.boot()
            for pins in shots:
                board.shot(pins)
            assert run_both(lg, board, until=lambda lg: held_everything(lg, board))
            yield board, lg, said
        finally:
            lg.close()
            board.close()


def test_a_state_the_events_do_not_give_is_kept_as_a_disputed_claim(tmp_path,
                                                                    hostile_report):
    db = str(tmp_path / "games.db")
    with logged_board(db, [0b00001, 0b00110, 0, 0b01000]) as (board, lg, said):
        real = board.game.state()
        # The board's key is all a lie needs: the same event count and CRC, another
        # score (eight pins for player 1), and a stamp far ahead of the board's own.
        stamp = board.link._stamp
        board.link._stamp = 10**9
        board.link.send_state(forged_state(board.game, shots=[0b11111, 0, 0b00111]),
                              0, board.game.history)
        board.link._stamp = stamp
        run_both(lg, board, seconds=1.0)
        assert lg.store.final(lg.last_game) == real  # the claim never became final
        # the board's real states go on being taken (not stale behind the lie)
        board.shot(0b10000)
        real = board.game.state()
        assert run_both(lg, board, until=lambda lg: lg.last_state == real)
        verdicts = [row[0] for row in lg.store.db.execute(
            "SELECT verdict FROM states ORDER BY id")]
    assert verdicts.count("disputed") == 1 and "stale" not in verdicts[-2:], verdicts
    assert any("disputed claim" in line for line in said), said
    (game,) = exported(db)
    assert game["final"] == real and game["complete"] and game["disputed"] == 1
    assert [s["number"] for s in game["shots"]] == [1, 2, 3, 4, 5]
    view = logger_cli("view", "--db", db, "--once")
    assert view.returncode == 0 and "disputed" in view.stdout
    stats = sqlite3.connect(db).execute("SELECT disputed FROM link_stats").fetchone()
    assert stats == (1,)
    hostile_report("logger: states the events do not give", claims=1, disputed=1,
                   became_final=0, later_states_taken=1)


def test_a_game_whose_settings_change_under_its_identity_is_disputed(tmp_path):
    # The same events, the same count and CRC, the same scores: only the distance differs.
    db = str(tmp_path / "games.db")
    with logged_board(db, [0b00001, 0b00110]) as (board, lg, _):
        real = board.game.state()
        longer = Game("ddbu", (90, 90))
        for record in (board.game.history[i:i + 4] for i in range(0, 8, 4)):
            longer.apply(record)
        board.link.send_state(pack_state(longer), 0, board.game.history)
        run_both(lg, board, seconds=1.0)
        assert lg.store.final(lg.last_game) == real
    (game,) = exported(db)
    assert game["final"]["distance"] == [40, 40] and game["disputed"] == 1


def refused_record():
    """An adjust that would take player 2 below zero: well formed, and no game takes it."""
    return events.encode_adjust(2, -30)


def test_a_record_the_rules_refuse_is_flagged_skipped_and_nothing_crashes(tmp_path,
                                                                         hostile_report):
    db = str(tmp_path / "games.db")
    with logged_board(db, [0b00001, 0b00110]) as (board, lg, said):
        real = board.game.state()
        # event 3: a record no game takes, and a state that counts it (the count and CRC
        # of the board's history with it)
        bad = refused_record()
        board.link.send_event(3, bad, 2, -30, 2, 0)
        history = board.game.history.tobytes() + bad
        board.link.send_state(pack_state(board.game), 0, history)
        run_both(lg, board, seconds=1.0)
        assert lg.store.final(lg.last_game) == real
    assert any("refused by the rules" in line for line in said), said
    flagged = sqlite3.connect(db).execute(
        "SELECT number FROM events WHERE refused=1").fetchall()
    assert flagged == [(3,)]
    (game,) = exported(db)
    assert game["final"] == real and game["refused"] == [3] and game["disputed"] == 1
    checked = _every_reader_of(db, game["game"])
    hostile_report("logger: records the rules refuse", stored=1, flagged=1,
                   readers_that_crashed=0, readers=checked)


def _every_reader_of(db, game):
    """export (json, csv), stats, view and the club app's game, results and export pages
    answer for the file; returns how many were asked."""
    for args in (["export", "--db", db], ["export", "--db", db, "--format", "csv"],
                 ["stats", "--db", db], ["view", "--db", db, "--once"]):
        out = logger_cli(*args)
        assert out.returncode == 0 and "Traceback" not in out.stderr, (args, out.stderr)
    with client_for(create_app(db)) as client:
        pages = ["/game/%d" % game, "/results", "/players", "/export.json", "/export.csv",
                 "/"]
        for page in pages:
            answer = client.get(page)
            assert answer.status_code == 200, (page, answer.text[-500:])
    return 4 + len(pages)


def test_a_file_whose_final_state_counts_a_refused_record_still_exports(tmp_path):
    # As a logger before this check left it: the final state counts a record the rules
    # refuse (an adjust below zero), and `complete` was set.
    db = str(tmp_path / "games.db")
    store = Store(db)
    game = Game("ddbu", (40, 40))
    game.shot(pins=0b111)
    bad = refused_record()
    history = game.history.tobytes() + bad
    with store.transaction():
        board = store.board("b1", "port")
        row = store.game(board, {"game_id": "00" * 8, "game": 1})
        store.event(row, {"index": 1, "record": game.history[:4], "player": 1,
                          "points": 3, "to": 1, "resent": False}, 1)
        store.event(row, {"index": 2, "record": bad, "player": 0, "points": 0, "to": 0,
                          "resent": False}, 2)
        import zlib

        store.state(row, {"state": game.state(), "packed": pack_state(game), "history": 2,
                          "history_crc": zlib.crc32(history)}, 3)
        store.db.execute("UPDATE games SET final=?, packed=?, history=2, history_crc=?, "
                         "complete=1, final_rank=3 WHERE id=?",
                         (json.dumps(game.state()), pack_state(game), zlib.crc32(history),
                          row))
    store.close()
    (record,) = exported(db)
    assert record["refused"] == [2] and not record["complete"]
    assert [s["number"] for s in record["shots"]] == [1]
    assert _every_reader_of(db, record["game"]) == 10
