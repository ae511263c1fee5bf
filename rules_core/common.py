"""Numbers shared by the game, the rules of each id and the board (no logic).

    from rules_core.common import A_SET, POPCOUNT
    POPCOUNT[0b10101]  # -> 3 pins toppled

A number that only rules_core reads is private here (folded away on a board) and held by
each module that reads it as a constant of its own (tests/test_rules_game.py checks them).
"""

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


_PLAYING = const(0)
BREAK = const(1)
_FINISHED = const(2)
TIE = const(3)  # winner code for a tie; 1 and 2 are the players

# Announcements, one bit each; the bit order is the one order they are listed in
# (rules_core.boardstate names them in the board state in that order).
A_TWENTY = const(0x001)  # << (player - 1)
A_DISTANCE = const(0x004)  # << (player - 1)
_A_BREAK = const(0x010)
A_LAST_SERIES = const(0x020)  # << (player - 1)
A_SET = const(0x080)  # << (player - 1)
A_FINISHED = const(0x200)

_CENTRE = const(0x04)  # spot 3: the red pin (ceb), the king (russian)


class GameError(ValueError):
    """An event or setting the game cannot take; the game is left unchanged."""


# Set bits of every five-bit mask: the pins toppled in a pins bitmask, without a call.
POPCOUNT = b"\x00\x01\x01\x02\x01\x02\x02\x03\x01\x02\x02\x03\x02\x03\x03\x04" \
    b"\x01\x02\x02\x03\x02\x03\x03\x04\x02\x03\x03\x04\x03\x04\x04\x05"


# The records' error and foul codes, rules_core.events' (which names them too): here, so that
# the game and the board need not load the records' encoders, which the host's tools use.
class EventError(GameError):
    """An event that cannot be encoded or a record that cannot be decoded."""


# Bit i of a shot record's named-fouls byte stands for FOUL_NAMES[i] (rules_core.events).
FOUL_NAMES = ("foul", "quilles", "rouge", "stop30", "dehors", "blanche", "touche", "pied")
