"""Russian kegel billiards with a king pin, rules id "russian": one shot applied to a Game.

    from rules_core import Game
    g = Game("russian", distance=100)
    g.shot(pins=0b11111)   # all five pins: 30 points

Seed 004, as read by RULES.md section 3 and docs/rules.md.
"""

from rules_core.common import CENTRE, popcount

_STOP30 = 0x08  # events.FOUL_STOP30: the shooter stopped or deflected their own ball


def pin_points(pins):
    """Points for pins toppled correctly: 2 each; king alone or +1 pin 5, +2 7, +3 9;
    all five 30."""
    n = popcount(pins)
    if not pins & CENTRE:
        return 2 * n
    return (0, 5, 5, 7, 9, 30)[n]


def shot(g, pins, carom, fouls, other_fouls):
    player = g.turn
    opponent = 3 - player
    points = pin_points(pins) if pins else (3 if carom else 0)
    if fouls or other_fouls:
        # Penalty: every point of the shot goes to the opponent, the turn passes; stopping
        # one's own rolling ball adds 30.
        if fouls & _STOP30:
            points += 30
        g.gain(opponent, points, False)
        g.set_last(player, points, opponent, True)
        if points and g.score[opponent - 1] >= g.distance[opponent - 1]:
            g.finish(opponent)  # won "even if the opponent's penalties brought it"
        else:
            g.next_turn()
        return
    g.gain(player, points, False)
    g.add_series(player, points)
    g.set_last(player, points, player, False)
    if pins and g.score[player - 1] >= g.distance[player - 1]:
        g.finish(player)  # a lone carambole does not end the game (ruling)
    elif not pins:
        g.next_turn()  # nothing, or a carambole without pins: the turn passes
