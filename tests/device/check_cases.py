"""The builders' wiring check (tests/test_check.py), through the real firmware on the
simulated board: spots and buttons are driven on the fake pins, and what the display shows
is decoded from the emulated TM1637 chips.

MicroPython only (the simulated board's flash is littlefs). The board is
`firmware.board.Board` over the fake pins, so the real pin-reading code with its
`standing_level` runs: a board wired active-low but configured active-high shows it.
"""

from device.support import play
from firmware.app import App
from firmware.check import STEP_MS, STEPS
from firmware.run import tick
from tools.sim.board.board import FLASH_MOUNT, build

CAROM, FOUL, OK, UNDO = 0, 1, 2, 3
SWEEP_MS = STEP_MS * STEPS


def board(state, standing_level=0, wired_level=0):
    """The real Board over the simulator's fake pins. `wired_level` is what a sensor with a
    pin on it puts on its line; `standing_level` what the configuration says it is."""
    import os

    try:
        os.umount(FLASH_MOUNT)
    except OSError:
        pass
    sim = build(state_dir=state)
    b = sim.board
    b.standing_level = standing_level  # what the configuration says, whatever is wired
    b.link = None
    sim.wired_level = wired_level
    for pin in sim.spot_pins:
        pin.value(wired_level)
    app = App(b)
    app.boot(0)
    return sim, app


def spot(sim, n, standing):
    sim.spot_pins[n - 1].value(sim.wired_level if standing else 1 - sim.wired_level)


def button(sim, i, down):
    sim.button_pins[i].value(0 if down else 1)


def push(sim, app, t, i, ms=100):
    button(sim, i, True)
    t = play(app, t, t + ms)
    button(sim, i, False)
    return play(app, t, t + 200)


def open_check(sim, app, t):
    """Through the setup menu into the check; returns (t, the item, its "yES")."""
    t = push(sim, app, t, OK, 1000)  # hold ok: the setup menu
    for _ in range(5):  # rules, d1, d2, (sets skipped) first
        if sim.visible().startswith("tE5t"):  # "tESt": S and 5 share a shape
            break
        t = push(sim, app, t, OK)
    item = sim.visible()
    t = push(sim, app, t, CAROM)  # "tESt yES"
    confirm = sim.visible()
    button(sim, OK, True)
    t = play(app, t, t + 100)
    button(sim, OK, False)
    while app.check is None and t < 60000:  # the press counts on its release
        tick(app, t)
        t += 5
    return t, item, confirm


def in_check(state, crossed=(), **levels):
    """A booted board in the wiring check, its opening sweep over: (sim, app, t).
    `crossed`: two spots whose wires are swapped; `levels` as for board()."""
    sim, app = board(state, **levels)
    if crossed:
        pins = sim.board.spots = list(sim.spot_pins)
        a, b = crossed[0] - 1, crossed[1] - 1
        pins[a], pins[b] = pins[b], pins[a]
        sim.board.bind_pins()
    t = play(app, 0, 3000)
    t, _, _ = open_check(sim, app, t)
    return sim, app, play(app, t, t + SWEEP_MS + 100)


def sweep(state):
    sim, app = board(state)
    t = play(app, 0, 3000)
    t, item, confirm = open_check(sim, app, t)
    start = app.check.sweep_from
    frames = []
    end = start + SWEEP_MS + 400
    while t <= end:
        tick(app, t)
        if (t - start) % STEP_MS == 60:  # the middle of each step
            frames.append(sim.segments().hex())
        t += 5
    return {"item": item, "confirm": confirm, "frames": frames, "after": sim.visible(),
            "score": app.game.state()["score"]}


def changed(sim, app, t, *changes, ms=100):
    """Each (spot or button, number, level) of `changes` set, then `ms` of play:
    (t, what the display shows)."""
    for set_level, number, level in changes:
        set_level(sim, number, level)
    t = play(app, t, t + ms)
    return t, sim.visible()


def live_spots_and_leaving(state):
    sim, app, t = in_check(state)
    seen = [sim.visible()]
    for changes in (((spot, 3, False),), ((spot, 5, False),),
                    ((spot, 3, True), (spot, 5, True)), ((button, FOUL, True),)):
        t, shown = changed(sim, app, t, *changes)
        seen.append(shown)
    t, _ = changed(sim, app, t, (button, FOUL, False))
    # hold undo: leave the check, once it is let go
    t, _ = changed(sim, app, t, (button, UNDO, True), ms=1000)
    held = app.check is not None
    t, _ = changed(sim, app, t, (button, UNDO, False))
    still_checking = app.check is not None
    t, shown = changed(sim, app, t, ms=3000)
    seen.append(shown)
    return {"seen": seen, "held": held, "in_check": still_checking,
            "score": app.game.state()["score"], "shots": app.game.state()["shots"]}


def wrong_polarity(state):
    sim, app, t = in_check(state, standing_level=1, wired_level=0)
    # knock a pin over: its spot "comes back"
    return [sim.visible(), changed(sim, app, t, (spot, 2, False))[1]]


def swapped_spots(state):
    sim, app, t = in_check(state, crossed=(2, 4))
    return changed(sim, app, t, (spot, 2, False))[1]  # the pin on spot 2 falls ...


def buttons(state):
    sim, app, t = in_check(state)
    names = []
    for i in (CAROM, FOUL, OK, UNDO):
        t, shown = changed(sim, app, t, (button, i, True))
        names.append(shown)
        t, shown = changed(sim, app, t, (button, i, False))
    names.append(shown)
    t, _ = changed(sim, app, t, (button, OK, True), ms=1000)
    changed(sim, app, t, (button, OK, False), ms=200)
    lit = sum(bin(b).count("1") for b in sim.segments())
    return {"names": names, "lit": lit}


def repl_board(state, held=()):
    """For `make check` against a REPL (tests/test_make_check.py): the simulated board where
    the ESP32 builds its own in `firmware.hw.build()`, with the pin on spot 3 knocked over
    and the buttons `held` (indexes) down. Returns the SimBoard."""
    import sys

    import firmware

    sim, _ = board(state)

    class SimHw:  # firmware.hw needs the ESP32's machine module
        build = staticmethod(lambda: sim.board)

    sys.modules["firmware.hw"] = firmware.hw = SimHw
    spot(sim, 3, False)
    for i in held:
        button(sim, i, True)
    return sim
