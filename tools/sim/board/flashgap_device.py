"""How long the board's inputs go unread while its flash erases and programs: device side.

    micropython tools/sim/board/flashgap_device.py SHOTS [typical|max]

Plays SHOTS shots (pins fall, are stood up, `ok`; a carom now and then) through the
simulator's timeline mode (tools/sim/board/run.py, `run_timeline`) on a board whose flash
takes the time a real chip takes (tools/sim/board/flash.py: TYPICAL or MAXIMUM). Nothing of
the firmware runs while the flash erases or programs, so a step that erases (a piece of a
journal compaction, littlefs compacting a directory) holds the next poll back by that long. Every
step is timed in board time; printed, one `key value` a line:

    gap_ms        the longest time from one input poll to the next (STEP_MS + the flash's
                  time in the step between them), in ms of board time
    gap_erases    the sectors erased in that step
    compactions   the journal compactions in the game (the snapshot generations written)
    stalls        the steps in which the flash took any time
    shots         the shots the game scored

tools.bench runs it (`flash_poll_gap_max_ms`, docs/performance.md); tests call `measure`.
"""

import sys

from firmware.app import App
from tools.sim.board import run as sim_run
from tools.sim.board import timeline
from tools.sim.board.board import build
from tools.sim.board.flash import TIMINGS
from tools.sim.board.shots import LONG_SETTINGS, long_game

SETTINGS = LONG_SETTINGS


def shots_timeline(shots, seed=11):
    """`shots` scored shots, pseudo-random but the same every run: pins fall, are stood
    up, `ok` ends the shot; every other shot or so a carom (tools.sim.board.shots)."""
    return long_game(shots, seed, up_ms=300, carom_ms=500, ok_ms=800, every_ms=1500)


def measure(shots, timing="typical", sim=None):
    """Play the game; returns {"gap_ms", "gap_erases", "compactions", "stalls", "shots",
    "polls": [(board ms, flash us, erases) per step]} (polls only with few shots)."""
    if sim is None:
        sim = build(display="tm1637", flash_timing=TIMINGS[timing])
    app = App(sim.board)
    app.load()
    app.new_game(SETTINGS, 0)
    app.start(0)
    flash = sim.flash
    first_generation = app.store.generation
    keep = shots <= 20
    out = {"gap_ms": 0, "gap_erases": 0, "stalls": 0, "polls": []}
    last = {"t": None, "us": 0, "erases": 0}
    firmware_tick = sim_run.tick

    def timed_tick(app, now_ms):
        if last["t"] is not None and last["us"]:
            out["stalls"] += 1
            gap = sim_run.STEP_MS + last["us"] / 1000
            if gap > out["gap_ms"]:
                out["gap_ms"] = gap
                out["gap_erases"] = last["erases"]
        us, erases = flash.busy_us, flash.erases
        firmware_tick(app, now_ms)
        last["t"] = now_ms
        last["us"] = flash.busy_us - us
        last["erases"] = flash.erases - erases
        if keep:
            out["polls"].append((now_ms, last["us"], last["erases"]))

    levels = timeline.Levels(timeline.parse(shots_timeline(shots)))
    sim_run.tick = timed_tick  # run_timeline's steps, and its idle strides, come here
    try:
        sim_run.run_timeline(sim, app, levels, 0)
    finally:
        sim_run.tick = firmware_tick
    out["gap_ms"] = round(out["gap_ms"], 1)
    out["compactions"] = app.store.generation - first_generation
    out["shots"] = app.game.shots
    return out


def main(argv):
    got = measure(int(argv[0]), argv[1] if len(argv) > 1 else "typical")
    for key in ("gap_ms", "gap_erases", "compactions", "stalls", "shots"):
        print(key, got[key])


if __name__ == "__main__":
    main(sys.argv[1:])
