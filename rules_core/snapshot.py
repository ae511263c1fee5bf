"""Save and resume a game exactly, and the compact board state for the serial link.

    from rules_core import snapshot
    data = snapshot.pack(game)          # settings + state + history + checkpoints
    pieces = snapshot.parts(game)       # the same bytes in pieces (what a journal writes)
    game2 = snapshot.unpack(data)       # game2.state() == game.state(); undo still works
    payload = snapshot.pack_state(game) # 27 bytes: the board state only
    state = snapshot.unpack_state(payload)  # == game.state()

unpack() loads the saved state directly (it does not re-apply the history), so resuming
a long game on the device is quick. pack() layout: b"PB1", history length (u16, records),
then the current state (game.SAVE_SIZE bytes), the checkpoints, and the history.
"""

import struct

from rules_core import events
from rules_core.game import CHECKPOINT_EVERY, Game, GameError
from rules_core.savedstate import SAVE_SIZE, STATE_SIZE, settings_of

_MAGIC = b"PB1"
_HEAD = ">3sHH"  # magic, history records, checkpoints
_HEAD_SIZE = 7


def pack(game):
    out = bytearray()
    for part in parts(game):  # (views of the game's chunks: bytes.join takes bytes only)
        out.extend(part)
    return bytes(out)


def parts(game):
    """pack(game) as the pieces it is joined from, the checkpoints and the history being
    views of the game's own chunks (no copy): a journal writes them one after the other,
    so a long game's snapshot never needs one large block of heap. One change of the game
    leaves the views' bytes as they are (an undo writes nothing, an event writes after
    them)."""
    records = game.history.count
    head = struct.pack(_HEAD, _MAGIC, records, records // CHECKPOINT_EVERY + 1)
    return (head, game._save()) + tuple(game.history.parts())


def unpack(data):
    # Read through a view: a long game's snapshot (5 KB at 1000 events) is copied once,
    # into the game's chunks (a copy of the whole, a slice and its bytearray, then the
    # first growth, each wanted a block of that size: a board's heap after its code had
    # none to spare).
    data = memoryview(data)
    if len(data) < _HEAD_SIZE + SAVE_SIZE:
        raise GameError("saved game is too short (%d bytes)" % len(data))
    magic, records, marks = struct.unpack(_HEAD, bytes(data[:_HEAD_SIZE]))
    if magic != _MAGIC:
        raise GameError("not a saved game")
    if marks != records // CHECKPOINT_EVERY + 1:
        raise GameError("saved game has %d checkpoints for %d records" % (marks, records))
    size = _HEAD_SIZE + SAVE_SIZE * (1 + marks) + records * events.RECORD_SIZE
    if len(data) != size:
        raise GameError("saved game has %d bytes, expected %d" % (len(data), size))
    pos = _HEAD_SIZE
    current = bytes(data[pos:pos + SAVE_SIZE])
    game = Game(*settings_of(current))
    pos += SAVE_SIZE
    history = data[pos + SAVE_SIZE * marks:]
    game._take(data[pos:pos + SAVE_SIZE * marks], history)
    for k in range(0, len(history), events.RECORD_SIZE):
        try:
            events.decode(history, k)  # a check only: nothing is re-applied
        except events.EventError as e:
            raise GameError("saved game has a bad record %d: %s" % (k // 4, e)) from None
    game._load(current)
    game.reserve()
    return game


def pack_state(game):
    return game._save()[:STATE_SIZE]


def unpack_state(data):
    data = bytes(data)
    if len(data) != STATE_SIZE:
        raise GameError("a board state is %d bytes, got %d" % (STATE_SIZE, len(data)))
    game = Game(*settings_of(data))
    game._load(data, True)
    return game.state()
