"""The inputs' state machines as they were before they were rewritten for speed, kept as
reference models: tests/test_inputs.py compares the board's code with them on random
sequences (the same results, the same timers, step by step)."""

from boardlib.inputs import HOLD, NONE, PRESS
from boardlib.ticks import ticks_diff


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
