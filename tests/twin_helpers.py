"""Setting up ESP32 twins for tests: firmware and files on their flash, a running game.

    from twin_helpers import flash, booted
    flash(state_dir, cfg={"watchdog_ms": 2000})          # the firmware, as deploy stages it
    with booted(state_dir, version="1.22.0") as twin:     # tools.sim.board.twin.Twin
        play_shot(twin, fallen=(1, 2))
"""

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time

from tools.board import deploy
from tools.port import upy
from tools.sim.board.twin import Twin

FLASHFS = upy.entry("flashfs")
TEST_BAUD = 2000000  # the pty's pace in tests: a fast USB-serial bridge


def flash(state_dir, cfg=None, files=None, firmware=True, mpy=False):
    """Put files on a twin's flash image before it boots."""
    with tempfile.TemporaryDirectory() as stage:
        if firmware:
            deploy.stage(stage, mpy=mpy)
        if cfg is not None:
            with open(os.path.join(stage, "board.cfg"), "w") as f:
                json.dump(cfg, f)
        for name, text in (files or {}).items():
            path = os.path.join(stage, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        proc = upy.run_file(FLASHFS, [str(state_dir), "put", stage], timeout=60)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def read_flash(state_dir, path):
    proc = upy.run_file(FLASHFS, [str(state_dir), "cat", path], timeout=60)
    return proc.stdout if proc.returncode == 0 else None


def list_flash(state_dir, folder=""):
    proc = upy.run_file(FLASHFS, [str(state_dir), "ls", folder], timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.split()


@contextlib.contextmanager
def booted(state_dir, **kw):
    kw.setdefault("baud", TEST_BAUD)
    twin = Twin(str(state_dir), **kw)
    try:
        yield twin
    finally:
        twin.close()


def scores_shown(text):
    """True when the display shows both scores (a turn marker, digits on both halves)."""
    cells = text.replace(".", "").replace(":", "")
    return (text.count(".") + text.count(":") == 1 and len(cells) == 8
            and any(c.isdigit() for c in cells[:4]) and any(c.isdigit() for c in cells[4:])
            and not any(c.isalpha() for c in cells))


def play_shot(twin, fallen):
    """Knock the pins on `fallen` spots over, stand them up; returns the score screen."""
    before = len(twin.displays)
    for spot in fallen:
        twin.set_spot(spot, standing=False)
    time.sleep(0.3)
    for spot in fallen:
        twin.set_spot(spot, standing=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        seen = twin.displays[before:]
        if any("+" in d for d in seen) and scores_shown(twin.display):
            return twin.display
        time.sleep(0.05)
    raise AssertionError("no scored shot on the display: %r" % twin.displays[before:])


def mpremote(port, *args, timeout=60):
    tool = os.path.join(os.path.dirname(sys.executable), "mpremote")
    return subprocess.run([tool, "connect", port, *args], capture_output=True, text=True,
                          timeout=timeout)


def make_deploy(port, mpy=True, timeout=180):
    """`make deploy PORT=...` as a builder types it (.mpy files); mpy=False: `SRC=1`."""
    cmd = ["make", "--no-print-directory", "deploy", "PORT=" + port] + ([] if mpy else ["SRC=1"])
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=upy.ROOT)


def run_deploy(port, *args, timeout=180):
    return subprocess.run([sys.executable, "-m", "tools.deploy", "--port", port, *args],
                          capture_output=True, text=True, timeout=timeout, cwd=upy.ROOT)
