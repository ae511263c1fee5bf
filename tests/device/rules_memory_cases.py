"""What a long game costs in RAM on the unix port (tests/test_rules_memory.py).

Run with only the compiled rules_core on the path, as the board loads it.
"""

import gc

from rules_core import Game


def long_game_bytes():
    """(history records bytes, heap bytes still held) after 500 shots and 100 undos."""
    gc.collect()
    before = gc.mem_alloc()
    g = Game("russian", 9999)
    for k in range(500):
        g.shot(pins=k % 32, carom=k % 3)
    for _ in range(100):
        g.undo()
    gc.collect()
    return len(g.history), gc.mem_alloc() - before
