"""What the buttons do and what the board's words mean, in English: one table for all.

    from tools.sim import words
    words.MENU_WORDS["d2"]              # "distance of player 2"
    words.under_digits("d2", False)     # the line `make sim` writes under the digits
    words.BUTTONS[2]                    # ("ok", "o", a press, a hold, the hold in short)
    words.DISPLAY_WORDS                 # (picture name, what it means) for tools.card

The terminal table (`tools.sim.view`, and the display log of `python -m tools.sim
--display-log`) and the players' quick card (`tools.card`, docs/quick-card.svg) both
read these words, so the card, the simulator and the board cannot tell a player three
different things. What the words stand beside always comes from the board's own code: the
setup menu's item is the one `firmware.menu.Menu.draw` last drew (`Menu.shown`), and the
7-segment pictures are drawn by `boardlib.layout` and the menu itself. Kept importable on
the MicroPython unix port, which writes the display log.
"""

from boardlib.shot import CASINO_RULES, SECOND_FOUL
from rules_core.settings import RULES_IDS, rules_name

# Each setup menu item (firmware.menu.ITEMS) in words.
MENU_WORDS = {
    "again": "the same game again: ok starts it",
    "rules": "rules", "d1": "distance of player 1", "d2": "distance of player 2",
    "sets": "sets (best of)", "teams": "singles or two-man teams", "first": "who breaks first",
    "sound": "the buzzer's calls on or off",
    "check": "wiring check",
    "new": "start a new game",
}
CHECK_WORDS = "wiring check: spots, buttons and every segment (hold undo to leave)"


def _second_fouls(short=False):
    named = ["%s (%s)" % (SECOND_FOUL[r], rules_name(r, True)) for r in RULES_IDS
             if SECOND_FOUL[r] != "foul"]
    if short:
        return ", ".join(named)
    plain = [rules_name(r, True) for r in RULES_IDS if SECOND_FOUL[r] == "foul"]
    return "the second foul: %s; a foul in %s" % (", ".join(named), ", ".join(plain))


def _casino(short=False):
    casino = "casino (%s)" % ", ".join(rules_name(r, True) for r in CASINO_RULES)
    return casino if short else casino + "; a carambole in the other games"


# (button, key in `make sim`, a press, a hold, the hold in a few words) in the board's
# button order (boardlib.shot.BUTTON_NAMES); the hold key is the capital letter.
BUTTONS = (
    ("carom", "c", "a carambole in this shot", _casino(), _casino(short=True)),
    ("foul", "f", "a foul in this shot", _second_fouls(), _second_fouls(short=True)),
    ("ok", "o", "end the shot now (a miss is one press)",
     "the setup menu (after a game: AGAIn, ok: the same game again)", "the setup menu"),
    ("undo", "u", "clear the shot's marks, then take back shots one by one",
     "the same as a press", "as a press"),
)
# The same buttons while the setup menu is open (firmware.menu): (button, key, a press,
# a hold).
MENU_BUTTONS = (
    ("carom", "c", "value up", "a distance +1 (a press: +10)"),
    ("foul", "f", "value down", "a distance -1 (a press: -10)"),
    ("ok", "o", "next item", "as a press"),
    ("undo", "u", "back", "as a press"),
)
MENU_NOTES = (
    "after a game it opens on AGAIn: ok plays it again, carom or foul go on to the settings",
    "undo on the first item leaves the menu; nothing changes",
    "on nEW yES, ok starts the new game; on nEW no, ok leaves (after a game: always yES)",
    "on tESt yES, ok starts the wiring check",
)
# And in the wiring check (firmware.check): (button, key, a press, a hold).
CHECK_BUTTONS = (
    ("ok", "o", "shows its name", "the segment sweep again"),
    ("undo", "u", "shows its name", "leave (once let go)"),
)


# What a shot is, in a few words (docs/inputs.md says it exactly).
SHOT_WORDS = (
    "Play: the board sees the pins fall. Stand them up again: the shot scores by itself.",
    "A miss, or a pin that cannot be stood up: press ok. Undo takes a shot back.",
)
# What the display shows, in words: (picture, meaning). tools.card draws each picture with
# the board's own code (boardlib.layout, firmware.screens, firmware.app).
DISPLAY_WORDS = (
    ("scores", "the scores; the dot (clock modules: the colon) is at who plays"),
    ("points", "the last shot's points, on the half of the player who got them"),
    ("foul", "a foul: the points went to the opponent"),
    ("open", "five-pins: the opening shot's points go to the opponent"),
    ("capped", "capped: the shot made more than was left to the distance"),
    ("pins", "pins set? these spots still have no pin"),
    ("unset", "the shot began with these spots empty (it still scores)"),
    ("remaining", "\"20 remaining\": points left to the distance"),
    ("distance", "distance reached"),
    ("last", "the last series: the opponent has reached the distance"),
    ("break", "DDBU: the 5-minute break is due, counting down"),
    ("sets", "five-pins: sets won"),
    ("marked", "five-pins: the ring marks who plays the marked ball"),
    ("members", "five-pins teams: who is up, A1/A2 and b1/b2"),
    ("win", "the game is won"),
    ("tie", "a tie"),
    ("ask", "the club's PC asks for a new game: ok starts it, other buttons: no"),
    ("reset", "why the board started: PWr switched on, Wdt the watchdog (it had hung)"),
    ("error", "something is wrong: Err and a code, below"),
)
# The codes a player may see, and what to do (firmware/errors.py has every code).
ERROR_WORDS = (
    ("1n", "spot n dark for minutes: stand its pin up, or check its sensor"),
    ("2n", "spot n's sensor flickers: it scores nothing until it settles"),
    ("31, 32", "board.cfg unreadable, or a bad value in it: defaults in use"),
    ("41, 42", "part of the stored game was lost (41) or all of it (42)"),
    ("43, 44", "the flash is full (43) or failing (44): play on; it is stored again later"),
    ("51", "undo with nothing left to take back"),
    ("71-74", "the club's WiFi, broker, broker login or TLS failed: play on"),
    ("91", "the firmware failed: switch the board off and on"),
)


# What each audible call means (boardlib.calls.NAMES), for the line under the digits and
# the quick card.
CALL_WORDS = {
    "scored": "a shot scored (one high blip)",
    "foul": "a foul (two low tones, falling)",
    "turn": "the turn passes (two quick blips)",
    "20-remaining": "20 remaining (three even beeps)",
    "distance": "distance reached (a rising run)",
    "set": "a set won (two beeps and a long high one)",
    "game": "the game won (a fanfare)",
    "error": "something is wrong: see the display (a low buzz, twice)",
}


# The sound of each call, in short (the quick card).
CALL_SOUNDS = {"scored": "a high blip", "foul": "two falling low tones",
               "turn": "two quick blips", "20-remaining": "three beeps",
               "distance": "a rising run", "set": "two beeps, a long high one",
               "game": "a fanfare", "error": "a low buzz twice"}


def call_line(call):
    """The line under the digits while the buzzer plays `call` (a calls.NAMES name)."""
    return "buzzer: %s" % CALL_WORDS.get(call, call) if call else ""


def under_digits(menu, check):
    """The line under the digits: the setup menu item `menu` (an ITEMS name, or None) in
    words, or the wiring check (`check` true); "" at the game."""
    if check:
        return CHECK_WORDS
    if menu:
        return "setup menu: %s" % MENU_WORDS.get(menu, menu)
    return ""
