"""Shot assembly (boardlib.shot fed by boardlib.inputs) against HARDWARE.md "How a shot is seen".

Each case plays a timeline from tests/timelines/ through the real Levels, SpotSensors,
Button and ShotAssembler at a 5 ms poll (tests/device/shot_cases.py), on CPython and on
the MicroPython unix port (all cases in one unix-port process). Expected results are worked
out by hand from the spec with the default settings: glitch 40 ms, debounce 20 ms, hold
800 ms, settle 1500 ms, and a timeline press lasting 100 ms. So a pin dark from T is down at
T+40, standing again from U is up at U+40; a press at P gives PRESS at P+120 (release +
debounce); a hold from P gives HOLD at P+800; a shot ends by itself 1500 ms after its last
change.
"""

import os
import random
import subprocess

import pytest
from device.shot_cases import direct_calls, play, play_levels
from device.shot_reading import shot_for
from device.shot_reading import timer as shot_timer
from helpers import micropython_value, run_on_micropython
from hypothesis import given, settings
from hypothesis import strategies as st

from tools.port import upy

pytestmark = pytest.mark.long(3)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


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
    # pins 2 and 3 down at 1040 and stuck from 181000 (reported, still down); standing
    # again from 201000, up at 201040: the shot scores both at 202540.
    "stuck_fall": [[202540, "shot", 0b00110, 0, 0, 0, 0]],
    # the same pins, ok at 200000 (seen at 200120): the shot with both pins. Stood up at
    # 205000 between shots; pin 1 down 210040, up 210540: 212040.
    "stuck_ok": [[200120, "shot", 0b00110, 0, 0, 0, 0], [212040, "shot", 0b00001, 0, 0, 0, 0]],
}


def random_steps(rng, count):
    steps = []
    for _ in range(count):
        pressed = rng.choice((0, 0, 0, 1, 2, 4, 8))
        steps.append([5 * rng.randint(1, 80), rng.randint(0, 31), pressed])
    return steps


RANDOM_RUNS = [random_steps(random.Random(seed), 40) for seed in range(40)]


@pytest.fixture(scope="module")
def unix_port():
    calls = [["play", [timeline_text(name)]] for name in CASES]
    calls += [["poll_without_allocating", [timeline_text(name)]] for name in CASES]
    calls += [["play_levels", [steps]] for steps in RANDOM_RUNS]
    calls += [["direct_calls", []]]
    results = [micropython_value(r) for r in run_on_micropython("shot_cases", calls)]
    n = len(CASES)
    return {
        "cases": dict(zip(CASES, results[:n], strict=True)),
        "locked": dict(zip(CASES, results[n : 2 * n], strict=True)),
        "random": results[2 * n : -1],
        "direct": results[-1],
    }


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_on_cpython(name):
    assert play(timeline_text(name)) == CASES[name]


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
    got = direct_calls() if interpreter == "cpython" else unix_port["direct"]
    assert got == DIRECT_EXPECTED


@pytest.mark.parametrize("name", sorted(CASES))
def test_steady_state_polling_allocates_nothing(name, unix_port):
    expected = CASES[name]
    shots = len([r for r in expected if r[1] == "shot"])
    assert unix_port["locked"][name] == [shots, len(expected) - shots, None]


def test_random_levels_agree_and_never_count_blocked_spots(unix_port):
    shots = 0
    for steps, port_result in zip(RANDOM_RUNS, unix_port["random"], strict=True):
        results, problems = play_levels(steps)
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
                 "tools/sim/board/timeline.py"):
        out = tmp_path / (os.path.basename(path) + ".mpy")
        proc = subprocess.run([mpy_cross, "-march=xtensawin", "-o", str(out), path],
                              cwd=ROOT, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


def test_held_buttons_read_as_each_rules_id_says():
    # CONTRACT section 4: a held carom is a casino in ceb only; a held foul is the rules'
    # second code (quilles in ceb, stop30 in russian, the one kind of fault in ddbu).
    from boardlib import shot

    asm = shot.ShotAssembler()
    asm.pins, asm.carom, asm.foul_holds, asm.foul_presses = 0b00100, 2, 1, 1
    assert shot_for(asm, "ceb") == (0b00100, 2, ("quilles", "foul"))
    assert shot_for(asm, "russian") == (0b00100, 1, ("stop30", "foul"))
    assert shot_for(asm, "ddbu") == (0b00100, 1, ("foul", "foul"))
    assert shot.BUTTON_NAMES[shot.CAROM] == "carom" and shot.BUTTON_NAMES[shot.UNDO] == "undo"


def test_the_assemblers_button_kinds_are_the_buttons():
    # boardlib.shot keeps the Button results as constants of its own (no lookup of an
    # imported name per press): they must be boardlib.inputs' own
    from boardlib import inputs, shot

    assert (shot._NONE, shot._PRESS, shot._HOLD) == (inputs.NONE, inputs.PRESS, inputs.HOLD)


def test_the_assemblers_record_is_the_events_record():
    # record_into folds rules_core.events' numbers of a shot's record: they must be events'
    from boardlib import shot
    from rules_core import events

    assert (shot._KIND_SHOT, shot._FOUL_ORDINARY, shot._MAX_OTHER) == (
        events.KIND_SHOT, events.FOUL_ORDINARY, events.MAX_OTHER)


def test_the_record_the_board_makes_is_the_one_the_rules_encode():
    # The board writes a shot's record itself (no tuple of foul names); it must be the
    # very record events.encode_shot makes of shot_for(), or refuse where it refuses.
    from boardlib import shot
    from rules_core import events
    from rules_core.settings import RULES_IDS

    asm = shot.ShotAssembler()
    buf = bytearray(4)
    for rules in RULES_IDS:
        second = 1 << events.FOUL_NAMES.index(shot.SECOND_FOUL[rules])
        casino = rules in shot.CASINO_RULES
        for holds in range(10):
            for presses in range(10):
                for carom in (0, 1, 2):
                    asm.pins, asm.carom = 0b10101, carom
                    asm.foul_holds, asm.foul_presses = holds, presses
                    try:
                        expected = events.encode_shot(*shot_for(asm, rules))
                    except events.EventError:
                        expected = None
                    buf[:] = b"\xee" * 4
                    made = asm.record_into(buf, second, casino)
                    if expected is None:
                        assert not made and buf == b"\xee" * 4, (rules, holds, presses)
                    else:
                        assert made and bytes(buf) == expected, (rules, holds, presses, carom)


def test_after_a_poll_left_is_what_timer_says():
    # The board reads `left` after poll() instead of calling timer() as well: the two must
    # agree after every poll of a random stream of spots and buttons.
    import random

    from boardlib import shot
    from boardlib.inputs import HOLD, NONE, PRESS

    rng = random.Random(3)
    asm = shot.ShotAssembler(settle_ms=300)
    t = 0
    for _ in range(20000):
        t += rng.choice((1, 5, 20, 100, 400))
        roll = rng.random()
        if roll < 0.3:
            asm.spots(rng.choice((0, 0, 1, 5, 31)), t, rng.choice((0, 0, 0, 2)))
        elif roll < 0.6:
            asm.button(rng.randrange(4), rng.choice((NONE, PRESS, PRESS, HOLD)), t)
        asm.poll(t)
        timer = shot_timer(asm, t)
        assert asm.left == (-1 if timer is None else timer), t
