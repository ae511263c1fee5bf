"""Pure scoring rules for pin billiards: ddbu, ceb and russian; no I/O, no clock.

    from rules_core import Game, GameError
    g = Game("ddbu", distance=(40, 30), sets=1, first=1)
    g.shot(pins=0b00101, carom=0, fouls=())
    print(g.state_json())

See docs/rules.md for how the rule texts are read, rules_core.events for the records,
rules_core.settings for the settings and their limits (check_settings), rules_core.savedstate
for the saved state's layout (docs/state-layout.md), rules_core.snapshot for saving and
resuming (shot scripts: tools.replay.shotscript).
"""

# (re-exported by name, not listed in an __all__: a list the board would hold for nothing)
from rules_core.common import GameError as GameError
from rules_core.game import Game as Game
