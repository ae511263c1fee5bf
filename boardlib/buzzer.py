"""A passive piezo on one PWM pin, playing boardlib.calls patterns without blocking.

    from boardlib.buzzer import Buzzer
    buzzer = Buzzer(pwm)               # pwm: machine.PWM(Pin(n), freq=2000, duty_u16=0)
    buzzer.play(calls.FOUL, now_ms)    # starts the pattern (ends the one playing)
    if buzzer.busy and ticks_diff(now_ms, buzzer.due) >= 0:
        buzzer.poll(now_ms)            # the next step; call at or soon after `due`
    buzzer.on = False                  # silent from now on (the setup menu, board.cfg)

The driver only sets the PWM's frequency and duty (`freq(hz)`, `duty_u16(n)`, both in
every MicroPython release the firmware supports: ports/esp32/machine_pwm.c, v1.22.0): a
tone is a square wave at half duty, a rest duty 0. Each step's end is the previous end
plus its length, not the poll's time plus its length, so a late poll shortens one step and
the pattern keeps its rhythm. `due` is the deadline the loop must wake for while `busy`.
Nothing here allocates after construction.
"""

from boardlib import calls

try:
    from time import ticks_add, ticks_diff
except ImportError:  # CPython: boardlib.ticks wraps as the ESP32 does
    from boardlib.ticks import ticks_add, ticks_diff

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


_HALF_DUTY = const(32768)


class Buzzer:
    def __init__(self, pwm, on=True):
        self.pwm = pwm
        self.on = on
        self.busy = False
        self.due = 0
        self.call = calls.NONE  # the call playing (or played last)
        self._steps = ()
        self._at = 0
        pwm.duty_u16(0)

    def play(self, call, now_ms):
        """Start `call` now (calls.NONE, or any call while off: nothing)."""
        if not self.on or call == calls.NONE:
            return
        self.call = call
        self._steps = calls.steps(call)
        self._at = 0
        self.due = now_ms
        self.busy = True
        self._step()

    def poll(self, now_ms):
        """Play on: every step whose time has come (at most one normally)."""
        while self.busy and ticks_diff(now_ms, self.due) >= 0:
            self._step()

    def stop(self):
        self.pwm.duty_u16(0)
        self.busy = False

    def _step(self):
        steps = self._steps
        at = self._at
        if at >= len(steps):
            self.stop()
            return
        freq = steps[at]
        if freq:
            self.pwm.freq(freq)
            self.pwm.duty_u16(_HALF_DUTY)
        else:
            self.pwm.duty_u16(0)
        self.due = ticks_add(self.due, steps[at + 1])
        self._at = at + 2
