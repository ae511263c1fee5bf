"""The setup menu, worked with the four buttons on the display.

    menu = Menu(settings)            # settings: dict rules, distance [a, b], sets, first, teams
    menu = Menu(settings, again=rematch(state), sound=True)  # after a finished game, buzzer
    menu.button(CAROM, PRESS)        # returns None, or the settings of a new game to start
    menu.draw(buf)                   # 8 segment bytes of the current item
    menu.shown                       # the ITEMS name of the item draw() last drew
    menu.sound                       # the buzzer's calls on (True) or off, None: no buzzer

Holding `ok` opens it. The items come in the order players change them most: after a
finished game first "AGAIn" (`ok` starts the same game again at once, the other player
breaking as the rules say: `rematch`; `carom` or `foul` go on to the settings), then the
distances, who breaks first, the rules, sets and teams, the buzzer, the wiring check, and
"nEW". `carom` steps the value up and `foul` down (a hold steps a distance by 1, a press by
10); `ok` goes to the next item; `undo` goes back, and from the first item leaves the menu
with nothing changed. "bEEP  on"/"bEEP oFF" (only on a board with a buzzer) switches the
calls; it holds once the menu is left other than by `undo` from the first item. The item
before the last asks "tESt no"/"tESt yES": `ok` on "yES" leaves the menu for the builders'
wiring check (`menu.check` is then True, firmware.check), on "no" goes on. The last item
asks "nEW no"/"nEW yES": `ok` on "yES" starts the new game, on "no" leaves. After a
finished game it says "nEW  yES" and stays so: there is no game to go back to, so `ok`
through every item always starts the new game (`undo` still leaves). Items that mean
nothing for the chosen rules (sets, singles or teams, where the rules have no SETS or
TEAMS trait) are skipped. "PLAy 1-1" is singles, "PLAy 2-2" two-man teams (CEB 28). The
values, limits and words are the rules core's (rules_core.settings): a distance stays
within what the chosen rules take.
"""

from boardlib import layout
from boardlib.inputs import HOLD
from boardlib.shot import CAROM, FOUL, OK, UNDO
from rules_core.settings import (
    BEST_OF,
    MIN_DISTANCE,
    RULES_IDS,
    SETS,
    TEAMS,
    has,
    max_distance,
    menu_word,
)

# menu.item indexes it; the order players change them most (docs/display.md)
ITEMS = ("again", "d1", "d2", "first", "rules", "sets", "teams", "sound", "check", "new")


def rematch(state):
    """The settings of the same game again, from a finished game's board state: the same
    rules, distances, sets and teams; the other player breaks. In ceb the openings go on
    alternating as between sets (CEB 11.7): the player who did not open the last set, the
    one with the marked ball (`marked`); elsewhere the player who did not break the game
    just played (the lag of seed 000 2, or the Russian game, has no table to read from:
    docs/rules.md)."""
    marked = state["marked"]
    return {
        "rules": state["rules"],
        "distance": (state["distance"][0], state["distance"][1]),
        "sets": state.get("best_of", 1),
        "first": marked if marked else 3 - state.get("first", 1),
        "teams": 0 if state["members"] is None else 1,
    }


class Menu:
    def __init__(self, settings, again=None, sound=None):
        self.rules = settings["rules"]
        self.distance = [settings["distance"][0], settings["distance"][1]]
        self.sets = settings.get("sets", 1)
        self.first = settings.get("first", 1)
        self.teams = settings.get("teams", 0)
        self.again = again  # the rematch's settings when the game is finished, else None
        self.sound = sound  # True/False: the buzzer's calls; None: the board has no buzzer
        self.item = self._move(0, 1)
        self.confirm = False
        self.check = False  # set when the builder chose the wiring check
        self.closed = False
        self.shown = None  # the item whose picture draw() made last: what the glass shows

    def settings(self):
        return {
            "rules": self.rules,
            "distance": (self.distance[0], self.distance[1]),
            "sets": self.sets if has(self.rules, SETS) else 1,
            "first": self.first,
            "teams": self.teams if has(self.rules, TEAMS) else 0,
        }

    def _skip(self, item):
        name = ITEMS[item]
        return ((name == "sets" and not has(self.rules, SETS))
                or (name == "teams" and not has(self.rules, TEAMS))
                or (name == "again" and self.again is None)
                or (name == "sound" and self.sound is None))

    def _move(self, item, step):
        while 0 <= item < len(ITEMS) and self._skip(item):
            item += step
        return item

    def button(self, which, kind):
        """Apply one button event. Returns new-game settings when confirmed, else None."""
        name = ITEMS[self.item]
        if name == "again" and which != UNDO:
            if which == OK:
                self.closed = True
                return self.again
            which = OK  # carom or foul: on to the settings
        if which == OK:
            if name == "new":
                self.closed = True
                return self.settings() if self.confirm or self.again else None
            if name == "check" and self.confirm:
                self.check = self.closed = True
                return None
            self.item = self._move(self.item + 1, 1)
            self.confirm = False
        elif which == UNDO:
            item = self._move(self.item - 1, -1)
            if item < 0:
                self.closed = True
                self.sound = None  # nothing changes
            else:
                self.item = item
                self.confirm = False
        elif which in (CAROM, FOUL):
            self._step(name, 1 if which == CAROM else -1, kind == HOLD)
        return None

    def _step(self, name, sign, fine):
        if name == "rules":
            self.rules = RULES_IDS[(RULES_IDS.index(self.rules) + sign) % len(RULES_IDS)]
            top = max_distance(self.rules)
            self.distance = [min(top, self.distance[0]), min(top, self.distance[1])]
        elif name in ("d1", "d2"):
            i = 0 if name == "d1" else 1
            value = self.distance[i] + sign * (1 if fine else 10)
            self.distance[i] = max(MIN_DISTANCE, min(max_distance(self.rules), value))
        elif name == "sets":
            self.sets = BEST_OF[(BEST_OF.index(self.sets) + sign) % len(BEST_OF)]
        elif name == "teams":
            self.teams = 1 - self.teams
        elif name == "first":
            self.first = 3 - self.first
        elif name == "sound":
            self.sound = not self.sound
        elif name in ("check", "new"):
            self.confirm = not self.confirm

    def draw(self, buf, now_ms=0):
        # (now_ms: what the screens' draw_with passes; the menu's picture keeps no time)
        name = self.shown = ITEMS[self.item]
        if name == "again":
            text = "AGAIn"
        elif name == "sound":
            text = "bEEP  on" if self.sound else "bEEP oFF"
        elif name == "rules":
            text = "rULE" + menu_word(self.rules)
        elif name == "d1":
            text = "d1  %4d" % self.distance[0]
        elif name == "d2":
            text = "d2  %4d" % self.distance[1]
        elif name == "sets":
            text = "SEtS   %d" % self.sets
        elif name == "teams":
            text = "PLAy 2-2" if self.teams else "PLAy 1-1"
        elif name == "first":
            text = "FIrSt  %d" % self.first
        elif name == "check":
            text = "tESt yES" if self.confirm else "tESt  no"
        else:
            text = "nEW  yES" if self.confirm or self.again else "nEW   no"
        layout.text(buf, text)
