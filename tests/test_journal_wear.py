"""Flash wear and resume time of the journal on littlefs (MicroPython unix port).

The board's flash: 1.5 MB of 4 KB blocks (384 blocks) that each take 100,000 erases. At
1000 scored shots a day it must last 20 years, so a shot may cost at most
384 * 100000 / (20 * 365 * 1000) = 5.26 block erases, counting every erase littlefs does
(data, metadata, compaction). A scored shot must also be a small write (pin handling stalls
while the flash is written), and resuming a 1000-shot game must not replay its history.
The game is played by tests/device/journal_wear_cases.py on the unix port (littlefs).
"""

import pytest
from helpers import device_value

BLOCKS = 384
CYCLES = 100_000
SHOTS_PER_DAY = 1000

@pytest.fixture(scope="module", params=["ddbu", "ceb"])
def measured(request):
    return device_value("micropython", "journal_wear_cases", "measure", request.param, BLOCKS)


def test_flash_lasts_twenty_years(measured):
    erases_per_shot = measured["erases"] / 1000
    years = BLOCKS * CYCLES / (erases_per_shot * SHOTS_PER_DAY * 365)
    assert years >= 20, "%.2f erases per shot: %.1f years" % (erases_per_shot, years)


def test_a_scored_shot_is_a_small_write(measured):
    # an append into littlefs's metadata log, not a copy of a 4 KB data block
    assert measured["record_max"] <= 512


def test_resume_of_a_1000_shot_game_reads_the_snapshot(measured):
    assert measured["status"] == 0
    assert measured["same"] is True
    assert measured["shots"] == 1000
    # only the journal since the last compaction is replayed, never the whole history
    assert measured["replayed"] <= 12
    # How long that takes on an ESP32 is the bench's `resume` figure (docs/performance.md),
    # counted in instructions: a wall-clock bound here would only measure the machine's load.
