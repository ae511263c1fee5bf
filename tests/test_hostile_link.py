"""The link and the logger under hostile conditions: garbage, replayed, repeated and
reordered frames, damaged event frames, logger restarts mid-game (with and without
--new-game), a board whose hello the logger missed, another program locking the database,
a hello of an unknown protocol version. Each test records its counts with hostile_report;
`make test` prints them at the end.

The board here is boardlib.link on CPython with the rules core, answering commands as the
firmware does (tests/test_link_firmware.py checks the firmware itself), so that the
scenarios are exact and quick; the line is a real pty pair (tools.port.linkpipe).
"""

import json
import os
import random
import sqlite3
import subprocess
import sys
import time
import tty

import pytest

from boardlib import link
from rules_core import Game, GameError
from rules_core.snapshot import pack_state
from tools import linkcodes
from tools.logger import frames
from tools.logger.core import Logger
from tools.port.linkpipe import Faults, LinkPipe
from tools.records import Records

pytestmark = [pytest.mark.long(8), pytest.mark.waits]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Board:
    """A board's link end in this process: the rules core behind boardlib.link. With
    `clock` (milliseconds, ticks_ms-like) its link sends a heartbeat every 2 s as the
    firmware's does; without, its time stands still and it sends none."""

    def __init__(self, path, board_id=b"tbl", rules="ddbu", distance=(40, 40), sets=1,
                 clock=None):
        self.fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        tty.setraw(self.fd)
        self.clock = clock or (lambda: 0)
        self.link = link.Link(self, self.clock(), board_id=board_id)
        self.settings = (rules, distance, sets)
        self.game = None
        self.kept = None  # (game_id, game) replaced and not yet logged
        self.executed = {"undo": 0, "new_game": 0}

    # the stream boardlib.link needs
    def write(self, buf):
        view = bytes(buf)
        while view:
            try:
                view = view[os.write(self.fd, view):]
            except BlockingIOError:
                time.sleep(0.001)
        return len(buf)

    def readinto(self, buf):
        try:
            data = os.read(self.fd, len(buf))
        except (BlockingIOError, OSError):
            return None
        buf[:len(data)] = data
        return len(data)

    def close(self):
        os.close(self.fd)

    def boot(self, new_game=True):
        self.link.send_hello("test", "PWR", 0)
        if new_game or self.game is None:
            self.new_game(*self.settings)
        else:
            self.send_state()

    def new_game(self, rules, distance, sets=1, first=1):
        if self.game is not None and self.game.history:
            self.kept = (bytes(self.link.game_id), self.game)
        self.game = Game(rules, distance, sets, first)
        self.link.game += 1
        self.link.game_id[:] = os.urandom(8)
        self.send_state()

    def send_state(self):
        self.link.send_state(pack_state(self.game), 0, self.game.history)

    def shot(self, pins, carom=0, fouls=()):
        record = self.game.shot(pins=pins, carom=carom, fouls=fouls)
        last = self.game.state()["last"]
        self.link.send_event(len(self.game.history) // 4, record, last["player"],
                             last["points"], last["to"], 0)
        self.send_state()

    def undo(self):
        self.game.undo()
        self.link.send_undo(len(self.game.history) // 4, 0)
        self.send_state()

    def service(self):
        """Answer every command that has arrived, as firmware.app does."""
        lk = self.link
        while True:
            kind = lk.poll(self.clock())
            if kind == linkcodes.NONE:
                return
            if self.game is None:
                continue  # not booted yet: what arrives is lost, as in the boot ROM
            seq = lk.cmd_seq
            if kind == linkcodes.CMD_STATE:
                lk.ack(seq)
                self.send_state()
            elif kind == linkcodes.CMD_UNDO:
                try:
                    self.game.undo()
                except GameError:
                    lk.nack(seq, linkcodes.ERR_REFUSED)
                    continue
                self.executed["undo"] += 1
                lk.ack(seq)
                lk.send_undo(len(self.game.history) // 4, 0)
                self.send_state()
            elif kind == linkcodes.CMD_NEW_GAME:
                if self.game.history and not self.game.finished and not lk.replace:
                    lk.nack(seq, linkcodes.ERR_ASKED)  # nobody at this table says ok
                    continue
                self.executed["new_game"] += 1
                lk.ack(seq)
                s = lk.cmd_settings()
                self.new_game(s["rules"], s["distance"], s["sets"], s["first"])
            elif kind == linkcodes.CMD_EVENT:
                self._resend(seq)
            elif kind == linkcodes.CMD_LOGGED:
                if self.kept is not None and bytes(lk.cmd_game) == self.kept[0]:
                    self.kept = None
                lk.ack(seq)
            else:
                lk.ack(seq)

    def _resend(self, seq):
        lk = self.link
        if bytes(lk.cmd_game) == bytes(lk.game_id):
            game, ident = self.game, None
        elif self.kept is not None and bytes(lk.cmd_game) == self.kept[0]:
            ident, game = self.kept
        else:
            lk.nack(seq, linkcodes.ERR_REFUSED)
            return
        n = lk.cmd_index
        if not 0 < n <= len(game.history) // 4:
            lk.nack(seq, linkcodes.ERR_REFUSED)
            return
        lk.ack(seq)
        current = bytes(lk.game_id)
        if ident is not None:
            lk.game_id[:] = ident
        lk.send_event(n, game.history[4 * n - 4:4 * n], 0, 0, 0, 0, resent=True)
        lk.game_id[:] = current


def ticks_ms():
    """The host's monotonic clock as MicroPython's time.ticks_ms() counts (30 bits)."""
    return int(time.monotonic() * 1000) & 0x3FFFFFFF


def run_both(lg, board, seconds=None, until=None):
    """Let the logger and the board talk for ``seconds`` or until ``until(lg)``."""
    deadline = time.monotonic() + (seconds if seconds is not None else 20)
    while time.monotonic() < deadline:
        lg.step(0.01)
        board.service()
        if until is not None and until(lg):
            return True
    return until is None


def exported(db):
    out = subprocess.run([sys.executable, "-m", "tools.logger", "export", "--db", db],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def held_everything(lg, board=None):
    """True once every game is complete (its stored events are those its state counts)
    and, given the board, the board's latest state is stored."""
    rows = lg.store.db.execute("SELECT COUNT(*), SUM(complete) FROM games").fetchone()
    return (rows[0] > 0 and rows[0] == rows[1] and not any(p.backlog for p in lg.ports)
            and (board is None or lg.last_state == board.game.state()))


def check_replays(db):
    """Every stored game: its stored events alone replay to its stored final state."""
    records = Records.reading(db)
    try:
        games = records.games()
        for game in games:
            replayed = records.game(game.game).replay.game
            assert replayed is not None and replayed.state() == game.final, game.game_id
        return len(games)
    finally:
        records.close()


def random_plan(rnd, length):
    plan = []
    for _ in range(length):
        if plan and rnd.random() < 0.12:
            plan.append("undo")
        else:
            fouls = rnd.choice([(), (), ("foul",), ("foul", "foul"), ("rouge", "foul"),
                                ("quilles",), ("foul", "dehors", "foul")])
            plan.append((rnd.randrange(32), rnd.choice([0, 0, 1, 2]), fouls))
    return plan


def play_plan(board, plan, lg=None):
    for step in plan:
        if board.game.finished:
            break
        try:
            if step == "undo":
                board.undo()
            else:
                board.shot(*step)
        except GameError:
            continue
        if lg is not None:
            lg.step(0)
            board.service()


# -- the reproductions --------------------------------------------------------------------


def test_two_sim_runs_without_state_are_two_games(tmp_path, hostile_report):
    """Issue 9.1: a board whose flash starts empty twice must not merge its games."""
    long_game = tmp_path / "a.timeline"
    long_game.write_text("".join("%d pin %d down\n%d pin %d up\n" % (
        2000 * i + 1000, 1 + i % 5, 2000 * i + 1200, 1 + i % 5) for i in range(6)))
    (tmp_path / "b.timeline").write_text("1000 press ok\n")
    db = str(tmp_path / "games.db")
    finals = []
    for timeline in ("a.timeline", "b.timeline"):
        proc = subprocess.run(
            [sys.executable, "-m", "tools.sim", "--timeline", str(tmp_path / timeline),
             "--rules", "ddbu", "--distance", "40", "--db", db],
            cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        finals.append(json.loads(proc.stdout))
    assert finals[0]["shots"] == 6 and finals[1]["shots"] == 1  # ok alone: a miss
    games = exported(db)
    assert [g["final"] for g in games] == finals  # the first game is still there, whole
    assert len({g["game_id"] for g in games}) == 2
    assert [len(g["shots"]) for g in games] == [6, 1]
    hostile_report("logger: boards re-flashed (games not merged)", runs=2, games=len(games))


def test_stale_and_duplicated_frames_never_remove_shots(tmp_path, hostile_report):
    """Issue 9.4: replaying old STATE (and other) frames, in any order, removes nothing."""
    db = str(tmp_path / "games.db")
    rnd = random.Random(4)
    with LinkPipe(tap=bytearray()) as pipe:
        board = Board(pipe.device_path)
        lg = Logger([pipe.host_path], db)
        run_both(lg, board, 0.2)
        board.boot()
        play_plan(board, [(0b00101, 0, ()), (0b00011, 1, ()), "undo", (0b10000, 0, ("foul",)),
                          (0b01100, 0, ()), (0b00001, 0, ())], lg)
        assert run_both(lg, board, until=lambda lg: held_everything(lg, board))
        before = exported(db)
        old = frames.FrameReader().feed(bytes(pipe.tap))
        replays = [f for f in old if f[0] in (frames.STATE, frames.SHOT, frames.UNDO)]
        sent = 0
        for _ in range(3):
            rnd.shuffle(replays)
            for kind, seq, payload in replays:
                pipe.inject(frames.encode(kind, seq, payload))
                sent += 1
            run_both(lg, board, 0.3)
        board.shot(0b00100)  # and play goes on
        assert run_both(lg, board, until=lambda lg: held_everything(lg, board))
        counters = lg.ports[0].counters
        lg.close()
        board.close()
    (after,) = exported(db)
    assert after["final"] == board.game.state()
    assert after["shots"][:len(before[0]["shots"])] == before[0]["shots"]
    assert len(after["shots"]) == board.game.state()["shots"]
    stored = sqlite3.connect(db).execute("SELECT COUNT(*) FROM events").fetchone()[0]
    assert stored >= 7  # every event row kept, the undo included
    assert check_replays(db) == 1
    assert counters["replayed"] + counters["stale"] >= len(replays)
    hostile_report("link: replayed and reordered frames", sent=sent,
                   replayed=counters["replayed"], stale_states=counters["stale"],
                   shots_lost=0)


def test_storms_of_damaged_frames_still_replay_to_the_final_state(tmp_path, hostile_report):
    """Issue 9.8: 15 random games (undos, several fouls in one shot) over a line that
    damages, drops, doubles and garbles frames: every game's stored events alone replay to
    its stored final state; missing events are asked for by number and stored."""
    rnd = random.Random(15)
    db = str(tmp_path / "games.db")
    faults = Faults(bit_flip=0.003, drop=0.002, double=0.002, garbage=0.002, seed=15)
    finals = []
    with LinkPipe(faults=faults) as pipe:
        # with its heartbeats: when a game's last frames are all lost, the next heartbeat's
        # number shows the logger the gap (without them nothing would, on any line)
        board = Board(pipe.device_path, clock=ticks_ms)
        lg = Logger([pipe.host_path], db, state_retry_s=0.1, event_retry_s=0.1)
        run_both(lg, board, 0.2)
        board.boot(new_game=False)
        ok = True
        for _ in range(15):
            rules = rnd.choice(["ddbu", "ceb", "russian"])
            board.new_game(rules, (60, 60), 3 if rules == "ceb" else 1, rnd.choice([1, 2]))
            play_plan(board, random_plan(rnd, 24), lg)
            finals.append(board.game.state())
            # a deadline, not a wait: a loaded machine (three test workers on two cores)
            # takes longer through the storm than a quiet one
            ok = ok and run_both(lg, board, 90, until=lambda lg: held_everything(lg)
                                 and lg.last_state == board.game.state())
        counters = dict(lg.ports[0].counters, bad_frames=lg.ports[0].reader.bad_frames)
        lg.close()
        board.close()
    assert ok, counters
    games = [g for g in exported(db) if g["final"]["shots"] or g["final"] in finals]
    assert [g["final"] for g in games][-15:] == finals
    assert all(g["complete"] for g in games)
    assert [len(g["shots"]) for g in games][-15:] == [f["shots"] for f in finals]
    replayed = check_replays(db)
    assert counters["bad_frames"] > 50 and counters["events_requested"] > 0
    hostile_report("link: storms of damaged frames (15 games)", damaged=counters["bad_frames"],
                   events_asked=counters["events_requested"], games=15,
                   replayed_right=replayed)


def test_repeated_commands_run_once(tmp_path, hostile_report):
    """Issue 9.3: the same UNDO frame (same seq) sent again is answered, not run again."""
    db = str(tmp_path / "games.db")
    with LinkPipe() as pipe:
        board = Board(pipe.device_path)
        lg = Logger([pipe.host_path], db)
        run_both(lg, board, 0.2)
        board.boot()
        play_plan(board, [(0b00001, 0, ()), (0b00010, 0, ()), (0b00100, 0, ())], lg)
        port = lg.ports[0]
        seq = lg.send(port, frames.CMD_UNDO)
        wire = frames.encode(frames.CMD_UNDO, seq)
        for _ in range(4):
            port.serial.write(wire)
        assert run_both(lg, board, until=lambda lg: len(
            [a for a in port.answers if a[1].get("ref") == seq]) == 5)
        assert run_both(lg, board, until=lambda lg: held_everything(lg, board))
        lg.close()
        board.close()
    assert board.executed["undo"] == 1 and board.game.state()["shots"] == 2
    assert board.link.rx_repeats == 4
    (game,) = exported(db)
    assert game["final"]["shots"] == 2
    hostile_report("link: repeated commands", sent=5, executed=board.executed["undo"],
                   answered=5)


def test_logger_restarts_mid_game_with_new_game_keep_the_game(tmp_path, hostile_report):
    """Issue 9.2: restarting the logger with --new-game does not wipe the game; --replace
    does replace it, and the replaced game stays whole in the database."""
    db = str(tmp_path / "games.db")
    said = []
    with LinkPipe() as pipe:
        board = Board(pipe.device_path)
        lg = Logger([pipe.host_path], db)
        run_both(lg, board, 0.2)
        board.boot()
        play_plan(board, [(0b00001, 0, ()), (0b00110, 1, ())], lg)
        assert run_both(lg, board, until=lambda lg: held_everything(lg, board))
        lg.close()
        restarts = 0
        for _ in range(3):  # the logger restarted with --new-game, again and again
            lg = Logger([pipe.host_path], db, new_game=("ceb", (50, 50), 1, 1),
                        say=said.append)
            run_both(lg, board, 0.4)
            lg.close()
            restarts += 1
        assert board.game.state()["shots"] == 2 and board.executed["new_game"] == 0
        assert any("confirm" in text for text in said)
        lg = Logger([pipe.host_path], db, new_game=("ceb", (50, 50), 1, 1), replace=True)
        assert run_both(lg, board, until=lambda lg: board.executed["new_game"] == 1
                        and lg.last_state == board.game.state() and board.kept is None
                        and held_everything(lg))
        lg.close()
        board.close()
    games = exported(db)
    assert [g["final"]["shots"] for g in games] == [2, 0]
    assert [g["final"]["rules"] for g in games] == ["ddbu", "ceb"]
    assert len(games[0]["shots"]) == 2 and board.kept is None  # logged, so the board let go
    hostile_report("logger: restarts mid-game with --new-game", restarts=restarts,
                   games_wiped=0, replaced_with_flag=1)


def test_logger_started_after_the_hello_asks_who_it_is(tmp_path, hostile_report):
    """Issue 9.9: frames before the logger knows the board wait for its answer; one board,
    one game, however often the logger starts late."""
    db = str(tmp_path / "games.db")
    with LinkPipe() as pipe:
        board = Board(pipe.device_path)
        board.boot()  # nobody listens: the hello is lost
        play_plan(board, [(0b00001, 0, ())])
        for _ in range(3):
            lg = Logger([pipe.host_path], db)
            lg.step(0)
            board.shot(0b00010)  # before the logger asked who it is
            assert run_both(lg, board, until=lambda lg: held_everything(lg)
                            and lg.last_state == board.game.state())
            lg.close()
        board.close()
    con = sqlite3.connect(db)
    assert con.execute("SELECT key FROM boards").fetchall() == [(b"tbl".hex(),)]
    (game,) = exported(db)
    assert game["final"]["shots"] == 4 and len(game["shots"]) == 4
    hostile_report("logger: started after the board's hello", starts=3, boards=1, games=1)


def test_garbage_and_unknown_protocol_hello(tmp_path, hostile_report):
    """Garbage never becomes a frame; a valid-CRC hello of another protocol version is
    refused and counted, and does not take over the port's next frames."""
    db = str(tmp_path / "games.db")
    rnd = random.Random(9)
    with LinkPipe() as pipe:
        board = Board(pipe.device_path)
        lg = Logger([pipe.host_path], db)
        run_both(lg, board, 0.2)
        board.boot()
        garbage = 0
        for n in range(20):
            blob = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 300)))
            pipe.inject(blob)
            garbage += len(blob)
            if n % 5 == 0:
                alien = bytes([9]) + b"EVIL\x03bad\x03PWRx"
                pipe.inject(frames.encode(frames.HELLO, 0, alien))
            board.shot(rnd.randrange(32))
            lg.step(0)
            board.service()
            if board.game.finished:
                break
        assert run_both(lg, board, until=lambda lg: held_everything(lg)
                        and lg.last_state == board.game.state())
        counters = dict(lg.ports[0].counters, bad=lg.ports[0].reader.bad_frames)
        lg.close()
        board.close()
    assert counters["unknown_protocol"] == 4
    con = sqlite3.connect(db)
    assert con.execute("SELECT key FROM boards").fetchall() == [(b"tbl".hex(),)]
    assert check_replays(db) == 1
    hostile_report("link: garbage and unknown protocol versions", garbage_bytes=garbage,
                   bad_blocks=counters["bad"], alien_hellos=4,
                   refused=counters["unknown_protocol"])


def test_database_locked_for_seven_seconds_loses_nothing(tmp_path, hostile_report):
    """Issue 9.7: another connection holds a write lock for 7 s while shots come in."""
    db = str(tmp_path / "games.db")
    said = []
    with LinkPipe() as pipe:
        board = Board(pipe.device_path, distance=(200, 200))
        lg = Logger([pipe.host_path], db, say=said.append)
        run_both(lg, board, 0.2)
        board.boot()
        assert run_both(lg, board, until=lambda lg: held_everything(lg, board))
        other = sqlite3.connect(db, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        locked_at = time.monotonic()
        shots = 0
        while time.monotonic() - locked_at < 7.0:
            if shots < 8 and time.monotonic() - locked_at > shots * 0.5:
                board.shot(0b00101)
                shots += 1
            lg.step(0.02)
            board.service()
        waits = lg.ports[0].counters["db_busy"]
        other.execute("COMMIT")
        other.close()
        assert run_both(lg, board, until=lambda lg: held_everything(lg)
                        and lg.last_state == board.game.state())
        lg.close()
        board.close()
    assert waits > 0 and any("locked" in text for text in said)
    (game,) = exported(db)
    assert len(game["shots"]) == shots == 8 and game["final"] == board.game.state()
    hostile_report("logger: database locked 7 s", shots=shots, waits=waits, lost=0)
