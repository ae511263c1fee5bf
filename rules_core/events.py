"""Events as fixed-size records: what the game applies and the journal stores.

    from rules_core import events
    rec = events.encode_shot(0b00101, 1, ("rouge",))   # 4 bytes
    rec = events.encode_adjust(2, -4)
    kind, a, b, c = events.decode(rec)

A shot record is ``[KIND_SHOT, pins | carom << 5 | unset << 7, named fouls bitmask, other
fouls]``. `unset` (bit 7) marks a shot that began before every pin was set again (the
board's castle check, docs/inputs.md); the rules never read it: the shot scores the same.
Foul codes with a meaning of their own, and the usual CEB verdict names, have one bit
each so the journal keeps their names; any other name, and a code given again, is one
more ordinary foul, counted in the last byte (its name is not kept: records have a fixed
size so that a long game costs a fixed, small amount of memory).
An adjust record is ``[2 (the adjust kind), player, delta high byte, delta low byte]``
(delta is a signed 16-bit number).
"""

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


# (defined in rules_core.common, where the game and the board read them)
from rules_core.common import FOUL_NAMES, EventError

_RECORD_SIZE = const(4)
KIND_SHOT = const(1)
_KIND_ADJUST = const(2)
_UNSET = const(0x80)  # in a shot record's second byte: the shot began with a spot empty

# Bit i of the named-fouls byte stands for FOUL_NAMES[i]. The first four have rules of
# their own (RULES.md); the others are ordinary fouls kept by name for the log.
FOUL_ORDINARY = const(0x01)
_FOUL_QUILLES = const(0x02)  # (the rules modules hold the bits they read)
_FOUL_ROUGE = const(0x04)
_FOUL_STOP30 = const(0x08)
MAX_OTHER = const(15)
_MAX_DELTA = const(32767)


def encode_shot(pins=0, carom=0, fouls=(), unset=False):
    """Record for a shot: pins bitmask (bit0 = spot 1), carom 0/1/2, foul codes, and
    whether it began with a pin not set (`unset`: a mark, not a rule)."""
    if not isinstance(pins, int) or isinstance(pins, bool) or not 0 <= pins <= 0x1F:
        raise EventError("pins must be a bitmask of spots 1-5 (0..31), got %r" % (pins,))
    if carom not in (0, 1, 2) or isinstance(carom, bool):
        raise EventError("carom must be 0 (none), 1 (carambole) or 2 (casino), got %r"
                         % (carom,))
    if isinstance(fouls, str):
        fouls = (fouls,)
    # The named-fouls bitmask and the count of other names
    bits = 0
    other = 0
    seen = []
    for code in fouls:
        if not isinstance(code, str) or not code:
            raise EventError("foul code must be a non-empty name, got %r" % (code,))
        if code in seen or code not in FOUL_NAMES:
            other += 1  # a repeated code is one more ordinary foul (CEB 24.1: they add up)
        else:
            bits |= 1 << FOUL_NAMES.index(code)
        seen.append(code)
    if other > MAX_OTHER:
        raise EventError("too many fouls in one shot")
    return bytes((KIND_SHOT, pins | carom << 5 | (_UNSET if unset else 0), bits, other))


def is_unset(record, offset=0):
    """True for a shot record marked unset (it began before the pins were all set)."""
    return record[offset] == KIND_SHOT and bool(record[offset + 1] & _UNSET)


def encode_adjust(player, delta):
    """Record for a referee correction: add delta (may be negative) to player's score."""
    if player not in (1, 2) or isinstance(player, bool):
        raise EventError("player must be 1 or 2, got %r" % (player,))
    if not isinstance(delta, int) or isinstance(delta, bool):
        raise EventError("adjust needs a whole number of points, got %r" % (delta,))
    if delta == 0:
        raise EventError("adjust by 0 changes nothing")
    if not -_MAX_DELTA <= delta <= _MAX_DELTA:
        raise EventError("adjust of %d points is out of range" % delta)
    raw = delta & 0xFFFF
    return bytes((_KIND_ADJUST, player, raw >> 8, raw & 0xFF))


def decode(record, offset=0):
    """(kind, a, b, c) of a record, checked; a shot gives (KIND_SHOT, pins, carom, (bits,
    other)) and an adjust (2, player, delta, None)."""
    if len(record) - offset < _RECORD_SIZE:
        raise EventError("a record is %d bytes, got %d" % (_RECORD_SIZE, len(record) - offset))
    kind = record[offset]
    a = record[offset + 1]
    b = record[offset + 2]
    c = record[offset + 3]
    if kind == KIND_SHOT:
        if (a >> 5) & 3 > 2 or c > MAX_OTHER:
            raise EventError("bad shot record")
        return kind, a & 0x1F, (a >> 5) & 3, (b, c)
    if kind == _KIND_ADJUST:
        delta = b << 8 | c
        if delta & 0x8000:
            delta -= 0x10000
        if a not in (1, 2) or delta == 0 or delta < -_MAX_DELTA:
            raise EventError("bad adjust record")
        return kind, a, delta, None
    raise EventError("unknown record kind %d" % kind)

