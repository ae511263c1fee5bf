"""Keglebillard (DDBU), rules id "ddbu": one shot applied to a Game.

    from rules_core import Game
    g = Game("ddbu", distance=40)
    g.shot(pins=0b00011)   # 2 pins: 4 points, the series goes on

Seed 000 (DDBU 2021-22) and seed 001, as read by RULES.md section 1 and docs/rules.md.
"""

from rules_core.common import A_LAST_SERIES, TIE, popcount


def shot(g, pins, carom, fouls, other_fouls):
    player = g.turn
    i = player - 1
    foul = bool(fouls or other_fouls)
    lone_red = carom and not pins
    # Seed 000 5.12 / seed 001 b): the third red in a row without a pin is a fault.
    if not foul and lone_red and g.reds == 2:
        foul = True
    points = 2 * popcount(pins) + (4 if carom else 0)
    if foul or points == 0:
        # Seed 000 5: the faulting shot scores nothing, the turn passes; earlier points of
        # the series stand.
        g.set_last(player, 0, player, foul)
        _end_series(g, player)
        return
    credited = g.gain(player, points, True)  # capped at the distance (ruling)
    g.add_series(player, credited)
    g.reds = g.reds + 1 if lone_red else 0
    g.set_last(player, credited, player, False)
    if g.score[i] >= g.distance[i]:
        _reached(g, player)


def _end_series(g, player):
    """The series ends without reaching the distance."""
    opponent = 3 - player
    if g.last_series == player:
        # The last series is over short of the distance: the starter, who reached it, wins.
        g.finish(opponent)
        return
    i = player - 1
    # Seed 000 4.1: the first time a total reaches half the own distance, a break once the
    # series has ended; once a game.
    if not g.break_done and 2 * g.score[i] >= g.distance[i]:
        g.start_break()
    g.next_turn()


def _reached(g, player):
    """The player's series reached their distance (seed 000 7.4-7.6)."""
    opponent = 3 - player
    o = opponent - 1
    if g.score[o] >= g.distance[o]:
        g.finish(TIE)  # both reached it with the same number of series
    elif player != g.first:
        g.finish(player)  # the second player reached it first: equal series already
    else:
        g.last_series = opponent
        g.announce |= A_LAST_SERIES << o
        g.next_turn()
