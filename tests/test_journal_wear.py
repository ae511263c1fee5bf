"""Flash wear and resume time of the journal on littlefs (MicroPython unix port).

The board's flash: 1.5 MB of 4 KB blocks (384 blocks) that each take 100,000 erases. At
1000 scored shots a day it must last 20 years, so a shot may cost at most
384 * 100000 / (20 * 365 * 1000) = 5.26 block erases, counting every erase littlefs does
(data, metadata, compaction). A scored shot must also be a small write (pin handling stalls
while the flash is written), and resuming a 1000-shot game must not replay its history.
"""

import pytest

from tools import upy

BLOCKS = 384
CYCLES = 100_000
SHOTS_PER_DAY = 1000

MEASURE = r"""
import os, time
from rules_core import Game, events
from boardlib.journal import GameStore
from tools.simboard.flash import RamBlockDev, mount

dev = RamBlockDev(4096, %(blocks)d)
mount(dev, "/f")
store = GameStore("/f/game")
game = Game("%(rules)s", distance=(9999, 9999), sets=1, first=1)
store.new_game(game)
e0, w0 = dev.erases, dev.bytes_written
biggest = 0
x = 7
for i in range(1000):
    x = (x * 1103515245 + 12345) & 0x7FFFFFFF
    rec = events.encode_shot((x >> 8) & 31, (x >> 16) & 1, ())
    game.apply(rec)
    before = dev.bytes_written
    store.record(game, rec)
    biggest = max(biggest, dev.bytes_written - before)  # what a scored shot writes
    store.maintain()  # between shots, as the application does
print("erases", dev.erases - e0)
print("bytes", dev.bytes_written - w0)
print("record_max", biggest)
store.close()
best = 10 ** 9
for _ in range(5):
    t0 = time.ticks_us()
    s = GameStore("/f/game")
    back, status = s.load()
    best = min(best, time.ticks_diff(time.ticks_us(), t0))
    s.close()
print("status", status)
print("same", back.state_json() == game.state_json() and back.history == game.history)
print("replayed", s.records)
print("load_us", best)
print("shots", back.shots)
"""


@pytest.fixture(scope="module", params=["ddbu", "ceb"])
def measured(request):
    proc = upy.run(["-c", MEASURE % {"blocks": BLOCKS, "rules": request.param}],
                   heapsize="8M", timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = {}
    for line in proc.stdout.splitlines():
        key, value = line.split()
        out[key] = value
    return out


def test_flash_lasts_twenty_years(measured):
    erases_per_shot = int(measured["erases"]) / 1000
    years = BLOCKS * CYCLES / (erases_per_shot * SHOTS_PER_DAY * 365)
    assert years >= 20, "%.2f erases per shot: %.1f years" % (erases_per_shot, years)


def test_a_scored_shot_is_a_small_write(measured):
    # an append into littlefs's metadata log, not a copy of a 4 KB data block
    assert int(measured["record_max"]) <= 512


def test_resume_of_a_1000_shot_game_reads_the_snapshot(measured):
    assert measured["status"] == "0"
    assert measured["same"] == "True"
    assert int(measured["shots"]) == 1000
    # only the journal since the last compaction is replayed, never the whole history
    assert int(measured["replayed"]) <= 12
    # the ESP32 is about 100 times slower than the unix port here: 1 s there is 10 ms here
    assert int(measured["load_us"]) < 10_000
