"""Runs one MicroPython perf_bench file on the unix port, for `tools.bench --calibrate`.

    micropython tools/simboard/perfbench_run.py misc_pystone.py 300   # set up, run 300
    micropython tools/simboard/perfbench_run.py misc_pystone.py 0     # set up only

The file keeps MicroPython's perf_bench interface: `bm_setup(params)` returns (run, result).
Only `run()` is what the benchmark's published time measures; with 0 it is not called, so
the difference of two counts under callgrind is that run alone. Prints the result.
"""

import sys


def main(argv):
    with open(argv[0]) as f:
        source = f.read()
    space = {"__name__": "perfbench"}
    exec(source, space)
    loops = int(argv[1])
    run, result = space["bm_setup"]((loops,))
    if loops:
        run()
    print(result())


main(sys.argv[1:])
