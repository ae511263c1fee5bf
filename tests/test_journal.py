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
    # boardlib.journal_load repeats the format's magics and sizes (MicroPython keeps a
    # module's const() names to itself): they must be the writer's.
    from boardlib import journal, journal_load

    for name in ("_SPLIT_MAGIC", "_JOURNAL_MAGIC", "_SPLIT_HEADER", "_JOURNAL_HEADER",
                 "_MAX_RECORD"):
        assert getattr(journal_load, name) == getattr(journal, name), name


def test_the_store_and_the_snapshot_know_the_historys_chunks():
    # game.his holds the history's chunks as rules_core.game makes them; the store and the
    # snapshot count them with their own constants
    from boardlib import journal
    from rules_core import game, resume

    assert 1 << journal._CHUNK_SHIFT == game._CHUNK_EVENTS == resume._CHUNK_EVENTS
    # and the board's power-up, which makes a stored game's chunks first (firmware/powerup.py)
    from test_board_codes import board_constants

    assert board_constants("firmware/powerup.py")["CHUNK_BYTES"] == game._CHUNK_BYTES
    # and its start, which lends one of those to the reading (firmware/startapp.py)
    assert board_constants("firmware/startapp.py")["CHUNK_BYTES"] == game._CHUNK_BYTES
    assert resume._CHUNK_MARKS == game._CHUNK_MARKS
