"""The saved board state, 28 bytes: the one place that packs and unpacks it.

    from rules_core import savedstate
    data = savedstate.save(game)        # the game's state: SAVE_SIZE bytes
    savedstate.save_into(game, buf, at) # the same into buf[at:at + SAVE_SIZE]
    savedstate.load(game, data)         # the one decoder (undo, resume)
    rules, distance, sets, first, teams = savedstate.settings_of(data)

save_into and load allocate nothing: the game saves and restores its state at every event
(rules_core.game), on the board's event path.

docs/state-layout.md has the table of every byte and bit. The journal keeps this state in
every snapshot and checkpoint (rules_core.snapshot.pack), the link sends its first
STATE_SIZE bytes (snapshot.pack_state) and the logger decodes them (snapshot.unpack_state).
A state saved before two-man teams existed (byte 2 bits 2, 3 and 7 were always 0) reads as
singles, so games on flash and logger databases from then still load.
"""

import struct

from rules_core.common import GameError
from rules_core.settings import BEST_OF, RULES_IDS

try:
    from micropython import const
except ImportError:  # CPython: the value itself
    const = lambda value: value  # noqa: E731 - a function would be one more name


# The first STATE_SIZE bytes are the board state sent on the link (snapshot.pack_state); the
# last byte holds flags only a resume needs. Every bit field has a named shift and mask
# here and is packed in save() and unpacked in load() only; snapshot reads the settings
# through settings_of(). Moving a field breaks every stored game and every logger
# database: tests/test_state_layout.py pins each one on fixed bytes.
_STATE_FORMAT = const(">BBBH11H")
STATE_SIZE = const(27)
_SAVE_FORMAT = const(">BBBH11HB")  # (the layout whole: save_into packs it in pieces)
SAVE_SIZE = const(28)
# Byte 0, the game.
_RULES_SHIFT = const(0)  # rules id: RULES_IDS index
_RULES_MASK = const(3)
_STATUS_SHIFT = const(2)  # playing, break, finished (rules_core.common)
_STATUS_MASK = const(3)
_FINISHED = const(2)  # rules_core.common's (tests/test_rules_game.py checks it)
_WINNER_SHIFT = const(4)  # 0 none, 1, 2, TIE
_WINNER_MASK = const(3)
_TURN_SHIFT = const(6)  # turn - 1
_FIRST_SHIFT = const(7)  # first - 1
# Byte 1, the settings' best-of and the last shot.
_BEST_OF_SHIFT = const(0)  # BEST_OF index
_BEST_OF_MASK = const(3)
_LAST_SERIES_SHIFT = const(2)  # 0, or the player who plays a last series
_LAST_SERIES_MASK = const(3)
_LAST_SHIFT = const(4)  # 1: a shot was made ("last" is not null)
_LAST_PLAYER_SHIFT = const(5)  # last player - 1
_LAST_TO_SHIFT = const(6)  # who got the points - 1
_LAST_FOUL_SHIFT = const(7)
# Byte 2, the match: sets won, and ceb two-man teams (bits that were always 0 before teams,
# so a state saved without them reads as singles).
_SETS1_SHIFT = const(0)
_SETS2_SHIFT = const(4)
_SETS_MASK = const(3)
_MEMBER1_SHIFT = const(2)  # team 1's player at the table - 1
_MEMBER2_SHIFT = const(3)  # team 2's player at the table - 1
_TEAMS_SHIFT = const(7)  # 1: two-man teams
_MATCH_SPARE = const(0x40)  # must be 0
# Bytes 3-4: the announcements of the last event (common.A_*), bits 0-9.
_ANNOUNCE_SPARE = const(0xFC00)  # must be 0
# Bytes 5-26: distance 1, 2, score 1, 2, innings 1, 2, series, high 1, 2, shots, last points.
# Byte 27, hidden: what was announced, the break, reds in a row, the next shot opens a set.
_SAID_TWENTY_SHIFT = const(0)  # bit per player
_SAID_DISTANCE_SHIFT = const(2)  # bit per player
_PLAYER_BITS_MASK = const(3)
_BREAK_DONE_SHIFT = const(4)
_REDS_SHIFT = const(5)  # ddbu: caromboles in a row without a pin, 0-2
_REDS_MASK = const(3)
_OPENING_SHIFT = const(7)


_pack_into = struct.pack_into  # (one word of the caller's frame, where struct.x takes two)


def settings_of(data):
    """(rules, (distance 1, distance 2), sets, first, teams) that a saved state names."""
    v = struct.unpack(_STATE_FORMAT, data[:STATE_SIZE])
    rid = v[0] >> _RULES_SHIFT & _RULES_MASK
    best = v[1] >> _BEST_OF_SHIFT & _BEST_OF_MASK
    if rid >= len(RULES_IDS) or best >= len(BEST_OF):
        raise GameError("not a saved board state")
    return (RULES_IDS[rid], (v[4], v[5]), BEST_OF[best], (v[0] >> _FIRST_SHIFT & 1) + 1,
            v[2] >> _TEAMS_SHIFT & 1)


def save(self):
    """The game's state as SAVE_SIZE bytes."""
    buf = bytearray(SAVE_SIZE)
    save_into(self, buf)
    return bytes(buf)


def save_into(self, buf, at=0):
    """The game's state as SAVE_SIZE bytes into buf at `at`. (In pieces, each a call
    with few arguments: a call with many takes a frame bigger than MicroPython keeps on
    the C stack.)"""
    _flags_into(self, buf, at)
    # The counts, u16 BE from byte 5 to 27, in four calls of three values or fewer (a
    # call costs about as much as four bytes stored one by one; a fourth value would
    # take the frame over 11 words, from the heap at every call)
    _pack_into(">HHH", buf, at + 5, self.distance[0], self.distance[1], self.score[0])
    _pack_into(">HHH", buf, at + 11, self.score[1], self.innings[0], self.innings[1])
    _pack_into(">HHH", buf, at + 17, self.series, self.high[0], self.high[1])
    _pack_into(">HH", buf, at + 23, self.shots, self.last_points)


def _flags_into(self, buf, at):
    """Bytes 0-4 and 27 (docs/state-layout.md)."""
    buf[at] = (self.rid << _RULES_SHIFT | self.status << _STATUS_SHIFT
               | self.winner << _WINNER_SHIFT | (self.turn - 1) << _TURN_SHIFT
               | (self.first - 1) << _FIRST_SHIFT)
    last = (BEST_OF.index(self.best_of) << _BEST_OF_SHIFT
            | self.last_series << _LAST_SERIES_SHIFT)
    if self.last_player:
        last |= (1 << _LAST_SHIFT | (self.last_player - 1) << _LAST_PLAYER_SHIFT
                 | (self.last_to - 1) << _LAST_TO_SHIFT
                 | (1 if self.last_foul else 0) << _LAST_FOUL_SHIFT)
    buf[at + 1] = last
    last = self.sets[0] << _SETS1_SHIFT | self.sets[1] << _SETS2_SHIFT
    if self.teams:
        last |= (1 << _TEAMS_SHIFT | (self.members[0] - 1) << _MEMBER1_SHIFT
                 | (self.members[1] - 1) << _MEMBER2_SHIFT)
    buf[at + 2] = last
    buf[at + 3] = self.announce >> 8
    buf[at + 4] = self.announce & 0xFF
    buf[at + 27] = (self.said_twenty << _SAID_TWENTY_SHIFT
                    | self.said_distance << _SAID_DISTANCE_SHIFT
                    | (1 if self.break_done else 0) << _BREAK_DONE_SHIFT
                    | self.reds << _REDS_SHIFT | (1 if self.opening else 0) << _OPENING_SHIFT)


def load(self, data, public_only=False, at=0):
    """Unpack a saved state (at `at` in data) into a game made with the settings it names.
    public_only: the STATE_SIZE bytes of the link's state, without the hidden byte."""
    if len(data) - at < (STATE_SIZE if public_only else SAVE_SIZE):
        raise GameError("not a saved board state")
    _load_flags(self, data[at], data[at + 1], data[at + 2], data[at + 3] << 8 | data[at + 4])
    _load_counts(self, data, at + 9)
    hidden = 0 if public_only else data[at + 27]
    self.said_twenty = hidden >> _SAID_TWENTY_SHIFT & _PLAYER_BITS_MASK
    self.said_distance = hidden >> _SAID_DISTANCE_SHIFT & _PLAYER_BITS_MASK
    self.break_done = bool(hidden >> _BREAK_DONE_SHIFT & 1)
    self.reds = hidden >> _REDS_SHIFT & _REDS_MASK
    self.opening = bool(hidden >> _OPENING_SHIFT & 1)


def _load_flags(self, game, last, match, announce):
    status = game >> _STATUS_SHIFT & _STATUS_MASK
    winner = game >> _WINNER_SHIFT & _WINNER_MASK
    if (game >> _RULES_SHIFT & _RULES_MASK != self.rid or status > _FINISHED
            or last >> _LAST_SERIES_SHIFT & _LAST_SERIES_MASK == 3
            or match & _MATCH_SPARE
            or announce & _ANNOUNCE_SPARE or (winner != 0) != (status == _FINISHED)
            or match >> _TEAMS_SHIFT & 1 != self.teams
            or (not self.teams and match & (1 << _MEMBER1_SHIFT | 1 << _MEMBER2_SHIFT))):
        raise GameError("not a saved board state")
    self.announce = announce
    self.status = status
    self.finished = status == _FINISHED
    self.winner = winner
    self.turn = (game >> _TURN_SHIFT & 1) + 1
    self.last_series = last >> _LAST_SERIES_SHIFT & _LAST_SERIES_MASK
    if last >> _LAST_SHIFT & 1:
        self.last_player = (last >> _LAST_PLAYER_SHIFT & 1) + 1
        self.last_to = (last >> _LAST_TO_SHIFT & 1) + 1
    else:
        self.last_player = self.last_to = 0
    self.last_foul = bool(last >> _LAST_FOUL_SHIFT & 1)
    # the game's lists are changed in place: nothing is allocated
    status = self.sets
    status[0] = match >> _SETS1_SHIFT & _SETS_MASK
    status[1] = match >> _SETS2_SHIFT & _SETS_MASK
    status = self.members
    status[0] = (match >> _MEMBER1_SHIFT & 1) + 1
    status[1] = (match >> _MEMBER2_SHIFT & 1) + 1


def _load_counts(self, data, at):
    """The 16-bit fields from the scores on (bytes 9-26)."""
    v = self.score
    v[0] = data[at] << 8 | data[at + 1]
    v[1] = data[at + 2] << 8 | data[at + 3]
    v = self.innings
    v[0] = data[at + 4] << 8 | data[at + 5]
    v[1] = data[at + 6] << 8 | data[at + 7]
    self.series = data[at + 8] << 8 | data[at + 9]
    v = self.high
    v[0] = data[at + 10] << 8 | data[at + 11]
    v[1] = data[at + 12] << 8 | data[at + 13]
    self.shots = data[at + 14] << 8 | data[at + 15]
    self.last_points = data[at + 16] << 8 | data[at + 17]
