"""7-segment font: characters to segment bytes and back, in TM1637 bit order.

    from boardlib import font
    font.encode_char("E")            # 0x79: bit0 = a (top) ... bit6 = g (middle), bit7 = dp
    buf = bytearray(8)
    font.render("brK 5:00", buf)     # 8 cells; the ':' lights bit 7 of the '5'

Segments::

     aaa
    f   b
     ggg
    e   c
     ddd  dp

Digits, blank, '-', '_', '=', '+' (drawn as |-), the letters the messages need and the
ring '\u00b0' that marks the player with the marked ball in five-pins, and the bar
'\u203e' (the top segment alone) that marks a shot capped at the distance.
Letters with no distinct shape of their own use the other case (a -> A, B -> b,
S -> the shape of 5, O -> the shape of 0). A shape two characters share decodes to the
first one listed below: digits win, so "SEt" decodes as "5Et" - exactly what a person
sees.

`render` puts a '.' or ':' on the character before it: both light that cell's bit 7.
On the common 4-digit TM1637 clock modules bit 7 of the second cell of a module is the
colon, on dotted modules and on the MAX7219 it is that digit's decimal point; so write
times as "m:ss" with the minute digit in a module's second cell (position 1 or 5).
"""

try:
    from micropython import const
except ImportError:  # CPython: the value itself
    const = lambda value: value


_DP = const(0x80)

# Canonical characters first: a shape reads back as the first that has it (the simulator's
# tools.sim.board.chips.decode_segments).
_CHARS = "0123456789 -_=+AbCcdEFGHhIiJKLnoPqrtUuWy\u00b0\u203e"
_GLYPHS = (
    b"\x3f\x06\x5b\x4f\x66\x6d\x7d\x07\x7f\x6f"  # 0-9
    b"\x00\x40\x08\x48\x70"  # blank - _ = +
    b"\x77\x7c\x39\x58\x5e\x79\x71\x3d\x76\x74"  # A b C c d E F G H h
    b"\x30\x10\x1e\x75\x38\x54\x5c\x73\x67\x50"  # I i J K L n o P q r
    b"\x78\x3e\x1c\x7e\x6e"  # t U u W y
    b"\x63"  # the marked ball (a ring in the top half, CEB 21.1; boardlib.layout)
    b"\x01"  # a shot capped at the distance: a bar on top (boardlib.layout.shot_points)
)
# Other spellings of the same shapes (never read back).
_ALIAS_CHARS = const("aBDefgjklNOpQRSsTYwzZ")
_ALIAS_OF = const("AbdEF9JKIn0Pqr55tyW22")


def encode_char(ch):
    """Segment byte (bit0 = a ... bit6 = g, bit7 = dp) for one character.

    Raises ValueError for a character the display cannot show.
    """
    i = _CHARS.find(ch) if len(ch) == 1 else -1
    if i < 0:
        j = _ALIAS_CHARS.find(ch) if len(ch) == 1 else -1
        if j < 0:
            raise ValueError("no 7-segment shape for %r" % (ch,))
        i = _CHARS.find(_ALIAS_OF[j])
    return _GLYPHS[i]


def render(text, buf, start=0, width=8):
    """Write `text` into buf[start:start + width], left-aligned, the rest blank.

    A '.' or ':' lights bit 7 of the character before it (on its own it takes a blank
    cell). Returns the number of cells the text used. Raises ValueError, leaving buf
    untouched, when a character has no shape or the text does not fit.
    """
    if start < 0 or width < 0 or start + width > len(buf):
        raise ValueError("cells %d..%d outside a buffer of %d" % (start, start + width, len(buf)))
    used = cells(text)
    if used > width:
        raise ValueError("%r needs %d cells, only %d free" % (text, used, width))
    pos = start
    end = start + width
    while pos < end:
        buf[pos] = 0
        pos += 1
    pos = start - 1
    mark_ok = False  # a mark belongs to the character just written, once
    for ch in text:
        if (ch == "." or ch == ":") and mark_ok:
            buf[pos] |= _DP
            mark_ok = False
            continue
        pos += 1
        if ch == "." or ch == ":":
            buf[pos] = _DP
        else:
            buf[pos] = encode_char(ch)
            mark_ok = True
    return used


def cells(text):
    """Cells `text` needs once rendered; raises ValueError for a character with no shape."""
    if not isinstance(text, str):
        raise ValueError("text must be a str, not %r" % (text,))
    count = 0
    mark_ok = False
    for ch in text:
        if (ch == "." or ch == ":") and mark_ok:
            mark_ok = False
            continue
        if ch != "." and ch != ":":
            encode_char(ch)
            mark_ok = True
        count += 1
    return count
