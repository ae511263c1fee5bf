"""The board's audible calls as tone patterns, pure: which call an event makes, and what
it sounds like.

    from boardlib import calls
    call = calls.for_event(announce, points, foul, turn_passed)  # calls.GAME, ... or NONE
    calls.steps(calls.FOUL)      # (400, 150, 0, 60, 300, 250): (Hz, ms) pairs, 0 Hz = rest
    calls.NAMES[calls.FOUL]      # "foul"

Eight calls, each short (at most about a second) and unlike the others in rhythm and
pitch, so that a player learns them in one evening: a single high blip for a shot scored,
two falling low tones for a foul, two quick mid blips when the turn passes, three even
beeps for "20 remaining", a rising run for distance reached, two beeps and a long high one
for a set won, a four-note fanfare for the game won, and a long low buzz twice for an
error. The pitches sit between 300 Hz and 3 kHz, where a small passive piezo is loud
(its resonance is usually 2-4 kHz).

One call per event, the weightiest that applies (`for_event`): game won, set won,
distance reached, "20 remaining", foul, shot scored, turn passed. boardlib.buzzer plays
them on a PWM pin; the simulator decodes them back from the PWM (tools.sim.board.chips).
`PATTERNS` holds them all, indexed by call.
"""

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


NONE = const(0)
SCORED = const(1)
FOUL = const(2)
TURN = const(3)
TWENTY = const(4)
DISTANCE = const(5)
SET = const(6)
GAME = const(7)
ERROR = const(8)

# rules_core.common's announcements that make a call (for_event; tests/test_calls.py checks
# them against common's)
_A_TWENTY = const(0x001)  # << (player - 1)
_A_DISTANCE = const(0x004)  # << (player - 1)
_A_SET = const(0x080)  # << (player - 1)
_A_FINISHED = const(0x200)

NAMES = ("none", "scored", "foul", "turn", "20-remaining", "distance", "set", "game", "error")

# Each pattern: frequency (Hz, 0 = silence) and duration (ms), pair after pair.
PATTERNS = (
    (),
    (2500, 70),  # scored: one high blip
    (400, 150, 0, 60, 300, 250),  # foul: two low tones, falling
    (1200, 40, 0, 50, 1200, 40),  # turn passes: two quick blips
    (1800, 90, 0, 90, 1800, 90, 0, 90, 1800, 90),  # 20 remaining: three even beeps
    (1000, 90, 1500, 90, 2000, 90, 2500, 250),  # distance reached: rising
    (2000, 100, 0, 60, 2000, 100, 0, 60, 3000, 400),  # set won: two and a long high one
    (1500, 120, 2000, 120, 2500, 120, 3000, 500),  # game won: a fanfare
    (330, 350, 0, 120, 330, 350),  # error: a low buzz, twice
)


def steps(call):
    """The (Hz, ms) pairs of `call`, flattened; () for NONE or an unknown call."""
    if 0 < call < len(PATTERNS):
        return PATTERNS[call]
    return ()


def for_event(announce, points, foul, turn_passed):
    """The call for a shot: `announce` the game's A_* bits (rules_core.common), `points`
    and `foul` of the shot, `turn_passed` whether the other player is at the table now."""
    if announce & _A_FINISHED:
        return GAME
    if announce & (_A_SET | _A_SET << 1):
        return SET
    if announce & (_A_DISTANCE | _A_DISTANCE << 1):
        return DISTANCE
    if announce & (_A_TWENTY | _A_TWENTY << 1):
        return TWENTY
    if foul:
        return FOUL
    if points:
        return SCORED
    if turn_passed:
        return TURN
    return NONE

