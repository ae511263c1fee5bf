"""A long game resumed from its snapshot in a small heap (rules_core.resume.unpack).

MicroPython only: the heap is the unix port's, cut down to a budget by
tools.sim.board.heap (test_resume_heap.py).
"""

from device.support import check, micropython_only
from rules_core import resume, snapshot
from rules_core.game import Game

HEAPSIZE = "512K"


def case_a_long_game_resumes_in_a_heap_little_larger_than_its_history():
    # A 950-shot game's snapshot is about 4.7 KB, its history 3.8 KB. Resumed, the game
    # holds its history and checkpoints in chunks of 624 bytes (8 of them), each copied
    # once from a view of the snapshot, and makes room for the next events as the board
    # does (reserve). With the snapshot read from flash beside it, it needs 8 KB of heap
    # on this 64-bit port, by where the modules loaded before it lie: the test gives it a
    # KB more. (A copy of the snapshot, a slice of it and its bytearray, then the first
    # growth, each held at once, needed about 14 KB.) The game is compared with the one
    # packed once the budget is let go: the JSON is the host's work, not the board's.
    micropython_only("a heap cut down to a budget")
    import gc

    from tools.sim.board.heap import pin

    g = Game("ddbu", distance=(9999, 9999))
    for k in range(950):
        g.shot(pins=(k * 7) % 31 + 1, carom=k % 2, fouls=())
    data = snapshot.pack(g)
    state = g.state_json()
    records = g.history.tobytes()
    g = None
    gc.collect()
    ballast = pin(9 * 1024)
    try:
        resumed = resume.unpack(memoryview(data))  # (loaded before the budget, as a board's
        # code is)
        resumed.reserve()
    except MemoryError:
        resumed = None
    ballast = None  # noqa: F841 - the whole heap again
    gc.collect()
    check(resumed is not None, "no room to resume a 950-shot game in 9 KB")
    check(resumed.state_json() == state and resumed.history.tobytes() == records,
          "the resumed game is not the one packed")
