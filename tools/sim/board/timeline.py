"""Raw input timelines (CONTRACT.md section 4): parse them, then play them in virtual time.

    from tools.sim.board import timeline

    events = timeline.parse(text)   # or timeline.load("game.timeline"): a list
    levels = timeline.Levels(events)
    # or, for a file of any length, read as it is played:
    #   end = timeline.end_of(open(path, "rb"))       # checks every line first
    #   levels = timeline.Levels(timeline.events(open(path, "rb")), end_ms=end)
    now = 0
    while now <= levels.end_ms + 10000:
        levels.advance(now)         # apply everything due at or before now
        levels.standing             # bit i set = spot i+1 reports a pin standing
        levels.pressed(timeline.CAROM_BUTTON)
        now += 5

The format, one event a line, times in ms since power-up and never decreasing; `#` starts
a comment, blank lines are ignored:

    0      pins up 1 2 3 4 5   # exactly these spots report a pin standing, the others not
    1200   pin 2 down          # spot 2 reports no pin
    1215   pin 2 up
    3000   press carom         # a short press (PRESS_MS long)
    5000   hold foul 1200      # a press held for 1200 ms
    8000   net down            # the club's WiFi goes away (a board with a `net` setting)
    9500   net up              # and comes back

Before the first line every spot reports a pin standing and no button is pressed.
Lines are read as tools.replay.lines reads them (LF, CRLF or CR line ends, a byte order mark
skipped, plain ASCII words, at most 4096 bytes). Times and the ends of presses are at most
MAX_TIME_MS (7 days). A bad line raises ValueError("LINE: what is wrong").
Each event becomes a tuple (time_ms, kind, a, b): (t, PINS, standing_mask, 0),
(t, PIN, spot_bit, 1 up / 0 down), (t, PRESS or HOLD, button_index, duration_ms),
button_index into BUTTONS, (t, NET, 1 up / 0 down, 0). The network starts up.
"""

import io

from boardlib.shot import BUTTON_NAMES, CAROM, FOUL, OK, UNDO
from tools.replay.lines import LineError, raw_lines, shown, words_of

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):
        return x


PINS = const(1)
PIN = const(2)
PRESS = const(3)
HOLD = const(4)
NET = const(5)

BUTTONS = BUTTON_NAMES
CAROM_BUTTON = CAROM
FOUL_BUTTON = FOUL
OK_BUTTON = OK
UNDO_BUTTON = UNDO

PRESS_MS = const(100)  # how long a short press keeps the button down
# Times (and the end of a press) may not pass one week: the ESP32's ticks_ms wraps at 2**30
# ms (12.4 days) and the firmware's timers compare times less than 2**29 ms apart.
MAX_TIME_MS = const(604800000)
MAX_TIME_TEXT = "7 days"


def _whole(word, what):
    for ch in word:
        if not "0" <= ch <= "9":
            word = ""
    if not word:
        raise ValueError("%s must be a whole number, not %s" % (what, shown(word)))
    if len(word) > 10 or int(word) > MAX_TIME_MS:
        raise ValueError("%s is past %d ms (%s): the limit of a timeline" % (
            what, MAX_TIME_MS, MAX_TIME_TEXT))
    return int(word)


def _spot_bit(word, spots):
    n = _whole(word, "a spot")
    if not 1 <= n <= spots:
        raise ValueError("spot %d does not exist (spots are 1-%d)" % (n, spots))
    return 1 << (n - 1)


def _button(word):
    for i in range(len(BUTTONS)):
        if BUTTONS[i] == word:
            return i
    raise ValueError("unknown button %s (buttons: %s)" % (shown(word), ", ".join(BUTTONS)))


def _event(words, spots, press_ms):
    """One line's words after the time -> (kind, a, b)."""
    what = words[0] if words else ""
    if what == "pins":
        if len(words) < 2 or words[1] != "up":
            raise ValueError("expected 'pins up' and the standing spots")
        mask = 0
        for word in words[2:]:
            bit = _spot_bit(word, spots)
            if mask & bit:
                raise ValueError("spot %s is listed twice" % word)
            mask |= bit
        return PINS, mask, 0
    if what == "pin":
        if len(words) != 3 or words[2] not in ("up", "down"):
            raise ValueError("expected 'pin N up' or 'pin N down'")
        return PIN, _spot_bit(words[1], spots), 1 if words[2] == "up" else 0
    if what == "press":
        if len(words) != 2:
            raise ValueError("expected 'press BUTTON'")
        return PRESS, _button(words[1]), press_ms
    if what == "hold":
        if len(words) != 3:
            raise ValueError("expected 'hold BUTTON MS'")
        ms = _whole(words[2], "the hold time in ms")
        if ms < 1:
            raise ValueError("the hold time must be at least 1 ms")
        return HOLD, _button(words[1]), ms
    if what == "net":
        if len(words) != 2 or words[1] not in ("up", "down"):
            raise ValueError("expected 'net up' or 'net down'")
        return NET, 1 if words[1] == "up" else 0, 0
    if not what:
        raise ValueError("an event must follow the time")
    raise ValueError("unknown event %s (expected pins, pin, press, hold or net)"
                     % shown(what))


def events(stream, spots=5, press_ms=PRESS_MS):
    """The event tuples of a timeline read from a binary stream, a line at a time;
    ValueError("LINE: what is wrong") at the first bad line."""
    last_time = 0
    released_at = [0] * len(BUTTONS)  # when each button's last press ends
    pressed_on = [0] * len(BUTTONS)  # the line of that press
    try:
        for number, raw in raw_lines(stream):
            try:
                words = words_of(raw)
                if not words:
                    continue
                t = _whole(words[0], "the time in ms")
                if t < last_time:
                    raise ValueError("time %d is before the previous event's %d"
                                     % (t, last_time))
                kind, a, b = _event(words[1:], spots, press_ms)
                if kind == PRESS or kind == HOLD:
                    if pressed_on[a] and t <= released_at[a]:
                        raise ValueError("%s is still pressed (line %d) until %d ms"
                                         % (BUTTONS[a], pressed_on[a], released_at[a]))
                    if t + b > MAX_TIME_MS:
                        raise ValueError("the press lasts past %d ms (%s): the limit of a "
                                         "timeline" % (MAX_TIME_MS, MAX_TIME_TEXT))
                    released_at[a] = t + b
                    pressed_on[a] = number
            except ValueError as e:
                raise ValueError("%d: %s" % (number, e.args[0])) from None
            last_time = t
            yield (t, kind, a, b)
    except LineError as e:
        raise ValueError("%d: %s" % (e.line, e.message)) from None


def end_of(stream, spots=5, press_ms=PRESS_MS):
    """Check a whole timeline without keeping it: returns when its last event is over
    (ms), or raises ValueError("LINE: ...")."""
    end = 0
    for event in events(stream, spots, press_ms):
        over = _over(event)
        if over > end:
            end = over
    return end


def _over(event):
    return event[0] + (event[3] if event[1] == PRESS or event[1] == HOLD else 0)


def parse(text, spots=5, press_ms=PRESS_MS):
    """Parse timeline text (str or bytes) into a list of event tuples."""
    if isinstance(text, str):
        text = text.encode()
    return list(events(io.BytesIO(text), spots, press_ms))


def load(path, spots=5, press_ms=PRESS_MS):
    """Parse a timeline file into a list (for a timeline of any length: stream it with
    end_of() and then Levels(events(f), end_ms=...))."""
    with open(path, "rb") as f:
        return list(events(f, spots, press_ms))


class Levels:
    """What the spots and buttons report at a virtual time, for a parsed timeline.

    `events` is a list, or any iterator of event tuples (then give `end_ms`, from
    end_of()): a timeline file is read as it is played, never held whole. Call
    `advance(now_ms)` with non-decreasing times (plain ms since power-up). A press covers
    [time, time + duration): it is seen by every poll in that span. `end_ms` is when the
    last event is over.
    """

    def __init__(self, events, spots=5, end_ms=None):
        if end_ms is None:  # a list: work it out here
            end_ms = 0
            for event in events:
                if _over(event) > end_ms:
                    end_ms = _over(event)
        self._events = iter(events)
        self._coming = next(self._events, None)  # the next event not applied yet
        self.all_standing = self.standing = (1 << spots) - 1
        self.buttons = 0  # bit i set = BUTTONS[i] is down
        self.net = 1  # the club's network: 1 up, 0 down
        self._release = [0] * len(BUTTONS)
        self.end_ms = end_ms
        self.changes = 0  # events applied and presses ended so far

    def next_ms(self):
        """When something changes next: the next event or the end of a press (None when
        nothing will)."""
        soonest = None if self._coming is None else self._coming[0]
        for i in range(len(BUTTONS)):
            if self.buttons & (1 << i) and (soonest is None or self._release[i] < soonest):
                soonest = self._release[i]
        return soonest

    def pressed(self, button):
        return bool(self.buttons & (1 << button))

    def at(self, now_ms):
        """advance(now_ms), then (standing mask, buttons mask). Allocates a tuple."""
        self.advance(now_ms)
        return self.standing, self.buttons

    def advance(self, now_ms):
        """Apply every event due at or before now_ms; returns the standing mask."""
        for i in range(len(BUTTONS)):
            if self.buttons & (1 << i) and now_ms >= self._release[i]:
                self.buttons &= ~(1 << i)
                self.changes += 1
        while self._coming is not None and self._coming[0] <= now_ms:
            t, kind, a, b = self._coming
            self._coming = next(self._events, None)
            self.changes += 1
            if kind == PINS:
                self.standing = a
            elif kind == PIN:
                self.standing = (self.standing | a) if b else (self.standing & ~a)
            elif kind == NET:
                self.net = a
            elif now_ms < t + b:  # a press that ended between two polls is never seen
                self.buttons |= 1 << a
                self._release[a] = t + b
        return self.standing
