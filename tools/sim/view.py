"""The interactive simulated table in a terminal: big 7-segment figures and keys.

    from tools.sim.view import draw_digits
    print("\\n".join(draw_digits(bytes.fromhex("3f06000000005b4f"))))

`run_interactive` (used by `python -m tools.sim`) starts the firmware on the unix port,
sends it key presses, and redraws the display from the segment bytes the emulated chips
decoded. Drawing is pure and tested: `draw_digits` turns segment bytes (bit 0 = a ...
bit 6 = g, bit 7 = the decimal point) into text rows; `draw_table` draws beside them what
the board sees (the five spots, pin standing or down), and under them come the marks of
the shot in progress and, in the setup menu, the item the digits show, in words
(tools.sim.words). `screen` lays the whole frame out for an 80-column terminal: no row is
wider than WIDTH.

Each frame from the board (`F <segments> <view>`, tools/sim/board/interactive.py) carries
the digits and the words together, and every line the board wrote is read before the
screen is drawn again, so the words under the digits always belong to those digits.
On `q` the board reads its game back from its flash image and says whether it is the
game on the display; only then does the terminal say "game saved on the board's flash".
"""

import json
import os
import select
import subprocess
import sys
import tempfile
import termios
import textwrap
import tty

from tools.port import upy
from tools.sim import words

RUNNER = upy.entry("board")
WIDTH = 80  # the terminal the frame is laid out for

_H = "━━━━"
_V = "┃"
GAP = 6  # columns between the players' halves

# The keys: 1-5 for the spots, a button's letter for a press, its capital for a hold.
KEYS = {}
for _name, _key, _press, _hold, _short in words.BUTTONS:
    KEYS[_key] = "press " + _name
    KEYS[_key.upper()] = "hold " + _name


def key_lines(view=None):
    """The key help for what the board shows now (the game, the setup menu, the wiring
    check), every hold named, laid out in WIDTH columns."""
    if view and view.get("check"):
        return _fill("keys:", ["hold %s: %s" % (key.upper(), hold)
                               for _, key, _, hold in words.CHECK_BUTTONS] + ["q: quit"])
    if view and view.get("menu"):
        return (_fill("keys:", ["%s: %s" % (key, press)
                                for _, key, press, _ in words.MENU_BUTTONS] + ["q: quit"])
                + _fill("hold:", ["%s: %s" % (key.upper(), hold)
                                  for _, key, _, hold in words.MENU_BUTTONS]))
    return (_fill("keys:", ["1-5: knock the pin on that spot over, or stand it up again",
                            "q: quit"])
            + _fill("press:", ["%s: %s" % (key, name) for name, key, _, _, _ in words.BUTTONS])
            + _fill("hold:", ["%s: %s" % (key.upper(), short)
                              for _, key, _, _, short in words.BUTTONS]))


_LABEL = 7  # the labels' column: "press: " and what follows line up


def _fill(label, items):
    """Items after a label, three spaces apart, a line broken only between items."""
    lead = label + " " * max(1, _LABEL - len(label))
    lines = []
    line, empty = lead, True
    for item in items:
        if not empty and len(line) + 3 + len(item) > WIDTH:
            lines.append(line)
            line, empty = " " * _LABEL, True
        line += item if empty else "   " + item
        empty = False
    lines.append(line)
    return lines


def _wrap(text, whole_words=False):
    """Rows of at most WIDTH columns (with `whole_words`, a longer word, such as a
    file's path, keeps a row of its own rather than being cut)."""
    return textwrap.wrap(text, WIDTH, subsequent_indent=" " * _LABEL, break_on_hyphens=False,
                         break_long_words=not whole_words)


def draw_digit(seg):
    """Seven rows of six columns for one digit's segment byte."""
    a, b, c, d, e, f, g, dp = ((seg >> i) & 1 for i in range(8))
    blank = "    "
    rows = [
        " " + (_H if a else blank) + " ",
        (_V if f else " ") + blank + (_V if b else " "),
        (_V if f else " ") + blank + (_V if b else " "),
        " " + (_H if g else blank) + " ",
        (_V if e else " ") + blank + (_V if c else " "),
        (_V if e else " ") + blank + (_V if c else " "),
        " " + (_H if d else blank) + ("●" if dp else " "),
    ]
    return rows


def draw_digits(segments, gap_after=4):
    """Rows for a whole display; a wider gap between the two players' halves."""
    columns = [draw_digit(s) for s in segments]
    rows = []
    for r in range(7):
        parts = []
        for i, col in enumerate(columns):
            if i == gap_after:
                parts.append(" " * GAP)
            parts.append(col[r] + " ")
        rows.append("".join(parts))
    return rows


_SPOT_ROWS = ((None, 1, None), (2, 3, 4), (None, 5, None))  # the plus of the pin spots
STANDING = "●"
DOWN = "○"


def draw_table(view):
    """Rows for beside the digits: the spots as the board reads them (● a pin standing,
    ○ none) in their places on the table."""
    if not view:
        return []
    standing = view["standing"]
    rows = ["the table:"]
    for row in _SPOT_ROWS:
        cells = []
        for spot in row:
            if spot is None:
                cells.append("    ")
            else:
                mark = STANDING if standing & (1 << (spot - 1)) else DOWN
                cells.append("%d %s " % (spot, mark))
        rows.append(" " + "".join(cells).rstrip())
    return rows


def shot_marks(view):
    """The marks of the shot in progress in words: "pins 1 3, carom, foul"."""
    marks = []
    pins = [str(i + 1) for i in range(5) if view["pins"] & (1 << i)]
    if pins:
        marks.append("pin%s %s" % ("s" if len(pins) > 1 else "", " ".join(pins)))
    if view["carom"]:
        from rules_core.settings import CASINO, has

        casino = view["carom"] == 2 and has(view["rules"], CASINO)
        marks.append("casino" if casino else "carom")
    marks += view["fouls"]
    return ", ".join(marks) if marks else "nothing marked"


def menu_words(view):
    """The line under the digits: the setup menu item in words, or the wiring check."""
    if not view:
        return ""
    return words.under_digits(view.get("menu"), view.get("check"))


def screen_rows(segments, view):
    """The digits with the table beside them; under them the shot in progress and the
    menu words."""
    digits = draw_digits(segments) if segments else ["(starting)"]
    table = draw_table(view)
    width = max(len(r) for r in digits)
    rows = []
    for i in range(max(len(digits), len(table))):
        left = digits[i] if i < len(digits) else ""
        right = table[i] if i < len(table) else ""
        rows.append((left.ljust(width) + "   " + right).rstrip())
    if view:
        rows += _wrap("shot: " + shot_marks(view))
    under = menu_words(view)
    if under:
        rows += _wrap(under)
    call = words.call_line(view.get("call")) if view else ""
    if call:
        rows += _wrap(call)  # what the board's buzzer calls (boardlib.calls)
    return rows


def describe(state):
    if not state:
        return ""
    line = "%s  distance %d/%d  score %d : %d  at the table: player %d  %s" % (
        state["rules"], state["distance"][0], state["distance"][1], state["score"][0],
        state["score"][1], state["turn"], state["status"],
    )
    if state["winner"] is not None:
        line += "  winner: %s" % state["winner"]
    from rules_core.settings import SETS, has

    if has(state["rules"], SETS):
        line += "  sets %d-%d" % tuple(state["sets"])
    if state.get("marked"):
        line += "  marked ball (\u00b0): player %d" % state["marked"]
    if state.get("members"):
        line += "  up: A%d b%d" % tuple(state["members"])
    return line


TITLE = "Pin-billiards scoreboard (simulated table)"


def screen(segments, state, logged, view=None):
    """Every row of one frame, none wider than WIDTH."""
    rows = [TITLE, ""]
    rows += screen_rows(segments, view)
    rows.append("")
    for text in (describe(state), logged):
        rows += _wrap(text) if text else [""]
    rows.append("")
    rows += key_lines(view)
    return rows


def _draw(rows):
    sys.stdout.write("\x1b[H\x1b[2J" + "\r\n".join(rows) + "\r\n")
    sys.stdout.flush()


def quit_words(report, state_dir):
    """What the terminal says once the board has gone: whether the game is on its flash.

    `report` is the board's `Q` answer (None when it said nothing), `state_dir` the
    --state folder (None: the flash was in memory)."""
    if report is None:
        return ["the simulated board stopped without saying whether the game is on its "
                "flash"]
    if state_dir is None or report.get("image") is None:
        return ["the game was not kept: this board's flash was in memory "
                "(python -m tools.sim --state DIR keeps it)"]
    image = os.path.join(state_dir, "flash.img")
    if not report["saved"]:
        return ["the game on the display is NOT the game on the board's flash (%s): the "
                "flash failed (Err 43/44 on the display)" % image]
    out = ["game saved on the board's flash (%s): the next start resumes it" % image]
    if report.get("shot"):
        out.append("the shot in progress was not scored: a board switched off loses it too")
    return out


class Screen:
    """What the board said last, from its lines (`F`, `S`, `Q`, anything else)."""

    def __init__(self, logged):
        self.segments = self.state = self.view = self.quit = None
        self.logged = logged
        self._partial = b""

    def feed(self, data):
        """Take bytes the board wrote; returns True when a whole line came with them."""
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        for raw in lines:
            self.line(raw.decode(errors="replace").rstrip("\r"))
        return bool(lines)

    def line(self, line):
        if line.startswith("F "):
            hexes, _, view = line[2:].partition(" ")
            self.segments = bytes.fromhex(hexes)
            self.view = json.loads(view)
        elif line.startswith("S "):
            self.state = json.loads(line[2:])
        elif line.startswith("Q "):
            self.quit = json.loads(line[2:])
        elif line.strip():
            self.logged = line.strip()

    def rows(self):
        return screen(self.segments, self.state, self.logged, self.view)


def run_interactive(args, device_args, logger_class):
    pipe = logger = None
    link_path = None
    if args.db:
        from tools.port.linkpipe import LinkPipe

        os.makedirs(os.path.dirname(os.path.abspath(args.db)), exist_ok=True)
        pipe = LinkPipe()
        link_path = pipe.device_path
        logger = logger_class(args.db, pipe.host_path)
    lock = getattr(args, "state_lock", None)
    # Without --state the board's flash is an image in a folder thrown away at the end,
    # as in timeline mode (a 1.5 MB flash in memory would not fit the interpreter's heap).
    scratch = tempfile.TemporaryDirectory(prefix="pinboard-flash-")
    proc = upy.popen(
        [os.path.join(upy.ROOT, RUNNER), "--interactive",
         *device_args(args, link_path, scratch.name)],
        heapsize=args.heapsize, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0,
        pass_fds=() if lock is None else (lock,),
    )
    interactive = sys.stdin.isatty()
    saved = termios.tcgetattr(sys.stdin) if interactive else None
    shown = Screen("logging to %s" % args.db if args.db else "no logger (give --db FILE)")
    out = proc.stdout.fileno()
    try:
        if interactive:
            tty.setcbreak(sys.stdin)
            # Ctrl-C as a key, not a signal: the signal would reach the board's interpreter
            # too and end it before it could say whether the game is on its flash.
            mode = termios.tcgetattr(sys.stdin)
            mode[3] &= ~termios.ISIG
            termios.tcsetattr(sys.stdin, termios.TCSANOW, mode)
        while proc.poll() is None:
            ready, _, _ = select.select([out, sys.stdin], [], [], 0.5)
            if out in ready:
                data = os.read(out, 65536)
                # every line the board wrote so far, then one drawing of the last picture
                if shown.feed(data):
                    _draw(shown.rows())
            if sys.stdin in ready:
                key = os.read(sys.stdin.fileno(), 1).decode(errors="replace")
                if key in ("q", "\x03", ""):
                    _ask_quit(proc)
                    break
                if key in "12345":
                    proc.stdin.write(b"spot %s\n" % key.encode())
                elif key in KEYS:
                    proc.stdin.write(KEYS[key].encode() + b"\n")
    except KeyboardInterrupt:
        _ask_quit(proc)
    except BrokenPipeError:
        pass
    finally:
        _finish(proc, out, shown)
        if saved is not None:
            termios.tcsetattr(sys.stdin, termios.TCSADRAIN, saved)
        if logger is not None:
            logger.stop()
        if pipe is not None:
            pipe.close()
        scratch.cleanup()
    if proc.returncode == 2:
        return 2  # the board refused to start (bad --state)
    said = [row for text in quit_words(shown.quit, args.state)
            for row in _wrap(text, whole_words=True)]
    sys.stdout.write("\r\n".join(said) + "\r\n")
    return 0


def _ask_quit(proc):
    try:
        proc.stdin.write(b"quit\n")
    except (BrokenPipeError, OSError):
        pass


def _finish(proc, out, shown, seconds=10):
    """Read what the board still says (its `Q` answer) until it ends, then reap it."""
    import time

    deadline = time.monotonic() + seconds
    while proc.poll() is None and time.monotonic() < deadline:
        ready, _, _ = select.select([out], [], [], 0.2)
        if ready:
            data = os.read(out, 65536)
            if not data:
                break
            shown.feed(data)
    try:
        proc.wait(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    while True:  # what is left in the pipe after the end
        ready, _, _ = select.select([out], [], [], 0)
        if not ready:
            break
        data = os.read(out, 65536)
        if not data:
            break
        shown.feed(data)
