"""The host logger: a real board-side link on the unix port, a pty, SQLite, export, stats."""

import csv
import io
import json
import os
import pty
import random
import select
import struct
import subprocess
import sys
import threading
import time
import tty
import zlib

import pytest

from rules_core import Game
from rules_core.snapshot import pack_state
from tools.logger import frames
from tools.logger.core import Logger
from tools.port import upy
from tools.port.linkpipe import LinkPipe
from tools.records import Records

pytestmark = pytest.mark.long(24)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A ddbu game to 20/16 with an undo and a foul, won by player 1. What CONTRACT §3 says of
# it is computed by the rules core on CPython (the board runs the same core on the unix
# port).
DDBU_PLAN = {"rules": "ddbu", "distance": [20, 16], "first": 1, "game": 4, "linger_ms": 800,
             "shots": [[0b00101, 1, []], [0, 0, []], [0b00011, 0, []], "undo",
                       [0b00001, 0, ["foul"]], [0b11111, 0, []], [0b00100, 1, []],
                       [0, 0, []]]}


def expected_game(plan, rules=None, distance=None, sets=None, first=None):
    """The game of ``plan`` played on CPython; returns (game, [shot records])."""
    game = Game(rules or plan["rules"], tuple(distance or plan["distance"]),
                sets or plan.get("sets", 1), first or plan.get("first", 1),
                plan.get("teams", 0))
    shots = {}
    for event in plan["shots"]:
        if event == "undo":
            game.undo()
            shots.pop(max(shots))
            continue
        pins, carom, fouls = event
        game.shot(pins=pins, carom=carom, fouls=tuple(fouls))
        state = game.state()
        last = state["last"]
        shots[state["shots"]] = {
            "number": state["shots"], "player": last["player"], "points": last["points"],
            "to": last["to"], "pins": [s + 1 for s in range(5) if pins >> s & 1],
            "carom": carom, "foul": ["foul"] if fouls else [], "unset": False}
    return game, [shots[n] for n in sorted(shots)]


def play(tmp_path, plan, pipe, logger, extra_s=0.5, during=None):
    """Run linkplay on the unix port into ``pipe`` while ``logger`` logs; returns stdout."""
    path = tmp_path / ("plan%d.json" % random.randrange(10**9))
    path.write_text(json.dumps(plan))
    proc = upy.popen([os.path.join(ROOT, upy.entry("linkplay")), pipe.device_path,
                      str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        logger.run(stop_when=lambda lg: during is not None and during(lg) or
                   proc.poll() is not None, timeout=60)
        if during is not None:
            logger.run(stop_when=lambda lg: proc.poll() is not None, timeout=60)
        logger.run(timeout=extra_s)
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    return out.decode()


def state_payload(game, stamp, number=1, game_id=b"G" * 8, boot_id=b"BOOT"):
    """A STATE frame's payload for ``game`` (docs/protocol.md), made by the host's hand."""
    history = game.history.tobytes()
    return (struct.pack("<H", number) + game_id + boot_id + struct.pack("<I", stamp)
            + struct.pack("<HI", len(history) // 4, zlib.crc32(history)) + pack_state(game))


def logger_cli(*args):
    return subprocess.run([sys.executable, "-m", "tools.logger", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def test_game_through_pty_is_stored_and_exported(tmp_path):
    db = str(tmp_path / "games.db")
    with LinkPipe() as pipe:
        lg = Logger([pipe.host_path], db)
        out = play(tmp_path, DDBU_PLAN, pipe, lg)
        lg.close()
    game, shots = expected_game(DDBU_PLAN)
    assert json.loads(out.splitlines()[0]) == game.state()
    exported = logger_cli("export", "--db", db)
    assert exported.returncode == 0, exported.stderr
    (record,) = [json.loads(line) for line in exported.stdout.splitlines()]
    assert record["final"] == game.state()
    assert record["game_no"] == 4 and record["board"] == b"sim".hex()
    assert record["shots"] == shots
    table = logger_cli("export", "--db", db, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(table.stdout)))
    state = game.state()
    assert len(rows) == 1 and rows[0]["rules"] == "ddbu"
    assert [int(rows[0]["score1"]), int(rows[0]["score2"])] == state["score"]
    assert rows[0]["winner"] == ("" if state["winner"] is None else str(state["winner"]))


def logged(tmp_path, plan):
    """The database the logger wrote while linkplay played ``plan``."""
    db = str(tmp_path / "games.db")
    with LinkPipe() as pipe:
        lg = Logger([pipe.host_path], db)
        play(tmp_path, plan, pipe, lg)
        lg.close()
    return db


def test_stats_per_player(tmp_path):
    db = logged(tmp_path, DDBU_PLAN)
    state = expected_game(DDBU_PLAN)[0].state()
    got = Records.reading(db).slot_stats()
    for index in (0, 1):
        entry = got[(b"sim".hex(), index + 1, "ddbu")]
        assert entry["games"] == 1
        assert entry["points"] == state["score"][index]
        assert entry["series"] == state["innings"][index]
        assert entry["high"] == state["high"][index]
        assert entry["won"] == int(state["winner"] == index + 1)
    text = logger_cli("stats", "--db", db)
    assert text.returncode == 0 and "\nsim " in text.stdout  # the table by its name


def test_new_game_command_from_the_logger(tmp_path):
    db = str(tmp_path / "games.db")
    plan = {"rules": "ddbu", "distance": [40, 40], "game": 1, "linger_ms": 800,
            "shots": [[0b00100, 0, []], [0b11111, 0, []], [0, 1, []], [0, 0, []]]}
    with LinkPipe() as pipe:
        lg = Logger([pipe.host_path], db, new_game=("russian", (60, 60), 1, 2))
        lg.step(0.05)  # the port is open, the command waits for the board in the pty
        out = play(tmp_path, plan, pipe, lg)
        lg.close()
    game, shots = expected_game(plan, rules="russian", distance=(60, 60), first=2)
    assert json.loads(out.splitlines()[0]) == game.state()
    records = [json.loads(line) for line in logger_cli("export", "--db", db).stdout.split()]
    assert [r["game_no"] for r in records] == [1, 2]
    assert records[0]["final"] == Game("ddbu", (40, 40)).state()
    assert records[1]["final"] == game.state() and records[1]["shots"] == shots
    only = logger_cli("export", "--db", db, "--game", str(records[1]["game"]))
    assert [json.loads(line)["game_no"] for line in only.stdout.split()] == [2]


def test_a_team_match_started_from_the_logger_is_a_game_of_its_own(tmp_path):
    # The board plays ceb singles; the logger asks for the same match as two-man teams
    # (CEB 28). Only singles/teams differs: it must still be a new game, never merged.
    db = str(tmp_path / "games.db")
    plan = {"rules": "ceb", "distance": [60, 60], "game": 1, "linger_ms": 800,
            "shots": [[0b00100, 0, []], [0b00001, 0, []], [0, 1, []], [0b00010, 0, []]]}
    with LinkPipe() as pipe:
        lg = Logger([pipe.host_path], db, new_game=("ceb", (60, 60), 1, 1, 1))
        lg.step(0.05)
        out = play(tmp_path, plan, pipe, lg)
        lg.close()
    game, shots = expected_game(dict(plan, teams=1))
    assert game.state()["members"] is not None
    assert json.loads(out.splitlines()[0]) == game.state()
    records = [json.loads(line) for line in logger_cli("export", "--db", db).stdout.split()]
    assert [r["game_no"] for r in records] == [1, 2]
    assert records[0]["game_id"] != records[1]["game_id"]
    assert records[0]["final"] == Game("ceb", (60, 60)).state()
    assert records[0]["final"]["members"] is None
    assert records[1]["final"] == game.state() and records[1]["shots"] == shots


def test_a_port_of_pure_noise_does_not_stop_the_logger(tmp_path):
    db = str(tmp_path / "games.db")
    with LinkPipe() as noisy, LinkPipe() as pipe:
        stop = threading.Event()

        def noise():
            rnd = random.Random(5)
            while not stop.is_set():
                noisy.inject(bytes(rnd.randrange(256) for _ in range(200)))
                time.sleep(0.005)

        thread = threading.Thread(target=noise, daemon=True)
        thread.start()
        lg = Logger([noisy.host_path, pipe.host_path], db)
        try:
            play(tmp_path, DDBU_PLAN, pipe, lg)
        finally:
            stop.set()
            thread.join()
        noise_port = lg.ports[0]
        assert noise_port.reader.frames == 0 and noise_port.reader.noise_bytes > 1000
        lg.close()
    (record,) = [json.loads(line) for line in logger_cli("export", "--db", db).stdout.split()]
    assert record["final"] == expected_game(DDBU_PLAN)[0].state()
    view = logger_cli("view", "--db", db, "--once").stdout
    for table in ("boards", "boots", "games", "events", "states", "errors", "link_stats"):
        assert "== %s (" % table in view


def test_flood_of_states_stored_without_loss(tmp_path):
    # The rate itself is a `make bench` figure (logger frames per second); here the
    # flood only has to arrive whole, however loaded the machine is.
    rnd = random.Random(1)
    game = Game("ddbu", (200, 200))
    payloads = []
    while len(payloads) < 2000:
        if game.state()["status"] == "finished":
            game = Game("ddbu", (200, 200))
        game.shot(pins=rnd.randrange(32), carom=rnd.randrange(2))
        payloads.append(state_payload(game, stamp=len(payloads) + 1))
    hello = bytes([frames.PROTOCOL_VERSION]) + b"BOOT\x01F\x03PWRflood"
    wire = frames.encode(frames.HELLO, 0, hello) + b"".join(
        frames.encode(frames.STATE, i + 1, p) for i, p in enumerate(payloads))
    master, slave = pty.openpty()
    tty.setraw(slave)
    tty.setraw(master)
    lg = Logger([os.ttyname(slave)], str(tmp_path / "flood.db"))
    lg.step(0.01)

    def flood():
        view = memoryview(wire)
        while view:
            view = view[os.write(master, view[:4096]):]

    done = threading.Event()

    def drain():
        # what the logger sends the board (its requests for the state): read, so that its
        # writes never wait on a full line while the flood waits on the logger's reading
        while not done.is_set():
            if select.select([master], [], [], 0.05)[0]:
                os.read(master, 4096)

    threading.Thread(target=flood, daemon=True).start()
    drainer = threading.Thread(target=drain, daemon=True)
    drainer.start()
    try:
        lg.run(stop_when=lambda lg: lg.ports[0].reader.frames > len(payloads), timeout=120)
    finally:
        done.set()
        drainer.join()
    stored = lg.store.db.execute("SELECT COUNT(*) FROM states").fetchone()[0]
    assert stored == len(payloads)
    assert lg.ports[0].counters["gaps"] == 0
    lg.close()
    os.close(master)
    os.close(slave)


def test_logger_in_a_thread_as_the_simulator_runs_it(tmp_path):
    db = str(tmp_path / "games.db")
    game = expected_game(DDBU_PLAN)[0]
    with LinkPipe() as pipe:
        lg = Logger(db, [pipe.host_path])  # the simulator's argument order
        thread = threading.Thread(target=lg.run_forever, daemon=True)
        thread.start()
        path = tmp_path / "plan.json"
        path.write_text(json.dumps(dict(DDBU_PLAN, linger_ms=300)))
        proc = upy.popen([os.path.join(ROOT, upy.entry("linkplay")), pipe.device_path,
                          str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        deadline = time.monotonic() + 10
        while not lg.last_state_equals(game.state()) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert lg.last_state_equals(game.state())
        lg.stop()
        thread.join(5)
        assert not thread.is_alive()
        board = lg.store.db.execute("SELECT key, reset_cause, firmware, boots FROM boards")
        assert board.fetchall() == [(b"sim".hex(), "PWR", "linkplay", 1)]
        lg.close()


# A ceb two-man team match, best of 3 to 12: set 1 to team 2, then set 2 under way, where
# team 1 has the marked ball (team 2 opened it) and team 2 changed its player.
CEB_TEAMS_PLAN = {"rules": "ceb", "distance": [12, 12], "sets": 3, "first": 1, "teams": 1,
                  "game": 7, "linger_ms": 800,
                  "shots": [[0b00001, 0, []], [0b00101, 1, []], [0, 0, []],
                            [0b00100, 0, []], [0, 0, []]]}


def test_team_match_exports_the_marked_ball_and_the_players_at_the_table(tmp_path):
    db = logged(tmp_path, CEB_TEAMS_PLAN)
    game, _ = expected_game(CEB_TEAMS_PLAN)
    state = game.state()
    assert (state["sets"], state["marked"], state["members"]) == ([0, 1], 1, [1, 2])
    (record,) = [json.loads(line) for line in logger_cli("export", "--db", db).stdout.split()]
    assert record["final"] == state
    rows = list(csv.DictReader(io.StringIO(
        logger_cli("export", "--db", db, "--format", "csv").stdout)))
    assert (rows[0]["marked"], rows[0]["member1"], rows[0]["member2"]) == ("1", "1", "2")


def test_export_of_a_state_stored_before_marked_and_members(tmp_path):
    from tools.logger.store import Store

    store = Store(str(tmp_path / "old.db"))
    old = Game("ddbu", 20).state()
    del old["marked"], old["members"]
    with store.transaction():
        board = store.board("b1", "port")
        game = store.game(board, {"game_id": "00" * 8, "game": 1})
        store.state(game, {"state": old, "packed": pack_state(Game("ddbu", 20)),
                           "history": 0, "history_crc": 0}, rank=1)
    records = Records.reading(store.database)
    (line,) = records.export_lines(fmt="csv")[1:]
    # no marked ball, no members: empty cells; no shot, so none begun before the pins
    # were set (unset_shots 0); no names
    assert line.split(",")[-6:] == ["", "", "", "0", "", ""]
    (record,) = records.export_lines()
    assert json.loads(record)["final"] == old
    store.close()


class _ShortBoard:
    """A board, made by hand on a pty, that comes back from a restart with fewer events
    than it sent before, and takes CMD_RESTORE as the firmware does (tests/
    test_link_firmware.py tries the firmware itself)."""

    def __init__(self, master):
        self.master = master
        self.seq = 0
        self.stamp = 0
        self.reader = frames.FrameReader()
        self.restores = []

    def send(self, kind, payload):
        os.write(self.master, frames.encode(kind, self.seq, payload))
        self.seq += 1

    def hello(self, boot_id):
        self.boot_id = boot_id
        self.seq = 0
        self.send(frames.HELLO, bytes([frames.PROTOCOL_VERSION]) + boot_id
                  + b"\x01S\x03PWRshort")

    def head(self):
        self.stamp += 1
        return (struct.pack("<H", 1) + b"G" * 8 + self.boot_id
                + struct.pack("<I", self.stamp))

    def shot(self, game, number):
        record = bytes(game.history[(number - 1) * 4:number * 4])
        self.send(frames.SHOT, self.head() + struct.pack("<H", number) + record
                  + bytes([0, 0, 0, 0, 1]))

    def state(self, game):
        self.stamp += 1
        self.send(frames.STATE, state_payload(game, self.stamp, boot_id=self.boot_id))

    def serve(self, game):
        """Answer the host's commands: RESTORE only for this game's next event."""
        try:
            data = os.read(self.master, 4096)
        except BlockingIOError:
            return
        for kind, seq, payload in self.reader.feed(data):
            if kind != frames.CMD_RESTORE:
                continue
            index = struct.unpack_from("<H", payload, 8)[0]
            record = bytes(payload[10:14])
            self.restores.append(index)
            if payload[:8] != b"G" * 8 or index != len(game.history) // 4 + 1:
                self.send(frames.ERROR, struct.pack("<BH", 5, seq))
                continue
            game.apply(record)
            self.send(frames.ACK, struct.pack("<HB", seq, frames.CMD_RESTORE))
            self.shot(game, index)
            self.state(game)


def _short_board_run(tmp_path, restore):
    full = Game("ddbu", (200, 200))
    for pins in (0b1, 0b11, 0b100, 0b1000, 0b10001):
        full.shot(pins=pins)
    short = Game("ddbu", (200, 200))
    for at in range(0, 12, 4):
        short.apply(full.history[at:at + 4])
    master, slave = pty.openpty()
    tty.setraw(slave)
    tty.setraw(master)
    os.set_blocking(master, False)
    said = []
    lg = Logger([os.ttyname(slave)], str(tmp_path / "short.db"), say=said.append,
                restore_lost=restore, event_retry_s=0.2)
    lg.step(0.01)
    board = _ShortBoard(master)
    board.hello(b"BOOA")
    for number in range(1, 6):
        board.shot(full, number)
    board.state(full)
    lg.run(stop_when=lambda lg: lg.store.final(1) is not None
           and lg.store.final(1)["shots"] == 5, timeout=20)
    board.hello(b"BOOB")  # restarted with a journal cut short: 3 of the 5 events
    board.state(short)
    lg.run(tick=lambda lg: board.serve(short), timeout=3)
    export = [json.loads(line) for line in Records.reading(lg.store.database).export_lines()]
    rows = lg.store.db.execute("SELECT COUNT(*) FROM events").fetchone()[0]
    losses = lg.store.db.execute(
        "SELECT board_events, stored_events FROM losses").fetchall()
    lg.close()
    os.close(master)
    os.close(slave)
    return full, short, said, export, rows, losses, board.restores


def test_a_board_back_with_fewer_events_is_reported_and_nothing_deleted(tmp_path):
    full, short, said, export, rows, losses, restores = _short_board_run(tmp_path, False)
    assert any("came back from the board with 3 events; 5 stored" in s for s in said), said
    assert losses == [(3, 5)]
    assert rows == 5 and restores == []  # kept, and nothing sent without being asked
    (game,) = export
    assert game["losses"] == 1 and game["lost_events"] == 2
    assert game["final"]["shots"] == 3 and len(short.history) == 12


def test_restore_lost_hands_the_missing_events_back(tmp_path):
    full, short, said, export, rows, losses, restores = _short_board_run(tmp_path, True)
    assert losses == [(3, 5)]
    assert restores[:2] == [4, 5]
    assert short.history.tobytes() == full.history.tobytes()  # the board has all five again
    (game,) = export
    assert game["final"] == full.state() and game["complete"]
    assert game["lost_events"] == 0 and len(game["shots"]) == 5
    assert any("every lost event is back" in s for s in said), said


def test_a_claim_finds_its_games_first_claim_along_the_index_not_by_sorting_the_game(tmp_path):
    """Every state is judged against the game's first claim (a game keeps the settings it
    began with); found by sorting all of the game's claims, each state cost the whole
    game (the bench's flood of 3,000 shots: 3,000 frames a second stored instead of
    6,000). SQLite's plan for the lookup walks the (game, rank) index and sorts nothing."""
    from tools.logger.store import FIRST_CLAIM, Store

    store = Store(str(tmp_path / "plan.db"))
    try:
        plan = " ".join(str(row[-1]) for row in store.db.execute(
            "EXPLAIN QUERY PLAN " + FIRST_CLAIM, (1, "proven")))
    finally:
        store.close()
    assert "states_by_game_rank" in plan and "TEMP B-TREE" not in plan, plan
