"""Run code on the MicroPython unix port with the project's packages on its path.

    from tools.port import upy
    out = upy.run_file(upy.entry("board"), ["--timeline", "game.timeline"])
    proc = upy.popen(["-c", "import rules_core"], heapsize="64K")
    upy.DIE_WITH_PARENT = True   # from now on every interpreter started here ends with us

The unix port stands in for the ESP32: same interpreter, same bytecode, same limits
on what the language offers. `MICROPYPATH` replaces the default search path, so the
frozen modules (asyncio) are named again through `.frozen`.

Interpreters that must not outlive the program that started them (tools.sim's: one still
running would go on writing its flash image) are started with ``die_with_parent``: on
Linux the kernel sends them SIGKILL when the thread that started them ends
(prctl PR_SET_PDEATHSIG, set between fork and exec), so even a `kill -9` of the program
ends them at once. That signal follows the starting *thread*; an interpreter started from
another thread (the ESP32 twin restarts its chip from a reader thread) is instead watched
by a Lifeline: a small process of its own that learns each such interpreter's pid and
start time, waits for this program's end on a pipe, and then ends those that still run.
"""

import ctypes
import os
import shutil
import subprocess
import sys
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The programs the host starts on the unix port, by name: the one place their files are
# named, so that a moved file fails here at once (tests/test_entries.py), not in a run.
ENTRIES = {
    "board": "tools/sim/board/run.py",  # the simulated board: make sim, timelines
    "rom": "tools/sim/board/esp32/rom.py",  # the ESP32 twin's chip
    "flashfs": "tools/sim/board/esp32/flashfs.py",  # the twin's flash image, read or made
    "linkplay": "tools/sim/board/linkplay.py",  # frames played onto a serial link
    "bitflip": "tools/sim/board/bitflip.py",  # a game on a flash with flipped bits
    "replay": "tools/replay/on_upy.py",  # shot scripts, as tools.replay --micropython
    "bench": "tools/sim/board/bench_device.py",  # make bench: the board's counted runs
    "heap": "tools/sim/board/heap_device.py",  # make bench: the heap's figures
    "perfbench": "tools/sim/board/perfbench_run.py",  # make bench: the calibration
    "net_bench": "tools/sim/board/net_bench_device.py",  # make bench: the network link
    "tls": "tools/sim/board/tls_device.py",  # make bench: the TLS connection's polls
    "flashgap": "tools/sim/board/flashgap_device.py",  # make bench: the flash's pauses
}


def entry(name):
    """The file of the unix-port program called `name` (a key of ENTRIES), relative to
    ROOT, as run_file takes it."""
    return ENTRIES[name]



def binary():
    """Path of the unix-port interpreter installed in the venv."""
    here = os.path.join(os.path.dirname(sys.executable), "micropython")
    if os.path.exists(here):
        return here
    found = shutil.which("micropython")
    if not found:
        raise RuntimeError("micropython not found: run 'make venv' first")
    return found


# MicroPython unix ports of other releases, built from their tags (32-bit ones with gcc's
# -m32: tools.port.upybuild): micropython-1.24.1, micropython-1.25.0-32bit, ... Optional; the
# folder is ../shared/upy beside the repository unless PINBOARD_UPY_DIR names another
# (`make upy32 MICROPYTHON_SRC=DIR` builds one into build/upy).
UPY_DIR = os.environ.get("PINBOARD_UPY_DIR") or os.path.join(os.path.dirname(ROOT), "shared",
                                                             "upy")
BUILT_DIR = os.path.join(ROOT, "build", "upy")


def release_binary(version, bits=None):
    """The unix port of MicroPython `version` (a tuple: (1, 25, 0)) from UPY_DIR or
    build/upy, or None. bits: 32 or 64 to ask for one word size, None for either (32-bit
    first: it measures memory as the ESP32 would)."""
    base = "micropython-%d.%d.%d" % tuple(version[:3])
    names = []
    if bits in (None, 32):
        names += [base + "-32bit", base + "-preview-32bit"]
    if bits in (None, 64):
        names += [base, base + "-preview"]
    for folder in (UPY_DIR, BUILT_DIR):
        for name in names:
            path = os.path.join(folder, name)
            if os.access(path, os.X_OK):
                return path
    return None


def is_32bit(path):
    """True when the interpreter at `path` has 32-bit words (small ints to 2**30)."""
    proc = subprocess.run([path, "-c", "import sys; print(sys.maxsize)"], capture_output=True,
                          text=True, timeout=60, check=False)
    return proc.stdout.strip() == str(2**31 - 1)


def has_vfs_rom(path):
    """True when the interpreter at `path` can mount a ROMFS image (`vfs.VfsRom`, from
    MicroPython 1.25; the unix port's standard build has it)."""
    proc = subprocess.run([path, "-c", "import vfs; print(hasattr(vfs, 'VfsRom'))"],
                          capture_output=True, text=True, timeout=60, check=False)
    return proc.stdout.strip() == "True"


def has_growing_heap(path):
    """True when the interpreter at `path` grows its GC heap into played ESP-IDF regions
    (the `idfheap` module: tools.port.upybuild --esp32-heap)."""
    proc = subprocess.run([path, "-c", "import idfheap; print('grows')"], capture_output=True,
                          text=True, timeout=60, check=False)
    return proc.stdout.strip() == "grows"


def has_frozen_umqtt(path):
    """True when the interpreter at `path` has umqtt.simple frozen in it, as a stock ESP32
    build has (tools.port.upybuild freezes it into a release without VfsRom)."""
    code = "import sys; sys.path[:] = ['.frozen']; import umqtt.simple; print('frozen')"
    proc = subprocess.run([path, "-c", code], capture_output=True, text=True, timeout=60,
                          check=False)
    return proc.stdout.strip() == "frozen"


# The pinned micropython-lib modules (umqtt), unpacked by tools.port.upylib at `make venv`.
UPYLIB = os.path.join(ROOT, ".venv", "upylib")


def env(extra_path=()):
    e = dict(os.environ)
    e["MICROPYPATH"] = ":".join([ROOT, *extra_path, UPYLIB, ".frozen"])
    return e


def command(args, heapsize=None, interpreter=None):
    cmd = [interpreter or binary()]
    if heapsize:
        cmd += ["-X", "heapsize=%s" % heapsize]
    return cmd + list(args)


# Set by a program whose interpreters must end with it (tools.sim); die_with_parent=None
# follows it.
DIE_WITH_PARENT = False
_PR_SET_PDEATHSIG = 1
_prctl = None


def _death_signal_setter():
    """A preexec_fn for subprocess: the child gets SIGKILL when its parent thread ends
    (and ends at once if the parent is already gone). Everything it calls is looked up
    here, before the fork: between fork and exec nothing may be imported."""
    global _prctl
    if _prctl is None:
        _prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl, parent, kill, getppid = _prctl, os.getpid(), os.kill, os.getppid

    def preexec():
        prctl(_PR_SET_PDEATHSIG, 9)
        if getppid() != parent:  # the parent died before the line above
            kill(os.getpid(), 9)

    return preexec


class Lifeline:
    """A watcher process that ends this program's interpreters when the program ends,
    whatever ends it: it reads `pid start-time` lines on a pipe and, at the pipe's end
    (every descriptor of its writing end closed: this program has exited or was killed),
    sends SIGKILL to each of those that is still the same process (same start time: a
    pid the system has given to another program since is left alone)."""

    WATCHER = r"""
import os, sys
def started(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None
watched = []
for line in sys.stdin.buffer:
    pid, start = line.split()
    watched.append((int(pid), start.decode()))
for pid, start in watched:
    if started(pid) == start:
        try:
            os.kill(pid, 9)
        except OSError:
            pass
"""

    def __init__(self, pass_fds=()):
        self.lock = threading.Lock()
        # Its own session: a Ctrl-C meant for the program does not end the watcher first.
        # No parent-death signal: it may be started from a thread that ends soon; the end
        # of its pipe is what it waits for.
        self.proc = subprocess.Popen([sys.executable, "-c", self.WATCHER],
                                     stdin=subprocess.PIPE, start_new_session=True,
                                     pass_fds=pass_fds)

    def watch(self, pid):
        try:
            with open("/proc/%d/stat" % pid) as f:
                start = f.read().rsplit(")", 1)[1].split()[19]
        except (OSError, IndexError):
            return  # gone already
        with self.lock:
            self.proc.stdin.write(b"%d %s\n" % (pid, start.encode()))
            self.proc.stdin.flush()


_lifeline = None
_lifeline_lock = threading.Lock()


def lifeline(pass_fds=()):
    """The process's Lifeline, started on first use (with ``pass_fds`` held open until it
    has ended what it watches: a lock, say)."""
    global _lifeline
    with _lifeline_lock:
        if _lifeline is None:
            _lifeline = Lifeline(pass_fds)
        return _lifeline


def _spawn(popen_args, kw, die_with_parent):
    if DIE_WITH_PARENT if die_with_parent is None else die_with_parent:
        if threading.current_thread() is threading.main_thread():
            kw["preexec_fn"] = _death_signal_setter()
            return subprocess.Popen(popen_args, **kw)
        proc = subprocess.Popen(popen_args, **kw)
        lifeline().watch(proc.pid)
        return proc
    return subprocess.Popen(popen_args, **kw)


def popen(args, heapsize=None, die_with_parent=None, interpreter=None, **kw):
    kw.setdefault("env", env())
    kw.setdefault("cwd", ROOT)
    return _spawn(command(args, heapsize, interpreter), kw, die_with_parent)


def run(args, heapsize=None, input=None, timeout=300, check=False, die_with_parent=None,
        pass_fds=()):
    """Run the interpreter to completion; returns CompletedProcess with text output."""
    proc = _spawn(command(args, heapsize), {
        "stdin": subprocess.PIPE if input is not None else None,
        "stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True, "env": env(),
        "cwd": ROOT, "pass_fds": pass_fds}, die_with_parent)
    with proc:
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except BaseException:  # a timeout, Ctrl-C: the interpreter goes too
            proc.kill()
            proc.wait()
            raise
    result = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    if check:
        result.check_returncode()
    return result


def run_file(path, args=(), **kw):
    return run([os.path.join(ROOT, path), *args], **kw)


# -- the 32-bit interpreter -----------------------------------------------------------------------

# A unix port built for 32 bits (-m32, tools.port.upybuild) from the release line of the
# pinned interpreter: 4-byte words and 16-byte heap blocks, as on the ESP32, so that what the
# firmware holds in its heap is counted as the board counts it (docs/performance.md).
# $PINBOARD_UPY32 names one (a path, relative to the repository unless absolute); otherwise
# a 32-bit build of the pinned release line in build/upy (`make upy32`), then in UPY_DIR
# (places32). None is required: without one, the figures that want it are taken on the
# pinned 64-bit interpreter and say so.
UPY32_ENV = "PINBOARD_UPY32"
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


def places32(line, suffix="-32bit"):
    """The 32-bit builds of release line `line` ("1.29"), as tools.port.upybuild names them
    (micropython-1.29.0-32bit, micropython-1.29.0-preview-32bit; `suffix` "-32bit-esp32heap"
    for those with the growing heap): build/upy's first, then UPY_DIR's, the newest patch
    release of each first."""
    found = []
    for folder in (BUILT_DIR, UPY_DIR):
        try:
            names = sorted(os.listdir(folder), reverse=True)
        except OSError:
            continue
        found += [os.path.join(folder, name) for name in names
                  if name.startswith("micropython-%s." % line) and name.endswith(suffix)]
    return found


def imports(command, name, env=None):
    """True when the interpreter `command` runs (a list: its path, or a launcher) imports
    module `name`; `env`: its environment (by default nothing on its path, so only a
    built-in module counts)."""
    try:
        proc = subprocess.run(list(command) + ["-c", "import " + name], capture_output=True,
                              timeout=60, check=False,
                              env={"MICROPYPATH": ""} if env is None else env)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


def _choose32(candidates, pinned, why, module=None):
    """(path, None) of the first of `candidates` (paths, relative to the tree unless
    absolute) that runs with 32-bit words, is of the release line of `pinned` (_probe's)
    and, with `module`, imports it; else (None, why the last one was not taken, or `why`
    when there was none)."""
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
        elif module and not imports([path], module):
            why = "%s has no %s module" % (candidate, module)
        else:
            return path, None
    return None, why


def _find32(env_name, module=None, suffix="-32bit"):
    """interpreter32's search, with `module` for one that must import it too."""
    key = module or "result"
    if key in _found32:
        return _found32[key]
    named = os.environ.get(env_name)
    pinned = _probe(binary())
    candidates = [named] if named else places32(pinned[1] if pinned else "", suffix)
    why = "no micropython-%s.*%s in build/upy or %s" % (pinned[1] if pinned else "?", suffix,
                                                        UPY_DIR)
    path, why = _choose32(candidates, pinned, why, module)
    result = (path, None) if path else (
        None, "no 32-bit interpreter%s: %s (set %s, or see docs/performance.md)"
        % (" with %s" % module.upper() if module else "", why, env_name))
    _found32[key] = result
    return result


def interpreter32():
    """(path, None) of a 32-bit unix port of the pinned interpreter's release line, or
    (None, why not) in a sentence: the one place that finds it (the bench, the twin)."""
    return _find32(UPY32_ENV)


# A 32-bit port of the same kind with the `tls` module (its tree had lib/mbedtls), for what
# a TLS connection keeps in MicroPython's heap (the SSLContext and SSL socket objects, the
# bench's ram32_detail.tls_gc_bytes) where the 32-bit interpreter has none:
# $PINBOARD_UPY32_TLS names one (as $PINBOARD_UPY32 does), else the first of places32 that
# has it.
UPY32_TLS_ENV = "PINBOARD_UPY32_TLS"


def interpreter32_tls():
    """(path, None) of a 32-bit unix port of the pinned interpreter's release line that has
    the `tls` module, or (None, why not) in a sentence."""
    return _find32(UPY32_TLS_ENV, "tls")


# A 32-bit port of the same kind whose GC heap grows into played ESP-IDF regions, as the
# ESP32's does (tools.port.upybuild --esp32-heap: micropython-1.29.0-preview-32bit-esp32heap):
# $PINBOARD_UPY32_ESP32HEAP names one, else the first such build of build/upy or UPY_DIR.
UPY32_ESP32HEAP_ENV = "PINBOARD_UPY32_ESP32HEAP"


def interpreter32_esp32heap():
    """(path, None) of a 32-bit unix port of the pinned interpreter's release line with the
    growing heap (the `idfheap` module), or (None, why not) in a sentence."""
    return _find32(UPY32_ESP32HEAP_ENV, "idfheap", "-32bit-esp32heap")
