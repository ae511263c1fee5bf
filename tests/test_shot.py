"""Shot assembly (boardlib.shot fed by boardlib.inputs) against HARDWARE.md "How a shot is seen".

Each case plays a timeline from tests/timelines/ through the real Levels, SpotSensors,
Button and ShotAssembler at a 5 ms poll, on CPython and on the MicroPython unix port (all
cases in one unix-port process). Expected results are worked out by hand from the spec
with the default settings: glitch 40 ms, debounce 20 ms, hold 800 ms, settle 1500 ms, and
a timeline press lasting 100 ms. So a pin dark from T is down at T+40, standing again
from U is up at U+40; a press at P gives PRESS at P+120 (release + debounce); a hold from
P gives HOLD at P+800; a shot ends by itself 1500 ms after its last change.
"""

import os
import random
import subprocess

import pytest
from helpers import on_cpython, run_functions_on_unix
from hypothesis import given, settings
from hypothesis import strategies as st

from tools import upy

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


# ---- device code: runs unchanged on CPython and on the unix port --------------------------

def play(text, tail_ms=3000):
    """Play a timeline; returns [time, "shot", pins, carom, foul, presses, holds] per shot
    and [time, "undo" | "menu"] per command."""
    from boardlib import shot
    from boardlib.inputs import Button, SpotSensors
    from tools.simboard import timeline

    levels = timeline.Levels(timeline.parse(text))
    sensors = SpotSensors()
    asm = shot.ShotAssembler()
    buttons = [Button(), Button(), Button(), Button()]
    which = (shot.CAROM, shot.FOUL, shot.OK, shot.UNDO)  # in timeline.BUTTONS order
    out = []
    now = 0
    while now <= levels.end_ms + tail_ms:
        standing = levels.advance(now)
        asm.spots(sensors.update(standing, now), now, sensors.fault)
        for i in range(4):
            asm.button(which[i], buttons[i].update(levels.pressed(i), now), now)
        result = asm.poll(now)
        if result == shot.SHOT:
            out.append([now, "shot", asm.pins, asm.carom, asm.foul,
                        asm.foul_presses, asm.foul_holds])
        elif result == shot.UNDO:
            out.append([now, "undo"])
        elif result == shot.MENU:
            out.append([now, "menu"])
        elif result != shot.NONE:
            out.append([now, "unknown %d" % result])
        now += 5
    return out


def play_levels(steps):
    """Feed raw levels [[duration_ms, standing_mask, buttons_mask], ...] at a 5 ms poll.

    Returns [results, problems]: problems lists every shot that counted a spot that was
    down when the shot began, a spot that was never down during the shot, or a spot that
    was faulted during the shot.
    """
    from boardlib import shot
    from boardlib.inputs import Button, SpotSensors

    sensors = SpotSensors(flap_limit=6, flap_window_ms=300, stuck_ms=2000)
    asm = shot.ShotAssembler(settle_ms=300)
    buttons = [Button(), Button(), Button(), Button()]
    which = (shot.CAROM, shot.FOUL, shot.OK, shot.UNDO)
    results = []
    problems = []
    now = 0
    previous = -1
    blocked = 0  # down when the current shot began, worked out here from what was fed
    seen = 0  # every spot down at some poll of the current shot
    faulted = 0  # every spot faulted at some poll of the current shot
    for duration, standing, pressed in steps:
        for _ in range(duration // 5):
            down = sensors.update(standing, now)
            was_busy = asm.busy
            asm.spots(down, now, sensors.fault)
            if asm.busy and not was_busy:
                blocked = previous & down
                seen = 0
                faulted = 0
            for i in range(4):
                was_busy = asm.busy
                asm.button(which[i], buttons[i].update(pressed >> i & 1, now), now)
                if asm.busy and not was_busy:
                    blocked = down
                    seen = 0
                    faulted = 0
            seen |= down
            faulted |= sensors.fault
            result = asm.poll(now)
            if result == shot.SHOT:
                results.append([now, asm.pins, asm.carom, asm.foul])
                if asm.pins & blocked or asm.pins & ~seen or asm.pins & faulted:
                    problems.append([now, asm.pins, blocked, seen, faulted])
            elif result != shot.NONE:
                results.append([now, result])
            previous = down
            now += 5
    return [results, problems]


def poll_without_allocating(text, tail_ms=3000):
    """Play a timeline with the heap locked after set-up (unix port only).

    Returns [shots, commands, None] or [.., .., time] of the poll that allocated.
    """
    import micropython

    from boardlib import shot
    from boardlib.inputs import Button, SpotSensors
    from tools.simboard import timeline

    levels = timeline.Levels(timeline.parse(text))
    sensors = SpotSensors()
    asm = shot.ShotAssembler()
    buttons = [Button(), Button(), Button(), Button()]
    which = (shot.CAROM, shot.FOUL, shot.OK, shot.UNDO)
    shots = 0
    commands = 0
    now = 0
    end = levels.end_ms + tail_ms
    micropython.heap_lock()
    try:
        while now <= end:
            standing = levels.advance(now)
            asm.spots(sensors.update(standing, now), now, sensors.fault)
            for i in range(4):
                asm.button(which[i], buttons[i].update(levels.pressed(i), now), now)
            result = asm.poll(now)
            if result == shot.SHOT:
                shots += 1
            elif result != shot.NONE:
                commands += 1
            now += 5
    except MemoryError:
        micropython.heap_unlock()
        return [shots, commands, now]
    micropython.heap_unlock()
    return [shots, commands, None]


def direct_calls():
    """Drive a ShotAssembler by hand; returns what it reported at each step."""
    from boardlib import shot
    from boardlib.inputs import HOLD, NONE, PRESS

    asm = shot.ShotAssembler(settle_ms=1000)
    out = []
    asm.spots(0, 0)
    asm.button(shot.FOUL, PRESS, 100)
    asm.button(shot.FOUL, HOLD, 200)
    asm.button(shot.FOUL, PRESS, 300)
    asm.spots(0b00100, 400)
    asm.button(shot.CAROM, PRESS, 450)
    asm.button(shot.CAROM, HOLD, 460)
    asm.button(shot.CAROM, PRESS, 470)
    out.append([asm.busy, asm.live_pins, asm.live_carom, asm.live_foul])
    asm.button(shot.OK, HOLD, 500)
    out.append([asm.poll(500) == shot.MENU, asm.busy])
    asm.button(shot.OK, PRESS, 600)
    out.append([asm.poll(600) == shot.SHOT, asm.busy, asm.pins, asm.carom, asm.foul,
                asm.foul_presses, asm.foul_holds, asm.foul_count,
                list(asm.foul_codes("quilles"))])
    asm.button(shot.UNDO, HOLD, 700)
    out.append(asm.poll(700) == shot.UNDO)
    asm.button(shot.CAROM, NONE, 800)
    out.append([asm.busy, asm.poll(800)])
    for which, kind in ((9, PRESS), (shot.CAROM, 7)):
        try:
            asm.button(which, kind, 900)
            out.append("no error")
        except ValueError as e:
            out.append(str(e))
    out.append([asm.busy, asm.poll(900)])
    for i in range(10):
        asm.button(shot.OK, PRESS, 1000 + i)
    shots = 0
    while asm.poll(1100) == shot.SHOT:
        shots += 1
    out.append([shots, asm.dropped])
    asm.button(shot.CAROM, PRESS, 2000)
    asm.button(shot.OK, PRESS, 2001)
    asm.button(shot.CAROM, PRESS, 2002)
    asm.reset()
    out.append([asm.busy, asm.poll(2003)])
    asm.spots(0b00110, 2100)
    asm.button(shot.FOUL, PRESS, 2200)
    out.append([asm.busy, asm.live_pins, asm.live_foul])
    asm.button(shot.UNDO, PRESS, 2300)
    out.append([asm.busy, asm.live_pins, asm.live_foul])
    asm.button(shot.UNDO, PRESS, 2400)
    out.append([asm.busy, asm.live_pins, asm.poll(2400)])
    asm.button(shot.CAROM, PRESS, 3000)
    out.append([asm.poll(3995), asm.poll(4000) == shot.SHOT, asm.pins, asm.carom])
    for settle in (0, "1500"):
        try:
            shot.ShotAssembler(settle_ms=settle)
            out.append("no error")
        except ValueError as e:
            out.append(str(e))
    return out


# ---- running it on both interpreters ---------------------------------------------------------

def timeline_text(name):
    with open(os.path.join(HERE, "timelines", name + ".timeline")) as f:
        return f.read()


# [time, "shot", pins, carom, foul, foul presses, foul holds]; pins: bit 0 = spot 1.
CASES = {
    # spot 2's 35 ms blip is nothing; spot 4 down at 3040, up at 3085, settled at 4585.
    "glitch": [[4585, "shot", 0b01000, 0, 0, 0, 0]],
    # no wobble counts, so the ok press (3000+120) is a shot that scored nothing.
    "wobble": [[5120, "shot", 0, 0, 0, 0, 0]],
    # pins 1 and 2 down at 1040; pin 2 stands at 4040; settled at 5540, both count.
    "fall_and_rise": [[5540, "shot", 0b00011, 0, 0, 0, 0]],
    # spot 3 blocked: last change 2040 (pin 1 up), 3540; then pin 3 alone: 6540 + 1500.
    "blocked": [[3540, "shot", 0b00001, 0, 0, 0, 0], [8040, "shot", 0b00100, 0, 0, 0, 0]],
    # carom press seen at 3120, nothing else: 4620.
    "carom_settle": [[4620, "shot", 0, 1, 0, 0, 0]],
    # ok at 1120 (scoreless), ok at 4120 with pin 2 still down, menu at 9000+800.
    "ok": [[1120, "shot", 0, 0, 0, 0, 0], [4120, "shot", 0b00010, 0, 0, 0, 0], [9800, "menu"]],
    # pin 4 up at 2040 -> 3540; foul hold at 5800 -> 7300; fouls at 9120, 9620 -> 11120.
    "foul": [
        [3540, "shot", 0b01000, 0, 1, 1, 0],
        [7300, "shot", 0, 0, 2, 0, 1],
        [11120, "shot", 0, 0, 1, 2, 0],
    ],
    # casino held from 1200, seen at 2000, after both pins stood (1540, 1640): 3500.
    "hold_carom": [[3500, "shot", 0b00101, 2, 0, 0, 0]],
    # undo at 1120; carom cleared at 2620 (no shot); foul cleared at 6420, pin 2 up at
    # 6640 -> 8140 without foul; undo at 10120; the shot with pin 5 dropped at 12320.
    # spot 1 flaps (50 ms dark, 20 ms lit): down at 1040, faulted at its 16th change (1540),
    # so that shot ends with no result; lit for good from 2380, released at 3380; then a
    # real fall at 6000 (down 6040, up 6340) scores at 7840.
    "flap": [[7840, "shot", 0b00001, 0, 0, 0, 0]],
    "undo": [[1120, "undo"], [8140, "shot", 0b00010, 0, 0, 0, 0], [10120, "undo"]],
}


def random_steps(rng, count):
    steps = []
    for _ in range(count):
        pressed = rng.choice((0, 0, 0, 1, 2, 4, 8))
        steps.append([5 * rng.randint(1, 80), rng.randint(0, 31), pressed])
    return steps


RANDOM_RUNS = [random_steps(random.Random(seed), 40) for seed in range(40)]


@pytest.fixture(scope="module")
def unix_port(tmp_path_factory):
    calls = [["play", [timeline_text(name)]] for name in CASES]
    calls += [["poll_without_allocating", [timeline_text(name)]] for name in CASES]
    calls += [["play_levels", [steps]] for steps in RANDOM_RUNS]
    calls += [["direct_calls", []]]
    funcs = [play, play_levels, poll_without_allocating, direct_calls]
    results = run_functions_on_unix(funcs, calls, tmp_path_factory.mktemp("shot"))
    n = len(CASES)
    return {
        "cases": dict(zip(CASES, results[:n], strict=True)),
        "locked": dict(zip(CASES, results[n : 2 * n], strict=True)),
        "random": results[2 * n : -1],
        "direct": results[-1],
    }


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_on_cpython(name):
    assert on_cpython(play, timeline_text(name)) == CASES[name]


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_on_unix_port(name, unix_port):
    assert unix_port["cases"][name] == CASES[name]


DIRECT_EXPECTED = [
    # spot 3 fell after two foul presses and a hold; carom press, hold, press: casino
    [True, 0b00100, 2, 2],
    # ok held: the menu, the shot stays in progress
    [True, True],
    # ok pressed: the shot, with every foul mark, held fouls first
    [True, False, 0b00100, 2, 2, 2, 1, 3, ["quilles", "foul", "foul"]],
    # undo held while idle is undo
    True,
    # NONE is no button event
    [False, 0],
    "unknown button 9",
    "button kind must be PRESS or HOLD, not 7",
    [False, 0],
    # ten results with no poll in between: eight wait, two are lost and counted
    [8, 2],
    # reset drops the shot in progress and what was waiting
    [False, 0],
    # spot 3 was still down from the first shot: spot 2 falls and counts, then a foul
    [True, 0b00010, 1],
    # undo clears the foul, the pin still counts; undo again drops the shot unscored
    [True, 0b00010, 0],
    [False, 0, 0],
    # settle_ms=1000: a carom at 3000 ends at 4000, not before
    [0, True, 0, 1],
    "settle_ms must be a whole number >= 1, not 0",
    "settle_ms must be a whole number >= 1, not '1500'",
]


@pytest.mark.parametrize("interpreter", ["cpython", "unix port"])
def test_direct_calls(interpreter, unix_port):
    got = on_cpython(direct_calls) if interpreter == "cpython" else unix_port["direct"]
    assert got == DIRECT_EXPECTED


@pytest.mark.parametrize("name", sorted(CASES))
def test_steady_state_polling_allocates_nothing(name, unix_port):
    expected = CASES[name]
    shots = len([r for r in expected if r[1] == "shot"])
    assert unix_port["locked"][name] == [shots, len(expected) - shots, None]


def test_random_levels_agree_and_never_count_blocked_spots(unix_port):
    shots = 0
    for steps, port_result in zip(RANDOM_RUNS, unix_port["random"], strict=True):
        results, problems = on_cpython(play_levels, steps)
        assert problems == []
        assert port_result == [results, problems]
        shots += len(results)
    assert shots > 40  # the runs do exercise the assembler


level_steps = st.lists(
    st.tuples(
        st.integers(1, 100).map(lambda n: n * 5),
        st.integers(0, 31),
        st.sampled_from((0, 0, 1, 2, 4, 8, 3, 15)),
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(level_steps)
def test_random_raw_levels_never_raise_nor_count_a_blocked_spot(steps):
    results, problems = play_levels([list(s) for s in steps])
    assert problems == []


def test_device_modules_cross_compile_for_the_esp32(tmp_path):
    mpy_cross = os.path.join(os.path.dirname(upy.binary()), "mpy-cross")
    for path in ("boardlib/ticks.py", "boardlib/inputs.py", "boardlib/shot.py",
                 "tools/simboard/timeline.py"):
        out = tmp_path / (os.path.basename(path) + ".mpy")
        proc = subprocess.run([mpy_cross, "-march=xtensawin", "-o", str(out), path],
                              cwd=ROOT, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
