"""Faults on the line between a board (unix port) and the logger: nothing corrupt is
accepted, every lost frame is noticed, and the stored final state is still right."""

import contextlib
import json
import threading
import time

import pytest
from test_logger import expected_game, logger_cli, play

from tools.logger import frames
from tools.logger.core import Logger
from tools.port.linkpipe import Faults, LinkPipe

pytestmark = [pytest.mark.long(12), pytest.mark.waits]

# A ceb match of one set to 50: every shot sends a SHOT and a STATE frame. The shot list
# is cut where the game ends (see _finishing), so the board ends on a finished game.
CEB_PLAN = {"rules": "ceb", "distance": [50, 50], "first": 1, "game": 2, "linger_ms": 3000,
            "heartbeat_ms": 200, "interval_ms": 15,
            "boot_text": "ets Jun  8 2016 00:22:57\r\nrst:0x1 (POWERON_RESET),boot:0x13\r\n",
            "shots": [[0b00001, 0, []], [0b00010, 1, []], [0, 0, ["foul"]], [0b10000, 0, []],
                      [0b00100, 0, []], [0b01000, 2, []], [0, 1, ["rouge"]], "undo",
                      [0b00011, 0, []], [0b11000, 1, []], [0b00001, 0, []], [0b00100, 0, []],
                      [0b10001, 0, []], [0b00010, 1, []], [0b01000, 0, []], [0b11011, 0, []]]
            * 4}


def _finishing(plan):
    game = expected_game(dict(plan, shots=[]))[0]
    for count, event in enumerate(plan["shots"], 1):
        if event == "undo":
            game.undo()
        else:
            game.shot(pins=event[0], carom=event[1], fouls=tuple(event[2]))
        if game.state()["status"] == "finished":
            return dict(plan, shots=plan["shots"][:count])
    raise AssertionError("the plan never finishes its game")


CEB_PLAN = _finishing(CEB_PLAN)


def _check_link(pipe, port):
    """What the board really sent (tapped before the faults) against what was accepted."""
    sent = {seq: (kind, payload) for kind, seq, payload in frames.FrameReader().feed(
        bytes(pipe.tap))}
    accepted = port.trace
    assert accepted, "nothing got through"
    for seq, kind, payload in accepted:
        assert sent[seq] == (kind, payload), "a corrupt frame was accepted"
    seen = {seq for seq, _, _ in accepted}
    first, last = min(seen), max(seen)
    lost = [seq for seq in sent if first < seq < last and seq not in seen]
    for seq in lost:
        assert any(start <= seq < shown for start, shown in port.gap_log), seq
    return lost


@contextlib.contextmanager
def _traced(db, faults=None, to_device=None, **options):
    """A line with `faults` from the board and `to_device` to it, every byte the board sent
    tapped before the faults, and a Logger on it keeping a trace of the frames it accepted:
    (pipe, logger)."""
    with LinkPipe(faults=faults, faults_to_device=to_device, tap=bytearray()) as pipe:
        lg = Logger([pipe.host_path], db, **options)
        lg.ports[0].trace = []
        yield pipe, lg


def _closed(pipe, lg):
    """The logger's port and the frames lost on the line (each one noticed, _check_link);
    the logger closed."""
    port = lg.ports[0]
    lost = _check_link(pipe, port)
    lg.close()
    return port, lost


def _final(db):
    lines = logger_cli("export", "--db", db).stdout.split()
    return [json.loads(line)["final"] for line in lines]


def test_bit_flips_drops_doubles_and_garbage(tmp_path):
    game = expected_game(CEB_PLAN)[0]
    assert game.state()["status"] == "finished"
    db = str(tmp_path / "faults.db")
    faults = Faults(bit_flip=0.004, drop=0.004, double=0.004, garbage=0.004, seed=11)
    # About a third of the frames are damaged: the logger re-asks for the state often
    # enough that the board's last state gets through before it stops.
    with _traced(db, faults, Faults(bit_flip=0.01, seed=12), state_retry_s=0.25) as (pipe, lg):
        out = play(tmp_path, CEB_PLAN, pipe, lg, extra_s=0.3)
        port, lost = _closed(pipe, lg)
    assert all(faults.counts.values()), faults.counts  # every kind of fault happened
    assert port.reader.bad_frames > 0
    assert lost and port.counters["gaps"] > 0
    assert json.loads(out.splitlines()[0]) == game.state()
    assert _final(db) == [game.state()]


def test_unplugged_for_three_seconds(tmp_path):
    plan = dict(CEB_PLAN, interval_ms=250, linger_ms=1000, boot_text="")
    game = expected_game(plan)[0]
    db = str(tmp_path / "unplug.db")
    with _traced(db) as (pipe, lg):
        unplugged = []

        def unplug_once(lg):
            # once the game is under way: pull the cable for 3 s
            if not unplugged and lg.ports[0].reader.frames >= 6:
                unplugged.append(time.monotonic())
                threading.Thread(target=pipe.unplug, args=(3.0,)).start()
            return False

        play(tmp_path, plan, pipe, lg, extra_s=0.5, during=unplug_once)
        port, lost = _closed(pipe, lg)
    assert unplugged and pipe.lost > 0
    assert port.counters["reconnects"] >= 1
    assert lost and port.counters["gaps"] >= 1
    assert _final(db) == [game.state()]


def test_faults_between_the_real_firmware_and_the_logger(tmp_path):
    """The whole firmware (tools/sim/board/run.py at 10x real time) on the faulty line:
    the logger still ends with the final state `tools.replay` gives for the same shots."""
    import os
    import subprocess
    import sys

    from tools.port import upy
    from tools.sim.timelines import build, random_game

    events = random_game("ceb", 8, length=24, distance=(30, 30), sets=3)
    timeline, script = build("ceb", events, distance=(30, 30), sets=3)
    # The board plays on for 40 s (4 s here) after the last shot: a final state frame the
    # line garbled is asked for again every 0.25 s, and a loaded machine may take seconds to
    # answer. The line repeats a state the table is already in, so nothing is scored.
    last_ms = int(timeline.rstrip().splitlines()[-1].split()[0])
    timeline += "%d pins up 1 2 3 4 5\n" % (last_ms + 30000)
    (tmp_path / "g.timeline").write_text(timeline)
    (tmp_path / "g.shots").write_text(script)
    expected = json.loads(subprocess.run(
        [sys.executable, "-m", "tools.replay", str(tmp_path / "g.shots")],
        capture_output=True, text=True, check=True).stdout)
    db = str(tmp_path / "firmware.db")
    faults = Faults(bit_flip=0.003, drop=0.003, double=0.003, garbage=0.003, seed=21)
    to_device = Faults(bit_flip=0.005, seed=22)
    with _traced(db, faults, to_device, state_retry_s=0.25) as (pipe, lg):
        proc = upy.popen(
            [os.path.join(upy.ROOT, upy.entry("board")), "--timeline",
             str(tmp_path / "g.timeline"), "--speed", "10", "--link", pipe.device_path,
             "--state", str(tmp_path / "flash"), "--rules", "ceb", "--distance", "30",
             "--sets", "3"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        try:
            lg.run(stop_when=lambda lg: proc.poll() is not None, timeout=120)
            out, err = proc.communicate(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
        port, lost = _closed(pipe, lg)
    assert proc.returncode == 0, err
    assert json.loads(out.decode().splitlines()[-1]) == expected
    assert port.reader.bad_frames > 0 and lost and port.counters["gaps"] > 0
    assert _final(db) == [expected]
