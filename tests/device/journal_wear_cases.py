"""Flash wear and resume time of boardlib.journal on littlefs (tests/test_journal_wear.py).

MicroPython only: littlefs (os.VfsLfs2) is what wears the flash, and the unix port has it.
"""

import time

from boardlib import journal_load
from boardlib.journal import GameStore
from device.support import Rng
from rules_core import Game, events
from tools.sim.board.flash import RamBlockDev, mount

HEAPSIZE = "8M"


def measure(rules, blocks):
    """Play 1000 random shots onto a fresh flash of `blocks` 4 KB blocks, then resume."""
    dev = RamBlockDev(4096, blocks)
    mount(dev, "/f")
    store = journal_load.store("/f/game")
    # A game that lasts the 1000 shots: ceb distances stop at 999 (a cell of the display is
    # the marked ball's), so there the match is a best of 5.
    if rules == "ceb":
        game = Game(rules, distance=(999, 999), sets=5, first=1)
    else:
        game = Game(rules, distance=(9999, 9999), sets=1, first=1)
    store.new_game(game)
    e0, w0 = dev.erases, dev.bytes_written
    biggest = 0
    rng = Rng(7)
    for _ in range(1000):
        x = rng.next()
        rec = events.encode_shot((x >> 8) & 31, (x >> 16) & 1, ())
        game.apply(rec)
        before = dev.bytes_written
        store.record(game, rec)
        biggest = max(biggest, dev.bytes_written - before)  # what a scored shot writes
        store.maintain()  # between shots, as the application does
    out = {"erases": dev.erases - e0, "bytes": dev.bytes_written - w0, "record_max": biggest}
    store.close()
    best = 10**9
    for _ in range(5):
        t0 = time.ticks_us()
        s = GameStore("/f/game")
        back, status = journal_load.load(s)
        best = min(best, time.ticks_diff(time.ticks_us(), t0))
        s.close()
    out["status"] = status
    out["same"] = (back.state_json() == game.state_json()
                   and back.history.tobytes() == game.history.tobytes())
    out["replayed"] = s.records
    out["load_us"] = best
    out["shots"] = back.shots
    return out
