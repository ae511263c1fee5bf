"""The replay runner for the MicroPython unix port (tools.replay --micropython uses it).

    micropython tools/replay/on_upy.py SCRIPT [--name SHOWN] [--rules ID] [--distance N,M]
                                    [--sets N] [--first P] [--teams] [--trace]
    micropython tools/replay/on_upy.py --batch [--trace] < many_scripts

Same parser (tools.replay.shotscript) and rules core as CPython, the same streaming: the script
is read and the output written a piece at a time, so the heap holds neither. --batch
plays the scripts of a script.batch_input() stream on stdin and prints script.play_batch's
output, so a test can compare many scripts on both interpreters with one process each.
"""

import sys

from tools.replay import shotscript as script


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
        elif arg == "--teams":
            overrides["teams"] = 1
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
        out = sys.stdout
        for line in script.play_batch(sys.stdin.buffer, trace):
            out.write(line + "\n")
        return
    if path is None:
        _fail("replay: no script given")
    shown = name or path
    out = sys.stdout

    def write(line):
        out.write(line + "\n")

    try:
        script.run(lambda: open(path, "rb"), write, overrides, trace)
    except script.ReadError as e:
        _fail(e.text(shown))
    except script.ScriptError as e:
        _fail("%s:%d: %s" % (shown, e.line, e.message))
    except script.FlagError as e:
        _fail(e.text())


main(sys.argv[1:])
