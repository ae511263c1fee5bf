"""`make check PORT=...`: the builders' wiring check on a board, echoed on the host.

    python -m tools.check --port /dev/ttyUSB0              # until undo is held (or Ctrl-C)
    python -m tools.check --port /dev/ttyUSB0 --seconds 60
    python -m tools.check --port PTY --no-reset            # a board whose REPL cannot reset

Over the board's USB-serial REPL (mpremote's serial transport, as `make deploy` uses):
Ctrl-C stops the firmware, a soft reset from the raw REPL gives a clean heap without
starting `main.py`, then the loop below (BOARD_LOOP) runs `firmware.check.WiringCheck`
on the board built by `firmware.hw.build()`, as the firmware would be. The board's display
sweeps every segment and then shows the spots; this command prints what the board reads:
every change of the spots (pin or no pin as the firmware understands it, and the level of
each line) and the name of every button pressed. Holding `undo` on the board, Ctrl-C here
or `--seconds` ends it; the board is then soft-reset from the friendly REPL, which starts
`main.py`, i.e. the scoreboard, again.

Exit status: 0 done, 1 the check failed on the board (its traceback is printed), 2 the
board could not be reached.
"""

import argparse
import sys

BUTTONS = ("carom", "foul", "ok", "undo")

# Runs on the board, from the raw REPL: the check's loop, sent from here so that the board's
# own code stays small. It prints "check SPOTS LEVEL", then "seen N" at every change of
# WiringCheck.seen, and "done". First, as main.py does, a frozen build's own packages:
# not copies an earlier deploy left on its flash ('' comes before '.frozen' in sys.path).
BOARD_LOOP = """\
import sys
_p = sys.path[:]
sys.path[:] = [e for e in _p if e not in ("", "/lib")]
try:
    import boardlib, firmware, rules_core
except ImportError:
    for _n in ("boardlib", "firmware", "rules_core"):
        sys.modules.pop(_n, None)
sys.path[:] = _p
import time
from boardlib.ticks import ticks_diff
from firmware import hw
from firmware.check import WiringCheck
board = hw.build()
arm = getattr(board, "arm_watchdog", None)
wdt = arm() if arm else board.wdt  # an armed watchdog cannot be stopped: feed it
now = start = time.ticks_ms()
check = WiringCheck(board, now, board.config["hold_ms"])
buf = bytearray(8)
last = -1
print("check", len(board.spots), board.standing_level)
while check.poll(now):
    if check.seen != last:
        last = check.seen
        print("seen", last)
    check.draw(buf, now)
    if board.display:
        board.display.show(buf)
    wdt.feed()
    if SECONDS and ticks_diff(now, start) >= SECONDS * 1000:
        break
    time.sleep_ms(10)
    now = time.ticks_ms()
print("done")
"""


def board_command(seconds):
    return BOARD_LOOP.replace("SECONDS", repr(seconds))


def describe(seen, count=5):
    """WiringCheck.seen in words: "spots 1:pin 2:pin 3:--- 4:pin 5:pin  lines 0 0 1 0 0"."""
    spots = " ".join("%d:%s" % (i + 1, "pin" if seen >> i & 1 else "---") for i in range(count))
    lines = " ".join(str(seen >> (8 + i) & 1) for i in range(count))
    return "spots %s  lines %s" % (spots, lines)


class Words:
    """Turns the board's lines into the builder's words, as they arrive."""

    def __init__(self, write=sys.stdout.write):
        self.write = write
        self.partial = b""
        self.spots = 5
        self.pressed = 0

    def feed(self, data):
        if data == b"\x04":  # the raw REPL's end of output, not the board's words
            return
        self.partial += data
        while b"\n" in self.partial:
            line, self.partial = self.partial.split(b"\n", 1)
            self.line(line.decode("utf-8", "replace").strip())

    def line(self, line):
        words = line.split()
        out = [line]
        if len(words) == 3 and words[0] == "check":
            self.spots = int(words[1])
            out = ["check: %s spots, standing_level %s; hold undo on the board to leave"
                   % (words[1], words[2])]
        elif len(words) == 2 and words[0] == "seen" and words[1].isdigit():
            seen = int(words[1])
            pressed = seen >> 16
            new = pressed & ~self.pressed
            self.pressed = pressed
            out = [describe(seen, self.spots)]
            out += ["button " + BUTTONS[i] for i in range(4) if new >> i & 1]
        elif line == "done":
            out = ["check: done"]
        for text in out:
            self.write(text + "\n")
        sys.stdout.flush()


def main(argv):
    p = argparse.ArgumentParser(prog="python -m tools.check", description=__doc__.split("\n")[0])
    p.add_argument("--port", required=True, help="the board's USB-serial port, e.g. /dev/ttyUSB0")
    p.add_argument("--seconds", type=float, help="stop after this long (default: undo held)")
    p.add_argument("--no-reset", action="store_true",
                   help="no soft reset before or after (a board that cannot do them)")
    args = p.parse_args(argv)
    if args.seconds is not None and args.seconds <= 0:
        p.error("--seconds must be positive")
    from mpremote.transport import TransportError
    from mpremote.transport_serial import SerialTransport

    try:
        board = SerialTransport(args.port, baudrate=115200)
    except Exception as exc:  # pyserial says why in its own words
        sys.stderr.write("check: cannot open %s: %s\n" % (args.port, exc))
        return 2
    status = 0
    try:
        try:
            board.enter_raw_repl(soft_reset=not args.no_reset)
        except TransportError as exc:
            sys.stderr.write("check: no MicroPython REPL on %s (%s)\n" % (args.port, exc))
            return 2
        board.exec_raw_no_follow(board_command(args.seconds))
        try:
            _, err = board.follow(timeout=None, data_consumer=Words().feed)
        except KeyboardInterrupt:
            board.serial.write(b"\x03")  # stop the check on the board too
            try:
                board.follow(timeout=3)
            except TransportError:
                pass
            err = b""
            sys.stdout.write("check: stopped\n")
        if err:
            sys.stderr.write(err.decode("utf-8", "replace"))
            status = 1
        board.exit_raw_repl()
        if not args.no_reset:
            board.serial.write(b"\x04")  # friendly soft reset: main.py starts the scoreboard
    finally:
        board.close()
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
