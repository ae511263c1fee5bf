"""Every screen through the real drivers and fake pins into the chip emulators.

tests/test_display.py calls `run` on CPython and, in one process, on the MicroPython unix
port, and checks what the emulators decoded.
"""

import sys

from boardlib import layout
from boardlib.display import Display
from boardlib.max7219 import MAX7219
from boardlib.tm1637 import FREQ_HZ, TIMEOUT_US, TM1637
from device.broken_drivers import MsbFirst, NoAckClock, WrongRegister
from tools.sim.board import max7219_display, tm1637_display
from tools.sim.board.chips import MAX7219Emulator, TM1637Emulator, TM1637Pair
from tools.sim.board.pins import FakePin, Wire
from tools.sim.board.softi2c import SoftI2C
from tools.sim.board.softspi import SoftSPI

# The fake pins record every transition of every screen: more than the port's default heap
HEAPSIZE = "4M"


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


def tm_rig(cls, bus=SoftI2C):
    wire = Wire()
    pins = []
    for name in ("clk1", "dio1", "clk2", "dio2"):
        pins.append(FakePin(name, 1, wire, FakePin.OPEN_DRAIN))
    screen = TM1637Pair(TM1637Emulator(pins[0], pins[1]), TM1637Emulator(pins[2], pins[3]))
    left = cls(bus(pins[0], pins[1], freq=FREQ_HZ, timeout=TIMEOUT_US))
    right = cls(bus(pins[2], pins[3], freq=FREQ_HZ, timeout=TIMEOUT_US))
    return Display.tm1637(left, right), screen


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


class FailingOnce:
    """An SPI bus whose `fail_at`-th write raises OSError (then it works again)."""

    def __init__(self, spi, fail_at):
        self.spi = spi
        self.left = fail_at

    def write(self, buf):
        self.left -= 1
        if self.left == 0:
            raise OSError(5)
        self.spi.write(buf)


def max_changed_digits():
    """The MAX7219's digit registers each show sends: [(registers, what the chip shows)]
    for a first frame, one cell changed, the same frame after refresh(), a write cut
    short by a bus error, and the same frame shown again after it."""
    display, screen = max_rig(MAX7219)
    chip = display._chip
    sent = []
    register = chip._register

    def counting(address, data):
        if 1 <= address <= 8:  # a digit's register
            sent.append(address)
        register(address, data)

    chip._register = counting
    out = []
    buf = bytearray(8)

    def show():
        del sent[:]
        display.show(buf)
        out.append([list(sent), screen.visible()])

    layout.scores(buf, 12, 34, 1)
    show()
    layout.scores(buf, 12, 35, 1)
    show()
    display.refresh()
    show()
    chip.spi = FailingOnce(chip.spi, 3)
    layout.scores(buf, 1, 2, 2)
    show()
    show()
    return out


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
        for turn in (1, 2):  # ceb: the marked ball needs no dot, the turn moves to a colon
            layout.scores(buf, 25, 130, turn, 2)
            rig[0].show(buf)
            out.append(rig[1].visible())
        layout.members(buf, [1, 2], 1, 1)
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
    return display.brightness()


def run(calls):
    return {
        "none": no_display(),
        "no_alloc": no_alloc(),
        "clock_modules": clock_modules(),
        "tm1637": screens(tm1637_display(), calls),
        "max7219": screens(max7219_display(), calls),
        "msb_first": screens(tm_rig(MsbFirst), calls),
        "no_ack": screens(tm_rig(TM1637, NoAckClock), calls),
        "wrong_register": screens(max_rig(WrongRegister), calls),
        "facade_tm1637": facade(tm1637_display()),
        "facade_max7219": facade(max7219_display()),
        "flaky": flaky(),
        "max_changed_digits": max_changed_digits(),
    }
