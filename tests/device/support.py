"""What the device test modules share; plain Python for CPython and MicroPython alike.

    from device.support import check, read, write, wipe, Rng, scratch_dir, micropython_only
    root = scratch_dir()             # an empty folder: littlefs on MicroPython
    write(root + "/x", b"data")
    check(read(root + "/x") == b"data", "read back")
    Rng(7).below(10)                 # the same numbers on both interpreters
    t = play(app, 0, 3000)           # the firmware's 5 ms steps in virtual time
"""

import os
import sys

MICROPYTHON = sys.implementation.name == "micropython"
SCRATCH = "/scratch"  # where scratch_dir() mounts its littlefs on MicroPython


class Skipped(Exception):
    """Raised by a case that cannot run on this interpreter; the runner reports a skip."""


def micropython_only(why):
    """Skip the calling case unless this is MicroPython; `why` says what it needs."""
    if not MICROPYTHON:
        raise Skipped("MicroPython only: " + why)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def wipe(root):
    """Remove every file in `root` (the cases keep no subfolders)."""
    for name in os.listdir(root):
        os.remove(root + "/" + name)


class Rng:
    """A seeded linear congruential generator: `random` differs between the interpreters,
    this gives the same numbers on both."""

    def __init__(self, seed):
        self.x = seed

    def next(self):
        self.x = (self.x * 1103515245 + 12345) & 0x7FFFFFFF
        return self.x

    def below(self, n):
        return (self.next() >> 8) % n


_temp_dirs = []


def scratch_dir(blocks=96):
    """An empty folder for one case. On MicroPython a freshly formatted littlefs
    (os.VfsLfs2, as on the board) over a RAM flash of `blocks` 4 KB blocks, replacing the
    previous case's; on CPython a new temporary folder on the host's filesystem."""
    if MICROPYTHON:
        from tools.sim.board.flash import RamBlockDev, mount

        try:
            os.umount(SCRATCH)
        except OSError:
            pass
        mount(RamBlockDev(4096, blocks), SCRATCH)
        return SCRATCH
    import shutil
    import tempfile

    while _temp_dirs:
        shutil.rmtree(_temp_dirs.pop(), ignore_errors=True)
    _temp_dirs.append(tempfile.mkdtemp(prefix="device-case-"))
    return _temp_dirs[-1]


def play(app, t0, t1):
    """Run the firmware's 5 ms steps (firmware.run.tick) from t0 to t1 in virtual time;
    returns the first time not played."""
    from firmware.run import STEP_MS, tick

    t = t0
    while t <= t1:
        tick(app, t)
        t += STEP_MS
    return t
