"""Every screen, through the real drivers and fake pins, into the chip emulators.

What the emulators decode must be exactly what a person should read, written by hand
below for both module kinds (two TM1637 clock modules: the colon is the dot of each
module's second cell; one MAX7219: a decimal point). Broken drivers must make the same
check fail. All device code runs on CPython and, in one process, on the MicroPython
unix port (tests/device/display_cases.py).
"""

import pytest
from helpers import device_value

# (function, args, kwargs, two TM1637 modules read, MAX7219 reads)
SCREENS = [
    ("scores", (25, 130, 1), {}, " . 25 130", " . 25 130"),
    ("scores", (25, 132, 2), {}, "  25 132.", "  25 132."),
    ("scores", (4321, 12000, 1), {}, "4.3219999", "4.3219999"),
    ("shot_points", (1, 6, 1), {}, "  +6    ", "  +6    "),
    ("shot_points", (1, 8, 2), {}, "FouL  +8", "FouL  +8"),
    ("shot_points", (2, 4, 1), {"foul": False}, "  +4oPEn", "  +4oPEn"),
    ("shot_points", (1, 2, 1), {"capped": True}, " \u203e+2    ", " \u203e+2    "),
    ("remaining20", (1, 18), {}, "r 18    ", "r 18    "),
    ("distance", (2,), {}, "    dI5t", "    dI5t"),
    ("break_clock", (300,), {}, "brK  5:00", "brK  5.00"),
    ("break_clock", (59,), {}, "brK  0:59", "brK  0.59"),
    ("winner", (1,), {}, " Win    ", " Win    "),
    ("tie", (), {}, " tIE tIE", " tIE tIE"),
    ("set_score", (1, 2), {}, "5Et15Et2", "5Et15Et2"),
    ("last_series", (1,), {}, "LA5t    ", "LA5t    "),
    ("error", (7,), {}, "Err    7", "Err    7"),
    ("text", ("FIrSt 2",), {}, "FIr5t 2 ", "FIr5t 2 "),
    ("text", ("d2   30",), {}, "d2   30 ", "d2   30 "),
    ("scores", (0, 0, 1), {}, " .  0   0", " .  0   0"),
    # pins set? the spots without a pin on the half of the player at the table, the turn
    # dot where the scores have it; a shot begun with a spot empty ("no")
    ("castle", (0b01010, 1, "Pin", 1), {}, " .2 4 Pin", " .2 4 Pin"),
    ("castle", (0b10001, 2, "Pin", 2), {}, "Pin1   5.", "Pin1   5."),
    ("castle", (0b00010, 2, "no"), {}, "no  2   ", "no  2   "),
    # ceb: the marked-ball ring (CEB 21.1) in the first cell of the marked player's half,
    # beside the turn dot; team play's players at the table (CEB 28).
    ("scores", (25, 130, 1), {"marked": 2}, " . 25\u00b0130", " . 25\u00b0130"),
    ("scores", (7, 60, 1), {"marked": 1}, "\u00b0.  7  60", "\u00b0.  7  60"),
    ("members", ([2, 1], 2, 1), {}, "\u00b0 A2  b1.", "\u00b0 A2  b1."),
    ("members", ([1, 2], 1, 2), {}, " . A1\u00b0 b2", " . A1\u00b0 b2"),
    ("shot_points", (2, 12, 2), {}, "     +12", "     +12"),
    ("mark_ball", (1,), {}, "\u00b0    +12", "\u00b0    +12"),
    ("mark_ball", (2,), {}, "\u00b0   \u00b0+12", "\u00b0   \u00b0+12"),
]
CALLS = [(name, args, kwargs) for name, args, kwargs, _, _ in SCREENS]



@pytest.fixture(scope="module", params=["cpython", "micropython"])
def results(request):
    return device_value(request.param, "display_cases", "run", CALLS)


def mismatches(seen, column):
    """Screens that do not read as written by hand, or that the chips found errors in."""
    wrong = []
    errors_before = 0
    for screen, (visible, errors) in zip(SCREENS, seen, strict=True):
        expected = screen[column]
        if visible != expected or errors != errors_before:
            wrong.append((screen[0], screen[1], expected, visible, errors))
        errors_before = errors
    return wrong


def test_every_screen_reads_right_on_two_tm1637_modules(results):
    assert mismatches(results["tm1637"], 3) == []


def test_every_screen_reads_right_on_the_max7219(results):
    assert mismatches(results["max7219"], 4) == []


def test_every_layout_function_is_covered():
    import builtins

    from boardlib import layout

    public = {n for n in dir(layout) if not n.startswith("_") and callable(getattr(layout, n))}
    public -= {"const", "font"}
    # the builtins it takes into its globals (a builtin is looked for there first)
    public -= {n for n in public if getattr(layout, n) is getattr(builtins, n, None)}
    assert public <= {name for name, *_ in SCREENS}


@pytest.mark.parametrize("broken", ["msb_first", "no_ack"])
def test_a_broken_tm1637_driver_fails_the_same_check(results, broken):
    wrong = mismatches(results[broken], 3)
    assert len(wrong) == len(SCREENS)  # not one screen survives
    assert results[broken][-1][1] > 0  # and the chips counted protocol errors


def test_a_max7219_driver_with_wrong_registers_fails_the_same_check(results):
    assert len(mismatches(results["wrong_register"], 4)) == len(SCREENS)


@pytest.mark.parametrize("kind", ["tm1637", "max7219"])
def test_show_skips_identical_frames_and_refresh_forces_one(results, kind):
    r = results["facade_" + kind]
    assert (r["first"], r["same"], r["same_wire"], r["refreshed"]) == (True, False, 0, True)


@pytest.mark.parametrize("kind, levels", [("tm1637", (3, 3)), ("max7219", (7,))])
def test_brightness_reaches_the_chips(results, kind, levels):
    assert tuple(results["facade_" + kind]["levels"]) == levels


@pytest.mark.parametrize("kind", ["tm1637", "max7219"])
def test_the_facade_writes_without_bus_errors(results, kind):
    assert results["facade_" + kind]["errors"] == 0


@pytest.mark.parametrize("kind", ["tm1637", "max7219"])
def test_bad_calls_are_refused(results, kind):
    assert results["facade_" + kind]["refused"] == [True, True]


def test_a_bus_error_is_survived_and_the_frame_written_next_time(results):
    assert tuple(results["flaky"]) == (False, " " * 8, True, "   5   6.")


def test_a_max7219_is_sent_only_the_digits_that_changed(results):
    # docs/performance.md: a register keeps its byte, so a frame goes out as the digits
    # whose byte changed; after refresh() (a module that lost power) and after a write a
    # bus error cut short, all of them
    first, one_cell, refreshed, cut_short, again = results["max_changed_digits"]
    assert first == [[8, 7, 6, 5, 4, 3, 2, 1], " . 12  34"]
    assert one_cell == [[1], " . 12  35"]  # the rightmost cell is digit register 1
    assert refreshed == [[8, 7, 6, 5, 4, 3, 2, 1], " . 12  35"]
    assert cut_short[0] == [8, 6, 5]  # digits that changed, the third write failing
    assert again == [[8, 7, 6, 5, 4, 3, 2, 1], "   1   2."]


def test_clock_modules_show_the_turn_on_the_colon_when_asked(results):
    without, with_marker = results["clock_modules"][:6], results["clock_modules"][6:]
    assert without == ["  25 130", "  25 130", "brK  4:30",  # the marker is lost...
                       "  25\u00b0130", "  25\u00b0130", "\u00b0 A1  b2"]
    assert with_marker == ["  :25 130", "  25 1:30", "brK  4:30",  # ...unless moved
                           "  :25\u00b0130", "  25\u00b01:30", "\u00b0 :A1  b2"]


def test_showing_screens_allocates_nothing_on_micropython(results):
    if results["no_alloc"] is None:
        pytest.skip("heap_lock exists on MicroPython only")
    assert [tuple(r) for r in results["no_alloc"]] == [
        (4, "brK  3:20", 0),
        (4, "brK  3.20", 0),
    ]


def test_a_board_without_display_takes_every_call(results):
    assert results["none"] == 2
