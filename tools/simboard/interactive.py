"""Interactive simulated table: the firmware's own loop in real time.

    run_interactive(sim, app)

Reads one command a line on stdin (written by `tools.sim` from key presses):
`spot N` knocks the pin on spot N over, or stands it up again; `press NAME` and
`hold NAME` work a button (carom, foul, ok, undo); `quit` stops. Writes `D <hex>` with
the 8 segment bytes whenever the display changes, `S <json>` when the board state does,
and `V <json>` when what the terminal view draws beside the digits does (see `view`).
"""

import json
import select
import sys
import time

from boardlib.shot import BUTTON_NAMES, SECOND_FOUL
from firmware.menu import ITEMS
from firmware.run import Runner

BUTTONS = BUTTON_NAMES
PRESS_MS = 120
FRONT_MS = 10  # the terminal's keys and pictures are looked at this often


class Keys:
    def __init__(self, sim, hold_ms):
        self.sim = sim
        self.hold_ms = hold_ms
        self.standing = 0x1F
        self.release_at = [None] * 4
        self.poller = select.poll()
        self.poller.register(sys.stdin, select.POLLIN)
        self.quit = False

    def command(self, line, now):
        words = line.split()
        if not words:
            return
        if words[0] == "quit":
            self.quit = True
        elif words[0] == "spot" and len(words) == 2 and words[1] in "12345":
            bit = 1 << (int(words[1]) - 1)
            self.standing ^= bit
            self.sim.set_spot(int(words[1]), bool(self.standing & bit))
        elif words[0] in ("press", "hold") and len(words) == 2 and words[1] in BUTTONS:
            i = BUTTONS.index(words[1])
            self.sim.set_button(i, True)
            length = PRESS_MS if words[0] == "press" else self.hold_ms + 200
            self.release_at[i] = time.ticks_add(now, length)

    def poll(self, now):
        while self.poller.poll(0):
            line = sys.stdin.readline()
            if not line:
                self.quit = True
                break
            self.command(line, now)
        for i in range(4):
            at = self.release_at[i]
            if at is not None and time.ticks_diff(now, at) >= 0:
                self.sim.set_button(i, False)
                self.release_at[i] = None


def view(sim, app):
    """What the board sees, for the terminal view: the spots reporting a pin standing (a
    mask, read by the firmware's own Board.read_spots), the shot in progress (spots counted,
    carom 0/1/2, foul codes), the setup menu item, and whether the wiring check runs."""
    asm = app.assembler
    rules = app.game.state()["rules"]
    # The marks as the firmware will score them (App._scored_shot): held fouls are the
    # rules' second code. Read from the assembler's counters: the board has no use for a
    # list of them, so it does not keep one.
    fouls = [SECOND_FOUL[rules]] * asm._holds + ["foul"] * asm._presses
    menu = app.menu
    return {
        "standing": sim.board.read_spots(), "pins": asm.live_pins(), "carom": asm.live_carom(),
        "fouls": fouls, "rules": rules,
        "menu": ITEMS[menu.item] if menu is not None else None,
        "check": app.check is not None,
    }


def _front(sim, app, keys, runner):
    last_segments = None
    last_state = None
    last_view = None
    while not keys.quit:
        runner.once(FRONT_MS)  # the board's round, waiting at most FRONT_MS
        now = time.ticks_ms()
        keys.poll(now)
        segments = sim.segments()
        if segments != last_segments:
            last_segments = segments
            print("D", "".join("%02x" % b for b in segments))
        if app.changes != last_state:
            last_state = app.changes
            print("S", app.game.state_json())
        seen = view(sim, app)
        if seen != last_view:
            last_view = seen
            print("V", json.dumps(seen))


def run_interactive(sim, app):
    _front(sim, app, Keys(sim, app.config["hold_ms"]), Runner(app))
