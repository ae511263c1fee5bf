"""What several test files share: pin masks, and running test code on both interpreters.

    from helpers import spots, run_functions_on_unix, cases_on_unix
    spots(1, 3)                                          # 0b00101
    run_functions_on_unix([f, g], [["f", [1]]], tmp)     # JSON results, one per call
    cases_on_unix(SOURCE + MAIN, heapsize="4M")         # {"case_x": "" or the error}
"""

import inspect
import json
import os
import textwrap

from tools import upy


def spots(*numbers):
    """Pins bitmask from spot numbers 1-5 (bit0 = spot 1)."""
    mask = 0
    for n in numbers:
        mask |= 1 << (n - 1)
    return mask


ALL_PINS = spots(1, 2, 3, 4, 5)

CALLS_MAIN = """
import json, sys
for _name, _args in json.loads(sys.stdin.read()):
    print(json.dumps(globals()[_name](*_args)))
"""


def run_functions_on_unix(funcs, calls, tmp_dir, main=CALLS_MAIN):
    """Run calls [[function name, args], ...] of `funcs` (their source, copied) in one
    unix-port process; returns their JSON results in order."""
    source = "\n\n".join(textwrap.dedent(inspect.getsource(f)) for f in funcs) + main
    path = os.path.join(str(tmp_dir), "batch.py")
    with open(path, "w") as f:
        f.write(source)
    proc = upy.run([path], input=json.dumps(calls), timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == len(calls), proc.stdout + proc.stderr
    return [json.loads(line) for line in lines]


def on_cpython(func, *args):
    """func(*args) as the unix port would report it (tuples become lists)."""
    return json.loads(json.dumps(func(*args)))


def case_names(source):
    """The names of the `def case_...` functions in `source`, without the prefix."""
    return [line.split("(")[0][9:] for line in source.splitlines() if line.startswith("def case_")]


def cases_on_cpython(source, module_name, root):
    """Run `source`'s run(root) on CPython: {"case_name": "" or what went wrong}."""
    space = {"__name__": module_name}
    exec(compile(source, module_name, "exec"), space)
    return dict(space["run"](root))


def cases_on_unix(source, heapsize, timeout=120):
    """Run `source` on the unix port; it prints `RESULT case_name error` lines."""
    proc = upy.run(["-c", source], heapsize=heapsize, timeout=timeout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = {}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            parts = line.split(" ", 2)
            out[parts[1]] = parts[2] if len(parts) > 2 else ""
    return out


def case_tests(source, unix_main, module_name, heapsize, timeout=120):
    """The `def case_...` functions of `source` as two parametrized tests, one on each
    interpreter; each interpreter runs all the cases once, the first time it is asked.

        CASE_NAMES, test_case_on_cpython, test_case_on_micropython_littlefs = case_tests(
            CASES, UNIX_MAIN, "journal_cases", heapsize="4M")
    """
    import functools
    import tempfile

    import pytest

    names = case_names(source)

    @functools.lru_cache(maxsize=None)
    def on_cpython_once():
        with tempfile.TemporaryDirectory() as root:
            return cases_on_cpython(source, module_name, root)

    @functools.lru_cache(maxsize=None)
    def on_unix_once():
        return cases_on_unix(source + unix_main, heapsize=heapsize, timeout=timeout)

    @pytest.mark.parametrize("name", names)
    def test_case_on_cpython(name):
        assert on_cpython_once()["case_" + name] == ""

    @pytest.mark.parametrize("name", names)
    def test_case_on_micropython_littlefs(name):
        assert on_unix_once()["case_" + name] == ""

    return names, test_case_on_cpython, test_case_on_micropython_littlefs
