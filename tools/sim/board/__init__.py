"""The simulated board: fake pins, display chip emulators, soft SPI, file-backed flash.

Runs on the MicroPython unix port (and on CPython for tests). A display wired to
emulators, ready for the firmware's Display facade:

    from tools.sim.board import tm1637_display, max7219_display
    display, screen = tm1637_display()     # or max7219_display()
    display.show(buf8)                     # the real drivers drive fake pins ...
    screen.visible()                       # ... and the emulators decode: " . 25 130"
    screen.errors                          # protocol errors the emulators saw

Imports happen inside the functions so that `tools.sim.board.flash` and friends stay
cheap to import on their own.
"""


def tm1637_bus(clk, dio, freq=None):
    """The bus a TM1637 module hangs on, as firmware.hw makes it on the ESP32
    (machine.SoftI2C at boardlib.tm1637.FREQ_HZ), on two fake pins."""
    from boardlib import tm1637
    from tools.sim.board.softi2c import SoftI2C

    return SoftI2C(clk, dio, freq=freq or tm1637.FREQ_HZ, timeout=tm1637.TIMEOUT_US)


def tm1637_display(wire=None, brightness=7, clock_modules=False, line_nf=None, freq=None):
    """Two TM1637 modules on fake pins: (Display, TM1637Pair of emulators).

    clock_modules: the modules have only a colon, no decimal points; the display then
    shows the turn marker on the colon (Display.tm1637(..., colon_marker=True)).
    line_nf: nF on each line with the modules' 10 kOhm pull-ups ($PINBOARD_LINE_NF, else
    10); the bus's delays run on the wire's virtual clock. freq: the bus's clock (Hz),
    boardlib.tm1637.FREQ_HZ unless given.
    """
    from boardlib.display import Display
    from boardlib.tm1637 import TM1637
    from tools.sim.board.chips import TM1637Emulator, TM1637Pair
    from tools.sim.board.pins import FakePin, Wire, line_nf_default

    if wire is None:
        wire = Wire(line_nf=line_nf_default() if line_nf is None else line_nf)
    pins = []
    for name in ("clk1", "dio1", "clk2", "dio2"):
        pins.append(FakePin(name, 1, wire, FakePin.OPEN_DRAIN))
    screen = TM1637Pair(
        TM1637Emulator(pins[0], pins[1], colon_only=clock_modules),
        TM1637Emulator(pins[2], pins[3], colon_only=clock_modules),
    )
    # The bus delays advance the wire's virtual clock: the emulators see the edges when
    # the lines' RC lets them, and the simulation does not wait.
    left = TM1637(tm1637_bus(pins[0], pins[1], freq), brightness)
    right = TM1637(tm1637_bus(pins[2], pins[3], freq), brightness)
    return Display.tm1637(left, right, colon_marker=clock_modules), screen


def max7219_display(wire=None, brightness=7):
    """One MAX7219 module on a soft SPI: (Display, MAX7219Emulator)."""
    from boardlib.display import Display
    from boardlib.max7219 import MAX7219
    from tools.sim.board.chips import MAX7219Emulator
    from tools.sim.board.pins import FakePin, Wire
    from tools.sim.board.softspi import SoftSPI

    wire = wire if wire is not None else Wire()
    sck = FakePin("sck", 0, wire)
    mosi = FakePin("mosi", 0, wire)
    cs = FakePin("cs", 1, wire)
    screen = MAX7219Emulator(mosi, sck, cs)
    chip = MAX7219(SoftSPI(sck, mosi), cs, 8, 2 * brightness + 1)
    return Display.max7219(chip), screen
