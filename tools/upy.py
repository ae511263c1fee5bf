"""Run code on the MicroPython unix port with the project's packages on its path.

    from tools import upy
    out = upy.run_file("tools/simboard/run.py", ["--timeline", "game.timeline"])
    proc = upy.popen(["-c", "import rules_core"], heapsize="64K")

The unix port stands in for the ESP32: same interpreter, same bytecode, same limits
on what the language offers. `MICROPYPATH` replaces the default search path, so the
frozen modules (asyncio) are named again through `.frozen`.
"""

import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def binary():
    """Path of the unix-port interpreter installed in the venv."""
    here = os.path.join(os.path.dirname(sys.executable), "micropython")
    if os.path.exists(here):
        return here
    found = shutil.which("micropython")
    if not found:
        raise RuntimeError("micropython not found: run 'make venv' first")
    return found


# The pinned micropython-lib modules (umqtt), unpacked by tools.upylib at `make venv`.
UPYLIB = os.path.join(ROOT, ".venv", "upylib")


def env(extra_path=()):
    e = dict(os.environ)
    e["MICROPYPATH"] = ":".join([ROOT, *extra_path, UPYLIB, ".frozen"])
    return e


def command(args, heapsize=None):
    cmd = [binary()]
    if heapsize:
        cmd += ["-X", "heapsize=%s" % heapsize]
    return cmd + list(args)


def popen(args, heapsize=None, **kw):
    kw.setdefault("env", env())
    kw.setdefault("cwd", ROOT)
    return subprocess.Popen(command(args, heapsize), **kw)


def run(args, heapsize=None, input=None, timeout=300, check=False):
    """Run the interpreter to completion; returns CompletedProcess with text output."""
    return subprocess.run(
        command(args, heapsize),
        input=input,
        capture_output=True,
        text=True,
        env=env(),
        cwd=ROOT,
        timeout=timeout,
        check=check,
    )


def run_file(path, args=(), **kw):
    return run([os.path.join(ROOT, path), *args], **kw)


# -- the 32-bit interpreter ------------------------------------------------------------------

# A unix port built with MICROPY_FORCE_32BIT=1 from the release line of the pinned
# interpreter: 4-byte words and 16-byte heap blocks, as on the ESP32, so that what the
# firmware holds in its heap is counted as the board counts it (docs/performance.md).
# $PINBOARD_UPY32 names one (a path, relative to the repository unless absolute); otherwise
# the first of UPY32_PLACES that exists, relative to the repository. None is required:
# without one, the figures that want it are taken on the pinned 64-bit interpreter and
# say so.
UPY32_ENV = "PINBOARD_UPY32"
UPY32_PLACES = (
    os.path.join("build", "upy32", "micropython"),  # built here from a MicroPython tree
    os.path.join(os.pardir, "shared", "upy", "micropython-1.29.0-preview-32bit"),
)
_PROBE = "import sys; print(sys.maxsize, '%d.%d' % sys.implementation.version[:2])"
_found32 = {}


def _probe(path):
    """(word bits, "major.minor") of an interpreter, or None if it does not run."""
    try:
        proc = subprocess.run([path, "-c", _PROBE], capture_output=True, text=True,
                              timeout=30, check=False, env={"MICROPYPATH": ""})
        maxsize, version = proc.stdout.split()
        return (32 if int(maxsize) == (1 << 31) - 1 else 64), version
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def interpreter32():
    """(path, None) of a 32-bit unix port of the pinned interpreter's release line, or
    (None, why not) in a sentence: the one place that finds it (the bench, the twin)."""
    if "result" in _found32:
        return _found32["result"]
    named = os.environ.get(UPY32_ENV)
    candidates = [named] if named else list(UPY32_PLACES)
    pinned = _probe(binary())
    why = None
    result = None
    for candidate in candidates:
        path = candidate if os.path.isabs(candidate) else os.path.join(ROOT, candidate)
        if not os.path.exists(path):
            why = "%s is not there" % candidate
            continue
        got = _probe(path)
        if got is None:
            why = ("%s does not run (a 32-bit build needs the i386 C library: "
                   "apt-get install libc6-i386)" % candidate)
        elif got[0] != 32:
            why = "%s is a %d-bit build" % (candidate, got[0])
        elif pinned is not None and got[1] != pinned[1]:
            why = "%s is MicroPython %s, the pinned interpreter %s" % (candidate, got[1],
                                                                       pinned[1])
        else:
            result = (path, None)
            break
    if result is None:
        result = (None, "no 32-bit interpreter: %s (set %s, or see docs/performance.md)"
                  % (why, UPY32_ENV))
    _found32["result"] = result
    return result
