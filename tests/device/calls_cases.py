"""boardlib.calls (the patterns) and boardlib.buzzer (the driver) on both interpreters
(tests/test_calls.py): every call distinct and short, one call per event by weight, and
the driver's steps on a recording PWM, late polls included.
"""

from device.support import check


class RecordingPWM:
    """Records (ms, Hz, duty) at each change, with the time the test says it is."""

    def __init__(self):
        self.now = 0
        self.hz = 0
        self.duty = -1
        self.changes = []

    def freq(self, hz):
        self.hz = hz

    def duty_u16(self, duty):
        self.duty = duty
        self.changes.append((self.now, self.hz if duty else 0, duty))


def _heard(changes):
    """(start, Hz, ms) of each tone."""
    tones = []
    for i in range(len(changes) - 1):
        at, hz, duty = changes[i]
        if duty:
            tones.append((at, hz, changes[i + 1][0] - at))
    return tones


def length_ms(call):
    """How long a call sounds: its steps' durations together."""
    from boardlib import calls

    pattern = calls.steps(call)
    return sum(pattern[i] for i in range(1, len(pattern), 2))


def case_every_call_is_short_and_sounds_unlike_the_others():
    from boardlib import calls

    seen = []
    for call in range(1, len(calls.PATTERNS)):
        pattern = calls.steps(call)
        check(len(pattern) % 2 == 0 and pattern[0], "call %d starts with a tone" % call)
        check(50 <= length_ms(call) <= 1200, "call %d is short" % call)
        tones = tuple((pattern[i], pattern[i + 1]) for i in range(0, len(pattern), 2)
                      if pattern[i])
        check(tones not in seen, "call %d sounds like another" % call)
        seen.append(tones)
        for hz, _ in tones:
            check(300 <= hz <= 3000, "a piezo is loud at %d Hz" % hz)
    check(calls.steps(calls.NONE) == () and calls.steps(99) == (), "nothing to play")
    check(len(calls.NAMES) == len(calls.PATTERNS), "a name for every call")


def case_one_call_per_event_the_weightiest():
    from boardlib import calls
    from rules_core.common import A_DISTANCE, A_FINISHED, A_SET, A_TWENTY

    f = calls.for_event
    check(f(A_FINISHED | A_DISTANCE, 4, False, True) == calls.GAME, "game won")
    check(f(A_SET << 1 | A_DISTANCE << 1, 4, False, True) == calls.SET, "set won")
    check(f(A_DISTANCE, 4, False, False) == calls.DISTANCE, "distance")
    check(f(A_TWENTY << 1, 2, True, True) == calls.TWENTY, "20 remaining (a foul's)")
    check(f(0, 8, True, True) == calls.FOUL, "foul")
    check(f(0, 0, True, True) == calls.FOUL, "a foul that scored nothing")
    check(f(0, 6, False, True) == calls.SCORED, "scored (ceb passes the turn)")
    check(f(0, 0, False, True) == calls.TURN, "a miss")
    check(f(0, 0, False, False) == calls.NONE, "nothing happened")


def case_the_driver_plays_a_pattern_in_its_rhythm_even_polled_late():
    from boardlib import calls
    from boardlib.buzzer import Buzzer

    pwm = RecordingPWM()
    buzzer = Buzzer(pwm)
    check(pwm.changes == [(0, 0, 0)], "silent from the start")
    pwm.now = 1000
    buzzer.play(calls.FOUL, 1000)
    t = 1000
    while buzzer.busy:
        t += 7  # a loop that comes round every 7 ms
        pwm.now = t
        if buzzer.due - t <= 0:
            buzzer.poll(t)
    tones = _heard(pwm.changes)
    check([hz for _, hz, _ in tones] == [400, 300], "two falling tones: %r" % (tones,))
    # each step ends at most one loop period late, never later: the rhythm holds
    check(abs(tones[1][0] - (1000 + 150 + 60)) < 7, "second tone on time: %r" % (tones,))
    check(pwm.changes[-1][2] == 0, "silent at the end")
    check(t - 1000 < length_ms(calls.FOUL) + 7, "over when the pattern is")


def case_off_is_silent_and_stop_ends_a_call():
    from boardlib import calls
    from boardlib.buzzer import Buzzer

    pwm = RecordingPWM()
    buzzer = Buzzer(pwm, on=False)
    buzzer.play(calls.GAME, 0)
    check(not buzzer.busy and pwm.changes == [(0, 0, 0)], "off: nothing")
    buzzer.on = True
    buzzer.play(calls.GAME, 0)
    check(buzzer.busy and pwm.duty, "on: the first tone")
    buzzer.stop()
    check(not buzzer.busy and pwm.duty == 0, "stopped")


def case_playing_allocates_nothing():
    from device.support import micropython_only

    micropython_only("heap_lock")
    import micropython

    from boardlib import calls
    from boardlib.buzzer import Buzzer

    class QuietPWM:
        def freq(self, hz):
            pass

        def duty_u16(self, duty):
            pass

    buzzer = Buzzer(QuietPWM())
    micropython.heap_lock()
    try:
        buzzer.play(calls.GAME, 0)
        t = 0
        while buzzer.busy:
            t += 5
            buzzer.poll(t)
    finally:
        micropython.heap_unlock()
