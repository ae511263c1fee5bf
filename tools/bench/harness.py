"""How the bench runs the board's code: the unix-port interpreters (pinned and 32-bit), the
counted runs under callgrind and their windows, the compiled tree and which modules a playing
board holds.
"""

import os
import shutil
import subprocess
import sys
import tempfile

from rules_core.settings import RULES_TABLE
from tools.bench.esp32 import ESP32_CYCLES_PER_INSTR, ESP32_CYCLES_PER_INSTR32, ESP32_MHZ
from tools.port import mpycross, upy

DEVICE = upy.entry("bench")
DEVICE_MODULE = "tools.sim.board.bench_device"
DEVICE_PACKAGES = ("rules_core", "boardlib", "firmware")
BIG_HEAP = "8M"  # the simulator runs that pin a budget inside it (ram32_data_play_bytes)
# The device runs that count work the firmware as a board loads it (the staged deployment's
# .mpy files, into the heap, with the gaps loading leaves) and a heap sized so that what
# is free after the warm-up is what the ESP32 leaves the firmware (ESP32_HEAP less the code
# a board holds): the allocator searches a heap of the board's size and shape. COST_HEAP
# is for the runs that are not sized so (the stand-ins' costs, the resume).
COST_HEAP = "320K"
# Where the counted runs' deployment is staged: a path inside the tree, named relative to
# it, so that the counts do not depend on where the tree is (see _counting_env).
COUNT_STAGE = os.path.join("build", "bench-stage")
# Resuming reads a long game's snapshot (about 5 KB) in one piece; on the unix port the
# loaded code leaves the heap in small pieces, so resume runs get a little more room.
RESUME_HEAP = "512K"

FULL = {"ticks": 1000, "shots": 50, "late_at": 950, "clock": 200, "alloc_idle": 1000,
        "alloc_shots": 50, "game": 1000, "resume_loads": 5, "heap_shots": 500, "net_shots": 20,
        "heap_step": 1024, "heap_fine": 256, "flood": 3000, "bitflips": 300, "bitflip_events": 150,
        "club_games": 10000, "club_runs": 5, "seals": 1000, "wakes": 1000,
        "name_shifts": (0, 16, 32, 48)}
SMOKE = {"ticks": 50, "shots": 3, "late_at": 12, "clock": 20, "alloc_idle": 40,
         "alloc_shots": 2, "game": 10, "resume_loads": 1, "heap_shots": 3, "net_shots": 2,
         "heap_step": 16384, "heap_fine": 16384, "flood": 40, "bitflips": 4, "bitflip_events": 20,
         "club_games": 40, "club_runs": 1, "seals": 20, "wakes": 50,
         "name_shifts": (0, 16)}


class Unavailable(Exception):
    """A figure that cannot be measured here; the message says why."""


def parse_lines(text):
    """`key value` lines -> dict of numbers (text where a value is not a number)."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 2:
            continue
        try:
            out[parts[0]] = float(parts[1]) if "." in parts[1] else int(parts[1])
        except ValueError:
            out[parts[0]] = parts[1]
    return out


class Interpreter:
    """The unix port the device runs use: the 32-bit build of the pinned interpreter's
    release line when there is one (tools.port.upy.interpreter32), else the pinned 64-bit
    port, and `note` says so."""

    def __init__(self, path=None, note=None):
        self.path = path
        self.bits = 32 if path else 64
        self.note = note
        self.cycles_per_instr = ESP32_CYCLES_PER_INSTR32 if path else ESP32_CYCLES_PER_INSTR

    @classmethod
    def find(cls):
        path, why = upy.interpreter32()
        if path:
            return cls(path)
        return cls(None, "taken on the pinned 64-bit interpreter: %s" % why)

    def command(self, args, heapsize=None):
        if self.path is None:
            return upy.command(args, heapsize)
        return [self.path] + (["-X", "heapsize=%s" % heapsize] if heapsize else []) + list(args)

    def has_module(self, name):
        """True when this port can import `name` (a 32-bit build may lack mbedtls)."""
        return upy.imports(self.command([]), name, upy.env())

    def launcher(self, cwd=upy.ROOT):
        """What valgrind runs: the 32-bit port itself; the venv's micropython is a Python
        launcher around the port, run with the venv's own interpreter so that valgrind
        follows one process. Paths relative to `cwd`, inside the tree (see
        _counting_env)."""
        if self.path is None:
            return [sys.executable, os.path.relpath(upy.binary(), cwd)]
        return [self.path]


PINNED = Interpreter()


def _device_env(scratch, first=()):
    env = upy.env()
    if first:
        env["MICROPYPATH"] = ":".join(list(first) + [env["MICROPYPATH"]])
    env["PINBOARD_SCRATCH"] = scratch  # where bench_device keeps its flash image
    # The port's launcher is CPython: a fixed hash seed makes its start-up the same from
    # run to run.
    env["PYTHONHASHSEED"] = "0"
    return env


def _counting_cwd(stage):
    """Where a counted run starts: the tree, or with `stage`, the staged deployment in it
    (with `-m` the port's sys.path starts with the current folder: the firmware and the
    simulator's modules then come in as .mpy files, as a board loads its code). `stage`
    may name another folder _stage_for_counting staged (a test's, uncounted)."""
    if isinstance(stage, str):
        return stage
    return os.path.join(upy.ROOT, COUNT_STAGE) if stage else upy.ROOT


def _counting_env(scratch, stage=False, shift=0):
    """The environment of a counted run, which starts in the tree. Nothing the port
    interns or allocates before the counted work may depend on where the tree is checked
    out or on the caller's environment: where the allocator finds room while the code is
    compiled decides the heap the work starts with, and a shot's count moved by 2 % (the
    allocator's searches) between checkouts whose paths differed in length. So the
    search path is named relative to the tree (with `-m`, the port's sys.path starts with
    the current folder), and the environment holds only what the run needs. `shift`: the
    names bench_device.py interns before the firmware's (`shift_names`)."""
    cwd = _counting_cwd(stage)
    path = [os.curdir, os.path.relpath(upy.UPYLIB, cwd), ".frozen"]
    env = {
        "MICROPYPATH": ":".join(path),
        "PINBOARD_SCRATCH": scratch,  # where bench_device keeps its flash image
        # The port's launcher is CPython: a fixed hash seed makes its start-up the same
        # from run to run.
        "PYTHONHASHSEED": "0",
    }
    if shift:
        env["PINBOARD_NAME_SHIFT"] = str(shift)
    return env


def device(args, heapsize=COST_HEAP, timeout=300, interp=PINNED, script=DEVICE, first=(),
           cwd=upy.ROOT):
    with tempfile.TemporaryDirectory(prefix="bench-") as scratch:
        proc = subprocess.run(
            interp.command([os.path.join(upy.ROOT, script), *[str(a) for a in args]],
                           heapsize),
            capture_output=True, text=True, env=_device_env(scratch, first), cwd=cwd,
            timeout=timeout, check=False,
        )
    if proc.returncode != 0:
        said = (proc.stderr.strip() or proc.stdout.strip())[-300:]
        raise Unavailable("%s %s failed: %s" % (script, " ".join(map(str, args)), said))
    return parse_lines(proc.stdout)


# -- instruction counts ---------------------------------------------------------------------------

def find_valgrind(install):
    found = shutil.which("valgrind")
    if found or not install:
        return found
    try:
        subprocess.run(["apt-get", "install", "-y", "valgrind"], capture_output=True,
                       timeout=240, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return shutil.which("valgrind")


# bench_device.py runs its measured work between two calls of gc.isenabled() (its
# `counted`), a C function without side effects (py/modgc.c) that nothing else calls;
# callgrind dumps its counts when the unix port enters and leaves it, so the part after
# the first edge's own is the work alone, without the start-up. A run may have several
# windows (edges 1 and 2, 3 and 4, ...): parts 3, 7, 11, ...
WINDOW_EDGE = "gc_isenabled"


def callgrind(valgrind, args, workdir, heapsize=COST_HEAP, interp=PINNED, stage=False, shift=0):
    """(instructions of each counted window, the run's `key value` lines) of
    `bench_device.py args` (its `counted`: the work, without the start-up before it or
    the exit after it)."""
    return callgrind_windows(valgrind, DEVICE_MODULE, args, workdir, heapsize, interp,
                             stage, shift)


def callgrind_window(valgrind, module, args, workdir, heapsize, interp=PINNED):
    """Instructions between the two gc.isenabled() calls of `micropython -m module args`."""
    windows, _ = callgrind_windows(valgrind, module, args, workdir, heapsize, interp)
    if len(windows) != 1:
        raise Unavailable("%s %s: %d counted windows, not 1" % (module, args, len(windows)))
    return windows[0]


def callgrind_windows(valgrind, module, args, workdir, heapsize, interp=PINNED, stage=False,
                      shift=0):
    out = os.path.join(workdir, "cg.%s.out" % "_".join(map(str, list(args) + [shift])).replace(
        "/", "_"))
    # The device script runs as a module (`-m`): the port puts a script's folder on
    # sys.path as an absolute path.
    cmd = [valgrind, "--tool=callgrind", "--callgrind-out-file=" + out,
           "--dump-before=" + WINDOW_EDGE, "--dump-after=" + WINDOW_EDGE,
           *interp.launcher(_counting_cwd(stage)), "-X", "heapsize=" + heapsize, "-m", module]
    with tempfile.TemporaryDirectory(prefix="bench-") as scratch:
        proc = subprocess.run(cmd + [str(a) for a in args], capture_output=True, text=True,
                              env=_counting_env(scratch, stage, shift),
                              cwd=_counting_cwd(stage), timeout=1200, check=False)
    if proc.returncode != 0:
        raise Unavailable("callgrind of %s failed: %s" % (args, proc.stderr.strip()[-300:]))
    # Parts 1, 2, ... go to out.1, out.2, ..., the last (from the last edge to the exit)
    # to out itself.
    parts = {}
    base = os.path.basename(out)
    for name in os.listdir(workdir):
        if name == base or name.startswith(base + "."):
            path = os.path.join(workdir, name)
            part, total = callgrind_part(path)
            parts[part] = total
            os.remove(path)
    count = len(parts)
    if sorted(parts) != list(range(1, count + 1)) or count < 5 or (count - 1) % 4:
        raise Unavailable("callgrind of %s: %d parts: the script must call gc.isenabled() "
                          "in pairs, and the port must name its functions (a build that "
                          "is not stripped: %s; `python -m tools.port.upybuild` keeps "
                          "them)" % (args, count, interp.path or "the pinned interpreter"))
    return [parts[i] for i in range(3, count, 4)], parse_lines(proc.stdout)


def callgrind_part(path):
    """(part number, instructions) of one callgrind output file."""
    part = total = None
    with open(path) as f:
        for line in f:
            if line.startswith("part:"):
                part = int(line.split()[1])
            elif line.startswith(("totals:", "summary:")):
                total = int(line.split()[1])
    if part is None or total is None:
        raise Unavailable("no part or totals in the callgrind output %s"
                          % os.path.basename(path))
    return part, total


def clock_costs(windows, count):
    """What each call of the stand-ins costs beyond what the board's own calls cost
    (bench_device.py `clock`: windows of an empty loop, the stand-in ticks_ms(), the port's
    C ticks_ms(), ipoll(0), the object's ioctl, one ipoll waiting `count` ticks, `count`
    table actions, the block device's read, program and sync): (per ticks_ms(), per
    ipoll(), per tick waited, per table action, per block read, program, ioctl). The
    board's ticks_ms() is C, and so are its ipoll(), the loop that waits and its flash
    partition's methods (esp32.Partition): each such call is counted as a call into C
    (the port's ticks_ms()). A table action is the simulated table changing a pin, which
    costs the board nothing but the pin's interrupt handler (kept: the action measured
    here has none). The ioctl calls of the wake object are the firmware's own Python,
    which the board makes too, so they stay counted."""
    empty, stand_in, port, ipoll0, ioctl, waited, actions, read, write, sync = windows
    per_ticks = (stand_in - port) / count
    # the board's ipoll() is one call into C, as the port's ticks_ms() is
    per_ipoll = (ipoll0 - ioctl - port + empty) / count
    per_tick = (waited - (ioctl - empty)) / count
    return (per_ticks, per_ipoll, per_tick, actions / count, (read - port) / count,
            (write - port) / count, (sync - port) / count)


# The simulator's modules the counted runs import, compiled too: loaded from .mpy files, as
# the firmware is, they leave the heap in the shape loading leaves it, without the far
# larger peak of compiling sources.
COUNT_TOOLS = ("tools/__init__.py", "tools/sim/__init__.py", "tools/replay/__init__.py",
               "tools/replay/lines.py", "tools/sim/board/__init__.py",
               "tools/sim/board/heap.py", upy.entry("bench"), "tools/sim/board/bench_standins.py",
               "tools/sim/board/board.py", "tools/sim/board/chips.py",
               "tools/sim/board/flash.py", "tools/sim/board/pins.py",
               "tools/sim/board/shots.py", "tools/sim/board/softi2c.py",
               "tools/sim/board/softspi.py", "tools/sim/board/vclock.py")


def _stage_for_counting(dest=None):
    """The deployment a board gets (`.mpy` files; tools.board.deploy.stage) and the simulator's
    modules the counted runs import, compiled, at COUNT_STAGE (or `dest`)."""
    from tools.board import deploy

    dest = dest or os.path.join(upy.ROOT, COUNT_STAGE)
    try:
        deploy.stage(dest, mpy=True)
        for rel in COUNT_TOOLS:
            mpycross.compile_file(os.path.join(upy.ROOT, rel),
                                  os.path.join(dest, rel[:-3] + ".mpy"))
    except (deploy.DeployError, OSError, mpycross.MpyCrossError) as exc:
        raise Unavailable("staging the deployment for the counted runs: %s" % exc) from None
    return dest


def _board_heap(interp, free, image=None, shots=0, stage=True, shift=0):
    """The -X heapsize that leaves `free` bytes after the counted runs' warm-up: what a
    run of the same start-up holds then, plus `free`, in whole KB. `shots`: the table's
    schedule of that many shots (the simulator's, made before the count) is held too."""
    used = board_run(["heapuse", shots] + ([image] if image else []), BIG_HEAP, interp,
                     stage, "sizing the counted runs' heap", shift)[0]["used"]
    return "%dK" % ((used + free + 1023) // 1024)


def board_run(args, heapsize, interp, stage=True, what=None, shift=0):
    """(`key value` lines, stdout) of `bench_device.py args` run as the counted runs are
    (the staged deployment, the same start-up), without counting: what a board does in
    that heap (tests/test_resume_heap.py)."""
    with tempfile.TemporaryDirectory(prefix="bench-") as scratch:
        proc = subprocess.run(
            interp.launcher(_counting_cwd(stage))
            + ["-X", "heapsize=" + heapsize, "-m", DEVICE_MODULE] + [str(a) for a in args],
            capture_output=True, text=True, env=_counting_env(scratch, stage, shift),
            cwd=_counting_cwd(stage), timeout=300, check=False)
    if proc.returncode != 0:
        raise Unavailable("%s failed: %s" % (what or "bench_device.py %s" % " ".join(
            map(str, args)), (proc.stderr.strip() or proc.stdout.strip())[-300:]))
    return parse_lines(proc.stdout), proc.stdout


def esp32_us(instructions, interp=PINNED):
    return instructions * interp.cycles_per_instr / ESP32_MHZ


# -- firmware size --------------------------------------------------------------------------------

def device_sources(packages):
    for package in packages:
        top = os.path.join(upy.ROOT, package)
        for dirpath, _, files in os.walk(top):
            for name in sorted(files):
                if name.endswith(".py") and not name.startswith("bench_"):
                    yield os.path.relpath(os.path.join(dirpath, name), upy.ROOT)


# The network link (docs/network.md): imported only by a board with `net` settings, so
# its size is counted apart (net_mpy_bytes) from the firmware every board loads.
NET_MODULES = tuple(os.path.join("boardlib", name + ".py")
                    for name in ("mqttlink", "netstream", "netdial", "netlogin", "nettls",
                                 "netgate", "netdns", "framesign"))
# The builders' wiring check (docs/building.md): imported only when a builder chooses it in
# the setup menu or runs `make check`, so it is counted apart too (check_mpy_bytes).
CHECK_MODULES = (os.path.join("firmware", "check.py"),)
# Used once at power-up to build the board, then dropped before the application is imported
# and the game read (firmware/powerup.py, BOOT_MODULES): boot_mpy_bytes.
BOOT_MODULES = (os.path.join("firmware", "powerup.py"), os.path.join("firmware", "hw.py"),
                os.path.join("firmware", "assemble.py"),
                os.path.join("firmware", "boards", "esp32_devkit.py"),
                os.path.join("boardlib", "config.py"), os.path.join("boardlib", "netconfig.py"),
                os.path.join("firmware", "startapp.py"))
# Read once at boot (journal_load.load in firmware.app.load, the snapshot's reader its
# codec unpacks with, and the records' decoders the stored events are read with), then
# dropped: load_mpy_bytes.
LOAD_MODULES = (os.path.join("boardlib", "journal_load.py"),
                os.path.join("rules_core", "resume.py"), os.path.join("rules_core", "events.py"))
# The setup menu, and the board state it shows: imported only when a player opens it
# (menu_mpy_bytes).
MENU_MODULES = (os.path.join("firmware", "menu.py"), os.path.join("rules_core", "boardstate.py"))
# Never imported by the firmware: the board state as JSON, for the host tools and the
# simulator (Game.state_json imports it when called); the ticks' arithmetic for CPython
# (the board's modules take MicroPython's own from `time`); CPython's HMAC and frame seal
# (the board's seal is boardlib/framesign.py's viper).
HOST_MODULES = (os.path.join("rules_core", "jsonout.py"), os.path.join("boardlib", "ticks.py"),
                os.path.join("boardlib", "hmac256.py"))
# A board imports the driver of its own display only (firmware/hw.py): the larger of the
# two is counted.
DISPLAY_DRIVERS = tuple(os.path.join("boardlib", name + ".py") for name in ("tm1637", "max7219"))
# A game imports its own rules' module only (rules_core.game, `_scoring`, by the rules
# table's second column): the largest of them is counted.
RULES_MODULES = tuple(sorted({os.path.join("rules_core", row[1] + ".py")
                              for row in RULES_TABLE}))
# The audible calls, imported only by a board with a buzzer (firmware/app.py; the board
# profile has none): counted apart (buzzer_mpy_bytes).
BUZZER_MODULES = (os.path.join("firmware", "sound.py"), os.path.join("boardlib", "calls.py"),
                  os.path.join("boardlib", "buzzer.py"))
# Imported by a frozen build only (main.py; its code stays in flash), never copied.
FROZEN_MODULES = (os.path.join("firmware", "frozen.py"),)
# The link's stream over UART0, loaded only by a board whose link shares the REPL's port
# (`"link": "uart0"`, firmware/hw.py); the default link has UART2 to itself.
UART0_MODULES = (os.path.join("boardlib", "replstream.py"),)
APART = (NET_MODULES + CHECK_MODULES + MENU_MODULES + HOST_MODULES + DISPLAY_DRIVERS
         + RULES_MODULES + BUZZER_MODULES + BOOT_MODULES + LOAD_MODULES + FROZEN_MODULES
         + UART0_MODULES)
# Modules normal play must not import; `game_figures` checks it on the simulated board.
NOT_IN_PLAY = (NET_MODULES + CHECK_MODULES + MENU_MODULES + HOST_MODULES + FROZEN_MODULES
               + UART0_MODULES + BUZZER_MODULES)


# As a board's code is compiled (tools.port.mpycross.ESP32_FLAGS), for any architecture: no
# line-number tables (docs/performance.md), each source named by its module's name
NO_LINES = ("-X", "no-source-lines")


def compile_tree(packages, dest, march=None, only=None, skip=APART):
    """Every module of `packages` (or just `only`) as .mpy under dest, but `skip`; returns
    the total size in bytes. Without line numbers, as `make deploy` compiles."""
    total = 0
    for rel in only or device_sources(packages):
        if rel == os.path.join("firmware", "manifest.py") or (not only and rel in skip):
            continue  # the freeze manifest is read by the build, not run on the board
        out = os.path.join(dest, rel[:-3] + ".mpy")
        flags = (["-march=" + march] if march else []) + list(NO_LINES)
        try:
            mpycross.compile_file(os.path.join(upy.ROOT, rel), out, flags,
                                  name=mpycross.module_name(rel))
        except mpycross.MpyCrossError as exc:
            raise Unavailable(str(exc)) from None
        total += os.path.getsize(out)
    return total
