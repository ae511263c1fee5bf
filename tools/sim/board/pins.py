"""Fake machine.Pin objects that record every level change and tell listeners about it.

    from tools.sim.board.pins import FakePin, Wire
    wire = Wire()
    clk = FakePin("clk", wire=wire)
    dio = FakePin("dio", wire=wire)
    clk.listen(lambda pin, level: print(pin.name, level))   # an emulator reacts to edges
    clk.value(0)                  # the board drives the line
    dio.external(0)               # a device on the line pulls it low (open drain)
    dio.value()                   # 0: the line's level, as the board reads it
    wire.log                      # [("clk", 0), ("dio", 0)]

A line is a wired AND of two sides: the board's (value(v) in an output mode; released,
i.e. high, in input mode) and one device's (`external(level)`, released by default).
Released means pulled up (pulled down with pull=PULL_DOWN). Only changes of the line's
level are logged and reported, in order, on the `Wire` the pins share.
"""


PULL_UP_OHM = 10000  # the TM1637 modules' pull-ups on CLK and DIO
_LN_1_OVER_0_3 = 1.204  # ln(1 / (1 - 0.7)): a rising RC line reaches 0.7 VDD after 1.2 RC
_LN_4 = 1.386  # ln(1 / (1 - 0.75)): and the ESP32's input-high level, 0.75 VDD, after 1.4 RC


def line_nf_default():
    """nF on each open-drain display line: $PINBOARD_LINE_NF, else 10 (common modules)."""
    try:
        from os import getenv

        text = getenv("PINBOARD_LINE_NF")
    except ImportError:
        text = None
    return float(text) if text else 10.0


def rise_us(line_nf):
    """Microseconds a released line takes to reach the TM1637's input-high level
    (0.7 VDD, datasheet VIH) through the 10 kOhm pull-up: 120 us at 10 nF."""
    return PULL_UP_OHM * line_nf * 1e-3 * _LN_1_OVER_0_3


def read_rise_us(line_nf):
    """Microseconds until the ESP32 itself reads such a line high (VIH 0.75 VDD, ESP32
    datasheet, DC characteristics): 139 us at 10 nF, after the TM1637 has seen it."""
    return PULL_UP_OHM * line_nf * 1e-3 * _LN_4


class Wire:
    """Shared, ordered log of (pin name, level) for every level change on its pins.

    It is also the bus's clock, for lines with capacitance (`line_nf`): in virtual
    microseconds that `sleep_us` advances as the ESP32's does (n - 5 us, nothing under 5:
    ports/esp32/mphalport.c) and `delay_us` exactly (mp_hal_delay_us_fast, the soft
    buses' delay), or any clock given as `clock_us` (then `delay_us` waits on it)."""

    def __init__(self, keep=True, line_nf=0.0, clock_us=None):
        self.keep = keep  # a long simulation may turn the log off
        self.log = []
        self.line_nf = line_nf
        self.rise_us = rise_us(line_nf)
        self.read_rise_us = read_rise_us(line_nf)
        self.us = 0
        self._virtual = clock_us is None
        self.clock_us = self._virtual_us if clock_us is None else clock_us

    def _virtual_us(self):
        return self.us

    def sleep_us(self, us):
        if us >= 5:
            self.us += us - 5

    def delay_us(self, us):
        if self._virtual:
            self.us += us
            return
        end = self.clock_us() + us
        while self.clock_us() < end:
            pass

    def record(self, name, level):
        if self.keep:
            self.log.append((name, level))

    def clear(self):
        self.log = []


class FakePin:
    IN = 1
    OUT = 3
    OPEN_DRAIN = 7
    PULL_UP = 1
    PULL_DOWN = 2
    IRQ_RISING = 1  # as on the ESP32 (ports/esp32/machine_pin.c: GPIO_INTR_POSEDGE)
    IRQ_FALLING = 2

    def __init__(self, name, value=1, wire=None, mode=OUT, pull=None):
        self.name = name
        self.wire = wire if wire is not None else Wire()
        self._mode = mode
        self._pull = pull
        self._drive = 1 if value else 0
        self._device = 1
        self._listeners = []
        self._handler = None
        self._trigger = 0
        self._level = self._compute()

    def init(self, mode=-1, pull=-1, value=None):
        if mode != -1:
            self._mode = mode
        if pull != -1:
            self._pull = pull
        if value is not None:
            self._drive = 1 if value else 0
        self._update()

    def value(self, v=None):
        if v is None:
            return self._level
        self._drive = 1 if v else 0
        self._update()

    def __call__(self, v=None):
        return self.value(v)

    def on(self):
        self.value(1)

    def off(self):
        self.value(0)

    def external(self, level):
        """The device side of the line: 0 pulls it low, 1 releases it."""
        self._device = 1 if level else 0
        self._update()

    def listen(self, callback):
        """callback(pin, level) after every change of the line's level."""
        self._listeners.append(callback)

    def irq(self, handler=None, trigger=IRQ_RISING | IRQ_FALLING):
        """machine.Pin.irq: handler(pin) after a change of the level `trigger` names. Run
        at once here; on the ESP32 a soft IRQ runs at the next bytecode boundary."""
        self._handler = handler
        self._trigger = trigger if handler is not None else 0

    def _compute(self):
        released = 0 if self._pull == self.PULL_DOWN else 1
        board = released if self._mode == self.IN else self._drive
        return board & self._device

    def _update(self):
        level = self._compute()
        if level == self._level:
            return
        self._level = level
        self.wire.record(self.name, level)
        for callback in self._listeners:
            callback(self, level)
        if self._trigger & (self.IRQ_RISING if level else self.IRQ_FALLING):
            self._handler(self)

    def __repr__(self):
        return "FakePin(%r, level=%d)" % (self.name, self._level)
