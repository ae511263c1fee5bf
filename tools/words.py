"""What the buttons do and what the board's words mean, in English: one table for all.

    from tools import words
    words.MENU_WORDS["d2"]              # "distance of player 2"
    words.under_digits("d2", False)     # the line `make sim` writes under the digits
    words.BUTTONS[2]                    # ("ok", "o", what a press does, what a hold does)

The terminal table (`tools.simview`, and the display log of `python -m tools.sim
--display-log`) and the players' quick card (`tools.card`, docs/quick-card.svg) both
read these words, so the card, the simulator and the board cannot tell a player three
different things. What the words stand beside always comes from the board's own code: the
setup menu's item is the one `firmware.menu.Menu.draw` last drew (`Menu.shown`), and the
7-segment pictures are drawn by `boardlib.layout` and the menu itself. Kept importable on
the MicroPython unix port, which writes the display log.
"""

from boardlib.shot import CASINO_RULES, SECOND_FOUL

# How a player calls each rules id (the ids are rules_core.settings.RULES_IDS).
RULES_NAMES = {"ddbu": "DDBU", "ceb": "five-pins", "russian": "Russian"}

# Each setup menu item (firmware.menu.ITEMS) in words.
MENU_WORDS = {
    "rules": "rules", "d1": "distance of player 1", "d2": "distance of player 2",
    "sets": "sets (best of)", "teams": "singles or two-man teams", "first": "who breaks first",
    "check": "wiring check",
    "new": "start a new game",
}
CHECK_WORDS = "wiring check: spots, buttons and every segment (hold undo to leave)"


def _second_fouls(short=False):
    named = ["%s (%s)" % (SECOND_FOUL[r], RULES_NAMES[r]) for r in RULES_NAMES
             if SECOND_FOUL[r] != "foul"]
    if short:
        return ", ".join(named)
    plain = [RULES_NAMES[r] for r in RULES_NAMES if SECOND_FOUL[r] == "foul"]
    return "the second foul: %s; a foul in %s" % (", ".join(named), ", ".join(plain))


def _casino(short=False):
    casino = "casino (%s)" % ", ".join(RULES_NAMES[r] for r in CASINO_RULES)
    return casino if short else casino + "; a carambole in the other games"


# (button, key in `make sim`, a press, a hold, the hold in a few words) in the board's
# button order (boardlib.shot.BUTTON_NAMES); the hold key is the capital letter.
BUTTONS = (
    ("carom", "c", "a carambole in this shot", _casino(), _casino(short=True)),
    ("foul", "f", "a foul in this shot", _second_fouls(), _second_fouls(short=True)),
    ("ok", "o", "end the shot now (a miss is one press)", "the setup menu", "the setup menu"),
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
    "undo on the first item leaves the menu; nothing changes",
    "on nEW yES, ok starts the new game; on nEW no, ok leaves with the game as it was",
    "on tESt yES, ok starts the wiring check",
)
# And in the wiring check (firmware.check): (button, key, a press, a hold).
CHECK_BUTTONS = (
    ("ok", "o", "shows its name", "the segment sweep again"),
    ("undo", "u", "shows its name", "leave (once let go)"),
)


def under_digits(menu, check):
    """The line under the digits: the setup menu item `menu` (an ITEMS name, or None) in
    words, or the wiring check (`check` true); "" at the game."""
    if check:
        return CHECK_WORDS
    if menu:
        return "setup menu: %s" % MENU_WORDS.get(menu, menu)
    return ""
