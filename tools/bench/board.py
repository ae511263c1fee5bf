"""The board's own figures: instructions per tick, shot and wake-up (ESP32 microseconds), a
frame's seal, allocations, flash wear and frames, resume time, the firmware's size.
"""

import os
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor

from tools.bench.esp32 import (
    BAUD,
    BITS_PER_BYTE,
    ERASE_CYCLES,
    FLASH_BLOCKS,
    SHOTS_PER_DAY,
    TICK_MS,
)
from tools.bench.harness import (
    BIG_HEAP,
    BOOT_MODULES,
    BUZZER_MODULES,
    CHECK_MODULES,
    COST_HEAP,
    DEVICE_PACKAGES,
    DISPLAY_DRIVERS,
    LOAD_MODULES,
    MENU_MODULES,
    NET_MODULES,
    NOT_IN_PLAY,
    RESUME_HEAP,
    RULES_MODULES,
    Unavailable,
    _board_heap,
    _device_env,
    _stage_for_counting,
    callgrind,
    callgrind_windows,
    clock_costs,
    compile_tree,
    device,
    esp32_us,
    find_valgrind,
    parse_lines,
)
from tools.port import upy

# What a run of the board's loop asks the clock's and the flash's stand-ins (bench_device.py
# run_tasks), in the order of clock_costs.
STAND_IN_CALLS = ("clock_ticks_ms", "clock_ipoll", "clock_waited", "clock_actions",
                  "flash_read", "flash_write", "flash_ioctl")


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
    # The board's loop is counted with the firmware's names numbered from several starts
    # (`shifts`, bench_device.py shift_names): the lookup cache's hits follow the
    # numbering, which the ESP32's own table of names sets otherwise (docs/performance.md,
    # "A shot at any numbering of the names"). Each figure is the mean over the starts. The
    # shot runs hold the table's schedule of their shots too (made before the count).
    shifts = sizes["name_shifts"]
    heaps = {"clock": COST_HEAP, "resume": RESUME_HEAP}
    runs = {"clock": ["clock", sizes["clock"]], "resume": ["resume", 1, game_dir]}
    for shift in shifts:
        fresh = _board_heap(interp, free, shift=shift)
        heaps["tasks", shift] = heaps["calling", shift] = fresh
        heaps["early", shift] = _board_heap(interp, free, shots=shots, shift=shift)
        heaps["late", shift] = _board_heap(interp, free, late_image, shots, shift=shift)
        # Each run of the board's loop counts an empty window before its own (the loop
        # entered and left at once), which is taken away; the resume run counts a load of
        # nothing first.
        runs["tasks", shift] = ["tasks", sizes["ticks"]]
        runs["calling", shift] = ["calling", sizes["ticks"]]
        runs["early", shift] = ["taskshots", shots]
        runs["late", shift] = ["taskshots", shots, late_image]
    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        futures = {k: pool.submit(callgrind, valgrind, v, workdir, heaps[k], interp, True,
                                  k[1] if isinstance(k, tuple) else 0)
                   for k, v in runs.items()}
        got = {}
        failed = {}  # a shot run that fails (the heap the board leaves): said, not hidden
        for k, f in futures.items():
            try:
                got[k] = f.result()
            except Unavailable as exc:
                if not isinstance(k, tuple) or k[0] not in ("early", "late"):
                    raise
                failed[k[0]] = str(exc)
    costs = clock_costs(got["clock"][0], sizes["clock"])

    def board(name):
        """A run's window less its empty window, each less what the clock's stand-ins
        added to it."""
        (empty, window), said = got[name]
        if said.get("errors"):
            raise Unavailable("the firmware's task raised %s times in the %s run"
                              % (said["errors"], name))

        def own(counted, prefix):
            calls = [said[prefix + key] for key in STAND_IN_CALLS]
            return counted - sum(c * k for c, k in zip(calls, costs, strict=True))

        return own(window, "") - own(empty, "zero_"), said

    ticks_at = {shift: board(("tasks", shift))[0] / sizes["ticks"] for shift in shifts}
    tick = sum(ticks_at.values()) / len(shifts)
    # a call always playing
    calling = sum(board(("calling", shift))[0] for shift in shifts) / sizes["ticks"] / len(
        shifts)
    per_shot = {}
    spread = {"tick": [round(min(ticks_at.values())), round(max(ticks_at.values()))]}
    for name in ("early", "late"):
        counts = []
        for shift in shifts:
            try:
                if name in failed:
                    raise Unavailable(failed[name])
                total, said = board((name, shift))
                if said["shots"] != shots:
                    raise Unavailable("the %s run scored %s of %d shots"
                                      % (name, said["shots"], shots))
            except Unavailable as exc:
                failed[name] = str(exc)[-300:]
                break
            # the idle ticks taken away are those of the same numbering
            counts.append((total - said["board_ms"] / TICK_MS * ticks_at[shift]) / shots)
        else:
            # the mean over the numberings; the least and the most beside it
            per_shot[name] = sum(counts) / len(counts)
            spread[name] = [round(min(counts)), round(max(counts))]
    # "at any point of a game": the figure is the costlier of the two, or none when one of
    # them could not be played in the heap the board leaves (the notes say why)
    shot = None if failed else max(per_shot.values())
    nothing, loaded = got["resume"][0]
    resume = loaded - nothing
    read_back = device(["resume", 1, game_dir], heapsize=RESUME_HEAP, interp=interp)["shots"]
    out = {"tick_instr": round(tick),
           "esp32_tick_us_est": round(esp32_us(tick, interp), 1),
           "esp32_tick_calling_us_est": round(esp32_us(calling, interp), 1),
           "resume_instr": resume,
           "resume_ms_esp32_est": round(esp32_us(resume, interp) / 1000, 1),
           "clock_stand_in_instr": [round(c) for c in costs],
           "counted_on_bits": interp.bits}
    for name, count in per_shot.items():
        out["shot_%s_instr" % name] = round(count)
    out["shot_spread_instr"] = {"name_shifts": list(shifts), **spread}
    out["notes"] = {}
    if shot is not None:
        out["shot_instr"] = round(shot)
        out["esp32_shot_ms_est"] = round(esp32_us(shot, interp) / 1000, 2)
    else:
        out["notes"]["shot_instr"] = "; ".join("the %s run failed: %s" % (name, why)
                                               for name, why in sorted(failed.items()))
    if read_back != sizes["game"]:  # a load that gave up early measures nothing
        del out["resume_instr"], out["resume_ms_esp32_est"]
        out["notes"]["resume_ms_esp32_est"] = ("the journal read back %s of %d shots"
                                               % (read_back, sizes["game"]))
    if interp.note:
        out.setdefault("notes", {})["instructions"] = interp.note
    return out


# -- the board's loop: select.poll against an asyncio task (docs/performance.md) ------------------

LOOP_MODULE = "tools.sim.board.loop_cost_device"


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


# -- sealing a frame for the network (boardlib/framesign.py) --------------------------------------

SEAL_MODULE = "tools.sim.board.seal_bench_device"


def seal_figures(sizes, install, workdir):
    """What the network link adds to each frame it publishes: instructions to seal the
    longest frame and a heartbeat (callgrind, counted windows less an empty one), bytes
    allocated, and the bytes it adds on the wire (docs/network.md, "Frames proven")."""
    wires = os.path.join(workdir, "seal.frames")  # the frames made once, counted after
    with tempfile.TemporaryDirectory(prefix="bench-") as scratch:
        proc = subprocess.run(
            upy.command(["-m", SEAL_MODULE, "sizes", str(sizes["seals"]), wires], COST_HEAP),
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
    # one run, four windows: the state sealed 0 and n times, then the heartbeat
    windows, _ = callgrind_windows(valgrind, SEAL_MODULE, ["count", n, wires], workdir,
                                   COST_HEAP)
    if len(windows) != 4:
        raise Unavailable("%s count: %d counted windows, not 4" % (SEAL_MODULE, len(windows)))
    state = (windows[1] - windows[0]) / n
    heartbeat = (windows[3] - windows[2]) / n
    out.update(seal_state_instr=round(state), seal_heartbeat_instr=round(heartbeat),
               esp32_seal_us_est=round(esp32_us(state), 1))
    return out


# -- allocation, wear, frames, resume -------------------------------------------------------------

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
    """Resuming the game `game_figures` left on the flash image (best of a few loads); a
    bench asked for this part alone (`--only resume`) plays that game first."""
    state = os.path.join(workdir, "wear")
    if not os.path.isdir(state):
        game_figures(sizes, workdir)
    loads = device(["resume", sizes["resume_loads"], state], heapsize=RESUME_HEAP)
    if loads["shots"] != sizes["game"]:
        raise Unavailable("resume read back %s shots" % loads["shots"])
    return {"resume_ms_upy": round(loads["best_us"] / 1000, 2)}


def firmware_size(workdir, march="xtensawin"):
    """firmware_mpy_bytes and the modules counted apart (docs/performance.md)."""
    def size(name, modules):
        return compile_tree((), os.path.join(workdir, march + "-" + name), march, only=modules)

    drivers = max(size("display%d" % i, (rel,)) for i, rel in enumerate(DISPLAY_DRIVERS))
    rules = max(size("rules%d" % i, (rel,)) for i, rel in enumerate(RULES_MODULES))
    return {"firmware_mpy_bytes": drivers + rules + compile_tree(
                DEVICE_PACKAGES, os.path.join(workdir, march), march),
            "buzzer_mpy_bytes": size("buzzer", BUZZER_MODULES),
            "net_mpy_bytes": size("net", NET_MODULES),
            "check_mpy_bytes": size("check", CHECK_MODULES),
            "menu_mpy_bytes": size("menu", MENU_MODULES),
            "boot_mpy_bytes": size("boot", BOOT_MODULES),
            "load_mpy_bytes": size("load", LOAD_MODULES)}
