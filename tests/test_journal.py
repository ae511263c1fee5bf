"""boardlib.journal: games come back whole, bad data costs only the damaged part.

The cases (tests/device/journal_cases.py) run twice: on CPython over plain files in a
temporary directory, and on the MicroPython unix port over littlefs (os.VfsLfs2 on a RAM
flash), all cases in one process.
"""

import pytest
from helpers import device_case_names, device_case_tests, device_module

pytestmark = pytest.mark.long(8)

test_case = device_case_tests("journal_cases")


def test_every_case_is_collected():
    assert len(device_case_names(device_module("journal_cases"))) >= 10


def test_the_reader_knows_the_writers_sizes():
    # boardlib.journal_load repeats the format's sizes (MicroPython keeps a module's
    # const() names to itself): they must be the writer's.
    from boardlib import journal, journal_load

    for name in ("_SNAP_HEADER", "_JOURNAL_HEADER", "_OLD_JOURNAL_HEADER", "_MAX_RECORD",
                 "_MAX_FILE"):
        assert getattr(journal_load, name) == getattr(journal, name), name
