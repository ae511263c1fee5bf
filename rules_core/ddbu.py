"""Keglebillard (DDBU), rules id "ddbu": one shot applied to a Game.

    from rules_core import Game
    g = Game("ddbu", distance=40)
    g.shot(pins=0b00011)   # 2 pins: 4 points, the series goes on

`shot(g, record, at)` applies the shot record at record[at:at + 4] (rules_core.events:
pins | carom << 5, named fouls, other fouls), checked by the game.

Seed 000 (DDBU 2021-22) and seed 001, as read by RULES.md section 1 and docs/rules.md.
"""

from rules_core.common import POPCOUNT

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int

# rules_core.common's (tests/test_rules_game.py checks them)
_TIE = const(3)
_A_LAST_SERIES = const(0x020)


def shot(g, record, at):
    a = record[at + 1] & 0x7F  # pins | carom << 5 (the unset mark, bit 7, aside)
    # Seed 000 5.12 / seed 001 b): the third red in a row without a pin is a fault.
    foul = record[at + 2] or record[at + 3] or (a > 0x1F and not a & 0x1F and g.reds == 2)
    player = g.turn
    if foul or not a:
        # Seed 000 5: the faulting shot scores nothing, the turn passes; earlier points of
        # the series stand. (g.set_last, inline: a call costs as much as a dozen reads.)
        g.last_player = player
        g.last_points = 0
        g.last_to = player
        g.last_foul = bool(foul)
        _end_series(g, player)
        return
    # Scored. The points go in `foul`, a local the frame has already: one more would take
    # the frame past what MicroPython keeps on the C stack, to the heap at every shot.
    foul = 2 * POPCOUNT[a & 0x1F] + (4 if a > 0x1F else 0)
    foul = g.gain(player, foul, True)  # capped at the distance (ruling); now credited
    # (g.add_series and g.set_last, inline)
    g.series += foul
    if g.series > g.high[player - 1]:
        g.high[player - 1] = g.series
    g.reds = g.reds + 1 if a > 0x1F and not a & 0x1F else 0  # a lone red
    g.last_player = player
    g.last_points = foul
    g.last_to = player
    g.last_foul = False
    if g.score[player - 1] >= g.distance[player - 1]:
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
        g.finish(_TIE)  # both reached it with the same number of series
    elif player != g.first:
        g.finish(player)  # the second player reached it first: equal series already
    else:
        g.last_series = opponent
        g.announce |= _A_LAST_SERIES << o
        g.next_turn()
