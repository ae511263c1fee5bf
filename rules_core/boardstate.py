"""The board state of a game as a dict (CONTRACT section 3), what Game.state() and
snapshot.unpack_state() return.

    from rules_core import Game
    Game("ddbu", 40).state()   # {"rules": "ddbu", "distance": [40, 40], ...}

A module of its own, imported by Game.state() and snapshot.unpack_state() when they are
first called: a board asks for the state only when a player opens its setup menu
(firmware.app), and never unpacks one, so it does not hold this code while it plays
(docs/performance.md, "Smaller code").
"""

try:
    from micropython import const
except ImportError:  # CPython: the value itself
    const = lambda value: value  # noqa: E731 - a function would be one more name

_STATUS_NAMES = const(("playing", "break", "finished"))
# The announcements' names: bit i of `announce` (rules_core.common's A_* bits) is item i
# (docs/state-layout.md)
_ANNOUNCE_NAMES = const((
    "20-remaining:1", "20-remaining:2", "distance:1", "distance:2", "break",
    "last-series:1", "last-series:2", "set:1", "set:2", "finished",
))
# rules_core.common's (tests/test_rules_game.py checks them)
_FINISHED = const(2)
_TIE = const(3)


def state(game):
    """The board state (CONTRACT section 3) plus "first", "best_of", "last_series"."""
    d = game.distance
    s = game.score
    last = None
    if game.last_player:
        last = {"player": game.last_player, "points": game.last_points,
                "to": game.last_to, "foul": game.last_foul}
    set_points = match_points = None
    if game.status == _FINISHED and game.best_of > 1 and game.winner in (1, 2):
        w = game.winner - 1
        lost = game.sets[1 - w]
        set_points = [lost, lost]
        set_points[w] = game.best_of - lost  # CEB 13.4-13.5: 3:0, 2:1 / 5:0, 4:1, 3:2
        match_points = [0, 0]
        match_points[w] = 1
    announce = []
    bit = 1
    for name in _ANNOUNCE_NAMES:
        if game.announce & bit:
            announce.append(name)
        bit <<= 1
    return {
        "rules": game.rules,
        "distance": [d[0], d[1]],
        "score": [s[0], s[1]],
        "remaining": [max(0, d[0] - s[0]), max(0, d[1] - s[1])],
        "turn": game.turn,
        "innings": [game.innings[0], game.innings[1]],
        "series": game.series,
        "high": [game.high[0], game.high[1]],
        "sets": [game.sets[0], game.sets[1]],
        "shots": game.shots,
        "status": _STATUS_NAMES[game.status],
        "winner": "tie" if game.winner == _TIE else (game.winner or None),
        "last": last,
        "set_points": set_points,
        "match_points": match_points,
        "announce": announce,
        "marked": game.marked() or None,
        "members": [game.members[0], game.members[1]] if game.teams else None,
        "first": game.first,
        "best_of": game.best_of,
        "last_series": game.last_series or None,
    }

