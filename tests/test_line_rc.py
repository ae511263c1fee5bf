"""TM1637 lines with capacitance: the modules' 10 kOhm pull-ups and up to 10 nF.

The emulators see a released line high only once it has crossed the chip's input-high
level (tools/sim/board/chips.py); the bus (machine.SoftI2C, tools/sim/board/softi2c.py)
waits for CLK to read high, and its half period covers what it does not wait for
(boardlib/tm1637.py, docs/esp32.md). Every screen must read right on ideal lines and on
10 nF ones, on both interpreters; a bus clocked at I2C's own speeds must not.
"""

import os

import pytest
from helpers import device_value
from test_display import CALLS, mismatches

from boardlib import layout, tm1637
from tools.sim.board import tm1637_display
from tools.sim.board.chips import TM1637Emulator
from tools.sim.board.pins import FakePin, Wire, read_rise_us, rise_us
from tools.sim.board.softi2c import SoftI2C


@pytest.mark.parametrize("line_nf", ["0", "10"])
@pytest.mark.parametrize("interpreter", ["cpython", "micropython"])
def test_every_screen_reads_right_on_ideal_and_10_nf_lines(interpreter, line_nf):
    before = os.environ.get("PINBOARD_LINE_NF")
    os.environ["PINBOARD_LINE_NF"] = line_nf
    try:
        results = device_value(interpreter, "display_cases", "run", CALLS)
    finally:
        if before is None:
            del os.environ["PINBOARD_LINE_NF"]
        else:
            os.environ["PINBOARD_LINE_NF"] = before
    assert mismatches(results["tm1637"], 3) == []


def test_rise_time_follows_from_the_rc():
    assert rise_us(0) == 0
    assert 119 < rise_us(10) < 121  # 10 kOhm * 10 nF * ln(1 / 0.3)
    assert 138 < read_rise_us(10) < 140  # ... * ln(1 / 0.25): the ESP32 reads it later


def test_dio_rises_between_a_stop_and_the_next_start():
    # machine_i2c.c releases DIO at the end of a stop, then waits three half periods (the
    # stop's last delay, the start's, and scl_release's) before the start pulls it low:
    # the chip must have seen it high by then, at the worst RC with margin.
    worst = rise_us(10 * 1.2) * 1.05  # 20 % more capacitance, 5 % more resistance
    half = 500000 // tm1637.FREQ_HZ
    assert 3 * half >= 1.5 * worst
    assert tm1637.TIMEOUT_US > 5 * read_rise_us(10 * 1.2) * 1.05  # CLK's rise is not a timeout


def _shown(line_nf, freq=None):
    display, screen = tm1637_display(line_nf=line_nf, freq=freq)
    buf = bytearray(8)
    layout.scores(buf, 25, 130, 1)
    display.show(buf)
    return screen.visible(), screen.errors


def test_a_bus_at_i2c_speed_garbles_10_nf_lines():
    assert _shown(10) == (" . 25 130", 0)
    assert _shown(0, freq=100000) == (" . 25 130", 0)  # ideal lines: any speed works
    seen, errors = _shown(10, freq=100000)  # 5 us half periods
    assert seen != " . 25 130" or errors


class _SteppedI2C(SoftI2C):
    """The C code's wait for CLK, 1 us at a time (extmod/machine_i2c.c,
    mp_hal_i2c_scl_release), to check the simulator's wait counted in one go."""

    def _scl_release(self):
        count = self.us_timeout
        self._release(self.scl)
        self._delay()
        while self._read(self.scl) == 0 and count:
            self.wire.delay_us(1)
            count -= 1
        return -110 if count == 0 else 0


def _traffic(bus_class, line_nf, freq, timeout, stuck):
    wire = Wire(line_nf=line_nf)
    clk, dio = FakePin("clk", 1, wire), FakePin("dio", 1, wire)
    TM1637Emulator(clk, dio)
    bus = bus_class(clk, dio, freq=freq, timeout=timeout)
    tm = tm1637.TM1637(bus)
    if stuck:
        clk.external(0)
    returned = tm.write(b"\x3f\x06\x5b\x4f")
    return returned, tm.missing_acks, wire.us, wire.log


@pytest.mark.parametrize("line_nf", [0, 1, 4.7, 10, 22])
@pytest.mark.parametrize("timeout", [tm1637.TIMEOUT_US, 150, 1])
@pytest.mark.parametrize("stuck", [False, True])
def test_the_wait_for_clk_counted_at_once_is_the_c_codes_to_the_microsecond(line_nf, timeout,
                                                                            stuck):
    for freq in (tm1637.FREQ_HZ, 100000):
        stepped = _traffic(_SteppedI2C, line_nf, freq, timeout, stuck)
        assert _traffic(SoftI2C, line_nf, freq, timeout, stuck) == stepped
