"""The scoreboard's display, whichever modules the board has, behind one face.

    from boardlib.display import Display
    display = Display.tm1637(TM1637(clk1, dio1), TM1637(clk2, dio2))   # one module a player
    display = Display.max7219(MAX7219(spi, cs))                        # or one 8-digit module
    display = Display.none()                                           # or none at all
    buf = bytearray(8)
    layout.scores(buf, 25, 130, 2)
    display.show(buf)          # writes the modules only when the screen changed
    display.brightness(5)      # 0-7 on both kinds (the MAX7219 gets 2 * level + 1)

Turn marker on colon-only modules: the common TM1637 "clock" modules wire no decimal
points, only the colon (bit 7 of their second cell). Built with
`Display.tm1637(left, right, colon_marker=True)`, the display moves the turn marker (the
dot of cell 0 or cell 7, see boardlib.layout) to the colon of that player's module, so
"  25 130" with player 1 at the table reads "  :25 130" instead of losing the marker.

`show` keeps the last frame it wrote and skips an identical one, so the application may
call it on every poll. `refresh()` makes the next `show` write again (after a module
lost power, say). A bus error (OSError from a real SPI) is caught: show returns False
and the frame is written again next time; the device keeps running. Nothing is
allocated per frame: the halves written to the TM1637 modules are memoryviews made once.
"""

# The builtins the event path calls, as this module's globals: MicroPython looks a name
# up in the module's globals first (to the table's first empty slot), then in the
# builtins' table, each time; a global is found at once (docs/performance.md).
from builtins import len

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


_CELLS = const(8)


class Display:
    def __init__(self, left=None, right=None, chip=None, colon_marker=False):
        # Use the constructors Display.tm1637 / Display.max7219.
        self._left = left
        self._right = right
        self._chip = chip
        self._shown = bytearray(_CELLS)
        # What goes to the modules: the frame itself, or a copy with the marker moved.
        self._out = bytearray(_CELLS) if colon_marker else self._shown
        view = memoryview(self._out)
        self._left_cells = view[0:4]
        self._right_cells = view[4:8]
        self.pending = True  # the last frame has not reached the modules (a bus error)
        self._level = 7

    @classmethod
    def tm1637(cls, left, right, colon_marker=False):
        """Two 4-digit TM1637 modules: left shows cells 0-3 (player 1), right 4-7."""
        return cls(left=left, right=right, colon_marker=colon_marker)

    @classmethod
    def max7219(cls, chip):
        """One 8-digit MAX7219 module showing cells 0-7."""
        return cls(chip=chip)

    @classmethod
    def none(cls):
        """No modules (a board without a display): frames are kept, nothing is written."""
        return cls()

    def show(self, buf8):
        """Show 8 segment bytes; returns True if the modules were written."""
        if len(buf8) != _CELLS:
            raise ValueError("a screen is 8 cells, got %d" % len(buf8))
        shown = self._shown
        if buf8 == shown and not self.pending:  # (compared in C)
            return False
        # Which halves changed: a TM1637 pair rewrites only the module that did.
        left = (self.pending or shown[0] != buf8[0] or shown[1] != buf8[1]
                or shown[2] != buf8[2] or shown[3] != buf8[3])
        right = (self.pending or shown[4] != buf8[4] or shown[5] != buf8[5]
                 or shown[6] != buf8[6] or shown[7] != buf8[7])
        shown[:] = buf8
        self.pending = True
        if self._out is not shown:
            self._move_marker()
        return self._write(left | right << 1)

    def _move_marker(self):
        out = self._out
        out[:] = self._shown
        _move_dot(out, 0, 1)
        _move_dot(out, 7, 5)

    def _write(self, halves):
        """halves: bit 0 the left module (cells 0-3), bit 1 the right one (4-7)."""
        # (apart from show(): a try block takes three words of a frame that must stay
        # within 11, or it comes from the heap at every call)
        try:
            if self._chip is not None:
                self._chip.write(self._out)
            elif self._left is not None:
                if halves & 1:
                    self._left.write(self._left_cells)
                if halves & 2:
                    self._right.write(self._right_cells)
        except OSError:
            return False
        self.pending = False
        return True

    def refresh(self):
        """Write the next frame even if it is the same as the last one: every cell of it
        (a MAX7219 otherwise sends only the digits that changed)."""
        self.pending = True
        if self._chip is not None:
            forget = getattr(self._chip, "forget", None)
            if forget is not None:
                forget()

    def brightness(self, level=None):
        """Brightness 0-7 on both module kinds; with no argument return it."""
        if level is None:
            return self._level
        if not isinstance(level, int) or level < 0 or level > 7:
            raise ValueError("brightness must be 0-7, not %r" % (level,))
        self._level = level
        if self._chip is not None:
            self._chip.brightness(2 * level + 1)
        elif self._left is not None:
            self._left.brightness(level)
            self._right.brightness(level)


def _move_dot(cells, source, colon):
    if cells[source] & 0x80:
        cells[source] &= 0x7F
        cells[colon] |= 0x80
