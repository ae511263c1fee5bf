"""Input conditioning for the pin spots and the buttons, as plain state transitions.

    from boardlib.inputs import Button, SpotSensors, PRESS, HOLD

    carom = Button(debounce_ms=20, hold_ms=800)
    spots = SpotSensors(count=5, glitch_ms=40)
    # every poll (about 5 ms), with the levels already turned into "pressed" / "standing":
    kind = carom.update(pressed, now_ms)       # NONE, PRESS (on release) or HOLD (once)
    down = spots.update(standing_mask, now_ms)  # bit i = spot i+1 has lost its pin
    if spots.fault:
        code = spots.fault_code(3)              # FAULT_STUCK or FAULT_FLAP for spot 3
    # pass spots.flapping (not .fault) to ShotAssembler.spots(): a stuck spot still scores

Nothing here reads a pin or a clock: the caller passes levels and `now_ms` (a ticks_ms
value), so the same code runs on the board, in the simulator and in tests. The poll path
allocates nothing: per-spot state lives in lists and a bytearray made once.
"""

from boardlib.ticks import ticks_add, ticks_diff

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


NONE = const(0)
PRESS = const(1)
HOLD = const(2)

# Numbered like the first digit of the display's error codes (1n stuck, 2n flaps).
FAULT_NONE = const(0)
FAULT_STUCK = const(1)  # no pin reported for minutes: sensor dead or spot left empty
FAULT_FLAP = const(2)  # too many changes in a short time: loose wire or a bad sensor
_FAR_MS = const(1 << 28)  # "no deadline": well within half the ticks period (2**29)


def _check_ms(name, value, low=0):
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ValueError("%s must be a whole number >= %d, not %r" % (name, low, value))
    return value


class Button:
    """One push button: debounce, then a short press or a hold.

    `update(pressed, now_ms)` returns PRESS when a short press is released, HOLD once
    when the button has been down for `hold_ms` (and then no PRESS on release), else NONE.
    A level change counts only after it has been steady for `debounce_ms`.
    """

    def __init__(self, debounce_ms=20, hold_ms=800):
        self.debounce_ms = _check_ms("debounce_ms", debounce_ms)
        self.hold_ms = _check_ms("hold_ms", hold_ms, 1)
        self.reset()

    def reset(self):
        """Forget any press in progress; the button is taken as released."""
        self._raw = 0
        self._raw_since = 0
        self._pressed = 0
        self._pressed_since = 0
        self._held = 0
        self.idle = True
        self.left = -1

    def timer(self, now_ms):
        """The ms from now_ms until update() would act with the level as it is (a
        debounce or the hold running out), or None: only a change of the level can."""
        if self._raw != self._pressed:
            return self.debounce_ms - ticks_diff(now_ms, self._raw_since)
        if self._raw and not self._held:
            return self.hold_ms - ticks_diff(now_ms, self._pressed_since)
        return None

    def update(self, pressed, now_ms):
        """`idle` (a plain attribute, cheap to read) is True after an update that leaves
        the button released and settled: until it is pressed again, update() would
        return NONE and change nothing, so a poll may skip it. `left` is then what
        timer() would say: the ms until update() acts with the level unchanged, or -1."""
        if not pressed and not self._raw and not self._pressed:
            self.idle = True
            self.left = -1
            return NONE  # released and settled: the usual case, kept cheap
        self.idle = False
        self.left = -1
        raw = 1 if pressed else 0
        if raw != self._raw:
            self._raw = raw
            self._raw_since = now_ms
        if raw != self._pressed:
            age = ticks_diff(now_ms, self._raw_since)
            if age < self.debounce_ms:
                self.left = self.debounce_ms - age
                return NONE
            self._pressed = raw
            if raw:
                # A hold is timed from when the contact closed for good, not from when
                # the debounce accepted it.
                self._pressed_since = self._raw_since
            elif self._held:
                self._held = 0
                return NONE
            else:
                return PRESS
        # Only while the contact is closed right now: a release in its debounce time is
        # a short press that must not turn into a hold.
        if raw and self._pressed and not self._held:
            age = ticks_diff(now_ms, self._pressed_since)
            if age >= self.hold_ms:
                self._held = 1
                return HOLD
            self.left = self.hold_ms - age
        return NONE


class SpotSensors:
    """The pin-spot sensors: glitch filter and fault detection for `count` spots.

    `update(standing_mask, now_ms)` takes the raw reports (bit i set = spot i+1 reports a
    pin standing) and returns the conditioned `down` mask: a spot is down once it has
    reported no pin for `glitch_ms` and up again once it has reported a pin for
    `glitch_ms`. The first update is taken as it is (what is down at power-up is simply
    down, not a fall).

    A spot that changes `flap_limit` times within `flap_window_ms` flaps: its bit is set in
    `fault` and in `flapping`, it is never in `down`, and it is released once it has
    reported a standing pin without a break for `flap_window_ms`. A spot that reports no
    pin for `stuck_ms` on end is stuck: its bit is set in `fault` (so the board reports
    it), but it stays in `down`, since a pin that fell and was left lying still fell; it is
    released as soon as it stands again. `fault_code(spot)` says which fault a spot has.
    """

    def __init__(self, count=5, glitch_ms=40, flap_limit=16, flap_window_ms=1000,
                 stuck_ms=180000):
        self.count = _check_ms("count", count, 1)
        self.glitch_ms = _check_ms("glitch_ms", glitch_ms)
        self.flap_limit = _check_ms("flap_limit", flap_limit, 2)
        self.flap_window_ms = _check_ms("flap_window_ms", flap_window_ms, 1)
        self.stuck_ms = _check_ms("stuck_ms", stuck_ms, 1)
        self._all = (1 << count) - 1
        self._raw_since = [0] * count
        self._window_start = [0] * count
        self._changes = [0] * count
        self._codes = bytearray(count)
        self.reset()

    def reset(self):
        """Forget all history: the next update is taken as the starting state."""
        self._primed = False
        self._raw = -1  # no report yet (a report is never negative)
        self._due = 0  # with the same report as the last, nothing changes before then
        self._changed = 0  # the report's bits that changed at this update
        # When update() has something to do with the same report (ticks), or None: the
        # caller's schedule reads it (firmware.app)
        self.next_at = None
        self._standing = 0
        self.down = 0
        self.fault = 0  # spots with any fault: stuck or flapping
        self.flapping = 0  # spots whose reports cannot be trusted: never down
        self._quiet = -1  # the mask of a settled, fault-free, all-standing poll; -1: none
        for i in range(self.count):
            self._codes[i] = FAULT_NONE
            self._changes[i] = 0

    def timer(self, now_ms):
        """The ms from now_ms until update() would act with the same report (a glitch,
        flap or stuck timer running out), or None: only a changed report can."""
        if self._raw == self._quiet or not self._primed:
            return None
        return ticks_diff(self._due, now_ms)

    def fault_code(self, spot):
        """FAULT_NONE, FAULT_STUCK or FAULT_FLAP for spot number `spot` (1 = first)."""
        if not isinstance(spot, int) or not 1 <= spot <= self.count:
            raise ValueError("spot must be 1..%d, not %r" % (self.count, spot))
        return self._codes[spot - 1]

    def update(self, standing_mask, now_ms):
        raw = standing_mask & self._all
        if raw == self._quiet:
            return self.down  # every pin standing and settled: nothing to time
        if raw == self._raw and ticks_diff(self._due, now_ms) > 0:
            return self.down  # the same report, and no filter or fault timer due yet
        return self._update(raw, now_ms)

    def _update(self, raw, now_ms):
        # Apart from update() so that the common case above runs in a frame small enough
        # for the C stack (MicroPython takes big frames from the heap on every call).
        if not self._primed:
            return self._prime(raw, now_ms)
        self._changed = raw ^ self._raw
        self._raw = raw
        due = _FAR_MS  # the soonest a timer below runs out, from now
        # Only the spots where something can happen: a changed report, a glitch timer (the
        # report is not what counts yet), a flap, or no pin (the stuck timer). A standing,
        # settled spot without a fault is left alone.
        todo = (self._changed | (raw ^ self._standing) | self.flapping | ~raw) & self._all
        i = 0
        while todo:  # (kept to a few locals: see update())
            if todo & 1:
                left = self._spot(i, now_ms)
                if left < due:
                    due = left
            todo >>= 1
            i += 1
        self._due = ticks_add(now_ms, due)
        self.down = self._all & ~self._standing & ~self.flapping
        # The next idle poll is one comparison instead of four
        self._quiet = raw if raw == self._all and self._standing == raw and not self.fault else -1
        self.next_at = None if self._quiet == raw else self._due
        return self.down

    def _prime(self, raw, now_ms):
        self._primed = True
        self._raw = raw
        self._standing = raw
        for i in range(self.count):
            self._raw_since[i] = now_ms
            self._window_start[i] = now_ms
        self.down = self._all & ~raw
        self.next_at = now_ms  # the next update times what is down
        return self.down

    def _spot(self, i, now_ms):
        """Spot i's share of an update; returns the ms until its next timer runs out."""
        bit = 1 << i
        raw = self._raw
        if self._changed & bit:
            self._raw_since[i] = now_ms
            self._count_change(i, now_ms)
        age = ticks_diff(now_ms, self._raw_since[i])
        if self._codes[i] == FAULT_FLAP:
            if not raw & bit:
                return _FAR_MS  # a flapping spot with no pin: only a change can help
            if age < self.flap_window_ms:
                return self.flap_window_ms - age
            self._clear_fault(i)
            self._standing |= bit
            return _FAR_MS
        if (raw ^ self._standing) & bit:
            if age < self.glitch_ms:
                return self.glitch_ms - age
            self._standing ^= bit
            if self._codes[i] and raw & bit:  # a stuck spot stands again: it works
                self._clear_fault(i)
            elif not (raw & bit) and not self._codes[i]:  # down now: time it
                return self.stuck_ms - age
            return _FAR_MS
        if not (raw & bit) and not self._codes[i]:
            if age < self.stuck_ms:
                return self.stuck_ms - age
            self._codes[i] = FAULT_STUCK
            self.fault |= bit
        return _FAR_MS

    def _clear_fault(self, i):
        self._codes[i] = FAULT_NONE
        self._changes[i] = 0
        self.fault &= ~(1 << i)
        self.flapping &= ~(1 << i)

    def _count_change(self, i, now_ms):
        elapsed = ticks_diff(now_ms, self._window_start[i])
        if elapsed < 0 or elapsed >= self.flap_window_ms:
            self._window_start[i] = now_ms
            self._changes[i] = 1
            return
        if self._changes[i] < self.flap_limit:  # capped: a line may flap for days
            self._changes[i] += 1
        if self._changes[i] >= self.flap_limit and self._codes[i] != FAULT_FLAP:
            self._codes[i] = FAULT_FLAP  # also over a stuck fault: flapping is worse
            self.fault |= 1 << i
            self.flapping |= 1 << i
