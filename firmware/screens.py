"""What the display shows, and for how long.

    screens = Screens(display)
    screens.after_event(game, now_ms)   # after a shot, undo, new game (rules_core.Game)
    screens.flash(ERR, 41, now_ms)      # a one-off message (boot notices, errors)
    screens.refresh(game, now_ms)       # when screens.dirty, or once screens.due has come

Everything is read from the game itself (no board-state dict is made for an event).

The base picture is both scores with the marker of who is at the table (in ceb also the
marked-ball ring, CEB 21.1; in ceb team play every third period of _MESSAGE_MS shows the
players at the table instead, "A1 b2", with the same markers). Events queue short
messages (the points of the last shot, "20 remaining", distance reached, the set score) that
each stay up for `_MESSAGE_MS`. A due break shows a countdown from 5:00 until the next shot;
a finished game alternates the result with the scores; a faulty sensor alternates its error
code with the scores for as long as the fault lasts; spots without a pin between shots
alternate with the scores too ("Pin 2 4", pins set?), and a shot that began with a spot
empty shows it first ("no  2 4", docs/inputs.md).
"""

from boardlib import layout
from rules_core import common
from rules_core.common import BREAK, TIE

try:
    from time import ticks_add, ticks_diff
except ImportError:  # CPython: boardlib.ticks wraps as the ESP32 does
    from boardlib.ticks import ticks_add, ticks_diff

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


_MESSAGE_MS = const(2000)
_BREAK_S = const(300)
_QUEUE = const(8)
_REDRAW_MS = const(40)  # an override (menu, wiring check) and a failed bus write: redrawn
_FAR_MS = const(1 << 28)  # "no change due": far, and within half the ticks period

# Message kinds; each takes one integer argument.
_POINTS = const(1)
_REMAINING20 = const(2)
_DISTANCE = const(3)
_LAST_SERIES = const(4)
_SET = const(5)
ERR = const(6)
_RESET = const(7)
_UNSET = const(8)  # a shot begun before the pins were set: (shooter << 8) | empty spots

# The announcements that queue a message (rules_core.common bits, one per player each), in
# the order the bits come: the order the players hear them.
_ANNOUNCED = (common.A_TWENTY, _REMAINING20, common.A_DISTANCE, _DISTANCE,
              common.A_LAST_SERIES, _LAST_SERIES, common.A_SET, _SET)
del common  # (read here alone: the module's globals stay in a smaller table)
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
        self.empty = 0  # spots without a pin between shots (App sets it): "Pin 2 4"
        self.override = None  # a callable(buf, now_ms) that draws instead (draw_with)
        self._drawn = False  # the game's scores (as last drawn) are on the glass
        self._members_shown = False  # the team picture is on the glass, not the scores
        self.reset_text = "rSt   --"
        # What the board's schedule reads (App.step): a refresh is due now (dirty), or at
        # `due` (ticks), when the picture changes by itself (a message ends, the break
        # clock, a blinking result).
        self.dirty = True
        self.due = 0

    def draw_with(self, draw):
        """Have `draw`, a callable(buf, now_ms), draw instead of the game (the setup menu,
        the wiring check, a question), or the game again with None. (A method: a class
        with a property pays a lookup of its class at every attribute it stores.)"""
        self.override = draw
        self.dirty = True

    # -- queue ------------------------------------------------------------------------------

    def show_reset(self, cause, now_ms):
        """Put why the board started on the display for a moment (a watchdog reset says
        the firmware hung; a power-on reset is the normal start)."""
        self.reset_text = _RESET_TEXT.get(cause, "rSt   --")
        self.flash(_RESET, 0, now_ms)

    def flash(self, kind, arg, now_ms):
        if self._count == _QUEUE:  # full: the oldest goes, the newest matters more
            self._pop()
        i = (self._head + self._count) % _QUEUE
        self._kinds[i] = kind
        self._args[i] = arg
        self._count += 1
        if self._count == 1:
            self._shown_at = now_ms
        self.dirty = True

    def _pop(self):
        self._head = (self._head + 1) % _QUEUE
        self._count -= 1

    def clear(self):
        self._count = 0
        self.dirty = True

    # -- events -----------------------------------------------------------------------------

    def after_event(self, game, now_ms, unset=0):
        """Queue what the event that just happened means to the players (`game`: the
        rules_core.Game, its last shot and its announcement bits, rules_core.common's A_*).
        (In small functions: a frame bigger than 11 words comes from the heap at every
        call, docs/performance.md.) `unset`: the spots that had no pin when the shot
        began, shown first ("no 2 4", docs/inputs.md)."""
        self._count = 0  # (clear(), inline)
        self.dirty = True
        if unset and game.last_player:
            self.flash(_UNSET, (game.last_player << 8) | unset, now_ms)
        if game.last_player and (game.last_points or game.last_foul):
            # the shot's points; 0x4000: the shot counted less than it made (capped at the
            # distance). (Here, not in a function: a call costs a dozen attribute reads.)
            unset = ((game.last_player << 12) | (game.last_to << 10)
                     | (512 if game.last_foul else 0) | (0x4000 if game.capped else 0))
            self.flash(_POINTS, unset | (game.last_points if game.last_points < 0x1FF
                                         else 0x1FF), now_ms)
        if game.announce:
            self._announced(game, game.announce, now_ms)
        if game.status == BREAK:
            if self.break_started is None:
                self.break_started = now_ms
        else:
            self.break_started = None
        self.dirty = True

    def _announced(self, game, announce, now_ms):
        i = 0
        while i < len(_ANNOUNCED):  # (bit, kind) pairs: player 1's bit, player 2's next
            if announce & _ANNOUNCED[i]:
                self._announce(game, _ANNOUNCED[i + 1], 1, now_ms)
            if announce & (_ANNOUNCED[i] << 1):
                self._announce(game, _ANNOUNCED[i + 1], 2, now_ms)
            i += 2

    def _announce(self, game, kind, player, now_ms):
        if kind != _REMAINING20:
            self.flash(kind, player, now_ms)
            return
        kind = game.distance[player - 1] - game.score[player - 1]  # (the points left)
        self.flash(_REMAINING20, (player << 12) | (kind if kind > 0 else 0), now_ms)

    # -- drawing ----------------------------------------------------------------------------

    def refresh(self, game, now_ms):
        if (self._drawn and not self._count and not self.dirty
                and self.override is None and self.break_started is None
                and not self.fault_code and not game.winner and not game.teams
                and not self.empty and not self.display.pending):
            self.due = ticks_add(now_ms, _FAR_MS)
            return  # these scores are on the glass already: the common case, kept cheap
        self._refresh(game, now_ms)
        self.dirty = False
        if self._count and self.override is None and not self.display.pending:
            # a message is up: the picture changes when it ends (_next_change, inline)
            self.due = ticks_add(now_ms, _MESSAGE_MS - ticks_diff(now_ms, self._shown_at))
        else:
            self.due = self._next_change(game, now_ms)

    def _next_change(self, game, now_ms):
        """When the picture changes with nothing happening: a message ends, the break
        clock's next second, the next turn of a blinking picture; or a redraw is due."""
        if self.override is not None or self.display.pending:
            return ticks_add(now_ms, _REDRAW_MS)
        if self._count:
            return ticks_add(now_ms, _MESSAGE_MS - ticks_diff(now_ms, self._shown_at))
        due = ticks_add(now_ms, _FAR_MS)
        if self.break_started is not None:
            due = self._next_second(now_ms, due)
        if game.winner or self.fault_code or game.teams or self.empty:  # turns every
            # _MESSAGE_MS
            now_ms = ticks_add(now_ms, _MESSAGE_MS - now_ms % _MESSAGE_MS)  # (the turn)
            if ticks_diff(now_ms, due) < 0:
                due = now_ms
        return due

    def _next_second(self, now_ms, due):
        gone = ticks_diff(now_ms, self.break_started)
        if gone < _BREAK_S * 1000:
            return ticks_add(self.break_started, (gone // 1000 + 1) * 1000)  # type: ignore
        return due

    # The drawing is split in small functions: a frame bigger than 11 words comes from the
    # heap at every call (docs/performance.md).

    def _refresh(self, game, now_ms):
        if self.override is not None:
            self.override(self.buf, now_ms)
            self._drawn = False
            self.display.show(self.buf)
            return
        if self._count and ticks_diff(now_ms, self._shown_at) >= _MESSAGE_MS:
            self._pop()
            self._shown_at = now_ms
            self.dirty = True
        if self._count:
            if self.dirty:
                self._draw_message(game, self._kinds[self._head], self._args[self._head])
        elif self.break_started is not None:
            self._draw_break(game, now_ms)
        elif game.winner and (now_ms // _MESSAGE_MS) & 1:
            if game.winner == TIE:
                layout.tie(self.buf)
            else:
                layout.winner(self.buf, game.winner)
        elif self.fault_code and (now_ms // _MESSAGE_MS) & 1:
            layout.error(self.buf, self.fault_code)
        elif self.empty and not game.winner and (now_ms // _MESSAGE_MS) & 1:
            layout.castle(self.buf, self.empty, game.turn, "Pin", game.turn)
        else:
            self._draw_scores(game, now_ms)
            return
        self._drawn = False
        self.dirty = False
        self.display.show(self.buf)  # the facade skips a frame identical to the one on the glass

    def _draw_break(self, game, now_ms):
        now_ms = _BREAK_S - ticks_diff(now_ms, self.break_started) // 1000  # (seconds left)
        layout.break_clock(self.buf, now_ms if now_ms > 0 else 0)
        now_ms = game.marked()
        if now_ms:
            layout.mark_ball(self.buf, now_ms)

    def _draw_scores(self, game, now_ms):
        team = game.teams and (now_ms // _MESSAGE_MS) % _TEAM_CYCLE == _TEAM_CYCLE - 1
        if (self._drawn and not self.dirty and not self.display.pending
                and team == self._members_shown):
            return  # these scores are on the glass already: the common case, kept cheap
        if team:
            layout.members(self.buf, game.members, game.turn, game.marked())
        else:
            self._scores(game)
        self._members_shown = team
        self.dirty = False
        self._drawn = True
        self.display.show(self.buf)

    def _scores(self, game):
        layout.scores(self.buf, game.score[0], game.score[1], game.turn, game.marked())

    def _draw_message(self, game, kind, arg):
        if kind == _POINTS:
            self._draw_points(arg)
        elif kind == _REMAINING20:
            layout.remaining20(self.buf, arg >> 12, arg & 0xFFF)
        elif kind == _DISTANCE:
            layout.distance(self.buf, arg)
        elif kind == _LAST_SERIES:
            layout.last_series(self.buf, arg)
        elif kind == _SET:
            layout.set_score(self.buf, game.sets[0], game.sets[1])
        elif kind == ERR:
            layout.error(self.buf, arg)
        elif kind == _RESET:
            layout.text(self.buf, self.reset_text)
        elif kind == _UNSET:
            layout.castle(self.buf, arg & 0x1F, arg >> 8, "no")
        if kind < ERR and game.marks_ball:
            kind = game.marked()  # (the frame's slot again: the player with the marked ball)
            if kind:
                layout.mark_ball(self.buf, kind)  # where the message leaves the cell free

    def _draw_points(self, arg):
        layout.shot_points(self.buf, (arg >> 12) & 3, arg & 0x1FF, (arg >> 10) & 3,
                           (arg >> 9) & 1, arg >> 14)
