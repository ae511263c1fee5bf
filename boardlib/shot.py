"""Shot assembly: conditioned spots and button presses in, scored shots and commands out.

    from boardlib import shot
    from boardlib.inputs import PRESS

    asm = shot.ShotAssembler(settle_ms=1500)
    # every poll, in this order:
    asm.spots(sensors.update(standing_mask, now_ms), now_ms, sensors.flapping)
    asm.button(shot.CAROM, carom_button.update(level, now_ms), now_ms)  # NONE is ignored
    ...                                                                # FOUL, OK, UNDO
    result = asm.poll(now_ms)
    if result == shot.SHOT:                    # asm.pins, carom, foul_presses, foul_holds
        # the record itself, allocating nothing
        asm.record_into(record, second_foul_bit, casino) and game.apply(record)
    elif result == shot.UNDO:
        game.undo()
    elif result == shot.MENU:
        ...

What a shot is (HARDWARE.md, "How a shot is seen"):

- A shot begins at the first activity: a spot going down, or a carom or foul mark.
  Spots already down then (a ball on the spot) are blocked for the whole shot.
- Every other spot that goes down counts and stays counted if its pin stands up again.
- The shot ends by itself once no counted spot is down and nothing changed for
  `settle_ms` (a carom or foul mark restarts that wait). `ok` ends it at once; `ok` with
  no shot in progress is a shot that scored nothing.
- `carom`: press = carambole (1), hold = casino (2); the highest mark of the shot wins.
- `foul`: every press is one ordinary foul, every hold one foul of the rules' second code
  (`foul_presses`, `foul_holds`).
- `undo` steps back one layer: it clears the carom and foul marks of the shot in
  progress, or (with no marks) drops the shot in progress unscored, or (with no shot in
  progress) gives UNDO: take back the last scored shot. A hold counts as a press.
- `ok` held gives MENU; a shot in progress stays as it is.
- `unset` after SHOT: the spots that had no pin when the shot began (docs/inputs.md).
- A spot flapping at any time during the shot (pass `SpotSensors.flapping` to `spots()`)
  does not score; a shot that only a flapping spot started ends without a result. A stuck
  spot (dark for `stuck_ms`) is no reason to drop anything: `SpotSensors` keeps it down,
  so a pin that fell and was left lying scores when it is stood up or at `ok`.

Results wait in a small queue; `poll()` hands out one per call (call it every poll).
"""

from rules_core import settings

try:
    from time import ticks_diff
except ImportError:  # CPython: boardlib.ticks wraps as the ESP32 does
    from boardlib.ticks import ticks_diff

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


# Buttons, numbered in the order carom, foul, ok, undo (board profiles, timelines, menu);
# BUTTON_NAMES[n] is button n's name in board profiles and timelines.
CAROM = const(0)
FOUL = const(1)
OK = const(2)
UNDO = const(3)
BUTTON_NAMES = ("carom", "foul", "ok", "undo")
# What a held button means in each rules id (CONTRACT section 4, rules_core.settings): a
# held foul is the rules' second foul code, and a held carom a casino where the rules have
# one (CASINO), else a carambole.
SECOND_FOUL = {rules: settings.second_foul(rules) for rules in settings.RULES_IDS}
CASINO_RULES = settings.with_trait(settings.CASINO)
# Results of poll(): boardlib.inputs' NONE (nothing happened), SHOT, MENU, and UNDO, which
# is both a button and a result.
SHOT = const(4)
MENU = const(5)

# boardlib.inputs' NONE, PRESS and HOLD, as constants of this module (an imported name is
# a lookup at every use; tests/test_shot.py checks that they agree)
_NONE = const(0)
_PRESS = const(1)
_HOLD = const(2)
_QUEUE = const(8)  # results waiting for poll(); a 5 ms poll never has more than two
_ENTRY = const(6)  # kind, pins, carom, foul presses, foul holds, spots unset at the start
_MAX_MARKS = const(9)  # more fouls than this in one shot is a stuck finger, not a rule
# rules_core.events' record of a shot, folded into record_into (tests/test_shot.py checks
# them against events')
_KIND_SHOT = const(1)
_FOUL_ORDINARY = const(1)
_MAX_OTHER = const(15)


class ShotAssembler:
    """Turns the `down` mask of SpotSensors and Button results into shots (see module)."""

    def __init__(self, settle_ms=1500, spot_count=5):
        if not isinstance(settle_ms, int) or isinstance(settle_ms, bool) or settle_ms < 1:
            raise ValueError("settle_ms must be a whole number >= 1, not %r" % (settle_ms,))
        if not isinstance(spot_count, int) or not 1 <= spot_count <= 8:
            raise ValueError("spot_count must be 1..8, not %r" % (spot_count,))
        self.settle_ms = settle_ms
        self._all = (1 << spot_count) - 1
        self._queue = bytearray(_QUEUE * _ENTRY)
        self._down = 0
        self._primed = False
        # The last result handed out by poll().
        self.pins = 0
        self.carom = 0
        self.foul_presses = 0
        self.foul_holds = 0
        self.unset = 0
        self.dropped = 0  # results lost because poll() was not called for a long time
        self.left = -1  # after poll(): the ms until it has something to do, -1 never
        # Room in the attribute table (docs/performance.md, "Attribute tables with room"):
        # a full one is searched whole for every name it lacks, each method's.
        self._room = None
        self.reset()

    def reset(self):
        """Drop the shot in progress and any waiting result; the spots stay as they are."""
        self.busy = False
        self._head = 0
        self.waiting = 0
        self._clear_shot(0, 0)

    def _clear_shot(self, blocked, now_ms, unset=0):
        self._blocked = blocked
        self._unset = unset
        self._counted = 0
        self._faulted = 0
        self._carom = 0
        self._presses = 0
        self._holds = 0
        self._quiet_since = now_ms

    def spots(self, down_mask, now_ms, fault_mask=0):
        """Take the conditioned down mask (bit i = spot i+1 has no pin) and the mask of
        spots that cannot be trusted (`SpotSensors.flapping`).

        A spot in `fault_mask` at any time during a shot does not score in it.
        """
        down = down_mask & self._all
        if self.busy:
            self._faulted |= fault_mask
        if not self._primed:
            self._primed = True
            self._down = down
            return
        changed = down ^ self._down  # (then the spots before: the frame stays small)
        if not changed:
            return
        if not self.busy:
            if not (changed & down):
                self._down = down
                return  # pins being stood up between shots are no activity
            self.busy = True
            changed = self._down
            self._clear_shot(changed & down, now_ms, changed)
            self._faulted = fault_mask
        self._down = down
        self._counted |= down & ~self._blocked
        self._quiet_since = now_ms

    def button(self, which, kind, now_ms):
        """Take one Button result: `which` is CAROM, FOUL, OK or UNDO; NONE is ignored."""
        if kind == _NONE:
            return
        if kind != _PRESS and kind != _HOLD:
            raise ValueError("button kind must be PRESS or HOLD, not %r" % (kind,))
        if which == CAROM or which == FOUL:
            if not self.busy:
                self.busy = True
                self._clear_shot(self._down, now_ms, self._down)
            if which == CAROM:
                if kind == _HOLD:
                    self._carom = 2
                elif not self._carom:
                    self._carom = 1
            elif kind == _HOLD:
                if self._holds < _MAX_MARKS:
                    self._holds += 1
            elif self._presses < _MAX_MARKS:
                self._presses += 1
            self._quiet_since = now_ms
        elif which == OK:
            if kind == _HOLD:
                self._push(MENU, False)
            elif self.busy:  # the shot ends (_finish, inline: a call costs a dozen reads)
                self._push(SHOT, True)
                self.busy = False
                self._clear_shot(0, 0)
            else:
                self._push(SHOT, False)
        elif which == UNDO:
            self._undo(now_ms)
        else:
            raise ValueError("unknown button %r" % (which,))

    def _undo(self, now_ms):
        if not self.busy:
            self._push(UNDO, False)
        elif self._carom or self._presses or self._holds:
            self._carom = self._presses = self._holds = 0
            self._quiet_since = now_ms
            if not self._counted:
                self._drop()  # the marks were all there was to this shot
        else:
            self._drop()

    def poll(self, now_ms):
        """End the shot if it has settled; return NONE, SHOT, UNDO or MENU.

        After SHOT read `pins`, `carom`, `foul_presses`, `foul_holds` and `unset`.
        `left` is then the ms until poll() acts with the spots and buttons as they are: 0
        while results wait, the rest of the settle time while a shot with no counted
        spot down is in progress, else -1.
        """
        self.left = -1
        if self.busy and not (self._down & ~self._blocked):
            gone = ticks_diff(now_ms, self._quiet_since)
            if gone >= self.settle_ms:
                # The shot ends (inline: a call costs a dozen reads); one that only a
                # flapping sensor moved gives nothing: its error shows, no turn passes.
                if self._counted & ~self._faulted or self._carom or self._presses or self._holds:
                    self._push(SHOT, True)
                self._drop()
            else:
                self.left = self.settle_ms - gone
        if not self.waiting:
            return _NONE
        if self.waiting > 1:
            self.left = 0
        at = self._head * _ENTRY
        q = self._queue
        self.pins = q[at + 1]
        self.carom = q[at + 2]
        self.foul_presses = q[at + 3]
        self.foul_holds = q[at + 4]
        self.unset = q[at + 5]
        self._head = (self._head + 1) % _QUEUE
        self.waiting -= 1
        return q[at]

    def record_into(self, buf, second, casino):
        """The last shot as an event record (rules_core.events) written into buf[0:4],
        the same as events.encode_shot(pins, carom, fouls, unset=bool(self.unset)) of
        the shot as its rules read it (tests/device/shot_reading.py), without making
        anything:
        `second` is the bit of the rules' second foul code (a held `foul`), `casino`
        whether a held `carom` is a casino. False, writing nothing, when the fouls are
        more than a record holds (a stuck finger: encode_shot refuses them too)."""
        bits = other = 0
        if self.foul_holds:
            bits = second
            other = self.foul_holds - 1
        if self.foul_presses:  # ordinary fouls: the first has its bit, unless a hold has
            if bits & _FOUL_ORDINARY:
                other += self.foul_presses
            else:
                bits |= _FOUL_ORDINARY
                other += self.foul_presses - 1
        if other > _MAX_OTHER:
            return False
        buf[0] = _KIND_SHOT
        buf[2] = bits
        buf[3] = other
        bits = self.carom  # (one local less: the frame stays small)
        if bits == 2 and not casino:
            bits = 1
        buf[1] = self.pins | bits << 5 | (0x80 if self.unset else 0)  # events.UNSET
        return True

    def _drop(self):
        self.busy = False
        self._clear_shot(0, 0)

    def _push(self, kind, shot):
        """Queue a result: `kind`, with the shot in progress (its counted pins, marks and
        fouls) when `shot`, else nothing scored."""
        if self.waiting == _QUEUE:
            self.dropped += 1
            return
        at = ((self._head + self.waiting) % _QUEUE) * _ENTRY
        q = self._queue
        q[at] = kind
        if shot:
            q[at + 1] = self._counted & ~self._faulted
            q[at + 2] = self._carom
            q[at + 3] = self._presses
            q[at + 4] = self._holds
            q[at + 5] = self._unset
        else:
            q[at + 5] = self._down  # `ok` with no shot in progress: a miss, begun now
            q[at + 1] = q[at + 2] = q[at + 3] = q[at + 4] = 0
        self.waiting += 1
