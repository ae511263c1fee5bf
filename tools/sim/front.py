"""The simulated table: the real firmware on the MicroPython unix port.

    python -m tools.sim                                  # interactive, in this terminal
    python -m tools.sim --timeline game.timeline         # virtual time, prints the final state
    python -m tools.sim --state DIR --db games.db        # keep the board's flash, log to SQLite

Options (CONTRACT §4): --timeline FILE, --rules ID, --distance N[,M], --sets N, --first P,
--teams (ceb two-man teams), --speed X, --state DIR, --new-game, --db FILE, and --display
tm1637|max7219. A board.cfg given with --config that has `net` settings joins the simulated
WiFi (--wifi SSID:PASSWORD)
and the MQTT broker they name, with the real umqtt code; timeline lines `T net down` and
`T net up` take the WiFi away and bring it back (docs/network.md).
A --state folder or --db file that cannot be used is an error (exit status 2) before
anything runs; nothing in it is changed. docs/sim-inputs.md says what each case means.

    python -m tools.sim --state DIR --usb                # the ESP32 twin (docs/esp32.md)

With --usb the board is the ESP32 twin: it boots boot.py and main.py from its own flash
(the littlefs image in DIR: `make deploy PORT=...` puts the firmware there), and its
USB-serial REPL is a pty, printed first as `usb: /dev/pts/N`, for mpremote. It runs in
real time until killed. --micropython X.Y.Z is the MicroPython version it plays,
--ticks-start MS the ticks_ms value at power-up (e.g. 1073738824, three seconds before
the 2**30 wrap), --baud N the serial speed. Display changes and resets are printed as
they happen. --frozen flashes it with a build that freezes firmware/manifest.py (its
modules outside the flash filesystem, as `.frozen`); the board keeps that build, as a
real one keeps its firmware, until --stock flashes a stock MicroPython (docs/esp32.md).

--line-nf N (any mode) is the capacitance on each TM1637 line with the modules' 10 kOhm
pull-ups: 10 nF by default, as on common modules; 0 for ideal lines.
--flash typical|max|none (any mode): how long the board's flash takes to erase and program
(tools/sim/board/flash.py): a datasheet's typical times by default, its maximum (a worn or
hot chip), or no time at all. The board runs nothing meanwhile: in virtual time its clock
moves on by that much, in real time (interactive, --usb) it waits.

Interactive keys: 1-5 knock the pin on that spot over or stand it up again; c f o u press
carom, foul, ok, undo; C F O U hold them; q quits. The display is drawn as large 7-segment
figures, decoded from the emulated display chips' pins.
"""

import argparse
import fcntl
import json
import os
import sqlite3
import sys
import tempfile
import threading
import time

from rules_core.settings import BEST_OF, PLAYERS, RULES_IDS, TEAMS, with_trait
from tools.port import upy

RUNNER = upy.entry("board")
IMAGE_NAME = "flash.img"  # as tools/sim/board/board.py names it
IMAGE_BYTES = 384 * 4096  # tools/sim/board/flash.py's FileBlockDev: 384 blocks of 4 KB
SQLITE_MAGIC = b"SQLite format 3\x00"
START_FRESH = "to start with a fresh flash, move it away or give another --state folder"


def state_problem(state):
    """What makes `--state DIR` unusable, or None. DIR and its image are made when missing;
    what is in an image of the right size is for the board to judge when it mounts it.
    The image itself is judged by `image_problem`, once this simulator holds the folder
    (`lock_state`): another simulator may be making it."""
    if os.path.exists(state) and not os.path.isdir(state):
        return "%s is a file, not a folder (the board's flash lives in %s inside a folder)" % (
            state, IMAGE_NAME)
    parent = _existing_parent(state)
    if not os.path.isdir(parent):
        return "%s is a file, not a folder" % parent
    if not os.path.exists(os.path.join(state, IMAGE_NAME)) and not os.access(
            parent, os.W_OK | os.X_OK):
        return "cannot make %s: %s is read-only" % (os.path.join(state, IMAGE_NAME), parent)
    return None


def image_problem(state):
    """What makes the flash image in `--state DIR` unusable, or None (none there yet: it is
    made). Asked once this simulator holds the folder: an image another simulator is still
    making would look short."""
    image = os.path.join(state, IMAGE_NAME)
    if os.path.isdir(image):
        return "%s is a folder, not a flash image: %s" % (image, START_FRESH)
    if os.path.exists(image):
        if not os.path.isfile(image):
            return "%s is not a regular file: %s" % (image, START_FRESH)
        size = os.path.getsize(image)
        if size != IMAGE_BYTES:
            return "%s is %d bytes, not a flash image (%d bytes): nothing was changed; %s" % (
                image, size, IMAGE_BYTES, START_FRESH)
        if not os.access(image, os.R_OK | os.W_OK):
            return "%s cannot be read and written" % image
    return None


def lock_state(state):
    """Hold the --state folder for this simulator alone: an exclusive flock on the folder
    (made if missing), or None when another simulator holds it. The kernel lets a flock go
    when the last descriptor of it closes, so it dies with the simulator, `kill -9`
    included; the interpreter and the watcher get the descriptor too, so the folder stays
    held until the last process that could write its flash image has ended."""
    os.makedirs(state, exist_ok=True)
    fd = os.open(state, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def db_problem(db):
    """What makes `--db FILE` unusable, or None: a missing FILE (and its folders) is made."""
    if os.path.isdir(db):
        return "%s is a folder, not a database file" % db
    parent = _existing_parent(os.path.dirname(os.path.abspath(db)))
    if not os.path.isdir(parent):
        return "%s is a file, not a folder" % parent
    if os.path.exists(db):
        try:
            with open(db, "rb") as f:
                head = f.read(len(SQLITE_MAGIC))
        except OSError as e:
            return "cannot read %s: %s" % (db, e.strerror or e)
        if head and head != SQLITE_MAGIC:
            return "%s is not an SQLite database: nothing was changed" % db
        if not os.access(db, os.W_OK):
            return "%s is read-only" % db
    elif not os.access(parent, os.W_OK | os.X_OK):
        return "cannot make %s: %s is read-only" % (db, parent)
    return None


def _existing_parent(path):
    """`path` itself when it exists, else its nearest ancestor that does."""
    path = os.path.abspath(path)
    while not os.path.lexists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return path


BUZZER_EXAMPLE_PIN = 2  # firmware/boards/esp32_devkit.py BUZZER_EXAMPLE_PIN


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m tools.sim", description=__doc__.split("\n")[0])
    p.add_argument("--timeline", metavar="FILE")
    p.add_argument("--rules", choices=RULES_IDS)
    p.add_argument("--distance", metavar="N[,M]")
    p.add_argument("--sets", type=int, choices=BEST_OF)
    p.add_argument("--first", type=int, choices=PLAYERS)
    p.add_argument("--teams", action="store_true",
                   help="%s: two-man teams (CEB 28)" % ", ".join(with_trait(TEAMS)))
    p.add_argument("--speed", type=float, default=0.0, metavar="X")
    p.add_argument("--state", metavar="DIR")
    p.add_argument("--new-game", action="store_true")
    p.add_argument("--db", metavar="FILE")
    p.add_argument("--display", choices=("tm1637", "max7219"))
    p.add_argument(
        "--buzzer", metavar="GPIO|off",
        help="a piezo on this GPIO, as board.cfg's buzzer_pin (default: GPIO %d, the "
             "example wiring, in the interactive simulator; none with --timeline)"
             % BUZZER_EXAMPLE_PIN,
    )
    p.add_argument(
        "--show-display", action="store_true",
        help="with --timeline: also print what the display shows at the end (on stderr)",
    )
    p.add_argument(
        "--display-log", action="store_true",
        help="with --timeline: print every new picture on the display, with its time (stderr)",
    )
    p.add_argument(
        "--check", action="store_true",
        help="with --timeline: check the board-state invariants after every change",
    )
    p.add_argument(
        "--config", metavar="FILE",
        help="write FILE to the board's flash as /board.cfg first (e.g. its `net` settings)",
    )
    p.add_argument(
        "--ca", metavar="FILE",
        help="write FILE, the club's CA certificate (DER), to the board's flash as /ca.der "
             "(for `\"tls\": true`, docs/network.md)",
    )
    p.add_argument(
        "--wifi", metavar="SSID:PASSWORD",
        help="the simulated club WiFi a board with `net` settings joins (default club:pinboard)",
    )
    p.add_argument("--heapsize", help="the unix port's whole heap, e.g. 2M")
    p.add_argument("--usb", action="store_true",
                   help="run the ESP32 twin with its REPL on a pty (needs --state)")
    p.add_argument("--micropython", default="1.24.1", metavar="X.Y.Z",
                   help="with --usb: the MicroPython release the twin plays "
                   "(tools/sim/board/esp32/releases.py)")
    p.add_argument("--interpreter", default="pinned", metavar="pinned|release|PATH",
                   help="with --usb: the unix port that runs the twin: the venv's, the "
                   "release's own from ../shared/upy or build/upy, or a path")
    p.add_argument("--esp32-heap", action="store_true",
                   help="with --usb: the GC heap the release has on an ESP32 (32-bit "
                   "interpreters only)")
    p.add_argument("--line-nf", type=float, default=None, metavar="N",
                   help="nF on each TM1637 line with the modules' 10 kOhm pull-ups "
                   "(default 10, as common modules; 0: ideal lines)")
    p.add_argument("--flash", choices=("typical", "max", "none"), default="typical",
                   help="how long the flash takes to erase and program (default: a "
                   "datasheet's typical times)")
    p.add_argument("--ticks-start", type=int, default=0, metavar="MS",
                   help="with --usb: ticks_ms at power-up (it wraps at 2**30)")
    p.add_argument("--baud", type=int, default=115200, help="with --usb: serial speed")
    flashed = p.add_mutually_exclusive_group()
    flashed.add_argument("--frozen", action="store_true",
                         help="with --usb: flash the twin with a build that freezes "
                         "firmware/manifest.py first (it keeps it until --stock)")
    flashed.add_argument("--stock", action="store_true",
                         help="with --usb: flash the twin with a stock MicroPython first")
    p.add_argument(
        "--heap-budget", metavar="BYTES",
        help="heap left for the firmware's data once its code is loaded, e.g. 64K: what a "
        "board with the code frozen into flash has",
    )
    args = p.parse_args(argv)
    if args.speed < 0:
        p.error("--speed must be positive")
    if args.usb:
        if not args.state:
            p.error("--usb needs --state DIR (the board's flash)")
        parts = args.micropython.split(".")
        if len(parts) != 3 or not all(x.isdigit() for x in parts):
            p.error("--micropython takes a version like 1.22.2")
        if args.baud < 300 or not 0 <= args.ticks_start < 1 << 30:
            p.error("--baud >= 300, --ticks-start 0..2**30-1")
    elif args.frozen or args.stock:
        p.error("--frozen and --stock flash the ESP32 twin: they need --usb")
    if args.line_nf is not None:
        if not 0 <= args.line_nf <= 1000:
            p.error("--line-nf takes nF from 0 to 1000")
        os.environ["PINBOARD_LINE_NF"] = str(args.line_nf)  # the simulated board reads it
    args.state_lock = None
    if args.state is not None:
        problem = state_problem(args.state)
        if problem:
            p.error("argument --state: " + problem)
        args.state_lock = lock_state(args.state)
        if args.state_lock is None:
            p.error("argument --state: %s is in use by another simulator: a board's flash "
                    "is in one simulator at a time (stop the other one first)" % args.state)
        problem = image_problem(args.state)
        if problem:
            p.error("argument --state: " + problem)
    if args.db is not None:
        problem = db_problem(args.db)
        if problem:
            p.error("argument --db: " + problem)
    return args


def device_args(args, link_path=None, state_dir=None):
    out = []
    for flag in (
        "timeline", "rules", "distance", "sets", "first", "state", "display", "heap_budget",
        "config", "wifi", "ca", "buzzer",
    ):
        value = getattr(args, flag, None)
        if value is not None:
            if flag in ("timeline", "state", "config", "ca"):
                value = os.path.abspath(value)
            out += ["--" + flag.replace("_", "-"), str(value)]
    if args.speed:
        out += ["--speed", str(args.speed)]
    if args.new_game:
        out.append("--new-game")
    if getattr(args, "teams", False):
        out.append("--teams")
    if getattr(args, "show_display", False):
        out.append("--show-display")
    if getattr(args, "check", False):
        out.append("--check")
    if getattr(args, "display_log", False):
        out.append("--display-log")
    if getattr(args, "flash", "typical") != "typical":
        out += ["--flash-timing", args.flash]
    if link_path:
        out += ["--link", link_path]
    if state_dir and not args.state:
        out += ["--state", state_dir]  # a fresh flash image, thrown away afterwards
    return out


class LoggerThread:
    """The host logger on the far end of the board's serial link, in this process."""

    def __init__(self, db, host_path):
        from tools.logger import Logger

        self.logger = Logger(db, [host_path])
        self.thread = threading.Thread(target=self.logger.run_forever, daemon=True)
        self.thread.start()

    def wait_for_state(self, state, timeout=30.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.logger.last_state_equals(state):
                return True
            time.sleep(0.05)
        return False

    def stop(self):
        self.logger.stop()
        self.thread.join(timeout=5)


def run_timeline(args):
    pipe = logger = None
    link_path = None
    if args.db:
        from tools.port.linkpipe import LinkPipe

        pipe = LinkPipe()
        link_path = pipe.device_path
        try:
            logger = LoggerThread(args.db, pipe.host_path)
        except (OSError, sqlite3.Error) as e:
            pipe.close()
            sys.stderr.write("python -m tools.sim: error: argument --db: cannot use %s: %s\n"
                             % (args.db, e))
            return 2
    scratch = tempfile.TemporaryDirectory(prefix="pinboard-flash-")
    try:
        proc = upy.run_file(
            RUNNER, device_args(args, link_path, scratch.name), heapsize=args.heapsize,
            timeout=3600, pass_fds=_lock_fds(args),
        )
        sys.stderr.write(proc.stderr)
        if proc.returncode != 0:
            # an uncaught exception on the unix port goes to stdout: pass it on
            sys.stderr.write(proc.stdout)
            return proc.returncode
        lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
        if not lines:
            sys.stderr.write("sim: the firmware printed no final state\n")
            return 1
        final = lines[-1]
        if logger is not None and not logger.wait_for_state(json.loads(final)):
            sys.stderr.write("sim: the logger did not store the final state\n")
            return 1
        print(final)
        return 0
    finally:
        scratch.cleanup()
        if logger is not None:
            logger.stop()
        if pipe is not None:
            pipe.close()


def run_usb(args):
    from tools.sim.board import frozen
    from tools.sim.board.esp32 import releases
    from tools.sim.board.twin import Twin

    if args.stock:
        frozen.remove(args.state)
    elif args.frozen:
        try:
            frozen.build(args.state, version=releases.parse(args.micropython))
        except frozen.BuildError as exc:
            sys.stderr.write("python -m tools.sim: error: --frozen: %s\n" % exc)
            return 2

    def say(kind, what):
        print("%s: %s" % (kind, what), flush=True)

    import signal

    def stop(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
    line_nf = 10.0 if args.line_nf is None else args.line_nf
    twin = Twin(args.state, version=args.micropython, line_nf=line_nf,
                ticks_start=args.ticks_start, display=args.display or "tm1637",
                baud=args.baud, interpreter=args.interpreter,
                heap="esp32" if args.esp32_heap else None, flash=args.flash)
    print("usb: %s" % twin.usb_path, flush=True)
    if twin.heap_note:
        print("heap: %s" % twin.heap_note, flush=True)
    twin.on_event = say
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0
    finally:
        twin.close()


def _lock_fds(args):
    lock = getattr(args, "state_lock", None)
    return () if lock is None else (lock,)


def main(argv=None):
    # Every interpreter started from here ends with this program, however it ends (a
    # kill -9 included: tools/port/upy.py says how), and none outlives it writing the flash.
    upy.DIE_WITH_PARENT = True
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.usb:
        upy.lifeline(_lock_fds(args))  # the twin restarts its chip from other threads
        return run_usb(args)
    if args.timeline:
        return run_timeline(args)
    from tools.sim.view import run_interactive

    if args.buzzer is None:
        args.buzzer = str(BUZZER_EXAMPLE_PIN)  # the table calls the game: a buzzer by default
    return run_interactive(args, device_args, LoggerThread)


if __name__ == "__main__":
    sys.exit(main())
