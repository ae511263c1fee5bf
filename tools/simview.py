"""The interactive simulated table in a terminal: big 7-segment figures and keys.

    from tools.simview import draw_digits
    print("\\n".join(draw_digits(bytes.fromhex("3f06000000005b4f"))))

`run_interactive` (used by `python -m tools.sim`) starts the firmware on the unix port,
sends it key presses, and redraws the display from the segment bytes the emulated chips
decoded. Drawing is pure and tested: `draw_digits` turns segment bytes (bit 0 = a ...
bit 6 = g, bit 7 = the decimal point) into text rows; `draw_table` draws beside them what
the board sees (the five spots, pin standing or down, and the marks of the shot in
progress), and `menu_words` says under the digits which setup menu item they show.
"""

import json
import os
import select
import subprocess
import sys
import termios
import tty

from tools import upy

RUNNER = os.path.join("tools", "simboard", "run.py")

_H = "━━━━"
_V = "┃"

KEYS = {
    "c": "press carom", "f": "press foul", "o": "press ok", "u": "press undo",
    "C": "hold carom", "F": "hold foul", "O": "hold ok", "U": "hold undo",
}
HELP = (
    "keys: 1-5 knock over / stand up a pin   c f o u: carom foul ok undo   "
    "C F O U: hold   q: quit"
)


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
                parts.append("      ")
            parts.append(col[r] + " ")
        rows.append("".join(parts))
    return rows


# Each setup menu item (firmware.menu.ITEMS) in words, written under its 7-segment form.
MENU_WORDS = {
    "rules": "rules", "d1": "distance of player 1", "d2": "distance of player 2",
    "sets": "sets (best of)", "teams": "singles or two-man teams", "first": "who breaks first",
    "check": "wiring check",
    "new": "start a new game",
}
_SPOT_ROWS = ((None, 1, None), (2, 3, 4), (None, 5, None))  # the plus of the pin spots
STANDING = "●"
DOWN = "○"


def draw_table(view):
    """Rows for beside the digits: the spots as the board reads them (● a pin standing,
    ○ none) in their places on the table, then the shot in progress."""
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
    rows.append("")
    rows.append("shot: " + shot_marks(view))
    return rows


def shot_marks(view):
    """The marks of the shot in progress in words: "pins 1 3, carom, foul"."""
    words = []
    pins = [str(i + 1) for i in range(5) if view["pins"] & (1 << i)]
    if pins:
        words.append("pin%s %s" % ("s" if len(pins) > 1 else "", " ".join(pins)))
    if view["carom"]:
        casino = view["carom"] == 2 and view["rules"] == "ceb"
        words.append("casino" if casino else "carom")
    words += view["fouls"]
    return ", ".join(words) if words else "nothing marked"


def menu_words(view):
    """The line under the digits: the setup menu item in words, or the wiring check."""
    if not view:
        return ""
    if view.get("check"):
        return "wiring check: spots, buttons and every segment (hold undo to leave)"
    if view.get("menu"):
        return "setup menu: %s" % MENU_WORDS.get(view["menu"], view["menu"])
    return ""


def screen_rows(segments, view):
    """The digits with the table beside them, and the menu words under them."""
    digits = draw_digits(segments) if segments else ["(starting)"]
    table = draw_table(view)
    width = max(len(r) for r in digits)
    rows = []
    for i in range(max(len(digits), len(table))):
        left = digits[i] if i < len(digits) else ""
        right = table[i] if i < len(table) else ""
        rows.append((left.ljust(width) + "   " + right).rstrip())
    words = menu_words(view)
    if words:
        rows.append(words)
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
    if state["rules"] == "ceb":
        line += "  sets %d-%d" % tuple(state["sets"])
    if state.get("marked"):
        line += "  marked ball (\u00b0): player %d" % state["marked"]
    if state.get("members"):
        line += "  up: A%d b%d" % tuple(state["members"])
    return line


def _screen(segments, state, logged, view=None):
    out = ["\x1b[H\x1b[2J", "Pin-billiards scoreboard (simulated table)", ""]
    out += screen_rows(segments, view)
    out += ["", describe(state), logged, "", HELP]
    sys.stdout.write("\r\n".join(out) + "\r\n")
    sys.stdout.flush()


def run_interactive(args, device_args, logger_class):
    pipe = logger = None
    link_path = None
    if args.db:
        from tools.linkpipe import LinkPipe

        os.makedirs(os.path.dirname(os.path.abspath(args.db)), exist_ok=True)
        pipe = LinkPipe()
        link_path = pipe.device_path
        logger = logger_class(args.db, pipe.host_path)
    lock = getattr(args, "state_lock", None)
    proc = upy.popen(
        [os.path.join(upy.ROOT, RUNNER), "--interactive", *device_args(args, link_path)],
        heapsize=args.heapsize, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        bufsize=1, pass_fds=() if lock is None else (lock,),
    )
    interactive = sys.stdin.isatty()
    saved = termios.tcgetattr(sys.stdin) if interactive else None
    segments, state, view = None, None, None
    logged = "logging to %s" % args.db if args.db else "no logger (give --db FILE)"
    try:
        if interactive:
            tty.setcbreak(sys.stdin)
        while proc.poll() is None:
            ready, _, _ = select.select([proc.stdout, sys.stdin], [], [], 0.5)
            if proc.stdout in ready:
                line = proc.stdout.readline()
                if line.startswith("D "):
                    segments = bytes.fromhex(line[2:].strip())
                elif line.startswith("S "):
                    state = json.loads(line[2:])
                elif line.startswith("V "):
                    view = json.loads(line[2:])
                elif line:
                    logged = line.strip()
                _screen(segments, state, logged, view)
            if sys.stdin in ready:
                key = os.read(sys.stdin.fileno(), 1).decode(errors="replace")
                if key in ("q", "\x03", "") or not key:
                    proc.stdin.write("quit\n")
                    proc.stdin.flush()
                    break
                if key in "12345":
                    proc.stdin.write("spot %s\n" % key)
                elif key in KEYS:
                    proc.stdin.write(KEYS[key] + "\n")
                proc.stdin.flush()
        proc.wait(timeout=5)
    except (KeyboardInterrupt, BrokenPipeError):
        pass
    finally:
        if proc.poll() is None:
            proc.kill()
        if saved is not None:
            termios.tcsetattr(sys.stdin, termios.TCSADRAIN, saved)
        if logger is not None:
            logger.stop()
        if pipe is not None:
            pipe.close()
    return 2 if proc.returncode == 2 else 0  # 2: the board refused to start (bad --state)
