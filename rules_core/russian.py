"""Russian kegel billiards with a king pin, rules id "russian": one shot applied to a Game.

    from rules_core import Game
    g = Game("russian", distance=100)
    g.shot(pins=0b11111)   # all five pins: 30 points

Seed 004, as read by RULES.md section 3 and docs/rules.md.
"""

from rules_core.common import POPCOUNT

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int

_STOP30 = const(0x08)  # events' stop30 bit: the shooter stopped or deflected their own ball
_CENTRE = const(0x04)  # rules_core.common's (tests/test_rules_game.py checks it)


def shot(g, record, at):
    """The shot record at record[at:at + 4] (rules_core.events), checked by the game."""
    a = record[at + 1] & 0x7F  # pins | carom << 5 (the unset mark, bit 7, aside)
    if a & 0x1F:
        # Pins toppled correctly: 2 each; the king alone or with 1 pin 5, 2 pins 7, 3 pins 9;
        # all five 30.
        points = POPCOUNT[a & 0x1F]
        points = (0, 5, 5, 7, 9, 30)[points] if a & _CENTRE else 2 * points
    else:
        points = 3 if a > 0x1F else 0  # a carambole alone, or nothing
    if record[at + 2] or record[at + 3]:
        # Penalty: every point of the shot goes to the opponent, the turn passes; stopping
        # one's own rolling ball adds 30.
        if record[at + 2] & _STOP30:
            points += 30
        _penalty(g, points)
        return
    _played(g, points, a & 0x1F)


def _penalty(g, points):
    player = g.turn
    opponent = 3 - player
    g.gain(opponent, points, False)
    g.set_last(player, points, opponent, True)
    if points and g.score[opponent - 1] >= g.distance[opponent - 1]:
        g.finish(opponent)  # won "even if the opponent's penalties brought it"
    else:
        g.next_turn()


def _played(g, points, pins):
    player = g.turn
    g.gain(player, points, False)
    g.add_series(player, points)
    g.set_last(player, points, player, False)
    if pins and g.score[player - 1] >= g.distance[player - 1]:
        g.finish(player)  # a lone carambole does not end the game (ruling)
    elif not pins:
        g.next_turn()  # nothing, or a carambole without pins: the turn passes
