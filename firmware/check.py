"""Wiring check for builders: what the board reads, and every segment of the display.

    check = WiringCheck(board, now_ms, hold_ms=800)   # board: firmware.board.Board
    check.poll(now_ms)      # False once the builder has left (undo held, then let go)
    check.draw(buf, now_ms) # the 8 cells to show
    check.seen              # standing mask | line levels << 8 | buttons down << 16


It starts with the segment sweep: one segment of one digit at a time, a to g and the dot,
digit by digit from the left, then every segment at once, so a dead segment, a swapped
module or a bad line is seen at a glance. Then the display shows the spots as the firmware
reads them: the spot's number while it reports a pin standing, `_` while it reports none,
and a dot on the digit while its line reads high (1). With every pin standing a correct
board shows `12345 CH` (with dots only where the sensors are wired active-high); all `_`
means `standing_level` is the wrong way round, and a number that changes when another spot
is knocked over means swapped wires. A button held down shows its name (`bt  CAro`,
`bt  FouL`, `bt    oK`, `bt  undo`). Holding `ok` runs the sweep again; holding `undo`
leaves once it is let go. Nothing seen here is scored: the game waits.

The reading goes through `Board.read_spots()` / `read_buttons()`, the code the game uses.
Kept small, as every byte of it is on the board: `make check` (tools.check) sends the
loop that runs it from the REPL and words what it reads on the host.
"""

from boardlib import layout

try:
    from time import ticks_add, ticks_diff
except ImportError:  # CPython: boardlib.ticks wraps as the ESP32 does
    from boardlib.ticks import ticks_add, ticks_diff

try:
    from micropython import const
except ImportError:  # CPython: the value itself
    const = lambda value: value


STEP_MS = const(120)  # one segment of one digit
STEPS = const(72)  # 64 single segments, then 8 steps (about 1 s) of everything at once
_NAMES = const(("bt  CAro", "bt  FouL", "bt    oK", "bt  undo"))


class WiringCheck:
    def __init__(self, board, now_ms, hold_ms=800):
        self.board = board
        self.hold_ms = hold_ms
        self.sweep_from = now_ms  # None once the sweep is over
        self.seen = 0
        self.down_since = now_ms  # when the buttons down last changed
        self.leaving = False

    def poll(self, now_ms):
        board = self.board
        levels = 0
        spots = board.spots
        for i in range(len(spots)):
            levels |= spots[i].value() << i
        pressed = board.read_buttons()
        if pressed != self.seen >> 16:
            self.down_since = now_ms
        self.seen = board.read_spots() | levels << 8 | pressed << 16
        if pressed and ticks_diff(now_ms, self.down_since) >= self.hold_ms:
            if pressed == 8:  # undo alone
                self.leaving = True
            elif pressed == 4:  # ok alone: the sweep again, from when it is let go
                self.sweep_from = now_ms
        return pressed or not self.leaving

    def run(self, app, now_ms):
        """One poll of the application while the check runs (App.poll_inputs); once the
        builder has left, the game goes on with nothing the pins did counted as a shot."""
        if self.poll(now_ms):
            return
        app.check = None
        screens = app.screens
        screens.draw_with(None)
        screens.clear()
        app.sensors.reset()
        app.buttons.reset()
        app._down = -1
        # nothing is due until a pin changes (a far time: ticks 2**28 ms away)
        app._spots_at = app._buttons_at = app._settle_at = ticks_add(now_ms, 1 << 28)
        app.assembler.reset()

    def draw(self, buf, now_ms):
        seen = self.seen
        pressed = seen >> 16
        if pressed:
            i = 0
            while not pressed >> i & 1:
                i += 1
            layout.text(buf, _NAMES[i])
            return
        if self.sweep_from is not None:
            step = ticks_diff(now_ms, self.sweep_from) // STEP_MS
            if 0 <= step < STEPS:
                for i in range(8):
                    buf[i] = 0xFF if step >= 64 else (1 << (step & 7) if i == step >> 3 else 0)
                return
            self.sweep_from = None
        text = ""
        count = len(self.board.spots)
        for i in range(count):
            text += str(i + 1) if seen >> i & 1 else "_"
        layout.text(buf, text + " CH")
        for i in range(count):
            if seen >> (8 + i) & 1:
                buf[i] |= 0x80

