"""What the display shows, and for how long.

    screens = Screens(display)
    screens.after_event(state, now_ms, game.announce)  # after a shot, undo, new game
    screens.flash(ERR, 41, now_ms)      # a one-off message (boot notices, errors)
    screens.refresh(state, now_ms)      # call often; writes only when the picture changes

The base picture is both scores with the marker of who is at the table (in ceb also the
marked-ball ring, CEB 21.1; in ceb team play every third period of MESSAGE_MS shows the
players at the table instead, "A1 b2", with the same markers). Events queue short
messages (the points of the last shot, "20 remaining", distance reached, the set score) that
each stay up for `MESSAGE_MS`. A due break shows a countdown from 5:00 until the next shot;
a finished game alternates the result with the scores; a faulty sensor alternates its error
code with the scores for as long as the fault lasts.
"""

from boardlib import layout
from boardlib.ticks import ticks_diff
from rules_core.common import A_DISTANCE, A_LAST_SERIES, A_SET, A_TWENTY

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


MESSAGE_MS = const(2000)
BREAK_S = const(300)
_QUEUE = const(8)

# Message kinds; each takes one integer argument.
POINTS = const(1)
REMAINING20 = const(2)
DISTANCE = const(3)
LAST_SERIES = const(4)
SET = const(5)
ERR = const(6)
RESET = const(7)

# The announcements that queue a message (rules_core.common bits, one per player each), in
# the order the bits come: the order the players hear them.
_ANNOUNCED = ((A_TWENTY, REMAINING20), (A_DISTANCE, DISTANCE), (A_LAST_SERIES, LAST_SERIES),
              (A_SET, SET))
# Team play: of every TEAM_CYCLE message periods the last shows the players at the table.
_TEAM_CYCLE = const(3)

# What the board shows at boot for each reset cause (firmware.hw names them).
_RESET_TEXT = {"PWR": "rSt  PWr", "HARD": "rSt HArd", "WDT": "rSt  Wdt",
               "SLEEP": "rSt  SLP", "SOFT": "rSt SoFt"}


class Screens:
    def __init__(self, display):
        self.display = display
        self.buf = bytearray(8)
        self._kinds = bytearray(_QUEUE)
        self._args = [0] * _QUEUE
        self._head = 0
        self._count = 0
        self._shown_at = None  # when the message at the head went up
        self.break_started = None  # ticks of the moment a break became due
        self.fault_code = 0  # a sensor fault shown in turns with the scores
        self.override = None  # a callable(buf, now_ms) that draws instead (the setup menu)
        self._drawn = None  # the state whose scores are on the glass
        self._members_shown = False  # the team picture is on the glass, not the scores
        self.reset_text = "rSt   --"
        self._dirty = True

    # -- queue ------------------------------------------------------------------------------

    def show_reset(self, cause, now_ms):
        """Put why the board started on the display for a moment (a watchdog reset says
        the firmware hung; a power-on reset is the normal start)."""
        self.reset_text = _RESET_TEXT.get(cause, "rSt   --")
        self.flash(RESET, 0, now_ms)

    def flash(self, kind, arg, now_ms):
        if self._count == _QUEUE:  # full: the oldest goes, the newest matters more
            self._pop()
        i = (self._head + self._count) % _QUEUE
        self._kinds[i] = kind
        self._args[i] = arg
        self._count += 1
        if self._count == 1:
            self._shown_at = now_ms
        self._dirty = True

    def _pop(self):
        self._head = (self._head + 1) % _QUEUE
        self._count -= 1

    def clear(self):
        self._count = 0
        self._dirty = True

    # -- events -----------------------------------------------------------------------------

    def after_event(self, state, now_ms, announce):
        """Queue what the event that just happened means to the players.

        `state` is the board-state dict (`Game.state()`), taken once per event; `announce`
        the game's announcement bits (`Game.announce`, rules_core.common's A_* bits)."""
        self.clear()
        last = state["last"]
        if last is not None and (last["points"] or last["foul"]):
            arg = (last["player"] << 12) | (last["to"] << 10) | (int(last["foul"]) << 9)
            self.flash(POINTS, arg | min(last["points"], 0x1FF), now_ms)
        for bit, kind in _ANNOUNCED:
            for player in (1, 2):
                if announce & (bit << (player - 1)):
                    if kind == REMAINING20:
                        self.flash(kind, (player << 12) | state["remaining"][player - 1],
                                   now_ms)
                    else:
                        self.flash(kind, player, now_ms)
        if state["status"] == "break":
            if self.break_started is None:
                self.break_started = now_ms
        else:
            self.break_started = None
        self._dirty = True

    # -- drawing ----------------------------------------------------------------------------

    def refresh(self, state, now_ms):
        if (state is self._drawn and not self._count and not self._dirty
                and self.override is None and self.break_started is None
                and not self.fault_code and state["winner"] is None
                and state["members"] is None and not self.display.pending):
            return  # these scores are on the glass already: the common case, kept cheap
        self._refresh(state, now_ms)

    def _refresh(self, state, now_ms):
        buf = self.buf
        if self.override is not None:
            self.override(buf, now_ms)
            self._drawn = None
            self.display.show(buf)
            return
        if self._count:
            if ticks_diff(now_ms, self._shown_at) >= MESSAGE_MS:
                self._pop()
                self._shown_at = now_ms
                self._dirty = True
        if self._count:
            if self._dirty:
                self._draw_message(state, self._kinds[self._head], self._args[self._head])
        elif self.break_started is not None:
            left = BREAK_S - ticks_diff(now_ms, self.break_started) // 1000
            layout.break_clock(buf, left if left > 0 else 0)
            if state["marked"]:
                layout.mark_ball(buf, state["marked"])
        elif state["winner"] is not None and (now_ms // MESSAGE_MS) & 1:
            if state["winner"] == "tie":
                layout.tie(buf)
            else:
                layout.winner(buf, state["winner"])
        elif self.fault_code and (now_ms // MESSAGE_MS) & 1:
            layout.error(buf, self.fault_code)
        else:
            members = state["members"]
            team = (members is not None
                    and (now_ms // MESSAGE_MS) % _TEAM_CYCLE == _TEAM_CYCLE - 1)
            if (state is self._drawn and not self._dirty and not self.display.pending
                    and team == self._members_shown):
                return  # these scores are on the glass already: the common case, kept cheap
            if team:
                layout.members(buf, members, state["turn"], state["marked"])
            else:
                score = state["score"]
                layout.scores(buf, score[0], score[1], state["turn"], state["marked"])
            self._members_shown = team
            self._dirty = False
            self._drawn = state
            self.display.show(buf)
            return
        self._drawn = None
        self._dirty = False
        self.display.show(buf)  # the facade skips a frame identical to the one on the glass

    def _draw_message(self, state, kind, arg):
        buf = self.buf
        if kind == POINTS:
            foul = bool((arg >> 9) & 1)
            layout.shot_points(buf, arg >> 12, arg & 0x1FF, (arg >> 10) & 3, foul=foul)
        elif kind == REMAINING20:
            layout.remaining20(buf, arg >> 12, arg & 0xFFF)
        elif kind == DISTANCE:
            layout.distance(buf, arg)
        elif kind == LAST_SERIES:
            layout.last_series(buf, arg)
        elif kind == SET:
            sets = state["sets"]
            layout.set_score(buf, sets[0], sets[1])
        elif kind == ERR:
            layout.error(buf, arg)
        elif kind == RESET:
            layout.text(buf, self.reset_text)
        if kind < ERR and state["marked"]:
            layout.mark_ball(buf, state["marked"])  # where the message leaves the cell free
