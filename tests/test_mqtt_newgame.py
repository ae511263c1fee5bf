"""`python -m tools.logger --mqtt ... --new-game ... [--replace] [--board ID]`: the new game
reaches the named board on the broker, signed with its key, or the logger refuses to start
when it cannot tell which board is meant (docs/protocol.md, "The logger"). The real
firmware on the simulated board, a real Mosquitto, the logger's own command line.
"""

import json
import os
import subprocess
import sys
import time

import pytest
from test_mqtt import KEYS, USERS, _watch, board_cfg, sim

from tools.board import broker as broker_tool
from tools.logger import frames
from tools.sim.timelines import Shot, build

pytestmark = [
    pytest.mark.skipif(broker_tool.available() is not None, reason=str(broker_tool.available())),
    pytest.mark.long(14),
    pytest.mark.waits,
]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def broker(tmp_path):
    with broker_tool.Mosquitto(str(tmp_path / "broker"), USERS, list(KEYS)) as b:
        yield b


def keys_file(path, boards):
    path.write_text("".join("%s %s\n" % (b, KEYS[b].hex()) for b in boards))
    return str(path)


def logger(tmp_path, port, *args, timeout=None):
    command = [sys.executable, "-m", "tools.logger", "--mqtt",
               "mqtt://logger:%s@127.0.0.1:%d" % (USERS["logger"], port),
               "--db", str(tmp_path / "games.db"), *args]
    if timeout is not None:
        command += ["--timeout", str(timeout)]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, PYTHONPATH=ROOT))


def shots_shown(messages):
    """The shots of the newest board state among sealed state messages (0 for none)."""
    shots = 0
    for message in messages:
        frame = frames.one_frame(message[4:-10])
        if frame is not None and frame[0] == frames.STATE:
            shots = frames.parse(frame[0], frame[2])["state"]["shots"]
    return shots


@pytest.mark.parametrize("named", [False, True])
def test_new_game_with_replace_reaches_the_board_on_the_broker(tmp_path, broker, named):
    # An unfinished game on the board (two shots), then the board idles on the network.
    part, _ = build("ddbu", [Shot(pins=(1,)), Shot(pins=(2, 3))])
    timeline = part + "22000 pins up 1 2 3 4 5\n"
    cfg = board_cfg(tmp_path / "board.cfg", broker.port, "t2")
    boards = ["t1", "t2", "t3"] if named else ["t2"]
    keys = keys_file(tmp_path / "keys.txt", boards)
    seen = []
    watcher = _watch(broker.port, "pinboard/t2/state", seen)
    board = sim(tmp_path, timeline, cfg, "--speed", "4", wait=False)
    try:
        deadline = time.monotonic() + 60
        while shots_shown(seen) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        extra = ["--board", "t2"] if named else []
        lg = logger(tmp_path, broker.port, "--keys", keys, "--new-game", "ddbu:77",
                    "--replace", *extra, timeout=8)
        out, err = board.communicate(timeout=120)
        lg_out, lg_err = lg.communicate(timeout=60)
    finally:
        watcher.loop_stop()
        watcher.disconnect()
        if board.poll() is None:
            board.kill()
    assert board.returncode == 0, err
    final = json.loads(out)
    # the board plays the logger's game: ddbu to 77, nothing shot yet
    assert (final["rules"], final["distance"], final["shots"]) == ("ddbu", [77, 77], 0), \
        lg_err
    assert lg.returncode == 0, lg_err
    assert "mqtt:t2: new game sent to the board, signed with its key" in lg_err
    assert "mqtt:t2: the board started the new game" in lg_err


@pytest.mark.parametrize("boards, args, says", [
    (["t1", "t2"], [], "which board? name it with --board ID (the keys file has 2 boards: "
                       "t1, t2)"),
    (["t1"], ["--port", "/dev/null-no-such-port"], "which board?"),
    (["t1", "t2"], ["--board", "t5"], "--board t5: no key for that board in --keys"),
    ([], [], "no board key (--keys FILE)"),
])
def test_a_new_game_for_no_board_in_particular_is_refused(tmp_path, boards, args, says):
    command = [sys.executable, "-m", "tools.logger", "--mqtt", "mqtt://logger:x@127.0.0.1:1",
               "--db", str(tmp_path / "games.db"), "--new-game", "ddbu:77", "--replace"]
    if boards:
        command += ["--keys", keys_file(tmp_path / "keys.txt", boards)]
    out = subprocess.run(command + args, cwd=ROOT, capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 2, out.stderr
    assert says in out.stderr
    assert "sent" not in out.stderr


def test_board_goes_with_new_game_and_mqtt(tmp_path):
    out = subprocess.run([sys.executable, "-m", "tools.logger", "--port", "/dev/null",
                          "--db", str(tmp_path / "games.db"), "--board", "t1"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 2 and "--board goes with --new-game and --mqtt" in out.stderr
