"""A made-up benchmark in MicroPython's perf_bench form (bm_setup returns the run and the
result), for the bench's calibration driver (tests/test_bench_smoke.py)."""

state = [0]


def bm_setup(params):
    def run():
        for i in range(params[0]):
            state[0] += i

    return run, lambda: (params[0], state[0])
