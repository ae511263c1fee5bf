"""Run the cases of one device test module, on MicroPython (or CPython), in one process.

    micropython tests/device/run.py journal_cases                  # every case_* function
    micropython tests/device/run.py journal_cases case_roundtrip   # only the ones named
    echo '[["play", ["..."]]]' | micropython tests/device/run.py shot_cases -

With `-`, the calls come as JSON from stdin: [[function name, [arguments]], ...].
The project's folders must be on the path (MICROPYPATH=.:.frozen from the top folder, as
tools/port/upy.py sets it). Each call prints one line: `CASE ` and the repr of
(name, status, payload): status "ok" with the function's return value, "skip" with the
reason, or "error" with the traceback. Everything else a case prints is left as it is.
"""

import gc
import sys

MARK = "CASE "


def _tests_folder():
    """The folder above this file's, as given on the command line."""
    path = __file__ if "/" in __file__ else "./" + __file__
    here = path[: path.rfind("/")]
    return here[: here.rfind("/")] if "/" in here else here + "/.."


def _traceback(err):
    try:
        import io

        out = io.StringIO()
        sys.print_exception(err, out)  # MicroPython
        return out.getvalue()
    except AttributeError:
        import traceback

        return "".join(traceback.format_exception(err))


def run_call(module, name, args):
    from device.support import Skipped

    try:
        return (name, "ok", getattr(module, name)(*args))
    except Skipped as why:
        return (name, "skip", str(why))
    except Exception as err:  # report every case, not only the first failure
        return (name, "error", _traceback(err))


def main(argv):
    tests = _tests_folder()
    if tests not in sys.path:
        sys.path.insert(0, tests)
    name = argv[0]
    gc.collect()  # what compiling this file left behind, before the module's own code
    module = __import__("device." + name, None, None, [name])
    if argv[1:] == ["-"]:
        import json

        calls = json.loads(sys.stdin.read())
    else:
        names = argv[1:] or sorted(n for n in dir(module) if n.startswith("case_"))
        calls = [(n, ()) for n in names]
    for name, args in calls:
        print(MARK + repr(run_call(module, name, args)))


if __name__ == "__main__":
    main(sys.argv[1:])
