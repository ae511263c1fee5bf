"""One push button as the tests drive it: the board's `boardlib.inputs.Buttons` of one.

    button = Button(debounce_ms=20, hold_ms=800)
    kind = button.update(pressed, now_ms)   # NONE, PRESS (on release) or HOLD (once)
    button.left, button.timer(now_ms)       # when the next result can come, -1 / None

The board handles its four buttons together, as masks (firmware.app); this view gives the
same state machine one button's results, as the input scenarios and the shot assembler's
tests read them. Runs on CPython and on the MicroPython unix port.
"""

from boardlib.inputs import HOLD, NONE, PRESS, Buttons

try:
    from time import ticks_diff
except ImportError:  # CPython
    from boardlib.ticks import ticks_diff


FAR_MS = 1 << 28  # Buttons.left when no result can come (boardlib.inputs' _FAR_MS)


class Button(Buttons):
    def __init__(self, debounce_ms=20, hold_ms=800):
        Buttons.__init__(self, 1, debounce_ms, hold_ms)
        self.idle = True  # released and settled after the last update
        self.left = -1  # the ms until a result can come with the level as it is, -1: none

    def update(self, pressed, now_ms):
        Buttons.update(self, 1 if pressed else 0, now_ms)
        self.idle = not (self._raw | self._pressed)
        if self.left == FAR_MS:
            self.left = -1
        return HOLD if self.holds else (PRESS if self.presses else NONE)

    def timer(self, now_ms):
        """The ms from now_ms until update() would give a result with the level as it is
        (a release's debounce running out, or the hold), or None: what `left` says after
        an update, worked out from the state alone."""
        return buttons_timer(self, now_ms, 0)


def buttons_timer(buttons, now_ms, count=4):
    """The soonest of timer() over the first `count` buttons of a Buttons (all: 0 is one)."""
    soonest = None
    for i in range(count or 1):
        low = 1 << i
        if (buttons._raw ^ buttons._pressed) & low:
            if buttons._raw & low:  # a press in its debounce: the hold, from the contact
                left = buttons._hold_after - ticks_diff(now_ms, buttons._raw_since[i])
            else:
                left = buttons.debounce_ms - ticks_diff(now_ms, buttons._raw_since[i])
        elif buttons._raw & ~buttons._held & low:
            left = buttons.hold_ms - ticks_diff(now_ms, buttons._pressed_since[i])
        else:
            continue
        if soonest is None or left < soonest:
            soonest = left
    return soonest
