"""Replay a shot script and print the board state: python -m tools.replay SCRIPT [options].

    python -m tools.replay tests/games/ddbu_tie.shots --trace
    python -m tools.replay game.shots --rules ceb --distance 60 --sets 3 --micropython

Prints the final board state as one JSON line (with --trace, one line after every event).
Flags override the script's settings. --micropython plays the same script with the same
parser and rules core on the MicroPython unix port (tools/replay/on_upy.py); its output (and
its error messages and exit status) are byte for byte the same, for a script of any length:
the script is read, and the output written, a piece at a time. A bad line: exit status 2,
"SCRIPT:LINE: what is wrong" on stderr, nothing on stdout. A flag that does not fit the
script (--sets 3 on a ddbu script): exit status 2 and a message naming the flag.
"""

import argparse
import os
import sys

from rules_core.settings import RULES_IDS, SETS, TEAMS, with_trait
from tools.replay import shotscript as script


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
    p.add_argument("--rules", type=_flag("rules"),
                   help=", ".join(RULES_IDS[:-1]) + " or " + RULES_IDS[-1])
    p.add_argument("--distance", type=_flag("distance"), help="N or N,M (per player)")
    p.add_argument("--sets", type=_flag("sets"),
                   help="%s: best of 1, 3 or 5" % ", ".join(with_trait(SETS)))
    p.add_argument("--first", type=_flag("first"), help="who plays first: 1 or 2")
    p.add_argument("--teams", action="store_const", const=1,
                   help="%s: two-man teams (CEB 28)" % ", ".join(with_trait(TEAMS)))
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
    if args.teams:
        out.append("--teams")
    if args.trace:
        out.append("--trace")
    return out


def _pass_through(proc_out, out):
    """Copy the unix port's output to `out` as it comes, a piece at a time."""
    binary = getattr(out, "buffer", None)
    if binary is not None:
        out.flush()
    while True:
        piece = proc_out.read1(65536) if hasattr(proc_out, "read1") else proc_out.read(65536)
        if not piece:
            break
        if binary is not None:
            binary.write(piece)
        else:
            out.write(piece.decode("utf-8", "backslashreplace"))
    if binary is not None:
        binary.flush()


def _micropython(args):
    import subprocess
    import tempfile

    from tools.port import upy

    with tempfile.TemporaryFile() as err:
        proc = upy.popen([os.path.join(upy.ROOT, upy.entry("replay")), *_upy_args(args)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err)
        try:
            _pass_through(proc.stdout, sys.stdout)
        finally:
            proc.stdout.close()
            code = proc.wait()
        err.seek(0)
        _pass_through(err, sys.stderr)
    return code


def main(argv=None):
    args = parser().parse_args(argv)
    if args.micropython:
        return _micropython(args)
    overrides = {"rules": args.rules, "distance": args.distance, "sets": args.sets,
                 "first": args.first, "teams": args.teams}
    out = sys.stdout

    def write(line):
        out.write(line + "\n")

    try:
        script.run(lambda: open(args.script, "rb"), write, overrides, args.trace)
    except script.ReadError as e:
        sys.stderr.write(e.text(args.script) + "\n")
        return 2
    except script.ScriptError as e:
        sys.stderr.write("%s:%d: %s\n" % (args.script, e.line, e.message))
        return 2
    except script.FlagError as e:
        sys.stderr.write(e.text() + "\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
