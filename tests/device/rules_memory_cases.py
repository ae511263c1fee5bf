"""What a long game costs in RAM on the unix port (tests/test_rules_memory.py).

Run with only the compiled rules_core on the path, as the board loads it.
"""

import gc

from rules_core import Game


def long_game_bytes():
    """(history records bytes, heap bytes still held) after 500 shots and 100 undos. The
    rules' module and the records' encoders are code, imported with the first game of its
    rules and by the first Game.shot(): loaded first."""
    import rules_core.events  # noqa: F401
    import rules_core.russian  # noqa: F401

    gc.collect()
    before = gc.mem_alloc()
    g = Game("russian", 9999)
    for k in range(500):
        g.shot(pins=k % 32, carom=k % 3)
    for _ in range(100):
        g.undo()
    gc.collect()
    return len(g.history), gc.mem_alloc() - before


def events_allocate_nothing():
    """A game applies events and takes them back without allocating, once reserve() has
    made room (the board calls it between shots): with the heap locked, any allocation
    raises MemoryError. Runs past a checkpoint (every 32 events). Returns the events
    applied and taken back under the lock."""
    import micropython

    g = Game("ddbu", 9999)
    record = bytearray(b"\x01\x03\x00\x00")  # 2 pins: the series goes on, no turn passes
    miss = bytearray(b"\x01\x00\x00\x00")  # nothing: the turn passes
    applied = undone = 0
    for _ in range(6):  # across 192 events: history steps and checkpoints
        g.reserve()
        micropython.heap_lock()
        try:
            for k in range(30):
                g.apply(miss if k % 3 else record)
                applied += 1
            g.undo()
            undone += 1
        finally:
            micropython.heap_unlock()
    return applied, undone, len(g.history) // 4
