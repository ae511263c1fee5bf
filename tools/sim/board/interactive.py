"""Interactive simulated table: the firmware's own loop in real time.

    run_interactive(sim, app)

Reads one command a line on stdin (written by `tools.sim` from key presses): `spot N`
knocks the pin on spot N over, or stands it up again; `press NAME` and `hold NAME` work a
button (carom, foul, ok, undo); `quit` stops. Writes `S <json>` when the board state
changes, and `F <hex> <json>` when the picture does: the 8 segment bytes decoded from the
emulated display chips and, in the same line, what the terminal draws beside and under them
(`view`). A frame is taken right after the firmware has written the display (and after each
round of the board's loop, for the spots and the shot in progress), so the words under the
digits are those of the very picture the digits show: the setup menu item is the one the
menu drew (`Menu.shown`), never one it is about to draw. On `quit` it writes `Q <json>`:
whether the game on the display is the game on the board's flash, read back from the image
as a board would read it at power-up.
"""

import json
import select
import sys
import time

from boardlib.shot import BUTTON_NAMES, SECOND_FOUL
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
    carom 0/1/2, foul codes), the setup menu item on the glass (the one Menu.draw drew
    last), and whether the wiring check runs."""
    asm = app.assembler
    rules = app.game.state()["rules"]
    # The marks as the firmware will score them (App._scored_shot): held fouls are the
    # rules' second code. Read from the assembler's counters: the board has no use for a
    # list of them, so it does not keep one.
    fouls = [SECOND_FOUL[rules]] * asm._holds + ["foul"] * asm._presses
    menu = app.menu
    return {
        "standing": sim.board.read_spots(), "pins": asm._counted, "carom": asm._carom,
        "fouls": fouls, "rules": rules,
        "menu": menu.shown if menu is not None else None,
        "check": app.check is not None,
        "call": _call(app.buzzer),
    }


CALL_SHOWN_MS = 1500  # a call's name stays under the digits this long after it ends


def _call(buzzer):
    """The name of the call the buzzer plays (or ended less than CALL_SHOWN_MS ago)."""
    if buzzer is None or not buzzer.call:
        return None
    import time

    from boardlib.calls import NAMES

    if buzzer.busy or time.ticks_diff(time.ticks_ms(), buzzer.due) < CALL_SHOWN_MS:
        return NAMES[buzzer.call]
    return None


def frame(sim, app):
    """The `F` line's text: the segments on the glass and the view, taken together."""
    segments = "".join("%02x" % b for b in sim.segments())
    return "F %s %s" % (segments, json.dumps(view(sim, app)))


class Frames:
    """Writes a frame after each run of the display task, when the picture changed."""

    def __init__(self, sim, app):
        self.sim = sim
        self.app = app
        self.last = None
        self.refresh = app.refresh_display

    def refresh_and_report(self, now_ms):
        self.refresh(now_ms)
        self.report()

    def report(self):
        line = frame(self.sim, self.app)
        if line != self.last:
            self.last = line
            _say(line)


def _say(line):
    # One write a line: the reader never sees half a frame followed by another line.
    sys.stdout.write(line + "\n")


def _front(sim, app, keys, runner, frames):
    last_state = None
    while not keys.quit:
        runner.once(FRONT_MS)  # the board's round, waiting at most FRONT_MS
        frames.report()  # the spots and the shot in progress change between pictures
        keys.poll(time.ticks_ms())
        if app.changes != last_state:
            last_state = app.changes
            _say("S " + app.game.state_json())


def saved(sim, app):
    """What `Q` says: {"saved": the game the display shows is the game read back from the
    flash image (unmounted first, then mounted again from the file, as at power-up);
    "shot": a shot was in progress (a board loses it too when switched off); "image":
    the image file, or None when the flash was in memory}."""
    import os

    from boardlib import journal_load
    from boardlib.journal import GameNumbering, GameStore
    from tools.sim.board.board import FLASH_MOUNT
    from tools.sim.board.flash import FileBlockDev, mount

    asm = app.assembler
    shot = bool(asm.busy or asm._counted or asm._carom or asm._presses or asm._holds)
    path = getattr(sim.flash, "path", None)
    report = {"saved": False, "shot": shot, "image": path}
    if path is None:
        return report
    expected = app.game.state_json()
    os.umount(FLASH_MOUNT)
    sim.flash.close()
    again = FileBlockDev(path)
    try:
        mount(again, FLASH_MOUNT, format_blank=False)
        game, _ = journal_load.load(GameStore(app.board.data_dir, codec=GameNumbering()))
        report["saved"] = game is not None and game.state_json() == expected
        os.umount(FLASH_MOUNT)
    except OSError:
        pass
    again.close()
    return report


def run_interactive(sim, app):
    keys = Keys(sim, app.board.config["hold_ms"])
    frames = Frames(sim, app)
    app.refresh_display = frames.refresh_and_report  # the display reports each new picture
    _front(sim, app, keys, Runner(app), frames)
    _say("Q " + json.dumps(saved(sim, app)))
