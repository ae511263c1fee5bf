"""Save and resume a game exactly, and the compact board state for the serial link.

    from rules_core import snapshot
    data = snapshot.pack(game)          # settings + state + history + checkpoints
    pieces = snapshot.parts(game)       # the same bytes in pieces (what a journal writes)
    game2 = snapshot.unpack(data)       # game2.state() == game.state(); undo still works
    data = snapshot.pack(game, 3)       # the same without the history's first 3 chunks
    game2 = snapshot.unpack(data, fill) # fill(chunk, i) puts chunk i's bytes in chunk
    payload = snapshot.pack_state(game) # 27 bytes: the board state only
    state = snapshot.unpack_state(payload)  # == game.state()

unpack() loads the saved state directly (it does not re-apply the history), so resuming
a long game on the device is quick. pack() layout: b"PB1", history length (u16, records),
then the current state (game.SAVE_SIZE bytes), the checkpoints, and the history.
parts(game, filed) with filed > 0 leaves out the history's first `filed` chunks (128
events and their 4 checkpoints each, rules_core.game.History: a journal keeps them in a
file of its own, boardlib.journal): b"PB2", history length (u16), checkpoints (u16),
filed chunks (u16), the state, then the checkpoints and records from chunk `filed` on;
unpack() then asks its `fill` for each filed chunk, in order.
"""

import struct

from rules_core import events
from rules_core.game import CHECKPOINT_EVERY, Game, GameError
from rules_core.savedstate import SAVE_SIZE, STATE_SIZE, settings_of

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int

_MAGIC = b"PB1"
_HEAD = ">3sHH"  # magic, history records, checkpoints
_HEAD_SIZE = 7
_MAGIC_SPLIT = b"PB2"
_HEAD_SPLIT = ">3sHHH"  # magic, history records, checkpoints, chunks left out
_HEAD_SPLIT_SIZE = const(9)
_CHUNK_EVENTS = const(128)  # rules_core.game's (tests/test_journal.py checks it)
_CHUNK_MARKS = const(4)


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
    marks = records // CHECKPOINT_EVERY + 1
    if filed:
        head = struct.pack(_HEAD_SPLIT, _MAGIC_SPLIT, records, marks, filed)
    else:
        head = struct.pack(_HEAD, _MAGIC, records, marks)
    return (head, game._save()) + tuple(game.history.parts(filed))


def unpack(data, fill=None):
    """The game saved in data; fill(chunk, i) puts the history's chunk i into `chunk` (a
    bytearray of the chunk's size) when the snapshot left the first chunks out, and
    raises if it cannot."""
    # Read through a view: a long game's snapshot (5 KB at 1000 events) is copied once,
    # into the game's chunks (a copy of the whole, a slice and its bytearray, then the
    # first growth, each wanted a block of that size: a board's heap after its code had
    # none to spare).
    data = memoryview(data)
    if len(data) < _HEAD_SIZE + SAVE_SIZE:
        raise GameError("saved game is too short (%d bytes)" % len(data))
    pos = _HEAD_SIZE
    filed = 0
    if bytes(data[:3]) == _MAGIC_SPLIT:
        pos = _HEAD_SPLIT_SIZE
        magic, records, marks, filed = struct.unpack(_HEAD_SPLIT, bytes(data[:pos]))
    else:
        magic, records, marks = struct.unpack(_HEAD, bytes(data[:pos]))
    if magic != _MAGIC and magic != _MAGIC_SPLIT:
        raise GameError("not a saved game")
    if marks != records // CHECKPOINT_EVERY + 1:
        raise GameError("saved game has %d checkpoints for %d records" % (marks, records))
    if filed * _CHUNK_EVENTS > records or (filed and fill is None):
        raise GameError("saved game's history is not there (%d chunks)" % filed)
    marks -= filed * _CHUNK_MARKS
    size = (pos + SAVE_SIZE * (1 + marks)
            + (records - filed * _CHUNK_EVENTS) * events.RECORD_SIZE)
    if len(data) != size:
        raise GameError("saved game has %d bytes, expected %d" % (len(data), size))
    current = bytes(data[pos:pos + SAVE_SIZE])
    game = Game(*settings_of(current))
    pos += SAVE_SIZE
    first = 0
    for i in range(filed):
        chunk = game._chunk(i)
        fill(chunk, i)
        # (a chunk's records follow its checkpoints: SAVE_SIZE * _CHUNK_MARKS bytes)
        _check(chunk, SAVE_SIZE * _CHUNK_MARKS, first)
        first += _CHUNK_EVENTS
    history = data[pos + SAVE_SIZE * marks:]
    game._take(data[pos:pos + SAVE_SIZE * marks], history, filed)
    _check(history, 0, first)
    game._load(current)
    game.reserve()
    return game


def _check(records, at, first):
    """Every record from `at` in `records` decodes (a check only: nothing is re-applied);
    `first` numbers the first of them."""
    for k in range(at, len(records), events.RECORD_SIZE):
        try:
            events.decode(records, k)
        except events.EventError as e:
            raise GameError("saved game has a bad record %d: %s"
                            % (first + (k - at) // 4, e)) from None


def pack_state(game):
    return game._save()[:STATE_SIZE]


def unpack_state(data):
    data = bytes(data)
    if len(data) != STATE_SIZE:
        raise GameError("a board state is %d bytes, got %d" % (STATE_SIZE, len(data)))
    game = Game(*settings_of(data))
    game._load(data, True)
    return game.state()
