"""The rules systems and their traits, a game's settings and their limits, in one place.

    from rules_core.settings import RULES_IDS, SETS, check_settings, has, max_distance
    error = check_settings("ceb", (60, 60), 3, 1, 1)   # None, or what is wrong (a sentence)
    has("ceb", SETS)                                    # True: a ceb match is played in sets
    max_distance("ceb"), second_foul("russian")         # 999, "stop30"

RULES_TABLE has one row per rules id: its scoring (the module whose `shot` function applies
a shot, ddbu.py, ceb.py, russian.py: imported by rules_core.game only when a game of those
rules is made, so that a board holds the rules it plays and no other) and everything any
part of the project (the rules core, the board's buttons, menu and display, the shot
scripts, the timelines, the logger, the club's web pages) needs to know about it. Every
part asks here, by a trait, never by comparing a rules id with a name; so a rules system is
added with its rules module, one row here, and its tests (docs/architecture.md has the
list).

Game(), the board configuration, the link's NEW_GAME command, the setup menu, the shot
scripts, the simulator's flags and the logger all take these numbers and this check, so a
limit changes here and nowhere else.
"""

try:
    from micropython import const
except ImportError:  # CPython: the value itself
    const = lambda value: value  # noqa: E731 - a function would be one more name

# The traits, one bit each, that a row's fourth column combines.
SETS = const(1)  # a match of sets, best of BEST_OF (CEB 13.3-13.5); else one game
TEAMS = const(2)  # two-man teams may play (CEB 28)
CASINO = const(4)  # a held carom is a casino (CEB 8.2), else a carambole
PAST = const(8)  # a score may pass the distance, and an adjust reach it (RULES.md 3)
OPENING = const(16)  # a set opens with an opening shot; the other side has the marked ball
# (CEB 11.4, 21.1)

# One row per rules id, in the order of their numbers on flash and on the wire (never
# reordered): id, the module of rules_core whose `shot` applies one shot, largest
# distance, traits, the foul code of a held `foul` (the second code: RULES.md), the word
# the setup menu shows after "rULE" (four 7-segment cells), the name players call it by
# (the simulator, the quick card), and its full name (the web pages).
# A score has four display cells, so a distance has at most four digits. In ceb one cell of
# each half carries the marked-ball sign (CEB 21.1, docs/display.md), leaving three.
RULES_TABLE = (
    ("ddbu", "ddbu", 9999, 0, "foul", "ddbu", "DDBU", "DDBU keglebillard"),
    ("ceb", "ceb", 999, SETS | TEAMS | CASINO | OPENING, "quilles", " CEb", "five-pins",
     "CEB five-pins"),
    ("russian", "russian", 9999, PAST, "stop30", " ruS", "Russian",
     "Russian kegel billiards"),
)
# The columns are read by the functions below (and by rules_core.game: shots, traits) with
# literal indexes: a checker then knows each column's type.

RULES_IDS = tuple(row[0] for row in RULES_TABLE)  # a rules id's index is its number
BEST_OF = (1, 3, 5)  # matches in sets: best of 1, 3 or 5 sets (CEB 13.3-13.5)
PLAYERS = (1, 2)
_TEAMS_OR_SINGLES = const((0, 1))  # 0 singles, 1 two-man teams (CEB 28)
MIN_DISTANCE = 1
MAX_DISTANCE = max(row[2] for row in RULES_TABLE)  # of any rules id (max_distance())


def _row(rules):
    """The row of a rules id (ValueError for an unknown one)."""
    return RULES_TABLE[RULES_IDS.index(rules)]


def has(rules, trait):
    """True when the rules id has the trait (SETS, TEAMS, CASINO, PAST, OPENING); False
    for an id that is not one."""
    if rules not in RULES_IDS:
        return False
    return bool(_row(rules)[3] & trait)


def with_trait(trait):
    """The rules ids that have the trait, in table order."""
    return tuple(row[0] for row in RULES_TABLE if row[3] & trait)


def max_distance(rules):
    """The largest distance the rules id takes."""
    return _row(rules)[2]


def second_foul(rules):
    """The foul code a held `foul` button gives in the rules id (CONTRACT section 4)."""
    return _row(rules)[4]


def menu_word(rules):
    """What the setup menu shows for the rules id after "rULE"."""
    return _row(rules)[5]


def rules_name(rules, short=False):
    """The rules id's name for people: in full (the web pages), or ``short``, as players
    call it (the simulator, the quick card); an unknown id as it is."""
    if rules not in RULES_IDS:
        return rules
    return _row(rules)[6 if short else 7]


def check_settings(rules, distance, sets=1, first=1, teams=0):
    """None when the settings make a game, else a sentence saying what is wrong.

    distance is a pair (one distance per player); give (N, N) for a common one."""
    if rules not in RULES_IDS:
        return "unknown rules %r: use %s" % (rules, ", ".join(RULES_IDS))
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
    if sets != 1 and not has(rules, SETS):
        return "%s is played in one game: sets must be 1" % rules
    if _bad(first, PLAYERS):
        return "first must be player 1 or 2, got %r" % (first,)
    if _bad(teams, _TEAMS_OR_SINGLES):
        return "teams must be 0 (singles) or 1 (two-man teams), got %r" % (teams,)
    if teams and not has(rules, TEAMS):
        return "two-man teams are played in %s only (CEB 28), not in %s" % (
            ", ".join(with_trait(TEAMS)), rules)
    return None


def _bad(value, allowed):
    """Not a whole number, or (when allowed is not empty) not one of allowed."""
    return (not isinstance(value, int) or isinstance(value, bool)
            or (allowed and value not in allowed))
