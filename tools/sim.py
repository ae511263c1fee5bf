"""The simulated table: the real firmware on the MicroPython unix port.

    python -m tools.sim                                  # interactive, in this terminal
    python -m tools.sim --timeline game.timeline         # virtual time, prints the final state
    python -m tools.sim --state DIR --db games.db        # keep the board's flash, log to SQLite

Options (CONTRACT §4): --timeline FILE, --rules ID, --distance N[,M], --sets N, --first P,
--speed X, --state DIR, --new-game, --db FILE, and --display tm1637|max7219. A board.cfg
given with --config that has `net` settings joins the simulated WiFi (--wifi SSID:PASSWORD)
and the MQTT broker they name, with the real umqtt code; timeline lines `T net down` and
`T net up` take the WiFi away and bring it back (docs/network.md).

Interactive keys: 1-5 knock the pin on that spot over or stand it up again; c f o u press
carom, foul, ok, undo; C F O U hold them; q quits. The display is drawn as large 7-segment
figures, decoded from the emulated display chips' pins.
"""

import argparse
import json
import os
import sys
import tempfile
import threading
import time

from tools import upy

RUNNER = os.path.join("tools", "simboard", "run.py")


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m tools.sim", description=__doc__.split("\n")[0])
    p.add_argument("--timeline", metavar="FILE")
    p.add_argument("--rules", choices=("ddbu", "ceb", "russian"))
    p.add_argument("--distance", metavar="N[,M]")
    p.add_argument("--sets", type=int, choices=(1, 3, 5))
    p.add_argument("--first", type=int, choices=(1, 2))
    p.add_argument("--speed", type=float, default=0.0, metavar="X")
    p.add_argument("--state", metavar="DIR")
    p.add_argument("--new-game", action="store_true")
    p.add_argument("--db", metavar="FILE")
    p.add_argument("--display", choices=("tm1637", "max7219"))
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
        "--wifi", metavar="SSID:PASSWORD",
        help="the simulated club WiFi a board with `net` settings joins (default club:pinboard)",
    )
    p.add_argument("--heapsize", help="the unix port's whole heap, e.g. 2M")
    p.add_argument(
        "--heap-budget", metavar="BYTES",
        help="heap left for the firmware's data once its code is loaded, e.g. 64K: what a "
        "board with the code frozen into flash has",
    )
    args = p.parse_args(argv)
    if args.speed < 0:
        p.error("--speed must be positive")
    return args


def device_args(args, link_path=None, state_dir=None):
    out = []
    for flag in (
        "timeline", "rules", "distance", "sets", "first", "state", "display", "heap_budget",
        "config", "wifi",
    ):
        value = getattr(args, flag, None)
        if value is not None:
            if flag in ("timeline", "state", "config"):
                value = os.path.abspath(value)
            out += ["--" + flag.replace("_", "-"), str(value)]
    if args.speed:
        out += ["--speed", str(args.speed)]
    if args.new_game:
        out.append("--new-game")
    if getattr(args, "show_display", False):
        out.append("--show-display")
    if getattr(args, "check", False):
        out.append("--check")
    if getattr(args, "display_log", False):
        out.append("--display-log")
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
        from tools.linkpipe import LinkPipe

        pipe = LinkPipe()
        link_path = pipe.device_path
        logger = LoggerThread(args.db, pipe.host_path)
    scratch = tempfile.TemporaryDirectory(prefix="pinboard-flash-")
    try:
        proc = upy.run_file(
            RUNNER, device_args(args, link_path, scratch.name), heapsize=args.heapsize,
            timeout=3600,
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


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.timeline:
        return run_timeline(args)
    from tools.simview import run_interactive

    return run_interactive(args, device_args, LoggerThread)


if __name__ == "__main__":
    sys.exit(main())
