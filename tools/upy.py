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
