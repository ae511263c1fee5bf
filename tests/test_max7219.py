"""The MAX7219 driver's frames, checked against the datasheet, and the chip emulator.

The scenarios are device code (tests/device/max7219_cases.py): they run on CPython and,
all in one process, on the MicroPython unix port; the checks below read their results.
`frames` is this test's own reading of the SPI wire (mode 0, MSB first, 16 bits latched
when LOAD/CS rises).
"""

import pytest
from helpers import device_value
from test_font import hand_byte

# "1234.5678" in font order, from the hand-drawn shapes.
CELLS = bytes(hand_byte(c) for c in "12345678")
CELLS = CELLS[:3] + bytes([CELLS[3] | 0x80]) + CELLS[4:]
# The same digits in the chip's raw order (dp a b c d e f g), worked out by hand.
RAW = {"1": 0x30, "2": 0x6D, "3": 0x79, "4": 0x33, "5": 0x5B, "6": 0x5F, "7": 0x70, "8": 0x7F}


@pytest.fixture(scope="module", params=["cpython", "micropython"])
def results(request):
    return device_value(request.param, "max7219_cases", "scenarios", CELLS)


def frames(log):
    """(address, data) of every 16-bit frame latched by CS rising; MSB first on SCK rising."""
    levels = {"sck": 0, "mosi": 0, "cs": 1}
    out = []
    bits = []
    for name, level in log:
        if name == "sck" and level:
            bits.append(levels["mosi"])
        if name == "cs" and not level:
            bits = []
        if name == "cs" and level:
            assert len(bits) == 16, "frame of %d bits" % len(bits)
            word = sum(b << (15 - i) for i, b in enumerate(bits))
            out.append((word >> 8, word & 0xFF))
        levels[name] = level
    return out


def test_start_up_sequence(results):
    r = results["init"]
    assert frames(r["log"]) == [(0x0F, 0), (0x0B, 7), (0x09, 0), (0x0A, 7), (0x0C, 1)]
    assert (r["test"], r["scan_limit"], r["decode"], r["intensity"], r["shutdown"]) == (
        False, 7, 0, 7, False)
    assert r["visible"] == " " * 8 and r["errors"] == 0


def test_write_maps_leftmost_cell_to_digit_8_in_raw_order(results):
    r = results["write"]
    expected = [(8 - i, RAW[c]) for i, c in enumerate("12345678")]
    expected[3] = (5, RAW["4"] | 0x80)
    assert frames(r["log"]) == expected
    assert r["visible"] == "1234.5678" and r["errors"] == 0


def test_brightness_off_on(results):
    assert frames(results["brightness"]["log"]) == [(0x0A, 12)]
    assert results["brightness"]["intensity"] == 12
    assert frames(results["off"]["log"]) == [(0x0C, 0)]
    assert results["off"]["visible"] == " " * 8
    assert frames(results["on"]["log"]) == [(0x0C, 1)]
    assert results["on"]["visible"] == "1234.5678"


def test_emulator_display_test_lights_everything(results):
    assert results["test_on"]["visible"] == "8." * 8


def test_emulator_digits_past_scan_limit_are_dark(results):
    assert results["scan3"]["visible"] == "    5678"


def test_emulator_decodes_code_b(results):
    assert results["code_b"]["visible"] == "12EHLP 0."
    assert results["code_b"]["errors"] == 0


def test_emulator_counts_protocol_errors(results):
    assert results["no_register"]["errors"] == 1
    assert results["short_frame"]["errors"] == 2  # one more than before


def test_bad_arguments_raise_before_anything_is_sent(results):
    assert results["bad"] == [[], [], []]


def test_wrong_register_or_bit_order_shows_something_else(results):
    assert results["wrong_register"]["visible"] != "1234.5678"
    assert results["no_conversion"]["visible"] != "1234.5678"


def test_four_digit_module_scans_four(results):
    r = results["four_digits"]
    assert frames(r["log"])[:2] == [(0x0F, 0), (0x0B, 3)]
    assert frames(r["log"])[-4:] == [(4, RAW["1"]), (3, RAW["2"]), (2, RAW["3"]),
                                     (1, RAW["4"] | 0x80)]
