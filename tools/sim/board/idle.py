"""Virtual time that jumps over idle stretches of a timeline, for the simulator.

    skip = IdleSkip(sim, app, levels, tick, STEP_MS, clock)  # clock: [virtual ms] or None
    t = 0
    while t <= end:
        ...                                   # set the inputs, tick(app, t)
        t = skip.next_time(t + STEP_MS, end)  # t + STEP_MS, or later after a jump

A timeline may leave the table alone for hours (a timeline may span up to a week). Polling
every 5 ms through that would take the simulator minutes or hours, so once nothing can
happen, virtual time moves in strides instead: the firmware's whole schedule (inputs, link,
display, upkeep and the watchdog feed) runs once every STRIDE_MS, so the board still sees
time pass as it does on the table, with ticks that only ever move forward by less than half
the tick period (boardlib/ticks.py). Stepping at 5 ms resumes one second before the next
input change.

"Nothing can happen" is judged from what could still change with the inputs held steady:

* the inputs have not changed for QUIET_MS (debounce, hold, settle and flap times are all
  far shorter), and for stuck_ms + QUIET_MS while a spot reports no pin (the stuck-spot
  fault is timed from the fall);
* the board state has not changed for QUIET_MS, and no call of the buzzer is playing;
* the display has not been written for QUIET_MS, or the state has been still for
  STILL_MS: the message queue has drained by then (8 messages of 2 s), and what the
  display still does (a blinking winner, a break countdown) depends on the time alone,
  so it shows at each stride what it would show at that moment on the table.

If anything changes at a stride (a command from the host, say), stepping resumes at once.
With --speed (real-time pacing) or --display-log, time never jumps. With a network it
jumps only while the club's WiFi is down (a `net down` line): the broker is a real
program that answers in real time, but nothing reaches it then, and the strides are the
link's heartbeat period (`stride_ms`), so the board makes every frame it would make on the
table in that time (an outage of days counts its tens of thousands of frames).
"""

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):
        return x


QUIET_MS = const(5000)
STILL_MS = const(60000)
STRIDE_MS = const(60000)
_CHECK_MS = const(1000)  # a multiple of every task period (5, 10, 40, 250 ms)


class IdleSkip:
    def __init__(self, sim, app, levels, tick, step_ms, clock=None):
        self.step_ms = step_ms
        self.clock = clock  # a one-item list holding the virtual time, kept up to date
        self.sim = sim
        self.app = app
        self.levels = levels
        self.tick = tick
        self.stride_ms = STRIDE_MS  # the caller may shorten it (no longer than STRIDE_MS)
        self.jumps = 0  # how many stretches were jumped (for tests and curiosity)
        self.jumped_ms = 0
        self._changes = -1
        self._state = -1  # App.changes when last looked at
        self._frames = -1
        self._inputs_since = 0
        self._state_since = 0
        self._display_since = 0

    def _frames_now(self):
        total = 0
        for chip in self.sim.chips:
            total += chip.frames
        return total

    def _look(self, t):
        """Note what changed since the last look (times are rounded up to this look, so
        every wait is at least as long as it should be)."""
        levels = self.levels
        if levels.changes != self._changes:
            self._changes = levels.changes
            self._inputs_since = t
        if self.app.changes != self._state:  # the game changed (App.changes counts it)
            self._state = self.app.changes
            self._state_since = t
        frames = self._frames_now()
        if frames != self._frames:
            self._frames = frames
            self._display_since = t

    def _idle(self, t):
        self._look(t)
        buzzer = getattr(self.app, "buzzer", None)
        if buzzer is not None and buzzer.busy:
            return False  # a call is playing: its steps are due every few ms
        inputs_for = QUIET_MS
        if self.levels.standing != self.levels.all_standing:
            inputs_for += self.app.sensors.stuck_ms
        if t - self._inputs_since < inputs_for or t - self._state_since < QUIET_MS:
            return False
        return t - self._display_since >= QUIET_MS or t - self._state_since >= STILL_MS

    def next_time(self, t, end):
        """The next time to step to: t itself, or after jumping an idle stretch, the
        time after the last stride."""
        if t % _CHECK_MS or not self._idle(t):
            return t
        coming = self.levels.next_ms()
        limit = end if coming is None or coming > end else coming
        land = (limit - _CHECK_MS) // _CHECK_MS * _CHECK_MS  # a second before it
        if land - t < 2 * _CHECK_MS:
            return t
        self.jumps += 1
        start = t
        while True:
            self.levels.advance(t)  # nothing is due: releases only, as on the table
            if self.clock is not None:
                self.clock[0] = t
            self.tick(self.app, t)  # the firmware's schedule feeds the watchdog, not we
            if self.app.changes != self._state or t >= land:
                break  # something happened after all (a host command): step from here
            t = t + self.stride_ms if t + self.stride_ms < land else land
        self.jumped_ms += t - start
        self._state_since = self._display_since = self._inputs_since = t
        self._state = self.app.changes
        self._frames = self._frames_now()
        return t + self.step_ms
