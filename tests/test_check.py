"""The builders' wiring check (firmware.check) through the real firmware on the simulated
board, on the MicroPython unix port (scenarios in tests/device/check_cases.py): spots and
buttons driven on the fake pins, the display decoded from the emulated TM1637 chips, and
the real `Board.read_spots()` with its `standing_level` reading the pins.
"""

import json

import pytest
from helpers import micropython_value, run_on_micropython

SCENARIOS = ("sweep", "live_spots_and_leaving", "wrong_polarity", "swapped_spots", "buttons")


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory):
    calls = [[name, [str(tmp_path_factory.mktemp(name))]] for name in SCENARIOS]
    results = run_on_micropython("check_cases", calls, timeout=300)
    return {name: json.loads(json.dumps(micropython_value(result)))
            for name, result in zip(SCENARIOS, results, strict=True)}


def test_the_menu_opens_the_check_and_the_sweep_lights_every_segment_in_turn(scenarios):
    out = scenarios["sweep"]
    assert out["item"] == "tE5t  no"  # "tESt  no": S and 5 share a shape
    assert out["confirm"] == "tE5t yE5"
    frames = [bytes.fromhex(f) for f in out["frames"]]
    # 64 steps: cell by cell from the left, segment a to g then the dot, one at a time
    lit = [(cell, seg) for f in frames[:64] for cell in range(8) for seg in range(8)
           if f[cell] >> seg & 1]
    assert lit == [(cell, seg) for cell in range(8) for seg in range(8)]
    assert all(f == b"\xff" * 8 for f in frames[64:72])  # then everything at once
    assert out["after"] == "12345 CH"  # then the spots, every pin standing
    assert out["score"] == [0, 0]


def test_spots_show_live_and_nothing_done_in_the_check_is_scored(scenarios):
    out = scenarios["live_spots_and_leaving"]
    seen = out["seen"]
    # active-low sensors: a spot with no pin reads 1, shown by the dot
    assert seen[0] == "12345 CH"
    assert seen[1] == "12_.45 CH"
    assert seen[2] == "12_.4_. CH"
    assert seen[3] == "12345 CH"
    assert seen[4] == "bt  FouL"
    assert out["held"] is True and out["in_check"] is False  # undo held, let go: left ...
    assert seen[5] == " .  0   0"  # ... back to the scores
    # ... and neither the knocked pins, nor the foul, nor the undo did anything to the game
    assert out["score"] == [0, 0] and out["shots"] == 0


def test_a_board_configured_the_wrong_way_round_shows_no_pin_anywhere(scenarios):
    seen = scenarios["wrong_polarity"]
    # every pin standing, yet the firmware reads none: standing_level is the wrong way round
    assert seen[0] == "_____ CH"
    # (the dot of a TM1637 module's second digit is its colon on many modules)
    assert seen[1] == "_2:___ CH"


def test_swapped_spots_show_as_the_wrong_number(scenarios):
    assert scenarios["swapped_spots"] == "123_.5 CH"  # spot 2 fell, the board says 4


def test_every_button_shows_its_name_and_holding_ok_sweeps_again(scenarios):
    out = scenarios["buttons"]
    assert out["names"] == ["bt  CAro", "bt  FouL", "bt    oK", "bt  undo", "12345 CH"]
    assert out["lit"] == 1  # holding ok ran the sweep again: one segment at a time
