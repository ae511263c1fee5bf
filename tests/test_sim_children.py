"""The simulator owns its children: `tools.sim` killed with kill -9 takes its MicroPython
interpreter with it, and a --state folder is held by one simulator at a time
(tools/port/upy.py, tools/sim/front.py's lock_state; docs/sim-inputs.md)."""

import os
import signal
import subprocess
import sys
import time

from helpers import descendants, wait_until

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LONG = "0 pins up 1 2 3 4 5\n1000 pin 1 down\n1300 pin 1 up\n120000 press ok\n"


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _interpreters(pid):
    out = []
    for child in descendants(pid):
        try:
            with open("/proc/%d/cmdline" % child, "rb") as f:
                if b"micropython" in f.read():
                    out.append(child)
        except OSError:
            pass
    return out


def _sim(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "tools.sim", *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def _kill_hard(proc):
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=10)


def test_a_simulator_killed_hard_takes_its_interpreter_and_lets_the_folder_go(tmp_path,
                                                                             hostile_report):
    (tmp_path / "long.timeline").write_text(LONG)
    (tmp_path / "short.timeline").write_text("0 pins up 1 2 3 4 5\n1000 press ok\n")
    state = tmp_path / "board"
    first = _sim("--timeline", str(tmp_path / "long.timeline"), "--speed", "1", "--state",
                 str(state), "--rules", "ddbu", "--distance", "40")
    try:
        chips = wait_until(lambda: _interpreters(first.pid), 30)
        assert chips, "no interpreter started"
        assert wait_until(lambda: (state / "flash.img").exists(), 30)
        # a second simulator on the same flash: refused, nothing run, nothing changed
        second = subprocess.run([sys.executable, "-m", "tools.sim", "--timeline",
                                 str(tmp_path / "short.timeline"), "--state", str(state)],
                                cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert second.returncode == 2 and second.stdout == ""
        assert "is in use by another simulator" in second.stderr
        _kill_hard(first)
        assert wait_until(lambda: not any(_alive(p) for p in chips), 5), "the interpreter lives on"
        image = state / "flash.img"
        before = (image.stat().st_mtime_ns, image.read_bytes())
        time.sleep(0.5)
        assert (image.stat().st_mtime_ns, image.read_bytes()) == before  # nobody writes it
    finally:
        if first.poll() is None:
            _kill_hard(first)
    # the lock died with them: the folder is free again, and the game on it resumes
    again = subprocess.run([sys.executable, "-m", "tools.sim", "--timeline",
                            str(tmp_path / "short.timeline"), "--state", str(state)],
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    hostile_report("sim: kill -9 and a second simulator on one --state", killed=1,
                   interpreters_left=0, second_refused=1)


def test_an_interactive_simulator_killed_hard_takes_its_interpreter(tmp_path):
    proc = _sim("--state", str(tmp_path / "board"), stdin=subprocess.PIPE)
    try:
        chips = wait_until(lambda: _interpreters(proc.pid), 30)
        assert chips, "no interpreter started"
        _kill_hard(proc)
        assert wait_until(lambda: not any(_alive(p) for p in chips), 5), "the interpreter lives on"
    finally:
        if proc.poll() is None:
            _kill_hard(proc)


WATCHED_FROM_A_THREAD = """
import sys, threading, time
from tools.port import upy
upy.DIE_WITH_PARENT = True
started = []
def start():
    started.append(upy.popen(["-c", "import time\\nwhile 1: time.sleep(1)"]))
thread = threading.Thread(target=start)
thread.start()
thread.join()  # the thread that started it has ended: no parent-death signal helps now
print(started[0].pid, flush=True)
time.sleep(600)
"""


def test_an_interpreter_started_from_a_thread_ends_with_the_program_too():
    # the ESP32 twin restarts its chip from a reader thread (tools/sim/board/twin.py)
    proc = subprocess.Popen([sys.executable, "-c", WATCHED_FROM_A_THREAD], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    try:
        chip = int(proc.stdout.readline())
        time.sleep(0.5)
        assert _alive(chip)  # the thread's end did not end it
        _kill_hard(proc)
        assert wait_until(lambda: not _alive(chip), 5), "the interpreter lives on"
    finally:
        if proc.poll() is None:
            _kill_hard(proc)


def test_the_esp32_twin_killed_hard_takes_its_chip_and_its_watcher(tmp_path):
    proc = _sim("--state", str(tmp_path / "board"), "--usb")
    try:
        assert proc.stdout.readline().startswith("usb: ")
        chips = wait_until(lambda: _interpreters(proc.pid), 30)
        assert chips, "no chip started"
        everything = descendants(proc.pid)  # the chip and the watcher
        second = subprocess.run([sys.executable, "-m", "tools.sim", "--state",
                                 str(tmp_path / "board"), "--usb"], cwd=ROOT,
                                capture_output=True, text=True, timeout=60)
        assert second.returncode == 2 and "in use by another simulator" in second.stderr
        _kill_hard(proc)
        assert wait_until(lambda: not any(_alive(p) for p in everything), 5), "left running"
    finally:
        if proc.poll() is None:
            _kill_hard(proc)


def test_simulators_racing_for_one_new_folder_and_a_symlink_to_it(tmp_path, hostile_report):
    """Four simulators started at once on a folder that does not exist yet: one runs, the
    others are refused; a symlink to the folder is the same folder."""
    (tmp_path / "long.timeline").write_text(LONG)
    state = tmp_path / "new" / "board"
    racers = [_sim("--timeline", str(tmp_path / "long.timeline"), "--speed", "1", "--state",
                   str(state)) for _ in range(4)]
    try:
        wait_until(lambda: sum(p.poll() is not None for p in racers) >= 3, 30)
        time.sleep(0.5)  # (a fourth one ending too would show here)
        refused = [p for p in racers if p.poll() is not None]
        assert len(refused) == 3, [p.returncode for p in racers]
        assert all(p.returncode == 2 and "in use by another simulator" in p.stderr.read()
                   for p in refused)
        (tmp_path / "link").symlink_to(state)
        twin = subprocess.run([sys.executable, "-m", "tools.sim", "--timeline",
                               str(tmp_path / "long.timeline"), "--state",
                               str(tmp_path / "link")], cwd=ROOT, capture_output=True,
                              text=True, timeout=60)
        assert twin.returncode == 2 and "in use by another simulator" in twin.stderr
    finally:
        for proc in racers:
            if proc.poll() is None:
                _kill_hard(proc)
    hostile_report("sim: simulators racing for one --state", started=5, ran=1, refused=4)
