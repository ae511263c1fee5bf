"""Runs one MicroPython perf_bench file on the unix port, for `tools.bench --calibrate`.

    micropython tools/sim/board/perfbench_run.py misc_pystone.py 300   # set up, run 300
    micropython tools/sim/board/perfbench_run.py misc_pystone.py 0     # set up only

The file keeps MicroPython's perf_bench interface: `bm_setup(params)` returns (run, result).
Only `run()` is what the benchmark's published time measures: it runs between two calls of
`gc.isenabled()`, the edges of the window tools.bench has callgrind count (as in
bench_device.py's `counted`), straight after the set-up and without a collection before,
as MicroPython's harness times it (tests/perf_bench/benchrun.py). With 0 it is not
called, so the difference of two counts is that run alone. Prints the result.
"""

import gc
import sys


def main(argv):
    with open(argv[0]) as f:
        source = f.read()
    space = {"__name__": "perfbench"}
    exec(source, space)
    loops = int(argv[1])
    run, result = space["bm_setup"]((loops,))
    gc.isenabled()  # the counted window's edges
    if loops:
        run()
    gc.isenabled()
    print(result())


main(sys.argv[1:])
