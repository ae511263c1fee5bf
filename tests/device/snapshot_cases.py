"""rules_core.snapshot on both interpreters: a played game packed and resumed.

tests/test_snapshot.py compares what the unix port packs with what CPython packs.
"""

from rules_core import resume, snapshot
from rules_core.game import Game


def sample_game():
    """A CEB match played to its end, fouls and caroms included."""
    g = Game("ceb", 30, 5, 2)
    for k in range(70):
        g.shot(pins=(k * 7) % 32, carom=k % 3, fouls=("rouge",) if k % 5 == 0 else ())
        if g.finished:
            break
    return g


def packed_and_resumed():
    """(pack, pack_state, the resumed game's state, its state after one undo)."""
    g = sample_game()
    data = snapshot.pack(g)
    resumed = resume.unpack(data)
    state = resumed.state_json()
    resumed.undo()
    return data, snapshot.pack_state(g), state, resumed.state_json()


def unpacked_state_json(data):
    """The board state of a saved game given as bytes (a list of numbers from JSON)."""
    return resume.unpack(bytes(data)).state_json()
