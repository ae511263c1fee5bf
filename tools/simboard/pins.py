"""Fake machine.Pin objects that record every level change and tell listeners about it.

    from tools.simboard.pins import FakePin, Wire
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


class Wire:
    """Shared, ordered log of (pin name, level) for every level change on its pins."""

    def __init__(self, keep=True):
        self.keep = keep  # a long simulation may turn the log off
        self.log = []

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

    def __init__(self, name, value=1, wire=None, mode=OUT, pull=None):
        self.name = name
        self.wire = wire if wire is not None else Wire()
        self._mode = mode
        self._pull = pull
        self._drive = 1 if value else 0
        self._device = 1
        self._listeners = []
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

    def __repr__(self):
        return "FakePin(%r, level=%d)" % (self.name, self._level)
