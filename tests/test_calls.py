"""The audible calls: patterns (boardlib.calls) and the PWM driver (boardlib.buzzer), on
CPython and the MicroPython unix port (tests/device/calls_cases.py); the firmware's calls
at the table are in tests/test_table.py."""

from helpers import device_case_tests

test_device_case = device_case_tests("calls_cases")
