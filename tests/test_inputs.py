"""Input conditioning (boardlib.inputs) and tick arithmetic (boardlib.ticks).

Every scenario is a plain function (tests/device/inputs_cases.py) that runs unchanged on
CPython and on the MicroPython unix port; the port runs all of them in one process.
Expected values are worked out by hand from HARDWARE.md and the documented settings,
polling every 5 ms unless said.
"""

import os

import pytest
from helpers import cpython_value, device_module, micropython_value, run_on_micropython

INPUTS = device_module("inputs_cases")

WRAP = INPUTS.WRAP  # as a base: start 100 s before the tick counter wraps

ALL_UP = 0b11111
NO_3 = 0b11011  # a ball rests on spot 3
NO_1_3 = 0b11010

FLAP_4 = [[0, ALL_UP]] + [[1000 + 10 * k, ALL_UP & ~8 if k % 2 == 0 else ALL_UP]
                          for k in range(200)]
Z = [0, 0, 0, 0, 0]

# name: (function, args, expected)
CASES = {
    # Contact bounce on press and on release: pressed from 1010 (last bounce), released
    # from 1160 (last bounce): PRESS at 1160 + 20, once.
    "press with bounce": (
        "button_trace",
        [[[1000, 1], [1005, 0], [1010, 1], [1150, 0], [1155, 1], [1160, 0]], 2000],
        [[1180, "press"]],
    ),
    # A 10 ms blip is not a press.
    "blip": ("button_trace", [[[1000, 1], [1010, 0]], 2000], []),
    # Held 1000..2500: HOLD once at 1800, nothing on release.
    "hold": ("button_trace", [[[1000, 1], [2500, 0]], 3000], [[1800, "hold"]]),
    # Released at 1795: the last poll pressed is 1790 (790 ms): a short press, at 1815.
    "just short of hold": ("button_trace", [[[1000, 1], [1795, 0]], 3000], [[1815, "press"]]),
    # Still closed at the 1800 poll: a hold.
    "just a hold": ("button_trace", [[[1000, 1], [1805, 0]], 3000], [[1800, "hold"]]),
    # A bounce while held does not restart the hold time and is not a release.
    "bounce while held": (
        "button_trace",
        [[[1000, 1], [1300, 0], [1305, 1], [2500, 0]], 3000],
        [[1800, "hold"]],
    ),
    # Two presses in a row: each gives its own PRESS.
    "two presses": (
        "button_trace",
        [[[1000, 1], [1100, 0], [1300, 1], [1400, 0]], 2000],
        [[1120, "press"], [1420, "press"]],
    ),
    # Other settings: debounce 0, hold 300.
    "settings": ("button_trace", [[[1000, 1], [1400, 0]], 2000, 0, 0, 300], [[1300, "hold"]]),
    # The same press and hold across a wrap of the tick counter.
    "press across wrap": (
        "button_trace", [[[1000, 1], [1100, 0]], 2000, "wrap"], [[1120, "press"]],
    ),
    # Spot 3 empty at power-up is just down. Spot 1: a 35 ms blip is nothing; dark from
    # 2000 is down at 2040; a 30 ms lit blip at 2500 changes nothing; lit from 3000 is up
    # at 3040.
    "glitch filter": (
        "spot_trace",
        [[[0, NO_3], [1000, NO_1_3], [1035, NO_3], [2000, NO_1_3], [2500, NO_3],
          [2530, NO_1_3], [3000, NO_3]], 4000],
        [[0, 4, 0, Z], [2040, 5, 0, Z], [3040, 4, 0, Z]],
    ),
    # A shorter glitch time: dark from 1000 is down at 1010.
    "glitch setting": (
        "spot_trace",
        [[[0, ALL_UP], [1000, NO_3]], 1100, 5, 0, {"glitch_ms": 10}],
        [[0, 0, 0, Z], [1010, 4, 0, Z]],
    ),
    # Spot 2 dark from 1000 (polled every 100 ms): down at 1100, stuck at 1000 + 180 s and
    # still down (a pin left lying still fell); lit again from 200 s: up and released at
    # the first poll past the glitch time, 200100.
    "stuck": (
        "spot_trace",
        [[[0, ALL_UP], [1000, 0b11101], [200000, ALL_UP]], 205000, 100],
        [[0, 0, 0, Z], [1100, 2, 0, Z], [181000, 2, 2, [0, 1, 0, 0, 0]], [200100, 0, 0, Z]],
    ),
    "stuck across wrap": (
        "spot_trace",
        [[[0, ALL_UP], [1000, 0b11101], [200000, ALL_UP]], 205000, 100, "wrap"],
        [[0, 0, 0, Z], [1100, 2, 0, Z], [181000, 2, 2, [0, 1, 0, 0, 0]], [200100, 0, 0, Z]],
    ),
    # A stuck spot that starts to flap: the flap fault takes over and the spot leaves
    # `down` (stuck_ms 2 s): down 1040, stuck 3000, flapping from 4000 (10 ms dark, 10 ms
    # lit): its 16th change at 4150; lit for good from 4400, released 5400.
    "stuck then flaps": (
        "spot_trace",
        [[[0, ALL_UP], [1000, 0b11101]] + [[4000 + 10 * k, (ALL_UP, 0b11101)[k % 2]]
                                             for k in range(40)] + [[4400, ALL_UP]],
         6000, 5, 0, {"stuck_ms": 2000}],
        [[0, 0, 0, Z], [1040, 2, 0, Z], [3000, 2, 2, [0, 1, 0, 0, 0]],
         [4150, 0, 2, [0, 2, 0, 0, 0]], [5400, 0, 0, Z]],
    ),
    # Spot 4 changes every 10 ms from 1000: its 16th change (1150) is a flap fault; lit
    # from 2990 on, released at 3990. It never reads down (each dark spell is 10 ms).
    "flap": (
        "spot_trace",
        [FLAP_4, 5000],
        [[0, 0, 0, Z], [1150, 0, 8, [0, 0, 0, 2, 0]], [3990, 0, 0, Z]],
    ),
    # The same with a higher limit: 200 changes in 2 s, at most 100 in any 1 s window
    # that starts at a change: a limit of 101 never trips.
    "flap limit setting": ("spot_trace", [FLAP_4, 5000, 5, 0, {"flap_limit": 101}],
                           [[0, 0, 0, Z]]),
}


@pytest.fixture(scope="module")
def unix_port():
    names = [*CASES, "ticks_facts", "bad_settings"]
    calls = [[func, args] for func, args, _ in CASES.values()]
    calls += [["ticks_facts", []], ["bad_settings", []]]
    results = [micropython_value(r) for r in run_on_micropython("inputs_cases", calls)]
    return dict(zip(names, results, strict=True))


def on_cpython(name, args=()):
    return cpython_value(INPUTS, name, *args)


@pytest.mark.parametrize("case", sorted(CASES))
def test_on_cpython(case):
    func, args, expected = CASES[case]
    assert on_cpython(func, args) == expected


@pytest.mark.parametrize("case", sorted(CASES))
def test_on_unix_port(case, unix_port):
    assert unix_port[case] == CASES[case][2]


@pytest.mark.parametrize("interpreter", ["cpython", "unix port"])
def test_ticks_wrap_like_micropython(interpreter, unix_port):
    facts = on_cpython("ticks_facts") if interpreter == "cpython" else unix_port["ticks_facts"]
    # the top value, wrapping to 0, +-10 across the wrap, half a period ahead is behind,
    # a step of half a period is refused.
    assert facts == [True, 0, 10, -10, True, True, "overflow", 500]


def test_cpython_ticks_period_is_the_esp32s():
    from boardlib.ticks import TICKS_PERIOD

    assert TICKS_PERIOD == 2**30


@pytest.mark.parametrize("interpreter", ["cpython", "unix port"])
def test_bad_settings_raise_clear_errors(interpreter, unix_port):
    if interpreter == "cpython":
        messages = on_cpython("bad_settings")
    else:
        messages = unix_port["bad_settings"]
    assert "no error" not in messages
    for message, word in zip(
        messages,
        ["debounce_ms", "hold_ms", "hold_ms", "glitch_ms", "count", "stuck_ms", "flap_limit",
         "spot", "spot"],
        strict=True,
    ):
        assert word in message


def test_timings_match_the_documented_defaults():
    from boardlib.inputs import Buttons, SpotSensors
    from boardlib.shot import ShotAssembler

    assert (Buttons().debounce_ms, Buttons().hold_ms) == (20, 800)
    sensors = SpotSensors()
    assert (sensors.count, sensors.glitch_ms, sensors.stuck_ms) == (5, 40, 180000)
    assert ShotAssembler().settle_ms == 1500


def test_module_docstrings_show_usage():
    for name in ("boardlib/inputs.py", "boardlib/shot.py", "boardlib/ticks.py"):
        with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), name)) as f:
            assert f.read().startswith('"""')


def test_a_buttons_left_is_its_timer_and_a_spots_next_at_its_due_time():
    # The board's schedule (firmware.app) sleeps until these: what update() leaves in
    # Button.left must be what timer() says, at every step of a random press sequence;
    # and SpotSensors.next_at the time its next update has something to do, or None.
    import random

    from device.one_button import Button

    from boardlib.inputs import SpotSensors

    rng = random.Random(5)
    button = Button(debounce_ms=20, hold_ms=800)
    sensors = SpotSensors(glitch_ms=40, stuck_ms=3000)
    t = 0
    for _ in range(5000):
        t += rng.choice((1, 5, 10, 30, 200))
        button.update(rng.random() < 0.5, t)
        timer = button.timer(t)
        assert button.left == (-1 if timer is None or button.idle else timer), t
        standing = rng.choice((31, 31, 31, 0b11011, 0b10001, 0))
        sensors.update(standing, t)
        due = sensors.next_at
        if due is not None:
            # nothing changes before it with the same report; something may at it
            before = (sensors.down, sensors.fault, sensors.flapping)
            sensors.update(standing, due - 1)
            assert (sensors.down, sensors.fault, sensors.flapping) == before, t
            t = max(t, due - 1)


def test_the_buttons_as_masks_do_what_four_buttons_did():
    # boardlib.inputs.Buttons handles the four buttons together, as masks, in one call;
    # before, each was a Button of its own (tests/old_inputs.py keeps it as it was). On
    # random presses, bounces and holds of several buttons at once, polled at random
    # times, the results, the timer the board sleeps on and the single Button's results
    # must be the old ones, step by step.
    import random

    from device.one_button import FAR_MS, Button, buttons_timer
    from old_inputs import OldButton

    from boardlib.inputs import _FAR_MS, HOLD, NONE, PRESS, Buttons

    assert FAR_MS == _FAR_MS

    for seed, (debounce_ms, hold_ms) in enumerate(((20, 800), (20, 10), (0, 1), (50, 50))):
        rng = random.Random(seed)
        old = [OldButton(debounce_ms, hold_ms) for _ in range(4)]
        new = Buttons(4, debounce_ms, hold_ms)
        one = Button(debounce_ms, hold_ms)
        levels = 0
        t = rng.randrange(1 << 30)  # across the ticks' wrap too
        for step in range(20000):
            t = (t + rng.choice((1, 2, 5, 10, 19, 20, 21, 40, 300, 900))) & ((1 << 30) - 1)
            if rng.random() < 0.3:
                levels ^= 1 << rng.randrange(4)
            kinds = [b.update(levels >> i & 1, t) for i, b in enumerate(old)]
            got = new.update(levels, t)
            presses = sum(1 << i for i, k in enumerate(kinds) if k == PRESS)
            holds = sum(1 << i for i, k in enumerate(kinds) if k == HOLD)
            assert (new.presses, new.holds, got) == (presses, holds, presses | holds), step
            lefts = [b.left for b in old if b.left >= 0]
            assert new.left == (min(lefts) if lefts else FAR_MS), step
            timers = [b.timer(t) for b in old if b.timer(t) is not None]
            assert buttons_timer(new, t) == (min(timers) if timers else None), step
            assert one.update(levels & 1, t) == kinds[0], step
            assert one.left == old[0].left and one.timer(t) == old[0].timer(t), step
            assert all(k in (NONE, PRESS, HOLD) for k in kinds)


def test_the_glitch_filters_usual_case_does_what_the_general_one_did():
    # SpotSensors.update takes the pins of a shot falling or standing up together (no
    # fault, nothing lying past its fall, one age for every spot waiting) without its
    # general timers; before, every update ran them (tests/old_inputs.py keeps the
    # sensors as they were). On random reports (shots, bounces, flaps, pins left lying)
    # at random times, what the board reads must be the old sensors', step by step.
    import random

    from old_inputs import OldSpotSensors

    from boardlib.inputs import SpotSensors

    for seed, options in enumerate(({}, {"glitch_ms": 0}, {"stuck_ms": 300, "flap_limit": 3},
                                    {"glitch_ms": 15, "flap_window_ms": 200})):
        rng = random.Random(seed)
        old, new = OldSpotSensors(**options), SpotSensors(**options)
        t = rng.randrange(1 << 30)  # across the ticks' wrap too
        standing = 31
        for step in range(20000):
            t = (t + rng.choice((1, 5, 10, 39, 40, 41, 60, 100, 400, 2000))) & ((1 << 30) - 1)
            roll = rng.random()
            if roll < 0.15:
                standing = 31 & ~rng.randrange(1, 32)  # a shot's pins fall together
            elif roll < 0.3:
                standing = 31
            elif roll < 0.4:
                standing ^= 1 << rng.randrange(5)  # one spot bounces or is stood up
            assert new.update(standing, t) == old.update(standing, t), step
            assert (new.down, new.fault, new.flapping, new.next_at) == (
                old.down, old.fault, old.flapping, old.next_at), step
            assert [new.fault_code(i) for i in range(1, 6)] == [
                old.fault_code(i) for i in range(1, 6)], step
