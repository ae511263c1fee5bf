"""Power cuts of the whole simulated board: `kill -9` at random moments, then a reboot.

`tools.sim --speed 100 --state DIR` plays a game at a hundred times real time on a littlefs
image; at 20 random moments (POWER_KILLS=N for another number) the whole process group
(the front end and the firmware on the unix port) is killed with SIGKILL, as a kicked
power strip would. A restart on the same
DIR must give the state `tools.replay` computes for some prefix of the shots (the shot in
progress may be lost, nothing scored is), and the game must go on from there to the same
end as an uninterrupted game.
"""

import fcntl
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tools.sim.timelines import build, random_game

pytestmark = pytest.mark.long(30)

RULES = "ddbu"
KILLS = int(os.environ.get("POWER_KILLS", "20"))  # each kill costs three board starts
IDLE = "0 pins up 1 2 3 4 5\n"


def sim(args, **kw):
    return subprocess.run(
        [sys.executable, "-m", "tools.sim", *args], capture_output=True, text=True, timeout=120,
        **kw,
    )


def replay_trace(path):
    proc = subprocess.run(
        [sys.executable, "-m", "tools.replay", str(path), "--trace"],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def wait_for_first_write(image, proc, timeout=60.0):
    """Return once the board has written to its flash image (it is up and playing)."""
    before = image.stat().st_mtime_ns
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        if image.stat().st_mtime_ns != before:
            return
        time.sleep(0.002)


def wait_until_off(state, timeout=30.0):
    """Return once no process of the killed board holds its flash: SIGKILL reaches every
    process of the group at once, but each ends (and lets the folder's flock go,
    tools/sim/front.py lock_state) when the kernel gets to it, after the front end has been
    reaped; the power is off only then."""
    fd = os.open(state, os.O_RDONLY | os.O_DIRECTORY)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except OSError:
                assert time.monotonic() < deadline, "the killed board still holds %s" % state
                time.sleep(0.002)
    finally:
        os.close(fd)  # and the flock with it


def test_kill_at_random_moments_then_resume(tmp_path):
    events = random_game(RULES, 99, length=16, distance=(60, 60))
    timeline, script = build(RULES, events, distance=(60, 60))
    (tmp_path / "game.timeline").write_text(timeline)
    (tmp_path / "game.shots").write_text(script)
    (tmp_path / "idle.timeline").write_text(IDLE)
    trace = replay_trace(tmp_path / "game.shots")
    rng = random.Random(2026)
    # moments after the board's first write to its flash: counted from the process start
    # instead, a loaded machine's slower start-up would put every kill before the first shot
    moments = [rng.uniform(0.0, 0.9) for _ in range(KILLS)]

    def set_up(state):
        """A board with the new game on its flash, as after the setup menu."""
        proc = sim(["--timeline", str(tmp_path / "idle.timeline"), "--rules", RULES,
                    "--distance", "60", "--state", str(state)])
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    # the states a resumed board may show: before any event, or after any event
    prefixes = [set_up(tmp_path / "flash-setup")] + trace

    def one(i):
        # the set-up board's flash, copied: the same image a set-up of its own would make
        state = tmp_path / ("flash%d" % i)
        shutil.copytree(tmp_path / "flash-setup", state)
        proc = subprocess.Popen(
            [sys.executable, "-m", "tools.sim", "--timeline", str(tmp_path / "game.timeline"),
             "--speed", "100", "--state", str(state)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        wait_for_first_write(state / "flash.img", proc)
        time.sleep(moments[i])
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        wait_until_off(state)
        again = sim(["--timeline", str(tmp_path / "idle.timeline"), "--state", str(state)])
        assert again.returncode == 0, again.stderr
        resumed = again.stdout.strip()
        assert resumed in prefixes, "resumed state is no prefix of the game: " + resumed
        k = prefixes.index(resumed)  # events applied before the cut
        # play goes on: the rest of the game, on the same flash
        rest, _ = build(RULES, events[k:], distance=(60, 60))
        (tmp_path / ("rest%d.timeline" % i)).write_text(rest)
        done = sim(["--timeline", str(tmp_path / ("rest%d.timeline" % i)),
                    "--state", str(state)])
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == trace[-1]
        return k

    with ThreadPoolExecutor(max_workers=2) as pool:
        resumed_at = list(pool.map(one, range(KILLS)))
    # the kills landed all through the game, not only at its start or after its end
    assert len(set(resumed_at)) >= 5
    assert json.loads(trace[-1])["shots"] > 0
