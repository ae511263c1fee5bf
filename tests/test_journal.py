"""boardlib.journal: games come back whole, bad data costs only the damaged part.

The cases (tests/device/journal_cases.py) run twice: on CPython over plain files in a
temporary directory, and on the MicroPython unix port over littlefs (os.VfsLfs2 on a RAM
flash), all cases in one process.
"""

import pytest
from helpers import device_case_names, device_case_tests, device_module

pytestmark = pytest.mark.long(26)

test_case = device_case_tests("journal_cases")


def test_every_case_is_collected():
    assert len(device_case_names(device_module("journal_cases"))) >= 10
