"""TM1637 lines with capacitance: the modules' 10 kOhm pull-ups and up to 10 nF.

The emulators see a released line high only once it has crossed the chip's input-high
level (tools/simboard/chips.py); the driver waits for that (boardlib/tm1637.py,
docs/esp32.md). Every screen must read right on ideal lines and on 10 nF ones, on both
interpreters; a driver with the old 5 us timing must not.
"""

import os

import pytest
from helpers import device_value
from test_display import CALLS, mismatches

from boardlib import layout, tm1637
from tools.simboard import tm1637_display
from tools.simboard.pins import rise_us


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
    worst = rise_us(10 * 1.2) * 1.05  # 20 % more capacitance, 5 % more resistance
    assert tm1637._RISE_US >= worst + 5  # the ESP32's sleep_us(n) waits n - 5 us


def _shown(line_nf):
    display, screen = tm1637_display(line_nf=line_nf)
    buf = bytearray(8)
    layout.scores(buf, 25, 130, 1)
    display.show(buf)
    return screen.visible(), screen.errors


def test_the_old_5_us_timing_garbles_10_nf_lines(monkeypatch):
    assert _shown(10) == (" . 25 130", 0)
    monkeypatch.setattr(tm1637, "_RISE_US", 5)  # what the driver did before
    assert _shown(0) == (" . 25 130", 0)
    seen, errors = _shown(10)
    assert seen != " . 25 130" or errors
