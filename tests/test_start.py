"""Power-up on the simulated board: safe mode, the watchdog armed only
once the game is loaded, no reset loop after a fault, and the real pin-reading code.

The cases are device code in tests/device/start_cases.py, run on the MicroPython unix port,
one process each.
"""

import pytest
from helpers import device_value

CASES = [
    "undo_held_at_power_up_is_safe_mode",
    "watchdog_armed_after_the_game_is_loaded",
    "standing_level_one_reads_through_the_board",
    "exception_after_arming_shows_err_91_without_a_reset",
    "colon_marker_key_reaches_clock_modules",
    "a_networked_board_whose_app_finds_no_room_starts_again_without_its_link",
]


@pytest.mark.parametrize("case", CASES)
def test_start(tmp_path, case):
    device_value("micropython", "start_cases", "case_" + case, str(tmp_path / "flash"))


def test_watchdog_ms_refuses_values_the_loop_cannot_keep():
    from boardlib.config import defaults, problems

    for ms in (0, 2000, 8000, 60000):
        assert problems(dict(defaults(), watchdog_ms=ms)) == []
    for ms in (1, 250, 1999, 60001):
        assert problems(dict(defaults(), watchdog_ms=ms)) != [], ms


def test_watchdog_ms_of_1_on_flash_keeps_the_default(tmp_path):
    from boardlib.config import ERR_CONFIG_VALUE, load_config

    path = tmp_path / "board.cfg"
    path.write_text('{"watchdog_ms": 1, "colon_marker": true}')
    cfg, error = load_config(str(path))
    assert error == ERR_CONFIG_VALUE and cfg["watchdog_ms"] == 8000 and cfg["colon_marker"]
