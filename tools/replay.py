"""Replay a shot script and print the board state: python -m tools.replay SCRIPT [options].

    python -m tools.replay tests/games/ddbu_tie.shots --trace
    python -m tools.replay game.shots --rules ceb --distance 60 --sets 3 --micropython

Prints the final board state as one JSON line (with --trace, one line after every event).
Flags override the script's settings. --micropython plays the same script with the same
parser and rules core on the MicroPython unix port (tools/replay_upy.py); the output is
byte for byte the same. A bad line: exit status 2, "SCRIPT:LINE: what is wrong" on stderr,
nothing on stdout.
"""

import argparse
import os
import sys

from tools import shotscript as script


def _flag(key):
    def convert(text):
        try:
            return script.parse_setting(key, [text])
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    return convert


def parser():
    p = argparse.ArgumentParser(prog="python -m tools.replay", description=__doc__.split("\n")[0])
    p.add_argument("script", help="shot script (*.shots)")
    p.add_argument("--rules", type=_flag("rules"), help="ddbu, ceb or russian")
    p.add_argument("--distance", type=_flag("distance"), help="N or N,M (per player)")
    p.add_argument("--sets", type=_flag("sets"), help="ceb: best of 1, 3 or 5")
    p.add_argument("--first", type=_flag("first"), help="who plays first: 1 or 2")
    p.add_argument("--trace", action="store_true", help="print the state after every event")
    p.add_argument("--micropython", action="store_true",
                   help="run on the MicroPython unix port")
    return p


def _upy_args(args):
    out = [os.path.abspath(args.script), "--name", args.script]
    if args.rules is not None:
        out += ["--rules", args.rules]
    if args.distance is not None:
        out += ["--distance", "%d,%d" % args.distance]
    for key in ("sets", "first"):
        value = getattr(args, key)
        if value is not None:
            out += ["--" + key, str(value)]
    if args.trace:
        out.append("--trace")
    return out


def main(argv=None):
    args = parser().parse_args(argv)
    if args.micropython:
        from tools import upy

        proc = upy.run_file("tools/replay_upy.py", _upy_args(args))
        sys.stdout.write(proc.stdout)
        sys.stderr.write(proc.stderr)
        return proc.returncode
    try:
        with open(args.script, "rb") as f:
            data = f.read()
    except OSError as e:
        sys.stderr.write("%s: cannot read: %s\n" % (args.script, e.strerror or e))
        return 2
    overrides = {"rules": args.rules, "distance": args.distance, "sets": args.sets,
                 "first": args.first}
    try:
        lines = script.play(data, overrides, args.trace)
    except script.ScriptError as e:
        sys.stderr.write("%s:%d: %s\n" % (args.script, e.line, e.message))
        return 2
    sys.stdout.write("".join(line + "\n" for line in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
