"""Every screen, through the real drivers and fake pins, into the chip emulators.

What the emulators decode must be exactly what a person should read, written by hand
below for both module kinds (two TM1637 clock modules: the colon is the dot of each
module's second cell; one MAX7219: a decimal point). Broken drivers must make the same
check fail. All device code runs on CPython and, in one process, on the MicroPython
unix port.
"""

import ast

import pytest

from tools import upy

# (function, args, kwargs, two TM1637 modules read, MAX7219 reads)
SCREENS = [
    ("scores", (25, 130, 1), {}, " . 25 130", " . 25 130"),
    ("scores", (25, 132, 2), {}, "  25 132.", "  25 132."),
    ("scores", (4321, 12000, 1), {}, "4.3219999", "4.3219999"),
    ("shot_points", (1, 6, 1), {}, "  +6    ", "  +6    "),
    ("shot_points", (1, 8, 2), {}, "FouL  +8", "FouL  +8"),
    ("shot_points", (2, 4, 1), {"foul": False}, "  +4oPEn", "  +4oPEn"),
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
]
CALLS = [(name, args, kwargs) for name, args, kwargs, _, _ in SCREENS]

DEVICE = r'''
import sys

from boardlib import layout
from boardlib.display import Display
from boardlib.max7219 import MAX7219
from boardlib.tm1637 import TM1637
from tools.simboard import max7219_display, tm1637_display
from tools.simboard.chips import MAX7219Emulator, TM1637Emulator, TM1637Pair
from tools.simboard.pins import FakePin, Wire
from tools.simboard.softspi import SoftSPI

sys.path.append("tests")  # the deliberately broken drivers
from broken_drivers import MsbFirst, NoAckClock  # noqa: E402


class WrongRegister(MAX7219):
    """A broken driver: digit registers counted from 0 instead of 1."""

    def _register(self, address, data):
        if 1 <= address <= 8:
            address -= 1
        MAX7219._register(self, address, data)


class Flaky:
    """A module whose bus fails once."""

    def __init__(self, chip):
        self.chip = chip
        self.failures = 1

    def write(self, segs):
        if self.failures:
            self.failures -= 1
            raise OSError(5)
        self.chip.write(segs)


def tm_rig(cls):
    wire = Wire()
    pins = []
    for name in ("clk1", "dio1", "clk2", "dio2"):
        pins.append(FakePin(name, 1, wire, FakePin.OPEN_DRAIN))
    screen = TM1637Pair(TM1637Emulator(pins[0], pins[1]), TM1637Emulator(pins[2], pins[3]))
    return Display.tm1637(cls(pins[0], pins[1]), cls(pins[2], pins[3])), screen


def max_rig(cls):
    wire = Wire()
    sck, mosi, cs = FakePin("sck", 0, wire), FakePin("mosi", 0, wire), FakePin("cs", 1, wire)
    screen = MAX7219Emulator(mosi, sck, cs)
    return Display.max7219(cls(SoftSPI(sck, mosi), cs)), screen


def screens(rig, calls):
    display, screen = rig
    buf = bytearray(8)
    out = []
    for name, args, kwargs in calls:
        getattr(layout, name)(buf, *args, **kwargs)
        display.show(buf)
        out.append((screen.visible(), screen.errors))
    return out


def log_size(screen):
    if isinstance(screen, TM1637Pair):
        return len(screen.left.clk.wire.log)
    return len(screen.clk.wire.log)


def facade(rig):
    display, screen = rig
    out = {}
    buf = bytearray(8)
    layout.scores(buf, 12, 34, 1)
    out["first"] = display.show(buf)
    before = log_size(screen)
    out["same"] = display.show(bytearray(buf))
    out["same_wire"] = log_size(screen) - before
    display.refresh()
    out["refreshed"] = display.show(buf)
    display.brightness(3)
    if isinstance(screen, TM1637Pair):
        out["levels"] = (screen.left.brightness, screen.right.brightness)
    else:
        out["levels"] = (screen.intensity,)
    display.off()
    out["off"] = screen.visible()
    display.on()
    out["on"] = screen.visible()
    refused = []
    for call in ("brightness8", "short"):
        try:
            if call == "brightness8":
                display.brightness(8)
            else:
                display.show(bytearray(4))
            refused.append(False)
        except ValueError:
            refused.append(True)
    out["refused"] = refused
    out["errors"] = screen.errors
    return out


def flaky():
    display, screen = max_rig(MAX7219)
    display._chip = Flaky(display._chip)
    buf = bytearray(8)
    layout.scores(buf, 5, 6, 2)
    first = display.show(buf)
    seen = screen.visible()
    second = display.show(buf)
    return (first, seen, second, screen.visible())


def clock_modules():
    """Colon-only TM1637 modules, with and without moving the marker to the colon."""
    out = []
    buf = bytearray(8)
    for rig in (tm_rig(TM1637), tm1637_display(clock_modules=True)):
        rig[1].left.colon_only = rig[1].right.colon_only = True
        for turn in (1, 2):
            layout.scores(buf, 25, 130, turn)
            rig[0].show(buf)
            out.append(rig[1].visible())
        layout.break_clock(buf, 270)
        rig[0].show(buf)
        out.append(rig[1].visible())
    return out


def steps_locked(display, buf):
    """Draw and show screens with the heap locked; how many steps got through."""
    import micropython

    done = 0
    micropython.heap_lock()
    try:
        layout.scores(buf, 1234, 56, 2)
        done = 1
        display.show(buf)
        done = 2
        display.show(buf)
        done = 3
        layout.break_clock(buf, 200)
        display.show(buf)
        done = 4
    except MemoryError:
        pass
    micropython.heap_unlock()
    return done


def no_alloc():
    if sys.implementation.name != "micropython":
        return None
    out = []
    for make in (tm1637_display, max7219_display):
        display, screen = make(Wire(keep=False))  # a kept log would grow, as it should
        buf = bytearray(8)
        layout.scores(buf, 1, 2, 1)
        display.show(buf)
        out.append((steps_locked(display, buf), screen.visible(), screen.errors))
    return out


def no_display():
    display = Display.none()
    buf = bytearray(8)
    layout.scores(buf, 3, 4, 1)
    display.show(buf)
    display.brightness(2)
    display.off()
    display.on()
    return display.brightness()


def run(calls):
    return {
        "none": no_display(),
        "no_alloc": no_alloc(),
        "clock_modules": clock_modules(),
        "tm1637": screens(tm1637_display(), calls),
        "max7219": screens(max7219_display(), calls),
        "msb_first": screens(tm_rig(MsbFirst), calls),
        "no_ack": screens(tm_rig(NoAckClock), calls),
        "wrong_register": screens(max_rig(WrongRegister), calls),
        "facade_tm1637": facade(tm1637_display()),
        "facade_max7219": facade(max7219_display()),
        "flaky": flaky(),
    }
'''


@pytest.fixture(scope="module", params=["cpython", "micropython"])
def results(request):
    if request.param == "cpython":
        namespace = {}
        exec(DEVICE, namespace)
        return namespace["run"](CALLS)
    proc = upy.run(["-c", DEVICE + "\nprint(repr(run(%r)))" % (CALLS,)], timeout=60)
    assert proc.returncode == 0, proc.stderr
    return ast.literal_eval(proc.stdout)


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
    from boardlib import layout

    public = {n for n in dir(layout) if not n.startswith("_") and callable(getattr(layout, n))}
    public -= {"const", "font"}
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
def test_off_blanks_and_on_restores(results, kind):
    r = results["facade_" + kind]
    assert r["off"] == " " * 8
    assert r["on"] == " . 12  34"
    assert r["errors"] == 0


@pytest.mark.parametrize("kind", ["tm1637", "max7219"])
def test_bad_calls_are_refused(results, kind):
    assert results["facade_" + kind]["refused"] == [True, True]


def test_a_bus_error_is_survived_and_the_frame_written_next_time(results):
    assert tuple(results["flaky"]) == (False, " " * 8, True, "   5   6.")


def test_clock_modules_show_the_turn_on_the_colon_when_asked(results):
    without, with_marker = results["clock_modules"][:3], results["clock_modules"][3:]
    assert without == ["  25 130", "  25 130", "brK  4:30"]  # the marker is lost...
    assert with_marker == ["  :25 130", "  25 1:30", "brK  4:30"]  # ...unless moved


def test_showing_screens_allocates_nothing_on_micropython(results):
    if results["no_alloc"] is None:
        pytest.skip("heap_lock exists on MicroPython only")
    assert [tuple(r) for r in results["no_alloc"]] == [
        (4, "brK  3:20", 0),
        (4, "brK  3.20", 0),
    ]


def test_a_board_without_display_takes_every_call(results):
    assert results["none"] == 2
