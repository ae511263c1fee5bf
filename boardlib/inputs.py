"""Input conditioning for the pin spots and the buttons, as plain state transitions.

    from boardlib.inputs import Buttons, SpotSensors

    buttons = Buttons(count=4, debounce_ms=20, hold_ms=800)
    spots = SpotSensors(count=5, glitch_ms=40)
    # every poll (about 5 ms), with the levels already turned into "pressed" / "standing":
    if buttons.update(pressed_mask, now_ms):    # bit i = button i pressed
        ...                                     # buttons.presses, buttons.holds: masks
    down = spots.update(standing_mask, now_ms)  # bit i = spot i+1 has lost its pin
    if spots.fault:
        code = spots.fault_code(3)              # _FAULT_STUCK or _FAULT_FLAP for spot 3
    # pass spots.flapping (not .fault) to ShotAssembler.spots(): a stuck spot still scores

Nothing here reads a pin or a clock: the caller passes levels and `now_ms` (a ticks_ms
value), so the same code runs on the board, in the simulator and in tests. The poll path
allocates nothing: per-spot state lives in lists and a bytearray made once.
"""


try:
    from time import ticks_add, ticks_diff
except ImportError:  # CPython: boardlib.ticks wraps as the ESP32 does
    from boardlib.ticks import ticks_add, ticks_diff

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


NONE = const(0)
PRESS = const(1)
HOLD = const(2)

# Numbered like the first digit of the display's error codes (1n stuck, 2n flaps).
_FAULT_NONE = const(0)
_FAULT_STUCK = const(1)  # no pin reported for minutes: sensor dead or spot left empty
_FAULT_FLAP = const(2)  # too many changes in a short time: loose wire or a bad sensor
_FAR_MS = const(1 << 28)  # "no deadline": well within half the ticks period (2**29)
# The index of a mask's lowest bit (a power of two up to 128: spots are 1 to 8), for
# visiting the set bits of a mask: low = m & -m; i = INDEX[low]; m ^= low.
INDEX = b"\x00\x00\x01\x00\x02\x00\x00\x00\x03" + bytes(7) + b"\x04" + bytes(15) + b"\x05" \
    + bytes(31) + b"\x06" + bytes(63) + b"\x07"


def _check_ms(name, value, low=0):
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ValueError("%s must be a whole number >= %d, not %r" % (name, low, value))
    return value


class Buttons:
    """Push buttons, a bit each: debounce, then a short press or a hold.

    `update(pressed_mask, now_ms)` takes the levels (bit i set = button i is down) and
    returns the mask of buttons with a result, which it leaves in `presses` (a short press
    released) and `holds` (down for `hold_ms`: once, and then no press on release). A
    level change counts only after it has been steady for `debounce_ms`. `left` is then
    the ms until update() gives a result with the levels as they are, or a far time
    (2**28 ms, days): only a change of a level can. The buttons are handled together, as
    masks, in one call: a released and settled button costs nothing, and the board polls
    them only when a pin changes or `left` runs out (firmware.app).
    """

    def __init__(self, count=4, debounce_ms=20, hold_ms=800):
        self.debounce_ms = _check_ms("debounce_ms", debounce_ms)
        self.hold_ms = _check_ms("hold_ms", hold_ms, 1)
        # a press's hold is timed from the contact, and comes no sooner than its debounce
        self._hold_after = hold_ms if hold_ms > debounce_ms else debounce_ms
        self._raw_since = [0] * count  # when each contact last changed (ticks)
        self._pressed_since = [0] * count  # when each press began, as counted
        self.reset()

    def reset(self):
        """Forget any press in progress; the buttons are taken as released."""
        self._raw = 0  # the contacts as last seen
        self._pressed = 0  # the buttons counted as down (debounced)
        self._held = 0  # the buttons whose hold was given (no press on their release)
        self.presses = self.holds = 0
        self.left = _FAR_MS

    def update(self, pressed_mask, now_ms):
        # Only the buttons down or settling are visited (`low = m & -m`, INDEX[low]); the
        # frame stays within 11 words (a bigger one comes from the heap at every call).
        self.presses = self.holds = 0
        todo = self._raw | self._pressed
        if not todo and self.debounce_ms:
            # Every button was released and settled (a press's usual start): the pressed
            # ones begin their debounce, and what can come first is their hold.
            self._raw = pressed_mask
            self.left = self._hold_after if pressed_mask else _FAR_MS
            while pressed_mask:
                todo = pressed_mask & -pressed_mask
                pressed_mask ^= todo
                self._raw_since[INDEX[todo]] = now_ms
            return 0
        self.left = _FAR_MS  # the soonest timer
        todo |= pressed_mask
        while todo:
            low = todo & -todo
            todo ^= low
            i = INDEX[low]
            if (pressed_mask ^ self._raw) & low:  # the contact changed
                if (self._raw & ~self._pressed & low
                        and ticks_diff(now_ms, self._raw_since[i]) > self.debounce_ms):
                    # the press was steady for its debounce before this release: it counts
                    # from then, as if update() had been called at that moment (with the
                    # release at that very moment, it would not have)
                    self._pressed |= low
                    self._pressed_since[i] = self._raw_since[i]
                self._raw ^= low
                self._raw_since[i] = now_ms
            if (pressed_mask ^ self._pressed) & low:  # not yet what counts
                age = ticks_diff(now_ms, self._raw_since[i])
                if age < self.debounce_ms:
                    age = (self._hold_after if pressed_mask & low else self.debounce_ms) - age
                    if age < self.left:
                        self.left = age
                    continue
                self._pressed ^= low
                if pressed_mask & low:
                    # A hold is timed from when the contact closed for good, not from
                    # when the debounce accepted it.
                    self._pressed_since[i] = self._raw_since[i]
                elif self._held & low:
                    self._held ^= low
                    continue
                else:
                    self.presses |= low
                    continue
            # Only while the contact is closed right now: a release in its debounce time
            # is a short press that must not turn into a hold.
            if pressed_mask & ~self._held & low:
                age = ticks_diff(now_ms, self._pressed_since[i])
                if age >= self.hold_ms:
                    self._held |= low
                    self.holds |= low
                    continue
                if self.hold_ms - age < self.left:
                    self.left = self.hold_ms - age
        return self.presses | self.holds


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
        self._changes_in = [0] * count
        self._codes = bytearray(count)
        # Room in the attribute table (docs/performance.md, "Attribute tables with room"):
        # a full one is searched whole for every name it lacks, each method's.
        self._room = None
        self.reset()

    def reset(self):
        """Forget all history: the next update is taken as the starting state."""
        self._primed = False
        self._raw = -1  # no report yet (a report is never negative)
        self._due = 0  # with the same report as the last, nothing changes before then
        self._stuck_at = None  # no later than the first spot lying down is stuck (ticks)
        self._soon = _FAR_MS  # while an update runs: its soonest timer, in ms from now
        # When update() has something to do with the same report (ticks), or None: the
        # caller's schedule reads it (firmware.app)
        self.next_at = None
        self._standing = 0
        self.down = 0
        self.fault = 0  # spots with any fault: stuck or flapping
        self.flapping = 0  # spots whose reports cannot be trusted: never down
        self._quiet = -1  # the mask of a settled, fault-free, all-standing poll; -1: none
        # The spots whose report changed at the last update that saw a change, and when:
        # their glitch timers run out together (pins fall and stand up together).
        self._fresh = 0
        self._fresh_at = 0
        for i in range(self.count):
            self._codes[i] = _FAULT_NONE
            self._changes_in[i] = 0

    def fault_code(self, spot):
        """_FAULT_NONE, _FAULT_STUCK or _FAULT_FLAP for spot number `spot` (1 = first)."""
        if not isinstance(spot, int) or not 1 <= spot <= self.count:
            raise ValueError("spot must be 1..%d, not %r" % (self.count, spot))
        return self._codes[spot - 1]

    def update(self, standing_mask, now_ms):
        raw = standing_mask & self._all
        if raw == self._quiet:
            return self.down  # every pin standing and settled: nothing to time
        if raw == self._raw and ticks_diff(self._due, now_ms) > 0:
            return self.down  # the same report, and no filter or fault timer due yet
        if not self._primed:
            return self._prime(raw, now_ms)
        # The update's work. It is split into functions whose frames fit on the C stack:
        # MicroPython takes a bigger frame (more than 11 words: locals, stack, 3 a try
        # block; py/objfun.c) from the heap at every call, which costs more than a call
        # (docs/performance.md); and no more of them than that, since a call of a Python
        # function costs as much as a dozen attribute reads. The spots are masks, a bit
        # each, and only the bits something happens to are visited (`low = m & -m`,
        # INDEX[low]).
        standing_mask = raw ^ self._raw  # (the frame's slot again: the spots changed)
        self._raw = raw
        if standing_mask:
            # Their glitch timers start again, and each change counts towards the flap
            # limit. (`low` is a spot's bit, then its index: the frame stays small.)
            self._fresh = standing_mask
            self._fresh_at = now_ms
            while standing_mask:
                low = standing_mask & -standing_mask
                standing_mask ^= low
                low = INDEX[low]
                self._raw_since[low] = now_ms
                age = ticks_diff(now_ms, self._window_start[low])
                if age < 0 or age >= self.flap_window_ms:
                    self._window_start[low] = now_ms
                    self._changes_in[low] = 1
                    continue
                age = self._changes_in[low] + 1  # (the frame's slot again: the count)
                if age < self.flap_limit:
                    self._changes_in[low] = age
                    continue
                self._changes_in[low] = self.flap_limit  # capped: a line may flap for days
                if self._codes[low] != _FAULT_FLAP:
                    self._codes[low] = _FAULT_FLAP  # also over a stuck fault: flapping is worse
                    self.fault |= 1 << low
                    self.flapping |= 1 << low
        # The usual case (the pins of a shot falling or standing up together), without
        # the general timers below: no fault, no spot lying counted down with no pin (its
        # stuck timer), and every spot whose report is not what counts yet changed at
        # `_fresh_at`, so that one age decides for all of them.
        if not (self.fault or ~raw & ~self._standing & self._all):
            standing_mask = raw ^ self._standing  # (the frame's slot again: the waiting)
            if standing_mask and not standing_mask & ~self._fresh:
                self._stuck_at = None
                if ticks_diff(now_ms, self._fresh_at) < self.glitch_ms:
                    self._due = self.next_at = ticks_add(  # type: ignore[type-var]
                        self._fresh_at, self.glitch_ms)
                    self._quiet = -1
                    return self.down
                self._standing = raw
                self.down = self._all & ~raw
                if standing_mask & ~raw:  # fallen: timed for the stuck fault
                    self._stuck_at = self._due = self.next_at = ticks_add(  # type: ignore[type-var]
                        self._fresh_at, self.stuck_ms)
                    self._quiet = -1
                    return self.down
                self._due = ticks_add(now_ms, _FAR_MS)  # every spot stands: quiet
                self._quiet = raw
                self.next_at = None
                return self.down
        self._soon = _FAR_MS  # the soonest a timer below runs out, from now
        if self.flapping & raw:  # (a flapping spot with no pin: only a change helps)
            self._flaps(self.flapping & raw, now_ms)
        # The stuck timer: spots down, as counted, without a fault (one counted down by
        # this update is timed from the next, as it would be one by one). `_stuck_at` is
        # never later than the first of them runs out (a spot standing again leaves it
        # early: then it is worked out again, which changes nothing).
        standing_mask = ~raw & ~self._standing & ~self.fault & self._all
        if not standing_mask:
            self._stuck_at = None
        elif self._stuck_at is None or ticks_diff(now_ms, self._stuck_at) >= 0:
            self._stuck(standing_mask, now_ms)
        # The glitch filter: spots whose report is not what counts yet (flapping aside)
        standing_mask = (raw ^ self._standing) & ~self.flapping
        if standing_mask & ~self._fresh or standing_mask & raw & self.fault:
            self._glitch(standing_mask, raw, now_ms)
        elif standing_mask:
            # All of them changed at `_fresh_at` (the usual case: the pins of a shot), and
            # none stands again with a fault to clear: one age for them all, no loop and
            # no call (_glitch's work for them).
            age = ticks_diff(now_ms, self._fresh_at)
            if age < self.glitch_ms:
                if self.glitch_ms - age < self._soon:
                    self._soon = self.glitch_ms - age
            else:
                self._standing ^= standing_mask
                if standing_mask & ~raw:  # fallen: timed for the stuck fault
                    age = ticks_add(self._fresh_at, self.stuck_ms)  # type: ignore[type-var]
                    if self._stuck_at is None or ticks_diff(age, self._stuck_at) < 0:
                        self._stuck_at = age
        if self._stuck_at is not None and ticks_diff(self._stuck_at, now_ms) < self._soon:
            self._soon = ticks_diff(self._stuck_at, now_ms)
        self._due = ticks_add(now_ms, self._soon)
        self.down = self._all & ~self._standing & ~self.flapping
        # The next idle poll is one comparison instead of four
        self._quiet = raw if raw == self._all and self._standing == raw and not self.fault else -1
        self.next_at = None if self._quiet == raw else self._due
        return self.down

    def _flaps(self, todo, now_ms):
        """Flapping spots with a pin: released once it has stood the flap window without
        a break."""
        while todo:
            low = todo & -todo
            todo ^= low
            age = ticks_diff(now_ms, self._raw_since[INDEX[low]])
            if age < self.flap_window_ms:
                if self.flap_window_ms - age < self._soon:
                    self._soon = self.flap_window_ms - age
            else:
                self._clear_fault(INDEX[low])
                self._standing |= low

    def _glitch(self, todo, raw, now_ms):
        """Spots whose report has held glitch_ms count as it says (a stuck one that
        stands again works again; one that falls is timed for the stuck fault)."""
        while todo:
            low = todo & -todo
            todo ^= low
            age = ticks_diff(now_ms, self._raw_since[INDEX[low]])
            if age < self.glitch_ms:
                if self.glitch_ms - age < self._soon:
                    self._soon = self.glitch_ms - age
                continue
            self._standing ^= low
            if raw & low:
                if self._codes[INDEX[low]]:
                    self._clear_fault(INDEX[low])
                continue
            # fallen: timed for the stuck fault (`age` again: when it will be stuck)
            age = ticks_add(self._raw_since[INDEX[low]], self.stuck_ms)
            if self._stuck_at is None or ticks_diff(age, self._stuck_at) < 0:
                self._stuck_at = age

    def _stuck(self, lying, now_ms):
        """Spots down for stuck_ms are stuck; `_stuck_at` becomes when the next is."""
        at = None
        i = 0
        while lying:
            if lying & 1:
                end = ticks_add(self._raw_since[i], self.stuck_ms)  # type: ignore[type-var]
                if ticks_diff(now_ms, end) >= 0:
                    self._codes[i] = _FAULT_STUCK
                    self.fault |= 1 << i
                elif at is None or ticks_diff(end, at) < 0:
                    at = end
            lying >>= 1
            i += 1
        self._stuck_at = at

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

    def _clear_fault(self, i):
        self._codes[i] = _FAULT_NONE
        self._changes_in[i] = 0
        self.fault &= ~(1 << i)
        self.flapping &= ~(1 << i)
