"""What several test files share: pin masks, and running device test modules (tests/device/)
on both interpreters.

    from helpers import spots, device_case_tests, device_value, run_on_micropython
    spots(1, 3)                                          # 0b00101
    test_case = device_case_tests("journal_cases")       # each case_* on both interpreters
    device_value("micropython", "tm1637_cases", "scenarios")   # one function's result
    run_on_micropython("shot_cases", [["play", [text]], ...])  # many calls, one process
    with repl_on_pty(cwd, env) as port:                  # a unix-port REPL as a USB board
        mpremote(port, "exec", "print(1)")
    descendants(pid)                                     # every process below pid (Linux)
    menu_item_read("d1    40")                           # "d1": the menu item a person reads
"""

import contextlib
import json
import os
import subprocess
import sys
import time

from tools.port import upy


def spots(*numbers):
    """Pins bitmask from spot numbers 1-5 (bit0 = spot 1)."""
    mask = 0
    for n in numbers:
        mask |= 1 << (n - 1)
    return mask


ALL_PINS = spots(1, 2, 3, 4, 5)

# What a person reads on the digits in each setup menu item (firmware.menu), by how the
# picture starts ("5" is how an S looks on seven segments), and the words the simulator
# must write under it.
MENU_PICTURES = {"AGAIn": "again", "rULE": "rules", "d1": "d1", "d2": "d2", "5Et5": "sets",
                 "PLAy": "teams", "FIr5t": "first", "bEEP": "sound", "tE5t": "check",
                 "nEW": "new"}
MENU_LINES = {"again": "setup menu: the same game again: ok starts it",
              "sound": "setup menu: the buzzer's calls on or off",
              "rules": "setup menu: rules", "d1": "setup menu: distance of player 1",
              "d2": "setup menu: distance of player 2", "sets": "setup menu: sets (best of)",
              "teams": "setup menu: singles or two-man teams",
              "first": "setup menu: who breaks first", "check": "setup menu: wiring check",
              "new": "setup menu: start a new game"}


# The sizes MicroPython gives a table of names as it grows (py/map.c,
# hash_allocation_sizes): it grows to the next only when a new name finds no empty slot
TABLE_SIZES = (2, 4, 6, 8, 10, 12, 17, 23, 29, 37, 47, 59, 73, 97, 127, 167, 223, 293, 389)


def table_room(names):
    """Why an object holding `names` attributes has too little room in its table of
    attributes (a sentence), or None: a name the table lacks (every method's: a call asks
    the object first) is looked for up to an empty slot, so a full table is searched
    whole, and a large one wants one slot in eight empty (docs/performance.md, "Attribute
    tables with room")."""
    slots = next(size for size in TABLE_SIZES if size >= names)
    if slots == names:
        return "%d names fill its table" % names
    if slots >= 47 and (slots - names) * 8 < slots:
        return "%d names leave %d of its %d slots empty" % (names, slots - names, slots)
    return None


def menu_item_read(text):
    """The setup menu item whose picture `text` (the digits as read) is, or None."""
    for start, item in MENU_PICTURES.items():
        if text.startswith(start):
            return item
    return None

# ---- device test modules (tests/device/): the same code on both interpreters -------------

RESULT_MARK = "CASE "


def device_module(name):
    """The device test module tests/device/<name>.py, imported on CPython."""
    import importlib

    return importlib.import_module("device." + name)


def device_case_names(module):
    """The `case_*` functions of a device module, sorted, without the prefix."""
    return sorted(n[5:] for n in dir(module) if n.startswith("case_"))


def module_heapsize(name):
    """The `HEAPSIZE = "..."` a device module asks for, read from its text: modules for the
    unix port alone need not import on CPython."""
    import re

    with open(os.path.join(os.path.dirname(__file__), "device", name + ".py")) as f:
        found = re.search(r'^HEAPSIZE = "(\w+)"', f.read(), re.M)
    return found.group(1) if found else None


def run_on_micropython(name, calls=None, heapsize=None, timeout=120, path=None):
    """Run device module `name` through tests/device/run.py in one unix-port process.

    Without `calls`, every `case_*`; else [[function, [args]], ...] given as JSON (bytes
    become lists of numbers). `path` replaces the project's folders on MICROPYPATH.
    Returns [(function, status, payload), ...] in order (see tests/device/run.py).
    """
    import ast
    import subprocess

    args = ["tests/device/run.py", name] + (["-"] if calls is not None else [])
    heapsize = heapsize or module_heapsize(name)
    env = upy.env() if path is None else dict(os.environ, MICROPYPATH=":".join(path))
    proc = subprocess.run(upy.command(args, heapsize), capture_output=True, text=True,
                          env=env, cwd=upy.ROOT, timeout=timeout,
                          input=None if calls is None else json.dumps(calls, default=list))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = [ast.literal_eval(line[len(RESULT_MARK):]) for line in proc.stdout.splitlines()
           if line.startswith(RESULT_MARK)]
    if calls is not None:
        assert [r[0] for r in out] == [c[0] for c in calls], proc.stdout + proc.stderr
    return out


def micropython_value(result):
    """The payload of one run_on_micropython result; a failure shows its traceback."""
    import pytest

    name, status, payload = result
    if status == "skip":
        pytest.skip(payload)
    if status != "ok":
        pytest.fail("%s on MicroPython:\n%s" % (name, payload), pytrace=False)
    return payload


def cpython_value(module, name, *args):
    """module.name(*args) on CPython; a case that skips itself is a pytest skip."""
    __tracebackhide__ = True
    import pytest
    from device.support import Skipped

    try:
        return getattr(module, name)(*args)
    except Skipped as why:
        pytest.skip(str(why))


def device_value(interpreter, name, function, *args):
    """`function(*args)` of device module `name` on "cpython" (directly) or "micropython"
    (one unix-port process; the arguments travel as JSON)."""
    __tracebackhide__ = True
    if interpreter == "cpython":
        return cpython_value(device_module(name), function, *args)
    return micropython_value(run_on_micropython(name, [[function, list(args)]])[0])


def device_case_tests(name, interpreters=("cpython", "micropython")):
    """Parametrized tests for the `case_*` functions of tests/device/<name>.py:

        test_case = device_case_tests("journal_cases")

    runs each case on CPython directly (a failure is an ordinary traceback) and on the
    MicroPython unix port, where all the module's cases run in one process, the first time
    one is asked for. A case passes when it returns without raising.
    """
    import pytest

    module = device_module(name)
    ran = []  # the results, or why the process failed: one process however it ends

    def on_micropython():
        if not ran:
            try:
                ran.append({r[0]: r for r in run_on_micropython(name)})
            except (AssertionError, OSError, ValueError) as err:
                ran.append(err)
        if isinstance(ran[0], Exception):
            pytest.fail("the unix-port process failed: %s" % ran[0], pytrace=False)
        return ran[0]

    @pytest.mark.parametrize("interpreter", interpreters)
    @pytest.mark.parametrize("case", device_case_names(module))
    def test_case(case, interpreter):
        if interpreter == "cpython":
            cpython_value(module, "case_" + case)
        else:
            results = on_micropython()
            assert "case_" + case in results, "not run on MicroPython: %s" % sorted(results)
            micropython_value(results["case_" + case])

    return test_case


@contextlib.contextmanager
def repl_on_pty(cwd, env):
    """A MicroPython unix-port REPL on a pty, reached as a USB-serial ESP32 would be;
    yields the host's port path."""
    from tools.port.linkpipe import LinkPipe

    pipe = LinkPipe()
    with open(pipe.device_path, "r+b", buffering=0) as tty:
        proc = subprocess.Popen([upy.binary()], stdin=tty, stdout=tty, stderr=tty, cwd=cwd,
                                env=env)
        try:
            yield pipe.host_path
        finally:
            proc.kill()
            proc.wait()
            pipe.close()


def mpremote(port, *args):
    """mpremote on `port`, resuming the REPL as it is (no soft reset between calls)."""
    tool = os.path.join(os.path.dirname(sys.executable), "mpremote")
    return subprocess.run([tool, "connect", port, "resume", *args], capture_output=True,
                          text=True, timeout=120)


def descendants(pid):
    """Process ids below ``pid`` (Linux /proc)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        children = [p for p, pp in parents.items() if pp == parent]
        found += children
        todo += children
    return found


def wait_until(check, timeout=10.0, step=0.02):
    """check() until true; returns its last value (falsy on timeout)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(step)
