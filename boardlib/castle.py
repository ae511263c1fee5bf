"""Pins set? (docs/inputs.md): the picture of the spots that have no pin, pure.

    from boardlib import castle
    castle.draw(buf, 0b01010, 1, "Pin", 1)   # " . 2 4 Pin": spots 2 and 4 empty, player 1
    castle.draw(buf, 0b00010, 2, "no")       # "no  2    ": a shot begun with spot 2 empty

The empty spots (bit 0 = spot 1) stand as their numbers in reading order, one cell a spot,
on the half of `player` (the player at the table, or the shooter of a marked shot), and a
3-letter word on the other side: "Pin" between shots (stand these up), "no" for a shot
that began with them empty. `turn` puts the turn dot where the scores have it. Kept out of
boardlib.layout: the board loads it with the application, not while it is being built
(a board that compiles its sources has the least heap then). Allocates nothing.
"""

from boardlib import font

_DIGITS = b"\x3f\x06\x5b\x4f\x66\x6d\x7d\x07\x7f\x6f"


def draw(buf, empty, player, word="Pin", turn=0):
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
        buf[0] |= 0x80
    elif turn == 2:
        buf[7] |= 0x80
