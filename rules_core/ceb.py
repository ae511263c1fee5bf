"""Five-pins (CEB), rules id "ceb": one shot applied to a Game, sets and the match.

    from rules_core import Game
    g = Game("ceb", distance=60, sets=3)
    g.shot(pins=0b00100)   # the red centre pin alone: 10 points (CEB 8.1c)

Seed 002 (CEB rules, Danish), as read by RULES.md section 2 and docs/rules.md.
"""

from rules_core.common import POPCOUNT

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int

_QUILLES = const(0x02)  # events' quilles bit: pin and carom points only, no 2-point penalty
# rules_core.common's (tests/test_rules_game.py checks them)
_CENTRE = const(0x04)
_A_SET = const(0x080)


def shot(g, record, at):
    """The shot record at record[at:at + 4] (rules_core.events), checked by the game."""
    a = record[at + 1] & 0x7F  # pins | carom << 5 (the unset mark, bit 7, aside)
    foul = record[at + 2] or record[at + 3]
    # CEB 8.1-8.3: white pins 2, red 4 (10 alone), carom 4, casino 3
    if a & 0x1F == _CENTRE:
        points = 10
    else:
        points = 2 * POPCOUNT[a & ~_CENTRE & 0x1F] + (4 if a & _CENTRE else 0)
    a >>= 5  # (the carom, in the same local)
    if a == 1:
        points += 4
    elif a == 2:
        points += 3  # casino
    if foul:
        # CEB 24.1-24.2: every foul but quilles adds 2; all the shot's points go over. (The
        # named fouls are eight bits: the table of five-bit masks counts them in two parts.)
        a = record[at + 2] & ~_QUILLES
        a = POPCOUNT[a & 0x1F] + POPCOUNT[a >> 5] + record[at + 3]  # (the fouls)
        points += 2 * a
    _credit(g, points, foul)


def _credit(g, points, foul):
    # CEB 11.4: points of the opening shot go to the opponent, no foul
    to = 3 - g.turn if foul or g.opening else g.turn
    g.opening = False
    points = g.gain(to, points, True)  # capped at the distance (CEB 7.1); now credited
    g.set_last(g.turn, points, to, bool(foul))
    _credited(g, g.turn, to, points)


def _credited(g, player, to, credited):
    opponent = 3 - player
    if to == player and credited:
        if credited > g.high[player - 1]:
            g.high[player - 1] = credited  # ceb: highest shot
        if g.teams:
            # CEB 28.3: a team changes its player at the table when the opposing team
            # scores (RULES.md: points credited to the shooter's own team).
            g.members[opponent - 1] = 3 - g.members[opponent - 1]
    t = to - 1
    if g.score[t] >= g.distance[t]:
        _set_won(g, to)
    else:
        g.next_turn()  # CEB 7.2: one shot each


def _set_won(g, winner):
    """CEB 13.3: the set ends when a player reaches the distance."""
    g.sets[winner - 1] += 1
    g.announce |= _A_SET << (winner - 1)
    if g.sets[winner - 1] > g.best_of // 2:
        g.finish(winner)
        return
    low = min(g.sets)
    high = max(g.sets)
    # CEB 1.4: a break only at 2-0 or 2-1 (best of 5) or 1-1 (best of 3); once a match.
    if not g.break_done and (
        (g.best_of == 5 and high == 2 and low < 2) or (g.best_of == 3 and low == 1)
    ):
        g.start_break()
    # A new set: score, innings and the announcements start again; openings alternate
    # (CEB 11.7).
    played = g.sets[0] + g.sets[1]
    opener = g.first if played % 2 == 0 else 3 - g.first
    g.score[0] = g.score[1] = 0
    g.innings[0] = g.innings[1] = 0
    g.innings[opener - 1] = 1
    g.turn = opener
    g.series = 0
    g.opening = True
    g.said_twenty = 0
    g.said_distance = 0
    g.members[0] = g.members[1] = 1  # RULES.md: each team's first player opens the set
