"""CPython and the MicroPython unix port play the same scripts to byte-identical traces.

Many scripts go to one unix-port process (tools/replay/on_upy.py --batch) to stay fast."""

import glob
import io
import os
import subprocess

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_rules_properties import events, game_settings, playable_script, script_text

from tools.port import upy
from tools.replay import shotscript as script

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def both(scripts, trace=True):
    data = script.batch_input(scripts)
    args = [upy.entry("replay"), "--batch"] + (["--trace"] if trace else [])
    proc = subprocess.run(upy.command(args, heapsize="256K"), input=data, capture_output=True,
                          env=upy.env(), cwd=upy.ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = script.play_batch(io.BytesIO(data), trace)
    expected = "".join(line + "\n" for line in lines).encode()
    return expected, proc.stdout


def test_worked_games_trace_the_same_on_both_interpreters():
    scripts = []
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "games", "*.shots"))):
        with open(path) as f:
            scripts.append(f.read())
    expected, got = both(scripts)
    assert got == expected
    assert expected.count(script.BATCH_MARK.encode()) == len(scripts)


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(playable_script(), min_size=40, max_size=40))
def test_random_playable_scripts_trace_the_same(scripts):
    expected, got = both(scripts)
    assert got == expected


@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(game_settings(), events), min_size=40, max_size=40))
def test_random_scripts_with_rejected_lines_report_the_same(games):
    scripts = [script_text(s, e) for s, e in games]
    expected, got = both(scripts, trace=False)
    assert got == expected
