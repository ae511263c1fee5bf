"""A saved game read back (rules_core.snapshot's layout): what a board needs once, at
start-up, apart from the snapshot's writing, so that it drops this code once its game is
read (firmware.app).

    from rules_core import resume
    game = resume.unpack(data)          # the game snapshot.pack(game) saved
    game = resume.unpack(data, fill)    # fill(chunk, i) puts chunk i's bytes in chunk
"""

import struct

from rules_core.common import EventError
from rules_core.game import Game, GameError, check_record
from rules_core.savedstate import load, settings_of

try:
    from micropython import const
except ImportError:  # CPython: the value itself
    const = lambda value: value  # noqa: E731 - a function would be one more name

# rules_core.snapshot's layouts, and struct.calcsize of its headers (tests/test_snapshot.py
# checks them)
_MAGIC = const(b"PB1")
_HEAD = const(">3sHH")
_HEAD_SIZE = const(7)
_MAGIC_SPLIT = const(b"PB2")
_HEAD_SPLIT = const(">3sHHH")
_HEAD_SPLIT_SIZE = const(9)
_CHUNK_EVENTS = const(128)  # rules_core.game's (tests/test_journal.py checks it)
_CHUNK_MARKS = const(4)
# rules_core.game's, savedstate's and events' (tests/test_snapshot.py checks them)
_CHECKPOINT_EVERY = const(32)
_SAVE_SIZE = const(28)
_RECORD_SIZE = const(4)


def unpack(data, fill=None):
    """The game saved in data; fill(chunk, i) puts the history's chunk i into `chunk` (a
    bytearray of the chunk's size) when the snapshot left the first chunks out, and
    raises if it cannot."""
    # Read through a view: a long game's snapshot (5 KB at 1000 events) is copied once,
    # into the game's chunks (a copy of the whole, a slice and its bytearray, then the
    # first growth, each wanted a block of that size: a board's heap after its code had
    # none to spare).
    data = memoryview(data)
    if len(data) < _HEAD_SIZE + _SAVE_SIZE:
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
    if marks != records // _CHECKPOINT_EVERY + 1:
        raise GameError("saved game has %d checkpoints for %d records" % (marks, records))
    if filed * _CHUNK_EVENTS > records or (filed and fill is None):
        raise GameError("saved game's history is not there (%d chunks)" % filed)
    marks -= filed * _CHUNK_MARKS
    size = (pos + _SAVE_SIZE * (1 + marks)
            + (records - filed * _CHUNK_EVENTS) * _RECORD_SIZE)
    if len(data) != size:
        raise GameError("saved game has %d bytes, expected %d" % (len(data), size))
    current = bytes(data[pos:pos + _SAVE_SIZE])
    game = Game(*settings_of(current))
    pos += _SAVE_SIZE
    first = 0
    for i in range(filed):
        chunk = game._chunk(i)
        fill(chunk, i)
        # (a chunk's records follow its checkpoints: _SAVE_SIZE * _CHUNK_MARKS bytes)
        _check(chunk, _SAVE_SIZE * _CHUNK_MARKS, first)
        first += _CHUNK_EVENTS
    history = data[pos + _SAVE_SIZE * marks:]
    game._take(data[pos:pos + _SAVE_SIZE * marks], history, filed)
    _check(history, 0, first)
    load(game, current)
    try:
        game.reserve()
    except MemoryError:  # room for the next events: the game makes it when it needs it
        pass
    return game


def _check(records, at, first):
    """Every record from `at` in `records` is one the game would apply (a check only:
    nothing is re-applied); `first` numbers the first of them. The game's own check, not
    rules_core.events' decoder: a board reads its game without loading that module (1.8 KB
    of heap on a 32-bit port, at power-up's tightest moment: docs/performance.md)."""
    for k in range(at, len(records), _RECORD_SIZE):
        try:
            check_record(records, k)
        except EventError as e:
            raise GameError("saved game has a bad record %d: %s"
                            % (first + (k - at) // 4, e)) from None
