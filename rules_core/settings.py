"""A game's settings and their limits, in one place: everyone who checks settings asks here.

    from rules_core.settings import RULES_IDS, BEST_OF, MAX_DISTANCE, check_settings
    error = check_settings("ceb", (60, 60), 3, 1, 1)   # None, or what is wrong (a sentence)

Game(), the board configuration, the link's NEW_GAME command, the setup menu, the shot
scripts, the simulator's flags and the logger all take these numbers and this check, so a
limit changes here and nowhere else.
"""

RULES_IDS = ("ddbu", "ceb", "russian")  # the rules id's index is its number on flash/wire
BEST_OF = (1, 3, 5)  # ceb matches: best of 1, 3 or 5 sets (CEB 13.3-13.5)
PLAYERS = (1, 2)
TEAMS = (0, 1)  # 0 singles, 1 ceb two-man teams (CEB 28)
MIN_DISTANCE = 1
# A score has four display cells, so a distance has at most four digits. In ceb one cell of
# each half carries the marked-ball sign (CEB 21.1, docs/display.md), leaving three.
MAX_DISTANCE = 9999
MAX_DISTANCE_CEB = 999


def max_distance(rules):
    """The largest distance the rules id takes."""
    return MAX_DISTANCE_CEB if rules == "ceb" else MAX_DISTANCE


def check_settings(rules, distance, sets=1, first=1, teams=0):
    """None when the settings make a game, else a sentence saying what is wrong.

    distance is a pair (one distance per player); give (N, N) for a common one."""
    if rules not in RULES_IDS:
        return "unknown rules %r: use ddbu, ceb or russian" % (rules,)
    try:
        d1, d2 = distance
    except (TypeError, ValueError):
        return "distance must be N or (N, M)"
    top = max_distance(rules)
    for d in (d1, d2):
        if _bad(d, ()) or not MIN_DISTANCE <= d <= top:
            return "distance must be a whole number %d-%d in %s, got %r" % (
                MIN_DISTANCE, top, rules, d)
    if _bad(sets, BEST_OF):
        return "sets must be 1, 3 or 5 (best of), got %r" % (sets,)
    if sets != 1 and rules != "ceb":
        return "%s is played in one game: sets must be 1" % rules
    if _bad(first, PLAYERS):
        return "first must be player 1 or 2, got %r" % (first,)
    if _bad(teams, TEAMS):
        return "teams must be 0 (singles) or 1 (two-man teams), got %r" % (teams,)
    if teams and rules != "ceb":
        return "two-man teams are played in ceb only (CEB 28), not in %s" % rules
    return None


def _bad(value, allowed):
    """Not a whole number, or (when allowed is not empty) not one of allowed."""
    return (not isinstance(value, int) or isinstance(value, bool)
            or (allowed and value not in allowed))
