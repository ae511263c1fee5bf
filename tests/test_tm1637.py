"""The TM1637 driver's bit stream, checked against the datasheet, and the chip emulator.

The scenarios are device code (tests/device/tm1637_cases.py): they run on CPython and,
all in one process, on the MicroPython unix port; the checks below read their results. The
wire is decoded here by this test's own reading of the datasheet (`frames`), independently
of the emulator.
"""

import pytest
from helpers import device_value


@pytest.fixture(scope="module", params=["cpython", "micropython"])
def results(request):
    return device_value(request.param, "tm1637_cases", "scenarios")


def frames(log):
    """Decode a CLK/DIO log the datasheet's way: [[(byte, ack_level), ...], ...].

    Start: DIO falls while CLK is high; stop: DIO rises while CLK is high; bits are read
    on CLK rising, LSB first, 8 data bits and a 9th (acknowledge) read for each byte.
    Also checks that DIO changes only while CLK is low inside a frame.
    """
    clk = dio = 1
    out = []
    bits = None
    for name, level in log:
        if name == "clk":
            if level and bits is not None:
                bits.append(dio)
            clk = level
            continue
        if clk and dio and not level:
            bits = []
        elif clk and not dio and level:
            assert bits is not None, "stop without start"
            # the stop's own clock rise reads one low bit before DIO rises
            assert len(bits) % 9 == 1 and bits[-1] == 0, "frame cut mid-byte"
            out.append([
                (sum(b << i for i, b in enumerate(bits[k:k + 8])), bits[k + 8])
                for k in range(0, len(bits) - 1, 9)
            ])
            bits = None
        dio = level
    assert bits is None, "frame not stopped"
    return out


def test_write_sends_data_address_and_control_frames_lsb_first_with_acks(results):
    r = results["write"]
    assert frames(r["log"]) == [
        [(0x40, 0)],
        [(0xC0, 0), (0x3F, 0), (0x06, 0), (0x5B, 0), (0x4F, 0)],
        [(0x88 | 7, 0)],
    ]
    assert r["returned"] is True and r["missing_acks"] == 0


def test_emulator_shows_what_was_written(results):
    r = results["write"]
    assert r["visible"] == "0123"
    assert r["errors"] == 0 and r["on"] is True and r["brightness"] == 7


def test_write_at_a_grid_uses_its_address(results):
    r = results["write_pos"]
    assert frames(r["log"])[1] == [(0xC2, 0), (0x79, 0), (0x50, 0)]
    assert r["visible"] == "  Er"


def test_brightness_sends_display_control(results):
    r = results["brightness"]
    assert frames(r["log"]) == [[(0x8B, 0)]]
    assert r["brightness"] == 3 and r["on"] is True and r["visible"] == "0000"


def test_off_and_on(results):
    off, on = results["off"], results["on"]
    assert frames(off["log"]) == [[(0x83, 0)]]
    assert off["on"] is False and off["visible"] == "    "
    assert frames(on["log"]) == [[(0x8B, 0)]]
    assert on["on"] is True and on["visible"] == "0000"


def test_bad_arguments_raise_before_anything_is_sent(results):
    assert results["bad"] == [[], [], [], []]


def test_no_chip_means_missing_acks_not_a_crash(results):
    r = results["no_chip"]
    assert r["returned"] is False
    assert r["missing_acks"] == 7  # 0x40, 0xC0, four digits, control: nobody answered
    # the bus stops each frame at its first missing acknowledge (machine.SoftI2C.write)
    assert [ack for frame in frames(r["log"]) for _, ack in frame] == [1] * 3


def test_a_clk_line_held_low_times_out_without_raising(results):
    r = results["stuck_clk"]
    assert r["returned"] is False
    assert r["missing_acks"] == 7
    # the write gives up at the first frame's timeout (1 ms), not hanging for ever
    assert 1000 <= r["us"] < 3000


def test_wrong_bit_order_is_refused_by_the_emulator(results):
    r = results["msb_first"]
    assert r["errors"] > 0
    assert r["visible"] != "0123"


def test_missing_ack_clock_garbles_the_stream(results):
    r = results["no_ack"]
    assert r["errors"] > 0
    assert r["visible"] != "0123" or not r["on"]


def test_fixed_address_mode_writes_one_grid(results):
    r = results["fixed"]
    assert r["errors"] == 0
    assert r["segments"][:4] == bytes([0, 0x5B, 0, 0])  # the second byte overwrote the first
    assert r["visible"] == " 2  "


def test_unknown_command_is_a_protocol_error(results):
    assert results["unknown"]["errors"] == 1


def test_unconfigured_pins_are_made_open_drain_and_work(results):
    r = results["input_pins"]
    assert r["returned"] is True and r["visible"] == "0123" and r["errors"] == 0
