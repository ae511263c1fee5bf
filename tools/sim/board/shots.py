"""A long game's timeline, made up the same way at every run, and the settings of a game
that thousands of shots do not finish: for the bench and the flash's pauses on the host, and
for the board's own runs on the unix port.

    from tools.sim.board.shots import LONG_SETTINGS, long_game
    text = long_game(500)                       # 500 scored shots, 700 ms apart
    text = long_game(1000, every_ms=1500)       # slower, as a player shoots
    game = Game(LONG_SETTINGS["rules"], LONG_SETTINGS["distance"])
"""

from rules_core.settings import RULES_IDS, max_distance

# The rules of the table's first row (the board's default game) at their longest distance.
_LONG_RULES = RULES_IDS[0]
_LONG_DISTANCE = max_distance(_LONG_RULES)
LONG_SETTINGS = {"rules": _LONG_RULES, "distance": (_LONG_DISTANCE, _LONG_DISTANCE),
                 "sets": 1, "first": 1, "teams": 0}


def long_game(shots, seed=11, up_ms=150, carom_ms=200, ok_ms=400, every_ms=700):
    """`shots` valid scored shots, pseudo-random but the same every run: pins fall, are
    stood up `up_ms` later, every other shot or so a carom at `carom_ms`, and `ok` ends the
    shot at `ok_ms`; the next shot `every_ms` after."""
    lines = ["0 pins up 1 2 3 4 5"]
    x = seed
    t = 1000
    for _ in range(shots):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        fallen = ((x >> 8) & 31) or 1
        standing = [str(s) for s in range(1, 6) if not fallen & (1 << (s - 1))]
        lines.append("%d pins up %s" % (t, " ".join(standing)))
        lines.append("%d pins up 1 2 3 4 5" % (t + up_ms))
        if (x >> 16) & 1:
            lines.append("%d press carom" % (t + carom_ms))
        lines.append("%d press ok" % (t + ok_ms))
        t += every_ms
    return "\n".join(lines) + "\n"
