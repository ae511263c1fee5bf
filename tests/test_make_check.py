"""`make check PORT=...` (tools.check) against a board on a serial port: the MicroPython unix
port with its REPL on a pty, reached through mpremote's serial transport as a USB-serial
ESP32 would be. The REPL's board is the simulated one (fake pins, emulated TM1637 chips) in
place of `firmware.hw.build()` (tests/device/check_cases.py), with the real
`firmware.board.Board` reading its pins.
"""

import subprocess
import sys

import pytest
from helpers import mpremote, repl_on_pty

from tools.board import check as check_tool
from tools.port import upy

pytestmark = pytest.mark.long(3)


def setup(port, state, held):
    """The board's REPL gets the simulated board (tests/device/check_cases.py, repl_board)."""
    code = ("import sys; sys.path.append('tests')\n"
            "from device.check_cases import repl_board\n"
            "sim = repl_board(%r, %r)\nprint('ready')" % (str(state), tuple(held)))
    out = mpremote(port, "exec", code)
    assert "ready" in out.stdout, out.stdout + out.stderr


@pytest.fixture
def board(tmp_path):
    """A MicroPython REPL on a pty; yields the host's port path."""
    with repl_on_pty(upy.ROOT, upy.env()) as port:
        yield port


def check(*args):
    return subprocess.run([sys.executable, "-m", "tools.check", *args], capture_output=True,
                          text=True, timeout=180, cwd=upy.ROOT)


def test_make_check_echoes_what_the_board_reads(board, tmp_path):
    setup(board, tmp_path / "flash", held=(0, 3))  # carom and undo held down
    proc = check("--port", board, "--no-reset", "--seconds", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "check: 5 spots, standing_level 0; hold undo on the board to leave"
    # pin 3 knocked over: the firmware reads no pin there, and its line high (active low)
    assert lines[1] == "spots 1:pin 2:pin 3:--- 4:pin 5:pin  lines 0 0 1 0 0"
    assert lines[2:4] == ["button carom", "button undo"]
    assert lines[-1] == "check: done"
    # and the display shows the name of the first button held
    shown = mpremote(board, "exec", "print(sim.visible())")
    assert shown.stdout.strip() == "bt  CAro", shown.stdout + shown.stderr


def test_make_check_stops_after_the_given_time(board, tmp_path):
    setup(board, tmp_path / "flash", held=())
    proc = check("--port", board, "--no-reset", "--seconds", "1.5")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[1:] == ["spots 1:pin 2:pin 3:--- 4:pin 5:pin  lines 0 0 1 0 0", "check: done"]
    # 1.5 s into the check the segment sweep runs: one segment of one digit is lit
    shown = mpremote(board, "exec", "print(sim.segments().hex())")
    lit = bytes.fromhex(shown.stdout.strip())
    assert sum(bin(b).count("1") for b in lit) == 1, shown.stdout + shown.stderr


def test_the_host_words_what_the_board_prints():
    out = []
    words = check_tool.Words(out.append)
    seen = 0b11011 | 0b00100 << 8 | 0b0101 << 16  # pin 3 down, carom and ok down
    words.feed(b"check 5 0\r\nseen %d\r\nseen %d\r\n" % (seen, seen & 0xFFFF | 0b0100 << 16))
    words.feed(b"do")
    words.feed(b"ne\r\n\x04")
    assert out == [
        "check: 5 spots, standing_level 0; hold undo on the board to leave\n",
        "spots 1:pin 2:pin 3:--- 4:pin 5:pin  lines 0 0 1 0 0\n",
        "button carom\n", "button ok\n",
        "spots 1:pin 2:pin 3:--- 4:pin 5:pin  lines 0 0 1 0 0\n",  # carom let go: no name
        "check: done\n",
    ]


def test_make_check_without_a_board_says_so(tmp_path):
    proc = check("--port", str(tmp_path / "ttyUSB9"))
    assert proc.returncode == 2
    assert "cannot open" in proc.stderr


def test_make_check_needs_a_port():
    proc = subprocess.run(["make", "-s", "check"], capture_output=True, text=True,
                          cwd=upy.ROOT, timeout=120)
    assert proc.returncode == 2
    assert "usage: make check PORT=/dev/ttyUSB0" in proc.stderr
