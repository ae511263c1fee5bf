"""The longest time the board's inputs go unread while its flash erases and programs.

    python -m tools.bench.flashgap            # a 1000-shot game, typical and maximum flash times
    python -m tools.bench.flashgap --smoke    # 30 shots: seconds

Runs tools/sim/board/flashgap_device.py on the MicroPython unix port: the firmware plays a
long game in the simulator's virtual time on a flash that takes a real chip's erase and
program times (tools/sim/board/flash.py), and the longest time from one input poll to the
next is reported, in ms of board time. `tools.bench` reports it as `flash_poll_gap_max_ms`
against a target that keeps play correct (docs/performance.md, "The flash's pauses").
"""

import argparse
import json
import sys

from tools.port import upy

DEVICE = upy.entry("flashgap")
SHOTS = 1000  # a long game: the snapshot, and so a compaction, grows with the shots
SMOKE_SHOTS = 30
HEAP = "8M"


class Unavailable(Exception):
    pass


def run(shots, timing):
    """{key: number} from the device script: gap_ms, gap_erases, compactions, ..."""
    proc = upy.run_file(DEVICE, [str(shots), timing], heapsize=HEAP, timeout=900)
    if proc.returncode != 0:
        raise Unavailable("%s failed: %s" % (DEVICE, (proc.stdout + proc.stderr).strip()[-300:]))
    out = {}
    for line in proc.stdout.splitlines():
        key, _, value = line.partition(" ")
        out[key] = float(value) if "." in value else int(value)
    if "shots" not in out:
        raise Unavailable("%s printed no result: %s" % (DEVICE, proc.stdout.strip()[-300:]))
    out["missed"] = shots - out["shots"]
    return out


def figures(smoke=False):
    """tools.bench's figure, `flash_poll_gap_max_ms` (typical flash times), and a note
    with what the datasheet's maximum times make of it."""
    shots = SMOKE_SHOTS if smoke else SHOTS
    typical = run(shots, "typical")
    worst = run(shots, "max")
    note = ("%d shots, %d journal compactions; the longest gap, %s ms, is a step that erased "
            "%d sectors (4 KB, 45 ms each, and its page programs: W25Q32JV typical), and the "
            "game scored %d shots fewer than were played; with the datasheet's maximum times "
            "(400 ms an erase) it is %s ms, and %d shots fewer (the next shot's pins fell "
            "and were stood up, or its ok was pressed, within a gap). Flash time only: the "
            "compaction's own work on the CPU comes on top"
            % (shots, typical["compactions"], typical["gap_ms"], typical["gap_erases"],
               typical["missed"], worst["gap_ms"], worst["missed"]))
    return {"flash_poll_gap_max_ms": typical["gap_ms"],
            "notes": {"flash_poll_gap_max_ms": note}}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tools.bench.flashgap",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="a short game: seconds")
    args = ap.parse_args(argv)
    try:
        got = figures(args.smoke)
    except Unavailable as exc:
        print("flashgap: %s" % exc, file=sys.stderr)
        return 2
    print(json.dumps(got, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
