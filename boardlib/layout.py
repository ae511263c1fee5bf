"""Screens of the scoreboard as 8 segment bytes, pure.

    from boardlib import layout
    buf = bytearray(8)              # allocate once, reuse for every screen
    layout.scores(buf, 25, 130, 2)  # "  25 130." : the dot far right = player 2 at the table
    display.show(buf)

Cells 0-3 are player 1's half (the left module), cells 4-7 player 2's (the right
module), left to right. Every function overwrites all 8 cells. On bad input (a player
that is not 1 or 2, a score that is not an int, a buffer shorter than 8) it raises
ValueError before writing anything. `scores`, `break_clock` and `set_score` allocate
nothing: they run between every shot and every second of a break.

What each screen shows (as a person reads it; S looks like 5):

| call | player 1 | player 2 | as text |
|---|---|---|---|
| `scores(buf, 25, 130, 1)` | score, right-aligned | score | `" . 25 130"` |
| `scores(buf, 25, 130, 1, marked=2)` | as above | a ring in its first cell | `" . 25°130"` |
| `members(buf, [2, 1], 1, 2)` | ` A2` (team 1's player 2) | `° b1` | `" . A2° b1"` |
| `shot_points(buf, 1, 6, 1)` | `+6` | blank | `"  +6    "` |
| `shot_points(buf, 1, 6, 2)` | `FouL` | `+6` | `"FouL  +6"` |
| `shot_points(buf, 1, 6, 2, foul=False)` | `oPEn` (ceb opening shot) | `+6` | |
| `shot_points(buf, 2, 0, 2, foul=True)` | blank | `FouL` (ddbu: nobody scores) | |
| `shot_points(buf, 1, 2, 1, capped=True)` | `\u203e+2` (capped at the distance) | blank | |
| `remaining20(buf, 2, 18)` | blank | `r 18` | |
| `distance(buf, 1)` | `dISt` | blank | |
| `break_clock(buf, 300)` | `brK` | ` 5:00` | |
| `winner(buf, 2)` | blank | ` Win` | |
| `tie(buf)` | ` tIE` | ` tIE` | |
| `set_score(buf, 2, 1)` | `SEt2` | `SEt1` | |
| `last_series(buf, 2)` | blank | `LASt` | |
| `error(buf, 3)` | `Err` then the code right-aligned over the last 5 cells | | `"Err    3"` |
| `text(buf, "rULE ddbu")` | the text, left-aligned | | |
| `castle(buf, 0b01010, 1, "Pin", 1)` | turn dot, spots 2 and 4 (no pin) | `Pin` | `" . 2 4 Pin"` |
| `castle(buf, 0b00010, 2, "no")` | `no` | spot 2 (a shot begun with it empty) | `"no  2    "` |

Turn marker: the decimal point of the outer cell of the player at the table (cell 0 for
player 1, cell 7 for player 2), so it never takes a digit from a 4-digit score and sits at
that player's edge of the board. Scores clip to 9999 and -999.

Marked ball (ceb, CEB 21.1): a ring in the top half of the first cell of the marked
player's half (cell 0 or cell 4), on the score picture and wherever that cell is blank on
the messages (`mark_ball`). It needs no decimal point or colon, so it shows on every module
kind, and it never looks like the turn marker. A ceb score has at most 3 digits
(rules_core.settings.RULES_TABLE), so the cell is always free on the score picture.
Pins set? (`castle`, docs/inputs.md): the empty spots (bit 0 = spot 1) stand as their
numbers in reading order, one cell a spot, on the half of `player` (the player at the
table, or the shooter of a marked shot), and a 3-letter word on the other side: "Pin"
between shots (stand these up), "no" for a shot that began with them empty. `turn` puts
the turn dot where the scores have it.
Team members (ceb teams, CEB 28): `members` draws team 1 as "A" and team 2 as "b" with the
number of the player at the table, "A1"/"A2" and "b1"/"b2", with the same two markers.
"""

# The builtins the event path calls, as this module's globals: MicroPython looks a name
# up in the module's globals first (to the table's first empty slot), then in the
# builtins' table, each time; a global is found at once (docs/performance.md).
from builtins import int, len, type

from boardlib import font

try:
    from micropython import const
except ImportError:  # CPython: the value itself
    const = lambda value: value


_DP = const(0x80)
_RING = const(0x63)  # font's '°': the marked ball
_MINUS = const(0x40)
_PLUS = const(0x70)
_BAR = const(0x01)  # font's '\u203e': a shot capped at the distance
_HALF = const(4)
# Digit shapes 0-9, indexed by value: bytes indexing gives an int, no allocation.
_DIGITS = b"\x3f\x06\x5b\x4f\x66\x6d\x7d\x07\x7f\x6f"
_POW10 = (1, 10, 100, 1000, 10000, 100000)
# The words drawn after a shot, as font's segment bytes (font.render checks and looks up
# every character at every call; tests/test_layout.py checks them against font's)
_FOUL = const(b"\x71\x5c\x1c\x38")  # FouL
_OPEN = const(b"\x5c\x73\x79\x54")  # oPEn


def scores(buf, s1, s2, turn, marked=0):
    """Both scores right-aligned in their halves, a dot at the edge of who is at the table.

    turn: 1 or 2, or 0/None for no marker (between games). marked: 1 or 2, the player
    with the marked ball (ceb), or 0/None.
    """
    # the checks inline (a call costs more than they do): drawn after every event
    if (len(buf) < 8 or type(s1) is not int or type(s2) is not int
            or (turn and turn != 1 and turn != 2)):
        _check_buf(buf)
        _check_int(s1, "score 1")
        _check_int(s2, "score 2")
        _check_player(turn)
    _number(buf, 0, _HALF, s1)
    _number(buf, _HALF, _HALF, s2)
    _markers(buf, turn, marked)


def mark_ball(buf, marked):
    """Put the marked-ball ring in the first cell of the marked player's half when that
    cell shows nothing (its decimal point, the turn marker, may be lit)."""
    _check_player(marked)
    cell = (marked - 1) * _HALF
    if not buf[cell] & 0x7F:
        buf[cell] |= _RING


def members(buf, players, turn, marked=0):
    """Each team's player at the table (ceb teams): "A1"/"A2" left, "b1"/"b2" right,
    with the turn dot and the marked-ball ring where the score picture has them."""
    _check_buf(buf)
    _check_player(players[0])
    _check_player(players[1])
    for i in range(8):
        buf[i] = 0
    buf[2] = 0x77  # A
    buf[3] = _DIGITS[players[0]]
    buf[6] = 0x7C  # b
    buf[7] = _DIGITS[players[1]]
    _markers(buf, turn, marked)


def _markers(buf, turn, marked):
    """The turn dot at the outer edge of who is at the table, and the marked-ball ring."""
    if turn == 1:
        buf[0] |= _DP
    elif turn == 2:
        buf[7] |= _DP
    if marked:
        mark_ball(buf, marked)


def shot_points(buf, player, points, to, foul=None, capped=False):
    """The last shot by one rule (docs/display.md): the shooter's half says "FouL" (or
    "oPEn", foul False) when the points went elsewhere or a foul scored nothing; "+N" on
    the half of who got them; `capped`: a bar on top before the "+"."""
    if (len(buf) < 8 or (player != 1 and player != 2) or (to != 1 and to != 2)
            or type(points) is not int):
        _check_buf(buf)
        _check_player(player)
        _check_player(to)
        _check_int(points, "points")
    if foul is None:
        foul = to != player
    # (the arguments' slots again, the cells of the shooter's and the getter's halves,
    # and the points clipped here: a frame over 11 words comes from the heap at every
    # call, and so would this one's with two more locals or one more argument)
    # The words, the blank half and the "+" are put here, not by functions of their own:
    # a call costs as much as a dozen reads, and this is drawn after every shot.
    player = (player - 1) * _HALF
    to = (to - 1) * _HALF
    if foul and to == player:  # ddbu: a foul scores nothing for anyone
        buf[_HALF - player] = 0  # the other half blank
        buf[_HALF + 1 - player] = 0
        buf[_HALF + 2 - player] = 0
        buf[_HALF + 3 - player] = 0
    else:
        capped = 99 if capped else 999  # the most it shows
        if points > capped:
            points = capped
        _number(buf, to, _HALF, points)
        if points >= 0:  # the "+" before the first digit (`points` again: its cell)
            points = to
            while buf[points] == 0:
                points += 1
            buf[points - 1] = _PLUS
            if capped == 99:
                buf[points - 2] = _BAR
        if to == player:  # the other half blank
            buf[_HALF - player] = 0
            buf[_HALF + 1 - player] = 0
            buf[_HALF + 2 - player] = 0
            buf[_HALF + 3 - player] = 0
    if foul or to != player:
        foul = _FOUL if foul else _OPEN
        buf[player] = foul[0]
        buf[player + 1] = foul[1]
        buf[player + 2] = foul[2]
        buf[player + 3] = foul[3]


def remaining20(buf, player, remaining):
    """The "20 remaining" call: "r" and the points left on the player's half."""
    _check_buf(buf)
    _check_player(player)
    _check_int(remaining, "remaining")
    start = (player - 1) * _HALF
    for i in range(8):
        buf[i] = 0
    _number(buf, start + 1, _HALF - 1, remaining if remaining > 0 else 0)
    buf[start] = font.encode_char("r")


def distance(buf, player):
    """Distance reached: "dISt" on the player's half."""
    _word(buf, player, "dISt")


def break_clock(buf, seconds):
    """Break countdown: "brK" on the left, m:ss on the right (5:00 down to 0:00)."""
    _check_buf(buf)
    _check_int(seconds, "seconds")
    if seconds < 0:
        seconds = 0
    elif seconds > 599:
        seconds = 599
    minutes = seconds // 60
    seconds -= minutes * 60
    buf[0] = 0x7C  # b
    buf[1] = 0x50  # r
    buf[2] = 0x75  # K
    buf[3] = 0
    buf[4] = 0
    # The colon of a TM1637 clock module is bit 7 of its second cell.
    buf[5] = _DIGITS[minutes] | _DP
    buf[6] = _DIGITS[seconds // 10]
    buf[7] = _DIGITS[seconds % 10]


def winner(buf, player):
    """The game is won: " Win" on the winner's half."""
    _word(buf, player, " Win")


def tie(buf):
    """A tie: " tIE" on both halves."""
    _check_buf(buf)
    font.render(" tIE", buf, 0, _HALF)
    font.render(" tIE", buf, _HALF, _HALF)


def set_score(buf, s1, s2):
    """Sets won in ceb: "SEt" and the count on each player's half (0-9)."""
    _check_buf(buf)
    _check_int(s1, "sets 1")
    _check_int(s2, "sets 2")
    buf[0] = buf[_HALF] = 0x6D  # S
    buf[1] = buf[_HALF + 1] = 0x79  # E
    buf[2] = buf[_HALF + 2] = 0x78  # t
    buf[3] = _DIGITS[0 if s1 < 0 else 9 if s1 > 9 else s1]
    buf[_HALF + 3] = _DIGITS[0 if s2 < 0 else 9 if s2 > 9 else s2]


def last_series(buf, player):
    """The player's last series (the opponent reached the distance): "LASt"."""
    _word(buf, player, "LASt")


def error(buf, code):
    """"Err" and a code (an int, or up to 5 cells of text) right-aligned after it.

    Never raises for a bad code: the error screen is the last resort, so a code the
    display cannot show becomes "--".
    """
    _check_buf(buf)
    font.render("Err", buf, 0, 3)
    if isinstance(code, int) and not isinstance(code, bool):
        _number(buf, 3, 5, code)
        return
    try:
        used = font.cells(code)
        if used > 5:
            raise ValueError("code too long")
        font.render(code, buf, 3, 5)
        # right-align: move the used cells to the end
        shift = 5 - used
        for i in range(7, 2 + shift, -1):
            buf[i] = buf[i - shift]
        for i in range(3, 3 + shift):
            buf[i] = 0
    except ValueError:
        font.render("   --", buf, 3, 5)


def text(buf, s):
    """Any text, left-aligned over all 8 cells (menus: "rULE ddbu", "SEtS 3")."""
    _check_buf(buf)
    font.render(s, buf, 0, 8)


def _word(buf, player, word):
    _check_buf(buf)
    _check_player(player)
    start = (player - 1) * _HALF
    for i in range(_HALF - start, 2 * _HALF - start):  # the other half blank
        buf[i] = 0
    font.render(word, buf, start, _HALF)


def _number(buf, start, width, value, top=-1):
    """Right-align an int in width cells, clipped to what fits (to `top` if given)."""
    if top < 0:
        top = _POW10[width] - 1
    if value > top:
        value = top
    elif value < 1 - _POW10[width - 1]:
        value = 1 - _POW10[width - 1]
    top = value < 0  # (the frame's slots again: the sign, then the cell; a frame over
    if top:  # 11 words would come from the heap at every call)
        value = -value
    width += start - 1
    while True:
        buf[width] = _DIGITS[value % 10]
        value //= 10
        width -= 1
        if value == 0:
            break
    if top:
        buf[width] = _MINUS
        width -= 1
    while width >= start:
        buf[width] = 0
        width -= 1


def _check_buf(buf):
    if len(buf) < 8:
        raise ValueError("a screen needs 8 cells, got %d" % len(buf))


def _check_player(player):
    if player != 1 and player != 2:
        raise ValueError("player must be 1 or 2, not %r" % (player,))


def _check_int(value, what):
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError("%s must be an int, not %r" % (what, value))


def castle(buf, empty, player, word="Pin", turn=0):
    """The spots in `empty` (bit 0 = spot 1) without a pin on `player`'s half, `word` on
    the other (see the module); allocates nothing."""
    if len(buf) < 8:
        raise ValueError("a screen needs 8 cells, got %d" % len(buf))
    if player != 1 and player != 2:
        raise ValueError("player must be 1 or 2, not %r" % (player,))
    for i in range(8):
        buf[i] = 0
    first = 0 if player == 1 else 3
    for spot in range(5):
        if empty & (1 << spot):
            buf[first + spot] = _DIGITS[spot + 1]
    font.render(word, buf, 5 if player == 1 else 0, 3)
    if turn == 1:
        buf[0] |= _DP
    elif turn == 2:
        buf[7] |= _DP
