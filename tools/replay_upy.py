"""The replay runner for the MicroPython unix port (tools.replay --micropython uses it).

    micropython tools/replay_upy.py SCRIPT [--name SHOWN] [--rules ID] [--distance N,M]
                                    [--sets N] [--first P] [--trace]
    micropython tools/replay_upy.py --batch [--trace] < many_scripts.txt

Same parser (tools.shotscript) and rules core as CPython. --batch plays scripts separated
by a line "=====" read from stdin and prints script.play_batch's output, so a test can
compare many scripts on both interpreters with one process each.
"""

import sys

from tools import shotscript as script


def _fail(text):
    sys.stderr.write(text + "\n")
    sys.exit(2)


def main(argv):
    path = None
    name = None
    trace = False
    batch = False
    overrides = {}
    k = 0
    while k < len(argv):
        arg = argv[k]
        if arg == "--trace":
            trace = True
        elif arg == "--batch":
            batch = True
        elif arg in ("--name", "--rules", "--distance", "--sets", "--first"):
            if k + 1 >= len(argv):
                _fail("replay: %s needs a value" % arg)
            k += 1
            if arg == "--name":
                name = argv[k]
            else:
                try:
                    overrides[arg[2:]] = script.parse_setting(arg[2:], [argv[k]])
                except ValueError as e:
                    _fail("replay: %s: %s" % (arg, e))
        elif path is None and not arg.startswith("--"):
            path = arg
        else:
            _fail("replay: unexpected argument %s" % arg)
        k += 1
    if batch:
        for line in script.play_batch(sys.stdin.read(), trace):
            sys.stdout.write(line + "\n")
        return
    if path is None:
        _fail("replay: no script given")
    shown = name or path
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        _fail("%s: cannot read" % shown)
    try:
        lines = script.play(data, overrides, trace)
    except script.ScriptError as e:
        _fail("%s:%d: %s" % (shown, e.line, e.message))
    for line in lines:
        sys.stdout.write(line + "\n")


main(sys.argv[1:])
