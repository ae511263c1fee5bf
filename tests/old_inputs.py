"""The inputs' state machines as they were before they were rewritten for speed, kept as
reference models: tests/test_inputs.py compares the board's code with them on random
sequences (the same results, the same timers, step by step)."""

from boardlib.inputs import (
    _FAR_MS,
    _FAULT_FLAP,
    HOLD,
    INDEX,
    NONE,
    PRESS,
    SpotSensors,
)
from boardlib.ticks import ticks_add, ticks_diff


class OldButton:
    """One push button: debounce, then a short press or a hold.

    `update(pressed, now_ms)` returns PRESS when a short press is released, HOLD once
    when the button has been down for `hold_ms` (and then no PRESS on release), else NONE.
    A level change counts only after it has been steady for `debounce_ms`.
    """

    def __init__(self, debounce_ms=20, hold_ms=800):
        self.debounce_ms = debounce_ms
        self.hold_ms = hold_ms
        # a press's hold is timed from the contact, and comes no sooner than its debounce
        self._hold_after = hold_ms if hold_ms > debounce_ms else debounce_ms
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
        """The ms from now_ms until update() would give a result with the level as it is
        (a release's debounce running out, or the hold), or None: only a change of the
        level can. A press's own debounce is not waited for: nothing comes of it until
        the hold or the release, and update() counts it then as from when it was over."""
        if self._raw != self._pressed:
            if self._raw:  # a press in its debounce: the hold, timed from the contact
                return self._hold_after - ticks_diff(now_ms, self._raw_since)
            return self.debounce_ms - ticks_diff(now_ms, self._raw_since)
        if self._raw and not self._held:
            return self.hold_ms - ticks_diff(now_ms, self._pressed_since)
        return None

    def update(self, pressed, now_ms):
        """`idle` (a plain attribute, cheap to read) is True after an update that leaves
        the button released and settled: until it is pressed again, update() would
        return NONE and change nothing, so a poll may skip it. `left` is then what
        timer() would say: the ms until update() gives a result with the level
        unchanged, or -1."""
        if not pressed and not self._raw and not self._pressed:
            self.idle = True
            self.left = -1
            return NONE  # released and settled: the usual case, kept cheap
        self.idle = False
        self.left = -1
        raw = 1 if pressed else 0
        if raw != self._raw:
            if self._raw and not self._pressed \
                    and ticks_diff(now_ms, self._raw_since) > self.debounce_ms:
                # the press was steady for its debounce before this release: it counts
                # from then, as if update() had been called at that moment (with the
                # release at that very moment, it would not have)
                self._pressed = 1
                self._pressed_since = self._raw_since
            self._raw = raw
            self._raw_since = now_ms
        if raw != self._pressed:
            age = ticks_diff(now_ms, self._raw_since)
            if age < self.debounce_ms:
                self.left = (self._hold_after if raw else self.debounce_ms) - age
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


class OldSpotSensors(SpotSensors):
    """SpotSensors.update as it was before its usual case (a shot's pins falling or
    standing up together) was taken apart; the rest is the board's own."""

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
                if self._changes_in[low] < self.flap_limit:  # capped: a line may flap for days
                    self._changes_in[low] += 1
                if (self._changes_in[low] >= self.flap_limit
                        and self._codes[low] != _FAULT_FLAP):
                    self._codes[low] = _FAULT_FLAP  # also over a stuck fault: flapping is worse
                    self.fault |= 1 << low
                    self.flapping |= 1 << low
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
