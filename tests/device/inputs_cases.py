"""Input conditioning (boardlib.inputs) and tick arithmetic (boardlib.ticks) scenarios.

tests/test_inputs.py runs them on CPython and, all in one process, on the MicroPython unix
port, and compares their traces with values worked out by hand.
"""

WRAP = "wrap"  # as a base: start 100 s before the tick counter wraps


def resolve(base):
    """A base of WRAP is 100 s before this interpreter's tick counter wraps."""
    from boardlib.ticks import TICKS_PERIOD

    return TICKS_PERIOD - 100000 if base == WRAP else base


def button_trace(changes, end_ms, base=0, debounce_ms=20, hold_ms=800):
    """Poll a Button every 5 ms; changes = [[time, pressed], ...]; times start at `base`."""
    from boardlib.inputs import HOLD, PRESS
    from boardlib.ticks import ticks_add
    from device.one_button import Button

    base = resolve(base)
    button = Button(debounce_ms, hold_ms)
    out = []
    level = 0
    k = 0
    t = 0
    while t <= end_ms:
        while k < len(changes) and changes[k][0] <= t:
            level = changes[k][1]
            k += 1
        kind = button.update(level, ticks_add(base, t))
        if kind == PRESS:
            out.append([t, "press"])
        elif kind == HOLD:
            out.append([t, "hold"])
        elif kind:
            out.append([t, "unknown %d" % kind])
        t += 5
    return out


def spot_trace(changes, end_ms, step_ms=5, base=0, options=None):
    """Poll SpotSensors; changes = [[time, standing_mask], ...].

    Returns [time, down, fault, [code of spot 1..5]] at the first poll and whenever the
    down or fault mask changes.
    """
    from boardlib.inputs import SpotSensors
    from boardlib.ticks import ticks_add

    base = resolve(base)
    sensors = SpotSensors(**(options or {}))
    out = []
    standing = 0
    k = 0
    t = 0
    last_down = -1
    last_fault = -1
    while t <= end_ms:
        while k < len(changes) and changes[k][0] <= t:
            standing = changes[k][1]
            k += 1
        down = sensors.update(standing, ticks_add(base, t))
        if down != sensors.down:
            out.append([t, "update returned %d but down is %d" % (down, sensors.down)])
        if down != last_down or sensors.fault != last_fault:
            codes = [sensors.fault_code(spot) for spot in range(1, sensors.count + 1)]
            out.append([t, down, sensors.fault, codes])
            last_down = down
            last_fault = sensors.fault
        t += step_ms
    return out


def ticks_facts():
    from boardlib.ticks import TICKS_PERIOD, ticks_add, ticks_diff

    top = ticks_add(0, -1)
    half = TICKS_PERIOD // 2
    just_ahead = ticks_add(0, half - 1)
    try:
        ticks_add(0, half)
        too_far = "no error"
    except OverflowError:
        too_far = "overflow"
    return [
        top == TICKS_PERIOD - 1,
        ticks_add(top, 1),
        ticks_diff(ticks_add(top, 10), top),
        ticks_diff(top, ticks_add(top, 10)),
        ticks_diff(just_ahead, 0) == half - 1,
        ticks_diff(ticks_add(just_ahead, 1), 0) == -half,
        too_far,
        ticks_diff(1500, 1000),
    ]


def bad_settings():
    """Each bad construction or call must raise ValueError; returns the messages."""
    from boardlib.inputs import Buttons, SpotSensors

    attempts = [
        lambda: Buttons(debounce_ms=-1),
        lambda: Buttons(hold_ms=0),
        lambda: Buttons(hold_ms="800"),
        lambda: SpotSensors(glitch_ms=-5),
        lambda: SpotSensors(count=0),
        lambda: SpotSensors(stuck_ms=0),
        lambda: SpotSensors(flap_limit=1),
        lambda: SpotSensors().fault_code(0),
        lambda: SpotSensors().fault_code(6),
    ]
    out = []
    for attempt in attempts:
        try:
            attempt()
            out.append("no error")
        except ValueError as e:
            out.append(str(e))
    return out
