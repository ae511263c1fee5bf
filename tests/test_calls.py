"""The audible calls: patterns (boardlib.calls) and the PWM driver (boardlib.buzzer), on
CPython and the MicroPython unix port (tests/device/calls_cases.py); the firmware's calls
at the table are in tests/test_table.py."""

from helpers import device_case_tests

test_device_case = device_case_tests("calls_cases")


def test_the_calls_know_the_games_announcements():
    # for_event folds rules_core.common's announcement bits: they must be common's
    from boardlib import calls
    from rules_core import common

    assert (calls._A_TWENTY, calls._A_DISTANCE, calls._A_SET, calls._A_FINISHED) == (
        common.A_TWENTY, common.A_DISTANCE, common.A_SET, common.A_FINISHED)
