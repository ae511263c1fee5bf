"""Save and resume a game exactly, and the compact board state for the serial link.

    from rules_core import snapshot
    data = snapshot.pack(game)          # settings + state + history + checkpoints
    pieces = snapshot.parts(game)       # the same bytes in pieces (what a journal writes)
    data = snapshot.pack(game, 3)       # the same without the history's first 3 chunks
    game2 = resume.unpack(data)         # rules_core.resume (which a board drops once its
    game2 = resume.unpack(data, fill)   # game is read): game2.state() == game.state(), undo
                                        # still works; fill(chunk, i) fills filed chunk i
    payload = snapshot.pack_state(game) # 27 bytes: the board state only
    state = snapshot.unpack_state(payload)  # == game.state()

resume.unpack() loads the saved state directly (it does not re-apply the history), so resuming
a long game on the device is quick. pack() layout: b"PB1", history length (u16, records),
then the current state (game.SAVE_SIZE bytes), the checkpoints, and the history.
parts(game, filed) with filed > 0 leaves out the history's first `filed` chunks (128
events and their 4 checkpoints each, rules_core.game.History: a journal keeps them in a
file of its own, boardlib.journal): b"PB2", history length (u16), checkpoints (u16),
filed chunks (u16), the state, then the checkpoints and records from chunk `filed` on;
resume.unpack() then asks its `fill` for each filed chunk, in order.
"""

import struct

from rules_core.savedstate import save

try:
    from micropython import const
except ImportError:  # CPython: the value itself
    const = lambda value: value  # noqa: E731 - a function would be one more name

# The layouts, which rules_core.resume reads with constants of its own (tests/test_snapshot.py
# holds them to these)
_MAGIC = const(b"PB1")
_HEAD = const(">3sHH")  # magic, history records, checkpoints
_MAGIC_SPLIT = const(b"PB2")
_HEAD_SPLIT = const(">3sHHH")  # magic, history records, checkpoints, chunks left out
# rules_core.game's and rules_core.savedstate's (tests/test_snapshot.py checks them)
_CHECKPOINT_EVERY = const(32)
_STATE_SIZE = const(27)


def pack(game, filed=0):
    out = bytearray()
    for part in parts(game, filed):  # (views of the game's chunks: bytes.join takes bytes only)
        out.extend(part)
    return bytes(out)


def parts(game, filed=0):
    """pack(game) as the pieces it is joined from, the checkpoints and the history being
    views of the game's own chunks (no copy): a journal writes them one after the other,
    so a long game's snapshot never needs one large block of heap. One change of the game
    leaves the views' bytes as they are (an undo writes nothing, an event writes after
    them). filed: leave out the first `filed` whole chunks (at most count // 128)."""
    records = game.history.count
    marks = records // _CHECKPOINT_EVERY + 1
    if filed:
        head = struct.pack(_HEAD_SPLIT, _MAGIC_SPLIT, records, marks, filed)
    else:
        head = struct.pack(_HEAD, _MAGIC, records, marks)
    return (head, save(game)) + tuple(game.history.parts(filed))


def pack_state(game):
    return save(game)[:_STATE_SIZE]


def unpack_state(data):
    """The board state (Game.state()) that pack_state's bytes say (the host's logger reads
    it; rules_core.boardstate, imported here: a board never calls it)."""
    # (relative: a module's full name is made when it is imported, not kept by every
    # board as a name of this code)
    from .boardstate import state
    from .common import GameError
    from .game import Game
    from .savedstate import load, settings_of

    data = bytes(data)
    if len(data) != _STATE_SIZE:
        raise GameError("a board state is %d bytes, got %d" % (_STATE_SIZE, len(data)))
    game = Game(*settings_of(data))
    load(game, data, True)
    return state(game)
